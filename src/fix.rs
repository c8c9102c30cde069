//! `--fix`: apply the findings' mechanical edits to the recipe files.
//!
//! Edits are byte-exact replacements computed by the checks against the text the
//! audit read, so comments, quoting and key order outside them stay as written.
//! A finding's fix is applied whole or not at all (a rename without its value
//! conversion would invert a setting): a fix that overlaps an edit already taken
//! is rejected and named, and a second `--fix` run picks it up on the new text.
//! Files are written atomically (temp file in the same folder, then rename), and
//! only when they still hold the text the audit read.

use crate::recipe::RecipeFile;
use crate::report::{Edit, Finding};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The new text of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    pub path: String,
    pub before: String,
    pub after: String,
    /// How many findings' fixes this patch carries.
    pub fixes: usize,
}

/// A fix that was not applied, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub path: String,
    pub line: u32,
    pub code: String,
    pub subject: String,
    pub reason: String,
}

/// What `--fix` would do to the files a run read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixPlan {
    /// Files that change, sorted by path.
    pub patches: Vec<FilePatch>,
    pub rejected: Vec<Rejected>,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum FixError {
    #[error("{path}: changed on disk since it was audited; not fixed")]
    #[diagnostic(code(engine_audit::fix::changed), help("run the audit again"))]
    Changed { path: String },
    #[error("{path}: cannot write the fix: {message}")]
    #[diagnostic(code(engine_audit::fix::io))]
    Io { path: String, message: String },
}

/// Plan the fixes of `findings` (in their order) against the files' text.
pub fn plan(findings: &[Finding], files: &[RecipeFile]) -> FixPlan {
    let texts: BTreeMap<&str, &str> = files.iter().map(|f| (f.path.as_str(), f.text.as_str())).collect();
    let mut taken: BTreeMap<&str, Vec<&Edit>> = BTreeMap::new();
    let mut fixes_per_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rejected = Vec::new();
    for finding in findings {
        let Some(fix) = finding.fix.as_ref().filter(|f| !f.edits.is_empty()) else { continue };
        match check_fix(&fix.edits, &texts, &taken) {
            Ok(()) => {
                for edit in &fix.edits {
                    let list = taken.entry(edit.path.as_str()).or_default();
                    if !list.contains(&edit) {
                        list.push(edit);
                    }
                }
                let mut paths: Vec<&str> = fix.edits.iter().map(|e| e.path.as_str()).collect();
                paths.dedup();
                for p in paths {
                    *fixes_per_file.entry(p).or_default() += 1;
                }
            }
            Err(reason) => rejected.push(Rejected {
                path: finding.location.path.clone(),
                line: finding.location.line,
                code: finding.code.clone(),
                subject: finding.subject.clone(),
                reason,
            }),
        }
    }
    let patches = taken
        .into_iter()
        .filter_map(|(path, edits)| {
            let before = texts[path];
            let after = apply_edits(before, &edits);
            (after != before).then(|| FilePatch {
                path: path.to_string(),
                before: before.to_string(),
                after,
                fixes: fixes_per_file.get(path).copied().unwrap_or(0),
            })
        })
        .collect();
    FixPlan { patches, rejected }
}

/// Why a fix cannot be taken, if it cannot.
fn check_fix(edits: &[Edit], texts: &BTreeMap<&str, &str>, taken: &BTreeMap<&str, Vec<&Edit>>) -> Result<(), String> {
    for (i, edit) in edits.iter().enumerate() {
        let Some(text) = texts.get(edit.path.as_str()) else {
            return Err(format!("{} was not read as a recipe by this run", edit.path));
        };
        let end = edit.offset.checked_add(edit.len).filter(|&e| e <= text.len());
        if end.is_none_or(|e| !text.is_char_boundary(edit.offset) || !text.is_char_boundary(e)) {
            return Err(format!("its edit at byte {} is outside the file's text", edit.offset));
        }
        if let Some(other) = edits[..i].iter().find(|o| overlaps(o, edit)) {
            return Err(format!("its own edits overlap at bytes {} and {}", other.offset, edit.offset));
        }
        if let Some(other) = taken.get(edit.path.as_str()).and_then(|list| list.iter().find(|o| overlaps(o, edit))) {
            let line = text[..other.offset].matches('\n').count() + 1;
            return Err(format!("it overlaps another fix's edit on line {line}; run --fix again to apply it"));
        }
    }
    Ok(())
}

/// Two different edits that touch the same bytes, or insert at the same place
/// (their order would be a guess). Identical edits are one edit, not a conflict.
fn overlaps(a: &Edit, b: &Edit) -> bool {
    if a == b || a.path != b.path {
        return false;
    }
    let (a0, a1, b0, b1) = (a.offset, a.offset + a.len, b.offset, b.offset + b.len);
    match (a.len, b.len) {
        (0, 0) => a0 == b0,
        (0, _) => b0 < a0 && a0 < b1,
        (_, 0) => a0 < b0 && b0 < a1,
        _ => a0 < b1 && b0 < a1,
    }
}

/// Apply non-overlapping edits from the end of the text backwards, so earlier
/// offsets stay valid. At one offset a replacement goes before an insertion, so
/// the inserted text ends up in front of it.
fn apply_edits(text: &str, edits: &[&Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse((e.offset, e.len)));
    let mut out = text.to_string();
    for e in sorted {
        out.replace_range(e.offset..e.offset + e.len, &e.replacement);
    }
    out
}

