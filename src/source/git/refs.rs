//! Which commit a name leads to: tags, branches, ids, `HEAD`, a PR's
//! `~N`/`^N` revisions, a nightly's date. Every object on the way is checked
//! before libgit2 inflates it (`source::loose`): libgit2 1.9 loops forever on
//! a loose object cut short.

use super::super::resolve::{candidate_refs, looks_like_sha, nearest_tags, split_revision, ResolvedRef, Step};
use super::super::SourceError;
use super::{fetch::fetch_refs, git_err, EngineRepo, LooseGuard};
use git2::{ObjectType, Oid};

/// Annotated tags followed from one ref before giving up (git itself allows any
/// depth; real repositories have one).
const MAX_TAG_CHAIN: usize = 16;

/// Parents walked for one `~N`/`^N` revision (SGLang has ~10,000 commits).
const MAX_REVISION_STEPS: usize = 1_000_000;

impl EngineRepo {
    /// Resolve a tag (lightweight or annotated), bare version, branch or sha to a commit.
    /// A cached URL clone that lacks the ref fetches once (unless offline).
    pub fn resolve(&self, wanted: &str) -> Result<ResolvedRef, SourceError> {
        self.try_resolve(wanted)?.ok_or_else(|| SourceError::UnknownRef {
            repo: self.spec.clone(),
            wanted: wanted.to_string(),
            nearest: nearest_tags(wanted, &self.tags(), 5),
        })
    }

    /// Like [`resolve`](Self::resolve), but `None` when nothing matches, without
    /// listing the nearest tags: for callers trying several spellings of a ref.
    pub(crate) fn try_resolve(&self, wanted: &str) -> Result<Option<ResolvedRef>, SourceError> {
        if let Some(found) = self.resolve_local(&LooseGuard::new(self.repo.path()), wanted)? {
            return Ok(Some(found));
        }
        if let Some(url) = &self.url {
            if self.offline {
                // The spec is the URL as messages show it (no user info).
                return Err(SourceError::OfflineMissing { url: self.spec.clone(), wanted: wanted.to_string() });
            }
            fetch_refs(&self.repo, url, self.how, false)?;
            // The fetch may have added loose objects: look again.
            return self.resolve_local(&LooseGuard::new(self.repo.path()), wanted);
        }
        Ok(None)
    }

    fn resolve_local(&self, guard: &LooseGuard, wanted: &str) -> Result<Option<ResolvedRef>, SourceError> {
        for name in candidate_refs(wanted) {
            if let Ok(reference) = self.repo.find_reference(&name) {
                let commit = self
                    .reference_commit(guard, &reference, &name)?
                    .ok_or_else(|| SourceError::Git { repo: self.spec.clone(), message: format!("{name} does not point at a commit") })?;
                return Ok(Some(ResolvedRef { wanted: wanted.to_string(), matched: name, commit: commit.to_string() }));
            }
        }
        if let Some(commit) = self.commit_by_id(guard, wanted)? {
            let commit = commit.to_string();
            return Ok(Some(ResolvedRef { wanted: wanted.to_string(), matched: commit.clone(), commit }));
        }
        Ok(None)
    }

    /// The commit a (possibly abbreviated) object id leads to, if it names one.
    fn commit_by_id(&self, guard: &LooseGuard, id: &str) -> Result<Option<Oid>, SourceError> {
        if !looks_like_sha(id) {
            return Ok(None);
        }
        // The prefix is expanded from the pack indexes and loose folder names,
        // without inflating anything; an ambiguous prefix matches nothing.
        let full = Oid::from_str(id).ok().and_then(|short| self.repo.odb().ok()?.exists_prefix(short, id.len()).ok());
        match full {
            Some(oid) => self.peel_checked(guard, oid, id),
            None => Ok(None),
        }
    }

    /// The commit a reference (symbolic or direct) leads to; `None` when it
    /// dangles or ends at something other than a commit.
    fn reference_commit(&self, guard: &LooseGuard, reference: &git2::Reference, name: &str) -> Result<Option<Oid>, SourceError> {
        match reference.resolve().ok().and_then(|direct| direct.target()) {
            Some(target) => self.peel_checked(guard, target, name),
            None => Ok(None),
        }
    }

    /// The commit `oid` leads to through annotated tags; `None` when the chain
    /// ends at a tree or blob. Each object is checked before libgit2 inflates
    /// it (see `source::loose`), so no peel here goes through libgit2's own.
    fn peel_checked(&self, guard: &LooseGuard, mut oid: Oid, what: &str) -> Result<Option<Oid>, SourceError> {
        // Ids are not re-hashed on read (`configure_libgit2`), so a forged tag
        // could point at itself: the chain is bounded.
        for _ in 0..MAX_TAG_CHAIN {
            guard.check(oid, &self.spec, what)?;
            let object = self.repo.find_object(oid, None).map_err(|e| git_err(&self.spec, e))?;
            match object.as_tag() {
                Some(tag) => oid = tag.target_id(),
                None => return Ok((object.kind() == Some(ObjectType::Commit)).then_some(oid)),
            }
        }
        Err(SourceError::Git { repo: self.spec.clone(), message: format!("{what}: more than {MAX_TAG_CHAIN} tags in a chain") })
    }

    /// Parent `index` (0: the first) of a commit.
    fn parent_checked(&self, guard: &LooseGuard, oid: Oid, index: usize, what: &str) -> Result<Oid, SourceError> {
        guard.check(oid, &self.spec, what)?;
        let commit = self.repo.find_commit(oid).map_err(|e| git_err(&self.spec, e))?;
        commit.parent_id(index).map_err(|_| SourceError::Git {
            repo: self.spec.clone(),
            message: format!("{what}: commit {} has no parent {}", &oid.to_string()[..12], index + 1),
        })
    }

