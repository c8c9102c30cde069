//! `engine-audit show RECIPE...`: what the audit reads from each recipe, per
//! deployment and role: every launch, flag and env var with its value, where it
//! is written and the path condition it depends on, and what could not be read.
//!
//! Script flags are bound here without an engine (a flag takes the words after
//! it); the audit binds them with the engine's switches.

use super::output::{emit, emit_json};
use crate::cli::{ShowArgs, ShowFormat};
use crate::recipe::{collect, ArgToken, Deployment, EnvUse, FlagUse, FlagValue, RecipeFile, RecipeKind, RoleConfig, Span};
use serde::Serialize;
use std::fmt::Write;
use std::process::ExitCode;

#[derive(Serialize)]
struct ShownFile<'f> {
    path: &'f str,
    kind: &'f RecipeKind,
    deployments: Vec<ShownDeployment<'f>>,
    notes: Vec<ShownNote>,
}

#[derive(Serialize)]
struct ShownDeployment<'f> {
    name: &'f str,
    engine: &'f str,
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'f str>,
    common_env: Vec<ShownEnv>,
    roles: Vec<ShownRole>,
}

/// One role: for scripts, one command line that reaches the launch on some path.
#[derive(Serialize)]
struct ShownRole {
    role: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    /// Why the command line cannot be fully known.
    #[serde(skip_serializing_if = "Option::is_none")]
    dynamic: Option<String>,
    /// The words after the launcher, for scripts.
    #[serde(skip_serializing_if = "Option::is_none")]
    argv: Option<Vec<ShownWord>>,
    flags: Vec<ShownFlag>,
    /// The keys of the engine's YAML configuration file the role writes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    config: Vec<ShownConfig>,
    env: Vec<ShownEnv>,
    /// Words where a flag was expected whose text is not known.
    unread: Vec<ShownWord>,
}

#[derive(Serialize, Clone, PartialEq)]
struct ShownConfig {
    key: String,
    value: crate::recipe::ConfigValue,
    at: String,
}

#[derive(Serialize, Clone, PartialEq)]
struct ShownWord {
    /// `None`: not known (see `unread`).
    value: Option<String>,
    text: String,
    at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unread: Option<String>,
}

#[derive(Serialize, Clone, PartialEq)]
struct ShownFlag {
    name: String,
    value: FlagValue,
    at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<String>,
}

#[derive(Serialize, Clone, PartialEq)]
struct ShownEnv {
    name: String,
    /// `None`: not known (its text is in `written`).
    value: Option<String>,
    written: Option<String>,
    at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<String>,
}

#[derive(Serialize)]
struct ShownNote {
    level: crate::recipe::NoteLevel,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
}

pub(crate) fn run(args: ShowArgs) -> miette::Result<ExitCode> {
    let (files, errors) = collect(&args.paths);
    let shown: Vec<ShownFile> = files.iter().map(show_file).collect();
    match args.format {
        ShowFormat::Json => {
            #[derive(Serialize)]
            struct Output<'f> {
                files: Vec<ShownFile<'f>>,
                errors: Vec<String>,
            }
            emit_json(&Output { files: shown, errors: errors.iter().map(|e| e.to_string()).collect() })?;
        }
        ShowFormat::Text => {
            let mut out = String::new();
            for file in &shown {
                text(file, &mut out);
            }
            for e in &errors {
                let _ = writeln!(out, "error: {e}");
            }
            emit(&out);
        }
    }
    Ok(if errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

fn at(span: &Span) -> String {
    format!("{}:{}:{}", span.path, span.line, span.column)
}

fn show_file(file: &RecipeFile) -> ShownFile<'_> {
    ShownFile {
        path: &file.path,
        kind: &file.kind,
        deployments: file.deployments.iter().map(show_deployment).collect(),
        notes: file.notes.iter().map(|n| ShownNote { level: n.level, message: n.message.clone(), at: n.span.as_ref().map(at) }).collect(),
    }
}

fn show_deployment(dep: &Deployment) -> ShownDeployment<'_> {
    ShownDeployment {
        name: &dep.name,
        engine: dep.engine,
        variant: dep.variant.as_deref(),
        common_env: dep.common_env.iter().map(show_env).collect(),
        roles: dep.roles.iter().map(show_role).collect(),
    }
}

fn show_role(role: &RoleConfig) -> ShownRole {
    // Words of a command line (a script's, or srt-slurm's `extra_args`) and
    // the flags the recipe's structure names (its `args`), all of them.
    let binding = role.bound(|_| false);
    let unread = binding.unbound.iter().filter(|t| t.value.is_dynamic()).map(show_word).collect();
    let flags = binding.flags;
    ShownRole {
        role: role.role.clone(),
        at: role.span.as_ref().map(at),
        dynamic: role.dynamic.clone(),
        argv: role.argv.as_ref().map(|a| a.iter().map(show_word).collect()),
        flags: flags.iter().map(show_flag).collect(),
        config: role.config.iter().map(|c| ShownConfig { key: c.path.clone(), value: c.value.clone(), at: at(&c.key_span) }).collect(),
        env: role.env.iter().map(show_env).collect(),
        unread,
    }
}

fn show_word(t: &ArgToken) -> ShownWord {
    ShownWord {
        value: t.value.value().cloned(),
        text: t.raw.clone(),
        at: at(&t.span),
        condition: t.condition.clone(),
        unread: t.unread.clone(),
    }
}

fn show_flag(f: &FlagUse) -> ShownFlag {
    ShownFlag { name: f.name.clone(), value: f.value.clone(), at: at(&f.key_span), condition: f.condition.clone() }
}

