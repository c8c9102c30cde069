//! URL sources fetched with the `git` program: a partial first clone
//! (`--filter=blob:none`), a tree's blobs fetched in one request on its first
//! read, over `file://` and over the test HTTP server (`git http-backend`);
//! no hook runs; offline and the built-in transport say what to do with a
//! clone that lacks blobs.

use crate::git_repo::{build_repo, commit};
use crate::http_server::{git_backend, serve};
use engine_audit::source::{EngineRepo, FetchWith, OpenOptions, SourceError, Tree};
use git2::{Oid, Repository, Signature, Time};
use std::path::{Path, PathBuf};

fn with(fetch: FetchWith, cache: &Path, offline: bool) -> OpenOptions {
    OpenOptions { offline, cache_dir: Some(cache.to_path_buf()), fetch, quiet: true }
}

/// An upstream that serves partial clones, as GitHub does.
fn upstream(dir: &Path) -> (Repository, String, String) {
    let (repo, first, second) = build_repo(dir);
    let mut config = repo.config().unwrap();
    config.set_bool("uploadpack.allowFilter", true).unwrap();
    config.set_bool("uploadpack.allowAnySHA1InWant", true).unwrap();
    (repo, first, second)
}

fn only_clone(cache: &Path) -> PathBuf {
    let items: Vec<_> = std::fs::read_dir(cache).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(items.len(), 1, "{items:?}");
    items.into_iter().next().unwrap()
}

fn has_object(clone: &Path, text: &str) -> bool {
    let oid = Oid::hash_object(git2::ObjectType::Blob, text.as_bytes()).unwrap();
    Repository::open_bare(clone).unwrap().odb().unwrap().exists(oid)
}

#[test]
fn git_clones_without_blobs_and_fetches_a_trees_blobs_on_its_first_read() {
    let up = tempfile::tempdir().unwrap();
    let (_repo, first, second) = upstream(up.path());
    let url = format!("file://{}", up.path().display());
    let cache = tempfile::tempdir().unwrap();

    let repo = EngineRepo::open(&url, &with(FetchWith::Git, cache.path(), false)).unwrap();
    let clone = only_clone(cache.path());
    let config = std::fs::read_to_string(clone.join("config")).unwrap();
    assert!(config.contains("promisor = true") && config.contains("partialclonefilter = blob:none"), "{config}");
    assert!(!has_object(&clone, "V = 2\n") && !has_object(&clone, "Y = 2\n"), "commits and trees only");

    let resolved = repo.resolve("v0.2.0").unwrap();
    assert_eq!(resolved.commit, second);
    let tree = repo.tree_at(&resolved).unwrap();
    assert_eq!(tree.read_text("python/sglang/__init__.py").unwrap(), "V = 2\n");
    // One read brought every file of the tree, not just the one read.
    assert!(has_object(&clone, "Y = 2\n") && has_object(&clone, "X = 1\n"));
    assert!(!has_object(&clone, "V = 1\n"), "another release's files are not fetched");
    assert_eq!(tree.failed_reads(), 0);
    assert_eq!(tree.read_limited("python/sglang/srt/environ.py", 1 << 20).unwrap(), b"Y = 2\n");

    // Offline: what was fetched reads; a release whose files were never read
    // names --offline.
    let offline = EngineRepo::open(&url, &with(FetchWith::Git, cache.path(), true)).unwrap();
    let tree = offline.tree_at(&offline.resolve("v0.2.0").unwrap()).unwrap();
    assert_eq!(tree.read_text("python/sglang/srt/environ.py").unwrap(), "Y = 2\n");
    let old = offline.tree_at(&offline.resolve("v0.1.0").unwrap()).unwrap();
    assert_eq!(old.commit().unwrap(), first);
    let err = old.read_text("python/sglang/__init__.py").unwrap_err();
    assert!(matches!(err, SourceError::MissingBlob { .. }) && err.to_string().contains("--offline"), "{err}");
    assert_eq!(old.failed_reads(), 1);

    // The built-in transport cannot fetch blobs: it says what to do.
    let builtin = EngineRepo::open(&url, &with(FetchWith::Builtin, cache.path(), false)).unwrap();
    let old = builtin.tree_at(&builtin.resolve("v0.1.0").unwrap()).unwrap();
    let err = old.read_text("python/sglang/__init__.py").unwrap_err().to_string();
    assert!(err.contains("built-in transport cannot fetch them") && err.contains("cache clear --clones"), "{err}");
}

