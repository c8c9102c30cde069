//! Opening the engine sources named on the command line.

use crate::cli::{EngineName, EngineSources};
use crate::source::{discover_package_root, DirTree, Engine, EngineRepo, OpenOptions, SourceError, Tree};
use std::path::Path;

/// An engine source as given: a git repository or a plain folder.
pub enum EngineSource {
    Git(EngineRepo),
    Dir(String),
}

impl EngineSource {
    pub fn open(spec: &str, sources: &EngineSources) -> Result<EngineSource, SourceError> {
        let opts = OpenOptions {
            offline: sources.offline,
            cache_dir: sources.cache_dir.clone(),
        };
        let path = Path::new(spec);
        if !crate::source::is_url(spec) && path.is_dir() && !looks_like_git(path) {
            return Ok(EngineSource::Dir(spec.to_string()));
        }
        EngineRepo::open(spec, &opts).map(EngineSource::Git)
    }

    /// The tree at `at` (a plain folder has one tree and ignores the ref).
    pub fn tree(&self, at: Option<&str>) -> Result<(Box<dyn Tree>, String), SourceError> {
        match self {
            EngineSource::Git(repo) => {
                let wanted = at.unwrap_or("HEAD");
                let resolved = if wanted == "HEAD" {
                    crate::source::ResolvedRef {
                        wanted: "HEAD".into(),
                        matched: "HEAD".into(),
                        commit: repo.resolve_head()?,
                    }
                } else {
                    repo.resolve(wanted)?
                };
                Ok((Box::new(repo.tree_at(&resolved)?), wanted.to_string()))
            }
            EngineSource::Dir(path) => Ok((Box::new(DirTree::open(Path::new(path))?), "(directory)".into())),
        }
    }
}

fn looks_like_git(path: &Path) -> bool {
    path.join(".git").exists() || (path.join("HEAD").is_file() && path.join("objects").is_dir())
}

/// The engine a command is about: explicit, else the only source given.
pub fn pick_engine(
    engine: Option<EngineName>,
    sources: &EngineSources,
) -> Result<(Engine, String, Option<String>), miette::Report> {
    let engine = match engine {
        Some(EngineName::Sglang) => Engine::Sglang,
        Some(EngineName::Dynamo) => Engine::Dynamo,
        None if sources.sglang.is_some() => Engine::Sglang,
        None if sources.dynamo.is_some() => Engine::Dynamo,
        None => {
            return Err(miette::miette!(
                help = "pass --sglang PATH|URL or --dynamo PATH|URL",
                "no engine source given"
            ))
        }
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
    let source = EngineSource::open(spec, sources)?;
    let (tree, ref_name) = source.tree(at)?;
    let package_root = discover_package_root(tree.as_ref(), engine, root)?;
    Ok((tree, ref_name, package_root))
}
