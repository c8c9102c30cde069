//! A legacy (v1) recipe and its schema-2 rewrite give the same findings: the
//! same codes, subjects and roles. The rewrite is made here, at test time, by
//! srt-slurm's key-by-key table (`docs/legacy-v1.md`): `backend.type` →
//! `engine`, `backend.<engine>_config.<mode>` → `roles.<role>.args`,
//! `backend.<mode>_environment` → `roles.<role>.env`, `<mode>_extra_args` →
//! `roles.<role>.extra_args`, `dynamo.{version,wheel,hash}` →
//! `dynamo.source.{pypi,wheel,rev}`, the aggregated mode → the `agg` role.
//! On the project's own v1 fixtures against the demo engines, and on the real
//! v1 SGLang recipes against the corpus when both are present. No rewritten
//! recipe is committed.

use super::real_data::{corpus, shared};
use serde_yaml_ng::{Mapping, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const MODES: [(&str, &str); 3] = [("prefill", "prefill"), ("decode", "decode"), ("aggregated", "agg")];

fn key(s: &str) -> Value {
    Value::String(s.to_string())
}

/// One recipe map (a whole recipe, a bundle's `base` or one of its overrides) in schema 2.
fn rewrite_map(v1: &Mapping) -> Mapping {
    let mut out = Mapping::new();
    let mut roles = Mapping::new();
    let role = |roles: &mut Mapping, name: &str, field: &str, value: Value| {
        let entry = roles.entry(key(name)).or_insert_with(|| Value::Mapping(Mapping::new()));
        entry.as_mapping_mut().unwrap().insert(key(field), value);
    };
    for (k, v) in v1 {
        match k.as_str() {
            Some("backend") => {
                let Some(backend) = v.as_mapping() else { continue };
                let engine = backend.get("type").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| {
                    backend.keys().filter_map(Value::as_str).find_map(|k| k.strip_suffix("_config")).unwrap_or("sglang").to_string()
                });
                if backend.contains_key("type") {
                    out.insert(key("engine"), key(&engine));
                }
                for (bk, bv) in backend {
                    let bk = bk.as_str().unwrap_or_default();
                    if bk == format!("{engine}_config") {
                        for (mode, args) in bv.as_mapping().into_iter().flatten() {
                            let name = MODES.iter().find(|(m, _)| Some(*m) == mode.as_str()).map_or(mode.as_str().unwrap(), |(_, r)| *r);
                            role(&mut roles, name, "args", args.clone());
                        }
                    }
                    for (mode, name) in MODES {
                        if bk == format!("{mode}_environment") {
                            role(&mut roles, name, "env", bv.clone());
                        }
                        if bk == format!("{mode}_extra_args") {
                            role(&mut roles, name, "extra_args", bv.clone());
                        }
                    }
                }
            }
            Some("dynamo") => {
                let mut dynamo = Mapping::new();
                let mut source = Mapping::new();
                for (dk, dv) in v.as_mapping().into_iter().flatten() {
                    match dk.as_str() {
                        Some("version") => drop(source.insert(key("pypi"), dv.clone())),
                        Some("wheel") => drop(source.insert(key("wheel"), dv.clone())),
                        Some("hash") => drop(source.insert(key("rev"), dv.clone())),
                        _ => drop(dynamo.insert(dk.clone(), dv.clone())),
                    }
                }
                if !source.is_empty() {
                    dynamo.insert(key("source"), Value::Mapping(source));
                }
                out.insert(k.clone(), Value::Mapping(dynamo));
            }
            Some("base") => drop(out.insert(k.clone(), Value::Mapping(rewrite_map(v.as_mapping().unwrap())))),
            Some(o) if o.starts_with("override_") || o.starts_with("zip_override_") => {
                drop(out.insert(k.clone(), v.as_mapping().map_or(v.clone(), |m| Value::Mapping(rewrite_map(m)))))
            }
            _ => drop(out.insert(k.clone(), v.clone())),
        }
    }
    if !roles.is_empty() {
        out.insert(key("roles"), Value::Mapping(roles));
    }
    out
}

/// The whole file in schema 2 (`schema: 2` beside `base` for a bundle).
fn rewrite(v1: &str) -> Option<String> {
    let root: Value = serde_yaml_ng::from_str(v1).ok()?;
    let root = root.as_mapping()?;
    let is_recipe = root.contains_key("backend") || root.get("base").and_then(Value::as_mapping).is_some_and(|b| b.contains_key("backend"));
    if !is_recipe {
        return None;
    }
    let mut out = Mapping::new();
    out.insert(key("schema"), Value::Number(2.into()));
    out.extend(rewrite_map(root));
    serde_yaml_ng::to_string(&Value::Mapping(out)).ok()
}

