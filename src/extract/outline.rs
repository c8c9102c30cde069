//! The module-level outline of a Python file: every `def` and `class` body
//! emptied, line numbers kept.
//!
//! What `from m import x` can import is bound by module-level statements only
//! (the symbols extractor never looks inside a function or class body, except
//! a module's `__getattr__`, which is kept). Parsing the outline gives the same
//! names as parsing the file at a fraction of the cost: `scheduler.py` is
//! 243 KB, its outline a few KB. Whenever the scan is unsure (a tab in an
//! indent, an unterminated string, unbalanced brackets), it gives `None` and the
//! caller parses the whole file. `tests/corpus_acceptance.rs` checks that the
//! outline yields the same symbols as the file for every module of every
//! corpus release.

/// The outline of `source`, or `None` when the file should be parsed whole.
pub(crate) fn outline(source: &str) -> Option<String> {
    let mut out = String::with_capacity(source.len() / 8);
    // Indent of the `def`/`class` header whose body is being emptied, and
    // whether its `pass` was written.
    let mut emptying: Option<(usize, bool)> = None;
    for line in logical_lines(source.as_bytes())? {
        let text = &source[line.start..line.end];
        if let Some((header, wrote_pass)) = emptying {
            if line.blank || line.indent > header {
                if !line.blank && !wrote_pass {
                    // The first statement of the body becomes `pass`.
                    out.push_str(&" ".repeat(line.indent));
                    out.push_str("pass");
                    emptying = Some((header, true));
                }
                push_newlines(&mut out, text);
                continue;
            }
            emptying = None;
        }
        out.push_str(text);
        if line.opens_block && line.defines && !line.is_getattr {
            emptying = Some((line.indent, false));
        }
    }
    Some(out)
}

/// Keep only the line breaks of `text` (so line numbers stay those of the file).
fn push_newlines(out: &mut String, text: &str) {
    out.extend(text.bytes().filter(|b| *b == b'\n').map(|_| '\n'));
}

/// One logical line: a statement (with its continuation lines), or a blank or
/// comment-only line. Together the lines cover the whole file.
#[derive(Debug, Default, Clone)]
struct Line {
    start: usize,
    /// Just past its last newline (or the end of the file).
    end: usize,
    indent: usize,
    blank: bool,
    /// Starts with `def`, `async def` or `class`.
    defines: bool,
    is_getattr: bool,
    /// Ends with `:` (a block follows on the next lines).
    opens_block: bool,
}

/// Split the file into logical lines, following strings (any prefix, triple
/// quotes, f-string replacement fields with nested strings), brackets,
/// comments and backslash continuations.
fn logical_lines(src: &[u8]) -> Option<Vec<Line>> {
    let mut lines: Vec<Line> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let start = i;
        let mut indent = 0;
        while i < src.len() && src[i] == b' ' {
            indent += 1;
            i += 1;
        }
        if i < src.len() && (src[i] == b'\t' || src[i] == b'\x0c') {
            return None; // tab widths: leave them to the real parser
        }
        if i >= src.len() || matches!(src[i], b'\n' | b'\r' | b'#') {
            i = skip_line(src, i);
            lines.push(Line { start, end: i, indent, blank: true, ..Line::default() });
            continue;
        }
        let first_word = word_at(src, i);
        let second_word = (first_word == b"async").then(|| word_at(src, skip_spaces(src, i + 5)));
        let defines = matches!(first_word, b"def" | b"class") || second_word == Some(b"def");
        let keyword_end = if second_word.is_some() { skip_spaces(src, i + 5) + 3 } else { i + first_word.len() };
        let is_getattr = defines && word_at(src, skip_spaces(src, keyword_end)) == b"__getattr__";
        let (end, last) = statement_end(src, i)?;
        lines.push(Line { start, end, indent, blank: false, defines, is_getattr, opens_block: last == b':' });
        i = end;
    }
    Some(lines)
}

fn skip_spaces(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && src[i] == b' ' {
        i += 1;
    }
    i
}

