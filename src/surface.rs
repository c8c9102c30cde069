//! The extracted model of one engine release: what a deployment can depend on.
//!
//! This is the contract between `extract` (which fills it from source) and `check`
//! (which compares it with recipes). The JSON form is documented in `docs/surface-schema.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a fact was found: a path relative to the repository root and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Evidence {
    pub path: String,
    pub line: u32,
}

/// A value the static analysis either knows exactly or cannot know.
///
/// Serialises as the plain JSON value, or `{"dynamic": "<source text>"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Known<T> {
    Dynamic { dynamic: String },
    Value(T),
}

/// What `#[serde(untagged)]` would accept, without its cost: untagged buffers
/// every value and builds an error message for each one that is not
/// `{"dynamic": ...}`, which was most of the time a warm audit spent decoding
/// cached flags. A map whose `dynamic` is a string is dynamic (other keys
/// ignored, as untagged did); anything else is a `T`.
impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Known<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        if let Some(serde_json::Value::String(text)) = value.as_object().and_then(|map| map.get("dynamic")) {
            return Ok(Known::Dynamic { dynamic: text.clone() });
        }
        T::deserialize(value).map(Known::Value).map_err(serde::de::Error::custom)
    }
}

impl<T> Known<T> {
    pub(crate) fn dynamic(text: impl Into<String>) -> Self {
        Known::Dynamic { dynamic: text.into() }
    }
    pub fn value(&self) -> Option<&T> {
        match self {
            Known::Value(v) => Some(v),
            Known::Dynamic { .. } => None,
        }
    }
    pub fn is_dynamic(&self) -> bool {
        matches!(self, Known::Dynamic { .. })
    }
}

/// A Python literal value as the engine writes it (defaults, choices, consts).
pub(crate) type PyValue = serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagDeprecationKind {
    /// Forwards to another flag (`DeprecatedAliasStoreAction`, `DeprecatedStoreTrueAction`, ...).
    Alias,
    /// Accepted, warns, changes nothing.
    Noop,
    /// Still parsed, but errors out.
    Removed,
    /// Still takes effect; the engine says it is deprecated and will go
    /// (vLLM's help texts "X is deprecated and will be removed in v0.19",
    /// `add_argument(..., deprecated=True)`), naming a replacement or not.
    Announced,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagDeprecation {
    pub kind: FlagDeprecationKind,
    /// The flag to use instead, as the engine spells it (`--cuda-graph-max-bs-decode`).
    pub replacement: Option<String>,
    /// The upstream message, when the action carries one.
    pub message: Option<String>,
}

/// One CLI option as the engine's argparse parser registers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    /// Every option string, canonical first (`["--model-path", "--model"]`).
    pub names: Vec<String>,
    pub dest: String,
    /// argparse action: `store`, `store_true`, `store_false`, `store_const`, `append`,
    /// `count`, `BooleanOptionalAction`, or the engine's own class name.
    pub action: String,
    /// Name of the `type=` callable (`int`, `str`, `float`, `json_list_type`, ...).
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// `null`, an int, or `"?"`, `"*"`, `"+"`.
    pub nargs: Option<PyValue>,
    /// `None` = any value accepted.
    pub choices: Option<Known<Vec<PyValue>>>,
    /// Choices the parser adds only when an env var is set while it is built
    /// (`{"SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE": ["token_oracle"]}`); `choices`
    /// is the list of a clean environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub choices_when_env: BTreeMap<String, Vec<PyValue>>,
    pub default: Known<PyValue>,
    #[serde(rename = "const", skip_serializing_if = "Option::is_none", default)]
    pub const_value: Option<Known<PyValue>>,
    #[serde(default)]
    pub required: bool,
    pub deprecated: Option<FlagDeprecation>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub help: Option<String>,
    pub evidence: Evidence,
    /// What the field resolves to when the flag is not passed, where that is
    /// not argparse's `default` (a `None` the engine resolves after parsing).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub effective_default: Option<EffectiveDefault>,
    /// Whether the engine-only parser a consumer builds (vLLM's
    /// `AsyncEngineArgs.add_cli_args`, used by `python -m dynamo.vllm`) accepts
    /// it too; `None` for an engine without one. Serve-only flags (`--host`,
    /// `--port`, `--tool-call-parser`) are `false`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub engine_parser: Option<bool>,
}

/// Where a flag's effective default comes from, when not from argparse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultSource {
    /// `fallback=` declared on the field: applied when the value is still
    /// `None` after resolution.
    Fallback,
    /// A resolution hook assigns the field at startup.
    Hook,
}

