//! Fixture tests: `fixtures/env/new_style` (deprecation table, alias field,
//! notices) and `fixtures/env/old_style` (helper calls, literal-dict loop).

use std::path::Path;

use serde_json::json;

use super::*;
use crate::source::{DirTree, MemTree};
use crate::surface::{EnvDeprecation, EnvDeprecationKind as Kind};

/// SGLang's registry files (the profile's, spelled out for the fixtures).
const SGLANG_ENV_FILES: &[&str] = &["srt/environ.py", "environ.py"];

fn fixture(name: &str) -> DirTree {
    DirTree::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/env").join(name)).expect("fixture exists")
}

fn registry_of(tree: &DirTree) -> (EnvRegistry, Vec<ExtractWarning>) {
    let pkg = Package::new(tree, "python/sglang");
    let mut warnings = Vec::new();
    (extract_env(&pkg, SGLANG_ENV_FILES, &mut warnings), warnings)
}

fn deprecation(kind: Kind, replacement: Option<&str>, transform: Option<&str>, message: Option<&str>) -> Option<EnvDeprecation> {
    Some(EnvDeprecation {
        kind,
        replacement: replacement.map(str::to_string),
        transform: transform.map(str::to_string),
        message: message.map(str::to_string),
    })
}

#[test]
fn new_style_fields_defaults_and_aliases() {
    let tree = fixture("new_style");
    let (registry, warnings) = registry_of(&tree);
    assert!(warnings.is_empty(), "{warnings:?}");
    let field = |name: &str| registry.var(name).unwrap_or_else(|| panic!("{name} missing"));

    assert_eq!((field("TOY_LOG_LEVEL").kind.as_str(), &field("TOY_LOG_LEVEL").default), ("EnvStr", &Known::Value(json!("info"))));
    assert_eq!(field("TOY_BUFFER_BYTES").default, Known::Value(json!(64 * 1024 * 1024)));
    assert_eq!(field("TOY_MODE").default, Known::Value(json!(2)), "enum member of the same file");
    assert_eq!(field("TOY_USE_ACCEL").default, Known::dynamic("_on_accelerator"));
    assert_eq!(field("TOY_TOKEN").default, Known::Value(json!(null)));
    // A field class not named Env*, and a field declared under `if`.
    assert_eq!(field("TOY_CACHE").kind, "PathSetting");
    assert_eq!(field("TOY_CACHE").default, Known::dynamic("os.path.expanduser(\"~/.cache/toy\")"));
    assert_eq!(field("TOY_WINDOWS_ONLY").kind, "EnvBool");
    assert_eq!(field("TOY_LOG_LEVEL").evidence.path, "python/sglang/srt/environ.py");
    assert_eq!(field("TOY_LOG_LEVEL").evidence.line, 69);

    let alias = field("TOY_LEGACY_FAST_PATH");
    assert_eq!(alias.kind, "EnvBoolWithAlias");
    assert_eq!(alias.default, Known::Value(json!(true)));
    assert_eq!(alias.deprecated, deprecation(Kind::Alias, Some("TOY_FAST_PATH"), None, None));
    assert_eq!(field("TOY_FAST_PATH").deprecated, None);

    // Nothing but fields, aliases and deprecated names; helpers and enums are not vars.
    let names: Vec<&str> = registry.vars.iter().map(|v| v.name.as_str()).collect();
    assert!(!names.iter().any(|n| ["OFF", "FAST", "settings", "RETIRED"].contains(n)), "{names:?}");
    assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
}

