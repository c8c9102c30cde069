//! `engine-audit explain CODE`: the doc page behind a finding (ruff's `rule`).

use super::output::emit;
use crate::cli::ExplainArgs;
use crate::codes::{Code, CATALOG};
use std::process::ExitCode;

pub(crate) fn run(args: ExplainArgs) -> miette::Result<ExitCode> {
    let Some(wanted) = args.code else {
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
        emit(page);
        return Ok(ExitCode::SUCCESS);
    }
    if wanted.to_ascii_uppercase().starts_with('R') {
        return super::rules::explain(&wanted, &[]);
    }
    Err(miette::miette!(help = "run `engine-audit explain` for the list of codes", "unknown code `{wanted}`"))
}
