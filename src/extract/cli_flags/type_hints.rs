//! A field annotation as `typing.get_args` / `get_origin` see it, flattened
//! the way vLLM's `get_type_hints` flattens it: `Annotated[T, ...]` is `T`,
//! `X | Y`, `Optional[X]` and `Union[...]` are their members, aliases are
//! followed into the modules that define them (`RunnerOption = Literal[...]`
//! in `vllm/config/model.py`). What cannot be read is `Unknown`, never a guess.

use std::sync::Arc;

use tree_sitter::Node;

use crate::extract::consts::{final_binding, BindingKind, ClassRef, ConstEval, Scope, Val};
use crate::extract::python::{named_children, PyFile};

/// One member of a flattened type hint.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Hint {
    Bool,
    Int,
    Float,
    Str,
    NoneType,
    Literal(Vec<Val>),
    /// `list[T]`, `tuple[T, ...]`, `set[T]`: the collection and its element hints.
    Collection {
        kind: &'static str,
        elements: Vec<Vec<Hint>>,
        ellipsis: bool,
    },
    Dict,
    /// An engine class: a dataclass (decorated), an `Enum`, or another class.
    Class {
        class: ClassRef,
        dataclass: bool,
        is_enum: bool,
    },
    /// A builtin or outside type the rules only need the name of (`Any`, `Callable`).
    Named {
        name: String,
        builtin: bool,
    },
    /// Not read: the annotation text.
    Unknown(String),
}

const MAX_DEPTH: usize = 24;

/// The flattened hints of the annotation `node` in `file` (module `module`).
pub(crate) fn hints(ev: &ConstEval, file: &PyFile, node: Node, module: &str) -> Vec<Hint> {
    let mut out = Vec::new();
    collect(ev, file, node, module, &mut out, 0);
    out
}

fn push(out: &mut Vec<Hint>, h: Hint) {
    if !out.contains(&h) {
        out.push(h);
    }
}

fn collect(ev: &ConstEval, file: &PyFile, node: Node, module: &str, out: &mut Vec<Hint>, depth: usize) {
    let unknown = |out: &mut Vec<Hint>| push(out, Hint::Unknown(file.text(node).to_string()));
    if depth > MAX_DEPTH {
        return unknown(out);
    }
    match node.kind() {
        "type" | "parenthesized_expression" => match named_children(node).as_slice() {
            [inner] => collect(ev, file, *inner, module, out, depth + 1),
            _ => unknown(out),
        },
        "none" => push(out, Hint::NoneType),
        "union_type" => {
            for part in named_children(node) {
                collect(ev, file, part, module, out, depth + 1);
            }
        }
        "member_type" => match ev.eval(file, node, Scope::module(module)) {
            Ok(v) => value_hint(ev, v, out),
            Err(_) => unknown(out),
        },
        "binary_operator" if node.child_by_field_name("operator").is_some_and(|o| file.text(o) == "|") => {
            for side in ["left", "right"] {
                match node.child_by_field_name(side) {
                    Some(n) => collect(ev, file, n, module, out, depth + 1),
                    None => unknown(out),
                }
            }
        }
        "string" => match file.string_value(node) {
            // A forward reference names a type the same way.
            Some(name) if name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') => name_hint(ev, module, &name, out, depth),
            _ => unknown(out),
        },
        "identifier" => name_hint(ev, module, file.text(node), out, depth),
        "attribute" => match ev.eval(file, node, Scope::module(module)) {
            Ok(v) => value_hint(ev, v, out),
            Err(_) => unknown(out),
        },
        "subscript" | "generic_type" => generic(ev, file, node, module, out, depth),
        _ => unknown(out),
    }
}

/// A name: followed to the binding that makes it (alias, import, class), else
/// what folding says it is (a builtin, an outside name).
fn name_hint(ev: &ConstEval, module: &str, name: &str, out: &mut Vec<Hint>, depth: usize) {
    if let Some(h) = builtin_hint(name) {
        return push(out, h);
    }
    let Some(file): Option<Arc<PyFile>> = ev.module_file(module) else {
        return push(out, Hint::Unknown(name.to_string()));
    };
    match final_binding(&file.source, file.root(), name) {
        Some(Ok(b)) => match b.kind {
            BindingKind::Assign { value: Some(v), .. } => collect(ev, &file, v, module, out, depth + 1),
            BindingKind::ImportFrom { module_node, name: imported } => match ev.import_target(module, &file, module_node) {
                Some(target) if ev.pkg.module_path(&target).is_some() => name_hint(ev, &target, file.text(imported), out, depth + 1),
                Some(target) => push(out, outside(&format!("{target}.{}", file.text(imported)))),
                None => push(out, Hint::Unknown(name.to_string())),
            },
            _ => match ev.global(module, name) {
                Ok(v) => value_hint(ev, v, out),
                Err(_) => push(out, Hint::Unknown(name.to_string())),
            },
        },
        _ => match ev.global(module, name) {
            Ok(v) => value_hint(ev, v, out),
            Err(_) => match type_checking_binding(ev, &file, module, name, depth).or_else(|| star_import(ev, &file, module, name, depth)) {
                Some(hints) => out.extend(hints),
                None => push(out, Hint::Unknown(name.to_string())),
            },
        },
    }
}

