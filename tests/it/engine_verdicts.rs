//! Engine-side verdicts checked against the real releases (issue 26): what a
//! finding claims about the engine must hold in its source.
//! Runs when ENGINE_AUDIT_CORPUS names the corpus folder; `.ci/run` sets it.

use super::real_data::{corpus, shared};

/// (code, subject, message) of each finding of `engine-audit audit <args>
/// --offline --no-cache --format json --fail-on never`.
fn findings_of(args: &[&std::ffi::OsStr]) -> Vec<(String, String, String)> {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .args(args)
        .args(["--offline", "--no-cache", "--format", "json", "--fail-on", "never"])
        .output()
        .unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap().into(), f["subject"].as_str().unwrap().into(), f["message"].as_str().unwrap().into()))
        .collect()
}

/// The codes and subjects of an audit of one srt-slurm recipe text.
fn audit(corpus: &std::path::Path, recipe: &str, from: &str, to: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.yaml");
    std::fs::write(&path, recipe).unwrap();
    let sglang = corpus.join("sglang.git");
    let args: Vec<&std::ffi::OsStr> =
        vec![path.as_os_str(), "--sglang".as_ref(), sglang.as_os_str(), "--from".as_ref(), from.as_ref(), "--to".as_ref(), to.as_ref()];
    findings_of(&args).into_iter().map(|(code, subject, _)| (code, subject)).collect()
}

#[test]
fn a_removal_notice_only_for_vars_nothing_else_reads() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // At v0.5.19 both are in `_DEPRECATED_ENVS` without a replacement, but
    // SGLANG_ENABLE_UNIFIED_RADIX_TREE is still an EnvBool field that
    // mem_cache/kv_cache_builder.py reads ("still defined for legacy call
    // sites"); SGLANG_CUTLASS_MOE is only in the deprecation table.
    let recipe = "\
name: r
backend:
  type: sglang
  decode_environment:
    SGLANG_ENABLE_UNIFIED_RADIX_TREE: '1'
    SGLANG_CUTLASS_MOE: '1'
  sglang_config:
    decode: {tensor-parallel-size: 8}
";
    let found = audit(&corpus, recipe, "v0.5.16", "v0.5.19");
    let notices: Vec<&str> = found.iter().filter(|(c, _)| c == "EA103").map(|(_, s)| s.as_str()).collect();
    assert_eq!(notices, ["SGLANG_CUTLASS_MOE"], "{found:?}");
}

#[test]
fn diff_claims_a_move_only_with_shared_names() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["diff", "--dynamo"])
        .arg(corpus.join("dynamo.git"))
        .args(["--from", "v1.3.0.post1", "--to", "v1.5.0", "--offline", "--no-cache", "--format", "json"])
        .output()
        .unwrap();
    let d: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let moved: Vec<(&str, &str)> =
        d["modules_removed"].as_array().unwrap().iter().filter_map(|m| Some((m["module"].as_str()?, m["moved_to"].as_str()?))).collect();
    // `replay/__main__.py` and `triton/__main__.py` share a leaf name, `main`
    // and an import; the planner clients really moved (same names, one folder down).
    assert!(!moved.iter().any(|(from, _)| *from == "dynamo.replay.__main__"), "{moved:?}");
    assert!(moved.contains(&("dynamo.planner.connectors.kubernetes_api", "dynamo.planner.connectors.clients.kubernetes_api")), "{moved:?}");
    // Test files of one package share most of their imports: no move between them.
    let leaf = |m: &str| m.rsplit('.').next().unwrap_or(m).to_string();
    assert!(!moved.iter().any(|(from, to)| from.contains(".tests.") && leaf(from) != leaf(to)), "{moved:?}");
}

#[test]
fn a_getattr_fallback_to_the_targets_api_is_no_degradation() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // Dynamo v1.6.1 `_compat.py`: `getattr(server_args, "get_model_config", None)`,
    // else `model_config_of(server_args)` from `sglang.srt.arg_groups.overrides`,
    // which SGLang v0.5.23 defines (likewise `use_mla_backend`).
    let found = dsr1_mtp_audit(&corpus, "v0.5.23", "v1.6.1");
    let consumer: Vec<&str> = found.iter().filter(|(c, _, _)| c == "EA204").map(|(_, s, _)| s.as_str()).collect();
    assert!(!consumer.contains(&"ServerArgs.get_model_config") && !consumer.contains(&"ServerArgs.use_mla_backend"), "{consumer:?}");
}

