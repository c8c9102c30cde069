//! Command-line interface: argument types and dispatch. Each subcommand's work
//! lives in `cmd/`; this file only says what can be asked.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "engine-audit",
    version = crate::build_info::LONG_VERSION,
    about = "Before bumping SGLang, vLLM or Dynamo: what in your deployment recipes will break, silently change, or crash."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour in reports and error messages: auto (a terminal, unless NO_COLOR;
    /// FORCE_COLOR or CLICOLOR_FORCE force it), always or never.
    #[arg(long, value_enum, global = true, default_value = "auto")]
    pub color: crate::color::ColorChoice,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Audit recipes against an engine bump: what breaks, silently changes, or crashes.
    Audit(AuditArgs),
    /// Every deployment against every release from its current one: the newest safe
    /// target and the first break of each (docs/matrix.md).
    Matrix(MatrixArgs),
    /// Extract one engine release's surface: flags, env vars, modules, classes, pins.
    Surface(SurfaceArgs),
    /// The changelog a bump reviewer wants between two refs of one engine.
    Diff(DiffArgs),
    /// Build small engine repos and recipes from the bundled fixtures and audit them.
    Demo(DemoArgs),
    /// Print the doc page of a finding code (EA003) or a risk rule (R001).
    Explain(ExplainArgs),
    /// List, explain and self-test the risk rules.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// CI gate for a recipes PR: audit what changed between two commits of the recipes repo.
    Pr(PrArgs),
    /// The fact cache (extracted engine facts reused across runs): its size, or empty it.
    Cache(CacheArgs),
    /// What the audit reads from recipes: every launch, flag and env var with its
    /// value, place and path condition, and what could not be read.
    Show(ShowArgs),
    /// Print a shell completion script: `engine-audit completions bash > /etc/bash_completion.d/engine-audit`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a folder.
    Man(ManArgs),
    /// Print the JSON Schema of `.engine-audit.yaml` (config) or of a risk rule
    /// file (rule), for editors; `surface --format json-schema` writes one for recipes.
    Schema(SchemaArgs),
}

#[derive(Args, Debug)]
pub(crate) struct SchemaArgs {
    /// Which file's schema.
    #[arg(value_enum)]
    pub name: crate::schema::SchemaName,
}

#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// Write engine-audit.1 and a page per subcommand (engine-audit-audit.1, ...) here
    /// instead of printing engine-audit.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShowFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct ShowArgs {
    /// Recipe files or folders (walked for .yaml, .yml and .sh files).
    #[arg(required = true, value_name = "RECIPE")]
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ShowFormat,
}