/// A name re-exported by `from .types import *`: the hints of the module that binds it.
fn star_import(ev: &ConstEval, file: &PyFile, module: &str, name: &str, depth: usize) -> Option<Vec<Hint>> {
    for stmt in named_children(file.root()).into_iter().filter(|s| s.kind() == "import_from_statement") {
        if !named_children(stmt).iter().any(|n| n.kind() == "wildcard_import") {
            continue;
        }
        let Some(target) = stmt.child_by_field_name("module_name").and_then(|m| ev.import_target(module, file, m)) else { continue };
        let Some(target_file) = ev.module_file(&target) else { continue };
        if final_binding(&target_file.source, target_file.root(), name).is_some() {
            let mut out = Vec::new();
            name_hint(ev, &target, name, &mut out, depth + 1);
            return Some(out);
        }
    }
    None
}

/// A name bound under `if TYPE_CHECKING:`: the `else` branch is what runs
/// (`QuantizationMethods = str`); with none, the checker's import names the
/// class (`from vllm.model_executor.model_loader import TensorizerConfig`).
fn type_checking_binding(ev: &ConstEval, file: &PyFile, module: &str, name: &str, depth: usize) -> Option<Vec<Hint>> {
    for stmt in named_children(file.root()).into_iter().filter(|s| s.kind() == "if_statement") {
        let test = stmt.child_by_field_name("condition")?;
        if !file.text(test).ends_with("TYPE_CHECKING") {
            continue;
        }
        let branches: Vec<Node> = named_children(stmt)
            .into_iter()
            .filter(|c| c.kind() == "else_clause")
            .filter_map(|c| c.child_by_field_name("body"))
            .chain(stmt.child_by_field_name("consequence"))
            .collect();
        for block in branches {
            if let Some(Ok(b)) = final_binding(&file.source, block, name) {
                let mut out = Vec::new();
                match b.kind {
                    BindingKind::Assign { value: Some(v), .. } => collect(ev, file, v, module, &mut out, depth + 1),
                    BindingKind::ImportFrom { module_node, name: imported } => match ev.import_target(module, file, module_node) {
                        Some(target) if ev.pkg.module_path(&target).is_some() => {
                            name_hint(ev, &target, file.text(imported), &mut out, depth + 1)
                        }
                        _ => continue,
                    },
                    _ => continue,
                }
                return Some(out);
            }
        }
    }
    None
}

fn value_hint(ev: &ConstEval, v: Val, out: &mut Vec<Hint>) {
    match v {
        Val::Class(class) => {
            let is_enum = ev.is_enum(&class);
            let dataclass = !is_enum && is_decorated(ev, &class);
            push(out, Hint::Class { class, dataclass, is_enum })
        }
        Val::External(name) => push(out, outside(&name)),
        Val::None => push(out, Hint::NoneType),
        Val::LiteralType(values) => push(out, Hint::Literal(values)),
        other => push(out, Hint::Unknown(other.repr())),
    }
}

/// A class with a decorator (`@dataclass`, `@config`, pydantic's): what
/// `dataclasses.is_dataclass` says of the engine's config classes.
pub(super) fn is_decorated(ev: &ConstEval, class: &ClassRef) -> bool {
    let Some(file) = ev.module_file(&class.module) else { return false };
    ev.class_def(&file, &class.name).and_then(|d| d.parent()).is_some_and(|p| p.kind() == "decorated_definition")
}

fn builtin_hint(name: &str) -> Option<Hint> {
    Some(match name {
        "bool" => Hint::Bool,
        "int" => Hint::Int,
        "float" => Hint::Float,
        "str" => Hint::Str,
        "dict" => Hint::Dict,
        "list" | "tuple" | "set" | "frozenset" => Hint::Collection { kind: collection_kind(name)?, elements: Vec::new(), ellipsis: false },
        "object" | "type" | "bytes" => Hint::Named { name: name.into(), builtin: true },
        _ => return None,
    })
}

fn collection_kind(name: &str) -> Option<&'static str> {
    Some(match name.rsplit('.').next()? {
        "list" | "List" | "Sequence" | "MutableSequence" => "list",
        "tuple" | "Tuple" => "tuple",
        "set" | "Set" | "frozenset" | "FrozenSet" | "AbstractSet" => "set",
        _ => return None,
    })
}

