//! An env registry that is a dict of getters (vLLM's `envs.py`):
//!
//! ```python
//! environment_variables: dict[str, Callable[[], Any]] = {
//!     "VLLM_TARGET_DEVICE": lambda: os.getenv("VLLM_TARGET_DEVICE", "cuda").lower(),
//!     "VLLM_FLOAT32_MATMUL_PRECISION": env_with_choices("VLLM_...", "highest", [...]),
//! }
//! ```
//!
//! Every key is a variable. Its default is what its getter returns with the
//! variable unset: the lambda's body folded with `os.getenv(name, d)` and
//! `os.environ.get(name, d)` as `d`. The `TYPE_CHECKING` declarations are not
//! read (the getter is the truth). Getters built by helper calls, and bodies
//! that read anything else, are dynamic. A getter that only warns is a
//! deprecation (`warn_only`).

use tree_sitter::Node;

use crate::extract::consts::{final_binding, BindingKind, ConstEval, Scope, Val};
use crate::extract::python::{named_children, PyFile};
use crate::extract::Package;
use crate::surface::{EnvVar, ExtractWarning, Known};

/// The variables of the getter dict `dict` in `file` (below the package root).
pub(crate) fn extract(pkg: &Package, file: &str, dict: &str, warnings: &mut Vec<ExtractWarning>) -> Vec<EnvVar> {
    let path = &format!("{}/{file}", pkg.root);
    let module = format!("{}.{}", pkg.name, file.trim_end_matches(".py").replace('/', "."));
    let ev = crate::extract::consts::with_unset_env(ConstEval::new(pkg));
    let Some(file) = ev.module_file(&module) else {
        warnings.push(ExtractWarning { path: path.to_string(), message: "cannot be read; no env vars read".into() });
        return Vec::new();
    };
    let Some(Ok(binding)) = final_binding(&file.source, file.root(), dict) else {
        warnings.push(ExtractWarning { path: path.to_string(), message: format!("no module-level `{dict}` found; no env vars read") });
        return Vec::new();
    };
    let BindingKind::Assign { value: Some(literal), .. } = binding.kind else {
        warnings.push(ExtractWarning { path: path.to_string(), message: format!("`{dict}` is not a dict display; no env vars read") });
        return Vec::new();
    };
    let scope = Scope::module(&module);
    let mut out: Vec<EnvVar> = Vec::new();
    for pair in named_children(literal).into_iter().filter(|p| p.kind() == "pair") {
        let (Some(key), Some(getter)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) else { continue };
        let Ok(Val::Str(name)) = ev.eval(&file, key, scope) else {
            warnings
                .push(ExtractWarning { path: path.to_string(), message: format!("line {}: a key that does not fold", file.line(pair)) });
            continue;
        };
        out.push(EnvVar {
            kind: getter_kind(&file, getter),
            default: default_of(&ev, &file, getter, scope),
            deprecated: super::warn_only::deprecation(&ev, &file, getter, &name, scope),
            name,
            evidence: file.evidence(pair),
        });
    }
    // Entries added after the display (`environment_variables.update({...})`, `d["X"] = ...`).
    if let Ok(Val::Dict(all)) = ev.global(&module, dict) {
        for (k, _) in all {
            if let Val::Str(name) = k {
                if !out.iter().any(|v| v.name == name) {
                    out.push(EnvVar {
                        name: name.clone(),
                        kind: "getter".into(),
                        default: Known::dynamic(format!("{dict}[{name:?}]")),
                        deprecated: None,
                        evidence: file.evidence(binding.stmt),
                    });
                }
            }
        }
    }
    warnings.extend(ev.take_warnings());
    out
}

/// `lambda` for a getter written inline, else the helper that builds it (`env_with_choices`).
fn getter_kind(file: &PyFile, getter: Node) -> String {
    match getter.kind() {
        "lambda" => "lambda".into(),
        "call" => getter
            .child_by_field_name("function")
            .map(|f| file.text(f).rsplit('.').next().unwrap_or_default().to_string())
            .unwrap_or_default(),
        _ => "getter".into(),
    }
}

fn default_of(ev: &ConstEval, file: &PyFile, getter: Node, scope: Scope) -> Known<serde_json::Value> {
    if getter.kind() != "lambda" {
        return Known::dynamic(file.text(getter));
    }
    let Some(body) = getter.child_by_field_name("body") else { return Known::dynamic(file.text(getter)) };
    match ev.eval(file, body, scope) {
        Ok(v) => match v.to_json() {
            Some(j) => Known::Value(j),
            None => Known::dynamic(file.text(body)),
        },
        Err(_) => Known::dynamic(file.text(body)),
    }
}
