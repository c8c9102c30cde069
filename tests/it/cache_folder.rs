//! The fact cache's folder seen from the command line: `cache clear` and an
//! audit touch only what the cache wrote, and say so when they cannot.

use assert_cmd::Command;
use engine_audit::cache::{Deps, FactCache};
use std::path::Path;

fn bin() -> Command {
    Command::cargo_bin("engine-audit").unwrap()
}

fn clear(dir: &Path) -> std::process::Output {
    bin().args(["cache", "clear"]).env("ENGINE_AUDIT_CACHE_DIR", dir).output().unwrap()
}

#[test]
fn cache_clear_refuses_a_folder_of_other_files() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("videos")).unwrap();
    std::fs::write(home.path().join("videos/clip.mp4"), "mine").unwrap();
    std::fs::write(home.path().join("photo.jpg"), "mine").unwrap();
    let out = clear(home.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&home.path().display().to_string()) && stderr.contains("CACHEDIR.TAG"), "{stderr}");
    assert!(home.path().join("videos/clip.mp4").exists() && home.path().join("photo.jpg").exists());
}

/// Makes `dir` refuse removals of what it holds, even to root (an immutable
/// folder); undone on drop. `None` when neither way works here.
struct ReadOnly<'p>(&'p Path, bool);

impl<'p> ReadOnly<'p> {
    fn new(dir: &'p Path) -> Option<ReadOnly<'p>> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = dir.join("probe");
        if std::fs::write(&probe, "").is_err() {
            return Some(ReadOnly(dir, false));
        }
        // Permissions do not bind root: try an immutable folder instead.
        let _ = std::fs::remove_file(&probe);
        let chattr = std::process::Command::new("chattr").arg("+i").arg(dir).output();
        chattr.is_ok_and(|o| o.status.success()).then_some(ReadOnly(dir, true))
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.1 {
            let _ = std::process::Command::new("chattr").arg("-i").arg(self.0).output();
        }
        let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn cache_clear_on_a_read_only_cache_fails_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    cache.put("k", "x", Deps::default(), &1u32);
    let shard = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.path()).find(|p| p.is_dir()).expect("a shard folder");
    let Some(_guard) = ReadOnly::new(&shard) else {
        eprintln!("skipped: no way to make a folder read-only here");
        return;
    };
    let out = clear(dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a clear that removed nothing must not succeed: {stderr}");
    assert!(stderr.contains(&dir.path().display().to_string()), "the folder is named: {stderr}");
    assert!(stderr.contains("could not remove"), "{stderr}");
}

#[test]
fn an_audit_never_deletes_files_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("demo");
    let _ = bin().args(["demo", "--keep"]).arg(&root).env("ENGINE_AUDIT_NO_CACHE", "1").output().unwrap();
    // Someone's files, over the cache's 256 MiB bound (sparse: no disk used).
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("videos")).unwrap();
    std::fs::write(home.join("photo.jpg"), "mine").unwrap();
    std::fs::File::create(home.join("videos/clip.mp4")).unwrap().set_len(300 << 20).unwrap();
    let out = bin()
        .arg("audit")
        .arg(root.join("recipes"))
        .arg("--sglang")
        .arg(root.join("sglang.git"))
        .arg("--dynamo")
        .arg(root.join("dynamo.git"))
        .args(["--to", "v1.1.0", "--offline", "--format", "json", "--fail-on", "never"])
        .env("ENGINE_AUDIT_CACHE_DIR", &home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(home.join("photo.jpg").exists(), "a user's photo was deleted");
    assert!(home.join("videos/clip.mp4").exists(), "a user's video was deleted");
}

#[test]
fn cache_stats_and_clear_cover_the_clone_cache() {
    let up = tempfile::tempdir().unwrap();
    crate::git_repo::build_repo(up.path());
    let url = format!("file://{}", up.path().display());
    let (facts, clones) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let with_dirs = |args: &[&str]| {
        bin().args(args).arg("--cache-dir").arg(clones.path()).env("ENGINE_AUDIT_CACHE_DIR", facts.path()).output().unwrap()
    };
    let out = with_dirs(&["surface", "--sglang", &url, "--at", "v0.2.0", "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::create_dir(clones.path().join("notes")).unwrap();
    std::fs::write(clones.path().join("notes/todo.txt"), "mine").unwrap();

    let out = with_dirs(&["cache", "stats"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(&format!("fact cache: {}", facts.path().display())), "{stdout}");
    assert!(stdout.contains(&format!("clone cache: {}\nclones:      1 (", clones.path().display())), "{stdout}");
    assert!(stdout.contains(&format!("\n  {url}\n")), "the URL on a line of its own: {stdout}");
    assert!(stdout.contains("fetched 20") && stdout.contains(" ago)"), "{stdout}");
    let clone = std::fs::read_dir(clones.path()).unwrap().flatten().map(|e| e.path()).find(|p| !p.ends_with("notes")).unwrap();
    assert!(stdout.contains(&format!("    {}\n", clone.display())), "{stdout}");

    // A plain clear is the facts' only; --clones removes the clone, nothing else.
    assert!(with_dirs(&["cache", "clear"]).status.success());
    assert!(clone.exists());
    let out = with_dirs(&["cache", "clear", "--clones"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.starts_with("removed 1 clones ("), "{stdout}");
    assert!(!clone.exists() && clones.path().join("notes/todo.txt").exists());
    let out = with_dirs(&["cache", "stats"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("clones:      0 (0 B)"));
}
