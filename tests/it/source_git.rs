//! The git source on repositories built here with git2: every kind of ref, the
//! URL cache, offline mode, and what a tree exposes.

use engine_audit::source::{discover_package_root, EngineRepo, FetchWith, OpenOptions, SourceError, Tree};
use git2::{Repository, Signature, Time};

use crate::git_repo;
use git_repo::{build_repo, commit};

#[test]
fn resolves_every_kind_of_ref() {
    let dir = tempfile::tempdir().unwrap();
    let (_repo, first, second) = build_repo(dir.path());
    let repo = EngineRepo::open(dir.path().to_str().unwrap(), &OpenOptions::default()).unwrap();

    assert_eq!(repo.resolve("v0.1.0").unwrap().commit, first, "lightweight tag");
    assert_eq!(repo.resolve("v0.2.0").unwrap().commit, second, "annotated tag peels to its commit");
    assert_eq!(repo.resolve("0.2.0").unwrap().matched, "refs/tags/v0.2.0", "bare version finds the v tag");
    assert_eq!(repo.resolve("feature").unwrap().commit, first, "branch");
    assert_eq!(repo.resolve("main").unwrap().commit, second, "default branch");
    assert_eq!(repo.resolve(&second).unwrap().commit, second, "full sha");
    assert_eq!(repo.resolve(&first[..8]).unwrap().commit, first, "short sha");
}

#[test]
fn an_unknown_ref_lists_the_nearest_tags() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path());
    let repo = EngineRepo::open(dir.path().to_str().unwrap(), &OpenOptions::default()).unwrap();
    match repo.resolve("v0.1.9") {
        Err(SourceError::UnknownRef { wanted, nearest, .. }) => {
            assert_eq!(wanted, "v0.1.9");
            assert_eq!(nearest[0], "v0.1.0");
            let message = SourceError::UnknownRef { repo: "r".into(), wanted, nearest }.to_string();
            assert!(message.contains("nearest tags: v0.1.0"), "{message}");
        }
        other => panic!("expected UnknownRef, got {:?}", other.map(|r| r.commit)),
    }
}

#[test]
fn reads_a_tree_at_a_commit_without_a_work_tree() {
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path());
    // A bare repo has no work tree at all: everything comes from objects.
    let bare = tempfile::tempdir().unwrap();
    Repository::clone(dir.path().to_str().unwrap(), bare.path()).unwrap();
    let bare_path = bare.path().join(".git");
    let repo = EngineRepo::open(bare_path.to_str().unwrap(), &OpenOptions::default()).unwrap();
    let tree = repo.tree_at(&repo.resolve("v0.1.0").unwrap()).unwrap();
    let paths: Vec<_> = tree.entries().iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["python/sglang/__init__.py", "python/sglang/srt/server_args.py"]);
    assert_eq!(tree.read_text("python/sglang/__init__.py").unwrap(), "V = 1\n");
    // The blob id is git's: the cache keys on it.
    let id = &tree.entry("python/sglang/__init__.py").unwrap().id;
    assert_eq!(id, &git2::Oid::hash_object(git2::ObjectType::Blob, b"V = 1\n").unwrap().to_string());
    assert_eq!(discover_package_root(&tree, &engine_audit::profiles::SGLANG, None).unwrap(), "python/sglang");
    assert!(matches!(tree.read("python/sglang/srt/environ.py"), Err(SourceError::MissingFile { .. })));
}

#[test]
fn clones_a_url_into_the_cache_and_reuses_it_offline_with_git() {
    clones_a_url_into_the_cache_and_reuses_it_offline(FetchWith::Git);
}

#[test]
fn clones_a_url_into_the_cache_and_reuses_it_offline_built_in() {
    clones_a_url_into_the_cache_and_reuses_it_offline(FetchWith::Builtin);
}

