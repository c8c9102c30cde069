//! What a cached fact was computed from, recorded by watching the tree.

use crate::source::{BlobId, Entry, SourceError, Tree};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The files a fact depends on: each path looked up (its blob id, or `None`
/// when it was absent), the fingerprint of the files under each folder the
/// extractor enumerated, and, when it enumerated the whole tree, the
/// fingerprint of the whole listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deps {
    pub files: BTreeMap<String, Option<BlobId>>,
    #[serde(default)]
    pub folders: BTreeMap<String, String>,
    pub listing: Option<String>,
}

impl Deps {
    /// Whether every recorded file and folder is unchanged in `tree` (and the
    /// listing, if recorded).
    pub(crate) fn hold(&self, tree: &dyn Tree) -> bool {
        let files_hold = self.files.iter().all(|(path, id)| tree.entry(path).map(|e| &e.id) == id.as_ref());
        let folders_hold = self.folders.iter().all(|(prefix, fp)| *fp == folder_fingerprint(tree, prefix));
        files_hold && folders_hold && self.listing.as_ref().is_none_or(|fp| *fp == listing_fingerprint(tree))
    }
}

/// A digest of the (path, blob id) pairs under `prefix`: always the files'
/// digest, never the commit, so a fact about one folder outlives commits that
/// leave the folder alone.
fn folder_fingerprint(tree: &dyn Tree, prefix: &str) -> String {
    files_fingerprint(tree.entries_under(prefix).iter().map(|e| (e.path.as_str(), e.id.as_str())))
}

/// A digest of every (path, blob id) of a tree: equal listings, equal fingerprints.
pub fn listing_fingerprint(tree: &dyn Tree) -> String {
    tree_files_fingerprint(tree, tree.entries().iter().map(|e| (e.path.as_str(), e.id.as_str())))
}

/// A fingerprint of `files`, (path, blob id) pairs of `tree`. A git tree's commit
/// already names every file, so it stands in for the digest (hashing ~5,000
/// entries per tree was a tenth of a warm audit's CPU).
pub fn tree_files_fingerprint<'a>(tree: &dyn Tree, files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    match tree.commit() {
        Some(commit) => format!("commit {commit}"),
        None => files_fingerprint(files),
    }
}

/// A digest of (path, blob id) pairs: equal files, equal fingerprints.
fn files_fingerprint<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut h = Sha256::new();
    for (path, id) in files {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(id.as_bytes());
        h.update([0]);
    }
    hex(&h.finalize())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A tree that records what is looked up through it, so an extractor's
/// dependencies are known without the extractor saying them.
pub struct RecordingTree<'t> {
    inner: &'t dyn Tree,
    seen: Mutex<BTreeMap<String, Option<BlobId>>>,
    folders: Mutex<BTreeSet<String>>,
    listed: AtomicBool,
    /// The inner tree's failed reads when recording began.
    failed_before: u64,
}

impl<'t> RecordingTree<'t> {
    pub fn new(inner: &'t dyn Tree) -> Self {
        RecordingTree {
            inner,
            seen: Mutex::new(BTreeMap::new()),
            folders: Mutex::default(),
            listed: AtomicBool::new(false),
            failed_before: inner.failed_reads(),
        }
    }

    /// Whether a read of the tree failed while recording: what was computed
    /// may lack that file and must not be kept.
    pub fn saw_failed_read(&self) -> bool {
        self.inner.failed_reads() > self.failed_before
    }

    /// Everything recorded so far.
    pub(crate) fn deps(&self) -> Deps {
        Deps {
            files: self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            folders: self
                .folders
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|prefix| (prefix.clone(), folder_fingerprint(self.inner, prefix)))
                .collect(),
            listing: self.listed.load(Ordering::Relaxed).then(|| listing_fingerprint(self.inner)),
        }
    }

    fn record(&self, path: &str) -> Option<&'t Entry> {
        let entry = self.inner.entry(path);
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).insert(path.to_string(), entry.map(|e| e.id.clone()));
        entry
    }
}

