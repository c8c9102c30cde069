//! Where in a rule file a serde error is.
//!
//! serde reports an error of a value's own parser (a regex, a PEP 440 specifier,
//! a tree-sitter query) at the map that holds the value, or at the document start
//! for a top-level key, and names no key for the top level. The key path in the
//! message (`evidence[0].query: ...`), or else the top-level key whose value the
//! message quotes, finds the key's own line in the spanned YAML tree.

use crate::recipe::yaml::{self, Node};
use crate::recipe::SourceText;

/// `(key path, line, column)` of the key an error is about, when it can be told.
pub fn key_of_error(text: &str, message: &str) -> Option<(String, usize, usize)> {
    let src = SourceText::new("rule", text.to_string());
    let root = yaml::parse(&src).ok()??;
    by_path(&root, message).or_else(|| by_quoted_value(&root, message))
}

/// `a.b[0].c: message` → the span of key `c`.
fn by_path(root: &Node, message: &str) -> Option<(String, usize, usize)> {
    let (path, _) = message.split_once(": ")?;
    if path.is_empty() || path.contains(' ') {
        return None;
    }
    let mut node = root;
    let mut at = None;
    for segment in path.split('.') {
        let mut parts = segment.split('[');
        let key = parts.next()?;
        let entry = node.entry(key)?;
        at = Some(&entry.key.span);
        node = &entry.value;
        for index in parts {
            let i: usize = index.strip_suffix(']')?.parse().ok()?;
            node = node.as_seq()?.get(i)?;
            at = Some(&node.span);
        }
    }
    // Enum variants are single-key maps named like their field (`query: {query: …}`):
    // point at the field itself when the variant holds one of that name.
    let last = path.rsplit('.').next().unwrap_or(path);
    if let Some(inner) = node.entry(last) {
        at = Some(&inner.key.span);
    }
    at.map(|s| (path.to_string(), s.line as usize, s.column as usize))
}

/// An error without a path quoting a value (`invalid PEP 440 specifier `>=0.5.x``):
/// the top-level key holding exactly that value.
fn by_quoted_value(root: &Node, message: &str) -> Option<(String, usize, usize)> {
    let quoted: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    root.as_map()?.iter().find_map(|e| {
        let value = e.value.as_str()?;
        let key = e.key.as_str()?;
        quoted
            .contains(&value)
            .then(|| (key.to_string(), e.key.span.line as usize, e.key.span.column as usize))
    })
}
