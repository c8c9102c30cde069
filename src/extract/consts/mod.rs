//! Constant folding across the engine's modules: what a choices list, a default
//! or an enum holds, read from source without running it.
//!
//! Folds literals, module constants (with the module-level `X.extend(...)`,
//! `X += [...]` and bound-alias `add_x = X.extend; add_x([...])` mutations that
//! follow them), `+`/`|` concatenation, constants imported from other engine
//! modules, class attributes, dict keys (`list(D)`, `list(D.keys())`) and
//! comprehensions over literal sequences or `Enum` classes, comparisons of
//! literals, calls to engine functions whose body folds (see [`function`]),
//! and the fields of a dataclass or msgspec struct (`next(f.default for f in
//! msgspec.structs.fields(C) if f.name == name)`). Anything else is
//! `Err(<source text>)`: never a guess. Cycles (self-referential constants,
//! circular imports) end in `Err` through an in-progress set.

mod bindings;
pub mod classes;
pub(crate) mod env_gate;
mod eval;
mod function;
mod lazy_attr;
mod platform;
mod value;

pub(crate) use bindings::{
    class_body, final_binding, find_definition, flat_statements, may_bind, statement_bindings, Binding, BindingKind, Stmt,
};
pub(crate) use lazy_attr::with_unset_env;
pub use value::{apply_mutation, is_mutating_method, py_float_repr, ClassRef, Folded, Val};

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tree_sitter::Node;

use super::package::Package;
use super::python::{named_children, PyFile};
use crate::surface::{ExtractWarning, Known, PyValue};

/// Values of names local to a function being read (the walker's variables).
pub(crate) type Locals = HashMap<String, Folded>;

/// Where an expression is evaluated: its module, its function's locals and,
/// inside a class body, the class (its earlier attributes are in scope).
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub module: &'a str,
    pub locals: Option<&'a Locals>,
    pub class: Option<&'a ClassRef>,
}

impl<'a> Scope<'a> {
    pub(crate) fn module(module: &'a str) -> Self {
        Scope { module, locals: None, class: None }
    }
}

/// A function the folder computes natively instead of reading its body: an
/// engine function whose effect is modelled from what its source does (vLLM's
/// `get_kwargs(ConfigClass)`), or an outside call with a fixed meaning here
/// (`os.getenv(name, default)` read as "the variable is unset").
pub(crate) type Native = std::rc::Rc<dyn Fn(&ConstEval, &[Val]) -> Folded>;

/// Recursion bound for folding; real constants are a few levels deep.
const MAX_DEPTH: usize = 64;

/// Constant folder over one package. Parsed files and folded globals are cached.
pub(crate) struct ConstEval<'p> {
    pub pkg: &'p Package<'p>,
    files: RefCell<HashMap<String, Option<Arc<PyFile>>>>,
    globals: RefCell<HashMap<(String, String), Folded>>,
    in_progress: RefCell<HashSet<String>>,
    depth: RefCell<usize>,
    warnings: RefCell<Vec<ExtractWarning>>,
    /// Module constants' values added only when an env var is set:
    /// constant name → env var → values ([`env_gate`]).
    gated: RefCell<HashMap<String, std::collections::BTreeMap<String, Vec<crate::surface::PyValue>>>>,
    /// Natively computed functions by dotted name (`vllm.engine.arg_utils.get_kwargs`,
    /// `os.getenv`), and their results by call.
    natives: HashMap<String, Native>,
    native_results: RefCell<HashMap<String, Folded>>,
}

impl<'p> ConstEval<'p> {
    pub(crate) fn new(pkg: &'p Package<'p>) -> Self {
        ConstEval {
            pkg,
            files: RefCell::default(),
            globals: RefCell::default(),
            in_progress: RefCell::default(),
            depth: RefCell::new(0),
            warnings: RefCell::default(),
            gated: RefCell::default(),
            natives: HashMap::new(),
            native_results: RefCell::default(),
        }
    }

    /// Compute calls of `dotted` (an engine function `module.name`, or an
    /// outside name such as `os.getenv`) with `native` instead of folding.
    pub(crate) fn with_native(mut self, dotted: &str, native: Native) -> Self {
        self.natives.insert(dotted.to_string(), native);
        self
    }

