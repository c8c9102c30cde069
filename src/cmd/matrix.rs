//! `engine-audit matrix`: load recipes once, open the engines once, audit
//! every release in the window, print the matrix.

use super::audit::{audit_with, load, policy, Inputs};
use super::engines::audit_sources;
use super::output::emit;
use crate::audit::master_links::Apply;
use crate::audit::{AuditOptions, Engines};
use crate::cli::{GateArgs, MatrixArgs, MatrixFormat};
use crate::config::Config;
use crate::gate::FailOn;
use crate::matrix::{self, Reload, Render, RenderOptions, Window};
use crate::recipe;
use std::process::ExitCode;

pub(crate) fn run(args: MatrixArgs) -> miette::Result<ExitCode> {
    let start = args.paths.first().or(args.master.as_ref()).cloned().or_else(|| std::env::current_dir().ok());
    let config = Config::locate(args.config.as_deref(), start.as_deref())?;
    let inputs = resolve_inputs(&args, &config)?;
    let (files, unread) = {
        let _recipes = crate::trace::span(|| "matrix: recipes".into());
        load(&inputs)
    };
    let mut engines = Engines::open(&inputs.opts)?;
    let window = Window {
        since: args.since.clone(),
        until: args.until.clone(),
        pre: args.pre,
        dynamo_from: args.dynamo_from.clone(),
        dynamo_to: args.dynamo_to.clone(),
    };
    let mut audit_at = |files: &[recipe::RecipeFile], opts: &AuditOptions, engines: &mut Engines| {
        audit_with(files, unread.clone(), opts, &inputs.policy, engines)
    };
    let how = if inputs.master.is_some() { Apply::Selectors } else { Apply::ImagesOnly };
    let reload = Reload { mapping: inputs.mapping.clone(), how, key: inputs.key.clone() };
    let fix = args.fix.then_some(&reload);
    let m = matrix::compute(&files, &inputs.opts, &mut engines, &window, fix, &mut audit_at)?;
    let renderer: &dyn Render = match args.format {
        MatrixFormat::Text => &matrix::Text,
        MatrixFormat::Json => &matrix::Json,
        MatrixFormat::Markdown => &matrix::Markdown,
        MatrixFormat::Html => &matrix::Html,
    };
    emit(&renderer.render(&m, &RenderOptions { max_chars: args.max_chars }));
    let rows: usize = m.engines.iter().map(|e| e.rows.len()).sum();
    engines.finish();
    // Nothing placed against any release: bad input, as for `audit`.
    Ok(if rows == 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

/// The recipes, engine sources, rules and policy, as `audit` resolves them.
fn resolve_inputs(args: &MatrixArgs, config: &Config) -> miette::Result<Inputs> {
    let paths = super::audit::recipe_paths(&args.paths, args.master.is_some(), config, "nothing to put in the matrix")?;
    let base = audit_sources(&args.sources, config);
    if !base.has_sources() {
        return Err(miette::miette!(
            help = "pass --sglang, --vllm or --atom PATH|URL (a git clone or URL: its release tags are the columns)",
            "no engine source given"
        ));
    }
    let gate = GateArgs { ignore: args.ignore.clone(), ..GateArgs::default() };
    let rules = crate::rules::load_rules(&config.rule_dirs(&args.rules)).map_err(miette::Report::new)?;
    let opts = AuditOptions { master_key: args.key.clone(), allow_unaudited: super::audit::allow_unaudited(&gate, config), rules, ..base };
    let walk = recipe::Walk::excluding(&config.root, &config.file.exclude).map_err(|e| {
        miette::miette!(help = "globs are relative to the config's folder: `benchmarks/old/**`", "`exclude` in the config: {e}")
    })?;
    Ok(Inputs {
        paths,
        master: args.master.clone(),
        key: args.key.clone(),
        mapping: config.link_mapping(args.recipes_dir.as_deref()),
        opts,
        policy: policy(&gate, config),
        fail_on: FailOn::Error,
        walk,
    })
}
