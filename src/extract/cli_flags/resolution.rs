//! Effective defaults decided after parsing: a field whose argparse default is
//! `None` may be resolved at startup by the engine's resolution hooks.
//!
//! Where the hooks live and the call that declares a resolved value are the
//! engine profile's [`ResolutionProfile`]. A hook assigns a field in one of
//! three shapes, all read here:
//! - `declare_resolution(server_args, "source", field=value)` (and
//!   `**{"field": value}`, or a dict `fields["field"] = value` the same
//!   function passes as `**fields`);
//! - `self.field = value` in a method of the class the parser is built from
//!   (older releases resolve in `ServerArgs.__post_init__` and its helpers);
//! - `server_args.field = value` on the first parameter of a hook function.
//!
//! A field assigned exactly once, to a literal, under no condition but its own
//! `field is None` test, in a hook some resolution code calls (or hands to a
//! runner: `run_hook(hook, server_args)`) unconditionally, resolves to that
//! literal. Any other assignment depends on the model, hardware or other
//! flags (a model's hook runs only for that model): the effective default is
//! dynamic, with the hook's line as evidence, never a guess. A field no hook assigns
//! keeps its declared `fallback=` (applied when the value is still `None`).

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::extract::consts::{ConstEval, Scope};
use crate::extract::package::Package;
use crate::extract::python::{named_children, PyFile};
use crate::profiles::ResolutionProfile;
use crate::surface::{DefaultSource, EffectiveDefault, Evidence, Flag, Known, PyValue};

/// One assignment of a field by a resolution hook.
struct Site {
    evidence: Evidence,
    /// The hook function that assigns.
    function: String,
    /// The literal assigned, when the assignment is unconditional but for the
    /// field's own `is None` test.
    literal: Option<PyValue>,
    /// What a reader sees: the hook function and the assignment's text.
    said: String,
}

/// Whether a flag's field can still be resolved after parsing: its argparse
/// default is `None`.
fn resolvable(flag: &Flag) -> bool {
    matches!(flag.default, Known::Value(PyValue::Null)) && flag.action != "help"
}

/// Fill each flag's `effective_default` from the hooks that assign its field.
/// `entry_class` is the class the parser is built from (`ServerArgs`).
pub(super) fn resolve_effective_defaults(
    ev: &ConstEval,
    pkg: &Package,
    profile: &ResolutionProfile,
    entry_class: &str,
    flags: &mut [Flag],
) {
    let wanted: HashSet<String> = flags.iter().filter(|f| resolvable(f)).map(|f| f.dest.clone()).collect();
    if wanted.is_empty() {
        return;
    }
    let mut sites: HashMap<String, Vec<Site>> = HashMap::new();
    let mut always_called: HashSet<String> = HashSet::new();
    let paths: Vec<String> = pkg
        .module_entries()
        .filter(|e| {
            let rel = e.path.get(pkg.root.len() + 1..).unwrap_or("");
            profile.modules.iter().any(|m| if m.ends_with('/') { rel.starts_with(m) } else { rel == *m })
        })
        .map(|e| e.path.clone())
        .collect();
    for path in paths {
        let module = pkg.dotted_name(&path);
        let Some(file) = ev.module_file(&module) else { continue };
        let reader = HookReader { ev, file: &file, module: &module, profile, entry_class, wanted: &wanted };
        reader.visit(file.root(), None, &mut sites);
        unconditional_calls(&file, &mut always_called);
    }
    for flag in flags.iter_mut().filter(|f| resolvable(f)) {
        let Some(found) = sites.get(&flag.dest) else { continue };
        let first = &found[0];
        let value = match (found.len(), &first.literal) {
            (1, Some(v)) if always_called.contains(&first.function) => Known::Value(v.clone()),
            _ => {
                let more = if found.len() > 1 { format!(" (and {} more assignments)", found.len() - 1) } else { String::new() };
                Known::dynamic(format!("{}{more}", first.said))
            }
        };
        flag.effective_default = Some(EffectiveDefault { value, source: DefaultSource::Hook, evidence: first.evidence.clone() });
    }
}

struct HookReader<'a> {
    ev: &'a ConstEval<'a>,
    file: &'a PyFile,
    module: &'a str,
    profile: &'a ResolutionProfile,
    entry_class: &'a str,
    wanted: &'a HashSet<String>,
}

