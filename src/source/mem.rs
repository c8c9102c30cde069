//! An in-memory tree: fixtures in tests, and the extractors' unit tests.

use super::{is_safe_tree_path, Entry, SourceError, Tree};
use std::collections::BTreeMap;

#[derive(Debug, Default, Clone)]
pub struct MemTree {
    name: String,
    entries: Vec<Entry>,
    files: BTreeMap<String, Vec<u8>>,
}

impl MemTree {
    pub fn new(name: &str) -> Self {
        MemTree { name: name.to_string(), ..Default::default() }
    }

    /// Build from `(path, text)` pairs.
    pub fn from_files<'a>(name: &str, files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut tree = MemTree::new(name);
        for (path, text) in files {
            tree.insert(path, text.as_bytes().to_vec());
        }
        tree
    }

    pub fn insert(&mut self, path: &str, bytes: Vec<u8>) {
        assert!(is_safe_tree_path(path), "unsafe fixture path {path}");
        let id = super::dir::content_id(&bytes);
        self.files.insert(path.to_string(), bytes);
        self.entries.retain(|e| e.path != path);
        self.entries.push(Entry { path: path.to_string(), id, size: Some(self.files[path].len() as u64) });
        self.entries.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

impl Tree for MemTree {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        self.files.get(path).cloned().ok_or_else(|| SourceError::MissingFile { path: path.to_string(), tree: self.name.clone() })
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
}
