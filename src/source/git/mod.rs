//! Engine repositories through libgit2: open a clone, or clone a URL into a bare
//! cache; read the tree at a commit without writing a work tree. Which commit a
//! ref, id or revision names is decided in [`refs`].
//!
//! URLs are fetched with the `git` program when it is on `PATH`, else built in
//! (`transport`, `fetch`). Neither runs a hook (libgit2 has none; git is told
//! `core.hooksPath=/dev/null`) nor fetches a submodule, so nothing from the
//! audited repository is executed by opening or fetching it.

use super::loose::{self, LooseError};
use super::redact::redact_userinfo;
use super::resolve::ResolvedRef;
use super::{is_safe_tree_path, Entry, Listing, ListingStore, SourceError, Tree};
use git2::{ObjectType, Oid, Repository};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

mod cache_report;
mod clone_cache;
mod fetch;
mod git_cli;
mod limits;
mod progress;
mod proxy;
mod refs;
mod smart_http;
mod transport;

pub use cache_report::{clear_clones, clone_report, CloneInfo, CloneState, ClonesCleared};
use clone_cache::Cached;
use fetch::{fetch_refs, How, LazyBlobs};
pub use transport::{FetchWith, GIT_VAR};

#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Never touch the network: a ref missing from a cached clone is an error.
    pub offline: bool,
    /// Where URL clones are cached; default `$XDG_CACHE_HOME/engine-audit/repos`.
    pub cache_dir: Option<PathBuf>,
    /// How URLs are fetched (`ENGINE_AUDIT_GIT` overrides it).
    pub fetch: FetchWith,
    /// No progress lines on stderr while fetching.
    pub quiet: bool,
}

/// A git repository holding engine source.
pub struct EngineRepo {
    repo: Repository,
    /// What the user passed (path or URL), for messages.
    pub spec: String,
    /// Set when the repo is a cache of a remote URL that may be fetched.
    url: Option<String>,
    offline: bool,
    how: How,
    /// A partial clone (made by git with `--filter=blob:none`): blobs are
    /// fetched when a tree first misses one.
    partial: bool,
}

pub fn is_url(spec: &str) -> bool {
    spec.contains("://") || (spec.starts_with("git@") && spec.contains(':'))
}

/// `$XDG_CACHE_HOME/engine-audit`, falling back to `~/.cache/engine-audit`.
pub fn default_cache_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("engine-audit")
}

fn url_cache_dir(cache_dir: &Path, url: &str) -> PathBuf {
    let digest = Sha256::digest(url.trim_end_matches('/').as_bytes());
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    cache_dir.join(hex)
}

/// A libgit2 error in `repo`. Its message may quote a URL: user info is taken out.
fn git_err(repo: &str, e: git2::Error) -> SourceError {
    SourceError::Git { repo: redact_userinfo(repo), message: redact_userinfo(e.message()) }
}

/// Process-wide libgit2 settings, applied before the first repository is opened.
fn configure_libgit2() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // libgit2 re-hashes every object it inflates (commits and trees too);
        // git itself does not on reads. A blob that fails to inflate is
        // reported with its path; one that inflates to another object's bytes
        // (a damaged pack index) is caught by `GitTree::verify`, which hashes
        // the blobs extraction reads, and only those.
        git2::opts::strict_hash_verification(false);
    });
}

