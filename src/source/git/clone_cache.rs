//! The clone cache folder: one bare clone per URL, named by a hash of it,
//! built beside its final name (`.clone-<pid>-<random>`) and renamed into place.
//!
//! What a crash or a damaged disk leaves there is repaired on the next run,
//! touching only what engine-audit made: a clone folder that no longer opens
//! is moved aside and cloned again only if it holds nothing but what a bare
//! repository holds; a partial clone is removed once it is old and the process
//! that built it is gone.

use git2::Repository;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Names of partial clones (and of broken clones moved aside for removal).
pub(super) const PARTIAL_PREFIX: &str = ".clone-";

/// A partial clone older than this, whose process is gone, is a leftover.
pub(super) const STALE_PARTIAL_AGE: Duration = Duration::from_secs(3600);

/// What a bare repository made by libgit2 (or `git gc` on it) holds; a folder
/// with anything else in it is someone else's.
const BARE_REPO_NAMES: &[&str] = &[
    "HEAD",
    "config",
    "description",
    "hooks",
    "info",
    "objects",
    "refs",
    "packed-refs",
    "FETCH_HEAD",
    "ORIG_HEAD",
    "shallow",
    "logs",
    "branches",
    "gc.pid",
    "gc.log",
];

/// What is at a clone's place in the cache.
pub(super) enum Cached {
    Missing,
    Clone(Repository),
    /// Ours (shaped like a bare repository) but it does not open: why.
    Broken(String),
    /// Something that is not a clone engine-audit made: never touched.
    Foreign,
}

/// Look at the folder a URL's clone lives in.
pub(super) fn inspect(dir: &Path) -> Cached {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Cached::Missing,
        Err(e) => return Cached::Broken(e.to_string()),
    };
    if !meta.is_dir() {
        return Cached::Foreign;
    }
    // Without HEAD libgit2 would not call it a repository; say so plainly.
    let opened = if dir.join("HEAD").is_file() {
        Repository::open_bare(dir).map_err(|e| e.message().to_string())
    } else {
        Err("it has no HEAD".into())
    };
    match opened {
        Ok(repo) => Cached::Clone(repo),
        Err(why) if shaped_like_bare_repo(dir) => Cached::Broken(why),
        Err(_) => Cached::Foreign,
    }
}

/// Whether every item in `dir` is one a bare repository holds (or a lock of one).
fn shaped_like_bare_repo(dir: &Path) -> bool {
    let Ok(items) = std::fs::read_dir(dir) else { return false };
    items.into_iter().all(|item| {
        item.is_ok_and(|item| {
            item.file_name().to_str().is_some_and(|name| BARE_REPO_NAMES.contains(&name.strip_suffix(".lock").unwrap_or(name)))
        })
    })
}

/// Move a broken clone out of the way (one rename, so no run sees it half
/// removed), then remove it. What cannot be removed now is a partial clone
/// the next run removes.
pub(super) fn set_aside(cache_dir: &Path, dir: &Path) -> std::io::Result<()> {
    let aside = partial_dir(cache_dir)?;
    // A rename onto a directory needs it absent: its name is ours until dropped.
    std::fs::remove_dir(aside.path())?;
    std::fs::rename(dir, aside.path())?;
    // Dropping the handle removes the folder and everything in it.
    drop(aside);
    Ok(())
}

/// A new, empty partial-clone folder in `cache_dir`, removed when dropped.
pub(super) fn partial_dir(cache_dir: &Path) -> std::io::Result<tempfile::TempDir> {
    std::fs::create_dir_all(cache_dir)?;
    tempfile::Builder::new().prefix(&format!("{PARTIAL_PREFIX}{}-", std::process::id())).tempdir_in(cache_dir)
}

/// Remove partial clones left by killed runs: older than
/// [`STALE_PARTIAL_AGE`] and (where it can be told) whose process is gone.
pub(super) fn remove_stale_partials(cache_dir: &Path, now: SystemTime) {
    let Ok(items) = std::fs::read_dir(cache_dir) else { return };
    for item in items.flatten() {
        let name = item.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PARTIAL_PREFIX)) else { continue };
        // Never through a link: only folders made here are removed.
        let Ok(meta) = std::fs::symlink_metadata(item.path()) else { continue };
        let old = meta.modified().ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|age| age > STALE_PARTIAL_AGE);
        if meta.is_dir() && old && !owner_alive(rest) {
            let _ = std::fs::remove_dir_all(item.path());
        }
    }
}

/// Whether the process named in a partial clone's name (`<pid>-<random>`)
/// still runs. A clone's top folder stops changing once its pack is being
/// written, so age alone could remove a slow clone under way.
pub(super) fn owner_alive(rest: &str) -> bool {
    let Some(pid) = rest.split_once('-').and_then(|(pid, _)| pid.parse::<u32>().ok()) else { return false };
    pid == std::process::id() || process_exists(pid)
}

#[cfg(target_os = "linux")]
fn process_exists(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Elsewhere it cannot be told cheaply: age alone decides.
#[cfg(not(target_os = "linux"))]
fn process_exists(_pid: u32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_clone_of_a_running_process_is_kept_however_old() {
        assert!(owner_alive(&format!("{}-AbC123", std::process::id())));
        assert!(!owner_alive("AbC123"), "the older naming carries no process");
        assert!(!owner_alive("notapid-AbC123"));
    }

    #[test]
    fn only_a_folder_shaped_like_a_bare_repository_is_ours() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["config", "objects", "refs", "packed-refs.lock"] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
        }
        assert!(shaped_like_bare_repo(dir.path()));
        std::fs::write(dir.path().join("thesis.tex"), "mine").unwrap();
        assert!(!shaped_like_bare_repo(dir.path()));
    }
}
