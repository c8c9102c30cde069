//! Against `fixtures/flags/dataclass_style`, whose expected values were taken
//! from running that fixture's own argparse parser.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::source::DirTree;
use crate::surface::{DefaultSource, FlagDeprecationKind};

fn fixture_flags(name: &str, package: &str) -> (Vec<Flag>, Vec<ExtractWarning>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/flags").join(name);
    let tree = DirTree::open(&root).expect("fixture exists");
    let pkg = Package::new(&tree, package);
    let mut warnings = Vec::new();
    let flags = extract_flags(&pkg, &crate::profiles::SGLANG.server.as_ref().unwrap().flags, None, &mut warnings);
    (flags, warnings)
}

fn by_name<'f>(flags: &'f [Flag], name: &str) -> &'f Flag {
    flags
        .iter()
        .find(|f| f.names.iter().any(|n| n == name))
        .unwrap_or_else(|| panic!("{name} not extracted; have {:?}", flags.iter().map(|f| &f.names).collect::<Vec<_>>()))
}

fn strings(items: &[&str]) -> Option<Known<Vec<PyValue>>> {
    Some(Known::Value(items.iter().map(|s| json!(s)).collect()))
}

#[test]
fn registers_every_option_in_parser_order() {
    let (flags, _) = fixture_flags("dataclass_style", "python/minisrv");
    let names: Vec<&str> = flags.iter().map(|f| f.canonical()).collect();
    assert_eq!(
        names,
        [
            "-h",
            "--model-path",
            "--port",
            "--backend",
            "--phase",
            "--batch-sizes",
            "--trust-code",
            "--mem-frac",
            "--size",
            "--extra-paths",
            "--kv-dtype",
            "--sampling",
            "--format",
            "--parser-name",
            "--real-data",
            "--graph-phase",
            "--lora-paths",
            "--overlap",
            "--old-mode",
            "--dead-mode",
            "--backend-name",
            "--eager",
            "--ancient",
            "-q",
            "--workers",
        ]
    );
}

#[test]
fn dataclass_fields_follow_the_registrar_rules() {
    let (flags, _) = fixture_flags("dataclass_style", "python/minisrv");
    let model = by_name(&flags, "--model");
    assert_eq!(model.names, ["--model-path", "--model"]);
    assert!(model.required);
    assert_eq!(by_name(&flags, "--port").default, Known::Value(json!(30000)));
    assert_eq!(by_name(&flags, "--port").type_name.as_deref(), Some("int"));
    // Extended through a bound alias in another module.
    assert_eq!(by_name(&flags, "--backend").choices, strings(&["alpha", "beta", "gamma"]));
    assert_eq!(by_name(&flags, "--phase").choices, strings(&["eager", "graph"]));
    let batch = by_name(&flags, "--batch-sizes");
    assert_eq!((batch.nargs.clone(), batch.type_name.as_deref()), (Some(json!("+")), Some("int")));
    let trust = by_name(&flags, "--trust-code");
    assert_eq!((trust.action.as_str(), trust.default.clone()), ("store_true", Known::Value(json!(false))));
    let mem = by_name(&flags, "--mem-frac");
    assert_eq!((mem.dest.as_str(), mem.default.clone()), ("mem_fraction", Known::Value(json!(0.9))));
    assert_eq!(by_name(&flags, "--size").type_name.as_deref(), Some("_parse_size"));
    assert_eq!(by_name(&flags, "--extra-paths").default, Known::Value(json!([])));
    // `QUANT += [...]` at module level.
    assert_eq!(by_name(&flags, "--kv-dtype").choices, strings(&["none", "int8", "fp8"]));
    assert!(!flags.iter().any(|f| f.dest == "stats" || f.dest == "hidden_field"), "no_cli and plain fields get no flag");
}