#[test]
fn git_fetches_new_tags_into_the_partial_clone_and_runs_no_hook() {
    let up = tempfile::tempdir().unwrap();
    let (repo, _, _) = upstream(up.path());
    let url = format!("file://{}", up.path().display());
    let cache = tempfile::tempdir().unwrap();
    EngineRepo::open(&url, &with(FetchWith::Git, cache.path(), false)).unwrap();
    let clone = only_clone(cache.path());

    // A hook in the clone that a fetch would run (`reference-transaction`).
    let marker = cache.path().join("..").join(format!("hook-ran-{}", std::process::id()));
    let hook = clone.join("hooks/reference-transaction");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let sig = Signature::new("t", "t@localhost", &Time::new(1_700_200_000, 0)).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap().id();
    let third = commit(&repo, &sig, &[("python/sglang/__init__.py", "V = 3\n")], Some(head), 1_700_200_000);
    repo.tag_lightweight("v0.3.0", &repo.find_object(third, None).unwrap(), false).unwrap();

    let again = EngineRepo::open(&url, &with(FetchWith::Git, cache.path(), false)).unwrap();
    let resolved = again.resolve("v0.3.0").unwrap();
    assert_eq!(resolved.commit, third.to_string());
    assert!(!has_object(&clone, "V = 3\n"), "the fetch keeps the filter");
    assert_eq!(again.tree_at(&resolved).unwrap().read_text("python/sglang/__init__.py").unwrap(), "V = 3\n");
    assert!(!marker.exists(), "no hook ran");
    // Branches land where the built-in transport puts them: one cache serves both.
    assert!(Repository::open_bare(&clone).unwrap().find_reference("refs/remotes/origin/main").is_ok());
}

#[test]
fn git_clones_over_http_from_the_smart_http_server() {
    let root = tempfile::tempdir().unwrap();
    let (_repo, _, second) = upstream(&root.path().join("sglang"));
    let served = root.path().to_path_buf();
    let server = serve(move |request, _| git_backend(&served, request));
    let url = format!("{}/sglang", server.url);
    let cache = tempfile::tempdir().unwrap();

    let repo = EngineRepo::open(&url, &with(FetchWith::Git, cache.path(), false)).unwrap();
    let resolved = repo.resolve("v0.2.0").unwrap();
    assert_eq!(resolved.commit, second);
    assert_eq!(repo.tree_at(&resolved).unwrap().read_text("python/sglang/srt/environ.py").unwrap(), "Y = 2\n");
    // git's own client (not the built-in one), and a second fetch for the blobs.
    // The built-in client only reads each fetch's ref advertisement first,
    // under its limits (git bounds neither its refs nor its bytes).
    let agents = server.agents.lock().unwrap().clone();
    let log = server.log.lock().unwrap().clone();
    for (request, agent) in log.iter().zip(&agents) {
        let ours = agent.contains("engine-audit");
        assert!(agent.starts_with("git/") && (!ours || request.starts_with("GET /sglang/info/refs")), "{request}: {agent}");
    }
    assert!(agents.iter().any(|a| !a.contains("engine-audit")), "git fetched: {agents:?}");
    let posts = server.log.lock().unwrap().iter().filter(|l| l.starts_with("POST")).count();
    assert!(posts >= 2, "the clone and the blobs: {:?}", server.log.lock().unwrap());
}

