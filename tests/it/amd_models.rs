//! The AMD multi-node model table (`amd_utils/models.yaml`) from the shared
//! data: read, and (when ENGINE_AUDIT_CORPUS is set) audited against the real
//! SGLang and fixed.

use super::real_data::{corpus, fixable, shared};
use assert_cmd::Command;
use engine_audit::recipe::{self, FlagUse, RecipeFile, RecipeKind};
use std::path::PathBuf;

const AMD_UTILS: &str = "recipes/benchmarks/multi_node/amd_utils";

/// The shared `amd_utils` folder, when present.
fn amd_utils(test: &str) -> Option<PathBuf> {
    let dir = shared().join(AMD_UTILS);
    if !dir.is_dir() {
        eprintln!("{} not found: {test} is skipped", dir.display());
        return None;
    }
    Some(dir)
}

/// The model names, as the table's top-level keys.
fn model_names(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with([' ', '#']) && l.ends_with(':')).map(|l| l.trim_end_matches(':')).collect()
}

/// Every flag of every role, bound as if no flag were a switch (spans do not depend on it).
fn all_flags(file: &RecipeFile) -> Vec<FlagUse> {
    file.deployments.iter().flat_map(|d| &d.roles).flat_map(|r| r.flag_uses(|_| false)).collect()
}

#[test]
fn every_model_of_the_real_table_is_read_with_exact_spans() {
    let Some(dir) = amd_utils("the real model table test") else { return };
    let file = recipe::load_path(&dir.join("models.yaml")).unwrap();
    assert_eq!(file.kind, RecipeKind::AmdModels);
    let names = model_names(&file.text);
    assert_eq!(names.len(), 12, "{names:?}");
    for name in &names {
        let deployments = recipe::model_deployments(&file, name);
        assert!(deployments.len() >= 3, "{name}: {}", deployments.len());
        for d in deployments {
            let roles: Vec<&str> = d.roles.iter().map(|r| r.role.as_str()).collect();
            assert_eq!(roles, ["prefill", "decode"], "{name}");
            assert!(d.roles.iter().all(|r| !r.flag_uses(|_| false).is_empty()), "{name}");
        }
    }
    // 9 models with MTP flags (6 variants each), 3 with `mtp_flags: ""` (3 each).
    assert_eq!(file.deployments.len(), 9 * 6 + 3 * 3);
    for f in all_flags(&file) {
        let key = &file.text[f.key_span.offset..f.key_span.end()];
        if key == "disagg_decode_enable_radix_cache" {
            // The one field the server script spells out in full.
            assert_eq!(f.name, "disaggregation-decode-enable-radix-cache");
        } else if key.contains('_') {
            assert_eq!(key.trim_end_matches("_range").replace('_', "-"), f.name, "a field: {key}");
        } else {
            assert_eq!(key, f.name);
            assert_eq!(&file.text[f.key_span.offset - 2..f.key_span.offset], "--", "{key} at line {}", f.key_span.line);
        }
    }
    // `--prefill-round-robin-balance` is a field of every decode role; `--deepep-mode` a word of `ep_flags`.
    let flags = all_flags(&file);
    let balance = flags.iter().find(|f| f.name == "prefill-round-robin-balance").unwrap();
    assert_eq!((balance.key_span.line, balance.key_span.column), (61, 5));
    let mode = flags.iter().find(|f| f.name == "deepep-mode").unwrap();
    assert_eq!((mode.key_span.line, mode.key_span.column), (47, 68));
    // The fields the README does not list are read as `server_sglang.sh` passes them, each for its role.
    let role_flag = |role: &str, name: &str| {
        file.deployments
            .iter()
            .flat_map(|d| &d.roles)
            .filter(|r| r.role == role)
            .flat_map(|r| r.flag_uses(|_| false))
            .any(|f| f.name == name)
    };
    for (role, flag) in [
        ("prefill", "disable-cuda-graph"),
        ("prefill", "context-length"),
        ("decode", "context-length"),
        ("prefill", "max-total-tokens"),
        ("prefill", "enable-two-batch-overlap"),
        ("decode", "disaggregation-decode-enable-radix-cache"),
    ] {
        assert!(role_flag(role, flag), "{role} --{flag}");
    }
    assert!(!role_flag("decode", "disable-cuda-graph") && !role_flag("prefill", "disaggregation-decode-enable-radix-cache"));
    assert!(!file.notes.iter().any(|n| n.message.contains("`: not a field")), "{:?}", file.notes);

    // The vLLM table is read by its own reader: one vLLM deployment per model,
    // every flag word at its exact place.
    let vllm = recipe::load_path(&dir.join("models_vllm.yaml")).unwrap();
    assert_eq!(vllm.kind, RecipeKind::AmdModels);
    assert!(!vllm.deployments.is_empty() && vllm.deployments.iter().all(|d| d.engine == "vllm" && d.roles.len() == 2));
    for token in vllm.deployments.iter().flat_map(|d| d.roles.iter().flat_map(|r| r.argv.iter().flatten())) {
        assert_eq!(&vllm.text[token.span.offset..token.span.end()], token.raw, "{token:?}");
    }
    // ATOM's too: each configuration server_atom.sh builds (tp, tp_dp, ep_dp,
    // with and without MTP, and for the model whose two quantization configs
    // differ the jobs whose servers differ in DPA) of each model, every word at
    // its exact place but the MTP size the script appends.
    let atom = recipe::load_path(&dir.join("models_atom.yaml")).unwrap();
    assert_eq!(atom.kind, RecipeKind::AmdModels);
    let names = model_names(&atom.text);
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(atom.deployments.len(), 29);
    assert!(atom.deployments.iter().all(|d| d.engine == "atom" && names.contains(&d.name.as_str())));
    for token in atom.deployments.iter().flat_map(|d| d.roles.iter().flat_map(|r| r.argv.iter().flatten())) {
        if token.raw != "$DECODE_MTP_SIZE" {
            assert_eq!(&atom.text[token.span.offset..token.span.end()], token.raw, "{token:?}");
        }
    }
    assert!(atom.notes.iter().all(|n| n.level != recipe::NoteLevel::Warning && n.level != recipe::NoteLevel::Error), "{:?}", atom.notes);
    // Nothing else in the shared recipes is taken for a model table.
    let (files, _) = recipe::collect(&[shared().join("recipes")]);
    let tables: Vec<&str> = files.iter().filter(|f| f.kind == RecipeKind::AmdModels).map(|f| f.path.as_str()).collect();
    assert_eq!(tables.len(), 3, "{tables:?}");
    assert!(tables[0].ends_with("amd_utils/models.yaml"));
}

