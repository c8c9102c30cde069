//! The options of an engine's server parser, as argparse builds them.
//!
//! Reading starts at `ServerArgs.add_cli_args(parser)` in `sglang.srt.server_args`
//! and walks its body in order: `parser.add_argument(...)` calls (also on
//! argument groups), calls that pass the parser on (followed into engine
//! functions and methods), the field-driven registrar (`dataclass`), local
//! choice lists and their mutations, and `set_defaults`. Values are folded by
//! [`consts`](crate::extract::consts); what cannot be folded is dynamic.

mod actions;
mod argparse;
mod dataclass;
mod parser;
mod resolution;

use super::env_gate;

pub(crate) use parser::parser_facts;

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use self::argparse::{build_flag, ActionCache, ArgCall, KwArg};
use super::consts::{
    apply_mutation, class_body, find_definition, flat_statements, is_mutating_method, ClassRef, ConstEval, Folded, Locals, Scope, Val,
};
use super::package::Package;
use super::python::{named_children, PyFile};
use crate::profiles::{FlagsStrategy, ResolutionProfile};
use crate::surface::{Evidence, ExtractWarning, Flag, Known, PyValue};

/// How deep calls that pass the parser on are followed.
const MAX_CALL_DEPTH: usize = 12;

/// Every option of the engine's server parser, as `strategy` says it is built,
/// in registration order, starting with argparse's own `-h/--help`.
pub fn extract_flags(
    pkg: &Package,
    strategy: &FlagsStrategy,
    resolution: Option<&ResolutionProfile>,
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<Flag> {
    match strategy {
        FlagsStrategy::ArgparseMethod { module, class, method } => {
            extract_flags_from(pkg, &format!("{}.{module}", pkg.name), class, method, resolution, warnings)
        }
    }
}

/// Flags registered by `module.class_name.method(parser)` (or a module-level
/// function when `class_name` is empty).
pub(crate) fn extract_flags_from(
    pkg: &Package,
    module: &str,
    class_name: &str,
    method: &str,
    resolution: Option<&ResolutionProfile>,
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<Flag> {
    let ev = ConstEval::new(pkg);
    let mut walker = Walker {
        ev: &ev,
        actions: ActionCache::default(),
        calls: Vec::new(),
        set_defaults: Vec::new(),
        stack: Vec::new(),
        warnings: Vec::new(),
    };
    let class = (!class_name.is_empty()).then(|| ClassRef { module: module.to_string(), name: class_name.to_string() });
    let entry_found = walker.walk_function(module, class.as_ref(), method, &[Role::Parser], HashMap::new());
    let mut flags = Vec::new();
    match entry_found {
        Some(evidence) => flags.push(help_flag(evidence)),
        None => walker.warnings.push(ExtractWarning {
            path: pkg.module_path(module).unwrap_or_else(|| module.to_string()),
            message: format!("no `{class_name}.{method}` found; no flags extracted"),
        }),
    }
    let calls = std::mem::take(&mut walker.calls);
    for call in &calls {
        flags.push(build_flag(&ev, &mut walker.actions, call));
    }
    for (dest, value) in &walker.set_defaults {
        for f in flags.iter_mut().filter(|f| &f.dest == dest) {
            f.default = value.clone();
            // A default other than `None` makes the field's fallback unreachable.
            if !matches!(value, Known::Value(PyValue::Null)) {
                f.effective_default = None;
            }
        }
    }
    if let Some(resolution) = resolution {
        resolution::resolve_effective_defaults(&ev, pkg, resolution, class_name, &mut flags);
    }
    warnings.extend(walker.warnings);
    warnings.extend(ev.take_warnings());
    flags
}

/// argparse adds `-h/--help` to every parser made with the default `add_help`.
fn help_flag(evidence: Evidence) -> Flag {
    Flag {
        names: vec!["-h".into(), "--help".into()],
        dest: "help".into(),
        action: "help".into(),
        type_name: None,
        nargs: Some(serde_json::json!(0)),
        choices: None,
        choices_when_env: Default::default(),
        default: Known::Value(PyValue::String("==SUPPRESS==".into())),
        const_value: None,
        required: false,
        deprecated: None,
        help: Some("show this help message and exit".into()),
        evidence,
        effective_default: None,
    }
}

/// What a value passed into a walked function is.
#[derive(Clone, Debug)]
enum Role {
    /// The parser (or an argument group of it).
    Parser,
    Value(Folded),
}

struct Walker<'e, 'p> {
    ev: &'e ConstEval<'p>,
    actions: ActionCache,
    calls: Vec<ArgCall>,
    set_defaults: Vec<(String, Known<PyValue>)>,
    /// Functions being walked (recursion guard).
    stack: Vec<String>,
    warnings: Vec<ExtractWarning>,
}

/// Variables of the function being walked.
struct Frame<'a> {
    module: &'a str,
    class: Option<&'a ClassRef>,
    parsers: HashSet<String>,
    locals: Locals,
    /// What blocks that run only with an env var set would add to each local
    /// list: local → env var → values ([`env_gate`]).
    gated: HashMap<String, std::collections::BTreeMap<String, Vec<PyValue>>>,
}

impl Frame<'_> {
    fn scope(&self) -> Scope<'_> {
        Scope { module: self.module, locals: Some(&self.locals), class: None }
    }
}

