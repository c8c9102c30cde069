//! The engines an audit reads: opened once; each ref's tree listed once and its
//! surface extracted once.

use crate::extract::consumer::{consumer_uses, ConsumerUse};
use crate::extract::{extract_surface, Demand, Package};
use crate::source::{discover_package_root, Engine, EngineSource, OpenOptions, Tree};
use crate::surface::{EngineSurface, ExtractWarning};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One ref of an engine: its file tree and where the package sits in it.
pub struct RefTree {
    pub tree: Box<dyn Tree>,
    pub package_root: String,
    pub ref_name: String,
}

pub struct EngineHandle {
    pub engine: Engine,
    pub source: EngineSource,
    root: Option<String>,
    trees: BTreeMap<String, Result<Arc<RefTree>, String>>,
    surfaces: BTreeMap<String, Result<Arc<EngineSurface>, String>>,
    uses: BTreeMap<String, Result<(Vec<ConsumerUse>, Vec<ExtractWarning>), String>>,
}

impl EngineHandle {
    pub fn open(engine: Engine, spec: &str, root: Option<String>, opts: &OpenOptions) -> Result<EngineHandle, crate::source::SourceError> {
        Ok(EngineHandle {
            engine,
            source: EngineSource::open(spec, opts)?,
            root,
            trees: BTreeMap::new(),
            surfaces: BTreeMap::new(),
            uses: BTreeMap::new(),
        })
    }

    /// The tree at `wanted`. Errors are kept as text so every deployment that
    /// needs the ref reports the same problem.
    pub fn tree(&mut self, wanted: &str) -> Result<Arc<RefTree>, String> {
        if !self.trees.contains_key(wanted) {
            let _span = crate::trace::span(|| format!("{} tree {wanted}", self.engine.name()));
            let result = (|| {
                let (tree, ref_name) = self.source.tree(Some(wanted)).map_err(|e| e.to_string())?;
                let package_root = discover_package_root(tree.as_ref(), self.engine, self.root.as_deref()).map_err(|e| e.to_string())?;
                Ok(Arc::new(RefTree { tree, package_root, ref_name }))
            })();
            self.trees.insert(wanted.to_string(), result);
        }
        self.trees[wanted].clone()
    }

    /// The surface at `wanted`, extracted on first request.
    pub fn surface(&mut self, wanted: &str, demand: &Demand) -> Result<Arc<EngineSurface>, String> {
        if !self.surfaces.contains_key(wanted) {
            let _span = crate::trace::span(|| format!("{} surface {wanted}", self.engine.name()));
            let result = self.tree(wanted).map(|t| {
                Arc::new(extract_surface(t.tree.as_ref(), self.engine, &t.package_root, &t.ref_name, demand))
            });
            self.surfaces.insert(wanted.to_string(), result);
        }
        self.surfaces[wanted].clone()
    }

    /// What Dynamo's SGLang component uses of SGLang at `wanted`.
    pub fn consumer_uses(&mut self, wanted: &str, module_prefix: &str) -> Result<&Vec<ConsumerUse>, String> {
        if !self.uses.contains_key(wanted) {
            let _span = crate::trace::span(|| format!("{} consumer uses {wanted}", self.engine.name()));
            let result = self.tree(wanted).map(|t| {
                let pkg = Package::new(t.tree.as_ref(), &t.package_root);
                let mut warnings = Vec::new();
                let uses = consumer_uses(&pkg, "sglang", module_prefix, &mut warnings);
                (uses, warnings)
            });
            self.uses.insert(wanted.to_string(), result);
        }
        self.uses[wanted].as_ref().map(|(u, _)| u).map_err(Clone::clone)
    }

    /// Extraction warnings met so far (files that could only be read in part).
    pub fn warnings(&self) -> Vec<ExtractWarning> {
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
