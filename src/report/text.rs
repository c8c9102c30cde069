//! Plain text for terminals and logs: findings grouped by file, each with its
//! line, the engine evidence and the fix; a summary line at the end.

use crate::audit::AuditReport;
use crate::codes::Severity;
use std::fmt::Write;

pub fn render(report: &AuditReport) -> String {
    let mut out = String::new();
    for bump in &report.bumps {
        let _ = writeln!(
            out,
            "{} {} → {} ({} deployment{}; {})",
            bump.engine,
            bump.from.as_deref().unwrap_or("?"),
            bump.to,
            bump.deployments,
            if bump.deployments == 1 { "" } else { "s" },
            bump.how.join("; ")
        );
    }
    let mut current = None;
    for f in &report.findings {
        if current != Some(&f.location.path) {
            let _ = writeln!(out, "\n{}", if f.location.path.is_empty() { "(no file)" } else { &f.location.path });
            current = Some(&f.location.path);
        }
        let role = f.role.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let _ = writeln!(out, "  {}:{}: {} {} {}{role}: {}", f.location.line, f.location.column, f.severity.as_str(), f.code, f.name, f.message);
        for e in &f.evidence {
            let note = e.note.as_deref().map(|n| format!("  ({n})")).unwrap_or_default();
            let _ = writeln!(out, "      evidence: {}:{} @ {}{note}", e.path, e.line, e.ref_name);
        }
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "      fix: {}{}", fix.description, if fix.edits.is_empty() { "" } else { " (--fix applies it)" });
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "\nnotes:");
        for n in &report.notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    if !report.problems.is_empty() {
        let _ = writeln!(out, "\nnot fully read:");
        for p in &report.problems {
            let _ = writeln!(out, "  {}: {}", p.path, p.message);
        }
    }
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        out,
        "\n{} error(s), {} warning(s), {} info in {} deployment(s) of {} file(s){}",
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
        report.deployments_audited,
        report.recipes,
        if report.suppressed > 0 { format!("; {} suppressed", report.suppressed) } else { String::new() }
    );
    out
}
