//! How a finished run exits, the documented contract CI relies on: 0 clean
//! (nothing at or above `--fail-on`), 1 findings at or above it, 2 bad input or
//! usage (nothing could be audited).

use crate::codes::Severity;
use crate::finding::AuditReport;
use std::process::ExitCode;

/// The lowest severity that fails the run.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

/// How a finished run exits: 2 when no deployment could be audited (a master
/// config's entries count only when checked against a recipe that was audited;
/// `problems` says why one was not), else by the findings.
pub(crate) fn exit_code(report: &AuditReport, fail_on: FailOn) -> ExitCode {
    if report.nothing_audited() {
        eprintln!("engine-audit: no deployment could be audited");
        return ExitCode::from(2);
    }
    gate(report, fail_on)
}

/// Exit 1 when a finding is at or above `--fail-on`.
pub(crate) fn gate(report: &AuditReport, fail_on: FailOn) -> ExitCode {
    let threshold = match fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Info => Severity::Info,
        FailOn::Never => return ExitCode::SUCCESS,
    };
    if report.findings.iter().any(|f| f.severity >= threshold) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
