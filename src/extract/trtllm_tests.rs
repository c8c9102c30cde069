//! A mini TensorRT-LLM in upstream's shape, written for these tests: the click
//! command `serve` in `commands/serve.py` and the pydantic models of
//! `llmapi/llm_args.py` (a strict base, nested configs, an enum, a loose model,
//! an override, a union picked at run time, private and class attributes).

use crate::extract::{extract_surface, Demand};
use crate::profiles::TRTLLM;
use crate::source::MemTree;
use crate::surface::{ConfigKey, EngineSurface, ExtraPolicy, Flag, FlagDeprecationKind, Known, PyValue};

const SERVE: &str = r#"import os

import click

from tensorrt_llm.llmapi.llm_args import BuildConfig

LOG_LEVELS = ["info", "debug"] + ["error"]


def stability(text: str, status: str) -> str:
    return f":tag:`{status}` {text}"


def unrelated():
    pass


@click.group()
def main():
    pass


@click.command("serve")
@click.argument("model", type=str)
@click.option("--host", type=str, default="localhost", help=stability("Where to listen.", "beta"))
@click.option("--port", type=int, default=8000, help=stability("Port.", "beta"))
@click.option("--backend",
              type=click.Choice(["pytorch", "_autodeploy"]),
              default="pytorch",
              help=stability("Which backend.", "deprecated"))
@click.option("--log_level", type=click.Choice(LOG_LEVELS), default="info", help="Log level.")
@click.option("--tp_size", "--tensor_parallel_size", "tensor_parallel_size", type=int, default=1)
@click.option("--ep_size", "--moe_expert_parallel_size", type=int, default=None)
@click.option("--config", "--extra_llm_api_options", "extra_llm_api_options", type=str, default=None,
              help=stability("A YAML file of LlmArgs.", "prototype"))
@click.option("--trust_remote_code", is_flag=True, default=False)
@click.option("--telemetry/--no-telemetry", default=True)
@click.option("--custom_module_dirs", type=click.Path(exists=True), multiple=True, default=None)
@click.option("--max_batch_size", type=int, default=BuildConfig.model_fields["max_batch_size"].default)
@click.option("--num_workers", default=4)
def serve(model, host, port, backend, log_level, tensor_parallel_size, ep_size, extra_llm_api_options,
          trust_remote_code, telemetry, custom_module_dirs, max_batch_size, num_workers):
    click.option("--not-a-decorator")
    if os.getenv("TRTLLM_SERVER_DISABLE_GC", "0") == "1":
        pass
    level = os.environ.get("TLLM_LOG_LEVEL")
"#;

/// Upstream keeps its strict base beside the models, in `llmapi/utils.py`.
const UTILS: &str = r#"from pydantic import BaseModel, ConfigDict


class StrictBaseModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
"#;

const LLM_ARGS: &str = r#"from enum import Enum
from typing import ClassVar, Literal, Optional, Union

from pydantic import AliasChoices, BaseModel, ConfigDict, PrivateAttr
from pydantic import Field as PydanticField

from .utils import StrictBaseModel


def Field(default=..., *, status=None, **kwargs):
    if status is not None:
        kwargs["json_schema_extra"] = {"status": status}
    return PydanticField(default, **kwargs)


class CapacitySchedulerPolicy(str, Enum):
    MAX_UTILIZATION = "MAX_UTILIZATION"
    GUARANTEED_NO_EVICT = "GUARANTEED_NO_EVICT"


class KvCacheConfig(StrictBaseModel):
    free_gpu_memory_fraction: Optional[float] = Field(
        default=0.9,
        validation_alias=AliasChoices("free_gpu_memory_fraction", "kv_cache_free_gpu_memory_fraction"),
        description="Share of free memory.")
    dtype: Literal["auto", "fp8"] = "auto"
    enable_block_reuse: bool = True


class MoeConfig(StrictBaseModel):
    backend: Literal["CUTLASS", "TRTLLM"] = Field(default="CUTLASS", json_schema_extra={"status": "beta"})


class LooseConfig(BaseModel):
    enabled: bool = PydanticField(default=False, alias="on")


class BuildConfig(StrictBaseModel):
    max_batch_size: int = 2048


