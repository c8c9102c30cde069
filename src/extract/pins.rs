//! What an engine requires of other packages (`pyproject.toml`), and its own version.
//!
//! Dynamo pins the SGLang it was built against in an optional-dependency group
//! (`sglang = ["sglang[diffusion]==0.5.18", ...]`); the pin check compares it
//! with the SGLang a recipe actually runs.

use std::str::FromStr;

use crate::extract::python::{named_children, PyFile};
use crate::source::Tree;
use crate::surface::{Evidence, ExtractWarning, Requirement};

/// Files that may carry `__version__ = "..."`, relative to the package root.
const VERSION_FILES: &[&str] = &["version.py", "_version.py", "__init__.py"];

/// The `pyproject.toml` governing a package: the nearest one in the package
/// folder or an ancestor (`python/pyproject.toml` for `python/sglang`, the
/// repository root's for Dynamo's `components/src/dynamo`).
pub(crate) fn find_pyproject(tree: &dyn Tree, package_root: &str) -> Option<String> {
    let mut dir = package_root.trim_end_matches('/');
    loop {
        let candidate = if dir.is_empty() { "pyproject.toml".to_string() } else { format!("{dir}/pyproject.toml") };
        if tree.contains(&candidate) {
            return Some(candidate);
        }
        if dir.is_empty() {
            return None;
        }
        dir = dir.rsplit_once('/').map(|(parent, _)| parent).unwrap_or("");
    }
}

/// `[project] dependencies` (group `None`) and every
/// `[project.optional-dependencies]` group, in file order.
pub(crate) fn requirements(tree: &dyn Tree, pyproject_path: &str, warnings: &mut Vec<ExtractWarning>) -> Vec<Requirement> {
    let Some((text, doc)) = read_pyproject(tree, pyproject_path, warnings) else {
        return Vec::new();
    };
    let project = doc.get("project");
    let mut lists: Vec<(Option<String>, &toml::Value)> = Vec::new();
    if let Some(deps) = project.and_then(|p| p.get("dependencies")) {
        lists.push((None, deps));
    }
    if let Some(groups) = project.and_then(|p| p.get("optional-dependencies")).and_then(|g| g.as_table()) {
        for (group, deps) in groups {
            lists.push((Some(group.clone()), deps));
        }
    }
    let locator = LineLocator::new(&text);
    let mut out = Vec::new();
    for (group, deps) in lists {
        let Some(items) = deps.as_array() else {
            warn(warnings, pyproject_path, format!("{} is not a list", group_label(&group)));
            continue;
        };
        for item in items {
            let Some(raw) = item.as_str() else {
                warn(warnings, pyproject_path, format!("non-string entry in {}: {item}", group_label(&group)));
                continue;
            };
            match pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(raw) {
                Ok(req) => out.push(Requirement {
                    name: req.name.to_string(),
                    specifier: specifier_text(&req),
                    evidence: Evidence { path: pyproject_path.to_string(), line: locator.line_of(group.as_deref(), raw) },
                    group: group.clone(),
                    raw: raw.to_string(),
                }),
                Err(e) => warn(warnings, pyproject_path, format!("invalid requirement {raw:?}: {e}")),
            }
        }
    }
    out
}

/// The package's own version: `[project] version` of its pyproject, else a
/// literal top-level `__version__ = "..."` in `version.py`/`_version.py`/`__init__.py`.
pub(crate) fn package_version(tree: &dyn Tree, package_root: &str, warnings: &mut Vec<ExtractWarning>) -> Option<String> {
    let from_pyproject = find_pyproject(tree, package_root)
        .and_then(|path| read_pyproject(tree, &path, warnings).map(|(_, doc)| (path, doc)))
        .and_then(|(path, doc)| {
            let version = doc.get("project")?.get("version")?.as_str()?.to_string();
            Some((path, version))
        });
    let (path, version) = match from_pyproject {
        Some(found) => found,
        None => VERSION_FILES.iter().find_map(|name| {
            let path = format!("{}/{name}", package_root.trim_end_matches('/'));
            let text = tree.read_text_limited(&path, super::parsed::MAX_SOURCE_BYTES).ok()?;
            Some((path.clone(), literal_dunder_version(&PyFile::parse(&path, text))?))
        })?,
    };
    if pep440_rs::Version::from_str(&version).is_err() {
        warn(warnings, &path, format!("version {version:?} is not a PEP 440 version"));
    }
    Some(version)
}

