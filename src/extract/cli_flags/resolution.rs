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

use aho_corasick::AhoCorasick;
use tree_sitter::Node;

use crate::extract::consts::{ConstEval, Scope};
use crate::extract::package::Package;
use crate::extract::parsed;
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
    // Listed folder by folder: only these files are the flags' dependencies.
    let mut paths: Vec<String> = Vec::new();
    for m in profile.modules {
        if m.ends_with('/') {
            paths.extend(pkg.module_entries_under(m).map(|e| e.path.clone()));
        } else {
            let path = format!("{}/{m}", pkg.root);
            if pkg.tree.entry(&path).is_some() {
                paths.push(path);
            }
        }
    }
    // In path order, as the listing gives them: a field's first site is its evidence.
    paths.sort();
    // Only files that can hold a site are parsed: one naming the declaring call,
    // or assigning `x.<field>` for a wanted field (most hook modules of a release
    // touch neither: model overrides, field declarations).
    let attribute_uses = AhoCorasick::new(wanted.iter().map(|d| format!(".{d}"))).ok();
    let can_hold_site =
        |bytes: &[u8]| contains(bytes, profile.declare_call) || attribute_uses.as_ref().is_none_or(|ac| assigns_attribute(ac, bytes));
    for path in &paths {
        if !parsed::worth_parsing(pkg.tree, path, &can_hold_site) {
            continue;
        }
        let module = pkg.dotted_name(path);
        let Some(file) = ev.module_file(&module) else { continue };
        let reader = HookReader { ev, file: &file, module: &module, profile, entry_class, wanted: &wanted };
        reader.visit(file.root(), None, &mut sites);
    }
    // Whether the hooks with a literal are called unconditionally: read in the
    // files naming them, which may hold no site (the pipeline that runs them).
    let callers_needed: Vec<&str> =
        sites.values().filter(|found| found.len() == 1 && found[0].literal.is_some()).map(|found| found[0].function.as_str()).collect();
    if !callers_needed.is_empty() {
        let names_a_hook = |bytes: &[u8]| callers_needed.iter().any(|name| contains(bytes, name));
        for path in &paths {
            if parsed::worth_parsing(pkg.tree, path, &names_a_hook) {
                if let Some(file) = ev.module_file(&pkg.dotted_name(path)) {
                    unconditional_calls(&file, &mut always_called);
                }
            }
        }
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

fn contains(bytes: &[u8], needle: &str) -> bool {
    memchr::memmem::find(bytes, needle.as_bytes()).is_some()
}

/// Whether some `.<field>` found by `uses` is assigned: `=` (not `==`) or an
/// annotation's `:` after it, spaces allowed.
fn assigns_attribute(uses: &AhoCorasick, bytes: &[u8]) -> bool {
    uses.find_iter(bytes).any(|m| {
        let rest = &bytes[m.end()..];
        if rest.first().is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            return false; // a longer name
        }
        let after = rest.iter().position(|b| *b != b' ' && *b != b'\t').map(|i| &rest[i..]).unwrap_or_default();
        match after {
            [b'=', b'=', ..] => false,
            [b'=', ..] | [b':', ..] => true,
            _ => false,
        }
    })
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
        // Only text naming the declaring call can hold one: the rest of the
        // body is not walked for it (most of a hook file is other code).
        let names_declare = |n: Node| self.file.text(n).contains(self.profile.declare_call);
        crate::extract::python::walk(body, |n| {
            if !names_declare(n) {
                return false;
            }
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
        walk_guarded(body, |n, runs, tests| {
            let guards = Guards { runs, tests };
            match n.kind() {
                "call" if self.is_declaring(n) => self.declared(n, &function, guards, sites),
                "assignment" => self.assigned(n, &function, guards, sites),
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
                // Statements hold the assignments; an expression is walked
                // only for a declaring call in it.
                "module" | "block" | "expression_statement" | "assignment" | "decorated_definition" => true,
                kind if kind.ends_with("_statement") || kind.ends_with("_clause") => true,
                _ => names_declare(n),
            }
        });
    }

    /// A call to the profile's declaring function (`declare_resolution(...)` or `x.declare_resolution(...)`).
    fn is_declaring(&self, call: Node) -> bool {
        call.child_by_field_name("function").is_some_and(|f| {
            let text = self.file.text(f);
            text.strip_suffix(self.profile.declare_call).is_some_and(|receiver| receiver.is_empty() || receiver.ends_with('.'))
        })
    }

    fn declared(&self, call: Node<'a>, function: &Function, guards: Guards<'_, 'a>, sites: &mut HashMap<String, Vec<Site>>) {
        for arg in call.child_by_field_name("arguments").map(named_children).unwrap_or_default() {
            match arg.kind() {
                "keyword_argument" => {
                    if let (Some(name), Some(value)) = (arg.child_by_field_name("name"), arg.child_by_field_name("value")) {
                        self.site(self.file.text(name), value, arg, function, guards, sites);
                    }
                }
                "dictionary_splat" => {
                    let Some(dict) = named_children(arg).into_iter().next().filter(|d| d.kind() == "dictionary") else { continue };
                    for pair in named_children(dict).into_iter().filter(|p| p.kind() == "pair") {
                        if let (Some(key), Some(value)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) {
                            if let Some(field) = self.file.string_value(key) {
                                self.site(&field, value, pair, function, guards, sites);
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
    fn assigned(&self, assignment: Node<'a>, function: &Function, guards: Guards<'_, 'a>, sites: &mut HashMap<String, Vec<Site>>) {
        let (Some(left), Some(right)) = (assignment.child_by_field_name("left"), assignment.child_by_field_name("right")) else {
            return;
        };
        match left.kind() {
            "attribute" => {
                let (Some(object), Some(attr)) = (left.child_by_field_name("object"), left.child_by_field_name("attribute")) else {
                    return;
                };
                if function.receiver.as_deref() == Some(self.file.text(object)) {
                    self.site(self.file.text(attr), right, assignment, function, guards, sites);
                }
            }
            "subscript" => {
                let (Some(object), Some(key)) = (left.child_by_field_name("value"), left.child_by_field_name("subscript")) else {
                    return;
                };
                if function.splatted.contains(self.file.text(object)) {
                    if let Some(field) = self.file.string_value(key) {
                        self.site(&field, right, assignment, function, guards, sites);
                    }
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn site(
        &self,
        field: &str,
        value: Node<'a>,
        at: Node<'a>,
        function: &Function,
        guards: Guards<'_, 'a>,
        sites: &mut HashMap<String, Vec<Site>>,
    ) {
        if !self.wanted.contains(field) {
            return;
        }
        let literal = if guards.only_none_tests(self.file, field) {
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

/// Where a node runs within its function (or the module): whenever the `if`
/// tests it sits under pass (`Under`: the innermost test, an index into
/// [`Tests`]), or only sometimes (an `elif`/`else` branch, a loop, a handler,
/// a conditional expression: never read as unconditional).
#[derive(Clone, Copy)]
enum Runs {
    Under(Option<usize>),
    Sometimes,
}

/// The `if` tests met in one walk: each test's condition and the test it is
/// itself under.
type Tests<'t> = Vec<(Node<'t>, Option<usize>)>;

/// What a site runs under, as [`walk_guarded`] saw it.
#[derive(Clone, Copy)]
struct Guards<'w, 't> {
    runs: Runs,
    tests: &'w Tests<'t>,
}

impl Guards<'_, '_> {
    /// Whether every test the site is under is the field's own `x.field is
    /// None`: the assignment runs whenever the field is unset.
    fn only_none_tests(&self, file: &PyFile, field: &str) -> bool {
        let Runs::Under(mut test) = self.runs else { return false };
        while let Some(i) = test {
            let (condition, up) = self.tests[i];
            if !is_none_test(file, condition, field) {
                return false;
            }
            test = up;
        }
        true
    }
}

/// A pre-order walk (children left to right; `visit` returns false to skip a
/// subtree) that hands each node where it runs. Decided top-down: asking a
/// node's ancestors costs tree-sitter a descent from the root per ancestor,
/// which over a 300-method class was most of reading its hooks.
fn walk_guarded<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>, Runs, &Tests<'t>) -> bool) {
    let mut tests: Tests<'t> = Vec::new();
    let mut stack = vec![(root, Runs::Under(None))];
    while let Some((node, runs)) = stack.pop() {
        if !visit(node, runs, &tests) {
            continue;
        }
        let kind = node.kind();
        let mut consequence_runs = Runs::Sometimes;
        if let (true, Runs::Under(up)) = (kind == "if_statement", runs) {
            if let Some(condition) = node.child_by_field_name("condition") {
                tests.push((condition, up));
                consequence_runs = Runs::Under(Some(tests.len() - 1));
            }
        }
        let consequence = if kind == "if_statement" { node.child_by_field_name("consequence").map(|c| c.id()) } else { None };
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            let child_runs = match kind {
                "function_definition" | "module" => Runs::Under(None),
                "if_statement" if consequence == Some(child.id()) => consequence_runs,
                "if_statement"
                | "elif_clause"
                | "else_clause"
                | "for_statement"
                | "while_statement"
                | "except_clause"
                | "match_statement"
                | "conditional_expression"
                | "lambda"
                | "boolean_operator" => Runs::Sometimes,
                _ => runs,
            };
            stack.push((child, child_runs));
        }
    }
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
    walk_guarded(file.root(), |n, runs, _| {
        if matches!(runs, Runs::Under(None)) && n.kind() == "call" {
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
