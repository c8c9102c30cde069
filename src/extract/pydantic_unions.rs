//! A configuration field whose value is one of several pydantic models, picked
//! by one of its own keys through a table in the engine's source.
//!
//! TRT-LLM types `speculative_config` as a union of decoding configs and builds
//! it with a class method of their common base: the value of `decoding_type`
//! is looked up in a dict literal of classes, the key is taken out, and the
//! class found is built from the rest (`config_classes.get(decoding_type)(**data)`).
//! A key under the field is therefore a field of the model the table picks for
//! the value the recipe writes. What is read here, never imported:
//! - the models the annotation names, through a module-level alias
//!   (`SpeculativeConfig: TypeAlias = Optional[Union[...]]`);
//! - in the nearest of a member's classes (itself, then its bases) whose
//!   `from_dict` holds such a table: the key read from the data
//!   (`data.get("decoding_type")`), the table's string → model entries, whether
//!   the value is lowered before the lookup, and the values the method tests
//!   before it (`if decoding_type == "Eagle" and backend ...`: those pick by
//!   more than the value, so the keys under them are left unchecked).
//!
//! A union with no such table (pydantic picking by itself) nests nothing.

use tree_sitter::Node;

use super::consts::{class_body, final_binding, find_definition, BindingKind, ClassRef, ConstEval, Scope, Val};
use super::pydantic_classes::{bases, class_node, generic, is_model, locate, value_parameter, Base};
use super::python::{named_children, walk, PyFile};
use crate::surface::{ConfigUnion, UnionMember};

/// How deep aliases and bases are followed.
const MAX_HOPS: usize = 8;
/// How many nodes of one method are visited (past that, its subtrees are skipped).
const MAX_NODES: usize = 20_000;
/// The class method that builds the member from the data.
const DISPATCH_METHOD: &str = "from_dict";

/// The union an annotation names and how the engine picks its member, with
/// each table value's model (for its keys); `None` when the annotation names
/// fewer than two models or no table picks among them.
pub(crate) fn read(ev: &ConstEval, file: &PyFile, module: &str, annotation: Node) -> Option<(ConfigUnion, Vec<(String, ClassRef)>)> {
    let mut members = Vec::new();
    models_named(ev, file, module, annotation, 0, &mut members);
    if members.len() < 2 {
        return None;
    }
    members.iter().find_map(|m| dispatch_of(ev, m, 0))
}

/// The engine models an annotation names: `A`, `Union[A, B]`, `A | B`,
/// `Optional[...]`, and a module-level alias of any of these.
fn models_named(ev: &ConstEval, file: &PyFile, module: &str, node: Node, hops: usize, out: &mut Vec<ClassRef>) {
    if hops > MAX_HOPS {
        return;
    }
    if node.kind() == "type" {
        if let Some(inner) = named_children(node).into_iter().next() {
            models_named(ev, file, module, inner, hops, out);
        }
        return;
    }
    if let Some((head, args)) = generic(file, node) {
        if matches!(head, "Optional" | "Union" | "Annotated") {
            let args = if head == "Annotated" { args.into_iter().take(1).collect() } else { args };
            for arg in args {
                models_named(ev, file, module, arg, hops + 1, out);
            }
        }
        return;
    }
    match node.kind() {
        "binary_operator" | "union_type" => {
            for part in named_children(node) {
                models_named(ev, file, module, part, hops + 1, out);
            }
        }
        "identifier" => match ev.eval(file, node, Scope::module(module)) {
            Ok(Val::Class(class)) if is_model(ev, &class, 0) => {
                if !out.contains(&class) {
                    out.push(class);
                }
            }
            // `SpeculativeConfig: TypeAlias = Optional[Union[...]]` in the module.
            _ => {
                let binding = final_binding(&file.source, file.root(), file.text(node)).and_then(Result::ok);
                if let Some(BindingKind::Assign { value: Some(value), .. }) = binding.map(|b| b.kind) {
                    models_named(ev, file, module, value, hops + 1, out);
                }
            }
        },
        _ => {}
    }
}

