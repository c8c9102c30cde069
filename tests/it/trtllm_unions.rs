//! A TensorRT-LLM configuration value that is one of several models, picked by
//! one of its own keys through a table in the source (upstream's shape for
//! `speculative_config`/`sparse_attention_config`): the keys under it are held
//! to the member the recipe's value picks, at the target and in history; a
//! value outside the table is EA005; a value the code tests before its table,
//! or none at all, leaves the keys unchecked; a changed default of a member's
//! field concerns only the roles that pick that member.

use super::pr::json;
use super::trtllm_audit::{audit, bare_repo, commit_tagged};
use serde_json::Value;
use std::path::{Path, PathBuf};

const UTILS: &str =
    "from pydantic import BaseModel, ConfigDict\n\n\nclass StrictBaseModel(BaseModel):\n    model_config = ConfigDict(extra=\"forbid\")\n";

const SERVE: &str = "import click\n\n\n@click.command(\"serve\")\n@click.argument(\"model\", type=str)\n@click.option(\"--config\", \"config\", type=str, default=None)\ndef serve(model, config):\n    pass\n";

/// Release 1.0: a chain drafter with `width`, a tree drafter; the table also
/// maps a value it first tests against the backend.
const ARGS_V1: &str = r#"from typing import ClassVar, Optional, TypeAlias, Union

from pydantic import Field

from .utils import StrictBaseModel


class DraftBase(StrictBaseModel):
    depth: int = 1

    @classmethod
    def from_dict(cls, data: dict, backend: Optional[str] = None):
        method = data.get("method")
        known = {
            "Chain": ChainDraft,
            "Tree": TreeDraft,
            "Wide": TreeDraft,
        }
        if method == "Wide" and backend == "fast":
            return ChainDraft(**{k: v for k, v in data.items() if k != "method"})
        picked = known.get(method)
        if picked is None:
            raise ValueError(f"no drafter called {method}")
        data.pop("method")
        return picked(**data)


class ChainDraft(DraftBase):
    method: ClassVar[str] = "Chain"
    width: int = 2
    greedy: bool = True

    @classmethod
    def from_dict(cls, data: dict):
        return cls(**data)


class TreeDraft(DraftBase):
    method: ClassVar[str] = "Tree"
    branches: int = 4


DraftConfig: TypeAlias = Optional[Union[ChainDraft, TreeDraft]]


class TorchLlmArgs(StrictBaseModel):
    model: str = Field(...)
    draft_config: DraftConfig = Field(default=None)
"#;

/// Release 1.1: the chain drafter's `width` is `beam_width`, and `greedy`
/// is off unless set.
fn args_v2() -> String {
    ARGS_V1.replace("    width: int = 2\n", "    beam_width: int = 2\n").replace("greedy: bool = True", "greedy: bool = False")
}

/// The mini package at `root` (`tensorrt_llm/`: a `serve` command, the strict
/// base, and `llm_args`), for the TensorRT-LLM tests that need their own models.
pub(super) fn write_package(root: &Path, llm_args: &str) {
    let package = root.join("tensorrt_llm");
    std::fs::create_dir_all(package.join("llmapi")).unwrap();
    std::fs::create_dir_all(package.join("commands")).unwrap();
    for (file, text) in [
        ("__init__.py", ""),
        ("llmapi/__init__.py", ""),
        ("llmapi/utils.py", UTILS),
        ("llmapi/llm_args.py", llm_args),
        ("commands/__init__.py", ""),
        ("commands/serve.py", SERVE),
    ] {
        std::fs::write(package.join(file), text).unwrap();
    }
}

/// A bare repository with the two releases as tags `v1.0.0` and `v1.1.0`.
fn two_releases(dir: &Path) -> PathBuf {
    let tree = dir.join("trtllm-unions");
    let git_dir = dir.join("trtllm-unions.git");
    let repo = bare_repo(&git_dir);
    write_package(&tree, ARGS_V1);
    let first = commit_tagged(&repo, &tree, &[], "v1.0.0", None);
    write_package(&tree, &args_v2());
    commit_tagged(&repo, &tree, &[], "v1.1.0", Some(first));
    git_dir
}

const RECIPE: &str = "schema: 2
name: drafts
model:
  path: /models/m
  container: nvcr.io/nvidia/tensorrt-llm/release:1.1.0
  precision: fp8
