//! The schema-2 layout (srt-slurm 2.x): `engine:` (a string, or a mapping
//! with `type` and engine-wide knobs, at the top or per role),
//! `roles.{prefill,decode,agg}.{args,env,extra_args,container,engine}`, a
//! top-level `environment:` (applied to every worker after its role's env, so
//! it wins), `dynamo.source`, `identity`, `setup_script`.
//!
//! srtctl normalizes `roles:` into its legacy fields before it validates, and
//! rejects what it cannot map: an unknown top-level or role key, a role other
//! than `prefill`/`decode`/`agg`, an engine it has no backend for, a frontend
//! type it does not know. Each of those is an error note here (EA305) naming
//! the key and the fix; keys srtctl accepts that the audit does not need
//! (`resources`, `benchmark`, `health_check`, `services`, `slurm`, ...) are
//! not errors. Roles of different engines (a vLLM prefill beside a TileRT
//! decode) or images become one deployment per engine and image.

use super::values::{read_args, read_dynamo_v2, read_env, read_extra_args, spanned_scalar};
use super::{engine_id, legacy::known_engines, Shared};
use crate::profiles::ArgsForm;
use crate::recipe::image::{is_container_alias, DynamoRef};
use crate::recipe::yaml::{Node, ScalarType};
use crate::recipe::{Deployment, DynamoSpec, Note, RoleConfig};
use crate::text::span::SourceText;
use crate::text::Spanned;

/// Whether `schema:` names a layout srtctl 2.x loads: absent (the legacy
/// layout, or `roles:` expanded), 1 or 2. Anything else makes the variant
/// unreadable, with an error note.
pub(super) fn schema_is_known(schema: Option<&Node>, variant: Option<&str>, notes: &mut Vec<Note>) -> bool {
    let Some(node) = schema else { return true };
    let value = node.as_scalar().map(|s| (s.text.clone(), s.resolve()));
    // srtctl reads it as an int: a quoted "2" is taken too.
    if matches!(value, Some((ref text, ScalarType::Int | ScalarType::Str)) if text == "1" || text == "2") {
        return true;
    }
    let written = value.map_or_else(|| format!("a {}", node.kind_name()), |(text, _)| format!("`{text}`"));
    let which = variant.map(|v| format!(" (variant `{v}`)")).unwrap_or_default();
    notes.push(Note::error(
        format!("`schema: {written}`{which} is not a recipe schema srt-slurm knows (2, or 1 for the legacy layout); its roles are not read. Write `schema: 2`"),
        Some(node.span.clone()),
    ));
    false
}

/// Whether `schema:` says 2.
pub(super) fn declares(schema: Option<&Node>) -> bool {
    schema.and_then(Node::as_scalar).is_some_and(|s| s.text == "2")
}

/// Top-level keys of a recipe srtctl 2.x takes (its `SrtConfig`, plus the
/// legacy `backend` and `infra` it still normalizes).
const TOP_KEYS: &[&str] = &[
    "name",
    "model",
    "resources",
    "schema",
    "slurm",
    "engine",
    "roles",
    "frontend",
    "dynamo",
    "benchmark",
    "profiling",
    "output",
    "health_check",
    "observability",
    "telemetry",
    "environment",
    "container_mounts",
    "extra_mount",
    "srun_options",
    "sbatch_directives",
    "enable_config_dump",
    "setup_script",
    "host_setup",
    "services",
    "post_eval",
    "identity",
    "reporting",
    "backend",
    "infra",
];

/// The roles srtctl 2.x knows.
const ROLES: &[&str] = &["prefill", "decode", "agg"];

/// Keys of one role (srtctl's `RoleConfig`).
const ROLE_KEYS: &[&str] =
    &["nodes", "workers", "gpus", "env", "args", "extra_args", "engine", "kv_events", "sidecar", "critical", "container", "srun_options"];

/// `frontend.type` values srtctl 2.x knows.
const FRONTENDS: &[&str] =
    &["dynamo", "sglang-router", "vllm-router", "atomesh", "tilert-router", "sglang", "vllm", "trtllm", "trtllm_serve", "atom", "none"];

/// `model` keys.
const MODEL_KEYS: &[&str] = &["path", "container", "precision", "stage_dir"];

