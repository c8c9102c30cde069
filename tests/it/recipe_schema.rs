//! `schema config|rule`, and `surface --format json-schema` on the demo's
//! engines and on the real recipes (those with ENGINE_AUDIT_CORPUS): every srt-slurm SGLang recipe in ../shared/recipes
//! is validated with the jsonschema crate against the schema of the release
//! its own image names, and against the schema of every corpus release; the
//! schema must underline exactly the flags the audit refuses at that release
//! (EA001 unknown, EA005 choice, EA006 value, EA009 abbreviation: the schema
//! wants the full name), no more, no fewer.
//!
//! Skipped, counted and printed: recipes whose image names a release the
//! corpus does not hold (the corpus has four SGLang tags; most recipes run
//! nightly or other release images, or an srt-slurm container alias that
//! names no image). The audit says why for each one (EA303), and the test
//! prints those reasons by image.

use super::real_data::{corpus, shared};
use engine_audit::audit::{self, AuditOptions, AuditReport};
use engine_audit::profiles::SGLANG;
use engine_audit::recipe::{RecipeFile, RecipeKind};
use engine_audit::source::OpenOptions;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SGLANG_RECIPES: &str = "recipes/benchmarks/multi_node/srt-slurm-recipes/sglang";
/// What the audit refuses that a recipe schema underlines.
const REFUSED: [&str; 4] = ["EA001", "EA005", "EA006", "EA009"];

/// `(recipe path, role, flag)`, the flag in its `-` spelling.
type FlagAt = (String, String, String);

fn schema_at(sglang: &Path, tag: &str) -> serde_json::Value {
    engine_schema_at("sglang", sglang, tag)
}

