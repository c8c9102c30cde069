//! A small engine repository built with git2, shared by the git source tests.

#![allow(dead_code)]

use git2::{Repository, Signature, Time};
use std::path::Path;

/// A repo with two commits on `main`: v0.1.0 (lightweight) and v0.2.0 (annotated),
/// a `feature` branch, and files in the upstream SGLang layout.
pub fn build_repo(dir: &Path) -> (Repository, String, String) {
    let repo = Repository::init(dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let sig = Signature::new("t", "t@localhost", &Time::new(1_700_000_000, 0)).unwrap();
    let first = commit(
        &repo,
        &sig,
        &[("python/sglang/__init__.py", "V = 1\n"), ("python/sglang/srt/server_args.py", "X = 1\n")],
        None,
        1_700_000_000,
    );
    repo.tag_lightweight("v0.1.0", &repo.find_object(first, None).unwrap(), false).unwrap();
    let second = commit(
        &repo,
        &sig,
        &[("python/sglang/__init__.py", "V = 2\n"), ("python/sglang/srt/environ.py", "Y = 2\n")],
        Some(first),
        1_700_086_400,
    );
    repo.tag("v0.2.0", &repo.find_object(second, None).unwrap(), &sig, "release 0.2.0", false).unwrap();
    repo.branch("feature", &repo.find_commit(first).unwrap(), false).unwrap();
    (repo, first.to_string(), second.to_string())
}

pub fn commit(repo: &Repository, _sig: &Signature, files: &[(&str, &str)], parent: Option<git2::Oid>, time: i64) -> git2::Oid {
    let sig = Signature::new("t", "t@localhost", &Time::new(time, 0)).unwrap();
    let mut index = repo.index().unwrap();
    for (path, text) in files {
        let oid = repo.blob(text.as_bytes()).unwrap();
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            file_size: text.len() as u32,
            id: oid,
            flags: path.len() as u16,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree_id = index.write_tree().unwrap();
    let tree = repo.find_tree(tree_id).unwrap();
    let parents: Vec<git2::Commit> = parent.into_iter().map(|p| repo.find_commit(p).unwrap()).collect();
    let refs: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("refs/heads/main"), &sig, &sig, "c", &tree, &refs).unwrap()
}
