//! A Python package inside a tree: maps dotted module names to file paths and back.

use crate::source::{SourceError, Tree};
use crate::surface::Module;

use super::python::PyFile;

/// The engine's top-level package inside a source tree.
pub struct Package<'t> {
    pub tree: &'t dyn Tree,
    /// Folder of the package in the tree (`python/sglang`).
    pub root: String,
    /// Import name of the package (`sglang`).
    pub name: String,
}

impl<'t> Package<'t> {
    pub fn new(tree: &'t dyn Tree, root: &str) -> Self {
        let root = root.trim_end_matches('/').to_string();
        let name = root.rsplit('/').next().unwrap_or(&root).to_string();
        Package { tree, root, name }
    }

    /// Every `.py` module below the root, sorted by dotted name. Built from the
    /// tree listing alone (no file is read).
    pub fn modules(&self) -> Vec<Module> {
        let prefix = format!("{}/", self.root);
        let mut out: Vec<Module> = self
            .tree
            .entries()
            .iter()
            .filter(|e| e.path.starts_with(&prefix) && e.path.ends_with(".py"))
            .filter_map(|e| {
                self.module_name(&e.path).map(|name| Module {
                    name,
                    path: e.path.clone(),
                    symbols: None,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out.dedup_by(|a, b| a.name == b.name);
        out
    }

    /// `python/sglang/srt/environ.py` → `sglang.srt.environ`;
    /// `python/sglang/srt/__init__.py` → `sglang.srt`.
    pub fn module_name(&self, path: &str) -> Option<String> {
        let rel = path.strip_prefix(&self.root)?.strip_prefix('/')?;
        let rel = rel.strip_suffix(".py")?;
        let mut parts: Vec<&str> = rel.split('/').collect();
        if parts.last() == Some(&"__init__") {
            parts.pop();
        }
        if parts.iter().any(|p| !is_identifier(p)) {
            return None;
        }
        let mut name = self.name.clone();
        for p in parts {
            name.push('.');
            name.push_str(p);
        }
        Some(name)
    }

    /// The file defining a dotted module: `x/y.py` or `x/y/__init__.py`.
    pub fn module_path(&self, dotted: &str) -> Option<String> {
        let rest = if dotted == self.name {
            ""
        } else {
            dotted.strip_prefix(&self.name)?.strip_prefix('.')?
        };
        let base = if rest.is_empty() {
            self.root.clone()
        } else {
            format!("{}/{}", self.root, rest.replace('.', "/"))
        };
        let file = format!("{base}.py");
        if !rest.is_empty() && self.tree.contains(&file) {
            return Some(file);
        }
        let init = format!("{base}/__init__.py");
        self.tree.contains(&init).then_some(init)
    }

    /// Whether a dotted name is a package (a folder with `__init__.py`).
    pub fn is_package(&self, dotted: &str) -> bool {
        self.module_path(dotted)
            .is_some_and(|p| p.ends_with("/__init__.py"))
    }

    /// Read and parse one file of the tree. Files over
    /// [`MAX_SOURCE_BYTES`](crate::extract::symbols::MAX_SOURCE_BYTES) are
    /// [`SourceError::TooLarge`], refused before they are read.
    pub fn parse(&self, path: &str) -> Result<PyFile, SourceError> {
        let bytes = self.tree.read_limited(path, crate::extract::symbols::MAX_SOURCE_BYTES)?;
        let text = String::from_utf8(bytes).map_err(|e| SourceError::NotUtf8 { path: path.to_string(), offset: e.utf8_error().valid_up_to() })?;
        Ok(PyFile::parse(path, text))
    }

    /// Like [`parse`](Self::parse), but a file that is not valid UTF-8 (a latin-1
    /// comment, a `coding:` line) is read with replacement characters so its
    /// other lines still give facts; the second value says so for a warning.
    pub fn parse_lossy(&self, path: &str) -> Result<(PyFile, Option<String>), SourceError> {
        let bytes = self.tree.read_limited(path, crate::extract::symbols::MAX_SOURCE_BYTES)?;
        match String::from_utf8(bytes) {
            Ok(text) => Ok((PyFile::parse(path, text), None)),
            Err(e) => {
                let error = SourceError::NotUtf8 { path: path.to_string(), offset: e.utf8_error().valid_up_to() };
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                Ok((PyFile::parse(path, text), Some(format!("{error}; read with replacement characters"))))
            }
        }
    }

    /// Resolve a relative import (`from ..x import y` in module `m`) to a dotted name.
    pub fn resolve_relative(&self, current_module: &str, is_package: bool, dots: usize, rest: &str) -> Option<String> {
        let mut parts: Vec<&str> = current_module.split('.').collect();
        // A module's package is its parent; a package's own `__init__` is itself.
        let up = if is_package { dots - 1 } else { dots };
        for _ in 0..up {
            parts.pop()?;
        }
        let mut name = parts.join(".");
        if !rest.is_empty() {
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(rest);
        }
        (!name.is_empty()).then_some(name)
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemTree;

    #[test]
    fn maps_paths_and_dotted_names_both_ways() {
        let tree = MemTree::from_files(
            "t",
            [
                ("python/sglang/__init__.py", ""),
                ("python/sglang/srt/__init__.py", ""),
                ("python/sglang/srt/environ.py", ""),
                ("python/sglang/srt/utils/__init__.py", ""),
                ("python/sglang/srt/utils/common.py", ""),
                ("python/sglang/srt/not-a-module.py", ""),
                ("python/pyproject.toml", ""),
            ],
        );
        let pkg = Package::new(&tree, "python/sglang");
        let names: Vec<_> = pkg.modules().into_iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            ["sglang", "sglang.srt", "sglang.srt.environ", "sglang.srt.utils", "sglang.srt.utils.common"]
        );
        assert_eq!(pkg.module_path("sglang.srt.utils").as_deref(), Some("python/sglang/srt/utils/__init__.py"));
        assert_eq!(pkg.module_path("sglang.srt.environ").as_deref(), Some("python/sglang/srt/environ.py"));
        assert_eq!(pkg.module_path("sglang.srt.missing"), None);
        assert_eq!(pkg.resolve_relative("sglang.srt.utils.common", false, 2, "environ").as_deref(), Some("sglang.srt.environ"));
        assert_eq!(pkg.resolve_relative("sglang.srt.utils", true, 1, "common").as_deref(), Some("sglang.srt.utils.common"));
    }
}
