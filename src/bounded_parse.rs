//! Parsing with bounds: the extractors and the script reader walk syntax trees
//! recursively, and a small hostile file (`$(` nested 10,000 deep in 30 KB, a
//! 5,000-term sum in one assignment) would overflow the stack and abort the
//! whole run; and tree-sitter-bash's scanner is quadratic on one long line
//! (80 KB of `%(1` took 27 s), tree-sitter's error recovery on some garbage
//! (80 KB of `s En` took 5 s per file). Real engine code and launch scripts
//! nest a few dozen levels and parse in milliseconds.
//!
//! A statement that reaches [`MAX_SYNTAX_DEPTH`] is blanked out (every byte but
//! line breaks becomes a space, after a no-op of the language) and the text
//! parsed again, so byte offsets and line numbers stay exact, the rest of the
//! file is still read, and the caller names what was skipped. A parse that
//! runs past [`PARSE_DEADLINE`] is given up on, and the caller names the file.

use std::time::{Duration, Instant};
use tree_sitter::{Node, ParseOptions, Parser, Tree};

/// Deeper than any real file (SGLang's deepest module is under 60 levels; the
/// InferenceX scripts under 30) and shallow enough for the recursive walks on a
/// 2 MiB worker stack.
pub(crate) const MAX_SYNTAX_DEPTH: usize = 400;

/// A real file parses in milliseconds (SGLang's largest module, 300 KB, in
/// about 30 ms): sixty times that on a loaded machine is still far below.
/// `ENGINE_AUDIT_PARSE_DEADLINE_MS` overrides it (tests lower it).
pub(crate) const PARSE_DEADLINE: Duration = Duration::from_secs(2);

/// [`PARSE_DEADLINE`], or its override from the environment.
pub(crate) fn parse_deadline() -> Duration {
    static DEADLINE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *DEADLINE.get_or_init(|| {
        std::env::var("ENGINE_AUDIT_PARSE_DEADLINE_MS").ok().and_then(|v| v.parse().ok()).map_or(PARSE_DEADLINE, Duration::from_millis)
    })
}

/// Levels a no-op statement's own syntax takes (`command` → `command_name` → `word`).
const NO_OP_DEPTH: usize = 4;

/// Blank-and-reparse rounds before the whole text is given up on.
const MAX_ROUNDS: usize = 4;

/// How one language marks its statements, and the no-op that replaces one.
pub(crate) struct StatementSyntax {
    pub is_statement: fn(&str) -> bool,
    /// Written at the start of a blanked statement (`pass`, `:`).
    pub no_op: &'static str,
}

/// A tree no deeper than [`MAX_SYNTAX_DEPTH`], the text it was parsed from
/// (same length and line breaks as the input), and what was left out.
pub(crate) struct Bounded {
    pub text: String,
    pub tree: Tree,
    pub skipped: Skipped,
}

/// What a bounded parse left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    Nothing,
    /// The 1-based lines of the statements blanked for nesting too deep.
    Statements(Vec<u32>),
    /// The whole text: nested too deep throughout, or too slow to parse.
    WholeFile(WhyNot),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyNot {
    TooDeep,
    TooSlow,
}

impl Bounded {
    pub(crate) fn skipped_anything(&self) -> bool {
        self.skipped != Skipped::Nothing
    }
}

/// Parse `text` with `parser` (its language set), blanking statements nested
/// too deep, within [`parse_deadline`] in all.
pub(crate) fn parse_bounded(text: String, syntax: &StatementSyntax, parser: &mut Parser) -> Bounded {
    parse_bounded_within(text, syntax, parser, parse_deadline())
}

/// [`parse_bounded`] within `budget`.
fn parse_bounded_within(text: String, syntax: &StatementSyntax, parser: &mut Parser, budget: Duration) -> Bounded {
    let deadline = Instant::now() + budget;
    let mut text = text;
    let mut lines = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let Some(tree) = parse_until(parser, &text, deadline) else {
            return whole_file(text, parser, WhyNot::TooSlow);
        };
        let too_deep = statements_too_deep(tree.root_node(), syntax);
        if too_deep.is_empty() {
            let skipped = if lines.is_empty() { Skipped::Nothing } else { Skipped::Statements(lines) };
            return Bounded { text, tree, skipped };
        }
        let mut bytes = std::mem::take(&mut text).into_bytes();
        for range in &too_deep {
            lines.push(line_of(&bytes, range.start));
            blank(&mut bytes[range.clone()], syntax.no_op);
        }
        text = String::from_utf8(bytes).expect("only whole statements (char-aligned) are blanked, with ASCII");
    }
    match parse_until(parser, &text, deadline) {
        Some(tree) if statements_too_deep(tree.root_node(), syntax).is_empty() => {
            Bounded { text, tree, skipped: Skipped::Statements(lines) }
        }
        Some(_) => whole_file(text, parser, WhyNot::TooDeep),
        None => whole_file(text, parser, WhyNot::TooSlow),
    }
}