fn show_env(e: &EnvUse) -> ShownEnv {
    let (value, written) = match e.value.value() {
        Some(v) => (Some(v.clone()), None),
        None => (
            None,
            Some(match &e.value {
                crate::surface::Known::Dynamic { dynamic } => dynamic.clone(),
                crate::surface::Known::Value(v) => v.clone(),
            }),
        ),
    };
    ShownEnv { name: e.name.clone(), value, written, at: at(&e.name_span), condition: e.condition.clone() }
}

fn value_text(value: &FlagValue) -> String {
    match value {
        FlagValue::Switch { on: true } => String::new(),
        FlagValue::Switch { on: false } => " (off: not passed)".into(),
        FlagValue::Scalar { text, .. } => format!(" {text}"),
        FlagValue::List { items } => items.iter().map(|i| format!(" {}", i.value)).collect(),
        FlagValue::Null => " (null: not passed)".into(),
        FlagValue::Dynamic { text } => format!(" {text} (value not known)"),
        FlagValue::Invalid { reason } => format!(" (invalid: {reason})"),
    }
}

/// Per deployment, the flags and env vars of all its roles once each (a script's
/// paths share most of them), each with its condition.
fn text(file: &ShownFile, out: &mut String) {
    let kind = match file.kind {
        RecipeKind::SrtSlurm => "srt-slurm recipe".to_string(),
        RecipeKind::MasterConfig => "master config".to_string(),
        RecipeKind::LaunchScript => "launch script".to_string(),
        RecipeKind::AmdModels => "AMD multi-node model table".to_string(),
        RecipeKind::Other { backend: Some(b) } => format!("recipe for the {b} backend, not audited"),
        RecipeKind::Other { backend: None } => "not a recipe".to_string(),
    };
    let _ = writeln!(out, "{} ({kind})", file.path);
    let when = |c: &Option<String>| c.as_ref().map(|c| format!("  [when {c}]")).unwrap_or_default();
    for dep in &file.deployments {
        let variant = dep.variant.map(|v| format!(" [{v}]")).unwrap_or_default();
        let paths = if dep.roles.len() > 1 && file.kind == &RecipeKind::LaunchScript {
            format!(", {} distinct command lines", dep.roles.len())
        } else {
            String::new()
        };
        let _ = writeln!(out, "  {}{variant} ({}{paths})", dep.name, dep.engine);
        for e in &dep.common_env {
            let _ = writeln!(out, "    env  {}={}  {}{}", e.name, env_value(e), e.at, when(&e.condition));
        }
        let mut seen_roles: Vec<&str> = Vec::new();
        let mut flags: Vec<(&str, &ShownFlag)> = Vec::new();
        let mut config: Vec<(&str, &ShownConfig)> = Vec::new();
        let mut env: Vec<&ShownEnv> = Vec::new();
        let mut unread: Vec<&ShownWord> = Vec::new();
        for role in &dep.roles {
            if !seen_roles.contains(&role.role.as_str()) {
                seen_roles.push(&role.role);
            }
            if let Some(why) = &role.dynamic {
                let _ = writeln!(out, "    {}: not fully read: {why}", role.role);
            }
            for f in &role.flags {
                if !flags.iter().any(|(r, g)| *r == role.role && *g == f) {
                    flags.push((&role.role, f));
                }
            }
            for c in &role.config {
                if !config.iter().any(|(r, g)| *r == role.role && *g == c) {
                    config.push((&role.role, c));
                }
            }
            for e in &role.env {
                if !env.contains(&e) {
                    env.push(e);
                }
            }
            for u in &role.unread {
                if !unread.contains(&u) {
                    unread.push(u);
                }
            }
        }
        for (role, f) in flags {
            let scope = if seen_roles.len() > 1 { format!("{role}: ") } else { String::new() };
            let dashes = if f.name.starts_with('-') { "" } else { "--" };
            let _ = writeln!(out, "    {scope}{dashes}{}{}  {}{}", f.name, value_text(&f.value), f.at, when(&f.condition));
        }
        for (role, c) in config {
            let scope = if seen_roles.len() > 1 { format!("{role}: ") } else { String::new() };
            let value = match &c.value {
                crate::recipe::ConfigValue::Scalar { text, .. } => format!(": {text}"),
                crate::recipe::ConfigValue::Null => ": null".into(),
                crate::recipe::ConfigValue::Map => ":".into(),
                crate::recipe::ConfigValue::List { len } => format!(": a list of {len}"),
                crate::recipe::ConfigValue::Dynamic { text } => format!(": {text} (not known)"),
            };
            let _ = writeln!(out, "    {scope}config {}{value}  {}", c.key, c.at);
        }
        for e in env {
            let _ = writeln!(out, "    env  {}={}  {}{}", e.name, env_value(e), e.at, when(&e.condition));
        }
        for u in unread {
            let why = u.unread.as_deref().unwrap_or("its value is not known");
            let _ = writeln!(out, "    not read: `{}` at {}: {why}{}", u.text, u.at, when(&u.condition));
        }
    }
    for n in &file.notes {
        let place = n.at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default();
        let _ = writeln!(out, "  note: {place}{}", n.message);
    }
}

fn env_value(e: &ShownEnv) -> String {
    match (&e.value, &e.written) {
        (Some(v), _) => v.clone(),
        (None, Some(w)) => format!("{w} (value not known)"),
        (None, None) => "(value not known)".into(),
    }
}
