//! `atomesh launch ...` router command lines audited end to end against the
//! router's clap-derive command line, on a mini ATOM written here (two tags
//! whose `atom/mesh/src/cliargs.rs` is shaped like a clap 4 derive CLI, with a
//! `launch` subcommand flattening its options and a prefilter function; no ATOM
//! code). The script builds the command in a variable and runs it with `eval`,
//! as the AMD multi-node `server_atom.sh` does.

use super::atom_cli::audit_json;
use super::git_repo::commit;
use git2::{Repository, Signature, Time};
use serde_json::Value;
use std::path::Path;

const CLIARGS_V1: &str = r#"use clap::{ArgAction, Parser, Subcommand, ValueEnum};

pub fn filter_prefill_args_from(raw_args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut i = 0;
    while i < raw_args.len() {
        if raw_args[i] == "--prefill" && i + 1 < raw_args.len() {
            i += 2;
        } else {
            kept.push(raw_args[i].clone());
            i += 1;
        }
    }
    kept
}

#[derive(Copy, Clone, Debug, Eq, PartialEq, ValueEnum)]
pub enum Backend {
    #[value(name = "sglang")]
    Sglang,
    #[value(name = "atom")]
    Atom,
}

#[derive(Parser, Debug)]
#[command(name = "mesh")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Commands>,

    #[command(flatten)]
    pub router_args: CliArgs,
}

#[derive(Subcommand, Debug)]
pub enum Commands {
    Launch {
        #[command(flatten)]
        args: CliArgs,
    },
}

#[derive(Parser, Debug, Clone)]
pub struct CliArgs {
    #[arg(long, default_value = "0.0.0.0")]
    pub host: String,

    #[arg(long, default_value_t = 30000)]
    pub port: u16,

    #[arg(long, default_value = "cache_aware", value_parser = ["random", "round_robin", "cache_aware"])]
    pub policy: String,

    #[arg(long, default_value_t = 0.3)]
    pub cache_threshold: f32,

    #[arg(long, default_value_t = false)]
    pub pd_disaggregation: bool,

    #[arg(long, action = ArgAction::Append)]
    pub decode: Vec<String>,

    #[arg(long, default_value = "info", value_parser = ["debug", "info", "warn", "error"])]
    pub log_level: String,

    #[arg(long, default_value_t = 5)]
    pub health_check_timeout_secs: u64,

    #[arg(long, default_value_t = false)]
    pub disable_health_check: bool,

    #[arg(long, value_enum, default_value_t = Backend::Sglang, alias = "runtime")]
    pub backend: Backend,
}
"#;

fn cliargs_v2() -> String {
    // v2 adds the `sticky` policy and drops `--cache-threshold`.
    CLIARGS_V1
        .replace(r#"["random", "round_robin", "cache_aware"]"#, r#"["random", "round_robin", "sticky", "cache_aware"]"#)
        .replace("    #[arg(long, default_value_t = 0.3)]\n    pub cache_threshold: f32,\n\n", "")
}

const SCRIPT: &str = r#"#!/bin/bash
PREFILL_ARGS="--prefill http://10.0.0.1:8010"
DECODE_ARGS="--decode http://10.0.0.2:8020"
ROUTER_CMD="/usr/local/bin/atomesh launch \
    --host 0.0.0.0 --port ${ROUTER_PORT:-30000} \
    --pd-disaggregation \
    ${PREFILL_ARGS} \
    ${DECODE_ARGS} \
    --policy sticky \
    --cache-threshold 0.5 \
    --backend trtllm \
    --log-level info \
    --disable-health-check \
    --health-check-timeout 5"
eval "$ROUTER_CMD" 2>&1 | tee router.log &
"#;

fn files(cliargs: &str) -> [(&str, &str); 3] {
    [("atom/__init__.py", ""), ("atom/mesh/Cargo.toml", "[package]\nname = \"mesh\"\n"), ("atom/mesh/src/cliargs.rs", cliargs)]
}

fn mini_atom(dir: &Path) {
    let repo = Repository::init(dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let sig = Signature::new("t", "t@localhost", &Time::new(1_777_593_600, 0)).unwrap();
    let first = commit(&repo, &sig, &files(CLIARGS_V1), None, 1_777_593_600);
    repo.tag_lightweight("v1", &repo.find_object(first, None).unwrap(), false).unwrap();
    let second = commit(&repo, &sig, &files(&cliargs_v2()), Some(first), 1_780_272_000);
    repo.tag_lightweight("v2", &repo.find_object(second, None).unwrap(), false).unwrap();
}

fn audit(atom: &Path, scripts: &Path, args: &[&str]) -> Value {
    audit_json(atom, scripts, args, 1).1
}

/// (code, subject, line) of every finding, sorted.
fn found(report: &Value) -> Vec<(String, String, u64)> {
    let mut out: Vec<(String, String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string(), f["line"].as_u64().unwrap()))
        .collect();
    out.sort();
    out
}

fn row(code: &str, subject: &str, line: u64) -> (String, String, u64) {
    (code.to_string(), subject.to_string(), line)
}

#[test]
fn atomesh_launch_flags_are_held_to_the_routers_clap_surface() {
    let dir = tempfile::tempdir().unwrap();
    let atom = dir.path().join("atom");
    std::fs::create_dir(&atom).unwrap();
    mini_atom(&atom);
    let scripts = dir.path().join("scripts");
    std::fs::create_dir(&scripts).unwrap();
    std::fs::write(scripts.join("server_atom.sh"), SCRIPT).unwrap();

    // ATOM's refs name the router's (`--from`/`--to` with ATOM the only source).
    let report = audit(&atom, &scripts, &["--from", "v1", "--to", "v2"]);
    assert_eq!(report["deployments_audited"].as_u64(), Some(1), "{report:#}");
    let deployment = report["findings"][0]["deployment"].as_str().unwrap_or_default().to_string();
    assert!(deployment.starts_with("atomesh@"), "{deployment}");
    let f = found(&report);
    // `--prefill` (taken out before clap parses), `--decode`, the switches and
    // `--log-level info` are the router's; `sticky` is a v2 policy. Findings
    // point at the `eval` that runs the command (line 15), as for any command
    // a script builds in a variable.
    assert_eq!(
        f,
        [row("EA001", "cache-threshold", 15), row("EA001", "health-check-timeout", 15), row("EA005", "backend", 15),],
        "{report:#}"
    );
    let message = |subject: &str| {
        report["findings"].as_array().unwrap().iter().find(|x| x["subject"] == subject).unwrap()["message"].as_str().unwrap().to_string()
    };
    // History: the release that last had it.
    assert!(message("cache-threshold").contains("v1"), "{}", message("cache-threshold"));
    assert!(message("backend").contains("sglang") && message("backend").contains("atom"), "{}", message("backend"));

    // At v1 `sticky` is no policy, and `--cache-threshold` is there.
    let f = found(&audit(&atom, &scripts, &["--to", "v1"]));
    assert_eq!(f, [row("EA001", "health-check-timeout", 15), row("EA005", "backend", 15), row("EA005", "policy", 15)]);
}