fn read_pyproject(tree: &dyn Tree, path: &str, warnings: &mut Vec<ExtractWarning>) -> Option<(String, toml::Table)> {
    let text = match tree.read_text_limited(path, super::parsed::MAX_SOURCE_BYTES) {
        Ok(text) => text,
        Err(e) => {
            warn(warnings, path, format!("not read: {e}"));
            return None;
        }
    };
    match text.parse::<toml::Table>() {
        Ok(doc) => Some((text, doc)),
        Err(e) => {
            warn(warnings, path, format!("invalid TOML: {}", e.message()));
            None
        }
    }
}

/// `==0.5.18`, `>=3.14.3,<4.0` (in pep508's normalised order); empty for a bare
/// name or a URL requirement.
fn specifier_text(req: &pep508_rs::Requirement) -> String {
    match &req.version_or_url {
        Some(pep508_rs::VersionOrUrl::VersionSpecifier(specs)) => specs.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","),
        _ => String::new(),
    }
}

/// `__version__ = "1.5.0"` at the top level (not inside `try`/`if`).
fn literal_dunder_version(file: &PyFile) -> Option<String> {
    named_children(file.root()).into_iter().find_map(|stmt| {
        let assign = named_children(stmt).into_iter().find(|n| n.kind() == "assignment")?;
        let left = assign.child_by_field_name("left")?;
        if file.text(left) != "__version__" {
            return None;
        }
        // `__version__ = version = '0.34.0'`: the generated `_version.py` of
        // setuptools-scm / vcs-versioning wheels (vLLM's) chains the names.
        let mut right = assign.child_by_field_name("right")?;
        while right.kind() == "assignment" {
            right = right.child_by_field_name("right")?;
        }
        file.string_value(right)
    })
}

fn group_label(group: &Option<String>) -> String {
    match group {
        None => "[project] dependencies".to_string(),
        Some(g) => format!("optional-dependencies group `{g}`"),
    }
}

fn warn(warnings: &mut Vec<ExtractWarning>, path: &str, message: String) {
    warnings.push(ExtractWarning { path: path.to_string(), message });
}

/// Finds the line of a requirement string for evidence: the first occurrence
/// after its list's key (toml's parsed values carry no positions).
struct LineLocator<'a> {
    text: &'a str,
}

impl<'a> LineLocator<'a> {
    fn new(text: &'a str) -> Self {
        LineLocator { text }
    }

    fn line_of(&self, group: Option<&str>, raw: &str) -> u32 {
        let section = match group {
            None => self.find_line_start("dependencies", 0),
            Some(g) => {
                let optional = self.text.find("[project.optional-dependencies]").unwrap_or(0);
                self.find_line_start(g, optional)
            }
        };
        let start = section.unwrap_or(0);
        let at = [format!("\"{raw}\""), format!("'{raw}'")]
            .iter()
            .filter_map(|quoted| self.text[start..].find(quoted.as_str()))
            .min()
            .map(|offset| start + offset)
            .unwrap_or(start);
        self.text[..at].matches('\n').count() as u32 + 1
    }

