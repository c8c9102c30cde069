//! Exact positions in recipe files.
//!
//! Every value a recipe reader returns carries the byte range it was read from, so
//! findings point at the line a user must change and `--fix` can edit the file in place.

use serde::{Deserialize, Serialize};

/// Where a piece of text sits in a recipe file.
///
/// `offset`/`len` are bytes into the file exactly as read from disk (a leading BOM
/// included), so `&text[offset..offset + len]` is the written text. `line` and
/// `column` are 1-based; the column counts characters, as editors show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Span {
    /// The file path as it was given to the loader.
    pub path: String,
    pub offset: usize,
    pub len: usize,
    pub line: u32,
    pub column: u32,
}

impl Span {
    pub fn end(&self) -> usize {
        self.offset + self.len
    }

    /// The span as miette wants it, for labelled diagnostics.
    pub(crate) fn source_span(&self) -> miette::SourceSpan {
        (self.offset, self.len).into()
    }
}

/// A value and the span of its written text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// The text of one recipe file with a line index, shared by all readers to turn
/// positions into [`Span`]s.
#[derive(Debug, Clone)]
pub(crate) struct SourceText {
    pub path: String,
    pub text: String,
    /// Byte offset where each line starts (line 1 at index 0).
    line_starts: Vec<usize>,
    /// Per line: only ASCII, so a character column is a byte column. Positions
    /// are turned into offsets once per YAML event; counting characters from the
    /// line start each time made a 200 KB one-line mapping quadratic (minutes).
    ascii_lines: Vec<bool>,
}

