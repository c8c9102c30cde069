//! Folding a call to an engine function whose body computes a constant, the
//! way choices lists and defaults are built since SGLang v0.5.21:
//!
//! ```python
//! def _reasoning_parser_choices():
//!     module = sys.modules.get("sglang.srt.parser.reasoning_parser")
//!     if module is not None:            # only when a plugin imported it first
//!         return list(module.ReasoningParser.DetectorMap)
//!     from sglang.srt.parser.reasoning_parser_names import REASONING_PARSER_NAMES
//!     return list(REASONING_PARSER_NAMES)
//! ```
//!
//! The body is read statement by statement: assignments to plain names,
//! imports inside the function, and `return`. An `if` whose test depends on
//! `sys.modules` (whether some module was imported before) is taken as not
//! taken: that is the parser a plain `sglang serve` builds; the branch only
//! differs when another import ran first. Any other statement, or an `if`
//! on anything else, leaves the call unfolded.

use super::{ConstEval, DepthGuard, Locals, Scope};
use crate::extract::python::named_children;
use tree_sitter::Node;

use super::value::{Folded, Val};

/// The value `module.name(*args)` returns, when its body folds.
pub(super) fn call(ev: &ConstEval, module: &str, name: &str, args: &[Val]) -> Folded {
    let unknown = || Err(format!("{name}(...)"));
    let Some(_guard) = DepthGuard::enter(&ev.depth) else { return unknown() };
    let Some(file) = ev.module_file(module) else { return unknown() };
    let Some(def) = super::find_definition(&file.source, file.root(), name).filter(|d| d.kind() == "function_definition") else {
        return unknown();
    };
    let (Some(params), Some(body)) = (def.child_by_field_name("parameters"), def.child_by_field_name("body")) else {
        return unknown();
    };
    let mut locals = Locals::new();
    let names = parameter_names(&file, params).ok_or_else(|| format!("{name}(...)"))?;
    if names.len() != args.len() {
        return unknown();
    }
    for (param, arg) in names.into_iter().zip(args) {
        locals.insert(param, Ok(arg.clone()));
    }
    // Names bound from `sys.modules`: tests on them ask what was imported before.
    let mut runtime: Vec<String> = Vec::new();
    for stmt in named_children(body) {
        let scope = Scope { module, locals: Some(&locals), class: None };
        match stmt.kind() {
            "comment" | "pass_statement" => {}
            "return_statement" => {
                let Some(value) = stmt.named_child(0) else { return Ok(Val::None) };
                return ev.eval(&file, value, scope);
            }
            "expression_statement" => {
                let Some(inner) = stmt.named_child(0) else { continue };
                match inner.kind() {
                    // A docstring.
                    "string" => {}
                    "assignment" => {
                        let (Some(left), Some(right)) = (inner.child_by_field_name("left"), inner.child_by_field_name("right")) else {
                            return unknown();
                        };
                        if left.kind() != "identifier" {
                            return unknown();
                        }
                        let target = file.text(left).to_string();
                        if mentions_sys_modules(&file, right) {
                            runtime.push(target.clone());
                        }
                        let value = ev.eval(&file, right, scope);
                        locals.insert(target, value);
                    }
                    _ => return unknown(),
                }
            }
            "import_from_statement" => {
                let Some(target) = stmt.child_by_field_name("module_name").and_then(|m| ev.import_target(module, &file, m)) else {
                    return unknown();
                };
                for (bound, imported) in imported_names(&file, stmt) {
                    let value = match ev.global(&target, &imported) {
                        Ok(v) => Ok(v),
                        Err(_) if ev.pkg.module_path(&format!("{target}.{imported}")).is_some() => {
                            Ok(Val::Module(format!("{target}.{imported}")))
                        }
                        Err(e) => Err(e),
                    };
                    locals.insert(bound, value);
                }
            }
            "if_statement" => {
                let Some(test) = stmt.child_by_field_name("condition") else { return unknown() };
                let on_imports = mentions_sys_modules(&file, test) || runtime.iter().any(|r| mentions_name(&file, test, r));
                if !on_imports || stmt.child_by_field_name("alternative").is_some() {
                    return unknown();
                }
            }
            _ => return unknown(),
        }
    }
    // Falling off the end returns None.
    Ok(Val::None)
}

/// Plain positional parameter names; `None` for `*args`, `**kw` or keyword-only markers.
fn parameter_names(file: &crate::extract::python::PyFile, params: Node) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for p in named_children(params) {
        let id = match p.kind() {
            "identifier" => Some(p),
            "typed_parameter" => p.named_child(0).filter(|n| n.kind() == "identifier"),
            _ => None,
        }?;
        out.push(file.text(id).to_string());
    }
    Some(out)
}

/// `(bound name, imported name)` of `from x import a, b as c`.
fn imported_names(file: &crate::extract::python::PyFile, stmt: Node) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cursor = stmt.walk();
    for name in stmt.children_by_field_name("name", &mut cursor) {
        match name.kind() {
            "dotted_name" => {
                let text = file.text(name).to_string();
                out.push((text.clone(), text));
            }
            "aliased_import" => {
                let (Some(orig), Some(alias)) = (name.child_by_field_name("name"), name.child_by_field_name("alias")) else { continue };
                out.push((file.text(alias).to_string(), file.text(orig).to_string()));
            }
            _ => {}
        }
    }
    out
}

fn mentions_sys_modules(file: &crate::extract::python::PyFile, node: Node) -> bool {
    file.text(node).contains("sys.modules")
}

fn mentions_name(file: &crate::extract::python::PyFile, node: Node, name: &str) -> bool {
    if node.kind() == "identifier" {
        return file.text(node) == name;
    }
    named_children(node).into_iter().any(|c| mentions_name(file, c, name))
}
