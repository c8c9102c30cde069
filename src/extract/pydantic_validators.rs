//! A pydantic model's `@field_validator`s, read as the guards that open their
//! bodies: TRT-LLM checks ranges this way (`if not 0 <= v <= 1: raise
//! ValueError(...)` on `kv_cache_config.free_gpu_memory_fraction`), and a value
//! the guard rejects stops the server at start-up, as a wrong type does.
//!
//! Only validators that run on the parsed value are read (mode `after`, the
//! default; `before`/`wrap`/`plain` see or replace the raw input). A guard is
//! an `if` without `elif`/`else` whose body is one `raise` (rejects) or one
//! `return <the value>` (accepts), and whose test uses only the value,
//! numbers, `None`, comparisons, `not`, `and`, `or`. Reading stops at the
//! first statement of another shape: what follows is not claimed.
//! Validators of a base apply to the subclass's fields; one of the same name
//! in the subclass replaces it, as Python's attribute lookup does.

use std::collections::HashMap;

use tree_sitter::Node;

use super::consts::{class_body, ClassRef, ConstEval};
use super::pydantic_classes::{bases, class_node, locate, value_parameter, Base, MAX_BASES};
use super::python::{named_children, PyFile};
use crate::surface::{Comparison, FieldCheck, Operand, ValueGuard, ValueTest};

/// How deep a test nests before it is not read.
const MAX_TEST_DEPTH: usize = 16;

/// The validators of `class` and its bases, by the field names each names,
/// in definition order (bases first).
pub(super) fn field_checks(ev: &ConstEval, class: &ClassRef) -> HashMap<String, Vec<FieldCheck>> {
    let mut by_name: Vec<(Vec<String>, FieldCheck)> = Vec::new();
    collect(ev, class, 0, &mut by_name);
    let mut out: HashMap<String, Vec<FieldCheck>> = HashMap::new();
    for (fields, check) in by_name {
        for field in fields {
            out.entry(field).or_default().push(check.clone());
        }
    }
    out
}

fn collect(ev: &ConstEval, class: &ClassRef, depth: usize, out: &mut Vec<(Vec<String>, FieldCheck)>) {
    if depth > MAX_BASES {
        return;
    }
    let Some((file, start)) = locate(ev, class) else { return };
    let Some(node) = class_node(&file, start) else { return };
    for base in bases(ev, &file, &class.module, node) {
        if let Base::Engine(base) = base {
            collect(ev, &base, depth + 1, out);
        }
    }
    let Some(body) = class_body(node) else { return };
    for stmt in named_children(body).into_iter().filter(|s| s.kind() == "decorated_definition") {
        let Some(def) = stmt.child_by_field_name("definition").filter(|d| d.kind() == "function_definition") else { continue };
        let Some(name) = def.child_by_field_name("name").map(|n| file.text(n).to_string()) else { continue };
        // A method of the same name defined again replaces the base's.
        out.retain(|(_, c)| c.function != name);
        let Some(fields) = named_children(stmt).into_iter().filter(|d| d.kind() == "decorator").find_map(|d| after_fields(&file, d)) else {
            continue;
        };
        if let Some(check) = read_check(&file, def, &name) {
            out.push((fields, check));
        }
    }
}

/// `@field_validator("a", "b")` (mode `after`): the fields it names.
fn after_fields(file: &PyFile, decorator: Node) -> Option<Vec<String>> {
    let call = named_children(decorator).into_iter().find(|n| n.kind() == "call")?;
    let callee = call.child_by_field_name("function").map(|f| file.text(f))?;
    (callee.rsplit('.').next() == Some("field_validator")).then_some(())?;
    let mut fields = Vec::new();
    for arg in call.child_by_field_name("arguments").map(named_children).unwrap_or_default() {
        if arg.kind() == "keyword_argument" {
            let is_mode = arg.child_by_field_name("name").is_some_and(|n| file.text(n) == "mode");
            let mode = arg.child_by_field_name("value").and_then(|v| file.string_value(v));
            if is_mode && mode.as_deref() != Some("after") {
                return None;
            }
            continue;
        }
        // A name not written as a string (`*FIELDS`) leaves the list unknown.
        fields.push(file.string_value(arg)?);
    }
    (!fields.is_empty()).then_some(fields)
}

/// The guards opening the body of validator `def`.
fn read_check(file: &PyFile, def: Node, name: &str) -> Option<FieldCheck> {
    // `def check(cls, v, info)`.
    let value = value_parameter(file, def)?;
    let body = def.child_by_field_name("body")?;
    let mut guards = Vec::new();
    let mut returns_value = false;
    for (i, stmt) in named_children(body).into_iter().filter(|s| s.kind() != "comment").enumerate() {
        // The docstring.
        if i == 0 && stmt.kind() == "expression_statement" && named_children(stmt).first().is_some_and(|n| n.kind() == "string") {
            continue;
        }
        if stmt.kind() == "return_statement" {
            returns_value = returned(file, stmt) == Some(value);
            break;
        }
        match guard(file, stmt, value) {
            Some(g) => guards.push(g),
            None => break,
        }
    }
    (!guards.is_empty()).then(|| FieldCheck { function: name.to_string(), guards, returns_value, evidence: file.evidence(def) })
}

