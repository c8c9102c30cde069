//! The extracted TensorRT-LLM surface against NVIDIA's own committed API
//! references, read from the same tree as the source: for each tag of the git
//! repo `ENGINE_AUDIT_TRTLLM` (assembled as docs/trtllm.md says), the
//! `trtllm-serve serve` options against
//! `tests/unittest/api_stability/references/trtllm_serve_cli.yaml`, and the
//! top-level LlmArgs keys against `references/llm.yaml` and
//! `references_committed/llm.yaml` (the `LLM.__init__` parameters). A tag
//! without a reference file skips that half and says so. Without the variable
//! the test says so and passes.
//!
//! The bar: every option and field 100% both ways (names, option strings);
//! defaults, choices and statuses >= 99% with every miss dynamic, none wrong.
//!
//! What NVIDIA's listing is, read from its harness
//! (`tests/unittest/api_stability/api_stability_core.py` and
//! `llmapi/utils.py::generate_api_docs_as_docstring` at v1.3.0rc3): the `LLM`
//! parameters are the model's JSON-schema properties, keyed by alias, without
//! names that start with `_`; and the `LLM.__init__` check is a subset check,
//! so the reference may also list fields of `TrtLlmArgs` (the TensorRT-engine
//! `LLM`'s arguments) that `TorchLlmArgs` has not. Both are explained, not
//! scored: a key whose alias is private, and a reference name `TrtLlmArgs`
//! declares. A tree whose `SOURCE` says `reference-after-source: <path>` (the
//! reference was read at a later commit than the source) is compared and
//! printed, not held to the bar: its differences are the gap.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use engine_audit::extract::{extract_surface, Demand};
use engine_audit::profiles::TRTLLM;
use engine_audit::source::{discover_package_root, EngineRepo, OpenOptions, Tree};
use engine_audit::surface::{ConfigKey, EngineSurface, Flag, Known};
use serde_json::Value;

const CLI_REFERENCE: &str = "tests/unittest/api_stability/references/trtllm_serve_cli.yaml";
const LLM_REFERENCES: &[&str] =
    &["tests/unittest/api_stability/references/llm.yaml", "tests/unittest/api_stability/references_committed/llm.yaml"];

#[derive(Default)]
struct Score {
    hit: usize,
    total: usize,
    dynamic: Vec<String>,
    wrong: Vec<String>,
}

impl Score {
    fn record(&mut self, outcome: Outcome, what: String) {
        self.total += 1;
        match outcome {
            Outcome::Hit => self.hit += 1,
            Outcome::Dynamic => self.dynamic.push(what),
            Outcome::Wrong => self.wrong.push(what),
        }
    }
    fn pct(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.hit as f64 / self.total as f64
        }
    }
    fn exact(&self) -> bool {
        self.hit == self.total
    }
    fn passes(&self) -> bool {
        self.pct() >= 99.0 && self.wrong.is_empty()
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{} ({:.1}%)", self.hit, self.total, self.pct())?;
        for d in &self.dynamic {
            write!(f, "\n      dynamic: {d}")?;
        }
        for w in &self.wrong {
            write!(f, "\n      WRONG:   {w}")?;
        }
        Ok(())
    }
}

enum Outcome {
    Hit,
    Dynamic,
    Wrong,
}

fn repo() -> Option<EngineRepo> {
    let Some(path) = std::env::var_os("ENGINE_AUDIT_TRTLLM").map(PathBuf::from) else {
        eprintln!("ENGINE_AUDIT_TRTLLM is not set: the TensorRT-LLM oracle is skipped (docs/trtllm.md says how to assemble the repo)");
        return None;
    };
    Some(
        EngineRepo::open(path.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() })
            .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

fn yaml(tree: &dyn Tree, path: &str) -> Option<Value> {
    let bytes = tree.read(path).ok()?;
    Some(serde_yaml_ng::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}: {e}")))
}

/// YAML's and the extractor's values agree (`0.9` and `0.9`, `2048` and `2048.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn outcome<T>(known: &Known<T>, ok: impl FnOnce(&T) -> bool) -> Outcome {
    match known {
        Known::Dynamic { .. } => Outcome::Dynamic,
        Known::Value(v) if ok(v) => Outcome::Hit,
        Known::Value(_) => Outcome::Wrong,
    }
}