impl FilePatch {
    /// The change as a unified diff (`--- path` / `+++ path`).
    pub fn diff(&self) -> String {
        similar::TextDiff::from_lines(&self.before, &self.after)
            .unified_diff()
            .context_radius(3)
            .header(&self.path, &self.path)
            .to_string()
    }

    /// Write the new text in place of the old, atomically. Refuses when the file
    /// no longer holds the text the audit read. A symlinked recipe is written
    /// through to its target; the file's permissions are kept.
    pub fn write(&self) -> Result<(), FixError> {
        let io = |e: std::io::Error| FixError::Io { path: self.path.clone(), message: e.to_string() };
        let target: PathBuf = std::fs::canonicalize(&self.path).map_err(io)?;
        let on_disk = std::fs::read(&target).map_err(io)?;
        if on_disk != self.before.as_bytes() {
            return Err(FixError::Changed { path: self.path.clone() });
        }
        let dir = target.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::Builder::new().prefix(".engine-audit-fix-").tempfile_in(dir).map_err(io)?;
        tmp.write_all(self.after.as_bytes()).map_err(io)?;
        tmp.as_file().sync_all().map_err(io)?;
        let permissions = std::fs::metadata(&target).map_err(io)?.permissions();
        std::fs::set_permissions(tmp.path(), permissions).map_err(io)?;
        tmp.persist(&target).map_err(|e| io(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Fix, Location};

    fn file(path: &str, text: &str) -> RecipeFile {
        RecipeFile {
            path: path.into(),
            disk_path: None,
            kind: crate::recipe::RecipeKind::SrtSlurm,
            text: text.into(),
            deployments: vec![],
            master: None,
            notes: vec![],
        }
    }

    fn edit(offset: usize, len: usize, replacement: &str) -> Edit {
        Edit { path: "r.yaml".into(), offset, len, replacement: replacement.into() }
    }

    fn finding(code: &str, line: u32, edits: Vec<Edit>) -> Finding {
        let at = Location { path: "r.yaml".into(), line, column: 1, offset: None, len: None };
        let mut f = Finding::new(crate::codes::Code::EA003, at, "x", "m").fix(Some(Fix { description: "d".into(), edits }));
        f.code = code.into();
        f
    }

    #[test]
    fn applies_edits_back_to_front_and_keeps_the_rest() {
        let text = "a: 1  # keep\nb: 'two'\nc: 3\n";
        let findings = vec![
            finding("EA003", 1, vec![edit(0, 1, "alpha")]),
            finding("EA102", 2, vec![edit(13, 1, "beta"), edit(17, 3, "TWO")]),
            // The same edit reached from a second deployment: applied once.
            finding("EA003", 1, vec![edit(0, 1, "alpha")]),
        ];
        let plan = plan(&findings, &[file("r.yaml", text)]);
        assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
        assert_eq!(plan.patches.len(), 1);
        assert_eq!(plan.patches[0].after, "alpha: 1  # keep\nbeta: 'TWO'\nc: 3\n");
        assert_eq!(plan.patches[0].fixes, 3);
        let diff = plan.patches[0].diff();
        assert!(diff.starts_with("--- r.yaml\n+++ r.yaml\n@@ -1,3 +1,3 @@\n-a: 1  # keep\n-b: 'two'\n+alpha: 1  # keep\n+beta: 'TWO'\n"), "{diff}");
    }

    #[test]
    fn an_overlapping_fix_is_rejected_whole() {
        let text = "key: value\nother: 1\n";
        let findings = vec![
            finding("EA004", 1, vec![edit(0, 11, "")]),
            // Renames the key of the deleted line and touches line 2: neither part applies.
            finding("EA003", 1, vec![edit(11, 5, "renamed"), edit(0, 3, "k")]),
            finding("R001", 1, vec![edit(0, 0, "x")]),
        ];
        let plan = plan(&findings, &[file("r.yaml", text)]);
        assert_eq!(plan.patches[0].after, "xother: 1\n", "the insertion at 0 goes before the deleted range");
        assert_eq!(plan.rejected.len(), 1);
        assert_eq!(plan.rejected[0].code, "EA003");
        assert!(plan.rejected[0].reason.contains("overlaps another fix's edit on line 1"), "{}", plan.rejected[0].reason);
    }

    #[test]
    fn stale_or_foreign_edits_are_rejected() {
        let findings = vec![
            finding("EA003", 1, vec![edit(3, 10, "x")]),
            finding("EA003", 1, vec![Edit { path: "other.yaml".into(), offset: 0, len: 0, replacement: "x".into() }]),
            finding("EA003", 1, vec![edit(1, 0, "x")]),
        ];
        let plan = plan(&findings, &[file("r.yaml", "é: 1")]);
        assert_eq!(plan.rejected.len(), 3, "{:?}", plan.rejected);
        assert!(plan.patches.is_empty());
    }

    #[test]
    fn writes_atomically_and_refuses_a_file_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.yaml");
        std::fs::write(&path, "a: 1\n").unwrap();
        let patch = FilePatch { path: path.display().to_string(), before: "a: 1\n".into(), after: "a: 2\n".into(), fixes: 1 };
        patch.write().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a: 2\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left behind");
        assert!(matches!(patch.write(), Err(FixError::Changed { .. })));
    }
}
