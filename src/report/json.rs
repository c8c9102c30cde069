//! Machine-readable report: `{"schema_version", "findings": [...], ...}` in a stable
//! order, every field of every finding. The schema is documented in
//! `docs/report-schema.md` (a test keeps the two in step).

use super::RenderOptions;
use crate::finding::AuditReport;
use serde::Serialize;

/// Bumped whenever a field changes meaning or disappears (additions keep it).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonReport<'a> {
    schema_version: u32,
    tool: &'static str,
    version: &'static str,
    #[serde(flatten)]
    report: &'a AuditReport,
}

/// The JSON format.
pub(crate) struct Json;

impl super::Render for Json {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String {
        render(report, opts)
    }
}

fn render(report: &AuditReport, _opts: &RenderOptions) -> String {
    let doc = JsonReport { schema_version: SCHEMA_VERSION, tool: "engine-audit", version: env!("CARGO_PKG_VERSION"), report };
    let mut text = serde_json::to_string_pretty(&doc).expect("the report is plain data");
    text.push('\n');
    text
}
