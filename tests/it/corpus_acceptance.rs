//! Acceptance on the real upstream corpus (built by ../shared/corpus/build-corpus.sh).
//! Runs when ENGINE_AUDIT_CORPUS names the corpus folder; `.ci/run` sets it.
//! Without it each test prints why it did nothing.

use super::real_data::{corpus, shared};
use engine_audit::source::{discover_package_root, EngineRepo, OpenOptions, Tree};

fn open(corpus: &std::path::Path, name: &str) -> EngineRepo {
    let path = corpus.join(name);
    EngineRepo::open(path.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() })
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn opens_the_real_repos_and_reads_the_engine_files() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let sglang = open(&corpus, "sglang.git");
    for tag in ["v0.5.12.post1", "v0.5.19"] {
        let tree = sglang.tree_at(&sglang.resolve(tag).unwrap()).unwrap();
        let root = discover_package_root(&tree, &engine_audit::profiles::SGLANG, None).unwrap();
        assert_eq!(root, "python/sglang", "{tag}");
        for file in ["srt/server_args.py", "srt/environ.py"] {
            let text = tree.read_text(&format!("{root}/{file}")).unwrap();
            assert!(text.contains("SGLANG_") || text.contains("add_argument") || text.contains("class ServerArgs"), "{tag} {file}");
            assert!(text.len() > 10_000, "{tag} {file} is the real file ({} bytes)", text.len());
        }
    }
    let dynamo = open(&corpus, "dynamo.git");
    for tag in ["v1.3.0.post1", "v1.5.0"] {
        let tree = dynamo.tree_at(&dynamo.resolve(tag).unwrap()).unwrap();
        assert_eq!(discover_package_root(&tree, &engine_audit::profiles::DYNAMO, None).unwrap(), "components/src/dynamo", "{tag}");
        assert!(tree.contains("components/src/dynamo/sglang/args.py"), "{tag}");
    }
    // A bare version resolves to the v-tag.
    assert_eq!(sglang.resolve("0.5.19").unwrap().matched, "refs/tags/v0.5.19");
}

