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
