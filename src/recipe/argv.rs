//! Command-line words as a launcher receives them, and their binding to
//! flags: whether `--x y` gives `y` to `--x` depends on the engine's flag
//! arity, so words are kept raw ([`ArgToken`]) and bound by the checker
//! ([`bind`]) once the target's switches are known. Launch scripts and the AMD
//! model tables' flag strings both produce words.

use super::yaml::ScalarType;
use super::{FlagUse, FlagValue};
use crate::surface::Known;
use crate::text::{Span, Spanned};
use serde::{Deserialize, Serialize};

/// One command-line word after the launcher.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgToken {
    /// The word after quote removal and substitution, or `Dynamic` with its source text.
    pub value: Known<String>,
    /// The text as written in the script (quotes included).
    pub raw: String,
    pub span: Span,
    pub quoted: bool,
    /// The paths through the script on which this word is passed, when not all
    /// of them ("DP_ATTENTION=true").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Why the value is not known (`comes from the environment`), when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

/// Flags bound from a token sequence, and the tokens that are no flag.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub(crate) struct Binding {
    pub flags: Vec<FlagUse>,
    /// Tokens where a flag was expected: positionals, or dynamic words that may
    /// expand to flags nobody can see.
    pub unbound: Vec<ArgToken>,
}

/// Pair flags with their values as argparse would, given which flags take no value.
///
/// `--x=v` → `v`; a switch → `on`; any other `--x` takes the following non-flag
/// tokens (one → a scalar, several → a list; a single-value flag given a list is
/// then visibly wrong); `--x` with nothing after it → a bare switch, which the
/// checker reports when the flag needs a value.
pub(crate) fn bind(tokens: &[ArgToken], is_switch: impl Fn(&str) -> bool) -> Binding {
    let mut binding = Binding::default();
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        i += 1;
        // `--name="$X"`: the value is unknown but the flag name is written plainly.
        if let Some(name) = dynamic_flag_name(token) {
            let (_, value_span) = split_span_raw(token, name.len() + 2);
            let key_span = key_span(token, name);
            binding.flags.push(FlagUse {
                name: name.to_string(),
                value: dynamic(token),
                key_span,
                value_span,
                shadowed: Vec::new(),
                condition: token.condition.clone(),
            });
            continue;
        }
        let Some(word) = token.value.value().filter(|w| is_flag(w)) else {
            binding.unbound.push(token.clone());
            continue;
        };
        let name_of = |w: &str| w.strip_prefix("--").unwrap_or(w).to_string();
        if let Some((name, value)) = word.split_once('=') {
            let (_, value_span) = split_span(token, name.len());
            let name = name_of(name);
            binding.flags.push(FlagUse {
                key_span: key_span(token, &name),
                name,
                value: scalar(value, token.quoted),
                value_span,
                shadowed: Vec::new(),
                condition: token.condition.clone(),
            });
            continue;
        }
        let name = name_of(word);
        let mut values = Vec::new();
        if !is_switch(&name) {
            while i < tokens.len() && !tokens[i].value.value().is_some_and(|w| is_flag(w)) && dynamic_flag_name(&tokens[i]).is_none() {
                // An unquoted unknown `$X` may expand to flags: it is taken as a value
                // only right after the flag (`--tp $TP`), not appended to a list.
                if tokens[i].value.is_dynamic() && !tokens[i].quoted && !values.is_empty() {
                    break;
                }
                values.push(&tokens[i]);
                i += 1;
            }
        }
        let value = match values.as_slice() {
            [] => FlagValue::Switch { on: true },
            [one] => match one.value.value() {
                Some(v) => scalar(v, one.quoted),
                None => dynamic(one),
            },
            many => match many.iter().find(|t| t.value.is_dynamic()) {
                Some(d) => dynamic(d),
                None => FlagValue::List {
                    items: many
                        .iter()
                        .map(|t| Spanned { value: t.value.value().cloned().unwrap_or_default(), span: t.span.clone() })
                        .collect(),
                },
            },
        };
        let value_span = match (values.first(), values.last()) {
            (Some(first), Some(last)) => Span { len: last.span.end() - first.span.offset, ..first.span.clone() },
            _ => token.span.clone(),
        };
        let condition = condition_of(std::iter::once(token).chain(values.iter().copied()));
        binding.flags.push(FlagUse { key_span: key_span(token, &name), name, value, value_span, shadowed: Vec::new(), condition });
    }
    binding
}

/// The condition of a flag written over several words: each word's, once.
fn condition_of<'t>(tokens: impl Iterator<Item = &'t ArgToken>) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in tokens.filter_map(|t| t.condition.as_deref()) {
        if !parts.contains(&c) {
            parts.push(c);
        }
    }
    (!parts.is_empty()).then(|| parts.join(" and "))
}

/// The flag name of a dynamic `--name=...` token whose name part is literal text.
fn dynamic_flag_name(token: &ArgToken) -> Option<&str> {
    // The word's own text: a word split out of a longer value is not all of
    // the text it was written in.
    let Known::Dynamic { dynamic: text } = &token.value else { return None };
    let (name, _) = text.strip_prefix("--")?.split_once('=')?;
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then_some(name)
}

/// The span of a flag's name without its leading `--`, so a rename edits the same
/// text in scripts as in YAML keys. The whole word when it is not written plainly.
fn key_span(token: &ArgToken, name: &str) -> Span {
    if token.raw.starts_with("--") && token.raw[2..].starts_with(name) {
        Span { offset: token.span.offset + 2, len: name.len(), column: token.span.column + 2, ..token.span.clone() }
    } else {
        token.span.clone()
    }
}

/// Split a token's span after `key_len` bytes of its written text (`--name` then `=`).
fn split_span_raw(token: &ArgToken, key_len: usize) -> (Span, Span) {
    let key = Span { len: key_len, ..token.span.clone() };
    let value = Span {
        offset: token.span.offset + key_len + 1,
        len: token.span.len.saturating_sub(key_len + 1),
        column: token.span.column + token.raw[..=key_len].chars().count() as u32,
        ..token.span.clone()
    };
    (key, value)
}

/// `--x`, or a short option `-x`; a negative number is a value.
fn is_flag(word: &str) -> bool {
    word.starts_with('-') && word.len() > 1 && !word[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

fn scalar(text: &str, quoted: bool) -> FlagValue {
    FlagValue::Scalar { text: text.to_string(), quoted, ty: ScalarType::Str }
}

fn dynamic(token: &ArgToken) -> FlagValue {
    FlagValue::Dynamic { text: token.raw.clone() }
}

/// Key and value spans of `--name=value`. Exact when the token is written as
/// it reads (no quotes or substitutions inside); otherwise both are the whole word.
fn split_span(token: &ArgToken, name_len: usize) -> (Span, Span) {
    let written_plainly = token.value.value() == Some(&token.raw);
    if !written_plainly {
        return (token.span.clone(), token.span.clone());
    }
    split_span_raw(token, name_len)
}
