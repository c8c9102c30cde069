//! The options a consumer's worker parses itself before it hands the rest of
//! its command line to the engine (Dynamo's `dynamo.vllm.args` builds its own
//! `argparse` parser and the router-advertisement parser, then gives what is
//! left to vLLM's engine-only parser).
//!
//! Read from the parser module and every module of the consumer package it
//! imports (transitively, absolute or relative imports; a bounded number), as
//! option strings registered there:
//!
//! * `x.add_argument("--a", "-b", ...)`: its literal option strings;
//! * a registration helper's call (`add_argument(g, flag_name="--a",
//!   obsolete_flag="--b", ...)`, `add_negatable_bool_argument(...)`: a callee
//!   named `add_*arg*`): its keyword values that are literal option strings;
//! * `--no-<a>` too when the call passes `action=...BooleanOptionalAction` or
//!   the helper it calls (a function of the read modules) uses
//!   `BooleanOptionalAction` itself.
//!
//! Over-reading is the safe side: a module the parser imports may register
//! options of another parser (the frontend's), and those are taken as the
//! worker's, so a flag is never called rejected because of them. A
//! registration whose option strings are not literal (`add_argument(*names)`
//! outside a helper that receives them, `add_argument(f"--{x}")`) is kept as
//! unread: the option set is then incomplete, and says so.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

use super::python::{named_children, walk, PyFile};
use super::Package;
use crate::surface::{Evidence, ExtractWarning};

/// More modules than this are not followed (a parser module reaching a whole
/// package through its imports is read in part, with a warning).
const MAX_MODULES: usize = 128;

/// One option string the worker's own parsers register.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WorkerOption {
    pub name: String,
    pub evidence: Evidence,
}

/// The worker's own options.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerFlags {
    /// The parser module read (`dynamo.vllm.args`); `None` when it is not in the tree.
    pub module: Option<String>,
    /// Sorted by name, one entry per option string (its first registration).
    pub options: Vec<WorkerOption>,
    /// Registrations whose option strings could not be read.
    pub unread: Vec<Evidence>,
}

impl WorkerFlags {
    /// The registration of `option`, if the worker's parsers register it.
    pub fn option(&self, option: &str) -> Option<&WorkerOption> {
        self.options.binary_search_by(|o| o.name.as_str().cmp(option)).ok().map(|i| &self.options[i])
    }

    /// Whether every registration read gave its option strings.
    pub fn complete(&self) -> bool {
        self.module.is_some() && self.unread.is_empty()
    }
}

/// The options registered by `module` (dotted, in `pkg`) and the package modules it imports.
pub fn worker_flags(pkg: &Package, module: &str, warnings: &mut Vec<ExtractWarning>) -> WorkerFlags {
    let Some(first) = pkg.module_path(module) else {
        return WorkerFlags::default();
    };
    let mut files: Vec<(String, std::sync::Arc<PyFile>)> = Vec::new();
    let mut seen = BTreeSet::from([module.to_string()]);
    let mut queue = std::collections::VecDeque::from([(module.to_string(), first)]);
    while let Some((name, path)) = queue.pop_front() {
        if files.len() >= MAX_MODULES {
            warnings.push(ExtractWarning {
                path,
                message: format!("more than {MAX_MODULES} modules reached from `{module}`: the worker options of the rest are not read"),
            });
            break;
        }
        let parsed = super::parsed::parse_file(pkg.tree, &path);
        warnings.extend(parsed.warnings);
        let Some(file) = parsed.file else { continue };
        let is_package = path.ends_with("/__init__.py");
        for imported in package_imports(pkg, &file, &name, is_package) {
            if let Some(p) = pkg.module_path(&imported) {
                if seen.insert(imported.clone()) {
                    queue.push_back((imported, p));
                }
            }
        }
        files.push((name, file));
    }
    let negating: BTreeSet<String> = files.iter().flat_map(|(_, f)| negating_helpers(f)).collect();
    let mut options: BTreeMap<String, Evidence> = BTreeMap::new();
    let mut unread = Vec::new();
    for (_, file) in &files {
        registrations(file, &negating, &mut options, &mut unread);
    }
    unread.sort();
    unread.dedup();
    WorkerFlags {
        module: Some(module.to_string()),
        options: options.into_iter().map(|(name, evidence)| WorkerOption { name, evidence }).collect(),
        unread,
    }
}

/// The modules of the package a file imports: `import a.b`, `from a.b import c`
/// (both `a.b` and `a.b.c`, which may be a submodule), relative forms resolved.
fn package_imports(pkg: &Package, file: &PyFile, module: &str, is_package: bool) -> Vec<String> {
    let mut out = Vec::new();
    walk(file.root(), |node| {
        match node.kind() {
            "import_statement" => {
                for name in named_children(node) {
                    let dotted = match name.kind() {
                        "aliased_import" => name.child_by_field_name("name"),
                        _ => Some(name),
                    };
                    out.extend(dotted.map(|d| file.text(d).to_string()));
                }
            }
            "import_from_statement" => {
                let Some(from) = node.child_by_field_name("module_name") else { return false };
                let base = match from.kind() {
                    "relative_import" => {
                        let text = file.text(from);
                        let dots = text.chars().take_while(|c| *c == '.').count();
                        pkg.resolve_relative(module, is_package, dots, text[dots..].trim())
                    }
                    _ => Some(file.text(from).to_string()),
                };
                let Some(base) = base else { return false };
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let imported = match name.kind() {
                        "aliased_import" => name.child_by_field_name("name").map(|n| file.text(n)),
                        _ => Some(file.text(name)),
                    };
                    out.extend(imported.map(|i| format!("{base}.{i}")));
                }
                out.push(base);
            }
            _ => return true,
        }
        false
    });
    let inside = format!("{}.", pkg.name);
    out.retain(|m| *m == pkg.name || m.starts_with(&inside));
    out
}

