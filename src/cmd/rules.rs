//! `engine-audit rules list|explain|test`.

use super::output::{emit, emit_json};
use crate::cli::{ListFormat, RulesCommand};
use crate::report::docs;
use crate::rules::{load_rules, run_self_tests, selftest, Rule};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

fn load(dirs: &[PathBuf]) -> miette::Result<Vec<Rule>> {
    load_rules(dirs).map_err(miette::Report::new)
}

pub(crate) fn run(command: RulesCommand) -> miette::Result<ExitCode> {
    match command {
        RulesCommand::List { rules: args, format: ListFormat::Json } => {
            let base = docs_base()?;
            let rules = load(&args.dirs)?;
            emit_json(&rules.iter().map(|r| record(r, &base, false)).collect::<Vec<_>>())?;
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::List { rules: args, format: ListFormat::Text } => {
            let mut out = String::new();
            for r in load(&args.dirs)? {
                out.push_str(&format!("{}  {:<7}  {:<40} {}\n", r.spec.id, r.spec.severity.as_str(), r.spec.name, r.spec.title));
            }
            emit(&out);
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Explain { id, rules } => explain(&id, &rules.dirs, ListFormat::Text),
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

/// The docs base: the config's `docs_url` (found from the working folder), else this version's tag.
fn docs_base() -> miette::Result<String> {
    Ok(crate::config::Config::locate(None, std::env::current_dir().ok().as_deref())?.docs_url())
}

/// One rule as `rules list --format json` and `explain R001 --format json` write it.
#[derive(Serialize)]
struct RuleRecord<'a> {
    id: &'a str,
    name: &'a str,
    severity: &'static str,
    /// The engine profile id whose deployments and source it is about (`sglang`, `vllm`).
    engine: &'a str,
    title: &'a str,
    /// The absolute page of a built-in rule; the file's path for a `--rules DIR` rule.
    doc: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    docs: Option<&'a str>,
}

fn record<'a>(r: &'a Rule, base: &str, with_docs: bool) -> RuleRecord<'a> {
    RuleRecord {
        id: &r.spec.id,
        name: &r.spec.name,
        severity: r.spec.severity.as_str(),
        engine: &r.spec.engine,
        title: &r.spec.title,
        doc: docs::link(base, &r.doc_path()),
        docs: with_docs.then_some(r.spec.docs.as_str()),
    }
}

/// A rule's page: what it catches, why (the upstream mechanism), and its file.
pub(crate) fn explain(id: &str, dirs: &[PathBuf], format: ListFormat) -> miette::Result<ExitCode> {
    let rules = load(dirs)?;
    let rule = rules
        .iter()
        .find(|r| r.spec.id.eq_ignore_ascii_case(id))
        .ok_or_else(|| miette::miette!(help = "engine-audit rules list", "no rule `{id}`"))?;
    if format == ListFormat::Json {
        emit_json(&record(rule, &docs_base()?, true))?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = &rule.spec;
    let versions = s.versions.as_ref().map(|v| format!("target versions: {}\n", v.0)).unwrap_or_default();
    emit(&format!(
        "# {} {}\n\n{}\n\nseverity: {} · engine: {} · file: {}\n{versions}evidence predicates: {} (all must hold at the target ref)\n\n{}\n",
        s.id,
        s.name,
        s.title,
        s.severity.as_str(),
        s.engine,
        rule.doc_path(),
        s.evidence.len(),
        s.docs.trim_end()
    ));
    Ok(ExitCode::SUCCESS)
}
