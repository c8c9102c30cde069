//! Values of an srt-slurm recipe as srtctl hands them on: flag maps to argv
//! (`_config_to_cli_args`), env maps, the Dynamo build, single values.

use crate::profiles::ArgsForm;
use crate::recipe::image::DynamoRef;
use crate::recipe::yaml::{Entry, Node, NodeKind, ScalarType};
use crate::recipe::{ArgToken, ConfigUse, DynamoSpec, EnvUse, FlagUse, FlagValue, Note};
use crate::surface::Known;
use crate::text::Spanned;

pub(super) fn spanned_scalar(node: Option<&Node>, keys: &[&str], notes: &mut Vec<Note>) -> Option<Spanned<String>> {
    let node = node?;
    match node.as_scalar() {
        Some(_) if node.is_null() => None,
        Some(s) => Some(Spanned { value: s.text.clone(), span: node.span.clone() }),
        None => {
            notes.push(Note::error(
                format!("`{}` should be a single value, found a {}", keys.join("."), node.kind_name()),
                Some(node.span.clone()),
            ));
            None
        }
    }
}

/// A role's engine arguments, as srtctl hands them on (`form`): flags, or the
/// keys of the engine's YAML configuration file.
pub(super) fn read_args(
    config_key: &str,
    role: &str,
    node: &Node,
    form: ArgsForm,
    notes: &mut Vec<Note>,
) -> (Vec<FlagUse>, Vec<ConfigUse>) {
    match form {
        ArgsForm::YamlConfig => (Vec::new(), read_config(config_key, role, node, notes)),
        ArgsForm::Argv | ArgsForm::ArgvAsWritten => (read_flags(config_key, role, node, form, notes), Vec::new()),
    }
}

/// Each key a flag (`_` read as `-`, as srtctl passes it), with its value as
/// srtctl hands it on (`form`).
fn read_flags(config_key: &str, role: &str, node: &Node, form: ArgsForm, notes: &mut Vec<Note>) -> Vec<FlagUse> {
    let Some(entries) = node.as_map() else {
        if !node.is_null() {
            notes.push(Note::error(
                format!("`{config_key}.{role}` should map flag names to values, found a {}", node.kind_name()),
                Some(node.span.clone()),
            ));
        }
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|entry| {
            let key = entry.key.as_str()?;
            let name = match form {
                ArgsForm::ArgvAsWritten if key.starts_with("--") => key[2..].to_string(),
                ArgsForm::ArgvAsWritten => key.to_string(),
                ArgsForm::Argv | ArgsForm::YamlConfig => key.replace('_', "-"),
            };
            Some(FlagUse {
                name,
                value: flag_value(role, key, &entry.value, notes),
                key_span: entry.key.span.clone(),
                value_span: entry.value.span.clone(),
                shadowed: entry.shadows.clone(),
                condition: None,
            })
        })
        .collect()
}

/// The keys of the YAML configuration file srtctl writes from a role's args
/// (TRT-LLM's `--config`): every key at every depth, a map's own key before
/// its children's, with its value as the loader types it. The walk is over
/// the parsed tree, so its cost is the file's size.
fn read_config(config_key: &str, role: &str, node: &Node, notes: &mut Vec<Note>) -> Vec<ConfigUse> {
    if node.as_map().is_none() {
        if !node.is_null() {
            notes.push(Note::error(
                format!("`{config_key}.{role}` should map configuration keys to values, found a {}", node.kind_name()),
                Some(node.span.clone()),
            ));
        }
        return Vec::new();
    }
    crate::recipe::config_file::keys(node)
}

fn flag_value(role: &str, key: &str, node: &Node, notes: &mut Vec<Note>) -> FlagValue {
    match &node.kind {
        NodeKind::Scalar(s) => match s.resolve() {
            ScalarType::Null => FlagValue::Null,
            ScalarType::Bool(on) => FlagValue::Switch { on },
            ty => FlagValue::Scalar { text: s.text.clone(), quoted: s.is_quoted(), ty },
        },
        NodeKind::Seq(items) => {
            let mut values = Vec::new();
            for item in items {
                match item.as_scalar() {
                    Some(s) => values.push(Spanned { value: s.text.clone(), span: item.span.clone() }),
                    None => {
                        let reason = format!("a {} inside the list", item.kind_name());
                        notes.push(Note::error(
                            format!("`{role}.{key}`: {reason} cannot become a command-line value"),
                            Some(item.span.clone()),
                        ));
                        return FlagValue::Invalid { reason };
                    }
                }
            }
            FlagValue::List { items: values }
        }
        NodeKind::Map(_) => {
            notes.push(Note::error(
                format!("`{role}.{key}` is a map: srtctl would pass its Python repr as the value; write a JSON string"),
                Some(node.span.clone()),
            ));
            FlagValue::Invalid { reason: "a map is not a flag value".into() }
        }
    }
}