impl EngineRepo {
    /// Open a local clone (bare or with a work tree) or a URL's cached bare clone.
    pub fn open(spec: &str, opts: &OpenOptions) -> Result<EngineRepo, SourceError> {
        configure_libgit2();
        if is_url(spec) {
            return Self::open_url(spec, opts);
        }
        let path = Path::new(spec);
        // NO_SEARCH: the path itself must be the repo, never a parent folder's.
        let repo = Repository::open_ext(path, git2::RepositoryOpenFlags::NO_SEARCH, std::iter::empty::<&std::ffi::OsStr>())
            .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.message().to_string() })?;
        Ok(EngineRepo { repo, spec: spec.to_string(), url: None, offline: opts.offline, how: How::default(), partial: false })
    }

    fn open_url(url: &str, opts: &OpenOptions) -> Result<EngineRepo, SourceError> {
        let cache_dir = opts.cache_dir.clone().unwrap_or_else(|| default_cache_root().join("repos"));
        let dir = url_cache_dir(&cache_dir, url);
        // What messages and the report show: never a password.
        let shown = redact_userinfo(url);
        let how = How { with: opts.fetch, quiet: opts.quiet };
        clone_cache::remove_stale_partials(&cache_dir, std::time::SystemTime::now());
        let repo = match clone_cache::inspect(&dir) {
            Cached::Clone(repo) => repo,
            Cached::Foreign => {
                return Err(SourceError::Open {
                    path: dir,
                    message: format!("this is where the clone of {shown} is cached, but it holds files that are not a clone engine-audit made; move them away"),
                })
            }
            Cached::Broken(why) if opts.offline => {
                return Err(SourceError::Open {
                    path: dir,
                    message: format!("the cached clone of {shown} is damaged ({why}); run once without --offline to clone it again"),
                })
            }
            Cached::Broken(_) => {
                clone_cache::set_aside(&cache_dir, &dir).map_err(|e| io_err(&dir, e))?;
                clone_into(&cache_dir, &dir, url, how)?
            }
            Cached::Missing if opts.offline => {
                return Err(SourceError::OfflineMissing {
                    url: shown,
                    wanted: "(no cached clone yet)".into(),
                })
            }
            Cached::Missing => clone_into(&cache_dir, &dir, url, how)?,
        };
        let partial = fetch::is_partial(&repo);
        Ok(EngineRepo { repo, spec: shown, url: Some(url.to_string()), offline: opts.offline, how, partial })
    }

    /// The file tree at a resolved commit.
    pub fn tree_at(&self, resolved: &ResolvedRef) -> Result<GitTree, SourceError> {
        let listing = self.listing_at(resolved)?;
        Ok(self.tree_from(resolved, listing))
    }

    /// The file tree at a resolved commit, with its listing taken from `store`
    /// when an earlier run kept it (a commit's listing never changes: walking
    /// ~600 tree objects was a fifth of a warm audit).
    pub fn tree_with(&self, resolved: &ResolvedRef, store: &dyn ListingStore) -> Result<GitTree, SourceError> {
        let listing = match store.listing(&resolved.commit) {
            Some(listing) => listing,
            None => {
                let listing = self.listing_at(resolved)?;
                store.keep(&resolved.commit, &listing);
                listing
            }
        };
        Ok(self.tree_from(resolved, listing))
    }

    /// Every regular file of the commit's tree, sorted by path. The walk is ours,
    /// not `Tree::walk`, so each loose tree object is checked before libgit2
    /// inflates it (see `source::loose`).
    pub(crate) fn listing_at(&self, resolved: &ResolvedRef) -> Result<Listing, SourceError> {
        let oid = Oid::from_str(&resolved.commit).map_err(|e| git_err(&self.spec, e))?;
        let guard = LooseGuard::new(self.repo.path());
        guard.check(oid, &self.spec, "commit")?;
        let commit = self.repo.find_commit(oid).map_err(|e| git_err(&self.spec, e))?;
        let mut listing = Listing::default();
        let mut pending = vec![(String::new(), commit.tree_id())];
        while let Some((dir, tree_id)) = pending.pop() {
            guard.check(tree_id, &self.spec, if dir.is_empty() { "(root tree)" } else { &dir })?;
            let tree = self.repo.find_tree(tree_id).map_err(|e| git_err(&self.spec, e))?;
            for entry in tree.iter() {
                let Ok(name) = entry.name() else { continue };
                let path = format!("{dir}{name}");
                let mode = entry.filemode();
                if entry.kind() == Some(ObjectType::Tree) {
                    // A subtree named `..` could still hold files: its paths are refused below.
                    pending.push((format!("{path}/"), entry.id()));
                    continue;
                }
                // Only regular and executable blobs: symlinks (0o120000) are never
                // followed (but named, as what they point at reads as absent),
                // submodules (commits) are never fetched.
                if entry.kind() == Some(ObjectType::Blob) && mode == 0o120000 {
                    listing.symlinks.push(path);
                    continue;
                }
                if entry.kind() != Some(ObjectType::Blob) || (mode != 0o100644 && mode != 0o100755) {
                    continue;
                }
                if !is_safe_tree_path(&path) {
                    listing.unsafe_paths.push(path);
                    continue;
                }
                // The size is in the object's header, not in the tree: read lazily
                // by `read_limited` for the few files that are read at all.
                listing.entries.push(Entry { path, id: entry.id().to_string(), size: None });
            }
        }
        listing.entries.sort_by(|a, b| a.path.cmp(&b.path));
        listing.unsafe_paths.sort();
        listing.symlinks.sort();
        Ok(listing)
    }

    /// A tree over a listing of `resolved` (from [`listing_at`](Self::listing_at)).
    pub(crate) fn tree_from(&self, resolved: &ResolvedRef, listing: Listing) -> GitTree {
        let path = self.repo.path().to_path_buf();
        let name = format!("{}@{}", display_name(&self.spec), resolved.wanted);
        let lazy = match (&self.url, self.partial) {
            (Some(url), true) => Some(LazyBlobs::new(&path, url, self.offline, self.how, name.clone())),
            _ => None,
        };
        GitTree {
            // This repository opened: the pool's handles open the same path lazily.
            repos: RepoPool::new(&path),
            name,
            lazy,
            commit: resolved.commit.clone(),
            entries: listing.entries,
            unsafe_paths: listing.unsafe_paths,
            symlinks: listing.symlinks,
            failed_reads: AtomicU64::new(0),
        }
    }
}