#[test]
fn new_style_deprecation_table_and_prefix_rewrite() {
    let tree = fixture("new_style");
    let (registry, _) = registry_of(&tree);
    let deprecated = |name: &str| registry.var(name).unwrap_or_else(|| panic!("{name} missing")).deprecated.clone();

    assert_eq!(deprecated("TOY_OLD_WORKERS"), deprecation(Kind::Renamed, Some("TOY_WORKERS"), None, None));
    // Positional arguments bind by the constructor's parameter order.
    assert_eq!(deprecated("TOY_DISABLE_ACCEL"), deprecation(Kind::Renamed, Some("TOY_USE_ACCEL"), Some("_flip"), None));
    assert_eq!(
        deprecated("TOY_TIMEOUT_MS"),
        deprecation(Kind::Renamed, Some("TOY_TIMEOUT"), Some("_flip"), Some("Unit changed to seconds."))
    );
    assert_eq!(deprecated("TOY_GONE"), deprecation(Kind::Removed, None, None, None));
    assert_eq!(deprecated("TOY_CLI_ONLY"), deprecation(Kind::Removed, None, None, Some("Use '--cli-only' instead.")));
    // Deprecated but still a field: keeps its class and default.
    let legacy = registry.var("TOY_KEEP_LEGACY").unwrap();
    assert_eq!((legacy.kind.as_str(), &legacy.default), ("EnvBool", &Known::Value(json!(false))));
    assert_eq!(legacy.deprecated, deprecation(Kind::Removed, None, None, Some("Still defined for old call sites.")));
    assert_eq!(registry.var("TOY_GONE").unwrap().kind, "deprecated");

    assert_eq!(registry.prefix_rewrites, [("TY_".to_string(), "TOY_".to_string())]);
}

#[test]
fn old_style_helper_calls_and_literal_dict_loop() {
    let tree = fixture("old_style");
    let (registry, warnings) = registry_of(&tree);
    assert!(warnings.is_empty(), "{warnings:?}");
    let deprecated = |name: &str| registry.var(name).unwrap_or_else(|| panic!("{name} missing")).deprecated.clone();

    assert_eq!(registry.var("TOY_RUN_TIMEOUT").unwrap().default, Known::Value(json!(-1.5)));
    assert_eq!(deprecated("TOY_GC_LOG"), deprecation(Kind::Renamed, Some("TOY_LOG_GC"), None, None));
    assert_eq!(deprecated("TOY_UNUSED"), deprecation(Kind::Removed, None, None, None));
    assert_eq!(deprecated("TOY_OLD_SCHEDULER"), deprecation(Kind::Removed, None, None, Some("Please use '--scheduler' instead.")));
    // The inline unit conversion is kept as source text.
    assert_eq!(
        deprecated("TOY_WAIT_TIMEOUT_MS"),
        deprecation(Kind::Renamed, Some("TOY_WAIT_TIMEOUT"), Some("str(float(millis) / 1000.0)"), None)
    );
    assert_eq!(registry.var("TOY_RUN_TIMEOUT_MS").unwrap().evidence.line, 52);
    assert_eq!(registry.prefix_rewrites, [("TY_".to_string(), "TOY_".to_string())]);
    assert_eq!(deprecated("TOY_ENABLE_V1"), None);
    let pkg = Package::new(&tree, "python/sglang");
    assert_eq!(registry_instances(&pkg, SGLANG_ENV_FILES, &mut Vec::new()), ["envs"]);
}

