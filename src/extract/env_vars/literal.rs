//! A minimal reader of Python literal expressions, enough for env defaults:
//! numbers (with small integer arithmetic such as `384 * 1024 * 1024`),
//! strings, booleans, `None`, tuples, lists, dicts and names the caller knows
//! (`ToolStrictLevel.OFF` from the same file). Anything else is not a literal
//! and the caller records its source text as `Known::dynamic`.
//!
//! Deliberately small: cross-module constant folding belongs to `consts.rs`.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};
use tree_sitter::Node;

use crate::extract::python::{named_children, PyFile};
use crate::surface::{Known, PyValue};

/// Names with a known literal value (`GateGemvMode.PAIR` → 1), keyed by source text.
pub(crate) type KnownNames = BTreeMap<String, PyValue>;

/// The literal value of `node`, or its source text as dynamic.
pub(crate) fn known_value(file: &PyFile, node: Node, names: &KnownNames) -> Known<PyValue> {
    match literal(file, node, names) {
        Some(v) => Known::Value(v),
        None => Known::dynamic(file.text(node)),
    }
}

/// The value of a literal expression, `None` when it is not one.
pub(crate) fn literal(file: &PyFile, node: Node, names: &KnownNames) -> Option<PyValue> {
    match node.kind() {
        "integer" => parse_int(file.text(node)).map(Value::from),
        "float" => parse_float(file.text(node)).and_then(float_value),
        "string" | "concatenated_string" => file.string_value(node).map(Value::String),
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "none" => Some(Value::Null),
        "parenthesized_expression" => {
            let inner = named_children(node);
            (inner.len() == 1).then(|| literal(file, inner[0], names)).flatten()
        }
        "tuple" | "list" => {
            named_children(node).into_iter().map(|item| literal(file, item, names)).collect::<Option<Vec<_>>>().map(Value::Array)
        }
        "dictionary" => {
            let mut map = Map::new();
            for pair in named_children(node) {
                let key = pair.child_by_field_name("key")?;
                let value = pair.child_by_field_name("value")?;
                map.insert(file.string_value(key)?, literal(file, value, names)?);
            }
            Some(Value::Object(map))
        }
        "unary_operator" => {
            let operand = literal(file, node.child_by_field_name("argument")?, names)?;
            let op = file.text(node.child_by_field_name("operator")?);
            match (op, operand) {
                ("+", v @ Value::Number(_)) => Some(v),
                ("-", Value::Number(n)) => match n.as_i64() {
                    Some(i) => i.checked_neg().map(Value::from),
                    None => float_value(-n.as_f64()?),
                },
                _ => None,
            }
        }
        "binary_operator" => {
            let left = literal(file, node.child_by_field_name("left")?, names)?;
            let right = literal(file, node.child_by_field_name("right")?, names)?;
            arithmetic(file.text(node.child_by_field_name("operator")?), &left, &right)
        }
        // `tuple()`, `list()`, `dict()`: empty containers written as calls.
        "call" => {
            let func = file.text(node.child_by_field_name("function")?);
            let args = node.child_by_field_name("arguments")?;
            if !named_children(args).is_empty() {
                return None;
            }
            match func {
                "tuple" | "list" => Some(Value::Array(Vec::new())),
                "dict" => Some(Value::Object(Map::new())),
                _ => None,
            }
        }
        "identifier" | "attribute" => names.get(file.text(node)).cloned(),
        _ => None,
    }
}

fn arithmetic(op: &str, left: &Value, right: &Value) -> Option<Value> {
    if let (Some(a), Some(b)) = (left.as_i64(), right.as_i64()) {
        let int = match op {
            "+" => a.checked_add(b),
            "-" => a.checked_sub(b),
            "*" => a.checked_mul(b),
            "//" if b != 0 => Some(a.div_euclid(b)),
            "%" if b != 0 => Some(a.rem_euclid(b)),
            "**" => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
            "/" => return (b != 0).then(|| float_value(a as f64 / b as f64)).flatten(),
            _ => None,
        };
        return int.map(Value::from);
    }
    let (a, b) = (left.as_f64()?, right.as_f64()?);
    let value = match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" if b != 0.0 => a / b,
        _ => return None,
    };
    float_value(value)
}

fn float_value(f: f64) -> Option<Value> {
    Number::from_f64(f).map(Value::Number)
}

fn parse_int(text: &str) -> Option<i64> {
    let t = text.replace('_', "").to_ascii_lowercase();
    let (digits, radix) = match t.get(..2) {
        Some("0x") => (&t[2..], 16),
        Some("0o") => (&t[2..], 8),
        Some("0b") => (&t[2..], 2),
        _ => (t.as_str(), 10),
    };
    i64::from_str_radix(digits, radix).ok()
}

fn parse_float(text: &str) -> Option<f64> {
    let t = text.replace('_', "");
    if t.ends_with(['j', 'J']) {
        return None; // complex literal
    }
    t.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value_of(expr: &str, names: &KnownNames) -> Known<PyValue> {
        let file = PyFile::parse("t.py", format!("x = {expr}\n"));
        let stmt = named_children(file.root())[0];
        let assign = named_children(stmt)[0];
        let right = assign.child_by_field_name("right").unwrap();
        known_value(&file, right, names)
    }

    #[test]
    fn reads_literals_and_small_arithmetic() {
        let none = KnownNames::new();
        assert_eq!(value_of("-1", &none), Known::Value(json!(-1)));
        assert_eq!(value_of("384 * 1024 * 1024", &none), Known::Value(json!(402653184)));
        assert_eq!(value_of("2 ** 31", &none), Known::Value(json!(2147483648_i64)));
        assert_eq!(value_of("0.5", &none), Known::Value(json!(0.5)));
        assert_eq!(value_of("tuple()", &none), Known::Value(json!([])));
        assert_eq!(value_of("('a', 1)", &none), Known::Value(json!(["a", 1])));
        assert_eq!(value_of("{'k': None}", &none), Known::Value(json!({"k": null})));
        assert_eq!(value_of("1_000", &none), Known::Value(json!(1000)));
    }

    #[test]
    fn non_literals_keep_their_source_text() {
        let names = KnownNames::from([("Level.HIGH".to_string(), json!(2))]);
        assert_eq!(value_of("Level.HIGH", &names), Known::Value(json!(2)));
        assert_eq!(value_of("Level.LOW", &names), Known::dynamic("Level.LOW"));
        assert_eq!(value_of("_default_hip", &names), Known::dynamic("_default_hip"));
        assert_eq!(value_of("os.path.expanduser('~/.cache')", &names), Known::dynamic("os.path.expanduser('~/.cache')"));
        assert_eq!(value_of("2 ** 99", &names), Known::dynamic("2 ** 99"));
    }
}