/// The name a `return` statement returns, when it returns a plain name.
fn returned<'f>(file: &'f PyFile, stmt: Node) -> Option<&'f str> {
    let expr = named_children(stmt).into_iter().next()?;
    (expr.kind() == "identifier").then(|| file.text(expr))
}

/// `if <test>: raise ...` / `if <test>: return v`, without `elif`/`else`.
fn guard(file: &PyFile, stmt: Node, value: &str) -> Option<ValueGuard> {
    (stmt.kind() == "if_statement" && stmt.child_by_field_name("alternative").is_none()).then_some(())?;
    let condition = stmt.child_by_field_name("condition")?;
    let body: Vec<Node> =
        stmt.child_by_field_name("consequence").map(named_children)?.into_iter().filter(|n| n.kind() != "comment").collect();
    let [only] = body.as_slice() else { return None };
    let (rejects, message) = match only.kind() {
        "raise_statement" => (true, raised_message(file, *only)),
        "return_statement" if returned(file, *only) == Some(value) => (false, None),
        _ => return None,
    };
    Some(ValueGuard {
        test: test(file, condition, value, 0)?,
        rejects,
        text: file.text(condition).to_string(),
        message,
        evidence: file.evidence(stmt),
    })
}

/// `raise ValueError("text")`: the text, when it is a plain string.
fn raised_message(file: &PyFile, raise: Node) -> Option<String> {
    let call = named_children(raise).into_iter().next().filter(|n| n.kind() == "call")?;
    let first = call.child_by_field_name("arguments").map(named_children)?.into_iter().next()?;
    // Adjacent literals (`"a " "b"`) are one string; an f-string is no plain text.
    let text = file.string_value(first)?;
    (!file.text(first).starts_with(['f', 'F'])).then_some(text)
}

fn test(file: &PyFile, node: Node, value: &str, depth: usize) -> Option<ValueTest> {
    if depth > MAX_TEST_DEPTH {
        return None;
    }
    match node.kind() {
        "parenthesized_expression" => test(file, named_children(node).into_iter().next()?, value, depth + 1),
        "not_operator" => Some(ValueTest::Not { test: Box::new(test(file, node.child_by_field_name("argument")?, value, depth + 1)?) }),
        "boolean_operator" => {
            let left = test(file, node.child_by_field_name("left")?, value, depth + 1)?;
            let right = test(file, node.child_by_field_name("right")?, value, depth + 1)?;
            match file.text(node.child_by_field_name("operator")?) {
                "and" => Some(ValueTest::All { tests: vec![left, right] }),
                "or" => Some(ValueTest::Any { tests: vec![left, right] }),
                _ => None,
            }
        }
        "comparison_operator" => comparison(file, node, value),
        _ => None,
    }
}

/// `a < b`, `0 <= v <= 1` (each pair, all must hold), `v is None`, `v is not None`.
fn comparison(file: &PyFile, node: Node, value: &str) -> Option<ValueTest> {
    let mut operands = Vec::new();
    let mut operators = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.is_named() {
            operands.push(child);
        } else {
            // `is not` is two tokens.
            match (operators.last_mut(), file.text(child)) {
                (Some(last), "not") if *last == "is" => *last = "is not",
                (_, op) => operators.push(op),
            }
        }
    }
    if operands.len() != operators.len() + 1 {
        return None;
    }
    let mut tests = Vec::new();
    for (i, op) in operators.iter().enumerate() {
        let (a, b) = (operands[i], operands[i + 1]);
        let t = match *op {
            "is" | "is not" => {
                let is_value_none = (file.text(a) == value && b.kind() == "none") || (file.text(b) == value && a.kind() == "none");
                is_value_none.then_some(())?;
                if *op == "is" {
                    ValueTest::IsNone
                } else {
                    ValueTest::Not { test: Box::new(ValueTest::IsNone) }
                }
            }
            _ => {
                let cmp = match *op {
                    "<" => Comparison::Lt,
                    "<=" => Comparison::Le,
                    ">" => Comparison::Gt,
                    ">=" => Comparison::Ge,
                    "==" => Comparison::Eq,
                    "!=" => Comparison::Ne,
                    _ => return None,
                };
                ValueTest::Compare { left: operand(file, a, value)?, cmp, right: operand(file, b, value)? }
            }
        };
        tests.push(t);
    }
    match tests.len() {
        1 => tests.pop(),
        _ => Some(ValueTest::All { tests }),
    }
}

fn operand(file: &PyFile, node: Node, value: &str) -> Option<Operand> {
    match node.kind() {
        "identifier" if file.text(node) == value => Some(Operand::Value),
        "integer" | "float" => number(file.text(node)).map(Operand::Number),
        "unary_operator" => {
            let text: String = file.text(node).chars().filter(|c| !c.is_whitespace()).collect();
            number(&text).map(Operand::Number)
        }
        _ => None,
    }
}

/// A Python numeric literal (`1_000`, `1e-3`, `-2`); hex and the like are not read.
fn number(text: &str) -> Option<f64> {
    text.replace('_', "").parse::<f64>().ok().filter(|n| n.is_finite())
}