/// The `:tag:` status a click option's help starts with.
fn flag_status(flag: &Flag) -> Option<&str> {
    flag.help.as_deref()?.strip_prefix(":tag:`")?.split('`').next()
}

/// `Choice(['a', 'b'])` → `["a", "b"]`.
fn reference_choices(text: &str) -> Option<BTreeSet<String>> {
    let inner = text.strip_prefix("Choice([")?.strip_suffix("])")?;
    Some(inner.split(',').map(|s| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string()).filter(|s| !s.is_empty()).collect())
}

/// The values of the first `Literal[...]` in an annotation, as written.
fn literal_values(annotation: &str) -> Option<BTreeSet<String>> {
    let start = annotation.find("Literal[")? + "Literal[".len();
    let end = start + annotation[start..].find(']')?;
    Some(annotation[start..end].split(',').map(|s| s.trim().trim_matches(|c| c == '\'' || c == '"').to_string()).collect())
}

fn as_strings(values: &[Value]) -> BTreeSet<String> {
    values.iter().map(|v| v.as_str().map(String::from).unwrap_or_else(|| v.to_string())).collect()
}

struct CliReport {
    names: Score,
    option_strings: Score,
    types: Score,
    choices: Score,
    defaults: Score,
    status: Score,
}

fn compare_cli(reference: &Value, flags: &[Flag]) -> CliReport {
    let options = reference["commands"]["serve"]["options"].as_object().cloned().unwrap_or_default();
    let ours: BTreeMap<&str, &Flag> = flags.iter().map(|f| (f.dest.as_str(), f)).collect();
    let mut r = CliReport {
        names: Score::default(),
        option_strings: Score::default(),
        types: Score::default(),
        choices: Score::default(),
        defaults: Score::default(),
        status: Score::default(),
    };
    for name in ours.keys().filter(|n| !options.contains_key(**n)) {
        r.names.record(Outcome::Wrong, format!("{name}: extracted, not in the reference"));
    }
    for (name, want) in &options {
        let Some(flag) = ours.get(name.as_str()) else {
            r.names.record(Outcome::Wrong, format!("{name}: in the reference, not extracted"));
            continue;
        };
        r.names.record(Outcome::Hit, name.clone());
        let want_flags: BTreeSet<String> = as_strings(want["flags"].as_array().map(Vec::as_slice).unwrap_or_default());
        let got_flags: BTreeSet<String> = flag.names.iter().cloned().collect();
        let ok = if want_flags == got_flags { Outcome::Hit } else { Outcome::Wrong };
        r.option_strings.record(ok, format!("{name}: {got_flags:?} vs {want_flags:?}"));
        let want_type = want["type"].as_str().unwrap_or_default();
        match reference_choices(want_type) {
            Some(want_choices) => {
                let got = flag.choices.as_ref().map_or(Outcome::Wrong, |c| outcome(c, |v| as_strings(v) == want_choices));
                r.choices.record(got, format!("{name}: {:?} vs {want_choices:?}", flag.choices));
                r.types.record(if flag.type_name.as_deref() == Some("Choice") { Outcome::Hit } else { Outcome::Wrong }, name.clone());
            }
            None => {
                let ok = flag.type_name.as_deref() == Some(want_type) || (want_type == "str" && flag.type_name.is_none());
                r.types.record(if ok { Outcome::Hit } else { Outcome::Wrong }, format!("{name}: {:?} vs {want_type}", flag.type_name));
            }
        }
        let want_default = &want["default"];
        // Click reports a `multiple` option's unset default as `None`.
        let got = outcome(&flag.default, |v| same(v, want_default) || (v.as_array().is_some_and(Vec::is_empty) && want_default.is_null()));
        r.defaults.record(got, format!("{name}: {:?} vs {want_default}", flag.default));
        if let Some(want_status) = want["status"].as_str() {
            let ok = if flag_status(flag) == Some(want_status) { Outcome::Hit } else { Outcome::Wrong };
            r.status.record(ok, format!("{name}: {:?} vs {want_status}", flag_status(flag)));
        }
    }
    r
}

