//! vLLM recipes audited end to end on the real releases (issue 28, item 2):
//! the shared srt-slurm vLLM recipes and the single-node script fixtures, from
//! their images' releases to v0.34.0 and to v0.27.1. Every finding spot-checked
//! here is also checked against the vLLM source itself (`git show TAG:path`).
//! Runs when ENGINE_AUDIT_CORPUS names the corpus folder.

use super::real_data::{corpus, shared};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn audit(vllm: &Path, args: &[&str]) -> (i32, Value) {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .args(args)
        .arg("--vllm")
        .arg(vllm)
        .args(["--offline", "--no-cache", "--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code().expect("exited, no signal");
    assert!(code == 0 || code == 1, "exit {code}: {}", String::from_utf8_lossy(&out.stderr));
    (code, serde_json::from_slice(&out.stdout).unwrap())
}

/// The text of `path` at `tag` in a corpus repo ("" when absent).
fn source(repo: &Path, tag: &str, path: &str) -> String {
    let out = Command::new("git").arg("--git-dir").arg(repo).args(["show", &format!("{tag}:{path}")]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == code).collect()
}

fn subjects(report: &Value, code: &str) -> Vec<String> {
    let mut s: Vec<String> = findings(report, code).iter().map(|f| f["subject"].as_str().unwrap().to_string()).collect();
    s.sort();
    s.dedup();
    s
}

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/inferencex-vllm");

#[test]
fn script_fixtures_find_the_real_removals_and_read_vllm_spellings() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let (code, report) = audit(&vllm, &[SCRIPTS, "--from", "v0.25.1", "--to", "v0.34.0"]);
    assert_eq!(code, 1);
    assert_eq!(report["deployments_audited"], 2, "`vllm serve` and the api_server module");
    // Removed between the releases: gone from the config dataclasses and arg_utils.
    assert_eq!(subjects(&report, "EA001"), ["calculate-kv-scales", "max-num-partial-prefills"]);
    for (field, file) in [("calculate_kv_scales", "vllm/config/cache.py"), ("max_num_partial_prefills", "vllm/config/scheduler.py")] {
        assert!(source(&vllm, "v0.25.1", file).contains(&format!("{field}:")), "{field} is a field at v0.25.1");
        assert!(!source(&vllm, "v0.34.0", file).contains(field), "{field} is gone at v0.34.0");
        assert!(!source(&vllm, "v0.34.0", "vllm/engine/arg_utils.py").contains(field), "{field} is gone at v0.34.0");
    }
    // Accepted, does nothing: the deprecation says so in the release's own words.
    assert_eq!(subjects(&report, "EA004"), ["disable-cascade-attn", "mamba-cache-mode"]);
    let args = source(&vllm, "v0.34.0", "vllm/engine/arg_utils.py");
    assert!(args.contains("--mamba-cache-mode is deprecated") && args.contains("--disable-cascade-attn is deprecated and has no effect"));
    // An env var the registry dropped between the releases, and one the
    // from-ref already no longer read but v0.21.0 did (EA101, not a typo).
    assert_eq!(subjects(&report, "EA101"), ["VLLM_RPC_TIMEOUT", "VLLM_USE_V2_MODEL_RUNNER"]);
    assert!(
        report.to_string().contains("`VLLM_RPC_TIMEOUT` is gone at v0.34.0")
            && report.to_string().contains("to v0.21.0; it is gone by v0.23.0")
    );
    assert!(source(&vllm, "v0.25.1", "vllm/envs.py").contains("\"VLLM_USE_V2_MODEL_RUNNER\": lambda"));
    assert!(!source(&vllm, "v0.34.0", "vllm/envs.py").contains("VLLM_USE_V2_MODEL_RUNNER"));
    // argparse's abbreviation, on a parser built by `subparsers.add_parser`.
    assert_eq!(subjects(&report, "EA009"), ["kv-cache-memory"]);
    // FlexibleArgumentParser's spellings and the positional model are read, not flagged.
    let all: Vec<String> = report["findings"].as_array().unwrap().iter().map(|f| f["subject"].as_str().unwrap().to_string()).collect();
    for spelled in
        ["max_num_seqs", "compilation-config.cudagraph_mode", "-O3", "-cc.pass_config.fuse_allreduce_rms", "$MODEL", "\"$MODEL\""]
    {
        assert!(!all.iter().any(|s| s == spelled), "{spelled}: {all:?}");
    }
    assert!(findings(&report, "EA306").is_empty(), "{:?}", findings(&report, "EA306"));

    // To v0.27.1: `--calculate-kv-scales` is still there (deprecated, in effect).
    let (_, report) = audit(&vllm, &[SCRIPTS, "--from", "v0.25.1", "--to", "v0.27.1"]);
    assert_eq!(subjects(&report, "EA001"), ["max-num-partial-prefills"]);
    assert!(source(&vllm, "v0.27.1", "vllm/config/cache.py").contains("calculate_kv_scales:"));
}

#[test]
fn every_srt_slurm_vllm_recipe_is_audited_to_both_targets() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let recipes = shared().join("recipes/benchmarks/multi_node/srt-slurm-recipes/vllm");
    let dynamo = corpus.join("dynamo.git");
    // To v0.34.0 with Dynamo's source (its worker's own options read), to
    // v0.27.1 without.
    let with_dynamo = ["--dynamo", dynamo.to_str().unwrap(), "--dynamo-to", "v1.6.1"];
    for (target, dynamo_args) in [("v0.34.0", &with_dynamo[..]), ("v0.27.1", &[][..])] {
        let args: Vec<&str> = [recipes.to_str().unwrap(), "--to", target].into_iter().chain(dynamo_args.iter().copied()).collect();
        let (_, report) = audit(&vllm, &args);
        assert_eq!(report["recipes"], 198, "{target}");
        assert_eq!(report["deployments_audited"], 198, "{target}: every recipe audited");
        // Dynamo's worker options are never called unknown: with Dynamo's
        // source they are its worker's own options, without it named as not read.
        assert!(subjects(&report, "EA001").iter().all(|s| !s.starts_with("dyn-")), "{target}");
        let unread = subjects(&report, "EA306");
        assert_eq!(unread.iter().any(|s| s == "dyn-tool-call-parser"), dynamo_args.is_empty(), "{target}: {unread:?}");
        // The one error in the tree: a MoE backend only the recipes' dev builds have.
        let errors: Vec<(String, String)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string()))
            .collect();
        // (With Dynamo, its worker's own break on vLLM v0.34.0 too: see `dynamo_vllm`.)
        let engine_errors: Vec<&(String, String)> = errors.iter().filter(|(code, _)| !code.starts_with("EA2")).collect();
        assert!(engine_errors.iter().all(|e| *e == &("EA005".to_string(), "moe-backend".to_string())), "{target}: {errors:?}");
        let kernel = source(&vllm, target, "vllm/config/kernel.py");
        assert!(kernel.contains("MoEBackend = Literal[") && !kernel.contains("deep_gemm_amxf4_mega_moe"), "{target}");
        // A nightly image whose commit the corpus lacks is an input problem, said per recipe.
        assert!(findings(&report, "EA303").iter().any(|f| f["message"].as_str().unwrap().contains("nightly-5e35a6f4")), "{target}");
    }
}

