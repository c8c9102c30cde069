//! `audit --fix`, inline suppression and `.engine-audit.yaml`, end to end on the
//! demo's mini engines (built by the test) and, when ENGINE_AUDIT_CORPUS is set,
//! on a copy of a real recipe against the real SGLang and Dynamo.

use super::real_data::fixable;
use assert_cmd::Command;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/fix");

/// The mini engines and a folder holding copies of the fix fixtures.
struct Workspace {
    _dir: tempfile::TempDir,
    ws: engine_audit::demo::DemoWorkspace,
    recipes: PathBuf,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(dir.path()).unwrap();
    let recipes = dir.path().join("fix");
    std::fs::create_dir(&recipes).unwrap();
    for name in ["dsmini-fix.yaml", "launch.sh"] {
        std::fs::copy(Path::new(FIXTURES).join(name), recipes.join(name)).unwrap();
    }
    set_mode(&recipes.join("launch.sh"), 0o755);
    Workspace { _dir: dir, ws, recipes }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

impl Workspace {
    /// `audit` of the fixture folder across the mini bump, plus `extra` flags.
    fn audit(&self, extra: &[&str]) -> std::process::Output {
        self.audit_paths(std::slice::from_ref(&self.recipes), extra)
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.recipes.join(name)).unwrap()
    }
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join("expected").join(name)).unwrap()
}

