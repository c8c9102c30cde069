//! The engines an audit reads: opened once; each ref's tree listed once and its
//! surface extracted once, with facts reused from the fact cache across runs.

use super::AuditOptions;
use crate::cache::{listing_fingerprint, FactCache};
use crate::extract::consumer::{consumer_uses_of, ConsumerUse};
use crate::extract::units::Units;
use crate::extract::worker_flags::{worker_flags, WorkerFlags};
use crate::extract::{extract_surface_with, Demand, Package};
use crate::profiles::{ConsumerLink, Engine};
use crate::rules::EvidenceMemo;
use crate::source::{discover_package_root, EngineSource, OpenOptions, Tree};
use crate::surface::{EngineSurface, ExtractWarning};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What to extract at a ref that is only ever bumped from: the target's demand,
/// except symbols, which are needed there only to relocate a module missing at a
/// target (see `check::consumer`). Missing is decided from the target listings.
pub(super) fn source_demand(handle: &mut EngineHandle, target_demand: &Demand, targets: &BTreeSet<String>) -> Demand {
    let trees: Vec<Arc<RefTree>> = targets.iter().filter_map(|t| handle.tree(t).ok()).collect();
    let packages: Vec<Package> = trees.iter().map(|t| Package::new(t.tree.as_ref(), &t.package_root)).collect();
    let missing_somewhere = |dotted: &String| trees.len() < targets.len() || packages.iter().any(|p| p.module_path(dotted).is_none());
    Demand { symbols_of: target_demand.symbols_of.iter().filter(|m| missing_somewhere(m)).cloned().collect(), ..target_demand.clone() }
}

/// The engine sources an audit reads, opened, by profile id. Opening (libgit2's
/// set-up, the repositories) does not depend on the recipes: callers open them
/// while the recipes and rules load.
pub(crate) struct Engines {
    pub(super) handles: BTreeMap<&'static str, EngineHandle>,
}

impl Engines {
    pub(crate) fn open(opts: &AuditOptions) -> Result<Engines, miette::Report> {
        // Refs given as flags win over every recipe's (see `deployment_refs`):
        // their trees, and what consumers import, are read now, beside the
        // recipes. Results and errors are kept in the handle for when the audit asks.
        let opened: Vec<Result<(&'static str, EngineHandle), miette::Report>> = opts
            .sources
            .par_iter()
            .map(|(id, spec)| {
                let engine = crate::profiles::known(id).ok_or_else(|| miette::miette!("no engine profile `{id}`"))?;
                let _span = crate::trace::span(|| format!("audit: open {id}"));
                let mut handle = EngineHandle::open(engine, &spec.spec, spec.root.clone(), &opts.open)?;
                let refs = opts.refs_of(engine);
                // A ref the user named that names nothing is a usage error, not a
                // finding: no recipe could be audited as asked.
                for (flag, wanted) in [(&refs.to_flag, &refs.to), (&refs.from_flag, &refs.from)] {
                    if let Some(wanted) = wanted {
                        if let Err(why) = handle.tree(wanted) {
                            return Err(miette::miette!(
                                help = "name a tag, branch or commit of that repository (`git tag` lists the tags)",
                                "{} {flag} {wanted}: {why}",
                                engine.display
                            ));
                        }
                    }
                }
                match engine.server {
                    Some(_) => refs.to.iter().chain(&refs.from).for_each(|w| drop(handle.tree(w))),
                    None => {
                        // Only the links whose engine is audited: reading what Dynamo's
                        // vLLM worker uses is wasted on an SGLang-only audit (and the
                        // other way round), and this runs before the engines' surfaces.
                        if let Some(to) = &refs.to {
                            crate::profiles::links_of(engine.id)
                                .filter(|link| opts.sources.iter().any(|(id, _)| *id == link.engine))
                                .for_each(|link| drop(handle.consumer_uses(to, link)));
                        }
                    }
                }
                Ok((*id, handle))
            })
            .collect();
        let mut handles = BTreeMap::new();
        for result in opened {
            let (id, handle) = result?;
            handles.insert(id, handle);
        }
        Ok(Engines { handles })
    }

    /// The opened source of `engine`, if it was given.
    pub(crate) fn get(&self, engine: Engine) -> Option<&EngineHandle> {
        self.handles.get(engine.id)
    }

    pub(crate) fn get_mut(&mut self, engine: Engine) -> Option<&mut EngineHandle> {
        self.handles.get_mut(engine.id)
    }

    /// At the end of a process: bound the fact cache, and leave the trees and
    /// surfaces to the exit instead of freeing them piece by piece.
    pub(crate) fn finish(self) {
        for handle in self.handles.into_values() {
            handle.finish();
        }
    }
}

/// One ref of an engine: its file tree and where the package sits in it.
pub(crate) struct RefTree {
    pub tree: Box<dyn Tree>,
    pub package_root: String,
    pub ref_name: String,
}

type Uses = (Vec<ConsumerUse>, Vec<ExtractWarning>);

pub(crate) struct EngineHandle {
    pub engine: Engine,
    pub source: EngineSource,
    root: Option<String>,
    cache: FactCache,
    trees: BTreeMap<String, Result<Arc<RefTree>, String>>,
    surfaces: BTreeMap<String, Result<Arc<EngineSurface>, String>>,
    uses: BTreeMap<(String, &'static str), Result<Uses, String>>,
}

impl EngineHandle {
    pub(crate) fn open(
        engine: Engine,
        spec: &str,
        root: Option<String>,
        opts: &OpenOptions,
    ) -> Result<EngineHandle, crate::source::SourceError> {
        Ok(EngineHandle {
            engine,
            source: EngineSource::open(spec, opts)?,
            root,
            cache: FactCache::default_cache(),
            trees: BTreeMap::new(),
            surfaces: BTreeMap::new(),
            uses: BTreeMap::new(),
        })
    }

