//! `engine-audit audit`: load recipes, run the audit, print, and gate; with
//! `--fix`, apply the mechanical fixes, print the diff and audit again.

use super::engines::audit_sources;
use super::output::emit;
use crate::audit::{self, AuditOptions, AuditReport};
use crate::check;
use crate::cli::{AuditArgs, GateArgs, ReportArgs};
use crate::config::Config;
use crate::gate::{exit_code, gate, FailOn};
use crate::recipe::{self, LinkMapping, RecipeError, RecipeFile};
use crate::report::{self, Finding};
use crate::source::is_url;
use crate::suppress::{self, Policy};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Everything one audit run reads, resolved from flags and the config file.
pub(super) struct Inputs {
    pub(super) paths: Vec<PathBuf>,
    pub(super) master: Option<PathBuf>,
    pub(super) key: Option<String>,
    pub(super) mapping: LinkMapping,
    pub(super) opts: AuditOptions,
    pub(super) policy: Policy,
    pub(super) fail_on: FailOn,
    /// What folder walks skip (`.gitignore`, hidden, vendored, the config's `exclude:`).
    pub(super) walk: recipe::Walk,
}

pub(crate) fn run(args: AuditArgs) -> miette::Result<ExitCode> {
    check_report_args(&args.report)?;
    // The config governs the recipes: found from the first one, else (no paths:
    // the config's `recipe_roots`) from the working directory.
    let start = args.paths.first().or(args.master.as_ref()).cloned().or_else(|| std::env::current_dir().ok());
    let config = Config::locate(args.gate.config.as_deref(), start.as_deref())?;
    let load_inputs = || -> miette::Result<_> {
        let _loading = crate::trace::span(|| "audit: config, rules, recipes".into());
        let mut inputs = resolve_inputs(&args, &config)?;
        // The rules parse while the recipes load: neither needs the other.
        let (rules, (files, load_errors)) = rayon::join(
            || crate::rules::load_rules(&config.rule_dirs(&args.rules)),
            || {
                let _recipes = crate::trace::span(|| "  recipes".into());
                load(&inputs)
            },
        );
        inputs.opts.rules = rules.map_err(miette::Report::new)?;
        Ok((inputs, files, load_errors))
    };
    // Local engines open while the rules and recipes load: neither needs the
    // other. A URL may mean a clone, started only once the inputs are known good.
    let sources = engine_options(&args, &config)?;
    let (inputs, files, load_errors, mut engines) = if sources.sources.values().any(|s| is_url(&s.spec)) {
        let (inputs, files, load_errors) = load_inputs()?;
        let engines = audit::Engines::open(&inputs.opts)?;
        (inputs, files, load_errors, engines)
    } else {
        let (loaded, engines) = rayon::join(load_inputs, || audit::Engines::open(&sources));
        let (inputs, files, load_errors) = loaded?;
        (inputs, files, load_errors, engines?)
    };
    let mut result = audit_files(&files, load_errors, &inputs, &mut engines)?;
    let render = render_options(&args.report, &inputs.opts, &config, &args.ci);
    if args.fix {
        return fix(&args, &inputs, &files, result, &render);
    }
    super::ci::baselines(&mut result, &args.ci, &render)?;
    let rendering = crate::trace::span(|| "audit: render".into());
    write_reports(&result, &args.report, &render)?;
    drop(rendering);
    if args.ci.statistics {
        eprint!("{}", super::ci::statistics(&result));
    }
    let code = exit_for(&args, &result, inputs.fail_on);
    // The process ends here: freeing every tree listing, surface and recipe one
    // allocation at a time is work nobody waits for (as compilers skip it too).
    engines.finish();
    std::mem::forget((files, result));
    Ok(code)
}

/// The exit code. A pre-commit hook is handed every staged YAML and shell file,
/// most of them no recipe: as for `pr`, a change with nothing to audit passes.
fn exit_for(args: &AuditArgs, result: &AuditReport, fail_on: FailOn) -> ExitCode {
    if args.hook {
        gate(result, fail_on)
    } else {
        exit_code(result, fail_on)
    }
}

/// Everything an audit needs from the flags and the config, except the rules
/// The recipe paths given, else the config's `recipe_roots`; none (and no
/// `--master`) is an error that says `nothing`.
pub(super) fn recipe_paths(given: &[PathBuf], master: bool, config: &Config, nothing: &str) -> miette::Result<Vec<PathBuf>> {
    let paths = if given.is_empty() && !master { config.recipe_roots() } else { given.to_vec() };
    if paths.is_empty() && !master {
        return Err(miette::miette!(
            help = "pass recipe files or folders, --master FILE --key KEY, or set `recipe_roots` in .engine-audit.yaml",
            "{nothing}"
        ));
    }
    Ok(paths)
}

