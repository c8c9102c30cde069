//! A master config's entries run what the runners run: the variants an srt-slurm
//! selector names, the entry's image behind a container alias, and the
//! single-node script found by the runners' naming convention.
//! Real data: the corpus (ENGINE_AUDIT_CORPUS) and ../shared/recipes (ENGINE_AUDIT_SHARED).

use super::real_data::{corpus, shared};
use std::path::Path;

/// `audit --master MASTER --key KEY` to `to`, as JSON, run in `dir`.
fn audit_key(dir: &Path, corpus: &Path, master: &str, key: &str, to: &str) -> serde_json::Value {
    let cache = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .current_dir(dir)
        .env("ENGINE_AUDIT_CACHE_DIR", cache.path())
        .args(["audit", "--master", master, "--key", key, "--sglang"])
        .arg(corpus.join("sglang.git"))
        .arg("--dynamo")
        .arg(corpus.join("dynamo.git"))
        .args(["--to", to, "--offline", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn findings<'a>(report: &'a serde_json::Value, code: &str) -> Vec<&'a serde_json::Value> {
    report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == code).collect()
}

#[test]
fn a_single_node_key_audits_the_script_its_runner_picks_with_its_image() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/inferencex");
    let report = audit_key(&fixtures, &corpus, "configs/nvidia-master.yaml", "dsr1-fp8-h200-sglang", "v0.5.19");
    let bump = report["bumps"].as_array().unwrap().iter().find(|b| b["engine"] == "sglang").unwrap();
    assert_eq!(bump["from"], "v0.5.16", "the entry's image is the from-version: {bump}");
    let aliases: Vec<&str> = findings(&report, "EA003").iter().map(|f| f["recipe"].as_str().unwrap()).collect();
    assert_eq!(aliases.len(), 2, "--cuda-graph-max-bs and --disable-piecewise-cuda-graph: {:#}", report["findings"]);
    assert!(aliases.iter().all(|p| p.ends_with("benchmarks/single_node/fixed_seq_len/dsr1_fp8_h200.sh")), "{aliases:?}");
    assert_eq!(report["master_entries_checked"], 1);

    // InferenceX's `dsr1-fp4-b200-sglang` runs `fixed_seq_len/dsr1_fp4_b200.sh`
    // (no `_sglang` script): arrays per branch, read on every path.
    let report = audit_key(&fixtures, &corpus, "configs/nvidia-master.yaml", "dsr1-fp4-b200-sglang", "v0.5.19");
    let aliases: Vec<(&str, &str)> =
        findings(&report, "EA003").iter().map(|f| (f["subject"].as_str().unwrap(), f["recipe"].as_str().unwrap())).collect();
    assert_eq!(aliases.len(), 2, "{aliases:?}");
    assert!(aliases.iter().any(|(s, _)| *s == "cuda-graph-max-bs") && aliases.iter().any(|(s, _)| *s == "disable-piecewise-cuda-graph"));
    assert!(aliases.iter().all(|(_, p)| p.ends_with("single_node/fixed_seq_len/dsr1_fp4_b200.sh")), "{aliases:?}");

    // The MTP key's script does not exist: said, with the names looked for.
    let cache = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .current_dir(&fixtures)
        .env("ENGINE_AUDIT_CACHE_DIR", cache.path())
        .args(["audit", "--master", "configs/nvidia-master.yaml", "--key", "dsr1-fp8-h200-sglang-mtp", "--sglang"])
        .arg(corpus.join("sglang.git"))
        .args(["--to", "v0.5.19", "--offline"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "nothing audited: {stdout}");
    assert!(stdout.contains("benchmarks/single_node/fixed_seq_len/dsr1_fp8_h200_mtp.sh"), "{stdout}");
}

#[test]
fn selector_links_audit_the_variants_they_name() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let recipes = shared().join("recipes");
    let report =
        audit_key(&recipes, &corpus, "configs/deprecated/nvidia-glm5-glm5.1-master.yaml", "glm5-fp4-gb200-dynamo-sglang-mtp", "v0.5.23");
    // The key links ten `zip_override_*[i]` variants of one file (of its 16).
    assert_eq!(report["deployments_audited"], 10, "{:#}", report["problems"]);
    assert!(findings(&report, "EA305").is_empty(), "every selector names a variant");
    assert_eq!(report["master_entries_checked"], 1);
}

