//! Which definition of an entry function runs: a module that picks it by an
//! `if` at import time (`if envs.USE_X: from .a import main` / `else: from .b
//! import main`) runs the branch whose test holds in a clean environment (the
//! env var unset, its registry default), as `python -m module` does there.

use tree_sitter::Node;

use super::super::consts::{ConstEval, Scope};
use super::super::python::{named_children, PyFile};

/// `(module, name)` the entry `function` of `module` is imported from, when
/// `module` binds it only inside an `if`/`else` at module level whose test
/// folds; `None` otherwise (the ordinary lookup applies).
pub(super) fn chosen_import(ev: &ConstEval, module: &str, function: &str) -> Option<(String, String)> {
    let file = ev.module_file(module)?;
    let root = file.root();
    for stmt in named_children(root) {
        if stmt.kind() != "if_statement" {
            continue;
        }
        let (Some(test), Some(then)) = (stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")) else { continue };
        let alternatives: Vec<Node> =
            named_children(stmt).into_iter().filter(|c| matches!(c.kind(), "else_clause" | "elif_clause")).collect();
        let otherwise = match alternatives.as_slice() {
            [] => None,
            [e] if e.kind() == "else_clause" => e.child_by_field_name("body"),
            _ => continue,
        };
        if import_of(&file, then, function).is_none() && otherwise.and_then(|b| import_of(&file, b, function)).is_none() {
            continue;
        }
        let holds = ev.eval(&file, test, Scope::module(module)).ok()?.truthy()?;
        let block = if holds { Some(then) } else { otherwise };
        let (module_node, name) = block.and_then(|b| import_of(&file, b, function))?;
        return Some((ev.import_target(module, &file, module_node)?, name));
    }
    None
}

/// `from m import name` (or `name as function`) binding `function` directly
/// in `block`: the module node and the imported name.
fn import_of<'t>(file: &PyFile, block: Node<'t>, function: &str) -> Option<(Node<'t>, String)> {
    named_children(block).into_iter().filter(|s| s.kind() == "import_from_statement").find_map(|s| {
        let module_node = s.child_by_field_name("module_name")?;
        let mut cursor = s.walk();
        let names: Vec<Node> = s.children_by_field_name("name", &mut cursor).collect();
        names.into_iter().find_map(|n| {
            let (orig, bound) = match n.kind() {
                "aliased_import" => (file.text(n.child_by_field_name("name")?), file.text(n.child_by_field_name("alias")?)),
                _ => (file.text(n), file.text(n)),
            };
            (bound == function).then(|| (module_node, orig.to_string()))
        })
    })
}
