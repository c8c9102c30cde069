//! Environment reads outside the registry: `os.environ["X"]`, `os.getenv("X")`,
//! `get_bool_env_var("X")`, `"X" in os.environ`, `envs.X.get()`.
//!
//! Demand-driven: files are first filtered on their raw bytes for the wanted
//! names, and only matching files are parsed. A read whose only effect is a
//! message (`if os.getenv("X") is not None: logger.warning("X has been
//! removed ...")`) is a removal notice and keeps the message as evidence.

use std::collections::BTreeMap;

use aho_corasick::AhoCorasick;
use serde::{Deserialize, Serialize};
use tree_sitter::Node;

use super::literal::{known_value, KnownNames};
use super::syntax::{bind_arguments, callee, first_argument, is_environ, is_message_call, unparenthesized};
use super::EnvRegistry;
use crate::extract::python::{named_children, walk, PyFile};
use crate::extract::symbols::parse_source;
use crate::extract::Package;
use crate::surface::{EnvDeprecation, EnvDeprecationKind, EnvVar, Evidence, ExtractWarning, Known, PyValue};

/// How a variable is read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReadVia {
    /// `os.environ["X"]`
    Subscript,
    /// `os.environ.get("X", default)`
    EnvironGet,
    /// `os.getenv("X", default)`
    Getenv,
    /// `"X" in os.environ`
    Membership,
    /// An engine helper such as `get_bool_env_var("X", default)`.
    Helper(String),
    /// The typed registry: `envs.X.get()` / `envs.X.is_set()`.
    Registry,
}

/// One read of an environment variable somewhere in the package.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct EnvRead {
    pub name: String,
    pub via: ReadVia,
    /// The default the read site passes; `None` when it passes none.
    pub default: Option<Known<PyValue>>,
    /// Set when the read only logs (or raises) a message about the variable:
    /// the message text, as evidence of a removal notice.
    pub notice: Option<String>,
    pub evidence: Evidence,
}

/// A read recognised in the syntax tree, before its name is known to be literal.
pub(crate) struct RawRead<'t> {
    pub via: ReadVia,
    /// The name expression (`"X"`, `self.name`); `None` for registry reads.
    pub key: Option<Node<'t>>,
    /// Registry reads name the variable as an attribute: (instance, variable).
    pub registry_name: Option<(String, String)>,
    pub default: Option<Node<'t>>,
    /// The whole read expression.
    pub node: Node<'t>,
}

/// Recognise an environment read at `node` (a call, subscript or comparison).
pub(crate) fn raw_read<'t>(file: &PyFile, node: Node<'t>) -> Option<RawRead<'t>> {
    let read = |via, key, default| Some(RawRead { via, key, registry_name: None, default, node });
    match node.kind() {
        "call" => {
            let name = callee(file, node)?;
            let last = name.rsplit('.').next().unwrap_or(&name);
            let via = match name.as_str() {
                "os.environ.get" | "environ.get" => ReadVia::EnvironGet,
                "os.getenv" | "getenv" => ReadVia::Getenv,
                _ if last.starts_with("get_") && last.ends_with("_env_var") => ReadVia::Helper(last.to_string()),
                _ => return registry_read(node, &name),
            };
            // The name comes first; engine helpers may call it `name` when passed by keyword.
            let bound = bind_arguments(file, node, &["key".to_string(), "default".to_string()]);
            read(via, bound.get("key").or(bound.get("name")).copied(), bound.get("default").copied())
        }
        "subscript" => {
            let value = node.child_by_field_name("value")?;
            if !is_environ(file, value) || is_write_target(node) {
                return None;
            }
            read(ReadVia::Subscript, node.child_by_field_name("subscript"), None)
        }
        "comparison_operator" => match binary_comparison(file, node)? {
            (name, "in" | "not in", environ) if is_environ(file, environ) => read(ReadVia::Membership, Some(name), None),
            _ => None,
        },
        _ => None,
    }
}

/// `<instance>.X.get()` / `<instance>.X.is_set()`; whether `<instance>` is the
/// registry is decided by the caller, which knows the instance names.
fn registry_read<'t>(call: Node<'t>, name: &str) -> Option<RawRead<'t>> {
    let (receiver, method) = name.rsplit_once('.')?;
    let (instance, var) = receiver.rsplit_once('.')?;
    if !matches!(method, "get" | "is_set") {
        return None;
    }
    Some(RawRead {
        via: ReadVia::Registry,
        key: None,
        registry_name: Some((instance.rsplit('.').next().unwrap_or(instance).to_string(), var.to_string())),
        default: None,
        node: call,
    })
}

fn is_write_target(subscript: Node) -> bool {
    let Some(parent) = subscript.parent() else {
        return false;
    };
    match parent.kind() {
        "assignment" | "augmented_assignment" => parent.child_by_field_name("left").is_some_and(|l| l.id() == subscript.id()),
        "delete_statement" => true,
        _ => false,
    }
}

