//! Entries on disk: one file per (version, kind, key), written atomically,
//! checksummed, decoded defensively, evicted oldest first (see `folder` for
//! which files are entries).

use super::deps::{hex, Deps};
use super::folder::{self, CacheError, Kind, TEMP_PREFIX};
use crate::source::Tree;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

/// First bytes of every entry, then the SHA-256 of the body in hex and a
/// newline: a bit flipped on disk is a miss, never a wrong answer (a damaged
/// blob id in a listing gave "object not found" on every later run).
const MAGIC: &[u8] = b"engine-audit-facts v2\n";
/// Hex digits of the body's digest.
const DIGEST_HEX: usize = 64;
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
    /// Whether the folder is the cache's to write in, settled on the first write.
    claimed: OnceLock<bool>,
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
    pub(crate) fn disabled() -> Self {
        FactCache { inner: None }
    }

    /// A cache in `dir` (created on first write).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self::with_limit(dir, DEFAULT_LIMIT_BYTES)
    }

    pub(crate) fn with_limit(dir: impl Into<PathBuf>, limit: u64) -> Self {
        match extractor_version() {
            Some(version) => FactCache {
                inner: Some(Arc::new(Inner { dir: dir.into(), version, limit, wrote: AtomicBool::new(false), claimed: OnceLock::new() })),
            },
            // Without a binary fingerprint, stale facts could not be told apart.
            None => Self::disabled(),
        }
    }

    /// `--no-cache` for the rest of the process.
    pub(crate) fn disable_default() {
        DISABLED.store(true, Ordering::Relaxed);
    }

    /// The process-wide cache: `$ENGINE_AUDIT_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/engine-audit/facts`, else `~/.cache/engine-audit/facts`;
    /// disabled by `--no-cache` or `ENGINE_AUDIT_NO_CACHE=1`.
    pub(crate) fn default_cache() -> FactCache {
        if DISABLED.load(Ordering::Relaxed) || std::env::var_os("ENGINE_AUDIT_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
            return Self::disabled();
        }
        match default_dir() {
            Some(dir) => Self::at(dir),
            None => Self::disabled(),
        }
    }

    pub(crate) fn dir(&self) -> Option<&Path> {
        self.inner.as_ref().map(|i| i.dir.as_path())
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The first stored variant of (kind, key) whose deps hold in `tree`.
    pub(crate) fn get<T: DeserializeOwned>(&self, kind: &str, key: &str, tree: &dyn Tree) -> Option<T> {
        let inner = self.inner.as_ref()?;
        let envelope: Envelope<T> = decode(&read_checked(&inner.path(kind, key))?)?;
        if envelope.version != inner.version || envelope.kind != kind || envelope.key != key {
            return None;
        }
        envelope.variants.into_iter().find(|v| v.deps.hold(tree)).map(|v| v.value)
    }

    /// A binary body stored with [`put_bytes`](Self::put_bytes): for values whose
    /// JSON decoding would cost more than the work it saves. Its key says
    /// everything it was computed from; the entry's digest guards its bytes.
    pub(crate) fn get_bytes(&self, kind: &str, key: &str) -> Option<Vec<u8>> {
        let inner = self.inner.as_ref()?;
        let mut bytes = read_checked(&inner.path(kind, key))?;
        let line = bytes.iter().position(|&b| b == b'\n')?;
        let head: RawHeader = serde_json::from_slice(&bytes[..line]).ok()?;
        if head.version != inner.version || head.kind != kind || head.key != key {
            return None;
        }
        bytes.drain(..=line);
        Some(bytes)
    }

    /// Store a binary body under (kind, key), replacing what was there.
    pub(crate) fn put_bytes(&self, kind: &str, key: &str, body: &[u8]) {
        let Some(inner) = self.inner.as_ref().filter(|i| i.writable()) else { return };
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
        let Some(inner) = self.inner.as_ref().filter(|i| i.writable()) else { return };
        let path = inner.path(kind, key);
        let mut variants: Vec<Variant<serde_json::Value>> = Vec::new();
        let Ok(value) = serde_json::to_value(value) else { return };
        variants.push(Variant { deps, value });
        // Keep older variants (the other ref of a bump) unless they are equivalent.
        if let Some(old) = read_checked(&path).and_then(|b| decode::<serde_json::Value>(&b)) {
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
    pub(crate) fn evict_if_needed(&self) {
        let Some(inner) = self.inner.as_ref() else { return };
        if inner.wrote.swap(false, Ordering::Relaxed) {
            folder::evict(&inner.dir, inner.limit, inner.limit / 100 * EVICT_TO_PERCENT, SystemTime::now());
        }
    }

    pub(crate) fn stats(&self) -> Option<CacheStats> {
        let inner = self.inner.as_ref()?;
        let entries: Vec<_> = folder::items_or_none(&inner.dir).into_iter().filter(|i| i.kind == Kind::Entry).collect();
        Some(CacheStats {
            dir: inner.dir.display().to_string(),
            entries: entries.len() as u64,
            bytes: entries.iter().map(|e| e.size).sum(),
            limit: inner.limit,
        })
    }

    /// Remove every entry (and stray temporary files); returns how many files
    /// went. Only files the cache named are touched; a folder that is not the
    /// cache's is refused, and files that would not go are an error.
    pub(crate) fn clear(&self) -> Result<u64, CacheError> {
        let Some(inner) = self.inner.as_ref() else { return Ok(0) };
        folder::clear(&inner.dir)
    }
}

impl Inner {
    /// Whether writes may go ahead: not in a folder holding files the cache did
    /// not write (said once). Facts computed while a read failed are never
    /// offered (see `extract::units`, `Tree::failed_reads`).
    fn writable(&self) -> bool {
        *self.claimed.get_or_init(|| match folder::claim(&self.dir) {
            Ok(()) => true,
            Err(CacheError::NotACache { dir }) => {
                // Once per process: every engine handle has its own `FactCache`.
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    eprintln!(
                        "note: facts are not cached: {dir} has no CACHEDIR.TAG and holds files the cache did not write \
                         (set ENGINE_AUDIT_CACHE_DIR to a folder of its own)"
                    )
                });
                false
            }
            // A read-only or missing folder only costs recomputation, as a failed write does.
            Err(_) => false,
        })
    }

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

fn decode<T: DeserializeOwned>(body: &[u8]) -> Option<Envelope<T>> {
    serde_json::from_slice(body).ok()
}

/// `MAGIC`, the body's digest, a newline, the body.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + DIGEST_HEX + 1 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(hex(&Sha256::digest(body)).as_bytes());
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

/// Where the body of a framed entry starts, if the digest matches it.
fn body_start(bytes: &[u8]) -> Option<usize> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (digest, body) = (rest.get(..DIGEST_HEX)?, rest.get(DIGEST_HEX + 1..)?);
    let intact = rest[DIGEST_HEX] == b'\n' && digest == hex(&Sha256::digest(body)).as_bytes();
    intact.then_some(MAGIC.len() + DIGEST_HEX + 1)
}

/// The body of the entry at `path`. One that is damaged (or of an older
/// format) is removed: the cache named it, and it would only be a miss again.
fn read_checked(path: &Path) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    let Some(start) = body_start(&bytes) else {
        // Another run may have just renamed a good entry over it: that costs one recomputation.
        let _ = std::fs::remove_file(path);
        return None;
    };
    bytes.drain(..start);
    Some(bytes)
}

/// Temp file in the same folder, then rename: readers never see a partial entry.
fn write_atomic(path: &Path, body: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("entry path has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(TEMP_PREFIX).tempfile_in(dir)?;
    tmp.write_all(&frame(body))?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
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