#[test]
fn surface_json_names_the_commit_and_the_modules() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--sglang"])
        .arg(corpus.join("sglang.git"))
        .args(["--at", "v0.5.19", "--format", "json", "--offline"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sglang = open(&corpus, "sglang.git");
    assert_eq!(json["commit"], sglang.resolve("v0.5.19").unwrap().commit);
    let modules: Vec<&str> = json["modules"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(modules.contains(&"sglang.srt.server_args"));
    assert!(modules.contains(&"sglang.srt.utils.server_args_config_parser"));
    assert!(!modules.contains(&"sglang.srt.server_args_config_parser"), "moved away by v0.5.19");
    assert!(modules.len() > 2000, "{} modules", modules.len());
}

// ---------------------------------------------------------------------------
// Surface extraction (issue 3): facts that must hold on the real releases.

use engine_audit::extract::{extract_surface, Demand};
use engine_audit::surface::{EngineSurface, EnvDeprecationKind};

fn sglang_surface(repo: &EngineRepo, tag: &str) -> EngineSurface {
    let tree = repo.tree_at(&repo.resolve(tag).unwrap()).unwrap();
    extract_surface(&tree, &engine_audit::profiles::SGLANG, "python/sglang", tag, &Demand::full(&engine_audit::profiles::SGLANG))
}

#[test]
fn env_registry_facts_across_releases() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let repo = open(&corpus, "sglang.git");
    let old = sglang_surface(&repo, "v0.5.12.post1");
    let new = sglang_surface(&repo, "v0.5.19");
    let spec_v2 = old.env_var("SGLANG_ENABLE_SPEC_V2").expect("registered at v0.5.12.post1");
    assert!(spec_v2.kind.starts_with("Env") && spec_v2.deprecated.is_none());
    let notice = new.env_var("SGLANG_ENABLE_SPEC_V2").expect("read at v0.5.19");
    assert_eq!(notice.kind, "read", "gone from the registry");
    let dep = notice.deprecated.as_ref().expect("a removal notice");
    assert_eq!(dep.kind, EnvDeprecationKind::Notice);
    assert!(dep.message.as_deref().unwrap_or("").contains("has been removed"), "{dep:?}");
    assert!(notice.evidence.path.ends_with("srt/arg_groups/speculative_hook.py"));
    let tp = new.env_var("SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK").and_then(|v| v.deprecated.as_ref()).expect("deprecated");
    assert_eq!(tp.kind, EnvDeprecationKind::Renamed);
    assert_eq!(tp.replacement.as_deref(), Some("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK"));
    assert_eq!(tp.transform.as_deref(), Some("_invert_bool"));
    assert_eq!(new.env_prefix_rewrites, vec![("SGL_".to_string(), "SGLANG_".to_string())]);
}

#[test]
fn module_moves_and_class_members_show_in_the_diff() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let repo = open(&corpus, "sglang.git");
    let d = engine_audit::surface_diff::diff(&sglang_surface(&repo, "v0.5.12.post1"), &sglang_surface(&repo, "v0.5.19"));
    let moved = d.modules_removed.iter().find(|m| m.module == "sglang.srt.server_args_config_parser").expect("removed");
    assert_eq!(moved.moved_to, None, "no move is claimed without the symbols that show it");
    // With the symbols read (as `diff` reads them for removed and added modules).
    let with_symbols = |tag: &str, modules: &[&str]| {
        let tree = repo.tree_at(&repo.resolve(tag).unwrap()).unwrap();
        let sglang = &engine_audit::profiles::SGLANG;
        let demand = Demand { symbols_of: modules.iter().map(|m| m.to_string()).collect(), ..Demand::full(sglang) };
        extract_surface(&tree, sglang, "python/sglang", tag, &demand)
    };
    let d = engine_audit::surface_diff::diff(
        &with_symbols("v0.5.12.post1", &["sglang.srt.server_args_config_parser"]),
        &with_symbols("v0.5.19", &["sglang.srt.utils.server_args_config_parser"]),
    );
    let moved = d.modules_removed.iter().find(|m| m.module == "sglang.srt.server_args_config_parser").expect("removed");
    assert_eq!(moved.moved_to.as_deref(), Some("sglang.srt.utils.server_args_config_parser"));
    assert!(d.class_members_removed.iter().any(|m| m.class == "ServerArgs" && m.member == "use_mla_backend"));
    let alias = d.flags_deprecated.iter().find(|f| f.flag == "--cuda-graph-max-bs").expect("deprecated");
    assert_eq!(alias.deprecation.replacement.as_deref(), Some("--cuda-graph-max-bs-decode"));
    assert!(d.env_deprecated.iter().any(|e| e.name == "SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK"));
}

/// Every .py file of every corpus release goes through the extractors without a
/// panic; files with syntax errors give partial facts and a warning naming them.
/// The symbols read from module outlines (the fast path) are those read from
/// the whole files, for every module.
#[test]
fn every_python_file_of_every_release_is_read() {
    use engine_audit::extract::symbols::{module_symbols, module_symbols_from_whole_files};
    use engine_audit::extract::Package;
    use rayon::prelude::*;
    let Some(corpus) = corpus(module_path!()) else { return };
    for (name, engine) in [("sglang.git", &engine_audit::profiles::SGLANG), ("dynamo.git", &engine_audit::profiles::DYNAMO)] {
        let repo = open(&corpus, name);
        for tag in repo.tags() {
            let tree = repo.tree_at(&repo.resolve(&tag).unwrap()).unwrap();
            let root = discover_package_root(&tree, engine, None).unwrap();
            let pkg = Package::new(&tree, &root);
            let modules = pkg.modules();
            let read: Vec<(Vec<_>, Option<String>)> = modules
                .par_iter()
                .map(|m| {
                    let mut w = Vec::new();
                    let fast = module_symbols(&pkg, &m.name, &mut w);
                    let whole = module_symbols_from_whole_files(&pkg, &m.name, &mut Vec::new());
                    (w, (fast != whole).then(|| format!("{}: outline {fast:?}\n  whole file {whole:?}", m.name)))
                })
                .collect();
            let warnings = read.iter().map(|(w, _)| w.len()).sum::<usize>();
            let differ: Vec<&String> = read.iter().filter_map(|(_, d)| d.as_ref()).collect();
            println!("{name}@{tag}: {} modules read, {warnings} warnings, outline symbols differ in {}", modules.len(), differ.len());
            assert!(modules.len() > 500, "{name}@{tag}");
            assert!(differ.is_empty(), "{name}@{tag}:\n{}", differ.iter().take(5).map(|d| d.as_str()).collect::<Vec<_>>().join("\n"));
        }
    }
}