    /// The tree at `wanted`. Errors are kept as text so every deployment that
    /// needs the ref reports the same problem.
    pub(crate) fn tree(&mut self, wanted: &str) -> Result<Arc<RefTree>, String> {
        if !self.trees.contains_key(wanted) {
            let _span = crate::trace::span(|| format!("{} tree {wanted}", self.engine.id));
            let result = (|| {
                let (tree, ref_name) = self.source.tree_with(Some(wanted), &self.cache).map_err(|e| e.to_string())?;
                let package_root = discover_package_root(tree.as_ref(), self.engine, self.root.as_deref()).map_err(|e| e.to_string())?;
                Ok(Arc::new(RefTree { tree, package_root, ref_name }))
            })();
            self.trees.insert(wanted.to_string(), result);
        }
        self.trees[wanted].clone()
    }

    /// Extract the surfaces of several refs at once, in parallel (each is
    /// independent); later [`surface`](Self::surface) calls find them ready.
    pub(crate) fn prefetch_surfaces(&mut self, wanted: &[(String, Demand)]) {
        let missing: Vec<&(String, Demand)> = wanted.iter().filter(|(w, _)| !self.surfaces.contains_key(w)).collect();
        type Todo<'d> = (String, &'d Demand, Result<Arc<RefTree>, String>);
        let todo: Vec<Todo> = missing.into_iter().map(|(w, d)| (w.clone(), d, self.tree(w))).collect();
        let (engine, cache) = (self.engine, &self.cache);
        let done: Vec<(String, Result<Arc<EngineSurface>, String>)> = todo
            .into_par_iter()
            .map(|(w, demand, tree)| {
                let _span = crate::trace::span(|| format!("{} surface {w}", engine.id));
                let surface =
                    tree.map(|t| Arc::new(extract_surface_with(t.tree.as_ref(), engine, &t.package_root, &t.ref_name, demand, cache)));
                (w, surface)
            })
            .collect();
        self.surfaces.extend(done);
    }

    /// The surface at `wanted`, extracted on first request.
    pub(crate) fn surface(&mut self, wanted: &str, demand: &Demand) -> Result<Arc<EngineSurface>, String> {
        self.prefetch_surfaces(&[(wanted.to_string(), demand.clone())]);
        self.surfaces[wanted].clone()
    }

    /// What this consumer's component of `link` uses of its engine at `wanted`.
    pub(crate) fn consumer_uses(&mut self, wanted: &str, link: &ConsumerLink) -> Result<&Vec<ConsumerUse>, String> {
        let key = (wanted.to_string(), link.component);
        if !self.uses.contains_key(&key) {
            let _span = crate::trace::span(|| format!("{} consumer uses {wanted}", self.engine.id));
            let cache = self.cache.clone();
            let result = self.tree(wanted).map(|t| {
                let units = Units { engine: link.consumer, tree: t.tree.as_ref(), root: &t.package_root, cache: &cache };
                // Reads every module of the component: cached against the whole listing.
                units.unit("consumer-uses", &format!("{}\0{}", link.package, link.component), None, |pkg| {
                    let mut warnings = Vec::new();
                    (consumer_uses_of(pkg, link.package, link.component, link.classes, &mut warnings), warnings)
                })
            });
            self.uses.insert(key.clone(), result);
        }
        self.uses[&key].as_ref().map(|(u, _)| u).map_err(Clone::clone)
    }

