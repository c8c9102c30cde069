//! Opening the engine sources named on the command line.

use crate::cli::{EngineName, EngineSources};
use crate::source::{discover_package_root, Engine, EngineSource, OpenOptions, SourceError, Tree};

pub fn open_options(sources: &EngineSources) -> OpenOptions {
    OpenOptions { offline: sources.offline, cache_dir: sources.cache_dir.clone() }
}

/// The engine a command is about: explicit, else the only source given.
pub fn pick_engine(engine: Option<EngineName>, sources: &EngineSources) -> Result<(Engine, String, Option<String>), miette::Report> {
    let engine = match engine {
        Some(EngineName::Sglang) => Engine::Sglang,
        Some(EngineName::Dynamo) => Engine::Dynamo,
        None if sources.sglang.is_some() => Engine::Sglang,
        None if sources.dynamo.is_some() => Engine::Dynamo,
        None => return Err(miette::miette!(help = "pass --sglang PATH|URL or --dynamo PATH|URL", "no engine source given")),
    };
    let (spec, root) = match engine {
        Engine::Sglang => (sources.sglang.clone(), sources.sglang_root.clone()),
        Engine::Dynamo => (sources.dynamo.clone(), sources.dynamo_root.clone()),
    };
    let spec = spec.ok_or_else(|| miette::miette!("--{} is required for --engine {}", engine.name(), engine.name()))?;
    Ok((engine, spec, root))
}

/// Open the tree of `engine` at `at` and find its package root.
pub fn open_package_tree(
    engine: Engine,
    spec: &str,
    root: Option<&str>,
    at: Option<&str>,
    sources: &EngineSources,
) -> Result<(Box<dyn Tree>, String, String), SourceError> {
    let source = EngineSource::open(spec, &open_options(sources))?;
    let (tree, ref_name) = source.tree(at)?;
    let package_root = discover_package_root(tree.as_ref(), engine, root)?;
    Ok((tree, ref_name, package_root))
}

/// The engine sources and how to open them, from the flags, else the config file.
/// Refs, rules and the rest are the caller's.
pub fn audit_sources(sources: &EngineSources, config: &crate::config::Config) -> crate::audit::AuditOptions {
    crate::audit::AuditOptions {
        sglang: sources.sglang.clone().or_else(|| config.engine_source(config.file.sglang.as_ref())),
        dynamo: sources.dynamo.clone().or_else(|| config.engine_source(config.file.dynamo.as_ref())),
        sglang_root: sources.sglang_root.clone(),
        dynamo_root: sources.dynamo_root.clone(),
        open: open_options(sources),
        ..crate::audit::AuditOptions::default()
    }
}
