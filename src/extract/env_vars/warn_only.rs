//! A getter-dict entry kept only to warn (vLLM v0.28.0's `envs.py`):
//!
//! ```python
//! def _deprecated_triton_attn_use_td() -> None:
//!     if "VLLM_TRITON_ATTN_USE_TD" in os.environ:
//!         logger.warning("VLLM_TRITON_ATTN_USE_TD is deprecated and will be removed in "
//!                        "v0.25. Use VLLM_TRITON_USE_TD instead.")
//!     return None
//!
//! environment_variables = {..., "VLLM_TRITON_ATTN_USE_TD": lambda: _deprecated_triton_attn_use_td(), ...}
//! ```
//!
//! The name stays registered (so vLLM's unknown-variable check passes it), but
//! its value reaches nothing: the getter calls a module function that tests
//! the variable's presence, emits a message, and returns nothing. Read by what
//! the function does, not by its name: a function that returns a value, or
//! reads the variable's value, is a real getter.

use tree_sitter::Node;

use super::syntax::{first_argument, is_environ, is_message_call};
use crate::extract::consts::{find_definition, ConstEval, Scope, Val};
use crate::extract::python::{named_children, walk, PyFile};
use crate::surface::{EnvDeprecation, EnvDeprecationKind};

/// The deprecation of `name` when its `getter` only warns.
pub(super) fn deprecation(ev: &ConstEval, file: &PyFile, getter: Node, name: &str, scope: Scope) -> Option<EnvDeprecation> {
    let call = getter.child_by_field_name("body").filter(|b| getter.kind() == "lambda" && b.kind() == "call")?;
    let function = call.child_by_field_name("function").filter(|f| f.kind() == "identifier")?;
    let def = find_definition(&file.source, file.root(), file.text(function))?;
    let body = def.child_by_field_name("body")?;
    let (mut tests_presence, mut returns_value, mut reads_value, mut message) = (false, false, false, None);
    walk(body, |n| {
        match n.kind() {
            // `"NAME" in os.environ`
            "comparison_operator" => {
                let parts = named_children(n);
                if let [left, right] = parts.as_slice() {
                    let named = matches!(ev.eval(file, *left, scope), Ok(Val::Str(s)) if s == name);
                    tests_presence |= named && is_environ(file, *right) && file.text(n).contains(" in ");
                }
            }
            "return_statement" => returns_value |= named_children(n).first().is_some_and(|v| file.text(*v) != "None"),
            // `os.environ["NAME"]`, `os.getenv("NAME")`, `os.environ.get("NAME")`
            "subscript" => reads_value |= n.child_by_field_name("value").is_some_and(|v| is_environ(file, v)),
            "call" if is_message_call(file, n) => {
                if let Some(Ok(Val::Str(text))) = first_argument(n).map(|a| ev.eval(file, a, scope)) {
                    message.get_or_insert(text);
                }
            }
            "call" => {
                let callee = n.child_by_field_name("function").map(|f| file.text(f)).unwrap_or_default();
                reads_value |= callee.ends_with("getenv") || callee.ends_with("environ.get");
            }
            _ => {}
        }
        true
    });
    let message = message.filter(|m| tests_presence && !returns_value && !reads_value && m.to_ascii_lowercase().contains("deprecated"))?;
    Some(EnvDeprecation {
        kind: EnvDeprecationKind::Notice,
        replacement: successor(&message, name),
        transform: None,
        message: Some(message),
    })
}

/// The variable a message says to use instead ("Use VLLM_TRITON_USE_TD instead.").
fn successor(message: &str, name: &str) -> Option<String> {
    let words: Vec<&str> = message.split_whitespace().collect();
    words.windows(2).find_map(|w| {
        let candidate = w[1].trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
        let env_like = candidate.contains('_') && candidate.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        (w[0].eq_ignore_ascii_case("use") && env_like && candidate != name).then(|| candidate.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::successor;
    use crate::extract::Package;
    use crate::source::MemTree;
    use crate::surface::EnvDeprecationKind;

    /// v0.28.0's shape, and the getters that must stay plain variables.
    const ENVS: &str = r#"import logging
import os

logger = logging.getLogger(__name__)


def _deprecated_triton_attn_use_td() -> None:
    """Warn that VLLM_TRITON_ATTN_USE_TD was renamed to VLLM_TRITON_USE_TD."""
    if "VLLM_TRITON_ATTN_USE_TD" in os.environ:
        logger.warning(
            "VLLM_TRITON_ATTN_USE_TD is deprecated and will be removed in "
            "v0.25. Use VLLM_TRITON_USE_TD instead."
        )
    return None


def _read_port():
    if "VLLM_PORT" in os.environ:
        logger.warning("VLLM_PORT is deprecated as a URI; pass a number.")
    return int(os.environ["VLLM_PORT"]) if "VLLM_PORT" in os.environ else None


def _log_level():
    if "VLLM_LOG_LEVEL" in os.environ:
        logger.warning("VLLM_LOG_LEVEL is deprecated; use VLLM_LOGGING_LEVEL.")
    return os.getenv("VLLM_LOG_LEVEL", "INFO")


environment_variables = {
    "VLLM_TRITON_USE_TD": lambda: bool(int(os.getenv("VLLM_TRITON_USE_TD", "0"))),
    "VLLM_TRITON_ATTN_USE_TD": lambda: _deprecated_triton_attn_use_td(),
    "VLLM_PORT": lambda: _read_port(),
    "VLLM_LOG_LEVEL": lambda: _log_level(),
}
"#;

    #[test]
    fn a_getter_that_only_warns_is_a_deprecation_naming_its_successor() {
        let tree = MemTree::from_files("t", [("vllm/__init__.py", ""), ("vllm/envs.py", ENVS)]);
        let pkg = Package::new(&tree, "vllm");
        let mut warnings = Vec::new();
        let vars = super::super::getter_dict::extract(&pkg, "envs.py", "environment_variables", &mut warnings);
        let dep = |name: &str| vars.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("{name}")).deprecated.clone();
        let warned = dep("VLLM_TRITON_ATTN_USE_TD").expect("only warns");
        assert_eq!((warned.kind, warned.replacement.as_deref()), (EnvDeprecationKind::Notice, Some("VLLM_TRITON_USE_TD")));
        assert!(warned.message.unwrap().ends_with("Use VLLM_TRITON_USE_TD instead."));
        // Warning while still returning the value is no deprecation of the variable.
        assert_eq!(dep("VLLM_PORT"), None, "returns the value");
        assert_eq!(dep("VLLM_LOG_LEVEL"), None, "reads the value");
        assert_eq!(dep("VLLM_TRITON_USE_TD"), None);
    }

    #[test]
    fn the_successor_is_the_variable_after_use() {
        let m = "VLLM_TRITON_ATTN_USE_TD is deprecated and will be removed in v0.25. Use VLLM_TRITON_USE_TD instead.";
        assert_eq!(successor(m, "VLLM_TRITON_ATTN_USE_TD").as_deref(), Some("VLLM_TRITON_USE_TD"));
        assert_eq!(successor("X_Y is deprecated; use the --x flag.", "X_Y"), None);
        assert_eq!(successor("X_Y is deprecated.", "X_Y"), None);
    }
}
