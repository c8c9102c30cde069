//! Bounded nesting for tree-sitter trees: the extractors and the script reader
//! walk syntax trees recursively, and a small hostile file (`$(` nested 10,000
//! deep in 30 KB, a 5,000-term sum in one assignment) would overflow the stack
//! and abort the whole run. Real engine code and launch scripts nest a few
//! dozen levels; a statement that reaches [`MAX_SYNTAX_DEPTH`] is blanked out
//! (every byte but line breaks becomes a space, after a no-op of the language)
//! and the text parsed again, so byte offsets and line numbers stay exact, the
//! rest of the file is still read, and the caller names what was skipped.

use tree_sitter::{Node, Tree};

/// Deeper than any real file (SGLang's deepest module is under 60 levels; the
/// InferenceX scripts under 30) and shallow enough for the recursive walks on a
/// 2 MiB worker stack.
pub const MAX_SYNTAX_DEPTH: usize = 400;

/// Levels a no-op statement's own syntax takes (`command` → `command_name` → `word`).
const NO_OP_DEPTH: usize = 4;

/// Blank-and-reparse rounds before the whole text is given up on.
const MAX_ROUNDS: usize = 4;

/// How one language marks its statements, and the no-op that replaces one.
pub struct StatementSyntax {
    pub is_statement: fn(&str) -> bool,
    /// Written at the start of a blanked statement (`pass`, `:`).
    pub no_op: &'static str,
}

/// A tree no deeper than [`MAX_SYNTAX_DEPTH`], the text it was parsed from, and
/// the 1-based lines of the statements blanked to get there (`None` when the
/// whole text had to be blanked).
pub struct Bounded {
    pub text: String,
    pub tree: Tree,
    pub skipped: Option<Vec<u32>>,
}

impl Bounded {
    pub fn skipped_anything(&self) -> bool {
        self.skipped.as_ref().is_none_or(|s| !s.is_empty())
    }
}

/// Parse `text`, blanking statements nested too deep; `parse` is the
/// language's parser.
pub fn parse_bounded(text: String, syntax: &StatementSyntax, parse: impl Fn(&str) -> Tree) -> Bounded {
    let mut text = text;
    let mut tree = parse(&text);
    let mut skipped = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let too_deep = statements_too_deep(tree.root_node(), syntax);
        if too_deep.is_empty() {
            return Bounded { text, tree, skipped: Some(skipped) };
        }
        let mut bytes = std::mem::take(&mut text).into_bytes();
        for range in &too_deep {
            skipped.push(line_of(&bytes, range.start));
            blank(&mut bytes[range.clone()], syntax.no_op);
        }
        text = String::from_utf8(bytes).expect("only whole statements (char-aligned) are blanked, with ASCII");
        tree = parse(&text);
    }
    if statements_too_deep(tree.root_node(), syntax).is_empty() {
        return Bounded { text, tree, skipped: Some(skipped) };
    }
    let mut bytes = text.into_bytes();
    let len = bytes.len();
    blank(&mut bytes[..len], "");
    let text = String::from_utf8(bytes).expect("ASCII");
    let tree = parse(&text);
    Bounded { text, tree, skipped: None }
}

/// The byte ranges of the nearest statements (with room for the no-op) around
/// nodes deeper than the limit, in text order; found without recursion.
fn statements_too_deep(root: Node, syntax: &StatementSyntax) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let mut depth = 0usize;
    loop {
        if depth > MAX_SYNTAX_DEPTH {
            // Shallow enough that the no-op written in its place fits under the limit.
            let statement = std::iter::successors(Some(cursor.node()), |n| n.parent())
                .zip((0..=depth).rev())
                .find(|(n, d)| (syntax.is_statement)(n.kind()) && d + NO_OP_DEPTH <= MAX_SYNTAX_DEPTH)
                .map_or(root, |(n, _)| n);
            out.push(statement.byte_range());
            // Nothing inside the blanked statement needs looking at: go on after it.
            while cursor.node() != statement {
                cursor.goto_parent();
                depth -= 1;
            }
        } else if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
            depth -= 1;
        }
    }
}

/// Overwrite a statement with the no-op and spaces, keeping line breaks.
fn blank(bytes: &mut [u8], no_op: &str) {
    for b in bytes.iter_mut() {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
    if bytes.len() >= no_op.len() && !bytes[..no_op.len()].contains(&b'\n') && !bytes[..no_op.len()].contains(&b'\r') {
        bytes[..no_op.len()].copy_from_slice(no_op.as_bytes());
    }
}

fn line_of(bytes: &[u8], offset: usize) -> u32 {
    bytes[..offset].iter().filter(|&&b| b == b'\n').count() as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(text: &str) -> Tree {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&tree_sitter_python::LANGUAGE.into()).unwrap();
        p.parse(text, None).unwrap()
    }

    const PY: StatementSyntax = StatementSyntax {
        is_statement: |k| k.ends_with("_statement") || k.ends_with("_definition"),
        no_op: "pass",
    };

    fn depth(node: Node) -> usize {
        let mut max = 0;
        let mut stack = vec![(node, 0)];
        while let Some((n, d)) = stack.pop() {
            max = max.max(d);
            let mut c = n.walk();
            stack.extend(n.children(&mut c).map(|ch| (ch, d + 1)));
        }
        max
    }

    #[test]
    fn a_deep_statement_is_blanked_and_the_rest_is_kept_at_the_same_offsets() {
        let deep = format!("X = {}\n", vec!["1"; 3000].join("+"));
        let text = format!("class Envs:\n    A = 1\n    {deep}    B = 2\n");
        let bounded = parse_bounded(text.clone(), &PY, python);
        assert_eq!(bounded.skipped, Some(vec![3]));
        assert_eq!(bounded.text.len(), text.len());
        assert!(depth(bounded.tree.root_node()) <= MAX_SYNTAX_DEPTH);
        assert!(bounded.text.contains("A = 1") && bounded.text.contains("B = 2"));
        assert_eq!(&bounded.text[text.find("B = 2").unwrap()..][..5], "B = 2");
        assert!(!bounded.tree.root_node().has_error(), "{}", bounded.tree.root_node().to_sexp());
    }

    #[test]
    fn real_code_is_left_alone() {
        let text = "def f(x):\n    return [(a, {b: c}) for a in x if a]\n".to_string();
        let bounded = parse_bounded(text.clone(), &PY, python);
        assert_eq!(bounded.text, text);
        assert_eq!(bounded.skipped, Some(vec![]));
        assert!(!bounded.skipped_anything());
    }

    #[test]
    fn nesting_of_statements_themselves_is_cut_at_the_outermost_deep_one() {
        let mut text = String::new();
        for i in 0..600 {
            text.push_str(&"    ".repeat(i));
            text.push_str("if x:\n");
        }
        text.push_str(&"    ".repeat(600));
        text.push_str("y = 1\nz = 2\n");
        let bounded = parse_bounded(text.clone(), &PY, python);
        assert!(bounded.skipped_anything());
        assert!(depth(bounded.tree.root_node()) <= MAX_SYNTAX_DEPTH);
        assert!(bounded.text.ends_with("z = 2\n"));
        assert_eq!(bounded.text.len(), text.len());
    }
}
