//! Flags generated from record fields by the engine's field-driven registrar
//! (`add_cli_args_from_dataclass(parser, Cls)`): `name: A[T, "help"] = default`
//! and `name: A[T, Arg(...)]`.
//!
//! The registrar is recognised by what it does (reads type hints, registers
//! with `add_argument(*names, ...)`), not by its name, and its body says which
//! `Arg` keywords it honours. Its branching (custom action, `Literal`, list,
//! bool, scalar) is modelled here as the releases write it.

use std::collections::HashSet;
use std::sync::Arc;

use tree_sitter::Node;

use super::argparse::{ArgCall, KwArg};
use crate::extract::consts::classes::{visit_record_fields, FieldSite};
use crate::extract::consts::{class_body, ClassRef, ConstEval, Folded, Scope, Val};
use crate::extract::python::{named_children, walk, PyFile};
use crate::surface::ExtractWarning;

/// A field-driven registrar function and the attribute names its body reads.
pub(super) struct Registrar {
    /// Attribute names read in the registrar's module (`arg_meta.aliases`, ...):
    /// an `Arg` keyword not among them is not honoured.
    pub reads: HashSet<String>,
    pub evidence_path: String,
}

/// Whether a function registers flags from a class's type hints: it reads type
/// hints and calls `add_argument` with unpacked names.
pub(super) fn as_registrar(file: &PyFile, function: Node) -> Option<Registrar> {
    let body = function.child_by_field_name("body")?;
    let text = file.text(body);
    if !(text.contains("get_type_hints") && text.contains("add_argument(*")) {
        return None;
    }
    // Helpers of the registrar (`_unwrap_annotated`) live in the same module:
    // read attribute names module-wide.
    let mut reads = HashSet::new();
    walk(file.root(), |n| {
        if n.kind() == "attribute" {
            if let Some(a) = n.child_by_field_name("attribute") {
                reads.insert(file.text(a).to_string());
            }
        }
        true
    });
    Some(Registrar { reads, evidence_path: file.path.clone() })
}

