//! The engine's environment variables: the typed registry (`srt/environ.py`),
//! its deprecations and prefix rewrites, and plain reads elsewhere in the tree.
//!
//! - [`registry`]: fields of the registry class, aliases of alias-carrying fields;
//! - [`deprecations`]: the deprecation table / helper calls / prefix rewrite;
//! - [`reads`]: `os.environ` / `getenv` / helper reads, removal notices;
//! - [`literal`]: the small literal reader for defaults.

pub(crate) mod deprecations;
pub(crate) mod getter_dict;
pub(crate) mod literal;
pub(crate) mod reads;
pub(crate) mod registry;
mod syntax;
mod warn_only;

#[cfg(test)]
mod package_scan;

#[cfg(test)]
mod release_check;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use package_scan::{find_env_reads, find_prefixed_env_reads};
#[cfg(test)]
pub(crate) use reads::ReadVia;
pub(crate) use reads::{reads_in_source, unregistered_vars, EnvRead};

use crate::extract::symbols::parse_module_file;
use crate::extract::Package;
use crate::surface::{EnvDeprecation, EnvDeprecationKind, EnvVar, ExtractWarning, Known, PyValue};

use deprecations::DeprecationEntry;
use syntax::FileIndex;

/// Everything the registry file declares.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct EnvRegistry {
    /// Registry fields, their aliases and deprecated names, sorted by name.
    pub vars: Vec<EnvVar>,
    /// Prefix rewrites applied to the whole environment (`SGL_` → `SGLANG_`).
    pub prefix_rewrites: Vec<(String, String)>,
}

impl EnvRegistry {
    pub(crate) fn var(&self, name: &str) -> Option<&EnvVar> {
        self.vars.binary_search_by(|v| v.name.as_str().cmp(name)).ok().map(|i| &self.vars[i])
    }
}

/// The registry file of the package, if it has one: the first of `files`
/// (below the package root, most specific first) that the tree holds.
pub(crate) fn registry_path(pkg: &Package, files: &[&str]) -> Option<String> {
    files.iter().map(|rel| format!("{}/{rel}", pkg.root)).find(|path| pkg.tree.contains(path))
}

/// Extract the env registry. A package without a registry file yields an empty
/// registry (Dynamo has none); an unreadable one yields a warning.
#[cfg(test)]
pub(crate) fn extract_env(pkg: &Package, files: &[&str], warnings: &mut Vec<ExtractWarning>) -> EnvRegistry {
    extract_env_and_instances(pkg, files, warnings).0
}

/// The registry and the names its object is bound to (see [`registry_instances`]),
/// from one parse of the registry file.
pub(crate) fn extract_env_and_instances(pkg: &Package, files: &[&str], warnings: &mut Vec<ExtractWarning>) -> (EnvRegistry, Vec<String>) {
    let Some(path) = registry_path(pkg, files) else {
        return Default::default();
    };
    let Some(file) = parse_module_file(pkg, &path, warnings) else {
        return Default::default();
    };
    let index = FileIndex::new(&file);
    let instances = registry::instance_names(&file, &index);
    (registry_of(&file, &index, &path, warnings), instances)
}

fn registry_of(file: &crate::extract::python::PyFile, index: &FileIndex, path: &str, warnings: &mut Vec<ExtractWarning>) -> EnvRegistry {
    let (file, index) = (file, index);
    let names = registry::class_constants(file, index);
    let mut vars = registry::registry_vars(file, index, &names);
    apply_deprecations(&mut vars, deprecations::deprecations(file, index));
    vars.sort_by(|a, b| (&a.name, &a.evidence).cmp(&(&b.name, &b.evidence)));
    // A name declared twice (a field and an alias of another field): keep the
    // first by line, and say so.
    let before = vars.len();
    vars.dedup_by(|later, first| later.name == first.name);
    if vars.len() != before {
        warnings.push(ExtractWarning {
            path: path.to_string(),
            message: format!("{} env names declared more than once; kept the first", before - vars.len()),
        });
    }
    EnvRegistry { vars, prefix_rewrites: deprecations::prefix_rewrites(file) }
}

/// Names the registry object is bound to in its module (`envs = Envs()`), for
/// recognising `envs.X.get()` reads elsewhere.
#[cfg(test)]
pub(crate) fn registry_instances(pkg: &Package, files: &[&str], warnings: &mut Vec<ExtractWarning>) -> Vec<String> {
    let Some(path) = registry_path(pkg, files) else {
        return Vec::new();
    };
    let Some(file) = parse_module_file(pkg, &path, warnings) else {
        return Vec::new();
    };
    registry::instance_names(&file, &FileIndex::new(&file))
}

/// Attach each deprecation to its field, or add the deprecated name as its own
/// variable: with a replacement it is renamed, without one removed.
fn apply_deprecations(vars: &mut Vec<EnvVar>, entries: Vec<DeprecationEntry>) {
    for entry in entries {
        let deprecation = EnvDeprecation {
            kind: if entry.replacement.is_some() { EnvDeprecationKind::Renamed } else { EnvDeprecationKind::Removed },
            replacement: entry.replacement,
            transform: entry.transform,
            message: entry.message,
        };
        match vars.iter_mut().find(|v| v.name == entry.name && v.deprecated.is_none()) {
            // Still a field (kept for legacy call sites) but declared deprecated.
            Some(field) => field.deprecated = Some(deprecation),
            None => vars.push(EnvVar {
                name: entry.name,
                kind: "deprecated".to_string(),
                // Not a field: nothing reads it with a default.
                default: Known::Value(PyValue::Null),
                deprecated: Some(deprecation),
                evidence: entry.evidence,
            }),
        }
    }
}