/// The table in `class` or the nearest base that has one.
fn dispatch_of(ev: &ConstEval, class: &ClassRef, hops: usize) -> Option<(ConfigUnion, Vec<(String, ClassRef)>)> {
    if hops > MAX_HOPS {
        return None;
    }
    let (file, start) = locate(ev, class)?;
    let node = class_node(&file, start)?;
    // The class's own method (decorated or not), not an inherited one.
    let method = class_body(node).and_then(|body| find_definition(&file.source, body, DISPATCH_METHOD));
    if let Some(found) = method.filter(|d| d.kind() == "function_definition").and_then(|m| table(ev, &file, &class.module, m)) {
        return Some(found);
    }
    bases(ev, &file, &class.module, node).into_iter().find_map(|b| match b {
        Base::Engine(base) => dispatch_of(ev, &base, hops + 1),
        _ => None,
    })
}

/// What one dispatch method reads: the key, the table, the lowering and the
/// values tested before the lookup.
fn table(ev: &ConstEval, file: &PyFile, module: &str, function: Node) -> Option<(ConfigUnion, Vec<(String, ClassRef)>)> {
    // `def from_dict(cls, data, ...)`.
    let data = value_parameter(file, function)?;
    let mut nodes = Vec::new();
    walk(function, |n| {
        nodes.push(n);
        nodes.len() < MAX_NODES
    });
    // `decoding_type = data.get("decoding_type", ...)`: the key, and the name it is held in.
    let (discriminator, held_in) = nodes.iter().filter(|n| n.kind() == "assignment").find_map(|n| {
        let key = key_read(file, n.child_by_field_name("right")?, data)?;
        Some((key, file.text(n.child_by_field_name("left")?).to_string()))
    })?;
    let mut members: Vec<(String, ClassRef)> = Vec::new();
    let mut evidence = None;
    for dict in nodes.iter().filter(|n| n.kind() == "dictionary") {
        let mut entries = Vec::new();
        for pair in named_children(*dict).into_iter().filter(|p| p.kind() == "pair") {
            let (Some(k), Some(v)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) else { continue };
            let (Some(value), Ok(Val::Class(class))) = (file.string_value(k), ev.eval(file, v, Scope::module(module))) else { continue };
            // The value becomes part of a key path: one that would split it is left out.
            if !value.contains(['.', '[', ']']) && is_model(ev, &class, 0) {
                entries.push((value, class));
            }
        }
        if entries.len() >= 2 && entries.len() > members.len() {
            members = entries;
            evidence = Some(file.evidence(*dict));
        }
    }
    let evidence = evidence?;
    let lowercased = nodes.iter().any(|n| n.kind() == "call" && is_method_call(file, *n, &held_in, "lower"));
    let mut branched: Vec<String> = Vec::new();
    for cmp in nodes.iter().filter(|n| n.kind() == "comparison_operator") {
        let parts = named_children(*cmp);
        if let [a, b] = parts.as_slice() {
            let literal = match (file.text(*a) == held_in, file.text(*b) == held_in) {
                (true, false) => file.string_value(*b),
                (false, true) => file.string_value(*a),
                _ => None,
            };
            if let Some(value) = literal.filter(|v| !branched.contains(v)) {
                branched.push(value);
            }
        }
    }
    let union = ConfigUnion {
        discriminator,
        members: members.iter().map(|(value, class)| UnionMember { value: value.clone(), model: class.name.clone() }).collect(),
        lowercased,
        branched,
        evidence,
    };
    Some((union, members))
}

/// `data.get("k", ...)` or `data["k"]`: `k`.
fn key_read(file: &PyFile, node: Node, data: &str) -> Option<String> {
    match node.kind() {
        "call" => {
            let function = node.child_by_field_name("function")?;
            (function.kind() == "attribute"
                && function.child_by_field_name("object").is_some_and(|o| file.text(o) == data)
                && function.child_by_field_name("attribute").is_some_and(|a| matches!(file.text(a), "get" | "pop")))
            .then_some(())?;
            let first = node.child_by_field_name("arguments").map(named_children)?.into_iter().next()?;
            file.string_value(first)
        }
        "subscript" => {
            (node.child_by_field_name("value").is_some_and(|v| file.text(v) == data)).then_some(())?;
            file.string_value(node.child_by_field_name("subscript")?)
        }
        _ => None,
    }
}

/// `<object>.<method>(...)`.
fn is_method_call(file: &PyFile, call: Node, object: &str, method: &str) -> bool {
    call.child_by_field_name("function").is_some_and(|f| {
        f.kind() == "attribute"
            && f.child_by_field_name("object").is_some_and(|o| file.text(o) == object)
            && f.child_by_field_name("attribute").is_some_and(|a| file.text(a) == method)
    })
}
