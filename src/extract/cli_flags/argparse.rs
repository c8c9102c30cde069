//! argparse's own rules, applied to one `add_argument` registration: how
//! `dest` is derived, what each built-in action implies for `nargs`, `const`
//! and `default`, the `--no-` twins of `BooleanOptionalAction`, and what an
//! engine action class adds.

use std::collections::HashMap;

use serde_json::json;

use super::actions::{read_action_class, ActionClass, ActionRegistry, ErrorRule, StoreRule};
use crate::extract::consts::{ClassRef, ConstEval, Folded, Val};
use crate::surface::{DefaultSource, EffectiveDefault, Evidence, Flag, FlagDeprecation, FlagDeprecationKind, Known, PyValue};

/// One keyword argument of a registration, folded, with its source text.
#[derive(Debug, Clone)]
pub(super) struct KwArg {
    pub value: Folded,
    pub text: String,
}

impl KwArg {
    pub(super) fn literal(v: Val) -> Self {
        KwArg { text: v.repr(), value: Ok(v) }
    }
    pub(super) fn known(&self) -> Known<PyValue> {
        match &self.value {
            Ok(v) => match v.to_json() {
                Some(j) => Known::Value(j),
                None => Known::dynamic(&self.text),
            },
            Err(_) => Known::dynamic(&self.text),
        }
    }
}

/// One `parser.add_argument(*names, **kwargs)` as the engine makes it.
#[derive(Debug, Clone)]
pub(super) struct ArgCall {
    pub names: Vec<String>,
    pub kwargs: Vec<(String, KwArg)>,
    pub evidence: Evidence,
    /// The field's declared `fallback=` (field-driven registrars only): what
    /// the field resolves to when it is still `None` after resolution.
    pub fallback: Option<KwArg>,
    /// Choices added only when an env var is set ([`crate::extract::consts::env_gate`]).
    pub env_choices: std::collections::BTreeMap<String, Vec<PyValue>>,
    /// Made on an argument group (`parser.add_argument_group(...)`), whose
    /// `add_argument` is argparse's even when the parser's class overrides it.
    pub on_group: bool,
}

