//! The engines an audit reads: opened once, each ref's surface extracted once.

use crate::extract::consumer::{consumer_uses, ConsumerUse};
use crate::extract::{extract_surface, Demand, Package};
use crate::source::{discover_package_root, Engine, EngineSource, OpenOptions};
use crate::surface::{EngineSurface, ExtractWarning};
use std::collections::BTreeMap;
use std::sync::Arc;

pub struct EngineHandle {
    pub engine: Engine,
    pub source: EngineSource,
    root: Option<String>,
    surfaces: BTreeMap<String, Result<Arc<EngineSurface>, String>>,
    uses: BTreeMap<String, Result<(Vec<ConsumerUse>, Vec<ExtractWarning>), String>>,
}

impl EngineHandle {
    pub fn open(engine: Engine, spec: &str, root: Option<String>, opts: &OpenOptions) -> Result<EngineHandle, crate::source::SourceError> {
        Ok(EngineHandle { engine, source: EngineSource::open(spec, opts)?, root, surfaces: BTreeMap::new(), uses: BTreeMap::new() })
    }

    /// The surface at `wanted`, extracted on first request. Errors are kept as
    /// text so every deployment that needs the ref reports the same problem.
    pub fn surface(&mut self, wanted: &str, demand: &Demand) -> Result<Arc<EngineSurface>, String> {
        if !self.surfaces.contains_key(wanted) {
            let result = (|| {
                let (tree, ref_name) = self.source.tree(Some(wanted)).map_err(|e| e.to_string())?;
                let root = discover_package_root(tree.as_ref(), self.engine, self.root.as_deref()).map_err(|e| e.to_string())?;
                Ok(Arc::new(extract_surface(tree.as_ref(), self.engine, &root, &ref_name, demand)))
            })();
            self.surfaces.insert(wanted.to_string(), result);
        }
        self.surfaces[wanted].clone()
    }

    /// What Dynamo's SGLang component uses of SGLang at `wanted`.
    pub fn consumer_uses(&mut self, wanted: &str, module_prefix: &str) -> Result<&Vec<ConsumerUse>, String> {
        if !self.uses.contains_key(wanted) {
            let result = (|| {
                let (tree, _) = self.source.tree(Some(wanted)).map_err(|e| e.to_string())?;
                let root = discover_package_root(tree.as_ref(), self.engine, self.root.as_deref()).map_err(|e| e.to_string())?;
                let pkg = Package::new(tree.as_ref(), &root);
                let mut warnings = Vec::new();
                let uses = consumer_uses(&pkg, "sglang", module_prefix, &mut warnings);
                Ok((uses, warnings))
            })();
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