    /// A revision as a user spells a PR's base or head: a tag, branch,
    /// `origin/main`, commit id or `HEAD`, then any `~N`/`^N` steps. Every object
    /// on the way is checked like the rest. Other syntax (`main@{u}`, `:/fix`)
    /// is libgit2's `rev-parse`, which may read any object, so every loose
    /// object is checked first. `None` when the name matches nothing.
    pub fn resolve_revision(&self, rev: &str) -> Result<Option<String>, SourceError> {
        let guard = LooseGuard::new(self.repo.path());
        let Some((name, steps)) = split_revision(rev) else {
            guard.check_all(&self.spec, rev)?;
            return match self.repo.revparse_single(rev) {
                Ok(object) => Ok(self.peel_checked(&guard, object.id(), rev)?.map(|c| c.to_string())),
                Err(_) => Ok(None),
            };
        };
        let start = if name == "HEAD" || name == "@" {
            match self.repo.head() {
                Ok(head) => self.reference_commit(&guard, &head, "HEAD")?,
                Err(_) => None,
            }
        } else {
            match self.resolve_local(&guard, name)? {
                Some(found) => Oid::from_str(&found.commit).ok(),
                None => match self.repo.find_reference(&format!("refs/remotes/{name}")) {
                    Ok(reference) => self.reference_commit(&guard, &reference, name)?,
                    Err(_) => None,
                },
            }
        };
        let Some(mut commit) = start else { return Ok(None) };
        // Bounded: a forged parent could make a loop that `~N` would walk N times.
        let walked: usize = steps.iter().map(|s| if let Step::Back(n) = s { *n } else { 1 }).fold(0, usize::saturating_add);
        if walked > MAX_REVISION_STEPS {
            return Err(SourceError::Git {
                repo: self.spec.clone(),
                message: format!("`{rev}`: more than {MAX_REVISION_STEPS} steps back"),
            });
        }
        for step in steps {
            match step {
                Step::Back(n) => {
                    for _ in 0..n {
                        commit = self.parent_checked(&guard, commit, 0, rev)?;
                    }
                }
                Step::Parent(0) => {}
                Step::Parent(n) => commit = self.parent_checked(&guard, commit, n - 1, rev)?,
            }
        }
        Ok(Some(commit.to_string()))
    }

    /// Every tag name, sorted.
    pub fn tags(&self) -> Vec<String> {
        let mut tags: Vec<String> =
            self.repo.tag_names(None).map(|names| names.iter().flatten().flatten().map(|n| n.to_string()).collect()).unwrap_or_default();
        tags.sort();
        tags
    }

    /// The newest commit reachable from `branch` (default: HEAD) committed at or
    /// before `unix_time`: how a nightly wheel's date maps to source.
    pub fn last_commit_at_or_before(&self, branch: Option<&str>, unix_time: i64) -> Result<Option<String>, SourceError> {
        let guard = LooseGuard::new(self.repo.path());
        let start = match branch {
            Some(b) => self.resolve(b)?.commit,
            None => self.default_branch_commit(&guard)?,
        };
        // First parents, newest first, as `git log --first-parent` walks them.
        // Ids are not re-hashed on read, so a forged parent could close a loop.
        let mut seen = std::collections::HashSet::new();
        let mut next = Some(Oid::from_str(&start).map_err(|e| git_err(&self.spec, e))?);
        while let Some(oid) = next.filter(|oid| seen.insert(*oid)) {
            guard.check(oid, &self.spec, "history")?;
            let commit = self.repo.find_commit(oid).map_err(|e| git_err(&self.spec, e))?;
            if commit.time().seconds() <= unix_time {
                return Ok(Some(oid.to_string()));
            }
            next = commit.parent_id(0).ok();
        }
        Ok(None)
    }

    /// The default branch's tip and its commit time (Unix seconds): a build
    /// dated after it was made from commits this clone does not have.
    pub fn default_branch_tip(&self) -> Result<(String, i64), SourceError> {
        let guard = LooseGuard::new(self.repo.path());
        let tip = self.default_branch_commit(&guard)?;
        let oid = Oid::from_str(&tip).map_err(|e| git_err(&self.spec, e))?;
        guard.check(oid, &self.spec, "history")?;
        let commit = self.repo.find_commit(oid).map_err(|e| git_err(&self.spec, e))?;
        Ok((tip, commit.time().seconds()))
    }

    /// The commit HEAD points at (or the default branch's tip).
    pub fn resolve_head(&self) -> Result<String, SourceError> {
        self.default_branch_commit(&LooseGuard::new(self.repo.path()))
    }

    /// Tip of the default branch: HEAD when it resolves, else the usual main-line
    /// names (a bare cache's HEAD may name a branch the remote does not have).
    fn default_branch_commit(&self, guard: &LooseGuard) -> Result<String, SourceError> {
        if let Ok(head) = self.repo.head() {
            if let Some(commit) = self.reference_commit(guard, &head, "HEAD")? {
                return Ok(commit.to_string());
            }
        }
        for name in
            ["refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master", "refs/heads/main", "refs/heads/master"]
        {
            if let Ok(reference) = self.repo.find_reference(name) {
                if let Some(commit) = self.reference_commit(guard, &reference, name)? {
                    return Ok(commit.to_string());
                }
            }
        }
        Err(SourceError::UnknownRef { repo: self.spec.clone(), wanted: "(default branch)".into(), nearest: Vec::new() })
    }
}
