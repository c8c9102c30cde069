//! Fail closed: every deployment ends audited, not audited (named, failing the
//! run unless its engine is acknowledged) or unreadable (EA305). A schema-2
//! recipe srtctl would reject, or one of an engine the tool has no profile
//! for, never passes as clean.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

fn demo() -> &'static engine_audit::demo::DemoWorkspace {
    static DEMO: OnceLock<(tempfile::TempDir, engine_audit::demo::DemoWorkspace)> = OnceLock::new();
    let (_, ws) = DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let ws = engine_audit::demo::build(dir.path()).unwrap();
        (dir, ws)
    });
    ws
}

/// `audit <recipe> --sglang <mini SGLang> --to v1.1.0 --format json` plus `extra`, on a recipe written here.
fn audit(recipe: &str, extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipe.yaml");
    std::fs::write(&path, recipe).unwrap();
    audit_path(&path, extra)
}

fn audit_path(path: &Path, extra: &[&str]) -> (i32, Value, String) {
    let ws = demo();
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg(path)
        .arg("--sglang")
        .arg(&ws.sglang_repo)
        .args(["--to", "v1.1.0", "--offline", "--no-cache", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    (out.status.code().unwrap(), json, stderr)
}

fn ea305(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA305")
        .map(|f| format!("{}:{} {}", f["line"], f["column"], f["message"].as_str().unwrap()))
        .collect()
}

const AUDITED_ROLE: &str = "  agg:\n    args:\n      tensor-parallel-size: 2\n";

#[test]
fn a_layout_key_srtctl_rejects_is_an_error_on_its_line() {
    let recipe = format!("schema: 2\nname: typo\nmodel: {{path: m, container: \"example/sglang:v1.0.0\", precision: fp8}}\nengine: sglang\nroles:\n{AUDITED_ROLE}    envs:\n      SGLANG_X: \"1\"\nrolez: {{}}\n");
    let (code, report, _) = audit(&recipe, &[]);
    assert_eq!(code, 1);
    let errors = ea305(&report);
    assert!(errors.iter().any(|e| e.starts_with("11:1 ") && e.contains("`rolez`")), "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("9:5 ") && e.contains("`roles.agg.envs`")), "{errors:?}");
    assert_eq!(report["coverage"]["unreadable"], 2);
    assert_eq!(report["coverage"]["audited"], 1, "the rest of the recipe is still audited");
}

#[test]
fn an_unknown_schema_value_is_unreadable_not_empty() {
    let recipe = format!("schema: 3\nname: future\nmodel: {{path: m, container: \"example/sglang:v1.0.0\", precision: fp8}}\nengine: sglang\nroles:\n{AUDITED_ROLE}");
    let (code, report, stderr) = audit(&recipe, &[]);
    // Nothing was audited and nothing else could have been: bad input.
    assert_eq!(code, 2, "{stderr}");
    let errors = ea305(&report);
    assert!(errors.iter().any(|e| e.starts_with("1:9 ") && e.contains("schema: 2")), "{errors:?}");
}

#[test]
fn an_engine_srtctl_does_not_know_is_an_error() {
    let recipe = format!(
        "schema: 2\nname: e\nmodel: {{path: m, container: \"example/sglang:v1.0.0\", precision: fp8}}\nengine: sglang\nroles:\n{AUDITED_ROLE}  decode:\n    engine: sglangx\n    args: {{}}\n"
    );
    let (code, report, _) = audit(&recipe, &[]);
    assert_eq!(code, 1);
    let errors = ea305(&report);
    assert!(errors.iter().any(|e| e.contains("`roles.decode.engine: sglangx` names no engine srt-slurm knows")), "{errors:?}");
}

const TILERT: &str = "schema: 2\nname: tilert-decode\nmodel: {path: m, container: \"example/sglang:v1.0.0\", precision: fp8}\nroles:\n  prefill:\n    engine: sglang\n    args:\n      tensor-parallel-size: 2\n  decode:\n    engine: {type: tilert, served_model_name: m}\n    args:\n      decode-batch: 8\n";

#[test]
fn an_engine_with_no_profile_is_not_audited_and_fails_until_acknowledged() {
    let (code, report, stderr) = audit(TILERT, &[]);
    assert_eq!(code, 1, "{stderr}");
    let coverage = &report["coverage"];
    assert_eq!((coverage["deployments"].as_u64(), coverage["audited"].as_u64()), (Some(2), Some(1)));
    let [tilert] = coverage["not_audited"].as_array().unwrap().as_slice() else { panic!("{coverage}") };
    assert_eq!((tilert["engine"].as_str(), tilert["reason"].as_str()), (Some("tilert"), Some("no profile yet")));
    assert_eq!(tilert["roles"], serde_json::json!(["decode"]));
    assert_eq!(tilert["acknowledged"], false);
    assert!(stderr.contains("not audited") && stderr.contains("--allow-unaudited tilert"), "{stderr}");

    let (code, report, _) = audit(TILERT, &["--allow-unaudited", "tilert"]);
    assert_eq!(code, 0, "acknowledged: the rest is clean");
    assert_eq!(report["coverage"]["not_audited"][0]["acknowledged"], true, "still listed");

    // The text summary carries the coverage line.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.yaml");
    std::fs::write(&path, TILERT).unwrap();
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["audit".as_ref(), path.as_os_str(), "--sglang".as_ref(), demo().sglang_repo.as_os_str()])
        .args(["--to", "v1.1.0", "--offline", "--no-cache", "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("audited 1 of 2 deployments; 1 not audited (TileRT: no profile yet)"), "{text}");
    assert!(text.contains("not audited:\n") && text.contains("tilert-decode (decode): TileRT, no profile yet"), "{text}");
}

#[test]
fn a_config_acknowledges_an_engine_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".engine-audit.yaml"), "allow_unaudited: [tilert]\n").unwrap();
    let path = dir.path().join("recipe.yaml");
    std::fs::write(&path, TILERT).unwrap();
    let (code, report, _) = audit_path(&path, &["--config", dir.path().join(".engine-audit.yaml").to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(report["coverage"]["not_audited"][0]["acknowledged"], true);
}
