//! Module attributes served by a module-level `__getattr__` from a dict of
//! getters (vLLM's `envs.VLLM_SERVER_DEV_MODE`:
//! `def __getattr__(name): if name in environment_variables: return
//! environment_variables[name]()`), folded as the getter's body; and the
//! natives that read the environment as unset (`os.getenv(name, default)` is
//! `default`), which is what an argparse default built from one is at import
//! time when the variable is not set.

use std::rc::Rc;

use super::value::{Folded, Val};
use super::{final_binding, BindingKind, ConstEval, Scope};
use crate::extract::python::{named_children, walk};

/// `ev` reading `os.getenv` / `os.environ.get` as for an unset variable.
pub(crate) fn with_unset_env(ev: ConstEval) -> ConstEval {
    let unset = |_: &ConstEval, args: &[Val]| -> Folded {
        match args {
            [Val::Str(_)] => Ok(Val::None),
            [Val::Str(_), default] => Ok(default.clone()),
            _ => Err("getenv(...)".into()),
        }
    };
    ev.with_native("os.getenv", Rc::new(unset)).with_native("os.environ.get", Rc::new(unset)).with_native("environ.get", Rc::new(unset))
}

/// `module.attr` through the module's `__getattr__`, when it returns
/// `D[name]()` for a module-level dict display `D` holding a lambda for `attr`.
pub(super) fn lazy_attribute(ev: &ConstEval, module: &str, attr: &str) -> Option<Val> {
    let file = ev.module_file(module)?;
    let getattr = super::find_definition(&file.source, file.root(), "__getattr__").filter(|d| d.kind() == "function_definition")?;
    // The dict it indexes: `return D[name]()`.
    let mut dict_name = None;
    walk(getattr, |n| {
        if n.kind() == "return_statement" {
            let call = n.named_child(0).filter(|c| c.kind() == "call");
            let subscript = call.and_then(|c| c.child_by_field_name("function")).filter(|f| f.kind() == "subscript");
            if let Some(value) = subscript.and_then(|s| s.child_by_field_name("value")).filter(|v| v.kind() == "identifier") {
                dict_name = Some(file.text(value).to_string());
            }
        }
        true
    });
    let dict_name = dict_name?;
    let Some(Ok(binding)) = final_binding(&file.source, file.root(), &dict_name) else { return None };
    let BindingKind::Assign { value: Some(display), .. } = binding.kind else { return None };
    let scope = Scope::module(module);
    for pair in named_children(display).into_iter().filter(|p| p.kind() == "pair") {
        let (Some(key), Some(getter)) = (pair.child_by_field_name("key"), pair.child_by_field_name("value")) else { continue };
        if !matches!(ev.eval(&file, key, scope), Ok(Val::Str(k)) if k == attr) {
            continue;
        }
        let body = getter.child_by_field_name("body").filter(|_| getter.kind() == "lambda")?;
        return ev.eval(&file, body, scope).ok().filter(|v| v.to_json().is_some());
    }
    None
}