/// The findings of an audit as JSON.
fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// The real table against the real SGLang, v0.5.12.post1 → v0.5.23: what
/// breaks is found at its line in models.yaml, and `--fix` leaves nothing with
/// an edit and a table that still reads.
#[test]
fn the_real_table_is_audited_and_fixed_against_the_real_sglang() {
    let Some(corpus) = corpus("the real model-table audit") else { return };
    let Some(dir) = amd_utils("the real model-table audit") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("models.yaml");
    std::fs::write(&copy, std::fs::read(dir.join("models.yaml")).unwrap()).unwrap();
    let audit = |extra: &[&str]| {
        Command::cargo_bin("engine-audit")
            .unwrap()
            .arg("audit")
            .arg(&copy)
            .arg("--sglang")
            .arg(corpus.join("sglang.git"))
            .args(["--from", "v0.5.12.post1", "--to", "v0.5.23", "--offline", "--fail-on", "never", "--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let before = json(&audit(&[]));
    assert_eq!(before["deployments_audited"], 63);
    let findings = before["findings"].as_array().unwrap();
    let at = |code: &str, subject: &str| -> Vec<(u64, u64, usize)> {
        findings
            .iter()
            .filter(|f| f["code"] == code && f["subject"] == subject)
            .map(|f| (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap(), f["fix"]["edits"].as_array().map_or(0, Vec::len)))
            .collect()
    };
    assert!(findings.iter().all(|f| f["recipe"].as_str().unwrap().ends_with("models.yaml")));
    // Gone at v0.5.23 (a no-op before): the decode field's line is deleted.
    let balance = at("EA001", "prefill-round-robin-balance");
    assert_eq!(balance.len(), 12, "one per model: {balance:?}");
    assert_eq!(balance[0], (61, 5, 1));
    // `--cuda-graph-bs` now abbreviates two flags: argparse exits. The field's
    // name is the script's, so the replacement is advice.
    let bs = at("EA001", "cuda-graph-bs");
    assert!(bs.contains(&(54, 7, 0)) && bs.iter().all(|&(_, col, edits)| col == 7 && edits == 0), "{bs:?}");
    // A deprecated switch inside `dp_flags`, at its word.
    assert!(at("EA003", "enable-dp-attention").contains(&(46, 16, 0)));

    let out = audit(&["--fix"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(fixable(&json(&out)), Vec::<String>::new(), "the re-audit has nothing left to fix");
    let fixed = recipe::load_path(&copy).unwrap();
    assert_eq!((fixed.kind, fixed.deployments.len()), (RecipeKind::AmdModels, 63));
    assert!(!fixed.text.contains("prefill_round_robin_balance: true"));
    assert_eq!(fixed.text.lines().count(), 436 - 12, "one line per model removed, nothing else");
}
