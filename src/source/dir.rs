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
}

/// Content id for files outside git: git's own blob hashing would need SHA-1;
/// any stable content hash serves the cache, so this is SHA-256 of the bytes.
pub fn content_id(bytes: &[u8]) -> BlobId {
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
        let meta = std::fs::metadata(root).map_err(|e| SourceError::Open {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        if !meta.is_dir() {
            return Err(SourceError::Open {
                path: root.to_path_buf(),
                message: "not a directory".into(),
            });
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
                    let size = item.metadata().map(|m| m.len()).ok();
                    // The id is the content hash, computed lazily would need interior
                    // mutability; files are read once anyway, so hash the size+mtime
                    // key here and the bytes on read. Keep the contract simple: hash now.
                    let id = std::fs::read(&path).map(|b| content_id(&b)).unwrap_or_default();
                    entries.push(Entry { path: rel, id, size });
                }
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        symlinks.sort();
        unsafe_paths.sort();
        Ok(DirTree { root: root.to_path_buf(), entries, symlinks, unsafe_paths })
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
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        if !is_safe_tree_path(path) {
            return Err(SourceError::UnsafePath { path: path.into() });
        }
        if self.entry(path).is_none() {
            return Err(SourceError::MissingFile {
                path: path.into(),
                tree: self.describe(),
            });
        }
        let read = std::fs::read(self.root.join(path)).map_err(|e| SourceError::Io {
            path: path.into(),
            message: e.to_string(),
        });
        if let Err(e) = &read {
            super::note_read_error(e);
        }
        read
    }
    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}