/// An audit of the real DSR1 B200 FP4 8k1k MTP recipes (images at
/// v0.5.12.post1, Dynamo pinned at v1.3.0.post1) to `to` with Dynamo
/// `dynamo_to`: (code, subject, message) of each finding.
fn dsr1_mtp_audit(corpus: &std::path::Path, to: &str, dynamo_to: &str) -> Vec<(String, String, String)> {
    let recipes = shared().join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp");
    let (sglang, dynamo) = (corpus.join("sglang.git"), corpus.join("dynamo.git"));
    let args: Vec<&std::ffi::OsStr> = vec![
        recipes.as_os_str(),
        "--sglang".as_ref(),
        sglang.as_os_str(),
        "--dynamo".as_ref(),
        dynamo.as_os_str(),
        "--to".as_ref(),
        to.as_ref(),
        "--dynamo-from".as_ref(),
        "v1.3.0.post1".as_ref(),
        "--dynamo-to".as_ref(),
        dynamo_to.as_ref(),
    ];
    findings_of(&args)
}

#[test]
fn code_after_an_early_return_runs_only_where_the_newer_api_is_gone() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // Dynamo v1.5.0 `override_server_args`: `if declare_late_resolution is not
    // None: ...; return` before the `_late_resolution` / `override` lookups.
    // SGLang v0.5.19 defines declare_late_resolution; v0.5.23 does not.
    let subjects = |found: &[(String, String, String)]| -> Vec<String> {
        found.iter().filter(|(c, _, _)| c == "EA204").map(|(_, s, _)| s.clone()).collect()
    };
    let at_19 = subjects(&dsr1_mtp_audit(&corpus, "v0.5.19", "v1.5.0"));
    assert!(!at_19.iter().any(|s| s == "ServerArgs._late_resolution" || s == "ServerArgs.override"), "{at_19:?}");
    assert!(!at_19.iter().any(|s| s == "sglang.srt.arg_groups.overrides.declare_late_resolution"), "{at_19:?}");
    // At v0.5.23 the import falls back to None and the legacy path runs (its
    // lookups are judged against the from-release, v0.5.12.post1, which had
    // neither attribute: the fixture case in `check::consumer` covers them).
    let at_23 = subjects(&dsr1_mtp_audit(&corpus, "v0.5.23", "v1.5.0"));
    assert!(at_23.iter().any(|s| s == "sglang.srt.arg_groups.overrides.declare_late_resolution"), "{at_23:?}");
}

#[test]
fn a_module_split_within_its_package_names_where_the_import_went() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // `from sglang.srt.disaggregation.encode_server import MMEncoder`: at
    // v0.5.19 MMEncoder and most of the module are in disaggregation/encoder/server.py.
    let found = dsr1_mtp_audit(&corpus, "v0.5.19", "v1.5.0");
    let mm_encoder = found
        .iter()
        .find(|(c, s, m)| c == "EA204" && s == "sglang.srt.disaggregation.encode_server" && m.contains("import MMEncoder"))
        .unwrap_or_else(|| panic!("no EA204 for the MMEncoder import: {found:?}"));
    assert!(mm_encoder.2.contains("It moved to `sglang.srt.disaggregation.encoder.server`"), "{}", mm_encoder.2);
}

#[test]
fn ea007_compares_the_defaults_that_run() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // v0.5.12.post1 → v0.5.23: many fields became `None` with a `fallback=`
    // (swa-full-tokens-ratio 0.8, mamba-full-memory-ratio 0.9, ...) or a hook
    // that depends on the platform or the role (enable-fused-qk-norm-rope,
    // hicache-ratio): their effective defaults did not change or are dynamic.
    let found = dsr1_mtp_audit(&corpus, "v0.5.23", "v1.5.0");
    let mut changed: Vec<&str> = found.iter().filter(|(c, _, _)| c == "EA007").map(|(_, s, _)| s.as_str()).collect();
    changed.sort();
    changed.dedup();
    assert_eq!(changed, ["encoder-transfer-backend", "file-storage-path", "hicache-mem-layout"]);
}