impl Tree for RecordingTree<'_> {
    fn entries(&self) -> &[Entry] {
        self.listed.store(true, Ordering::Relaxed);
        self.inner.entries()
    }

    fn entries_under(&self, prefix: &str) -> &[Entry] {
        self.folders.lock().unwrap_or_else(|p| p.into_inner()).insert(prefix.to_string());
        self.inner.entries_under(prefix)
    }

    fn entry(&self, path: &str) -> Option<&Entry> {
        self.record(path)
    }

    // Part of the listing: a commit's never change, so nothing to record.
    fn symlinks(&self) -> &[String] {
        self.inner.symlinks()
    }

    fn unsafe_paths(&self) -> &[String] {
        self.inner.unsafe_paths()
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        self.record(path);
        self.inner.read(path)
    }

    // Forwarded, not the default: the inner tree may know sizes the listing does not (git).
    fn read_limited(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        self.record(path);
        self.inner.read_limited(path, limit)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn commit(&self) -> Option<String> {
        self.inner.commit()
    }

    fn failed_reads(&self) -> u64 {
        self.inner.failed_reads()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemTree;

    #[test]
    fn records_lookups_reads_and_listing() {
        let tree = MemTree::from_files("t", [("a.py", "A"), ("b.py", "B")]);
        let rec = RecordingTree::new(&tree);
        assert!(rec.contains("a.py"));
        assert!(!rec.contains("missing.py"));
        let deps = rec.deps();
        assert_eq!(deps.files.len(), 2);
        assert_eq!(deps.files["missing.py"], None);
        assert!(deps.listing.is_none());
        assert!(deps.hold(&tree));

        // The same path with other bytes, or the missing file appearing, breaks them.
        let changed = MemTree::from_files("t", [("a.py", "A2"), ("b.py", "B")]);
        assert!(!deps.hold(&changed));
        let appeared = MemTree::from_files("t", [("a.py", "A"), ("b.py", "B"), ("missing.py", "")]);
        assert!(!deps.hold(&appeared));
        // b.py was never looked at: changing it does not matter.
        let other = MemTree::from_files("t", [("a.py", "A"), ("b.py", "B2")]);
        assert!(deps.hold(&other));

        let _ = rec.entries();
        let listed = rec.deps();
        assert!(listed.hold(&tree));
        assert!(!listed.hold(&other), "an enumerating extractor depends on every file");
    }

    #[test]
    fn a_listed_folder_is_a_dependency_and_the_rest_of_the_tree_is_not() {
        let tree = MemTree::from_files("t", [("p/hooks/a.py", "A"), ("p/hooks_extra.py", "X"), ("p/other.py", "O")]);
        let rec = RecordingTree::new(&tree);
        assert_eq!(rec.entries_under("p/hooks/").len(), 1);
        let deps = rec.deps();
        assert!(deps.listing.is_none() && deps.folders.contains_key("p/hooks/"));
        assert!(deps.hold(&tree));
        // Outside the folder (a sibling sharing the name's start included): still held.
        let outside = MemTree::from_files("t", [("p/hooks/a.py", "A"), ("p/hooks_extra.py", "X2"), ("p/other.py", "O"), ("p/new.py", "")]);
        assert!(deps.hold(&outside));
        // A file added, changed or removed in the folder: not.
        let added = MemTree::from_files("t", [("p/hooks/a.py", "A"), ("p/hooks/b.py", ""), ("p/hooks_extra.py", "X"), ("p/other.py", "O")]);
        let changed = MemTree::from_files("t", [("p/hooks/a.py", "A2"), ("p/hooks_extra.py", "X"), ("p/other.py", "O")]);
        let removed = MemTree::from_files("t", [("p/hooks_extra.py", "X"), ("p/other.py", "O")]);
        for (what, tree) in [("added", &added), ("changed", &changed), ("removed", &removed)] {
            assert!(!deps.hold(tree), "{what}");
        }
    }
}