type Seen = BTreeSet<(String, String, String, Option<String>)>;

/// (code, subject, role, variant) of every finding, with the spellings the two
/// layouts name differently made one: the aggregated mode is `agg`, the
/// Dynamo key is `dynamo`.
fn findings(report: &serde_json::Value) -> Seen {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        // A key written twice in one map is a property of the text, which the rewrite (a YAML round trip) drops.
        .filter(|f| f["code"] != "EA304")
        .map(|f| {
            let subject = f["subject"].as_str().unwrap_or_default();
            let subject = if subject.starts_with("dynamo.") { "dynamo".to_string() } else { subject.to_string() };
            // An unreadable part is named by its text, which the rewrite writes differently.
            let subject = if f["code"] == "EA305" { String::new() } else { subject };
            let role = f["role"].as_str().map(|r| if r == "aggregated" { "agg" } else { r }).unwrap_or_default().to_string();
            (f["code"].as_str().unwrap().to_string(), subject, role, f["deployment"].as_str().map(str::to_string))
        })
        .collect()
}

fn audit(dir: &Path, engine_args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg(dir)
        .args(engine_args)
        .args(["--offline", "--no-cache", "--format", "json", "--fail-on", "never"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// Each v1 recipe of `files` beside its rewrite (in two folders of the same
/// layout, so relative paths agree): the findings of the two must be equal.
fn compare(files: &[PathBuf], engine_args: &[&std::ffi::OsStr]) -> usize {
    let (v1, v2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut rewritten = 0;
    for (i, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).unwrap();
        let Some(new) = rewrite(&text) else { continue };
        let name = format!("{i:04}-{}", file.file_name().unwrap().to_string_lossy());
        std::fs::write(v1.path().join(&name), &text).unwrap();
        std::fs::write(v2.path().join(&name), new).unwrap();
        rewritten += 1;
    }
    let (a, b) = (findings(&audit(v1.path(), engine_args)), findings(&audit(v2.path(), engine_args)));
    let only_v1: Vec<_> = a.difference(&b).collect();
    let only_v2: Vec<_> = b.difference(&a).collect();
    assert!(only_v1.is_empty() && only_v2.is_empty(), "only in v1: {only_v1:#?}\nonly in the schema-2 rewrite: {only_v2:#?}");
    assert!(!a.is_empty(), "the comparison saw findings");
    rewritten
}

#[test]
fn v1_fixtures_and_their_schema_2_rewrites_give_the_same_findings() {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(dir.path()).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<PathBuf> =
        ["fixtures/recipes/srt/disagg.yaml", "fixtures/recipes/srt/sweep.yaml", "tests/codes/EA101/gone-with-history/recipe.yaml"]
            .iter()
            .map(|f| root.join(f))
            .chain(
                std::fs::read_dir(ws.recipes.join("benchmarks/multi_node/srt-slurm-recipes/dsmini")).unwrap().flatten().map(|e| e.path()),
            )
            .collect();
    let args: Vec<&std::ffi::OsStr> = vec![
        "--sglang".as_ref(),
        ws.sglang_repo.as_os_str(),
        "--dynamo".as_ref(),
        ws.dynamo_repo.as_os_str(),
        "--to".as_ref(),
        "v1.1.0".as_ref(),
    ];
    let n = compare(&files, &args);
    assert!(n >= 3, "{n}");
}

#[test]
fn real_v1_recipes_and_their_schema_2_rewrites_give_the_same_findings() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let dir = shared().join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang");
    if !dir.is_dir() {
        eprintln!("{} is absent: real_v1_recipes_and_their_schema_2_rewrites_give_the_same_findings is skipped", dir.display());
        return;
    }
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (sglang, dynamo) = (corpus.join("sglang.git"), corpus.join("dynamo.git"));
    let args: Vec<&std::ffi::OsStr> = vec![
        "--sglang".as_ref(),
        sglang.as_os_str(),
        "--dynamo".as_ref(),
        dynamo.as_os_str(),
        "--to".as_ref(),
        "v0.5.19".as_ref(),
        "--dynamo-to".as_ref(),
        "v1.5.0".as_ref(),
    ];
    let n = compare(&files, &args);
    eprintln!("{n} real v1 SGLang recipes and their schema-2 rewrites: the same findings");
    assert!(n >= 150, "{n}");
}