class BaseLlmArgs(StrictBaseModel):
    model: str = Field(..., description="The model.")
    tensor_parallel_size: int = Field(default=1, status="beta")
    kv_cache_config: KvCacheConfig = Field(default_factory=KvCacheConfig, status="beta")
    _engine: int = PrivateAttr(default=0)
    hint: ClassVar[str] = "x"


class TorchLlmArgs(BaseLlmArgs):
    moe_config: MoeConfig = Field(default_factory=MoeConfig)
    loose_config: Optional[LooseConfig] = None
    policy: CapacitySchedulerPolicy = CapacitySchedulerPolicy.GUARANTEED_NO_EVICT
    old_knob: Optional[int] = Field(default=None, status="deprecated", description="Use moe_config.backend instead.")
    speculative_config: Optional[Union[KvCacheConfig, MoeConfig]] = None
    tensor_parallel_size: int = Field(default=2, status="beta")
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
"#;

fn surface() -> EngineSurface {
    let tree = MemTree::from_files(
        "v1.3.0rc1",
        [
            ("tensorrt_llm/__init__.py", ""),
            ("tensorrt_llm/version.py", "__version__ = \"1.3.0rc1\"\n"),
            ("tensorrt_llm/commands/__init__.py", ""),
            ("tensorrt_llm/commands/serve.py", SERVE),
            ("tensorrt_llm/llmapi/__init__.py", ""),
            ("tensorrt_llm/llmapi/llm_args.py", LLM_ARGS),
            ("tensorrt_llm/llmapi/utils.py", UTILS),
        ],
    );
    extract_surface(&tree, &TRTLLM, "tensorrt_llm", "v1.3.0rc1", &Demand::full(&TRTLLM))
}

fn flag<'s>(s: &'s EngineSurface, dest: &str) -> &'s Flag {
    s.flags
        .iter()
        .find(|f| f.dest == dest)
        .unwrap_or_else(|| panic!("no flag {dest} in {:?}", s.flags.iter().map(|f| &f.dest).collect::<Vec<_>>()))
}

fn key<'s>(s: &'s EngineSurface, path: &str) -> &'s ConfigKey {
    s.config_keys
        .iter()
        .find(|k| k.path == path)
        .unwrap_or_else(|| panic!("no key {path} in {:?}", s.config_keys.iter().map(|k| &k.path).collect::<Vec<_>>()))
}

fn strings(values: &[&str]) -> Option<Known<Vec<PyValue>>> {
    Some(Known::Value(values.iter().map(|v| PyValue::from(*v)).collect()))
}