impl ArgCall {
    pub(super) fn kwarg(&self, key: &str) -> Option<&KwArg> {
        self.kwargs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Engine action classes read so far (each read once).
#[derive(Default)]
pub(super) struct ActionCache(HashMap<ClassRef, Option<ActionClass>>);

impl ActionCache {
    fn get(&mut self, ev: &ConstEval, class: &ClassRef) -> Option<ActionClass> {
        self.0.entry(class.clone()).or_insert_with(|| read_action_class(ev, class)).clone()
    }
}

/// What the `action=` keyword names.
enum ActionKind {
    Builtin(&'static str),
    /// argparse's `BooleanOptionalAction`, or the engine class the parser's
    /// registry builds in its place.
    BooleanOptional(Option<super::actions::PairedBoolean>),
    Engine(Box<ActionClass>),
    /// Not understood: the expression text.
    Unknown(String),
}

fn classify_action(ev: &ConstEval, cache: &mut ActionCache, registry: &ActionRegistry, action: Option<&KwArg>) -> ActionKind {
    let Some(action) = action else { return ActionKind::Builtin("store") };
    match &action.value {
        Ok(Val::Str(s)) => match builtin_action(s) {
            Some(b) => ActionKind::Builtin(b),
            None => ActionKind::Unknown(s.clone()),
        },
        Ok(Val::External(e)) if e.ends_with("BooleanOptionalAction") => ActionKind::BooleanOptional(registry.boolean_optional.clone()),
        Ok(Val::External(e)) => {
            // `argparse._StoreTrueAction` and friends.
            let short = e.rsplit('.').next().unwrap_or(e);
            match short {
                "_StoreAction" => ActionKind::Builtin("store"),
                "_StoreTrueAction" => ActionKind::Builtin("store_true"),
                "_StoreFalseAction" => ActionKind::Builtin("store_false"),
                "_StoreConstAction" => ActionKind::Builtin("store_const"),
                "_AppendAction" => ActionKind::Builtin("append"),
                "_CountAction" => ActionKind::Builtin("count"),
                _ => ActionKind::Unknown(short.to_string()),
            }
        }
        Ok(Val::Class(c)) => match cache.get(ev, c) {
            Some(ac) => ActionKind::Engine(Box::new(ac)),
            None => ActionKind::Unknown(c.name.clone()),
        },
        _ => ActionKind::Unknown(action.text.clone()),
    }
}

fn builtin_action(s: &str) -> Option<&'static str> {
    Some(match s {
        "store" => "store",
        "store_const" => "store_const",
        "store_true" => "store_true",
        "store_false" => "store_false",
        "append" => "append",
        "append_const" => "append_const",
        "extend" => "extend",
        "count" => "count",
        "help" => "help",
        "version" => "version",
        _ => return None,
    })
}

/// argparse's `dest` for optionals: the first `--long` option (else the first
/// option), prefix stripped, `-` → `_`.
pub(crate) fn derive_dest(names: &[String]) -> String {
    let long = names.iter().find(|n| n.starts_with("--")).or_else(|| names.first());
    long.map(|n| n.trim_start_matches('-').replace('-', "_")).unwrap_or_default()
}

/// Build the flag argparse would register.
pub(super) fn build_flag(ev: &ConstEval, cache: &mut ActionCache, registry: &ActionRegistry, call: &ArgCall) -> Flag {
    let action = classify_action(ev, cache, registry, call.kwarg("action"));
    let given = |k: &str| call.kwarg(k).map(KwArg::known);
    let dest = match call.kwarg("dest") {
        Some(KwArg { value: Ok(Val::Str(d)), .. }) => d.clone(),
        Some(other) => other.text.clone(),
        None => derive_dest(&call.names),
    };
    let mut names = call.names.clone();
    let mut nargs = given("nargs");
    let mut const_value = given("const");
    let mut default = given("default");
    let mut deprecated = None;

    let action_name = match &action {
        ActionKind::Builtin(b) => {
            let (implied_nargs, implied_const, implied_default): (Option<PyValue>, Option<PyValue>, PyValue) = match *b {
                "store_true" => (Some(json!(0)), Some(json!(true)), json!(false)),
                "store_false" => (Some(json!(0)), Some(json!(false)), json!(true)),
                "store_const" | "append_const" => (Some(json!(0)), None, PyValue::Null),
                "count" => (Some(json!(0)), None, PyValue::Null),
                "help" | "version" => (Some(json!(0)), None, json!("==SUPPRESS==")),
                _ => (None, None, PyValue::Null),
            };
            if implied_nargs.is_some() {
                nargs = implied_nargs.map(Known::Value);
            }
            if const_value.is_none() {
                const_value = implied_const.map(Known::Value);
            }
            default.get_or_insert(Known::Value(implied_default));
            b.to_string()
        }
        ActionKind::BooleanOptional(paired) => {
            // argparse adds `--no-x` after each `--x`.
            let negated: Vec<String> = call
                .names
                .iter()
                .flat_map(|n| match n.strip_prefix("--") {
                    Some(rest) => vec![n.clone(), format!("--no-{rest}")],
                    None => vec![n.clone()],
                })
                .collect();
            nargs = Some(Known::Value(json!(0)));
            default.get_or_insert(Known::Value(PyValue::Null));
            match paired {
                None => {
                    names = negated;
                    "BooleanOptionalAction".to_string()
                }
                Some(paired) => {
                    // `--enable-x` also gets `--disable-x`; then the `--no-` forms
                    // are still accepted, listed last (help hides them).
                    let inverses: Vec<String> = call
                        .names
                        .iter()
                        .flat_map(|n| {
                            paired
                                .inverse_prefixes
                                .iter()
                                .filter_map(move |(p, inv)| n.strip_prefix(p.as_str()).map(|rest| format!("{inv}{rest}")))
                        })
                        .collect();
                    names = if inverses.is_empty() {
                        negated
                    } else {
                        let hidden = negated.into_iter().filter(|n| !call.names.contains(n));
                        call.names.iter().cloned().chain(inverses).chain(hidden).collect()
                    };
                    paired.name.clone()
                }
            }
        }
        ActionKind::Engine(ac) => {
            let init = |k: &str| ac.init_defaults.get(k).map(|f| KwArg { value: f.clone(), text: k.to_string() }.known());
            nargs = nargs.or_else(|| init("nargs"));
            const_value = const_value.or_else(|| init("const"));
            default = default.or_else(|| init("default"));
            if let StoreRule::Param(p) = &ac.stores {
                if let Some(stored) = call.kwarg(p).map(KwArg::known).or_else(|| init(p)) {
                    const_value = Some(stored);
                }
            }
            if let StoreRule::Fixed(v) = &ac.stores {
                if let Some(j) = v.to_json() {
                    const_value = Some(Known::Value(j));
                }
            }
            if ac.deprecation {
                deprecated = deprecation(ac, call);
            }
            ac.name.clone()
        }
        ActionKind::Unknown(text) => text.clone(),
    };
    // An explicit `nargs=None` means "not set".
    let nargs = match nargs {
        Some(Known::Value(PyValue::Null)) | None => None,
        Some(Known::Value(v)) => Some(v),
        Some(Known::Dynamic { dynamic }) => Some(json!({ "dynamic": dynamic })),
    };
    let const_value = match const_value {
        Some(Known::Value(PyValue::Null)) => None,
        other => other,
    };
    let choices = call.kwarg("choices").and_then(|c| match &c.value {
        Ok(Val::None) => None,
        Ok(v) => Some(match v.iter_items().and_then(|items| items.iter().map(Val::to_json).collect::<Option<Vec<_>>>()) {
            Some(mut items) => {
                if matches!(v, Val::Set(_)) {
                    items.sort_by_key(|j| j.to_string());
                }
                Known::Value(items)
            }
            None => Known::dynamic(&c.text),
        }),
        Err(_) => Some(Known::dynamic(&c.text)),
    });
    let required = matches!(call.kwarg("required").map(|r| &r.value), Some(Ok(Val::Bool(true))));
    let help = call.kwarg("help").and_then(|h| match &h.value {
        Ok(Val::Str(s)) => Some(s.clone()),
        _ => None,
    });
    let default = default.unwrap_or(Known::Value(PyValue::Null));
    // `add_argument(..., deprecated=True)` (argparse 3.13, or the engine's
    // parser before it): warns when used, still takes effect.
    if deprecated.is_none() && matches!(call.kwarg("deprecated").map(|d| &d.value), Some(Ok(v)) if v.truthy() == Some(true)) {
        deprecated = Some(FlagDeprecation { kind: FlagDeprecationKind::Announced, replacement: None, message: help.clone() });
    }
    Flag {
        effective_default: fallback_default(call, &default),
        names,
        dest,
        action: action_name,
        type_name: call.kwarg("type").map(type_name),
        nargs,
        choices,
        choices_when_env: call.env_choices.clone(),
        default,
        const_value,
        required,
        deprecated,
        help,
        evidence: call.evidence.clone(),
        engine_parser: None,
    }
}

/// A declared `fallback=` is the effective default of a field whose argparse
/// default is `None` (a non-`None` default makes the fallback unreachable).
fn fallback_default(call: &ArgCall, default: &Known<PyValue>) -> Option<EffectiveDefault> {
    let fallback = call.fallback.as_ref().filter(|f| !matches!(f.value, Ok(Val::None)))?;
    matches!(default, Known::Value(PyValue::Null)).then(|| EffectiveDefault {
        value: fallback.known(),
        source: DefaultSource::Fallback,
        evidence: call.evidence.clone(),
    })
}

/// The type whose values argparse hands to `json.loads`.
const JSON_LOADS: &str = "json.loads";

/// argparse shows a type by the callable's `__name__`; `json.loads` keeps its
/// module (`loads` alone names no parser), so values can be judged as JSON.
fn type_name(kw: &KwArg) -> String {
    match &kw.value {
        Ok(Val::External(e)) if e == JSON_LOADS => e.clone(),
        Ok(Val::Function(_, qual)) => qual.rsplit('.').next().unwrap_or(qual).to_string(),
        Ok(Val::Class(c)) => c.name.rsplit('.').next().unwrap_or(&c.name).to_string(),
        Ok(Val::External(e)) => e.rsplit('.').next().unwrap_or(e).to_string(),
        _ if kw.text.trim_start().starts_with("lambda") => "<lambda>".to_string(),
        _ => kw.text.rsplit('.').next().unwrap_or(&kw.text).to_string(),
    }
}

/// What a deprecating action class does to a flag. An action that stores the
/// values but names no replacement keyword keeps the flag working: the help
/// text says more, or the deprecation is left unclaimed (`None`).
fn deprecation(ac: &ActionClass, call: &ArgCall) -> Option<FlagDeprecation> {
    let string_kwarg = |p: &str| match call.kwarg(p).map(|k| &k.value) {
        Some(Ok(Val::Str(s))) => Some(s.clone()),
        _ => None,
    };
    let given_non_none = |p: &str| matches!(call.kwarg(p).map(|k| &k.value), Some(v) if !matches!(v, Ok(Val::None)));
    let removed_message = match &ac.errors {
        ErrorRule::Always => Some(None),
        ErrorRule::WhenSet(p) if given_non_none(p) => Some(string_kwarg(p)),
        _ => None,
    };
    let replacement = ac.replacement_param.as_deref().and_then(string_kwarg);
    Some(match removed_message {
        Some(message) => FlagDeprecation { kind: FlagDeprecationKind::Removed, replacement, message },
        None if ac.stores == StoreRule::Values && ac.replacement_param.is_none() && ac.custom_params.is_empty() => return None,
        None => FlagDeprecation {
            kind: if ac.stores == StoreRule::Nothing { FlagDeprecationKind::Noop } else { FlagDeprecationKind::Alias },
            replacement,
            message: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dest_comes_from_the_first_long_option() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(derive_dest(&names(&["-m", "--model-path", "--model"])), "model_path");
        assert_eq!(derive_dest(&names(&["-v"])), "v");
    }
}