/// Flags handed to Dynamo's vLLM worker (`frontend.type: dynamo`): what its own
/// parsers register is taken, a `vllm serve`-only option is a start-up error
/// (the worker ends in `vllm_parser.parse_args(unknown)` on the engine-only
/// parser), a typo is unknown; checked against both sources.
#[test]
fn flags_handed_to_dynamo_s_vllm_worker_are_judged_by_its_parsers() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let dynamo = corpus.join("dynamo.git");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/vllm-dynamo-worker");
    let (code, report) = audit(&vllm, &[fixture, "--to", "v0.34.0", "--dynamo", dynamo.to_str().unwrap(), "--dynamo-to", "v1.6.1"]);
    assert_eq!(code, 1);
    let refused: Vec<(String, String)> = findings(&report, "EA001")
        .iter()
        .map(|f| (f["subject"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().to_string()))
        .collect();
    // In recipe order.
    assert_eq!(refused.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(), ["tool-call-parser", "port", "max-num-seqz"], "{refused:?}");
    for (subject, message) in &refused[..2] {
        assert!(message.contains("Dynamo's vLLM worker (`dynamo.vllm.args`) at v1.6.1"), "{subject}: {message}");
    }
    assert!(findings(&report, "EA306").is_empty(), "{:?}", findings(&report, "EA306"));
    // The source says so: `--tool-call-parser` and `--port` are frontend options
    // of `vllm serve`, not of `AsyncEngineArgs.add_cli_args`; Dynamo registers
    // the `dyn-` options and hands the rest to the engine-only parser.
    let args = source(&vllm, "v0.34.0", "vllm/engine/arg_utils.py");
    assert!(!args.contains("\"--tool-call-parser\"") && !args.contains("\"--port\""));
    let show = |path: &str| source(&dynamo, "v1.6.1", path);
    assert!(show("components/src/dynamo/vllm/args.py").contains("vllm_args = vllm_parser.parse_args(unknown)"));
    assert!(show("components/src/dynamo/common/configuration/groups/runtime_args.py").contains("flag_name=\"--dyn-tool-call-parser\""));
}

