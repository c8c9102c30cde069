//! The AMD multi-node vLLM model table (`amd_utils/models_vllm.yaml`): per
//! model, the flag strings the server script passes to `vllm serve` for each
//! role and the environment it exports first. The file's header is the schema:
//! `prefill_flags` / `decode_flags` (vLLM CLI flags per role), `env`
//! (space-separated `KEY=VALUE` pairs exported before `vllm serve`), `hf_dir`
//! (the on-disk model folder); the table also uses `prefill_env` /
//! `decode_env` (one role's extra pairs).
//!
//! Each model is one [`Deployment`] with a `prefill` and a `decode` role; flag
//! strings are split as bash splits them (see [`super::flag_words`]), so a
//! finding points at the word and `--fix` edits it in place. What the server
//! script adds itself is not in the file and is said to be unread.

use super::super::format::Loaded;
use super::super::yaml::{Entry, Node};
use super::super::{ArgToken, Deployment, EnvUse, Note, RoleConfig};
use super::{flag_words, PrintedAs, ROLES};
use crate::surface::Known;
use crate::text::span::SourceText;

/// Keys of a model entry that hold no flag or env var.
const OTHER_KEYS: [&str; 1] = ["hf_dir"];

pub(super) fn read(src: &SourceText, root: &Node) -> Loaded {
    let notes = vec![Note::info(
        "what the server script passes to `vllm serve` besides a model's flag strings (its own flags) is not in this file and not audited",
        None,
    )];
    let mut loaded = Loaded { notes, ..Loaded::default() };
    for entry in root.as_map().unwrap_or_default() {
        loaded.deployments.extend(read_model(src, entry, &mut loaded.notes));
    }
    loaded
}

fn read_model(src: &SourceText, entry: &Entry, notes: &mut Vec<Note>) -> Option<Deployment> {
    let Some(model) = entry.key.as_str() else {
        notes.push(Note::warning("a model whose name is not a string; skipped", Some(entry.key.span.clone())));
        return None;
    };
    let mut flags: [Option<Vec<ArgToken>>; 2] = Default::default();
    let mut common_env = Vec::new();
    let mut role_env: [Vec<EnvUse>; 2] = Default::default();
    for field in entry.value.as_map().unwrap_or_default() {
        let Some(key) = field.key.as_str() else { continue };
        let path = format!("{model}.{key}");
        let role = |suffix: &str| ROLES.iter().position(|r| key.strip_suffix(suffix) == Some(r));
        if let Some(i) = role("_flags") {
            flags[i] = Some(flag_words(src, &path, &field.value, PrintedAs::InDoubleQuotes, notes));
        } else if key == "env" {
            common_env = env_pairs(src, &path, &field.value, notes);
        } else if let Some(i) = role("_env") {
            role_env[i] = env_pairs(src, &path, &field.value, notes);
        } else if !OTHER_KEYS.contains(&key) {
            notes.push(Note::warning(
                format!("`{path}`: not a key of the vLLM model table (prefill_flags, decode_flags, env, prefill_env, decode_env, hf_dir); not audited"),
                Some(field.key.span.clone()),
            ));
        }
    }
    let roles = ROLES
        .iter()
        .zip(flags)
        .zip(role_env)
        .map(|((&name, argv), env)| {
            if argv.is_none() {
                notes.push(Note::warning(
                    format!("`{model}` has no `{name}_flags`: its {name} server is started with the script's flags only"),
                    Some(entry.key.span.clone()),
                ));
            }
            RoleConfig {
                role: name.to_string(),
                span: Some(entry.key.span.clone()),
                flags: Vec::new(),
                env,
                argv: Some(argv.unwrap_or_default()),
                dynamic: None,
                config: Vec::new(),
                config_unread: None,
            }
        })
        .collect();
    Some(Deployment {
        name_span: Some(entry.key.span.clone()),
        ..Deployment::launched(crate::profiles::VLLM.id, model.to_string(), roles, common_env)
    })
}

/// `KEY=VALUE` words of an env string, each with its name's and value's places.
pub(super) fn env_pairs(src: &SourceText, path: &str, node: &Node, notes: &mut Vec<Note>) -> Vec<EnvUse> {
    let mut out = Vec::new();
    for word in flag_words(src, path, node, PrintedAs::AsIs, notes) {
        let Known::Value(text) = &word.value else { continue };
        let Some((name, value)) = text.split_once('=').filter(|(n, _)| is_env_name(n)) else {
            notes.push(Note::warning(format!("`{path}`: `{}` is no KEY=VALUE pair; not read", word.raw), Some(word.span.clone())));
            continue;
        };
        // Exact places when the word is written as read (no quotes inside the name).
        let (name_span, value_span) = match word.raw.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            Some(_) => {
                let start = word.span.offset;
                (src.span(start, start + name.len()), src.span(start + name.len() + 1, word.span.end()))
            }
            None => (word.span.clone(), word.span.clone()),
        };
        out.push(EnvUse {
            name: name.to_string(),
            value: Known::Value(value.to_string()),
            name_span,
            value_span,
            shadowed: Vec::new(),
            condition: None,
        });
    }
    out
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
