//! The releases before a target, read only for what a deployment sets that the
//! target does not know (demand-driven: the flags and the env vars asked
//! about, cached per release like every other fact). The checks then say what
//! became of each name instead of guessing at a typo.

use super::engines::Engines;
use super::{DeploymentSurfaces, Planned};
use crate::check;
use crate::extract::{Demand, EnvReads};
use crate::history::ReleaseHistory;
use crate::surface::EngineSurface;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One history per (engine, current release, target): the names asked about.
type Wanted = BTreeMap<(&'static str, Option<String>, String), (BTreeSet<String>, BTreeSet<String>)>;

/// Give each checked deployment that names something its target does not know
/// the release history of its bump.
pub(super) fn attach(
    planned: &[Planned],
    checked: &mut [Option<DeploymentSurfaces>],
    engines: &mut Engines,
    demands: &BTreeMap<&'static str, Demand>,
) {
    let key = |p: &Planned, c: &DeploymentSurfaces| (p.engine.id, c.from.as_ref().map(|s| s.ref_name.clone()), c.to.ref_name.clone());
    let mut wanted = Wanted::new();
    for (p, c) in planned.iter().zip(checked.iter()).filter_map(|(p, c)| Some((p, c.as_ref()?))) {
        let (mut flags, env) = (check::flags::unknown_options(p.dep, c.bump()), check::env::unknown_env(p.engine, p.dep, c.bump()));
        // Configuration-file keys are read with the flags: their history too.
        flags.extend(check::config_keys::unknown_keys(p.dep, c.bump()));
        if flags.is_empty() && env.is_empty() {
            continue;
        }
        let names = wanted.entry(key(p, c)).or_default();
        names.0.extend(flags);
        names.1.extend(env);
    }
    let mut built: BTreeMap<_, Arc<ReleaseHistory>> = BTreeMap::new();
    for (k, (flags, env)) in wanted {
        let Some((p, c)) = planned.iter().zip(checked.iter()).find_map(|(p, c)| c.as_ref().filter(|c| key(p, c) == k).map(|c| (p, c)))
        else {
            continue;
        };
        let Some(handle) = engines.get_mut(p.engine) else { continue };
        let _span = crate::trace::span(|| format!("  history {} {:?} → {}", k.0, k.1, k.2));
        let tags = handle.source.repo().map(|r| r.tags()).unwrap_or_default();
        let refs = releases_between(tags.clone(), c.from.as_deref(), &c.to);
        // Env registries are one file each. Direct reads (`os.environ[...]`)
        // take a scan of every file: with a known current release, whose reads
        // were scanned, only the registries between it and the target are read
        // (a var read directly by a release in between, and by neither end, is
        // not seen); with none, every release before the target is scanned.
        // The scan asks the targets' question, so the per-file results of
        // unchanged files are shared with the releases around it.
        let env_reads = match (env.is_empty(), c.from.is_some(), demands.get(k.0)) {
            (true, _, _) | (false, true, _) => EnvReads::None,
            (false, false, Some(d)) => d.env_reads.clone(),
            (false, false, None) => EnvReads::Names(env.iter().cloned().collect()),
        };
        let demand = Demand { flags: !flags.is_empty(), env: !env.is_empty(), env_reads, without_modules: true, ..Demand::default() };
        handle.prefetch_surfaces(&refs.iter().map(|r| (r.clone(), demand.clone())).collect::<Vec<_>>());
        let mut releases: Vec<Arc<EngineSurface>> = c.from.iter().cloned().collect();
        releases.extend(refs.iter().filter_map(|r| handle.surface(r, &demand).ok()));
        // A var neither end knows may have been read by a release before the
        // current one: every release the repository holds is asked, registry
        // and reads (the targets' question), each cached like any surface.
        let mut env_releases = Vec::new();
        if !env.is_empty() {
            let before = releases_before(tags, c.from.as_deref());
            let question = demands.get(k.0).map_or_else(|| EnvReads::Names(env.iter().cloned().collect()), |d| d.env_reads.clone());
            let older = Demand { env: true, env_reads: question, without_modules: true, ..Demand::default() };
            handle.prefetch_surfaces(&before.iter().map(|r| (r.clone(), older.clone())).collect::<Vec<_>>());
            env_releases.extend(before.iter().filter_map(|r| handle.surface(r, &older).ok()));
            env_releases.extend(releases.iter().cloned());
        }
        built.insert(k, Arc::new(ReleaseHistory { releases, env_releases }));
    }
    for (p, c) in planned.iter().zip(checked.iter_mut()) {
        if let Some(c) = c.as_mut() {
            c.history = built.get(&key(p, c)).cloned();
        }
    }
}

/// The tags before the current release (none when it is not known: then
/// `releases_between` has them all), oldest first, by PEP 440 version.
fn releases_before(tags: Vec<String>, from: Option<&EngineSurface>) -> Vec<String> {
    let Some(start) = from.and_then(check::pins::surface_version) else { return Vec::new() };
    let mut versions: Vec<(pep440_rs::Version, String)> =
        tags.into_iter().filter_map(|t| Some((crate::source::parse_version_ref(&t)?, t))).filter(|(v, _)| *v < start).collect();
    versions.sort();
    versions.into_iter().map(|(_, t)| t).collect()
}

/// The tags strictly between the current release (or the beginning, when it is
/// not known) and the target, oldest first, by PEP 440 version. Tags that are no
/// version are left out.
fn releases_between(tags: Vec<String>, from: Option<&EngineSurface>, to: &EngineSurface) -> Vec<String> {
    let Some(target) = check::pins::surface_version(to) else { return Vec::new() };
    let start = from.and_then(check::pins::surface_version);
    let mut versions: Vec<(pep440_rs::Version, String)> = tags
        .into_iter()
        .filter_map(|t| Some((crate::source::parse_version_ref(&t)?, t)))
        .filter(|(v, _)| *v < target && start.as_ref().is_none_or(|s| v > s))
        .collect();
    versions.sort();
    versions.into_iter().map(|(_, t)| t).collect()
}