/// `surface --<engine> REPO --at TAG --format json-schema`.
fn engine_schema_at(engine: &str, repo: &Path, tag: &str) -> serde_json::Value {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", &format!("--{engine}")])
        .arg(repo)
        .args(["--at", tag, "--offline", "--format", "json-schema"])
        .output()
        .unwrap();
    assert!(out.status.success(), "surface {tag}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The flags the schema underlines in one recipe file, or why the file could
/// not be given to a validator.
fn underlined(validator: &jsonschema::Validator, path: &str, text: &str) -> Result<BTreeSet<FlagAt>, String> {
    // Straight into JSON: a key set twice keeps its last value, as srtctl's
    // loader does (the audit's EA304; an editor says so itself).
    let json: serde_json::Value = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    let mut out = BTreeSet::new();
    for error in validator.iter_errors(&json) {
        let segments: Vec<String> =
            error.instance_path.as_str().split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
        // `backend.<engine>_config.<role>.<key>` (the first `_config` segment is the engine's block),
        // or schema 2's `roles.<role>.args.<key>`.
        let v1 = segments.iter().position(|s| s.ends_with("_config")).map(|i| (i + 1, i + 2));
        let v2 = segments
            .iter()
            .position(|s| s == "roles")
            .filter(|i| segments.get(i + 2).map(String::as_str) == Some("args"))
            .map(|i| (i + 1, i + 3));
        let at = v1.or(v2);
        let (Some(role), keys) = (at.and_then(|(r, _)| segments.get(r)), at.and_then(|(_, k)| segments.get(k))) else {
            panic!("{path}: a violation outside a role block: {error} at {}", error.instance_path);
        };
        let keys: Vec<String> = match (&error.kind, keys) {
            (jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }, None) => unexpected.clone(),
            (_, Some(key)) => vec![key.clone()],
            (_, None) => panic!("{path}: role `{role}` itself is refused: {error}"),
        };
        out.extend(keys.into_iter().map(|k| (path.to_string(), role.clone(), k.replace('_', "-"))));
    }
    Ok(out)
}

/// The flags the audit refuses, by recipe.
fn refused(report: &AuditReport) -> BTreeSet<FlagAt> {
    report
        .findings
        .iter()
        .filter(|f| REFUSED.contains(&f.code()))
        .map(|f| (f.location.path.clone(), f.role.clone().unwrap_or_default(), f.subject.replace('_', "-")))
        .collect()
}

fn sglang_recipes() -> Vec<RecipeFile> {
    let (files, errors) = engine_audit::recipe::collect(&[shared().join(SGLANG_RECIPES)]);
    assert!(errors.is_empty(), "{errors:?}");
    let recipes: Vec<RecipeFile> =
        files.into_iter().filter(|f| f.kind == RecipeKind::SrtSlurm && f.deployments.iter().any(|d| d.engine == "sglang")).collect();
    assert!(recipes.len() >= 150, "the shared recipes are there ({} srt-slurm SGLang recipes)", recipes.len());
    recipes
}

fn options(sglang: &Path) -> AuditOptions {
    AuditOptions { open: OpenOptions { offline: true, ..OpenOptions::default() }, ..AuditOptions::default() }.with_source(
        &SGLANG,
        Some(sglang.display().to_string()),
        None,
    )
}

/// Every recipe whose image's release the corpus holds, against that release's schema.
#[test]
fn every_sglang_recipe_validates_against_its_own_release() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let sglang = corpus.join("sglang.git");
    let recipes = sglang_recipes();
    // Audited as they are (no --to): each deployment at its own image's release.
    let whole = audit::run(&recipes, &options(&sglang)).unwrap();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let unresolved: BTreeSet<&str> =
        whole.findings.iter().filter(|f| f.code() == "EA303" && f.message().contains("SGLang")).map(|f| f.location.path.as_str()).collect();
    let mut by_release: BTreeMap<String, Vec<&RecipeFile>> = BTreeMap::new();
    let mut skipped_files = 0;
    for file in &recipes {
        if unresolved.contains(file.path.as_str()) {
            skipped_files += 1;
            let image = file.deployments.iter().find_map(|d| d.container.as_ref()).map_or("(no image)".to_string(), |c| c.value.clone());
            *skipped.entry(image).or_default() += 1;
            continue;
        }
        // Which release: what the audit of this one file was run at.
        let report = audit::run(std::slice::from_ref(file), &options(&sglang)).unwrap();
        let releases: BTreeSet<&str> = report.bumps.iter().filter(|b| b.engine == "sglang").map(|b| b.to.as_str()).collect();
        assert_eq!(releases.len(), 1, "{}: one release per recipe ({releases:?})", file.path);
        by_release.entry(releases.into_iter().next().unwrap().to_string()).or_default().push(file);
    }
    let mut validated = 0;
    for (release, files) in &by_release {
        let validator = jsonschema::validator_for(&schema_at(&sglang, release)).unwrap();
        let report = audit::run(&files.iter().map(|f| (*f).clone()).collect::<Vec<_>>(), &options(&sglang)).unwrap();
        let expected = refused(&report);
        let mut found = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file.path).unwrap();
            found.extend(underlined(&validator, &file.path, &text).unwrap_or_else(|e| panic!("{}: {e}", file.path)));
            validated += 1;
        }
        assert_eq!(found, expected, "at {release}: the schema underlines what the audit refuses");
        println!("{release}: {} recipes validated, {} flags refused by both", files.len(), expected.len());
    }
    println!(
        "{} srt-slurm SGLang recipes: {validated} validated against their own release, {skipped_files} skipped (image not in the corpus):",
        recipes.len()
    );
    for (image, n) in &skipped {
        println!("  {n:3}  {image}");
    }
    assert_eq!(validated + skipped_files, recipes.len());
    assert!(validated >= 5, "some recipes run a corpus release ({validated})");
}