    /// The native result of calling `dotted(*args)`, when `dotted` has one
    /// (results of calls with the same arguments are kept).
    pub(crate) fn native_call(&self, dotted: &str, args: &[Val]) -> Option<Folded> {
        let native = self.natives.get(dotted)?;
        let key = format!("{dotted}({})", args.iter().map(Val::repr).collect::<Vec<_>>().join(", "));
        if let Some(done) = self.native_results.borrow().get(&key) {
            return Some(done.clone());
        }
        let result = native(self, args);
        self.native_results.borrow_mut().insert(key, result.clone());
        Some(result)
    }

    /// Warnings met so far (unreadable or unparsable files), drained.
    pub(crate) fn take_warnings(&self) -> Vec<ExtractWarning> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// What blocks gated on an env var add to module constant `name` (after its
    /// value was folded), per env var; `None` when nothing.
    pub(crate) fn gated_choices(&self, name: &str) -> Option<std::collections::BTreeMap<String, Vec<crate::surface::PyValue>>> {
        self.gated.borrow().get(name).cloned()
    }

    /// The parsed file of an engine module (cached), `None` if not in the engine.
    pub(crate) fn module_file(&self, dotted: &str) -> Option<Arc<PyFile>> {
        let path = self.pkg.module_path(dotted)?;
        if let Some(cached) = self.files.borrow().get(&path) {
            return cached.clone();
        }
        let mut warnings = Vec::new();
        let parsed = crate::extract::symbols::parse_module_file(self.pkg, &path, &mut warnings);
        self.warnings.borrow_mut().extend(warnings);
        self.files.borrow_mut().insert(path, parsed.clone());
        parsed
    }

    /// Fold an expression node of `file` (which must be `scope.module`'s file).
    pub(crate) fn eval(&self, file: &PyFile, node: Node, scope: Scope) -> Folded {
        let Some(_guard) = DepthGuard::enter(&self.depth) else {
            return Err(file.text(node).to_string());
        };
        eval::eval(self, file, node, scope)
    }

    /// Fold an expression to the surface's JSON form.
    pub(crate) fn known(&self, file: &PyFile, node: Node, scope: Scope) -> Known<PyValue> {
        to_known(self.eval(file, node, scope), file.text(node))
    }

    /// The value of a module-level name after the module has been imported.
    pub(crate) fn global(&self, module: &str, name: &str) -> Folded {
        let key = (module.to_string(), name.to_string());
        if let Some(v) = self.globals.borrow().get(&key) {
            return v.clone();
        }
        let guard_key = format!("{module}:{name}");
        if !self.in_progress.borrow_mut().insert(guard_key.clone()) {
            // A cycle: the name's value depends on itself.
            return Err(name.to_string());
        }
        let result = self.global_uncached(module, name);
        self.in_progress.borrow_mut().remove(&guard_key);
        self.globals.borrow_mut().insert(key, result.clone());
        result
    }

    fn global_uncached(&self, module: &str, name: &str) -> Folded {
        let Some(file) = self.module_file(module) else {
            return Err(format!("{module}.{name}"));
        };
        if let Some(platform) = platform::current_platform(self, module, name) {
            return Ok(platform);
        }
        let root = file.root();
        match final_binding(&file.source, root, name) {
            Some(Ok(binding)) => {
                let value = self.binding_value(&file, module, None, binding, name)?;
                self.apply_module_mutations(&file, module, root, name, binding.stmt, value)
            }
            Some(Err(_conditional)) => Err(name.to_string()),
            None => {
                // `from x import *` re-exports.
                for stmt in flat_statements(root) {
                    if stmt.node.kind() == "import_from_statement" && has_wildcard(stmt.node) {
                        let target = stmt.node.child_by_field_name("module_name").and_then(|m| self.import_target(module, &file, m));
                        if let Some(target) = target {
                            if self.module_file(&target).is_some() {
                                if let Ok(v) = self.global(&target, name) {
                                    return Ok(v);
                                }
                            }
                        }
                    }
                }
                if is_builtin(name) {
                    Ok(Val::External(name.to_string()))
                } else {
                    Err(name.to_string())
                }
            }
        }
    }

