//! Entries on disk: one file per (version, kind, key), written atomically,
//! decoded defensively, evicted oldest first.

use super::deps::{hex, Deps};
use crate::source::Tree;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

/// First bytes of every entry: anything else in the folder is not ours.
const MAGIC: &[u8] = b"engine-audit-facts v1\n";
/// Variants kept per key: enough for the refs one audit compares.
const MAX_VARIANTS: usize = 4;
/// Default size bound of the folder.
pub const DEFAULT_LIMIT_BYTES: u64 = 256 << 20;
/// After an eviction the folder is brought down to this fraction of the limit,
/// so the next few runs do not evict again.
const EVICT_TO_PERCENT: u64 = 80;

#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    version: String,
    kind: String,
    key: String,
    variants: Vec<Variant<T>>,
}

/// The first line of a binary entry (JSON never holds a raw newline).
#[derive(Serialize, Deserialize)]
struct RawHeader {
    version: String,
    kind: String,
    key: String,
}

#[derive(Serialize, Deserialize)]
struct Variant<T> {
    deps: Deps,
    value: T,
}

/// Where facts are kept, or nowhere (`--no-cache`). Cheap to clone.
#[derive(Clone, Debug)]
pub struct FactCache {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    version: String,
    limit: u64,
    /// Whether this process wrote anything (eviction runs only then).
    wrote: AtomicBool,
}

/// What `cache stats` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub dir: String,
    pub entries: u64,
    pub bytes: u64,
    pub limit: u64,
}

static DISABLED: AtomicBool = AtomicBool::new(false);

impl FactCache {
    pub fn disabled() -> Self {
        FactCache { inner: None }
    }