/// The function a site is in: its name, and the name hooks assign fields on
/// (`self` in a method of the entry class, the first parameter of a module-level
/// function; none in other classes' methods).
struct Function {
    name: String,
    receiver: Option<String>,
    /// Dict names the function passes as `**name` to the declaring call.
    splatted: HashSet<String>,
}

impl<'a> HookReader<'a> {
    /// Walk `node`; `class` is the class whose body `node` is in, if any.
    fn visit(&self, node: Node<'a>, class: Option<&str>, sites: &mut HashMap<String, Vec<Site>>) {
        for child in named_children(node) {
            match child.kind() {
                "class_definition" => {
                    let name = child.child_by_field_name("name").map(|n| self.file.text(n));
                    if let Some(body) = child.child_by_field_name("body") {
                        self.visit(body, name, sites);
                    }
                }
                "function_definition" => self.function(child, class, sites),
                "decorated_definition" => self.visit(child, class, sites),
                _ if child.kind().ends_with("_statement") || child.kind() == "block" => self.visit(child, class, sites),
                _ => {}
            }
        }
    }

    fn function(&self, def: Node<'a>, class: Option<&str>, sites: &mut HashMap<String, Vec<Site>>) {
        let name = def.child_by_field_name("name").map(|n| self.file.text(n).to_string()).unwrap_or_default();
        let first_param = def
            .child_by_field_name("parameters")
            .and_then(|p| named_children(p).into_iter().next())
            .map(|p| self.file.text(p.child_by_field_name("name").unwrap_or(p)).to_string())
            .map(|p| p.split(':').next().unwrap_or("").trim().to_string());
        let receiver = match class {
            Some(c) if c == self.entry_class => first_param,
            Some(_) => None,
            None => first_param,
        };
        let Some(body) = def.child_by_field_name("body") else { return };
        let mut function = Function { name, receiver, splatted: HashSet::new() };
        crate::extract::python::walk(body, |n| {
            if n.kind() == "call" && self.is_declaring(n) {
                for arg in n.child_by_field_name("arguments").map(named_children).unwrap_or_default() {
                    if arg.kind() == "dictionary_splat" {
                        if let Some(inner) = named_children(arg).into_iter().next().filter(|i| i.kind() == "identifier") {
                            function.splatted.insert(self.file.text(inner).to_string());
                        }
                    }
                }
            }
            n.kind() != "function_definition" && n.kind() != "class_definition"
        });
        crate::extract::python::walk(body, |n| {
            match n.kind() {
                "call" if self.is_declaring(n) => self.declared(n, &function, sites),
                "assignment" => self.assigned(n, &function, sites),
                _ => {}
            }
            // Nested functions and classes are their own scopes: read on their own.
            match n.kind() {
                "function_definition" => {
                    self.function(n, None, sites);
                    false
                }
                "class_definition" => {
                    self.visit(n, None, sites);
                    false
                }
                _ => true,
            }
        });
    }

    /// A call to the profile's declaring function (`declare_resolution(...)` or `x.declare_resolution(...)`).
    fn is_declaring(&self, call: Node) -> bool {
        call.child_by_field_name("function").is_some_and(|f| {
            let text = self.file.text(f);
            text == self.profile.declare_call || text.ends_with(&format!(".{}", self.profile.declare_call))
        })
    }