/// The value a field has when its flag is not passed, and the line that decides it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectiveDefault {
    /// A literal, or dynamic when the hook's value depends on the model,
    /// hardware or other flags.
    pub value: Known<PyValue>,
    pub source: DefaultSource,
    pub evidence: Evidence,
}

impl Flag {
    pub fn canonical(&self) -> &str {
        &self.names[0]
    }
    /// The value the field has when the flag is not passed, and its evidence:
    /// the resolved one when the engine resolves it, else argparse's default.
    pub fn effective_default(&self) -> (&Known<PyValue>, &Evidence) {
        match &self.effective_default {
            Some(e) => (&e.value, &e.evidence),
            None => (&self.default, &self.evidence),
        }
    }
    /// Whether the flag takes no value on the command line.
    pub(crate) fn is_switch(&self) -> bool {
        matches!(self.action.as_str(), "store_true" | "store_false" | "store_const" | "count" | "BooleanOptionalAction")
            || self.nargs == Some(serde_json::json!(0))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvDeprecationKind {
    /// Deprecated, its value forwarded to a replacement (possibly transformed).
    Renamed,
    /// Deprecated with no replacement: setting it does nothing (or warns).
    Removed,
    /// A second name read for the same field (`EnvBoolWithAlias`).
    Alias,
    /// Read only to log that it was removed or is deprecated: gone from the
    /// registry, or registered with a getter that only warns (vLLM).
    Notice,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvDeprecation {
    pub kind: EnvDeprecationKind,
    pub replacement: Option<String>,
    /// Name of the value transform (`_invert_bool`, `_ms_to_s`), if any.
    pub transform: Option<String>,
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvVar {
    pub name: String,
    /// Registry field class (`EnvBool`, `EnvInt`, ...), or `read` for a plain
    /// `os.environ` read outside the registry.
    pub kind: String,
    pub default: Known<PyValue>,
    pub deprecated: Option<EnvDeprecation>,
    pub evidence: Evidence,
}

impl EnvVar {
    /// Still a field of the registry (`EnvBool`, ...), whatever deprecation is
    /// attached: code reads it through `envs.X.get()`, so setting it still
    /// takes effect. Not so for a name only the deprecation table lists
    /// (`deprecated`) or a plain read (`read`, whose notice-only reads are
    /// told apart when extracted).
    pub fn is_registry_field(&self) -> bool {
        self.kind != "deprecated" && self.kind != "read"
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Module {
    /// Dotted name (`sglang.srt.server_args`).
    pub name: String,
    /// Path relative to the repository root.
    pub path: String,
    /// Top-level names the module defines or re-exports; `None` when not parsed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub symbols: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberKind {
    Field,
    Method,
    Property,
    Attribute,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    pub kind: MemberKind,
    /// Class that defines it (differs from the class itself when inherited).
    pub defined_in: String,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassInfo {
    pub name: String,
    pub module: String,
    pub bases: Vec<String>,
    pub members: Vec<Member>,
    pub evidence: Evidence,
}

/// A PEP 508 requirement from the engine's `pyproject.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    pub name: String,
    /// PEP 440 specifier set, empty for any version (`==0.5.18`, `>=1.0,<2`).
    pub specifier: String,
    /// `None` for `dependencies`, else the optional-dependencies group.
    pub group: Option<String>,
    pub raw: String,
    pub evidence: Evidence,
}

/// How the engine's server parser reads what is not an exact option string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParserFacts {
    /// `allow_abbrev` of the `ArgumentParser(...)` the options are added to
    /// (argparse's default, on, when it is not passed): whether a unique
    /// prefix of a `--` option is taken for it.
    pub allow_abbrev: Known<bool>,
    /// Where that parser is built.
    pub evidence: Option<Evidence>,
    /// What the parser class does to the command line before argparse reads it.
    #[serde(default, skip_serializing_if = "ArgRewrites::is_none")]
    pub rewrites: ArgRewrites,
}

impl Default for ParserFacts {
    fn default() -> Self {
        ParserFacts {
            allow_abbrev: Known::Dynamic { dynamic: "no parser construction was read".into() },
            evidence: None,
            rewrites: ArgRewrites::default(),
        }
    }
}

/// Rewrites a parser class applies to the words before argparse sees them
/// (vLLM's `FlexibleArgumentParser.parse_args`); argparse's own applies none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgRewrites {
    /// `--a_b` is read as `--a-b` (up to the first `.`).
    #[serde(default)]
    pub underscores: bool,
    /// `--a.b value` sets key `b` of the JSON value of `--a`.
    #[serde(default)]
    pub dotted_keys: bool,
    /// `-O3`, `-O=3`, `-O 3` stand for this option with that value.
    #[serde(default)]
    pub short_o: Option<String>,
    /// This option names a YAML file whose keys are read as more flags.
    #[serde(default)]
    pub config_file: Option<String>,
    /// The method that rewrites them.
    #[serde(default)]
    pub evidence: Option<Evidence>,
}

impl ArgRewrites {
    pub fn is_none(&self) -> bool {
        *self == ArgRewrites::default()
    }
}

/// An option string as the parser reads it after its rewrites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The option argparse looks up (`--kv-transfer-config`, `--optimization-level`).
    pub option: String,
    /// `--a.b.c`: the dotted key path (`b.c`) whose value is a piece of the JSON value.
    pub dotted_key: Option<String>,
    /// `-O3`: the value the word itself carries (`3`).
    pub inline_value: Option<String>,
}

impl ArgRewrites {
    /// What the parser makes of a written option string (`--max_num_seqs`,
    /// `--compilation-config.mode`, `-O3`).
    pub fn rewrite(&self, written: &str) -> Rewritten {
        let plain = |option: &str| Rewritten { option: option.to_string(), dotted_key: None, inline_value: None };
        if let (Some(target), Some(rest)) = (&self.short_o, written.strip_prefix("-O")) {
            if !written.starts_with("--") {
                return match rest {
                    "" => plain(target),
                    _ => Rewritten {
                        option: target.clone(),
                        dotted_key: None,
                        inline_value: Some(rest.strip_prefix('=').unwrap_or(rest).to_string()),
                    },
                };
            }
        }
        // `-cc.pass_config.x`: any single-dash word with a dot is a key of the
        // option before the dot (vLLM's `-cc` is `--compilation-config`); only
        // `--` words get their underscores turned into dashes.
        if let (true, Some((base, key))) = (self.dotted_keys && !written.starts_with("--"), written.split_once('.')) {
            if base.len() > 1 && base.starts_with('-') {
                return Rewritten { option: base.to_string(), dotted_key: Some(key.trim_end_matches('+').to_string()), inline_value: None };
            }
        }
        let Some(name) = written.strip_prefix("--") else { return plain(written) };
        let (base, key) = match name.split_once('.') {
            Some((base, key)) if self.dotted_keys => (base, Some(key.trim_end_matches('+').to_string())),
            _ => (name, None),
        };
        let base = if self.underscores { base.replace('_', "-") } else { base.to_string() };
        Rewritten { option: format!("--{base}"), dotted_key: key, inline_value: None }
    }
}

/// How argparse reads a `--` option string that no option registers exactly.
#[derive(Debug, Clone, PartialEq)]
pub enum Prefixed<'a> {
    /// No option string starts with it (or it is not a `--` option).
    Nothing,
    /// Exactly one option string starts with it.
    Unique { flag: &'a Flag, full: &'a str },
    /// Several option strings start with it: with abbreviations on, argparse
    /// exits with "ambiguous option" (it counts option strings, so two
    /// spellings of one option are ambiguous too). Sorted.
    Ambiguous(Vec<&'a str>),
}

/// A problem met while extracting; the rest of the extraction went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractWarning {
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineSurface {
    /// `sglang` or `dynamo`.
    pub engine: String,
    /// The ref as the user named it.
    #[serde(rename = "ref")]
    pub ref_name: String,
    pub commit: Option<String>,
    /// The package version from `pyproject.toml` or `version.py`, if found.
    pub version: Option<String>,
    /// Package folder inside the repository (`python/sglang`).
    pub package_root: String,
    pub flags: Vec<Flag>,
    /// How the parser reads an option string that is not registered exactly.
    #[serde(default)]
    pub parser: ParserFacts,
    pub env: Vec<EnvVar>,
    /// Prefix rewrites the env registry applies (`SGL_` → `SGLANG_`).
    pub env_prefix_rewrites: Vec<(String, String)>,
    pub modules: Vec<Module>,
    pub classes: BTreeMap<String, ClassInfo>,
    pub requires: Vec<Requirement>,
    /// The keys of the server's YAML configuration file (TRT-LLM's LlmArgs),
    /// nested keys by dotted path; empty for an engine without one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_keys: Vec<ConfigKey>,
    pub warnings: Vec<ExtractWarning>,
    /// Option string → index in `flags`, built on first lookup (checks look up
    /// every recipe flag and every default; a linear scan per lookup is quadratic).
    /// A surface is read-only once built: `flags` is not changed after a lookup.
    #[serde(skip)]
    pub flag_index: FlagIndex,
}

/// One key of a server's YAML configuration file: a field of a pydantic model,
/// at its dotted path from the root model (`kv_cache_config.dtype`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigKey {
    /// Dotted path from the root model: the field names, as YAML spells them.
    pub path: String,
    /// The model that declares the field (`KvCacheConfig`).
    pub model: String,
    /// The annotation as written (`Optional[Literal["auto", "fp8"]]`).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The values a `Literal[...]` or enum annotation allows; `None` when the
    /// annotation names no closed set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Known<Vec<PyValue>>>,
    /// The default; a `default_factory` is dynamic with its text, and a field
    /// without default (required) is `None`: absent from the JSON, so a
    /// required field and one whose default is `None` (`null`) stay apart.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub default: Option<Known<PyValue>>,
    /// `default_factory=` as written, when the default is made by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_factory: Option<String>,
    /// Other keys the model accepts for it: `alias=`, `validation_alias=`
    /// (each name of an `AliasChoices(...)` but the field's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// `prototype`, `beta`, `deprecated` (or `stable`), as the field declares it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The deprecation message (`deprecated="..."` or the field's description
    /// when its status is deprecated), which names the successor when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<String>,
    /// What the declaring model does with a key it does not have.
    pub extra: ExtraPolicy,
    /// The model this key's value is, when it nests (`KvCacheConfig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested: Option<String>,
    /// When the value is one of several models, picked by a key of its own
    /// (`speculative_config: {decoding_type: MTP, ...}`): how the engine picks.
    /// Each member's fields are keys under `<path>[<value>]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub union: Option<ConfigUnion>,
    /// The field's `@field_validator`s that run on the parsed value, in the
    /// order pydantic runs them, as far as their guards were read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<FieldCheck>,
    pub evidence: Evidence,
}

/// One `@field_validator` (mode `after`) of a field, read as the guards at
/// the top of its body: `if <test on the value>: raise ...` rejects, `if
/// <test>: return v` accepts. Reading stops at the first statement of
/// another shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldCheck {
    /// The validator function's name.
    pub function: String,
    pub guards: Vec<ValueGuard>,
    /// The body is those guards and `return v` only: the value goes on
    /// unchanged, so the validators after it see what the recipe wrote.
    pub returns_value: bool,
    pub evidence: Evidence,
}

/// `if <test>: raise` / `if <test>: return v`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueGuard {
    pub test: ValueTest,
    pub rejects: bool,
    /// The test as written (`not 0 <= v <= 1`).
    pub text: String,
    /// The error's message, when it is a plain string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub evidence: Evidence,
}