/// The reads of wanted names in one file of the package, parsed only when its
/// bytes hold one of the prefilter's needles.
pub(crate) fn reads_in_source(
    pkg: &Package,
    path: &str,
    prefilter: &AhoCorasick,
    instances: &[String],
    wanted: &(dyn Fn(&str) -> bool + Sync),
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<EnvRead> {
    // A file another extractor parsed (the parser's files, the hooks) is not
    // read or parsed again.
    if let Some(done) = crate::extract::parsed::in_memory(pkg.tree, path).filter(|p| p.file.is_some()) {
        if !done.file.as_ref().is_some_and(|f| prefilter.is_match(f.source.as_bytes())) {
            return Vec::new();
        }
        return match crate::extract::symbols::with_syntax_warning(done, warnings) {
            Some(file) => reads_in_file(&file, instances, wanted),
            None => Vec::new(),
        };
    }
    // A file over the size limit is named as skipped even when it would not have
    // matched: it is never inflated, so whether it mentions a name is unknown.
    let bytes = match crate::extract::parsed::read_bytes(pkg.tree, path) {
        Ok(bytes) => bytes,
        Err(refused) => {
            warnings.extend(refused.warnings);
            return Vec::new();
        }
    };
    if !prefilter.is_match(&bytes) {
        return Vec::new();
    }
    match parse_source(path, bytes, warnings) {
        Some(file) => reads_in_file(&file, instances, wanted),
        None => Vec::new(),
    }
}

/// The reads of wanted names in one parsed file; `instances` are the names the
/// registry object is bound to (`envs`).
pub(crate) fn reads_in_file(file: &PyFile, instances: &[String], wanted: &dyn Fn(&str) -> bool) -> Vec<EnvRead> {
    let no_names = KnownNames::new();
    let mut out = Vec::new();
    walk(file.root(), |node| {
        let Some(read) = raw_read(file, node) else {
            return true;
        };
        let name = match (&read.registry_name, read.key) {
            (Some((instance, name)), _) => instances.contains(instance).then(|| name.clone()),
            (None, Some(key)) => file.string_value(key).or_else(|| constant_name(file, key)),
            _ => None,
        };
        if let Some(name) = name.filter(|n| wanted(n)) {
            out.push(EnvRead {
                notice: removal_notice(file, read.node, &name),
                default: read.default.map(|d| known_value(file, d, &no_names)),
                via: read.via,
                evidence: file.evidence(read.node),
                name,
            });
        }
        true
    });
    out
}

/// The string a name expression stands for when it is a constant of the same
/// file: a module-level `NAME = "X"` (`os.environ.get(NAME)`), or a class
/// attribute `ATTR = "X"` read as `self.ATTR` inside that class or as
/// `Class.ATTR` (TensorRT-LLM's logger reads `os.environ.get(self.ENV_VARIABLE)`,
/// its class body saying `ENV_VARIABLE = "TLLM_LOG_LEVEL"`). A name bound more
/// than once at that level is not a constant: `None`.
fn constant_name(file: &PyFile, key: Node) -> Option<String> {
    match key.kind() {
        "identifier" => string_assigned(file, file.root(), file.text(key)),
        "attribute" => {
            let object = key.child_by_field_name("object")?;
            let attribute = file.text(key.child_by_field_name("attribute")?);
            let class = match file.text(object) {
                "self" | "cls" => {
                    let mut node = key.parent()?;
                    while node.kind() != "class_definition" {
                        node = node.parent()?;
                    }
                    node
                }
                name => {
                    crate::extract::consts::find_definition(&file.source, file.root(), name).filter(|d| d.kind() == "class_definition")?
                }
            };
            string_assigned(file, crate::extract::consts::class_body(class)?, attribute)
        }
        _ => None,
    }
}

/// The string literal `name` is assigned, when the block assigns it exactly
/// once, at its own level.
fn string_assigned(file: &PyFile, block: Node, name: &str) -> Option<String> {
    let mut values = named_children(block).into_iter().filter_map(|stmt| {
        let assign = named_children(stmt).into_iter().next().filter(|a| a.kind() == "assignment")?;
        let left = assign.child_by_field_name("left")?;
        (left.kind() == "identifier" && file.text(left) == name).then(|| assign.child_by_field_name("right"))
    });
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    file.string_value(value?)
}

/// The message of a notice read: the read is the whole test of an `if` with no
/// `else`, the test only asks whether the variable is set, and the body only
/// emits a message (log, warning, print or raise) that names the variable.
fn removal_notice(file: &PyFile, read: Node, name: &str) -> Option<String> {
    let mut test = read;
    // Whether the test holds when the variable is set: `"X" not in os.environ`,
    // `os.getenv("X") is None` and `not ...` hold when it is unset, and a
    // message under them ("X not set, using ...") is no removal notice.
    let mut when_set = !is_negated_membership(file, read);
    loop {
        let parent = test.parent()?;
        match parent.kind() {
            "parenthesized_expression" => test = parent,
            "not_operator" => {
                when_set = !when_set;
                test = parent;
            }
            "comparison_operator" => match none_comparison(file, parent) {
                Some(is_not) => {
                    when_set = when_set == is_not;
                    test = parent;
                }
                None => break,
            },
            _ => break,
        }
    }
    if !when_set {
        return None;
    }
    let if_stmt = test.parent()?;
    if if_stmt.kind() != "if_statement"
        || if_stmt.child_by_field_name("condition").map(unparenthesized).map(|c| c.id()) != Some(unparenthesized(test).id())
        || if_stmt.child_by_field_name("alternative").is_some()
    {
        return None;
    }
    let body = if_stmt.child_by_field_name("consequence")?;
    let mut message = None;
    for stmt in named_children(body) {
        let call = match stmt.kind() {
            "expression_statement" => named_children(stmt).first().copied(),
            "raise_statement" => named_children(stmt).first().copied(),
            "pass_statement" => continue,
            _ => return None,
        }?;
        if call.kind() != "call" || !(stmt.kind() == "raise_statement" || is_message_call(file, call)) {
            return None;
        }
        if message.is_none() {
            message = first_argument(call).map(|arg| file.string_value(arg).unwrap_or_else(|| file.text(arg).to_string()));
        }
    }
    message.filter(|m| m.contains(name))
}

/// `x is None` → `Some(false)`, `x is not None` → `Some(true)`, else `None`.
fn none_comparison(file: &PyFile, comparison: Node) -> Option<bool> {
    match binary_comparison(file, comparison)? {
        (_, "is", none) if none.kind() == "none" => Some(false),
        (_, "is not", none) if none.kind() == "none" => Some(true),
        _ => None,
    }
}

fn is_negated_membership(file: &PyFile, node: Node) -> bool {
    node.kind() == "comparison_operator" && binary_comparison(file, node).is_some_and(|(_, op, _)| op == "not in")
}

/// `left <op> right` with a single operator, spelled with single spaces (`not in`).
fn binary_comparison<'t>(file: &PyFile, node: Node<'t>) -> Option<(Node<'t>, &'static str, Node<'t>)> {
    let parts = named_children(node);
    let [left, right] = parts.as_slice() else {
        return None;
    };
    let between = &file.source[left.end_byte()..right.start_byte()];
    let words: Vec<&str> = between.split_whitespace().collect();
    let op = match words.as_slice() {
        ["in"] => "in",
        ["not", "in"] => "not in",
        ["is"] => "is",
        ["is", "not"] => "is not",
        _ => return None,
    };
    Some((*left, op, *right))
}