frontend:
  type: trtllm_serve
engine:
  type: trtllm
roles:
  prefill:
    args:
      draft_config:
        method: Tree
        branches: 8
        width: 3
  decode:
    args:
      draft_config:
        width: 3
        method: Chain
        depth: 2
  agg:
    args:
      draft_config:
        method: Chian
        depth: 2
  other:
    args:
      draft_config:
        method: Wide
        anything: 1
";

/// (role, code, subject, severity, message) of every finding but the image's.
fn findings(report: &Value) -> Vec<(String, String, String, String, String)> {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut out: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["code"].as_str().unwrap().starts_with("EA30"))
        .map(|f| (s(&f["role"]), s(&f["code"]), s(&f["subject"]), s(&f["severity"]), s(&f["message"])))
        .collect();
    out.sort();
    out
}

#[test]
fn the_union_and_its_members_are_read_from_the_dispatch_table() {
    let dir = tempfile::tempdir().unwrap();
    let git_dir = two_releases(dir.path());
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--trtllm"])
        .arg(&git_dir)
        .args(["--at", "v1.1.0", "--offline", "--format", "json"])
        .output()
        .unwrap();
    let surface = json(&out);
    let keys = surface["config_keys"].as_array().unwrap();
    let paths: Vec<&str> = keys.iter().map(|k| k["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "model",
            "draft_config",
            "draft_config[Chain].depth",
            "draft_config[Chain].beam_width",
            "draft_config[Chain].greedy",
            "draft_config[Tree].depth",
            "draft_config[Tree].branches",
            "draft_config[Wide].depth",
            "draft_config[Wide].branches",
        ],
        "each table value's model, bases first; class attributes left out"
    );
    let union = &keys[1]["union"];
    assert_eq!(union["discriminator"], "method");
    assert_eq!(union["branched"], serde_json::json!(["Wide"]), "tested before the table");
    assert!(union.get("lowercased").is_none());
    assert_eq!(union["evidence"]["line"], 14, "the table's line");
    assert_eq!(keys[3]["extra"], "forbid", "the member's own policy");
}

#[test]
fn keys_under_a_union_are_held_to_the_member_the_role_picks() {
    let dir = tempfile::tempdir().unwrap();
    let git_dir = two_releases(dir.path());
    let recipe = dir.path().join("drafts.yaml");
    std::fs::write(&recipe, RECIPE).unwrap();
    let report = json(&audit(&git_dir, &[&recipe], &["--trtllm-from", "v1.0.0", "--trtllm-to", "v1.1.0"]));
    let found = findings(&report);
    let brief: Vec<(&str, &str, &str, &str)> =
        found.iter().map(|(r, c, s, sev, _)| (r.as_str(), c.as_str(), s.as_str(), sev.as_str())).collect();
    let mut expected = vec![
        // Not in the table: the engine raises at start-up.
        ("agg", "EA005", "draft_config.method", "error"),
        // The chain drafter's field, renamed: refused, with history. The key
        // comes before the one that picks the member: order does not matter.
        ("decode", "EA001", "draft_config.width", "error"),
        // `greedy`'s default changed; only the role picking the chain drafter
        // (not the first role) leaves it unset.
        ("decode", "EA007", "draft_config.greedy", "info"),
        // The tree drafter never had `width`.
        ("prefill", "EA001", "draft_config.width", "error"),
    ];
    expected.sort();
    assert_eq!(brief, expected, "{found:#?}");
    let message = |role: &str, code: &str| found.iter().find(|f| f.0 == role && f.1 == code).map(|f| f.4.clone()).unwrap();
    let renamed = message("decode", "EA001");
    assert!(renamed.contains("`ChainDraft`") && renamed.contains("refuses to start"), "{renamed}");
    assert!(renamed.contains("up to v1.0.0"), "history of the member's field: {renamed}");
    let never = message("prefill", "EA001");
    assert!(never.contains("`TreeDraft`") && !never.contains("up to"), "{never}");
    let table = message("agg", "EA005");
    assert!(table.contains("`Chian`") && table.contains("Chain, Tree, Wide"), "{table}");
    assert!(
        !found.iter().any(|f| f.0 == "other"),
        "`Wide` is tested before the table: what it builds depends on the backend, its keys are not checked"
    );
}