#[test]
fn serve_options_come_from_the_click_decorators_in_order() {
    let s = surface();
    let dests: Vec<&str> = s.flags.iter().map(|f| f.dest.as_str()).collect();
    assert_eq!(
        dests,
        [
            "host",
            "port",
            "backend",
            "log_level",
            "tensor_parallel_size",
            "ep_size",
            "extra_llm_api_options",
            "trust_remote_code",
            "telemetry",
            "custom_module_dirs",
            "max_batch_size",
            "num_workers"
        ],
        "the argument and a call inside the body are no options"
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(flag(&s, "port").default, Known::Value(PyValue::from(8000)));
    assert_eq!(flag(&s, "port").type_name.as_deref(), Some("int"));
    assert_eq!(flag(&s, "extra_llm_api_options").names, ["--config", "--extra_llm_api_options"]);
    assert_eq!(flag(&s, "tensor_parallel_size").names, ["--tp_size", "--tensor_parallel_size"]);
    // Click names the parameter after the first `--` option string.
    assert_eq!(flag(&s, "ep_size").names, ["--ep_size", "--moe_expert_parallel_size"]);
    assert_eq!(flag(&s, "ep_size").default, Known::Value(PyValue::Null));
}

#[test]
fn choices_types_and_status_tags_are_read() {
    let s = surface();
    let backend = flag(&s, "backend");
    assert_eq!(backend.choices, strings(&["pytorch", "_autodeploy"]));
    assert_eq!(backend.type_name.as_deref(), Some("Choice"));
    assert_eq!(backend.deprecated.as_ref().map(|d| d.kind), Some(FlagDeprecationKind::Announced));
    assert_eq!(backend.help.as_deref(), Some(":tag:`deprecated` Which backend."));
    assert_eq!(flag(&s, "log_level").choices, strings(&["info", "debug", "error"]), "a module constant list is folded");
    assert_eq!(flag(&s, "log_level").help.as_deref(), Some("Log level."));
    assert!(flag(&s, "host").deprecated.is_none());
    assert_eq!(flag(&s, "extra_llm_api_options").help.as_deref(), Some(":tag:`prototype` A YAML file of LlmArgs."));
    let trust = flag(&s, "trust_remote_code");
    assert_eq!((trust.action.as_str(), trust.type_name.as_deref()), ("store_true", Some("bool")));
    let telemetry = flag(&s, "telemetry");
    assert_eq!(telemetry.names, ["--telemetry", "--no-telemetry"]);
    assert_eq!(telemetry.default, Known::Value(PyValue::Bool(true)));
    let dirs = flag(&s, "custom_module_dirs");
    assert_eq!((dirs.action.as_str(), dirs.type_name.as_deref()), ("append", Some("Path")));
    assert_eq!(
        flag(&s, "max_batch_size").default,
        Known::Value(PyValue::from(2048)),
        "`BuildConfig.model_fields[...].default` is the model's declared default"
    );
    assert_eq!(flag(&s, "num_workers").type_name.as_deref(), Some("int"), "click infers the type from the default");
}

#[test]
fn llm_args_keys_nest_with_types_defaults_and_policies() {
    let s = surface();
    let paths: Vec<&str> = s.config_keys.iter().map(|k| k.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "model",
            "tensor_parallel_size",
            "kv_cache_config",
            "kv_cache_config.free_gpu_memory_fraction",
            "kv_cache_config.dtype",
            "kv_cache_config.enable_block_reuse",
            "moe_config",
            "moe_config.backend",
            "loose_config",
            "loose_config.enabled",
            "policy",
            "old_knob",
            "speculative_config",
        ],
        "bases first, an override in its base's place, private and class attributes left out"
    );
    let tp = key(&s, "tensor_parallel_size");
    assert_eq!((tp.model.as_str(), tp.default.clone()), ("TorchLlmArgs", Some(Known::Value(PyValue::from(2)))));
    assert_eq!(key(&s, "model").default, None, "`Field(...)` is required");
    let kv = key(&s, "kv_cache_config");
    assert_eq!(kv.nested.as_deref(), Some("KvCacheConfig"));
    assert_eq!(kv.default_factory.as_deref(), Some("KvCacheConfig"));
    assert!(matches!(kv.default, Some(Known::Dynamic { .. })));
    assert_eq!(kv.status.as_deref(), Some("beta"));
    assert_eq!(key(&s, "kv_cache_config.dtype").choices, strings(&["auto", "fp8"]));
    assert_eq!(key(&s, "kv_cache_config.dtype").extra, ExtraPolicy::Forbid, "inherited from the strict base");
    assert_eq!(key(&s, "kv_cache_config.free_gpu_memory_fraction").choices, None);
    assert_eq!(
        key(&s, "kv_cache_config.free_gpu_memory_fraction").aliases,
        ["kv_cache_free_gpu_memory_fraction"],
        "AliasChoices: the other names"
    );
    assert_eq!(key(&s, "moe_config.backend").status.as_deref(), Some("beta"), "status in json_schema_extra");
    assert_eq!(key(&s, "loose_config.enabled").extra, ExtraPolicy::Ignore, "pydantic's default drops unknown keys");
    assert_eq!(key(&s, "loose_config.enabled").default, Some(Known::Value(PyValue::Bool(false))), "pydantic's Field under another name");
    assert_eq!(key(&s, "loose_config.enabled").aliases, ["on"]);
    assert_eq!(key(&s, "policy").choices, strings(&["MAX_UTILIZATION", "GUARANTEED_NO_EVICT"]));
    assert_eq!(key(&s, "policy").default, Some(Known::Value(PyValue::from("GUARANTEED_NO_EVICT"))));
    let old = key(&s, "old_knob");
    assert_eq!(old.deprecated.as_deref(), Some("Use moe_config.backend instead."));
    assert_eq!(key(&s, "speculative_config").nested, None, "a union of models is picked at run time");
    assert_eq!(key(&s, "model").extra, ExtraPolicy::Forbid);
    assert_eq!(kv.evidence.path, "tensorrt_llm/llmapi/llm_args.py");
    assert_eq!(kv.evidence.line, 45);
    // In the JSON (`surface --format json`, the fact cache), a required field
    // has no `default` and a default of `None` is `null`: they stay apart.
    let json = |k: &ConfigKey| serde_json::to_value(k).unwrap();
    assert!(json(key(&s, "model")).get("default").is_none(), "required: no default");
    assert_eq!(json(old)["default"], serde_json::Value::Null, "`default=None`");
    for k in [key(&s, "model"), old] {
        let back: ConfigKey = serde_json::from_value(json(k)).unwrap();
        assert_eq!(back.default, k.default, "{}", k.path);
    }
}

