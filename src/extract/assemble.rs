//! Assemble one release's [`EngineSurface`] from the individual extractors.

use super::Package;
use crate::source::{Engine, Tree};
use crate::surface::{EngineSurface, ExtractWarning};

/// Everything `surface` reports for one engine at one ref.
pub fn extract_surface(tree: &dyn Tree, engine: Engine, package_root: &str, ref_name: &str) -> EngineSurface {
    let pkg = Package::new(tree, package_root);
    let warnings: Vec<ExtractWarning> = Vec::new();
    let modules = pkg.modules();
    EngineSurface {
        engine: engine.name().to_string(),
        ref_name: ref_name.to_string(),
        commit: tree.commit(),
        version: None,
        package_root: package_root.to_string(),
        flags: Vec::new(),
        env: Vec::new(),
        env_prefix_rewrites: Vec::new(),
        modules,
        classes: Default::default(),
        requires: Vec::new(),
        warnings,
    }
}
