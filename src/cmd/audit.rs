//! `engine-audit audit`: load recipes, run the audit, print, and gate.

use super::engines::open_options;
use super::output::emit;
use crate::audit::{self, AuditOptions, AuditReport};
use crate::cli::{AuditArgs, EngineSources, FailOn, ReportArgs};
use crate::codes::Severity;
use crate::recipe::{self, LinkMapping};
use crate::report;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(args: AuditArgs) -> miette::Result<ExitCode> {
    check_report_args(&args.report)?;
    let mapping = LinkMapping { link_prefix: "recipes/".into(), recipes_dir: args.recipes_dir.clone() };
    let mut paths: Vec<PathBuf> = args.paths.clone();
    let mut files = Vec::new();
    let mut load_errors = Vec::new();
    if let Some(master) = &args.master {
        match recipe::load_path_with(master, &mapping) {
            Ok(file) => {
                if paths.is_empty() {
                    paths = linked_recipes(master, &file, args.key.as_deref());
                }
                files.push(file);
            }
            Err(e) => load_errors.push(e),
        }
    }
    if paths.is_empty() && args.master.is_none() {
        return Err(miette::miette!(help = "pass recipe files or folders, or --master FILE --key KEY", "nothing to audit"));
    }
    let (loaded, errors) = recipe::collect_with(&paths, &mapping);
    files.extend(loaded);
    load_errors.extend(errors);
    if args.sources.sglang.is_none() && args.sources.dynamo.is_none() {
        return Err(miette::miette!(help = "pass --sglang PATH|URL (and --dynamo PATH|URL for the Dynamo checks)", "no engine source given"));
    }
    let opts = AuditOptions {
        sglang: args.sources.sglang.clone(),
        dynamo: args.sources.dynamo.clone(),
        sglang_root: args.sources.sglang_root.clone(),
        dynamo_root: args.sources.dynamo_root.clone(),
        open: open_options(&args.sources),
        from: args.from.clone(),
        to: args.to.clone(),
        dynamo_from: args.dynamo_from.clone(),
        dynamo_to: args.dynamo_to.clone(),
        master_key: args.key.clone(),
        rules: crate::rules::load_rules(&args.rules).map_err(miette::Report::new)?,
    };
    let mut result = audit::run(&files, &opts)?;
    for e in load_errors {
        result.problems.push(audit::Problem { path: e.path().to_string(), message: e.to_string() });
        eprintln!("{:?}", miette::Report::new(e));
    }
    result.findings.retain(|f| !args.ignore.iter().any(|c| c.eq_ignore_ascii_case(&f.code)));
    write_reports(&result, &args.report, &args.sources)?;
    if result.deployments_audited == 0 && files.iter().all(|f| f.master.is_none()) {
        eprintln!("engine-audit: no deployment could be audited");
        return Ok(ExitCode::from(2));
    }
    Ok(gate(&result, args.fail_on))
}

/// Exit 1 when a finding is at or above `--fail-on`.
pub fn gate(report: &AuditReport, fail_on: FailOn) -> ExitCode {
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

/// The recipe files a master config links (for `--key`, that key's only), found
/// relative to the recipes repo root: the folder above `configs/`.
fn linked_recipes(master: &std::path::Path, file: &recipe::RecipeFile, key: Option<&str>) -> Vec<PathBuf> {
    let Some(config) = &file.master else { return Vec::new() };
    let root = master
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "configs"))
        .and_then(|p| p.parent())
        .unwrap_or_else(|| master.parent().unwrap_or(std::path::Path::new(".")));
    let mut out: Vec<PathBuf> = config
        .entries
        .iter()
        .filter(|e| key.is_none_or(|k| e.key.value == k))
        .flat_map(|e| e.links.iter().filter_map(|l| l.recipe.as_ref()).map(|r| root.join(r)))
        .filter(|p| p.exists())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Several formats at once are written to files.
pub fn check_report_args(out: &ReportArgs) -> miette::Result<()> {
    let mut formats = out.format.clone();
    formats.sort();
    formats.dedup();
    if formats.len() > 1 && out.output_dir.is_none() {
        return Err(miette::miette!(
            help = "add --output-dir DIR: each format goes to its own file there, and the text report to stdout",
            "several formats ({}) need --output-dir",
            formats.iter().map(|f| f.report_format().file_name()).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(())
}

/// How reports render for this run: links to engine repos given as URLs, paths
/// relative to the current folder, colour on a terminal.
pub fn render_options(out: &ReportArgs, sources: &EngineSources) -> report::RenderOptions {
    report::RenderOptions {
        lang: out.lang.lang(),
        base_dir: std::env::current_dir().ok(),
        ..Default::default()
    }
    .with_engine_sources(sources.sglang.as_deref(), sources.dynamo.as_deref())
}

/// Print the report in the format asked, or with `--output-dir` write one file per
/// format asked and print the text report.
pub fn write_reports(result: &AuditReport, out: &ReportArgs, sources: &EngineSources) -> miette::Result<()> {
    let opts = render_options(out, sources);
    let tty = report::RenderOptions { color: use_color(), ..opts.clone() };
    let Some(dir) = &out.output_dir else {
        let format = out.format.first().map(|f| f.report_format()).unwrap_or(report::Format::Text);
        emit(&format.render(result, if format == report::Format::Text { &tty } else { &opts }));
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| miette::miette!("cannot create {}: {e}", dir.display()))?;
    let mut formats: Vec<report::Format> = out.format.iter().map(|f| f.report_format()).collect();
    formats.sort();
    formats.dedup();
    for format in formats {
        let path = dir.join(format.file_name());
        std::fs::write(&path, format.render(result, &opts)).map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
    }
    emit(&report::text::render(result, &tty));
    Ok(())
}

/// Colour only on a terminal, and never with `NO_COLOR` set (https://no-color.org).
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
