//! Blocks of the parser-building code that run only when an env var is set:
//! `if envs.SGLANG_X.get(): choices.add("token_oracle")`.
//!
//! The parser is read as it is built in a clean environment (the var unset,
//! its registry default falsy): the block does not run, so the choice list is
//! the one argparse gets then. What the block would add to a list or set (a
//! local of the parser-building function, or a module constant) is kept per
//! env var, so a recipe that passes such a value is not called invalid (the
//! value is accepted where the var is set).

use std::collections::BTreeMap;

use tree_sitter::Node;

use crate::extract::consts::{ConstEval, Scope, Val};
use crate::extract::python::{named_children, walk, PyFile};
use crate::surface::PyValue;

/// The `if` statement whose block holds `node` directly (statements of that
/// block, not of a nested one), if any.
pub(crate) fn enclosing_if(node: Node) -> Option<Node> {
    let block = node.parent().filter(|b| b.kind() == "block")?;
    block.parent().filter(|i| i.kind() == "if_statement" && i.child_by_field_name("consequence").is_some_and(|c| c.id() == block.id()))
}

/// The env var an `if` tests, when its body runs only with the var set and
/// the var is unset (or falsy) by default: `X.NAME.get()` on the engine's env
/// registry (default from the registry field), `os.environ.get("NAME")`,
/// `os.getenv("NAME")`. `None` for any other test, or an `if` with a branch
/// for the other case.
pub(crate) fn off_by_default(ev: &ConstEval, file: &PyFile, module: &str, statement: Node) -> Option<String> {
    if statement.kind() != "if_statement" || statement.child_by_field_name("alternative").is_some() {
        return None;
    }
    let condition = statement.child_by_field_name("condition")?;
    if condition.kind() != "call" || named_children(condition.child_by_field_name("arguments")?).len() > 1 {
        return None;
    }
    let function = file.text(condition.child_by_field_name("function")?);
    let args = named_children(condition.child_by_field_name("arguments")?);
    if function == "os.environ.get" || function == "os.getenv" {
        return args.first().and_then(|a| file.string_value(*a));
    }
    let (registry, name) = function.strip_suffix(".get")?.rsplit_once('.')?;
    let is_env_name = name.len() > 1 && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if !is_env_name || !args.is_empty() || registry.contains('.') {
        return None;
    }
    match registry_default(ev, file, module, registry, name)? {
        Val::None | Val::Bool(false) => Some(name.to_string()),
        Val::Int(0) => Some(name.to_string()),
        Val::Str(s) if s.is_empty() => Some(name.to_string()),
        _ => None,
    }
}

/// The default of registry field `name` of the registry object `registry` is
/// imported as (`from sglang.srt.environ import envs`): the first argument of
/// `NAME = EnvBool(False)` in the registry's module.
fn registry_default(ev: &ConstEval, file: &PyFile, module: &str, registry: &str, name: &str) -> Option<Val> {
    let source_module = imported_from(file, registry).or_else(|| Some(module.to_string()))?;
    let registry_file = ev.module_file(&source_module)?;
    let mut found = None;
    walk(registry_file.root(), |n| {
        if found.is_some() {
            return false;
        }
        if n.kind() == "assignment" {
            let left = n.child_by_field_name("left").map(|l| registry_file.text(l));
            let right = n.child_by_field_name("right").filter(|r| r.kind() == "call");
            if let (Some(left), Some(call)) = (left, right) {
                if left == name {
                    let first = call.child_by_field_name("arguments").and_then(|a| named_children(a).into_iter().next());
                    let scope = Scope { module: &source_module, locals: None, class: None };
                    found = Some(match first {
                        Some(arg) if arg.kind() != "keyword_argument" => ev.eval(&registry_file, arg, scope).ok(),
                        // No default given: the field's class default (falsy for the
                        // registry's types), read as unknown to stay safe.
                        _ => None,
                    });
                }
            }
            return false;
        }
        true
    });
    found.flatten()
}

/// The module `name` is imported from by a `from module import name [as name]`.
fn imported_from(file: &PyFile, name: &str) -> Option<String> {
    let mut found = None;
    walk(file.root(), |n| {
        if found.is_some() || n.kind() != "import_from_statement" {
            return found.is_none();
        }
        let module = n.child_by_field_name("module_name").filter(|m| m.kind() == "dotted_name");
        let mut cursor = n.walk();
        for imported in n.children_by_field_name("name", &mut cursor) {
            let bound = match imported.kind() {
                "aliased_import" => imported.child_by_field_name("alias"),
                _ => Some(imported),
            };
            if bound.is_some_and(|b| file.text(b) == name) {
                found = module.map(|m| file.text(m).to_string());
            }
        }
        false
    });
    found
}

/// What a statement in a skipped block adds to a local list or set:
/// `name.add(v)`, `name.append(v)`, `name.extend([...])`, `name += [...]`.
pub(crate) fn added_values(ev: &ConstEval, file: &PyFile, scope: Scope, statement: Node) -> Option<(String, Vec<PyValue>)> {
    let expr = named_children(statement).into_iter().next()?;
    let (target, values) = match expr.kind() {
        "call" => {
            let function = expr.child_by_field_name("function").filter(|f| f.kind() == "attribute")?;
            let object = function.child_by_field_name("object").filter(|o| o.kind() == "identifier")?;
            let method = file.text(function.child_by_field_name("attribute")?);
            let arg = named_children(expr.child_by_field_name("arguments")?).into_iter().next()?;
            let value = ev.eval(file, arg, scope).ok()?;
            let values = match method {
                "add" | "append" => vec![value],
                "extend" | "update" => value.iter_items()?,
                _ => return None,
            };
            (file.text(object), values)
        }
        "augmented_assignment" => {
            let left = expr.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
            let value = ev.eval(file, expr.child_by_field_name("right")?, scope).ok()?;
            (file.text(left), value.iter_items()?)
        }
        _ => return None,
    };
    let values: Option<Vec<PyValue>> = values.iter().map(Val::to_json).collect();
    Some((target.to_string(), values?))
}

/// Values per env var, merged.
pub(crate) fn merge(into: &mut BTreeMap<String, Vec<PyValue>>, env: &str, values: Vec<PyValue>) {
    let slot = into.entry(env.to_string()).or_default();
    for v in values {
        if !slot.contains(&v) {
            slot.push(v);
        }
    }
}
