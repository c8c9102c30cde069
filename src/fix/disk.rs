//! `--fix` on disk: which planned files may be written, and writing them without
//! losing anything.
//!
//! Only regular files inside the folders given are written, never through a
//! symlink, never a file marked read-only or one with several hard links (a new
//! file in its place would split them). A file is replaced by a new one (temp
//! file in the same folder, then rename) that keeps its permissions and owner,
//! and only while it still is the file, with the text, the audit read.
//!
//! The remaining window: the last look at the original (its identity, times and
//! text) is taken right before `rename(2)`; a write that lands between that look
//! and the rename is lost. Closing it would need a lock every editor honours,
//! which does not exist.

use super::{FilePatch, FixError, FixPlan};
use std::collections::{BTreeSet, HashMap};
use std::fs::{File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The tool's temp files: this prefix and [`TEMP_RAND_LEN`] random letters or digits.
const TEMP_PREFIX: &str = ".engine-audit-fix-";
const TEMP_RAND_LEN: usize = 6;
/// A temp file this old is a leftover of a killed run: a live run renames its
/// temp file moments after creating it, so a concurrent run's is never this old.
const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// What writing the patches did.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Fixes in the files written.
    pub fixes: usize,
    /// Files written.
    pub files: usize,
    pub failures: Vec<FixError>,
}

/// Move out of `plan.patches` (into `plan.skipped`) the files `--fix` must not
/// write: see the module header. `roots` are the folders given (a file's own
/// folder for a file given).
pub(crate) fn screen(mut plan: FixPlan, roots: &[PathBuf]) -> FixPlan {
    let roots: Vec<PathBuf> = roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).collect();
    let mut seen: HashMap<sys::FileId, String> = HashMap::new();
    let mut kept = Vec::new();
    for patch in std::mem::take(&mut plan.patches) {
        match vet(&patch, &roots, &mut seen) {
            Ok(()) => kept.push(patch),
            Err(e) => plan.skipped.push(e),
        }
    }
    plan.patches = kept;
    plan
}

/// Why `patch` must not be written, if it must not.
fn vet(patch: &FilePatch, roots: &[PathBuf], seen: &mut HashMap<sys::FileId, String>) -> Result<(), FixError> {
    let meta = patch.regular_file()?;
    if !within(&patch.disk_path, roots) {
        return Err(FixError::Outside { path: patch.path.clone() });
    }
    patch.single_link(&meta)?;
    // One file named twice (`a/x.yaml`, `a/../a/x.yaml`) is written once: the
    // second write would find the first one's text and fail.
    if let Some(id) = sys::file_id(&meta) {
        if let Some(first) = seen.get(&id) {
            return Err(FixError::SameFile { path: patch.path.clone(), first: first.clone() });
        }
        seen.insert(id, patch.path.clone());
    }
    patch.writable(&meta)
}

/// `path`'s folder, resolved, is one of `roots` or below one: no `..` or
/// symlinked folder leads the write out of the tree given.
fn within(path: &Path, roots: &[PathBuf]) -> bool {
    std::fs::canonicalize(folder_of(path)).is_ok_and(|folder| roots.iter().any(|root| folder.starts_with(root)))
}

/// The folder a file is in (`.` for a bare file name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Write the patches, each folder cleared of stale temp files first; failures are
/// collected, not fatal: the other files are still fixed.
pub(crate) fn apply(patches: &[FilePatch]) -> Applied {
    let mut applied = Applied::default();
    let mut cleaned = BTreeSet::new();
    for patch in patches {
        let folder = folder_of(&patch.disk_path);
        if cleaned.insert(folder.to_path_buf()) {
            clean_stale_temps(folder);
        }
        match patch.write() {
            Ok(()) => {
                applied.fixes += patch.fixes;
                applied.files += 1;
            }
            Err(e) => applied.failures.push(e),
        }
    }
    applied
}

