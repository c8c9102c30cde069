//! Deprecated variables declared next to the registry, in the styles SGLang
//! has used:
//!
//! - a table of deprecation objects: `{"OLD": _DeprecatedEnv(replacement="NEW",
//!   transform=_invert_bool, note="...")}`;
//! - calls to helper functions: `_print_deprecated_env("OLD", "NEW")`,
//!   `_warn_deprecated_env_to_cli_flag("OLD", "Use --flag instead.")`;
//! - loops over a literal dict: `for old, new in {...}.items(): if old in
//!   os.environ: ... os.environ[new] = str(float(v) / 1000.0)`.
//!
//! No helper is known by name. A helper's parameters get their role from what
//! its body does with them: tested with `in os.environ` → the old name;
//! assigned as `os.environ[p] = ...` → the replacement; called → the value
//! transform; put into a warning → the message.

use std::collections::BTreeMap;

use tree_sitter::Node;

use super::reads::{raw_read, ReadVia};
use super::registry::attributes_from_params;
use super::syntax::{bind_arguments, callee, is_environ, is_message_call, param_names, self_attribute, FileIndex};
use crate::extract::python::{named_children, walk, PyFile};
use crate::surface::Evidence;

/// One deprecated variable as the engine declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeprecationEntry {
    pub name: String,
    pub replacement: Option<String>,
    /// Name of the value transform (`_invert_bool`), or for an inline
    /// conversion its source text (`str(float(ms_val) / 1000.0)`).
    pub transform: Option<String>,
    /// The note or suggestion shown to the user.
    pub message: Option<String>,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    OldName,
    Replacement,
    Transform,
    Message,
}

/// What a deprecation routine (function, class or loop body) does with its inputs.
struct Routine {
    params: Vec<String>,
    roles: BTreeMap<String, Role>,
    inline_transform: Option<String>,
    warns: bool,
}

impl Routine {
    fn param(&self, role: Role) -> Option<&String> {
        self.params.iter().find(|p| self.roles.get(*p) == Some(&role))
    }
}

/// Every deprecation the file declares, in source order, one per name.
pub(crate) fn deprecations(file: &PyFile, index: &FileIndex) -> Vec<DeprecationEntry> {
    let mut out = Vec::new();
    let functions: BTreeMap<&str, Routine> = index
        .functions
        .iter()
        .map(|(name, def)| {
            let params = param_names(file, *def, false);
            let holder = |n: Node| (n.kind() == "identifier").then(|| file.text(n).to_string()).filter(|t| params.contains(t));
            (name.as_str(), analyze(file, &[*def], params.clone(), &holder, true))
        })
        .filter(|(_, r)| r.warns && r.param(Role::OldName).is_some())
        .collect();
    let classes: BTreeMap<&str, Routine> = index
        .classes
        .keys()
        .filter_map(|name| {
            let init = index.method(file, name, "__init__")?;
            let params = param_names(file, init, true);
            let attrs = attributes_from_params(file, init);
            let param_of_attr: BTreeMap<String, String> = attrs.into_iter().map(|(p, a)| (a, p)).collect();
            let holder = |n: Node| self_attribute(file, n).and_then(|a| param_of_attr.get(&a).cloned());
            let routine = analyze(file, &index.methods(name), params, &holder, false);
            let declares = routine.param(Role::Replacement).is_some() || routine.param(Role::Message).is_some();
            (routine.warns && declares).then_some((name.as_str(), routine))
        })
        .collect();

    walk(file.root(), |node| {
        match node.kind() {
            "call" => {
                if let Some(routine) = callee(file, node).and_then(|c| functions.get(c.as_str())) {
                    out.extend(entry_from_call(file, node, None, routine));
                }
            }
            "dictionary" => {
                for pair in named_children(node) {
                    let (Some(key), Some(value)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) else {
                        continue;
                    };
                    if value.kind() != "call" {
                        continue;
                    }
                    if let Some(routine) = callee(file, value).and_then(|c| classes.get(c.as_str())) {
                        out.extend(entry_from_call(file, value, Some((key, pair)), routine));
                    }
                }
            }
            "for_statement" => out.extend(entries_from_loop(file, node)),
            _ => {}
        }
        true
    });
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|e: &DeprecationEntry| seen.insert(e.name.clone()));
    out
}

/// A table entry (`"OLD": Cls(...)`, key given) or a helper call (`f("OLD", ...)`).
fn entry_from_call(file: &PyFile, call: Node, keyed: Option<(Node, Node)>, routine: &Routine) -> Option<DeprecationEntry> {
    let args = bind_arguments(file, call, &routine.params);
    let arg = |role| routine.param(role).and_then(|p| args.get(p)).copied();
    let (name, at) = match keyed {
        Some((key, pair)) => (file.string_value(key)?, pair),
        None => (file.string_value(arg(Role::OldName)?)?, call),
    };
    let replacement = arg(Role::Replacement).and_then(|n| file.string_value(n));
    let transform = match arg(Role::Transform) {
        Some(n) if n.kind() != "none" => Some(file.text(n).to_string()),
        _ => replacement.as_ref().and(routine.inline_transform.clone()),
    };
    Some(DeprecationEntry {
        name,
        transform,
        replacement,
        message: arg(Role::Message).and_then(|n| file.string_value(n)),
        evidence: file.evidence(at),
    })
}

