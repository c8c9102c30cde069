//! The extracted ATOM surface against ATOM's real server parser and
//! `environment_variables` registry, dumped at each ref by
//! `scripts/oracle/atom_dump.py` (see docs/atom.md) into `ENGINE_AUDIT_ATOM_ORACLE`
//! (`atom-<ref>.json`), read from the ATOM git dir `ENGINE_AUDIT_ATOM` at that
//! ref. Without both the tests say so and pass.
//!
//! The bar: option strings and dests 100%; choices and defaults >= 99% with
//! every miss reported dynamic, none wrong; env names 100%, env defaults none wrong.

use crate::oracle_support as oracle;

use std::path::PathBuf;

use engine_audit::extract::{extract_surface, Demand};
use engine_audit::profiles::ATOM;
use engine_audit::source::{discover_package_root, EngineRepo, OpenOptions, Tree};
use engine_audit::surface::{EngineSurface, Known};

/// (ATOM git dir, oracle folder), or `None` with a note.
fn inputs(test: &str) -> Option<(PathBuf, PathBuf)> {
    let repo = std::env::var_os("ENGINE_AUDIT_ATOM").map(PathBuf::from);
    let dumps = std::env::var_os("ENGINE_AUDIT_ATOM_ORACLE").map(PathBuf::from);
    match (repo, dumps) {
        (Some(r), Some(d)) => Some((r, d)),
        _ => {
            eprintln!(
                "ENGINE_AUDIT_ATOM and ENGINE_AUDIT_ATOM_ORACLE are not both set: {test} is skipped (docs/atom.md says how to make them)"
            );
            None
        }
    }
}

/// The refs with a dump: `atom-<ref>.json`.
fn refs(dumps: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dumps)
        .unwrap_or_else(|e| panic!("{}: {e}", dumps.display()))
        .flatten()
        .filter_map(|e| Some(e.file_name().to_string_lossy().strip_prefix("atom-")?.strip_suffix(".json")?.to_string()))
        .collect();
    out.sort();
    out
}

fn surface_at(repo: &EngineRepo, r: &str) -> EngineSurface {
    let tree = repo.tree_at(&repo.resolve(r).unwrap_or_else(|e| panic!("{r}: {e}"))).unwrap();
    let root = discover_package_root(&tree, &ATOM, None).unwrap();
    assert_eq!(root, "atom");
    extract_surface(&tree as &dyn Tree, &ATOM, &root, r, &Demand::full(&ATOM))
}

fn open(path: &std::path::Path) -> EngineRepo {
    EngineRepo::open(path.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() })
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn atom_surface_matches_the_real_parser_and_registry() {
    let Some((repo_path, dumps)) = inputs(module_path!()) else { return };
    let refs = refs(&dumps);
    assert!(!refs.is_empty(), "no atom-*.json in {}", dumps.display());
    let repo = open(&repo_path);
    let mut failures = Vec::new();
    for r in &refs {
        let oracle = oracle::load(&dumps.join(format!("atom-{r}.json")));
        let surface = surface_at(&repo, r);
        let flags = oracle::compare_vllm_flags(&oracle, &surface.flags);
        let env = oracle::compare_vllm_env(&oracle, &surface.env);
        let shape = compare_shape(&oracle, &surface);
        println!("{}{shape}{env}  warnings: {}", flags.to_string().replacen("== vllm", "== atom", 1), surface.warnings.len());
        for w in &surface.warnings {
            println!("    {}: {}", w.path, w.message);
        }
        for (name, score) in [
            ("option recall", &flags.options_recall),
            ("option precision", &flags.options_precision),
            ("dest", &flags.dest),
            ("action", &shape.action),
            ("nargs", &shape.nargs),
            ("const", &shape.constant),
            ("type", &shape.type_name),
            ("env recall", &env.recall),
            ("env precision", &env.precision),
        ] {
            if score.hit != score.total {
                failures.push(format!("{r}: {name} {score}"));
            }
        }
        for (name, score) in [("choices", &flags.choices_all), ("literal defaults", &flags.defaults_literal)] {
            if score.pct() < 99.0 || !score.wrong.is_empty() {
                failures.push(format!("{r}: {name} {score} (bar: >= 99%, every miss dynamic)"));
            }
        }
        if !flags.defaults_object.wrong.is_empty() {
            failures.push(format!("{r}: object defaults {}", flags.defaults_object));
        }
        if !env.defaults.wrong.is_empty() {
            failures.push(format!("{r}: env defaults {}", env.defaults));
        }
        if !surface.warnings.is_empty() {
            failures.push(format!("{r}: {} extraction warnings", surface.warnings.len()));
        }
    }
    assert!(failures.is_empty(), "below the bar:\n{}", failures.join("\n"));
}

