//! `engine-audit rules list|explain|test`.

use super::output::emit;
use crate::cli::RulesCommand;
use crate::rules::{load_rules, run_self_tests, selftest, Rule};
use std::path::PathBuf;
use std::process::ExitCode;

fn load(dirs: &[PathBuf]) -> miette::Result<Vec<Rule>> {
    load_rules(dirs).map_err(miette::Report::new)
}

pub(crate) fn run(command: RulesCommand) -> miette::Result<ExitCode> {
    match command {
        RulesCommand::List(args) => {
            let mut out = String::new();
            for r in load(&args.dirs)? {
                out.push_str(&format!("{}  {:<7}  {:<40} {}\n", r.spec.id, r.spec.severity.as_str(), r.spec.name, r.spec.title));
            }
            emit(&out);
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Explain { id, rules } => explain(&id, &rules.dirs),
        RulesCommand::Test { rules, corpus } => {
            let rules = load(&rules.dirs)?;
            let results = run_self_tests(&rules, corpus.as_deref());
            let mut out = String::new();
            for r in &results {
                out.push_str(&format!("{r}\n"));
            }
            out.push_str(&format!("{}\n", selftest::summary(&results)));
            emit(&out);
            Ok(if results.iter().any(|r| r.outcome.is_failure()) { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
    }
}

/// A rule's page: what it catches, why (the upstream mechanism), and its file.
pub(crate) fn explain(id: &str, dirs: &[PathBuf]) -> miette::Result<ExitCode> {
    let rules = load(dirs)?;
    let rule = rules
        .iter()
        .find(|r| r.spec.id.eq_ignore_ascii_case(id))
        .ok_or_else(|| miette::miette!(help = "engine-audit rules list", "no rule `{id}`"))?;
    let s = &rule.spec;
    let versions = s.versions.as_ref().map(|v| format!("target versions: {}\n", v.0)).unwrap_or_default();
    emit(&format!(
        "# {} {}\n\n{}\n\nseverity: {} · engine: sglang · file: {}\n{versions}evidence predicates: {} (all must hold at the target ref)\n\n{}\n",
        s.id,
        s.name,
        s.title,
        s.severity.as_str(),
        rule.doc_path(),
        s.evidence.len(),
        s.docs.trim_end()
    ));
    Ok(ExitCode::SUCCESS)
}