/// Clone `url` into `dir`: built in a partial folder beside it and renamed
/// into place, so a half-done clone is never reused.
fn clone_into(cache_dir: &Path, dir: &Path, url: &str, how: How) -> Result<Repository, SourceError> {
    let tmp = clone_cache::partial_dir(cache_dir).map_err(|e| io_err(cache_dir, e))?;
    let repo = Repository::init_bare(tmp.path()).map_err(|e| git_err(url, e))?;
    repo.remote("origin", url).map_err(|e| git_err(url, e))?;
    fetch_refs(&repo, url, how, true)?;
    drop(repo);
    let staged = tmp.keep();
    if std::fs::rename(&staged, dir).is_err() {
        // Another process won the race: use its clone.
        let _ = std::fs::remove_dir_all(&staged);
    }
    Repository::open_bare(dir).map_err(|e| SourceError::Open { path: dir.to_path_buf(), message: redact_userinfo(e.message()) })
}

fn io_err(path: &Path, e: std::io::Error) -> SourceError {
    SourceError::Io { path: path.display().to_string(), message: e.to_string() }
}

fn display_name(spec: &str) -> String {
    spec.trim_end_matches('/').rsplit('/').next().unwrap_or(spec).to_string()
}

/// An object's size from its header, without inflating it. Not git2's
/// `Odb::read_header`: it unwraps the object's type, and a damaged pack entry
/// carries a type git2 has no name for (a panic, found by damaging a pack).
fn object_size(repo: &Repository, oid: Oid) -> Result<u64, git2::Error> {
    use git2::Binding;
    let odb = repo.odb()?;
    let (mut size, mut kind): (usize, libgit2_sys::git_object_t) = (0, libgit2_sys::GIT_OBJECT_ANY);
    // SAFETY: `odb` and `oid` outlive the call, and both outputs are plain integers.
    let rc = unsafe { libgit2_sys::git_odb_read_header(&mut size, &mut kind, odb.raw(), oid.raw()) };
    if rc < 0 {
        return Err(git2::Error::last_error(rc));
    }
    match kind {
        libgit2_sys::GIT_OBJECT_COMMIT | libgit2_sys::GIT_OBJECT_TREE | libgit2_sys::GIT_OBJECT_BLOB | libgit2_sys::GIT_OBJECT_TAG => {
            Ok(size as u64)
        }
        other => Err(git2::Error::from_str(&format!("damaged object header (type {other})"))),
    }
}