impl<'e, 'p> Walker<'e, 'p> {
    /// Walk a function (a method of `class` when given) with its positional
    /// parameters bound to `args` (after `self`/`cls`). Returns the function's
    /// evidence, `None` when it is not found.
    fn walk_function(
        &mut self,
        module: &str,
        class: Option<&ClassRef>,
        name: &str,
        args: &[Role],
        kwargs: HashMap<String, Role>,
    ) -> Option<Evidence> {
        let file = self.ev.module_file(module)?;
        let def = match class {
            Some(c) => {
                let body = self.ev.class_def(&file, &c.name).and_then(class_body)?;
                find_definition(&file.source, body, name)?
            }
            None => find_definition(&file.source, file.root(), name)?,
        };
        if def.kind() != "function_definition" {
            return None;
        }
        let key = format!("{module}:{}.{name}", class.map(|c| c.name.as_str()).unwrap_or(""));
        if self.stack.contains(&key) || self.stack.len() >= MAX_CALL_DEPTH {
            return Some(file.evidence(def));
        }
        self.stack.push(key);
        let mut frame = Frame { module, class, parsers: HashSet::new(), locals: Locals::new(), gated: HashMap::new() };
        bind_params(&file, def, is_static(&file, def, class.is_some()), args, &kwargs, &mut frame);
        if let Some(body) = def.child_by_field_name("body") {
            self.walk_body(&file, body, &mut frame);
        }
        self.stack.pop();
        Some(file.evidence(def))
    }

    fn walk_body(&mut self, file: &PyFile, body: Node, frame: &mut Frame) {
        // Blocks that run only with an env var set: (byte range, var).
        let mut skipped: Vec<(usize, usize, String)> = Vec::new();
        for stmt in flat_statements(body) {
            let node = stmt.node;
            let gate = skipped.iter().find(|(s, e, _)| node.start_byte() >= *s && node.end_byte() <= *e).map(|(_, _, env)| env.clone());
            if let Some(env) = gate {
                if let Some((local, values)) = env_gate::added_values(self.ev, file, frame.scope(), node) {
                    env_gate::merge(frame.gated.entry(local).or_default(), &env, values);
                }
                continue;
            }
            if let Some(env) = env_gate::off_by_default(self.ev, file, frame.module, node) {
                if let Some(block) = node.child_by_field_name("consequence") {
                    skipped.push((block.start_byte(), block.end_byte(), env));
                }
                continue;
            }
            if node.kind() == "return_statement" && !stmt.conditional {
                return;
            }
            if node.kind() != "expression_statement" {
                continue;
            }
            for expr in named_children(node) {
                match expr.kind() {
                    "call" => self.visit_call(file, expr, frame, stmt.conditional),
                    "assignment" => self.visit_assignment(file, expr, frame, stmt.conditional),
                    "augmented_assignment" => self.visit_augmented(file, expr, frame, stmt.conditional),
                    _ => {}
                }
            }
        }
    }