    /// Value one binding gives `name` (module or class body).
    fn binding_value(&self, file: &PyFile, module: &str, class: Option<&ClassRef>, binding: Binding, name: &str) -> Folded {
        match binding.kind {
            BindingKind::Assign { value: Some(v), .. } => self.eval(file, v, Scope { module, locals: None, class }),
            BindingKind::Assign { value: None, .. } => Err(name.to_string()),
            BindingKind::ImportFrom { module_node, name: imported } => {
                let target = self.import_target(module, file, module_node).ok_or_else(|| file.text(binding.stmt).to_string())?;
                let orig = file.text(imported);
                let sub = format!("{target}.{orig}");
                if self.pkg.module_path(&target).is_none() {
                    // Outside the engine (stdlib, torch, ...).
                    return Ok(Val::External(sub));
                }
                if let Some(file) = self.module_file(&target) {
                    if final_binding(&file.source, file.root(), orig).is_some() {
                        return self.global(&target, orig);
                    }
                }
                if self.pkg.module_path(&sub).is_some() {
                    return Ok(Val::Module(sub));
                }
                self.global(&target, orig)
            }
            BindingKind::Import { dotted, aliased } => {
                let full = file.text(dotted).to_string();
                let bound = if aliased { full } else { full.split('.').next().unwrap_or_default().to_string() };
                if self.pkg.module_path(&bound).is_some() {
                    Ok(Val::Module(bound))
                } else {
                    Ok(Val::External(bound))
                }
            }
            BindingKind::Class(_) => Ok(Val::Class(ClassRef {
                module: module.to_string(),
                name: match class {
                    Some(c) => format!("{}.{}", c.name, name),
                    None => name.to_string(),
                },
            })),
            BindingKind::Function(_) => Ok(Val::Function(module.to_string(), name.to_string())),
            BindingKind::Other(n) => Err(file.text(n).to_string()),
        }
    }

    /// Dotted module an import statement's module part names.
    pub(crate) fn import_target(&self, module: &str, file: &PyFile, module_node: Node) -> Option<String> {
        if module_node.kind() == "relative_import" {
            let text = file.text(module_node);
            let dots = text.chars().take_while(|c| *c == '.').count();
            let rest = text[dots..].trim();
            let is_pkg = file.path.ends_with("/__init__.py");
            self.pkg.resolve_relative(module, is_pkg, dots, rest)
        } else {
            Some(file.text(module_node).to_string())
        }
    }

