//! The keys of a YAML configuration file that the server validates with a tree
//! of pydantic models ([`ConfigFileProfile`]): TRT-LLM's `TorchLlmArgs` and the
//! configs nested in it (`kv_cache_config`, `moe_config`, ...).
//!
//! Each annotated field of the root model and of its bases (read in the
//! package, never imported) is a key; a field typed by another model of the
//! package nests its fields under its name. Per field: the annotation, the
//! closed set of values a `Literal[...]` or enum allows, the default (a
//! `default_factory` is named, not run), the alias, the status the field
//! carries (`status=` or `json_schema_extra={"status": ...}`), a deprecation
//! message, the declaring model's `extra` policy (whether an unknown key
//! is refused at start-up or dropped in silence), and the guards of the
//! field's validators (`pydantic_validators`).

use std::collections::HashSet;
use std::sync::Arc;

use tree_sitter::Node;

use super::consts::{class_body, ClassRef, ConstEval, Scope, Val};
use super::package::Package;
use super::pydantic_classes::{bases, class_node, generic, is_external_model_name, is_model, locate, Base, MAX_BASES};
use super::python::{named_children, PyFile};
use crate::profiles::ConfigFileProfile;
use crate::surface::{ConfigKey, ExtraPolicy, ExtractWarning, Known, PyValue};

/// The statuses TRT-LLM tags fields and options with (`Field(status="beta")`,
/// `help_info_with_stability_tag(help, "beta")`).
pub(crate) const STATUSES: &[&str] = &["stable", "beta", "prototype", "deprecated"];

/// How deep models nest before the walk stops (TRT-LLM's deepest is three).
const MAX_NESTING: usize = 6;

/// Every key of the configuration file `profile` describes, nested keys after
/// their parent, in declaration order.
pub(crate) fn extract_config_keys(pkg: &Package, profile: &ConfigFileProfile, warnings: &mut Vec<ExtractWarning>) -> Vec<ConfigKey> {
    let ev = ConstEval::new(pkg);
    let module = format!("{}.{}", pkg.name, profile.module);
    let root = ClassRef { module: module.clone(), name: profile.class.to_string() };
    let mut out = Vec::new();
    if locate(&ev, &root).is_none() {
        warnings.push(ExtractWarning {
            path: pkg.module_path(&module).unwrap_or_else(|| module.replace('.', "/") + ".py"),
            message: format!("no class `{}` found; no configuration keys extracted", profile.class),
        });
    } else {
        let mut reader = Reader { ev: &ev, out: &mut out };
        reader.model("", &root, 0, &mut HashSet::new());
    }
    warnings.extend(ev.take_warnings());
    out
}

/// The default of field `name` of the engine model `class` (its own or
/// inherited), as [`extract_config_keys`] reads it: what
/// `Class.model_fields["name"].default` is at run time. `None` when the
/// model or the field is not found.
pub(crate) fn field_default(ev: &ConstEval, class: &ClassRef, name: &str) -> Option<Option<Known<PyValue>>> {
    let field = fields(ev, class, 0).into_iter().find(|f| f.name == name)?;
    let mut out = Vec::new();
    let mut reader = Reader { ev, out: &mut out };
    Some(reader.key(name, &field, ExtraPolicy::Unknown).0.default)
}

/// One field as the model declares it.
struct FieldDecl {
    name: String,
    model: ClassRef,
    file: Arc<PyFile>,
    annotation: String,
    /// Byte range of the annotation node in `file`, to read it again.
    annotation_range: (usize, usize),
    value_range: Option<(usize, usize)>,
    line: u32,
}

struct Reader<'a, 'p> {
    ev: &'a ConstEval<'p>,
    out: &'a mut Vec<ConfigKey>,
}

impl Reader<'_, '_> {
    /// The keys of `class` under `prefix`; `open` holds the models being read
    /// (a model nested in itself is read once per path).
    fn model(&mut self, prefix: &str, class: &ClassRef, depth: usize, open: &mut HashSet<ClassRef>) {
        if depth > MAX_NESTING || !open.insert(class.clone()) {
            return;
        }
        let extra = extra_policy(self.ev, class, 0);
        let mut checks = super::pydantic_validators::field_checks(self.ev, class);
        for field in fields(self.ev, class, 0) {
            let path = if prefix.is_empty() { field.name.clone() } else { format!("{prefix}.{}", field.name) };
            let (mut key, nested) = self.key(&path, &field, extra.clone());
            key.checks = checks.remove(&field.name).unwrap_or_default();
            self.out.push(key);
            for (under, model) in nested {
                self.model(&under, &model, depth + 1, open);
            }
        }
        open.remove(class);
    }