/// Every recipe against every corpus release: the releases drop and rename
/// flags, so here the audit refuses hundreds of flags, and the schema must
/// underline exactly those.
#[test]
fn the_schema_underlines_what_the_audit_refuses_at_every_release() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let sglang = corpus.join("sglang.git");
    let recipes = sglang_recipes();
    let tags = engine_audit::source::EngineRepo::open(sglang.to_str().unwrap(), &OpenOptions { offline: true, ..OpenOptions::default() })
        .unwrap()
        .tags();
    let mut total = 0;
    for tag in &tags {
        let validator = jsonschema::validator_for(&schema_at(&sglang, tag)).unwrap();
        let report = audit::run(&recipes, &options(&sglang).with_refs(&SGLANG, None, Some(tag.clone()))).unwrap();
        assert!(report.deployments_audited >= recipes.len(), "{tag}: every deployment audited");
        let expected = refused(&report);
        let mut found = BTreeSet::new();
        let mut unreadable = Vec::new();
        for file in &recipes {
            let text = std::fs::read_to_string(&file.path).unwrap();
            match underlined(&validator, &file.path, &text) {
                Ok(flags) => found.extend(flags),
                Err(e) => unreadable.push(format!("{}: {e}", file.path)),
            }
        }
        assert!(unreadable.is_empty(), "{tag}: {unreadable:#?}");
        let missed: Vec<_> = expected.difference(&found).collect();
        let extra: Vec<_> = found.difference(&expected).collect();
        assert!(
            missed.is_empty() && extra.is_empty(),
            "{tag}: refused by the audit only: {missed:#?}\nunderlined by the schema only: {extra:#?}"
        );
        println!("{tag}: {} recipes, {} flags refused by both", recipes.len(), expected.len());
        total += expected.len();
    }
    assert!(total > 100, "the releases refuse real flags ({total})");
}

/// A misspelt flag in a real recipe is underlined, at its key.
#[test]
fn a_misspelt_flag_in_a_real_recipe_is_rejected() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let sglang = corpus.join("sglang.git");
    let path = shared()
        .join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp2_throughput_1p1d.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let validator = jsonschema::validator_for(&schema_at(&sglang, "v0.5.12.post1")).unwrap();
    let p = path.display().to_string();
    assert_eq!(underlined(&validator, &p, &text).unwrap(), BTreeSet::new(), "the recipe as written is valid at its release");
    assert!(text.contains("mem-fraction-static:"));
    let misspelt = text.replacen("mem-fraction-static:", "mem-fraction-statik:", 1);
    let found = underlined(&validator, &p, &misspelt).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found.iter().next().unwrap().2, "mem-fraction-statik");
}

