use std::path::Path;

use super::*;
use crate::source::{DirTree, MemTree};

const BOOT: &str = "components/src/dynamo/sglang/boot.py";
const WORKER: &str = "components/src/dynamo/sglang/worker.py";

fn fixture_uses() -> (Vec<ConsumerUse>, Vec<ExtractWarning>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/consumer");
    let tree = DirTree::open(&root).expect("fixture tree opens");
    let pkg = Package::new(&tree, "components/src/dynamo");
    let mut warnings = Vec::new();
    let uses = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
    (uses, warnings)
}

fn mem_uses(files: &[(&str, &str)]) -> (Vec<ConsumerUse>, Vec<ExtractWarning>) {
    let tree = MemTree::from_files("t", files.iter().copied());
    let pkg = Package::new(&tree, "pkg/dynamo");
    let mut warnings = Vec::new();
    let uses = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
    (uses, warnings)
}

/// The one import of `module` (and `name`) in `path`.
fn import<'u>(uses: &'u [ConsumerUse], path: &str, module: &str, name: Option<&str>) -> &'u ConsumerUse {
    let found: Vec<_> = uses
        .iter()
        .filter(|u| u.evidence.path == path)
        .filter(|u| matches!(&u.kind, UseKind::Import { module: m, name: n, .. } if m == module && n.as_deref() == name))
        .collect();
    assert_eq!(found.len(), 1, "imports of {module} {name:?}: {found:#?}");
    found[0]
}

/// Every use of `attribute` in `path`.
fn attribute<'u>(uses: &'u [ConsumerUse], path: &str, attribute: &str) -> Vec<&'u ConsumerUse> {
    uses.iter()
        .filter(|u| u.evidence.path == path)
        .filter(|u| matches!(&u.kind, UseKind::Attribute { attribute: a, .. } if a == attribute))
        .collect()
}

/// The one use of `attribute` in worker.py.
fn only(uses: &[ConsumerUse], name: &str) -> ConsumerUse {
    let found = attribute(uses, WORKER, name);
    assert_eq!(found.len(), 1, "uses of {name}: {found:#?}");
    found[0].clone()
}