/// Functions whose body registers with `BooleanOptionalAction` (a `--x` / `--no-x` pair).
fn negating_helpers(file: &PyFile) -> Vec<String> {
    let mut out = Vec::new();
    walk(file.root(), |node| {
        if node.kind() == "function_definition" {
            let name = node.child_by_field_name("name").map(|n| file.text(n).to_string());
            let body = node.child_by_field_name("body").map(|b| file.text(b)).unwrap_or_default();
            if body.contains("BooleanOptionalAction") {
                out.extend(name);
            }
        }
        true
    });
    out
}

/// Every registration in one file.
fn registrations(file: &PyFile, negating: &BTreeSet<String>, options: &mut BTreeMap<String, Evidence>, unread: &mut Vec<Evidence>) {
    walk(file.root(), |node| {
        if node.kind() == "call" {
            registration(file, node, negating, options, unread);
        }
        true
    });
}

fn registration(
    file: &PyFile,
    call: Node,
    negating: &BTreeSet<String>,
    options: &mut BTreeMap<String, Evidence>,
    unread: &mut Vec<Evidence>,
) {
    let Some(function) = call.child_by_field_name("function") else { return };
    let callee = match function.kind() {
        "attribute" => function.child_by_field_name("attribute").map(|a| file.text(a)),
        "identifier" => Some(file.text(function)),
        _ => None,
    };
    let Some(callee) = callee.filter(|c| c.starts_with("add_") && c.contains("arg")) else { return };
    let args = call.child_by_field_name("arguments").map(named_children).unwrap_or_default();
    let mut names = Vec::new();
    let mut boolean_optional = negating.contains(callee);
    let mut opaque = false;
    for (i, arg) in args.iter().enumerate() {
        match arg.kind() {
            "keyword_argument" => {
                let key = arg.child_by_field_name("name").map(|n| file.text(n)).unwrap_or_default();
                let Some(value) = arg.child_by_field_name("value") else { continue };
                if key == "action" && file.text(value).ends_with("BooleanOptionalAction") {
                    boolean_optional = true;
                }
                names.extend(file.string_value(value).filter(|v| is_option(v)));
            }
            "string" | "concatenated_string" => match file.string_value(*arg) {
                Some(v) if v.starts_with('-') => names.push(v),
                Some(_) => {}
                None => opaque |= i == 0,
            },
            // `add_argument(*names)`, `add_argument(name)`: read only where the
            // names are the enclosing helper's parameters (its callers give them).
            "list_splat" | "identifier" | "call" | "attribute" | "binary_operator" if i == 0 && callee == "add_argument" => {
                opaque |= !from_parameters(file, call, *arg);
            }
            _ => {}
        }
    }
    if opaque && names.is_empty() {
        unread.push(file.evidence(call));
    }
    let evidence = file.evidence(call);
    for name in names {
        if boolean_optional {
            if let Some(rest) = name.strip_prefix("--") {
                options.entry(format!("--no-{rest}")).or_insert_with(|| evidence.clone());
            }
        }
        options.entry(name).or_insert_with(|| evidence.clone());
    }
}

/// `--name`: a long option string as a literal (not help text that mentions one).
fn is_option(value: &str) -> bool {
    value.strip_prefix("--").is_some_and(|rest| {
        rest.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Whether the names in `arg` come from the parameters of the function the
/// call sits in (a registration helper), directly or through a local built from them.
fn from_parameters(file: &PyFile, call: Node, arg: Node) -> bool {
    let mut scope = call.parent();
    while let Some(s) = scope.filter(|s| s.kind() != "function_definition") {
        scope = s.parent();
    }
    let Some(function) = scope else { return false };
    let body = function.child_by_field_name("body").map(|b| file.text(b)).unwrap_or_default();
    let parameters: Vec<&str> = function
        .child_by_field_name("parameters")
        .map(named_children)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| match p.kind() {
            "identifier" => Some(file.text(p)),
            _ => p
                .child_by_field_name("name")
                .or_else(|| named_children(p).into_iter().find(|n| n.kind() == "identifier"))
                .map(|n| file.text(n)),
        })
        .collect();
    let mut used = Vec::new();
    walk(arg, |n| {
        if n.kind() == "identifier" {
            used.push(file.text(n));
        }
        true
    });
    // A local (`names = [flag_name]`) counts when a parameter is assigned into it.
    used.iter().any(|u| {
        parameters.contains(u)
            || body.lines().any(|l| {
                let l = l.trim();
                l.starts_with(&format!("{u} =")) && parameters.iter().any(|p| l.contains(p))
            })
    })
}

#[cfg(test)]
mod tests;