    /// The options the worker of `link` registers itself at `wanted` (its
    /// consumer link's [`WorkerParser`](crate::profiles::WorkerParser)), for
    /// [`worker_accepts`](crate::check::worker_flags::worker_accepts); `None`
    /// for a link whose worker hands nothing to an engine-only parser.
    pub(crate) fn worker_flags(&mut self, wanted: &str, link: &ConsumerLink) -> Option<Result<WorkerFlags, String>> {
        let parser = link.worker_parser.as_ref()?;
        let cache = self.cache.clone();
        Some(self.tree(wanted).map(|t| {
            let units = Units { engine: link.consumer, tree: t.tree.as_ref(), root: &t.package_root, cache: &cache };
            let (flags, _warnings) = units.unit("worker-flags", parser.module, None, |pkg| {
                let mut warnings = Vec::new();
                (worker_flags(pkg, parser.module, &mut warnings), warnings)
            });
            flags
        }))
    }

    /// Rule evidence results known for `tree` (all rules, all deployments),
    /// keyed by its whole listing: any change re-checks the rules.
    pub(crate) fn rule_memo(&self, tree: &RefTree) -> EvidenceMemo {
        self.cache.get(RULE_MEMO, &rule_memo_key(tree), tree.tree.as_ref()).unwrap_or_default()
    }

    /// Store the results of this run, when they add to what was loaded.
    pub(crate) fn store_rule_memo(&self, tree: &RefTree, loaded: usize, memo: &EvidenceMemo) {
        // Results found in a tree where a read failed may lack that file.
        if memo.len() > loaded && tree.tree.failed_reads() == 0 {
            self.cache.put(RULE_MEMO, &rule_memo_key(tree), Default::default(), memo);
        }
    }

    /// Bound the fact cache (as dropping does), then leak the handle: see [`Engines::finish`].
    pub(crate) fn finish(self) {
        self.cache.evict_if_needed();
        std::mem::forget(self);
    }

    /// Extraction warnings met so far (files that could only be read in part).
    pub(crate) fn warnings(&self) -> Vec<ExtractWarning> {
        let mut out: Vec<ExtractWarning> = self
            .surfaces
            .values()
            .filter_map(|s| s.as_ref().ok())
            .flat_map(|s| s.warnings.iter().cloned())
            .chain(self.uses.values().filter_map(|u| u.as_ref().ok()).flat_map(|(_, w)| w.iter().cloned()))
            .collect();
        out.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
        out.dedup();
        out
    }
}

impl Drop for EngineHandle {
    fn drop(&mut self) {
        self.cache.evict_if_needed();
    }
}

const RULE_MEMO: &str = "rule-evidence";

fn rule_memo_key(tree: &RefTree) -> String {
    format!("{}\0{}", tree.package_root, listing_fingerprint(tree.tree.as_ref()))
}

#[cfg(test)]
mod tests {
    use crate::audit::{run_with, AuditOptions, Engines};
    use crate::profiles::SGLANG;
    use std::collections::{BTreeMap, BTreeSet};

    /// The surfaces one audit of the demo script (v1.0.0 → v1.1.0) leaves
    /// read, given `also` as `also_targets`.
    fn surfaces_read(also: BTreeMap<&'static str, BTreeSet<String>>) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        crate::demo::build(dir.path()).unwrap();
        let path = dir.path().join("recipes/benchmarks/launch-aggregated.sh");
        let text = std::fs::read_to_string(&path).unwrap();
        let file = crate::recipe::load_text(&path.display().to_string(), text, &Default::default()).unwrap();
        let sglang = dir.path().join("sglang.git").display().to_string();
        let opts = AuditOptions { also_targets: also, ..AuditOptions::default() }.with_source(&SGLANG, Some(sglang), None).with_refs(
            &SGLANG,
            Some("v1.0.0".into()),
            Some("v1.1.0".into()),
        );
        let mut engines = Engines::open(&opts).unwrap();
        let report = run_with(&[file], &opts, &mut engines).unwrap();
        assert_eq!(report.deployments_audited, 1, "{:?}", report.problems);
        let read = engines.get(&SGLANG).unwrap().surfaces.keys().cloned().collect();
        engines.finish();
        read
    }

    #[test]
    fn also_targets_are_read_in_the_first_audit_over_the_engines() {
        // The matrix names every release of its window here, so the first
        // audit extracts them all at once (in parallel) and later ones only check.
        let also = BTreeMap::from([(SGLANG.id, BTreeSet::from(["v1.2.0".to_string()]))]);
        let read = surfaces_read(also);
        assert!(read.contains(&"v1.2.0".to_string()), "{read:?}");
        // Without it, the audit reads only the refs it is across.
        let read = surfaces_read(BTreeMap::new());
        assert!(!read.contains(&"v1.2.0".to_string()) && read.contains(&"v1.1.0".to_string()), "{read:?}");
    }
}
