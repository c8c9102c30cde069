//! Source snippets for diagnostics that stay short on very long lines.
//!
//! miette prints every line a label touches in full, and reads the whole file to
//! find it: a syntax error in a 200 KB generated flow mapping printed 200 KB, and
//! a label past column 65,535 made miette's formatter panic (a width argument is
//! a `u16`). An [`Excerpt`] keeps only the lines around the labels, each cut to a
//! window of [`WINDOW`] characters either side of the label with `…` where text
//! was cut, and reports the file's own line and column numbers to miette, so the
//! snippet header (`[file:line:column]`) stays exact.

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// Characters kept on either side of a label's column.
pub(crate) const WINDOW: usize = 120;
/// Lines kept above and below a label (miette shows one by default).
const CONTEXT: usize = 2;
/// A label spanning more lines is shown from its first line only.
const MAX_LABEL_LINES: usize = 12;
const CUT: &str = "…";

/// The lines around some labels of one file, in their own coordinates.
#[derive(Debug, Clone)]
pub struct Excerpt {
    name: String,
    text: String,
    /// Runs of consecutive file lines, in file order.
    segments: Vec<Segment>,
}

#[derive(Debug, Clone)]
struct Segment {
    /// Byte range of this segment in `Excerpt::text`.
    start: usize,
    end: usize,
    /// 0-based file line of the segment's first line.
    first_line: usize,
    lines: Vec<KeptLine>,
}

/// One file line as kept: `file_start..file_end` of the file, written at
/// `start` of the excerpt after a `…` when the line's start was cut.
#[derive(Debug, Clone)]
struct KeptLine {
    /// Byte offset of the kept text in `Excerpt::text`, after any leading `…`.
    start: usize,
    /// Byte offsets in the file of the line start and of the kept text.
    line_start: usize,
    file_start: usize,
    file_end: usize,
    /// Bytes of the leading `…` (0 when the line start is kept).
    marker: usize,
}

impl KeptLine {
    /// A file offset on this line, in excerpt coordinates (clamped to the kept text).
    fn map(&self, offset: usize) -> usize {
        self.start + offset.clamp(self.file_start, self.file_end) - self.file_start
    }
}

impl Excerpt {
    /// The excerpt of `text` (shown as `name`) around `labels` (byte ranges in
    /// `text`), and the labels in the excerpt's coordinates, in the same order.
    pub fn new(name: &str, text: &str, labels: &[SourceSpan]) -> (Excerpt, Vec<SourceSpan>) {
        let lines = line_starts(text);
        let line_of = |offset: usize| lines.partition_point(|&s| s <= offset).saturating_sub(1);
        // Each label's lines with their context, merged where they meet; the
        // column to centre each line's window on is the label's start.
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut centre: std::collections::BTreeMap<usize, usize> = Default::default();
        for label in labels {
            let start = label.offset().min(text.len());
            let (first, last) = (line_of(start), line_of((start + label.len()).min(text.len())));
            let last = last.min(first + MAX_LABEL_LINES);
            for line in first.saturating_sub(CONTEXT)..=(last + CONTEXT).min(lines.len() - 1) {
                centre.entry(line).or_insert(start.saturating_sub(lines[first]));
            }
            ranges.push((first.saturating_sub(CONTEXT), (last + CONTEXT).min(lines.len() - 1)));
        }
        ranges.sort();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (a, b) in ranges {
            match merged.last_mut() {
                Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let mut out = Excerpt { name: crate::text::escape::visible(name).into_owned(), text: String::new(), segments: Vec::new() };
        for (a, b) in merged {
            let start = out.text.len();
            let mut kept = Vec::new();
            for line in a..=b {
                let line_start = lines[line];
                let next = lines.get(line + 1).copied().unwrap_or(text.len());
                let body_end = text[line_start..next].trim_end_matches(['\n', '\r']).len() + line_start;
                kept.push(out.push_line(text, line_start, body_end, next, centre.get(&line).copied().unwrap_or(0)));
            }
            out.segments.push(Segment { start, end: out.text.len(), first_line: a, lines: kept });
        }
        let mapped = labels.iter().map(|l| out.map(l, text.len())).collect();
        (out, mapped)
    }

    /// Append one file line (`line_start..body_end`, then its line break up to
    /// `next`), cut around byte column `centre` when it is longer than the window.
    fn push_line(&mut self, text: &str, line_start: usize, body_end: usize, next: usize, centre: usize) -> KeptLine {
        let body = &text[line_start..body_end];
        let chars = body.chars().count();
        let (mut from, mut to) = (0, body.len());
        if chars > 2 * WINDOW + 2 {
            // Byte offsets of the window's first and last kept characters.
            let centre = floor_char(body, centre.min(body.len()));
            let at = body[..centre].chars().count();
            let first = at.saturating_sub(WINDOW).min(chars - 2 * WINDOW);
            from = body.char_indices().nth(first).map_or(0, |(i, _)| i);
            to = body.char_indices().nth(first + 2 * WINDOW).map_or(body.len(), |(i, _)| i);
        }
        let marker = if from > 0 { CUT.len() } else { 0 };
        if from > 0 {
            self.text.push_str(CUT);
        }
        let start = self.text.len();
        // Recipe bytes reach a terminal: control characters (ESC, a lone CR)
        // show as `?`, one per byte, so the labels' offsets still hold.
        self.text.push_str(&crate::text::escape::same_width(&body[from..to]));
        if to < body.len() {
            self.text.push_str(CUT);
        }
        self.text.push_str(&text[body_end..next]);
        KeptLine { start, line_start, file_start: line_start + from, file_end: line_start + to, marker }
    }

    /// A label of the file in excerpt coordinates: both ends on their kept lines,
    /// the end no further than the start's segment.
    fn map(&self, label: &SourceSpan, file_len: usize) -> SourceSpan {
        let start = label.offset().min(file_len);
        let end = (start + label.len()).min(file_len);
        let line_at = |offset: usize| {
            self.segments.iter().flat_map(|s| s.lines.iter().map(move |l| (s, l))).take_while(|(_, l)| l.line_start <= offset).last()
        };
        let Some((segment, first)) = line_at(start) else { return SourceSpan::new(0.into(), 0) };
        let from = first.map(start);
        let to = match line_at(end) {
            Some((s, l)) if std::ptr::eq(s, segment) => l.map(end).max(from),
            _ => segment.end.max(from),
        };
        SourceSpan::new(from.into(), to - from)
    }

    /// The kept text (for tests and messages).
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(&'a self, span: &SourceSpan, before: usize, after: usize) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        // Within one segment only: its neighbours are other parts of the file.
        let segment = self
            .segments
            .iter()
            .find(|s| s.start <= span.offset() && span.offset() + span.len() <= s.end)
            .ok_or(MietteError::OutOfBounds)?;
        let local = SourceSpan::new((span.offset() - segment.start).into(), span.len());
        let contents = self.text[segment.start..segment.end].read_span(&local, before, after)?;
        let line = contents.line();
        // With no lines before, the column is the label's (in bytes, as miette
        // counts): undo the cut, so it is the column in the file.
        let column = match segment.lines.get(line) {
            Some(kept) if before == 0 => (contents.column() + kept.file_start - kept.line_start).saturating_sub(kept.marker),
            _ => contents.column(),
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            SourceSpan::new((contents.span().offset() + segment.start).into(), contents.span().len()),
            line + segment.first_line,
            column,
            contents.line_count(),
        )))
    }
}