    fn visit_assignment(&mut self, file: &PyFile, expr: Node, frame: &mut Frame, conditional: bool) {
        let (Some(left), Some(right)) = (expr.child_by_field_name("left"), expr.child_by_field_name("right")) else {
            return;
        };
        if left.kind() != "identifier" {
            return;
        }
        let name = file.text(left).to_string();
        if self.is_group_call(file, right, frame) {
            frame.parsers.insert(name);
            return;
        }
        frame.parsers.remove(&name);
        let value = if conditional { Err(name.clone()) } else { self.ev.eval(file, right, frame.scope()) };
        frame.locals.insert(name, value);
    }

    fn visit_augmented(&mut self, file: &PyFile, expr: Node, frame: &mut Frame, conditional: bool) {
        let (Some(left), Some(right)) = (expr.child_by_field_name("left"), expr.child_by_field_name("right")) else {
            return;
        };
        let name = file.text(left).to_string();
        let Some(current) = frame.locals.get(&name).cloned() else { return };
        let method = match expr.child_by_field_name("operator").map(|o| file.text(o)) {
            Some("+=") => "__iadd__",
            Some("|=") => "__ior__",
            _ => "",
        };
        let updated = match (current, conditional) {
            (Ok(v), false) => {
                self.ev.eval(file, right, frame.scope()).ok().and_then(|arg| apply_mutation(&v, method, &[arg])).ok_or_else(|| name.clone())
            }
            _ => Err(name.clone()),
        };
        frame.locals.insert(name, updated);
    }

    /// `parser.add_argument_group(...)` and the like: the result registers on the parser.
    fn is_group_call(&self, file: &PyFile, node: Node, frame: &Frame) -> bool {
        if node.kind() != "call" {
            return false;
        }
        let Some((obj, method)) = node.child_by_field_name("function").and_then(|f| receiver_and_method(file, f)) else {
            return false;
        };
        frame.parsers.contains(obj) && matches!(method, "add_argument_group" | "add_mutually_exclusive_group")
    }

    fn visit_call(&mut self, file: &PyFile, call: Node, frame: &mut Frame, conditional: bool) {
        let Some(func) = call.child_by_field_name("function") else { return };
        let args = call.child_by_field_name("arguments").map(named_children).unwrap_or_default();
        if let Some((obj, method)) = receiver_and_method(file, func) {
            if frame.parsers.contains(obj) {
                match method {
                    "add_argument" => {
                        if let Some(c) = self.arg_call(file, call, &args, frame) {
                            self.calls.push(c);
                        }
                    }
                    "set_defaults" => self.record_set_defaults(file, &args, frame),
                    _ => {}
                }
                return;
            }
            if is_mutating_method(method) {
                if let Some(Ok(current)) = frame.locals.get(obj).cloned() {
                    let folded: Option<Vec<Val>> = args.iter().map(|a| self.ev.eval(file, *a, frame.scope()).ok()).collect();
                    let updated = match (conditional, folded) {
                        (false, Some(vals)) => apply_mutation(&current, method, &vals).ok_or_else(|| obj.to_string()),
                        _ => Err(obj.to_string()),
                    };
                    frame.locals.insert(obj.to_string(), updated);
                    return;
                }
            }
        }
        // A call that passes the parser on.
        let passes_parser = args.iter().any(|a| self.is_parser_arg(file, *a, frame));
        if passes_parser {
            self.follow_call(file, call, func, &args, frame);
        }
    }

    fn is_parser_arg(&self, file: &PyFile, arg: Node, frame: &Frame) -> bool {
        let node = if arg.kind() == "keyword_argument" {
            match arg.child_by_field_name("value") {
                Some(v) => v,
                None => return false,
            }
        } else {
            arg
        };
        node.kind() == "identifier" && frame.parsers.contains(file.text(node))
    }

