//! `audit --fix`, inline suppression and `.engine-audit.yaml`, end to end on the
//! demo's mini engines (built by the test) and, when ENGINE_AUDIT_CORPUS is set,
//! on a copy of a real recipe against the real SGLang and Dynamo.

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
        Command::cargo_bin("engine-audit")
            .unwrap()
            .arg("audit")
            .arg(&self.recipes)
            .arg("--sglang")
            .arg(&self.ws.sglang_repo)
            .arg("--dynamo")
            .arg(&self.ws.dynamo_repo)
            .args(["--to", "v1.1.0", "--offline"])
            .args(extra)
            .output()
            .unwrap()
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
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Findings that still carry an edit `--fix` could apply.
fn fixable(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["fix"]["edits"].as_array().is_some_and(|e| !e.is_empty()))
        .map(|f| format!("{} {}:{} {}", f["code"], f["recipe"], f["line"], f["subject"]))
        .collect()
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
    let names: Vec<String> = std::fs::read_dir(&w.recipes).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
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
    assert!(ignored["findings"].as_array().unwrap().iter().all(|f| f["code"] != "EA102" && f["code"] != "EA007"), "--ignore adds to the file's list");

    std::fs::write(w.recipes.join(".engine-audit.yaml"), "sglang: ../sglang.git\nfail-on: warning\n").unwrap();
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".engine-audit.yaml:2:") && stderr.contains("unknown field `fail-on`"), "{stderr}");
}

/// A real recipe (copied at test time) across the real v0.5.12.post1 → v0.5.19 bump.
#[test]
fn fix_on_a_copy_of_a_real_recipe() {
    let Some(corpus) = std::env::var_os("ENGINE_AUDIT_CORPUS").map(PathBuf::from) else {
        eprintln!("ENGINE_AUDIT_CORPUS is not set: the real-recipe --fix test is skipped (.ci/run sets it)");
        return;
    };
    let shared = std::env::var_os("ENGINE_AUDIT_SHARED").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let real = shared
        .join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_lowlat_0.yaml");
    let dir = tempfile::tempdir().unwrap();
    let recipe = dir.path().join("8k1k_mtp_lowlat_0.yaml");
    std::fs::copy(&real, &recipe).unwrap_or_else(|e| panic!("{}: {e}", real.display()));
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
    let keys = |t: &str| t.lines().filter_map(|l| l.split_once(':').map(|(k, _)| k.trim().to_string())).filter(|k| !k.contains("SGLANG") && !k.contains("cuda-graph")).collect::<Vec<_>>();
    let removed: Vec<String> = keys(&old).into_iter().filter(|k| !keys(&new).contains(k)).collect();
    assert_eq!(removed, vec!["prefill-round-robin-balance"], "key order kept; only the no-op flag removed");
}
