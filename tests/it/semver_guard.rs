//! cargo-semver-checks' guard: a release audited against itself finds no
//! change. Every code the catalog scopes to a bump (`Scope::Bump`: a changed
//! default, a changed flag type, an env var registered before) must stay
//! silent, and `engine-audit diff R R` must list nothing, on the demo's mini
//! releases and, when ENGINE_AUDIT_CORPUS is set, on every corpus release.

use engine_audit::audit::{self, AuditOptions};
use engine_audit::codes::{Code, Scope, CATALOG};
use engine_audit::profiles::{EngineProfile, DYNAMO, SGLANG, VLLM};
use engine_audit::recipe::{LinkMapping, RecipeFile};
use engine_audit::source::OpenOptions;
use std::path::Path;

/// The releases of one server engine (SGLang, vLLM) and of Dynamo.
struct Releases<'a> {
    engine: &'static EngineProfile,
    repo: &'a Path,
    dynamo: &'a Path,
    tags: &'a [String],
    dynamo_tags: &'a [String],
}

/// Every (engine R, Dynamo D) pair audited as R → R with Dynamo D → D: the
/// bump-scoped codes that fired, as `R/D CODE subject` lines.
fn bump_findings_without_a_bump(files: &[RecipeFile], rel: &Releases) -> Vec<String> {
    let rules = engine_audit::rules::load_rules(&[]).unwrap();
    let mut out = Vec::new();
    for r in rel.tags {
        for d in rel.dynamo_tags {
            let opts = AuditOptions {
                open: OpenOptions { offline: true, cache_dir: None, ..Default::default() },
                rules: rules.clone(),
                ..AuditOptions::default()
            }
            .with_source(rel.engine, Some(rel.repo.display().to_string()), None)
            .with_source(&DYNAMO, Some(rel.dynamo.display().to_string()), None)
            .with_refs(rel.engine, Some(r.clone()), Some(r.clone()))
            .with_refs(&DYNAMO, Some(d.clone()), Some(d.clone()));
            let report = audit::run(files, &opts).unwrap();
            assert!(report.deployments_audited > 0, "{r}/{d}: the guard audited nothing");
            for f in &report.findings {
                if Code::parse(f.code()).is_some_and(|c| c.info().scope == Scope::Bump) {
                    out.push(format!("{r}/{d} {} {} at {}:{}", f.code(), f.subject, f.location.path, f.location.line));
                }
            }
        }
    }
    out
}

