//! Every command on ATOM input, end to end on the demo's mini ATOM (v0.1.0 →
//! v0.2.0, `fixtures/demo/atom`, shaped like upstream's `arg_utils.py`,
//! `openai_server.py` and `utils/envs.py`) and its single-node script, which
//! runs in the image its master entry names (`..._atom0.1.0`): `surface`,
//! `diff`, `show`, `audit`, `--fix`, `pr` and `matrix`.

use super::cli_run::{run, run_with, text};
use super::pr::{bump_branch, demo_recipes, findings, json, pr};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

const SCRIPT: &str = "benchmarks/single_node/fixed_seq_len/minimoe_fp8_mi355x_atom.sh";
const MASTER: &str = "configs/demo-master.yaml";

/// `audit SCRIPT MASTER --atom <demo atom.git> --offline` plus `extra`.
fn audit(atom: &Path, root: &Path, extra: &[&str]) -> Output {
    let (script, master) = (root.join(SCRIPT), root.join(MASTER));
    let args: Vec<&OsStr> =
        vec!["audit".as_ref(), script.as_os_str(), master.as_os_str(), "--atom".as_ref(), atom.as_os_str(), "--offline".as_ref()];
    let mut args: Vec<std::ffi::OsString> = args.into_iter().map(OsStr::to_os_string).collect();
    args.extend(extra.iter().map(|e| e.into()));
    assert_cmd::Command::cargo_bin("engine-audit").unwrap().args(&args).env("NO_COLOR", "1").output().unwrap()
}

fn subjects(report: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = findings(report).into_iter().map(|(code, _, subject)| (code, subject)).collect();
    out.sort();
    out
}

fn pair(code: &str, subject: &str) -> (String, String) {
    (code.to_string(), subject.to_string())
}

