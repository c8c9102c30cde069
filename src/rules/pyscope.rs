//! Syntax helpers the evidence predicates share: which files a rule names,
//! which functions it means, and what "mentions a name" means.

use crate::extract::python::{walk, PyFile};
use tree_sitter::Node;

/// `*` and `?` stay within one path component; `**` spans components.
pub(crate) fn glob_match(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                // `**/` also matches zero folders.
                let rest = if p.get(2) == Some(&b'/') { &p[3..] } else { &p[2..] };
                (0..=s.len()).any(|i| go(rest, &s[i..]))
            }
            Some(b'*') => (0..=s.len()).take_while(|&i| i == 0 || s[i - 1] != b'/').any(|i| go(&p[1..], &s[i..])),
            Some(b'?') => !s.is_empty() && s[0] != b'/' && go(&p[1..], &s[1..]),
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

pub(crate) fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}

/// Named functions of a file: `def name` inside every class named `class`
/// (a class defined in several branches counts each time), or anywhere when no
/// class is given. Methods nested in `if` blocks of a class body count too.
pub(crate) fn find_functions<'t>(file: &'t PyFile, class: Option<&str>, name: &str) -> Vec<Node<'t>> {
    let scopes: Vec<Node<'t>> = match class {
        Some(cls) => class_bodies(file, cls),
        None => vec![file.root()],
    };
    let mut out = Vec::new();
    for scope in scopes {
        walk(scope, |n| {
            if n.kind() == "function_definition" && def_name(file, n) == Some(name) {
                out.push(n);
                return false;
            }
            // Inside a class scope, do not descend into nested classes: their
            // methods are not this class's.
            may_hold_definitions(n) && !(class.is_some() && n.kind() == "class_definition" && n != scope)
        });
    }
    out.sort_by_key(|n| n.start_byte());
    out.dedup();
    out
}

/// The body of every class named `class` in the file, nested ones included (a
/// class defined in several branches counts each time).
pub(crate) fn class_bodies<'f>(file: &'f PyFile, class: &str) -> Vec<Node<'f>> {
    let mut out = Vec::new();
    walk(file.root(), |n| {
        if n.kind() == "class_definition" && def_name(file, n) == Some(class) {
            out.extend(n.child_by_field_name("body"));
        }
        may_hold_definitions(n)
    });
    out
}

/// Whether a `def` or `class` can sit below `node`. In a well-formed tree they
/// are statements, so only a module, a block and the statements and clauses
/// that hold blocks can contain them; a subtree with a syntax error can hold
/// anything. Walks for definitions skip the rest: most nodes of a model file
/// are expressions (the rules' walks over two such files were ~100M
/// instructions of a cold audit, all on its serial tail).
fn may_hold_definitions(node: Node) -> bool {
    node.has_error()
        || matches!(
            node.kind(),
            "module"
                | "block"
                | "class_definition"
                | "function_definition"
                | "decorated_definition"
                | "if_statement"
                | "elif_clause"
                | "else_clause"
                | "for_statement"
                | "while_statement"
                | "try_statement"
                | "except_clause"
                | "finally_clause"
                | "with_statement"
                | "match_statement"
                | "case_clause"
        )
}

pub(crate) fn def_name<'f>(file: &'f PyFile, node: Node) -> Option<&'f str> {
    node.child_by_field_name("name").map(|n| file.text(n))
}

/// Start byte of every place in `node` that mentions `token`: an identifier equal
/// to it, an attribute chain whose text ends with it (dotted tokens), or a
/// string containing it. Comments never count.
pub(crate) fn mentions(file: &PyFile, node: Node, token: &str) -> Vec<usize> {
    let dotted = token.contains('.');
    let mut out = Vec::new();
    walk(node, |n| match n.kind() {
        "comment" => false,
        "identifier" if !dotted && file.text(n) == token => {
            out.push(n.start_byte());
            false
        }
        "attribute" if dotted && squash(file.text(n)).ends_with(token) => {
            out.push(n.start_byte());
            false
        }
        "string" if file.text(n).contains(token) => {
            out.push(n.start_byte());
            false
        }
        _ => true,
    });
    out.sort_unstable();
    out
}

fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Nodes of `kind` below `node`, not descending into nested function or class
/// definitions (their `return` is not the enclosing function's).
pub(crate) fn own_descendants<'t>(node: Node<'t>, kind: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    walk(node, |n| {
        if n != node && matches!(n.kind(), "function_definition" | "class_definition" | "lambda") {
            return false;
        }
        if n.kind() == kind {
            out.push(n);
        }
        true
    });
    out
}

