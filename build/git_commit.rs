//! The commit a build comes from, for `engine-audit --version`. Included by
//! build.rs and by the tests (`tests/it/version.rs`), so the fallbacks are tested.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commit checked out, and the files whose change means another commit is.
pub struct GitCommit {
    pub id: String,
    pub watch: Vec<PathBuf>,
}

/// The commit checked out at `dir`, only when `dir` is the top of a git work tree
/// and `git` runs. Anything else is `None`, never a panic: a source tarball, a
/// crates.io download or an sdist has no `.git`; a crate vendored inside another
/// project's repository must not take that project's commit; a machine or a
/// container may have no `git` or refuse the checkout's owner.
pub fn git_commit(dir: &Path) -> Option<GitCommit> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    let id = git(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?;
    if !is_commit_id(&id) {
        return None;
    }
    // HEAD names the branch; the branch's ref file (or packed-refs) moves on a
    // commit. Paths are asked from git: a worktree keeps HEAD apart from refs.
    let mut names = vec!["HEAD".to_string(), "packed-refs".to_string()];
    names.extend(git(&["symbolic-ref", "--quiet", "HEAD"]));
    let watch = names
        .iter()
        .filter_map(|name| git(&["rev-parse", "--git-path", name]))
        .map(|p| if Path::new(&p).is_absolute() { PathBuf::from(p) } else { dir.join(p) })
        .collect();
    Some(GitCommit { id, watch })
}

/// A full hexadecimal object id (SHA-1 or SHA-256).
pub fn is_commit_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What `--version` prints after the name: `0.1.0 (0123456789ab)`, or the bare
/// version when the commit is unknown.
pub fn long_version(version: &str, commit: Option<&str>) -> String {
    match commit {
        Some(id) => format!("{version} ({})", id.get(..12).unwrap_or(id)),
        None => version.to_string(),
    }
}