/// Loose objects of a repository, checked before libgit2 reads them. A fresh
/// clone has none (everything is packed): then nothing is checked per object.
struct LooseGuard {
    objects: PathBuf,
    any: bool,
}

impl LooseGuard {
    fn new(git_dir: &Path) -> LooseGuard {
        let objects = git_dir.join("objects");
        // Loose objects live in two-hex-digit folders beside `pack` and `info`.
        let any = std::fs::read_dir(&objects).map(|dir| dir.flatten().any(|e| e.file_name().len() == 2)).unwrap_or(false);
        LooseGuard { objects, any }
    }

    /// An error when `oid` is a loose object that would not inflate completely.
    fn check(&self, oid: Oid, repo: &str, what: &str) -> Result<(), SourceError> {
        if !self.any {
            return Ok(());
        }
        loose::check(&self.objects, &oid.to_string())
            .map_err(|m| SourceError::Git { repo: repo.to_string(), message: format!("{what}: {m}") })
    }

    /// An error when any loose object would not inflate completely: before
    /// handing libgit2 a revision whose objects cannot be known in advance
    /// (`main@{u}`, `:/text` walks history). Costs one inflate per loose object,
    /// so only that rare path pays it.
    fn check_all(&self, repo: &str, what: &str) -> Result<(), SourceError> {
        if !self.any {
            return Ok(());
        }
        let Ok(folders) = std::fs::read_dir(&self.objects) else { return Ok(()) };
        for folder in folders.flatten() {
            let prefix = folder.file_name();
            let Some(prefix) = prefix.to_str().filter(|p| p.len() == 2) else { continue };
            let Ok(files) = std::fs::read_dir(folder.path()) else { continue };
            for file in files.flatten() {
                let Some(rest) = file.file_name().to_str().map(str::to_string) else { continue };
                // `check` skips names that are not hex, such as a temporary file.
                loose::check(&self.objects, &format!("{prefix}{rest}")).map_err(|m| SourceError::Git {
                    repo: repo.to_string(),
                    message: format!("{what}: loose object {prefix}{rest}: {m}"),
                })?;
            }
        }
        Ok(())
    }
}

/// One repository handle per worker thread. `git2::Repository` is Send but not
/// Sync, and inflating blobs is most of the cost of reading a tree, so parallel
/// extraction must not queue behind a single handle.
struct RepoPool {
    path: PathBuf,
    loose: LooseGuard,
    // Opened on first use: a warm run that reads no blob opens none.
    handles: Vec<std::sync::OnceLock<Result<Mutex<Repository>, String>>>,
}

impl RepoPool {
    fn new(path: &Path) -> RepoPool {
        // Index 0 serves threads outside the rayon pool.
        let n = rayon::current_num_threads() + 1;
        RepoPool { path: path.to_path_buf(), loose: LooseGuard::new(path), handles: (0..n).map(|_| std::sync::OnceLock::new()).collect() }
    }

    fn get(&self) -> Result<std::sync::MutexGuard<'_, Repository>, String> {
        let i = rayon::current_thread_index().map_or(0, |i| i + 1) % self.handles.len();
        let slot = self.handles[i].get_or_init(|| Repository::open(&self.path).map(Mutex::new).map_err(|e| e.message().to_string()));
        match slot {
            Ok(m) => Ok(m.lock().unwrap_or_else(|p| p.into_inner())),
            Err(e) => Err(e.clone()),
        }
    }
}

/// The tree of one commit, read blob by blob from the object database.
pub struct GitTree {
    repos: RepoPool,
    name: String,
    /// Set for a partial clone: fetches the blobs it lacks on the first miss.
    lazy: Option<LazyBlobs>,
    commit: String,
    entries: Vec<Entry>,
    /// Paths that were skipped because they could leave the tree.
    pub unsafe_paths: Vec<String>,
    /// Symbolic links, skipped (never followed).
    pub symlinks: Vec<String>,
    /// Reads of listed blobs that failed (damaged or missing objects).
    failed_reads: AtomicU64,
}