    /// Replay module-level mutations of `name` made after its binding.
    fn apply_module_mutations(&self, file: &PyFile, module: &str, root: Node, name: &str, bound_at: Node, mut value: Val) -> Folded {
        if !matches!(value, Val::List(_) | Val::Set(_) | Val::Dict(_)) {
            return Ok(value);
        }
        let src = &file.source;
        let after = bound_at.end_byte();
        // Names bound to one of this constant's mutating methods (`add_x = X.extend`).
        let mut mutator_aliases: HashMap<String, String> = HashMap::new();
        for stmt in flat_statements(root).into_iter().filter(|s| may_bind(src, *s, name)) {
            for (bound, b) in statement_bindings(src, stmt) {
                if let BindingKind::Assign { value: Some(v), .. } = b.kind {
                    if let Some((obj, method)) = attribute_parts(src, v) {
                        if obj == name && is_mutating_method(&method) {
                            mutator_aliases.insert(bound, method);
                        }
                    }
                }
            }
        }
        let scope = Scope::module(module);
        for stmt in flat_statements(root) {
            if stmt.node.start_byte() < after {
                continue;
            }
            let Some(expr) = named_children(stmt.node).into_iter().next() else { continue };
            let mutation = match (stmt.node.kind(), expr.kind()) {
                ("expression_statement", "call") => {
                    let func = expr.child_by_field_name("function");
                    let method = func.and_then(|f| match attribute_parts(src, f) {
                        Some((obj, m)) if obj == name && is_mutating_method(&m) => Some(m),
                        _ if f.kind() == "identifier" => mutator_aliases.get(&src[f.byte_range()]).cloned(),
                        _ => None,
                    });
                    method.map(|m| (m, call_positional_args(expr)))
                }
                ("expression_statement", "augmented_assignment") => {
                    let left = expr.child_by_field_name("left");
                    let op = expr.child_by_field_name("operator").map(|o| &src[o.byte_range()]);
                    match (left, op) {
                        (Some(l), Some(op)) if &src[l.byte_range()] == name => {
                            let m = match op {
                                "+=" => "__iadd__",
                                "|=" => "__ior__",
                                _ => return Err(file.text(expr).to_string()),
                            };
                            Some((m.to_string(), expr.child_by_field_name("right").into_iter().collect()))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some((method, arg_nodes)) = mutation else { continue };
            // A block that runs only with an env var set: not in a clean
            // environment; what it adds is kept apart ([`env_gate`]).
            let gate = env_gate::enclosing_if(stmt.node)
                .filter(|i| i.parent().is_some_and(|p| p.id() == root.id()))
                .and_then(|i| env_gate::off_by_default(self, file, module, i));
            if let Some(env) = gate {
                if let Some((_, values)) = env_gate::added_values(self, file, scope, stmt.node) {
                    let mut gated = self.gated.borrow_mut();
                    env_gate::merge(gated.entry(name.to_string()).or_default(), &env, values);
                }
                continue;
            }
            if stmt.conditional {
                // May or may not run: the final value cannot be known.
                return Err(name.to_string());
            }
            let mut args = Vec::new();
            for a in arg_nodes {
                args.push(self.eval(file, a, scope)?);
            }
            value = apply_mutation(&value, &method, &args).ok_or_else(|| file.text(stmt.node).to_string())?;
        }
        Ok(value)
    }

    /// A class attribute (`Cls.NAME`), searching engine base classes too.
    pub(crate) fn class_attr(&self, class: &ClassRef, attr: &str) -> Folded {
        let guard_key = format!("{}:{}.{}", class.module, class.name, attr);
        if !self.in_progress.borrow_mut().insert(guard_key.clone()) {
            return Err(format!("{}.{}", class.name, attr));
        }
        let result = self.class_attr_inner(class, attr);
        self.in_progress.borrow_mut().remove(&guard_key);
        result
    }

    fn class_attr_inner(&self, class: &ClassRef, attr: &str) -> Folded {
        let unknown = || Err(format!("{}.{}", class.name, attr));
        let Some(file) = self.module_file(&class.module) else { return unknown() };
        let Some(def) = self.class_def(&file, &class.name) else { return unknown() };
        let Some(body) = class_body(def) else { return unknown() };
        if self.is_enum(class) {
            return match enum_member(self, &file, class, body, attr) {
                Some(member) => Ok(member),
                None => unknown(),
            };
        }
        match final_binding(&file.source, body, attr) {
            Some(Ok(binding)) => self.binding_value(&file, &class.module, Some(class), binding, attr),
            Some(Err(_)) => unknown(),
            None => {
                for base in self.class_bases(class) {
                    if let Val::Class(base) = base {
                        let v = self.class_attr(&base, attr);
                        if v.is_ok() {
                            return v;
                        }
                    }
                }
                unknown()
            }
        }
    }

    /// The `class_definition` node of a (possibly nested, `A.B`) class.
    pub(crate) fn class_def<'f>(&self, file: &'f PyFile, dotted_name: &str) -> Option<Node<'f>> {
        let mut parts = dotted_name.split('.');
        let mut def = find_definition(&file.source, file.root(), parts.next()?)?;
        for part in parts {
            def = find_definition(&file.source, class_body(def)?, part)?;
        }
        (def.kind() == "class_definition").then_some(def)
    }

    /// Folded base classes (engine classes as `Val::Class`, others `External`).
    pub(crate) fn class_bases(&self, class: &ClassRef) -> Vec<Val> {
        let Some(file) = self.module_file(&class.module) else { return Vec::new() };
        let Some(def) = self.class_def(&file, &class.name) else { return Vec::new() };
        let Some(supers) = def.child_by_field_name("superclasses") else { return Vec::new() };
        named_children(supers)
            .into_iter()
            .filter(|n| n.kind() != "keyword_argument")
            // A parameterized base (`dict[str, X]`, `Generic[T]`) is its origin class.
            .map(|n| if n.kind() == "subscript" { n.child_by_field_name("value").unwrap_or(n) } else { n })
            .map(|n| self.eval(&file, n, Scope::module(&class.module)).unwrap_or_else(Val::Opaque))
            .collect()
    }

    /// Whether a class derives from `enum.Enum` (directly or through engine classes).
    pub(crate) fn is_enum(&self, class: &ClassRef) -> bool {
        self.is_enum_depth(class, 0)
    }

    fn is_enum_depth(&self, class: &ClassRef, depth: usize) -> bool {
        if depth > 16 {
            return false;
        }
        self.class_bases(class).iter().any(|b| match b {
            Val::External(name) => name.starts_with("enum."),
            Val::Class(c) => self.is_enum_depth(c, depth + 1),
            _ => false,
        })
    }

    /// Members of an `Enum` class in definition order.
    pub(crate) fn enum_members(&self, class: &ClassRef) -> Option<Vec<Val>> {
        let file = self.module_file(&class.module)?;
        let def = self.class_def(&file, &class.name)?;
        let body = class_body(def)?;
        let mut names = Vec::new();
        for stmt in flat_statements(body) {
            if stmt.conditional {
                return None;
            }
            for (bound, b) in statement_bindings(&file.source, stmt) {
                if matches!(b.kind, BindingKind::Assign { value: Some(_), .. }) && is_member_name(&bound) && !names.contains(&bound) {
                    names.push(bound);
                }
            }
        }
        names.iter().map(|n| enum_member(self, &file, class, body, n)).collect()
    }
}

fn enum_member(ev: &ConstEval, file: &PyFile, class: &ClassRef, body: Node, attr: &str) -> Option<Val> {
    if !is_member_name(attr) {
        return None;
    }
    match final_binding(&file.source, body, attr)? {
        Ok(Binding { kind: BindingKind::Assign { value: Some(v), .. }, .. }) => Some(Val::EnumMember {
            class: class.clone(),
            name: attr.to_string(),
            value: Box::new(ev.eval(file, v, Scope { module: &class.module, locals: None, class: Some(class) })),
        }),
        _ => None,
    }
}

/// Enum members are the non-dunder, non-sunder names assigned in the body.
fn is_member_name(name: &str) -> bool {
    !(name.starts_with('_') && name.ends_with('_'))
}

/// `obj.method` → (`obj` text, `method`) when `obj` is a plain name.
fn attribute_parts(src: &str, node: Node) -> Option<(String, String)> {
    if node.kind() != "attribute" {
        return None;
    }
    let obj = node.child_by_field_name("object")?;
    let attr = node.child_by_field_name("attribute")?;
    (obj.kind() == "identifier").then(|| (src[obj.byte_range()].to_string(), src[attr.byte_range()].to_string()))
}

fn call_positional_args(call: Node) -> Vec<Node> {
    call.child_by_field_name("arguments")
        .map(|args| {
            named_children(args)
                .into_iter()
                .filter(|a| !matches!(a.kind(), "keyword_argument" | "list_splat" | "dictionary_splat"))
                .collect()
        })
        .unwrap_or_default()
}

fn has_wildcard(import: Node) -> bool {
    named_children(import).iter().any(|n| n.kind() == "wildcard_import")
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "int"
            | "str"
            | "float"
            | "bool"
            | "list"
            | "dict"
            | "set"
            | "frozenset"
            | "tuple"
            | "len"
            | "next"
            | "sorted"
            | "min"
            | "max"
            | "range"
            | "bytes"
            | "object"
            | "type"
            | "print"
            | "open"
            | "repr"
            | "abs"
            | "sum"
            | "any"
            | "all"
            | "reversed"
            | "enumerate"
            | "zip"
            | "map"
            | "filter"
            | "getattr"
            | "isinstance"
    )
}

/// A folded value in the surface's terms: JSON, or dynamic with the source text.
pub(crate) fn to_known(folded: Folded, text: &str) -> Known<PyValue> {
    match folded {
        Ok(v) => match v.to_json() {
            Some(j) => Known::Value(j),
            None => Known::dynamic(text),
        },
        Err(_) => Known::dynamic(text),
    }
}

struct DepthGuard<'a>(&'a RefCell<usize>);

impl<'a> DepthGuard<'a> {
    fn enter(depth: &'a RefCell<usize>) -> Option<Self> {
        let mut d = depth.borrow_mut();
        if *d >= MAX_DEPTH {
            return None;
        }
        *d += 1;
        Some(DepthGuard(depth))
    }
}

impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        *self.0.borrow_mut() -= 1;
    }
}

#[cfg(test)]
mod tests;
