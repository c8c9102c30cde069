//! Rule self-tests, ast-grep style: every `invalid` case must fire, every
//! `valid` case must not, on each engine the case names (a fixture tree under
//! `fixtures/rules/`, or a tag of the corpus repository).

use super::model::{EngineRef, TestCase, TestDeployment};
use super::when::{normalize_flag, DeploymentFacts, Fact, FactValue, RoleFacts};
use super::{evaluate, Rule, RuleOrigin};
use crate::source::{discover_package_root, parse_version_ref, DirTree, EngineRepo, OpenOptions, Tree};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CaseOutcome {
    /// A valid case did not fire.
    Validated,
    /// An invalid case fired (with the expected number of hits, if given).
    Reported,
    /// A valid case fired: a false positive.
    Noisy,
    /// An invalid case did not fire (or fired a different number of times).
    Missing,
    /// Not run: no corpus, or the fixture folder is not available.
    Skipped(String),
    /// The engine could not be opened.
    Error(String),
}

impl CaseOutcome {
    pub(crate) fn is_failure(&self) -> bool {
        matches!(self, CaseOutcome::Noisy | CaseOutcome::Missing | CaseOutcome::Error(_))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CaseResult {
    pub rule_id: String,
    pub case: String,
    /// `fixture:r001/trtllm-early-return` or `corpus:v0.5.19`.
    pub engine: String,
    pub must_fire: bool,
    pub hits: usize,
    pub outcome: CaseOutcome,
}

impl fmt::Display for CaseResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match &self.outcome {
            CaseOutcome::Validated => "validated".to_string(),
            CaseOutcome::Reported => "reported".to_string(),
            CaseOutcome::Noisy => "NOISY".to_string(),
            CaseOutcome::Missing => "MISSING".to_string(),
            CaseOutcome::Skipped(why) => format!("skipped ({why})"),
            CaseOutcome::Error(e) => format!("ERROR ({e})"),
        };
        write!(f, "{} {} @ {}: {} [{} hit(s)]", self.rule_id, self.case, self.engine, label, self.hits)
    }
}

/// Counts per outcome, for the summary line.
pub(crate) fn summary(results: &[CaseResult]) -> String {
    let count = |p: fn(&CaseOutcome) -> bool| results.iter().filter(|r| p(&r.outcome)).count();
    format!(
        "{} validated, {} reported, {} noisy, {} missing, {} skipped, {} errors",
        count(|o| *o == CaseOutcome::Validated),
        count(|o| *o == CaseOutcome::Reported),
        count(|o| *o == CaseOutcome::Noisy),
        count(|o| *o == CaseOutcome::Missing),
        count(|o| matches!(o, CaseOutcome::Skipped(_))),
        count(|o| matches!(o, CaseOutcome::Error(_))),
    )
}

/// Run every case of every rule. `corpus` is a folder holding each engine's
/// repository as `<engine>.git` (or one bare clone, for the rules' one engine);
/// corpus cases are skipped without it.
pub(crate) fn run_self_tests(rules: &[Rule], corpus: Option<&Path>) -> Vec<CaseResult> {
    let mut engines = Engines::new(corpus);
    let mut out = Vec::new();
    for rule in rules {
        let cases = rule.spec.tests.invalid.iter().map(|c| (c, true)).chain(rule.spec.tests.valid.iter().map(|c| (c, false)));
        for (case, must_fire) in cases {
            for engine in &case.engines {
                out.push(run_case(rule, case, must_fire, engine, &mut engines));
            }
        }
    }
    out
}

fn run_case(rule: &Rule, case: &TestCase, must_fire: bool, engine: &EngineRef, engines: &mut Engines) -> CaseResult {
    let mut result = CaseResult {
        rule_id: rule.spec.id.clone(),
        case: case.name.clone(),
        engine: match engine {
            EngineRef::Fixture(f) => format!("fixture:{f}"),
            EngineRef::Corpus(t) => format!("corpus:{t}"),
        },
        must_fire,
        hits: 0,
        outcome: CaseOutcome::Validated,
    };
    let loaded = match engines.get(rule, engine) {
        Ok(Some(l)) => l,
        Ok(None) => {
            result.outcome = CaseOutcome::Skipped(match engine {
                EngineRef::Corpus(_) => "no corpus: set ENGINE_AUDIT_CORPUS".into(),
                EngineRef::Fixture(f) => format!("fixture folder {f} not found"),
            });
            return result;
        }
        Err(e) => {
            result.outcome = CaseOutcome::Error(e);
            return result;
        }
    };
    // The case's version wins; a corpus tag names its own.
    let version = case.version.as_deref().and_then(|v| v.parse().ok()).or_else(|| loaded.version.clone());
    let ref_name = match engine {
        EngineRef::Fixture(f) => format!("fixture:{f}"),
        EngineRef::Corpus(t) => t.clone(),
    };
    let facts = deployment_facts(&format!("{}/{}", rule.spec.id, case.name), &case.deployment);
    let hits = evaluate(rule, &facts, loaded.tree.as_ref(), &loaded.root, &ref_name, version.as_ref());
    result.hits = hits.len();
    let fired = !hits.is_empty();
    result.outcome = match (must_fire, fired) {
        (true, true) if case.hits.is_none_or(|n| n == hits.len()) => CaseOutcome::Reported,
        (true, _) => CaseOutcome::Missing,
        (false, false) => CaseOutcome::Validated,
        (false, true) => CaseOutcome::Noisy,
    };
    result
}

struct LoadedEngine {
    tree: Box<dyn Tree>,
    root: String,
    version: Option<pep440_rs::Version>,
}

