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
        let mut out: Vec<Module> =
            self.module_entries().map(|e| Module { name: self.dotted_name(&e.path), path: e.path.clone(), symbols: None }).collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out.dedup_by(|a, b| a.name == b.name);
        out
    }

    /// The tree entries of every module file, in path order, without building
    /// names (the env-read scan only needs the files).
    pub(crate) fn module_entries(&self) -> impl Iterator<Item = &'t Entry> + '_ {
        let root = self.root.as_str();
        // Entries are sorted by path: the package's files are one run of them.
        crate::source::entries_with_prefix(self.tree.entries(), root).iter().filter(move |e| module_rel(root, &e.path).is_some())
    }

    /// The module files under `rel` (a folder relative to the package root,
    /// ending in `/`), listed so that only that folder is a dependency.
    pub(crate) fn module_entries_under(&self, rel: &str) -> impl Iterator<Item = &'t Entry> + '_ {
        let root = self.root.as_str();
        self.tree.entries_under(&format!("{root}/{rel}")).iter().filter(move |e| module_rel(root, &e.path).is_some())
    }

    /// The dotted name of a path [`module_entries`](Self::module_entries) gave.
    pub(crate) fn dotted_name(&self, path: &str) -> String {
        self.dotted(&path[self.root.len() + 1..path.len() - ".py".len()])
    }

    /// `srt/utils/common` → `sglang.srt.utils.common`; `srt/__init__` → `sglang.srt`.
    fn dotted(&self, rel: &str) -> String {
        let rel = if rel == "__init__" { "" } else { rel.strip_suffix("/__init__").unwrap_or(rel) };
        let mut name = Vec::with_capacity(self.name.len() + 1 + rel.len());
        name.extend_from_slice(self.name.as_bytes());
        if !rel.is_empty() {
            name.push(b'.');
            // Byte for byte: `/` and `.` are ASCII, so UTF-8 stays valid.
            name.extend(rel.bytes().map(|b| if b == b'/' { b'.' } else { b }));
        }
        String::from_utf8(name).unwrap_or_default()
    }

    /// The file defining a dotted module: `x/y.py` or `x/y/__init__.py`.
    pub(crate) fn module_path(&self, dotted: &str) -> Option<String> {
        let rest = if dotted == self.name { "" } else { dotted.strip_prefix(&self.name)?.strip_prefix('.')? };
        let base = if rest.is_empty() { self.root.clone() } else { format!("{}/{}", self.root, rest.replace('.', "/")) };
        let file = format!("{base}.py");
        if !rest.is_empty() && self.tree.contains(&file) {
            return Some(file);
        }
        let init = format!("{base}/__init__.py");
        self.tree.contains(&init).then_some(init)
    }

    /// Resolve a relative import (`from ..x import y` in module `m`) to a dotted name.
    pub(crate) fn resolve_relative(&self, current_module: &str, is_package: bool, dots: usize, rest: &str) -> Option<String> {
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

/// The part of a module file's path that names it (`srt/utils/common` of
/// `python/sglang/srt/utils/common.py` under `python/sglang`), when every part
/// is an identifier.
fn module_rel<'p>(root: &str, path: &'p str) -> Option<&'p str> {
    let rel = path.strip_prefix(root)?.strip_prefix('/')?.strip_suffix(".py")?;
    is_module_rel(rel).then_some(rel)
}

/// Whether every `/`-separated part of `rel` is a Python identifier. One pass
/// over the bytes of an ASCII path (all of a real package's), instead of a
/// split and a check per part: this runs for every file of every tree.
fn is_module_rel(rel: &str) -> bool {
    let mut at_start = true;
    for &b in rel.as_bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => at_start = false,
            b'0'..=b'9' if !at_start => {}
            b'/' if !at_start => at_start = true,
            0x80.. => return rel.split('/').all(is_identifier),
            _ => return false,
        }
    }
    !at_start
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_are_identifiers_part_by_part() {
        for ok in ["a", "srt/utils/common", "_x/y2/__init__", "café/ünïcode", "a1/b_2"] {
            assert!(is_module_rel(ok), "{ok}");
        }
        for bad in ["", "/a", "a/", "a//b", "2fast", "a/1b", "a-b", "a.b", "a/b c", "a/ü-x", "a/\u{2003}"] {
            assert!(!is_module_rel(bad), "{bad}");
        }
        // The byte pass agrees with the per-part check on every ASCII shape.
        for rel in ["a", "a/b", "a_/9", "_/_", "a/b/", "A/Z9/_0"] {
            assert_eq!(is_module_rel(rel), rel.split('/').all(is_identifier), "{rel}");
        }
    }
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
        assert_eq!(names, ["sglang", "sglang.srt", "sglang.srt.environ", "sglang.srt.utils", "sglang.srt.utils.common"]);
        assert_eq!(pkg.module_path("sglang.srt.utils").as_deref(), Some("python/sglang/srt/utils/__init__.py"));
        assert_eq!(pkg.module_path("sglang.srt.environ").as_deref(), Some("python/sglang/srt/environ.py"));
        assert_eq!(pkg.module_path("sglang.srt.missing"), None);
        assert_eq!(pkg.resolve_relative("sglang.srt.utils.common", false, 2, "environ").as_deref(), Some("sglang.srt.environ"));
        assert_eq!(pkg.resolve_relative("sglang.srt.utils", true, 1, "common").as_deref(), Some("sglang.srt.utils.common"));
    }
}