/// The parse of `text`, or `None` when it runs past `deadline`.
fn parse_until(parser: &mut Parser, text: &str, deadline: Instant) -> Option<Tree> {
    let bytes = text.as_bytes();
    let mut past_deadline = |_: &tree_sitter::ParseState| Instant::now() > deadline;
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(ParseOptions::new().progress_callback(&mut past_deadline)),
    );
    // A cancelled parse leaves the parser mid-document: start afresh next time.
    if tree.is_none() {
        parser.reset();
    }
    tree
}

/// Every byte but line breaks blanked, and its (trivial) tree.
fn whole_file(text: String, parser: &mut Parser, why: WhyNot) -> Bounded {
    let mut bytes = text.into_bytes();
    let len = bytes.len();
    blank(&mut bytes[..len], "");
    let text = String::from_utf8(bytes).expect("ASCII");
    let tree = parser.parse(&text, None).expect("whitespace parses at once");
    Bounded { text, tree, skipped: Skipped::WholeFile(why) }
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

    /// What nesting does, whatever the machine's load: these tests are not
    /// about the deadline (a parse of 600 nested levels took over 2 s on a
    /// loaded 2-core machine), so it is far away.
    fn python(text: &str) -> Bounded {
        let mut p = Parser::new();
        p.set_language(&tree_sitter_python::LANGUAGE.into()).unwrap();
        parse_bounded_within(text.to_string(), &PY, &mut p, Duration::from_secs(120))
    }

    const PY: StatementSyntax =
        StatementSyntax { is_statement: |k| k.ends_with("_statement") || k.ends_with("_definition"), no_op: "pass" };

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
        let bounded = python(&text);
        assert_eq!(bounded.skipped, Skipped::Statements(vec![3]));
        assert_eq!(bounded.text.len(), text.len());
        assert!(depth(bounded.tree.root_node()) <= MAX_SYNTAX_DEPTH);
        assert!(bounded.text.contains("A = 1") && bounded.text.contains("B = 2"));
        assert_eq!(&bounded.text[text.find("B = 2").unwrap()..][..5], "B = 2");
        assert!(!bounded.tree.root_node().has_error(), "{}", bounded.tree.root_node().to_sexp());
    }

    #[test]
    fn real_code_is_left_alone() {
        let text = "def f(x):\n    return [(a, {b: c}) for a in x if a]\n";
        let bounded = python(text);
        assert_eq!(bounded.text, text);
        assert_eq!(bounded.skipped, Skipped::Nothing);
        assert!(!bounded.skipped_anything());
    }

    #[test]
    fn nesting_of_statements_themselves_is_cut_at_the_outermost_deep_one() {
        let mut text = String::new();
        // One space per level: 600 levels in 180 KB.
        for i in 0..600 {
            text.push_str(&" ".repeat(i));
            text.push_str("if x:\n");
        }
        text.push_str(&" ".repeat(600));
        text.push_str("y = 1\nz = 2\n");
        let bounded = python(&text);
        assert!(bounded.skipped_anything());
        assert!(depth(bounded.tree.root_node()) <= MAX_SYNTAX_DEPTH);
        assert!(bounded.text.ends_with("z = 2\n"));
        assert_eq!(bounded.text.len(), text.len());
    }

    #[test]
    fn a_parse_past_the_deadline_is_given_up_and_the_parser_still_works() {
        let mut p = Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
        let sh = StatementSyntax { is_statement: |k| k == "command", no_op: ":" };
        let long = "echo hi\n".repeat(1_000);
        let bytes = long.as_bytes();
        let mut always = |_: &tree_sitter::ParseState| true;
        let cancelled = p.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut always)),
        );
        assert!(cancelled.is_none(), "a progress callback that says stop cancels the parse");
        p.reset();
        let bounded = parse_bounded("echo hi\n".into(), &sh, &mut p);
        assert_eq!(bounded.skipped, Skipped::Nothing, "a reset parser parses the next file from its start");
        assert_eq!(bounded.tree.root_node().child_count(), 1);
    }
}
