//! Every command on vLLM input, end to end on the demo's mini vLLM (v0.8.0 →
//! v0.9.0, `fixtures/demo/vllm`, shaped like upstream's `cli_args.py`,
//! `arg_utils.py` and `envs.py`): `surface`, `diff`, `show`, `audit` in each
//! report format, `--fix`, `pr` and `rules`. The demo audit itself is
//! `demo_audit.rs`; the fact cache, `fact_cache.rs`; the real releases,
//! `vllm_recipes.rs` and `oracle_vllm.rs`.

use super::cli_run::{run, run_with, text};
use super::pr::{bump_branch, demo_recipes, findings, json, pr};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

const RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/qwen-mini/qwen-mini-vllm-disagg.yaml";
const SCRIPT: &str = "benchmarks/launch-vllm.sh";

/// `surface --vllm <demo vllm.git> --at REF --offline` plus `extra`.
fn surface(vllm: &Path, at: &str, extra: &[&str]) -> Output {
    run_with(vec!["surface".as_ref(), "--vllm".as_ref(), vllm.as_os_str(), "--at".as_ref(), at.as_ref(), "--offline".as_ref()], extra)
}

/// `audit PATHS --vllm <demo vllm.git> --to v0.9.0 --offline` plus `extra`.
fn audit(vllm: &Path, paths: &[&Path], extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec!["audit".as_ref()];
    args.extend(paths.iter().map(|p| p.as_os_str()));
    args.extend(["--vllm".as_ref(), vllm.as_os_str(), "--to".as_ref(), "v0.9.0".as_ref(), "--offline".as_ref()]);
    run_with(args, extra)
}

