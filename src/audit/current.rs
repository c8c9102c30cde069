//! Each deployment's current release of the engine it starts, derived as a
//! plain `audit` derives "from" (the recipe's image, or the image of the
//! master key that runs it), with no ref from the command line: where the
//! matrix starts its row.

use super::deployment_refs::derive_refs;
use super::engines::Engines;
use super::refs::DerivedRef;
use super::AuditOptions;
use crate::profiles;
use crate::recipe::{RecipeFile, RecipeKind};

/// One deployment the audit would check against the engine it starts.
#[derive(Debug, Clone)]
pub(crate) struct CurrentRelease {
    pub path: String,
    pub deployment: String,
    pub variant: Option<String>,
    /// The engine profile id it starts.
    pub engine: &'static str,
    /// Its current release, or why it cannot be told (the EA303 message, or
    /// that the recipe names no image).
    pub current: Result<DerivedRef, String>,
}

/// Every deployment of `files` that starts an engine with a server profile,
/// with its current release. Deployments of other engines (or of no profile)
/// are the audit's to list as not audited.
pub(crate) fn current_releases(files: &[RecipeFile], opts: &AuditOptions, engines: &Engines) -> Vec<CurrentRelease> {
    // Only the sources: refs named on the command line would win over the recipe's.
    let bare = AuditOptions { sources: opts.sources.clone(), open: opts.open.clone(), ..AuditOptions::default() };
    let mut out = Vec::new();
    for file in files.iter().filter(|f| matches!(f.kind, RecipeKind::SrtSlurm | RecipeKind::LaunchScript | RecipeKind::AmdModels)) {
        for dep in &file.deployments {
            let Some(engine) = profiles::by_id(dep.engine).filter(|e| e.server.is_some()) else { continue };
            let (mut findings, mut notes) = (Vec::new(), Vec::new());
            let refs = derive_refs(&file.kind, dep, None, &bare, engines, &mut findings, &mut notes);
            let current = match refs.from(engine) {
                Some(r) => Ok(r.clone()),
                None => Err(match findings.first() {
                    Some(f) => f.message(),
                    None => "the recipe names no image".to_string(),
                }),
            };
            out.push(CurrentRelease {
                path: file.path.clone(),
                deployment: dep.name.clone(),
                variant: dep.variant.clone(),
                engine: engine.id,
                current,
            });
        }
    }
    out
}
