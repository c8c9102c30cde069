//! Where in a rule file an error is.
//!
//! serde reports an error of a value's own parser (a regex, a PEP 440 specifier,
//! a tree-sitter query) at the map that holds the value, or at the document start
//! for a top-level key, and names no key for the top level. An unknown key is
//! reported at the map holding it, a duplicate key at the document start. The
//! validation after serde knows only a key path. Each is turned into the line of
//! the key itself through the spanned YAML tree the recipe reader builds; that
//! tree is only built when there is an error, so valid rules cost nothing extra.

use crate::recipe::yaml::{self, Node};
use crate::recipe::{RecipeError, SourceText};

/// `(key path, line, column)` of the key a serde error is about, when it can be told.
pub(super) fn key_of_error(text: &str, message: &str) -> Option<(String, usize, usize)> {
    let src = SourceText::new("rule", text.to_string());
    let root = match yaml::parse(&src) {
        Ok(root) => root?,
        // The spanned reader refuses duplicate keys itself, and says where the second is.
        Err(RecipeError::DuplicateKey { key, second_line, second_column, .. }) if message.contains("duplicate field `") => {
            return Some((key, second_line as usize, second_column as usize));
        }
        Err(_) => return None,
    };
    by_path(&root, message).or_else(|| by_quoted_value(&root, message))
}

/// Line and column of the key `path` (`evidence[0].file_exists.files[1]`) names,
/// for an error found after serde. A key that is not written (a missing
/// `tests.invalid`) is reported at the nearest written ancestor, and at the
/// document start when there is none, as serde reports a missing field.
pub(super) fn key_path(text: &str, path: &str) -> (usize, usize) {
    let src = SourceText::new("rule", text.to_string());
    let Ok(Some(root)) = yaml::parse(&src) else { return (1, 1) };
    let (span, _, _) = walk(&root, path);
    span.map_or((1, 1), |s| (s.line as usize, s.column as usize))
}

/// Follow `a.b[0].c` from `root`: the span of the deepest key or item reached,
/// the node there, and whether the whole path was found.
fn walk<'n>(root: &'n Node, path: &str) -> (Option<&'n crate::recipe::Span>, &'n Node, bool) {
    let mut node = root;
    let mut at = None;
    for segment in path.split('.') {
        let mut parts = segment.split('[');
        let Some(entry) = parts.next().and_then(|key| node.entry(key)) else { return (at, node, false) };
        at = Some(&entry.key.span);
        node = &entry.value;
        for index in parts {
            let item = index.strip_suffix(']').and_then(|i| i.parse::<usize>().ok()).and_then(|i| node.as_seq()?.get(i));
            let Some(item) = item else { return (at, node, false) };
            at = Some(&item.span);
            node = item;
        }
    }
    (at, node, true)
}

/// `a.b[0].c: message` → the span of key `c`; for an unknown or duplicate key
/// or variant `x` under it, the span of `x`.
fn by_path(root: &Node, message: &str) -> Option<(String, usize, usize)> {
    let (path, rest) = match message.split_once(": ") {
        Some((path, rest)) if !path.is_empty() && !path.contains(' ') => (path, rest),
        // A top-level unknown field has no path.
        _ => ("", message),
    };
    let (mut at, node) = if path.is_empty() {
        (None, root)
    } else {
        let (at, node, found) = walk(root, path);
        if !found {
            return None;
        }
        (at, node)
    };
    // Enum variants are single-key maps named like their field (`query: {query: …}`):
    // point at the field itself when the variant holds one of that name.
    let last = path.rsplit('.').next().unwrap_or(path);
    if let Some(inner) = node.entry(last).filter(|_| !last.is_empty()) {
        at = Some(&inner.key.span);
    }
    if let Some(key) = named_key(rest) {
        if let Some(entry) = node.entry(key) {
            at = Some(&entry.key.span);
        }
    }
    let at = at?;
    Some((path.to_string(), at.line as usize, at.column as usize))
}

/// The key an `unknown field `x`` / `unknown variant `x`` message names.
fn named_key(message: &str) -> Option<&str> {
    ["unknown field `", "unknown variant `"].iter().find_map(|p| message.strip_prefix(p)).and_then(|rest| rest.split('`').next())
}

/// An error without a path quoting a value (`invalid PEP 440 specifier `>=0.5.x``):
/// the top-level key holding exactly that value.
fn by_quoted_value(root: &Node, message: &str) -> Option<(String, usize, usize)> {
    let quoted: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    root.as_map()?.iter().find_map(|e| {
        let value = e.value.as_str()?;
        let key = e.key.as_str()?;
        quoted.contains(&value).then(|| (key.to_string(), e.key.span.line as usize, e.key.span.column as usize))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "id: R1\ntests:\n  valid:\n    - name: v\n      engine: [x]\nevidence:\n  - file_exists:\n      files: [a.py, ../b.py]\n";

    #[test]
    fn paths_lead_to_the_key_or_item_itself() {
        assert_eq!(key_path(TEXT, "evidence[0].file_exists.files[1]"), (8, 21));
        assert_eq!(key_path(TEXT, "evidence[0].file_exists"), (7, 5));
        // Not written: the nearest ancestor, else the document start.
        assert_eq!(key_path(TEXT, "tests.invalid"), (2, 1));
        assert_eq!(key_path(TEXT, "message"), (1, 1));
    }

    #[test]
    fn unknown_and_duplicate_keys_are_found_where_written() {
        let unknown = "tests.valid[0]: unknown field `engine`, expected one of `name`, `engines`";
        assert_eq!(key_of_error(TEXT, unknown), Some(("tests.valid[0]".into(), 5, 7)));
        let twice = format!("{TEXT}id: R2\n");
        assert_eq!(key_of_error(&twice, "duplicate field `id`"), Some(("id".into(), 9, 1)));
    }
}