    fn follow_call(&mut self, file: &PyFile, call: Node, func: Node, args: &[Node], frame: &mut Frame) {
        let target = self.resolve_callee(file, func, frame);
        let Some((module, class, name)) = target else {
            self.warnings.push(ExtractWarning {
                path: file.path.clone(),
                message: format!(
                    "line {}: parser passed to `{}`, which is not engine code; its options are not seen",
                    file.line(call),
                    file.text(func)
                ),
            });
            return;
        };
        let mut positional = Vec::new();
        let mut keywords = HashMap::new();
        for a in args {
            let role = |node: Node, this: &Self| {
                if node.kind() == "identifier" && frame.parsers.contains(file.text(node)) {
                    Role::Parser
                } else {
                    Role::Value(this.ev.eval(file, node, frame.scope()))
                }
            };
            if a.kind() == "keyword_argument" {
                if let (Some(k), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value")) {
                    keywords.insert(file.text(k).to_string(), role(v, self));
                }
            } else {
                positional.push(role(*a, self));
            }
        }
        // The field-driven registrar: flags come from the class passed to it.
        if let Some(registrar) = self.registrar(&module, class.as_ref(), &name) {
            let record = positional
                .iter()
                .chain(keywords.values())
                .find_map(|r| match r {
                    Role::Value(Ok(Val::Class(c))) => Some(c.clone()),
                    _ => None,
                })
                .or_else(|| self.rebuilt_record(file, args, frame));
            match record {
                Some(record) => {
                    let calls = dataclass::dataclass_calls(self.ev, &registrar, &record, &mut self.warnings);
                    self.calls.extend(calls);
                }
                None => self.warnings.push(ExtractWarning {
                    path: file.path.clone(),
                    message: format!("line {}: registrar called with a class that does not fold: {}", file.line(call), file.text(call)),
                }),
            }
            return;
        }
        if self.walk_function(&module, class.as_ref(), &name, &positional, keywords).is_none() {
            self.warnings.push(ExtractWarning {
                path: file.path.clone(),
                message: format!("line {}: cannot find `{}` to follow the parser into", file.line(call), file.text(func)),
            });
        }
    }

    /// The engine function a callee expression names: (module, class, name).
    fn resolve_callee(&self, file: &PyFile, func: Node, frame: &Frame) -> Option<(String, Option<ClassRef>, String)> {
        // `cls.helper(parser)` / `self.helper(parser)` inside a class.
        if let Some((obj, method)) = receiver_and_method(file, func) {
            if matches!(obj, "cls" | "self") {
                let class = frame.class?.clone();
                return Some((class.module.clone(), Some(class), method.to_string()));
            }
            if let Ok(Val::Class(c)) = self.ev.eval(file, func.child_by_field_name("object")?, frame.scope()) {
                return Some((c.module.clone(), Some(c), method.to_string()));
            }
        }
        match self.ev.eval(file, func, frame.scope()) {
            Ok(Val::Function(module, qual)) => match qual.rsplit_once('.') {
                Some((class, name)) => Some((module.clone(), Some(ClassRef { module, name: class.to_string() }), name.to_string())),
                None => Some((module, None, qual)),
            },
            _ => None,
        }
    }

    /// A record class rebound at module level after its definition
    /// (`Cls = make_struct("Cls", ...annotations of Cls...)`): the name no longer
    /// folds, but the rebuilt record is made from the class's own declarations.
    fn rebuilt_record(&self, file: &PyFile, args: &[Node], frame: &Frame) -> Option<ClassRef> {
        args.iter().find_map(|a| {
            if a.kind() != "identifier" || frame.parsers.contains(file.text(*a)) {
                return None;
            }
            let module_file = self.ev.module_file(frame.module)?;
            let def = find_definition(&module_file.source, module_file.root(), file.text(*a))?;
            (def.kind() == "class_definition").then(|| ClassRef { module: frame.module.to_string(), name: file.text(*a).to_string() })
        })
    }

    fn registrar(&self, module: &str, class: Option<&ClassRef>, name: &str) -> Option<dataclass::Registrar> {
        if class.is_some() {
            return None;
        }
        let file = self.ev.module_file(module)?;
        let def = find_definition(&file.source, file.root(), name)?;
        dataclass::as_registrar(&file, def)
    }

