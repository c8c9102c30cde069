//! The fact cache and the thread count change nothing in the output: the demo
//! audit is the same cold, warm, without a cache and on one or two threads;
//! two audits sharing one cache folder at once both get it right.

use assert_cmd::Command;
use std::path::Path;

fn bin() -> Command {
    Command::cargo_bin("engine-audit").unwrap()
}

/// The demo workspace: mini SGLang and Dynamo repos and recipes.
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
        .args(["--to", "v1.1.0", "--offline", "--format", "json", "--fail-on", "never"])
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