/// (loaded by the caller beside the recipes): flags first, then the config
/// file, then the built-in defaults.
fn resolve_inputs(args: &AuditArgs, config: &Config) -> miette::Result<Inputs> {
    let mapping = config.link_mapping(args.recipes_dir.as_deref());
    let paths = recipe_paths(&args.paths, args.master.is_some(), config, "nothing to audit")?;
    let base = engine_options(args, config)?;
    if !base.has_sources() {
        return Err(miette::miette!(
            help =
                "pass --sglang, --vllm, --atom or --trtllm PATH|URL (and --dynamo PATH|URL for the Dynamo checks), or set them in .engine-audit.yaml",
            "no engine source given"
        ));
    }
    let opts = AuditOptions { master_key: args.key.clone(), allow_unaudited: allow_unaudited(&args.gate, config), ..base };
    let walk = recipe::Walk::excluding(&config.root, &config.file.exclude).map_err(|e| {
        miette::miette!(help = "globs are relative to the config's folder: `benchmarks/old/**`", "`exclude` in the config: {e}")
    })?;
    Ok(Inputs {
        paths,
        master: args.master.clone(),
        key: args.key.clone(),
        mapping,
        opts,
        policy: policy(&args.gate, config),
        fail_on: fail_on(&args.gate, config),
        walk,
    })
}

/// The engine sources and the refs given as flags: what opening the engines needs.
fn engine_options(args: &AuditArgs, config: &Config) -> miette::Result<AuditOptions> {
    let opts = audit_sources(&args.sources, config)
        .with_own_refs(&crate::profiles::VLLM, args.vllm_from.clone(), args.vllm_to.clone())
        .with_own_refs(&crate::profiles::ATOM, args.atom_from.clone(), args.atom_to.clone())
        .with_own_refs(&crate::profiles::TRTLLM, args.trtllm_from.clone(), args.trtllm_to.clone())
        .with_server_refs(args.from.clone(), args.to.clone())
        .map_err(|e| {
            miette::miette!(
                help = "name vLLM's refs with --vllm-from/--vllm-to, ATOM's with --atom-from/--atom-to and TensorRT-LLM's with --trtllm-from/--trtllm-to, or pass one engine's source",
                "{e}"
            )
        })?;
    Ok(opts.with_refs(&crate::profiles::DYNAMO, args.dynamo_from.clone(), args.dynamo_to.clone()))
}

/// `--ignore` adds to the config's `ignore`; severities come from the config.
pub(crate) fn policy(gate: &GateArgs, config: &Config) -> Policy {
    let mut ignore = config.file.ignore.clone();
    ignore.extend(gate.ignore.iter().cloned());
    Policy { ignore, severity: config.file.severity.clone() }
}

/// `--allow-unaudited` adds to the config's `allow_unaudited`.
pub(crate) fn allow_unaudited(gate: &GateArgs, config: &Config) -> std::collections::BTreeSet<String> {
    config.file.allow_unaudited.iter().chain(&gate.allow_unaudited).cloned().collect()
}

pub(crate) fn fail_on(gate: &GateArgs, config: &Config) -> FailOn {
    gate.fail_on.or(config.file.fail_on).unwrap_or(FailOn::Error)
}

/// The recipe files to audit: the paths, or with `--master` and no paths, the
/// recipes the master config links (plus the master config itself); and an
/// EA305 for every file asked for that could not be read (each also printed
/// as a diagnostic with its excerpt).
pub(super) fn load(inputs: &Inputs) -> (Vec<RecipeFile>, Vec<Finding>) {
    let mut paths = inputs.paths.clone();
    let mut files = Vec::new();
    let mut unread = Vec::new();
    let mut errors = Vec::new();
    if let Some(master) = &inputs.master {
        match recipe::load_path_with(master, &inputs.mapping) {
            Ok(file) => {
                if paths.is_empty() {
                    let (found, missing) = linked_recipes(master, &file, inputs.key.as_deref());
                    paths = found;
                    unread.extend(missing);
                }
                files.push(file);
            }
            Err(e) => errors.push(e),
        }
    }
    let (loaded, more) = recipe::collect_walking(&paths, &inputs.mapping, &inputs.walk);
    files.extend(loaded);
    errors.extend(more);
    // Through `--master`, the key runs what its links select; a master config
    // among the files given still says which image an alias stands for.
    let how = if inputs.master.is_some() { audit::master_links::Apply::Selectors } else { audit::master_links::Apply::ImagesOnly };
    unread.extend(audit::master_links::apply(&mut files, inputs.key.as_deref(), how));
    if inputs.master.is_none() {
        audit::master_links::resolve_aliases_from_found(&mut files, &inputs.mapping);
    }
    for e in errors {
        unread.push(check::unreadable::unreadable(&e));
        eprintln!("{:?}", miette::Report::new(e));
    }
    (files, unread)
}