pub(super) fn read_env(node: &Node, notes: &mut Vec<Note>) -> Vec<EnvUse> {
    let Some(entries) = node.as_map() else {
        if !node.is_null() {
            notes.push(Note::error(
                format!("an environment block should map names to values, found a {}", node.kind_name()),
                Some(node.span.clone()),
            ));
        }
        return Vec::new();
    };
    let mut env = Vec::new();
    for entry in entries {
        let Some(name) = entry.key.as_str() else {
            continue;
        };
        let Some(scalar) = entry.value.as_scalar() else {
            notes.push(Note::error(
                format!("env `{name}` should be a single value, found a {}", entry.value.kind_name()),
                Some(entry.value.span.clone()),
            ));
            continue;
        };
        // srtctl declares env as dict[str, str]: an unquoted `true` or `null` is not
        // the string the process will see.
        match scalar.resolve() {
            ScalarType::Bool(_) | ScalarType::Null => notes.push(Note::warning(
                format!(
                    "env `{name}: {}` is a YAML {}, not a string; quote it",
                    scalar.text,
                    if entry.value.is_null() { "null" } else { "boolean" }
                ),
                Some(entry.value.span.clone()),
            )),
            _ => {}
        }
        env.push(EnvUse {
            name: name.to_string(),
            value: Known::Value(scalar.text.clone()),
            name_span: entry.key.span.clone(),
            value_span: entry.value.span.clone(),
            shadowed: entry.shadows.clone(),
            condition: None,
        });
    }
    env
}

/// `extra_args`: raw argv words appended to the server's command line, one
/// list item per word, as srtctl appends them.
pub(super) fn read_extra_args(at: &str, node: &Node, notes: &mut Vec<Note>) -> Option<Vec<ArgToken>> {
    let Some(items) = node.as_seq() else {
        if !node.is_null() {
            notes.push(Note::error(format!("`{at}` should be a list of words, found a {}", node.kind_name()), Some(node.span.clone())));
        }
        return None;
    };
    let mut words = Vec::new();
    for item in items {
        let Some(scalar) = item.as_scalar() else {
            notes.push(Note::error(format!("`{at}`: a {} is not a command-line word", item.kind_name()), Some(item.span.clone())));
            continue;
        };
        words.push(ArgToken {
            value: Known::Value(scalar.text.clone()),
            raw: scalar.text.clone(),
            span: item.span.clone(),
            quoted: scalar.is_quoted(),
            condition: None,
            unread: None,
        });
    }
    Some(words)
}

/// The legacy `dynamo: {hash|wheel|version, install}` block.
pub(super) fn read_dynamo_v1(node: &Node, notes: &mut Vec<Note>) -> Option<DynamoSpec> {
    let Some(entries) = node.as_map() else {
        if !node.is_null() {
            notes.push(Note::error(
                format!("`dynamo` should be a map (hash|wheel|version, install), found a {}", node.kind_name()),
                Some(node.span.clone()),
            ));
        }
        return None;
    };
    let refs: Vec<&Entry> =
        entries.iter().filter(|e| matches!(e.key.as_str(), Some("hash" | "wheel" | "version")) && !e.value.is_null()).collect();
    if refs.len() > 1 {
        notes.push(Note::error(
            "`dynamo` names more than one of hash / wheel / version; which one installs is not knowable",
            Some(node.span.clone()),
        ));
        return None;
    }
    let install = node.get("install").and_then(|n| match n.as_scalar()?.resolve() {
        ScalarType::Bool(b) => Some(b),
        _ => None,
    });
    let entry = refs.first()?;
    let field = entry.key.as_str().unwrap_or_default().to_string();
    let Some(text) = entry.value.as_scalar().map(|s| s.text.clone()) else {
        notes.push(Note::error(format!("`dynamo.{field}` should be a single value"), Some(entry.value.span.clone())));
        return None;
    };
    let reference = DynamoRef::from_field(&field, &text);
    if reference.is_none() {
        notes.push(Note::error(format!("`dynamo.{field}: {text}` is not a valid {field}"), Some(entry.value.span.clone())));
    }
    Some(DynamoSpec { field, raw: Spanned { value: text, span: entry.value.span.clone() }, reference, install, span: node.span.clone() })
}

