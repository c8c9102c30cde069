//! The vLLM way of building the parser, on `fixtures/vllm-mini` (the real
//! files' shape, cut down): `make_arg_parser` imported by the serve command,
//! frontend flags from a loop over a config class's `get_kwargs`, engine flags
//! from `**get_kwargs(Config)["field"]` with edits, the parser class's action
//! registry, help-text deprecations, and the engine-only parser marker.

use crate::extract::{extract_surface, Demand};
use crate::profiles::VLLM;
use crate::source::DirTree;
use crate::surface::{EngineSurface, FlagDeprecationKind, Known};
use serde_json::json;

fn surface() -> EngineSurface {
    let tree = DirTree::open(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/vllm-mini")).unwrap();
    extract_surface(&tree, &VLLM, "vllm", "mini", &Demand::full(&VLLM))
}

#[test]
fn serve_parser_as_vllm_builds_it() {
    let s = surface();
    let names: Vec<&str> = s.flags.iter().map(|f| f.canonical()).collect();
    assert_eq!(
        names,
        [
            "-h",
            "--headless",
            "--api-server-count",
            "--chat-template",
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "--default-chat-template-kwargs",
            "--host",
            "--port",
            "--allowed-origins",
            "--uvicorn-log-level",
            "--model",
            "--runner",
            "--tokenizer-mode",
            "--max-model-len",
            "--calculate-kv-scales",
            "--gpu-memory-utilization",
            "--kv-cache-dtype",
            "--enable-prefix-caching",
            "--mamba-cache-mode",
            "--tensor-parallel-size",
            "--collect-detailed-traces",
            "--log-level",
            "--mm-processor-device",
            "--enable-log-requests"
        ],
        "the positional model_tag is no option"
    );
    let flag = |n: &str| s.flag(n).unwrap_or_else(|| panic!("{n}"));
    assert_eq!(flag("-tp").dest, "tensor_parallel_size");
    assert_eq!(flag("--device-memory-utilization").dest, "gpu_memory_utilization");
    // The registry pairs --enable-x with --disable-x, the --no- form kept last.
    assert_eq!(
        flag("--enable-prefix-caching").names,
        ["--enable-prefix-caching", "--disable-prefix-caching", "--no-enable-prefix-caching"]
    );
    assert_eq!(flag("--enable-prefix-caching").action, "EnableDisableAction");
    assert_eq!(flag("--enable-prefix-caching").default, Known::Value(json!(null)), "the default overridden in the keywords dict");
    assert_eq!(flag("--calculate-kv-scales").names, ["--calculate-kv-scales", "--no-calculate-kv-scales"]);
    // Literal aliases from other modules, sorted; `remove` applied; None for optionals.
    assert_eq!(flag("--runner").choices, Some(Known::Value(vec![json!("auto"), json!("draft"), json!("generate"), json!("pooling")])));
    assert_eq!(flag("--kv-cache-dtype").choices, Some(Known::Value(vec![json!("auto"), json!("fp8")])));
    assert_eq!(flag("--tokenizer-mode").choices, None, "with `| str` the options are a metavar, not choices");
    assert_eq!(flag("--uvicorn-log-level").choices, Some(Known::Value(vec![json!("debug"), json!("info"), json!("warning")])));
    // Choices built at import time: `get_args` of a `Literal` alias of another
    // module (in its order), permutations of one appended to the sorted
    // choices, and the device type every GPU platform agrees on.
    assert_eq!(flag("--log-level").choices, Some(Known::Value(["ERROR", "WARNING", "INFO", "DEBUG"].map(|c| json!(c)).to_vec())));
    assert_eq!(
        flag("--collect-detailed-traces").choices,
        Some(Known::Value(
            [json!("all"), json!("model"), json!("worker"), json!(null)]
                .into_iter()
                .chain(["model,worker", "model,all", "worker,model", "worker,all", "all,model", "all,worker"].map(|c| json!(c)))
                .collect()
        ))
    );
    assert_eq!(flag("--mm-processor-device").choices, Some(Known::Value(vec![json!("auto"), json!("cpu"), json!("cuda")])));
    assert_eq!(flag("--port").default, Known::Value(json!(8000)));
    assert_eq!(flag("--max-model-len").default, Known::Value(json!(null)));
    // The subclass's customisation ran after its base's (`super()`): nargs deleted.
    assert_eq!(flag("--allowed-origins").nargs, None);
    assert_eq!(flag("--allowed-origins").type_name.as_deref(), Some("json.loads"));
    assert_eq!(flag("--default-chat-template-kwargs").type_name.as_deref(), Some("json.loads"));
}

#[test]
fn deprecations_and_the_engine_only_parser() {
    let s = surface();
    let dep = |n: &str| s.flag(n).and_then(|f| f.deprecated.as_ref()).map(|d| d.kind);
    assert_eq!(dep("--calculate-kv-scales"), Some(FlagDeprecationKind::Announced), "the field docstring says so");
    assert_eq!(dep("--mamba-cache-mode"), Some(FlagDeprecationKind::Noop), "the help constant says it has no effect");
    assert_eq!(dep("--runner"), None);
    let engine = |n: &str| s.flag(n).and_then(|f| f.engine_parser);
    for serve_only in ["--host", "--port", "--tool-call-parser", "--headless", "-h"] {
        assert_eq!(engine(serve_only), Some(false), "{serve_only}");
    }
    for both in ["--model", "-tp", "--enable-log-requests", "--disable-prefix-caching"] {
        assert_eq!(engine(both), Some(true), "{both}");
    }
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn env_registry_is_the_getter_dict() {
    let s = surface();
    let var = |n: &str| s.env.iter().find(|e| e.name == n && e.kind != "read").unwrap_or_else(|| panic!("{n}"));
    assert_eq!(var("VLLM_HOST_IP").default, Known::Value(json!("")), "the getter, not the TYPE_CHECKING declaration");
    assert_eq!(var("VLLM_USE_V1").default, Known::Value(json!(true)));
    assert_eq!(var("VLLM_TARGET_DEVICE").default, Known::Value(json!("cuda")));
    assert!(var("VLLM_PORT").default.is_dynamic(), "a test of `os.environ` membership is not folded");
    assert!(var("VLLM_LOGGING_LEVEL").default.is_dynamic(), "a helper-built getter is not folded");
    assert_eq!(var("VLLM_LOGGING_LEVEL").kind, "env_with_choices");
}
