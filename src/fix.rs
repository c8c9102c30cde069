//! `--fix`: apply the findings' mechanical edits to the recipe files.
//!
//! Edits are byte-exact replacements computed by the checks against the text the
//! audit read, so comments, quoting and key order outside them stay as written.
//! A finding's fix is applied whole or not at all (a rename without its value
//! conversion would invert a setting): a fix that overlaps an edit already taken
//! is rejected and named, and a second `--fix` run picks it up on the new text.
//! Which files may be written, and how they are written without losing anything,
//! is [`disk`]'s part.

pub(crate) mod disk;

pub(crate) use disk::{apply, screen};

use crate::finding::{Edit, Finding};
use crate::recipe::RecipeFile;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The new text of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The file as the audit shows it.
    pub path: String,
    /// The file written: the path the loader read, which `path` shows lossily
    /// when the name is not UTF-8.
    pub disk_path: PathBuf,
    pub before: String,
    pub after: String,
    /// How many findings' fixes this patch carries.
    pub fixes: usize,
}

/// A fix that was not applied, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejected {
    pub path: String,
    pub line: u32,
    pub code: String,
    pub subject: String,
    pub reason: String,
}

/// What `--fix` would do to the files a run read.
#[derive(Debug, Default)]
pub(crate) struct FixPlan {
    /// Files that change, sorted by path.
    pub patches: Vec<FilePatch>,
    pub rejected: Vec<Rejected>,
    /// Files with fixes that are not written, and why (see [`FixError::is_failure`]).
    pub skipped: Vec<FixError>,
}

/// Why a file is not fixed.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum FixError {
    #[error("{path}: changed on disk since it was audited; not fixed")]
    #[diagnostic(code(engine_audit::fix::changed), help("run the audit again"))]
    Changed { path: String },
    #[error("{path}: cannot write the fix: {message}")]
    #[diagnostic(code(engine_audit::fix::io))]
    Io { path: String, message: String },
    #[error("{path} is read-only; not fixed")]
    #[diagnostic(code(engine_audit::fix::read_only), help("make it writable to have it fixed"))]
    ReadOnly { path: String },
    #[error("{path}: its owner ({uid}:{gid}) cannot be kept ({message}); not fixed")]
    #[diagnostic(code(engine_audit::fix::owner), help("a fixed file is a new file: run --fix as its owner"))]
    Owner { path: String, uid: u32, gid: u32, message: String },
    #[error("{path} is a symlink; not fixed")]
    #[diagnostic(code(engine_audit::fix::symlink), help("symlinks are never followed: fix the file where it lives"))]
    Symlink { path: String },
    #[error("{path} is not a regular file; not fixed")]
    #[diagnostic(code(engine_audit::fix::not_regular))]
    NotRegular { path: String },
    #[error("{path} is outside the folders given; not fixed")]
    #[diagnostic(code(engine_audit::fix::outside))]
    Outside { path: String },
    #[error("{path} has {links} hard links; not fixed (a new file would split them)")]
    #[diagnostic(code(engine_audit::fix::hard_links))]
    HardLinks { path: String, links: u64 },
    #[error("{path} is the same file as {first}; fixed once")]
    #[diagnostic(code(engine_audit::fix::same_file))]
    SameFile { path: String, first: String },
    #[error("{path} has CR-only line endings (a CR without LF); not fixed")]
    #[diagnostic(
        code(engine_audit::fix::cr_line_endings),
        help("YAML counts a lone CR as a line break, the edits' positions do not: convert the file to LF or CRLF")
    )]
    CrLineEndings { path: String },
    #[error("{path}: several files show as this name (not valid UTF-8); not fixed")]
    #[diagnostic(code(engine_audit::fix::ambiguous_name), help("rename the files to UTF-8 names"))]
    AmbiguousName { path: String },
}

impl FixError {
    /// A file `--fix` was asked to write and could not (the run exits 2), as
    /// opposed to one it leaves alone by design (a note).
    pub(crate) fn is_failure(&self) -> bool {
        matches!(self, FixError::Changed { .. } | FixError::Io { .. } | FixError::ReadOnly { .. } | FixError::Owner { .. })
    }
}

/// Plan the fixes of `findings` (in their order) against the files' text. Files
/// whose edits cannot be trusted are left out whole, named in `skipped`.
pub(crate) fn plan(findings: &[Finding], files: &[RecipeFile]) -> FixPlan {
    let refused = refused_files(files);
    let readable: BTreeMap<&str, &RecipeFile> =
        files.iter().filter(|f| !refused.contains_key(f.path.as_str())).map(|f| (f.path.as_str(), f)).collect();
    let texts: BTreeMap<&str, &str> = readable.iter().map(|(&p, f)| (p, f.text.as_str())).collect();
    let mut taken: BTreeMap<&str, Vec<&Edit>> = BTreeMap::new();
    let mut fixes_per_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rejected = Vec::new();
    let mut noted: BTreeSet<&str> = BTreeSet::new();
    for finding in findings {
        let Some(fix) = finding.fix.as_ref().filter(|f| !f.edits.is_empty()) else { continue };
        let reject = |reason| Rejected {
            path: finding.location.path.clone(),
            line: finding.location.line,
            code: finding.code().to_string(),
            subject: finding.subject.clone(),
            reason,
        };
        let in_refused: Vec<&str> = fix.edits.iter().map(|e| e.path.as_str()).filter(|p| refused.contains_key(p)).collect();
        if let Some(&path) = in_refused.first() {
            // The file's note says why; a fix that also edits another file is
            // rejected whole, and named.
            noted.extend(&in_refused);
            if in_refused.len() < fix.edits.len() {
                rejected.push(reject(format!("its edit in {path} cannot be made")));
            }
            continue;
        }
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
            Err(reason) => rejected.push(reject(reason)),
        }
    }
    let patches = taken
        .into_iter()
        .filter_map(|(path, edits)| {
            let file = readable[path];
            let after = apply_edits(&file.text, &edits);
            (after != file.text).then(|| FilePatch {
                path: path.to_string(),
                disk_path: file.disk_path.clone().unwrap_or_else(|| PathBuf::from(path)),
                before: file.text.clone(),
                after,
                fixes: fixes_per_file.get(path).copied().unwrap_or(0),
            })
        })
        .collect();
    let skipped = refused.into_iter().filter(|(p, _)| noted.contains(p)).map(|(_, e)| e).collect();
    FixPlan { patches, rejected, skipped }
}

