//! "After `--fix`: safe up to vC": for each row that breaks, the mechanical
//! fixes of its findings at its first break are applied in memory (no file is
//! written) and the row is audited again from that release on. Rows that first
//! break at the same release are fixed and audited together: one audit per
//! (first-break release, later release), not one per row.

use super::{belongs, break_of, cell, walk, AuditAt, Cell, Row, Start};
use crate::audit::master_links::{self, Apply};
use crate::audit::{AuditOptions, AuditReport, CurrentRelease, Engines};
use crate::finding::Finding;
use crate::profiles::Engine;
use crate::recipe::{LinkMapping, RecipeFile, RecipeKind};
use std::collections::BTreeSet;

/// How the fixed recipes are read again, as the command read them.
pub(crate) struct Reload {
    pub mapping: LinkMapping,
    pub how: Apply,
    pub key: Option<String>,
}

/// A row's answer once the fixes at its first break are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AfterFix {
    /// How many findings' fixes were applied to its file.
    pub fixes: usize,
    /// The newest safe target after the fixes (`None`: the fixes do not clear
    /// the first break's release).
    pub newest_safe: Option<String>,
    /// The first break left after the fixes, if any.
    pub first_break: Option<super::Break>,
}

/// Fill `after_fix` for every row of one axis that breaks.
#[allow(clippy::too_many_arguments)]
pub(super) fn fill(
    engine: Engine,
    releases: &[super::Release],
    columns: &[AuditReport],
    current: &[&CurrentRelease],
    rows: &mut [Row],
    mine: &[RecipeFile],
    opts: &AuditOptions,
    engines: &mut Engines,
    reload: &Reload,
    audit_at: AuditAt,
) -> miette::Result<()> {
    let break_at = |r: &Row| r.first_break.as_ref().and_then(|b| releases.iter().position(|x| x.tag == b.release));
    let firsts: BTreeSet<usize> = rows.iter().filter_map(break_at).collect();
    for b in firsts {
        let which: Vec<usize> = (0..rows.len()).filter(|&i| break_at(&rows[i]) == Some(b)).collect();
        // The fixes `audit --to <b> --fix` would apply for these deployments.
        let fixable: Vec<Finding> = columns[b]
            .findings
            .iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| !x.edits.is_empty()))
            .filter(|f| which.iter().any(|&i| belongs(f, current[i])))
            .cloned()
            .collect();
        let plan = crate::fix::plan(&fixable, mine);
        let mut files: Vec<RecipeFile> = mine.iter().filter(|f| f.kind == RecipeKind::MasterConfig).cloned().collect();
        let mut patched = BTreeSet::new();
        for patch in &plan.patches {
            // A fixed file that no longer reads is no answer: its rows say no fix.
            if let Ok(file) = crate::recipe::load_text(&patch.path, patch.after.clone(), &reload.mapping) {
                patched.insert(patch.path.clone());
                files.push(file);
            }
        }
        for &i in &which {
            rows[i].after_fix = Some(AfterFix { fixes: 0, newest_safe: None, first_break: rows[i].first_break.clone() });
        }
        if patched.is_empty() {
            continue;
        }
        master_links::apply(&mut files, reload.key.as_deref(), reload.how);
        let fixes: Vec<usize> =
            which.iter().map(|&i| plan.patches.iter().filter(|p| p.path == rows[i].path).map(|p| p.fixes).sum()).collect();
        let mut cells: Vec<Vec<Option<Cell>>> = vec![vec![None; releases.len()]; which.len()];
        let mut reports: Vec<Option<AuditReport>> = vec![None; releases.len()];
        for (r, release) in releases.iter().enumerate().skip(b) {
            let at = opts.clone().with_refs(engine, opts.refs_of(engine).from, Some(release.tag.clone()));
            let report = audit_at(&files, &at, engines)?;
            for (k, &i) in which.iter().enumerate() {
                if patched.contains(&rows[i].path) {
                    cells[k][r] = Some(cell(current[i], &report));
                }
            }
            reports[r] = Some(report);
        }
        for (k, &i) in which.iter().enumerate() {
            if !patched.contains(&rows[i].path) {
                continue;
            }
            let (mut safe, first, _) = walk(&cells[k], releases, |r, errors| {
                reports[r].as_ref().and_then(|report| break_of(current[i], &releases[r], report, errors))
            });
            // As for the row itself: relative to an unknown current release, no claim.
            if matches!(rows[i].start, Start::Unknown { .. }) {
                safe = None;
            }
            rows[i].after_fix = Some(AfterFix { fixes: fixes[k], newest_safe: safe, first_break: first });
        }
    }
    Ok(())
}
