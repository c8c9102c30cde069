//! The cache folder: which files in it are the cache's, and the only ones it
//! ever deletes.
//!
//! The folder is named by the user (`ENGINE_AUDIT_CACHE_DIR`), so it may hold
//! anything: photos, the clone cache, another tool's files. The cache touches
//! only what it names itself, `<2 hex>/<62 hex>.fact` and its own `.tmp-*`
//! files inside such shard folders, and writes only into a folder that is its
//! own: one it created (tagged with a `CACHEDIR.TAG`, the standard that backup
//! tools also honour, <https://bford.info/cachedir/>), or an empty one.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub(super) const TAG_NAME: &str = "CACHEDIR.TAG";
/// The first line every cache directory tag starts with (the standard's).
const TAG_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";
const TAG_BODY: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by engine-audit (its fact cache).\n\
# For information about cache directory tags, see https://bford.info/cachedir/\n";

/// A temporary file older than this is a leftover of a killed run: a write
/// takes milliseconds from creation to rename.
pub(super) const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// `tempfile`'s names: this prefix and six random alphanumerics.
pub(super) const TEMP_PREFIX: &str = ".tmp-";
const TEMP_RANDOM_LEN: usize = 6;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub(crate) enum CacheError {
    #[error(
        "{dir} is not an engine-audit fact cache: it has no CACHEDIR.TAG and holds files the cache did not write; nothing was removed"
    )]
    #[diagnostic(
        code(engine_audit::cache::not_a_cache),
        help("ENGINE_AUDIT_CACHE_DIR must name a folder of its own (the cache creates it and tags it); delete what you no longer need yourself")
    )]
    NotACache { dir: String },

    #[error("cannot read the fact cache folder {dir}: {source}")]
    #[diagnostic(code(engine_audit::cache::unreadable), help("check the folder's permissions"))]
    Unreadable { dir: String, source: io::Error },

    #[error("could not remove {failed} of {total} cache entries in {dir}: {first}")]
    #[diagnostic(
        code(engine_audit::cache::not_removed),
        help("the folder is read-only to you or in use; fix its permissions, or delete it yourself")
    )]
    NotRemoved { dir: String, failed: u64, total: u64, first: io::Error },
}

/// What a file in a shard is to the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Entry,
    Temp,
}

/// One file the cache named: where, how large, when last written.
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub path: PathBuf,
    pub size: u64,
    pub modified: SystemTime,
    pub kind: Kind,
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `ab`: the folder an entry's first two hex digits name.
pub(super) fn is_shard_name(name: &str) -> bool {
    name.len() == 2 && is_lower_hex(name)
}