/// A test on the value alone, with numbers and `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ValueTest {
    IsNone,
    Compare { left: Operand, cmp: Comparison, right: Operand },
    Not { test: Box<ValueTest> },
    All { tests: Vec<ValueTest> },
    Any { tests: Vec<ValueTest> },
}

/// A side of a comparison: the value, or a number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    Value,
    Number(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// What a value is to a [`ValueTest`]: a number, `None`, or something the
/// tests cannot judge (a string, a list, a bool).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TestedValue {
    Number(f64),
    None,
    Other,
}

impl ValueTest {
    /// The test's outcome on `value`; `None` when it cannot be known.
    pub fn eval(&self, value: TestedValue) -> Option<bool> {
        match self {
            ValueTest::IsNone => match value {
                TestedValue::None => Some(true),
                TestedValue::Number(_) => Some(false),
                TestedValue::Other => None,
            },
            ValueTest::Compare { left, cmp, right } => {
                let side = |o: &Operand| match (o, value) {
                    (Operand::Number(n), _) => Some(*n),
                    (Operand::Value, TestedValue::Number(n)) => Some(n),
                    _ => None,
                };
                let (a, b) = (side(left)?, side(right)?);
                Some(match cmp {
                    Comparison::Lt => a < b,
                    Comparison::Le => a <= b,
                    Comparison::Gt => a > b,
                    Comparison::Ge => a >= b,
                    Comparison::Eq => a == b,
                    Comparison::Ne => a != b,
                })
            }
            ValueTest::Not { test } => test.eval(value).map(|b| !b),
            // Python's `and`/`or` stop at the first deciding operand: a known
            // outcome decides even when a later operand cannot be known.
            ValueTest::All { tests } => {
                for t in tests {
                    if !t.eval(value)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            ValueTest::Any { tests } => {
                for t in tests {
                    if t.eval(value)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
        }
    }
}

impl FieldCheck {
    /// What the guards make of `value`, in their order.
    pub fn outcome(&self, value: TestedValue) -> CheckOutcome<'_> {
        for guard in &self.guards {
            match guard.test.eval(value) {
                Some(true) if guard.rejects => return CheckOutcome::Rejected(guard),
                Some(true) => return CheckOutcome::Accepted,
                Some(false) => {}
                None => return CheckOutcome::Unknown,
            }
        }
        if self.returns_value {
            CheckOutcome::Accepted
        } else {
            CheckOutcome::PastGuards
        }
    }
}

/// What a [`FieldCheck`] does with a value.
#[derive(Debug, PartialEq)]
pub enum CheckOutcome<'g> {
    /// A guard that raises holds: validation fails.
    Rejected(&'g ValueGuard),
    /// Returned unchanged (a guard that returns it holds, or the body is
    /// guards and `return v` only).
    Accepted,
    /// Past every guard, into statements not read: not known.
    PastGuards,
    /// A test that cannot be known on this value.
    Unknown,
}

/// A configuration value that is one of several models, chosen by the value of
/// one of its keys through a table in the engine's source (TRT-LLM's
/// `DecodingBaseConfig.from_dict`: `{"MTP": MTPDecodingConfig, ...}[data["decoding_type"]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigUnion {
    /// The key whose value picks the model; the engine takes it out before
    /// the model reads the rest (`decoding_type`).
    pub discriminator: String,
    /// Each value the table maps, with the model it picks, in table order.
    pub members: Vec<UnionMember>,
    /// The value is lowered before the lookup (`table.get(value.lower())`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lowercased: bool,
    /// Values the code tests before the table (`if decoding_type == "Eagle" and ...`):
    /// which model they pick depends on more than the value, so the keys
    /// under them are not checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branched: Vec<String>,
    /// The table.
    pub evidence: Evidence,
}

/// One entry of a [`ConfigUnion`]'s table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnionMember {
    pub value: String,
    pub model: String,
}

impl ConfigUnion {
    /// The table's entry for a value as a recipe writes it.
    pub fn member(&self, written: &str) -> Option<&UnionMember> {
        let value = if self.lowercased { written.to_lowercase() } else { written.to_string() };
        self.members.iter().find(|m| m.value == value)
    }