#[test]
fn manual_registrations_fold_their_choices() {
    let (flags, _) = fixture_flags("dataclass_style", "python/minisrv");
    // Extended under an `if`: may or may not hold "maybe", so not known.
    assert_eq!(by_name(&flags, "--sampling").choices, Some(Known::dynamic("sampling_choices")));
    assert_eq!(by_name(&flags, "--format").choices, strings(&["auto", "pt", "safetensors", "gguf"]));
    assert_eq!(by_name(&flags, "--format").default, Known::Value(json!("auto")));
    assert_eq!(by_name(&flags, "--parser-name").choices, strings(&["auto", "tiny", "tiny-v2"]));
    assert_eq!(by_name(&flags, "--real-data").choices, strings(&["off", "fast", "safe"]));
    assert_eq!(by_name(&flags, "--graph-phase").choices, strings(&["eager", "graph"]));
    assert_eq!(by_name(&flags, "--graph-phase").default, Known::Value(json!("graph")));
    assert_eq!(by_name(&flags, "--overlap").names, ["--overlap", "--no-overlap"]);
    assert_eq!(by_name(&flags, "--lora-paths").action, "PathListAction");
    assert!(by_name(&flags, "--lora-paths").deprecated.is_none());
    assert_eq!(by_name(&flags, "--workers").default, Known::Value(json!(8)));
    assert_eq!(by_name(&flags, "-q").dest, "quiet");
}

#[test]
fn deprecations_are_read_from_the_action_classes() {
    let (flags, _) = fixture_flags("dataclass_style", "python/minisrv");
    let kind = |n: &str| by_name(&flags, n).deprecated.as_ref().map(|d| (d.kind, d.replacement.clone()));
    assert_eq!(kind("--old-mode"), Some((FlagDeprecationKind::Noop, None)));
    assert_eq!(kind("--dead-mode"), Some((FlagDeprecationKind::Removed, None)));
    assert_eq!(
        by_name(&flags, "--dead-mode").deprecated.as_ref().and_then(|d| d.message.as_deref()),
        Some("--dead-mode is gone; use --mode.")
    );
    assert_eq!(kind("--backend-name"), Some((FlagDeprecationKind::Alias, Some("--backend".into()))));
    assert_eq!(by_name(&flags, "--backend-name").default, Known::Value(json!("==SUPPRESS==")));
    assert_eq!(kind("--eager"), Some((FlagDeprecationKind::Alias, Some("--graph-phase=eager".into()))));
    let eager = by_name(&flags, "--eager");
    assert_eq!(
        (eager.dest.as_str(), eager.const_value.clone(), eager.nargs.clone()),
        ("graph_phase", Some(Known::Value(json!("eager"))), Some(json!(0)))
    );
    assert_eq!(kind("--ancient"), Some((FlagDeprecationKind::Removed, None)));
}

#[test]
fn record_assembled_from_namespace_classes() {
    let (flags, warnings) = fixture_flags("namespace_style", "python/nssrv");
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<&[String]> = flags.iter().map(|f| f.names.as_slice()).collect();
    assert_eq!(
        names,
        [
            &["-h".to_string(), "--help".into()][..],
            &["--path".into(), "--model".into()],
            &["--loader".into()],
            &["--port".into()],
            &["--verbose".into()],
            &["--config".into()],
        ]
    );
    assert!(by_name(&flags, "--path").required);
    assert_eq!(by_name(&flags, "--loader").choices, strings(&["auto", "dummy"]));
    assert_eq!(by_name(&flags, "--port").default, Known::Value(json!(8000)));
    assert_eq!(by_name(&flags, "--verbose").action, "store_true");
}

#[test]
fn broken_engine_source_gives_warnings_not_panics() {
    use crate::source::MemTree;
    let mut tree = MemTree::from_files(
        "broken",
        [
            ("python/eng/__init__.py", ""),
            (
                "python/eng/srt/server_args.py",
                "from eng.srt.consts import CHOICES\nclass ServerArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument('--a', choices=CHOICES)\n        parser.add_argument(NAME_FROM_NOWHERE)\n        parser.add_argument('--b', type=int, default=(1 +\n",
            ),
        ],
    );
    tree.insert("python/eng/srt/consts.py", vec![0xff, 0xfe, b'\n']);
    let pkg = Package::new(&tree, "python/eng");
    let mut warnings = Vec::new();
    let flags = extract_flags(&pkg, &crate::profiles::SGLANG.server.as_ref().unwrap().flags, None, &mut warnings);
    let a = by_name(&flags, "--a");
    assert_eq!(a.choices, Some(Known::dynamic("CHOICES")));
    assert!(warnings.iter().any(|w| w.path == "python/eng/srt/consts.py" && w.message.contains("UTF-8")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.path == "python/eng/srt/server_args.py"), "{warnings:?}");
    let empty = MemTree::from_files("empty", []);
    let mut w = Vec::new();
    assert!(extract_flags(&Package::new(&empty, "python/eng"), &crate::profiles::SGLANG.server.as_ref().unwrap().flags, None, &mut w)
        .is_empty());
    assert_eq!(w.len(), 1, "a missing entry point is said once: {w:?}");
}