    /// Offset of a line starting with `key =` (or `"key" =`) at or after `from`.
    fn find_line_start(&self, key: &str, from: usize) -> Option<usize> {
        let mut offset = from;
        for line in self.text[from..].split_inclusive('\n') {
            let trimmed = line.trim_start();
            let rest = trimmed
                .strip_prefix(key)
                .or_else(|| trimmed.strip_prefix(&format!("\"{key}\"")))
                .or_else(|| trimmed.strip_prefix(&format!("'{key}'")));
            if rest.is_some_and(|r| r.trim_start().starts_with('=')) {
                return Some(offset);
            }
            offset += line.len();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{DirTree, MemTree};
    use std::path::Path;

    fn fixture(sub: &str) -> DirTree {
        DirTree::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/env/pins").join(sub)).expect("fixture exists")
    }

    #[test]
    fn finds_the_nearest_pyproject_upwards() {
        let tree = MemTree::from_files(
            "t",
            [
                ("pyproject.toml", ""),
                ("python/pyproject.toml", ""),
                ("python/sglang/__init__.py", ""),
                ("components/src/dynamo/__init__.py", ""),
            ],
        );
        assert_eq!(find_pyproject(&tree, "python/sglang").as_deref(), Some("python/pyproject.toml"));
        assert_eq!(find_pyproject(&tree, "components/src/dynamo").as_deref(), Some("pyproject.toml"));
        let bare = MemTree::from_files("t", [("pkg/__init__.py", "")]);
        assert_eq!(find_pyproject(&bare, "pkg"), None);
    }

    #[test]
    fn requirements_by_group_with_lines() {
        let tree = fixture("");
        let mut warnings = Vec::new();
        let reqs = requirements(&tree, "pyproject.toml", &mut warnings);
        let rows: Vec<(Option<&str>, &str, &str, u32)> =
            reqs.iter().map(|r| (r.group.as_deref(), r.name.as_str(), r.specifier.as_str(), r.evidence.line)).collect();
        assert_eq!(
            rows,
            [
                (None, "toy-runtime", "==2.1.0", 6),
                (None, "aiohttp", ">=3.9,<4.0", 7), // pep508 orders the set
                (None, "typing-extensions", ">=4.10", 8),
                (None, "uvloop", "", 9),
                (Some("engine"), "accelerate", ">=0.17.0", 14),
                (Some("engine"), "toy-engine", "==0.5.18", 15),
                (Some("other-engine"), "vllm", "==0.28.0", 18),
            ]
        );
        assert_eq!(reqs[5].raw, "toy-engine[vision]==0.5.18");
        // The malformed entry is reported, the rest kept.
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].path == "pyproject.toml" && warnings[0].message.contains("not a valid requirement"));
    }

    #[test]
    fn version_from_pyproject_else_a_literal_version_file() {
        let mut warnings = Vec::new();
        assert_eq!(package_version(&fixture(""), "python/toypkg", &mut warnings).as_deref(), Some("2.1.0.post1"));
        // Without a pyproject: `version.py` assigns inside `try` (not literal), `_version.py` does.
        assert_eq!(package_version(&fixture("python"), "toypkg", &mut warnings).as_deref(), Some("0.3.0rc1"));
        assert!(warnings.is_empty(), "{warnings:?}");
        // vLLM's wheel: `version.py` imports it from the generated `_version.py`, which chains the names.
        let wheel = MemTree::from_files(
            "t",
            [
                ("vllm/version.py", "try:\n    from ._version import __version__\nexcept Exception:\n    __version__ = \"dev\"\n"),
                (
                    "vllm/_version.py",
                    "__version__: str\n__version__ = version = '0.34.0'\n__version_tuple__ = version_tuple = (0, 34, 0)\n",
                ),
            ],
        );
        assert_eq!(package_version(&wheel, "vllm", &mut warnings).as_deref(), Some("0.34.0"));
    }

    #[test]
    fn broken_toml_is_a_warning() {
        let tree = MemTree::from_files("t", [("pyproject.toml", "[project\nname = 1\n")]);
        let mut warnings = Vec::new();
        assert!(requirements(&tree, "pyproject.toml", &mut warnings).is_empty());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.starts_with("invalid TOML"));
    }
}
