//! A plain directory as a tree: an unpacked wheel or a site-packages folder.

use super::{is_safe_tree_path, BlobId, Entry, SourceError, Tree};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

pub struct DirTree {
    root: PathBuf,
    entries: Vec<Entry>,
    /// Symbolic links below the root, skipped (never followed).
    symlinks: Vec<String>,
    /// Files whose relative path is not one a tree may hold (not UTF-8, `\\`).
    unsafe_paths: Vec<String>,
    /// Reads of listed files that failed (see [`Tree::failed_reads`]).
    failed_reads: std::sync::atomic::AtomicU64,
}

/// Content id for files outside git: git's own blob hashing would need SHA-1;
/// any stable content hash serves the cache, so this is SHA-256 of the bytes.
pub(super) fn content_id(bytes: &[u8]) -> BlobId {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

impl DirTree {
    /// List every regular file below `root`. Symlinks are not followed (a link
    /// could point out of the tree); they are skipped.
    pub fn open(root: &Path) -> Result<DirTree, SourceError> {
        let meta = std::fs::metadata(root).map_err(|e| SourceError::Open { path: root.to_path_buf(), message: e.to_string() })?;
        if !meta.is_dir() {
            return Err(SourceError::Open { path: root.to_path_buf(), message: "not a directory".into() });
        }
        let (mut entries, mut symlinks, mut unsafe_paths) = (Vec::new(), Vec::new(), Vec::new());
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let read = match std::fs::read_dir(&dir) {
                Ok(r) => r,
                Err(_) => continue,
            };
            for item in read.flatten() {
                let Ok(kind) = item.file_type() else { continue };
                let path = item.path();
                if kind.is_symlink() {
                    // Named, not followed: what it points at reads as absent.
                    symlinks.extend(relative(root, &path));
                    continue;
                }
                if kind.is_dir() {
                    if item.file_name() == ".git" {
                        continue;
                    }
                    stack.push(path);
                } else if kind.is_file() {
                    let Some(rel) = relative(root, &path) else {
                        unsafe_paths.push(path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned());
                        continue;
                    };
                    if !is_safe_tree_path(&rel) {
                        unsafe_paths.push(rel);
                        continue;
                    }
                    let meta = item.metadata().ok();
                    let id = meta.as_ref().map(|m| file_id(&path, m)).unwrap_or_default();
                    entries.push(Entry { path: rel, id, size: meta.map(|m| m.len()) });
                }
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        symlinks.sort();
        unsafe_paths.sort();
        Ok(DirTree { root: root.to_path_buf(), entries, symlinks, unsafe_paths, failed_reads: Default::default() })
    }
}

/// Files larger than this are never read by an extractor (see
/// `extract::parsed::MAX_SOURCE_BYTES`), so their content is not hashed
/// either: a site-packages folder holds compiled libraries of a gigabyte.
const MAX_HASHED_BYTES: u64 = 4 << 20;

/// A file's id: the hash of its content, streamed, when an extractor may read
/// it; else its size and modification time, which change when it does.
fn file_id(path: &Path, meta: &std::fs::Metadata) -> BlobId {
    if meta.len() > MAX_HASHED_BYTES {
        let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        return format!("unread:{}:{mtime}", meta.len());
    }
    let mut hasher = Sha256::new();
    let hashed = std::fs::File::open(path).and_then(|f| std::io::copy(&mut std::io::Read::take(f, MAX_HASHED_BYTES + 1), &mut hasher));
    match hashed {
        Ok(_) => hasher.finalize().iter().map(|b| format!("{b:02x}")).collect(),
        Err(_) => String::new(),
    }
}

fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

impl Tree for DirTree {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }
    fn symlinks(&self) -> &[String] {
        &self.symlinks
    }
    fn unsafe_paths(&self) -> &[String] {
        &self.unsafe_paths
    }
    fn failed_reads(&self) -> u64 {
        self.failed_reads.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        if !is_safe_tree_path(path) {
            return Err(SourceError::UnsafePath { path: path.into() });
        }
        if self.entry(path).is_none() {
            return Err(SourceError::MissingFile { path: path.into(), tree: self.describe() });
        }
        let read = std::fs::read(self.root.join(path)).map_err(|e| SourceError::Io { path: path.into(), message: e.to_string() });
        if read.as_ref().is_err_and(SourceError::is_read_failure) {
            self.failed_reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        read
    }
    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}
