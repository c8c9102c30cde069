//! The fact cache and the thread count change nothing in the output: the demo
//! audit (SGLang and vLLM) is the same cold, warm, without a cache and on one or two threads;
//! two audits sharing one cache folder at once both get it right.

use assert_cmd::Command;
use std::path::Path;

fn bin() -> Command {
    Command::cargo_bin("engine-audit").unwrap()
}

/// The demo workspace: mini SGLang, vLLM and Dynamo repos and recipes.
fn demo(root: &Path) {
    // The demo exits 1 (its recipes have findings); only the workspace matters here.
    let _ = bin().args(["demo", "--keep"]).arg(root).env("ENGINE_AUDIT_NO_CACHE", "1").output().unwrap();
}

fn audit(root: &Path, cache: &Path, threads: &str, extra: &[&str]) -> String {
    let out = bin()
        .arg("audit")
        .arg(root.join("recipes"))
        .arg("--sglang")
        .arg(root.join("sglang.git"))
        .arg("--dynamo")
        .arg(root.join("dynamo.git"))
        .arg("--vllm")
        .arg(root.join("vllm.git"))
        .args(["--to", "v1.1.0", "--vllm-to", "v0.9.0", "--offline", "--format", "json", "--fail-on", "never"])
        .args(extra)
        .env("ENGINE_AUDIT_CACHE_DIR", cache)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cache_and_thread_count_do_not_change_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    demo(&root);
    assert!(root.join("sglang.git").exists(), "demo layout changed: {:?}", std::fs::read_dir(&root).unwrap().collect::<Vec<_>>());
    let cache = tmp.path().join("facts");

    let uncached = audit(&root, &cache, "2", &["--no-cache"]);
    assert!(!cache.exists(), "--no-cache writes nothing");
    assert!(uncached.contains("\"findings\""));
    assert!(uncached.contains("\"path\": \"vllm/engine/arg_utils.py\""), "the vLLM side is audited too");
    let cold = audit(&root, &cache, "2", &[]);
    assert!(cache.exists());
    let warm = audit(&root, &cache, "2", &[]);
    let one_thread = audit(&root, &tmp.path().join("facts-1"), "1", &[]);
    assert_eq!(cold, uncached);
    assert_eq!(warm, uncached);
    assert_eq!(one_thread, uncached);

    // Two audits at once on a fresh shared folder.
    let shared = tmp.path().join("facts-shared");
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| audit(&root, &shared, "2", &[]));
        let b = s.spawn(|| audit(&root, &shared, "1", &[]));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(a, uncached);
    assert_eq!(b, uncached);
    assert_eq!(audit(&root, &shared, "2", &[]), uncached);

    let stats = bin().args(["cache", "stats"]).env("ENGINE_AUDIT_CACHE_DIR", &cache).output().unwrap();
    let stats = String::from_utf8(stats.stdout).unwrap();
    assert!(stats.contains("entries:") && !stats.contains("entries:    0"), "{stats}");
    bin().args(["cache", "clear"]).env("ENGINE_AUDIT_CACHE_DIR", &cache).assert().success();
    let stats = bin().args(["cache", "stats"]).env("ENGINE_AUDIT_CACHE_DIR", &cache).output().unwrap();
    assert!(String::from_utf8(stats.stdout).unwrap().contains("entries:    0"));
}

/// The loose object of `path` at `tag` in a demo repository.
fn loose_blob(git_dir: &Path, tag: &str, path: &str) -> std::path::PathBuf {
    let repo = git2::Repository::open_bare(git_dir).unwrap();
    let tree = repo.find_reference(&format!("refs/tags/{tag}")).unwrap().peel_to_tree().unwrap();
    let hex = tree.get_path(Path::new(path)).unwrap().id().to_string();
    git_dir.join("objects").join(&hex[..2]).join(&hex[2..])
}

#[test]
fn facts_computed_while_an_object_read_failed_are_not_kept() {
    // A damaged object store gives facts without the damaged file (and a
    // problem naming it). Kept by blob id, they would still be the answer
    // after the repository is repaired: the repaired audit must be the clean one.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    demo(&root);
    let cache = tmp.path().join("facts");
    let clean = audit(&root, &cache, "2", &["--no-cache"]);
    let object = loose_blob(&root.join("sglang.git"), "v1.1.0", "python/sglang/srt/server_args.py");
    let good = std::fs::read(&object).unwrap();
    let mut perms = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&object, perms).unwrap();
    std::fs::write(&object, b"this is not a zlib stream").unwrap();
    let damaged = audit(&root, &cache, "2", &[]);
    assert_ne!(damaged, clean, "the damage was not noticed: the test no longer covers it");
    std::fs::write(&object, &good).unwrap();
    let repaired = audit(&root, &cache, "2", &[]);
    let problems = |report: &str| serde_json::from_str::<serde_json::Value>(report).unwrap()["problems"].to_string();
    assert!(repaired == clean, "facts from the damaged run were reused; problems: {}", problems(&repaired));
}

