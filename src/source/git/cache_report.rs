//! The clone cache seen from outside (`engine-audit cache stats|clear`): which
//! clones it holds, of what, how large, fetched when; and emptying it,
//! touching only what engine-audit made (see `clone_cache`).

use super::clone_cache::{self, Cached, PARTIAL_PREFIX};
use crate::source::redact::redact_userinfo;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One folder of the clone cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloneInfo {
    pub dir: PathBuf,
    /// The URL it is a clone of (user info taken out), when it opens.
    pub url: Option<String>,
    pub bytes: u64,
    /// When it was last fetched (its `FETCH_HEAD`, else its newest pack).
    pub last_fetch: Option<SystemTime>,
    /// Made by git without blobs (`--filter=blob:none`).
    pub partial: bool,
    pub state: CloneState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloneState {
    Ok,
    /// Shaped like a clone but does not open: cloned again on the next run.
    Broken(String),
    /// A clone under way, or left by a killed run (`.clone-*`).
    InProgress,
}

/// Every clone (and clone in progress) in `cache_dir`, sorted by folder.
/// Folders that are not engine-audit's are left out.
pub fn clone_report(cache_dir: &Path) -> Vec<CloneInfo> {
    let Ok(items) = std::fs::read_dir(cache_dir) else { return Vec::new() };
    let mut out = Vec::new();
    for item in items.flatten() {
        let name = item.file_name();
        let Some(name) = name.to_str() else { continue };
        let dir = item.path();
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let (url, partial, state) = if name.starts_with(PARTIAL_PREFIX) {
            (None, false, CloneState::InProgress)
        } else if is_clone_name(name) {
            match clone_cache::inspect(&dir) {
                Cached::Clone(repo) => {
                    let url = repo.find_remote("origin").ok().and_then(|r| r.url().ok().map(redact_userinfo));
                    (url, super::fetch::is_partial(&repo), CloneState::Ok)
                }
                Cached::Broken(why) => (None, false, CloneState::Broken(why)),
                Cached::Missing | Cached::Foreign => continue,
            }
        } else {
            continue;
        };
        out.push(CloneInfo { bytes: size_of(&dir), last_fetch: last_fetch(&dir), dir, url, partial, state });
    }
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out
}

/// What [`clear_clones`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClonesCleared {
    pub removed: usize,
    pub bytes: u64,
    /// Clones in progress in a running process: left alone.
    pub in_use: usize,
}

/// Remove every clone engine-audit made in `cache_dir`, and partial clones
/// whose process is gone. Anything else there is left alone.
pub fn clear_clones(cache_dir: &Path) -> std::io::Result<ClonesCleared> {
    let mut cleared = ClonesCleared::default();
    for info in clone_report(cache_dir) {
        if info.state == CloneState::InProgress {
            let name = info.dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if clone_cache::owner_alive(name.strip_prefix(PARTIAL_PREFIX).unwrap_or_default()) {
                cleared.in_use += 1;
                continue;
            }
            std::fs::remove_dir_all(&info.dir)?;
        } else {
            // One rename first: no run sees it half removed.
            clone_cache::set_aside(cache_dir, &info.dir)?;
        }
        cleared.removed += 1;
        cleared.bytes += info.bytes;
    }
    Ok(cleared)
}

/// A clone's folder name: the first 12 bytes of the URL's SHA-256, in hex.
fn is_clone_name(name: &str) -> bool {
    name.len() == 24 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Bytes of the files under `dir`, links not followed.
fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(items) = std::fs::read_dir(&dir) else { continue };
        for item in items.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(item.path()) else { continue };
            if meta.is_dir() {
                pending.push(item.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

fn last_fetch(dir: &Path) -> Option<SystemTime> {
    let modified = |p: &Path| std::fs::symlink_metadata(p).and_then(|m| m.modified()).ok();
    if let Some(t) = modified(&dir.join("FETCH_HEAD")) {
        return Some(t);
    }
    let packs = std::fs::read_dir(dir.join("objects/pack")).ok()?;
    packs.flatten().filter(|p| p.file_name().to_str().is_some_and(|n| n.ends_with(".pack"))).filter_map(|p| modified(&p.path())).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_engine_audits_folders_are_listed_and_cleared() {
        let cache = tempfile::tempdir().unwrap();
        let clone = cache.path().join("0123456789abcdef01234567");
        let repo = git2::Repository::init_bare(&clone).unwrap();
        repo.remote("origin", "https://user:secret@example.org/sglang").unwrap();
        std::fs::write(clone.join("FETCH_HEAD"), "").unwrap();
        let mine = cache.path().join("photos");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("cat.jpg"), "meow").unwrap();
        let stale = cache.path().join(".clone-AbC123");
        std::fs::create_dir(&stale).unwrap();
        let running = cache.path().join(format!(".clone-{}-XyZ", std::process::id()));
        std::fs::create_dir(&running).unwrap();

        let report = clone_report(cache.path());
        assert_eq!(report.len(), 3, "{report:?}");
        let listed = report.iter().find(|c| c.dir == clone).unwrap();
        assert_eq!(listed.url.as_deref(), Some("https://***@example.org/sglang"), "no password shown");
        assert!(listed.bytes > 0 && listed.last_fetch.is_some() && !listed.partial);

        let cleared = clear_clones(cache.path()).unwrap();
        assert_eq!((cleared.removed, cleared.in_use), (2, 1));
        assert!(!clone.exists() && !stale.exists());
        assert!(running.exists(), "a clone under way in a running process is kept");
        assert!(mine.join("cat.jpg").exists(), "not ours: never touched");
    }
}