#[test]
fn surface_reads_the_mini_vllm_as_its_parser_builds_it() {
    let (_dir, ws, _) = demo_recipes();
    let out = surface(&ws.vllm_repo, "v0.9.0", &["--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out);
    assert_eq!((s["engine"].as_str(), s["package_root"].as_str()), (Some("vllm"), Some("vllm")));
    assert_eq!(s["version"], "0.9.0", "from the wheel's generated _version.py");
    let flag =
        |name: &str| s["flags"].as_array().unwrap().iter().find(|f| f["names"].as_array().unwrap().iter().any(|n| n == name)).cloned();
    // Generated from `get_kwargs(CacheConfig)`: the default from the dataclass field.
    assert_eq!(flag("--gpu-memory-utilization").unwrap()["default"], 0.92);
    assert_eq!(flag("-tp").unwrap()["dest"], "tensor_parallel_size");
    // The help-text deprecation, with the successor it names.
    let renamed = flag("--log-config-file").unwrap();
    assert_eq!(renamed["deprecated"]["kind"], "announced");
    assert_eq!(renamed["deprecated"]["replacement"], "--logging-config.pylogging_config_file");
    assert_eq!(flag("--mamba-cache-mode").unwrap()["deprecated"]["kind"], "noop");
    assert!(flag("--calculate-kv-scales").is_none(), "removed at v0.9.0");
    // Serve-only options are not the engine-only parser's (Dynamo's worker).
    assert_eq!(
        (flag("--host").unwrap()["engine_parser"].as_bool(), flag("--model").unwrap()["engine_parser"].as_bool()),
        (Some(false), Some(true))
    );
    // FlexibleArgumentParser's rewrites, read from its parse_args.
    assert_eq!(
        (s["parser"]["rewrites"]["underscores"].as_bool(), s["parser"]["rewrites"]["dotted_keys"].as_bool()),
        (Some(true), Some(true))
    );
    let env: Vec<&str> = s["env"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert!(env.contains(&"VLLM_ENGINE_READY_TIMEOUT_S") && !env.contains(&"VLLM_USE_V2_MODEL_RUNNER"), "{env:?}");

    // The release before: the flag still there, announced as going, nothing named instead.
    let old = json(&surface(&ws.vllm_repo, "v0.8.0", &["--format", "json"]));
    let scales = old["flags"].as_array().unwrap().iter().find(|f| f["names"][0] == "--calculate-kv-scales").unwrap();
    assert_eq!((scales["deprecated"]["kind"].as_str(), scales["deprecated"]["replacement"].as_str()), (Some("announced"), None));
    // The text listing says the same.
    let listing = text(&surface(&ws.vllm_repo, "v0.9.0", &["--format", "text"]));
    assert!(listing.starts_with("vllm @ v0.9.0 (") && listing.contains("version 0.9.0"), "{listing}");
    assert!(listing.contains("--log-config-file (dest log_config_file, DeprecatedLogConfigFileAction)  [deprecated Announced -> --logging-config.pylogging_config_file]"), "{listing}");
}

#[test]
fn diff_names_each_change_between_the_mini_releases() {
    let (_dir, ws, _) = demo_recipes();
    let args = |format: &'static str| -> Vec<&OsStr> {
        vec![
            "diff".as_ref(),
            "--vllm".as_ref(),
            ws.vllm_repo.as_os_str(),
            "--from".as_ref(),
            "v0.8.0".as_ref(),
            "--to".as_ref(),
            "v0.9.0".as_ref(),
            "--offline".as_ref(),
            "--format".as_ref(),
            format.as_ref(),
        ]
    };
    let d = json(&run(&args("json")));
    let names = |key: &str| -> Vec<String> {
        d[key].as_array().unwrap().iter().map(|f| f["flag"].as_str().or(f["name"].as_str()).unwrap_or_default().to_string()).collect()
    };
    assert_eq!(names("flags_removed"), ["--calculate-kv-scales"]);
    assert!(names("flags_added").contains(&"--logging-config".to_string()));
    let listing = text(&run(&args("text")));
    for line in [
        "vllm v0.8.0 -> v0.9.0",
        "  --calculate-kv-scales (vllm/engine/arg_utils.py:50)",
        "  --log-config-file Announced → --logging-config.pylogging_config_file",
        "  --mamba-cache-mode Noop",
        "  --kv-cache-dtype: +[] -[\"fp8_e5m2\"]",
        "  --gpu-memory-utilization: 0.9 → 0.92",
        "  VLLM_USE_V2_MODEL_RUNNER",
        "  VLLM_ENGINE_READY_TIMEOUT_S: 600 → 1200",
    ] {
        assert!(listing.lines().any(|l| l == line), "missing {line:?}:\n{listing}");
    }
    assert!(text(&run(&args("markdown"))).contains("--log-config-file"));
}

#[test]
fn show_reads_vllm_launches_as_their_parser_reads_them() {
    let (_dir, _ws, root) = demo_recipes();
    let show = |path: &str| json(&run(&["show".as_ref(), root.join(path).as_os_str(), "--format".as_ref(), "json".as_ref()]));
    let script = show(SCRIPT);
    let dep = &script["files"][0]["deployments"][0];
    assert_eq!((dep["engine"].as_str(), dep["roles"][0]["role"].as_str()), (Some("vllm"), Some("serve")));
    let words: Vec<&str> = dep["roles"][0]["argv"].as_array().unwrap().iter().map(|w| w["text"].as_str().unwrap()).collect();
    // The positional model is the launcher's, not a flag; vLLM's spellings stay as written.
    assert_eq!(words[..2], ["--host", "0.0.0.0"]);
    assert!(words.contains(&"--max_num_seqs") && words.contains(&"-tp"), "{words:?}");
    assert_eq!(dep["common_env"][0]["name"], "VLLM_USE_V2_MODEL_RUNNER");

    let recipe = show(RECIPE);
    let dep = &recipe["files"][0]["deployments"][0];
    assert_eq!(dep["engine"], "vllm");
    let roles: Vec<&str> = dep["roles"].as_array().unwrap().iter().map(|r| r["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["prefill", "decode"]);
    let listing = text(&run(&["show".as_ref(), root.join(RECIPE).as_os_str()]));
    assert!(
        listing.contains("qwen-mini-vllm-disagg (vllm)") && listing.contains("prefill: --log-config-file /etc/vllm/logging.json"),
        "{listing}"
    );
}

/// `--fix` on vLLM recipes: the alias renamed (to FlexibleArgumentParser's
/// dotted key) in YAML and in the script, the no-op deleted from YAML; the
/// audit that follows has neither left, and the renamed key is read as a
/// piece of `--logging-config`.
#[test]
fn fix_renames_and_removes_vllm_flags() {
    let (_dir, ws, root) = demo_recipes();
    let paths = [root.join(RECIPE), root.join(SCRIPT)];
    let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    let before = json(&audit(&ws.vllm_repo, &paths, &["--format", "json"]));
    let codes = |r: &serde_json::Value| -> Vec<(String, String, bool)> {
        let code = |f: &serde_json::Value, key: &str| f[key].as_str().unwrap().to_string();
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (code(f, "code"), code(f, "subject"), code(f, "recipe").ends_with(".yaml")))
            .collect()
    };
    assert!(codes(&before).contains(&("EA003".into(), "log-config-file".into(), true)));
    assert!(codes(&before).contains(&("EA004".into(), "mamba-cache-mode".into(), true)));

    let out = audit(&ws.vllm_repo, &paths, &["--fix", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "errors remain: {}", String::from_utf8_lossy(&out.stderr));
    let yaml = std::fs::read_to_string(root.join(RECIPE)).unwrap();
    assert!(yaml.contains("      logging-config.pylogging_config_file: /etc/vllm/logging.json\n"), "{yaml}");
    assert!(!yaml.contains("mamba-cache-mode") && !yaml.contains("log-config-file"), "{yaml}");
    let script = std::fs::read_to_string(root.join(SCRIPT)).unwrap();
    assert!(script.contains("  --logging-config.pylogging_config_file /etc/vllm/logging.json\n"), "{script}");

    let after = codes(&json(&audit(&ws.vllm_repo, &paths, &["--format", "json"])));
    assert!(!after.iter().any(|(c, ..)| c == "EA003"), "{after:?}");
    assert!(!after.iter().any(|(c, _, yaml)| c == "EA004" && *yaml), "{after:?}");
    assert!(!after.iter().any(|(_, s, _)| s.contains("logging-config")), "the dotted key is read: {after:?}");
    // What no fix can do stays reported: the removed flag, the bad choice.
    assert!(after.contains(&("EA001".into(), "calculate-kv-scales".into(), false)), "{after:?}");
    assert!(after.contains(&("EA005".into(), "kv-cache-dtype".into(), false)), "{after:?}");
}

/// Every report format on a vLLM-only audit: the same findings, each where
/// the format puts them.
#[test]
fn every_report_format_carries_the_vllm_findings() {
    let (dir, ws, root) = demo_recipes();
    let out_dir = dir.path().join("out");
    let recipe = root.join(RECIPE);
    let out = audit(
        &ws.vllm_repo,
        &[&recipe],
        &["--format", "text,json,sarif,github,markdown", "--output-dir", out_dir.to_str().unwrap(), "--lang", "en+zh"],
    );
    assert_eq!(out.status.code(), Some(0), "warnings only: {}", String::from_utf8_lossy(&out.stderr));
    let read = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap();
    let stdout = text(&out);
    assert!(stdout.contains("EA003 deprecated-alias [prefill]") && stdout.contains("evidence: vllm/engine/arg_utils.py:"), "{stdout}");
    assert_eq!(stdout, read("report.txt"));
    let report: serde_json::Value = serde_json::from_str(&read("report.json")).unwrap();
    assert_eq!(report["bumps"][0]["engine"], "vllm");
    assert_eq!((report["bumps"][0]["from"].as_str(), report["bumps"][0]["to"].as_str()), (Some("v0.8.0"), Some("v0.9.0")));
    let sarif: serde_json::Value = serde_json::from_str(&read("report.sarif")).unwrap();
    let alias = sarif["runs"][0]["results"].as_array().unwrap().iter().find(|r| r["ruleId"] == "EA003").unwrap();
    assert_eq!(
        alias["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"],
        "logging-config.pylogging_config_file"
    );
    assert!(sarif["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().iter().any(|r| r["id"] == "R004"));
    let github = read("report.github.txt");
    assert!(
        github
            .lines()
            .any(|l| l.starts_with("::warning file=") && l.contains("qwen-mini-vllm-disagg.yaml,line=25,") && l.contains("title=EA003 ")),
        "{github}"
    );
    let md = read("report.md");
    assert!(md.starts_with("**vLLM flag audit (v0.8.0 → v0.9.0):**"), "{md}");
    assert!(!md.contains("SGLang") && md.contains("**vLLM 参数审计"), "{md}");
    assert!(!md.contains("Dynamo"), "no Dynamo is installed by the recipe: {md}");
}

/// A PR that bumps a vLLM recipe's image: audited from the base image's
/// release to the head's, the unchanged vLLM script left alone.
#[test]
fn pr_audits_a_vllm_image_bump() {
    let (_dir, ws, root) = demo_recipes();
    bump_branch(&root, &[(RECIPE, "example/vllm-openai:v0.8.0", "example/vllm-openai:v0.9.0")]);
    let out = pr(&root, "main", "bump", &["--vllm".as_ref(), ws.vllm_repo.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "warnings only: {}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let bump = &report["bumps"][0];
    assert_eq!((bump["engine"].as_str(), bump["from"].as_str(), bump["to"].as_str()), (Some("vllm"), Some("v0.8.0"), Some("v0.9.0")));
    let found = findings(&report);
    for (code, subject) in [
        ("EA003", "log-config-file"),
        ("EA004", "mamba-cache-mode"),
        ("EA101", "VLLM_USE_V2_MODEL_RUNNER"),
        ("EA007", "gpu-memory-utilization"),
        ("R004", "VLLM_PREFIX_CACHE_RETENTION_INTERVAL"),
    ] {
        assert!(found.iter().any(|f| f.0 == code && f.1 == RECIPE && f.2 == subject), "{code} {subject}: {found:#?}");
    }
    assert!(found.iter().all(|f| f.1 == RECIPE), "only the changed recipe: {found:#?}");
}

/// `rules test` runs a rule about vLLM against vLLM-shaped fixtures (and,
/// with a corpus, against `vllm.git`'s tags), and `rules list` names it.
#[test]
fn rules_about_vllm_are_listed_and_self_tested() {
    let out =
        assert_cmd::Command::cargo_bin("engine-audit").unwrap().args(["rules", "test"]).env_remove("ENGINE_AUDIT_CORPUS").output().unwrap();
    assert!(out.status.success(), "{}{}", text(&out), String::from_utf8_lossy(&out.stderr));
    let listing = text(&out);
    for line in [
        "R004 role-env-without-the-flag @ fixture:r004/config-field: reported [1 hit(s)]",
        "R004 the-release-still-reads-the-variable @ fixture:r004/env-only: validated [0 hit(s)]",
        "R004 the-release-still-reads-the-variable @ fixture:r004/both-read: validated [0 hit(s)]",
    ] {
        assert!(listing.lines().any(|l| l == line), "missing {line:?}:\n{listing}");
    }
    assert!(text(&run(&["rules".as_ref(), "list".as_ref()]))
        .lines()
        .any(|l| l.starts_with("R004  warning  prefix-cache-retention-env-became-a-flag")));
    // Its page and its record name the engine it is about.
    assert!(text(&run(&["rules".as_ref(), "explain".as_ref(), "R004".as_ref()]))
        .contains("severity: warning · engine: vllm · file: rules/R004-"));
    let listed = json(&run(&["rules".as_ref(), "list".as_ref(), "--format".as_ref(), "json".as_ref()]));
    let engines: Vec<(&str, &str)> =
        listed.as_array().unwrap().iter().map(|r| (r["id"].as_str().unwrap(), r["engine"].as_str().unwrap())).collect();
    assert!(engines.contains(&("R004", "vllm")) && engines.contains(&("R001", "sglang")), "{engines:?}");
}

/// SGLang and vLLM recipes in one run: `--to` is SGLang's, `--vllm-to`
/// vLLM's, and each is said by its own flag; a vLLM recipe with no vLLM
/// source says that, not that it lacks a ref.
#[test]
fn one_run_bumps_each_engine_to_its_own_target() {
    let (_dir, ws, root) = demo_recipes();
    let engines = |vllm: bool| -> Vec<&OsStr> {
        let mut args: Vec<&OsStr> = vec!["audit".as_ref(), root.as_os_str(), "--sglang".as_ref(), ws.sglang_repo.as_os_str()];
        if vllm {
            args.extend(["--vllm".as_ref(), ws.vllm_repo.as_os_str()]);
        }
        args
    };
    let report = json(&run_with(engines(true), &["--to", "v1.1.0", "--vllm-to", "v0.9.0", "--offline", "--format", "json"]));
    let bumps: Vec<(String, String, String)> = report["bumps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["engine"].as_str().unwrap().into(), b["to"].as_str().unwrap().into(), b["how"][0].as_str().unwrap().into()))
        .collect();
    assert!(bumps.contains(&("sglang".into(), "v1.1.0".into(), "--to".into())), "{bumps:?}");
    assert!(bumps.contains(&("vllm".into(), "v0.9.0".into(), "--vllm-to".into())), "{bumps:?}");
    // Without --vllm-to, --to names a release of each engine given: refused, saying how to name vLLM's.
    let both = run_with(engines(true), &["--to", "v1.1.0", "--offline"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("--vllm-from/--vllm-to"), "{}", String::from_utf8_lossy(&both.stderr));
    let unknown = run_with(engines(true), &["--to", "v1.1.0", "--vllm-to", "v9.9", "--offline"]);
    assert!(unknown.status.code() == Some(2) && String::from_utf8_lossy(&unknown.stderr).contains("--vllm-to v9.9"));
    // No vLLM source: its recipes are named as not audited, for that reason.
    let report = json(&run_with(engines(false), &["--to", "v1.1.0", "--offline", "--format", "json", "--fail-on", "never"]));
    let notes: Vec<&str> = report["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.ends_with("qwen-mini-vllm-disagg: no vLLM source given (--vllm PATH|URL, or `vllm:` in .engine-audit.yaml)")),
        "{notes:?}"
    );
    let not_audited: Vec<(&str, &str, &str)> = report["coverage"]["not_audited"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["deployment"].as_str().unwrap(), n["engine"].as_str().unwrap(), n["reason"].as_str().unwrap()))
        .collect();
    assert!(not_audited.contains(&("qwen-mini-vllm-disagg", "vllm", "no vLLM source given")), "{not_audited:?}");
    // ... and they fail the run unless acknowledged: what was not read is not clean.
    let gated = run_with(engines(false), &["--to", "v1.1.0", "--offline"]);
    assert_eq!(gated.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&gated.stderr);
    assert!(stderr.contains("not audited") && stderr.contains("--allow-unaudited vllm"), "{stderr}");
}

/// `AITER_*` set beside vLLM's own variables (as InferenceX's AMD scripts do)
/// belong to the aiter library: a note says they are not checked, once per
/// place written; no finding judges them. The same holds for SGLang's.
#[test]
fn aiter_variables_beside_vllm_and_sglang_are_said_not_checked() {
    let (dir, ws, _) = demo_recipes();
    let script = dir.path().join("serve_rocm.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\nexport AITER_LOG_LEVEL=ERROR\nexport VLLM_USE_V2_MODEL_RUNNER=1\nvllm serve /models/m --port 8000 -tp 8\n",
    )
    .unwrap();
    let report = json(&audit(&ws.vllm_repo, &[&script], &["--format", "json"]));
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    let notes = report["notes"].to_string();
    assert!(notes.contains("serve_rocm.sh:2:8: `AITER_LOG_LEVEL` not checked (aiter)"), "{notes}");
    assert!(!report["findings"].to_string().contains("AITER_"), "{report:#}");

    let script = dir.path().join("serve_sglang_rocm.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\nexport AITER_BF16_FP8_MOE_BOUND=0\npython3 -m sglang.launch_server --model-path /models/m --tp 8\n",
    )
    .unwrap();
    let out = run_with(
        vec!["audit".as_ref(), script.as_os_str(), "--sglang".as_ref(), ws.sglang_repo.as_os_str(), "--to".as_ref(), "v1.1.0".as_ref()],
        &["--offline", "--format", "json"],
    );
    let report = json(&out);
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    assert!(report["notes"].to_string().contains("`AITER_BF16_FP8_MOE_BOUND` not checked (aiter)"), "{report:#}");
}
