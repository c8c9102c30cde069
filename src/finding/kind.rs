//! What a finding says, as typed facts: one variant per code (EA006 and EA102
//! have a few shapes each). The English message is rendered here, the report
//! phrases in `phrase.rs`; nothing reads a message back.

use crate::codes::Code;
pub(crate) use crate::history::{Past, PastEnv, PastFlag};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FindingKind {
    /// EA001. `was_at`: the current release, when it still accepted the flag.
    /// `ambiguous`: the option strings it is a prefix of, when argparse
    /// (abbreviations on) exits with "ambiguous option".
    UnknownFlag {
        option: String,
        target: String,
        was_at: Option<String>,
        suggestion: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        ambiguous: Vec<String>,
        /// What the releases before the target say of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        history: Option<Past<PastFlag>>,
        /// The consumer's worker whose parsers refuse it (an option of the
        /// engine's server parser only, handed to `python -m dynamo.vllm`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<String>,
    },
    /// EA002.
    RemovedFlag { option: String, target: String, upstream: Option<String> },
    /// EA003.
    DeprecatedAlias { option: String, replacement: String, target: String },
    /// EA004.
    DeprecatedNoop { option: String, target: String, upstream: Option<String> },
    /// EA005. `choices` as the message shows them.
    InvalidChoice { option: String, value: String, target: String, choices: String },
    /// EA006.
    InvalidValue { option: String, target: String, problem: ValueProblem },
    /// EA007: a flag the recipes of `family` leave unset.
    DefaultChanged { option: String, family: String, bump: String, old: String, new: String },
    /// EA009: argparse takes `option` for `full`, the one option string it is
    /// a prefix of. `unread`: why the parser's `allow_abbrev` could not be
    /// read (then whether argparse takes it is not known).
    AbbreviatedFlag { option: String, full: String, target: String, unread: Option<String> },
    /// EA008.
    SemanticsChanged { option: String, bump: String, changes: Vec<SemanticChange> },
    /// EA101: the current release, or an earlier one (`history`), had it.
    EnvRemoved {
        name: String,
        target: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        history: Option<Past<PastEnv>>,
    },
    /// EA102.
    EnvRenamed { name: String, target: String, how: EnvRename },
    /// EA103.
    EnvRemovalNotice { name: String, target: String, upstream: Option<String> },
    /// EA104. `engine` as shown (`SGLang`). `searched_from`: the oldest
    /// release whose env vars were searched (none read it from there on);
    /// `suggestion`: a name the target reads, spelled almost the same.
    EnvUnknown {
        name: String,
        engine: String,
        bump: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        searched_from: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<String>,
    },
    /// EA105. Defaults as the registry writes them.
    EnvDefaultChanged { name: String, bump: String, old: String, new: String },
    /// EA201–EA203: what the consumer uses is missing and nothing catches it.
    /// `engine` and `consumer` as shown (`SGLang`, `Dynamo`).
    ConsumerMissing {
        missing: Missing,
        engine: String,
        consumer: String,
        consumer_ref: String,
        snippet: String,
        at_start: bool,
        moved_to: Option<String>,
    },
    /// EA204: missing, but the use is guarded and falls back.
    ConsumerFallback {
        missing: Missing,
        engine: String,
        consumer: String,
        consumer_ref: String,
        snippet: String,
        guard: String,
        fallback: String,
        moved_to: Option<String>,
    },
    /// EA205. `extra`: the optional-dependency group the requirement sits in.
    PinMismatch { engine: String, consumer: String, consumer_ref: String, requirement: String, extra: Option<String>, target: String },
    /// EA301.
    ImageMismatch { recipe_image: String, key: String, master_image: String },
    /// EA302. `consumer` as shown (`Dynamo`): the build the router runs.
    EngineRefMismatch { consumer: String, recipe_ref: String, key: String, router_version: String },
    /// EA303. `engine` as shown (`SGLang`, `Dynamo`); `detail` says what was tried.
    UnresolvedRef { engine: String, value: String, detail: String },
    /// EA304.
    DuplicateKey { key: String, dead_line: u32, kept_line: u32 },
    /// EA305: a file that could not be read, and why.
    UnreadableRecipe { reason: String },
    /// EA305: a part of a recipe that loaded (a key srtctl would reject, a
    /// value of the wrong shape): what it sets was not audited.
    UnreadablePart { reason: String },
    /// EA305: a master-config link to a file that is not there.
    MissingLink { entry: String, target: String },
    /// EA305: a master-config link whose srtctl selector names no variant of the
    /// file; `variants` lists the ones it has.
    MissingVariant { entry: String, target: String, selector: String, variants: String },
    /// EA306: words of a launch command that cannot be read (`words`: as written,
    /// `$EXTRA_ARGS`), or a whole launch (`words: None`), and why.
    UnreadLaunch { words: Option<String>, why: String },
    /// EA001, EA003, EA005, EA006, EA306 on a key of the engine's YAML
    /// configuration file (`kv_cache_config.dtype`), by dotted path.
    ConfigKey { key: String, target: String, problem: KeyProblem },
    /// A risk rule's hit: its id, name, message and doc page come from the rule file.
    Rule { id: String, name: String, message: String, doc: String },
}