/// The Dynamo source of schema 2: `dynamo.source.{pypi,wheel,rev,git}` or
/// `dynamo.top_of_tree`, read into the same reference as the legacy keys
/// (`pypi` is a release, `wheel` a staged nightly's version, `rev` a commit or
/// a tag of `git`, upstream unless `git` names a fork). A fork's commit, a pull
/// request ref and `top_of_tree` name no upstream release: their reference is
/// `None`, and the audit says so (EA303).
pub(super) fn read_dynamo_v2(node: &Node, notes: &mut Vec<Note>) -> Option<DynamoSpec> {
    let install = node.get("install").and_then(|n| match n.as_scalar()?.resolve() {
        ScalarType::Bool(b) => Some(b),
        _ => None,
    });
    if let Some(top) = node.get("top_of_tree").filter(|n| matches!(n.as_scalar().map(|s| s.resolve()), Some(ScalarType::Bool(true)))) {
        let raw = Spanned { value: "top_of_tree".into(), span: top.span.clone() };
        return Some(DynamoSpec {
            field: "top_of_tree (unpinned: the default branch when the job runs)".into(),
            raw,
            reference: None,
            install,
            span: node.span.clone(),
        });
    }
    let source = node.get("source")?;
    let Some(entries) = source.as_map() else {
        if !source.is_null() {
            notes.push(Note::error(
                format!("`dynamo.source` should be a map (pypi | wheel | git + rev), found a {}", source.kind_name()),
                Some(source.span.clone()),
            ));
        }
        return None;
    };
    for entry in entries {
        let key = entry.key.as_str().unwrap_or_default();
        if !SOURCE_KEYS.contains(&key) {
            notes.push(Note::error(
                format!(
                    "`dynamo.source.{key}` is not a key srtctl 2.x takes (it rejects the recipe); use one of {}",
                    SOURCE_KEYS.join(", ")
                ),
                Some(entry.key.span.clone()),
            ));
        }
    }
    let named: Vec<&Entry> =
        entries.iter().filter(|e| matches!(e.key.as_str(), Some("pypi" | "wheel" | "rev")) && !e.value.is_null()).collect();
    let [entry] = named.as_slice() else {
        if named.len() > 1 {
            notes.push(Note::error(
                "`dynamo.source` names more than one of pypi / wheel / rev; srtctl takes exactly one",
                Some(source.span.clone()),
            ));
        }
        return None;
    };
    let key = entry.key.as_str().unwrap_or_default();
    let Some(text) = entry.value.as_scalar().map(|s| s.text.clone()) else {
        notes.push(Note::error(format!("`dynamo.source.{key}` should be a single value"), Some(entry.value.span.clone())));
        return None;
    };
    let fork = source.get("git").and_then(Node::as_str).filter(|url| !is_upstream_dynamo(url));
    let reference = match (key, fork) {
        ("pypi", _) => DynamoRef::from_field("version", &text),
        ("wheel", _) => DynamoRef::from_field("wheel", &text),
        (_, Some(_)) => None,
        _ => DynamoRef::from_field("hash", &text).or_else(|| DynamoRef::from_field("version", &text)),
    };
    let field = match fork {
        Some(url) => format!("source.{key} of the fork {url}"),
        None => format!("source.{key}"),
    };
    if reference.is_none() && fork.is_none() && key != "rev" {
        notes.push(Note::error(format!("`dynamo.source.{key}: {text}` is not a valid {key} version"), Some(entry.value.span.clone())));
    }
    Some(DynamoSpec { field, raw: Spanned { value: text, span: entry.value.span.clone() }, reference, install, span: node.span.clone() })
}

/// The keys of `dynamo.source` (srt-slurm 2.x's `DynamoSourceConfig`).
const SOURCE_KEYS: &[&str] = &["git", "rev", "sha", "patches", "pypi", "wheel"];

/// Whether a git URL is upstream Dynamo's repository.
fn is_upstream_dynamo(url: &str) -> bool {
    let path = url.trim_end_matches('/').trim_end_matches(".git").to_ascii_lowercase();
    path.ends_with("github.com/ai-dynamo/dynamo") || path.ends_with("github.com:ai-dynamo/dynamo")
}