fn clones_a_url_into_the_cache_and_reuses_it_offline(fetch: FetchWith) {
    let upstream = tempfile::tempdir().unwrap();
    let (repo, _, second) = build_repo(upstream.path());
    let cache = tempfile::tempdir().unwrap();
    let url = format!("file://{}", upstream.path().display());
    let opts = OpenOptions { offline: false, cache_dir: Some(cache.path().to_path_buf()), fetch, ..Default::default() };

    let cloned = EngineRepo::open(&url, &opts).unwrap();
    assert_eq!(cloned.resolve("v0.2.0").unwrap().commit, second);
    let cached: Vec<_> = std::fs::read_dir(cache.path()).unwrap().flatten().collect();
    assert_eq!(cached.len(), 1, "one bare clone per URL");
    assert!(cached[0].path().join("HEAD").exists());
    assert!(!cached[0].path().join("python").exists(), "no work tree is written");

    // Offline: the cached clone answers known refs, and names the missing one.
    let offline = OpenOptions { offline: true, ..opts.clone() };
    let again = EngineRepo::open(&url, &offline).unwrap();
    assert_eq!(again.resolve("0.2.0").unwrap().commit, second);
    let sig = Signature::new("t", "t@localhost", &Time::new(1_700_200_000, 0)).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap().id();
    let third = commit(&repo, &sig, &[("python/sglang/__init__.py", "V = 3\n")], Some(head), 1_700_200_000);
    repo.tag_lightweight("v0.3.0", &repo.find_object(third, None).unwrap(), false).unwrap();
    match again.resolve("v0.3.0") {
        Err(SourceError::OfflineMissing { wanted, .. }) => assert_eq!(wanted, "v0.3.0"),
        other => panic!("expected OfflineMissing, got {:?}", other.map(|r| r.commit)),
    }

    // Online, the same cache fetches only because the ref is missing.
    let online = EngineRepo::open(&url, &opts).unwrap();
    assert_eq!(online.resolve("v0.3.0").unwrap().commit, third.to_string());
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1, "the cache is reused");
}

#[test]
fn offline_without_a_cached_clone_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let opts = OpenOptions { offline: true, cache_dir: Some(cache.path().to_path_buf()), ..Default::default() };
    let err = EngineRepo::open("file:///nonexistent/sglang.git", &opts).err().unwrap();
    assert!(matches!(err, SourceError::OfflineMissing { .. }), "{err}");
}

#[test]
fn nightly_dates_map_to_the_last_commit_before_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_repo, first, second) = build_repo(dir.path());
    let repo = EngineRepo::open(dir.path().to_str().unwrap(), &OpenOptions::default()).unwrap();
    assert_eq!(repo.last_commit_at_or_before(None, 1_700_050_000).unwrap(), Some(first));
    assert_eq!(repo.last_commit_at_or_before(None, 1_800_000_000).unwrap(), Some(second));
    assert_eq!(repo.last_commit_at_or_before(None, 1_600_000_000).unwrap(), None);
}

#[test]
fn a_commit_listing_is_kept_in_the_fact_cache_and_reused() {
    use engine_audit::cache::FactCache;
    use engine_audit::source::{Listing, ListingStore};
    let dir = tempfile::tempdir().unwrap();
    let (_, first, _) = build_repo(dir.path());
    let repo = EngineRepo::open(dir.path().to_str().unwrap(), &OpenOptions::default()).unwrap();
    let resolved = repo.resolve("v0.1.0").unwrap();
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(cache_dir.path());
    assert!(cache.listing(&first).is_none());
    let walked = repo.tree_with(&resolved, &cache).unwrap();
    let kept = cache.listing(&first).expect("the listing was kept under the commit id");
    assert_eq!(kept.entries, walked.entries());
    // What the store returns is what the tree lists: a planted listing proves
    // the walk was skipped (a real store only ever holds the walked one).
    let planted = Listing { entries: kept.entries[..1].to_vec(), ..Default::default() };
    cache.keep(&first, &planted);
    let reused = repo.tree_with(&resolved, &cache).unwrap();
    assert_eq!(reused.entries(), &planted.entries[..]);
    assert_eq!(reused.read_text("python/sglang/__init__.py").unwrap(), "V = 1\n");
    // Without a cache nothing is kept and the walk is complete.
    assert_eq!(repo.tree_at(&resolved).unwrap().entries().len(), 2);
}

