//! A Python package inside a tree: maps dotted module names to file paths and back.

use crate::source::{Entry, Tree};
use crate::surface::Module;


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
        // `module_entries` already checked every part is an identifier.
        let mut out: Vec<Module> = self
            .module_entries()
            .map(|e| Module { name: self.dotted_name(&e.path), path: e.path.clone(), symbols: None })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out.dedup_by(|a, b| a.name == b.name);
        out
    }

    /// The tree entries of every module file, in path order, without building
    /// names (the env-read scan only needs the files).
    pub fn module_entries(&self) -> impl Iterator<Item = &'t Entry> + '_ {
        let root = self.root.as_str();
        // Entries are sorted by path: the package's files are one run of them.
        let entries = self.tree.entries();
        let start = entries.partition_point(|e| e.path.as_str() < root);
        let len = entries[start..].partition_point(|e| e.path.starts_with(root));
        entries[start..start + len].iter().filter(move |e| {
            e.path
                .strip_prefix(root)
                .and_then(|rel| rel.strip_prefix('/'))
                .and_then(|rel| rel.strip_suffix(".py"))
                .is_some_and(|rel| rel.split('/').all(is_identifier))
        })
    }

    /// The dotted name of a path [`module_entries`](Self::module_entries) gave.
    fn dotted_name(&self, path: &str) -> String {
        let rel = &path[self.root.len() + 1..path.len() - ".py".len()];
        let rel = if rel == "__init__" { "" } else { rel.strip_suffix("/__init__").unwrap_or(rel) };
        let mut name = String::with_capacity(self.name.len() + 1 + rel.len());
        name.push_str(&self.name);
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            name.push('.');
            name.push_str(part);
        }
        name
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
    if s.is_ascii() {
        let b = s.as_bytes();
        return !b.is_empty() && !b[0].is_ascii_digit() && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    }
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