// ---------------------------------------------------------------------------
// The audit on the real bump (issue 4) and the risk rules (issue 5).

use engine_audit::audit::{self, AuditOptions, AuditReport};
use engine_audit::profiles::{DYNAMO, SGLANG};
use engine_audit::report::Finding;

const FAMILY_8K1K: &str = "recipes/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp";

fn audit_8k1k(corpus: &std::path::Path, to: &str, dynamo_to: &str) -> AuditReport {
    let (files, errors) = engine_audit::recipe::collect(&[shared().join(FAMILY_8K1K)]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(files.len(), 9);
    let opts = AuditOptions {
        open: OpenOptions { offline: true, cache_dir: None, ..Default::default() },
        rules: engine_audit::rules::load_rules(&[]).unwrap(),
        ..AuditOptions::default()
    }
    .with_source(&SGLANG, Some(corpus.join("sglang.git").display().to_string()), None)
    .with_source(&DYNAMO, Some(corpus.join("dynamo.git").display().to_string()), None)
    .with_refs(&SGLANG, None, Some(to.into()))
    // The recipes pin Dynamo source hash 5b4bc1dd (1.3.0): the corpus has its release.
    .with_refs(&DYNAMO, Some("v1.3.0.post1".into()), Some(dynamo_to.into()));
    audit::run(&files, &opts).unwrap()
}

fn with_code<'a>(r: &'a AuditReport, code: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.code() == code).collect()
}

