//! Measurement against real releases, run only with `ENGINE_AUDIT_SRC=/tmp/src`
//! (unpacked SGLang/Dynamo releases) and the oracle JSON in /work/shared/oracle
//! (override with `ENGINE_AUDIT_ORACLE`). Prints recall/precision and asserts
//! the facts every release must show.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

use super::{extract_env, find_env_reads, unregistered_vars, EnvRegistry};
use crate::extract::{pins, symbols, Package};
use crate::source::DirTree;
use crate::surface::{EnvDeprecationKind, Known};

/// SGLang's registry files (the profile's, spelled out for the fixtures).
const SGLANG_ENV_FILES: &[&str] = &["srt/environ.py", "environ.py"];

fn source_root() -> Option<PathBuf> {
    match std::env::var_os("ENGINE_AUDIT_SRC") {
        Some(root) => Some(PathBuf::from(root)),
        None => {
            eprintln!("skipped: set ENGINE_AUDIT_SRC=/tmp/src to measure against real releases");
            None
        }
    }
}

fn oracle(version: &str) -> Option<Value> {
    let dir = std::env::var("ENGINE_AUDIT_ORACLE").unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/oracle").into());
    let text = std::fs::read_to_string(format!("{dir}/sglang-{version}.json")).ok()?;
    serde_json::from_str(&text).ok()
}

type DeprecationRow = (Option<String>, Option<String>, Option<String>);
/// Like [`DeprecationRow`], the transform `None` when the oracle cannot name it.
type OracleRow = (Option<String>, Option<Option<String>>, Option<String>);

/// Oracle deprecations as name → (replacement, transform, message). Inline
/// conversions of the older style (`dicts`) have no transform name in the
/// oracle; `None` there means "not compared".
fn oracle_deprecations(oracle: &Value) -> BTreeMap<String, OracleRow> {
    let s = |v: &Value| v.as_str().map(str::to_string);
    let mut out = BTreeMap::new();
    let deps = &oracle["env_deprecations"];
    if let Some(table) = deps["_DEPRECATED_ENVS"].as_object() {
        for (name, d) in table {
            out.insert(name.clone(), (s(&d["replacement"]), Some(s(&d["transform"])), s(&d["note"])));
        }
    }
    for call in deps["calls"].as_array().into_iter().flatten() {
        let old = s(&call["old_name"]).or_else(|| s(&call["env_name"])).unwrap();
        out.insert(old, (s(&call["new_name"]), Some(None), s(&call["suggestion"])));
    }
    for table in deps["dicts"].as_object().into_iter().flat_map(|d| d.values()) {
        for (old, new) in table.as_object().into_iter().flatten() {
            out.insert(old.clone(), (s(new), None, None));
        }
    }
    out
}

fn ours(registry: &EnvRegistry) -> BTreeMap<String, DeprecationRow> {
    registry
        .vars
        .iter()
        .filter_map(|v| {
            let d = v.deprecated.as_ref()?;
            matches!(d.kind, EnvDeprecationKind::Renamed | EnvDeprecationKind::Removed)
                .then(|| (v.name.clone(), (d.replacement.clone(), d.transform.clone(), d.message.clone())))
        })
        .collect()
}

