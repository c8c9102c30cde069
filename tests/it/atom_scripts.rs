//! `python3 -m atom.entrypoints.openai_server` scripts audited end to end
//! against ATOM's real releases, read from the ATOM git dir `ENGINE_AUDIT_ATOM`
//! (skipped, saying so, without it). The script is one written here in the
//! single-node scripts' shape; each finding is checked against the ATOM source
//! itself (`git show REF:path`).

use super::atom_cli::audit_json;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCRIPT: &str = r#"#!/usr/bin/env bash
BLOCK_SIZE=${BLOCK_SIZE:-16}
python3 -m atom.entrypoints.openai_server \
    --model "$MODEL" \
    --server-port "$PORT" \
    -tp 8 \
    --kv-cache-dtype fp8 \
    --method mtp \
    --block-size $BLOCK_SIZE \
    --hf-overrides '{"a": 1}' > server.log 2>&1 &
"#;

fn atom() -> Option<PathBuf> {
    let repo = std::env::var_os("ENGINE_AUDIT_ATOM").map(PathBuf::from);
    if repo.is_none() {
        eprintln!("ENGINE_AUDIT_ATOM is not set: {} is skipped (docs/atom.md)", module_path!());
    }
    repo
}

fn audit(atom: &Path, scripts: &Path, from: &str, to: &str) -> (i32, Value) {
    audit_json(atom, scripts, &["--from", from, "--to", to], 1)
}

fn source(repo: &Path, r: &str, path: &str) -> String {
    let out = Command::new("git").arg("--git-dir").arg(repo).args(["show", &format!("{r}:{path}")]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (code, subject) of every finding, sorted.
fn found(report: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

fn pair(code: &str, subject: &str) -> (String, String) {
    (code.to_string(), subject.to_string())
}

#[test]
fn an_atom_script_across_releases() {
    let Some(atom) = atom() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("serve_atom.sh"), SCRIPT).unwrap();
    let arg_utils = "atom/model_engine/arg_utils.py";

    // v0.1.2 → v0.1.3: the snake_case spelling is the only one; `--hf-overrides`
    // is not there yet; prefix caching went from off (store_true) to on.
    let (code, report) = audit(&atom, dir.path(), "v0.1.2", "v0.1.3");
    assert_eq!((code, report["deployments_audited"].as_u64()), (1, Some(1)));
    let f = found(&report);
    for want in [
        pair("EA001", "kv-cache-dtype"),
        pair("EA001", "hf-overrides"),
        pair("EA007", "enable_prefix_caching"),
        pair("EA007", "cudagraph-capture-sizes"),
    ] {
        assert!(f.contains(&want), "{want:?} in {f:?}");
    }
    assert_eq!(f.len(), 4, "{f:?}");
    let v013 = source(&atom, "v0.1.3", arg_utils);
    assert!(v013.contains("\"--kv_cache_dtype\"") && !v013.contains("\"--kv-cache-dtype\""));
    assert!(!v013.contains("--hf-overrides"));
    assert!(source(&atom, "v0.1.2", arg_utils).contains("enable_prefix_caching: bool = False"));
    assert!(v013.contains("argparse.BooleanOptionalAction"));
    let message = report["findings"].as_array().unwrap().iter().find(|f| f["subject"] == "kv-cache-dtype").unwrap()["message"].clone();
    assert!(message.as_str().unwrap().contains("`--kv_cache_dtype`"), "the accepted spelling is named: {message}");

    // v0.1.5: `--hf-overrides` exists; the kebab spelling is still refused.
    let (_, report) = audit(&atom, dir.path(), "v0.1.3", "v0.1.5");
    assert_eq!(found(&report), [pair("EA001", "kv-cache-dtype")]);
    assert!(source(&atom, "v0.1.5", arg_utils).contains("\"--hf-overrides\""));

    // `--fix` writes the spelling the target registers.
    let fixed = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg(dir.path())
        .arg("--atom")
        .arg(&atom)
        .args(["--from", "v0.1.3", "--to", "v0.1.5", "--offline", "--no-cache", "--fix"])
        .output()
        .unwrap();
    assert!(fixed.status.code().is_some(), "{}", String::from_utf8_lossy(&fixed.stderr));
    let script = std::fs::read_to_string(dir.path().join("serve_atom.sh")).unwrap();
    assert!(script.contains("    --kv_cache_dtype fp8 \\\n") && !script.contains("--kv-cache-dtype"), "{script}");
    assert_eq!(audit(&atom, dir.path(), "v0.1.3", "v0.1.5").1["findings"].as_array().map(Vec::len), Some(0));
    std::fs::write(dir.path().join("serve_atom.sh"), SCRIPT).unwrap();

    // main: the parser class registers both spellings, so nothing is refused.
    let (_, report) = audit(&atom, dir.path(), "v0.1.5", "main");
    assert!(found(&report).iter().all(|(code, _)| code != "EA001"), "{:?}", found(&report));
    assert!(source(&atom, "main", "atom/utils/arg_parser.py").contains("class FlexibleArgumentParser"));
}

/// The real `models_atom.yaml` (the shared InferenceX snapshot), audited at the
/// commit the AMD master's `atom-disagg` image names (`nightly_202606101403`:
/// main's last commit at or before then). Every flag its configurations pass
/// is registered there; the one finding is an env var that commit does not read.
#[test]
fn the_real_atom_model_table_against_its_image() {
    let Some(atom) = atom() else { return };
    let table = super::real_data::shared().join("recipes/benchmarks/multi_node/amd_utils/models_atom.yaml");
    if !table.is_file() {
        eprintln!("{} not found: the real ATOM table test is skipped", table.display());
        return;
    }
    const AT: &str = "087b82d9c1f630e79149ba37e6213257ec9a76f8";
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&table, dir.path().join("models_atom.yaml")).unwrap();
    let (_, report) = audit(&atom, &dir.path().join("models_atom.yaml"), AT, AT);
    // 4 models: 3 with MTP flags (6 configurations each), 1 without (3);
    // MiniMax-M3-MXFP8's two quantization configs differ: 8 more, the jobs
    // whose servers differ in DPA (with and without MTP).
    assert_eq!(report["coverage"]["audited"], 29, "{report:#}");
    let mut f = found(&report);
    f.dedup();
    assert_eq!(f, [pair("EA104", "ATOM_CPU_AFFINITY")], "{report:#}");
    let grep =
        Command::new("git").arg("--git-dir").arg(&atom).args(["grep", "-l", "ATOM_CPU_AFFINITY", AT, "--", "atom"]).output().unwrap();
    assert!(grep.stdout.is_empty(), "read at {AT}: {}", String::from_utf8_lossy(&grep.stdout));
    let arg_utils = source(&atom, AT, "atom/model_engine/arg_utils.py");
    for flag in
        ["\"--enable-tbo\"", "\"--kv_cache_dtype\"", "\"--online_quant_config\"", "\"--draft-model\"", "\"--max-num-batched-tokens\""]
    {
        assert!(arg_utils.contains(flag), "{flag}");
    }
    assert!(arg_utils.contains("choices=[\"mtp\", \"eagle3\"]"));
}
