//! Command-line interface: argument types and dispatch. Each subcommand's work
//! lives in `cmd/`; this file only says what can be asked.

use crate::cmd;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "engine-audit",
    version,
    about = "Before bumping SGLang or Dynamo: what in your deployment recipes will break, silently change, or crash."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Audit recipes against an engine bump: what breaks, silently changes, or crashes.
    Audit(AuditArgs),
    /// Extract one engine release's surface: flags, env vars, modules, classes, pins.
    Surface(SurfaceArgs),
    /// The changelog a bump reviewer wants between two refs of one engine.
    Diff(DiffArgs),
    /// Build small engine repos and recipes from the bundled fixtures and audit them.
    Demo(DemoArgs),
    /// The fact cache (extracted engine facts reused across runs): its size, or empty it.
    Cache(CacheArgs),
}

#[derive(Args, Debug)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Subcommand, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheAction {
    /// Where the cache is, how many entries and bytes it holds, and its limit.
    Stats,
    /// Remove every entry.
    Clear,
}

/// Where engine source comes from.
#[derive(Args, Debug, Clone, Default)]
pub struct EngineSources {
    /// SGLang source: a git clone (bare or not), a plain package folder, or a URL.
    #[arg(long, value_name = "PATH|URL")]
    pub sglang: Option<String>,
    /// Dynamo source: a git clone (bare or not), a plain package folder, or a URL.
    #[arg(long, value_name = "PATH|URL")]
    pub dynamo: Option<String>,
    /// Package folder of SGLang inside its tree (default: python/sglang or sglang).
    #[arg(long, value_name = "DIR")]
    pub sglang_root: Option<String>,
    /// Package folder of Dynamo inside its tree (default: components/src/dynamo or dynamo).
    #[arg(long, value_name = "DIR")]
    pub dynamo_root: Option<String>,
    /// Never touch the network; a ref missing from a cached clone is an error.
    #[arg(long)]
    pub offline: bool,
    /// Where URL clones are cached (default: $XDG_CACHE_HOME/engine-audit/repos).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Neither read nor write the fact cache ($ENGINE_AUDIT_CACHE_DIR, else $XDG_CACHE_HOME/engine-audit/facts).
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineName {
    Sglang,
    Dynamo,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceFormat {
    Json,
    Text,
}

#[derive(Args, Debug)]
pub struct SurfaceArgs {
    #[command(flatten)]
    pub sources: EngineSources,
    /// Which engine to extract (default: the one whose source is given).
    #[arg(long, value_enum)]
    pub engine: Option<EngineName>,
    /// The ref to read: tag, bare version, branch or sha (ignored for plain folders).
    #[arg(long, value_name = "REF")]
    pub at: Option<String>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: SurfaceFormat,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    #[command(flatten)]
    pub sources: EngineSources,
    #[arg(long, value_enum)]
    pub engine: Option<EngineName>,
    /// The ref deployed today.
    #[arg(long, value_name = "REF")]
    pub from: String,
    /// The ref to bump to.
    #[arg(long, value_name = "REF")]
    pub to: String,
    #[arg(long, value_enum, default_value = "text")]
    pub format: DiffFormat,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditFormat {
    Text,
    Json,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Recipe files or folders (searched recursively for .yaml, .yml, .sh).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub sources: EngineSources,
    /// SGLang ref deployed today (default: from each recipe's container image).
    #[arg(long, value_name = "REF")]
    pub from: Option<String>,
    /// SGLang ref to bump to (default: the current one: audit recipes as they are).
    #[arg(long, value_name = "REF")]
    pub to: Option<String>,
    /// Dynamo ref deployed today (default: each recipe's `dynamo:` hash, version or wheel).
    #[arg(long, value_name = "REF")]
    pub dynamo_from: Option<String>,
    /// Dynamo ref to bump to (default: the current one).
    #[arg(long, value_name = "REF")]
    pub dynamo_to: Option<String>,
    /// A master config (`configs/*-master.yaml`) whose entries are checked against the recipes they link.
    #[arg(long, value_name = "FILE")]
    pub master: Option<PathBuf>,
    /// Only this master-config key; with no PATHS, audits the recipes it links.
    #[arg(long, value_name = "KEY", requires = "master")]
    pub key: Option<String>,
    /// Where master-config links (`recipes/...`) point, relative to the recipes repo root.
    #[arg(long, value_name = "DIR", default_value = "benchmarks/multi_node/srt-slurm-recipes")]
    pub recipes_dir: String,
    #[arg(long, value_enum, default_value = "text")]
    pub format: AuditFormat,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value = "error")]
    pub fail_on: FailOn,
    /// Drop findings with this code (repeatable).
    #[arg(long, value_name = "CODE")]
    pub ignore: Vec<String>,
    /// Extra risk-rule folders, on top of the built-in rules (repeatable).
    #[arg(long, value_name = "DIR")]
    pub rules: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Keep the generated repos and recipes in this folder instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// Parse arguments, run, and map the outcome to the documented exit codes:
/// 0 clean, 1 findings at/above `--fail-on`, 2 bad input or usage.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let no_cache = match &cli.command {
        Command::Audit(a) => a.sources.no_cache,
        Command::Surface(a) => a.sources.no_cache,
        Command::Diff(a) => a.sources.no_cache,
        Command::Demo(_) | Command::Cache(_) => false,
    };
    if no_cache {
        crate::cache::FactCache::disable_default();
    }
    let result = match cli.command {
        Command::Audit(args) => cmd::audit::run(args),
        Command::Surface(args) => cmd::surface::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Cache(args) => cmd::cache::run(args),
    };
    match result {
        Ok(code) => code,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
