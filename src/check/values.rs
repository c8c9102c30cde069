//! How argparse would treat a recipe value: type conversion and choice matching,
//! written out so a finding can say exactly why a value is rejected.

use crate::finding::NumberKind;
use crate::surface::{Flag, Known, PyValue};

/// A flag's `type_name` when argparse hands its values to `json.loads`.
const JSON_LOADS: &str = "json.loads";

/// A recipe value as the engine's parser would receive it.
pub(crate) fn value_matches_choice(value: &str, choice: &PyValue) -> bool {
    match choice {
        PyValue::String(s) => s == value,
        PyValue::Number(n) => value.parse::<f64>().ok().zip(n.as_f64()).is_some_and(|(a, b)| a == b),
        PyValue::Bool(b) => value == if *b { "True" } else { "False" },
        _ => false,
    }
}

/// Why `value` fails the flag's `type=` conversion, if it does. Only the builtin
/// conversions are judged; an engine-defined parser is not guessed at.
pub(crate) fn type_error(flag: &Flag, value: &str) -> Option<NumberKind> {
    match flag.type_name.as_deref() {
        Some("int") if value.trim().parse::<i64>().is_err() => Some(NumberKind::Integer),
        Some("float") if parse_float(value).is_none() => Some(NumberKind::Number),
        _ => None,
    }
}

/// Whether argparse hands the flag's values to `json.loads`.
pub(crate) fn parses_json(flag: &Flag) -> bool {
    flag.type_name.as_deref() == Some(JSON_LOADS)
}

/// Why `value` fails `json.loads`, for a flag of that type. Python's parser
/// also takes `NaN` and `Infinity`, which JSON proper does not: a value that
/// fails here with either in it is not judged.
pub(crate) fn json_error(flag: &Flag, value: &str) -> Option<String> {
    if !parses_json(flag) {
        return None;
    }
    let error = serde_json::from_str::<serde_json::Value>(value).err()?;
    (!value.contains("NaN") && !value.contains("Infinity")).then(|| error.to_string())
}

fn parse_float(value: &str) -> Option<f64> {
    let v = value.trim().to_ascii_lowercase();
    if matches!(v.as_str(), "inf" | "+inf" | "-inf" | "nan" | "infinity" | "-infinity") {
        return Some(0.0);
    }
    v.parse::<f64>().ok()
}

/// The choices a value must be among, when they are statically known.
pub(crate) fn known_choices(flag: &Flag) -> Option<&Vec<PyValue>> {
    match &flag.choices {
        Some(Known::Value(list)) => Some(list),
        _ => None,
    }
}

/// How many values the flag takes: (min, max), `None` max for unbounded.
pub(crate) fn arity(flag: &Flag) -> (usize, Option<usize>) {
    if flag.is_switch() {
        return (0, Some(0));
    }
    match &flag.nargs {
        None => (1, Some(1)),
        Some(PyValue::Number(n)) => {
            let n = n.as_u64().unwrap_or(1) as usize;
            (n, Some(n))
        }
        Some(PyValue::String(s)) => match s.as_str() {
            "?" => (0, Some(1)),
            "*" => (0, None),
            "+" => (1, None),
            _ => (1, Some(1)),
        },
        _ => (1, Some(1)),
    }
}

/// Render a choice list for messages: `auto, flashinfer_cutlass, ...`.
pub(crate) fn render_choices(choices: &[PyValue]) -> String {
    choices
        .iter()
        .map(|c| match c {
            PyValue::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn choices_compare_the_way_argparse_converts() {
        assert!(value_matches_choice("fp8", &json!("fp8")));
        assert!(value_matches_choice("2", &json!(2)));
        assert!(!value_matches_choice("fp4", &json!("fp8")));
    }
}