/// One variant in the schema-2 layout: a deployment per (engine, image) of its roles.
pub(super) fn read(src: &SourceText, tree: &Node, variant: Option<String>, notes: &mut Vec<Note>) -> Vec<Deployment> {
    unknown_keys(tree, "", TOP_KEYS, "a recipe", notes);
    if let Some(model) = tree.get("model").filter(|m| m.as_map().is_some()) {
        unknown_keys(model, "model.", MODEL_KEYS, "`model`", notes);
    }
    frontend_type(tree, notes);
    legacy_collision(tree, notes);
    dynamic_setup(tree, notes);
    let shared = Shared::read(src, tree, variant.as_deref(), notes);
    let top_engine = tree.get("engine").and_then(|e| engine_of(e, "engine", notes));
    let common_env = tree.get("environment").map(|env| read_env(env, notes)).unwrap_or_default();
    let dynamo =
        tree.get("dynamo").filter(|d| d.as_map().is_some()).and_then(|d| read_dynamo_v2(d, notes)).or_else(|| identity_dynamo(tree));
    let default_container = shared.model_container.clone().or_else(|| identity_image(tree));

    let Some(roles) = tree.get("roles") else {
        notes.push(Note::error(
            "a schema-2 recipe with no `roles:` block starts no worker; add `roles.agg` (or `prefill` and `decode`)",
            Some(tree.span.clone()),
        ));
        return Vec::new();
    };
    let Some(entries) = roles.as_map() else {
        notes.push(Note::error(
            format!("`roles` should map role names to their settings, found a {}", roles.kind_name()),
            Some(roles.span.clone()),
        ));
        return Vec::new();
    };
    let mut groups: Vec<Deployment> = Vec::new();
    for entry in entries {
        let Some(role) = entry.key.as_str() else { continue };
        if !ROLES.contains(&role) {
            notes.push(Note::error(
                format!("`roles.{role}` is not a role srtctl 2.x knows (it rejects the recipe); use {}", ROLES.join(", ")),
                Some(entry.key.span.clone()),
            ));
            continue;
        }
        let spec = &entry.value;
        if spec.is_null() {
            continue;
        }
        if spec.as_map().is_none() {
            notes.push(Note::error(format!("`roles.{role}` should be a map, found a {}", spec.kind_name()), Some(spec.span.clone())));
            continue;
        }
        unknown_keys(spec, &format!("roles.{role}."), ROLE_KEYS, &format!("`roles.{role}`"), notes);
        let own_engine = spec.get("engine").and_then(|e| engine_of(e, &format!("roles.{role}.engine"), notes));
        if own_engine.is_some() && top_engine.is_some() {
            notes.push(Note::error(
                format!("`roles.{role}.engine` beside a top-level `engine:`: srtctl takes one or the other, never both; keep one"),
                spec.get("engine").map(|e| e.span.clone()),
            ));
        }
        // No engine named anywhere (or a mapping of knobs without `type`):
        // srtctl's backend defaults to SGLang, as `srtctl migrate` relies on
        // for a legacy recipe without `backend.type`. A name it rejects was
        // said above and reads nothing.
        let names_one = |node: Option<&Node>| node.is_some_and(|e| e.as_str().is_some() || e.get("type").is_some());
        let rejected = names_one(spec.get("engine")) || top_engine.is_none() && names_one(tree.get("engine"));
        if own_engine.is_none() && rejected {
            continue;
        }
        let engine = own_engine.or(top_engine).unwrap_or("sglang");
        let form = crate::profiles::recipe_engine(engine).map_or(ArgsForm::Argv, |e| e.args);
        let config_key = format!("roles.{role}.args");
        let (flags, config) = spec.get("args").map(|args| read_args(&config_key, role, args, form, notes)).unwrap_or_default();
        let env = spec.get("env").map(|env| read_env(env, notes)).unwrap_or_default();
        let argv = spec.get("extra_args").and_then(|words| {
            if form != ArgsForm::YamlConfig {
                notes.push(Note::error(
                    format!("`roles.{role}.extra_args` is taken only for engines that read their args from a YAML file (TensorRT-LLM); srtctl rejects it for `{engine}`: move the words to `roles.{role}.args`"),
                    Some(words.span.clone()),
                ));
                return None;
            }
            read_extra_args(&format!("roles.{role}.extra_args"), words, notes)
        });
        let container = spanned_scalar(spec.get("container"), &["roles", role, "container"], notes).or_else(|| default_container.clone());
        let config = RoleConfig {
            role: role.to_string(),
            span: Some(entry.key.span.clone()),
            flags,
            env,
            argv,
            dynamic: None,
            config,
            config_unread: None,
        };
        let same =
            |d: &&mut Deployment| d.engine == engine && d.container.as_ref().map(|c| &c.value) == container.as_ref().map(|c| &c.value);
        match groups.iter_mut().find(same) {
            Some(dep) => dep.roles.push(config),
            None => {
                let mut dep = shared.deployment(engine, variant.clone(), container);
                dep.roles.push(config);
                dep.common_env = common_env.clone();
                dep.dynamo = dynamo.clone();
                groups.push(dep);
            }
        }
    }
    groups
}

