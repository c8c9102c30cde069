//! The YAML shape of a rule (one file = one rule), read with serde.
//!
//! Every struct denies unknown keys so a typo in a rule is an error with a line,
//! never a silently ignored condition. Values that can be checked while reading
//! (regexes, PEP 440 specifiers, tree-sitter queries) are compiled by their own
//! `Deserialize` impls, so a bad one is reported at its line too.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Rules share the finding codes' severities.
pub(crate) use crate::codes::Severity;

/// One rule file as written.
///
/// `engine-audit schema rule` prints its JSON Schema (shipped as
/// `schemas/rule.schema.json`), derived from these types.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "engine-audit risk rule (rules/*.yaml)",
    description = "One risk rule: deployment conditions (`when`) paired with evidence in the target engine's source. Unknown keys are errors; enums are single-key maps. See rules/README.md."
)]
pub struct RuleSpec {
    /// `R001`.
    pub id: String,
    /// kebab-case, stable: `fp4-gemm-trtllm-swiglu-interleave`.
    pub name: String,
    pub title: String,
    pub severity: Severity,
    /// The engine profile id the rule is about (`sglang`): it applies only to
    /// deployments of that engine, against that engine's source.
    pub engine: String,
    /// PEP 440 specifiers on the target version (`>=0.5.16`). When the target's
    /// version is unknown (a branch, a sha) the evidence alone decides.
    #[serde(default)]
    pub versions: Option<Specifiers>,
    /// Conditions on the deployment.
    pub when: When,
    /// Predicates over the target engine source; all must hold.
    pub evidence: Vec<Evidence>,
    /// With placeholders `{flag}`, `{value}`, `{role}`, `{ref}`, `{evidence}`, `{deployment}`.
    pub message: String,
    #[serde(default)]
    pub fix: Vec<FixSpec>,
    /// Why: the upstream mechanism, with file names.
    pub docs: String,
    #[serde(default)]
    pub tests: Tests,
}

// ---------------------------------------------------------------------------
// `when`: conditions on the deployment

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum When {
    All(Vec<When>),
    Any(Vec<When>),
    Not(Box<When>),
    /// A server flag. Without `role`, the role being evaluated (each role in turn).
    Flag(ValueCond),
    /// An env var of the role (role env, then the deployment's common env).
    Env(ValueCond),
    /// Regex over the model path (deployment `model.path`, and the roles'
    /// `model-path` / `served-model-name` flags).
    Model(ModelCond),
    /// Case-insensitive set membership.
    GpuType(SetCond),
    Precision(SetCond),
}