/// Opened engines, shared across cases (listing a git tree is not free).
struct Engines {
    corpus: Option<PathBuf>,
    /// The corpus repository of each engine id, opened on first use.
    repos: HashMap<&'static str, Result<EngineRepo, String>>,
    loaded: HashMap<String, LoadedEngine>,
}

impl Engines {
    fn new(corpus: Option<&Path>) -> Self {
        Engines { corpus: corpus.map(Path::to_path_buf), repos: HashMap::new(), loaded: HashMap::new() }
    }

    /// The corpus repository of `profile`: `<corpus>/<id>.git` when the corpus
    /// is a folder of them (`.ci/run`'s layout), else the corpus itself (a bare
    /// clone given for the one engine the rules are about).
    fn corpus_repo(&mut self, profile: &'static crate::profiles::EngineProfile) -> Option<Result<&EngineRepo, String>> {
        let corpus = self.corpus.as_ref()?;
        let nested = corpus.join(format!("{}.git", profile.id));
        let path = if nested.exists() { nested } else { corpus.clone() };
        let repo = self.repos.entry(profile.id).or_insert_with(|| {
            EngineRepo::open(&path.display().to_string(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() })
                .map_err(|e| e.to_string())
        });
        Some(repo.as_ref().map_err(Clone::clone))
    }

    /// `Ok(None)`: not available here (skip), `Err`: available but broken. The
    /// tree is read as the rule's engine lays out its package (`vllm/`,
    /// `python/sglang/`).
    fn get(&mut self, rule: &Rule, engine: &EngineRef) -> Result<Option<&LoadedEngine>, String> {
        let profile = crate::profiles::by_id(&rule.spec.engine).ok_or_else(|| format!("unknown engine `{}`", rule.spec.engine))?;
        let key = match engine {
            EngineRef::Fixture(f) => {
                let Some(dir) = fixture_dir(rule, f) else { return Ok(None) };
                dir.display().to_string()
            }
            EngineRef::Corpus(tag) => format!("corpus:{}:{tag}", profile.id),
        };
        if !self.loaded.contains_key(&key) {
            let loaded = match engine {
                EngineRef::Fixture(_) => {
                    let tree = DirTree::open(Path::new(&key)).map_err(|e| e.to_string())?;
                    let root = discover_package_root(&tree, profile, None).map_err(|e| e.to_string())?;
                    LoadedEngine { tree: Box::new(tree), root, version: None }
                }
                EngineRef::Corpus(tag) => {
                    let Some(repo) = self.corpus_repo(profile) else { return Ok(None) };
                    let repo = repo?;
                    let resolved = repo.resolve(tag).map_err(|e| e.to_string())?;
                    let tree = repo.tree_at(&resolved).map_err(|e| e.to_string())?;
                    let root = discover_package_root(&tree, profile, None).map_err(|e| e.to_string())?;
                    LoadedEngine { tree: Box::new(tree), root, version: parse_version_ref(tag) }
                }
            };
            self.loaded.insert(key.clone(), loaded);
        }
        Ok(self.loaded.get(&key))
    }
}

/// Built-in rules find fixtures in this crate's `fixtures/rules/`; rules from a
/// `--rules DIR` look in `DIR/fixtures/` first.
fn fixture_dir(rule: &Rule, name: &str) -> Option<PathBuf> {
    if name.split('/').any(|c| c == ".." || c.is_empty()) || name.starts_with('/') {
        return None;
    }
    let mut candidates = Vec::new();
    if let RuleOrigin::File(path) = &rule.origin {
        if let Some(dir) = path.parent() {
            candidates.push(dir.join("fixtures").join(name));
            candidates.push(dir.join("../fixtures/rules").join(name));
        }
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules").join(name));
    candidates.into_iter().find(|p| p.is_dir())
}

/// An inline test deployment as the facts a recipe reader would give.
pub(crate) fn deployment_facts(name: &str, d: &TestDeployment) -> DeploymentFacts {
    let facts = |map: &std::collections::BTreeMap<String, serde_yaml_ng::Value>, flags: bool| -> Vec<Fact> {
        map.iter()
            .filter_map(|(k, v)| {
                // An env var set to YAML `false` is the string "false", not absent.
                let value = match v {
                    serde_yaml_ng::Value::Bool(b) if !flags => FactValue::Text(b.to_string()),
                    _ => yaml_value(v)?,
                };
                Some(Fact { name: if flags { normalize_flag(k) } else { k.clone() }, value, key_span: None, value_span: None })
            })
            .collect()
    };
    let mut roles: Vec<RoleFacts> =
        d.roles.iter().map(|(role, r)| RoleFacts { role: role.clone(), flags: facts(&r.flags, true), env: facts(&r.env, false) }).collect();
    if !d.flags.is_empty() {
        roles.insert(0, RoleFacts { role: "worker".into(), flags: facts(&d.flags, true), env: Vec::new() });
    }
    DeploymentFacts {
        name: name.to_string(),
        name_span: None,
        model_path: d.model.clone(),
        gpu_type: d.gpu_type.clone(),
        precision: d.precision.clone(),
        common_env: facts(&d.env, false),
        roles,
    }
}

/// How srt-slurm passes a YAML value: `null` and `false` switches are not passed.
pub(crate) fn yaml_value(v: &serde_yaml_ng::Value) -> Option<FactValue> {
    use serde_yaml_ng::Value;
    match v {
        Value::Null | Value::Bool(false) => None,
        Value::Bool(true) => Some(FactValue::Text("true".into())),
        Value::Number(n) => Some(FactValue::Text(n.to_string())),
        Value::String(s) => Some(FactValue::Text(s.clone())),
        Value::Sequence(items) => Some(FactValue::List(items.iter().filter_map(|i| yaml_value(i).and_then(|v| v.as_text())).collect())),
        _ => Some(FactValue::Unknown),
    }
}