/// The shape of a field's type after `Optional` is unwrapped.
enum Shape {
    Bool,
    /// `Literal[...]` values.
    Literal(Vec<Val>),
    /// `List[T]`: the element type's converter name.
    List(&'static str),
    /// Any other type: the converter name argparse gets.
    Scalar(&'static str),
}

/// Metadata of a field: `Arg(...)` keywords or a bare help string.
#[derive(Default)]
struct ArgMeta {
    kwargs: Vec<(String, KwArg)>,
    help: Option<KwArg>,
}

impl ArgMeta {
    fn get(&self, key: &str) -> Option<&KwArg> {
        if key == "help" {
            return self.help.as_ref().or_else(|| self.kwargs.iter().find(|(k, _)| k == "help").map(|(_, v)| v));
        }
        self.kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// `arg_meta.x` is truthy (unknown values count as set).
    fn set(&self, key: &str) -> bool {
        self.get(key).is_some_and(|k| !matches!(&k.value, Ok(v) if v.truthy() == Some(false)))
    }
}

/// Registrations for every CLI field of `class`, in field order.
pub(super) fn dataclass_calls(ev: &ConstEval, registrar: &Registrar, class: &ClassRef, warnings: &mut Vec<ExtractWarning>) -> Vec<ArgCall> {
    let mut calls: Vec<(String, ArgCall)> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    visit_record_fields(ev, class, &mut |file, owner, site| {
        if let Some(call) = field_call(ev, registrar, file, owner, &site, &mut ignored) {
            // A redeclared field keeps its first position and takes the new declaration.
            match calls.iter_mut().find(|(n, _)| *n == site.name) {
                Some(slot) => slot.1 = call,
                None => calls.push((site.name.clone(), call)),
            }
        }
    });
    ignored.sort();
    ignored.dedup();
    for keyword in ignored {
        warnings.push(ExtractWarning {
            path: registrar.evidence_path.clone(),
            message: format!("fields use Arg keyword `{keyword}`, which the registrar does not read; ignored"),
        });
    }
    calls.into_iter().map(|(_, c)| c).collect()
}

fn field_call(
    ev: &ConstEval,
    registrar: &Registrar,
    file: &PyFile,
    owner: &ClassRef,
    site: &FieldSite,
    ignored: &mut Vec<String>,
) -> Option<ArgCall> {
    let scope = Scope { module: &owner.module, locals: None, class: None };
    let parts = annotated_parts(ev, file, site.annotation, scope)?;
    let (inner, metadata) = parts.split_first()?;
    let meta = read_meta(ev, file, metadata, scope)?;
    for (k, _) in &meta.kwargs {
        if !registrar.reads.contains(k) && k != "help" {
            ignored.push(k.clone());
        }
    }
    let honours = |k: &str| registrar.reads.contains(k);
    let meta_get = |k: &str| if honours(k) { meta.get(k) } else { None };
    if honours("no_cli") && meta.set("no_cli") && meta_get("no_cli").is_some() {
        return None;
    }
    let cli_name = match meta_get("cli_name") {
        Some(KwArg { value: Ok(Val::Str(s)), .. }) => s.clone(),
        _ => format!("--{}", site.name.replace('_', "-")),
    };
    let mut names = vec![cli_name];
    if let Some(aliases) = meta_get("aliases") {
        if let Ok(v) = &aliases.value {
            for a in v.iter_items().unwrap_or_default() {
                if let Val::Str(s) = a {
                    names.push(s);
                }
            }
        }
    }
    let default = site.default.map(|d| field_default(ev, file, d, scope));
    let help = meta.get("help").cloned().unwrap_or_else(|| KwArg::literal(Val::Str(String::new())));
    let mut kwargs: Vec<(String, KwArg)> = vec![("dest".into(), KwArg::literal(Val::Str(site.name.clone())))];
    let push_default = |kwargs: &mut Vec<(String, KwArg)>| {
        if let Some(d) = &default {
            kwargs.push(("default".into(), d.clone()));
        }
    };
    let shape = type_shape(ev, file, *inner, scope);
    let type_parser = meta_get("type_parser").filter(|k| !matches!(k.value, Ok(Val::None)));

    if let Some(action) = meta_get("action").filter(|k| !matches!(k.value, Ok(Val::None))) {
        kwargs.push(("action".into(), action.clone()));
        kwargs.push(("help".into(), help));
        push_default(&mut kwargs);
        if let Some(KwArg { value: Ok(Val::Dict(extra)), .. }) = meta_get("action_kwargs") {
            for (k, v) in extra {
                if let Val::Str(k) = k {
                    kwargs.push((k.clone(), KwArg::literal(v.clone())));
                }
            }
        }
        return Some(call(names, kwargs, &meta, file, site));
    }
    let converter = |name: &'static str| type_parser.cloned().unwrap_or_else(|| KwArg::literal(Val::External(name.into())));
    match shape {
        Shape::Literal(values) => {
            let choices = match meta_get("choices") {
                Some(c) if meta.set("choices") => c.clone(),
                _ => KwArg::literal(Val::List(values.clone())),
            };
            let first_type = match values.first() {
                Some(Val::Int(_)) => "int",
                Some(Val::Float(_)) => "float",
                _ => "str",
            };
            kwargs.push(("type".into(), converter(first_type)));
            kwargs.push(("choices".into(), choices));
            kwargs.push(("help".into(), help));
            push_default(&mut kwargs);
            push_const(&meta, &honours, &mut kwargs);
        }
        Shape::List(elem) if type_parser.is_none() => {
            kwargs.push(("type".into(), KwArg::literal(Val::External(elem.into()))));
            let nargs = match meta_get("nargs") {
                Some(n) if meta.set("nargs") => n.clone(),
                _ => KwArg::literal(Val::Str("+".into())),
            };
            kwargs.push(("nargs".into(), nargs));
            kwargs.push(("help".into(), help));
            if let Some(c) = meta_get("choices").filter(|_| meta.set("choices")) {
                kwargs.push(("choices".into(), c.clone()));
            }
            push_default(&mut kwargs);
            push_const(&meta, &honours, &mut kwargs);
        }
        Shape::Bool => {
            kwargs.push(("action".into(), KwArg::literal(Val::Str("store_true".into()))));
            kwargs.push(("help".into(), help));
            push_default(&mut kwargs);
        }
        Shape::List(_) | Shape::Scalar(_) => {
            let scalar = match shape {
                Shape::Scalar(s) => s,
                _ => "str",
            };
            kwargs.push(("type".into(), converter(scalar)));
            kwargs.push(("help".into(), help));
            if let Some(c) = meta_get("choices").filter(|_| meta.set("choices")) {
                kwargs.push(("choices".into(), c.clone()));
            }
            if let Some(n) = meta_get("nargs").filter(|_| meta.set("nargs")) {
                kwargs.push(("nargs".into(), n.clone()));
            }
            push_default(&mut kwargs);
            push_const(&meta, &honours, &mut kwargs);
            let required = match meta_get("required").map(|r| &r.value) {
                Some(Ok(Val::Bool(true))) => true,
                Some(Ok(Val::None)) | None => default.is_none(),
                _ => false,
            };
            if required && names.iter().any(|n| n.starts_with('-')) {
                kwargs.push(("required".into(), KwArg::literal(Val::Bool(true))));
            }
        }
    }
    Some(call(names, kwargs, &meta, file, site))
}

fn push_const(meta: &ArgMeta, honours: &dyn Fn(&str) -> bool, kwargs: &mut Vec<(String, KwArg)>) {
    if honours("const") {
        if let Some(c) = meta.get("const").filter(|c| !matches!(c.value, Ok(Val::None))) {
            kwargs.push(("const".into(), c.clone()));
        }
    }
}

fn call(names: Vec<String>, kwargs: Vec<(String, KwArg)>, meta: &ArgMeta, file: &PyFile, site: &FieldSite) -> ArgCall {
    ArgCall {
        names,
        kwargs,
        evidence: file.evidence(site.stmt),
        fallback: meta.get("fallback").cloned(),
        env_choices: Default::default(),
        on_group: false,
    }
}

/// `A[T, m1, m2]` → `[T, m1, m2]` when the subscripted name is `typing.Annotated`.
fn annotated_parts<'f>(ev: &ConstEval, file: &'f PyFile, annotation: Node<'f>, scope: Scope) -> Option<Vec<Node<'f>>> {
    let (head, args) = generic_parts(annotation)?;
    match ev.eval(file, head, scope) {
        Ok(Val::External(name)) if name.ends_with(".Annotated") => Some(args),
        _ => None,
    }
}

/// A `type` wrapper's expression (tree-sitter wraps annotation parts in `type`).
fn unwrap_type(node: Node) -> Node {
    match node.kind() {
        "type" => named_children(node).first().copied().unwrap_or(node),
        _ => node,
    }
}

/// `Head[a, b]` → (`Head`, [`a`, `b`]). Annotations parse as `generic_type`
/// (plain head) or `subscript` (dotted head like `typing.List[int]`).
fn generic_parts(node: Node) -> Option<(Node, Vec<Node>)> {
    let node = unwrap_type(node);
    match node.kind() {
        "subscript" => {
            let head = node.child_by_field_name("value")?;
            let args = named_children(node).into_iter().filter(|n| n.id() != head.id()).map(unwrap_type).collect();
            Some((head, args))
        }
        "generic_type" => {
            let children = named_children(node);
            let head = *children.first()?;
            let params = children.iter().find(|c| c.kind() == "type_parameter")?;
            Some((head, named_children(*params).into_iter().map(unwrap_type).collect()))
        }
        _ => None,
    }
}

/// The first metadata item that is an `Arg(...)` or a string, as the registrar
/// looks for them. `None` when there is neither (the field gets no flag).
fn read_meta(ev: &ConstEval, file: &PyFile, metadata: &[Node], scope: Scope) -> Option<ArgMeta> {
    for item in metadata {
        if matches!(item.kind(), "string" | "concatenated_string") {
            // A str at run time even when it interpolates (then its text is unknown).
            let value = file.string_value(*item).map(Val::Str).ok_or_else(|| file.text(*item).to_string());
            return Some(ArgMeta { kwargs: Vec::new(), help: Some(KwArg { value, text: file.text(*item).to_string() }) });
        }
        if item.kind() == "call" {
            let callee = item.child_by_field_name("function")?;
            if let Ok(Val::Class(c)) = ev.eval(file, callee, scope) {
                let Some(field_names) = metadata_fields(ev, &c) else { continue };
                let mut meta = ArgMeta::default();
                let args = item.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                let mut positional = field_names.iter();
                for a in args {
                    let (key, value_node) = if a.kind() == "keyword_argument" {
                        match (a.child_by_field_name("name"), a.child_by_field_name("value")) {
                            (Some(k), Some(v)) => (file.text(k).to_string(), v),
                            _ => continue,
                        }
                    } else {
                        match positional.next() {
                            Some(k) => (k.clone(), a),
                            None => continue,
                        }
                    };
                    let value: Folded = ev.eval(file, value_node, scope);
                    meta.kwargs.push((key, KwArg { value, text: file.text(value_node).to_string() }));
                }
                return Some(meta);
            }
            continue;
        }
        // A name bound to a string constant is a str too.
        if let Ok(Val::Str(s)) = ev.eval(file, *item, scope) {
            return Some(ArgMeta { kwargs: Vec::new(), help: Some(KwArg::literal(Val::Str(s))) });
        }
    }
    None
}

/// Field names of a CLI metadata class (one with a `help` field), in order.
fn metadata_fields(ev: &ConstEval, class: &ClassRef) -> Option<Vec<String>> {
    let file: Arc<PyFile> = ev.module_file(&class.module)?;
    let body = ev.class_def(&file, &class.name).and_then(class_body)?;
    let mut names = Vec::new();
    for stmt in named_children(body) {
        if let Some(assign) = named_children(stmt).into_iter().find(|n| n.kind() == "assignment") {
            if assign.child_by_field_name("type").is_some() {
                if let Some(l) = assign.child_by_field_name("left") {
                    names.push(file.text(l).to_string());
                }
            }
        }
    }
    names.iter().any(|n| n == "help").then_some(names)
}

fn field_default(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> KwArg {
    let text = file.text(node).to_string();
    // `= (field(...))`: the parentheses change nothing.
    let mut node = node;
    while node.kind() == "parenthesized_expression" {
        match named_children(node).as_slice() {
            [inner] => node = *inner,
            _ => break,
        }
    }
    if node.kind() == "call" {
        let callee = node.child_by_field_name("function").map(|f| ev.eval(file, f, scope));
        if let Some(Ok(Val::External(name))) = callee {
            if name.ends_with(".field") {
                let args = node.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                for kw in args.into_iter().filter(|a| a.kind() == "keyword_argument") {
                    let key = kw.child_by_field_name("name").map(|k| file.text(k));
                    let Some(value) = kw.child_by_field_name("value") else { continue };
                    match key {
                        Some("default") => return KwArg { value: ev.eval(file, value, scope), text },
                        Some("default_factory") => return KwArg { value: run_factory(ev, file, value, scope), text },
                        _ => {}
                    }
                }
                return KwArg { value: Err(text.clone()), text };
            }
        }
    }
    KwArg { value: ev.eval(file, node, scope), text }
}

/// What a `default_factory` returns: empty builtins, or a lambda's folded body.
fn run_factory(ev: &ConstEval, file: &PyFile, factory: Node, scope: Scope) -> Folded {
    if factory.kind() == "lambda" {
        let body = factory.child_by_field_name("body").ok_or_else(|| file.text(factory).to_string())?;
        return ev.eval(file, body, scope);
    }
    match ev.eval(file, factory, scope) {
        Ok(Val::External(name)) => match name.as_str() {
            "list" => Ok(Val::List(Vec::new())),
            "dict" => Ok(Val::Dict(Vec::new())),
            "set" => Ok(Val::Set(Vec::new())),
            "tuple" => Ok(Val::Tuple(Vec::new())),
            _ => Err(file.text(factory).to_string()),
        },
        _ => Err(file.text(factory).to_string()),
    }
}

/// Name of a `typing` construct (`typing.Optional` → `Optional`) or builtin.
fn typing_name(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Option<String> {
    match ev.eval(file, node, scope) {
        Ok(Val::External(name)) => {
            let (module, short) = name.rsplit_once('.').unwrap_or(("builtins", &name));
            matches!(module, "typing" | "typing_extensions" | "builtins").then(|| short.to_string())
        }
        Ok(Val::None) => Some("None".into()),
        _ => None,
    }
}

fn type_shape(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Shape {
    let node = unwrap_optional(ev, file, unwrap_type(node), scope);
    if let Some((head, args)) = generic_parts(node) {
        return match typing_name(ev, file, head, scope).as_deref() {
            Some("Literal") => {
                let vals: Option<Vec<Val>> = args.iter().map(|a| ev.eval(file, *a, scope).ok()).collect();
                match vals {
                    Some(v) => Shape::Literal(v),
                    None => Shape::Scalar("str"),
                }
            }
            Some("List" | "list") => {
                Shape::List(args.first().map(|a| converter_for(typing_name(ev, file, *a, scope).as_deref())).unwrap_or("str"))
            }
            _ => Shape::Scalar("str"),
        };
    }
    match typing_name(ev, file, node, scope).as_deref() {
        Some("bool") => Shape::Bool,
        Some("List" | "list") => Shape::List("str"),
        other => Shape::Scalar(converter_for(other)),
    }
}

/// The registrar's type inference: `str`, `int`, `float`, anything else `str`.
fn converter_for(name: Option<&str>) -> &'static str {
    match name {
        Some("int") => "int",
        Some("float") => "float",
        _ => "str",
    }
}

/// `Optional[X]`, `Union[X, None]`, `X | None` → `X`; anything else unchanged.
fn unwrap_optional<'f>(ev: &ConstEval, file: &'f PyFile, node: Node<'f>, scope: Scope) -> Node<'f> {
    let is_none = |n: Node| n.kind() == "none" || file.text(n) == "None";
    if let Some((head, args)) = generic_parts(node) {
        return match (typing_name(ev, file, head, scope).as_deref(), args.as_slice()) {
            (Some("Optional"), [x]) => *x,
            (Some("Union"), _) => {
                let non_none: Vec<&Node> = args.iter().filter(|a| !is_none(**a)).collect();
                match non_none.as_slice() {
                    [x] if non_none.len() < args.len() => **x,
                    _ => node,
                }
            }
            _ => node,
        };
    }
    if node.kind() == "binary_operator" {
        let (Some(l), Some(r)) = (node.child_by_field_name("left"), node.child_by_field_name("right")) else {
            return node;
        };
        let op = node.child_by_field_name("operator").map(|o| file.text(o));
        return match (op, is_none(l), is_none(r)) {
            (Some("|"), false, true) => l,
            (Some("|"), true, false) => r,
            _ => node,
        };
    }
    node
}