/// `engine-audit diff --from R --to R` for every tag of one engine: the
/// non-empty lists of its JSON.
fn diff_against_itself(engine: &str, repo: &Path, tags: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for tag in tags {
        let o = assert_cmd::Command::cargo_bin("engine-audit")
            .unwrap()
            .args(["diff", "--engine", engine, &format!("--{engine}")])
            .arg(repo)
            .args(["--from", tag, "--to", tag, "--offline", "--no-cache", "--format", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "diff {engine} {tag}: {}", String::from_utf8_lossy(&o.stderr));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let lists: Vec<_> = json.as_object().unwrap().iter().filter_map(|(k, v)| v.as_array().map(|a| (k, a))).collect();
        assert!(lists.len() >= 10, "{engine} {tag}: the diff's lists are read ({} found)", lists.len());
        for (key, list) in lists.into_iter().filter(|(_, a)| !a.is_empty()) {
            out.push(format!("{engine} {tag}: {key}: {list:?}"));
        }
    }
    out
}

#[test]
fn bump_codes_exist_and_the_catalog_scopes_them() {
    let bump: Vec<&str> = CATALOG.iter().filter(|c| c.scope == Scope::Bump).map(|c| c.id).collect();
    // EA101 is not: a var the recipe's own release no longer reads, but an
    // earlier one did, is removed whatever the bump.
    assert_eq!(bump, ["EA007", "EA008", "EA105"]);
}

#[test]
fn the_demo_releases_audited_against_themselves_find_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(dir.path()).unwrap();
    let (files, errors) = engine_audit::recipe::collect_with(std::slice::from_ref(&ws.recipes), &LinkMapping::default());
    assert!(errors.is_empty());
    let sglang =
        Releases { engine: &SGLANG, repo: &ws.sglang_repo, dynamo: &ws.dynamo_repo, tags: &ws.sglang_tags, dynamo_tags: &ws.dynamo_tags };
    let vllm = Releases { engine: &VLLM, repo: &ws.vllm_repo, tags: &ws.vllm_tags, ..sglang };
    for rel in [&sglang, &vllm] {
        assert!(rel.tags.len() >= 2 && rel.dynamo_tags.len() >= 2);
        let found = bump_findings_without_a_bump(&files, rel);
        assert!(found.is_empty(), "{}: {found:#?}", rel.engine.id);
    }
    let mut diffs = diff_against_itself("sglang", &ws.sglang_repo, &ws.sglang_tags);
    diffs.extend(diff_against_itself("vllm", &ws.vllm_repo, &ws.vllm_tags));
    diffs.extend(diff_against_itself("dynamo", &ws.dynamo_repo, &ws.dynamo_tags));
    assert!(diffs.is_empty(), "{diffs:#?}");
    // The guard can fail: between the two demo releases of each engine the same codes fire.
    for (rel, codes) in [(&sglang, &["EA007", "EA008", "EA105"][..]), (&vllm, &["EA007", "EA105"][..])] {
        let opts = AuditOptions { open: OpenOptions { offline: true, cache_dir: None, ..Default::default() }, ..AuditOptions::default() }
            .with_source(rel.engine, Some(rel.repo.display().to_string()), None)
            .with_source(&DYNAMO, Some(ws.dynamo_repo.display().to_string()), None)
            .with_refs(rel.engine, Some(rel.tags[0].clone()), rel.tags.last().cloned());
        let report = audit::run(&files, &opts).unwrap();
        for code in codes {
            assert!(report.findings.iter().any(|f| f.code() == *code), "{code} fires on the real demo bump of {}", rel.engine.id);
        }
    }
}

#[test]
fn every_corpus_release_audited_against_itself_finds_no_change() {
    let Some(corpus) = super::real_data::corpus("the corpus semver guard") else { return };
    let shared = super::real_data::shared();
    let (files, errors) = engine_audit::recipe::collect(&[shared.join("recipes")]);
    assert!(errors.is_empty(), "{errors:?}");
    let open = |name: &str| {
        let path = corpus.join(name);
        let repo = engine_audit::source::EngineRepo::open(
            path.to_str().unwrap(),
            &OpenOptions { offline: true, cache_dir: None, ..Default::default() },
        )
        .unwrap();
        (path, repo.tags())
    };
    let ((sglang, sglang_tags), (dynamo, dynamo_tags)) = (open("sglang.git"), open("dynamo.git"));
    assert!(sglang_tags.len() >= 4 && dynamo_tags.len() >= 3, "{sglang_tags:?} {dynamo_tags:?}");
    let rel = Releases { engine: &SGLANG, repo: &sglang, dynamo: &dynamo, tags: &sglang_tags, dynamo_tags: &dynamo_tags };
    let found = bump_findings_without_a_bump(&files, &rel);
    assert!(found.is_empty(), "{} bump findings without a bump: {found:#?}", found.len());
    let mut diffs = diff_against_itself("sglang", &sglang, &sglang_tags);
    diffs.extend(diff_against_itself("dynamo", &dynamo, &dynamo_tags));
    // vLLM's releases diffed against themselves (its recipes' self-audit is
    // the demo's above; the corpus tree against each vLLM tag is slow).
    let (vllm, vllm_tags) = open("vllm.git");
    assert!(vllm_tags.len() >= 9, "{vllm_tags:?}");
    diffs.extend(diff_against_itself("vllm", &vllm, &vllm_tags));
    assert!(diffs.is_empty(), "{diffs:#?}");
}
