//! Assemble one release's [`EngineSurface`] from the individual extractors, reading
//! only what a question needs ([`Demand`]).

use super::consts::classes;
use super::units::{EnvScan, Units, WithWarnings};
use super::{clap_derive, cli_flags, click_options, env_vars, parsed, pins, pydantic_models, symbols, Package};
use crate::cache::FactCache;
use crate::profiles::{Engine, EnvStrategy, FlagsStrategy};
use crate::source::Tree;
use crate::surface::{ClassInfo, EngineSurface, EnvVar, ExtractWarning};
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// What to extract. The module index always comes from the tree listing alone.
#[derive(Debug, Clone, Default)]
pub struct Demand {
    /// Leave the module index empty: a release read only for its flags and env
    /// (the release history) has no use for it, and listing every module is
    /// most of what a warm read of such a release costs.
    pub without_modules: bool,
    /// The CLI parser (files that register flags and what they import).
    pub flags: bool,
    /// The env registry (`environ.py`).
    pub env: bool,
    /// Env vars to look for outside the registry (byte-prefiltered reads).
    pub env_reads: EnvReads,
    /// Modules whose top-level symbols are wanted.
    pub symbols_of: Vec<String>,
    /// For a module of `symbols_of` only ever imported by name (`from m import
    /// a, b`), those names: where it went when it is missing is only claimed for
    /// a module that has one of them, so only modules naming one are read.
    pub names_imported: BTreeMap<String, BTreeSet<String>>,
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

impl Demand {
    /// Everything `engine-audit surface` shows for an engine.
    pub fn full(engine: Engine) -> Demand {
        match &engine.server {
            Some(server) => Demand {
                flags: true,
                env: true,
                env_reads: EnvReads::Prefixes(server.env_prefixes.iter().map(|p| p.to_string()).collect()),
                symbols_of: Vec::new(),
                names_imported: BTreeMap::new(),
                classes: engine.config_class().into_iter().collect(),
                metadata: true,
                without_modules: false,
            },
            None => Demand { metadata: true, ..Demand::default() },
        }
    }
}

/// Extract without a fact cache.
pub fn extract_surface(tree: &dyn Tree, engine: Engine, package_root: &str, ref_name: &str, demand: &Demand) -> EngineSurface {
    extract_surface_with(tree, engine, package_root, ref_name, demand, &FactCache::disabled())
}

/// Extract, reusing facts stored in `cache` whose files are unchanged. The
/// independent parts (flags, env, symbols, classes) run in parallel; the result
/// does not depend on the thread count or on what was cached.
pub fn extract_surface_with(
    tree: &dyn Tree,
    engine: Engine,
    package_root: &str,
    ref_name: &str,
    demand: &Demand,
    cache: &FactCache,
) -> EngineSurface {
    let units = Units { engine: engine.id, tree, root: package_root, cache };
    let pkg = Package::new(tree, package_root);
    let flags_of = || {
        let _span = crate::trace::span(|| format!("  flags {ref_name}"));
        let Some(server) = engine.server.as_ref().filter(|_| demand.flags) else {
            return Default::default();
        };
        match &server.flags {
            FlagsStrategy::ArgparseMethod { module, class, method } => {
                let module = format!("{}.{module}", pkg.name);
                let entry = pkg.module_path(&module);
                units.unit("flags", "", entry.as_deref(), |pkg| {
                    let mut w = Vec::new();
                    let flags = cli_flags::extract_flags_from(pkg, &module, class, method, server.resolution.as_ref(), &mut w);
                    ((flags, cli_flags::parser_facts(pkg, &module, class, method, &mut w)), w)
                })
            }
            FlagsStrategy::ArgparseFunction { module, function, .. } => {
                let module = format!("{}.{module}", pkg.name);
                let entry = pkg.module_path(&module);
                units.unit("flags", "", entry.as_deref(), |pkg| {
                    let mut w = Vec::new();
                    let flags = cli_flags::extract_flags(pkg, &server.flags, server.resolution.as_ref(), &mut w);
                    let facts = crate::surface::ParserFacts {
                        rewrites: cli_flags::parser_rewrites(pkg, &module, "", function),
                        ..cli_flags::parser_facts(pkg, &module, "", function, &mut w)
                    };
                    ((flags, facts), w)
                })
            }
            FlagsStrategy::ArgparseEntry { module, function } => {
                let module = format!("{}.{module}", pkg.name);
                let entry = pkg.module_path(&module);
                units.unit("flags", "", entry.as_deref(), |pkg| {
                    let mut w = Vec::new();
                    let built = cli_flags::extract_entry(pkg, &module, function, &mut w);
                    (built, w)
                })
            }
            FlagsStrategy::ClickCommand { module, function } => {
                let module = format!("{}.{module}", pkg.name);
                let entry = pkg.module_path(&module);
                units.unit("flags", "", entry.as_deref(), |pkg| {
                    let mut w = Vec::new();
                    // Click parses exact option strings: no prefix matching, no rewrites.
                    let facts = crate::surface::ParserFacts { allow_abbrev: crate::surface::Known::Value(false), ..Default::default() };
                    ((click_options::extract_click_options(pkg, &module, function, &mut w), facts), w)
                })
            }
            FlagsStrategy::ClapDerive { file, subcommand, prefilter } => {
                let path = format!("{}/{file}", pkg.root);
                units.unit("flags", subcommand, Some(&path), |pkg| {
                    let mut w = Vec::new();
                    let cmd = clap_derive::ClapCommand { file, subcommand, prefilter: *prefilter };
                    (clap_derive::extract_clap_file(pkg, &cmd, &mut w), w)
                })
            }
        }
    };
    // The configuration file's keys: read with the flags (they answer the same
    // questions of a recipe), only for an engine that has one.
    let config_of = || {
        let Some(profile) = engine.server.as_ref().filter(|_| demand.flags).and_then(|s| s.config_file.as_ref()) else {
            return WithWarnings::default();
        };
        let _span = crate::trace::span(|| format!("  config keys {ref_name}"));
        let module = format!("{}.{}", pkg.name, profile.module);
        let entry = pkg.module_path(&module);
        units.unit("config_keys", profile.class, entry.as_deref(), |pkg| {
            let mut w = Vec::new();
            (pydantic_models::extract_config_keys(pkg, profile, &mut w), w)
        })
    };
    let ((mut modules, metadata), ((symbols, flags), (env, classes))) = rayon::join(
        || {
            rayon::join(
                || if demand.without_modules { Vec::new() } else { module_index(&pkg, ref_name) },
                || metadata_of(&units, demand.metadata),
            )
        },
        || {
            rayon::join(
                || {
                    rayon::join(
                        || symbols_of(&units, &pkg, &demand.symbols_of, &demand.names_imported, ref_name),
                        || rayon::join(flags_of, config_of),
                    )
                },
                || rayon::join(|| env_of(&units, &pkg, engine, demand, ref_name), || classes_of(&units, &pkg, &demand.classes, ref_name)),
            )
        },
    );
    let mut warnings: Vec<ExtractWarning> = Vec::new();
    for (dotted, (syms, w)) in symbols {
        if let Ok(i) = modules.binary_search_by(|m| m.name.as_str().cmp(&dotted)) {
            modules[i].symbols = syms;
        }
        warnings.extend(w);
    }
    let (((flags, parser), w), (config_keys, config_w)) = flags;
    warnings.extend(w);
    warnings.extend(config_w);
    let ((env, env_prefix_rewrites), w) = env;
    warnings.extend(w);
    let (classes, w) = classes;
    warnings.extend(w);
    let ((version, requires), w) = metadata;
    warnings.extend(w);
    warnings.extend(skipped_paths(tree, package_root));
    warnings.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    warnings.dedup();
    EngineSurface {
        engine: engine.id.to_string(),
        ref_name: ref_name.to_string(),
        commit: tree.commit(),
        version,
        package_root: package_root.to_string(),
        flags,
        parser,
        env,
        env_prefix_rewrites,
        modules,
        classes,
        requires,
        config_keys,
        warnings,
        flag_index: Default::default(),
    }
}

/// The package's files the listing left out: a symlinked `environ.py` would
/// otherwise read as "every env var removed" without a word.
fn skipped_paths(tree: &dyn Tree, package_root: &str) -> Vec<ExtractWarning> {
    let prefix = format!("{}/", package_root.trim_end_matches('/'));
    let inside = |path: &&String| package_root.is_empty() || path.starts_with(&prefix);
    let links = tree.symlinks().iter().filter(inside).map(|path| ExtractWarning {
        path: path.clone(),
        message: "a symbolic link, not read (links are never followed): what it names reads as absent".into(),
    });
    let escaping = tree.unsafe_paths().iter().filter(inside).map(|path| ExtractWarning {
        path: path.clone(),
        message: "a path a tree may not hold (absolute, `..`, or not UTF-8), not read".into(),
    });
    links.chain(escaping).collect()
}

/// Every module of the package, from the tree listing.
fn module_index(pkg: &Package, ref_name: &str) -> Vec<crate::surface::Module> {
    let _span = crate::trace::span(|| format!("  module index {ref_name}"));
    pkg.modules()
}

/// The package version and `pyproject.toml` requirements.
fn metadata_of(units: &Units, wanted: bool) -> WithWarnings<(Option<String>, Vec<crate::surface::Requirement>)> {
    if !wanted {
        return Default::default();
    }
    units.unit("metadata", "", None, |pkg| {
        let mut w = Vec::new();
        let version = pins::package_version(pkg.tree, units.root, &mut w);
        let requires = pins::find_pyproject(pkg.tree, units.root).map(|p| pins::requirements(pkg.tree, &p, &mut w)).unwrap_or_default();
        ((version, requires), w)
    })
}

/// Top-level symbols of each wanted module, one cached unit per module. For
/// a wanted module this release does not have, the modules with its leaf name
/// too: where it may have moved is only claimed when their symbols say so.
fn symbols_of(
    units: &Units,
    pkg: &Package,
    wanted: &[String],
    names_imported: &BTreeMap<String, BTreeSet<String>>,
    ref_name: &str,
) -> Vec<(String, WithWarnings<Option<Vec<String>>>)> {
    let _span = crate::trace::span(|| format!("  symbols {ref_name}"));
    let mut wanted: Vec<String> = wanted.to_vec();
    let absent: Vec<&String> = wanted.iter().filter(|m| pkg.module_path(m).is_none() && leaf(m) != "__init__").collect();
    if !absent.is_empty() {
        let leaves: std::collections::BTreeSet<&str> = absent.iter().map(|m| leaf(m)).collect();
        let modules: Vec<String> = pkg.modules().into_iter().map(|m| m.name).collect();
        let mut candidates: Vec<String> = modules.iter().filter(|n| leaves.contains(leaf(n))).cloned().collect();
        // A module split up within its package: the modules of that package,
        // unless it is so large that reading them all would cost more than a
        // claim of a move is worth (`sglang.srt` itself).
        for m in &absent {
            let Some((package, _)) = m.rsplit_once('.') else { continue };
            let prefix = format!("{package}.");
            let in_package: Vec<String> = modules.iter().filter(|n| n.starts_with(&prefix)).cloned().collect();
            if in_package.len() > MAX_PACKAGE_CANDIDATES {
                continue;
            }
            match names_imported.get(*m) {
                Some(names) => candidates.extend(modules_naming(units, &in_package, names)),
                None => candidates.extend(in_package),
            }
        }
        wanted.extend(candidates);
        wanted.sort();
        wanted.dedup();
    }
    wanted
        .par_iter()
        .filter(|dotted| pkg.module_path(dotted).is_some())
        .map(|dotted| {
            let path = pkg.module_path(dotted);
            let syms = units.unit("symbols", dotted, path.as_deref(), |pkg| {
                let mut w = Vec::new();
                (symbols::module_symbols(pkg, dotted, &mut w), w)
            });
            (dotted.clone(), syms)
        })
        .collect()
}

/// The modules of `candidates` whose text names one of `names` (or imports
/// `*`, which may bind any): the only ones that can hold a name imported from
/// a module gone from their package. A cached unit: a warm run reads none.
fn modules_naming(units: &Units, candidates: &[String], names: &BTreeSet<String>) -> Vec<String> {
    let Ok(needles) = AhoCorasick::new(names.iter().map(String::as_str).chain(["import *"])) else {
        return candidates.to_vec();
    };
    let params = format!("{}\0{}", candidates.join(","), names.iter().cloned().collect::<Vec<_>>().join(","));
    let (naming, _) = units.unit("modules-naming", &params, None, |pkg| {
        let naming = candidates
            .iter()
            .filter(|m| {
                let Some(path) = pkg.module_path(m) else { return false };
                // Unreadable: kept, so reading its symbols says why.
                parsed::read_bytes(pkg.tree, &path).map_or(true, |bytes| needles.is_match(&bytes))
            })
            .cloned()
            .collect::<Vec<String>>();
        (naming, Vec::new())
    });
    naming
}

/// The most modules of one package read as the successors of a module absent
/// from it (SGLang's `srt.disaggregation` holds about 60).
const MAX_PACKAGE_CANDIDATES: usize = 150;

fn leaf(dotted: &str) -> &str {
    dotted.rsplit('.').next().unwrap_or(dotted)
}

/// The registry, then reads elsewhere of the wanted names the registry does not
/// declare (reads of declared names add nothing: see `unregistered_vars`).
/// The env vars of a release and its prefix rewrites.
type EnvFacts = (Vec<EnvVar>, Vec<(String, String)>);

fn env_of(units: &Units, pkg: &Package, engine: Engine, demand: &Demand, ref_name: &str) -> WithWarnings<EnvFacts> {
    let _span = crate::trace::span(|| format!("  env {ref_name}"));
    let files = match engine.server.as_ref().map(|s| &s.env) {
        Some(EnvStrategy::TypedRegistry { files }) if demand.env => *files,
        Some(EnvStrategy::GetterDict { file, dict }) if demand.env => return getter_env_of(units, pkg, file, dict, demand),
        Some(EnvStrategy::None) if demand.env => return reads_only_env_of(units, demand),
        _ => return Default::default(),
    };
    let registry_file = env_vars::registry_path(pkg, files);
    let ((registry, instances), mut warnings) = units.unit("env-registry", "", registry_file.as_deref(), |pkg| {
        let mut w = Vec::new();
        (env_vars::extract_env_and_instances(pkg, files, &mut w), w)
    });
    let scan = match &demand.env_reads {
        EnvReads::None => None,
        EnvReads::Names(names) => {
            let unregistered: Vec<String> = names.iter().filter(|n| registry.var(n).is_none()).cloned().collect();
            Some(EnvScan::Names(unregistered))
        }
        EnvReads::Prefixes(prefixes) => Some(EnvScan::Prefixes(prefixes.clone())),
    };
    let reads = match scan {
        Some(scan) => {
            let (reads, w) = units.env_reads(&scan, &instances);
            warnings.extend(w);
            reads
        }
        None => Vec::new(),
    };
    let mut vars = registry.vars.clone();
    vars.extend(env_vars::unregistered_vars(&registry, &reads));
    vars.sort_by(|a, b| a.name.cmp(&b.name));
    ((vars, registry.prefix_rewrites), warnings)
}

fn classes_of(units: &Units, pkg: &Package, wanted: &[(String, String)], ref_name: &str) -> WithWarnings<BTreeMap<String, ClassInfo>> {
    let _span = crate::trace::span(|| format!("  classes {ref_name}"));
    let mut warnings = Vec::new();
    let mut out = BTreeMap::new();
    for (module, class) in wanted {
        let path = pkg.module_path(module);
        let (info, w) =
            units.unit("class", &format!("{module}:{class}"), path.as_deref(), |pkg| (classes::class_info(pkg, module, class), Vec::new()));
        warnings.extend(w);
        if let Some(info) = info {
            out.insert(class.clone(), info);
        }
    }
    (out, warnings)
}

/// No registry (TRT-LLM): every var is found where the package reads it
/// (`os.getenv`, `os.environ.get`, ...), with the default the read gives.
fn reads_only_env_of(units: &Units, demand: &Demand) -> WithWarnings<EnvFacts> {
    let scan = match &demand.env_reads {
        EnvReads::None => return Default::default(),
        EnvReads::Names(names) => EnvScan::Names(names.clone()),
        EnvReads::Prefixes(prefixes) => EnvScan::Prefixes(prefixes.clone()),
    };
    let (reads, warnings) = units.env_reads(&scan, &[]);
    let none = env_vars::EnvRegistry { vars: Vec::new(), prefix_rewrites: Vec::new() };
    let mut vars = env_vars::unregistered_vars(&none, &reads);
    vars.sort_by(|a, b| a.name.cmp(&b.name));
    ((vars, Vec::new()), warnings)
}

/// A getter-dict registry (vLLM's `envs.py`), then reads elsewhere as for a typed one.
fn getter_env_of(units: &Units, pkg: &Package, file: &str, dict: &str, demand: &Demand) -> WithWarnings<EnvFacts> {
    let path = format!("{}/{file}", units.root.trim_end_matches('/'));
    let present = pkg.tree.contains(&path);
    let (vars, mut warnings) = units.unit("env-getters", dict, present.then_some(path.as_str()), |pkg| {
        let mut w = Vec::new();
        (env_vars::getter_dict::extract(pkg, file, dict, &mut w), w)
    });
    let reads = match &demand.env_reads {
        EnvReads::None => Vec::new(),
        EnvReads::Names(names) => {
            let unregistered: Vec<String> = names.iter().filter(|n| !vars.iter().any(|v| &v.name == *n)).cloned().collect();
            let (reads, w) = units.env_reads(&EnvScan::Names(unregistered), &[]);
            warnings.extend(w);
            reads
        }
        EnvReads::Prefixes(prefixes) => {
            let (reads, w) = units.env_reads(&EnvScan::Prefixes(prefixes.clone()), &[]);
            warnings.extend(w);
            reads
        }
    };
    let mut sorted = vars.clone();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let registry = env_vars::EnvRegistry { vars: sorted, prefix_rewrites: Vec::new() };
    let mut all = vars;
    all.extend(env_vars::unregistered_vars(&registry, &reads));
    all.sort_by(|a, b| a.name.cmp(&b.name));
    ((all, Vec::new()), warnings)
}