/// `for old, new in TABLE.items():` (or `for old in NAMES:`) over a literal table.
fn entries_from_loop(file: &PyFile, for_stmt: Node) -> Vec<DeprecationEntry> {
    let (Some(left), Some(right), Some(body)) =
        (for_stmt.child_by_field_name("left"), for_stmt.child_by_field_name("right"), for_stmt.child_by_field_name("body"))
    else {
        return Vec::new();
    };
    let vars: Vec<String> = match left.kind() {
        "identifier" => vec![file.text(left).to_string()],
        "pattern_list" | "tuple_pattern" => {
            named_children(left).into_iter().filter(|n| n.kind() == "identifier").map(|n| file.text(n).to_string()).collect()
        }
        _ => return Vec::new(),
    };
    let table_name = match (vars.len(), right.kind()) {
        (2, "call") => match callee(file, right).as_deref().and_then(|c| c.strip_suffix(".items")) {
            Some(table) => table.to_string(),
            None => return Vec::new(),
        },
        (1, "identifier") => file.text(right).to_string(),
        _ => return Vec::new(),
    };
    let Some(table) = literal_table(file, for_stmt, &table_name) else {
        return Vec::new();
    };
    let holder = |n: Node| (n.kind() == "identifier").then(|| file.text(n).to_string()).filter(|t| vars.contains(t));
    let routine = analyze(file, &[body], vars.clone(), &holder, true);
    if !routine.warns || routine.roles.get(&vars[0]) != Some(&Role::OldName) {
        return Vec::new();
    }
    let value_role = vars.get(1).and_then(|v| routine.roles.get(v)).copied();
    table
        .into_iter()
        .filter_map(|(key, value, at)| {
            let name = file.string_value(key)?;
            let value = value.and_then(|v| file.string_value(v));
            let (replacement, message) = match value_role {
                Some(Role::Replacement) => (value, None),
                Some(Role::Message) => (None, value),
                _ => (None, None),
            };
            Some(DeprecationEntry {
                name,
                transform: replacement.as_ref().and(routine.inline_transform.clone()),
                replacement,
                message,
                evidence: file.evidence(at),
            })
        })
        .collect()
}

/// Entries `(key, value, node)` of a dict or list literal assigned to `name` in
/// the scope enclosing `at` (its function, else the module).
fn literal_table<'t>(file: &'t PyFile, at: Node<'t>, name: &str) -> Option<Vec<(Node<'t>, Option<Node<'t>>, Node<'t>)>> {
    let mut scope = at;
    while let Some(parent) = scope.parent() {
        scope = parent;
        if scope.kind() == "function_definition" {
            break;
        }
    }
    let mut found = None;
    walk(scope, |n| {
        if found.is_none() && n.kind() == "assignment" {
            let left = n.child_by_field_name("left");
            if left.is_some_and(|l| file.text(l) == name) {
                found = n.child_by_field_name("right");
            }
        }
        found.is_none()
    });
    let table = found?;
    match table.kind() {
        "dictionary" => Some(
            named_children(table)
                .into_iter()
                .filter_map(|pair| Some((pair.child_by_field_name("key")?, pair.child_by_field_name("value"), pair)))
                .collect(),
        ),
        "list" | "tuple" | "set" => Some(named_children(table).into_iter().map(|item| (item, None, item)).collect()),
        _ => None,
    }
}