fn try_except<'c>(catches: &'c [&'c str]) -> impl Fn(&Option<Guard>) -> bool + 'c {
    move |guard| matches!(guard, Some(Guard { kind: GuardKind::TryExcept { catches: c, .. }, .. }) if c == catches)
}

fn hasattr_guard(fallback: &str) -> Option<Guard> {
    Some(Guard { kind: GuardKind::Hasattr, fallback: fallback.to_string(), then_calls: Vec::new() })
}

fn flags(u: &ConsumerUse) -> (bool, bool) {
    match u.kind {
        UseKind::Attribute { called, write, .. } => (called, write),
        _ => panic!("not an attribute use: {u:?}"),
    }
}

#[test]
fn top_level_imports_and_their_handlers() {
    let (uses, warnings) = fixture_uses();
    assert!(warnings.is_empty(), "{warnings:?}");

    let sgl = import(&uses, BOOT, "sglang", None);
    assert!(sgl.top_level && sgl.guard.is_none());
    assert_eq!(sgl.snippet, "import sglang as sgl");
    assert_eq!(sgl.evidence.line, 6);
    let limits = import(&uses, BOOT, "sglang.srt.engine_config", Some("Limits"));
    assert_eq!(
        limits.kind,
        UseKind::Import { module: "sglang.srt.engine_config".into(), name: Some("Limits".into()), alias: Some("EngineLimits".into()) }
    );
    import(&uses, BOOT, "sglang.srt.engine_config", Some("EngineConfig"));

    let fast = import(&uses, BOOT, "sglang.srt.fast_path", Some("accelerate"));
    assert!(try_except(&["ImportError"])(&fast.guard));
    assert_eq!(fast.guard.as_ref().unwrap().fallback, "accelerate = None");

    // `except ModuleNotFoundError as err: if err.name != ...: raise` still recovers;
    // the fallback is the import after the filter, which runs only in the handler.
    let moved = import(&uses, BOOT, "sglang.srt.tools.merger", Some("Merger"));
    let guard = moved.guard.as_ref().unwrap();
    assert_eq!(guard.kind, GuardKind::TryExcept { catches: vec!["ModuleNotFoundError".into()], try_line: 14 });
    assert_eq!(guard.fallback, "from sglang.srt.merger import Merger");
    let old = import(&uses, BOOT, "sglang.srt.merger", Some("Merger"));
    assert!(old.guard.is_none() && old.top_level);
    assert_eq!(old.in_except, Some(ExceptContext { try_line: 14, catches: vec!["ModuleNotFoundError".into()] }));

    let tuple = import(&uses, BOOT, "sglang.srt.optional_a", None);
    assert!(try_except(&["OSError", "ImportError"])(&tuple.guard));
    assert!(matches!(&tuple.kind, UseKind::Import { alias: Some(a), .. } if a == "optional_a"));
    let bare = import(&uses, BOOT, "sglang.srt.optional_b", None);
    assert!(try_except(&[])(&bare.guard));
    assert_eq!(bare.guard.as_ref().unwrap().fallback, "pass");

    assert!(import(&uses, BOOT, "sglang.srt.wrong_handler", None).guard.is_none());
    // A handler that logs and re-raises does not recover.
    assert!(import(&uses, BOOT, "sglang.srt.logged_only", None).guard.is_none());

    let outer = import(&uses, BOOT, "sglang.srt.outer_guard", None);
    assert!(try_except(&["ImportError"])(&outer.guard) && outer.in_except.is_none());
    let second = import(&uses, BOOT, "sglang.srt.second_choice", None);
    assert!(try_except(&["ImportError"])(&second.guard));
    assert_eq!(second.in_except.as_ref().map(|e| e.try_line), Some(42));

    let hint = import(&uses, BOOT, "sglang.srt.typing_only", Some("Hint"));
    assert!(hint.type_only && hint.top_level);
    assert!(!outer.type_only);

    // A class body runs at import time.
    assert!(import(&uses, BOOT, "sglang.srt.in_class_body", Some("Table")).top_level);
}

#[test]
fn imports_inside_functions() {
    let (uses, _) = fixture_uses();
    let late = import(&uses, BOOT, "sglang.srt.late", Some("late_fn"));
    assert!(!late.top_level && late.guard.is_none());
    // A def inside a `try` body runs later, outside that `try`.
    let deferred = import(&uses, BOOT, "sglang.srt.deferred", None);
    assert!(!deferred.top_level && deferred.guard.is_none());
    let guarded = import(&uses, BOOT, "sglang.srt.guarded_late", Some("other_fn"));
    assert!(try_except(&["BaseException"])(&guarded.guard));
    assert_eq!(guarded.guard.as_ref().unwrap().fallback, "other_fn = None");
    let dynamic = import(&uses, BOOT, "sglang.srt.dynamic_mod", None);
    assert!(!dynamic.top_level);
}

#[test]
fn only_engine_imports_in_scope_are_reported() {
    let (uses, _) = fixture_uses();
    let modules: Vec<&str> = uses
        .iter()
        .filter_map(|u| match &u.kind {
            UseKind::Import { module, .. } => Some(module.as_str()),
            _ => None,
        })
        .collect();
    assert!(modules.iter().all(|m| m.starts_with("sglang")), "{modules:?}");
    for absent in ["sglang.srt.only_in_tests", "sglang.srt.outside_scope"] {
        assert!(!modules.contains(&absent), "{absent} is out of scope");
    }
    assert!(uses.iter().all(|u| !u.evidence.path.contains("/tests/")));
    // `sgl.Engine` is a module attribute, not a ServerArgs attribute.
    assert!(attribute(&uses, BOOT, "Engine").is_empty());
}

#[test]
fn server_args_values_are_found_by_type_construction_and_name() {
    let (uses, _) = fixture_uses();
    let port = only(&uses, "port");
    assert!(port.top_level, "class-level use at module level");
    assert_eq!(flags(&port), (false, false));
    assert_eq!(flags(&only(&uses, "add_cli_args")), (true, false));
    assert_eq!(flags(&only(&uses, "from_cli_args")), (true, false));
    for name in ["alpha", "beta", "gamma", "delta", "page_size", "context_length", "served_model_name", "held", "private_held"] {
        let u = only(&uses, name);
        assert_eq!(flags(&u), (false, false), "{name}");
        assert!(!u.top_level && u.guard.is_none(), "{name}");
    }
    for name in ["tuned", "after_join", "counter", "scratch"] {
        assert_eq!(flags(&only(&uses, name)), (false, true), "{name}");
    }
    assert_eq!(only(&uses, "page_size").snippet, "a = server_args.page_size");
}

#[test]
fn stubs_and_other_objects_are_not_server_args() {
    let (uses, _) = fixture_uses();
    // Written on a SimpleNamespace stub in one branch of the `if`.
    assert!(attribute(&uses, WORKER, "stub_only").is_empty());
    for name in ["helper", "server_args_like", "ServerArgs"] {
        assert!(attribute(&uses, WORKER, name).is_empty(), "{name}");
    }
    // `server_args = {...}` then `args.page_size`: only the one conventional use counts.
    assert_eq!(attribute(&uses, WORKER, "page_size").len(), 1);
}

#[test]
fn getattr_hasattr_and_setattr() {
    let (uses, _) = fixture_uses();
    let with_default = only(&uses, "with_default");
    assert_eq!(with_default.guard, Some(Guard { kind: GuardKind::Getattr, fallback: "None".into(), then_calls: Vec::new() }));
    assert!(only(&uses, "without_default").guard.is_none());
    let probed = attribute(&uses, WORKER, "probed");
    assert_eq!(probed.len(), 2);
    assert_eq!(probed[0].guard, hasattr_guard("False"), "the hasattr call itself");
    assert_eq!(probed[1].guard, hasattr_guard("z = 0"), "the read in the if body");
    let assigned = only(&uses, "assigned");
    assert_eq!(flags(&assigned), (false, true));
    assert!(assigned.guard.is_none());
}

#[test]
fn hasattr_conditions_guard_what_runs_when_they_hold() {
    let (uses, _) = fixture_uses();
    // Every use except the `hasattr(...)` probe itself (whose fallback is `False`).
    let guarded_read = |name: &str| {
        let reads: Vec<_> = attribute(&uses, WORKER, name).into_iter().filter(|u| u.guard != hasattr_guard("False")).collect();
        assert_eq!(reads.len(), 1, "reads of {name}: {reads:#?}");
        reads[0].clone()
    };
    assert!(matches!(guarded_read("legacy").guard, Some(Guard { kind: GuardKind::Hasattr, .. })));
    assert!(matches!(guarded_read("flag").guard, Some(Guard { kind: GuardKind::Hasattr, .. })));
    assert_eq!(guarded_read("ternary").guard, hasattr_guard("None"));
    assert_eq!(guarded_read("second").guard, hasattr_guard("(elif body skipped)"));
    assert_eq!(guarded_read("early").guard, hasattr_guard("return None"));
    // The `else` of `if not hasattr(...): raise`: a missing attribute still fails.
    assert!(guarded_read("needed").guard.is_none());
    // The `else` after `if hasattr(sa, "elsewhere")` runs exactly when it is missing.
    assert!(guarded_read("elsewhere").guard.is_none());
}

#[test]
fn try_guards_attribute_uses_only_with_a_matching_handler() {
    let (uses, _) = fixture_uses();
    let mla = only(&uses, "use_mla_backend");
    assert_eq!(flags(&mla), (true, false));
    assert!(try_except(&["Exception"])(&mla.guard));
    assert_eq!(mla.guard.unwrap().fallback, "print(\"no mla\", e)");
    let kind = only(&uses, "kind");
    assert!(try_except(&["KeyError", "AttributeError"])(&kind.guard));
    assert_eq!(kind.guard.unwrap().fallback, "kind = \"none\"");
    assert!(only(&uses, "size").guard.is_none(), "ValueError does not catch AttributeError");
    assert!(only(&uses, "in_lambda").guard.is_none(), "a lambda runs outside the try");
    assert!(only(&uses, "in_finally").guard.is_none());
}

#[test]
fn output_is_sorted_and_serialises_with_type_tags() {
    let (uses, _) = fixture_uses();
    let keys: Vec<_> = uses.iter().map(|u| (u.evidence.clone(), u.kind.clone())).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let mla = only(&uses, "use_mla_backend");
    let json = serde_json::to_value(&mla).unwrap();
    assert_eq!(
        json["kind"],
        serde_json::json!({
            "type": "attribute", "class": "ServerArgs", "attribute": "use_mla_backend", "called": true, "write": false
        })
    );
    assert_eq!(json["guard"]["kind"]["type"], "try_except");
    assert_eq!(json["evidence"]["path"], WORKER);
}

#[test]
fn module_named_server_args_is_not_a_value() {
    let (uses, _) = mem_uses(&[(
        "pkg/dynamo/sglang/m.py",
        "import sglang.srt.server_args\nfrom sglang.srt import server_args\n\
         A = server_args.ServerArgs\nB = sglang.srt.server_args.ServerArgs.field_x\n",
    )]);
    let attributes: Vec<_> = uses
        .iter()
        .filter_map(|u| match &u.kind {
            UseKind::Attribute { attribute, .. } => Some(attribute.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(attributes, ["field_x"]);
}

#[test]
fn syntax_errors_give_partial_facts_and_a_warning() {
    let (uses, warnings) = mem_uses(&[(
        "pkg/dynamo/sglang/bad.py",
        "import sglang.srt.before\ndef f(:\n    pass\n\ndef g(server_args):\n    return server_args.after\n",
    )]);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].path, "pkg/dynamo/sglang/bad.py");
    assert!(warnings[0].message.contains("line 2"), "{}", warnings[0].message);
    import(&uses, "pkg/dynamo/sglang/bad.py", "sglang.srt.before", None);
}

#[test]
fn invalid_utf8_is_read_with_replacement_and_warned() {
    let mut tree = MemTree::new("t");
    tree.insert("pkg/dynamo/sglang/latin1.py", b"# caf\xe9\nimport sglang.srt.x\n".to_vec());
    let pkg = Package::new(&tree, "pkg/dynamo");
    let mut warnings = Vec::new();
    let uses = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("UTF-8"));
    import(&uses, "pkg/dynamo/sglang/latin1.py", "sglang.srt.x", None);
}

#[test]
fn deep_nesting_is_cut_off_with_a_warning() {
    let depth = 2000;
    let source = format!("x = {}server_args.deep{}\n", "(".repeat(depth), ")".repeat(depth));
    let (uses, warnings) = mem_uses(&[("pkg/dynamo/sglang/deep.py", source.as_str())]);
    assert!(warnings.iter().any(|w| w.message.contains("nested more than 400 levels deep")), "{warnings:?}");
    assert!(uses.is_empty());
}

/// Acceptance against real Dynamo source, when available (`ENGINE_AUDIT_SRC=/tmp/src`).
#[test]
fn real_dynamo_1_3_acceptance() {
    let Some(src) = std::env::var_os("ENGINE_AUDIT_SRC") else {
        eprintln!("skipped: set ENGINE_AUDIT_SRC=/tmp/src to run against real Dynamo source");
        return;
    };
    let tree = DirTree::open(&Path::new(&src).join("dynamo-v1.3.0.post1")).expect("dynamo v1.3.0.post1 checkout");
    let pkg = Package::new(&tree, "components/src/dynamo");
    let mut warnings = Vec::new();
    let uses = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");

    let args = "components/src/dynamo/sglang/args.py";
    let parser = import(&uses, args, "sglang.srt.server_args_config_parser", Some("ConfigArgumentMerger"));
    assert!(parser.top_level && parser.guard.is_none() && parser.in_except.is_none());

    let register = "components/src/dynamo/sglang/register.py";
    let mla = attribute(&uses, register, "use_mla_backend");
    assert_eq!(mla.len(), 1, "{mla:#?}");
    assert_eq!(flags(mla[0]), (true, false));
    assert!(try_except(&["Exception"])(&mla[0].guard), "{:?}", mla[0].guard);
    assert!(!mla[0].top_level);

    // The diffusion stub in args.py is written under the name `server_args`; its
    // writes are not ServerArgs uses.
    let stub_write = uses.iter().any(|u| u.evidence.path == args && u.snippet.starts_with("server_args.dllm_algorithm = False"));
    assert!(!stub_write);
}
