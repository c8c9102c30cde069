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

/// How a finished run exits: 2 when no deployment could be audited and every
/// one that was not could have been with other input (a master config's
/// entries count only when checked against a recipe that was audited;
/// `problems` says why one was not), else by [`gate`].
pub(crate) fn exit_code(report: &AuditReport, fail_on: FailOn) -> ExitCode {
    let only_input_misses = report.coverage.not_audited.iter().all(|n| n.enable.is_some());
    if report.nothing_audited() && only_input_misses {
        eprintln!("engine-audit: no deployment could be audited");
        return ExitCode::from(2);
    }
    gate(report, fail_on)
}

/// Exit 1 when a deployment went unaudited and its engine is not
/// acknowledged (fail closed: what was not read is not clean), or when a
/// finding is at or above `--fail-on`.
pub(crate) fn gate(report: &AuditReport, fail_on: FailOn) -> ExitCode {
    let unacknowledged: Vec<&crate::finding::NotAudited> = report.coverage.unacknowledged().collect();
    if !unacknowledged.is_empty() && fail_on != FailOn::Never {
        let mut engines: Vec<String> = unacknowledged.iter().map(|n| n.engine.clone()).collect();
        engines.sort();
        engines.dedup();
        eprintln!(
            "engine-audit: {} deployment(s) not audited ({}); the run fails until they are audited or acknowledged with --allow-unaudited {}",
            unacknowledged.len(),
            report.coverage.line(),
            engines.join(" --allow-unaudited ")
        );
        return ExitCode::from(1);
    }
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
