//! srt-slurm recipe YAML (`srtctl apply -f recipe.yaml`).
//!
//! Layout read here: `backend.<engine>_config.<role>` flag maps (`sglang_config`,
//! `vllm_config`), `backend.<role>_environment` and `backend.environment` env
//! maps, `model.{container,path,precision}`, `resources.gpu_type`,
//! `dynamo: {hash|wheel|version, install}` and `frontend.type` (a consumer's
//! worker, `dynamo`, or the engine's own server).
//!
//! Override-format recipes (`base:` plus `override_*` / `zip_override_*`) are expanded
//! the way srtctl's `generate_override_configs` does it, on the spanned tree, so each
//! variant's values still point at the line that sets them:
//! deep merge (maps merge, anything else replaces, `null` deletes the key), and for
//! `zip_override_*` every list leaf is a zip axis (length-1 lists broadcast).
//!
//! How srtctl turns a flag map into argv (`_config_to_cli_args`): `_` in keys becomes
//! `-`; `true` → bare `--flag`; `false` and `null` → not passed; a list → `--flag a b`;
//! anything else → `--flag str(value)`.

use super::format::{self, EditIntent, Loaded, RecipeFormat, Syntax};
use super::image::{parse_image, DynamoRef};
use super::links::LinkMapping;
use super::yaml::{Entry, Node, NodeKind, ScalarType};
use super::{Deployment, DynamoSpec, EnvUse, FlagUse, FlagValue, Note, RecipeError, RecipeFile, RecipeKind, RoleConfig};
use crate::surface::Known;
use crate::text::span::{SourceText, Spanned};
use crate::text::Edit;

/// srt-slurm recipe YAML as a [`RecipeFormat`].
pub(crate) struct SrtSlurm;

