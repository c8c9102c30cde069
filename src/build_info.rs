//! What the build knows about itself (set by build.rs).

/// `0.1.0 (0123456789ab)`: the package version and the commit it was built from,
/// or the bare version for a build outside a git checkout (a crates.io or sdist build).
pub(crate) const LONG_VERSION: &str = env!("ENGINE_AUDIT_LONG_VERSION");