#[test]
fn revisions_resolve_as_git_spells_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_repo, first, second) = build_repo(dir.path());
    let repo = EngineRepo::open(dir.path().to_str().unwrap(), &OpenOptions::default()).unwrap();
    let rev = |r: &str| repo.resolve_revision(r).unwrap_or_else(|e| panic!("{r}: {e}"));
    for (spelling, want) in [
        ("HEAD", &second),
        ("@", &second),
        ("HEAD~1", &first),
        ("main^", &first),
        ("main^1", &first),
        ("v0.2.0~", &first),
        ("v0.2.0^0", &second),
        ("feature", &first),
        (&second[..10], &second),
        (&format!("{}^", &second[..10]), &first),
        // Syntax beyond names and steps is rev-parse's.
        ("main@{0}", &second),
    ] {
        assert_eq!(rev(spelling).as_ref(), Some(want), "{spelling}");
    }
    assert_eq!(rev("no-such-branch"), None);
    let err = repo.resolve_revision("HEAD~2").unwrap_err().to_string();
    assert!(err.contains("has no parent 1"), "{err}");
    let err = repo.resolve_revision("HEAD^2").unwrap_err().to_string();
    assert!(err.contains("has no parent 2"), "{err}");
}

/// A loose object cut short makes libgit2 1.9 loop forever; every way of
/// reaching a commit (tag, branch, id, HEAD, `~N`, rev-parse syntax, a
/// nightly's date) must check it first and fail with a git error.
#[test]
fn a_truncated_commit_is_a_git_error_on_every_way_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_repo, _first, second) = build_repo(dir.path());
    let path = dir.path().join(".git/objects").join(&second[..2]).join(&second[2..]);
    let bytes = std::fs::read(&path).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).unwrap();

    let spec = dir.path().to_str().unwrap().to_string();
    type Attempt = fn(&EngineRepo, &str) -> Result<(), SourceError>;
    let attempts: [(&str, Attempt); 7] = [
        ("annotated tag", |r, _| r.resolve("v0.2.0").map(drop)),
        ("branch", |r, _| r.resolve("main").map(drop)),
        ("commit id", |r, id| r.resolve(id).map(drop)),
        ("HEAD", |r, _| r.resolve_head().map(drop)),
        ("HEAD~1", |r, _| r.resolve_revision("HEAD~1").map(drop)),
        ("main@{0} (rev-parse)", |r, _| r.resolve_revision("main@{0}").map(drop)),
        ("nightly date", |r, _| r.last_commit_at_or_before(None, 1_800_000_000).map(drop)),
    ];
    // Cut in the middle, libgit2 1.9 loops; cut in the checksum, it errs, but
    // said "ref not found" for a commit id and HEAD.
    for ((what, attempt), cut) in attempts.iter().flat_map(|a| [(a, bytes.len() / 2), (a, bytes.len() - 4)]) {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let (spec, id, attempt) = (spec.clone(), second.clone(), *attempt);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let repo = EngineRepo::open(&spec, &OpenOptions::default()).unwrap();
            let _ = tx.send(attempt(&repo, &id).map_err(|e| e.to_string()));
        });
        match rx.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(Err(message)) => assert!(message.contains("does not inflate"), "{what}, cut at {cut}: {message}"),
            Ok(Ok(())) => panic!("{what}, cut at {cut}: a truncated commit resolved"),
            Err(_) => panic!("{what}, cut at {cut}: no answer within 30 s (libgit2 loops on a truncated object)"),
        }
    }
}

