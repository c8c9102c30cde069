//! The demo audit end to end (hermetic): mini SGLang v1.0.0 → v1.1.0, mini vLLM
//! v0.8.0 → v0.9.0 and mini Dynamo 0.1.0, built from fixtures/demo, with
//! srt-slurm recipes, a master config and launch scripts. Every finding code
//! fires for the reason the fixtures were written to provoke, and nothing else fires.

use engine_audit::audit::AuditReport;
use engine_audit::codes::CATALOG;
use engine_audit::report::Finding;

fn demo() -> AuditReport {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = engine_audit::cmd::demo::audit_demo(dir.path()).unwrap();
    report
}

fn one<'a>(r: &'a AuditReport, code: &str, subject: &str) -> &'a Finding {
    let found: Vec<_> = r.findings.iter().filter(|f| f.code() == code && f.subject == subject).collect();
    assert_eq!(found.len(), 1, "{code} {subject}: {found:#?}");
    found[0]
}

const RECIPE: &str = "recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml";
const SCRIPT: &str = "recipes/benchmarks/launch-aggregated.sh";
const VLLM_RECIPE: &str = "recipes/benchmarks/multi_node/srt-slurm-recipes/qwen-mini/qwen-mini-vllm-disagg.yaml";
const VLLM_SCRIPT: &str = "recipes/benchmarks/launch-vllm.sh";

/// Codes about input the audit could not read: the demo's recipes are all
/// readable; these fire in `tests/robustness.rs` on broken files and in their
/// `tests/codes/` cases (EA306: flags from the environment, a launch never reached).
const INPUT_PROBLEMS: &[&str] = &["EA305", "EA306"];

#[test]
fn every_code_fires_on_the_demo() {
    let r = demo();
    for info in CATALOG {
        let code = format!("{:?}", info.code);
        if INPUT_PROBLEMS.contains(&code.as_str()) {
            continue;
        }
        assert!(r.findings.iter().any(|f| f.code() == code), "{code} never fires on the demo");
    }
}

#[test]
fn recipe_flags_are_judged_against_the_target_parser() {
    let r = demo();
    let typo = one(&r, "EA001", "enable-metrcs");
    assert_eq!((typo.location.path.as_str(), typo.location.line, typo.role.as_deref()), (RECIPE, 34, Some("prefill")));
    assert!(typo.message().contains("Did you mean `--enable-metrics`?"));
    let removed = one(&r, "EA002", "enable-legacy-scheduler");
    assert!(removed.message().contains("refuse to start") && removed.message().contains("overlap scheduler is the only one"));
    let noop = one(&r, "EA004", "prefill-balance");
    assert_eq!(noop.fix.as_ref().unwrap().edits.len(), 1, "the line can be deleted");
    let choice = one(&r, "EA005", "attention-backend");
    assert!(choice.message().contains("`fa3`") && choice.message().contains("flashmla"), "{}", choice.message());
    assert_eq!(choice.location.column, 26, "points at the value");
    let semantics = one(&r, "EA008", "cuda-graph-bs");
    assert!(semantics.message().contains("type int → parse_batch_sizes"), "{}", semantics.message());
    let arity = r.findings.iter().find(|f| f.code() == "EA006" && f.subject == "cuda-graph-bs").unwrap();
    assert!(arity.message().contains("exactly 1 value") && arity.message().contains("passes 4"));
    let typed = r.findings.iter().find(|f| f.code() == "EA006" && f.subject == "max-running-requests").unwrap();
    assert!(typed.message().contains("`1k` is not an integer"));
    let default = one(&r, "EA007", "mem-fraction-static");
    assert!(default.message().contains("0.85 → 0.88"));
}

#[test]
fn aliases_are_found_in_yaml_and_in_scripts() {
    let r = demo();
    let aliases: Vec<_> = r.findings.iter().filter(|f| f.code() == "EA003" && f.subject == "cuda-graph-max-bs").collect();
    let paths: Vec<&str> = aliases.iter().map(|f| f.location.path.as_str()).collect();
    assert_eq!(paths, [SCRIPT, RECIPE]);
    for f in aliases {
        let fix = f.fix.as_ref().unwrap();
        assert_eq!(fix.edits.len(), 1);
        assert_eq!(fix.edits[0].replacement, "cuda-graph-max-bs-decode");
    }
}