    /// Whether the value picks a model by the table alone.
    pub fn is_branched(&self, written: &str) -> bool {
        self.branched.iter().any(|b| b == written || (self.lowercased && b.eq_ignore_ascii_case(written)))
    }

    /// The model path under which the member picked by `value` keeps its keys.
    pub fn member_path(field_path: &str, value: &str) -> String {
        format!("{field_path}[{value}]")
    }
}

/// A key that is present is `Some`, even when its value is `null`
/// ([`ConfigKey::default`]: absent means required).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Known<PyValue>>, D::Error> {
    <Known<PyValue> as serde::Deserialize>::deserialize(d).map(Some)
}

/// A pydantic model's `extra` policy: what it does with an unknown key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtraPolicy {
    /// Refused at validation (start-up): `extra="forbid"`.
    Forbid,
    /// Silently dropped: pydantic's default.
    Ignore,
    /// Kept as an extra attribute.
    Allow,
    /// Not known statically (a base outside the package, a computed config).
    Unknown,
}

/// A lazily built lookup table; derived state, so it never takes part in
/// equality, cloning or serialisation.
#[derive(Default)]
pub struct FlagIndex(std::sync::OnceLock<std::collections::HashMap<String, usize>>);

impl Clone for FlagIndex {
    fn clone(&self) -> Self {
        FlagIndex::default()
    }
}
impl PartialEq for FlagIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl std::fmt::Debug for FlagIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlagIndex")
    }
}

