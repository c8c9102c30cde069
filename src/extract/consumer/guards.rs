//! What protects a use: the `except` handlers of an enclosing `try`, and the
//! `hasattr` facts a condition establishes.

use tree_sitter::Node;

use crate::extract::python::{named_children, PyFile};

/// Exception classes whose handler survives a failed import (a missing module
/// raises `ModuleNotFoundError`, a missing name plain `ImportError`).
const IMPORT_ERRORS: [&str; 4] = ["ImportError", "ModuleNotFoundError", "Exception", "BaseException"];
/// Exception classes whose handler survives a missing attribute.
const ATTRIBUTE_ERRORS: [&str; 3] = ["AttributeError", "Exception", "BaseException"];

/// The kind of failure a use can raise when the engine changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    Import,
    Attribute,
}

impl Failure {
    fn caught_by(self, class: &str) -> bool {
        match self {
            Failure::Import => IMPORT_ERRORS.contains(&class),
            Failure::Attribute => ATTRIBUTE_ERRORS.contains(&class),
        }
    }
}

/// One `except` clause of a `try` statement.
#[derive(Debug, Clone)]
pub(super) struct Handler {
    /// Exception classes as written (last dotted segment); empty for a bare `except:`.
    pub catches: Vec<String>,
    /// Whether the handler body re-raises unconditionally (`raise`, `raise X from e`
    /// as one of its own statements): such a handler logs, it does not recover.
    pub reraises: bool,
    /// What runs instead of the failed code: the handler's first statement, past
    /// any leading re-raise filters such as `if exc.name != "...": raise`.
    pub fallback: String,
}

impl Handler {
    /// Whether Python would pick this handler for the failure (any class in the
    /// clause matches; a bare `except:` matches everything).
    fn matches(&self, failure: Failure) -> bool {
        self.catches.is_empty() || self.catches.iter().any(|c| failure.caught_by(c))
    }
}

/// Every `except` clause of a `try_statement`, in order.
pub(super) fn handlers(file: &PyFile, try_node: Node) -> Vec<Handler> {
    named_children(try_node)
        .into_iter()
        .filter(|n| n.kind() == "except_clause")
        .map(|clause| {
            let catches = clause.child_by_field_name("value").map(|v| exception_names(file, v)).unwrap_or_default();
            let body = named_children(clause).into_iter().find(|n| n.kind() == "block");
            let statements = body.map(named_children).unwrap_or_default();
            let reraises = statements.iter().any(|s| s.kind() == "raise_statement");
            let fallback = statements
                .iter()
                .find(|s| !is_reraise_filter(s))
                .or(statements.first())
                .map(|s| statement_text(file, *s))
                .unwrap_or_default();
            Handler { catches, reraises, fallback }
        })
        .collect()
}

/// The handler that recovers from `failure`: the first clause Python would pick,
/// provided it does not re-raise. `None` when the failure escapes this `try`.
pub(super) fn recovering_handler(handlers: &[Handler], failure: Failure) -> Option<&Handler> {
    handlers.iter().find(|h| h.matches(failure)).filter(|h| !h.reraises)
}

fn exception_names(file: &PyFile, value: Node) -> Vec<String> {
    match value.kind() {
        // `except E as e`: the class is the pattern's first child.
        "as_pattern" => named_children(value).first().map(|n| exception_names(file, *n)).unwrap_or_default(),
        "tuple" | "parenthesized_expression" => named_children(value).into_iter().flat_map(|n| exception_names(file, n)).collect(),
        "attribute" => value.child_by_field_name("attribute").map(|a| vec![file.text(a).to_string()]).unwrap_or_default(),
        _ => vec![file.text(value).to_string()],
    }
}

/// `if <condition>: raise` with no other branch: a handler's filter that lets
/// only some failures through (`if exc.name != "x": raise`).
fn is_reraise_filter(statement: &Node) -> bool {
    if statement.kind() != "if_statement" || statement.child_by_field_name("alternative").is_some() {
        return false;
    }
    statement
        .child_by_field_name("consequence")
        .map(named_children)
        .is_some_and(|body| body.len() == 1 && body[0].kind() == "raise_statement")
}

/// A statement's text on one line (each source line trimmed, joined by a space).
pub(super) fn statement_text(file: &PyFile, node: Node) -> String {
    file.text(node).lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Attribute names `hasattr(<receiver>, "name")` proves present when `condition`
/// evaluates to `truth`. `is_receiver` says which receivers count.
pub(super) fn hasattr_facts(file: &PyFile, condition: Node, truth: bool, is_receiver: &dyn Fn(Node) -> bool) -> Vec<String> {
    match condition.kind() {
        "parenthesized_expression" => {
            let inner = named_children(condition);
            if inner.len() == 1 {
                hasattr_facts(file, inner[0], truth, is_receiver)
            } else {
                Vec::new()
            }
        }
        "not_operator" => {
            condition.child_by_field_name("argument").map(|a| hasattr_facts(file, a, !truth, is_receiver)).unwrap_or_default()
        }
        "boolean_operator" => {
            let operator = condition.child_by_field_name("operator").map(|o| o.kind());
            // Both operands are known only when `and` is true or `or` is false.
            let both_known = matches!((operator, truth), (Some("and"), true) | (Some("or"), false));
            if !both_known {
                return Vec::new();
            }
            ["left", "right"]
                .into_iter()
                .filter_map(|f| condition.child_by_field_name(f))
                .flat_map(|side| hasattr_facts(file, side, truth, is_receiver))
                .collect()
        }
        "call" if truth => hasattr_call(file, condition, is_receiver).map(|name| vec![name]).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The attribute name of `hasattr(<receiver>, "literal")`.
fn hasattr_call(file: &PyFile, call: Node, is_receiver: &dyn Fn(Node) -> bool) -> Option<String> {
    let function = call.child_by_field_name("function")?;
    if function.kind() != "identifier" || file.text(function) != "hasattr" {
        return None;
    }
    let args = named_children(call.child_by_field_name("arguments")?);
    if args.len() != 2 || !is_receiver(args[0]) {
        return None;
    }
    file.string_value(args[1])
}

/// Whether a block always leaves quietly before its end (`return`, `continue`,
/// `break` as its last statement): an `if` with such a body guards what follows
/// it. Ending in `raise` does not count: the worker fails either way.
pub(super) fn always_leaves_quietly(block: Node) -> bool {
    named_children(block).last().is_some_and(|s| matches!(s.kind(), "return_statement" | "continue_statement" | "break_statement"))
}

/// Whether a block ends in `raise`: as the fallback branch of a `hasattr` test,
/// it turns a missing attribute into an error, so the test guards nothing.
pub(super) fn ends_in_raise(block: Node) -> bool {
    named_children(block).last().is_some_and(|s| s.kind() == "raise_statement")
}