    /// A cache in `dir` (created on first write).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self::with_limit(dir, DEFAULT_LIMIT_BYTES)
    }

    pub fn with_limit(dir: impl Into<PathBuf>, limit: u64) -> Self {
        match extractor_version() {
            Some(version) => FactCache {
                inner: Some(Arc::new(Inner { dir: dir.into(), version, limit, wrote: AtomicBool::new(false) })),
            },
            // Without a binary fingerprint, stale facts could not be told apart.
            None => Self::disabled(),
        }
    }

    /// `--no-cache` for the rest of the process.
    pub fn disable_default() {
        DISABLED.store(true, Ordering::Relaxed);
    }

    /// The process-wide cache: `$ENGINE_AUDIT_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/engine-audit/facts`, else `~/.cache/engine-audit/facts`;
    /// disabled by `--no-cache` or `ENGINE_AUDIT_NO_CACHE=1`.
    pub fn default_cache() -> FactCache {
        if DISABLED.load(Ordering::Relaxed) || std::env::var_os("ENGINE_AUDIT_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
            return Self::disabled();
        }
        match default_dir() {
            Some(dir) => Self::at(dir),
            None => Self::disabled(),
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.inner.as_ref().map(|i| i.dir.as_path())
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The first stored variant of (kind, key) whose deps hold in `tree`.
    pub fn get<T: DeserializeOwned>(&self, kind: &str, key: &str, tree: &dyn Tree) -> Option<T> {
        let inner = self.inner.as_ref()?;
        let envelope: Envelope<T> = decode(&std::fs::read(inner.path(kind, key)).ok()?)?;
        if envelope.version != inner.version || envelope.kind != kind || envelope.key != key {
            return None;
        }
        envelope.variants.into_iter().find(|v| v.deps.hold(tree)).map(|v| v.value)
    }

    /// A binary body stored with [`put_bytes`](Self::put_bytes): for values whose
    /// JSON decoding would cost more than the work it saves. Its key says
    /// everything it was computed from; the body checks itself.
    pub fn get_bytes(&self, kind: &str, key: &str) -> Option<Vec<u8>> {
        let inner = self.inner.as_ref()?;
        let mut bytes = std::fs::read(inner.path(kind, key)).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let line = rest.iter().position(|&b| b == b'\n')?;
        let head: RawHeader = serde_json::from_slice(&rest[..line]).ok()?;
        if head.version != inner.version || head.kind != kind || head.key != key {
            return None;
        }
        let start = MAGIC.len() + line + 1;
        bytes.drain(..start);
        Some(bytes)
    }

    /// Store a binary body under (kind, key), replacing what was there.
    pub fn put_bytes(&self, kind: &str, key: &str, body: &[u8]) {
        let Some(inner) = self.inner.as_ref() else { return };
        let head = RawHeader { version: inner.version.clone(), kind: kind.to_string(), key: key.to_string() };
        let Ok(mut out) = serde_json::to_vec(&head) else { return };
        out.push(b'\n');
        out.extend_from_slice(body);
        if write_atomic(&inner.path(kind, key), &out).is_ok() {
            inner.wrote.store(true, Ordering::Relaxed);
        }
    }

    /// Store a value computed from `deps`, in front of the variants already there.
    /// Errors (read-only folder, full disk) only cost a future recomputation.
    pub fn put<T: Serialize>(&self, kind: &str, key: &str, deps: Deps, value: &T) {
        let Some(inner) = self.inner.as_ref() else { return };
        let path = inner.path(kind, key);
        let mut variants: Vec<Variant<serde_json::Value>> = Vec::new();
        let Ok(value) = serde_json::to_value(value) else { return };
        variants.push(Variant { deps, value });
        // Keep older variants (the other ref of a bump) unless they are equivalent.
        if let Some(old) = std::fs::read(&path).ok().and_then(|b| decode::<serde_json::Value>(&b)) {
            if old.version == inner.version && old.kind == kind && old.key == key {
                for v in old.variants {
                    if variants.len() < MAX_VARIANTS && v.deps != variants[0].deps {
                        variants.push(v);
                    }
                }
            }
        }
        let envelope = Envelope { version: inner.version.clone(), kind: kind.to_string(), key: key.to_string(), variants };
        let Ok(json) = serde_json::to_vec(&envelope) else { return };
        if write_atomic(&path, &json).is_ok() {
            inner.wrote.store(true, Ordering::Relaxed);
        }
    }

    /// Evict the oldest entries when this process wrote and the folder is over its limit.
    pub fn evict_if_needed(&self) {
        let Some(inner) = self.inner.as_ref() else { return };
        if inner.wrote.swap(false, Ordering::Relaxed) {
            evict(&inner.dir, inner.limit);
        }
    }

    pub fn stats(&self) -> Option<CacheStats> {
        let inner = self.inner.as_ref()?;
        let files = entry_files(&inner.dir);
        Some(CacheStats {
            dir: inner.dir.display().to_string(),
            entries: files.len() as u64,
            bytes: files.iter().map(|f| f.1).sum(),
            limit: inner.limit,
        })
    }

    /// Remove every entry (and stray temporary files); returns how many files went.
    pub fn clear(&self) -> std::io::Result<u64> {
        let Some(inner) = self.inner.as_ref() else { return Ok(0) };
        let mut removed = 0;
        for (path, _, _) in entry_files(&inner.dir) {
            if std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

impl Inner {
    /// `<dir>/<2 hex>/<62 hex>.fact`: spread over subfolders to keep them small.
    fn path(&self, kind: &str, key: &str) -> PathBuf {
        let mut h = Sha256::new();
        for part in [self.version.as_str(), kind, key] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let name = hex(&h.finalize());
        self.dir.join(&name[..2]).join(format!("{}.fact", &name[2..]))
    }
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Option<Envelope<T>> {
    serde_json::from_slice(bytes.strip_prefix(MAGIC)?).ok()
}

/// Temp file in the same folder, then rename: readers never see a partial entry.
fn write_atomic(path: &Path, body: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("entry path has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(MAGIC)?;
    tmp.write_all(body)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Every file below the cache folder: (path, size, modified).
fn entry_files(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut out = Vec::new();
    let Ok(subdirs) = std::fs::read_dir(dir) else { return out };
    for sub in subdirs.flatten() {
        let Ok(files) = std::fs::read_dir(sub.path()) else { continue };
        for f in files.flatten() {
            if let Ok(meta) = f.metadata() {
                if meta.is_file() {
                    out.push((f.path(), meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                }
            }
        }
    }
    out
}

fn evict(dir: &Path, limit: u64) {
    let mut files = entry_files(dir);
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    if total <= limit {
        return;
    }
    files.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
    let target = limit / 100 * EVICT_TO_PERCENT;
    for (path, size, _) in files {
        if total <= target {
            break;
        }
        // Another process may have removed or replaced it: either way it is gone.
        let _ = std::fs::remove_file(&path);
        total = total.saturating_sub(size);
    }
}

fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ENGINE_AUDIT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("engine-audit").join("facts"))
}

/// The crate version and a fingerprint of the running binary (size and
/// modification time): a rebuilt extractor never reads facts of an older one.
fn extractor_version() -> Option<String> {
    static VERSION: OnceLock<Option<String>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            let exe = std::env::current_exe().ok()?;
            let meta = std::fs::metadata(exe).ok()?;
            let mtime = meta.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
            Some(format!("{}+{}.{}", env!("CARGO_PKG_VERSION"), meta.len(), mtime.as_nanos()))
        })
        .clone()
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;

/// Listings of commits: content-addressed by the commit id, in binary form.
impl crate::source::ListingStore for FactCache {
    fn listing(&self, commit: &str) -> Option<crate::source::Listing> {
        crate::source::Listing::decode(&self.get_bytes(LISTING, commit)?)
    }

    fn keep(&self, commit: &str, listing: &crate::source::Listing) {
        self.put_bytes(LISTING, commit, &listing.encode());
    }
}

const LISTING: &str = "tree-listing";
