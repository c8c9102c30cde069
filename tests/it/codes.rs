//! One case per folder of `tests/codes/<CODE>/<case>/`: recipe files (any
//! layout), an optional `args` file (the `audit` arguments, one per line,
//! `{case}` standing for the folder; default `{case} --to v1.1.0`), and
//! `expected.snap`: the findings of `<CODE>` the audit gives on the demo's
//! mini engines (SGLang v1.0.0 → v1.1.0, vLLM v0.8.0 → v0.9.0, Dynamo 0.1.0
//! and 0.2.0). The engine is the mini SGLang unless the args name one
//! (`--vllm {vllm}`: `{sglang}`, `{vllm}` and `{dynamo}` stand for the demo's
//! repositories). A case where the code must not fire has an empty snapshot.
//!
//! `INSTA_UPDATE=always cargo test --test it codes` writes new snapshots.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/codes");

/// The demo's engines, built once for every case.
fn engines() -> &'static engine_audit::demo::DemoWorkspace {
    static DEMO: OnceLock<(tempfile::TempDir, engine_audit::demo::DemoWorkspace)> = OnceLock::new();
    let (_, ws) = DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let ws = engine_audit::demo::build(dir.path()).unwrap();
        (dir, ws)
    });
    ws
}

fn cases() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for code in std::fs::read_dir(CASES).unwrap().flatten() {
        for case in std::fs::read_dir(code.path()).unwrap().flatten().filter(|c| c.path().is_dir()) {
            out.push((code.file_name().to_string_lossy().into_owned(), case.path()));
        }
    }
    out.sort();
    out
}

/// The findings of `code` in one case, a line (and a fix line) each.
fn run_case(code: &str, case: &Path) -> String {
    let ws = engines();
    let args = std::fs::read_to_string(case.join("args")).unwrap_or_else(|_| "{case}\n--to\nv1.1.0\n".into());
    let case_dir = case.display().to_string();
    let repo = |p: &Path| p.display().to_string();
    let args: Vec<String> = args
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.replace("{case}", &case_dir)
                .replace("{sglang}", &repo(&ws.sglang_repo))
                .replace("{vllm}", &repo(&ws.vllm_repo))
                .replace("{dynamo}", &repo(&ws.dynamo_repo))
        })
        .collect();
    // One server engine per audit (`--to` names its release): the SGLang one
    // unless the case names its own.
    let names_engine = args.iter().any(|a| a == "--sglang" || a == "--vllm");
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .args(&args)
        .args(if names_engine { vec![] } else { vec!["--sglang".to_string(), repo(&ws.sglang_repo)] })
        .arg("--dynamo")
        .arg(&ws.dynamo_repo)
        .args(["--offline", "--no-cache", "--format", "json", "--fail-on", "never"])
        .output()
        .unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{}: {e}\n{}", case.display(), String::from_utf8_lossy(&out.stderr)));
    let demo = ws.sglang_repo.parent().unwrap().display().to_string();
    let relative = |s: &str| s.replace(&format!("{case_dir}/"), "").replace(&case_dir, ".").replace(&demo, "<demo>");
    let mut text = String::new();
    for f in report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == code) {
        let role = f["role"].as_str().map(|r| format!(" [{r}]")).unwrap_or_default();
        text.push_str(&format!(
            "{}:{}:{} {} `{}`{role}: {}\n",
            relative(f["recipe"].as_str().unwrap()),
            f["line"],
            f["column"],
            f["severity"].as_str().unwrap(),
            relative(f["subject"].as_str().unwrap()),
            relative(f["message"].as_str().unwrap())
        ));
        if let Some(fix) = f["fix"].as_object() {
            let edits = fix["edits"].as_array().map_or(0, Vec::len);
            text.push_str(&format!("  fix: {} ({edits} edit(s))\n", fix["description"].as_str().unwrap()));
        }
    }
    text
}

#[test]
fn every_code_has_a_case_where_it_fires() {
    let cases = cases();
    for info in engine_audit::codes::CATALOG {
        let code = info.code.as_str();
        let fired = cases.iter().filter(|(c, _)| c == code).any(|(_, case)| !run_case(code, case).is_empty());
        assert!(fired, "no case under tests/codes/{code} makes {code} fire");
    }
}

#[test]
fn each_case_gives_its_snapshot() {
    for (code, case) in cases() {
        let text = run_case(&code, &case);
        insta::with_settings!({ snapshot_path => case.clone(), prepend_module_to_snapshot => false, omit_expression => true }, {
            insta::assert_snapshot!("expected", text);
        });
    }
}