/// `{name, role?, equals | in | is}`: exactly one test.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueCond {
    pub name: String,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default, rename = "in")]
    pub one_of: Option<Vec<String>>,
    #[serde(default)]
    pub is: Option<Presence>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Set,
    Unset,
    /// SGLang's `EnvBool` spelling: true/1/yes/y (case-insensitive); a switch that is on.
    Truthy,
    /// false/0/no/n; a switch that is off.
    Falsy,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelCond {
    pub matches: Pattern,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCond {
    #[serde(rename = "in")]
    pub one_of: Vec<String>,
}

// ---------------------------------------------------------------------------
// `evidence`: predicates over engine source

/// Paths are relative to the engine package root (`srt/models/deepseek_v2.py`
/// under `python/sglang`); `*`, `?` and `**` globs are allowed.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Evidence {
    FileExists(FileExists),
    /// A module-level (or, with `class`, class-level) def / class / assignment.
    SymbolExists(SymbolExists),
    /// `x.y.<attribute> = <value>` inside function F (of class C).
    AssignsAttribute(AssignsAttribute),
    /// In F, an `if` whose condition mentions X returns before the first mention of Y.
    ReturnsBefore(ReturnsBefore),
    /// Every assignment of `x.<attribute>` in F sits under an `if` whose
    /// condition requires a helper call (`backend().supports_x()`) that returns
    /// `not (... <excludes> ...)`: the assignment cannot run for that case.
    GuardExcludes(GuardExcludes),
    TextInFunction(TextInFunction),
    TextInFile(TextInFile),
    /// A raw tree-sitter query over tree-sitter-python (optionally within F).
    Query(QueryPred),
    AnyOf(Vec<Evidence>),
    AllOf(Vec<Evidence>),
    /// Holds when the inner predicate does not. Cites nothing: a rule needs at
    /// least one positive citation to fire.
    Not(Box<Evidence>),
    /// A deployment condition inside the evidence, so an `any_of` alternative can
    /// pair "engine gates this behind env X" with "the deployment sets X".
    Deployment(When),
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileExists {
    pub files: Vec<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolExists {
    pub files: Vec<String>,
    #[serde(default)]
    pub class: Option<String>,
    pub name: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignsAttribute {
    pub files: Vec<String>,
    #[serde(default)]
    pub class: Option<String>,
    pub function: String,
    pub attribute: String,
    /// Source text of the assigned value (`True`), compared trimmed.
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardExcludes {
    pub files: Vec<String>,
    #[serde(default)]
    pub class: Option<String>,
    pub function: String,
    pub attribute: String,
    /// Where the helper the guard calls is defined (any class or module level).
    pub helper_files: Vec<String>,
    /// A name the helper's negated `or` chain mentions (`is_flashinfer_trtllm`).
    pub excludes: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReturnsBefore {
    pub files: Vec<String>,
    #[serde(default)]
    pub class: Option<String>,
    pub function: String,
    /// A name the `if` condition mentions (`is_flashinfer_trtllm`).
    pub condition_mentions: String,
    /// A name whose first mention in the function comes after that `return`.
    pub before_mentions: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextInFunction {
    pub files: Vec<String>,
    #[serde(default)]
    pub class: Option<String>,
    pub function: String,
    pub text: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextInFile {
    pub files: Vec<String>,
    pub text: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryPred {
    pub files: Vec<String>,
    #[serde(default)]
    pub class: Option<String>,
    #[serde(default)]
    pub function: Option<String>,
    pub query: PyQuery,
    /// The capture whose line is cited; default: the first capture of the match.
    #[serde(default)]
    pub capture: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

// ---------------------------------------------------------------------------
// `fix`

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum FixSpec {
    /// Set (or change) a flag; `role` defaults to the role the finding is about.
    SetFlag {
        name: String,
        value: String,
    },
    RemoveFlag {
        name: String,
    },
    RenameEnv {
        from: String,
        to: String,
    },
    RemoveEnv {
        name: String,
    },
}

// ---------------------------------------------------------------------------
// `tests`: ast-grep style. `invalid` cases must fire, `valid` cases must not.

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tests {
    #[serde(default)]
    pub valid: Vec<TestCase>,
    #[serde(default)]
    pub invalid: Vec<TestCase>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    pub name: String,
    /// Each engine is a separate case result.
    pub engines: Vec<EngineRef>,
    pub deployment: TestDeployment,
    /// Target version for `versions` gating on fixture trees (corpus tags give
    /// their own).
    #[serde(default)]
    pub version: Option<String>,
    /// Exact number of hits expected (invalid cases only).
    #[serde(default)]
    pub hits: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum EngineRef {
    /// A folder under `fixtures/rules/`.
    Fixture(String),
    /// A tag of the corpus repository (`v0.5.19`); skipped without a corpus.
    Corpus(String),
}

/// A small recipe-like map: deployment-level facts, common env, and roles.
/// `flags` at the top level is shorthand for one role named `worker`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestDeployment {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub gpu_type: Option<String>,
    #[serde(default)]
    pub precision: Option<String>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub env: BTreeMap<String, serde_yaml_ng::Value>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub flags: BTreeMap<String, serde_yaml_ng::Value>,
    #[serde(default)]
    pub roles: BTreeMap<String, TestRole>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestRole {
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub flags: BTreeMap<String, serde_yaml_ng::Value>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub env: BTreeMap<String, serde_yaml_ng::Value>,
}

// ---------------------------------------------------------------------------
// Values compiled while reading

/// A regex. Its syntax is checked when the rule is read (the error names the
/// file and line); the automaton is built on first use. Building the shipped
/// rules' case-insensitive alternations was 40 % of reading the rules, paid by
/// every audit before any engine was open. Rules from `--rules` are compiled
/// as they load ([`Pattern::compile`]), shipped ones by the tests.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    regex: std::sync::OnceLock<Result<regex::Regex, String>>,
}

impl Pattern {
    /// Build the automaton now; an error is what `regex` says (after the
    /// syntax check, only its size limit can fail).
    pub(crate) fn compile(&self) -> Result<&regex::Regex, String> {
        self.regex
            .get_or_init(|| regex::Regex::new(&self.text).map_err(|e| format!("invalid regex `{}`: {e}", self.text)))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether `haystack` matches; a pattern that did not compile matches
    /// nothing (unreachable for a loaded rule: see the type's comment).
    pub(crate) fn is_match(&self, haystack: &str) -> bool {
        self.compile().is_ok_and(|r| r.is_match(haystack))
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        regex_syntax::Parser::new().parse(&text).map_err(|e| serde::de::Error::custom(format!("invalid regex `{text}`: {e}")))?;
        Ok(Pattern { text, regex: std::sync::OnceLock::new() })
    }
}

/// The schema of a value read from a string and checked by its own
/// `Deserialize`: a string, with what it must be in the description.
macro_rules! string_schema {
    ($ty:ty, $name:literal, $description:literal) => {
        impl JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "description": $description})
            }
        }
    };
}

string_schema!(Pattern, "Pattern", "A regular expression (Rust `regex` syntax), checked when the rule is read.");
string_schema!(Specifiers, "Specifiers", "PEP 440 version specifiers on the target release (`>=0.5.16,<0.6`).");
string_schema!(PyQuery, "PyQuery", "A tree-sitter query over tree-sitter-python, compiled when the rule is read.");

/// PEP 440 specifiers (`>=0.5.16,<0.6`).
#[derive(Debug, Clone)]
pub struct Specifiers(pub pep440_rs::VersionSpecifiers);

impl<'de> Deserialize<'de> for Specifiers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse::<pep440_rs::VersionSpecifiers>()
            .map(Specifiers)
            .map_err(|e| serde::de::Error::custom(format!("invalid PEP 440 specifier `{text}`: {e}")))
    }
}

/// A tree-sitter-python query, compiled when the rule is read.
#[derive(Clone)]
pub struct PyQuery {
    pub text: String,
    pub query: Arc<tree_sitter::Query>,
}

impl std::fmt::Debug for PyQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PyQuery").field(&self.text).finish()
    }
}

impl<'de> Deserialize<'de> for PyQuery {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        tree_sitter::Query::new(&language, &text).map(|q| PyQuery { text: text.clone(), query: Arc::new(q) }).map_err(|e| {
            serde::de::Error::custom(format!(
                "invalid tree-sitter query (query line {}, column {}): {}",
                e.row + 1,
                e.column + 1,
                e.message
            ))
        })
    }
}

/// Read YAML with enums as single-key maps (`flag: {...}`), the way rules are
/// written, instead of YAML tags (`!flag`). Errors keep their line and column.
pub(crate) fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_yaml_ng::Error> {
    serde_yaml_ng::with::singleton_map_recursive::deserialize(serde_yaml_ng::Deserializer::from_str(text))
}