#[test]
fn a_container_alias_runs_the_master_entrys_image() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let recipes = shared().join("recipes");
    let report = audit_key(&recipes, &corpus, "configs/nvidia-master.yaml", "dsv4-fp4-gb300-dynamo-sglang-agentic-agg", "v0.5.23");
    // `container: dynamo-sglang`: the entry's nightly image, whose commit the
    // corpus (release wheels) does not hold: a located input problem, not silence.
    let unresolved = findings(&report, "EA303");
    let sglang: Vec<_> =
        unresolved.iter().filter(|f| f["message"].as_str().unwrap().contains("nightly-dev-cu13-20260719-99f5a6f4")).collect();
    assert_eq!(sglang.len(), 1, "{unresolved:#?}");
    assert_eq!(sglang[0]["recipe"], "configs/nvidia-master.yaml", "points at the entry's image");
    assert!(findings(&report, "EA301").is_empty(), "an alias is no image mismatch");
}

#[test]
fn an_amd_disagg_key_audits_its_model_table_rows_with_its_image() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let recipes = shared().join("recipes");
    let report = audit_key(&recipes, &corpus, "configs/amd-master.yaml", "qwen3.5-fp8-mi355x-sglang-disagg", "v0.5.23");
    let bump = report["bumps"].as_array().unwrap().iter().find(|b| b["engine"] == "sglang").unwrap();
    assert_eq!(bump["from"], "v0.5.16", "lmsysorg/sglang:v0.5.16-rocm720-mi35x: {bump}");
    // Qwen3.5-397B-A17B-FP8 has no MTP flags: the dp, ep_only and no_dp rows.
    assert_eq!(bump["deployments"], 3, "{bump}");
    // The AMD server script starts SGLang itself: no Dynamo runs it.
    assert!(report["bumps"].as_array().unwrap().iter().all(|b| b["engine"] != "dynamo"), "{:#}", report["bumps"]);
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert!(
        findings.iter().filter(|f| f["code"] != "EA007").all(|f| f["recipe"].as_str().unwrap().ends_with("amd_utils/models.yaml")),
        "{findings:#?}"
    );
    assert_eq!(report["master_entries_checked"], 1);
}

/// A schema-2 recipe given on its own whose container is an srt-slurm alias:
/// the master config of its repository (`configs/*-master.yaml` above it)
/// says which image the alias stands for, so the recipe is audited at that
/// release, with a note naming the file. Without that file it is not audited,
/// and the report says why.
#[test]
fn a_recipe_given_alone_finds_its_aliases_image_in_the_master_config_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let demo = engine_audit::demo::build(&dir.path().join("demo")).unwrap();
    let repo = dir.path().join("bench");
    let recipe = repo.join("benchmarks/multi_node/srt-slurm-recipes/mini/sglang/agg.yaml");
    std::fs::create_dir_all(recipe.parent().unwrap()).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(
        &recipe,
        "schema: 2\nname: mini-agg\nmodel:\n  path: /models/mini\n  container: dynamo-sglang\nengine: sglang\nroles:\n  agg:\n    args:\n      tensor-parallel-size: 4\n      totally-bogus-flag: 3\n",
    )
    .unwrap();
    let audit = |dir: &Path| {
        let cache = tempfile::tempdir().unwrap();
        let out = assert_cmd::Command::cargo_bin("engine-audit")
            .unwrap()
            .current_dir(dir)
            .env("ENGINE_AUDIT_CACHE_DIR", cache.path())
            .args(["audit", "benchmarks/multi_node/srt-slurm-recipes/mini/sglang/agg.yaml", "--sglang"])
            .arg(&demo.sglang_repo)
            .args(["--offline", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let alone = audit(&repo);
    assert_eq!(alone["coverage"]["audited"], 0, "{alone:#}");
    assert!(alone["coverage"]["not_audited"][0]["reason"].as_str().unwrap().contains("(no image)"), "{alone:#}");

    std::fs::create_dir_all(repo.join("configs")).unwrap();
    std::fs::write(
        repo.join("configs/nvidia-master.yaml"),
        "mini-agg-dynamo-sglang:\n  image: example/sglang:v1.0.0-cu130\n  framework: dynamo-sglang\n  scenarios:\n    - name: agg\n      env:\n        - CONFIG_FILE=recipes/mini/sglang/agg.yaml\n",
    )
    .unwrap();
    let found = audit(&repo);
    assert_eq!(found["coverage"]["audited"], 1, "{found:#}");
    let bogus: Vec<_> = findings(&found, "EA001").iter().map(|f| f["subject"].as_str().unwrap().to_string()).collect();
    assert_eq!(bogus, ["totally-bogus-flag"], "{found:#}");
    let notes = found["notes"].to_string();
    assert!(notes.contains("mini-agg-dynamo-sglang") && notes.contains("nvidia-master.yaml"), "{notes}");
}