struct ArgsReport {
    names: Score,
    defaults: Score,
    choices: Score,
    status: Score,
    /// Differences NVIDIA's listing rules account for (module docs).
    explained: Vec<String>,
}

/// The fields class `class` declares in its own body (`    name: T ...` at
/// the class's indent), by a plain reading of the text: enough to tell a
/// reference name that belongs to a sibling model.
fn declared_fields(source: &str, class: &str) -> BTreeSet<String> {
    let head = format!("class {class}(");
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in source.lines() {
        if line.starts_with(&head) {
            inside = true;
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with(' ') && !line.starts_with('#') && !line.starts_with(')') {
            break;
        }
        let Some(rest) = line.strip_prefix("    ").filter(|_| inside) else { continue };
        if let Some((name, _)) = rest.split_once(':') {
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with('_') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

fn compare_args(references: &[Value], keys: &[ConfigKey], trt_only: &BTreeSet<String>) -> ArgsReport {
    let mut params: BTreeMap<String, Value> = BTreeMap::new();
    for reference in references {
        for (name, v) in reference["methods"]["__init__"]["parameters"].as_object().cloned().unwrap_or_default() {
            // `**kwargs` is how `LLM` takes the rest, not a field.
            if name != "kwargs" {
                params.insert(name, v);
            }
        }
    }
    let ours: BTreeMap<&str, &ConfigKey> = keys.iter().filter(|k| !k.path.contains('.')).map(|k| (k.path.as_str(), k)).collect();
    let mut r = ArgsReport {
        names: Score::default(),
        defaults: Score::default(),
        choices: Score::default(),
        status: Score::default(),
        explained: Vec::new(),
    };
    for (name, key) in ours.iter().filter(|(n, _)| !params.contains_key(**n)) {
        match key.aliases.iter().find(|a| a.starts_with('_')) {
            Some(alias) => r.explained.push(format!("{name}: its alias `{alias}` is private, which NVIDIA's listing leaves out")),
            None => r.names.record(Outcome::Wrong, format!("{name}: extracted, not in the references")),
        }
    }
    for (name, want) in &params {
        let Some(key) = ours.get(name.as_str()) else {
            if trt_only.contains(name) {
                r.explained.push(format!("{name}: a field of `TrtLlmArgs` (the TensorRT-engine LLM), not of `TorchLlmArgs`"));
            } else {
                r.names.record(Outcome::Wrong, format!("{name}: in the references, not extracted"));
            }
            continue;
        };
        r.names.record(Outcome::Hit, name.clone());
        let want_default = &want["default"];
        let got = match (&key.default, &key.default_factory) {
            // The references write a factory-made default as `null`, and a
            // required field as `inspect._empty`.
            (_, Some(_)) if want_default.is_null() => Outcome::Hit,
            (None, _) if want_default.as_str() == Some("inspect._empty") => Outcome::Hit,
            (Some(default), None) => outcome(default, |v| same(v, want_default)),
            _ => Outcome::Wrong,
        };
        r.defaults.record(got, format!("{name}: {:?} vs {want_default}", key.default));
        if let Some(want_choices) = want["annotation"].as_str().and_then(literal_values) {
            let got = key.choices.as_ref().map_or(Outcome::Wrong, |c| outcome(c, |v| as_strings(v) == want_choices));
            r.choices.record(got, format!("{name}: {:?} vs {want_choices:?}", key.choices));
        }
        if let Some(want_status) = want["status"].as_str() {
            let ok = if key.status.as_deref() == Some(want_status) { Outcome::Hit } else { Outcome::Wrong };
            r.status.record(ok, format!("{name}: {:?} vs {want_status}", key.status));
        }
    }
    r
}

fn surface_at(repo: &EngineRepo, tag: &str) -> (EngineSurface, Box<dyn Tree>) {
    let tree = repo.tree_at(&repo.resolve(tag).unwrap_or_else(|e| panic!("{tag}: {e}"))).unwrap();
    let root = discover_package_root(&tree, &TRTLLM, None).unwrap();
    let surface = extract_surface(&tree as &dyn Tree, &TRTLLM, &root, tag, &Demand::full(&TRTLLM));
    (surface, Box::new(tree))
}

#[test]
fn trtllm_surface_matches_nvidias_api_references() {
    let Some(repo) = repo() else { return };
    let tags = repo.tags();
    assert!(!tags.is_empty(), "the assembled repo has no tags");
    let mut failures = Vec::new();
    for tag in &tags {
        let (surface, tree) = surface_at(&repo, tag);
        let source_note = tree.read("SOURCE").map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        let later: BTreeSet<&str> =
            source_note.lines().filter_map(|l| l.trim().strip_prefix("reference-after-source:")).map(str::trim).collect();
        println!(
            "== trtllm {tag} ({} options, {} keys, {} warnings)",
            surface.flags.len(),
            surface.config_keys.len(),
            surface.warnings.len()
        );
        for w in &surface.warnings {
            println!("    warning {}: {}", w.path, w.message);
        }
        match yaml(tree.as_ref(), CLI_REFERENCE) {
            Some(reference) => {
                let held = !later.contains(CLI_REFERENCE);
                if !held {
                    println!("  {CLI_REFERENCE} was read at a later commit than the source (SOURCE): compared, not held to the bar");
                }
                let r = compare_cli(&reference, &surface.flags);
                for (name, score, exact) in [
                    ("serve options", &r.names, true),
                    ("option strings", &r.option_strings, true),
                    ("types", &r.types, true),
                    ("choices", &r.choices, false),
                    ("defaults", &r.defaults, false),
                    ("status", &r.status, false),
                ] {
                    println!("  {name:<16} {score}");
                    if held && ((exact && !score.exact()) || !score.passes()) {
                        failures.push(format!("{tag}: {name} {}/{}", score.hit, score.total));
                    }
                }
            }
            None => println!("  {CLI_REFERENCE}: not in this tree, the serve options are not compared"),
        }
        let references: Vec<Value> = LLM_REFERENCES.iter().filter_map(|p| yaml(tree.as_ref(), p)).collect();
        if references.is_empty() {
            println!("  no llm.yaml reference in this tree: the LlmArgs keys are not compared");
            continue;
        }
        let trt_only = tree
            .read("tensorrt_llm/llmapi/llm_args.py")
            .map(|b| declared_fields(&String::from_utf8_lossy(&b), "TrtLlmArgs"))
            .unwrap_or_default();
        let r = compare_args(&references, &surface.config_keys, &trt_only);
        for e in &r.explained {
            println!("  explained:       {e}");
        }
        for (name, score, exact) in [
            ("LlmArgs fields", &r.names, true),
            ("defaults", &r.defaults, false),
            ("choices", &r.choices, false),
            ("status", &r.status, false),
        ] {
            println!("  {name:<16} {score}");
            if (exact && !score.exact()) || !score.passes() {
                failures.push(format!("{tag}: {name} {}/{}", score.hit, score.total));
            }
        }
    }
    assert!(failures.is_empty(), "below the bar:\n{}", failures.join("\n"));
}