/// Read the roles of `params` off the bodies. `holder` maps an expression to the
/// parameter it stands for (`old_name`, or `self.replacement` in a class).
fn analyze(file: &PyFile, bodies: &[Node], params: Vec<String>, holder: &dyn Fn(Node) -> Option<String>, inline: bool) -> Routine {
    let mut roles: BTreeMap<String, Role> = BTreeMap::new();
    let mut assign = |param: String, role: Role| {
        let slot = roles.entry(param).or_insert(role);
        *slot = (*slot).min(role);
    };
    let mut warns = false;
    let mut forwarded_values = Vec::new();
    // Locals a message is built in (`message += f" {self.note}"`) carry the
    // parameters they mention into the warning call.
    let mut carried: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for body in bodies {
        walk(*body, |n| {
            if matches!(n.kind(), "assignment" | "augmented_assignment") {
                if let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) {
                    if left.kind() == "identifier" {
                        let entry = carried.entry(file.text(left).to_string()).or_default();
                        walk(right, |r| {
                            entry.extend(holder(r));
                            true
                        });
                    }
                }
            }
            true
        });
    }
    for body in bodies {
        walk(*body, |n| {
            if let Some(read) = raw_read(file, n) {
                if read.via == ReadVia::Membership {
                    if let Some(p) = read.key.and_then(holder) {
                        assign(p, Role::OldName);
                    }
                }
            }
            match n.kind() {
                "assignment" => {
                    let left = n.child_by_field_name("left");
                    if let Some(index) = left.filter(|l| l.kind() == "subscript").and_then(environ_index(file)) {
                        if let Some(p) = holder(index) {
                            assign(p, Role::Replacement);
                            forwarded_values.extend(n.child_by_field_name("right"));
                        }
                    }
                }
                "call" => {
                    if let Some(p) = n.child_by_field_name("function").and_then(holder) {
                        assign(p, Role::Transform);
                    }
                    if is_message_call(file, n) {
                        warns = true;
                        if let Some(args) = n.child_by_field_name("arguments") {
                            walk(args, |a| {
                                if let Some(p) = holder(a) {
                                    assign(p, Role::Message);
                                } else if a.kind() == "identifier" {
                                    for p in carried.get(file.text(a)).into_iter().flatten() {
                                        assign(p.clone(), Role::Message);
                                    }
                                }
                                true
                            });
                        }
                    }
                }
                _ => {}
            }
            true
        });
    }
    let mut routine = Routine { params, roles, inline_transform: None, warns };
    if inline {
        let old = routine.param(Role::OldName).cloned();
        routine.inline_transform = forwarded_values
            .into_iter()
            .find(|v| !is_plain_forward(file, bodies, *v, old.as_deref(), holder))
            .map(|v| file.text(v).to_string());
    }
    routine
}

/// Whether `value` is the old variable's value unchanged: `os.environ[old]`,
/// or a local assigned from it.
fn is_plain_forward(file: &PyFile, bodies: &[Node], value: Node, old: Option<&str>, holder: &dyn Fn(Node) -> Option<String>) -> bool {
    let reads_old = |n: Node| raw_read(file, n).is_some_and(|r| r.via != ReadVia::Membership && r.key.and_then(holder).as_deref() == old);
    if reads_old(value) {
        return true;
    }
    if value.kind() != "identifier" {
        return false;
    }
    let local = file.text(value);
    let mut from_old = false;
    for body in bodies {
        walk(*body, |n| {
            if n.kind() == "assignment"
                && n.child_by_field_name("left").is_some_and(|l| file.text(l) == local)
                && n.child_by_field_name("right").is_some_and(reads_old)
            {
                from_old = true;
            }
            true
        });
    }
    from_old
}

/// `os.environ[X]` → `X`.
fn environ_index<'f>(file: &'f PyFile) -> impl Fn(Node) -> Option<Node> + 'f {
    move |subscript: Node| {
        let value = subscript.child_by_field_name("value")?;
        is_environ(file, value).then(|| subscript.child_by_field_name("subscript")).flatten()
    }
}

/// Prefix rewrites such as `SGL_` → `SGLANG_`: a `key.replace("A", "B", ...)`
/// guarded by `key.startswith("A")` on the same receiver.
pub(crate) fn prefix_rewrites(file: &PyFile) -> Vec<(String, String)> {
    let mut guards = Vec::new();
    let mut replaces = Vec::new();
    walk(file.root(), |n| {
        if n.kind() == "call" {
            if let Some(name) = callee(file, n) {
                let args: Vec<Option<String>> = n
                    .child_by_field_name("arguments")
                    .map(|a| named_children(a).into_iter().map(|x| file.string_value(x)).collect())
                    .unwrap_or_default();
                if let Some(receiver) = name.strip_suffix(".startswith") {
                    if let Some(Some(prefix)) = args.first() {
                        guards.push((receiver.to_string(), prefix.clone()));
                    }
                } else if let Some(receiver) = name.strip_suffix(".replace") {
                    if let (Some(Some(from)), Some(Some(to))) = (args.first(), args.get(1)) {
                        replaces.push((receiver.to_string(), from.clone(), to.clone(), in_environ_loop(file, n)));
                    }
                }
            }
        }
        true
    });
    let mut out: Vec<(String, String)> = replaces
        .into_iter()
        .filter(|(receiver, from, _, _)| guards.iter().any(|(r, p)| r == receiver && p == from))
        .filter(|(_, _, _, in_environ_loop)| *in_environ_loop)
        .map(|(receiver, from, to, _)| (receiver, from, to))
        .map(|(_, from, to)| (from, to))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether `node` sits in a loop over the environment (`for k, v in os.environ.items()`).
fn in_environ_loop(file: &PyFile, node: Node) -> bool {
    let mut at = node;
    while let Some(parent) = at.parent() {
        at = parent;
        if at.kind() == "for_statement" {
            let mut over_environ = false;
            if let Some(right) = at.child_by_field_name("right") {
                walk(right, |n| {
                    over_environ |= is_environ(file, n);
                    !over_environ
                });
            }
            if over_environ {
                return true;
            }
        }
    }
    false
}
