//! The clap-derive reader on a small router command line written for these
//! tests, shaped like a clap 4 derive CLI (a root `Parser` with a `launch`
//! subcommand flattening its options, a `ValueEnum`, a prefilter function).

use super::*;

const CLI: &str = r##"
use clap::{ArgAction, Parser, Subcommand, ValueEnum};

pub fn strip_upstream_args(raw: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == "--upstream" && i + 1 < raw.len() {
            i += 2;
        } else {
            kept.push(raw[i].clone());
            i += 1;
        }
    }
    kept
}

#[derive(Copy, Clone, Debug, Eq, PartialEq, ValueEnum)]
pub enum Engine {
    #[value(name = "alpha")]
    Alpha,
    BetaMax,
    #[value(skip)]
    Hidden,
    #[value(alias = "g")]
    Gamma,
}

#[derive(Parser, Debug)]
#[command(name = "relay", version)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Commands>,

    #[command(flatten)]
    pub relay_args: RelayArgs,
}

#[derive(Subcommand, Debug)]
pub enum Commands {
    /// Start the relay
    #[command(visible_alias = "start")]
    Launch {
        #[command(flatten)]
        args: RelayArgs,
    },
    Inspect(InspectArgs),
}

#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    #[arg(long)]
    pub verbose: bool,
}

#[derive(Parser, Debug, Clone)]
pub struct RelayArgs {
    /// Address to bind
    #[arg(long, default_value = "0.0.0.0")]
    pub host: String,

    #[arg(long, short = 'p', default_value_t = 30000)]
    pub port: u16,

    /// Upstream URLs,
    /// one or more
    #[arg(long, num_args = 0..)]
    pub worker_urls: Vec<String>,

    #[arg(long, default_value = "random", value_parser = ["random", "round_robin", "cache_aware"])]
    pub policy: String,

    #[arg(long, default_value_t = 0.3)]
    pub cache_threshold: f32,

    #[arg(long, default_value_t = -1)]
    pub max_inflight: i32,

    #[arg(long, default_value_t = false)]
    pub pd_split: bool,

    #[arg(long, action = ArgAction::Append)]
    pub decode: Vec<String>,

    #[arg(long = "log-dir")]
    pub logs: Option<String>,

    #[arg(long, value_enum, default_value_t = Engine::BetaMax, alias = "runtime")]
    pub engine: Engine,

    #[arg(long, default_value = "120")]
    pub eviction_interval: u64,

    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<String>,

    #[arg(skip)]
    pub internal: u32,

    pub positional_target: Option<String>,

    #[command(flatten)]
    pub tls: TlsArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TlsArgs {
    #[arg(long = "tls-cert", help = "Certificate \"path\"")]
    pub cert: Option<String>,
}
"##;

fn launch(text: &str) -> (Vec<Flag>, ParserFacts, Vec<ExtractWarning>) {
    let mut w = Vec::new();
    let cmd = ClapCommand { file: "relay/src/cli.rs", subcommand: "launch", prefilter: Some("strip_upstream_args") };
    let (flags, facts) = extract_clap_options(text, &cmd, &mut w);
    (flags, facts, w)
}

fn flag<'f>(flags: &'f [Flag], name: &str) -> &'f Flag {
    flags
        .iter()
        .find(|f| f.names.iter().any(|n| n == name))
        .unwrap_or_else(|| panic!("no {name} in {:?}", flags.iter().map(|f| &f.names).collect::<Vec<_>>()))
}

#[test]
fn launch_options_are_the_flattened_fields_with_clap_spellings() {
    let (flags, facts, w) = launch(CLI);
    assert!(w.is_empty(), "{w:?}");
    let names: Vec<&str> = flags.iter().map(|f| f.names[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "-h",
            "--host",
            "--port",
            "--worker-urls",
            "--policy",
            "--cache-threshold",
            "--max-inflight",
            "--pd-split",
            "--decode",
            "--log-dir",
            "--engine",
            "--eviction-interval",
            "--timeout",
            "--tls-cert",
            "--upstream"
        ]
    );
    // clap takes no prefix of a long option unless `infer_long_args` is set.
    assert_eq!(facts.allow_abbrev, Known::Value(false));
    assert_eq!(flag(&flags, "--port").names, ["--port", "-p"]);
    assert_eq!(flag(&flags, "--engine").names, ["--engine", "--runtime"]);
    assert_eq!(flag(&flags, "--log-dir").dest, "logs");
    // The subcommand's own options only: `--verbose` is `inspect`'s, `--version` the root's.
    assert!(!flags.iter().any(|f| f.names.iter().any(|n| n == "--verbose" || n == "--version" || n == "--internal")));
}