/// What is wrong with a key of the engine's configuration file at the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum KeyProblem {
    /// EA001: the model the key belongs in (`KvCacheConfig`) has no such field
    /// (nor alias). `policy`: what the model does with it; `last`: the model
    /// and the release that last had the field, when one did.
    Unknown {
        model: String,
        policy: KeyPolicy,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last: Option<(String, String)>,
    },
    /// EA003: the field is deprecated and its message names `replacement`.
    Deprecated { replacement: String, upstream: Option<String> },
    /// EA005: the value is not in the field's `Literal`/enum set.
    Choice { value: String, choices: String },
    /// EA006: the value is not of the field's plain type.
    Type { value: String, expects: String },
    /// EA006: a validator of the field raises on the value (`test`, as
    /// written, holds; `message` is its error's text when plain).
    Rejected {
        value: String,
        validator: String,
        test: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// EA306: the target's keys could not be read, so none of the `count`
    /// keys the role writes was checked (`key` is then the role).
    Unchecked { count: usize, reason: String },
}

/// What a pydantic model does with a key it has no field for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyPolicy {
    /// `extra="forbid"`: validation fails, the server does not start.
    Refused,
    /// pydantic's default: dropped without a word.
    Ignored,
    /// `extra="allow"`: kept as an attribute no field declares.
    Kept,
    /// Not read (a base outside the package): either of the above.
    Unread,
}

impl KeyProblem {
    pub fn code(&self) -> Code {
        match self {
            KeyProblem::Unknown { .. } => Code::EA001,
            KeyProblem::Deprecated { .. } => Code::EA003,
            KeyProblem::Choice { .. } => Code::EA005,
            KeyProblem::Type { .. } | KeyProblem::Rejected { .. } => Code::EA006,
            KeyProblem::Unchecked { .. } => Code::EA306,
        }
    }
}