#[test]
fn the_real_bump_v0_5_12_post1_to_v0_5_19() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let r = audit_8k1k(&corpus, "v0.5.19", "v1.3.0.post1");
    assert_eq!(r.deployments_audited, 9);
    let bump = r.bumps.iter().find(|b| b.engine == "sglang").unwrap();
    assert_eq!((bump.from.as_deref(), bump.to.as_str()), (Some("v0.5.12.post1"), "v0.5.19"), "from the images");

    // Every recipe key `cuda-graph-max-bs` is EA003 with the replacement as the fix.
    let (files, _) = engine_audit::recipe::collect(&[shared().join(FAMILY_8K1K)]);
    let uses: usize = files
        .iter()
        .flat_map(|f| &f.deployments)
        .flat_map(|d| &d.roles)
        .flat_map(|r| &r.flags)
        .filter(|u| u.name == "cuda-graph-max-bs")
        .count();
    let ea003: Vec<_> = with_code(&r, "EA003").into_iter().filter(|f| f.subject == "cuda-graph-max-bs").collect();
    assert!(uses > 0);
    assert_eq!(ea003.len(), uses, "one EA003 per use");
    assert!(ea003
        .iter()
        .all(|f| f.message().contains("--cuda-graph-max-bs-decode") && f.fix.as_ref().is_some_and(|x| !x.edits.is_empty())));
    // A switch forwarded to `--cuda-graph-backend-{decode,prefill}=disabled`: both flags, one edit.
    let split: Vec<_> = with_code(&r, "EA003").into_iter().filter(|f| f.subject == "disable-cuda-graph").collect();
    assert!(!split.is_empty());
    for f in split {
        let edits = &f.fix.as_ref().unwrap().edits;
        assert_eq!(edits.len(), 1, "{f:#?}");
        assert!(
            edits[0].replacement.ends_with("cuda-graph-backend-decode: disabled\n      cuda-graph-backend-prefill: disabled\n"),
            "{:?}",
            edits[0]
        );
    }
    assert!(with_code(&r, "EA004").iter().all(|f| f.subject == "prefill-round-robin-balance"));
    assert!(!with_code(&r, "EA004").is_empty());
    assert!(with_code(&r, "EA103").iter().any(|f| f.subject == "SGLANG_ENABLE_SPEC_V2"));
    let tp: Vec<_> = with_code(&r, "EA102").into_iter().filter(|f| f.subject == "SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK").collect();
    assert!(!tp.is_empty());
    assert!(tp.iter().all(|f| f.message().contains("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK") && f.message().contains("inverted")));
    // trtllm_mla, modelopt_fp4, flashinfer_trtllm, fp8_e4m3, nixl, round_robin, EAGLE: all valid.
    for code in ["EA001", "EA005", "EA006"] {
        assert!(with_code(&r, code).is_empty(), "{code}: {:#?}", with_code(&r, code));
    }

    // Dynamo v1.3.0.post1 as the target.
    let ea201 = with_code(&r, "EA201");
    let args = ea201.iter().find(|f| f.subject == "sglang.srt.server_args_config_parser").expect("EA201 for args.py");
    assert!(args.location.path.ends_with("dynamo/sglang/args.py"));
    assert!(args.message().contains("sglang.srt.utils.server_args_config_parser") && args.message().contains("crashes at start"));
    let mla = with_code(&r, "EA204").into_iter().find(|f| f.subject == "ServerArgs.use_mla_backend").expect("EA204");
    assert!(mla.location.path.ends_with("dynamo/sglang/register.py"));

    // R001: the eight recipes that pin flashinfer_trtllm, prefill and decode; not c2048.
    let r001 = with_code(&r, "R001");
    let recipes: std::collections::BTreeSet<&str> = r001.iter().map(|f| f.location.path.as_str()).collect();
    assert_eq!(recipes.len(), 8, "{recipes:#?}");
    assert!(!recipes.iter().any(|p| p.ends_with("8k1k_mtp_4p1d_c2048.yaml")));
    assert_eq!(r001.len(), 16);
}

#[test]
fn the_real_bump_with_dynamo_v1_5_0() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let r = audit_8k1k(&corpus, "v0.5.19", "v1.5.0");
    assert!(with_code(&r, "EA201").iter().all(|f| f.subject != "sglang.srt.server_args_config_parser"), "_compat.py tries both paths");
    assert!(with_code(&r, "EA204").iter().any(|f| f.subject == "ServerArgs.use_mla_backend"));
    let pin = with_code(&r, "EA205");
    assert_eq!(pin.len(), 1);
    assert!(pin[0].message().contains("sglang[diffusion]==0.5.18"), "{}", pin[0].message());
}

#[test]
fn r001_follows_the_engine_source_across_releases() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // v0.5.16 gates the fusion on SGLANG_ENABLE_NVFP4_GEMM_SWIGLU_FUSION, which its
    // environ.py declares EnvBool(True): on by default, and these recipes leave it
    // unset, so R001 fires there too (the rule's own cases cover the falsy opt-out).
    // v0.5.23 fixed it upstream (the guard asks `supports_swiglu_fusion()`, false
    // for flashinfer_trtllm): the rule retires there without an edit.
    for (to, fires) in [("v0.5.23", false), ("v0.5.19", true), ("v0.5.16", true), ("v0.5.12.post1", false)] {
        let r = audit_8k1k(&corpus, to, "v1.3.0.post1");
        assert_eq!(!with_code(&r, "R001").is_empty(), fires, "R001 at {to}");
    }
}

// ---------------------------------------------------------------------------
// The robustness sweep (issue 8): every corpus release's full surface, and every
// recipe in ../shared/recipes audited across every forward pair of corpus
// releases, with no panic, in bounded time and memory.

fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb / 1024)
}