    /// Fold an `add_argument(...)` call's option strings and keywords.
    fn arg_call(&mut self, file: &PyFile, call: Node, args: &[Node], frame: &Frame) -> Option<ArgCall> {
        let scope = frame.scope();
        let mut names = Vec::new();
        let mut kwargs = Vec::new();
        for a in args {
            match a.kind() {
                "keyword_argument" => {
                    let (Some(k), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value")) else { continue };
                    kwargs.push((file.text(k).to_string(), KwArg { value: self.ev.eval(file, v, scope), text: file.text(v).to_string() }));
                }
                "dictionary_splat" => {
                    let inner = named_children(*a).first().copied()?;
                    match self.ev.eval(file, inner, scope) {
                        Ok(Val::Dict(d)) => {
                            for (k, v) in d {
                                if let Val::Str(k) = k {
                                    kwargs.push((k, KwArg::literal(v)));
                                }
                            }
                        }
                        _ => self.unreadable(file, call, "keyword arguments do not fold"),
                    }
                }
                "list_splat" => {
                    let inner = named_children(*a).first().copied()?;
                    match self.ev.eval(file, inner, scope).ok().and_then(|v| v.iter_items()) {
                        Some(items) => {
                            for item in items {
                                match item {
                                    Val::Str(s) => names.push(s),
                                    _ => self.unreadable(file, call, "an option string does not fold"),
                                }
                            }
                        }
                        None => self.unreadable(file, call, "option strings do not fold"),
                    }
                }
                _ => match self.ev.eval(file, *a, scope) {
                    Ok(Val::Str(s)) => names.push(s),
                    _ => self.unreadable(file, call, "an option string does not fold"),
                },
            }
        }
        if names.is_empty() {
            return None;
        }
        let env_choices = args
            .iter()
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| a.child_by_field_name("name").is_some_and(|k| file.text(k) == "choices"))
            .and_then(|a| a.child_by_field_name("value"))
            .and_then(|v| frame.gated.get(file.text(v)).cloned().or_else(|| self.ev.gated_choices(file.text(v))))
            .unwrap_or_default();
        Some(ArgCall { names, kwargs, evidence: file.evidence(call), fallback: None, env_choices })
    }

    fn record_set_defaults(&mut self, file: &PyFile, args: &[Node], frame: &Frame) {
        for a in args.iter().filter(|a| a.kind() == "keyword_argument") {
            if let (Some(k), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value")) {
                let value = self.ev.known(file, v, frame.scope());
                self.set_defaults.push((file.text(k).to_string(), value));
            }
        }
    }

    fn unreadable(&mut self, file: &PyFile, call: Node, why: &str) {
        self.warnings
            .push(ExtractWarning { path: file.path.clone(), message: format!("line {}: {why}: {}", file.line(call), file.text(call)) });
    }
}

/// `obj.method` with `obj` a plain name.
fn receiver_and_method<'f>(file: &'f PyFile, func: Node) -> Option<(&'f str, &'f str)> {
    if func.kind() != "attribute" {
        return None;
    }
    let obj = func.child_by_field_name("object")?;
    let method = func.child_by_field_name("attribute")?;
    (obj.kind() == "identifier").then(|| (file.text(obj), file.text(method)))
}

/// A method without `self`/`cls` (a `@staticmethod`), or a plain function.
fn is_static(file: &PyFile, def: Node, in_class: bool) -> bool {
    if !in_class {
        return true;
    }
    def.parent()
        .filter(|p| p.kind() == "decorated_definition")
        .map(|p| named_children(p).into_iter().any(|d| d.kind() == "decorator" && file.text(d).contains("staticmethod")))
        .unwrap_or(false)
}

fn bind_params(file: &PyFile, def: Node, is_static: bool, args: &[Role], kwargs: &HashMap<String, Role>, frame: &mut Frame) {
    let Some(params) = def.child_by_field_name("parameters") else { return };
    let names: Vec<String> = named_children(params)
        .into_iter()
        .filter_map(|p| match p.kind() {
            "identifier" => Some(file.text(p).to_string()),
            "typed_parameter" => named_children(p).first().map(|n| file.text(*n).to_string()),
            "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name").map(|n| file.text(n).to_string()),
            _ => None,
        })
        .collect();
    let names = if is_static { &names[..] } else { names.get(1..).unwrap_or(&[]) };
    for (i, name) in names.iter().enumerate() {
        let role = args.get(i).or_else(|| kwargs.get(name));
        match role {
            Some(Role::Parser) => {
                frame.parsers.insert(name.clone());
            }
            Some(Role::Value(v)) => {
                frame.locals.insert(name.clone(), v.clone());
            }
            None => {
                frame.locals.insert(name.clone(), Err(name.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests;