#[test]
fn a_missing_command_or_model_is_a_warning_not_silence() {
    let tree = MemTree::from_files(
        "v0",
        [
            ("tensorrt_llm/__init__.py", ""),
            ("tensorrt_llm/commands/__init__.py", ""),
            ("tensorrt_llm/commands/serve.py", "import click\n\ndef serve():\n    pass\n"),
        ],
    );
    let s = extract_surface(&tree, &TRTLLM, "tensorrt_llm", "v0", &Demand::full(&TRTLLM));
    assert!(s.flags.is_empty() && s.config_keys.is_empty());
    let messages: Vec<&str> = s.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(messages.iter().any(|m| m.contains("no function `serve` decorated with `@click.command`")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("no class `TorchLlmArgs` found")), "{messages:?}");
}

/// The recipe JSON Schema of the mini release holds a schema-2 role's `args`
/// to the LlmArgs keys: nested, closed sets, forbidding models.
#[test]
fn the_recipe_schema_holds_role_args_to_the_llm_args_keys() {
    let schema = crate::recipe_schema::srt_slurm_schema(&surface(), "trtllm_config");
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors = |args: &str| {
        let recipe = format!("schema: 2\nengine: trtllm\nroles:\n  decode:\n    args:\n{args}");
        let instance: serde_json::Value = serde_yaml_ng::from_str(&recipe).unwrap();
        validator.iter_errors(&instance).map(|e| e.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(
        errors("      tensor_parallel_size: 4\n      kv_cache_config:\n        dtype: fp8\n      moe_config: {backend: TRTLLM}\n"),
        Vec::<String>::new()
    );
    assert_eq!(errors("      kv_cache_config:\n        dtypee: fp8\n").len(), 1, "KvCacheConfig forbids extras");
    assert_eq!(errors("      moe_config:\n        backend: DEEPGEMM\n").len(), 1, "not in the Literal");
    assert_eq!(errors("      policy: FIRST_COME\n").len(), 1, "not an enum value");
    assert!(errors("      loose_config:\n        anything: 1\n").is_empty(), "LooseConfig drops unknown keys");
}

/// `diff` between two releases reads the LlmArgs keys too: removed, added,
/// a default, a status and a closed set that changed.
#[test]
fn a_bump_diffs_the_llm_args_keys() {
    let old = surface();
    let new_args = LLM_ARGS
        .replace("    enable_block_reuse: bool = True\n", "    enable_block_reuse: bool = False\n    tokens_per_block: int = 32\n")
        .replace("Literal[\"auto\", \"fp8\"]", "Literal[\"auto\", \"fp8\", \"nvfp4\"]")
        .replace("json_schema_extra={\"status\": \"beta\"}", "json_schema_extra={\"status\": \"deprecated\"}")
        .replace(
            "    old_knob: Optional[int] = Field(default=None, status=\"deprecated\", description=\"Use moe_config.backend instead.\")\n",
            "",
        );
    let tree = MemTree::from_files(
        "v1.3.0rc2",
        [
            ("tensorrt_llm/__init__.py", ""),
            ("tensorrt_llm/commands/__init__.py", ""),
            ("tensorrt_llm/commands/serve.py", SERVE),
            ("tensorrt_llm/llmapi/__init__.py", ""),
            ("tensorrt_llm/llmapi/llm_args.py", new_args.as_str()),
            ("tensorrt_llm/llmapi/utils.py", UTILS),
        ],
    );
    let new = extract_surface(&tree, &TRTLLM, "tensorrt_llm", "v1.3.0rc2", &Demand::full(&TRTLLM));
    let d = crate::surface_diff::diff(&old, &new);
    let paths = |v: &[crate::surface_diff::FlagChange]| v.iter().map(|c| c.flag.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&d.config_keys_removed), ["old_knob"]);
    assert_eq!(paths(&d.config_keys_added), ["kv_cache_config.tokens_per_block"]);
    let changes: Vec<(String, String, String, String)> =
        d.config_values_changed.iter().map(|c| (c.subject.clone(), c.what.clone(), c.from.to_string(), c.to.to_string())).collect();
    assert_eq!(
        changes,
        [
            ("kv_cache_config.enable_block_reuse".into(), "default".into(), "true".into(), "false".into()),
            ("moe_config.backend".into(), "status".into(), "\"beta\"".into(), "\"deprecated\"".into()),
        ]
    );
    assert_eq!(d.config_choices_changed.len(), 1);
    assert_eq!(
        (d.config_choices_changed[0].flag.as_str(), d.config_choices_changed[0].added.clone()),
        ("kv_cache_config.dtype", vec![PyValue::from("nvfp4")])
    );
    assert!(d.flags_added.is_empty() && d.flags_removed.is_empty(), "the serve options did not change");
    let text = crate::cmd::diff::render(&d, false);
    assert!(text.contains("Config keys removed (1):\n  old_knob (tensorrt_llm/llmapi/llm_args.py:"), "{text}");
}

/// With no registry, `TRTLLM_*` / `TLLM_*` are found where they are read, with
/// the default the read gives.
#[test]
fn env_vars_are_found_where_they_are_read() {
    let s = surface();
    let names: Vec<&str> = s.env.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["TLLM_LOG_LEVEL", "TRTLLM_SERVER_DISABLE_GC"], "{:?}", s.env);
    let gc = s.env.iter().find(|e| e.name == "TRTLLM_SERVER_DISABLE_GC").unwrap();
    assert_eq!(gc.default, Known::Value(PyValue::from("0")));
    assert_eq!(gc.evidence.path, "tensorrt_llm/commands/serve.py");
}