/// The message of a configuration-file key's finding.
fn key_message(key: &str, target: &str, problem: &KeyProblem) -> String {
    match problem {
        KeyProblem::Unknown { model, policy, suggestion, last } => {
            let what = match policy {
                KeyPolicy::Refused => "which forbids unknown keys: validation fails and the server refuses to start",
                KeyPolicy::Ignored => "which ignores unknown keys: the setting is silently dropped and has no effect",
                KeyPolicy::Kept => "which keeps unknown keys as extra attributes no field declares: the engine does not read it",
                KeyPolicy::Unread => "whose handling of unknown keys could not be read (a base the audit cannot see): the server either refuses to start or silently drops it",
            };
            let was = last.as_ref().map(|(m, r)| format!(" It was a field of `{m}` up to {r}.")).unwrap_or_default();
            let hint = suggestion.as_deref().map(|c| format!(" Did you mean `{c}`?")).unwrap_or_default();
            format!("`{key}` is not a field of `{model}` at {target}, {what}.{was}{hint}")
        }
        KeyProblem::Deprecated { replacement, upstream } => {
            format!("`{key}` is deprecated at {target}; the release names `{replacement}` instead.{}", upstream_says(upstream))
        }
        KeyProblem::Choice { value, choices } => format!("`{value}` is not a valid value for `{key}` at {target} (allowed: {choices})."),
        KeyProblem::Type { value, expects } => format!("`{value}` is not {expects}, but `{key}` expects one at {target}."),
        KeyProblem::Rejected { value, validator, test, message } => {
            let says = message.as_deref().map(|m| format!(": \"{m}\"")).unwrap_or_default();
            format!("`{key}: {value}` is refused at {target}: its validator `{validator}` raises when `{test}`{says}, so the server does not start.")
        }
        KeyProblem::Unchecked { count, reason } => format!(
            "the {count} configuration file key{} role `{key}` writes could not be checked at {target}, so whether the server takes them is not known: {reason}",
            if *count == 1 { "" } else { "s" }
        ),
    }
}

/// Why a value does not fit its flag (EA006).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum ValueProblem {
    /// The recipe's value is not a flag value at all (a map).
    Unusable { reason: String },
    /// Too few or too many values: the flag takes `min..=max` (`None`: no bound).
    Arity { min: usize, max: Option<usize>, passed: usize },
    /// A value that does not convert with the flag's type.
    Type { value: String, not_a: NumberKind, expects: String },
    /// A value of a `type=json.loads` flag that is not JSON: the parse error.
    NotJson { value: String, error: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumberKind {
    Integer,
    Number,
}

/// One argparse field of a flag that changed (EA008): `type`, `nargs` or `action`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SemanticChange {
    pub field: String,
    pub old: String,
    pub new: String,
}

/// How a deprecated env var still arrives (EA102).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "via", rename_all = "snake_case")]
pub enum EnvRename {
    /// The registry forwards it to `new`, through `transform` when named.
    Forwarded { new: String, transform: Option<String>, upstream: Option<String> },
    /// Only a legacy prefix rewrite (`rewrite`: `SGL_` → `SGLANG_`) reads it, as
    /// `read_as`; `retired_for` when that name is itself deprecated (with its transform).
    PrefixRewrite { rewrite: (String, String), read_as: String, retired_for: Option<(String, Option<String>)> },
}

/// What a consumer uses that the engine target lacks (EA201–EA204).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "missing", rename_all = "snake_case")]
pub enum Missing {
    Module { module: String, target: String },
    Symbol { module: String, name: String, target: String },
    Attribute { class: String, attribute: String, target: String },
}

impl Missing {
    /// The code of an unguarded use: a module, a name, or a class member.
    pub fn code(&self) -> Code {
        match self {
            Missing::Module { .. } => Code::EA201,
            Missing::Symbol { .. } => Code::EA202,
            Missing::Attribute { .. } => Code::EA203,
        }
    }

    pub fn target(&self) -> &str {
        match self {
            Missing::Module { target, .. } | Missing::Symbol { target, .. } | Missing::Attribute { target, .. } => target,
        }
    }

    /// What is missing, at `engine`'s target.
    fn what(&self, engine: &str) -> String {
        match self {
            Missing::Module { module, target } => format!("module `{module}` does not exist at {engine} {target}"),
            Missing::Symbol { module, name, target } => format!("`{module}` defines no `{name}` at {engine} {target}"),
            Missing::Attribute { class, attribute, target } => format!("`{class}.{attribute}` does not exist at {engine} {target}"),
        }
    }
}

/// ` Upstream says: "…"` when the engine gave a message.
fn upstream_says(upstream: &Option<String>) -> String {
    upstream.as_deref().map(|m| format!(" Upstream says: \"{m}\"")).unwrap_or_default()
}