#[test]
fn env_vars_follow_the_registry() {
    let r = demo();
    let renamed: Vec<_> = r.findings.iter().filter(|f| f.code() == "EA102" && f.subject == "SGLANG_DISABLE_MEM_CHECK").collect();
    assert_eq!(renamed.len(), 2, "the recipe's prefill env and the script's export");
    for f in &renamed {
        assert!(f.message().contains("inverted polarity"));
        let edits = &f.fix.as_ref().unwrap().edits;
        assert_eq!(edits.iter().map(|e| e.replacement.as_str()).collect::<Vec<_>>(), ["SGLANG_ENABLE_MEM_CHECK", "0"]);
    }
    let unit = one(&r, "EA102", "SGLANG_QUEUE_TIMEOUT_MS");
    assert!(unit.message().contains("milliseconds → seconds"));
    assert_eq!(unit.fix.as_ref().unwrap().edits[1].replacement, "30", "30000 ms is 30 s");
    let notice: Vec<_> = r.findings.iter().filter(|f| f.code() == "EA103").collect();
    assert_eq!(notice.len(), 2, "prefill and decode both set SGLANG_ENABLE_SPEC_V2");
    assert!(notice[0].message().contains("the V2 worker is always used"));
    assert_eq!(one(&r, "EA101", "SGLANG_USE_OLD_ALLOCATOR").role.as_deref(), Some("prefill"));
    assert_eq!(one(&r, "EA104", "SGLANG_DISAGG_BOOTSTRAP_TIMEOUT").severity, engine_audit::codes::Severity::Info);
    assert!(one(&r, "EA105", "SGLANG_LOG_LEVEL_DETAIL").message().contains("from 0 to 1"));
    assert!(r.findings.iter().all(|f| f.subject != "NCCL_DEBUG"), "other software's env vars are out of scope");
}

#[test]
fn dynamo_uses_are_resolved_against_the_target() {
    let r = demo();
    let import = one(&r, "EA201", "sglang.srt.config_parser");
    assert_eq!(import.location.path, "components/src/dynamo/sglang/args.py");
    assert!(import.message().contains("crashes at start") && import.message().contains("sglang.srt.utils.config_parser"));
    assert!(one(&r, "EA202", "sglang.srt.server_args.PortArgs").message().contains("defines no `PortArgs`"));
    let attr = one(&r, "EA203", "ServerArgs.prefill_balance");
    assert_eq!(attr.evidence.len(), 3, "the use, where it was defined, the class at the target");
    let guarded = one(&r, "EA204", "ServerArgs.use_mla_backend");
    assert!(guarded.message().contains("except Exception") && guarded.message().contains("falls back to"));
    assert!(one(&r, "EA205", "sglang").message().contains("sglang==1.0.0"));
}

#[test]
fn master_config_and_image_refs_are_cross_checked() {
    let r = demo();
    assert!(one(&r, "EA301", "model.container").message().contains("example/sglang:v1.0.0-cu129"));
    assert!(one(&r, "EA302", "dynamo.source.pypi").message().contains("`0.2.0`"));
    let unresolved = one(&r, "EA303", "model.container");
    assert!(unresolved.location.path.ends_with("dsmini-fp8-agg.yaml"));
    assert!(unresolved.message().contains("v0.9.9"));
}