fn kind_of(name: &str) -> Option<Kind> {
    if let Some(stem) = name.strip_suffix(".fact") {
        return (stem.len() == 62 && is_lower_hex(stem)).then_some(Kind::Entry);
    }
    let random = name.strip_prefix(TEMP_PREFIX)?;
    (random.len() == TEMP_RANDOM_LEN && random.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(Kind::Temp)
}

/// Whether `dir` carries a cache directory tag.
fn is_tagged(dir: &Path) -> bool {
    let mut head = [0u8; TAG_SIGNATURE.len()];
    std::fs::File::open(dir.join(TAG_NAME)).and_then(|mut f| io::Read::read_exact(&mut f, &mut head)).is_ok()
        && head == TAG_SIGNATURE.as_bytes()
}

/// Whether every item of `dir` is a shard folder holding only names the cache
/// gives: an untagged folder an older engine-audit wrote.
fn only_cache_files(dir: &Path) -> io::Result<bool> {
    for item in std::fs::read_dir(dir)? {
        let item = item?;
        let name = item.file_name();
        let Some(name) = name.to_str().filter(|n| is_shard_name(n)) else { return Ok(false) };
        if !item.file_type()?.is_dir() {
            return Ok(false);
        }
        for file in std::fs::read_dir(dir.join(name))? {
            let file = file?;
            if !file.file_type()?.is_file() || file.file_name().to_str().and_then(kind_of).is_none() {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Whether `dir` is the cache's: tagged, or holding nothing but its files.
fn is_ours(dir: &Path) -> io::Result<bool> {
    Ok(is_tagged(dir) || only_cache_files(dir)?)
}

/// Make `dir` the cache's before the first write: create and tag it, or tag
/// a folder with nothing else in it. A folder with other files is refused.
pub(super) fn claim(dir: &Path) -> Result<(), CacheError> {
    let unreadable = |source| CacheError::Unreadable { dir: dir.display().to_string(), source };
    std::fs::create_dir_all(dir).map_err(unreadable)?;
    if is_tagged(dir) {
        return Ok(());
    }
    if !only_cache_files(dir).map_err(unreadable)? {
        return Err(CacheError::NotACache { dir: dir.display().to_string() });
    }
    write_tag(dir).map_err(unreadable)
}

/// Another process may tag the folder at the same moment: either tag will do.
fn write_tag(dir: &Path) -> io::Result<()> {
    match std::fs::File::create_new(dir.join(TAG_NAME)) {
        Ok(mut file) => file.write_all(TAG_BODY.as_bytes()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Every entry and temporary file of the cache in `dir`; nothing else is
/// looked at. Shard folders are not followed through links (a link could lead
/// to files the cache never wrote).
pub(super) fn items(dir: &Path) -> io::Result<Vec<Item>> {
    let mut out = Vec::new();
    let shards = match std::fs::read_dir(dir) {
        Ok(shards) => shards,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for shard in shards {
        let shard = shard?;
        if !shard.file_name().to_str().is_some_and(is_shard_name) || !shard.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(shard.path())? {
            let file = file?;
            let Some(kind) = file.file_name().to_str().and_then(kind_of) else { continue };
            let meta = file.metadata()?;
            if meta.is_file() {
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                out.push(Item { path: file.path(), size: meta.len(), modified, kind });
            }
        }
    }
    Ok(out)
}

/// Items a bounded pass may look at: an unreadable folder has none.
pub(super) fn items_or_none(dir: &Path) -> Vec<Item> {
    items(dir).unwrap_or_default()
}

/// Remove temporary files older than [`STALE_TEMP_AGE`] (left by a killed run)
/// and, past `limit` bytes, the oldest entries down to `target`.
pub(super) fn evict(dir: &Path, limit: u64, target: u64, now: SystemTime) {
    let (temps, mut entries): (Vec<Item>, Vec<Item>) = items_or_none(dir).into_iter().partition(|i| i.kind == Kind::Temp);
    let mut total: u64 = entries.iter().map(|e| e.size).sum();
    for temp in temps {
        if now.duration_since(temp.modified).is_ok_and(|age| age > STALE_TEMP_AGE) {
            // Gone already (renamed or removed by its writer) is as good.
            let _ = std::fs::remove_file(&temp.path);
        } else {
            total += temp.size;
        }
    }
    if total <= limit {
        return;
    }
    entries.sort_by(|a, b| (a.modified, &a.path).cmp(&(b.modified, &b.path)));
    for entry in entries {
        if total <= target {
            break;
        }
        // Another process may have removed or replaced it: either way it is gone.
        let _ = std::fs::remove_file(&entry.path);
        total = total.saturating_sub(entry.size);
    }
}

/// Remove every entry and temporary file; the count removed, or what could
/// not be removed. A folder that is not the cache's is refused whole.
pub(super) fn clear(dir: &Path) -> Result<u64, CacheError> {
    let unreadable = |source| CacheError::Unreadable { dir: dir.display().to_string(), source };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(unreadable(e)),
        Ok(_) => {}
    }
    if !is_ours(dir).map_err(unreadable)? {
        return Err(CacheError::NotACache { dir: dir.display().to_string() });
    }
    let found = items(dir).map_err(unreadable)?;
    let total = found.len() as u64;
    let (mut removed, mut failures) = (0, Vec::new());
    for item in found {
        match std::fs::remove_file(&item.path) {
            Ok(()) => removed += 1,
            // Removed meanwhile by another run's eviction.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => failures.push(e),
        }
    }
    remove_empty_shards(dir);
    let failed = failures.len() as u64;
    match failures.into_iter().next() {
        Some(first) => Err(CacheError::NotRemoved { dir: dir.display().to_string(), failed, total, first }),
        None => Ok(removed),
    }
}

/// Shard folders left empty by a clear; one holding anything else stays.
fn remove_empty_shards(dir: &Path) {
    let Ok(shards) = std::fs::read_dir(dir) else { return };
    for shard in shards.flatten() {
        if shard.file_name().to_str().is_some_and(is_shard_name) && shard.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir(shard.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_the_cache_gives_are_its_own() {
        let entry = format!("{}.fact", "0123456789abcdef".repeat(4).get(..62).unwrap());
        assert_eq!(kind_of(&entry), Some(Kind::Entry));
        assert_eq!(kind_of(".tmp-Ab3xYz"), Some(Kind::Temp));
        for other in
            ["photo.jpg", ".tmp-", ".tmp-toolongname", "a.fact", &entry.to_uppercase(), &format!("{entry}.bak"), &entry.replace('a', "g")]
        {
            assert_eq!(kind_of(other), None, "{other}");
        }
        assert!(is_shard_name("0f") && !is_shard_name("0F") && !is_shard_name("abc") && !is_shard_name("zz"));
    }
}
