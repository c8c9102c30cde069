//! The extracted surface against the real argparse parser and env registry of
//! every SGLang release that has an oracle file.
//!
//! Needs unpacked releases: `ENGINE_AUDIT_SRC=DIR cargo test --test oracle -- --nocapture`
//! reads `DIR/v<V>` (`.ci/run` unpacks every corpus tag there); oracles come from
//! `ENGINE_AUDIT_ORACLE`, default `../shared/oracle` beside the repository. Every
//! `sglang-<V>.json` found there is compared: no release is special-cased.
//! Without `ENGINE_AUDIT_SRC` the tests print a note and pass.

use crate::oracle_support as oracle;

use std::path::{Path, PathBuf};

use engine_audit::extract::cli_flags::extract_flags;
use engine_audit::extract::consts::classes::class_info;
use engine_audit::extract::{extract_surface, Demand, Package};
use engine_audit::source::DirTree;
use engine_audit::surface::{EngineSurface, Flag, FlagDeprecationKind, Known};

/// Every release with an oracle file.
fn oracle_releases() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(oracle_dir())
        .map(|read| {
            read.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    Some(name.strip_prefix("sglang-")?.strip_suffix(".json")?.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn src_root() -> Option<PathBuf> {
    match std::env::var_os("ENGINE_AUDIT_SRC") {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            eprintln!("note: ENGINE_AUDIT_SRC not set; oracle comparison skipped");
            None
        }
    }
}

fn oracle_dir() -> PathBuf {
    std::env::var_os("ENGINE_AUDIT_ORACLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/oracle"))
}

fn release_tree(root: &Path, version: &str) -> DirTree {
    let dir = root.join(format!("v{version}"));
    DirTree::open(&dir).unwrap_or_else(|e| panic!("release {version} must be unpacked at {}: {e}", dir.display()))
}

fn flags_of(root: &Path, version: &str) -> (Vec<Flag>, usize) {
    let tree = release_tree(root, version);
    let pkg = Package::new(&tree, "python/sglang");
    let mut warnings = Vec::new();
    let server = engine_audit::profiles::SGLANG.server.as_ref().unwrap();
    let flags = extract_flags(&pkg, &server.flags, server.resolution.as_ref(), &mut warnings);
    for w in &warnings {
        eprintln!("  warning: {}: {}", w.path, w.message);
    }
    (flags, warnings.len())
}

/// What `engine-audit surface` reports for a release.
fn surface_of(root: &Path, version: &str) -> EngineSurface {
    let tree = release_tree(root, version);
    extract_surface(
        &tree,
        &engine_audit::profiles::SGLANG,
        "python/sglang",
        &format!("v{version}"),
        &Demand::full(&engine_audit::profiles::SGLANG),
    )
}

#[test]
fn surface_matches_the_real_parser_and_registry() {
    let Some(root) = src_root() else { return };
    let releases = oracle_releases();
    assert!(!releases.is_empty(), "no oracle files in {}", oracle_dir().display());
    let mut failures = Vec::new();
    for version in &releases {
        let oracle = oracle::load(&oracle_dir().join(format!("sglang-{version}.json")));
        let surface = surface_of(&root, version);
        let report = oracle::compare_flags(&oracle, &surface.flags);
        println!("{report}");
        let env = oracle::compare_env(&oracle, &surface.env);
        println!("{env}");
        for (name, score) in [("env recall", &env.recall), ("env precision", &env.precision), ("env deprecation", &env.deprecation)] {
            if score.hit != score.total {
                failures.push(format!("{version}: {name} {score}"));
            }
        }
        let exact = [
            ("option recall", &report.options_recall),
            ("option precision", &report.options_precision),
            ("dest", &report.dest),
            ("deprecation", &report.deprecation),
        ];
        for (name, score) in exact {
            if score.hit != score.total {
                failures.push(format!("{version}: {name} {score}"));
            }
        }
        // Issue 26's bar: choices >= 99% and defaults 100%, every miss honestly dynamic.
        for (name, score, bar) in [("choices", &report.choices, 99.0), ("defaults", &report.defaults, 100.0)] {
            if score.pct() < bar || !score.wrong.is_empty() {
                failures.push(format!("{version}: {name} {score} (bar: >= {bar}%, every miss dynamic)"));
            }
        }
    }
    assert!(failures.is_empty(), "below the bar:\n{}", failures.join("\n"));
}

#[test]
fn v0_5_19_facts() {
    let Some(root) = src_root() else { return };
    let (flags, _) = flags_of(&root, "0.5.19");
    let find = |name: &str| flags.iter().find(|f| f.names.iter().any(|n| n == name)).unwrap_or_else(|| panic!("{name} not extracted"));
    let max_bs = find("--cuda-graph-max-bs").deprecated.clone().expect("deprecated");
    assert_eq!(max_bs.kind, FlagDeprecationKind::Alias);
    assert_eq!(max_bs.replacement.as_deref(), Some("--cuda-graph-max-bs-decode"));
    let rr = find("--prefill-round-robin-balance").deprecated.clone().expect("deprecated");
    assert_eq!(rr.kind, FlagDeprecationKind::Noop);
    let fp4 = find("--fp4-gemm-backend");
    assert_eq!(fp4.dest, "fp4_gemm_runner_backend");
    assert_eq!(
        fp4.choices,
        Some(Known::Value(
            ["auto", "flashinfer_cudnn", "flashinfer_cutedsl", "flashinfer_cutlass", "flashinfer_trtllm", "marlin"]
                .iter()
                .map(|s| serde_json::json!(s))
                .collect()
        ))
    );
    assert_eq!(fp4.default, Known::Value(serde_json::json!("auto")));
}

#[test]
fn newest_release_without_oracle_extracts_plausibly() {
    let Some(root) = src_root() else { return };
    let (flags, warnings) = flags_of(&root, "0.5.23");
    let dynamic_choices = flags.iter().filter(|f| matches!(f.choices, Some(Known::Dynamic { .. }))).count();
    let dynamic_defaults = flags.iter().filter(|f| f.default.is_dynamic()).count();
    println!(
        "== sglang 0.5.23: {} flags, {} with choices ({} dynamic), {} dynamic defaults, {} warnings",
        flags.len(),
        flags.iter().filter(|f| f.choices.is_some()).count(),
        dynamic_choices,
        dynamic_defaults,
        warnings
    );
    for f in &flags {
        if let Some(Known::Dynamic { dynamic }) = &f.choices {
            println!("  dynamic choices: {} = `{dynamic}`", f.canonical());
        }
        if let Known::Dynamic { dynamic } = &f.default {
            println!("  dynamic default: {} = `{dynamic}`", f.canonical());
        }
    }
    assert!(flags.len() > 450, "implausibly few flags at 0.5.23: {}", flags.len());
    assert!(flags.iter().any(|f| f.names.iter().any(|n| n == "--model-path")));
    // Choices built by helper functions (`_reasoning_parser_choices()`, the
    // static path past a `sys.modules` test) and defaults read back from the
    // struct (`_declared_default("x")`) fold. `--sampling-backend`'s list is a
    // clean environment's; `token_oracle` joins it only when an env var is on.
    let flag = |name: &str| flags.iter().find(|f| f.names.iter().any(|n| n == name)).unwrap();
    let Some(Known::Value(choices)) = &flag("--reasoning-parser").choices else { panic!("reasoning-parser choices dynamic") };
    assert!(choices.iter().any(|c| c == "deepseek-r1") && choices[0] == "auto", "{choices:?}");
    let sampling = flag("--sampling-backend");
    let Some(Known::Value(choices)) = &sampling.choices else { panic!("sampling-backend choices dynamic") };
    assert!(choices.iter().any(|c| c == "flashinfer") && !choices.iter().any(|c| c == "token_oracle"), "{choices:?}");
    assert_eq!(sampling.choices_when_env.get("SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE"), Some(&vec![serde_json::json!("token_oracle")]));
    assert_eq!(dynamic_defaults, 0);
    assert_eq!(dynamic_choices, 0);
}

#[test]
fn server_args_members_follow_the_release() {
    let Some(root) = src_root() else { return };
    let has_member = |version: &str, member: &str| {
        let tree = release_tree(&root, version);
        let pkg = Package::new(&tree, "python/sglang");
        let info = class_info(&pkg, "sglang.srt.server_args", "ServerArgs").expect("ServerArgs found");
        info.members.iter().any(|m| m.name == member)
    };
    assert!(has_member("0.5.12.post1", "use_mla_backend"));
    assert!(!has_member("0.5.19", "use_mla_backend"));
    assert!(has_member("0.5.19", "tp_size"));
    assert!(has_member("0.5.23", "tp_size"), "fields of the namespace-assembled record");
}

/// The env comparison itself: a slice that says exactly what the oracle says
/// scores 100%, an empty one 0%, and a wrong replacement is caught.
#[test]
fn env_comparison_scores_what_it_is_given() {
    use engine_audit::surface::{EnvDeprecation, EnvDeprecationKind, EnvVar, Evidence};
    let path = oracle_dir().join("sglang-0.5.19.json");
    if !path.exists() {
        eprintln!("note: {} missing; env comparison check skipped", path.display());
        return;
    }
    let oracle = oracle::load(&path);
    let at = Evidence { path: "environ.py".into(), line: 1 };
    let mut env: Vec<EnvVar> = oracle
        .env_vars
        .iter()
        .map(|e| EnvVar {
            name: e["name"].as_str().unwrap().to_string(),
            kind: e["field_class"].as_str().unwrap().to_string(),
            default: Known::Value(e["default"].clone()),
            deprecated: None,
            evidence: at.clone(),
        })
        .collect();
    for (name, (kinds, replacement, transform)) in oracle::expected_env_deprecations(&oracle) {
        let deprecation =
            EnvDeprecation { kind: kinds[0], replacement: replacement.flatten(), transform: transform.flatten(), message: None };
        // Some registry fields are deprecated and still registered.
        match env.iter_mut().find(|e| e.name == name) {
            Some(registered) => registered.deprecated = Some(deprecation),
            None => env.push(EnvVar {
                name,
                kind: "deprecated".into(),
                default: Known::Value(serde_json::Value::Null),
                deprecated: Some(deprecation),
                evidence: at.clone(),
            }),
        }
    }
    let full = oracle::compare_env(&oracle, &env);
    println!("{full}");
    assert_eq!((full.recall.pct(), full.precision.pct(), full.deprecation.pct()), (100.0, 100.0, 100.0));

    let renamed = env.iter_mut().find(|e| e.deprecated.as_ref().is_some_and(|d| d.kind == EnvDeprecationKind::Renamed)).unwrap();
    renamed.deprecated.as_mut().unwrap().replacement = Some("SGLANG_SOMETHING_ELSE".into());
    assert_eq!(oracle::compare_env(&oracle, &env).deprecation.wrong.len(), 1);

    let empty = oracle::compare_env(&oracle, &[]);
    assert_eq!(empty.recall.hit, 0);
    assert!(empty.recall.total > 500);
}
