//! Mechanical recipe edits shared by the checks and the rules: rename a key in
//! place, replace a value, delete a `key: value` line. Comments, quoting and key
//! order around the edit are left as written.

use crate::finding::Edit;
use crate::recipe::{RecipeFile, RecipeKind, Span};

/// Replace the first `old` inside the span's text (keeps dashes and quotes around it).
pub fn replace_in_span(file: &RecipeFile, span: &Span, old: &str, new: &str) -> Option<Edit> {
    let text = file.text.get(span.offset..span.end())?;
    let at = text.find(old)?;
    Some(Edit { path: file.path.clone(), offset: span.offset + at, len: old.len(), replacement: new.to_string() })
}

/// Replace a scalar value, keeping its quotes when it is quoted.
pub fn replace_value(file: &RecipeFile, span: &Span, new: &str) -> Option<Edit> {
    let text = file.text.get(span.offset..span.end())?;
    let quoted = text.len() >= 2 && (text.starts_with('"') && text.ends_with('"') || text.starts_with('\'') && text.ends_with('\''));
    let (offset, len) = if quoted { (span.offset + 1, span.len - 2) } else { (span.offset, span.len) };
    Some(Edit { path: file.path.clone(), offset, len, replacement: new.to_string() })
}

/// Delete the whole line of a YAML `key: value` entry, when the entry is alone on
/// its line (a flow mapping or a multi-line value is left to the user).
pub fn delete_yaml_line(file: &RecipeFile, key: &Span, value: &Span) -> Option<Edit> {
    if file.kind != RecipeKind::SrtSlurm || key.line != value.line {
        return None;
    }
    let text = &file.text;
    let start = text[..key.offset].rfind('\n').map_or(0, |i| i + 1);
    if !text[start..key.offset].trim().is_empty() {
        return None;
    }
    let end = text[value.end()..].find('\n').map_or(text.len(), |i| value.end() + i + 1);
    Some(Edit { path: file.path.clone(), offset: start, len: end - start, replacement: String::new() })
}
