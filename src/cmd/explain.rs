//! `engine-audit explain CODE`: the doc page behind a finding (ruff's `rule`).
//! `--format json` gives the catalog's facts and the page as data, with the
//! page's absolute link (an editor plugin or a bot shows it without this repository).

use super::output::{emit, emit_json};
use crate::cli::{ExplainArgs, ListFormat};
use crate::codes::{Code, CodeInfo, CATALOG};
use crate::report::docs;
use serde::Serialize;
use std::process::ExitCode;

/// One code as `explain --format json` writes it.
#[derive(Serialize)]
struct CodeRecord {
    code: &'static str,
    name: &'static str,
    severity: &'static str,
    area: &'static str,
    impact: crate::codes::Impact,
    summary: &'static str,
    doc: String,
    /// The page (markdown); only when one code is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<&'static str>,
}

fn record(info: &CodeInfo, base: &str, with_page: bool) -> CodeRecord {
    CodeRecord {
        code: info.id,
        name: info.name,
        severity: info.severity.as_str(),
        area: info.area.as_str(),
        impact: info.impact,
        summary: info.summary,
        doc: docs::link(base, &info.code.doc_path()),
        page: if with_page { info.code.doc_page() } else { None },
    }
}

pub(crate) fn run(args: ExplainArgs) -> miette::Result<ExitCode> {
    let base = crate::config::Config::locate(None, std::env::current_dir().ok().as_deref())?.docs_url();
    let Some(wanted) = args.code else {
        if args.format == ListFormat::Json {
            emit_json(&CATALOG.iter().map(|c| record(c, &base, false)).collect::<Vec<_>>())?;
            return Ok(ExitCode::SUCCESS);
        }
        let mut out = String::from("code   severity  name\n");
        for info in CATALOG {
            out.push_str(&format!("{:?}  {:<8}  {:<24} {}\n", info.code, info.severity.as_str(), info.name, info.summary));
        }
        out.push_str("\nRisk rules: engine-audit rules list\n");
        emit(&out);
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(code) = Code::parse(&wanted) {
        let page = code.doc_page().ok_or_else(|| miette::miette!("no doc page is shipped for {wanted}"))?;
        match args.format {
            ListFormat::Json => emit_json(&record(code.info(), &base, true))?,
            ListFormat::Text => emit(page),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if wanted.to_ascii_uppercase().starts_with('R') {
        return super::rules::explain(&wanted, &[], args.format);
    }
    Err(miette::miette!(help = "run `engine-audit explain` for the list of codes", "unknown code `{wanted}`"))
}
