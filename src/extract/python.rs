//! Python parsing with tree-sitter, and the small node helpers every extractor shares.

use crate::bounded_parse::{parse_bounded, parse_deadline, Skipped, StatementSyntax, WhyNot, MAX_SYNTAX_DEPTH};
use tree_sitter::{Node, Parser, Tree as SyntaxTree};

/// A parsed Python file. Keeps the source so node text can be read back.
pub struct PyFile {
    /// Path relative to the repository root (for evidence).
    pub path: String,
    pub source: String,
    pub tree: SyntaxTree,
    /// What a bounded parse left out (statements nested too deep, or all of it).
    pub skipped: Skipped,
}

/// Python's statements, and the no-op that stands in for one nested too deep.
const PYTHON_STATEMENTS: StatementSyntax =
    StatementSyntax { is_statement: |kind| kind.ends_with("_statement") || kind.ends_with("_definition"), no_op: "pass" };

impl PyFile {
    /// Parse `source`. tree-sitter always yields a tree; syntax errors become
    /// ERROR nodes, so extraction still gets the well-formed parts.
    pub fn parse(path: &str, source: String) -> PyFile {
        thread_local! {
            static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new({
                let mut p = Parser::new();
                p.set_language(&tree_sitter_python::LANGUAGE.into())
                    .expect("tree-sitter-python grammar matches the tree-sitter version");
                p
            });
        }
        let start = std::time::Instant::now();
        let bounded = PARSER.with(|p| parse_bounded(source, &PYTHON_STATEMENTS, &mut p.borrow_mut()));
        crate::trace::parsed(path, bounded.text.len(), start.elapsed());
        PyFile { path: path.to_string(), source: bounded.text, tree: bounded.tree, skipped: bounded.skipped }
    }

    /// The warning to give when part of this file was left out of its facts
    /// (nested past [`MAX_SYNTAX_DEPTH`], or past the parse deadline).
    pub(crate) fn depth_warning(&self) -> Option<crate::surface::ExtractWarning> {
        let message = match &self.skipped {
            Skipped::Nothing => return None,
            Skipped::Statements(lines) => format!(
                "statement(s) at line {} nested more than {MAX_SYNTAX_DEPTH} levels deep; skipped, the rest of the file is read",
                lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            ),
            Skipped::WholeFile(WhyNot::TooDeep) => {
                format!("nested more than {MAX_SYNTAX_DEPTH} levels deep throughout; the whole file is skipped")
            }
            Skipped::WholeFile(WhyNot::TooSlow) => {
                format!("the Python parser gave up after {:.1} s; the whole file is skipped", parse_deadline().as_secs_f64())
            }
        };
        Some(crate::surface::ExtractWarning { path: self.path.clone(), message })
    }

    pub fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }

    pub(crate) fn text(&self, node: Node) -> &str {
        &self.source[node.byte_range()]
    }

    /// 1-based line of a node.
    pub(crate) fn line(&self, node: Node) -> u32 {
        node.start_position().row as u32 + 1
    }

    pub(crate) fn evidence(&self, node: Node) -> crate::surface::Evidence {
        crate::surface::Evidence { path: self.path.clone(), line: self.line(node) }
    }

    /// Whether the parse met syntax errors (the facts from this file may be partial).
    pub(crate) fn has_errors(&self) -> bool {
        self.root().has_error()
    }

    /// Line of the first syntax error, for the warning that names the file.
    pub(crate) fn first_error_line(&self) -> Option<u32> {
        let mut cursor = self.root().walk();
        let mut stack = vec![self.root()];
        while let Some(node) = stack.pop() {
            if node.is_error() || node.is_missing() {
                return Some(self.line(node));
            }
            if node.has_error() {
                for child in node.children(&mut cursor) {
                    stack.push(child);
                }
            }
        }
        None
    }

    /// The value of a string literal node (`string` or `concatenated_string`),
    /// or `None` when it is an f-string with interpolations or not a string.
    pub(crate) fn string_value(&self, node: Node) -> Option<String> {
        string_value(&self.source, node)
    }
}

/// Named children of a node, skipping comments.
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).filter(|n| n.kind() != "comment").collect()
}

/// Depth-first walk over every descendant (including `node`).
pub(crate) fn walk<'t>(node: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    // `visit` returns false to skip a subtree. Pre-order, on one cursor: no
    // allocation per node (every extractor walks whole files with this).
    let mut cursor = node.walk();
    let mut depth = 0usize;
    loop {
        if visit(cursor.node()) && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if depth == 0 {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            cursor.goto_parent();
            depth -= 1;
        }
    }
}

/// Decode a Python string literal (with prefixes, implicit concatenation and escapes).
pub(crate) fn string_value(source: &str, node: Node) -> Option<String> {
    match node.kind() {
        "concatenated_string" => {
            let mut out = String::new();
            for part in named_children(node) {
                out.push_str(&string_value(source, part)?);
            }
            Some(out)
        }
        "parenthesized_expression" => {
            let inner = named_children(node);
            if inner.len() == 1 {
                string_value(source, inner[0])
            } else {
                None
            }
        }
        "string" => {
            let mut out = String::new();
            let mut raw = false;
            let mut bytes_prefix = false;
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "string_start" => {
                        let start = &source[child.byte_range()];
                        let prefix: String = start.chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_lowercase();
                        raw = prefix.contains('r');
                        bytes_prefix = prefix.contains('b');
                    }
                    "string_content" => {
                        let text = &source[child.byte_range()];
                        if raw {
                            out.push_str(text);
                        } else {
                            out.push_str(&unescape(text));
                        }
                    }
                    "escape_sequence" => out.push_str(&unescape(&source[child.byte_range()])),
                    "interpolation" => return None,
                    _ => {}
                }
            }
            if bytes_prefix {
                return None;
            }
            Some(out)
        }
        _ => None,
    }
}

/// A string literal's body text with its escapes decoded.
pub(crate) fn unescape_text(text: &str) -> String {
    unescape(text)
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push_str("\\x");
                        out.push_str(&hex);
                    }
                }
            }
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_string(src: &str) -> Option<String> {
        let file = PyFile::parse("t.py", src.to_string());
        let mut found = None;
        walk(file.root(), |n| {
            if found.is_none() && matches!(n.kind(), "string" | "concatenated_string") {
                found = Some(file.string_value(n));
                return false;
            }
            true
        });
        found.flatten()
    }

    #[test]
    fn decodes_concatenation_escapes_and_raw_strings() {
        assert_eq!(first_string("x = 'a' \"b\\n\"").as_deref(), Some("ab\n"));
        assert_eq!(first_string("x = r'a\\n'").as_deref(), Some("a\\n"));
        assert_eq!(first_string("x = '''tri\nple'''").as_deref(), Some("tri\nple"));
        assert_eq!(first_string("x = f'{y}z'"), None);
        assert_eq!(first_string("x = f'plain'").as_deref(), Some("plain"));
    }

    #[test]
    fn syntax_errors_are_located_not_fatal() {
        let file = PyFile::parse("bad.py", "def f(:\n    pass\nX = 1\n".to_string());
        assert!(file.has_errors());
        assert_eq!(file.first_error_line(), Some(1));
    }
}