/// Names bound at the top of a scope body: defs, classes, plain and annotated
/// assignments, including inside top-level `if`/`try` blocks.
pub(crate) fn binds_name(file: &PyFile, body: Node, name: &str) -> Option<u32> {
    let mut found = None;
    walk(body, |n| {
        if found.is_some() {
            return false;
        }
        match n.kind() {
            "function_definition" | "class_definition" => {
                if def_name(file, n) == Some(name) {
                    found = Some(file.line(n));
                }
                false
            }
            "assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    let hit = match left.kind() {
                        "identifier" => file.text(left) == name,
                        "pattern_list" | "tuple_pattern" => {
                            crate::extract::python::named_children(left).iter().any(|c| c.kind() == "identifier" && file.text(*c) == name)
                        }
                        _ => false,
                    };
                    if hit {
                        found = Some(file.line(n));
                    }
                }
                false
            }
            // Descend through statements and blocks, not into expressions' lambdas.
            "lambda" => false,
            _ => true,
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("srt/models/deepseek*.py", "srt/models/deepseek_v2.py"));
        assert!(!glob_match("srt/models/deepseek*.py", "srt/models/x/deepseek_v2.py"));
        assert!(glob_match("srt/**/modelopt_quant.py", "srt/layers/quantization/modelopt_quant.py"));
        assert!(glob_match("srt/**/modelopt_quant.py", "srt/modelopt_quant.py"));
        assert!(glob_match("a?c.py", "abc.py"));
        assert!(!glob_match("a?c.py", "a/c.py"));
    }

    const SRC: &str = "\
class A:
    def f(self):
        # weight_x in a comment
        if self.backend.is_fast():
            return
        self.weight_x = 1
    class Inner:
        def f(self):
            pass

class A:
    if True:
        def f(self):
            pass

def f():
    pass
X: int = 3
";

    #[test]
    fn finds_methods_in_every_same_named_class() {
        let file = PyFile::parse("t.py", SRC.to_string());
        let lines: Vec<u32> = find_functions(&file, Some("A"), "f").iter().map(|n| file.line(*n)).collect();
        assert_eq!(lines, [2, 13]);
        assert_eq!(find_functions(&file, None, "f").len(), 4);
    }

    /// Definitions in every statement that holds a block, decorated ones, and
    /// ones inside a syntax error: the pruned walks must find what a walk over
    /// every node finds.
    #[test]
    fn definition_walks_skip_only_what_cannot_hold_a_definition() {
        let src = "\
@decorator
def f(): pass
try:
    def f(): pass
except ImportError:
    def f(): pass
finally:
    def f(): pass
with open(p) as h:
    class A:
        def f(self): pass
for i in x:
    def f(): pass
else:
    def f(): pass
while y:
    def f(): pass
if a:
    pass
elif b:
    def f(): pass
else:
    class A:
        @property
        def f(self): pass
match m:
    case 1:
        def f(): pass
def outer():
    def f(): pass
    class A:
        def f(self): pass
x = [
    def f(): pass
]
";
        let file = PyFile::parse("t.py", src.to_string());
        assert!(file.root().has_error(), "the last three lines are meant to be a syntax error");
        let every = |kind: &str, name: &str| {
            let mut out = Vec::new();
            walk(file.root(), |n| {
                if n.kind() == kind && def_name(&file, n) == Some(name) {
                    out.push(file.line(n));
                }
                true
            });
            out
        };
        let lines = |nodes: Vec<Node>| nodes.iter().map(|n| file.line(*n)).collect::<Vec<u32>>();
        let all_defs = every("function_definition", "f");
        assert_eq!(all_defs, [2, 4, 6, 8, 11, 13, 15, 17, 21, 25, 28, 30, 32, 34]);
        assert_eq!(lines(find_functions(&file, None, "f")), all_defs);
        let class_lines: Vec<u32> = class_bodies(&file, "A").iter().map(|b| file.line(b.parent().unwrap())).collect();
        assert_eq!(class_lines, every("class_definition", "A"));
        assert_eq!(lines(find_functions(&file, Some("A"), "f")), [11, 25, 32]);
    }

    #[test]
    fn mentions_skip_comments() {
        let file = PyFile::parse("t.py", SRC.to_string());
        let f = find_functions(&file, Some("A"), "f")[0];
        let at = mentions(&file, f, "weight_x");
        assert_eq!(at.len(), 1);
        assert_eq!(&SRC[at[0]..at[0] + 8], "weight_x");
        assert_eq!(mentions(&file, f, "backend.is_fast").len(), 1);
    }

    #[test]
    fn module_bindings() {
        let file = PyFile::parse("t.py", SRC.to_string());
        assert_eq!(binds_name(&file, file.root(), "X"), Some(18));
        assert_eq!(binds_name(&file, file.root(), "A"), Some(1));
        assert_eq!(binds_name(&file, file.root(), "nope"), None);
    }
}
