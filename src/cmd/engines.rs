//! Opening the engine sources named on the command line.

use crate::audit::{AuditOptions, EngineSpec};
use crate::cli::{EngineName, EngineSources};
use crate::profiles::Engine;
use crate::source::{discover_package_root, EngineSource, OpenOptions, SourceError, Tree};

pub(crate) fn open_options(sources: &EngineSources) -> OpenOptions {
    OpenOptions { offline: sources.offline, cache_dir: sources.cache_dir.clone(), quiet: sources.quiet, ..Default::default() }
}

/// The engine a command is about: explicit, else the first whose source is given.
pub(crate) fn pick_engine(engine: Option<EngineName>, sources: &EngineSources) -> Result<(Engine, String, Option<String>), miette::Report> {
    let given = sources.given();
    let engine: Engine = match engine {
        Some(name) => name.profile(),
        None => match given.first() {
            Some((engine, _)) => engine,
            None => return Err(miette::miette!(help = "pass --sglang, --vllm, --atom or --dynamo PATH|URL", "no engine source given")),
        },
    };
    let spec = given.into_iter().find(|(e, _)| e.id == engine.source_id()).map(|(_, s)| s);
    let spec = spec.ok_or_else(|| miette::miette!("--{} is required for --engine {}", engine.source_id(), engine.id))?;
    Ok((engine, spec.spec, spec.root))
}

/// Open the tree of `engine` at `at` and find its package root.
pub(crate) fn open_package_tree(
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

/// Everything `engine` offers at one tree (the `surface` and `diff` commands),
/// through the user's fact cache.
/// Everything `surface` shows, plus the top-level symbols of `symbols_of`.
pub(crate) fn full_surface(
    engine: Engine,
    tree: &dyn Tree,
    package_root: &str,
    ref_name: &str,
    symbols_of: &[String],
) -> crate::surface::EngineSurface {
    let cache = crate::cache::FactCache::default_cache();
    let demand = crate::extract::Demand { symbols_of: symbols_of.to_vec(), ..crate::extract::Demand::full(engine) };
    crate::extract::extract_surface_with(tree, engine, package_root, ref_name, &demand, &cache)
}

/// The engine sources and how to open them, from the flags, else the config file.
/// Refs, rules and the rest are the caller's.
pub(crate) fn audit_sources(sources: &EngineSources, config: &crate::config::Config) -> AuditOptions {
    let mut opts = AuditOptions { open: open_options(sources), ..AuditOptions::default() };
    // `ENGINE_AUDIT_GIT` still overrides it (see source::FetchWith).
    opts.open.fetch = config.file.fetch.unwrap_or_default();
    let given = sources.given();
    for engine in crate::profiles::PROFILES.iter().copied() {
        // A program of another engine's repository (ATOM's router) is read from that engine's source.
        let flag = given.iter().find(|(e, _)| e.id == engine.source_id()).map(|(_, s)| s.clone());
        let spec = flag.clone().map(|s| s.spec).or_else(|| config.engine_source(config.file.source_of(engine.source_id())));
        if let Some(spec) = spec {
            opts.sources.insert(engine.id, EngineSpec { spec, root: flag.and_then(|s| s.root) });
        }
    }
    opts
}
