//! Engine source access: a tree of files at one ref, read without a work tree.
//!
//! `source` knows git and directories, not Python. Everything above it sees a [`Tree`].

mod dir;
mod discover;
mod git;
mod listing_codec;
mod loose;
mod mem;
mod open;
mod redact;
mod resolve;

pub use dir::DirTree;
pub use discover::discover_package_root;
pub use git::{
    clear_clones, clone_report, default_cache_root, is_url, CloneInfo, CloneState, ClonesCleared, EngineRepo, FetchWith, GitTree,
    OpenOptions, GIT_VAR,
};
pub use mem::MemTree;
pub use open::EngineSource;
pub use resolve::{parse_version_ref, ResolvedRef};

use std::path::PathBuf;

/// Every regular file of one commit's tree, sorted by path, and the paths
/// skipped: those that could leave the tree, and symbolic links (never
/// followed). Cached in a binary form (`listing_codec`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub entries: Vec<Entry>,
    pub unsafe_paths: Vec<String>,
    pub symlinks: Vec<String>,
}

/// Where listings of commits are kept between runs. A store may forget; what it
/// returns must be the listing `keep` was given for that commit.
pub trait ListingStore {
    fn listing(&self, commit: &str) -> Option<Listing>;
    fn keep(&self, commit: &str, listing: &Listing);
}

/// Content id of a file: the git blob oid, or for plain directories a hash of
/// the bytes. The fact cache keys on it.
pub(crate) type BlobId = String;

/// One file of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the tree, `/`-separated, never containing `..`.
    pub path: String,
    pub id: BlobId,
    /// Size in bytes when the listing knows it (folders, memory). Git trees leave
    /// it `None`: reading every object's header would triple the cost of listing
    /// a 4,000-file tree; [`Tree::read_limited`] reads the one header it needs.
    pub size: Option<u64>,
}

/// A read-only snapshot of engine source at one ref.
pub trait Tree: Send + Sync {
    /// Every regular file (symlinks are not followed; they are not listed).
    fn entries(&self) -> &[Entry];
    /// The entries whose path starts with `prefix` (a folder ends in `/`): one
    /// run of [`entries`](Self::entries), which are sorted by path. A recording
    /// tree keeps the prefix, not the whole listing, as a dependency.
    fn entries_under(&self, prefix: &str) -> &[Entry] {
        entries_with_prefix(self.entries(), prefix)
    }
    /// Paths left out of [`entries`](Self::entries) because they are symbolic
    /// links: what they name reads as absent, so extraction names them.
    fn symlinks(&self) -> &[String] {
        &[]
    }
    /// Paths left out because a tree may not hold them (`..`, absolute, not UTF-8).
    fn unsafe_paths(&self) -> &[String] {
        &[]
    }
    /// Bytes of one file.
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError>;
    /// Bytes of one file, or [`SourceError::TooLarge`] without reading (or, in
    /// git, inflating) it when it is over `limit` bytes.
    fn read_limited(&self, path: &str, limit: u64) -> Result<Vec<u8>, SourceError> {
        if let Some(size) = self.entry(path).and_then(|e| e.size).filter(|s| *s > limit) {
            return Err(SourceError::TooLarge { path: path.to_string(), size, limit });
        }
        let bytes = self.read(path)?;
        // A folder's file may have grown since it was listed.
        if bytes.len() as u64 > limit {
            return Err(SourceError::TooLarge { path: path.to_string(), size: bytes.len() as u64, limit });
        }
        Ok(bytes)
    }
    /// How many reads of listed files failed so far (a damaged or missing
    /// object, an I/O error; not "no such file" or "too large"). Facts computed
    /// while one failed may lack that file: the fact cache keeps none of them.
    fn failed_reads(&self) -> u64 {
        0
    }
    /// What this tree is, for messages: `sglang.git@v0.5.19 (3c1f2a…)`.
    fn describe(&self) -> String;
    /// Commit id when the tree comes from git. It names the whole listing: the
    /// fact cache keys whole-tree facts by it.
    fn commit(&self) -> Option<String> {
        None
    }

    fn entry(&self, path: &str) -> Option<&Entry> {
        let entries = self.entries();
        entries.binary_search_by(|e| e.path.as_str().cmp(path)).ok().map(|i| &entries[i])
    }
    fn contains(&self, path: &str) -> bool {
        self.entry(path).is_some()
    }
    /// Read a file as UTF-8 text; invalid bytes are an error naming the file.
    fn read_text(&self, path: &str) -> Result<String, SourceError> {
        utf8(path, self.read(path)?)
    }
    /// [`read_text`](Self::read_text) under a size limit, as [`read_limited`](Self::read_limited).
    fn read_text_limited(&self, path: &str, limit: u64) -> Result<String, SourceError> {
        utf8(path, self.read_limited(path, limit)?)
    }
}

