//! Where the engine's Python package sits inside a tree.

use super::{SourceError, Tree};
use crate::profiles::EngineProfile;

/// Find the package root; `override_root` (from `--sglang-root`/`--dynamo-root`) wins.
pub fn discover_package_root(tree: &dyn Tree, engine: &EngineProfile, override_root: Option<&str>) -> Result<String, SourceError> {
    let wanted: Vec<String> = match override_root {
        Some(r) => vec![r.trim_matches('/').to_string()],
        None => engine.package_roots.iter().map(|s| s.to_string()).collect(),
    };
    for root in &wanted {
        if tree.contains(&format!("{root}/__init__.py")) {
            return Ok(root.clone());
        }
        // Namespace packages (Dynamo's `dynamo/` has no __init__.py): any .py below.
        let prefix = format!("{root}/");
        if tree.entries().iter().any(|e| e.path.starts_with(&prefix) && e.path.ends_with(".py")) {
            return Ok(root.clone());
        }
    }
    Err(SourceError::NoPackage { engine: engine.id.to_string(), tree: tree.describe(), looked_for: wanted.join(", ") })
}
