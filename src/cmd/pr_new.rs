//! `pr --new-only`: report only what the PR brings. The base version of each
//! changed recipe is audited against the same target as its head version (each
//! base deployment is given its head version's image and Dynamo spec, and the
//! same release it ran before), and head findings whose fingerprint the base
//! also has are left out, counted as suppressed with a note. Recipes the PR
//! adds, and master-config checks, have no base audit: all their findings are new.

use crate::audit::{self, AuditOptions, AuditReport};
use crate::recipe::RecipeFile;
use crate::report::{identity, RenderOptions};

pub(crate) fn keep_new(
    result: &mut AuditReport,
    base_files: &[RecipeFile],
    head_files: &[RecipeFile],
    opts: &AuditOptions,
    render: &RenderOptions,
) -> miette::Result<()> {
    if base_files.is_empty() {
        return Ok(());
    }
    let base: Vec<RecipeFile> = base_files.iter().map(|b| on_head_target(b, head_files)).collect();
    let mut before = audit::run(&base, opts)?;
    crate::finding::normalize(&mut before.findings);
    let known = identity::of_report(&before, render).into_iter().collect();
    crate::baseline::apply(result, &known, render, "the base commit (--new-only)");
    Ok(())
}

/// `base` with each deployment's target taken from its head version (same name
/// and variant): what the head is audited against.
fn on_head_target(base: &RecipeFile, head_files: &[RecipeFile]) -> RecipeFile {
    let mut out = base.clone();
    let Some(head) = head_files.iter().find(|h| h.path == base.path) else { return out };
    for dep in &mut out.deployments {
        if let Some(h) = head.deployments.iter().find(|h| h.name == dep.name && h.variant == dep.variant) {
            dep.container = h.container.clone();
            dep.image = h.image.clone();
            dep.dynamo = h.dynamo.clone();
            dep.entry_image = h.entry_image.clone();
        }
    }
    out
}
