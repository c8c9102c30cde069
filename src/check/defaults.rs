//! EA007: defaults that changed for flags a recipe family leaves unset, said once
//! per family, flag and bump.

use super::flags::DefaultChange;
use super::Bump;
use crate::finding::{EvidenceRef, Finding, FindingKind, Location};
use crate::recipe::{Deployment, RecipeFile};
use std::collections::BTreeSet;

/// A recipe family: the folder a recipe sits in (recipes of one benchmark family
/// share a folder in srt-slurm layouts).
fn family_of(path: &str) -> String {
    match std::path::Path::new(path).parent().map(|p| p.display().to_string()) {
        Some(dir) if !dir.is_empty() => dir,
        _ => ".".to_string(),
    }
}

/// EA007, once per recipe family, flag and bump.
/// `changes` are [`super::flags::changed_defaults`] of the deployment.
pub(crate) fn changed_defaults(
    file: &RecipeFile,
    dep: &Deployment,
    bump: Bump,
    changes: Vec<DefaultChange>,
    seen: &mut BTreeSet<(String, String, Option<String>, String)>,
    out: &mut Vec<Finding>,
) {
    let family = family_of(&file.path);
    for change in changes {
        let key =
            (family.clone(), change.flag.canonical().to_string(), bump.current_ref().map(str::to_string), bump.target_ref().to_string());
        if !seen.insert(key) {
            continue;
        }
        let at = dep.roles.first().and_then(|r| r.span.as_ref()).map(Location::from_span).unwrap_or(Location {
            path: file.path.clone(),
            line: 1,
            column: 1,
            offset: None,
            len: None,
        });
        let show = |v: &crate::surface::Known<serde_json::Value>| serde_json::to_string(v).unwrap_or_default();
        let kind = FindingKind::DefaultChanged {
            option: change.flag.canonical().to_string(),
            family: family.clone(),
            bump: bump.label(),
            old: show(&change.from),
            new: show(&change.to),
        };
        out.push(
            Finding::new(kind, at, change.flag.canonical().trim_start_matches("--"))
                .deployment(&dep.name)
                .variant(dep.variant.as_deref())
                .evidence(EvidenceRef::new(change.evidence, bump.target_ref())),
        );
    }
}
