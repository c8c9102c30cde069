//! Pydantic model classes in an engine's package, read without importing it:
//! where a class is defined, what its bases are, whether it reaches
//! pydantic's `BaseModel`, and the parts of a subscripted annotation. Shared by
//! the readers of a model's fields, of its unions and of its validators.

use std::sync::Arc;

use tree_sitter::Node;

use super::consts::{find_definition, ClassRef, ConstEval, Scope, Val};
use super::python::{named_children, PyFile};

/// How many base classes deep a model's chain is followed.
pub(super) const MAX_BASES: usize = 16;

/// The file and class node defining `class`.
pub(super) fn locate(ev: &ConstEval, class: &ClassRef) -> Option<(Arc<PyFile>, usize)> {
    let file = ev.module_file(&class.module)?;
    let def = find_definition(&file.source, file.root(), &class.name)?;
    (def.kind() == "class_definition").then_some(())?;
    let start = def.start_byte();
    Some((file, start))
}

/// The class node of `class` in `file` (found again by its start byte).
pub(super) fn class_node(file: &PyFile, start: usize) -> Option<Node<'_>> {
    let mut node = file.root().descendant_for_byte_range(start, start)?;
    while node.kind() != "class_definition" {
        node = node.parent()?;
    }
    Some(node)
}

/// A base of a model: an engine class, or a name from outside (`BaseModel`).
pub(super) enum Base {
    Engine(ClassRef),
    External(String),
    Unknown,
}

pub(super) fn bases(ev: &ConstEval, file: &PyFile, module: &str, class: Node) -> Vec<Base> {
    let Some(list) = class.child_by_field_name("superclasses") else { return Vec::new() };
    named_children(list)
        .into_iter()
        .filter(|b| b.kind() != "keyword_argument")
        .map(|b| {
            // `Generic[T]`, `BaseModel[...]`: the subscripted class.
            let node = if b.kind() == "subscript" { b.child_by_field_name("value").unwrap_or(b) } else { b };
            match ev.eval(file, node, Scope::module(module)) {
                Ok(Val::Class(c)) => Base::Engine(c),
                Ok(Val::External(name)) => Base::External(name),
                _ => {
                    let text = file.text(node);
                    // A name imported from outside the package folds to nothing
                    // useful; its spelling still says what it is.
                    if is_external_model_name(text) || matches!(text, "ABC" | "abc.ABC" | "Generic" | "object") {
                        Base::External(text.to_string())
                    } else {
                        Base::Unknown
                    }
                }
            }
        })
        .collect()
}

pub(super) fn is_external_model_name(name: &str) -> bool {
    name == "BaseModel" || name.ends_with(".BaseModel")
}

/// Whether `class` is a pydantic model: it reaches pydantic's `BaseModel`.
pub(super) fn is_model(ev: &ConstEval, class: &ClassRef, depth: usize) -> bool {
    if depth > MAX_BASES {
        return false;
    }
    let Some((file, start)) = locate(ev, class) else { return false };
    let Some(node) = class_node(&file, start) else { return false };
    bases(ev, &file, &class.module, node).into_iter().any(|b| match b {
        Base::Engine(c) => is_model(ev, &c, depth + 1),
        Base::External(name) => is_external_model_name(&name),
        Base::Unknown => false,
    })
}

/// `Head[a, b]` as (`Head`, [a, b]): annotations parse as `generic_type`
/// (plain head) or `subscript` (dotted head, `typing.Optional[...]`).
pub(super) fn generic<'f, 't>(file: &'f PyFile, node: Node<'t>) -> Option<(&'f str, Vec<Node<'t>>)> {
    let unwrap = |n: Node<'t>| if n.kind() == "type" { named_children(n).into_iter().next().unwrap_or(n) } else { n };
    let (head, args) = match node.kind() {
        "subscript" => {
            let head = node.child_by_field_name("value")?;
            (head, named_children(node).into_iter().filter(|n| n.id() != head.id()).map(unwrap).collect::<Vec<_>>())
        }
        "generic_type" => {
            let children = named_children(node);
            let head = *children.first()?;
            let params = children.iter().find(|c| c.kind() == "type_parameter")?;
            (head, named_children(*params).into_iter().map(unwrap).collect())
        }
        _ => return None,
    };
    // `Literal[("a", "b")]` reads as its items.
    let args = match args.as_slice() {
        [one] if matches!(one.kind(), "tuple" | "expression_list") => named_children(*one),
        _ => args,
    };
    let text = file.text(head);
    Some((text.rsplit('.').next().unwrap_or(text), args))
}

/// The name of a class method's first parameter after `cls`
/// (`def from_dict(cls, data: dict)` → `data`): the value it is handed.
pub(super) fn value_parameter<'f>(file: &'f PyFile, def: Node) -> Option<&'f str> {
    let params = def.child_by_field_name("parameters").map(named_children)?;
    let param = params.get(1)?;
    let name = match param.kind() {
        "identifier" => *param,
        _ => param.child_by_field_name("name").or_else(|| named_children(*param).into_iter().next())?,
    };
    Some(file.text(name))
}
