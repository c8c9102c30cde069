//! One module per subcommand: read inputs, call the pipeline, print.

pub(crate) mod audit;
pub(crate) mod cache;
pub(crate) mod ci;
pub(crate) mod cli_docs;
pub mod demo;
pub(crate) mod diff;
pub(crate) mod engines;
pub(crate) mod explain;
pub(crate) mod matrix;
pub(crate) mod output;
pub(crate) mod pr;
pub(crate) mod pr_new;
pub(crate) mod rules;
pub(crate) mod schema;
pub(crate) mod show;
pub(crate) mod surface;

use crate::cli::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

/// Parse arguments, run, and map the outcome to the documented exit codes:
/// 0 clean, 1 findings at/above `--fail-on`, 2 bad input or usage.
pub fn main() -> ExitCode {
    // Spans' start offsets count from here.
    let _main = crate::trace::span(|| "main".into());
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    crate::color::choose(cli.color);
    let no_cache = match &cli.command {
        Command::Audit(a) => a.sources.no_cache,
        Command::Surface(a) => a.sources.no_cache,
        Command::Matrix(a) => a.sources.no_cache,
        Command::Diff(a) => a.sources.no_cache,
        Command::Pr(a) => a.sources.no_cache,
        Command::Demo(_)
        | Command::Cache(_)
        | Command::Explain(_)
        | Command::Rules(_)
        | Command::Show(_)
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Schema(_) => false,
    };
    if no_cache {
        crate::cache::FactCache::disable_default();
    }
    let result = match cli.command {
        Command::Audit(args) => audit::run(args),
        Command::Surface(args) => surface::run(args),
        Command::Matrix(args) => matrix::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Rules(command) => rules::run(command),
        Command::Pr(args) => pr::run(args),
        Command::Cache(args) => cache::run(args),
        Command::Show(args) => show::run(args),
        Command::Completions(args) => cli_docs::completions(args),
        Command::Man(args) => cli_docs::man(args),
        Command::Schema(args) => schema::run(args),
    };
    match result {
        Ok(code) => code,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