    fn declared(&self, call: Node<'a>, function: &Function, sites: &mut HashMap<String, Vec<Site>>) {
        for arg in call.child_by_field_name("arguments").map(named_children).unwrap_or_default() {
            match arg.kind() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) = (arg.child_by_field_name("name"), arg.child_by_field_name("value")) {
                        self.site(self.file.text(name), value, arg, function, sites);
                    }
                }
                "dictionary_splat" => {
                    let Some(dict) = named_children(arg).into_iter().next().filter(|d| d.kind() == "dictionary") else { continue };
                    for pair in named_children(dict).into_iter().filter(|p| p.kind() == "pair") {
                        if let (Some(key), Some(value)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) {
                            if let Some(field) = self.file.string_value(key) {
                                self.site(&field, value, pair, function, sites);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// `receiver.field = value`, or `fields["field"] = value` for a dict the
    /// function passes to the declaring call.
    fn assigned(&self, assignment: Node<'a>, function: &Function, sites: &mut HashMap<String, Vec<Site>>) {
        let (Some(left), Some(right)) = (assignment.child_by_field_name("left"), assignment.child_by_field_name("right")) else {
            return;
        };
        match left.kind() {
            "attribute" => {
                let (Some(object), Some(attr)) = (left.child_by_field_name("object"), left.child_by_field_name("attribute")) else {
                    return;
                };
                if function.receiver.as_deref() == Some(self.file.text(object)) {
                    self.site(self.file.text(attr), right, assignment, function, sites);
                }
            }
            "subscript" => {
                let (Some(object), Some(key)) = (left.child_by_field_name("value"), left.child_by_field_name("subscript")) else {
                    return;
                };
                if function.splatted.contains(self.file.text(object)) {
                    if let Some(field) = self.file.string_value(key) {
                        self.site(&field, right, assignment, function, sites);
                    }
                }
            }
            _ => {}
        }
    }

    fn site(&self, field: &str, value: Node<'a>, at: Node<'a>, function: &Function, sites: &mut HashMap<String, Vec<Site>>) {
        if !self.wanted.contains(field) {
            return;
        }
        let literal = if only_none_test_guards(self.file, at, field) {
            let scope = Scope { module: self.module, locals: None, class: None };
            self.ev.eval(self.file, value, scope).ok().and_then(|v| v.to_json())
        } else {
            None
        };
        let evidence = self.file.evidence(at);
        let text: String = self.file.text(at).split_whitespace().collect::<Vec<_>>().join(" ");
        let text = if text.chars().count() > 100 { format!("{}…", text.chars().take(100).collect::<String>()) } else { text };
        let said = format!("resolved at startup by `{}` ({}:{}): `{text}`", function.name, evidence.path, evidence.line);
        sites.entry(field.to_string()).or_default().push(Site { evidence, function: function.name.clone(), literal, said });
    }
}

/// Whether `node` runs whenever its function (or the module) runs, but for
/// `if` blocks whose test `allowed` accepts (an `elif`/`else` runs only when a
/// test fails, so it never counts).
fn runs_unless(file: &PyFile, node: Node, allowed: &dyn Fn(&PyFile, Node) -> bool) -> bool {
    let mut child = node;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "function_definition" | "module" => return true,
            "if_statement" => {
                let in_consequence = parent.child_by_field_name("consequence").is_some_and(|c| c.id() == child.id());
                let test_allowed = parent.child_by_field_name("condition").is_some_and(|c| allowed(file, c));
                if !(in_consequence && test_allowed) {
                    return false;
                }
            }
            "elif_clause"
            | "else_clause"
            | "for_statement"
            | "while_statement"
            | "except_clause"
            | "match_statement"
            | "conditional_expression"
            | "lambda"
            | "boolean_operator" => return false,
            _ => {}
        }
        child = parent;
    }
    true
}

/// Whether every condition between `node` and its function is the field's own
/// `x.field is None` test: the assignment runs whenever the field is unset.
fn only_none_test_guards(file: &PyFile, node: Node, field: &str) -> bool {
    runs_unless(file, node, &|file, condition| is_none_test(file, condition, field))
}

/// `x.field is None`, `x["field"] is None` or `field is None`.
fn is_none_test(file: &PyFile, condition: Node, field: &str) -> bool {
    if condition.kind() != "comparison_operator" {
        return false;
    }
    let text: String = file.text(condition).split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(subject) = text.strip_suffix(" is None") else { return false };
    subject == field
        || subject.ends_with(&format!(".{field}"))
        || subject.ends_with(&format!("[\"{field}\"]"))
        || subject.ends_with(&format!("['{field}']"))
}

/// Names of functions the file calls, or hands to a call as an argument
/// (`run_hook(hook, server_args)`), where the call is under no condition of
/// its own function.
fn unconditional_calls(file: &PyFile, out: &mut HashSet<String>) {
    crate::extract::python::walk(file.root(), |n| {
        if n.kind() == "call" && runs_unless(file, n, &|_, _| false) {
            if let Some(callee) = n.child_by_field_name("function") {
                let text = file.text(callee);
                out.insert(text.rsplit('.').next().unwrap_or(text).to_string());
            }
            for arg in n.child_by_field_name("arguments").map(named_children).unwrap_or_default() {
                if arg.kind() == "identifier" {
                    out.insert(file.text(arg).to_string());
                }
            }
        }
        true
    });
}