#[test]
fn sweep_every_release_and_every_recipe() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let started = std::time::Instant::now();
    for (name, engine) in [("sglang.git", &engine_audit::profiles::SGLANG), ("dynamo.git", &engine_audit::profiles::DYNAMO)] {
        let repo = open(&corpus, name);
        for tag in repo.tags() {
            let tree = repo.tree_at(&repo.resolve(&tag).unwrap()).unwrap();
            let root = discover_package_root(&tree, engine, None).unwrap();
            let s = extract_surface(&tree, engine, &root, &tag, &Demand::full(engine));
            println!(
                "surface {name}@{tag}: {} flags, {} env vars, {} modules, {} warnings",
                s.flags.len(),
                s.env.len(),
                s.modules.len(),
                s.warnings.len()
            );
            if engine.server.is_some() {
                assert!(s.flags.len() > 300 && s.env.len() > 250, "{name}@{tag}");
            }
        }
    }
    let (files, errors) = engine_audit::recipe::collect(&[shared().join("recipes")]);
    assert!(errors.is_empty(), "{errors:?}");
    let sglang = open(&corpus, "sglang.git").tags();
    let dynamo = open(&corpus, "dynamo.git").tags();
    let rules = engine_audit::rules::load_rules(&[]).unwrap();
    for (i, from) in sglang.iter().enumerate() {
        for to in &sglang[i..] {
            let opts = AuditOptions {
                open: OpenOptions { offline: true, cache_dir: None, ..Default::default() },
                rules: rules.clone(),
                ..AuditOptions::default()
            }
            .with_source(&SGLANG, Some(corpus.join("sglang.git").display().to_string()), None)
            .with_source(&DYNAMO, Some(corpus.join("dynamo.git").display().to_string()), None)
            .with_refs(&SGLANG, Some(from.clone()), Some(to.clone()))
            .with_refs(&DYNAMO, dynamo.first().cloned(), dynamo.last().cloned());
            let pair = std::time::Instant::now();
            let r = audit::run(&files, &opts).unwrap();
            println!(
                "audit {from} -> {to}: {} files, {} deployments, {} findings, {} problems, {:.1}s",
                files.len(),
                r.deployments_audited,
                r.findings.len(),
                r.problems.len(),
                pair.elapsed().as_secs_f64()
            );
            assert!(r.deployments_audited > 50, "{from} -> {to}");
            // A release against itself: tests/it/semver_guard.rs.
        }
    }
    let peak = peak_rss_mb();
    println!("sweep: {:.0}s, peak RSS {peak:?} MB", started.elapsed().as_secs_f64());
    assert!(started.elapsed() < std::time::Duration::from_secs(900), "the sweep is bounded in time");
    assert!(peak.is_none_or(|mb| mb < 2048), "the sweep is bounded in memory: {peak:?} MB");
}

/// argparse's abbreviations, read from the real parser (issue 25): a unique
/// prefix is the option it stands for, several make argparse exit.
#[test]
fn abbreviations_are_judged_as_argparse_judges_them() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let recipe = shared().join("recipes/benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/8k1k/disagg-b300-1p1d-tp4-tp4-mtp.yaml");
    let (files, errors) = engine_audit::recipe::collect(&[recipe]);
    assert!(errors.is_empty(), "{errors:?}");
    let repo = open(&corpus, "sglang.git");
    for to in ["v0.5.19", "v0.5.23"] {
        let tree = repo.tree_at(&repo.resolve(to).unwrap()).unwrap();
        let surface = extract_surface(&tree, &SGLANG, "python/sglang", to, &Demand::full(&SGLANG));
        assert_eq!(surface.parser.allow_abbrev, engine_audit::surface::Known::Value(true), "{to}: ArgumentParser(prog=\"sglang serve\")");
        assert!(surface.parser.evidence.as_ref().is_some_and(|e| e.path == "python/sglang/srt/server_args.py"), "{to}");
        let opts = AuditOptions { open: OpenOptions { offline: true, cache_dir: None, ..Default::default() }, ..AuditOptions::default() }
            .with_source(&SGLANG, Some(corpus.join("sglang.git").display().to_string()), None)
            .with_refs(&SGLANG, None, Some(to.into()));
        let r = audit::run(&files, &opts).unwrap();
        let algo: Vec<_> = r.findings.iter().filter(|f| f.subject == "speculative-algo").collect();
        assert!(!algo.is_empty() && algo.iter().all(|f| f.code() == "EA009"), "{to}: {algo:#?}");
        assert!(algo[0].message().contains("abbreviation of `--speculative-algorithm`"));
        let max_bs: Vec<_> = r.findings.iter().filter(|f| f.subject == "cuda-graph-max-bs").collect();
        match to {
            // Registered exactly: a deprecated alias.
            "v0.5.19" => assert!(max_bs.iter().all(|f| f.code() == "EA003"), "{max_bs:#?}"),
            _ => assert!(
                !max_bs.is_empty()
                    && max_bs.iter().all(|f| f.code() == "EA001"
                        && f.message().contains("ambiguous option")
                        && f.message().contains("`--cuda-graph-max-bs-decode`, `--cuda-graph-max-bs-prefill`")),
                "{max_bs:#?}"
            ),
        }
    }
}