/// Remove the temp files a killed `--fix` left in `folder`: only names the tool
/// makes, only regular files, only stale ones. Best effort: a leftover that
/// cannot be removed is no reason not to fix.
pub(crate) fn clean_stale_temps(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        if !is_temp_name(&entry.file_name()) {
            continue;
        }
        // `DirEntry::metadata` does not follow a symlink.
        let Ok(meta) = entry.metadata() else { continue };
        let age = meta.modified().ok().and_then(|m| now.duration_since(m).ok());
        if meta.is_file() && age.is_some_and(|age| age > STALE_AFTER) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    let rest = name.to_str().and_then(|n| n.strip_prefix(TEMP_PREFIX));
    rest.is_some_and(|r| r.len() == TEMP_RAND_LEN && r.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// What must not change between the first look at a file and its replacement:
/// which file it is, its size and its times. The text is compared besides (a
/// write within one timestamp tick that keeps the size changes no field here).
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    id: Option<sys::FileId>,
    len: u64,
    modified: Option<SystemTime>,
    changed: Option<(i64, i64)>,
}

impl Snapshot {
    fn of(meta: &Metadata) -> Snapshot {
        Snapshot { id: sys::file_id(meta), len: meta.len(), modified: meta.modified().ok(), changed: sys::ctime(meta) }
    }
}

impl FilePatch {
    /// Write the new text in place of the old: see the module header.
    pub(crate) fn write(&self) -> Result<(), FixError> {
        self.write_observed(|| {})
    }

    /// [`write`](Self::write), running `between` once the temp file is complete
    /// and before the last look at the original: a test stands for another
    /// writer there.
    #[doc(hidden)]
    pub fn write_observed(&self, between: impl FnOnce()) -> Result<(), FixError> {
        // The first look comes before the text is read: a change after it shows
        // in the last look even when the text read was already the new one.
        let first = self.regular_file()?;
        self.single_link(&first)?;
        self.writable(&first)?;
        let state = Snapshot::of(&first);
        self.holds_before()?;
        let folder = folder_of(&self.disk_path);
        let mut tmp = tempfile::Builder::new().prefix(TEMP_PREFIX).rand_bytes(TEMP_RAND_LEN).tempfile_in(folder).map_err(|e| self.io(e))?;
        tmp.write_all(self.after.as_bytes()).map_err(|e| self.io(e))?;
        sys::keep_owner(self, tmp.as_file(), &first)?;
        // After the owner: a change of owner clears set-id bits.
        tmp.as_file().set_permissions(first.permissions()).map_err(|e| self.io(e))?;
        tmp.as_file().sync_all().map_err(|e| self.io(e))?;
        between();
        // The last look, as late as it can be. Whatever the file became meanwhile
        // (a symlink, gone), it is not the file read.
        let last = self.regular_file().map_err(|_| FixError::Changed { path: self.path.clone() })?;
        if Snapshot::of(&last) != state {
            return Err(FixError::Changed { path: self.path.clone() });
        }
        self.holds_before()?;
        // `rename` replaces the name, never what a name links to.
        tmp.persist(&self.disk_path).map_err(|e| self.io(e.error))?;
        // Best effort: the rename itself reaches the disk with the folder.
        let _ = File::open(folder).and_then(|f| f.sync_all());
        Ok(())
    }

    fn io(&self, e: std::io::Error) -> FixError {
        FixError::Io { path: self.path.clone(), message: e.to_string() }
    }

    /// The file's own metadata (a symlink is not followed), when it is a regular file.
    fn regular_file(&self) -> Result<Metadata, FixError> {
        let meta = std::fs::symlink_metadata(&self.disk_path).map_err(|e| self.io(e))?;
        if meta.file_type().is_symlink() {
            return Err(FixError::Symlink { path: self.path.clone() });
        }
        if !meta.is_file() {
            return Err(FixError::NotRegular { path: self.path.clone() });
        }
        Ok(meta)
    }

    fn single_link(&self, meta: &Metadata) -> Result<(), FixError> {
        match sys::links(meta) {
            links if links > 1 => Err(FixError::HardLinks { path: self.path.clone(), links }),
            _ => Ok(()),
        }
    }

    /// The user may write the file: it is not marked read-only (which binds root
    /// too, as editors treat it), and it opens for writing. Opening writes nothing.
    fn writable(&self, meta: &Metadata) -> Result<(), FixError> {
        if meta.permissions().readonly() {
            return Err(FixError::ReadOnly { path: self.path.clone() });
        }
        match File::options().write(true).open(&self.disk_path) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(FixError::ReadOnly { path: self.path.clone() }),
            Err(e) => Err(self.io(e)),
        }
    }

    /// The file still holds the text the audit read.
    fn holds_before(&self) -> Result<(), FixError> {
        let on_disk = std::fs::read(&self.disk_path).map_err(|e| self.io(e))?;
        if on_disk != self.before.as_bytes() {
            return Err(FixError::Changed { path: self.path.clone() });
        }
        Ok(())
    }
}