/// In process, the mechanism behind the test above: a unit computed while a
/// read of its tree failed is not kept; one computed from a sound tree is.
/// Scoped to the computation, not the process: other tests here run audits
/// in the same binary.
#[test]
fn a_unit_computed_while_a_read_failed_is_not_kept() {
    use engine_audit::cache::{FactCache, RecordingTree};
    use engine_audit::extract::units::Units;
    use engine_audit::source::{EngineRepo, OpenOptions, SourceError, Tree};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    demo(&root);
    let git_dir = root.join("sglang.git");
    let repo = EngineRepo::open(git_dir.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() }).unwrap();
    let tree = repo.tree_at(&repo.resolve("v1.1.0").unwrap()).unwrap();
    let cache = FactCache::at(tmp.path().join("facts"));
    let units = Units { engine: "sglang", tree: &tree, root: "python/sglang", cache: &cache };
    let read =
        |path: &'static str| move |pkg: &engine_audit::extract::Package| (pkg.tree.read(path).map(|b| b.len()).unwrap_or(0), Vec::new());

    assert!(matches!(tree.read("no/such/file.py"), Err(SourceError::MissingFile { .. })));
    assert_eq!(tree.failed_reads(), 0, "a file not in the tree is an answer, not a failure");
    let sound = units.unit("probe", "sound", None, read("python/sglang/__init__.py"));
    assert_eq!(units.unit("probe", "sound", None, |_| (999, Vec::new())), sound, "a sound unit is kept and reused");

    let object = loose_blob(&git_dir, "v1.1.0", "python/sglang/srt/server_args.py");
    let mut perms = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&object, perms).unwrap();
    std::fs::write(&object, b"this is not a zlib stream").unwrap();
    let recording = RecordingTree::new(&tree);
    assert!(recording.read("python/sglang/srt/server_args.py").is_err());
    assert!(recording.saw_failed_read());
    assert_eq!(tree.failed_reads(), 1);

    let damaged = units.unit("probe", "damaged", None, read("python/sglang/srt/server_args.py"));
    assert_eq!(damaged.0, 0);
    assert_eq!(units.unit("probe", "damaged", None, |_| (7, Vec::new())).0, 7, "nothing computed while a read failed is kept");
}

/// A copy of the demo's `git_dir` whose objects are all in one pack (`git
/// repack`), then with its `.idx` mapping `victim`'s id to the offset of
/// `donor` (both blob paths at `tag`, `donor` at `donor_tag`): a damaged
/// index, as a bad disk or a half-done copy leaves it. The pack is sound.
fn damaged_copy(git_dir: &Path, into: &Path, tag: &str, victim: &str, donor_tag: &str) {
    let status = std::process::Command::new("git").args(["clone", "-q", "--bare", "--no-local"]).arg(git_dir).arg(into).status();
    assert!(status.unwrap().success(), "these tests need git on PATH");
    let status = std::process::Command::new("git").args(["-C"]).arg(into).args(["repack", "-q", "-a", "-d"]).status().unwrap();
    assert!(status.success());
    let repo = git2::Repository::open_bare(into).unwrap();
    let id =
        |t: &str| repo.find_reference(&format!("refs/tags/{t}")).unwrap().peel_to_tree().unwrap().get_path(Path::new(victim)).unwrap().id();
    let (victim_id, donor_id) = (id(tag), id(donor_tag));
    assert_ne!(victim_id, donor_id);
    let pack = into.join("objects/pack");
    let idx = std::fs::read_dir(&pack).unwrap().flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "idx")).unwrap();
    let mut bytes = std::fs::read(&idx).unwrap();
    assert_eq!(&bytes[..8], b"\xfftOc\0\0\0\x02", "pack index version 2");
    let count = u32::from_be_bytes(bytes[8 + 255 * 4..8 + 256 * 4].try_into().unwrap()) as usize;
    let names = 8 + 1024;
    let position = |oid: git2::Oid| (0..count).find(|i| &bytes[names + 20 * i..names + 20 * (i + 1)] == oid.as_bytes()).unwrap();
    let offsets = names + 24 * count;
    let (v, d) = (offsets + 4 * position(victim_id), offsets + 4 * position(donor_id));
    let donor_offset: [u8; 4] = bytes[d..d + 4].try_into().unwrap();
    bytes[v..v + 4].copy_from_slice(&donor_offset);
    let mut perms = std::fs::metadata(&idx).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&idx, perms).unwrap();
    std::fs::write(&idx, bytes).unwrap();
}