#[test]
fn git_gives_a_clear_error_for_a_repository_that_is_not_there() {
    let cache = tempfile::tempdir().unwrap();
    let missing = tempfile::tempdir().unwrap();
    let url = format!("file://{}/nothing-here.git", missing.path().display());
    let err = EngineRepo::open(&url, &with(FetchWith::Git, cache.path(), false)).err().expect("nothing to clone");
    assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
    assert!(err.to_string().contains("nothing-here.git"), "{err}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "no half-done clone is left");
}

#[test]
fn git_tries_ssh_urls_that_the_builtin_transport_refuses() {
    let cache = tempfile::tempdir().unwrap();
    let url = "ssh://git@127.0.0.1:1/sglang.git";
    let err = EngineRepo::open(url, &with(FetchWith::Git, cache.path(), false)).err().expect("no ssh server here");
    assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
    assert!(!err.to_string().contains("built-in transport"), "{err}");
}

/// `surface` of a URL at v0.2.0, with stderr captured (not a terminal).
fn surface_of(url: &str, cache: &Path, extra: &[&str], fetch: &str) -> std::process::Output {
    use assert_cmd::prelude::*;
    std::process::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--sglang", url, "--at", "v0.2.0", "--no-cache", "--cache-dir"])
        .arg(cache)
        .args(extra)
        .env("ENGINE_AUDIT_GIT", fetch)
        .output()
        .unwrap()
}

#[test]
fn a_clone_says_how_far_it_is_in_a_log_unless_quiet() {
    let up = tempfile::tempdir().unwrap();
    upstream(up.path());
    let url = format!("file://{}", up.path().display());
    for fetch in ["git", "builtin"] {
        let cache = tempfile::tempdir().unwrap();
        let out = surface_of(&url, cache.path(), &[], fetch);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{fetch}: {stderr}");
        // Plain lines (no `\r`), the clone's last one saying it is done.
        assert!(!stderr.contains('\r'), "{fetch}: {stderr:?}");
        let done = stderr.lines().find(|l| l.starts_with(&format!("fetching {url}: ")) && l.ends_with(", done"));
        assert!(done.is_some_and(|l| l.contains("objects") && l.contains("MiB received")), "{fetch}: {stderr}");
        if fetch == "git" {
            assert!(stderr.lines().any(|l| l.starts_with("fetching 3 files of ") && l.ends_with(", done")), "{stderr}");
        }

        let cache = tempfile::tempdir().unwrap();
        let out = surface_of(&url, cache.path(), &["--quiet"], fetch);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !stderr.contains("fetching"), "{fetch}: {stderr}");
    }
}

#[test]
fn an_insteadof_rule_cannot_turn_a_url_into_a_local_path() {
    // The user's own config maps the URL onto a local repository and allows
    // `file` outright: the allow-list still refuses it.
    let up = tempfile::tempdir().unwrap();
    upstream(up.path());
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("gitconfig");
    std::fs::write(
        &config,
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = https://git.example.invalid/sglang\n[protocol \"file\"]\n\tallow = always\n",
            up.path().display()
        ),
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    use assert_cmd::prelude::*;
    let out = std::process::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--sglang", "https://git.example.invalid/sglang", "--at", "v0.2.0", "--no-cache", "--quiet", "--cache-dir"])
        .arg(cache.path())
        .env("GIT_CONFIG_GLOBAL", &config)
        .env("ENGINE_AUDIT_GIT", "git")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("transport 'file'") && stderr.contains("not allowed"), "{stderr}");

    // The same rule onto an https mirror would be followed: only the protocol is refused.
    let out = std::process::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--sglang", &format!("file://{}", up.path().display()), "--at", "v0.2.0", "--no-cache", "--quiet", "--cache-dir"])
        .arg(cache.path())
        .env("GIT_CONFIG_GLOBAL", &config)
        .env("ENGINE_AUDIT_GIT", "git")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
