//! Text from recipes and engine sources made safe to print: control
//! characters shown as escapes, or replaced byte for byte so offsets into the
//! text stay valid. The report-wide pass is `report::escape`.

use std::borrow::Cow;

/// Whether a character would act on a terminal or split a line: C0 controls
/// but tab, DEL, C1 controls, and Unicode's line and paragraph separators.
pub(crate) fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `s` with every unsafe character written as an escape.
pub(crate) fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` with every unsafe character but line breaks replaced by `?` bytes of the
/// same length, so byte offsets into it stay valid (source excerpts).
pub(crate) fn same_width(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) && c != '\n') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            // A line ending's CR is layout, a lone one moves the cursor.
            '\r' if chars.peek() == Some(&'\n') => out.push('\r'),
            c if is_unsafe(c) => (0..c.len_utf8()).for_each(|_| out.push('?')),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(visible("a\n::error::x\x1b[2J\r\u{9b}"), "a\\n::error::x\\u{1b}[2J\\r\\u{9b}");
        assert!(matches!(visible("plain\ttext"), Cow::Borrowed(_)));
        let kept = same_width("k: v\x1b[31m\r\nnext\u{9b}\n");
        assert_eq!(kept, "k: v?[31m\r\nnext??\n");
        assert_eq!(kept.len(), "k: v\x1b[31m\r\nnext\u{9b}\n".len());
    }
}
