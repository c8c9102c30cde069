//! The extracted vLLM surface against the real `vllm serve` parser and the
//! `envs.py` registry of every release with an oracle file
//! (`ENGINE_AUDIT_ORACLE`/`vllm-<V>.json`, see its README), read from the
//! corpus repository (`ENGINE_AUDIT_CORPUS`/`vllm.git`, tag `v<V>`); and every
//! tag of that repository extracted without a panic and with few warnings.
//! Without the corpus the tests say so and pass; `.ci/run` sets both.

use crate::oracle_support as oracle;
use crate::real_data::corpus;

use std::path::{Path, PathBuf};

use engine_audit::extract::{extract_surface, Demand};
use engine_audit::profiles::VLLM;
use engine_audit::source::{discover_package_root, EngineRepo, OpenOptions, Tree};
use engine_audit::surface::{EngineSurface, FlagDeprecationKind, Known};

fn oracle_dir() -> PathBuf {
    std::env::var_os("ENGINE_AUDIT_ORACLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/oracle"))
}

fn releases() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(oracle_dir())
        .map(|read| {
            read.flatten()
                .filter_map(|e| Some(e.file_name().to_string_lossy().strip_prefix("vllm-")?.strip_suffix(".json")?.to_string()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn repo(corpus: &Path) -> EngineRepo {
    let path = corpus.join("vllm.git");
    EngineRepo::open(path.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() })
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn surface_at(repo: &EngineRepo, tag: &str) -> EngineSurface {
    let tree = repo.tree_at(&repo.resolve(tag).unwrap_or_else(|e| panic!("{tag}: {e}"))).unwrap();
    let root = discover_package_root(&tree, &VLLM, None).unwrap();
    assert_eq!(root, "vllm");
    extract_surface(&tree as &dyn Tree, &VLLM, &root, tag, &Demand::full(&VLLM))
}

/// Every flag whose choices are computed in a way not read statically, with
/// the line that registers it and what was not folded.
fn dynamic_choice_flags(s: &EngineSurface) -> Vec<(String, String)> {
    s.flags
        .iter()
        .filter_map(|f| match &f.choices {
            Some(Known::Dynamic { dynamic }) => {
                Some((format!("{} ({}:{} @ {})", f.canonical(), f.evidence.path, f.evidence.line, s.ref_name), dynamic.replace('\n', " ")))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn vllm_surface_matches_the_real_parser_and_registry() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let releases = releases();
    assert!(!releases.is_empty(), "no vllm-*.json in {}", oracle_dir().display());
    let repo = repo(&corpus);
    let mut failures = Vec::new();
    for version in &releases {
        let oracle = oracle::load(&oracle_dir().join(format!("vllm-{version}.json")));
        let surface = surface_at(&repo, &format!("v{version}"));
        let flags = oracle::compare_vllm_flags(&oracle, &surface.flags);
        let env = oracle::compare_vllm_env(&oracle, &surface.env);
        println!("{flags}{env}  warnings: {}", surface.warnings.len());
        for (flag, text) in dynamic_choice_flags(&surface) {
            println!("    dynamic choices: {flag}");
            println!("      {text}");
        }
        for w in &surface.warnings {
            println!("    {}: {}", w.path, w.message);
        }
        let exact = [
            ("option recall", &flags.options_recall),
            ("option precision", &flags.options_precision),
            ("dest", &flags.dest),
            ("deprecation", &flags.deprecation),
            ("engine-only parser", &flags.engine_parser),
            ("env recall", &env.recall),
            ("env precision", &env.precision),
        ];
        for (name, score) in exact {
            if score.hit != score.total {
                failures.push(format!("{version}: {name} {score}"));
            }
        }
        // Choices are held to the bar over the options that have some (over
        // every option, the many without choices would hide misses).
        for (name, score) in [("choices (options with choices)", &flags.choices_with), ("literal defaults", &flags.defaults_literal)] {
            if score.pct() < 99.0 || !score.wrong.is_empty() {
                failures.push(format!("{version}: {name} {score} (bar: >= 99%, every miss dynamic)"));
            }
        }
        // Config instances are compared field by field with their repr; one
        // whose construction may compute fields is dynamic, never guessed.
        let objects = &flags.defaults_object;
        if !objects.wrong.is_empty() {
            failures.push(format!("{version}: object defaults {objects}"));
        }
        let (hit, total) = flags.defaults_all();
        if (hit as f64) < 0.99 * total as f64 {
            failures.push(format!("{version}: defaults over every option {hit}/{total} (bar: >= 99%)"));
        }
        if !env.defaults.wrong.is_empty() {
            failures.push(format!("{version}: env defaults {}", env.defaults));
        }
    }
    assert!(failures.is_empty(), "below the bar:\n{}", failures.join("\n"));
}

/// Facts read off the source by hand, for the releases with oracles.
#[test]
fn vllm_facts_from_the_source() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let repo = repo(&corpus);
    let s = surface_at(&repo, "v0.34.0");
    let flag = |name: &str| s.flag(name).unwrap_or_else(|| panic!("{name} not extracted"));
    // `-tp` is a short alias of the `get_kwargs` flag; the engine-only parser has it.
    assert_eq!(flag("-tp").canonical(), "--tensor-parallel-size");
    assert_eq!(flag("-tp").engine_parser, Some(true));
    // Frontend flags come from the loop over `FrontendArgs`' fields: serve only.
    for serve_only in ["--host", "--port", "--tool-call-parser"] {
        assert_eq!(flag(serve_only).engine_parser, Some(false), "{serve_only}");
    }
    // The parser's registry makes BooleanOptionalAction pair --enable/--disable.
    assert_eq!(
        flag("--enable-prefix-caching").names,
        ["--enable-prefix-caching", "--disable-prefix-caching", "--no-enable-prefix-caching"]
    );
    // `Literal` aliases from other modules, sorted, with `None` for optionals.
    assert_eq!(
        flag("--runner").choices,
        Some(Known::Value(["auto", "draft", "generate", "pooling"].map(|c| serde_json::json!(c)).to_vec()))
    );
    // Choices built at import time: `get_args` of a `Literal` alias in its own
    // order, and the device type vLLM's CUDA and ROCm platform classes share.
    let strings = |xs: &[&str]| Some(Known::Value(xs.iter().map(|c| serde_json::json!(c)).collect()));
    assert_eq!(flag("--log-level").choices, strings(&["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"]));
    assert_eq!(flag("--mm-processor-device").choices, strings(&["auto", "cpu", "cuda"]));
    let dep = |name: &str| flag(name).deprecated.as_ref().map(|d| (d.kind, d.replacement.clone()));
    assert_eq!(dep("--log-config-file"), Some((FlagDeprecationKind::Announced, Some("--logging-config.pylogging_config_file".into()))));
    assert_eq!(dep("--disable-cascade-attn"), Some((FlagDeprecationKind::Noop, None)));
    assert_eq!(dep("--allow-deprecated-quantization"), None);
    // `get_kwargs` gives some int fields the release's converters, written as
    // a set (v0.34.0) or in place (`elif name in ("max_num_batched_tokens", ...)`,
    // v0.21.0); the real parser has them at both.
    let old = surface_at(&repo, "v0.21.0");
    for s in [&s, &old] {
        let ty = |name: &str| s.flag(name).and_then(|f| f.type_name.clone());
        assert_eq!(ty("--max-num-batched-tokens").as_deref(), Some("human_readable_int"), "{}", s.ref_name);
        assert_eq!(ty("--max-model-len").as_deref(), Some("human_readable_int_or_auto"), "{}", s.ref_name);
        assert_eq!(ty("--max-num-seqs").as_deref(), Some("int"), "{}", s.ref_name);
    }
    // The sorted `Literal` choices, the release's "None", then `permutations(get_args(...), r=2)` joined.
    assert_eq!(
        old.flag("--collect-detailed-traces").and_then(|f| f.choices.clone()),
        strings(&["all", "model", "worker", "None", "model,worker", "model,all", "worker,model", "worker,all", "all,model", "all,worker"])
    );
    assert_eq!(old.flag("--calculate-kv-scales").and_then(|f| f.deprecated.as_ref()).map(|d| d.kind), Some(FlagDeprecationKind::Announced));
    assert!(old.flag("--enable-prefix-caching").is_some_and(|f| f.names.iter().any(|n| n == "--no-enable-prefix-caching")));
    assert!(old.flag("--disable-prefix-caching").is_none(), "no --disable- twin before the registry override");
}

/// Every tag of the corpus: no panic, a plausible parser, few warnings.
#[test]
fn every_vllm_tag_extracts() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let repo = repo(&corpus);
    let mut tags: Vec<String> = repo.tags().into_iter().filter(|t| t.starts_with('v')).collect();
    tags.sort();
    for tag in &tags {
        let s = surface_at(&repo, tag);
        let dynamic_choices = s.flags.iter().filter(|f| matches!(f.choices, Some(Known::Dynamic { .. }))).count();
        let dynamic_defaults = s.flags.iter().filter(|f| f.default.is_dynamic()).count();
        let deprecated: Vec<String> =
            s.flags.iter().filter_map(|f| f.deprecated.as_ref().map(|d| format!("{} {:?}", f.canonical(), d.kind))).collect();
        println!(
            "== vllm {tag}: {} flags ({} serve-only), {} env vars, {dynamic_choices} dynamic choices, {dynamic_defaults} dynamic defaults, {} warnings; deprecated: {deprecated:?}",
            s.flags.len(),
            s.flags.iter().filter(|f| f.engine_parser == Some(false)).count(),
            s.env.iter().filter(|e| e.kind != "read").count(),
            s.warnings.len()
        );
        for w in &s.warnings {
            println!("    {}: {}", w.path, w.message);
        }
        for (flag, text) in dynamic_choice_flags(&s) {
            println!("    dynamic choices: {flag}: {text}");
        }
        assert!(s.flags.len() > 200, "{tag}: implausibly few flags");
        assert!(s.env.len() > 200, "{tag}: implausibly few env vars");
        assert!(s.warnings.len() <= 3, "{tag}: {} warnings", s.warnings.len());
    }
}