#[derive(Args, Debug)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub(crate) enum CacheAction {
    /// Both caches: the fact cache (where, entries, bytes, limit) and the
    /// clone cache (each clone's URL, size and last fetch).
    Stats {
        /// Where URL clones are cached (default: $XDG_CACHE_HOME/engine-audit/repos).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Remove every fact cache entry; with --clones the engine clones instead,
    /// with --all both (the next run clones again).
    Clear {
        /// Remove the URL clones (only folders engine-audit made), not the facts.
        #[arg(long, conflicts_with = "all")]
        clones: bool,
        /// Remove the facts and the clones.
        #[arg(long)]
        all: bool,
        /// Where URL clones are cached (default: $XDG_CACHE_HOME/engine-audit/repos).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
}

/// Where engine source comes from.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct EngineSources {
    /// SGLang source: a git clone (bare or not), a plain package folder, or a URL.
    #[arg(long, value_name = "PATH|URL")]
    pub sglang: Option<String>,
    /// Dynamo source: a git clone (bare or not), a plain package folder, or a URL.
    #[arg(long, value_name = "PATH|URL")]
    pub dynamo: Option<String>,
    /// vLLM source: a git clone (bare or not), a plain package folder, or a URL
    /// (srt-slurm `type: vllm` recipes, `vllm serve` scripts, master entries).
    #[arg(long, value_name = "PATH|URL")]
    pub vllm: Option<String>,
    /// ATOM (ROCm/ATOM) source: a git clone (bare or not), a plain package
    /// folder, or a URL (`python3 -m atom.entrypoints.openai_server` scripts).
    #[arg(long, value_name = "PATH|URL")]
    pub atom: Option<String>,
    /// TensorRT-LLM (NVIDIA/TensorRT-LLM) source: a git clone (bare or not),
    /// a plain package folder, or a URL (srt-slurm `engine: trtllm` recipes).
    #[arg(long, value_name = "PATH|URL")]
    pub trtllm: Option<String>,
    /// Package folder of SGLang inside its tree (default: python/sglang or sglang).
    #[arg(long, value_name = "DIR")]
    pub sglang_root: Option<String>,
    /// Package folder of Dynamo inside its tree (default: components/src/dynamo or dynamo).
    #[arg(long, value_name = "DIR")]
    pub dynamo_root: Option<String>,
    /// Package folder of vLLM inside its tree (default: vllm).
    #[arg(long, value_name = "DIR")]
    pub vllm_root: Option<String>,
    /// Package folder of ATOM inside its tree (default: atom).
    #[arg(long, value_name = "DIR")]
    pub atom_root: Option<String>,
    /// Package folder of TensorRT-LLM inside its tree (default: tensorrt_llm).
    #[arg(long, value_name = "DIR")]
    pub trtllm_root: Option<String>,
    /// Never touch the network; a ref missing from a cached clone is an error.
    #[arg(long)]
    pub offline: bool,
    /// Where URL clones are cached (default: $XDG_CACHE_HOME/engine-audit/repos).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// No progress lines on stderr while a URL is cloned or fetched.
    #[arg(long)]
    pub quiet: bool,
    /// Neither read nor write the fact cache ($ENGINE_AUDIT_CACHE_DIR, else $XDG_CACHE_HOME/engine-audit/facts).
    #[arg(long)]
    pub no_cache: bool,
}