impl EngineSurface {
    pub fn flag(&self, option: &str) -> Option<&Flag> {
        let index = self.flag_index.0.get_or_init(|| {
            let mut map = std::collections::HashMap::new();
            for (i, f) in self.flags.iter().enumerate() {
                for n in &f.names {
                    // The first registration of an option string wins, as in argparse's lookup order here.
                    map.entry(n.clone()).or_insert(i);
                }
            }
            map
        });
        index.get(option).map(|&i| &self.flags[i])
    }
    /// The option strings `option` is a prefix of, as argparse's
    /// `_get_option_tuples` finds them for a `--` option (whether they count
    /// depends on [`ParserFacts::allow_abbrev`]).
    pub fn prefixed(&self, option: &str) -> Prefixed<'_> {
        if !option.starts_with("--") || option.len() <= 2 || self.flag(option).is_some() {
            return Prefixed::Nothing;
        }
        let mut matches: Vec<(&str, &Flag)> = Vec::new();
        for f in &self.flags {
            for n in f.names.iter().filter(|n| n.starts_with(option)) {
                // The first registration of an option string is the one argparse keeps.
                if !matches.iter().any(|(m, _)| m == n) {
                    matches.push((n, f));
                }
            }
        }
        match matches.as_slice() {
            [] => Prefixed::Nothing,
            [(full, flag)] => Prefixed::Unique { flag, full },
            _ => {
                let mut names: Vec<&str> = matches.iter().map(|(n, _)| *n).collect();
                names.sort_unstable();
                Prefixed::Ambiguous(names)
            }
        }
    }

    /// The flag argparse gives `option`: registered exactly, or (unless the
    /// parser is known to refuse abbreviations) the one option it is a unique
    /// prefix of.
    pub(crate) fn resolve_flag(&self, option: &str) -> Option<&Flag> {
        if let Some(f) = self.flag(option) {
            return Some(f);
        }
        if self.parser.allow_abbrev == Known::Value(false) {
            return None;
        }
        match self.prefixed(option) {
            Prefixed::Unique { flag, .. } => Some(flag),
            Prefixed::Nothing | Prefixed::Ambiguous(_) => None,
        }
    }

    pub fn env_var(&self, name: &str) -> Option<&EnvVar> {
        self.env.iter().find(|e| e.name == name)
    }
    pub(crate) fn module(&self, dotted: &str) -> Option<&Module> {
        self.modules.binary_search_by(|m| m.name.as_str().cmp(dotted)).ok().map(|i| &self.modules[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vLLM's `FlexibleArgumentParser`: `--a_b.c` → key `c` of `--a-b`; any
    /// single-dash word with a dot → a key of its short option (`-cc` is
    /// `--compilation-config`); `-O3` → `--optimization-level 3`.
    #[test]
    fn vllm_spellings_rewrite_as_its_parser_reads_them() {
        let rw = ArgRewrites { underscores: true, dotted_keys: true, short_o: Some("--optimization-level".into()), ..Default::default() };
        let got = |w: &str| {
            let r = rw.rewrite(w);
            (r.option, r.dotted_key, r.inline_value)
        };
        assert_eq!(got("-cc.pass_config.fuse_x"), ("-cc".into(), Some("pass_config.fuse_x".into()), None));
        assert_eq!(got("--compilation_config.mode"), ("--compilation-config".into(), Some("mode".into()), None));
        assert_eq!(got("-O3"), ("--optimization-level".into(), None, Some("3".into())));
        assert_eq!(got("-O=2"), ("--optimization-level".into(), None, Some("2".into())));
        assert_eq!(got("-tp"), ("-tp".into(), None, None));
        // argparse alone reads no dotted keys.
        assert_eq!(ArgRewrites::default().rewrite("-cc.mode").option, "-cc.mode");
    }

    #[test]
    fn known_values_read_back_as_untagged_wrote_them() {
        let read = |json: &str| serde_json::from_str::<Known<PyValue>>(json).unwrap();
        assert_eq!(read(r#"{"dynamic": "choices()"}"#), Known::dynamic("choices()"));
        assert_eq!(read(r#"{"dynamic": "x", "note": 1}"#), Known::dynamic("x"), "other keys are ignored");
        assert_eq!(read(r#"{"dynamic": 3}"#), Known::Value(serde_json::json!({"dynamic": 3})));
        assert_eq!(read(r#"["auto"]"#), Known::Value(serde_json::json!(["auto"])));
        assert_eq!(read("null"), Known::Value(PyValue::Null));
        let choices: Known<Vec<PyValue>> = serde_json::from_str(r#"[1, "a", null]"#).unwrap();
        assert_eq!(choices, Known::Value(vec![serde_json::json!(1), serde_json::json!("a"), PyValue::Null]));
        assert!(serde_json::from_str::<Known<Vec<PyValue>>>("7").is_err(), "not a list, not dynamic");
        for k in [Known::dynamic("d"), Known::Value(serde_json::json!({"a": [1, 2.5, "s"]}))] {
            assert_eq!(read(&serde_json::to_string(&k).unwrap()), k);
        }
    }
}
