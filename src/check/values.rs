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

/// Whether a value still holds shell expansion text (`$X`, `${X}`): a reader
/// that could not expand it may have passed it on as written, so what the
/// server receives is not known.
pub(crate) fn holds_expansion(value: &str) -> bool {
    value.as_bytes().windows(2).any(|w| w[0] == b'$' && (w[1] == b'{' || w[1] == b'_' || w[1].is_ascii_alphabetic()))
}

/// Why `value` fails `json.loads`, for a flag of that type. Python's parser
/// also takes `NaN` and `Infinity`, which JSON proper does not: a value that
/// fails here with either in it is not judged, nor one holding shell
/// expansion text ([`holds_expansion`]).
pub(crate) fn json_error(flag: &Flag, value: &str) -> Option<String> {
    if !parses_json(flag) || holds_expansion(value) {
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

    fn json_flag() -> Flag {
        serde_json::from_value(json!({
            "names": ["--online_quant_config"], "dest": "online_quant_config", "action": "store", "type": "json.loads",
            "nargs": null, "choices": null, "default": null, "required": false, "deprecated": null, "help": null,
            "evidence": {"path": "atom/model_engine/arg_utils.py", "line": 1}
        }))
        .unwrap()
    }

    /// The value argparse hands to `json.loads`: the parse error when it
    /// fails; not judged when Python's parser takes it (NaN) or the value is
    /// shell text nobody expanded.
    #[test]
    fn json_typed_values_are_parsed() {
        let flag = json_flag();
        assert_eq!(json_error(&flag, r#"{"a": 1}"#), None);
        assert_eq!(json_error(&flag, r#"{"a": 1,}"#).as_deref(), Some("trailing comma at line 1 column 9"));
        assert_eq!(json_error(&flag, r#"{"a": NaN}"#), None);
        assert_eq!(json_error(&flag, "${QUANT_CONFIG}"), None);
        assert_eq!(json_error(&flag, r#"{"path": "$HOME/x"#), None);
        assert!(json_error(&flag, r#"{"cost": "5$"#).is_some(), "a `$` that starts no expansion is judged");
        let plain = Flag { type_name: Some("loads".into()), ..flag };
        assert_eq!(json_error(&plain, "{"), None, "only json.loads is known to parse JSON");
    }

    #[test]
    fn choices_compare_the_way_argparse_converts() {
        assert!(value_matches_choice("fp8", &json!("fp8")));
        assert!(value_matches_choice("2", &json!(2)));
        assert!(!value_matches_choice("fp4", &json!("fp8")));
    }
}