/// The one clone folder in a clone cache.
fn only_clone(cache: &std::path::Path) -> std::path::PathBuf {
    let found: Vec<_> = std::fs::read_dir(cache).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

#[test]
fn a_cached_clone_that_lost_its_head_is_cloned_again() {
    let upstream = tempfile::tempdir().unwrap();
    let (_repo, _, second) = build_repo(upstream.path());
    let cache = tempfile::tempdir().unwrap();
    let url = format!("file://{}", upstream.path().display());
    let opts = OpenOptions { offline: false, cache_dir: Some(cache.path().to_path_buf()), ..Default::default() };
    EngineRepo::open(&url, &opts).unwrap();
    let clone = only_clone(cache.path());
    std::fs::remove_file(clone.join("HEAD")).unwrap();

    // Offline there is nothing to heal it with: the error says what to do.
    let offline = OpenOptions { offline: true, ..opts.clone() };
    let err = EngineRepo::open(&url, &offline).err().expect("a clone without HEAD cannot be read");
    assert!(err.to_string().contains("without --offline"), "{err}");

    let healed = EngineRepo::open(&url, &opts).unwrap_or_else(|e| panic!("the broken clone was not replaced: {e}"));
    assert_eq!(healed.resolve("v0.2.0").unwrap().commit, second);
    assert_eq!(only_clone(cache.path()), clone, "cloned again in its place, nothing left beside it");
    assert!(clone.join("HEAD").exists());
}

#[test]
fn a_folder_in_the_clone_cache_that_is_not_a_clone_is_left_alone() {
    let upstream = tempfile::tempdir().unwrap();
    build_repo(upstream.path());
    let cache = tempfile::tempdir().unwrap();
    let url = format!("file://{}", upstream.path().display());
    let opts = OpenOptions { offline: false, cache_dir: Some(cache.path().to_path_buf()), ..Default::default() };
    EngineRepo::open(&url, &opts).unwrap();
    let clone = only_clone(cache.path());
    // Someone's files where the clone was: not ours to delete.
    std::fs::remove_dir_all(&clone).unwrap();
    std::fs::create_dir(&clone).unwrap();
    std::fs::write(clone.join("thesis.tex"), "mine").unwrap();
    let err = EngineRepo::open(&url, &opts).err().expect("the folder is not a clone");
    assert!(err.to_string().contains(&clone.display().to_string()), "the folder is named: {err}");
    assert!(clone.join("thesis.tex").exists());
}

/// Set a folder's modification time `secs` seconds in the past.
fn age_dir(dir: &std::path::Path, secs: u64) {
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::open(dir).unwrap().set_modified(t).unwrap();
}

#[test]
fn partial_clones_left_by_a_killed_run_are_removed_on_the_next_one() {
    let upstream = tempfile::tempdir().unwrap();
    build_repo(upstream.path());
    let cache = tempfile::tempdir().unwrap();
    // What `kill -9` during a clone leaves: a half-fetched bare repository.
    let stale = cache.path().join(".clone-AbC123");
    let fresh = cache.path().join(".clone-XyZ789");
    for dir in [&stale, &fresh] {
        git2::Repository::init_bare(dir).unwrap();
    }
    age_dir(&stale, 3 * 3600);
    let url = format!("file://{}", upstream.path().display());
    EngineRepo::open(&url, &OpenOptions { offline: false, cache_dir: Some(cache.path().to_path_buf()), ..Default::default() }).unwrap();
    assert!(!stale.exists(), "a partial clone hours old is a leftover");
    assert!(fresh.exists(), "a fresh one may be another run's clone in progress");
}

#[test]
fn a_symlink_in_a_git_tree_is_named_in_the_surface_warnings() {
    use engine_audit::extract::{extract_surface, Demand};
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    let mut index = repo.index().unwrap();
    for (path, text, mode) in [
        ("python/sglang/__init__.py", "V = 1\n", 0o100644),
        ("python/sglang/srt/real_environ.py", "X = 1\n", 0o100644),
        // What `ln -s real_environ.py environ.py` commits: the link's target as a blob.
        ("python/sglang/srt/environ.py", "real_environ.py", 0o120000),
    ] {
        let id = repo.blob(text.as_bytes()).unwrap();
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode,
            uid: 0,
            gid: 0,
            file_size: text.len() as u32,
            id,
            flags: path.len() as u16,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::new("t", "t@localhost", &Time::new(1_700_000_000, 0)).unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[]).unwrap();

    let engine = EngineRepo::open(dir.path().to_str().unwrap(), &OpenOptions::default()).unwrap();
    let head = engine_audit::source::ResolvedRef { wanted: "HEAD".into(), matched: "HEAD".into(), commit: engine.resolve_head().unwrap() };
    let tree = engine.tree_at(&head).unwrap();
    assert!(!tree.contains("python/sglang/srt/environ.py"), "a link is never read as a file");
    let surface =
        extract_surface(&tree, &engine_audit::profiles::SGLANG, "python/sglang", "HEAD", &Demand::full(&engine_audit::profiles::SGLANG));
    let named = surface.warnings.iter().find(|w| w.path == "python/sglang/srt/environ.py");
    let named = named.unwrap_or_else(|| panic!("the skipped link is not named: {:?}", surface.warnings));
    assert!(named.message.contains("symbolic link"), "{}", named.message);
}