/// The vLLM side of the demo: a `vllm serve` script and an srt-slurm
/// `vllm_config` recipe, v0.8.0 → v0.9.0, each finding for what the two mini
/// releases really differ in (fixtures/demo/vllm).
#[test]
fn vllm_recipes_are_judged_against_the_vllm_target() {
    let r = demo();
    let at = |f: &Finding| (f.location.path.clone(), f.location.line, f.role.clone());
    // Removed: the field and its add_argument are gone; the history says when.
    let removed = one(&r, "EA001", "calculate-kv-scales");
    assert_eq!(at(removed), (VLLM_SCRIPT.into(), 14, Some("serve".into())));
    assert!(removed.message().contains("announced as deprecated (still in effect) at v0.8.0"), "{}", removed.message());
    assert_eq!(removed.evidence[0].path, "vllm/engine/arg_utils.py");
    // A help-text deprecation naming its successor is an alias with a rename fix,
    // in the script and in the recipe alike (dotted keys are FlexibleArgumentParser's).
    let renamed: Vec<_> = r.findings.iter().filter(|f| f.code() == "EA003" && f.subject == "log-config-file").collect();
    assert_eq!(renamed.iter().map(|f| f.location.path.as_str()).collect::<Vec<_>>(), [VLLM_SCRIPT, VLLM_RECIPE]);
    for f in &renamed {
        assert!(f.message().contains("`--logging-config.pylogging_config_file`"), "{}", f.message());
        assert_eq!(f.fix.as_ref().unwrap().edits[0].replacement, "logging-config.pylogging_config_file");
    }
    // "It has no effect" in the help constant: a no-op, deleted from the YAML.
    let noop: Vec<_> = r.findings.iter().filter(|f| f.code() == "EA004" && f.subject == "mamba-cache-mode").collect();
    assert_eq!(noop.len(), 2);
    assert!(
        noop[1].location.path == VLLM_RECIPE && noop[1].role.as_deref() == Some("decode") && noop[1].fix.as_ref().unwrap().edits.len() == 1
    );
    // The choices come from a `Literal` alias in another module.
    assert!(one(&r, "EA005", "kv-cache-dtype").message().contains("(choices: auto, fp8, fp8_e4m3)"));
    // From the image's release: the dataclass default moved.
    assert!(one(&r, "EA007", "gpu-memory-utilization").message().contains("0.9 → 0.92"));
    // envs.py's getter dict: a variable dropped, a default changed.
    let gone: Vec<_> = r.findings.iter().filter(|f| f.code() == "EA101" && f.subject == "VLLM_USE_V2_MODEL_RUNNER").collect();
    assert_eq!(gone.iter().map(|f| f.location.path.as_str()).collect::<Vec<_>>(), [VLLM_SCRIPT, VLLM_RECIPE]);
    assert_eq!(gone[0].evidence[0].path, "vllm/envs.py");
    assert!(one(&r, "EA105", "VLLM_ENGINE_READY_TIMEOUT_S").message().contains("from 600 to 1200"));
    // A rule with `engine: vllm`: the variable became a CacheConfig field (a flag).
    let moved = one(&r, "R004", "VLLM_PREFIX_CACHE_RETENTION_INTERVAL");
    assert_eq!(at(moved), (VLLM_RECIPE.into(), 28, Some("prefill".into())));
    assert!(moved.message().contains("--prefix-cache-retention-interval 32768"), "{}", moved.message());
    assert_eq!(moved.evidence[0].path, "vllm/config/cache.py");
    // vLLM's own spellings are read as its parser reads them, not flagged.
    for spelled in ["max_num_seqs", "-tp", "host", "port", "$MODEL", "\"$MODEL\""] {
        assert!(r.findings.iter().all(|f| f.subject != spelled), "{spelled}");
    }
    assert!(r.bumps.iter().any(|b| b.engine == "vllm" && b.from.as_deref() == Some("v0.8.0") && b.to == "v0.9.0"), "{:?}", r.bumps);
    // Run by Dynamo's worker (`frontend.type: dynamo`): every flag is one its engine-only parser takes.
    assert!(r.findings.iter().all(|f| f.code() != "EA306"), "nothing left unread");
}

/// Dynamo 0.2.0, which the vLLM recipe installs, against the vLLM target:
/// its worker's uses and its pin, each once, affecting that recipe.
#[test]
fn dynamos_vllm_worker_is_checked_against_the_vllm_target() {
    let r = demo();
    let worker = "components/src/dynamo/vllm/args.py";
    let attr = one(&r, "EA203", "AsyncEngineArgs.calculate_kv_scales");
    assert_eq!((attr.location.path.as_str(), attr.location.line), (worker, 29));
    assert!(attr.message().contains("at vLLM v0.9.0 (Dynamo 0.2.0"), "{}", attr.message());
    assert_eq!(attr.affects.iter().map(|a| a.path.as_str()).collect::<Vec<_>>(), [VLLM_RECIPE]);
    let guarded = one(&r, "EA204", "vllm.utils.FlexibleArgumentParser");
    assert!(guarded.message().contains("falls back to `from vllm.utils.argparse_utils import FlexibleArgumentParser`"));
    let pin = one(&r, "EA205", "vllm");
    assert!(pin.message().contains("`vllm[flashinfer]==0.8.0`") && pin.message().contains("vLLM target 0.9.0"), "{}", pin.message());
    // The SGLang link is not asked of this Dynamo: no SGLang recipe installs 0.2.0.
    assert!(r.findings.iter().all(|f| !f.message().contains("(Dynamo 0.2.0, `from sglang")), "only the vLLM worker of 0.2.0 is checked");
}

