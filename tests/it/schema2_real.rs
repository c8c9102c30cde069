//! The real schema-2 recipes (`../shared/recipes-v2`), read completely: per
//! variant and role, the flags and env vars the reader gives are exactly the
//! keys under that role's `args` / `env` (plus the flags of `extra_args`; a
//! nested TRT-LLM key counts through its top-level key), after the bundle's
//! merge. The expectation is computed here with another YAML library and a
//! merge of its own, so the reader is not checked against itself. Skipped,
//! saying so, when the folder is absent.

use super::real_data::shared;
use serde_yaml_ng::{Mapping, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// srtctl's deep merge: maps merge, anything else replaces, `null` deletes.
fn merge(base: &Value, over: &Value) -> Value {
    let (Value::Mapping(b), Value::Mapping(o)) = (base, over) else { return over.clone() };
    let mut out = b.clone();
    for (k, v) in o {
        if v.is_null() {
            out.remove(k);
        } else if let (Some(old @ Value::Mapping(_)), Value::Mapping(_)) = (b.get(k), v) {
            out.insert(k.clone(), merge(old, v));
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Mapping(out)
}

/// Point `i` of a zip override: every list is an axis (length 1 broadcasts).
fn zip_point(over: &Value, i: usize) -> Value {
    match over {
        Value::Mapping(m) => Value::Mapping(m.iter().map(|(k, v)| (k.clone(), zip_point(v, i))).collect::<Mapping>()),
        Value::Sequence(items) if items.len() == 1 => items[0].clone(),
        Value::Sequence(items) => items[i].clone(),
        other => other.clone(),
    }
}

fn zip_len(over: &Value) -> usize {
    match over {
        Value::Mapping(m) => m.values().map(zip_len).max().unwrap_or(1),
        Value::Sequence(items) => items.len(),
        _ => 1,
    }
}

/// (selector, merged recipe) for each variant srtctl would run.
fn variants(root: &Value) -> Vec<(Option<String>, Value)> {
    let Some(base) = root.get("base") else { return vec![(None, root.clone())] };
    let mut keys: Vec<&str> = root.as_mapping().unwrap().keys().filter_map(Value::as_str).collect();
    keys.sort();
    let mut out = Vec::new();
    for key in keys.iter().filter(|k| k.starts_with("override_")) {
        out.push((Some(key.to_string()), merge(base, &root[*key])));
    }
    for key in keys.iter().filter(|k| k.starts_with("zip_override_")) {
        for i in 0..zip_len(&root[*key]) {
            out.push((Some(format!("{key}[{i}]")), merge(base, &zip_point(&root[*key], i))));
        }
    }
    out
}

type Names = (BTreeSet<String>, BTreeSet<String>);

fn normal(flag: &str) -> String {
    flag.trim_start_matches('-').split('=').next().unwrap().replace('_', "-")
}

/// The flags and env names per (variant, role), as written.
fn expected(root: &Value) -> BTreeMap<(Option<String>, String), Names> {
    let mut out = BTreeMap::new();
    for (variant, recipe) in variants(root) {
        for (role, spec) in recipe.get("roles").and_then(Value::as_mapping).into_iter().flatten() {
            let mut flags: BTreeSet<String> =
                spec.get("args").and_then(Value::as_mapping).into_iter().flatten().filter_map(|(k, _)| k.as_str()).map(normal).collect();
            let words = spec.get("extra_args").and_then(Value::as_sequence).into_iter().flatten().filter_map(Value::as_str);
            flags.extend(words.filter(|w| w.starts_with('-')).map(normal));
            let env = spec
                .get("env")
                .and_then(Value::as_mapping)
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| k.as_str().map(str::to_string))
                .collect();
            out.insert((variant.clone(), role.as_str().unwrap().to_string()), (flags, env));
        }
    }
    out
}

/// What the reader gives, per (variant, role), across the deployments it split the variant into.
fn read(path: &Path) -> BTreeMap<(Option<String>, String), Names> {
    let file = engine_audit::recipe::load_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out: BTreeMap<(Option<String>, String), Names> = BTreeMap::new();
    for dep in &file.deployments {
        for role in &dep.roles {
            let entry = out.entry((dep.variant.clone(), role.role.clone())).or_default();
            entry.0.extend(role.flag_uses(|_| false).iter().map(|f| normal(&f.name)));
            // An engine that reads its args as a YAML file (TRT-LLM): the top-level keys.
            entry.0.extend(role.config.iter().filter(|c| c.depth == 1).map(|c| normal(&c.path)));
            entry.1.extend(role.env.iter().map(|e| e.name.clone()));
        }
    }
    out
}

#[test]
fn every_real_schema_2_recipe_is_read_completely() {
    let root = shared().join("recipes-v2/benchmarks");
    if !root.is_dir() {
        eprintln!("{} is absent: every_real_schema_2_recipe_is_read_completely is skipped", root.display());
        return;
    }
    let mut files = Vec::new();
    yaml_files(&root, &mut files);
    files.sort();
    let (mut recipes, mut bundles, mut variants_seen, mut roles, mut flags, mut env) = (0, 0, 0, 0, 0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let root: Value = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if root.get("base").is_some() {
            bundles += 1;
        }
        recipes += 1;
        let want = expected(&root);
        let got = read(path);
        assert!(!want.is_empty(), "{}: no role at all", path.display());
        assert_eq!(got, want, "{}", path.display());
        variants_seen += want.keys().map(|(v, _)| v).collect::<BTreeSet<_>>().len();
        roles += want.len();
        flags += want.values().map(|(f, _)| f.len()).sum::<usize>();
        env += want.values().map(|(_, e)| e.len()).sum::<usize>();
    }
    eprintln!("recipes-v2: {recipes} recipes ({bundles} bundles), {variants_seen} variants, {roles} roles, {flags} flags, {env} env vars, all read");
    assert!(recipes >= 160, "{recipes}");
}

/// `audit <paths> --format json` on the real corpus, with `args`.
fn audit_real(args: &[&std::ffi::OsStr]) -> (i32, serde_json::Value) {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .args(args)
        .args(["--offline", "--no-cache", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap(), serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}")))
}

fn found(report: &serde_json::Value, code: &str) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| (f["recipe"].as_str().unwrap().rsplit('/').next().unwrap().to_string(), f["subject"].as_str().unwrap().to_string()))
        .collect()
}

/// The seed family in today's form: the `dsr1/sglang/b200-fp4/8k1k` schema-2
/// recipes bumped to v0.5.19 with Dynamo v1.3.0.post1 → v1.5.0 give R001 on
/// the eight plain recipes that pin `fp4-gemm-backend: flashinfer_trtllm`,
/// EA003 for `cuda-graph-max-bs`, EA102 for the inverted env var and EA203
/// `get_model_config`; the single-node bundle bumped v0.5.16 → v0.5.19 exits
/// 0 with its two deprecated aliases named at every zipped point.
#[test]
fn the_seed_scenario_on_schema_2() {
    let Some(corpus) = super::real_data::corpus(module_path!()) else { return };
    let family = shared().join("recipes-v2/benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/b200-fp4/8k1k");
    if !family.is_dir() {
        eprintln!("{} is absent: the_seed_scenario_on_schema_2 is skipped", family.display());
        return;
    }
    let (sglang, dynamo) = (corpus.join("sglang.git"), corpus.join("dynamo.git"));
    let args: Vec<&std::ffi::OsStr> = vec![
        family.as_os_str(),
        "--sglang".as_ref(),
        sglang.as_os_str(),
        "--dynamo".as_ref(),
        dynamo.as_os_str(),
        "--to".as_ref(),
        "v0.5.19".as_ref(),
        "--dynamo-from".as_ref(),
        "v1.3.0.post1".as_ref(),
        "--dynamo-to".as_ref(),
        "v1.5.0".as_ref(),
    ];
    let (code, report) = audit_real(&args);
    assert_eq!(code, 1);
    let r001: BTreeSet<String> =
        found(&report, "R001").into_iter().map(|(file, _)| file).filter(|f| f.starts_with("disagg-") && !f.contains("variants")).collect();
    assert_eq!(r001.len(), 8, "R001 on the eight plain recipes that pin flashinfer_trtllm: {r001:?}");
    assert!(!r001.contains("disagg-mtp-4p1d-c2048.yaml"), "the ninth pins no FP4 GEMM backend");
    assert!(found(&report, "EA003").iter().any(|(_, s)| s == "cuda-graph-max-bs"));
    assert!(found(&report, "EA102").iter().any(|(_, s)| s == "SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK"));
    assert!(found(&report, "EA203").iter().any(|(_, s)| s == "ServerArgs.get_model_config"));
    let coverage = &report["coverage"];
    assert_eq!(coverage["deployments"], coverage["audited"], "{coverage}");

    let bundle = shared().join("recipes-v2/benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b200-fp4/8k1k.yaml");
    let args: Vec<&std::ffi::OsStr> = vec![
        bundle.as_os_str(),
        "--sglang".as_ref(),
        sglang.as_os_str(),
        "--from".as_ref(),
        "v0.5.16".as_ref(),
        "--to".as_ref(),
        "v0.5.19".as_ref(),
    ];
    let (code, report) = audit_real(&args);
    assert_eq!(code, 0, "{}", report["findings"]);
    let points = report["coverage"]["audited"].as_u64().unwrap() as usize;
    assert!(points >= 9, "every zipped point is a deployment: {points}");
    for alias in ["cuda-graph-max-bs", "disable-piecewise-cuda-graph"] {
        assert_eq!(found(&report, "EA003").iter().filter(|(_, s)| s == alias).count(), points, "{alias} at every point");
    }
    assert!(report["findings"].as_array().unwrap().iter().all(|f| f["severity"] != "error"));
}