impl RecipeFormat for SrtSlurm {
    fn kind(&self) -> RecipeKind {
        RecipeKind::SrtSlurm
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn detect(&self, _: &str, _: &str, root: Option<&Node>) -> bool {
        root.is_some_and(looks_like)
    }
    fn read(&self, src: &SourceText, root: Option<&Node>, _: &LinkMapping) -> Result<Loaded, RecipeError> {
        let Some(root) = root else { return Ok(Loaded::default()) };
        let recipe = read(src, root)?;
        Ok(Loaded { kind: Some(recipe.kind), deployments: recipe.deployments, notes: recipe.notes, master: None })
    }
    /// A switch is `key: true`: the key is renamed and `true` becomes the
    /// value; an entry is deleted with its line.
    fn edit(&self, file: &RecipeFile, intent: EditIntent) -> Vec<Edit> {
        match intent {
            EditIntent::RenameSwitch { flag, new_name, value } => {
                let rename = format::replace_in_span(file, &flag.key_span, &flag.name, new_name);
                let set = format::replace_value(file, &flag.value_span, value);
                rename.into_iter().chain(set).collect()
            }
            // One `key: true` line becomes one `name: value` line per flag, at its indentation.
            EditIntent::SplitSwitch { flag, into } => format::yaml_entry_lines(file, &flag.key_span, &flag.value_span)
                .map(|(start, end, indent)| {
                    let lines: String = into.iter().map(|(name, value)| format!("{indent}{name}: {value}\n")).collect();
                    Edit { path: file.path.clone(), offset: start, len: end - start, replacement: lines }
                })
                .into_iter()
                .collect(),
            EditIntent::Delete { key, value } => format::delete_yaml_entry(file, key, value).into_iter().collect(),
            other => format::edit_in_place(file, other),
        }
    }
    /// A recipe for a backend without a server profile is still this format.
    fn owns(&self, kind: &RecipeKind) -> bool {
        matches!(kind, RecipeKind::SrtSlurm | RecipeKind::Other { backend: Some(_) })
    }
}

/// What one srt-slurm file yields.
pub(crate) struct SrtRecipe {
    pub kind: RecipeKind,
    pub deployments: Vec<Deployment>,
    pub notes: Vec<Note>,
}

/// Whether a YAML root is an srt-slurm recipe: it has a `backend` map, or is an
/// override-format file whose `base` has one (or names a model container).
pub(crate) fn looks_like(root: &Node) -> bool {
    let recipe_like = |n: &Node| n.get("backend").is_some_and(|b| b.as_map().is_some()) || n.path(&["model", "container"]).is_some();
    recipe_like(root) || root.get("base").is_some_and(recipe_like)
}

pub(crate) fn read(src: &SourceText, root: &Node) -> Result<SrtRecipe, RecipeError> {
    let mut notes = Vec::new();
    let variants = expand_variants(src, root, &mut notes)?;
    let mut deployments = Vec::new();
    let mut other_backend = None;
    for (variant, tree) in &variants {
        let backend = backend_type(tree);
        // A backend the tool has a server profile for is audited; srt-slurm
        // names it by the profile's id (`type: sglang`, `sglang_config:`).
        let Some(engine) = crate::profiles::by_id(&backend).filter(|p| p.server.is_some()) else {
            other_backend.get_or_insert(backend);
            continue;
        };
        deployments.push(read_deployment(src, tree, engine, variant.clone(), &mut notes));
    }
    let kind = match other_backend {
        Some(backend) if deployments.is_empty() => {
            let audited: Vec<&str> = crate::profiles::PROFILES.iter().filter(|p| p.server.is_some()).map(|p| p.display).collect();
            notes.push(Note::info(
                format!("`{backend}` backend recipe: skipped, only {} server flags are audited", audited.join(", ")),
                root.get("backend").map(|b| b.span.clone()),
            ));
            RecipeKind::Other { backend: Some(backend) }
        }
        _ => RecipeKind::SrtSlurm,
    };
    Ok(SrtRecipe { kind, deployments, notes })
}

/// `backend.type` when written; otherwise told by the `<engine>_config` key;
/// otherwise srtctl's default, SGLang.
fn backend_type(tree: &Node) -> String {
    let Some(backend) = tree.get("backend") else {
        return "sglang".into();
    };
    if let Some(t) = backend.get("type").and_then(Node::as_str) {
        return t.to_string();
    }
    backend
        .as_map()
        .into_iter()
        .flatten()
        .filter_map(|e| e.key.as_str()?.strip_suffix("_config"))
        .find(|engine| matches!(*engine, "sglang" | "vllm" | "trtllm" | "mocker" | "atom" | "tokenspeed" | "tilert"))
        .unwrap_or("sglang")
        .to_string()
}

fn read_deployment(
    src: &SourceText,
    tree: &Node,
    engine: crate::profiles::Engine,
    variant: Option<String>,
    notes: &mut Vec<Note>,
) -> Deployment {
    let name_node = tree.get("name");
    let (name, name_span) = match name_node.and_then(|n| n.as_str().map(|s| (s, n))) {
        Some((s, n)) => {
            let generated = n.as_scalar().and_then(|s| s.tag.as_deref()) == Some("generated");
            (s.to_string(), (!generated).then(|| n.span.clone()))
        }
        None => (variant.clone().unwrap_or_else(|| file_stem(&src.path)), None),
    };
    // A section that is not a map would otherwise be skipped without a word
    // (`model: [a, b]` has no `model.container` to find).
    for section in ["model", "resources", "backend"] {
        if let Some(node) = tree.get(section).filter(|n| n.as_map().is_none() && !n.is_null()) {
            notes.push(Note::error(
                format!("`{section}` should be a map, found a {}; its values are not read", node.kind_name()),
                Some(node.span.clone()),
            ));
        }
    }
    let scalar = |keys: &[&str], notes: &mut Vec<Note>| spanned_scalar(tree.path(keys), keys, notes);
    let container = scalar(&["model", "container"], notes);
    let backend = tree.get("backend");
    let roles = backend.map(|b| read_roles(b, engine.id, notes)).unwrap_or_default();
    let common_env = backend.and_then(|b| b.get("environment")).map(|env| read_env(env, notes)).unwrap_or_default();
    Deployment {
        engine: engine.id,
        name,
        name_span,
        variant,
        roles,
        common_env,
        image: container.as_ref().map(|c| parse_image(&c.value)),
        container,
        model_path: scalar(&["model", "path"], notes),
        precision: scalar(&["model", "precision"], notes),
        gpu_type: scalar(&["resources", "gpu_type"], notes),
        dynamo: tree.get("dynamo").and_then(|d| read_dynamo(d, notes)),
        entry_image: None,
        worker: worker(tree),
    }
}

/// `frontend.type` naming a consumer profile (`dynamo`): srtctl then starts
/// each worker as the consumer's module for the engine (`python -m
/// dynamo.vllm`), not as the engine's own server (`type: vllm` there).
fn worker(tree: &Node) -> Option<super::Worker> {
    let node = tree.path(&["frontend", "type"])?;
    let consumer = crate::profiles::by_id(node.as_str()?).filter(|p| p.server.is_none())?;
    Some(super::Worker { consumer: consumer.id, span: node.span.clone() })
}

fn file_stem(path: &str) -> String {
    std::path::Path::new(path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

fn spanned_scalar(node: Option<&Node>, keys: &[&str], notes: &mut Vec<Note>) -> Option<Spanned<String>> {
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

/// Roles are the keys of `<engine>_config` (`sglang_config`) plus any `<role>_environment`.
fn read_roles(backend: &Node, engine: &str, notes: &mut Vec<Note>) -> Vec<RoleConfig> {
    let mut roles: Vec<RoleConfig> = Vec::new();
    let config_key = format!("{engine}_config");
    if let Some(config) = backend.get(&config_key) {
        match config.as_map() {
            Some(entries) => {
                for entry in entries {
                    let Some(role) = entry.key.as_str() else {
                        continue;
                    };
                    roles.push(RoleConfig {
                        role: role.to_string(),
                        span: Some(entry.key.span.clone()),
                        flags: read_flags(&config_key, role, &entry.value, notes),
                        env: Vec::new(),
                        argv: None,
                        dynamic: None,
                    });
                }
            }
            None if config.is_null() => {}
            None => notes.push(Note::error(
                format!("`backend.{config_key}` should map roles to flags, found a {}", config.kind_name()),
                Some(config.span.clone()),
            )),
        }
    }
    for entry in backend.as_map().into_iter().flatten() {
        let Some(role) = entry.key.as_str().and_then(|k| k.strip_suffix("_environment")) else {
            continue;
        };
        let env = read_env(&entry.value, notes);
        match roles.iter_mut().find(|r| r.role == role) {
            Some(existing) => existing.env = env,
            None => roles.push(RoleConfig {
                role: role.to_string(),
                span: Some(entry.key.span.clone()),
                flags: Vec::new(),
                env,
                argv: None,
                dynamic: None,
            }),
        }
    }
    roles
}

fn read_flags(config_key: &str, role: &str, node: &Node, notes: &mut Vec<Note>) -> Vec<FlagUse> {
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
            Some(FlagUse {
                name: key.replace('_', "-"),
                value: flag_value(role, key, &entry.value, notes),
                key_span: entry.key.span.clone(),
                value_span: entry.value.span.clone(),
                shadowed: entry.shadows.clone(),
                condition: None,
            })
        })
        .collect()
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

fn read_env(node: &Node, notes: &mut Vec<Note>) -> Vec<EnvUse> {
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

fn read_dynamo(node: &Node, notes: &mut Vec<Note>) -> Option<DynamoSpec> {
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

// ---- override-format expansion ------------------------------------------------

/// The variants srtctl would run: `(selector, merged tree)`. A plain recipe is one
/// variant with no selector.
fn expand_variants(src: &SourceText, root: &Node, notes: &mut Vec<Note>) -> Result<Vec<(Option<String>, Node)>, RecipeError> {
    let Some(base) = root.get("base") else {
        return Ok(vec![(None, root.clone())]);
    };
    if base.as_map().is_none() {
        return Err(RecipeError::shape(src, &base.span, "`base` should be a map"));
    }
    let keys: Vec<&Entry> = root.as_map().unwrap_or_default().iter().collect();
    let mut overrides: Vec<(&str, &Entry)> =
        keys.iter().filter_map(|e| e.key.as_str().filter(|k| k.starts_with("override_")).map(|k| (k, *e))).collect();
    let mut zips: Vec<(&str, &Entry)> =
        keys.iter().filter_map(|e| e.key.as_str().filter(|k| k.starts_with("zip_override_")).map(|k| (k, *e))).collect();
    overrides.sort_by_key(|(k, _)| *k);
    zips.sort_by_key(|(k, _)| *k);
    if overrides.is_empty() && zips.is_empty() {
        notes.push(Note::info(
            "override-format recipe without overrides: auditing `base` (srtctl would run nothing)",
            Some(base.span.clone()),
        ));
        return Ok(vec![(Some("base".into()), base.clone())]);
    }
    let base_name = base.get("name").and_then(Node::as_str).unwrap_or("unnamed").to_string();
    // Every variant is a full copy of `base`: a long zip list over a large base
    // would multiply into more values than any real sweep has (and exhaust memory).
    let mut count = overrides.len();
    for (key, entry) in &zips {
        if entry.value.as_map().is_some() {
            count = count.saturating_add(zip_length(src, key, &entry.value)?);
        }
    }
    let size = count.saturating_mul(super::yaml::node_count(base));
    if size > MAX_VARIANT_NODES {
        return Err(RecipeError::shape(
            src,
            &base.span,
            format!("{count} variants of this `base` make {size} values, over the {MAX_VARIANT_NODES} an audit reads; split the sweep"),
        ));
    }
    let mut variants = Vec::new();
    for (key, entry) in overrides {
        let over = &entry.value;
        if over.as_map().is_none() {
            return Err(RecipeError::shape(src, &over.span, format!("`{key}` should be a map")));
        }
        let mut merged = deep_merge(base, over);
        if over.get("name").is_none() {
            set_generated_name(&mut merged, format!("{base_name}_{}", &key["override_".len()..]));
        }
        variants.push((Some(key.to_string()), merged));
    }
    for (key, entry) in zips {
        let zip = &entry.value;
        if zip.as_map().is_none() {
            return Err(RecipeError::shape(src, &zip.span, format!("`{key}` should be a map")));
        }
        let n = zip_length(src, key, zip)?;
        let has_name_list = zip.get("name").is_some_and(|n| n.as_seq().is_some());
        for i in 0..n {
            let mut merged = deep_merge(base, &zip_slice(zip, i));
            if !has_name_list {
                set_generated_name(&mut merged, format!("{base_name}_{}_{i}", &key["zip_override_".len()..]));
            }
            variants.push((Some(format!("{key}[{i}]")), merged));
        }
    }
    Ok(variants)
}

/// Values all variants of one override-format recipe may hold together.
const MAX_VARIANT_NODES: usize = 5_000_000;

/// srtctl's `deep_merge` on spanned nodes: maps merge recursively, anything else
/// replaces, `null` deletes the key.
fn deep_merge(base: &Node, over: &Node) -> Node {
    let (Some(base_entries), Some(over_entries)) = (base.as_map(), over.as_map()) else {
        return over.clone();
    };
    // Slots plus a key index: a large override over a large base stays linear
    // (a scan of the base per override key is quadratic).
    let mut slots: Vec<Option<Entry>> = base_entries.iter().cloned().map(Some).collect();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, e) in base_entries.iter().enumerate() {
        if let Some(k) = e.key.as_str() {
            index.entry(k.to_string()).or_insert(i);
        }
    }
    for o in over_entries {
        let Some(key) = o.key.as_str() else { continue };
        let existing = index.get(key).copied().filter(|&i| slots[i].is_some());
        if o.value.is_null() {
            if let Some(i) = existing {
                slots[i] = None;
            }
            continue;
        }
        match existing.and_then(|i| slots[i].as_mut().map(|e| (i, e))) {
            Some((_, e)) if e.value.as_map().is_some() && o.value.as_map().is_some() => {
                e.value = deep_merge(&e.value, &o.value);
            }
            Some((i, old)) => {
                let mut shadows = vec![(old.key.span.clone(), old.value.span.clone())];
                shadows.extend(old.shadows.iter().cloned());
                slots[i] = Some(Entry { shadows, ..o.clone() });
            }
            None => {
                index.insert(key.to_string(), slots.len());
                slots.push(Some(o.clone()));
            }
        }
    }
    Node { kind: NodeKind::Map(slots.into_iter().flatten().collect()), span: base.span.clone(), alias: None }
}

/// The zip length: every list leaf has length N or 1 (broadcast).
fn zip_length(src: &SourceText, key: &str, zip: &Node) -> Result<usize, RecipeError> {
    fn lengths<'n>(node: &'n Node, out: &mut Vec<(usize, &'n Node)>) {
        for e in node.as_map().unwrap_or_default() {
            match &e.value.kind {
                NodeKind::Seq(items) => out.push((items.len(), &e.value)),
                NodeKind::Map(_) => lengths(&e.value, out),
                NodeKind::Scalar(_) => {}
            }
        }
    }
    let mut found = Vec::new();
    lengths(zip, &mut found);
    if found.is_empty() {
        return Err(RecipeError::shape(src, &zip.span, format!("`{key}` has no list values: nothing to zip")));
    }
    if let Some((_, empty)) = found.iter().find(|(n, _)| *n == 0) {
        return Err(RecipeError::shape(src, &empty.span, format!("`{key}`: an empty list cannot be zipped")));
    }
    let mut n = 1;
    for (len, node) in &found {
        if *len == 1 {
            continue;
        }
        if n != 1 && *len != n {
            return Err(RecipeError::shape(
                src,
                &node.span,
                format!("`{key}`: a list of {len} values where the others have {n}; zip lists need one length (or 1)"),
            ));
        }
        n = *len;
    }
    Ok(n)
}

fn zip_slice(node: &Node, index: usize) -> Node {
    let Some(entries) = node.as_map() else {
        return node.clone();
    };
    let entries = entries
        .iter()
        .map(|e| {
            let value = match &e.value.kind {
                NodeKind::Seq(items) if items.len() == 1 => items[0].clone(),
                NodeKind::Seq(items) => items[index].clone(),
                NodeKind::Map(_) => zip_slice(&e.value, index),
                NodeKind::Scalar(_) => e.value.clone(),
            };
            Entry { key: e.key.clone(), value, merged_at: e.merged_at.clone(), shadows: e.shadows.clone() }
        })
        .collect();
    Node { kind: NodeKind::Map(entries), span: node.span.clone(), alias: None }
}

/// srtctl names unnamed variants itself; the name then has no text in the file,
/// so it is stored as a scalar without a span of its own (the variant's span).
fn set_generated_name(tree: &mut Node, name: String) {
    let span = tree.span.clone();
    if let NodeKind::Map(entries) = &mut tree.kind {
        entries.retain(|e| e.key.as_str() != Some("name"));
        let scalar = |text: String| Node {
            kind: NodeKind::Scalar(super::yaml::Scalar { text, style: super::yaml::ScalarStyle::Plain, tag: Some("generated".into()) }),
            span: span.clone(),
            alias: None,
        };
        entries.push(Entry { key: scalar("name".into()), value: scalar(name), merged_at: None, shadows: Vec::new() });
    }
}