impl EngineSources {
    /// The engine sources given as flags, in profile order.
    pub(crate) fn given(&self) -> Vec<(crate::profiles::Engine, crate::audit::EngineSpec)> {
        let flags = [
            (&crate::profiles::SGLANG, &self.sglang, &self.sglang_root),
            (&crate::profiles::VLLM, &self.vllm, &self.vllm_root),
            (&crate::profiles::ATOM, &self.atom, &self.atom_root),
            (&crate::profiles::TRTLLM, &self.trtllm, &self.trtllm_root),
            (&crate::profiles::DYNAMO, &self.dynamo, &self.dynamo_root),
        ];
        flags
            .into_iter()
            .filter_map(|(engine, spec, root)| Some((engine, crate::audit::EngineSpec { spec: spec.clone()?, root: root.clone() })))
            .collect()
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EngineName {
    Sglang,
    Vllm,
    Atom,
    /// ATOM's router, read from `--atom`'s source.
    Atomesh,
    Trtllm,
    Dynamo,
}

impl EngineName {
    pub(crate) fn profile(self) -> crate::profiles::Engine {
        match self {
            EngineName::Sglang => &crate::profiles::SGLANG,
            EngineName::Vllm => &crate::profiles::VLLM,
            EngineName::Atom => &crate::profiles::ATOM,
            EngineName::Atomesh => &crate::profiles::ATOMESH,
            EngineName::Trtllm => &crate::profiles::TRTLLM,
            EngineName::Dynamo => &crate::profiles::DYNAMO,
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SurfaceFormat {
    Json,
    Text,
    /// A JSON Schema of srt-slurm recipes' `<engine>_config` role blocks at this
    /// release, for editors (yaml-language-server): see docs/editor-schemas.md.
    JsonSchema,
}

#[derive(Args, Debug)]
pub(crate) struct SurfaceArgs {
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
pub(crate) enum DiffFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
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

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum AuditFormat {
    /// Diagnostics with the recipe lines (colour on a terminal unless NO_COLOR is set).
    Text,
    /// The "flag audit" section of a bump PR body (see --lang).
    Markdown,
    /// Versioned, documented schema (docs/report-schema.md).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the recipe lines.
    Github,
}

impl AuditFormat {
    pub(crate) fn report_format(self) -> crate::report::Format {
        use crate::report::Format;
        match self {
            AuditFormat::Text => Format::Text,
            AuditFormat::Markdown => Format::Markdown,
            AuditFormat::Json => Format::Json,
            AuditFormat::Sarif => Format::Sarif,
            AuditFormat::Github => Format::Github,
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LangArg {
    En,
    Zh,
    /// English, then Chinese.
    #[value(name = "en+zh")]
    EnZh,
}

impl LangArg {
    pub(crate) fn lang(self) -> crate::finding::Lang {
        match self {
            LangArg::En => crate::finding::Lang::En,
            LangArg::Zh => crate::finding::Lang::Zh,
            LangArg::EnZh => crate::finding::Lang::EnZh,
        }
    }
}

/// How an audit's reports are written (shared by the commands that audit).
#[derive(Args, Debug, Clone)]
pub(crate) struct ReportArgs {
    /// Output format; several (comma-separated or repeated) need --output-dir.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "text")]
    pub format: Vec<AuditFormat>,
    /// Write report.txt, report.md, report.json, report.sarif, report.github.txt here
    /// (for the formats asked); the text report still goes to stdout.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Language of the Markdown report.
    #[arg(long, value_enum, default_value = "en")]
    pub lang: LangArg,
}

pub(crate) use crate::gate::FailOn;

#[derive(Args, Debug)]
pub(crate) struct AuditArgs {
    /// Recipe files or folders (searched recursively for .yaml, .yml, .sh).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub sources: EngineSources,
    /// Release deployed today of the engine whose source is given (--sglang,
    /// --vllm or --atom; with several, the one without refs of its own;
    /// default: from each recipe's container image).
    #[arg(long, value_name = "REF")]
    pub from: Option<String>,
    /// Release to bump that engine to (default: the current one: audit recipes as they are).
    #[arg(long, value_name = "REF")]
    pub to: Option<String>,
    /// vLLM release deployed today, when --from names SGLang's (default: from each recipe's image).
    #[arg(long, value_name = "REF")]
    pub vllm_from: Option<String>,
    /// vLLM release to bump to, when --to names SGLang's (a tree of SGLang and vLLM recipes in one run).
    #[arg(long, value_name = "REF")]
    pub vllm_to: Option<String>,
    /// ATOM release or commit deployed today, when --from names another engine's (default: from each recipe's image).
    #[arg(long, value_name = "REF")]
    pub atom_from: Option<String>,
    /// ATOM release or commit to bump to, when --to names another engine's.
    #[arg(long, value_name = "REF")]
    pub atom_to: Option<String>,
    /// TensorRT-LLM release deployed today, when --from names another engine's (default: from each recipe's image).
    #[arg(long, value_name = "REF")]
    pub trtllm_from: Option<String>,
    /// TensorRT-LLM release to bump to, when --to names another engine's.
    #[arg(long, value_name = "REF")]
    pub trtllm_to: Option<String>,
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
    /// Where master-config links (`recipes/...`) point, relative to the recipes repo root
    /// [default: the config's `recipes_dir`, else benchmarks/multi_node/srt-slurm-recipes].
    #[arg(long, value_name = "DIR")]
    pub recipes_dir: Option<String>,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub ci: CiArgs,
    /// Extra risk-rule folders, on top of the built-in rules (repeatable).
    #[arg(long, value_name = "DIR")]
    pub rules: Vec<PathBuf>,
    /// Apply the mechanical fixes to the recipe files and print the diff; then audit again.
    #[arg(long)]
    pub fix: bool,
    /// With --fix: print the diff only, change nothing.
    #[arg(long, requires = "fix")]
    pub dry_run: bool,
    /// As a pre-commit hook, on the files a commit stages: a run with nothing to
    /// audit (no recipe among them, or none whose release can be told) passes
    /// instead of exiting 2; findings still fail by --fail-on.
    #[arg(long)]
    pub hook: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatrixFormat {
    /// A table per engine, then each deployment's newest safe target and first break.
    Text,
    /// Versioned, documented schema (docs/matrix.md).
    Json,
    /// For a PR body: identical rows grouped, cut to --max-chars (what was cut is said).
    Markdown,
    /// One self-contained page: a heatmap, each cell's findings on hover and in details.
    Html,
}

#[derive(Args, Debug)]
pub(crate) struct MatrixArgs {
    /// Recipe files or folders (searched recursively for .yaml, .yml, .sh).
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub sources: EngineSources,
    /// The oldest release to audit against (a version tag; inclusive). A deployment
    /// whose current release cannot be told starts here.
    #[arg(long, value_name = "REF")]
    pub since: Option<String>,
    /// The newest release to audit against (a version tag; inclusive) [default: the newest].
    #[arg(long, value_name = "REF")]
    pub until: Option<String>,
    /// Pre-releases (rc, alpha, beta) and dev builds are releases too.
    #[arg(long)]
    pub pre: bool,
    /// The oldest Dynamo release (a version tag; inclusive) crossed with the engine's:
    /// a deployment with a `dynamo:` block gets a row per Dynamo release (needs --dynamo).
    #[arg(long, value_name = "REF")]
    pub dynamo_from: Option<String>,
    /// The newest Dynamo release crossed with the engine's (inclusive) [default: the newest].
    #[arg(long, value_name = "REF")]
    pub dynamo_to: Option<String>,
    /// For each deployment that breaks: what `--fix` at its first break would clear
    /// (its mechanical fixes applied in memory, audited again from there; no file is written).
    #[arg(long)]
    pub fix: bool,
    /// A master config whose entries are checked against the recipes they link.
    #[arg(long, value_name = "FILE")]
    pub master: Option<PathBuf>,
    /// Only this master-config key; with no PATHS, the recipes it links.
    #[arg(long, value_name = "KEY", requires = "master")]
    pub key: Option<String>,
    /// Where master-config links point, relative to the recipes repo root (as for `audit`).
    #[arg(long, value_name = "DIR")]
    pub recipes_dir: Option<String>,
    /// Extra risk-rule folders, on top of the built-in rules (repeatable).
    #[arg(long, value_name = "DIR")]
    pub rules: Vec<PathBuf>,
    /// Drop findings with this code (repeatable; adds to the config's `ignore`).
    #[arg(long, value_name = "CODE")]
    pub ignore: Vec<String>,
    /// The config file (as for `audit`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: MatrixFormat,
    /// Character budget of --format markdown (0: none); detail is dropped until it fits.
    #[arg(long, value_name = "N", default_value_t = crate::report::DEFAULT_MAX_CHARS)]
    pub max_chars: usize,
}

/// What fails a run and what is not reported; shared by `audit` and `pr`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct GateArgs {
    /// Lowest severity that makes the exit code 1 [default: the config's `fail_on`, else error].
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Drop findings with this code (repeatable; adds to the config's `ignore`).
    #[arg(long, value_name = "CODE")]
    pub ignore: Vec<String>,
    /// Let deployments of this engine go unaudited without failing the run (repeatable; `tilert`,
    /// `trtllm`; adds to the config's `allow_unaudited`). They are still listed in the coverage.
    #[arg(long, value_name = "ENGINE")]
    pub allow_unaudited: Vec<String>,
    /// The config file [default: the first .engine-audit.yaml at or above the first recipe path
    /// (with no paths: the working directory), up to the git top level].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrFormat {
    /// GitHub Actions annotations (workflow commands), one per finding.
    Github,
    Text,
    Json,
    /// SARIF 2.1.0 for GitHub code scanning.
    Sarif,
    /// The flag-audit section alone.
    Markdown,
}

impl PrFormat {
    pub(crate) fn report_format(self) -> crate::report::Format {
        use crate::report::Format;
        match self {
            PrFormat::Github => Format::Github,
            PrFormat::Text => Format::Text,
            PrFormat::Json => Format::Json,
            PrFormat::Sarif => Format::Sarif,
            PrFormat::Markdown => Format::Markdown,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct PrArgs {
    /// The recipes repository (a git clone; read from git objects, never checked out).
    #[arg(long, value_name = "PATH")]
    pub repo: PathBuf,
    /// The PR's base: any git revision (sha, branch, tag, `origin/main`).
    #[arg(long, value_name = "REF")]
    pub base: String,
    /// The PR's head.
    #[arg(long, value_name = "REF")]
    pub head: String,
    #[command(flatten)]
    pub sources: EngineSources,
    /// Release of the engine whose source is given (--sglang, --vllm or --atom;
    /// with several, the one without refs of its own) to audit every changed
    /// deployment against (default: its head image's).
    #[arg(long, value_name = "REF")]
    pub to: Option<String>,
    /// vLLM release to audit changed vLLM deployments against, when --to names SGLang's.
    #[arg(long, value_name = "REF")]
    pub vllm_to: Option<String>,
    /// ATOM release or commit to audit changed ATOM deployments against, when --to names another engine's.
    #[arg(long, value_name = "REF")]
    pub atom_to: Option<String>,
    /// TensorRT-LLM release to audit changed TensorRT-LLM deployments against, when --to names another engine's.
    #[arg(long, value_name = "REF")]
    pub trtllm_to: Option<String>,
    /// Dynamo ref to audit against (default: each head recipe's `dynamo:` spec).
    #[arg(long, value_name = "REF")]
    pub dynamo_to: Option<String>,
    /// Where master-config links (`recipes/...`) point [default: the config's `recipes_dir`, else benchmarks/multi_node/srt-slurm-recipes].
    #[arg(long, value_name = "DIR")]
    pub recipes_dir: Option<String>,
    /// What goes to stdout; several (comma-separated or repeated) need --output-dir.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "github")]
    pub format: Vec<PrFormat>,
    /// Write each format asked to its file here (report.github.txt, report.sarif,
    /// report.md, report.json, report.txt), from this one run; the annotations
    /// still go to stdout.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Language of the markdown section.
    #[arg(long, value_enum, default_value = "en")]
    pub lang: LangArg,
    /// Append the markdown section to FILE [default: $GITHUB_STEP_SUMMARY when set].
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Extra risk-rule folders, on top of the built-in rules (repeatable).
    #[arg(long, value_name = "DIR")]
    pub rules: Vec<PathBuf>,
    #[command(flatten)]
    pub ci: CiArgs,
    /// Report only findings the base commit does not have for the same target:
    /// the base version of each changed recipe is audited against the head's refs.
    #[arg(long)]
    pub new_only: bool,
}

/// What fits a report to CI: GitHub's limits, baselines, counts. Shared by `audit` and `pr`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct CiArgs {
    /// Most annotations --format github writes [default: 30; GitHub shows 10 errors,
    /// 10 warnings and 10 notices per step]: findings are grouped by code and subject to fit.
    #[arg(long, value_name = "N")]
    pub max_annotations: Option<usize>,
    /// Character budget of the markdown report [default: 60000, under GitHub's 65,536
    /// for a PR body or comment]; 0 for none.
    #[arg(long, value_name = "N")]
    pub max_chars: Option<usize>,
    /// Leave out findings recorded in FILE (written by --write-baseline): only new ones are reported.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Record this run's findings in FILE (their fingerprints), for a later --baseline.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Print the number of findings per code (on stderr, after the report).
    #[arg(long)]
    pub statistics: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ListFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct ExplainArgs {
    /// A finding code (`EA003`) or a rule id (`R001`); with none, the list of codes.
    pub code: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ListFormat,
}

#[derive(Subcommand, Debug)]
pub(crate) enum RulesCommand {
    /// Every rule: id, severity, name, title.
    List {
        #[command(flatten)]
        rules: RulesArgs,
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
    },
    /// One rule's documentation, conditions and evidence.
    Explain {
        id: String,
        #[command(flatten)]
        rules: RulesArgs,
    },
    /// Run every rule's `valid` / `invalid` cases (corpus cases need --corpus or ENGINE_AUDIT_CORPUS).
    Test {
        #[command(flatten)]
        rules: RulesArgs,
        /// Folder holding `sglang.git`, `vllm.git` (the upstream corpus) for corpus cases: each rule's engine's.
        #[arg(long, value_name = "DIR", env = "ENGINE_AUDIT_CORPUS")]
        corpus: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct RulesArgs {
    /// Extra rule folders, on top of the built-in rules (repeatable).
    #[arg(long = "rules", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Keep the generated repos and recipes in this folder instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}