/// The engine an `engine:` value names: a string, or a mapping's `type`.
/// `None` (with an error note) for a name srtctl has no backend for; `None`
/// silently for a mapping without `type` (its knobs only: a role or the
/// merged variant names the type, else the caller says none does).
fn engine_of(node: &Node, at: &str, notes: &mut Vec<Note>) -> Option<&'static str> {
    let name_node = match node.as_map() {
        Some(_) => node.get("type")?,
        None => node,
    };
    let Some(name) = name_node.as_str() else {
        notes.push(Note::error(
            format!("`{at}` should be an engine name or a mapping with `type`, found a {}", name_node.kind_name()),
            Some(name_node.span.clone()),
        ));
        return None;
    };
    let found = engine_id(name);
    if found.is_none() {
        notes.push(Note::error(
            format!("`{at}: {name}` names no engine srt-slurm knows (srtctl rejects the recipe); use one of {}", known_engines()),
            Some(name_node.span.clone()),
        ));
    }
    found
}

/// Keys of `node` that srtctl would reject.
fn unknown_keys(node: &Node, prefix: &str, known: &[&str], what: &str, notes: &mut Vec<Note>) {
    for entry in node.as_map().into_iter().flatten() {
        let Some(key) = entry.key.as_str() else { continue };
        if !known.contains(&key) {
            notes.push(Note::error(
                format!("`{prefix}{key}` is not a key of {what} srtctl 2.x takes (it rejects the recipe); remove it or fix its spelling"),
                Some(entry.key.span.clone()),
            ));
        }
    }
}

/// `frontend.type` that srtctl does not know.
fn frontend_type(tree: &Node, notes: &mut Vec<Note>) {
    let Some(node) = tree.path(&["frontend", "type"]) else { return };
    match node.as_str() {
        Some(t) if FRONTENDS.contains(&t) => {}
        _ => notes.push(Note::error(
            format!("`frontend.type` is not a frontend srtctl 2.x knows; use one of {}", FRONTENDS.join(", ")),
            Some(node.span.clone()),
        )),
    }
}

/// `roles:` beside the legacy fields it expands into: srtctl rejects both at once.
fn legacy_collision(tree: &Node, notes: &mut Vec<Note>) {
    let Some(backend) = tree.get("backend").filter(|_| tree.get("roles").is_some()) else { return };
    for entry in backend.as_map().into_iter().flatten() {
        let Some(key) = entry.key.as_str() else { continue };
        let per_mode = ["prefill_", "decode_", "aggregated_"].iter().any(|m| key.starts_with(m));
        if per_mode || key.ends_with("_config") && key != "kv_events_config" {
            notes.push(Note::error(
                format!("`backend.{key}` beside `roles:`: srtctl rejects a recipe that sets both; move it under `roles.<role>`"),
                Some(entry.key.span.clone()),
            ));
        }
    }
}

/// What runs before the workers and may change their environment: said, not read.
fn dynamic_setup(tree: &Node, notes: &mut Vec<Note>) {
    if let Some(script) = tree.get("setup_script").filter(|n| !n.is_null()) {
        let name = script.as_str().unwrap_or("?");
        notes.push(Note::warning(
            format!("`setup_script: {name}` runs before the workers start and may set env vars or install packages: dynamic, not read"),
            Some(script.span.clone()),
        ));
    }
    if let Some(mounts) = tree.get("container_mounts").filter(|n| n.as_map().is_some_and(|m| !m.is_empty())) {
        notes.push(Note::warning(
            "`container_mounts` may replace files the engine reads (its code, configs): dynamic, not read",
            Some(mounts.span.clone()),
        ));
    }
}

/// `identity.container.image`: the image when `model.container` names none.
fn identity_image(tree: &Node) -> Option<Spanned<String>> {
    let node = tree.path(&["identity", "container", "image"])?;
    let text = node.as_str()?;
    (!text.is_empty() && !is_container_alias(text)).then(|| Spanned { value: text.to_string(), span: node.span.clone() })
}

/// `identity.frameworks.dynamo`: the Dynamo version when `dynamo.source` names none.
fn identity_dynamo(tree: &Node) -> Option<DynamoSpec> {
    let node = tree.path(&["identity", "frameworks", "dynamo"])?;
    let text = node.as_str()?.to_string();
    Some(DynamoSpec {
        field: "identity.frameworks.dynamo".into(),
        reference: DynamoRef::from_field("version", &text),
        raw: Spanned { value: text, span: node.span.clone() },
        install: None,
        span: node.span.clone(),
    })
}