/// Variables the package reads that the registry does not declare. A variable
/// whose every read is a removal notice is marked as such.
pub(crate) fn unregistered_vars(registry: &EnvRegistry, reads: &[EnvRead]) -> Vec<EnvVar> {
    let mut by_name: BTreeMap<&str, Vec<&EnvRead>> = BTreeMap::new();
    for read in reads {
        if registry.var(&read.name).is_none() && read.via != ReadVia::Registry {
            by_name.entry(&read.name).or_default().push(read);
        }
    }
    by_name
        .into_iter()
        .map(|(name, reads)| {
            let notice = reads.iter().all(|r| r.notice.is_some());
            EnvVar {
                name: name.to_string(),
                kind: "read".to_string(),
                default: merged_default(&reads),
                deprecated: notice.then(|| EnvDeprecation {
                    kind: EnvDeprecationKind::Notice,
                    replacement: None,
                    transform: None,
                    message: reads[0].notice.clone(),
                }),
                evidence: reads[0].evidence.clone(),
            }
        })
        .collect()
}

/// What a read yields when the variable is unset and the site passes no default.
fn implicit_default(read: &EnvRead) -> Known<PyValue> {
    match &read.via {
        ReadVia::EnvironGet | ReadVia::Getenv | ReadVia::Membership => Known::Value(PyValue::Null),
        // The helper's own default lives in its body; not followed here.
        ReadVia::Helper(helper) => Known::dynamic(format!("{helper}({:?})", read.name)),
        // Unset raises KeyError: the variable is required at that site.
        ReadVia::Subscript => Known::dynamic(format!("os.environ[{:?}]", read.name)),
        ReadVia::Registry => Known::dynamic(format!("envs.{}", read.name)),
    }
}

/// One default for all read sites: the common one, `None` (unset) when no site
/// passes one, else the distinct source texts as dynamic.
fn merged_default(reads: &[&EnvRead]) -> Known<PyValue> {
    let mut distinct: Vec<Known<PyValue>> = Vec::new();
    for read in reads {
        let d = read.default.clone().unwrap_or_else(|| implicit_default(read));
        if !distinct.contains(&d) {
            distinct.push(d);
        }
    }
    match distinct.len() {
        1 => distinct.remove(0),
        _ => Known::dynamic(
            distinct
                .iter()
                .map(|d| match d {
                    Known::Value(v) => v.to_string(),
                    Known::Dynamic { dynamic } => dynamic.clone(),
                })
                .collect::<Vec<_>>()
                .join(" | "),
        ),
    }
}