#[test]
fn reads_notices_and_writes() {
    let tree = fixture("new_style");
    let pkg = Package::new(&tree, "python/sglang");
    let mut warnings = Vec::new();
    let names: Vec<String> = [
        "TOY_ENABLE_V1",
        "TOY_STRICT",
        "TOY_THREADS",
        "TOY_DEBUG",
        "TOY_RETRIES",
        "TOY_HOME",
        "TOY_TRACE",
        "TOY_PROFILE",
        "TOY_WORKERS",
        "TOY_CHILD_FLAG",
        "TOY_SCRATCH",
        "TOY_DUAL",
        "TOY_REGION",
        "TOY_ZONE",
        "TOY_RACK",
    ]
    .map(String::from)
    .to_vec();
    let reads = find_env_reads(&pkg, SGLANG_ENV_FILES, &names, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    let of = |name: &str| reads.iter().filter(|r| r.name == name).collect::<Vec<_>>();

    let v1 = of("TOY_ENABLE_V1");
    assert_eq!(v1.len(), 1);
    assert_eq!(v1[0].via, ReadVia::Getenv);
    assert_eq!(v1[0].notice.as_deref(), Some("TOY_ENABLE_V1 has been removed: the v2 engine is always used."));
    assert_eq!((v1[0].evidence.path.as_str(), v1[0].evidence.line), ("python/sglang/srt/hooks.py", 13));
    assert_eq!(of("TOY_STRICT")[0].via, ReadVia::Membership);
    assert_eq!(of("TOY_STRICT")[0].notice.as_deref(), Some("TOY_STRICT is no longer supported"));

    assert_eq!(of("TOY_THREADS")[0].default, Some(Known::Value(json!("8"))));
    assert_eq!(of("TOY_DEBUG")[0].via, ReadVia::Helper("get_bool_env_var".into()));
    assert_eq!(of("TOY_RETRIES")[0].default, Some(Known::Value(json!(3))));
    assert_eq!(of("TOY_HOME")[0].via, ReadVia::Subscript);
    assert_eq!(of("TOY_WORKERS")[0].via, ReadVia::Registry);
    // A log line that does not name the variable is not a notice; neither is real work.
    assert!(of("TOY_TRACE").iter().all(|r| r.notice.is_none()) && of("TOY_TRACE").len() == 2);
    assert!(of("TOY_PROFILE")[0].notice.is_none());
    for unset_message in ["TOY_REGION", "TOY_ZONE", "TOY_RACK"] {
        let reads = of(unset_message);
        assert_eq!(reads.len(), 1, "{unset_message}");
        assert_eq!(reads[0].notice, None, "{unset_message}: the test holds when unset");
    }
    assert!(of("TOY_CHILD_FLAG").is_empty() && of("TOY_SCRATCH").is_empty(), "writes are not reads");

    let old = fixture("old_style");
    let (old_registry, _) = registry_of(&old);
    let (new_registry, _) = registry_of(&tree);
    assert!(old_registry.var("TOY_ENABLE_V1").is_some_and(|v| v.deprecated.is_none()));
    assert!(new_registry.var("TOY_ENABLE_V1").is_none());
    let extra = unregistered_vars(&new_registry, &reads);
    let var = |name: &str| extra.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("{name} missing"));
    assert_eq!(var("TOY_ENABLE_V1").kind, "read");
    assert_eq!(
        var("TOY_ENABLE_V1").deprecated,
        deprecation(Kind::Notice, None, None, Some("TOY_ENABLE_V1 has been removed: the v2 engine is always used."))
    );
    // One of two reads really uses it: not a notice.
    assert_eq!(var("TOY_DUAL").deprecated, None);
    assert_eq!(var("TOY_THREADS").default, Known::Value(json!("8")));
    assert_eq!(var("TOY_HOME").default, Known::dynamic("os.environ[\"TOY_HOME\"]"));
    assert!(extra.iter().all(|v| v.name != "TOY_WORKERS"), "registered names are not repeated");
}

#[test]
fn prefix_scan_finds_literal_names_only() {
    let tree = fixture("new_style");
    let pkg = Package::new(&tree, "python/sglang");
    let reads = find_prefixed_env_reads(&pkg, SGLANG_ENV_FILES, &["TOY_"], &mut Vec::new());
    let mut names: Vec<&str> = reads.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "TOY_DEBUG",
            "TOY_DUAL",
            "TOY_ENABLE_V1",
            "TOY_HOME",
            "TOY_PROFILE",
            "TOY_RACK",
            "TOY_REGION",
            "TOY_RETRIES",
            "TOY_STRICT",
            "TOY_THREADS",
            "TOY_TRACE",
            "TOY_WORKERS",
            "TOY_ZONE"
        ]
    );
}