fn original(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn dry_run_prints_the_diff_and_changes_nothing() {
    let w = workspace();
    let out = w.audit(&["--fix", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "warnings only: {}", String::from_utf8_lossy(&out.stderr));
    let diff = String::from_utf8(out.stdout).unwrap();
    let yaml = w.recipes.join("dsmini-fix.yaml").display().to_string();
    assert!(diff.starts_with(&format!("--- {yaml}\n+++ {yaml}\n@@ ")), "{diff}");
    for line in [
        "-    SGLANG_DISABLE_MEM_CHECK: \"1\"   # inverted polarity at v1.1.0\n+    SGLANG_ENABLE_MEM_CHECK: \"0\"   # inverted polarity at v1.1.0\n",
        "-    SGLANG_QUEUE_TIMEOUT_MS: '30000'  # milliseconds → seconds\n+    SGLANG_QUEUE_TIMEOUT: '30'  # milliseconds → seconds\n",
        "-      prefill-balance: true  # a no-op since v1.1.0\n-      cuda-graph-max-bs: 64\n+      cuda-graph-max-bs-decode: 64\n",
        "-  --cuda-graph-max-bs 128 \\\n+  --cuda-graph-max-bs-decode 128 \\\n",
    ] {
        assert!(diff.contains(line), "missing\n{line}\nin\n{diff}");
    }
    assert!(!diff.contains("+      cuda-graph-max-bs-decode: 256"), "the suppressed alias is not fixed:\n{diff}");
    assert!(!diff.contains("sglang ?"), "--dry-run prints the diff only:\n{diff}");
    assert_eq!(w.read("dsmini-fix.yaml"), original("dsmini-fix.yaml"));
    assert_eq!(w.read("launch.sh"), original("launch.sh"));
}

#[test]
fn fix_rewrites_the_recipes_and_a_second_audit_finds_nothing_to_fix() {
    let w = workspace();
    let before = json(&w.audit(&["--format", "json"]));
    let codes: Vec<&str> = before["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    for code in ["EA003", "EA004", "EA102"] {
        assert!(codes.contains(&code), "{code} in {codes:?}");
    }
    assert_eq!(fixable(&before).len(), 6, "{:?}", fixable(&before));
    assert_eq!(before["suppressed"], 1, "the inline ignore[EA003]");

    let out = w.audit(&["--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("+      cuda-graph-max-bs-decode: 64"), "the diff comes first:\n{stdout}");
    assert!(stdout.contains("1 suppressed"), "then the report of the fixed recipes:\n{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("applied 6 fix(es) to 2 file(s)"));
    assert_eq!(w.read("dsmini-fix.yaml"), expected("dsmini-fix.yaml"));
    assert_eq!(w.read("launch.sh"), expected("launch.sh"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.recipes.join("launch.sh")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "the script stays executable");
    }
    let names: Vec<String> =
        std::fs::read_dir(&w.recipes).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 2, "no temp files left: {names:?}");

    let after = json(&w.audit(&["--format", "json"]));
    assert_eq!(fixable(&after), Vec::<String>::new());
    assert_eq!(after["suppressed"], 1);
    let again = w.audit(&["--fix", "--dry-run"]);
    assert!(again.stdout.is_empty(), "nothing left to fix: {}", String::from_utf8_lossy(&again.stdout));
}

#[test]
fn the_config_file_sets_sources_severities_ignores_and_the_gate() {
    let w = workspace();
    let config = "# engine settings for the fixture recipes\nsglang: ../sglang.git\ndynamo: ../dynamo.git\nseverity:\n  EA004: error\nignore: [EA007]\nfail_on: warning\n";
    std::fs::write(w.recipes.join(".engine-audit.yaml"), config).unwrap();
    let run = |extra: &[&str]| {
        Command::cargo_bin("engine-audit")
            .unwrap()
            .arg("audit")
            .arg(w.recipes.join("dsmini-fix.yaml"))
            .args(["--to", "v1.1.0", "--offline", "--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let findings = report["findings"].as_array().unwrap();
    let noop = findings.iter().find(|f| f["code"] == "EA004").expect("EA004");
    assert_eq!(noop["severity"], "error", "overridden by the config");
    assert!(findings.iter().all(|f| f["code"] != "EA007"), "ignored by the config");
    assert_eq!(report["suppressed"], 2, "EA007 by the config, EA003 inline");

    // Flags win over the file.
    assert_eq!(run(&["--fail-on", "never"]).status.code(), Some(0));
    let ignored = json(&run(&["--ignore", "EA102"]));
    assert!(
        ignored["findings"].as_array().unwrap().iter().all(|f| f["code"] != "EA102" && f["code"] != "EA007"),
        "--ignore adds to the file's list"
    );

    std::fs::write(w.recipes.join(".engine-audit.yaml"), "sglang: ../sglang.git\nfail-on: warning\n").unwrap();
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".engine-audit.yaml:2:") && stderr.contains("unknown field `fail-on`"), "{stderr}");
}

/// A real recipe (copied at test time) across the real v0.5.12.post1 → v0.5.19 bump.
#[test]
fn fix_on_a_copy_of_a_real_recipe() {
    let Some((corpus, shared)) = corpus_and_shared("the real-recipe --fix test") else { return };
    let real = shared.join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_lowlat_0.yaml");
    let dir = tempfile::tempdir().unwrap();
    let recipe = dir.path().join("8k1k_mtp_lowlat_0.yaml");
    std::fs::copy(&real, &recipe).unwrap_or_else(|e| panic!("{}: {e}", real.display()));
    // The shared data is read-only and `copy` keeps the mode: --fix refuses read-only files.
    let mut perms = std::fs::metadata(&recipe).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&recipe, perms).unwrap();
    let audit = |extra: &[&str]| {
        Command::cargo_bin("engine-audit")
            .unwrap()
            .arg("audit")
            .arg(&recipe)
            .arg("--sglang")
            .arg(corpus.join("sglang.git"))
            .arg("--dynamo")
            .arg(corpus.join("dynamo.git"))
            .args(["--to", "v0.5.19", "--dynamo-from", "v1.3.0.post1", "--offline"])
            .args(extra)
            .output()
            .unwrap()
    };
    let before = json(&audit(&["--format", "json"]));
    let to_fix = fixable(&before);
    assert!(to_fix.iter().any(|f| f.starts_with("\"R001\"")), "{to_fix:?}");
    assert!(to_fix.iter().any(|f| f.starts_with("\"EA003\"")), "{to_fix:?}");
    assert!(to_fix.iter().any(|f| f.starts_with("\"EA102\"")), "{to_fix:?}");

    let out = audit(&["--fix", "--format", "json"]);
    assert!(out.status.code() == Some(0) || out.status.code() == Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let after = json(&out);
    assert_eq!(fixable(&after), Vec::<String>::new(), "the re-audit has nothing left to fix");

    let old = std::fs::read_to_string(&real).unwrap();
    let new = std::fs::read_to_string(&recipe).unwrap();
    assert!(new.contains("fp4-gemm-backend: \"auto\""), "R001's fix keeps the quotes");
    assert!(new.contains("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK: \"0\""), "EA102 inverts the polarity");
    assert!(new.contains("cuda-graph-max-bs-decode: 256") && !new.contains("cuda-graph-max-bs: "));
    let comments = |t: &str| t.lines().filter(|l| l.trim_start().starts_with('#')).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(comments(&old), comments(&new), "comments kept in place");
    let keys = |t: &str| {
        t.lines()
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim().to_string()))
            .filter(|k| !k.contains("SGLANG") && !k.contains("cuda-graph"))
            .collect::<Vec<_>>()
    };
    let removed: Vec<String> = keys(&old).into_iter().filter(|k| !keys(&new).contains(k)).collect();
    assert_eq!(removed, vec!["prefill-round-robin-balance"], "key order kept; only the no-op flag removed");
}

// Issue 22: --fix must not lose data, write outside the tree or through links.

impl Workspace {
    /// The folder holding the fixture folder and the mini engines.
    fn root(&self) -> &Path {
        self.recipes.parent().unwrap()
    }
    /// `audit` of `paths` across the mini bump, plus `extra` flags.
    fn audit_paths(&self, paths: &[PathBuf], extra: &[&str]) -> std::process::Output {
        Command::cargo_bin("engine-audit")
            .unwrap()
            .arg("audit")
            .args(paths)
            .arg("--sglang")
            .arg(&self.ws.sglang_repo)
            .arg("--dynamo")
            .arg(&self.ws.dynamo_repo)
            .args(["--to", "v1.1.0", "--offline"])
            .args(extra)
            .output()
            .unwrap()
    }
    /// A copy of the fixture recipe outside the audited folder.
    fn outside_recipe(&self) -> PathBuf {
        let outside = self.root().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let target = outside.join("target.yaml");
        std::fs::copy(Path::new(FIXTURES).join("dsmini-fix.yaml"), &target).unwrap();
        target
    }
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_tree_is_neither_read_nor_fixed() {
    let w = workspace();
    let target = w.outside_recipe();
    let link = w.recipes.join("linked.yaml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = w.audit(&["--fix"]);
    let err = stderr(&out);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), original("dsmini-fix.yaml"), "the link's target is outside the tree: {err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert!(err.contains("a symlink that resolves to") && err.contains("outside"), "named, not read: {err}");
    assert_eq!(w.read("dsmini-fix.yaml"), expected("dsmini-fix.yaml"), "the real recipes are still fixed");
    assert!(err.contains("applied 6 fix(es) to 2 file(s)"), "{err}");
    assert_eq!(out.status.code(), Some(1), "the unread link is an EA305 error: {err}");
}

#[cfg(unix)]
#[test]
fn symlinks_in_the_tree_are_audited_and_only_their_target_is_fixed() {
    let w = workspace();
    let shared = w.recipes.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::rename(w.recipes.join("dsmini-fix.yaml"), shared.join("dsmini-fix.yaml")).unwrap();
    for name in ["a.yaml", "b.yaml"] {
        std::os::unix::fs::symlink(shared.join("dsmini-fix.yaml"), w.recipes.join(name)).unwrap();
    }
    let out = w.audit(&["--fix"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "warnings only, nothing failed: {err}");
    for name in ["a.yaml", "b.yaml"] {
        assert!(err.contains(&format!("{} is a symlink; not fixed", w.recipes.join(name).display())), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(shared.join("dsmini-fix.yaml")).unwrap(),
        expected("dsmini-fix.yaml"),
        "fixed once, by its own name"
    );
}

#[test]
fn one_recipe_named_twice_is_fixed_once() {
    let w = workspace();
    let again = w.recipes.join("..").join("fix").join("dsmini-fix.yaml");
    let out = w.audit_paths(&[w.recipes.clone(), again], &["--fix"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "no spurious failure: {err}");
    assert_eq!(w.read("dsmini-fix.yaml"), expected("dsmini-fix.yaml"));
    assert!(err.contains("is the same file as"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_hard_linked_recipe_is_not_split() {
    use std::os::unix::fs::MetadataExt;
    let w = workspace();
    let target = w.outside_recipe();
    let link = w.recipes.join("hard.yaml");
    std::fs::hard_link(&target, &link).unwrap();
    let out = w.audit(&["--fix"]);
    let err = stderr(&out);
    assert_eq!(std::fs::metadata(&link).unwrap().ino(), std::fs::metadata(&target).unwrap().ino(), "still one file: {err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), original("dsmini-fix.yaml"), "{err}");
    assert!(err.contains(&format!("{} has 2 hard links", link.display())), "{err}");
}

/// A rule whose fix replaces a value in place (`set_flag`): on a file whose spans
/// are wrong, such an edit lands wherever the span says.
const TP_RULE: &str = r#"id: R900
name: tp-four
title: "tp-size 4 is not wanted here"
severity: warning
engine: sglang
when:
  flag: {name: tp-size, equals: "4"}
evidence:
  - file_exists: {files: [srt/server_args.py]}
message: "{role}: `{flag}: {value}` at {ref}"
fix:
  - set_flag: {name: tp-size, value: "8"}
docs: a test rule
tests:
  invalid:
    - name: tp4
      engines: [{fixture: r001/unconditional}]
      deployment: {model: dsr1, flags: {tp-size: "4"}}
  valid:
    - name: tp8
      engines: [{fixture: r001/unconditional}]
      deployment: {model: dsr1, flags: {tp-size: "8"}}
"#;

#[test]
fn a_cr_only_recipe_is_refused_not_corrupted() {
    let w = workspace();
    let rules = w.root().join("rules");
    std::fs::create_dir(&rules).unwrap();
    std::fs::write(rules.join("R900-tp-four.yaml"), TP_RULE).unwrap();
    std::fs::remove_file(w.recipes.join("launch.sh")).unwrap();
    let cr_only = original("dsmini-fix.yaml").replace('\n', "\r");
    std::fs::write(w.recipes.join("dsmini-fix.yaml"), &cr_only).unwrap();
    let rules_arg = rules.display().to_string();
    let out = w.audit(&["--fix", "--rules", &rules_arg]);
    let err = stderr(&out);
    assert_eq!(w.read("dsmini-fix.yaml"), cr_only, "byte for byte: {err}");
    assert!(err.contains("CR-only line endings") && err.contains("not fixed"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_read_only_recipe_is_not_rewritten_and_the_run_fails() {
    let w = workspace();
    set_mode(&w.recipes.join("launch.sh"), 0o555);
    let out = w.audit(&["--fix"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(w.read("launch.sh"), original("launch.sh"), "{err}");
    assert_eq!(w.read("dsmini-fix.yaml"), expected("dsmini-fix.yaml"), "the writable one is fixed");
    assert!(err.contains("launch.sh") && err.contains("read-only"), "{err}");
    assert!(err.contains("applied 4 fix(es) to 1 file(s); 1 file(s) not written"), "only what was written counts: {err}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(w.recipes.join("launch.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o555);
}

#[cfg(unix)]
#[test]
fn a_fixed_recipe_keeps_its_owner_and_group() {
    use std::os::unix::fs::MetadataExt;
    let w = workspace();
    let script = w.recipes.join("launch.sh");
    // Only root can give a file away; elsewhere there is no other owner to keep.
    if std::os::unix::fs::chown(&script, Some(4321), Some(4322)).is_err() {
        eprintln!("not root: the ownership test is skipped");
        return;
    }
    let out = w.audit(&["--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(w.read("launch.sh"), expected("launch.sh"));
    let meta = std::fs::metadata(&script).unwrap();
    assert_eq!((meta.uid(), meta.gid(), meta.mode() & 0o777), (4321, 4322, 0o755));
}

#[cfg(unix)]
#[test]
fn stale_fix_temp_files_are_cleaned_and_others_kept() {
    let w = workspace();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let put = |name: &str, old: bool| {
        let path = w.recipes.join(name);
        std::fs::write(&path, "partial").unwrap();
        if old {
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(hour_ago).unwrap();
        }
    };
    put(".engine-audit-fix-AbC123", true); // left by a killed run
    put(".engine-audit-fix-XyZ789", false); // a concurrent run's, being written
    put(".engine-audit-fix-notes.txt", true); // not a name the tool makes
    put("engine-audit-fix-Old123", true);
    let out = w.audit(&["--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut names: Vec<String> =
        std::fs::read_dir(&w.recipes).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        [".engine-audit-fix-XyZ789", ".engine-audit-fix-notes.txt", "dsmini-fix.yaml", "engine-audit-fix-Old123", "launch.sh"]
    );
}

#[cfg(unix)]
#[test]
fn a_recipe_with_a_non_utf8_name_is_fixed() {
    use std::os::unix::ffi::OsStrExt;
    let w = workspace();
    let name = std::ffi::OsStr::from_bytes(b"dsmini-\xff.yaml");
    std::fs::rename(w.recipes.join("dsmini-fix.yaml"), w.recipes.join(name)).unwrap();
    let out = w.audit(&["--fix"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read_to_string(w.recipes.join(name)).unwrap(), expected("dsmini-fix.yaml"), "{err}");
    assert_eq!(std::fs::read_dir(&w.recipes).unwrap().count(), 2, "no lossy-named file beside it");
}

#[cfg(unix)]
#[test]
fn two_names_that_show_alike_are_not_fixed() {
    use std::os::unix::ffi::OsStrExt;
    let w = workspace();
    // Both names show as `dsmini-\u{fffd}.yaml`; the second file's text is shifted
    // by a line, so one's edits would corrupt the other.
    let (a, b) = (std::ffi::OsStr::from_bytes(b"dsmini-\xfe.yaml"), std::ffi::OsStr::from_bytes(b"dsmini-\xff.yaml"));
    std::fs::rename(w.recipes.join("dsmini-fix.yaml"), w.recipes.join(a)).unwrap();
    let shifted = format!("# one more line\n{}", original("dsmini-fix.yaml"));
    std::fs::write(w.recipes.join(b), &shifted).unwrap();
    let out = w.audit(&["--fix"]);
    let err = stderr(&out);
    assert_eq!(std::fs::read_to_string(w.recipes.join(a)).unwrap(), original("dsmini-fix.yaml"), "{err}");
    assert_eq!(std::fs::read_to_string(w.recipes.join(b)).unwrap(), shifted, "{err}");
    assert!(err.contains("several files show as this name"), "{err}");
}

/// Another writer's edit that lands while `--fix` writes its temp file (after the
/// first look at the original) must survive: the last look before the rename sees it.
#[test]
fn an_edit_made_while_the_fix_is_written_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dsmini-fix.yaml");
    std::fs::copy(Path::new(FIXTURES).join("dsmini-fix.yaml"), &path).unwrap();
    let patch = engine_audit::fix::FilePatch {
        path: path.display().to_string(),
        disk_path: path.clone(),
        before: original("dsmini-fix.yaml"),
        after: expected("dsmini-fix.yaml"),
        fixes: 4,
    };
    let edited = format!("{}      mem-fraction-static: 0.8\n", original("dsmini-fix.yaml"));
    let result = patch.write_observed(|| std::fs::write(&path, &edited).unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited, "the other writer's edit is kept");
    assert!(result.is_err_and(|e| e.to_string().contains("changed on disk")));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left behind");
}

#[test]
fn a_master_config_link_out_of_the_tree_is_not_written() {
    let w = workspace();
    let target = w.outside_recipe();
    let repo = w.root().join("repo");
    std::fs::create_dir_all(repo.join("benchmarks/multi_node/srt-slurm-recipes")).unwrap();
    std::fs::create_dir_all(repo.join("configs")).unwrap();
    let master = repo.join("configs/master.yaml");
    let config = "dsmini-fp4-b200-dynamo-sglang:\n  image: example/sglang:v1.0.0-cu129\n  model: deepseek-mini\n  framework: dynamo-sglang\n  precision: fp4\n  runner: b200\n  scenarios:\n    - name: disagg\n      env:\n        - CONFIG_FILE=recipes/../../../../outside/target.yaml\n";
    std::fs::write(&master, config).unwrap();
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg("--master")
        .arg(&master)
        .args(["--key", "dsmini-fp4-b200-dynamo-sglang"])
        .arg("--sglang")
        .arg(&w.ws.sglang_repo)
        .arg("--dynamo")
        .arg(&w.ws.dynamo_repo)
        .args(["--to", "v1.1.0", "--offline", "--fix"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), original("dsmini-fix.yaml"), "{err}");
    assert!(!err.contains("applied 4 fix(es) to 1 file(s)"), "{err}");
}

/// Every SGLang recipe of the shared tree (copied) to v0.5.23: what the target
/// no longer knows is fixed as its history says (issue 25), and a re-audit
/// leaves nothing with an edit.
#[test]
fn fix_every_sglang_recipe_to_v0_5_23_by_its_history() {
    let Some((corpus, shared)) = corpus_and_shared("the whole-tree --fix test") else { return };
    let real = shared.join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("sglang");
    copy_writable(&real, &copy);
    let audit = |extra: &[&str]| {
        Command::cargo_bin("engine-audit")
            .unwrap()
            .arg("audit")
            .arg(&copy)
            .arg("--sglang")
            .arg(corpus.join("sglang.git"))
            .args(["--to", "v0.5.23", "--offline", "--fail-on", "never"])
            .args(extra)
            .output()
            .unwrap()
    };
    let before = json(&audit(&["--format", "json"]));
    let findings = before["findings"].as_array().unwrap();
    let with_history = |code: &str, subject: &str| {
        findings
            .iter()
            .filter(|f| f["code"] == code && f["subject"] == subject)
            .all(|f| f["message"].as_str().unwrap().contains(" no longer has it") && !f["fix"]["edits"].as_array().unwrap().is_empty())
    };
    for (code, subject) in [
        ("EA001", "cuda-graph-max-bs"),
        ("EA001", "nsa-decode-backend"),
        ("EA001", "mamba-scheduler-strategy"),
        ("EA001", "prefill-round-robin-balance"),
        ("EA101", "SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK"),
        ("EA101", "SGLANG_ENABLE_THINKING"),
    ] {
        assert!(findings.iter().any(|f| f["code"] == code && f["subject"] == subject), "{code} {subject} fires");
        assert!(with_history(code, subject), "{code} {subject}: history and an edit");
    }
    assert!(!fixable(&before).is_empty());
    let out = audit(&["--fix", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = json(&out);
    assert_eq!(fixable(&after), Vec::<String>::new(), "the re-audit has nothing left to fix");
    let fixed = std::fs::read_to_string(copy.join("deepseek-v4/8k1k/disagg-b300-1p1d-tp4-tp4-mtp.yaml")).unwrap();
    assert!(fixed.contains("cuda-graph-max-bs-decode: 8") && fixed.contains("speculative-algorithm: \"EAGLE\""), "{fixed}");
}

/// The corpus and the shared data, when `ENGINE_AUDIT_CORPUS` is set (`.ci/run` sets it).
fn corpus_and_shared(test: &str) -> Option<(PathBuf, PathBuf)> {
    Some((super::real_data::corpus(test)?, super::real_data::shared()))
}

/// Copy a tree, every file writable (the shared data is read-only).
fn copy_writable(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_writable(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}