/// `engine-audit demo`, the README's first command: its banner names the three
/// bumps, then comes the report committed as `reports/report.txt`, whose
/// summary line the README quotes.
#[test]
fn the_demo_command_prints_the_committed_report_and_the_readme_quotes_it() {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("demo")
        .env("NO_COLOR", "1")
        .env("ENGINE_AUDIT_NO_CACHE", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (banner, report) = stdout.split_once("\n\n").unwrap();
    assert!(
        banner.starts_with(
            "engine-audit demo: mini SGLang v1.0.0, v1.1.0, v1.2.0, mini vLLM v0.8.0, v0.9.0, mini ATOM v0.1.0, v0.2.0, mini TensorRT-LLM v1.2.0, v1.3.0 and mini Dynamo v0.1.0, v0.2.0 built in "
        ) && banner.ends_with(
            "for the SGLang bump to v1.1.0, the vLLM bump to v0.9.0, the ATOM bump to v0.2.0 and the TensorRT-LLM bump to v1.3.0 (Dynamo stays where each recipe pins it)."
        ),
        "{banner}"
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(report, std::fs::read_to_string(root.join("reports/report.txt")).unwrap(), "UPDATE_REPORTS=1 cargo test --test it reports");
    let summary = report.trim_end().lines().last().unwrap();
    assert!(summary.contains("sglang v1.0.0 → v1.1.0; vllm v0.8.0 → v0.9.0; atom v0.1.0 → v0.2.0"), "{summary}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains(&format!("\n    {summary}\n")), "README.md does not quote the demo's summary: {summary}");
}

#[test]
fn the_report_is_deterministic() {
    let a = serde_json::to_string(&demo().findings).unwrap();
    let b = serde_json::to_string(&demo().findings).unwrap();
    assert_eq!(a, b);
}

/// `audit` with no paths finds `.engine-audit.yaml` from the working
/// directory, up to the git top level, and audits its `recipe_roots`; a config
/// above the repository is not the repository's.
#[test]
fn audit_without_paths_finds_the_config_from_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(&dir.path().join("demo")).unwrap();
    let repo = dir.path().join("recipes-repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let recipes = repo.join("recipes");
    std::fs::create_dir_all(&recipes).unwrap();
    let from = ws.recipes.join("benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml");
    std::fs::copy(&from, recipes.join("r.yaml")).unwrap();
    let config =
        format!("sglang: {}\ndynamo: {}\nrecipe_roots: [recipes]\nfail_on: never\n", ws.sglang_repo.display(), ws.dynamo_repo.display());
    std::fs::write(repo.join(".engine-audit.yaml"), config).unwrap();
    // Above the repository: would make the run fail on info.
    std::fs::write(dir.path().join(".engine-audit.yaml"), "fail_on: info\n").unwrap();
    let audit = |cwd: &std::path::Path| {
        assert_cmd::Command::cargo_bin("engine-audit")
            .unwrap()
            .current_dir(cwd)
            .args(["audit", "--offline", "--format", "json", "--no-cache"])
            .output()
            .unwrap()
    };
    let sub = recipes.join("deeper");
    std::fs::create_dir_all(&sub).unwrap();
    let out = audit(&sub);
    assert_eq!(out.status.code(), Some(0), "the repo's config (fail_on: never): {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["deployments_audited"], 1, "its recipe_roots, with its engines");
    assert!(!report["findings"].as_array().unwrap().is_empty());

    // Without the repo's config, the one above the repository is not used: nothing to audit.
    std::fs::remove_file(repo.join(".engine-audit.yaml")).unwrap();
    let out = audit(&sub);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to audit"), "{}", String::from_utf8_lossy(&out.stderr));
}