/// Audit, add the files that could not be read, apply the policy.
fn audit_files(files: &[RecipeFile], unread: Vec<Finding>, inputs: &Inputs, engines: &mut audit::Engines) -> miette::Result<AuditReport> {
    audit_with(files, unread, &inputs.opts, &inputs.policy, engines)
}

/// [`audit_files`] with options of its own (the matrix's, one release at a time).
pub(super) fn audit_with(
    files: &[RecipeFile],
    unread: Vec<Finding>,
    opts: &AuditOptions,
    policy: &Policy,
    engines: &mut audit::Engines,
) -> miette::Result<AuditReport> {
    let mut result = audit::run_with(files, opts, engines)?;
    result.coverage.unreadable += unread.len();
    result.findings.extend(unread);
    crate::finding::normalize(&mut result.findings);
    suppress::apply(&mut result, files, policy);
    Ok(result)
}

/// `--fix`: print the diff (on stderr when stdout carries a machine format), and
/// unless `--dry-run`, write the files and audit them again: the report and the
/// exit code are about the recipes as fixed. A file that could not be written
/// makes the exit code 2; one left alone by design (a symlink, a CR-only file) is a note.
fn fix(
    args: &AuditArgs,
    inputs: &Inputs,
    files: &[RecipeFile],
    result: AuditReport,
    render: &report::RenderOptions,
) -> miette::Result<ExitCode> {
    let plan = crate::fix::screen(crate::fix::plan(&result.findings, files), &fix_roots(inputs));
    let diff: String = plan.patches.iter().map(|p| p.diff()).collect();
    let text_on_stdout = args.report.output_dir.is_some() || args.report.format.iter().all(|f| f.report_format() == report::Format::Text);
    if args.dry_run || text_on_stdout {
        emit(&diff);
    } else {
        eprint!("{diff}");
    }
    for r in &plan.rejected {
        eprintln!("engine-audit: {}:{}: {} `{}` not fixed: {}", r.path, r.line, r.code, r.subject, r.reason);
    }
    let mut not_written = report_fix_errors(plan.skipped);
    let fixes: usize = plan.patches.iter().map(|p| p.fixes).sum();
    if args.dry_run {
        eprintln!("engine-audit: --dry-run: {fixes} fix(es) in {} file(s) not written", plan.patches.len());
        return Ok(exit_for(args, &result, inputs.fail_on));
    }
    let applied = crate::fix::apply(&plan.patches);
    // A file that passed the screen and then could not be written failed,
    // whatever the reason (it became a symlink meanwhile).
    not_written += applied.failures.len();
    report_fix_errors(applied.failures);
    let unwritten = if not_written > 0 { format!("; {not_written} file(s) not written") } else { String::new() };
    eprintln!("engine-audit: applied {} fix(es) to {} file(s){unwritten}; auditing again", applied.fixes, applied.files);
    let (files, load_errors) = load(inputs);
    // Engines opened afresh: a surface is extracted for the demand of the recipes
    // that asked first (their env names), and the fixed recipes may ask others.
    let mut again = audit_files(&files, load_errors, inputs, &mut audit::Engines::open(&inputs.opts)?)?;
    super::ci::baselines(&mut again, &args.ci, render)?;
    write_reports(&again, &args.report, render)?;
    Ok(if not_written > 0 { ExitCode::from(2) } else { exit_for(args, &again, inputs.fail_on) })
}

/// Print why files are not fixed: a failure as a diagnostic, a file left alone
/// by design as a one-line note. Returns the number of failures.
fn report_fix_errors(errors: Vec<crate::fix::FixError>) -> usize {
    let mut failures = 0;
    for e in errors {
        if e.is_failure() {
            failures += 1;
            eprintln!("{:?}", miette::Report::new(e));
        } else {
            eprintln!("engine-audit: {e}");
        }
    }
    failures
}

/// The folders `--fix` may write in: each folder given, the folder of each file
/// given, and with `--master` the recipes repo its links resolve against.
fn fix_roots(inputs: &Inputs) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> =
        inputs.paths.iter().map(|p| if p.is_dir() { p.clone() } else { crate::fix::disk::folder_of(p).to_path_buf() }).collect();
    if let Some(master) = &inputs.master {
        roots.push(recipes_root(master).to_path_buf());
    }
    roots
}