/// What only some systems have: file identity, link counts, ownership.
#[cfg(unix)]
mod sys {
    use super::{FilePatch, FixError};
    use std::fs::{File, Metadata};
    use std::os::unix::fs::MetadataExt;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub(super) struct FileId {
        dev: u64,
        ino: u64,
    }

    pub(super) fn file_id(meta: &Metadata) -> Option<FileId> {
        Some(FileId { dev: meta.dev(), ino: meta.ino() })
    }

    pub(super) fn ctime(meta: &Metadata) -> Option<(i64, i64)> {
        Some((meta.ctime(), meta.ctime_nsec()))
    }

    pub(super) fn links(meta: &Metadata) -> u64 {
        meta.nlink()
    }

    /// Give the new file the original's owner and group; when that is not
    /// allowed, refuse rather than hand the file to whoever runs `--fix`.
    pub(super) fn keep_owner(patch: &FilePatch, tmp: &File, original: &Metadata) -> Result<(), FixError> {
        let mine = tmp.metadata().map_err(|e| patch.io(e))?;
        let (uid, gid) = (original.uid(), original.gid());
        if (mine.uid(), mine.gid()) == (uid, gid) {
            return Ok(());
        }
        std::os::unix::fs::fchown(tmp, Some(uid), Some(gid)).map_err(|e| FixError::Owner {
            path: patch.path.clone(),
            uid,
            gid,
            message: e.to_string(),
        })
    }
}

#[cfg(not(unix))]
mod sys {
    use super::{FilePatch, FixError};
    use std::fs::{File, Metadata};

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub(crate) enum FileId {}

    pub(crate) fn file_id(_: &Metadata) -> Option<FileId> {
        None
    }

    pub(crate) fn ctime(_: &Metadata) -> Option<(i64, i64)> {
        None
    }

    pub(crate) fn links(_: &Metadata) -> u64 {
        1
    }

    pub(crate) fn keep_owner(_: &FilePatch, _: &File, _: &Metadata) -> Result<(), FixError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(path: &Path, before: &str, after: &str) -> FilePatch {
        FilePatch { path: path.display().to_string(), disk_path: path.into(), before: before.into(), after: after.into(), fixes: 1 }
    }

    #[test]
    fn writes_atomically_and_refuses_a_file_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.yaml");
        std::fs::write(&path, "a: 1\n").unwrap();
        let patch = patch(&path, "a: 1\n", "a: 2\n");
        patch.write().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a: 2\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left behind");
        assert!(matches!(patch.write(), Err(FixError::Changed { .. })));
    }

    #[test]
    fn the_temp_name_pattern_is_the_tools_own() {
        for (name, ours) in [
            (".engine-audit-fix-AbC123", true),
            (".engine-audit-fix-AbC12", false),
            (".engine-audit-fix-AbC1234", false),
            (".engine-audit-fix-AbC-12", false),
            (".engine-audit-fix-notes.txt", false),
            ("engine-audit-fix-AbC123", false),
        ] {
            assert_eq!(is_temp_name(name.as_ref()), ours, "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        let made = tempfile::Builder::new().prefix(TEMP_PREFIX).rand_bytes(TEMP_RAND_LEN).tempfile_in(dir.path()).unwrap();
        assert!(is_temp_name(made.path().file_name().unwrap()), "{}", made.path().display());
    }
}