/// `engine-audit schema config|rule` prints the files shipped in `schemas/`.
#[test]
fn the_schema_command_prints_the_shipped_schemas() {
    for (name, file) in [("config", "schemas/engine-audit-config.schema.json"), ("rule", "schemas/rule.schema.json")] {
        let out = assert_cmd::Command::cargo_bin("engine-audit").unwrap().args(["schema", name]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let shipped = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), shipped, "{name}");
    }
    let bad = assert_cmd::Command::cargo_bin("engine-audit").unwrap().args(["schema", "recipe"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Hermetic: the demo's mini SGLang as a recipe schema; Dynamo has no server flags.
#[test]
fn surface_writes_a_recipe_schema_of_the_demo_release() {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(dir.path()).unwrap();
    let tag = ws.sglang_tags.last().unwrap();
    let schema = schema_at(&ws.sglang_repo, tag);
    assert!(schema["title"].as_str().unwrap().contains(tag.as_str()), "{}", schema["title"]);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let flags = schema["definitions"]["role"]["properties"].as_object().unwrap();
    assert!(flags.len() > 10, "{} keys", flags.len());
    let key = flags.keys().find(|k| k.contains('-')).unwrap().clone();
    let text = |key: &str, value: &str| format!("backend:\n  sglang_config:\n    decode:\n      {key}: {value}\n");
    assert!(underlined(&validator, "r.yaml", &text(&format!("{key}-typo"), "1")).unwrap().len() == 1);
    assert!(underlined(&validator, "r.yaml", &text(&key.replace('-', "_"), "null")).unwrap().is_empty());
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--dynamo"])
        .arg(&ws.dynamo_repo)
        .args(["--at", ws.dynamo_tags.last().unwrap(), "--offline", "--format", "json-schema"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recipe flags"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Hermetic: the demo's mini vLLM. Its recipe validates as the audit reads it,
/// the `--fix` rename (a dotted key `FlexibleArgumentParser` gathers into
/// `--logging-config`) validates too, and a choice v0.9.0 dropped is underlined.
#[test]
fn the_vllm_schema_takes_what_the_vllm_fix_writes() {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(dir.path()).unwrap();
    let schema = engine_schema_at("vllm", &ws.vllm_repo, "v0.9.0");
    let validator = jsonschema::validator_for(&schema).unwrap();
    let recipe =
        std::fs::read_to_string(ws.recipes.join("benchmarks/multi_node/srt-slurm-recipes/qwen-mini/qwen-mini-vllm-disagg.yaml")).unwrap();
    assert_eq!(underlined(&validator, "r.yaml", &recipe).unwrap(), BTreeSet::new());
    let fixed = recipe.replace("log-config-file:", "logging-config.pylogging_config_file:");
    assert_eq!(underlined(&validator, "r.yaml", &fixed).unwrap(), BTreeSet::new());
    let dropped = recipe.replacen("kv-cache-dtype: fp8", "kv-cache-dtype: fp8_e5m2", 1);
    let flags: Vec<String> = underlined(&validator, "r.yaml", &dropped).unwrap().into_iter().map(|(_, _, flag)| flag).collect();
    assert_eq!(flags, ["kv-cache-dtype"]);
    assert!(!underlined(&validator, "r.yaml", &recipe.replace("log-config-file:", "log-config-fil.x:")).unwrap().is_empty());
}

/// Every srt-slurm vLLM recipe against the schema of v0.34.0 and v0.27.1:
/// the schema underlines what the audit refuses there, apart from the
/// options it leaves to Dynamo's worker (EA306), which a schema of vLLM's
/// parser cannot tell from typos.
#[test]
fn every_vllm_recipe_against_the_vllm_schema() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let vllm = corpus.join("vllm.git");
    let (files, errors) = engine_audit::recipe::collect(&[shared().join("recipes/benchmarks/multi_node/srt-slurm-recipes/vllm")]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(files.len() >= 190, "{}", files.len());
    for target in ["v0.34.0", "v0.27.1"] {
        let validator = jsonschema::validator_for(&engine_schema_at("vllm", &vllm, target)).unwrap();
        let opts = AuditOptions { open: OpenOptions { offline: true, ..OpenOptions::default() }, ..AuditOptions::default() }
            .with_source(&engine_audit::profiles::VLLM, Some(vllm.display().to_string()), None)
            .with_refs(&engine_audit::profiles::VLLM, None, Some(target.to_string()));
        let report = audit::run(&files, &opts).unwrap();
        let expected = refused(&report);
        let left_to_the_worker: BTreeSet<FlagAt> = report
            .findings
            .iter()
            .filter(|f| f.code() == "EA306")
            .map(|f| (f.location.path.clone(), f.role.clone().unwrap_or_default(), f.subject.replace('_', "-")))
            .collect();
        let mut found = BTreeSet::new();
        for file in &files {
            let text = std::fs::read_to_string(&file.path).unwrap();
            found.extend(underlined(&validator, &file.path, &text).unwrap_or_else(|e| panic!("{}: {e}", file.path)));
        }
        let only_schema: Vec<_> = found.difference(&expected).filter(|f| !left_to_the_worker.contains(*f)).collect();
        let only_audit: Vec<_> = expected.difference(&found).collect();
        println!(
            "{target}: {} refused by both, {} underlined as the worker's",
            expected.len(),
            found.intersection(&left_to_the_worker).count()
        );
        assert!(only_schema.is_empty() && only_audit.is_empty(), "{target}: schema only {only_schema:#?}\naudit only {only_audit:#?}");
    }
}
