//! Machine-readable report: `{"schema_version", "findings": [...], ...}` in a stable
//! order, every field of every finding. The schema is documented in
//! `docs/report-schema.md` (a test keeps the two in step).
//!
//! What depends on how the report is rendered is added here, not in the
//! finding's own serialisation: each finding's `fingerprint` (its path relative
//! to the repository) and the absolute `doc` links (the docs base).

use super::{docs, identity, RenderOptions};
use crate::codes::Severity;
use crate::finding::{AuditReport, BumpSummary, Coverage, FindingRecord, Problem};
use serde::Serialize;

/// Bumped whenever a field changes meaning or disappears (additions keep it).
/// 2: `doc` is an absolute URL (it was a path in engine-audit's repository).
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize)]
struct JsonReport<'a> {
    schema_version: u32,
    tool: &'static str,
    version: &'static str,
    findings: Vec<FindingRecord<'a>>,
    bumps: &'a [BumpSummary],
    notes: &'a [String],
    problems: &'a [Problem],
    deployments_audited: usize,
    master_entries_checked: usize,
    recipes: usize,
    suppressed: usize,
    rules: Vec<RuleRecord<'a>>,
    coverage: &'a Coverage,
}

#[derive(Serialize)]
struct RuleRecord<'a> {
    id: &'a str,
    name: &'a str,
    title: &'a str,
    severity: Severity,
    doc: String,
}

/// The JSON format.
pub(crate) struct Json;

impl super::Render for Json {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String {
        render(report, opts)
    }
}

fn render(report: &AuditReport, opts: &RenderOptions) -> String {
    // Every field named, none skipped with `..`: a field added to the report
    // does not compile until it is written here too.
    let AuditReport {
        findings,
        bumps,
        notes,
        problems,
        deployments_audited,
        master_entries_checked,
        recipes,
        suppressed,
        rules,
        coverage,
        sources: _,
        // Said by `bumps` and the findings' consumer facts.
        links_checked: _,
    } = report;
    let prints = identity::of_report(report, opts);
    let doc = JsonReport {
        schema_version: SCHEMA_VERSION,
        tool: "engine-audit",
        version: env!("CARGO_PKG_VERSION"),
        findings: findings.iter().zip(prints).map(|(f, print)| f.record().rendered(docs::link(&opts.docs_url, &f.doc()), print)).collect(),
        bumps,
        notes,
        problems,
        deployments_audited: *deployments_audited,
        master_entries_checked: *master_entries_checked,
        recipes: *recipes,
        suppressed: *suppressed,
        rules: rules
            .iter()
            .map(|r| RuleRecord {
                id: &r.id,
                name: &r.name,
                title: &r.title,
                severity: r.severity,
                doc: docs::link(&opts.docs_url, &r.doc),
            })
            .collect(),
        coverage,
    };
    let mut text = serde_json::to_string_pretty(&doc).expect("the report is plain data");
    text.push('\n');
    text
}