#[test]
fn bad_input_gives_partial_facts_and_named_warnings() {
    let mut tree = MemTree::from_files(
        "bad",
        [
            ("pkg/__init__.py", ""),
            (
                "pkg/srt/environ.py",
                "class F:\n    def __set_name__(self, o, n):\n        self.name = n\n\n\
                 class B(F):\n    pass\n\n\
                 class Envs:\n    GOOD_ONE = B(1)\n    BROKEN = B(\n    GOOD_TWO = B(2)\n\n\
                 def after(:\n    pass\n",
            ),
            ("pkg/ok.py", "import os\nX = os.getenv(\"GOOD_ONE\")\n"),
        ],
    );
    tree.insert("pkg/latin1.py", b"# caf\xe9\nimport os\nos.getenv('GOOD_ONE')\n".to_vec());
    let mut huge = b"import os\nos.getenv('GOOD_ONE')\n".to_vec();
    huge.resize(crate::extract::symbols::MAX_SOURCE_BYTES as usize + 1, b'#');
    tree.insert("pkg/huge.py", huge);

    let pkg = Package::new(&tree, "pkg");
    let mut warnings = Vec::new();
    let registry = extract_env(&pkg, SGLANG_ENV_FILES, &mut warnings);
    assert!(registry.var("GOOD_ONE").is_some(), "facts before the error survive: {:?}", registry.vars);
    assert!(warnings.iter().any(|w| w.path == "pkg/srt/environ.py" && w.message.contains("syntax error")));

    let mut warnings = Vec::new();
    let reads = find_env_reads(&pkg, SGLANG_ENV_FILES, &["GOOD_ONE".to_string()], &mut warnings);
    assert_eq!(
        reads.iter().map(|r| r.evidence.path.as_str()).collect::<Vec<_>>(),
        // A latin-1 comment costs no facts: the file is read with replacement characters.
        ["pkg/latin1.py", "pkg/ok.py"]
    );
    let paths: Vec<&str> = warnings.iter().map(|w| w.path.as_str()).collect();
    assert!(paths.contains(&"pkg/latin1.py") && paths.contains(&"pkg/huge.py"), "{warnings:?}");
}

#[test]
fn package_without_registry_is_empty_not_an_error() {
    let tree = MemTree::from_files("dyn", [("dynamo/__init__.py", "import os\n")]);
    let mut warnings = Vec::new();
    let registry = extract_env(&Package::new(&tree, "dynamo"), SGLANG_ENV_FILES, &mut warnings);
    assert_eq!(registry, EnvRegistry::default());
    assert!(warnings.is_empty());
}

/// A name read through a constant of its file: a module-level `NAME = "X"`,
/// a class attribute read as `self.ATTR` (TensorRT-LLM's logger) or
/// `Class.ATTR`. A name bound twice, or to something else than a string, or
/// an attribute of another object, names nothing.
#[test]
fn names_read_through_constants_of_the_file() {
    let source = r#"import os

FORCE_ENV = "TLLM_FORCE"
TWICE = "TLLM_ONE"
TWICE = "TLLM_TWO"


class Logger:
    ENV_VARIABLE = "TLLM_LOG_LEVEL"

    def __init__(self):
        self.level = os.environ.get(self.ENV_VARIABLE)


class Launch:
    INDEX = "TLLM_INDEX"


def read():
    a = os.environ.get(FORCE_ENV)
    b = os.getenv(Launch.INDEX, "0")
    c = os.environ.get(TWICE)
    d = os.environ.get(other.ENV_VARIABLE)
    return a, b, c, d
"#;
    let mut warnings = Vec::new();
    let file = crate::extract::symbols::parse_source("pkg/log.py", source.as_bytes().to_vec(), &mut warnings).unwrap();
    let reads = reads::reads_in_file(&file, &[], &|n: &str| n.starts_with("TLLM_"));
    let found: Vec<(&str, u32)> = reads.iter().map(|r| (r.name.as_str(), r.evidence.line)).collect();
    assert_eq!(found, [("TLLM_LOG_LEVEL", 12), ("TLLM_FORCE", 20), ("TLLM_INDEX", 21)]);
    assert_eq!(reads[2].default, Some(Known::Value(json!("0"))));
}