/// A rule names the option; a recipe that abbreviates it is still caught.
#[test]
fn rules_see_the_option_an_abbreviation_stands_for() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let original = shared().join(FAMILY_8K1K).join("8k1k_mtp2_throughput_3p1d.yaml");
    let text = std::fs::read_to_string(&original).unwrap();
    assert!(text.contains("fp4-gemm-backend: \"flashinfer_trtllm\""));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abbreviated.yaml");
    std::fs::write(&path, text.replace("fp4-gemm-backend:", "fp4-gemm-back:")).unwrap();
    let (files, _) = engine_audit::recipe::collect(&[path]);
    let opts = AuditOptions {
        open: OpenOptions { offline: true, cache_dir: None, ..Default::default() },
        rules: engine_audit::rules::load_rules(&[]).unwrap(),
        ..AuditOptions::default()
    }
    .with_source(&SGLANG, Some(corpus.join("sglang.git").display().to_string()), None)
    .with_refs(&SGLANG, Some("v0.5.12.post1".into()), Some("v0.5.19".into()));
    let r = audit::run(&files, &opts).unwrap();
    assert_eq!(with_code(&r, "EA009").len(), 2, "prefill and decode");
    let r001 = with_code(&r, "R001");
    assert_eq!(r001.len(), 2, "{:#?}", r.findings.iter().map(|f| (f.code(), &f.subject)).collect::<Vec<_>>());
}

/// The InferenceX-shaped single-node script (issue 24): read through its sourced
/// helpers, arrays and branches, its deprecated flags are found at the bump.
#[test]
fn the_single_node_script_reports_its_deprecated_aliases() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/inferencex/benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh");
    let (files, errors) = engine_audit::recipe::collect(&[script]);
    assert!(errors.is_empty(), "{errors:?}");
    let opts = AuditOptions { open: OpenOptions { offline: true, cache_dir: None, ..Default::default() }, ..AuditOptions::default() }
        .with_source(&SGLANG, Some(corpus.join("sglang.git").display().to_string()), None)
        .with_refs(&SGLANG, Some("v0.5.16".into()), Some("v0.5.19".into()));
    let r = audit::run(&files, &opts).unwrap();
    assert_eq!(r.deployments_audited, 1);
    for (flag, replacement) in
        [("cuda-graph-max-bs", "cuda-graph-max-bs-decode"), ("disable-piecewise-cuda-graph", "cuda-graph-backend-prefill=disabled")]
    {
        let found: Vec<_> = r.findings.iter().filter(|f| f.subject == flag).collect();
        assert!(
            matches!(found.as_slice(), [f] if f.code() == "EA003" && f.message().contains(replacement) && f.condition.is_none()),
            "{flag}: {found:#?}"
        );
    }
    // Read on every path: nothing about the script is unread.
    assert!(with_code(&r, "EA306").is_empty(), "{:#?}", with_code(&r, "EA306"));
}