impl SourceText {
    pub(crate) fn new(path: impl Into<String>, text: String) -> SourceText {
        // Line breaks as YAML (and editors) count them: `\n`, `\r\n`, and a lone
        // `\r` (old Mac files), so positions from the YAML parser map to the
        // right bytes in every file.
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(
            bytes.iter().enumerate().filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))).map(|(i, _)| i + 1),
        );
        let ends = line_starts.iter().skip(1).copied().chain(std::iter::once(text.len()));
        let ascii_lines = line_starts.iter().zip(ends).map(|(&s, e)| text.as_bytes()[s..e].is_ascii()).collect();
        SourceText { path: path.into(), text, line_starts, ascii_lines }
    }

    /// Characters in `line_start..offset` of line `index` (0-based).
    fn chars_between(&self, index: usize, line_start: usize, offset: usize) -> usize {
        if self.ascii_lines[index] {
            offset - line_start
        } else {
            self.text[line_start..offset].chars().count()
        }
    }

    /// Span of a byte range. Out-of-range or non-boundary offsets are clamped to
    /// the nearest valid position rather than panicking: positions come from
    /// third-party parsers and a wrong column must not crash an audit.
    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        let start = self.floor_boundary(start.min(self.text.len()));
        let end = self.floor_boundary(end.clamp(start, self.text.len()));
        let line_index = self.line_index(start);
        let line_start = self.line_starts[line_index];
        let mut column = self.chars_between(line_index, line_start, start) + 1;
        // A byte-order mark is invisible in editors: columns on line 1 skip it.
        if line_index == 0 && start > 0 && self.text.starts_with('\u{feff}') {
            column -= 1;
        }
        Span { path: self.path.clone(), offset: start, len: end - start, line: line_index as u32 + 1, column: column as u32 }
    }

    /// Byte offset of a 1-based line and a 0-based character column. Columns past
    /// the end of the line stop at the line end.
    pub(crate) fn offset_of(&self, line: usize, char_col: usize) -> usize {
        let index = line.saturating_sub(1);
        let Some(&line_start) = self.line_starts.get(index) else {
            return self.text.len();
        };
        // The next line's start bounds this one: no scan along a long line.
        let next = self.line_starts.get(index + 1).copied().unwrap_or(self.text.len());
        let bytes = self.text.as_bytes();
        let mut line_end = next;
        if line_end > line_start && bytes[line_end - 1] == b'\n' {
            line_end -= 1;
        }
        if line_end > line_start && bytes[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        if self.ascii_lines[index] {
            return (line_start + char_col).min(line_end);
        }
        self.text[line_start..line_end].char_indices().nth(char_col).map(|(i, _)| line_start + i).unwrap_or(line_end)
    }

    /// Byte offset of the end of the line holding `offset` (before its line break).
    pub(crate) fn line_end(&self, offset: usize) -> usize {
        let index = self.line_index(offset);
        let mut end = self.line_starts.get(index + 1).copied().unwrap_or(self.text.len());
        let bytes = self.text.as_bytes();
        if end > offset && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > offset && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        end.max(offset)
    }

    /// Byte offset of the start of the line holding `offset`.
    pub(crate) fn line_start(&self, offset: usize) -> usize {
        self.line_starts[self.line_index(offset)]
    }

    /// 0-based index of the line holding byte `offset`.
    fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    pub(crate) fn slice(&self, span: &Span) -> &str {
        &self.text[span.offset..span.end()]
    }

    fn floor_boundary(&self, mut i: usize) -> usize {
        while i > 0 && !self.text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    /// The source for miette's labelled snippets: the lines around `spans`, cut
    /// on long lines, and the spans as labels into it (errors stay small, and a
    /// 200 KB line prints as a few hundred bytes).
    pub(crate) fn excerpt(&self, spans: &[&Span]) -> (std::sync::Arc<crate::text::excerpt::Excerpt>, Vec<miette::SourceSpan>) {
        let labels: Vec<miette::SourceSpan> = spans.iter().map(|s| s.source_span()).collect();
        let (excerpt, labels) = crate::text::excerpt::Excerpt::new(&self.path, &self.text, &labels);
        (std::sync::Arc::new(excerpt), labels)
    }

    /// [`excerpt`](Self::excerpt) for one span.
    pub(crate) fn excerpt_at(&self, span: &Span) -> (std::sync::Arc<crate::text::excerpt::Excerpt>, miette::SourceSpan) {
        let (excerpt, labels) = self.excerpt(&[span]);
        (excerpt, labels[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_counts_lines_and_character_columns() {
        let src = SourceText::new("f.yaml", "a: 1\nbé: xyz\r\nc: 3".to_string());
        let at = src.text.find("xyz").unwrap();
        let span = src.span(at, at + 3);
        assert_eq!((span.line, span.column, span.len), (2, 5, 3));
        assert_eq!(src.slice(&span), "xyz");
        assert_eq!(src.offset_of(2, 4), at);
        assert_eq!(src.line_end(at), at + 3, "stops before CRLF");
    }

    #[test]
    fn a_lone_cr_ends_a_line_as_yaml_counts_it() {
        let text = "name: r\rbackend:\r  sglang_config:\r    prefill:\r      tp-size: 4\r".to_string();
        let src = SourceText::new("cr.yaml", text.clone());
        let at = text.find("tp-size").unwrap();
        let span = src.span(at, at + 7);
        assert_eq!((span.line, span.column), (5, 7));
        assert_eq!(src.offset_of(5, 6), at);
        assert_eq!(src.line_start(at), at - 6);
        assert_eq!(&text[at..src.line_end(at)], "tp-size: 4");
        // Through the YAML reader: the flag's span is the flag.
        let file = crate::recipe::load_text("cr.yaml", text.clone(), &crate::recipe::LinkMapping::default()).unwrap();
        let flag = &file.deployments[0].roles[0].flags[0];
        assert_eq!((&text[flag.key_span.offset..flag.key_span.end()], flag.key_span.line), ("tp-size", 5));
        assert_eq!(&text[flag.value_span.offset..flag.value_span.end()], "4");
    }

    #[test]
    fn span_clamps_bad_offsets_instead_of_panicking() {
        let src = SourceText::new("f", "é".to_string());
        let span = src.span(1, 99);
        assert_eq!((span.offset, span.len), (0, 2));
    }
}
