//! `engine-audit --version` names the commit the binary was built from; a build
//! without a usable checkout falls back to the bare version.

#[path = "../../build/git_commit.rs"]
mod git_commit;

use assert_cmd::Command;
use std::path::Path;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn version_names_the_commit_built_from() {
    let out = Command::cargo_bin("engine-audit").unwrap().arg("--version").output().unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let head = git_commit::git_commit(Path::new(MANIFEST));
    match head {
        // The binary was built from this checkout (build.rs reruns when HEAD moves).
        Some(commit) => assert_eq!(line, format!("engine-audit {} ({})\n", env!("CARGO_PKG_VERSION"), &commit.id[..12])),
        None => {
            eprintln!("not a git checkout here (or no git): only the bare version is checked");
            assert_eq!(line, format!("engine-audit {}\n", env!("CARGO_PKG_VERSION")));
        }
    }
}

#[test]
fn outside_a_checkout_there_is_no_commit() {
    // A plain folder, as a crates.io download or an unpacked sdist is.
    let plain = tempfile::tempdir().unwrap();
    assert!(git_commit::git_commit(plain.path()).is_none());
    // A crate folder inside another project's repository: that repository's
    // commit is not the crate's.
    let outer = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(outer.path()).unwrap();
    let nested = outer.path().join("vendor/engine-audit");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("Cargo.toml"), "").unwrap();
    commit_all(&repo);
    assert!(git_commit::git_commit(outer.path()).is_some(), "the outer repository has a commit");
    assert!(git_commit::git_commit(&nested).is_none());
    assert_eq!(git_commit::long_version("0.1.0", None), "0.1.0");
}

#[test]
fn a_checkout_gives_its_commit_and_the_files_to_watch() {
    if std::process::Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipped: no `git` on PATH (build.rs then falls back to the bare version)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    // An unborn branch has no commit yet.
    assert!(git_commit::git_commit(dir.path()).is_none());
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let id = commit_all(&repo);
    let found = git_commit::git_commit(dir.path()).expect("a commit");
    assert_eq!(found.id, id.to_string());
    let head = repo.head().unwrap();
    let branch = head.name().unwrap();
    assert!(found.watch.iter().any(|p| p.ends_with("HEAD")), "{:?}", found.watch);
    assert!(found.watch.iter().any(|p| p.ends_with(branch)), "the branch's ref file: {:?}", found.watch);
    assert!(found.watch.iter().all(|p| p.is_absolute()));
    assert_eq!(git_commit::long_version("0.1.0", Some(&found.id)), format!("0.1.0 ({})", &found.id[..12]));
    assert!(git_commit::is_commit_id(&found.id) && !git_commit::is_commit_id("v0.1.0") && !git_commit::is_commit_id(&found.id[..12]));
}

/// Commit every file of the work tree on the current branch.
fn commit_all(repo: &git2::Repository) -> git2::Oid {
    let mut index = repo.index().unwrap();
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None).unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@localhost").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "one", &tree, &[]).unwrap()
}