/// `takes exactly 1 value`, `takes at least 2 values`, ...
pub(crate) fn arity_words(min: usize, max: Option<usize>) -> String {
    match (min, max) {
        (0, Some(0)) => "takes no value (it is a switch: write `true`)".to_string(),
        (a, Some(b)) if a == b => format!("takes exactly {a} value{}", if a == 1 { "" } else { "s" }),
        (a, None) => format!("takes at least {a} value{}", if a == 1 { "" } else { "s" }),
        (a, Some(b)) => format!("takes {a} to {b} values"),
    }
}

impl ValueProblem {
    /// The reason in words, without the flag's ref (the report's headings name it).
    pub fn reason(&self, option: &str) -> String {
        match self {
            ValueProblem::Unusable { reason } => format!("`{option}` cannot take this value: {reason}"),
            ValueProblem::Arity { min, max, passed } => format!("`{option}` {}; the recipe passes {passed}", arity_words(*min, *max)),
            ValueProblem::Type { value, not_a, expects } => format!("{}, but `{option}` expects {expects}", not_a.words(value)),
            ValueProblem::NotJson { value, error } => format!("`{value}` is not JSON ({error}), but `{option}` is parsed with json.loads"),
        }
    }
}

impl NumberKind {
    fn words(self, value: &str) -> String {
        match self {
            NumberKind::Integer => format!("`{value}` is not an integer"),
            NumberKind::Number => format!("`{value}` is not a number"),
        }
    }
}

/// " It was a deprecated alias of `--x` from A to B; T no longer has it."
fn flag_history_en(past: &Past<PastFlag>, target: &str) -> String {
    let was = match &past.was {
        PastFlag::Option => "an option".to_string(),
        PastFlag::Announced => "an option announced as deprecated (still in effect)".to_string(),
        PastFlag::Alias { replacement: Some(r) } => format!("a deprecated alias of `{r}`"),
        PastFlag::Alias { replacement: None } => "a deprecated alias".to_string(),
        PastFlag::Noop => "a deprecated option that did nothing".to_string(),
        PastFlag::Erroring => "already refused (the server did not start with it)".to_string(),
    };
    format!(" It was {was} {}{}.", past.span_en(), gone_words(past, target))
}

/// "; v0.5.23 no longer has it", or "; it is gone by v0.5.21" when an earlier
/// release held here already lacks it.
fn gone_words<S>(past: &Past<S>, target: &str) -> String {
    if past.gone_by == target {
        format!("; {target} no longer has it")
    } else {
        format!("; it is gone by {}", past.gone_by)
    }
}

/// How a renamed env var's value was converted.
fn transform_words(transform: Option<&str>) -> &'static str {
    match transform {
        Some("_invert_bool") => " (with inverted polarity)",
        Some("_ms_to_s") => " (milliseconds to seconds)",
        Some(_) => " (with a value conversion)",
        None => "",
    }
}

impl FindingKind {
    /// The catalog code, or `None` for a rule.
    pub fn code(&self) -> Option<Code> {
        Some(match self {
            FindingKind::UnknownFlag { .. } => Code::EA001,
            FindingKind::RemovedFlag { .. } => Code::EA002,
            FindingKind::DeprecatedAlias { .. } => Code::EA003,
            FindingKind::DeprecatedNoop { .. } => Code::EA004,
            FindingKind::InvalidChoice { .. } => Code::EA005,
            FindingKind::InvalidValue { .. } => Code::EA006,
            FindingKind::DefaultChanged { .. } => Code::EA007,
            FindingKind::SemanticsChanged { .. } => Code::EA008,
            FindingKind::AbbreviatedFlag { .. } => Code::EA009,
            FindingKind::EnvRemoved { .. } => Code::EA101,
            FindingKind::EnvRenamed { .. } => Code::EA102,
            FindingKind::EnvRemovalNotice { .. } => Code::EA103,
            FindingKind::EnvUnknown { .. } => Code::EA104,
            FindingKind::EnvDefaultChanged { .. } => Code::EA105,
            FindingKind::ConsumerMissing { missing, .. } => missing.code(),
            FindingKind::ConsumerFallback { .. } => Code::EA204,
            FindingKind::PinMismatch { .. } => Code::EA205,
            FindingKind::ImageMismatch { .. } => Code::EA301,
            FindingKind::EngineRefMismatch { .. } => Code::EA302,
            FindingKind::UnresolvedRef { .. } => Code::EA303,
            FindingKind::DuplicateKey { .. } => Code::EA304,
            FindingKind::UnreadableRecipe { .. }
            | FindingKind::UnreadablePart { .. }
            | FindingKind::MissingLink { .. }
            | FindingKind::MissingVariant { .. } => Code::EA305,
            FindingKind::UnreadLaunch { .. } => Code::EA306,
            FindingKind::ConfigKey { problem, .. } => problem.code(),
            FindingKind::Rule { .. } => return None,
        })
    }