fn compare_with_oracle(version: &str, registry: &EnvRegistry) {
    let Some(oracle) = oracle(version) else {
        let count =
            |kind: Option<EnvDeprecationKind>| registry.vars.iter().filter(|v| v.deprecated.as_ref().map(|d| d.kind) == kind).count();
        eprintln!(
            "{version}: no oracle file; {} plain fields, {} aliases, {} renamed, {} removed",
            count(None),
            count(Some(EnvDeprecationKind::Alias)),
            count(Some(EnvDeprecationKind::Renamed)),
            count(Some(EnvDeprecationKind::Removed))
        );
        return;
    };
    let entries = oracle["env_vars"].as_array().unwrap();
    let expected: BTreeSet<String> = entries.iter().map(|e| e["name"].as_str().unwrap().to_string()).collect();
    let fields: BTreeSet<String> = registry
        .vars
        .iter()
        .filter(|v| v.kind != "deprecated" && !matches!(v.deprecated.as_ref().map(|d| d.kind), Some(EnvDeprecationKind::Alias)))
        .map(|v| v.name.clone())
        .collect();
    let hit = fields.intersection(&expected).count();
    eprintln!(
        "{version}: env names recall {hit}/{} precision {hit}/{}; missing {:?}; extra {:?}",
        expected.len(),
        fields.len(),
        expected.difference(&fields).collect::<Vec<_>>(),
        fields.difference(&expected).collect::<Vec<_>>()
    );
    assert_eq!(fields, expected, "{version}: registry names differ from the oracle");

    let expected_aliases: BTreeMap<String, String> =
        entries.iter().filter_map(|e| Some((e["deprecated_name"].as_str()?.to_string(), e["name"].as_str()?.to_string()))).collect();
    let aliases: BTreeMap<String, String> = registry
        .vars
        .iter()
        .filter_map(|v| {
            let d = v.deprecated.as_ref().filter(|d| d.kind == EnvDeprecationKind::Alias)?;
            Some((v.name.clone(), d.replacement.clone()?))
        })
        .collect();
    eprintln!(
        "{version}: aliases {}/{} match",
        aliases.iter().filter(|(k, v)| expected_aliases.get(*k) == Some(v)).count(),
        expected_aliases.len()
    );
    assert_eq!(aliases, expected_aliases, "{version}: aliases differ");

    let expected_deps = oracle_deprecations(&oracle);
    let got = ours(registry);
    let mut exact = 0;
    for (name, (replacement, transform, message)) in &expected_deps {
        let Some(row) = got.get(name) else {
            eprintln!("  missing deprecation {name}");
            continue;
        };
        let same = row.0 == *replacement && transform.as_ref().is_none_or(|t| *t == row.1) && row.2 == *message;
        if same {
            exact += 1;
        } else {
            eprintln!("  differs {name}: ours {row:?} oracle {:?}", (replacement, transform, message));
        }
    }
    let extra: Vec<_> = got.keys().filter(|k| !expected_deps.contains_key(*k)).collect();
    eprintln!("{version}: deprecations exact {exact}/{} (ours {}); extra {extra:?}", expected_deps.len(), got.len());
    assert_eq!(exact, expected_deps.len(), "{version}: deprecations differ");
    assert!(extra.is_empty(), "{version}: deprecations the oracle lacks: {extra:?}");

    // Defaults: informational (non-literal defaults are dynamic by design).
    let by_name: BTreeMap<&str, &Value> = entries.iter().map(|e| (e["name"].as_str().unwrap(), &e["default"])).collect();
    let (mut same, mut dynamic, mut differ) = (0, 0, Vec::new());
    for var in registry.vars.iter().filter(|v| fields.contains(&v.name)) {
        match (&var.default, by_name.get(var.name.as_str())) {
            (Known::Dynamic { .. }, _) => dynamic += 1,
            (Known::Value(v), Some(o)) if numbers_equal(v, o) => same += 1,
            (Known::Value(v), o) => differ.push(format!("{}: {v} vs {o:?}", var.name)),
        }
    }
    eprintln!("{version}: defaults equal {same}, dynamic {dynamic}, differ {} {:?}", differ.len(), differ);
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[test]
fn sglang_releases_match_the_oracle_and_must_hold_facts() {
    let Some(root) = source_root() else { return };
    for (tag, version) in [("v0.5.12.post1", "0.5.12.post1"), ("v0.5.16", "0.5.16"), ("v0.5.19", "0.5.19"), ("v0.5.23", "0.5.23")] {
        let tree = DirTree::open(&root.join(tag)).expect("release unpacked");
        let pkg = Package::new(&tree, "python/sglang");
        let mut warnings = Vec::new();
        let started = std::time::Instant::now();
        let registry = extract_env(&pkg, SGLANG_ENV_FILES, &mut warnings);
        eprintln!("{tag}: {} vars in {:?}, warnings {:?}", registry.vars.len(), started.elapsed(), warnings);
        assert_eq!(registry.prefix_rewrites, [("SGL_".to_string(), "SGLANG_".to_string())]);
        compare_with_oracle(version, &registry);

        let names = vec!["SGLANG_ENABLE_SPEC_V2".to_string()];
        let started = std::time::Instant::now();
        let reads = find_env_reads(&pkg, SGLANG_ENV_FILES, &names, &mut warnings);
        eprintln!("{tag}: {} reads of SGLANG_ENABLE_SPEC_V2 in {:?}", reads.len(), started.elapsed());
        let spec_v2 = registry.var("SGLANG_ENABLE_SPEC_V2");
        if version == "0.5.12.post1" {
            assert!(spec_v2.is_some_and(|v| v.deprecated.is_none()), "registered at {tag}");
        }
        if version == "0.5.19" {
            assert!(spec_v2.is_none(), "gone from the registry at {tag}");
            // The surface-wide scan finds the same notice.
            let started = std::time::Instant::now();
            let all_reads = super::find_prefixed_env_reads(&pkg, SGLANG_ENV_FILES, &["SGLANG_", "SGL_"], &mut warnings);
            let unregistered = unregistered_vars(&registry, &all_reads);
            let notices: Vec<&str> = unregistered
                .iter()
                .filter(|v| v.deprecated.as_ref().is_some_and(|d| d.kind == EnvDeprecationKind::Notice))
                .map(|v| v.name.as_str())
                .collect();
            eprintln!(
                "{tag}: surface-wide scan {} reads, {} unregistered names, notices {notices:?} in {:?}",
                all_reads.len(),
                unregistered.len(),
                started.elapsed()
            );
            assert!(notices.contains(&"SGLANG_ENABLE_SPEC_V2"));
            let extra = unregistered_vars(&registry, &reads);
            assert_eq!(extra.len(), 1);
            let notice = extra[0].deprecated.as_ref().expect("a removal notice");
            assert_eq!(notice.kind, EnvDeprecationKind::Notice);
            assert!(notice.message.as_deref().unwrap().contains("has been removed"));
            assert_eq!(extra[0].evidence.path, "python/sglang/srt/arg_groups/speculative_hook.py");

            let renamed = registry.var("SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK").unwrap();
            let d = renamed.deprecated.as_ref().unwrap();
            assert_eq!(d.kind, EnvDeprecationKind::Renamed);
            assert_eq!(d.replacement.as_deref(), Some("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK"));
            assert_eq!(d.transform.as_deref(), Some("_invert_bool"));
        }
        let version_found = pins::package_version(&tree, "python/sglang", &mut warnings);
        assert_eq!(version_found.as_deref(), Some(version));
    }
}

#[test]
fn sglang_0_5_23_lazy_reexports_are_symbols() {
    let Some(root) = source_root() else { return };
    let tree = DirTree::open(&root.join("v0.5.23")).expect("release unpacked");
    let pkg = Package::new(&tree, "python/sglang");
    let mut warnings = Vec::new();
    let names = symbols::module_symbols(&pkg, "sglang.srt.server_args", &mut warnings).unwrap();
    for wanted in ["FunctionCallParser", "ReasoningParser", "RealKvHashMode", "ServerArgs"] {
        assert!(names.iter().any(|n| n == wanted), "{wanted} missing");
    }
    eprintln!("v0.5.23 sglang.srt.server_args: {} symbols, warnings {:?}", names.len(), warnings);
}

#[test]
fn dynamo_pins_its_sglang() {
    let Some(root) = source_root() else { return };
    for (tag, pin) in [("dynamo-v1.3.0.post1", None), ("dynamo-v1.5.0", Some("==0.5.18")), ("dynamo-v1.6.1", None)] {
        let tree = DirTree::open(&root.join(tag)).expect("release unpacked");
        let mut warnings = Vec::new();
        let path = pins::find_pyproject(&tree, "components/src/dynamo").expect("a pyproject");
        let reqs = pins::requirements(&tree, &path, &mut warnings);
        let sglang: Vec<_> = reqs.iter().filter(|r| r.name == "sglang").collect();
        eprintln!(
            "{tag}: {} requirements, sglang pins {:?}, version {:?}, warnings {:?}",
            reqs.len(),
            sglang.iter().map(|r| (&r.group, &r.specifier, r.evidence.line)).collect::<Vec<_>>(),
            pins::package_version(&tree, "components/src/dynamo", &mut warnings),
            warnings
        );
        if let Some(pin) = pin {
            assert!(sglang.iter().any(|r| r.specifier == pin && r.group.as_deref() == Some("sglang")));
        }
    }
}

/// Every module of a release yields symbols without a panic; unreadable or
/// partial files are warnings naming them.
#[test]
fn every_sglang_module_has_symbols() {
    let Some(root) = source_root() else { return };
    let tree = DirTree::open(&root.join("v0.5.19")).expect("release unpacked");
    let pkg = Package::new(&tree, "python/sglang");
    let mut warnings = Vec::new();
    let started = std::time::Instant::now();
    let modules = pkg.modules();
    let parsed = modules.iter().filter(|m| symbols::module_symbols(&pkg, &m.name, &mut warnings).is_some()).count();
    eprintln!(
        "v0.5.19: symbols for {parsed}/{} modules in {:?}; {} warnings, e.g. {:?}",
        modules.len(),
        started.elapsed(),
        warnings.len(),
        warnings.iter().take(5).collect::<Vec<_>>()
    );
    assert_eq!(parsed, modules.len());
    let server_args = symbols::module_symbols(&pkg, "sglang.srt.server_args", &mut warnings).unwrap();
    assert!(server_args.iter().any(|n| n == "ServerArgs"));
}