/// A union picked through a table by a value lowered first, declared straight
/// in the annotation (no alias): each member's keys under `field[value]`, and
/// the written value matched without case.
#[test]
fn a_union_dispatched_on_a_lowered_value() {
    let args = r#"from typing import ClassVar, Optional, Union

from .utils import StrictBaseModel


class AttentionBase(StrictBaseModel):
    window: Optional[int] = None

    @classmethod
    def from_dict(cls, data: dict):
        kinds = {"local": LocalAttention, "strided": StridedAttention}
        kind = data.get("kind", None)
        if kind is None:
            raise ValueError("a kind is required")
        chosen = kinds.get(kind.lower())
        return chosen(**{k: v for k, v in data.items() if k != "kind"})


class LocalAttention(AttentionBase):
    kind: ClassVar[str] = "local"
    radius: int = 64


class StridedAttention(AttentionBase):
    kind: ClassVar[str] = "strided"
    stride: int = 2


class TorchLlmArgs(StrictBaseModel):
    attention_config: Optional[Union[LocalAttention, StridedAttention]] = None
"#;
    let tree = MemTree::from_files(
        "v0",
        [
            ("tensorrt_llm/__init__.py", ""),
            ("tensorrt_llm/llmapi/__init__.py", ""),
            ("tensorrt_llm/llmapi/llm_args.py", args),
            ("tensorrt_llm/llmapi/utils.py", UTILS),
        ],
    );
    let s = extract_surface(&tree, &TRTLLM, "tensorrt_llm", "v0", &Demand::full(&TRTLLM));
    let paths: Vec<&str> = s.config_keys.iter().map(|k| k.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "attention_config",
            "attention_config[local].window",
            "attention_config[local].radius",
            "attention_config[strided].window",
            "attention_config[strided].stride"
        ]
    );
    let union = key(&s, "attention_config").union.clone().expect("a dispatched union");
    assert_eq!(union.discriminator, "kind");
    assert!(union.lowercased && union.branched.is_empty(), "{union:?}");
    assert_eq!(union.member("Strided").map(|m| m.model.as_str()), Some("StridedAttention"));
    assert_eq!(union.member("dense"), None);
    assert_eq!(key(&s, "attention_config").nested, None);
}