fn surface(git_dir: &Path, cache: &Path) -> (String, String) {
    let out = bin()
        .args(["surface", "--at", "v1.1.0", "--format", "json", "--offline", "--sglang"])
        .arg(git_dir)
        .env("ENGINE_AUDIT_CACHE_DIR", cache)
        .output()
        .unwrap();
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_damaged_pack_index_is_named_and_does_not_poison_a_shared_cache() {
    // The damaged copy's index hands v1.0.0's server_args.py for v1.1.0's.
    // Its facts were cached under v1.1.0's blob ids and commit, where the
    // healthy clone of the same commit then found them.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    demo(&root);
    let healthy = root.join("sglang.git");
    let damaged = tmp.path().join("damaged.git");
    damaged_copy(&healthy, &damaged, "v1.1.0", "python/sglang/srt/server_args.py", "v1.0.0");
    let (alone, _) = surface(&healthy, &tmp.path().join("facts-alone"));
    let shared = tmp.path().join("facts-shared");
    let (from_damaged, _) = surface(&damaged, &shared);
    assert_ne!(from_damaged, alone, "the damage was not noticed: the test no longer covers it");
    let object =
        git2::Repository::open_bare(&healthy).unwrap().revparse_single("v1.1.0:python/sglang/srt/server_args.py").unwrap().id().to_string();
    assert!(
        from_damaged.contains(&format!("python/sglang/srt/server_args.py: object {object} is damaged")),
        "the damaged object is named: {from_damaged}"
    );
    let (after, _) = surface(&healthy, &shared);
    assert!(after == alone, "the healthy clone's surface changed after the damaged one shared its cache");
}

/// `show` of `script` with the cache in `cache`: its JSON, and whether the
/// script was evaluated (the trace names each evaluation) or read from the cache.
fn show_script(dir: &Path, script: &str, cache: &Path) -> (String, bool) {
    let out = bin()
        .args(["show", "--format", "json", script])
        .current_dir(dir)
        .env("ENGINE_AUDIT_CACHE_DIR", cache)
        .env("ENGINE_AUDIT_TRACE", "2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let evaluated = String::from_utf8_lossy(&out.stderr).contains("evaluate bench/run.sh");
    (String::from_utf8(out.stdout).unwrap(), evaluated)
}

/// A launch script's reading (with the files it sources) is kept in the cache:
/// a second run reads it back unchanged, without evaluating; a change in a
/// sourced file, or a file appearing where `source` looked, is a miss.
#[test]
fn a_script_reading_is_reused_until_a_file_it_read_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("bench")).unwrap();
    std::fs::write(repo.join("bench/lib.sh"), "COMMON=\"--tp-size 8\"\n").unwrap();
    std::fs::write(
        repo.join("bench/run.sh"),
        "#!/bin/bash\nsource \"$(dirname \"$0\")/lib.sh\"\nsource \"$(dirname \"$0\")/extra.sh\"\npython3 -m sglang.launch_server $COMMON $EXTRA --port 30000\n",
    )
    .unwrap();
    let cache = tmp.path().join("facts");

    let (cold, evaluated) = show_script(&repo, "bench/run.sh", &cache);
    assert!(evaluated, "the first run evaluates the script");
    assert!(cold.contains("\"tp-size\""), "{cold}");
    let (warm, evaluated) = show_script(&repo, "bench/run.sh", &cache);
    assert!(!evaluated, "the second run reads the cached reading");
    assert_eq!(warm, cold);

    // The sourced file changed: evaluated again, with its new text.
    std::fs::write(repo.join("bench/lib.sh"), "COMMON=\"--tp-size 4 --dp-size 2\"\n").unwrap();
    let (changed, evaluated) = show_script(&repo, "bench/run.sh", &cache);
    assert!(evaluated && changed.contains("\"dp-size\""), "{changed}");
    assert!(!show_script(&repo, "bench/run.sh", &cache).1);

    // A file now exists where `source` looked and found nothing.
    std::fs::write(repo.join("bench/extra.sh"), "EXTRA=\"--ep-size 2\"\n").unwrap();
    let (appeared, evaluated) = show_script(&repo, "bench/run.sh", &cache);
    assert!(evaluated && appeared.contains("\"ep-size\""), "{appeared}");
}
