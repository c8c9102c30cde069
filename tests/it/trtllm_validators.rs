//! TensorRT-LLM's `@field_validator`s read as the guards that open them: a
//! recipe value a guard rejects is EA006 with the validator's line as
//! evidence; a guard that accepts first, a validator that sees the raw input
//! (`mode="before"`), one that may hand on another value, and a test on
//! anything but the value leave the recipe's value alone.

use super::pr::json;
use super::trtllm_audit::audit;
use super::trtllm_unions::write_package;
use serde_json::Value;
use std::path::{Path, PathBuf};

const ARGS: &str = r#"from typing import List, Optional

from pydantic import Field, field_validator

from .utils import StrictBaseModel


class PoolBase(StrictBaseModel):
    slots: int = 8

    @field_validator("slots")
    @classmethod
    def check_slots(cls, v):
        if v > 1000:
            raise ValueError("too many slots in the base")
        return v


class PoolConfig(PoolBase):
    share: Optional[float] = 0.9
    chunk: int = 64
    ways: int = 2
    window: Optional[List[int]] = None
    spare: int = 0

    @field_validator("share")
    @classmethod
    def check_share(cls, v: Optional[float]):
        """The share of memory, a fraction."""
        # Unset is fine.
        if v is None:
            return v
        if not 0 < v <= 1:
            raise ValueError("share must be in (0, 1]")
        return v

    @field_validator("chunk", "ways")
    @classmethod
    def check_positive(cls, value):
        if value <= 0 or value > 4096:
            raise ValueError(f"must be positive and small, got {value}")
        return value

    @field_validator("ways", mode="before")
    @classmethod
    def raw_ways(cls, v):
        if v < 100:
            raise ValueError("never read: it sees the raw input")
        return v

    @field_validator("spare")
    @classmethod
    def round_spare(cls, v):
        v = v * 2
        if v < 0:
            raise ValueError("after a change of the value: not read")
        return v

    @field_validator("slots")
    @classmethod
    def check_slots(cls, v):
        if v < 1:
            raise ValueError("at least one slot")
        return v


class TorchLlmArgs(StrictBaseModel):
    model: str = Field(...)
    pool_config: PoolConfig = Field(default_factory=PoolConfig)
"#;

fn package(dir: &Path) -> PathBuf {
    let root = dir.join("trtllm-validators");
    write_package(&root, ARGS);
    root
}

fn recipe(pool: &str) -> String {
    format!(
        "schema: 2\nname: pools\nmodel:\n  path: /models/m\n  container: nvcr.io/nvidia/tensorrt-llm/release:1.1.0\n  precision: fp8\n\
         frontend:\n  type: trtllm_serve\nengine:\n  type: trtllm\nroles:\n  agg:\n    args:\n      pool_config:\n{pool}"
    )
}

/// The EA006 findings of a pool block: (subject, line, message, first evidence).
fn rejected(dir: &Path, engine: &Path, pool: &str) -> Vec<(String, u64, String, Value)> {
    let path = dir.join("pools.yaml");
    std::fs::write(&path, recipe(pool)).unwrap();
    let report = json(&audit(engine, &[&path], &[]));
    let text = |v: &Value| v.as_str().unwrap().to_string();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA006")
        .map(|f| (text(&f["subject"]), f["line"].as_u64().unwrap(), text(&f["message"]), f["evidence"][0].clone()))
        .collect()
}

#[test]
fn the_guards_are_read_per_field_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let engine = package(dir.path());
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--trtllm"])
        .arg(&engine)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let surface = json(&out);
    let key = |path: &str| surface["config_keys"].as_array().unwrap().iter().find(|k| k["path"] == path).unwrap().clone();
    let guards = |path: &str| -> Vec<(String, bool)> {
        key(path)["checks"]
            .as_array()
            .map(|checks| {
                checks
                    .iter()
                    .flat_map(|c| c["guards"].as_array().unwrap().clone())
                    .map(|g| (g["text"].as_str().unwrap().to_string(), g["rejects"].as_bool().unwrap()))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(guards("pool_config.share"), [("v is None".to_string(), false), ("not 0 < v <= 1".to_string(), true)]);
    assert_eq!(guards("pool_config.chunk"), [("value <= 0 or value > 4096".to_string(), true)]);
    assert_eq!(guards("pool_config.ways"), [("value <= 0 or value > 4096".to_string(), true)], "the `before` validator is not read");
    assert_eq!(guards("pool_config.spare"), Vec::<(String, bool)>::new(), "a body that changes the value first has no guard");
    assert_eq!(guards("pool_config.slots"), [("v < 1".to_string(), true)], "the subclass's validator of the same name replaces the base's");
    let share = key("pool_config.share");
    assert_eq!(share["checks"][0]["guards"][1]["message"], "share must be in (0, 1]");
    assert_eq!(share["checks"][0]["returns_value"], true);
    assert!(key("pool_config.chunk")["checks"][0]["guards"][0].get("message").is_none(), "an f-string is no plain text");
}

#[test]
fn a_value_a_guard_rejects_is_ea006_with_the_validators_line() {
    let dir = tempfile::tempdir().unwrap();
    let engine = package(dir.path());
    let found =
        rejected(dir.path(), &engine, "        share: 1.5\n        chunk: 0\n        ways: 8\n        spare: -4\n        slots: 0\n");
    let subjects: Vec<(&str, u64)> = found.iter().map(|(s, l, ..)| (s.as_str(), *l)).collect();
    assert_eq!(subjects, [("pool_config.share", 15), ("pool_config.chunk", 16), ("pool_config.slots", 19)], "{found:#?}");
    let (_, _, share, evidence) = &found[0];
    assert!(share.contains("`check_share` raises when `not 0 < v <= 1`") && share.contains("\"share must be in (0, 1]\""), "{share}");
    // The evidence is the guard's line in llm_args.py.
    assert_eq!((evidence["path"].as_str(), evidence["line"].as_u64()), (Some("tensorrt_llm/llmapi/llm_args.py"), Some(33)), "{evidence:#}");

    let accepted = rejected(dir.path(), &engine, "        share: null\n        chunk: 4096\n        ways: 3\n        slots: 1000\n");
    assert!(accepted.is_empty(), "`None` returns first, the bounds hold: {accepted:#?}");
    let unknown = rejected(dir.path(), &engine, "        share: most\n        chunk: 1.0\n");
    assert_eq!(unknown.len(), 1, "a string is no number to the guards; only the type check speaks: {unknown:#?}");
    assert!(unknown[0].2.contains("is not a number"), "{unknown:#?}");
}