impl GitTree {
    /// Count `result`'s error if it is a failed read (see [`Tree::failed_reads`]).
    fn noted<T>(&self, result: Result<T, SourceError>) -> Result<T, SourceError> {
        if result.as_ref().is_err_and(SourceError::is_read_failure) {
            self.failed_reads.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// One blob's bytes. With a `limit`, the object's header is read first (a
    /// loose object's first bytes, a packed one's entry and delta headers, about
    /// 2 µs) so a blob over it is refused before it is inflated.
    fn read_blob(&self, path: &str, limit: Option<u64>) -> Result<Vec<u8>, SourceError> {
        let bytes = self.read_unverified(path, limit)?;
        self.verify(path, bytes)
    }

    /// `bytes` if they are the blob the tree lists at `path`. libgit2 is told
    /// not to re-hash what it inflates (`configure_libgit2`), so a pack index
    /// that maps one id to another object's offset would hand over the other
    /// object's bytes, and facts extracted from them would be cached under the
    /// listed ids, where a healthy clone of the same commit finds them. Hashing
    /// here costs what libgit2's check did, once per blob read (a warm audit
    /// reads few), and the error names the object.
    fn verify(&self, path: &str, bytes: Vec<u8>) -> Result<Vec<u8>, SourceError> {
        let listed = self.entry(path).map(|e| e.id.as_str()).unwrap_or_default();
        let actual = Oid::hash_object(git2::ObjectType::Blob, &bytes).map_err(|e| git_err(&self.name, e))?;
        if actual.to_string() == listed {
            return Ok(bytes);
        }
        Err(SourceError::Damaged { repo: self.name.clone(), path: path.to_string(), id: listed.to_string(), actual: actual.to_string() })
    }

    fn read_unverified(&self, path: &str, limit: Option<u64>) -> Result<Vec<u8>, SourceError> {
        let entry = self.entry(path).ok_or_else(|| SourceError::MissingFile { path: path.to_string(), tree: self.name.clone() })?;
        let oid = Oid::from_str(&entry.id).map_err(|e| git_err(&self.name, e))?;
        if self.repos.loose.any {
            match loose::read_blob(&self.repos.loose.objects, &entry.id, limit) {
                Ok(Some(bytes)) => return Ok(bytes),
                Ok(None) => {}
                Err(LooseError::TooLarge(size)) => {
                    return Err(SourceError::TooLarge { path: path.to_string(), size, limit: limit.unwrap_or(0) })
                }
                Err(LooseError::Corrupt(m)) => return Err(SourceError::Git { repo: self.name.clone(), message: format!("{path}: {m}") }),
            }
        }
        let repo = self.repos.get().map_err(|message| SourceError::Git { repo: self.name.clone(), message })?;
        let at_path = |e: git2::Error| SourceError::Git { repo: self.name.clone(), message: format!("{path}: {}", e.message()) };
        // A partial clone lacks blobs until a read needs one: then all the
        // tree's missing blobs come in one fetch.
        if let Some(lazy) = &self.lazy {
            if !repo.odb().map(|odb| odb.exists(oid)).unwrap_or(true) {
                lazy.ensure(&self.entries, &repo).map_err(|why| SourceError::MissingBlob { path: path.to_string(), why })?;
            }
        }
        if let Some(limit) = limit {
            let size = object_size(&repo, oid).map_err(at_path)?;
            if size > limit {
                return Err(SourceError::TooLarge { path: path.to_string(), size, limit });
            }
        }
        let blob = repo.find_blob(oid).map_err(at_path)?;
        Ok(blob.content().to_vec())
    }
}

impl Tree for GitTree {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn failed_reads(&self) -> u64 {
        self.failed_reads.load(Ordering::Relaxed)
    }

    fn symlinks(&self) -> &[String] {
        &self.symlinks
    }

    fn unsafe_paths(&self) -> &[String] {
        &self.unsafe_paths
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        self.noted(self.read_blob(path, None))
    }

    fn read_limited(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        self.noted(self.read_blob(path, Some(limit)))
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.name, &self.commit[..12.min(self.commit.len())])
    }

    fn commit(&self) -> Option<String> {
        Some(self.commit.clone())
    }
}