/// A name from outside the engine: typing's builtin aliases keep their meaning.
fn outside(dotted: &str) -> Hint {
    let short = dotted.rsplit('.').next().unwrap_or(dotted);
    if let Some(h) = builtin_hint(short) {
        return h;
    }
    match short {
        "Dict" | "Mapping" | "MutableMapping" | "OrderedDict" | "defaultdict" => Hint::Dict,
        "List" | "Tuple" | "Set" | "FrozenSet" | "Sequence" => {
            Hint::Collection { kind: collection_kind(short).unwrap_or("list"), elements: Vec::new(), ellipsis: false }
        }
        "Any" => Hint::Named { name: "Any".into(), builtin: false },
        _ => Hint::Named { name: dotted.to_string(), builtin: dotted.starts_with("builtins.") },
    }
}

fn generic(ev: &ConstEval, file: &PyFile, node: Node, module: &str, out: &mut Vec<Hint>, depth: usize) {
    let unknown = |out: &mut Vec<Hint>| push(out, Hint::Unknown(file.text(node).to_string()));
    let (head, args) = match node.kind() {
        "subscript" => {
            let Some(head) = node.child_by_field_name("value") else { return unknown(out) };
            let args: Vec<Node> = named_children(node).into_iter().filter(|n| n.id() != head.id()).collect();
            (head, args)
        }
        _ => {
            let children = named_children(node);
            let Some(head) = children.first().copied() else { return unknown(out) };
            let Some(params) = children.iter().find(|c| c.kind() == "type_parameter") else { return unknown(out) };
            (head, named_children(*params))
        }
    };
    // `Literal[("a", "b")]` and `X[a, b]` both reach here as a list of arguments.
    let args: Vec<Node> = match args.as_slice() {
        [one] if matches!(one.kind(), "tuple" | "expression_list") => named_children(*one),
        _ => args,
    };
    let head_name = match ev.eval(file, head, Scope::module(module)) {
        Ok(Val::External(name)) => name.rsplit('.').next().unwrap_or(&name).to_string(),
        _ => file.text(head).rsplit('.').next().unwrap_or_default().to_string(),
    };
    match head_name.as_str() {
        // pydantic's `SkipValidation[T]` is `Annotated[T, SkipValidation()]`.
        "Annotated" | "SkipValidation" => match args.first() {
            Some(first) => collect(ev, file, *first, module, out, depth + 1),
            None => unknown(out),
        },
        "Optional" => {
            for a in &args {
                collect(ev, file, *a, module, out, depth + 1);
            }
            push(out, Hint::NoneType);
        }
        "Union" => {
            for a in &args {
                collect(ev, file, *a, module, out, depth + 1);
            }
        }
        "Literal" => {
            let mut values = Vec::new();
            for a in &args {
                match literal_values(ev, file, *a, module, depth) {
                    Some(vs) => values.extend(vs),
                    None => return unknown(out),
                }
            }
            push(out, Hint::Literal(values));
        }
        "dict" | "Dict" | "Mapping" | "MutableMapping" | "OrderedDict" | "defaultdict" => push(out, Hint::Dict),
        "type" | "Type" => push(out, Hint::Named { name: "type".into(), builtin: true }),
        name => match collection_kind(name) {
            Some(kind) => {
                let ellipsis = args.iter().any(|a| file.text(*a) == "..." || a.kind() == "ellipsis");
                let elements = args.iter().filter(|a| file.text(**a) != "...").map(|a| hints(ev, file, *a, module)).collect();
                push(out, Hint::Collection { kind, elements, ellipsis });
            }
            None => match ev.eval(file, head, Scope::module(module)) {
                Ok(v) => value_hint(ev, v, out),
                Err(_) => unknown(out),
            },
        },
    }
}

/// The values one `Literal[...]` argument stands for: a literal, or a name of
/// another `Literal` (Python flattens nested ones).
fn literal_values(ev: &ConstEval, file: &PyFile, node: Node, module: &str, depth: usize) -> Option<Vec<Val>> {
    match ev.eval(file, node, Scope::module(module)) {
        Ok(v) if v.to_json().is_some() => Some(vec![v]),
        Ok(v @ Val::EnumMember { .. }) => Some(vec![v]),
        Ok(Val::LiteralType(values)) => Some(values),
        _ => {
            let mut inner = Vec::new();
            collect(ev, file, node, module, &mut inner, depth + 1);
            match inner.as_slice() {
                [Hint::Literal(vs)] => Some(vs.clone()),
                _ => None,
            }
        }
    }
}
