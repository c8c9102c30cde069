//! The legacy (v1) layout: `backend.<engine>_config.<mode>` flag maps,
//! `backend.<mode>_environment` and `backend.<mode>_extra_args`.

use super::values::{read_args, read_dynamo_v1, read_env, read_extra_args};
use super::{engine_id, Shared};
use crate::profiles::ArgsForm;
use crate::recipe::yaml::Node;
use crate::recipe::{Deployment, Note, RoleConfig};
use crate::text::span::SourceText;

/// One variant in the legacy layout: one deployment of the backend's engine.
pub(super) fn read(src: &SourceText, tree: &Node, variant: Option<String>, notes: &mut Vec<Note>) -> Vec<Deployment> {
    let shared = Shared::read(src, tree, variant.as_deref(), notes);
    let backend = tree.get("backend");
    let (name, name_node) = backend_type(tree);
    let Some(engine) = engine_id(&name) else {
        notes.push(Note::error(
            format!("`backend.type: {name}` names no engine srt-slurm knows; srtctl rejects the recipe (use one of {})", known_engines()),
            name_node.map(|n| n.span.clone()),
        ));
        return Vec::new();
    };
    let form = crate::profiles::recipe_engine(engine).map_or(ArgsForm::Argv, |e| e.args);
    if let Some(env) = backend.and_then(|b| b.get("environment")) {
        notes.push(Note::error(
            "srtctl has no `backend.environment` (it rejects the recipe): the recipe-wide environment is the top-level `environment:`, a role's is `backend.<mode>_environment`",
            Some(env.span.clone()),
        ));
    }
    let mut dep = shared.deployment(engine, variant, shared.model_container.clone());
    dep.roles = backend.map(|b| read_roles(b, engine, form, notes)).unwrap_or_default();
    dep.common_env = tree.get("environment").map(|env| read_env(env, notes)).unwrap_or_default();
    dep.dynamo = tree.get("dynamo").and_then(|d| read_dynamo_v1(d, notes));
    vec![dep]
}

/// The engine names srtctl takes, for messages.
pub(super) fn known_engines() -> String {
    crate::profiles::RECIPE_ENGINES.iter().map(|e| format!("`{}`", e.id)).collect::<Vec<_>>().join(", ")
}

/// `backend.type` when written; otherwise told by the `<engine>_config` key;
/// otherwise srtctl's default, SGLang.
fn backend_type(tree: &Node) -> (String, Option<&Node>) {
    let Some(backend) = tree.get("backend") else {
        return ("sglang".into(), None);
    };
    if let Some(t) = backend.get("type") {
        return (t.as_str().unwrap_or_default().to_string(), Some(t));
    }
    let from_key = backend
        .as_map()
        .into_iter()
        .flatten()
        .filter_map(|e| e.key.as_str()?.strip_suffix("_config"))
        .find(|engine| engine_id(engine).is_some())
        .unwrap_or("sglang")
        .to_string();
    (from_key, None)
}

/// Roles are the keys of `<engine>_config` (`sglang_config`) plus any `<role>_environment`.
fn read_roles(backend: &Node, engine: &str, form: ArgsForm, notes: &mut Vec<Note>) -> Vec<RoleConfig> {
    let mut roles: Vec<RoleConfig> = Vec::new();
    let config_key = format!("{engine}_config");
    if let Some(config) = backend.get(&config_key) {
        match config.as_map() {
            Some(entries) => {
                for entry in entries {
                    let Some(role) = entry.key.as_str() else {
                        continue;
                    };
                    let (flags, config) = read_args(&config_key, role, &entry.value, form, notes);
                    roles.push(RoleConfig {
                        role: role.to_string(),
                        span: Some(entry.key.span.clone()),
                        flags,
                        env: Vec::new(),
                        argv: None,
                        dynamic: None,
                        config,
                        config_unread: None,
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
        let Some(key) = entry.key.as_str() else { continue };
        let role_of = |suffix: &str| key.strip_suffix(suffix).filter(|m| MODES.contains(m));
        if let Some(role) = role_of("_environment") {
            let env = read_env(&entry.value, notes);
            role_entry(&mut roles, role, entry).env = env;
        } else if let Some(role) = role_of("_extra_args") {
            let argv = read_extra_args(&format!("backend.{key}"), &entry.value, notes);
            role_entry(&mut roles, role, entry).argv = argv;
        }
    }
    roles
}

/// The modes of the legacy layout's per-mode keys.
const MODES: &[&str] = &["prefill", "decode", "aggregated"];

/// The role `role`, added at `entry`'s key when the config map has none.
fn role_entry<'r>(roles: &'r mut Vec<RoleConfig>, role: &str, entry: &crate::recipe::yaml::Entry) -> &'r mut RoleConfig {
    let at = match roles.iter().position(|r| r.role == role) {
        Some(at) => at,
        None => {
            roles.push(RoleConfig {
                role: role.to_string(),
                span: Some(entry.key.span.clone()),
                flags: Vec::new(),
                env: Vec::new(),
                argv: None,
                dynamic: None,
                config: Vec::new(),
                config_unread: None,
            });
            roles.len() - 1
        }
    };
    &mut roles[at]
}