/// What the vLLM comparison does not look at: each action's class, `nargs`,
/// `const` and `type`.
struct Shape {
    action: oracle::Score,
    nargs: oracle::Score,
    constant: oracle::Score,
    type_name: oracle::Score,
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        for (name, s) in [("action class", &self.action), ("nargs", &self.nargs), ("const", &self.constant), ("type", &self.type_name)] {
            writeln!(f, "  {name:<34} {s}")?;
            for m in s.wrong.iter().chain(&s.dynamic) {
                writeln!(f, "      miss:    {m}")?;
            }
        }
        Ok(())
    }
}

fn compare_shape(oracle: &oracle::Oracle, surface: &EngineSurface) -> Shape {
    let mut out =
        Shape { action: Default::default(), nargs: Default::default(), constant: Default::default(), type_name: Default::default() };
    let record = |score: &mut oracle::Score, ok: bool, dynamic: bool, what: String| {
        score.total += 1;
        if ok {
            score.hit += 1;
        } else if dynamic {
            score.dynamic.push(what);
        } else {
            score.wrong.push(what);
        }
    };
    for a in &oracle.actions {
        let Some(first) = a["option_strings"].get(0).and_then(|n| n.as_str()) else { continue };
        let Some(flag) = surface.flag(first) else { continue };
        // argparse's class names against the extraction's action names.
        let want = match a["action"].as_str().unwrap_or_default() {
            "_StoreAction" => "store",
            "_StoreTrueAction" => "store_true",
            "_StoreFalseAction" => "store_false",
            "_StoreConstAction" => "store_const",
            "_AppendAction" => "append",
            "_CountAction" => "count",
            "_HelpAction" => "help",
            other => other,
        };
        record(&mut out.action, flag.action == want, false, format!("{first}: {} (real: {want})", flag.action));
        let nargs = flag.nargs.clone().unwrap_or(serde_json::Value::Null);
        record(&mut out.nargs, nargs == a["nargs"], false, format!("{first}: {nargs} (real: {})", a["nargs"]));
        match &flag.const_value {
            Some(Known::Dynamic { dynamic }) => record(&mut out.constant, false, true, format!("{first}: `{dynamic}`")),
            got => {
                let got = got.as_ref().and_then(|k| k.value().cloned()).unwrap_or(serde_json::Value::Null);
                record(&mut out.constant, got == a["const"], false, format!("{first}: {got} (real: {})", a["const"]));
            }
        }
        // `json.loads` is `loads` to Python's `__qualname__`.
        let got = flag.type_name.as_deref().map(|t| t.rsplit('.').next().unwrap_or(t).to_string());
        let want = a["type"].as_str().map(String::from);
        record(&mut out.type_name, got == want, false, format!("{first}: {got:?} (real: {want:?})"));
    }
    out
}

/// Facts read off the source by hand.
#[test]
fn atom_facts_from_the_source() {
    let Some((repo_path, _)) = inputs(module_path!()) else { return };
    let repo = open(&repo_path);
    // v0.1.2: one spelling per flag, `main` in `openai_server.py` itself.
    let old = surface_at(&repo, "v0.1.2");
    let flag = |s: &EngineSurface, name: &str| s.flag(name).cloned();
    assert!(flag(&old, "--kv_cache_dtype").is_some() && flag(&old, "--kv-cache-dtype").is_none());
    assert_eq!(flag(&old, "--enable_prefix_caching").unwrap().action, "store_true");
    assert!(flag(&old, "--server-port").is_some(), "the entry's own flags");
    // v0.1.5 picks `main` by `if envs.USE_ATOMESH_ENTRYPOINTS:`; unset, the OpenAI server's.
    let mid = surface_at(&repo, "v0.1.5");
    assert!(flag(&mid, "--server-port").is_some() && flag(&mid, "--hf-overrides").is_some());
    assert_eq!(flag(&mid, "--enable_prefix_caching").unwrap().default, Known::Value(serde_json::json!(true)));
    // main: the parser class registers the other spelling of each long option.
    let main = surface_at(&repo, "main");
    let prefix = flag(&main, "--kv-cache-dtype").unwrap();
    assert_eq!(prefix.dest, "kv_cache_dtype");
    assert!(prefix.names.iter().any(|n| n == "--kv_cache_dtype"));
    assert!(flag(&main, "--no-enable-prefix-caching").is_some());
    assert_eq!(flag(&main, "--load_dummy").unwrap().const_value, Some(Known::Value(serde_json::json!("empty"))));
    assert_eq!(main.parser.allow_abbrev, Known::Value(true));
    assert!(main.parser.evidence.as_ref().is_some_and(|e| e.path.ends_with("openai/api_server.py")));
}