    /// The code as written: `EA003`, or the rule's id.
    pub fn code_str(&self) -> String {
        match self {
            FindingKind::Rule { id, .. } => id.clone(),
            other => other.code().map(|c| c.as_str().to_string()).unwrap_or_default(),
        }
    }

    /// The code's (or rule's) name.
    pub fn name(&self) -> &str {
        match self {
            FindingKind::Rule { name, .. } => name,
            other => other.code().map_or("", |c| c.info().name),
        }
    }

    /// The repository-relative doc page.
    pub fn doc(&self) -> String {
        match self {
            FindingKind::Rule { doc, .. } => doc.clone(),
            other => other.code().map(|c| c.doc_path()).unwrap_or_default(),
        }
    }

    /// The whole message, in English, as every report shows it.
    pub fn message(&self) -> String {
        match self {
            FindingKind::UnknownFlag { option, target, was_at, ambiguous, history, .. } if !ambiguous.is_empty() => {
                let was = match (history, was_at) {
                    (Some(past), _) => flag_history_en(past, target),
                    (None, Some(from)) => format!(" `{option}` itself was an option at {from}."),
                    (None, None) => String::new(),
                };
                format!(
                    "argparse exits at {target}: `{option}` is an ambiguous option, it could match {}.{was}",
                    ambiguous.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
                )
            }
            FindingKind::UnknownFlag { option, target, worker: Some(worker), .. } => format!(
                "`{option}` is an option of the engine's server parser only at {target}: {worker} parses its command line with its own options and the engine-only parser, neither takes it, and the worker exits at start."
            ),
            FindingKind::UnknownFlag { option, target, history: Some(past), .. } => {
                format!("`{option}` is not accepted by the parser at {target}.{}", flag_history_en(past, target))
            }
            FindingKind::AbbreviatedFlag { option, full, target, unread: None } => format!(
                "`{option}` is not an option at {target}; argparse takes it as an abbreviation of `{full}`, until a release adds another option that starts with `{option}`."
            ),
            FindingKind::AbbreviatedFlag { option, full, target, unread: Some(why) } => format!(
                "`{option}` is not an option at {target}, only a prefix of `{full}`: argparse takes it for that option if the parser allows abbreviations, which could not be read ({why})."
            ),
            FindingKind::UnknownFlag { option, target, was_at, suggestion, .. } => {
                let was = was_at.as_deref().map(|from| format!(" (it was at {from})")).unwrap_or_default();
                let hint = suggestion.as_deref().map(|c| format!(" Did you mean `{c}`?")).unwrap_or_default();
                format!("`{option}` is not accepted by the parser at {target}{was}.{hint}")
            }
            FindingKind::RemovedFlag { option, target, upstream } => {
                format!("`{option}` is still parsed at {target} but makes the server refuse to start.{}", upstream_says(upstream))
            }
            FindingKind::DeprecatedAlias { option, replacement, target } => {
                format!("`{option}` is a deprecated alias of `{replacement}` at {target}; the value still applies, under the new name.")
            }
            FindingKind::DeprecatedNoop { option, target, upstream } => format!(
                "`{option}` is accepted at {target} but only logs a deprecation warning; it has no effect.{}",
                upstream_says(upstream)
            ),
            FindingKind::InvalidChoice { option, value, target, choices } => {
                format!("`{value}` is not a valid choice for `{option}` at {target} (choices: {choices}).")
            }
            FindingKind::InvalidValue { option, target, problem } => match problem {
                ValueProblem::Unusable { .. } => problem.reason(option),
                ValueProblem::Arity { min, max, passed } => {
                    format!("`{option}` {} at {target}; the recipe passes {passed}.", arity_words(*min, *max))
                }
                ValueProblem::Type { value, not_a, expects } => format!("{}, but `{option}` expects {expects} at {target}.", not_a.words(value)),
                ValueProblem::NotJson { value, error } => {
                    format!("`{value}` is not JSON ({error}), but `{option}` is parsed with json.loads at {target}: the server exits at start-up.")
                }
            },
            FindingKind::DefaultChanged { option, family, bump, old, new } => {
                format!("`{option}` is not set by recipes in `{family}`, and its default changed {bump}: {old} → {new}.")
            }
            FindingKind::SemanticsChanged { option, bump, changes } => {
                let changes: Vec<String> = changes.iter().map(|c| format!("{} {} → {}", c.field, c.old, c.new)).collect();
                format!("`{option}` changed between {bump}: {}.", changes.join(", "))
            }
            FindingKind::EnvRemoved { name, target, history: None } => format!(
                "`{name}` is gone at {target}: no longer in the env registry and not read anywhere in the Python package; setting it has no effect."
            ),
            FindingKind::EnvRemoved { name, target, history: Some(past) } => {
                let was = match &past.was {
                    PastEnv::Read => "read by the engine".to_string(),
                    PastEnv::Renamed { replacement, transform } => {
                        format!("deprecated in favour of `{replacement}`{}", transform_words(transform.as_deref()))
                    }
                    PastEnv::Retired { .. } => "already retired (setting it did nothing)".to_string(),
                };
                let hint = match &past.was {
                    PastEnv::Retired { hint: Some(h) } => format!(" Upstream said: \"{h}\""),
                    _ => String::new(),
                };
                format!(
                    "`{name}` is gone at {target}: not in the env registry and not read anywhere in the Python package, so setting it has no effect. It was {was} {}{}.{hint}",
                    past.span_en(),
                    gone_words(past, target)
                )
            }
            FindingKind::EnvRenamed { name, target, how } => match how {
                EnvRename::Forwarded { new, transform, upstream } => {
                    let how = match transform.as_deref() {
                        Some("_invert_bool") => " with inverted polarity (a true value now means the opposite: set the new name to the negated value)".to_string(),
                        Some("_ms_to_s") => " with a unit change: milliseconds → seconds".to_string(),
                        Some(t) => format!(" through the transform `{t}`"),
                        None => String::new(),
                    };
                    format!("`{name}` is deprecated at {target}: its value is forwarded to `{new}`{how}.{}", upstream_says(upstream))
                }
                EnvRename::PrefixRewrite { rewrite: (old, new), read_as, retired_for: Some((final_name, transform)) } => format!(
                    "`{name}` is only read at {target} through the legacy `{old}` → `{new}` prefix rewrite, as `{read_as}`, which is itself deprecated in favour of `{final_name}`: set `{final_name}` instead."
                ) + &transform.as_deref().map(|t| format!(" Its value is transformed by `{t}`.")).unwrap_or_default(),
                EnvRename::PrefixRewrite { rewrite: (old, new), read_as, retired_for: None } => {
                    format!("`{name}` is read at {target} only through the legacy `{old}` → `{new}` prefix rewrite, as `{read_as}`.")
                }
            },
            FindingKind::EnvRemovalNotice { name, target, upstream } => format!(
                "`{name}` no longer does anything at {target}: the engine only reads it to log that it was removed.{}",
                upstream_says(upstream)
            ),
            FindingKind::EnvUnknown { name, engine, bump, searched_from, suggestion } => {
                let since = searched_from.as_ref().map(|r| format!(", nor read by any {engine} release from {r} on")).unwrap_or_default();
                let typo = suggestion.as_ref().map(|s| format!(" (typo? the target reads `{s}`)")).unwrap_or_default();
                format!(
                    "`{name}` is not known to {engine} {bump}{since}{typo}: not in the env registry and not read anywhere in the Python package; compiled extensions are not searched."
                )
            }
            FindingKind::EnvDefaultChanged { name, bump, old, new } => {
                format!("the default of `{name}` changed from {old} to {new} ({bump}); the recipe sets it explicitly.")
            }
            FindingKind::ConsumerMissing { missing, engine, consumer, consumer_ref, snippet, at_start, moved_to } => {
                let consequence = if *at_start {
                    format!("It runs at module import, so the {consumer} worker crashes at start.")
                } else {
                    "The code path that reaches it fails when it runs.".to_string()
                };
                format!("{} ({consumer} {consumer_ref}, `{snippet}`). {consequence}{}", missing.what(engine), moved(moved_to))
            }
            FindingKind::ConsumerFallback { missing, engine, consumer, consumer_ref, snippet, guard, fallback, moved_to } => format!(
                "{} ({consumer} {consumer_ref}, `{snippet}`), but the use is guarded ({guard}); instead it falls back to `{fallback}`.{}",
                missing.what(engine),
                moved(moved_to)
            ),
            FindingKind::PinMismatch { engine, consumer, consumer_ref, requirement, extra, target } => {
                let group = extra.as_deref().map(|g| format!(" (extra `{g}`)")).unwrap_or_default();
                format!(
                    "{consumer} {consumer_ref} requires `{requirement}`{group}, which excludes the {engine} target {target}: installing {consumer} with that extra pulls a different {engine}, or the resolver refuses."
                )
            }
            FindingKind::ImageMismatch { recipe_image, key, master_image } => format!(
                "the recipe runs `{recipe_image}` but master config key `{key}` says `{master_image}`: the benchmark and the recipe disagree on the engine build."
            ),
            FindingKind::EngineRefMismatch { consumer, recipe_ref, key, router_version } => {
                format!("the recipe installs {consumer} `{recipe_ref}` but master config key `{key}` routes with version `{router_version}`.")
            }
            FindingKind::UnresolvedRef { detail, .. } => detail.clone(),
            FindingKind::DuplicateKey { key, dead_line, kept_line } => {
                format!("`{key}` is set twice in this map; the loader keeps line {kept_line}, so line {dead_line} has no effect.")
            }
            FindingKind::UnreadableRecipe { reason } => format!("cannot be read as a recipe, so nothing in it was audited: {reason}"),
            FindingKind::UnreadablePart { reason } => format!("this part of the recipe cannot be read, so what it sets was not audited: {reason}"),
            FindingKind::MissingLink { entry, target } => {
                format!("`{entry}` links `{target}`, which does not exist; nothing it would run was audited")
            }
            FindingKind::MissingVariant { entry, target, selector, variants } => {
                format!("`{entry}` runs `{target}:{selector}`, but that file has no variant `{selector}` (it has {variants}); nothing it would run was audited")
            }
            FindingKind::UnreadLaunch { words: Some(words), why } => {
                format!("flags from `{words}` could not be read: {why}; what it passes is not audited")
            }
            FindingKind::UnreadLaunch { words: None, why } => format!("a server launch that could not be read: {why}; its flags are not audited"),
            FindingKind::ConfigKey { key, target, problem } => key_message(key, target, problem),
            FindingKind::Rule { message, .. } => message.clone(),
        }
    }
}

fn moved(moved_to: &Option<String>) -> String {
    moved_to.as_deref().map(|h| format!(" It moved to `{h}`.")).unwrap_or_default()
}
