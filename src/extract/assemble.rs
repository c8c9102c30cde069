//! Assemble one release's [`EngineSurface`] from the individual extractors, reading
//! only what a question needs ([`Demand`]).

use super::{classes, cli_flags, env_vars, pins, symbols, Package};
use crate::source::{Engine, Tree};
use crate::surface::{EngineSurface, ExtractWarning};

/// What to extract. The module index always comes from the tree listing alone.
#[derive(Debug, Clone, Default)]
pub struct Demand {
    /// The CLI parser (files that register flags and what they import).
    pub flags: bool,
    /// The env registry (`environ.py`).
    pub env: bool,
    /// Env vars to look for outside the registry (byte-prefiltered reads).
    pub env_reads: EnvReads,
    /// Modules whose top-level symbols are wanted.
    pub symbols_of: Vec<String>,
    /// Classes whose members are wanted: (module, class).
    pub classes: Vec<(String, String)>,
    /// `pyproject.toml` requirements and the package version.
    pub metadata: bool,
}

#[derive(Debug, Clone, Default)]
pub enum EnvReads {
    #[default]
    None,
    /// Only these names (an audit asks about the vars its recipes set).
    Names(Vec<String>),
    /// Every read of a var with one of these prefixes (the full `surface` listing).
    Prefixes(Vec<String>),
}

/// The classes every consumer check asks about.
pub fn server_args_class() -> (String, String) {
    ("sglang.srt.server_args".into(), "ServerArgs".into())
}

impl Demand {
    /// Everything `engine-audit surface` shows for an engine.
    pub fn full(engine: Engine) -> Demand {
        match engine {
            Engine::Sglang => Demand {
                flags: true,
                env: true,
                env_reads: EnvReads::Prefixes(vec!["SGLANG_".into(), "SGL_".into()]),
                symbols_of: Vec::new(),
                classes: vec![server_args_class()],
                metadata: true,
            },
            Engine::Dynamo => Demand { metadata: true, ..Demand::default() },
        }
    }
}

pub fn extract_surface(tree: &dyn Tree, engine: Engine, package_root: &str, ref_name: &str, demand: &Demand) -> EngineSurface {
    let pkg = Package::new(tree, package_root);
    let mut warnings: Vec<ExtractWarning> = Vec::new();
    let span = crate::trace::span(|| format!("  symbols {ref_name}"));
    let mut modules = pkg.modules();
    for dotted in &demand.symbols_of {
        if let Ok(i) = modules.binary_search_by(|m| m.name.as_str().cmp(dotted)) {
            modules[i].symbols = symbols::module_symbols(&pkg, dotted, &mut warnings);
        }
    }
    let span = crate::trace::span(|| format!("  flags {ref_name}"));
    let flags = if demand.flags { cli_flags::extract_flags(&pkg, &mut warnings) } else { Vec::new() };
    drop(span);
    let span = crate::trace::span(|| format!("  env {ref_name}"));
    let (mut env, env_prefix_rewrites) = if demand.env {
        let registry = env_vars::extract_env(&pkg, &mut warnings);
        let reads = match &demand.env_reads {
            EnvReads::None => Vec::new(),
            EnvReads::Names(names) => env_vars::find_env_reads(&pkg, names, &mut warnings),
            EnvReads::Prefixes(prefixes) => {
                let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
                env_vars::find_prefixed_env_reads(&pkg, &prefixes, &mut warnings)
            }
        };
        let mut vars = registry.vars.clone();
        vars.extend(env_vars::unregistered_vars(&registry, &reads));
        (vars, registry.prefix_rewrites)
    } else {
        (Vec::new(), Vec::new())
    };
    env.sort_by(|a, b| a.name.cmp(&b.name));
    drop(span);
    let span = crate::trace::span(|| format!("  classes+metadata {ref_name}"));
    let classes = demand
        .classes
        .iter()
        .filter_map(|(module, class)| classes::class_info(&pkg, module, class).map(|c| (class.clone(), c)))
        .collect();
    let (version, requires) = if demand.metadata {
        let version = pins::package_version(tree, package_root, &mut warnings);
        let requires = pins::find_pyproject(tree, package_root)
            .map(|p| pins::requirements(tree, &p, &mut warnings))
            .unwrap_or_default();
        (version, requires)
    } else {
        (None, Vec::new())
    };
    drop(span);
    warnings.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    warnings.dedup();
    EngineSurface {
        engine: engine.name().to_string(),
        ref_name: ref_name.to_string(),
        commit: tree.commit(),
        version,
        package_root: package_root.to_string(),
        flags,
        env,
        env_prefix_rewrites,
        modules,
        classes,
        requires,
        warnings,
    }
}