/// Byte offset where each line starts (line 0 at 0); a text ending in a line
/// break has a last, empty line after it, where an error at the end points.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(excerpt: Excerpt, labels: Vec<SourceSpan>) -> String {
        #[derive(Debug, thiserror::Error)]
        #[error("e")]
        struct E(Excerpt, Vec<SourceSpan>);
        impl miette::Diagnostic for E {
            fn source_code(&self) -> Option<&dyn SourceCode> {
                Some(&self.0)
            }
            fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
                Some(Box::new(self.1.iter().map(|s| miette::LabeledSpan::new_with_span(Some("here".into()), *s))))
            }
        }
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &E(excerpt, labels))
            .unwrap();
        out
    }

    #[test]
    fn short_files_render_as_with_the_whole_source() {
        let text = "a: 1\nb:\n  c: 2\n  c: 3\nd: 4\ne: 5\nf: 6\n";
        let labels = vec![SourceSpan::new(9.into(), 1), SourceSpan::new(16.into(), 1)];
        let (excerpt, mapped) = Excerpt::new("f.yaml", text, &labels);
        let whole = {
            #[derive(Debug, thiserror::Error)]
            #[error("e")]
            struct W(miette::NamedSource<String>, Vec<SourceSpan>);
            impl miette::Diagnostic for W {
                fn source_code(&self) -> Option<&dyn SourceCode> {
                    Some(&self.0)
                }
                fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
                    Some(Box::new(self.1.iter().map(|s| miette::LabeledSpan::new_with_span(Some("here".into()), *s))))
                }
            }
            let mut out = String::new();
            let w = W(miette::NamedSource::new("f.yaml", text.to_string()), labels.clone());
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).render_report(&mut out, &w).unwrap();
            out
        };
        assert_eq!(render(excerpt, mapped), whole);
    }

    #[test]
    fn a_long_line_is_cut_around_the_label_and_positions_stay_exact() {
        let long = format!("k: {{{}bad: ]}}\n", "x: 1, ".repeat(10_000));
        let text = format!("first: line\n{long}last: line\n");
        let at = text.find(']').unwrap();
        let (excerpt, mapped) = Excerpt::new("g.yaml", &text, &[SourceSpan::new(at.into(), 1)]);
        assert!(excerpt.text().len() < 400, "{}", excerpt.text());
        assert_eq!(&excerpt.text()[mapped[0].offset()..mapped[0].offset() + 1], "]");
        let column = at - text.find("k: ").unwrap() + 1;
        let out = render(excerpt, mapped);
        assert!(out.contains(&format!("[g.yaml:2:{column}]")), "{out}");
        assert!(out.contains("first: line") && out.contains("last: line") && out.contains('…'), "{out}");
    }

    #[test]
    fn far_apart_labels_keep_their_own_lines() {
        let text: String = (1..=500).map(|i| format!("key{i}: {i}\n")).collect();
        let (a, b) = (text.find("key3:").unwrap(), text.find("key400:").unwrap());
        let (excerpt, mapped) = Excerpt::new("m.yaml", &text, &[SourceSpan::new(a.into(), 4), SourceSpan::new(b.into(), 6)]);
        assert!(excerpt.text().lines().count() <= 10, "{}", excerpt.text());
        let out = render(excerpt, mapped);
        assert!(out.contains("[m.yaml:3:1]") && out.contains(" 3 │ key3: 3"), "{out}");
        assert!(out.contains("[m.yaml:400:1]") && out.contains("400 │ key400: 400"), "{out}");
        assert!(!out.contains("key200"), "nothing in between: {out}");
    }

    #[test]
    fn an_error_at_the_end_of_the_file_is_shown() {
        let text = "a: {b: 1\n";
        let (excerpt, mapped) = Excerpt::new("e.yaml", text, &[SourceSpan::new(text.len().into(), 0)]);
        let out = render(excerpt, mapped);
        assert!(out.contains("a: {b: 1"), "{out}");
    }
}