fn utf8(path: &str, bytes: Vec<u8>) -> Result<String, SourceError> {
    String::from_utf8(bytes).map_err(|e| SourceError::NotUtf8 { path: path.to_string(), offset: e.utf8_error().valid_up_to() })
}

/// Rejects paths that could leave the tree: absolute, `..`, empty components.
pub fn is_safe_tree_path(path: &str) -> bool {
    !path.is_empty() && !path.starts_with('/') && !path.contains('\\') && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SourceError {
    #[error("cannot open engine repository {path}: {message}")]
    #[diagnostic(
        code(engine_audit::source::open),
        help("pass a git clone (bare or with a work tree), a plain package directory, or an https:// URL")
    )]
    Open { path: PathBuf, message: String },

    #[error("ref `{wanted}` not found in {repo}{}", nearest_hint(.nearest))]
    #[diagnostic(code(engine_audit::source::unknown_ref), help("use a tag (v0.5.19), a bare version (0.5.19), a branch or a commit sha"))]
    UnknownRef { repo: String, wanted: String, nearest: Vec<String> },

    #[error("ref `{wanted}` is not in the cached clone of {url} and --offline forbids fetching it")]
    #[diagnostic(
        code(engine_audit::source::offline),
        help("run once without --offline to fetch it, or pass a local clone that has the ref")
    )]
    OfflineMissing { url: String, wanted: String },

    #[error("cannot fetch {url}: {message}")]
    #[diagnostic(code(engine_audit::source::fetch), help("check the URL and the network, or pass a local clone"))]
    Fetch { url: String, message: String },

    #[error("{path}: not in the partial clone: {why}")]
    #[diagnostic(
        code(engine_audit::source::missing_blob),
        help("a clone made by git holds no file contents until a tree is read; reading one fetches them, which needs the network and git on PATH")
    )]
    MissingBlob { path: String, why: String },

    #[error("{path}: not found in {tree}")]
    #[diagnostic(code(engine_audit::source::missing_file))]
    MissingFile { path: String, tree: String },

    #[error("{path}: not valid UTF-8 (first bad byte at offset {offset})")]
    #[diagnostic(code(engine_audit::source::not_utf8), help("the file is skipped; engine sources are expected to be UTF-8 Python"))]
    NotUtf8 { path: String, offset: usize },

    #[error("{path}: {size} bytes is over the {limit}-byte limit")]
    #[diagnostic(
        code(engine_audit::source::too_large),
        help("the file is skipped; files this large are generated tables, not code the audit needs")
    )]
    TooLarge { path: String, size: u64, limit: u64 },

    #[error("{path}: unsafe path in tree (absolute or containing `..`), ignored")]
    #[diagnostic(code(engine_audit::source::unsafe_path))]
    UnsafePath { path: String },

    #[error("{repo}: {path}: object {id} is damaged: its content hashes to {actual}, another object")]
    #[diagnostic(
        code(engine_audit::source::damaged_object),
        help("a pack index (.idx) or an object file of this repository points at the wrong bytes; nothing read from it was kept in the fact cache. `git fsck` names the damage; clone the repository again (or rebuild the index: `git index-pack <pack>`)")
    )]
    Damaged { repo: String, path: String, id: String, actual: String },

    #[error("git error in {repo}: {message}")]
    #[diagnostic(code(engine_audit::source::git), help("the object may be missing (shallow clone) or corrupt; re-clone or fetch the ref"))]
    Git { repo: String, message: String },

    #[error("cannot find the {engine} package in {tree}")]
    #[diagnostic(code(engine_audit::source::no_package), help("looked for {looked_for}; pass --{engine}-root to name the package folder"))]
    NoPackage { engine: String, tree: String, looked_for: String },

    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

impl SourceError {
    /// Whether this is a file that is listed but could not be read (damaged or
    /// missing object, I/O error), as opposed to an answer about the tree: no
    /// such file, over the size limit, not UTF-8, a path that could leave it.
    pub(crate) fn is_read_failure(&self) -> bool {
        !matches!(
            self,
            SourceError::MissingFile { .. } | SourceError::TooLarge { .. } | SourceError::NotUtf8 { .. } | SourceError::UnsafePath { .. }
        )
    }
}

fn nearest_hint(nearest: &[String]) -> String {
    if nearest.is_empty() {
        String::new()
    } else {
        format!("; nearest tags: {}", nearest.join(", "))
    }
}

/// The run of path-sorted `entries` starting with `prefix`.
pub(crate) fn entries_with_prefix<'e>(entries: &'e [Entry], prefix: &str) -> &'e [Entry] {
    let start = entries.partition_point(|e| e.path.as_str() < prefix);
    let len = entries[start..].partition_point(|e| e.path.starts_with(prefix));
    &entries[start..start + len]
}
