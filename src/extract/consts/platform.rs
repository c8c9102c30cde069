//! vLLM's `current_platform`: the package's `platforms` module hands it out
//! through a module `__getattr__` that instantiates, on first use, the class
//! the machine's platform plugin names (`builtin_platform_plugins = {"cuda":
//! cuda_platform_plugin, ...}`, each returning `"vllm.platforms.cuda.CudaPlatform"`
//! when its hardware is found). Which one runs is a fact of the machine, not
//! of the source; deployment recipes run on NVIDIA and AMD GPUs, so the value
//! is read as one of the classes the `cuda` and `rocm` plugins name (each of
//! the two a name picks between, as `CudaPlatform = NvmlCudaPlatform if
//! nvml_available else NonNvmlCudaPlatform`), and what
//! is read off it (`current_platform.device_type`) is known only when those
//! classes agree (eval's `attribute`); anything else stays dynamic.

use super::value::{ClassRef, Val};
use super::{final_binding, find_definition, BindingKind, ConstEval, Scope};
use crate::extract::python::{named_children, walk};

/// The builtin plugins of the GPUs recipes run on (NVIDIA: CUDA, AMD: ROCm).
const GPU_PLUGINS: &[&str] = &["cuda", "rocm"];

/// `module.current_platform`, when `module` is a platforms package of that shape.
pub(super) fn current_platform(ev: &ConstEval, module: &str, name: &str) -> Option<Val> {
    if name != "current_platform" {
        return None;
    }
    let file = ev.module_file(module)?;
    let Some(Ok(binding)) = final_binding(&file.source, file.root(), "builtin_platform_plugins") else { return None };
    let BindingKind::Assign { value: Some(display), .. } = binding.kind else { return None };
    if display.kind() != "dictionary" {
        return None;
    }
    let mut classes = Vec::new();
    for plugin in GPU_PLUGINS {
        let pair = named_children(display)
            .into_iter()
            .filter(|p| p.kind() == "pair")
            .find(|p| p.child_by_field_name("key").and_then(|k| file.string_value(k)).is_some_and(|k| k == *plugin))?;
        let function = pair.child_by_field_name("value").filter(|v| v.kind() == "identifier")?;
        let def = find_definition(&file.source, file.root(), file.text(function)).filter(|d| d.kind() == "function_definition")?;
        // The qualified class names its `return` statements give; exactly one.
        let mut named = Vec::new();
        walk(def, |n| {
            if n.kind() == "return_statement" {
                walk(n, |s| {
                    if s.kind() == "string" {
                        if let Some(q) = file.string_value(s).filter(|q| q.contains('.')) {
                            if !named.contains(&q) {
                                named.push(q);
                            }
                        }
                    }
                    true
                });
            }
            true
        });
        let [qualname] = named.as_slice() else { return None };
        let (class_module, class) = qualname.rsplit_once('.')?;
        for c in classes_named(ev, class_module, class)? {
            if !classes.contains(&c) {
                classes.push(c);
            }
        }
    }
    Some(Val::CurrentPlatform(classes))
}

/// The classes `module.name` may be: a class, or a name bound to one of two
/// by a test of the machine (`CudaPlatform = NvmlCudaPlatform if nvml_available
/// else NonNvmlCudaPlatform`).
fn classes_named(ev: &ConstEval, module: &str, name: &str) -> Option<Vec<ClassRef>> {
    if let Ok(Val::Class(c)) = ev.global(module, name) {
        return Some(vec![c]);
    }
    let file = ev.module_file(module)?;
    let Some(Ok(binding)) = final_binding(&file.source, file.root(), name) else { return None };
    let BindingKind::Assign { value: Some(value), .. } = binding.kind else { return None };
    if value.kind() != "conditional_expression" {
        return None;
    }
    let parts = named_children(value);
    let [then, _test, otherwise] = parts.as_slice() else { return None };
    [*then, *otherwise]
        .into_iter()
        .map(|branch| match ev.eval(&file, branch, Scope::module(module)) {
            Ok(Val::Class(c)) => Some(c),
            _ => None,
        })
        .collect()
}