/// Files whose edits cannot be trusted, by the path the findings name.
fn refused_files(files: &[RecipeFile]) -> BTreeMap<&str, FixError> {
    let mut refused = BTreeMap::new();
    let mut by_name: BTreeMap<&str, &RecipeFile> = BTreeMap::new();
    for file in files {
        let path = file.path.as_str();
        // Two names that are not UTF-8 can show alike: the findings, keyed by the
        // shown name, could not tell which file an edit is for.
        if by_name.insert(path, file).is_some_and(|other| other.disk_path != file.disk_path) {
            refused.insert(path, FixError::AmbiguousName { path: path.to_string() });
        } else if has_lone_cr(&file.text) {
            refused.insert(path, FixError::CrLineEndings { path: path.to_string() });
        }
    }
    refused
}

/// A CR not followed by LF: a line break to YAML (and so to the parser's line
/// numbers), but not to the line index spans are computed with, so every edit
/// after it would land in the wrong place.
fn has_lone_cr(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
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
        similar::TextDiff::from_lines(&self.before, &self.after).unified_diff().context_radius(3).header(&self.path, &self.path).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Fix, Location};

    fn file(path: &str, text: &str) -> RecipeFile {
        RecipeFile {
            path: path.into(),
            disk_path: None,
            kind: crate::recipe::RecipeKind::SrtSlurm,
            text: text.into(),
            deployments: vec![],
            master: None,
            notes: vec![],
            duplicates: vec![],
        }
    }

    fn edit(offset: usize, len: usize, replacement: &str) -> Edit {
        Edit { path: "r.yaml".into(), offset, len, replacement: replacement.into() }
    }

    fn finding(code: &str, line: u32, edits: Vec<Edit>) -> Finding {
        let at = Location { path: "r.yaml".into(), line, column: 1, offset: None, len: None };
        // Only the code, the place and the edits matter to the plan: a rule hit carries any code.
        let kind = crate::finding::FindingKind::Rule { id: code.into(), name: "n".into(), message: "m".into(), doc: String::new() };
        let remove = crate::finding::FixAction::Remove { name: "x".into(), use_instead: None };
        Finding::new(kind, at, "x").fix(Some(Fix { actions: vec![remove], edits }))
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
        assert!(
            diff.starts_with("--- r.yaml\n+++ r.yaml\n@@ -1,3 +1,3 @@\n-a: 1  # keep\n-b: 'two'\n+alpha: 1  # keep\n+beta: 'TWO'\n"),
            "{diff}"
        );
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
    fn a_file_with_a_lone_cr_is_left_out_whole() {
        let findings = vec![finding("R001", 1, vec![edit(0, 1, "alpha")]), finding("EA003", 2, vec![edit(5, 1, "beta")])];
        let refused = plan(&findings, &[file("r.yaml", "a: 1\rb: 2\r\n")]);
        assert!(refused.patches.is_empty() && refused.rejected.is_empty(), "{refused:?}");
        assert!(matches!(&refused.skipped[..], [FixError::CrLineEndings { path }] if path == "r.yaml"), "{:?}", refused.skipped);
        // CRLF is a line ending the spans know.
        let fixed = plan(&findings, &[file("r.yaml", "a: 1\r\nb: 2\r\n")]);
        assert_eq!(fixed.patches.len(), 1);
    }

    #[test]
    fn a_fix_that_also_edits_a_refused_file_is_rejected_whole() {
        let mut shown_alike = [file("x.yaml", "a: 1\n"), file("x.yaml", "b: 2\n")];
        shown_alike[0].disk_path = Some("x\u{fe}.yaml".into());
        shown_alike[1].disk_path = Some("x\u{ff}.yaml".into());
        let both = vec![edit(0, 1, "alpha"), Edit { path: "x.yaml".into(), offset: 0, len: 1, replacement: "b".into() }];
        let files = [file("r.yaml", "a: 1\n"), shown_alike[0].clone(), shown_alike[1].clone()];
        let plan = plan(&[finding("EA003", 1, both)], &files);
        assert!(plan.patches.is_empty(), "{plan:?}");
        assert!(plan.rejected[0].reason.contains("its edit in x.yaml cannot be made"), "{plan:?}");
        assert!(matches!(&plan.skipped[..], [FixError::AmbiguousName { .. }]), "{plan:?}");
    }
}