/// `fixtures/flags/resolution`: fields left `None` by the parser, resolved by
/// hooks or a declared fallback. The expected values are what the fixture's
/// own Python gives (`ServerArgs(**vars(parser.parse_args([])))` on cuda, xpu
/// and cpu, then `fallbacks_of`): literal only where every run agrees.
#[test]
fn effective_defaults_follow_fallbacks_and_hooks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/flags/resolution");
    let tree = DirTree::open(&root).expect("fixture exists");
    let pkg = Package::new(&tree, "python/reseng");
    let server = crate::profiles::SGLANG.server.as_ref().unwrap();
    let mut warnings = Vec::new();
    let flags = extract_flags(&pkg, &server.flags, server.resolution.as_ref(), &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    let effective = |name: &str| by_name(&flags, name).effective_default.clone();
    let literal = |name: &str, value: PyValue, source: DefaultSource, path: &str| {
        let e = effective(name).unwrap_or_else(|| panic!("{name} has no effective default"));
        assert_eq!((e.value, e.source), (Known::Value(value), source), "{name}");
        assert!(e.evidence.path.ends_with(path), "{name}: {:?}", e.evidence);
    };
    let dynamic = |name: &str, hook: &str| {
        let e = effective(name).unwrap_or_else(|| panic!("{name} has no effective default"));
        match &e.value {
            Known::Dynamic { dynamic } => assert!(dynamic.contains(hook), "{name}: {dynamic}"),
            other => panic!("{name} should be dynamic, is {other:?}"),
        }
        assert_eq!(e.source, DefaultSource::Hook, "{name}");
    };
    // argparse still stores None for all of them.
    for name in ["--grammar-backend", "--host-ratio", "--swa-ratio", "--tf32", "--storage-path"] {
        assert_eq!(by_name(&flags, name).default, Known::Value(PyValue::Null), "{name}");
    }
    literal("--grammar-backend", json!("xgrammar"), DefaultSource::Hook, "arg_groups/hooks.py");
    literal("--legacy-mode", json!("on"), DefaultSource::Hook, "srt/server_args.py");
    literal("--swa-ratio", json!(0.8), DefaultSource::Fallback, "srt/server_args.py");
    literal("--tf32", json!(false), DefaultSource::Fallback, "srt/server_args.py");
    dynamic("--host-ratio", "handle_host_ratio");
    dynamic("--dense-tp-size", "handle_model_x");
    dynamic("--mamba-ratio", "handle_platform");
    dynamic("--legacy-level", "_handle_legacy_level");
    assert_eq!(effective("--storage-path"), None, "no hook assigns it: argparse's None is what runs");
    assert_eq!(effective("--device"), None, "a declared default is what runs");
}

/// Choice lists a block extends only when an env var is set: read as a clean
/// environment builds them (what the fixture's own parser gives with no env
/// vars set), with the gated values kept apart; a gate that is on by default
/// leaves the list dynamic.
#[test]
fn env_gated_choices_are_the_clean_environments() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/flags/resolution");
    let tree = DirTree::open(&root).expect("fixture exists");
    let pkg = Package::new(&tree, "python/reseng");
    let mut warnings = Vec::new();
    let flags = extract_flags(&pkg, &crate::profiles::SGLANG.server.as_ref().unwrap().flags, None, &mut warnings);
    let sampling = by_name(&flags, "--sampling-backend");
    let mut choices = sampling.choices.clone().and_then(|c| c.value().cloned()).expect("static choices");
    choices.sort_by_key(|v| v.to_string());
    assert_eq!(choices, vec![json!("flashinfer"), json!("pytorch")]);
    assert_eq!(sampling.choices_when_env.get("RESENG_TOKEN_ORACLE"), Some(&vec![json!("token_oracle")]));
    let load = by_name(&flags, "--load-format");
    assert_eq!(load.choices, strings(&["auto", "pt"]), "a module constant extended under the gate");
    assert_eq!(load.choices_when_env.get("RESENG_TOKEN_ORACLE"), Some(&vec![json!("oracle")]));
    let mode = by_name(&flags, "--mode");
    assert!(mode.choices.as_ref().is_some_and(Known::is_dynamic), "{:?}", mode.choices);
    assert!(mode.choices_when_env.is_empty());
}