fn skip_line(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && src[i] != b'\n' {
        i += 1;
    }
    (i + 1).min(src.len())
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn word_at(src: &[u8], i: usize) -> &[u8] {
    let i = i.min(src.len());
    let mut j = i;
    while j < src.len() && is_word_byte(src[j]) {
        j += 1;
    }
    &src[i..j]
}

/// Where the statement starting at `i` ends (just past its newline) and its last
/// significant byte (outside strings and comments).
fn statement_end(src: &[u8], mut i: usize) -> Option<(usize, u8)> {
    let mut depth: u32 = 0;
    let mut last = 0u8;
    while i < src.len() {
        let b = src[i];
        match b {
            b'#' => {
                while i < src.len() && src[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' => {
                // A continuation: the next line belongs to this statement.
                i += 1;
                if i < src.len() && src[i] == b'\r' {
                    i += 1;
                }
                if i < src.len() && src[i] == b'\n' {
                    i += 1;
                    continue;
                }
                return None;
            }
            b'\n' => {
                if depth == 0 {
                    return Some((i + 1, last));
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                last = b;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                last = b;
                i += 1;
            }
            b'\'' | b'"' => {
                i = string_end(src, i, StrKind::default())?;
                last = b'"';
            }
            _ if is_word_byte(b) => {
                let (end, is_string) = word_or_string_end(src, i)?;
                i = end;
                last = if is_string { b'"' } else { b'a' };
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => i += 1,
            _ => {
                last = b;
                i += 1;
            }
        }
    }
    (depth == 0).then_some((src.len(), last))
}

/// What the scan must know of a string: whether `{` opens a replacement field.
/// (Raw or not, a backslash keeps the next quote from ending the string.)
#[derive(Default, Clone, Copy)]
struct StrKind {
    format: bool,
}

/// Just past the word at `i`, or past the string it prefixes (`rb"..."`), and
/// whether it was a string.
fn word_or_string_end(src: &[u8], i: usize) -> Option<(usize, bool)> {
    let word = word_at(src, i);
    let after = i + word.len();
    match string_prefix(word) {
        Some(kind) if matches!(src.get(after), Some(b'\'' | b'"')) => Some((string_end(src, after, kind)?, true)),
        _ => Some((after, false)),
    }
}

/// `r`, `b`, `u`, `f`, `t` and their two-letter combinations.
fn string_prefix(word: &[u8]) -> Option<StrKind> {
    if word.is_empty() || word.len() > 2 {
        return None;
    }
    let lower: Vec<u8> = word.iter().map(u8::to_ascii_lowercase).collect();
    let valid = matches!(lower.as_slice(), b"r" | b"b" | b"u" | b"f" | b"t" | b"br" | b"rb" | b"fr" | b"rf" | b"tr" | b"rt");
    valid.then(|| StrKind { format: lower.contains(&b'f') || lower.contains(&b't') })
}

/// Just past the string whose opening quote is at `i`.
fn string_end(src: &[u8], i: usize, kind: StrKind) -> Option<usize> {
    let quote = src[i];
    let triple = src.len() >= i + 3 && src[i + 1] == quote && src[i + 2] == quote;
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < src.len() {
        let b = src[j];
        if b == b'\\' {
            // Escapes the next byte, raw or not: `r"\""` does not end at the inner quote.
            j += 2;
            continue;
        }
        if b == quote {
            if !triple {
                return Some(j + 1);
            }
            if src.len() >= j + 3 && src[j + 1] == quote && src[j + 2] == quote {
                return Some(j + 3);
            }
        }
        if b == b'\n' && !triple {
            return None; // an unterminated string
        }
        if kind.format && b == b'{' {
            if src.get(j + 1) == Some(&b'{') {
                j += 2;
                continue;
            }
            j = replacement_field_end(src, j + 1)?;
            continue;
        }
        j += 1;
    }
    None
}

/// Just past the `}` closing an f-string replacement field whose expression
/// starts at `i`: nested brackets and strings, then an optional format spec.
fn replacement_field_end(src: &[u8], mut i: usize) -> Option<usize> {
    let mut depth: u32 = 0;
    while i < src.len() {
        let b = src[i];
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth = depth.checked_sub(1)?,
            b'}' if depth == 0 => return Some(i + 1),
            b'}' => depth -= 1,
            b'\'' | b'"' => {
                i = string_end(src, i, StrKind::default())?;
                continue;
            }
            b':' if depth == 0 => return format_spec_end(src, i + 1),
            b'#' | b'\\' => return None,
            _ if is_word_byte(b) => {
                i = word_or_string_end(src, i)?.0;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Just past the `}` ending a format spec (`:>{width}`), whose text is literal
/// except nested replacement fields.
fn format_spec_end(src: &[u8], mut i: usize) -> Option<usize> {
    while i < src.len() {
        match src[i] {
            b'}' => return Some(i + 1),
            b'{' => i = replacement_field_end(src, i + 1)?,
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::outline;

    const MODULE: &str = r#""""A module."""
import os
from typing import TYPE_CHECKING

X = {"a": 1,
     "b": 2}

@decorator(arg=")")
def f(a, b=")",
      c=(1, 2)) -> int:
    """Doc with a def g(): inside."""
    def inner():
        return 1
    s = f"{a!r:>{b}} {'}'} {x["k"]}"
    return a

class C(Base,
        Mixin):
    y = 1

    def method(self):
        pass

async def h(): return 2

if TYPE_CHECKING:
    from x import Y
else:
    Y = None

def __getattr__(name):
    if name == "lazy":
        return 1
    raise AttributeError(name)

LAST = r"\" still a string"
"#;

    #[test]
    fn bodies_are_emptied_and_line_numbers_kept() {
        let out = outline(MODULE).unwrap();
        assert_eq!(out.lines().count(), MODULE.lines().count(), "{out}");
        for kept in [
            "import os",
            "@decorator(arg=\")\")",
            "def f(a, b=\")\",",
            "class C(Base,",
            "async def h(): return 2",
            "    from x import Y",
            "    Y = None",
            "    if name == \"lazy\":",
            "LAST = r\"\\\" still a string\"",
        ] {
            assert!(out.lines().any(|l| l == kept), "{kept:?} missing from:\n{out}");
        }
        for dropped in ["inner", "method", "y = 1", "Doc with"] {
            assert!(!out.contains(dropped), "{dropped:?} left in:\n{out}");
        }
        let lines: Vec<&str> = out.lines().collect();
        let f_body = MODULE.lines().position(|l| l.contains("Doc with")).unwrap();
        assert_eq!(lines[f_body], "    pass");
        let class_body = MODULE.lines().position(|l| l == "    y = 1").unwrap();
        assert_eq!(lines[class_body], "    pass");
    }

    #[test]
    fn doubt_means_the_whole_file() {
        assert!(outline("def f():\n\treturn 1\n").is_none(), "tab indent");
        assert!(outline("x = 'open\ny = 1\n").is_none(), "unterminated string");
        assert!(outline("x = (1,\n").is_none(), "unbalanced bracket");
        assert!(outline("x = 1)\n").is_none(), "unbalanced bracket");
        for edge in ["async", "async ", "async(", "def", "class", "x = f'{", "'''\n", "\\"] {
            let _ = outline(edge); // no panic at the end of the text
        }
        assert!(outline("async def __getattr__(n):\n    return 1\n").unwrap().contains("return 1"), "module __getattr__ kept");
        assert_eq!(outline("").as_deref(), Some(""));
    }
}
