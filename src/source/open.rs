//! Opening an engine source as the user names it: a git repository (local or URL)
//! or a plain folder.

use super::{DirTree, EngineRepo, Listing, ListingStore, OpenOptions, ResolvedRef, SourceError, Tree};
use std::path::Path;

pub enum EngineSource {
    Git(EngineRepo),
    /// A plain folder: one tree, no refs.
    Dir(String),
}

impl EngineSource {
    pub fn open(spec: &str, opts: &OpenOptions) -> Result<EngineSource, SourceError> {
        let path = Path::new(spec);
        if !super::is_url(spec) && path.is_dir() && !looks_like_git(path) {
            return Ok(EngineSource::Dir(spec.to_string()));
        }
        EngineRepo::open(spec, opts).map(EngineSource::Git)
    }

    pub(crate) fn repo(&self) -> Option<&EngineRepo> {
        match self {
            EngineSource::Git(r) => Some(r),
            EngineSource::Dir(_) => None,
        }
    }

    /// The tree at `at` (`None`: HEAD); a plain folder has one tree and ignores the ref.
    pub fn tree(&self, at: Option<&str>) -> Result<(Box<dyn Tree>, String), SourceError> {
        self.tree_with(at, &NoStore)
    }

    /// Like [`tree`](Self::tree), with git listings kept in (and reused from) `store`.
    pub(crate) fn tree_with(&self, at: Option<&str>, store: &dyn ListingStore) -> Result<(Box<dyn Tree>, String), SourceError> {
        match self {
            EngineSource::Git(repo) => {
                let resolved = match at {
                    None | Some("HEAD") => {
                        let commit = repo.resolve_head()?;
                        ResolvedRef { wanted: "HEAD".into(), matched: "HEAD".into(), commit }
                    }
                    Some(wanted) => repo.resolve(wanted)?,
                };
                let name = resolved.wanted.clone();
                Ok((Box::new(repo.tree_with(&resolved, store)?), name))
            }
            EngineSource::Dir(path) => Ok((Box::new(DirTree::open(Path::new(path))?), "(directory)".into())),
        }
    }
}

fn looks_like_git(path: &Path) -> bool {
    path.join(".git").exists() || (path.join("HEAD").is_file() && path.join("objects").is_dir())
}

/// Keeps nothing: every listing is walked.
struct NoStore;

impl ListingStore for NoStore {
    fn listing(&self, _commit: &str) -> Option<Listing> {
        None
    }
    fn keep(&self, _commit: &str, _listing: &Listing) {}
}
