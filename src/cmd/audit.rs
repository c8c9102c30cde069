//! `engine-audit audit`: load recipes, run the audit, print, and gate.

use super::engines::open_options;
use super::output::emit;
use crate::audit::{self, AuditOptions, AuditReport};
use crate::cli::{AuditArgs, AuditFormat, FailOn};
use crate::codes::Severity;
use crate::recipe::{self, LinkMapping};
use crate::report;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(args: AuditArgs) -> miette::Result<ExitCode> {
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
    match args.format {
        AuditFormat::Text => emit(&report::text::render(&result)),
        AuditFormat::Json => emit(&report::json::render(&result)),
    }
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