    /// The key of `field` at `path`, and the models whose keys go under it:
    /// the one it nests at `path`, or each member of a union at `path[value]`.
    fn key(&mut self, path: &str, field: &FieldDecl, extra: ExtraPolicy) -> (ConfigKey, Vec<(String, ClassRef)>) {
        let file = &field.file;
        let module = field.model.module.as_str();
        let root = file.root();
        let annotation = root.descendant_for_byte_range(field.annotation_range.0, field.annotation_range.1);
        let value = field.value_range.and_then(|(a, b)| root.descendant_for_byte_range(a, b));
        let call = value.filter(|v| v.kind() == "call" && callee(file, *v).is_some_and(is_field_call));
        let mut default: Option<Known<PyValue>> = None;
        let mut default_factory = None;
        let mut aliases: Vec<String> = Vec::new();
        let mut status = None;
        let mut deprecated = None;
        let mut description = None;
        match (call, value) {
            (Some(call), _) => {
                let args = call.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                for arg in args {
                    if arg.kind() != "keyword_argument" {
                        // `Field(default, ...)`; `...` makes the field required.
                        if default.is_none() && arg.kind() != "ellipsis" {
                            default = Some(self.fold(file, module, arg));
                        }
                        continue;
                    }
                    let (Some(name), Some(v)) = (arg.child_by_field_name("name"), arg.child_by_field_name("value")) else { continue };
                    match file.text(name) {
                        "default" if v.kind() != "ellipsis" => default = Some(self.fold(file, module, v)),
                        "default_factory" => default_factory = Some(file.text(v).to_string()),
                        "alias" | "validation_alias" => {
                            for name in alias_names(file, v) {
                                if name != field.name && !aliases.contains(&name) {
                                    aliases.push(name);
                                }
                            }
                        }
                        "status" => status = file.string_value(v),
                        "deprecated" => {
                            deprecated = match self.ev.eval(file, v, Scope::module(module)) {
                                Ok(Val::Str(s)) => Some(s),
                                Ok(Val::Bool(true)) => Some(String::new()),
                                _ => None,
                            }
                        }
                        "description" => {
                            description = self.ev.eval(file, v, Scope::module(module)).ok().and_then(|v| match v {
                                Val::Str(s) => Some(s),
                                _ => None,
                            })
                        }
                        "json_schema_extra" => {
                            if let Ok(Val::Dict(items)) = self.ev.eval(file, v, Scope::module(module)) {
                                for (k, v) in items {
                                    if let (Val::Str(k), Val::Str(v)) = (k, v) {
                                        if k == "status" {
                                            status = Some(v);
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            (None, Some(v)) => default = Some(self.fold(file, module, v)),
            (None, None) => {}
        }
        if let Some(factory) = &default_factory {
            default = Some(Known::Dynamic { dynamic: format!("default_factory={factory}") });
        }
        let status = status.filter(|s| STATUSES.contains(&s.as_str()));
        if deprecated.is_none() && status.as_deref() == Some("deprecated") {
            deprecated = Some(description.clone().unwrap_or_default());
        }
        let (choices, nested) = match annotation {
            Some(a) => (self.choices(file, module, a), nested_model(self.ev, file, module, a)),
            None => (None, None),
        };
        let union = match (&nested, annotation) {
            (None, Some(a)) => super::pydantic_unions::read(self.ev, file, module, a),
            _ => None,
        };
        let key = ConfigKey {
            path: path.to_string(),
            model: field.model.name.clone(),
            type_name: field.annotation.clone(),
            choices,
            default,
            default_factory,
            aliases,
            status,
            deprecated,
            extra,
            nested: nested.as_ref().map(|c| c.name.clone()),
            union: union.as_ref().map(|(u, _)| u.clone()),
            checks: Vec::new(),
            evidence: crate::surface::Evidence { path: file.path.clone(), line: field.line },
        };
        let under = match (nested, union) {
            (Some(model), _) => vec![(path.to_string(), model)],
            (None, Some((_, members))) => {
                members.into_iter().map(|(value, model)| (crate::surface::ConfigUnion::member_path(path, &value), model)).collect()
            }
            (None, None) => Vec::new(),
        };
        (key, under)
    }

    fn fold(&mut self, file: &PyFile, module: &str, node: Node) -> Known<PyValue> {
        match self.ev.eval(file, node, Scope::module(module)) {
            Ok(v) => match value_json(&v) {
                Some(json) => Known::Value(json),
                None => Known::Dynamic { dynamic: file.text(node).to_string() },
            },
            Err(text) => Known::Dynamic { dynamic: text },
        }
    }

    /// The closed set an annotation allows: `Literal[...]` or an engine enum,
    /// also inside `Optional[...]`, `Union[..., None]` and `X | None`.
    fn choices(&mut self, file: &PyFile, module: &str, node: Node) -> Option<Known<Vec<PyValue>>> {
        let node = unwrap_optional(file, node)?;
        if let Some(("Literal", parts)) = generic(file, node) {
            let mut values = Vec::new();
            for part in parts {
                match self.ev.eval(file, part, Scope::module(module)).ok().as_ref().and_then(value_json) {
                    Some(v) => values.push(v),
                    None => return Some(Known::Dynamic { dynamic: file.text(node).to_string() }),
                }
            }
            return Some(Known::Value(values));
        }
        if matches!(node.kind(), "identifier" | "attribute") {
            if let Ok(Val::Class(class)) = self.ev.eval(file, node, Scope::module(module)) {
                return enum_values(self.ev, &class).map(Known::Value);
            }
        }
        None
    }
}

/// A folded value as JSON; an enum member is its value (what YAML writes).
fn value_json(v: &Val) -> Option<PyValue> {
    match v {
        Val::EnumMember { value, .. } => value.as_ref().as_ref().ok()?.to_json(),
        other => other.to_json(),
    }
}

/// `Optional[X]`, `Union[X, None]`, `X | None` and `Annotated[X, ...]` as
/// `X`; other unions as `None` (no one closed set, no one nested model);
/// anything else as itself.
fn unwrap_optional<'t>(file: &PyFile, node: Node<'t>) -> Option<Node<'t>> {
    if node.kind() == "type" {
        return unwrap_optional(file, named_children(node).into_iter().next()?);
    }
    if let Some((head, args)) = generic(file, node) {
        let not_none: Vec<Node> = args.iter().copied().filter(|p| file.text(*p) != "None").collect();
        return match (head, not_none.as_slice()) {
            ("Optional", [one, ..]) | ("Annotated", [one, ..]) | ("Union", [one]) => unwrap_optional(file, *one),
            ("Optional" | "Annotated" | "Union", _) => None,
            _ => Some(node),
        };
    }
    if matches!(node.kind(), "binary_operator" | "union_type") {
        let parts: Vec<Node> = named_children(node).into_iter().filter(|p| file.text(*p) != "None").collect();
        return match parts.as_slice() {
            [one] => unwrap_optional(file, *one),
            _ => None,
        };
    }
    Some(node)
}

/// The names an alias argument gives: a string, or the strings of
/// `AliasChoices("a", "b")` (an `AliasPath` names no top-level key: none).
fn alias_names(file: &PyFile, value: Node) -> Vec<String> {
    if let Some(name) = file.string_value(value) {
        return vec![name];
    }
    if value.kind() == "call" && callee(file, value).is_some_and(|c| c.rsplit('.').next() == Some("AliasChoices")) {
        return value
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|a| file.string_value(a))
            .collect();
    }
    Vec::new()
}

/// pydantic's `Field(...)` as a module spells it: plain, dotted, or renamed
/// on import (TRT-LLM wraps it in its own `Field` that takes `status=` and
/// imports pydantic's as `PydanticField`).
fn is_field_call(callee: &str) -> bool {
    matches!(callee.rsplit('.').next(), Some("Field" | "PydanticField"))
}

fn callee<'f>(file: &'f PyFile, call: Node) -> Option<&'f str> {
    call.child_by_field_name("function").map(|f| file.text(f))
}

/// The engine model an annotation nests (`KvCacheConfig`,
/// `Optional[MoeConfig]`, `"CudaGraphConfig"`): an engine class that is a
/// pydantic model. A union of several models (picked by a discriminator at
/// run time) nests none.
fn nested_model(ev: &ConstEval, file: &PyFile, module: &str, node: Node) -> Option<ClassRef> {
    let node = unwrap_optional(file, node)?;
    let class = match node.kind() {
        "identifier" | "attribute" => match ev.eval(file, node, Scope::module(module)) {
            Ok(Val::Class(c)) => c,
            _ => return None,
        },
        // A forward reference: the class of that name in the same module.
        "string" => {
            let name = file.string_value(node)?;
            let class = ClassRef { module: module.to_string(), name };
            locate(ev, &class)?;
            class
        }
        _ => return None,
    };
    is_model(ev, &class, 0).then_some(class)
}

/// The fields of `class` with its bases' first (pydantic's order: a field a
/// subclass declares again keeps its place and takes the new declaration).
fn fields(ev: &ConstEval, class: &ClassRef, depth: usize) -> Vec<FieldDecl> {
    let mut out: Vec<FieldDecl> = Vec::new();
    if depth > MAX_BASES {
        return out;
    }
    let Some((file, start)) = locate(ev, class) else { return out };
    let Some(node) = class_node(&file, start) else { return out };
    for base in bases(ev, &file, &class.module, node) {
        if let Base::Engine(c) = base {
            for f in fields(ev, &c, depth + 1) {
                merge(&mut out, f);
            }
        }
    }
    let Some(body) = class_body(node) else { return out };
    for stmt in named_children(body) {
        let Some(assign) = (stmt.kind() == "expression_statement").then(|| named_children(stmt).into_iter().next()).flatten() else {
            continue;
        };
        if assign.kind() != "assignment" {
            continue;
        }
        let (Some(left), Some(ty)) = (assign.child_by_field_name("left"), assign.child_by_field_name("type")) else { continue };
        let name = file.text(left);
        let annotation = file.text(ty);
        if left.kind() != "identifier" || name.starts_with('_') || name == "model_config" || annotation.starts_with("ClassVar") {
            continue;
        }
        let value = assign.child_by_field_name("right");
        if value.is_some_and(|v| callee(&file, v).is_some_and(|c| c.ends_with("PrivateAttr"))) {
            continue;
        }
        merge(
            &mut out,
            FieldDecl {
                name: name.to_string(),
                model: class.clone(),
                file: file.clone(),
                annotation: annotation.to_string(),
                annotation_range: (ty.start_byte(), ty.end_byte()),
                value_range: value.map(|v| (v.start_byte(), v.end_byte())),
                line: file.line(assign),
            },
        );
    }
    out
}

fn merge(out: &mut Vec<FieldDecl>, field: FieldDecl) {
    match out.iter_mut().find(|f| f.name == field.name) {
        Some(slot) => *slot = field,
        None => out.push(field),
    }
}

/// What `class` does with unknown keys: the nearest `model_config =
/// ConfigDict(extra=...)` (or `{"extra": ...}`, or a `class Config: extra =`)
/// in it or its bases; pydantic's `ignore` when the chain reaches `BaseModel`
/// with none; unknown when a base cannot be read.
fn extra_policy(ev: &ConstEval, class: &ClassRef, depth: usize) -> ExtraPolicy {
    if depth > MAX_BASES {
        return ExtraPolicy::Unknown;
    }
    let Some((file, start)) = locate(ev, class) else { return ExtraPolicy::Unknown };
    let Some(node) = class_node(&file, start) else { return ExtraPolicy::Unknown };
    if let Some(policy) = own_extra(ev, &file, &class.module, node) {
        return policy;
    }
    let mut result = ExtraPolicy::Unknown;
    for base in bases(ev, &file, &class.module, node) {
        let policy = match base {
            Base::Engine(c) => extra_policy(ev, &c, depth + 1),
            Base::External(name) if is_external_model_name(&name) => ExtraPolicy::Ignore,
            Base::External(_) => continue,
            Base::Unknown => ExtraPolicy::Unknown,
        };
        // The first base that decides (Python's MRO reads bases left to right).
        if policy != ExtraPolicy::Unknown {
            return policy;
        }
        result = policy;
    }
    result
}

fn own_extra(ev: &ConstEval, file: &PyFile, module: &str, class: Node) -> Option<ExtraPolicy> {
    let body = class_body(class)?;
    for stmt in named_children(body) {
        if stmt.kind() == "class_definition" && stmt.child_by_field_name("name").is_some_and(|n| file.text(n) == "Config") {
            if let Some(p) = own_extra_assignments(ev, file, module, stmt, "extra") {
                return Some(p);
            }
        }
        let Some(assign) = (stmt.kind() == "expression_statement").then(|| named_children(stmt).into_iter().next()).flatten() else {
            continue;
        };
        if assign.kind() != "assignment" || assign.child_by_field_name("left").is_none_or(|l| file.text(l) != "model_config") {
            continue;
        }
        let value = assign.child_by_field_name("right")?;
        return Some(match ev.eval(file, value, Scope::module(module)) {
            Ok(Val::Dict(items)) => {
                items.iter().find(|(k, _)| *k == Val::Str("extra".into())).map(|(_, v)| policy_of(v)).unwrap_or(ExtraPolicy::Unknown)
            }
            // `ConfigDict(extra="forbid")` folds as a call of an outside name:
            // read its keyword.
            _ => keyword_policy(ev, file, module, value).unwrap_or(ExtraPolicy::Unknown),
        });
    }
    None
}

fn own_extra_assignments(ev: &ConstEval, file: &PyFile, module: &str, config: Node, key: &str) -> Option<ExtraPolicy> {
    for stmt in named_children(class_body(config)?) {
        let Some(assign) = (stmt.kind() == "expression_statement").then(|| named_children(stmt).into_iter().next()).flatten() else {
            continue;
        };
        if assign.kind() == "assignment" && assign.child_by_field_name("left").is_some_and(|l| file.text(l) == key) {
            let value = assign.child_by_field_name("right")?;
            return Some(match ev.eval(file, value, Scope::module(module)) {
                Ok(v) => policy_of(&v),
                Err(text) => policy_text(&text),
            });
        }
    }
    None
}

fn keyword_policy(ev: &ConstEval, file: &PyFile, module: &str, call: Node) -> Option<ExtraPolicy> {
    if call.kind() != "call" {
        return None;
    }
    for arg in call.child_by_field_name("arguments").map(named_children).unwrap_or_default() {
        if arg.kind() == "keyword_argument" && arg.child_by_field_name("name").is_some_and(|n| file.text(n) == "extra") {
            let value = arg.child_by_field_name("value")?;
            return Some(match ev.eval(file, value, Scope::module(module)) {
                Ok(v) => policy_of(&v),
                Err(text) => policy_text(&text),
            });
        }
    }
    // A `ConfigDict(...)` without `extra=` leaves pydantic's default.
    Some(ExtraPolicy::Ignore)
}

fn policy_of(v: &Val) -> ExtraPolicy {
    match v {
        Val::Str(s) => policy_text(s),
        Val::External(name) => policy_text(name),
        _ => ExtraPolicy::Unknown,
    }
}

/// `"forbid"`, or `Extra.forbid` as written.
fn policy_text(text: &str) -> ExtraPolicy {
    match text.rsplit('.').next().unwrap_or(text).trim_matches(|c| c == '"' || c == '\'') {
        "forbid" => ExtraPolicy::Forbid,
        "ignore" => ExtraPolicy::Ignore,
        "allow" => ExtraPolicy::Allow,
        _ => ExtraPolicy::Unknown,
    }
}

/// The values of an engine enum's members (`class Backend(StrEnum): A = "a"`),
/// `None` when `class` is no enum or a value does not fold.
fn enum_values(ev: &ConstEval, class: &ClassRef) -> Option<Vec<PyValue>> {
    let (file, start) = locate(ev, class)?;
    let node = class_node(&file, start)?;
    let base_text = node.child_by_field_name("superclasses").map(|s| file.text(s).to_string()).unwrap_or_default();
    if !base_text.contains("Enum") {
        return None;
    }
    let mut values = Vec::new();
    for stmt in named_children(class_body(node)?) {
        let Some(assign) = (stmt.kind() == "expression_statement").then(|| named_children(stmt).into_iter().next()).flatten() else {
            continue;
        };
        if assign.kind() != "assignment" || assign.child_by_field_name("type").is_some() {
            continue;
        }
        let (Some(left), Some(right)) = (assign.child_by_field_name("left"), assign.child_by_field_name("right")) else { continue };
        if left.kind() != "identifier" || file.text(left).starts_with('_') {
            continue;
        }
        values.push(ev.eval(&file, right, Scope::module(&class.module)).ok().as_ref().and_then(value_json)?);
    }
    Some(values)
}
