//! Fetching a URL's refs into its cached clone, with `git` or built in
//! (`transport`), and the blobs of a partial clone when a tree is first read.
//!
//! With `git`, the first clone is partial (`--filter=blob:none`: commits and
//! trees only; SGLang's history is mostly blobs). libgit2 reads such a clone
//! but cannot fetch what it lacks, and git's own lazy fetch asks for one blob
//! per round trip (200 blobs took 10.8 s from a local `file://` remote). So
//! the first read that misses a blob fetches every missing blob of that tree
//! in one request ([`LazyBlobs`]), as `git checkout` does: 6,889 blobs of a
//! SGLang release in 6.6 s from the same remote.

use super::git_cli::GitRun;
use super::progress::{Counts, Progress, Style};
use super::transport::{choose, Chosen, FetchWith};
use super::{git_err, Entry, SourceError};
use crate::source::redact::redact_userinfo;
use git2::{Oid, Repository};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Refs every fetch updates: branches beside the remote's name, tags as they are.
const REFSPECS: [&str; 2] = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"];

/// How this run fetches: the transport asked for and whether to show progress.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct How {
    pub with: FetchWith,
    pub quiet: bool,
}

impl How {
    fn chosen(&self) -> Result<Chosen, String> {
        choose(self.with, &|name| std::env::var(name).ok(), std::env::var_os("PATH").as_deref())
    }
}

/// Whether a clone is partial: made by git with a filter, its remote is a
/// promisor of the objects it lacks.
pub(super) fn is_partial(repo: &Repository) -> bool {
    repo.config().ok().and_then(|c| c.get_bool("remote.origin.promisor").ok()).unwrap_or(false)
}

/// Fetch every branch and tag of `url` into `repo`. `first`: the clone is
/// new, and with git it is made partial.
pub(super) fn fetch_refs(repo: &Repository, url: &str, how: How, first: bool) -> Result<(), SourceError> {
    let shown = redact_userinfo(url);
    let fetch_err = |message: &str| SourceError::Fetch { url: shown.clone(), message: redact_userinfo(message) };
    let mut progress = Progress::new(format!("fetching {shown}"), Style::for_stderr(how.quiet));
    let result = match how.chosen().map_err(|m| fetch_err(&m))? {
        Chosen::Builtin => builtin(repo, url, &mut progress),
        Chosen::Git(exe) => {
            let mut args = vec!["fetch".to_string(), "--progress".into(), "--recurse-submodules=no".into()];
            if first {
                let mut config = repo.config().map_err(|e| git_err(url, e))?;
                config.set_bool("remote.origin.promisor", true).map_err(|e| git_err(url, e))?;
                config.set_str("remote.origin.partialclonefilter", "blob:none").map_err(|e| git_err(url, e))?;
                args.push("--filter=blob:none".into());
            }
            args.push("origin".into());
            args.extend(REFSPECS.iter().map(|s| s.to_string()));
            GitRun { exe: &exe, git_dir: repo.path(), url, args, stdin: None }.run(&shown, &mut progress).map_err(|m| fetch_err(&m))
        }
    };
    progress.finish(result.is_ok());
    result
}

/// The built-in transport: libgit2, http(s) through `smart_http`, or file.
fn builtin(repo: &Repository, url: &str, progress: &mut Progress) -> Result<(), SourceError> {
    let shown = redact_userinfo(url);
    let fetch_err = |message: &str| SourceError::Fetch { url: shown.clone(), message: redact_userinfo(message) };
    let scheme = url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https" | "file")) {
        return Err(fetch_err("the built-in transport fetches only http(s):// and file:// URLs (no ssh); put git on PATH (and unset ENGINE_AUDIT_GIT=builtin), or clone it with git and pass the path"));
    }
    super::smart_http::register().map_err(|message| fetch_err(&message))?;
    let mut remote = repo.find_remote("origin").or_else(|_| repo.remote_anonymous(url)).map_err(|e| git_err(url, e))?;
    let mut fo = git2::FetchOptions::new();
    fo.download_tags(git2::AutotagOption::All);
    let mut callbacks = git2::RemoteCallbacks::new();
    callbacks.transfer_progress(|p| {
        progress.update(Counts {
            received_objects: p.received_objects() as u64,
            total_objects: p.total_objects() as u64,
            received_bytes: p.received_bytes() as u64,
        });
        true
    });
    fo.remote_callbacks(callbacks);
    remote.fetch(&REFSPECS, Some(&mut fo), None).map_err(|e| fetch_err(e.message()))
}

/// The blobs a partial clone lacks, fetched once per tree on its first miss.
pub(super) struct LazyBlobs {
    git_dir: PathBuf,
    url: String,
    offline: bool,
    how: How,
    /// What the tree is, for progress: `sglang@v0.5.19`.
    tree: String,
    done: OnceLock<Result<(), String>>,
}

impl LazyBlobs {
    pub(super) fn new(git_dir: &Path, url: &str, offline: bool, how: How, tree: String) -> LazyBlobs {
        LazyBlobs { git_dir: git_dir.to_path_buf(), url: url.to_string(), offline, how, tree, done: OnceLock::new() }
    }

    /// Make every blob of `entries` present (once; later calls return the
    /// first answer). `repo` is the caller's handle of the same clone.
    pub(super) fn ensure(&self, entries: &[Entry], repo: &Repository) -> Result<(), String> {
        self.done.get_or_init(|| self.fetch_missing(entries, repo)).clone()
    }

    fn fetch_missing(&self, entries: &[Entry], repo: &Repository) -> Result<(), String> {
        let shown = redact_userinfo(&self.url);
        let odb = repo.odb().map_err(|e| e.message().to_string())?;
        let missing: Vec<Oid> = entries
            .iter()
            .filter_map(|e| Oid::from_str(&e.id).ok())
            .filter(|oid| !odb.exists_ext(*oid, git2::OdbLookupFlags::NO_REFRESH))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if self.offline {
            return Err(format!(
                "the cached clone of {shown} is partial and lacks {} files of {}; --offline forbids fetching them (run once without it)",
                missing.len(),
                self.tree
            ));
        }
        let exe = match self.how.chosen()? {
            Chosen::Git(exe) => exe,
            Chosen::Builtin => {
                return Err(format!(
                    "the cached clone of {shown} was made by git without blobs (--filter=blob:none), and the built-in transport cannot fetch them; put git on PATH, or `engine-audit cache clear --clones` to clone it again"
                ))
            }
        };
        let mut stdin = String::with_capacity(missing.len() * 41);
        for oid in &missing {
            stdin.push_str(&oid.to_string());
            stdin.push('\n');
        }
        let args = [
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "--progress",
            "--no-tags",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
            "origin",
        ];
        let mut progress =
            Progress::new(format!("fetching {} files of {} from {shown}", missing.len(), self.tree), Style::for_stderr(self.how.quiet));
        let run = GitRun {
            exe: &exe,
            git_dir: &self.git_dir,
            url: &self.url,
            args: args.iter().map(|a| a.to_string()).collect(),
            stdin: Some(stdin.into_bytes()),
        };
        let result = run.run(&shown, &mut progress);
        progress.finish(result.is_ok());
        result?;
        // The new pack is found by every handle on its next miss (libgit2
        // rescans the pack folder then); this one looks now.
        odb.refresh().map_err(|e| e.message().to_string())
    }
}