#[test]
fn surface_reads_the_mini_atom_as_its_server_builds_its_parser() {
    let (_dir, ws, _) = demo_recipes();
    let out = run(&[
        "surface".as_ref(),
        "--atom".as_ref(),
        ws.atom_repo.as_os_str(),
        "--at".as_ref(),
        "v0.2.0".as_ref(),
        "--offline".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out);
    assert_eq!(s["engine"], "atom");
    let flag =
        |name: &str| s["flags"].as_array().unwrap().iter().find(|f| f["names"].as_array().unwrap().iter().any(|n| n == name)).cloned();
    // `BooleanOptionalAction`: both forms, on by default.
    let caching = flag("--enable_prefix_caching").unwrap();
    assert!(caching["names"].as_array().unwrap().iter().any(|n| n == "--no-enable_prefix_caching"), "{caching:#}");
    assert_eq!(caching["default"], true);
    assert_eq!(flag("--online_quant_config").unwrap()["type"], "json.loads");
    assert_eq!(flag("-tp").unwrap()["dest"], "tensor_parallel_size");
    // The entry point's own flags follow the engine's.
    assert!(flag("--server-port").is_some());
    assert!(flag("--torch-profiler-dir").is_none(), "gone at v0.2.0");
    let envs: Vec<&str> = s["env"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(envs, ["ATOM_DP_SIZE", "ATOM_LOG_STATS"]);
}

#[test]
fn diff_names_each_change_between_the_mini_releases() {
    let (_dir, ws, _) = demo_recipes();
    let args = |format: &'static str| -> Vec<&OsStr> {
        let mut args: Vec<&OsStr> = vec!["diff".as_ref(), "--atom".as_ref(), ws.atom_repo.as_os_str()];
        args.extend(["--from", "v0.1.0", "--to", "v0.2.0", "--offline", "--format", format].map(OsStr::new));
        args
    };
    let d = json(&run(&args("json")));
    let names = |key: &str| -> Vec<String> {
        d[key].as_array().unwrap().iter().map(|f| f["flag"].as_str().or(f["name"].as_str()).unwrap_or_default().to_string()).collect()
    };
    assert_eq!(names("flags_removed"), ["--torch-profiler-dir"]);
    assert!(names("flags_added").contains(&"--online_quant_config".to_string()), "{d:#}");
    let listing = text(&run(&args("text")));
    for line in ["atom v0.1.0 -> v0.2.0", "  --enable_prefix_caching: false → true", "  ATOM_USE_TRITON_GEMM"] {
        assert!(listing.lines().any(|l| l == line), "missing {line:?}:\n{listing}");
    }
}

#[test]
fn show_reads_the_atom_launch_as_its_parser_reads_it() {
    let (_dir, _ws, root) = demo_recipes();
    let out = run(&["show".as_ref(), root.join(SCRIPT).as_os_str(), "--format".as_ref(), "json".as_ref()]);
    let dep = &json(&out)["files"][0]["deployments"][0];
    assert_eq!((dep["engine"].as_str(), dep["roles"][0]["role"].as_str()), (Some("atom"), Some("openai_server")), "{dep:#}");
    let words: Vec<&str> = dep["roles"][0]["argv"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap()).collect();
    assert!(words.contains(&"--kv-cache-dtype") && words.contains(&"-tp") && words.contains(&"--online_quant_config"), "{words:?}");
    let env: Vec<&str> = dep["common_env"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(env, ["ATOM_USE_TRITON_GEMM", "AITER_LOG_LEVEL"]);
}

/// The script runs v0.1.0 (its master entry's image) and is bumped to v0.2.0:
/// the other spelling (refused at both), the flag v0.2.0 dropped (with the
/// release that last had it), a JSON value that does not parse, the env var
/// v0.2.0 no longer reads, and the default that flipped for a flag it leaves
/// unset; aiter's variable is noted, not judged.
#[test]
fn audit_bumps_the_atom_script_from_its_image() {
    let (_dir, ws, root) = demo_recipes();
    let out = audit(&ws.atom_repo, &root, &["--atom-to", "v0.2.0", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let bump = &report["bumps"][0];
    assert_eq!((bump["engine"].as_str(), bump["from"].as_str(), bump["to"].as_str()), (Some("atom"), Some("v0.1.0"), Some("v0.2.0")));
    assert!(bump["how"].to_string().contains("minimoe-fp8-mi355x-atom"), "{bump:#}");
    assert_eq!(
        subjects(&report),
        [
            pair("EA001", "kv-cache-dtype"),
            pair("EA001", "torch-profiler-dir"),
            pair("EA006", "online_quant_config"),
            pair("EA007", "enable_prefix_caching"),
            pair("EA101", "ATOM_USE_TRITON_GEMM"),
        ],
        "{report:#}"
    );
    let gone = report["findings"].as_array().unwrap().iter().find(|f| f["subject"] == "torch-profiler-dir").unwrap();
    assert!(gone["message"].as_str().unwrap().contains("It was an option at v0.1.0; v0.2.0 no longer has it."), "{gone:#}");
    assert!(report["notes"].to_string().contains("minimoe_fp8_mi355x_atom.sh:9:8: `AITER_LOG_LEVEL` not checked (aiter)"));
    // Without a target: audited as it runs today, at its image's release.
    let report = json(&audit(&ws.atom_repo, &root, &["--format", "json"]));
    assert_eq!(report["bumps"][0]["to"], "v0.1.0");
    assert_eq!(subjects(&report), [pair("EA001", "kv-cache-dtype"), pair("EA001", "online_quant_config")], "{report:#}");
}

#[test]
fn fix_writes_the_spelling_the_target_registers() {
    let (_dir, ws, root) = demo_recipes();
    let out = audit(&ws.atom_repo, &root, &["--atom-to", "v0.2.0", "--fix"]);
    assert!(out.status.code().is_some(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = std::fs::read_to_string(root.join(SCRIPT)).unwrap();
    assert!(script.contains("  --kv_cache_dtype fp8 \\\n") && !script.contains("--kv-cache-dtype"), "{script}");
    let report = json(&audit(&ws.atom_repo, &root, &["--atom-to", "v0.2.0", "--format", "json"]));
    assert!(!subjects(&report).contains(&pair("EA001", "kv-cache-dtype")), "{report:#}");
    // What has no mechanical fix stays, as advice.
    assert!(subjects(&report).contains(&pair("EA006", "online_quant_config")));
}

/// A PR that edits the ATOM script, audited against the ATOM target named by
/// `--atom-to`: only the changed script, from the release its master entry's
/// image names.
#[test]
fn pr_audits_a_changed_atom_script() {
    let (_dir, ws, root) = demo_recipes();
    bump_branch(&root, &[(SCRIPT, "--method mtp", "--method eagle3")]);
    let out = pr(&root, "main", "bump", &["--atom".as_ref(), ws.atom_repo.as_os_str(), "--atom-to".as_ref(), "v0.2.0".as_ref()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let bump = report["bumps"].as_array().unwrap().iter().find(|b| b["engine"] == "atom").cloned().unwrap_or_default();
    assert_eq!(bump["to"], "v0.2.0", "{report:#}");
    let found = findings(&report);
    assert!(found.iter().all(|f| f.1.ends_with(SCRIPT)), "only the changed script: {found:#?}");
    // `eagle3` is a method at v0.2.0: nothing to say of it.
    assert!(!found.iter().any(|f| f.2 == "method"), "{found:#?}");
    for (code, subject) in [("EA001", "torch-profiler-dir"), ("EA006", "online_quant_config"), ("EA101", "ATOM_USE_TRITON_GEMM")] {
        assert!(found.iter().any(|f| f.0 == code && f.2 == subject), "{code} {subject}: {found:#?}");
    }
}

#[test]
fn the_matrix_places_the_atom_script_at_its_image_and_names_its_first_break() {
    let (_dir, ws, root) = demo_recipes();
    let out = run_with(
        vec![
            "matrix".as_ref(),
            root.join("benchmarks").as_os_str(),
            root.join("configs").as_os_str(),
            "--atom".as_ref(),
            ws.atom_repo.as_os_str(),
        ],
        &["--offline", "--format", "json"],
    );
    let m = json(&out);
    let atom = m["engines"].as_array().unwrap().iter().find(|e| e["engine"] == "atom").expect("an ATOM axis");
    assert_eq!(atom["releases"], serde_json::json!(["v0.1.0", "v0.2.0"]));
    let row = &atom["rows"][0];
    assert!(row["path"].as_str().unwrap().ends_with(SCRIPT), "{row:#}");
    assert_eq!((row["start"]["kind"].as_str(), row["start"]["release"].as_str()), (Some("current"), Some("v0.1.0")), "{row:#}");
    let codes = |i: usize| row["cells"][i]["codes"].clone();
    assert_eq!(codes(0), serde_json::json!(["EA001"]));
    assert_eq!(codes(1), serde_json::json!(["EA001", "EA006", "EA007", "EA101"]));
    // The script's other spelling is refused at both: it breaks where it runs today.
    assert_eq!((row["first_break"]["release"].as_str(), row["first_break"]["subject"].as_str()), (Some("v0.1.0"), Some("kv-cache-dtype")));
}
