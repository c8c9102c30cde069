//! Baselines: the findings a repository has accepted for now, so CI reports only
//! new ones (`--write-baseline FILE` records a run, `--baseline FILE` leaves out
//! what it recorded). A finding is known by its fingerprint
//! (`report::identity`): code, repository-relative path, subject and role, so
//! it stays known when lines move or the target release changes.
//!
//! The file is JSON: `{"engine_audit_baseline": 1, "findings": [{"fingerprint",
//! "code", "path", "subject", "role"}]}`; all but `fingerprint` are for the
//! reader of a diff.

use crate::finding::AuditReport;
use crate::report::{identity, RenderOptions};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct BaselineFile {
    engine_audit_baseline: u32,
    findings: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    fingerprint: String,
    code: String,
    path: String,
    subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    role: Option<String>,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub(crate) enum BaselineError {
    #[error("{path}: cannot read the baseline: {message}")]
    #[diagnostic(code(engine_audit::baseline::read), help("write one with --write-baseline FILE"))]
    Read { path: PathBuf, message: String },
    #[error("{path}: not an engine-audit baseline: {message}")]
    #[diagnostic(code(engine_audit::baseline::invalid), help("write it again with --write-baseline FILE"))]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: cannot write the baseline: {message}")]
    #[diagnostic(code(engine_audit::baseline::write))]
    Write { path: PathBuf, message: String },
}

/// Write every finding of `report` to `path`.
pub(crate) fn write(path: &Path, report: &AuditReport, opts: &RenderOptions) -> Result<(), BaselineError> {
    let prints = identity::of_report(report, opts);
    let findings = report
        .findings
        .iter()
        .zip(prints)
        .map(|(f, fingerprint)| Entry {
            fingerprint,
            code: f.code().to_string(),
            path: crate::report::repo_path(&f.location.path, opts),
            subject: f.subject.clone(),
            role: f.role.clone(),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&BaselineFile { engine_audit_baseline: VERSION, findings }).expect("plain data");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| BaselineError::Write { path: path.to_path_buf(), message: e.to_string() })
}

/// The fingerprints recorded in `path`.
pub(crate) fn read(path: &Path) -> Result<BTreeSet<String>, BaselineError> {
    let text = std::fs::read_to_string(path).map_err(|e| BaselineError::Read { path: path.to_path_buf(), message: e.to_string() })?;
    let file: BaselineFile =
        serde_json::from_str(&text).map_err(|e| BaselineError::Invalid { path: path.to_path_buf(), message: e.to_string() })?;
    if file.engine_audit_baseline != VERSION {
        return Err(BaselineError::Invalid {
            path: path.to_path_buf(),
            message: format!("version {} (this engine-audit reads {VERSION})", file.engine_audit_baseline),
        });
    }
    Ok(file.findings.into_iter().map(|e| e.fingerprint).collect())
}

/// Leave out of `report` the findings whose fingerprint is in `known`; they
/// are counted as suppressed and a note says how many and why.
pub(crate) fn apply(report: &mut AuditReport, known: &BTreeSet<String>, opts: &RenderOptions, label: &str) -> usize {
    let prints = identity::of_report(report, opts);
    let before = report.findings.len();
    let mut keep = prints.iter().map(|p| !known.contains(p));
    report.findings.retain(|_| keep.next().unwrap_or(true));
    let dropped = before - report.findings.len();
    if dropped > 0 {
        report.suppressed += dropped;
        report.notes.push(format!("{dropped} finding(s) left out: already in {label}"));
        report.notes.sort();
    }
    dropped
}