/// The recipes repo root of a master config: the folder above the nearest
/// `configs/` it is in (`configs/deprecated/x-master.yaml` links as
/// `configs/x-master.yaml` does), else the master's own folder (as
/// `linked_recipes` resolves links).
fn recipes_root(master: &Path) -> &Path {
    match master.ancestors().skip(1).find(|p| p.file_name().is_some_and(|n| n == "configs")) {
        Some(configs) => crate::fix::disk::folder_of(configs),
        None => crate::fix::disk::folder_of(master),
    }
}

/// The recipe files a master config links (for `--key`, that key's only), found
/// relative to the recipes repo root: the folder above `configs/`. A linked file
/// that is not there, or that resolves outside that root, is an EA305 on the
/// link, not a silent gap.
fn linked_recipes(master: &Path, file: &recipe::RecipeFile, key: Option<&str>) -> (Vec<PathBuf>, Vec<Finding>) {
    let Some(config) = &file.master else { return (Vec::new(), Vec::new()) };
    let root = recipes_root(master);
    let mut found: Vec<PathBuf> = Vec::new();
    let mut missing = Vec::new();
    for entry in config.entries.iter().filter(|e| key.is_none_or(|k| e.key.value == k)) {
        // A script is found by name, as the runner finds it: the first
        // candidate that exists. None existing is said by `check_masters`.
        if let Some(link) = &entry.model_table {
            let path = root.join(&link.table);
            match recipe::read_confined(root, &path) {
                Ok(_) => found.push(path),
                Err(reason) => {
                    let error = RecipeError::Io {
                        path: path.display().to_string(),
                        message: format!("the model table `{}` runs `{}` from: {reason}", entry.key.value, link.model.value),
                    };
                    missing.push(check::unreadable::unreadable(&error));
                }
            }
        }
        for script in &entry.scripts {
            if let Some(path) = script.paths.iter().map(|p| root.join(p)).find(|p| recipe::read_confined(root, p).is_ok()) {
                found.push(path);
            }
        }
        for link in &entry.links {
            let Some(target) = &link.recipe else { continue };
            let path = root.join(target);
            match recipe::read_confined(root, &path) {
                Ok(_) => found.push(path),
                Err(_) if !path.exists() => missing.push(check::unreadable::missing_link(&entry.key.value, link, target)),
                Err(reason) => {
                    let error =
                        RecipeError::Io { path: path.display().to_string(), message: format!("linked by `{}`: {reason}", entry.key.value) };
                    missing.push(check::unreadable::unreadable(&error));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    (found, missing)
}

/// Several formats at once are written to files.
pub(crate) fn check_report_args(out: &ReportArgs) -> miette::Result<()> {
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

/// How reports render for this run: links to engine repos given as URLs and to
/// the docs base, paths relative to the git top level, GitHub's limits.
pub(crate) fn render_options(out: &ReportArgs, opts: &AuditOptions, config: &Config, ci: &crate::cli::CiArgs) -> report::RenderOptions {
    let base = report::RenderOptions { lang: out.lang.lang(), ..Default::default() }.with_engine_sources(&opts.sources);
    let mut render = super::ci::render_options(base, config, ci, true);
    if let Some(dir) = &out.output_dir {
        render.full_report = Some(format!("in `{}`", dir.join(report::Format::Json.file_name()).display()));
    }
    render
}

/// Print the report in the format asked, or with `--output-dir` write one file per
/// format asked and print the text report.
pub(crate) fn write_reports(result: &AuditReport, out: &ReportArgs, opts: &report::RenderOptions) -> miette::Result<()> {
    let tty = report::RenderOptions { color: use_color(), ..opts.clone() };
    let Some(dir) = &out.output_dir else {
        let format = out.format.first().map(|f| f.report_format()).unwrap_or(report::Format::Text);
        emit(&format.render(result, if format == report::Format::Text { &tty } else { opts }));
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| miette::miette!("cannot create {}: {e}", dir.display()))?;
    let mut formats: Vec<report::Format> = out.format.iter().map(|f| f.report_format()).collect();
    formats.sort();
    formats.dedup();
    for format in formats {
        let path = dir.join(format.file_name());
        std::fs::write(&path, format.render(result, opts)).map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
    }
    emit(&report::Format::Text.render(result, &tty));
    Ok(())
}

/// Colour in the report on stdout: `--color`, `NO_COLOR`, `FORCE_COLOR`,
/// `CLICOLOR_FORCE`, else whether stdout is a terminal (`crate::color`).
pub(crate) fn use_color() -> bool {
    crate::color::chosen().stdout()
}
