//! The extracted `atomesh launch` surface (ATOM's router, clap derive in
//! `atom/mesh/src/cliargs.rs`) against what `atomesh launch --help` would list,
//! as read by hand from that file at two refs (`git show <ref>:atom/mesh/src/
//! cliargs.rs`; v0.1.5's file is also v0.1.6-rc0's and `087b82d9c`'s, the commit
//! the AMD master's `atom-disagg` image resolves to). Reads the ATOM git dir
//! `ENGINE_AUDIT_ATOM`; without it the test says so and passes.

use std::path::PathBuf;

use engine_audit::extract::{extract_surface, Demand};
use engine_audit::profiles::ATOMESH;
use engine_audit::source::{discover_package_root, EngineRepo, OpenOptions, Tree};
use engine_audit::surface::{EngineSurface, Known};
use serde_json::json;

/// `CliArgs`'s fields at v0.1.5, in order, as `--help` lists them (clap's
/// kebab-case of each field name; none sets `long = "..."`).
const V015: &[&str] = &[
    "--host",
    "--port",
    "--worker-urls",
    "--policy",
    "--cache-threshold",
    "--balance-abs-threshold",
    "--balance-rel-threshold",
    "--eviction-interval",
    "--max-tree-size",
    "--prefix-token-count",
    "--prefix-hash-load-factor",
    "--dp-aware",
    "--pd-disaggregation",
    "--decode",
    "--prefill-policy",
    "--decode-policy",
    "--worker-startup-timeout-secs",
    "--worker-startup-check-interval",
    "--log-dir",
    "--log-level",
    "--json-log",
    "--prometheus-port",
    "--prometheus-host",
    "--prometheus-duration-buckets",
    "--request-id-headers",
    "--request-timeout-secs",
    "--shutdown-grace-period-secs",
    "--max-payload-size",
    "--max-concurrent-requests",
    "--queue-size",
    "--queue-timeout-secs",
    "--rate-limit-tokens-per-second",
    "--retry-max-retries",
    "--retry-initial-backoff-ms",
    "--retry-max-backoff-ms",
    "--retry-backoff-multiplier",
    "--retry-jitter-factor",
    "--disable-retries",
    "--cb-failure-threshold",
    "--cb-success-threshold",
    "--cb-timeout-duration-secs",
    "--cb-window-duration-secs",
    "--disable-circuit-breaker",
    "--health-failure-threshold",
    "--health-success-threshold",
    "--health-check-timeout-secs",
    "--health-check-interval-secs",
    "--health-check-endpoint",
    "--disable-health-check",
    "--model-path",
    "--tokenizer-path",
    "--chat-template",
    "--tokenizer-cache-enable-l0",
    "--tokenizer-cache-l0-max-entries",
    "--tokenizer-cache-enable-l1",
    "--tokenizer-cache-l1-max-memory",
    "--reasoning-parser",
    "--tool-call-parser",
    "--backend",
    "--api-key",
];

/// What main adds to v0.1.5's fields (after `--decode-policy`, and the TLS pair after `--api-key`).
const MAIN_ADDED: &[&str] = &["--atom-pd-rank-mapping-policy", "--tls-cert-path", "--tls-key-path"];

fn surface_at(repo: &EngineRepo, r: &str) -> EngineSurface {
    let tree = repo.tree_at(&repo.resolve(r).unwrap_or_else(|e| panic!("{r}: {e}"))).unwrap();
    let root = discover_package_root(&tree, &ATOMESH, None).unwrap();
    extract_surface(&tree as &dyn Tree, &ATOMESH, &root, r, &Demand::full(&ATOMESH))
}

#[test]
fn atomesh_launch_surface_matches_the_hand_read_cli() {
    let Some(repo) = std::env::var_os("ENGINE_AUDIT_ATOM").map(PathBuf::from) else {
        eprintln!("ENGINE_AUDIT_ATOM is not set: {} is skipped (the ROCm/ATOM git dir)", module_path!());
        return;
    };
    let repo = EngineRepo::open(repo.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() }).unwrap();
    for r in ["v0.1.5", "main"] {
        let s = surface_at(&repo, r);
        assert!(s.warnings.is_empty(), "{r}: {:?}", s.warnings);
        let mut want: Vec<&str> = vec!["-h"];
        want.extend(V015);
        if r == "main" {
            want.extend(MAIN_ADDED);
        }
        // `main.rs` takes `--prefill URL [PORT]` out before `Cli::parse_from`.
        want.push("--prefill");
        let mut got: Vec<&str> = s.flags.iter().map(|f| f.names[0].as_str()).collect();
        let (mut w, g) = (want.clone(), got.clone());
        w.sort();
        got.sort();
        assert_eq!(got, w, "{r}: option strings");
        assert_eq!(g.len(), want.len(), "{r}");
        let flag = |name: &str| s.flags.iter().find(|f| f.names.iter().any(|n| n == name)).unwrap_or_else(|| panic!("{r}: {name}"));
        let policies: Vec<&str> = match r {
            "main" => vec!["random", "round_robin", "dp_sticky", "cache_aware", "power_of_two", "prefix_hash"],
            _ => vec!["random", "round_robin", "cache_aware", "power_of_two", "prefix_hash"],
        };
        for name in ["--policy", "--prefill-policy", "--decode-policy"] {
            assert_eq!(flag(name).choices, Some(Known::Value(policies.iter().map(|p| json!(p)).collect())), "{r} {name}");
        }
        assert_eq!(flag("--log-level").choices, Some(Known::Value(vec![json!("debug"), json!("info"), json!("warn"), json!("error")])));
        // `Backend` is a ValueEnum with `#[value(name = ...)]` on each variant; `alias = "runtime"`.
        let backend = flag("--backend");
        assert_eq!(backend.names, ["--backend", "--runtime"]);
        assert_eq!(backend.choices, Some(Known::Value(vec![json!("sglang"), json!("vllm"), json!("atom")])));
        assert_eq!(backend.default, Known::Value(json!("sglang")));
        for (name, default) in [
            ("--host", json!("0.0.0.0")),
            ("--port", json!(30000)),
            ("--policy", json!("cache_aware")),
            ("--prometheus-port", json!(29000)),
            ("--max-concurrent-requests", json!(-1)),
            ("--cache-threshold", json!(0.3)),
            ("--health-check-endpoint", json!("/health")),
            ("--disable-health-check", json!(false)),
            ("--log-dir", json!(null)),
        ] {
            assert_eq!(flag(name).default, Known::Value(default), "{r} {name}");
        }
        for (name, action) in
            [("--pd-disaggregation", "store_true"), ("--decode", "append"), ("--worker-urls", "append"), ("--port", "store")]
        {
            assert_eq!(flag(name).action, action, "{r} {name}");
        }
        assert_eq!(flag("--worker-urls").nargs, Some(json!("*")));
        // clap matches long options exactly here (no `infer_long_args`).
        assert_eq!(s.parser.allow_abbrev, Known::Value(false), "{r}");
        if r == "main" {
            assert_eq!(flag("--atom-pd-rank-mapping-policy").choices, Some(Known::Value(vec![json!("none"), json!("idx2idx")])));
        }
    }
}