/// The AMD vLLM model table: every model's roles audited; `4K` for
/// `--max-num-batched-tokens` is the release's `human_readable_int`, not an
/// invalid integer.
#[test]
fn the_amd_vllm_model_table_is_audited_with_the_release_s_converters() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let table = shared().join("recipes/benchmarks/multi_node/amd_utils/models_vllm.yaml");
    let (_, report) = audit(&vllm, &[table.to_str().unwrap(), "--to", "v0.34.0"]);
    let models = std::fs::read_to_string(&table).unwrap().lines().filter(|l| l.ends_with(':') && !l.starts_with([' ', '#'])).count();
    assert_eq!(report["deployments_audited"], models, "one deployment per model");
    assert!(findings(&report, "EA006").is_empty(), "{:?}", findings(&report, "EA006"));
    let args = source(&vllm, "v0.34.0", "vllm/engine/arg_utils.py");
    assert!(args.contains("human_readable_int_args = {") && args.contains("\"max_num_batched_tokens\","));
    assert!(args.contains("kwargs[name][\"type\"] = human_readable_int\n"));
    // Its env strings are read: `VLLM_USE_V1` is in no registry of these releases.
    assert!(subjects(&report, "EA104").iter().any(|s| s == "VLLM_USE_V1"));
    assert!(!source(&vllm, "v0.34.0", "vllm/envs.py").contains("\"VLLM_USE_V1\""));
}

/// v0.27.1 and v0.28.0 keep `VLLM_TRITON_ATTN_USE_TD` registered with a getter
/// that only warns ("Use VLLM_TRITON_USE_TD instead") and ignores the value:
/// EA103 there, and once the name is gone, EA101 says it was already retired.
#[test]
fn a_registered_variable_whose_getter_only_warns_does_nothing() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let envs = source(&vllm, "v0.28.0", "vllm/envs.py");
    assert!(envs.contains("\"VLLM_TRITON_ATTN_USE_TD\": lambda: _deprecated_triton_attn_use_td(),"));
    assert!(envs.contains("The old name is ignored; VLLM_TRITON_USE_TD is the supported variable."));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("launch.sh"), "#!/usr/bin/env bash\nexport VLLM_TRITON_ATTN_USE_TD=1\nvllm serve /m -tp 2\n").unwrap();
    let recipes = dir.path().to_str().unwrap();
    let (_, report) = audit(&vllm, &[recipes, "--from", "v0.25.1", "--to", "v0.28.0"]);
    let notice = findings(&report, "EA103");
    assert_eq!(notice.len(), 1, "{report:#}");
    assert!(notice[0]["message"].as_str().unwrap().contains("Use VLLM_TRITON_USE_TD instead."), "{}", notice[0]["message"]);
    assert_eq!(notice[0]["evidence"][0]["path"], "vllm/envs.py");
    let (_, report) = audit(&vllm, &[recipes, "--from", "v0.25.1", "--to", "v0.34.0"]);
    let gone = findings(&report, "EA101");
    assert!(gone.len() == 1 && gone[0]["message"].as_str().unwrap().contains("already retired"), "{report:#}");
}

/// `--master` with a vLLM key: the recipes its entry links are audited (with
/// the entry's image cross-checked), nothing else.
#[test]
fn a_vllm_master_key_audits_the_recipes_it_links() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let master = shared().join("recipes/configs/nvidia-master.yaml");
    let key = "kimik3-fp4-h200-vllm-agentic";
    let text = std::fs::read_to_string(&master).unwrap();
    // The entry's links, as the master config writes them (`CONFIG_FILE=recipes/vllm/...`).
    let after = &text[text.find(&format!("\n{key}:\n")).unwrap() + key.len() + 3..];
    let entry = after.lines().take_while(|l| l.is_empty() || l.starts_with([' ', '#']));
    let links: std::collections::BTreeSet<&str> =
        entry.filter_map(|l| l.split("CONFIG_FILE=recipes/").nth(1)).map(|l| l.trim_end_matches('"')).collect();
    assert!(!links.is_empty() && links.iter().all(|l| l.starts_with("vllm/")), "{links:?}");
    let (_, report) = audit(&vllm, &["--master", master.to_str().unwrap(), "--key", key, "--to", "v0.34.0"]);
    assert_eq!(report["master_entries_checked"], 1);
    assert_eq!(report["deployments_audited"], links.len(), "{links:?}");
    let paths: std::collections::BTreeSet<String> =
        report["findings"].as_array().unwrap().iter().filter_map(|f| f["location"]["path"].as_str().map(String::from)).collect();
    assert!(paths.iter().all(|p| p.ends_with("nvidia-master.yaml") || links.iter().any(|l| p.ends_with(l))), "{paths:?}");
}