#[test]
fn actions_defaults_and_choices_follow_clap_derive() {
    let (flags, _, _) = launch(CLI);
    let f = flag(&flags, "--host");
    assert_eq!((f.action.as_str(), &f.default, f.required), ("store", &Known::Value(PyValue::from("0.0.0.0")), false));
    assert_eq!(flag(&flags, "--port").default, Known::Value(PyValue::from(30000)));
    assert_eq!(flag(&flags, "--eviction-interval").default, Known::Value(PyValue::from(120)), "a default string on an integer field");
    assert_eq!(flag(&flags, "--max-inflight").default, Known::Value(PyValue::from(-1)));
    assert_eq!(flag(&flags, "--cache-threshold").default, Known::Value(serde_json::json!(0.3)));
    let f = flag(&flags, "--pd-split");
    assert_eq!((f.action.as_str(), &f.default), ("store_true", &Known::Value(PyValue::Bool(false))));
    let f = flag(&flags, "--worker-urls");
    assert_eq!((f.action.as_str(), &f.nargs), ("append", &Some(PyValue::from("*"))));
    assert_eq!(f.help.as_deref(), Some("Upstream URLs, one or more"));
    assert_eq!(flag(&flags, "--decode").action, "append");
    assert_eq!(flag(&flags, "--log-dir").default, Known::Value(PyValue::Null));
    let choices = |name: &str| flag(&flags, name).choices.clone();
    assert_eq!(choices("--policy"), Some(Known::Value(vec!["random".into(), "round_robin".into(), "cache_aware".into()])));
    // ValueEnum: `name =` wins, kebab-case otherwise, `skip` left out, aliases accepted.
    assert_eq!(choices("--engine"), Some(Known::Value(vec!["alpha".into(), "beta-max".into(), "gamma".into(), "g".into()])));
    assert_eq!(flag(&flags, "--engine").default, Known::Value(PyValue::from("beta-max")));
    // A parser function accepts what it accepts: not read, never an empty set.
    assert_eq!(choices("--timeout"), Some(Known::Dynamic { dynamic: "parse_duration".into() }));
    assert_eq!(flag(&flags, "--tls-cert").help.as_deref(), Some("Certificate \"path\""));
    let f = flag(&flags, "--upstream");
    assert_eq!((f.action.as_str(), &f.nargs, f.evidence.line), ("append", &Some(PyValue::from("+")), 8));
}

#[test]
fn a_tuple_variant_reads_its_struct_and_the_root_reads_its_own() {
    let mut w = Vec::new();
    let (flags, _) = extract_clap_options(CLI, &ClapCommand { file: "cli.rs", subcommand: "inspect", prefilter: None }, &mut w);
    assert_eq!(flags.iter().map(|f| f.names[0].as_str()).collect::<Vec<_>>(), ["-h", "--verbose"]);
    // The visible alias names the same subcommand.
    let (flags, _) = extract_clap_options(CLI, &ClapCommand { file: "cli.rs", subcommand: "start", prefilter: None }, &mut w);
    assert!(flags.iter().any(|f| f.names[0] == "--host"));
    let (flags, _) = extract_clap_options(CLI, &ClapCommand { file: "cli.rs", subcommand: "", prefilter: None }, &mut w);
    assert_eq!(&flags[1].names, &["-V", "--version"]);
    assert!(flags.iter().any(|f| f.names[0] == "--host"));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn what_is_not_there_is_a_warning_naming_it() {
    let mut w = Vec::new();
    let (flags, _) = extract_clap_options(CLI, &ClapCommand { file: "cli.rs", subcommand: "serve", prefilter: Some("gone") }, &mut w);
    assert!(flags.is_empty());
    assert!(w[0].message.contains("no subcommand `serve`"), "{w:?}");
    let broken = CLI.replace("#[command(flatten)]\n    pub tls: TlsArgs,", "#[command(flatten)]\n    pub tls: ElsewhereArgs,");
    let (flags, _, w) = launch(&broken);
    assert!(!flags.iter().any(|f| f.names[0] == "--tls-cert"));
    assert!(w.iter().any(|w| w.message.contains("`ElsewhereArgs` is not in this file")), "{w:?}");
    let (flags, _, w) = launch("fn main() {}");
    assert!(flags.is_empty() && w[0].message.contains("no struct with `#[derive(Parser)]`"), "{w:?}");
    let infer = CLI.replace("#[command(name = \"relay\", version)]", "#[command(name = \"relay\", version, infer_long_args = true)]");
    assert_eq!(launch(&infer).1.allow_abbrev, Known::Value(true));
}

#[test]
fn kebab_case_is_heck_s() {
    for (ident, kebab) in [
        ("RoundRobin", "round-robin"),
        ("worker_urls", "worker-urls"),
        ("HTTPServer", "http-server"),
        ("L0Cache", "l0-cache"),
        ("enable_l0", "enable-l0"),
        ("Sglang", "sglang"),
    ] {
        assert_eq!(kebab_case(ident), kebab, "{ident}");
    }
}
