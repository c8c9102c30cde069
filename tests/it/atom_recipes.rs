//! srt-slurm `engine: atom` recipes audited end to end against a mini ATOM
//! written here (two commits on `main` shaped like upstream's `arg_utils.py`,
//! `openai_server.py` and `utils/envs.py`; no ATOM code): keys reach the parser
//! as written (`kv_cache_dtype` → `--kv_cache_dtype`), a nightly image newer
//! than the clone is named and not audited, `AITER_*` variables are said to be
//! not checked, and `--atom-from`/`--atom-to` name ATOM's refs. The AMD
//! multi-node table (`models_atom.yaml`) is audited with the image of the
//! `atom-disagg` master entry that runs its model.

use super::atom_cli::{audit_json, audit_json_in};
use super::git_repo::commit;
use git2::{Repository, Signature, Time};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::Path;

const ARG_UTILS_V1: &str = r#"import argparse
from dataclasses import dataclass


@dataclass
class EngineArgs:
    model: str = "m"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--model", type=str, default="m")
        parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
        parser.add_argument("--kv_cache_dtype", choices=["bf16", "fp8"], type=str, default="bf16")
        parser.add_argument("--max-model-len", type=int, default=None)
        parser.add_argument("--method", type=str, default=None, choices=["mtp"])
        parser.add_argument("--num-speculative-tokens", type=int, default=1)
        return parser
"#;

/// The second commit adds `--block-size`, the `eagle3` method and a
/// JSON-typed `--online_quant_config`.
const ARG_UTILS_V2: &str = r#"import argparse
import json
from dataclasses import dataclass


@dataclass
class EngineArgs:
    model: str = "m"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--model", type=str, default="m")
        parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
        parser.add_argument("--kv_cache_dtype", choices=["bf16", "fp8"], type=str, default="bf16")
        parser.add_argument("--max-model-len", type=int, default=None)
        parser.add_argument("--block-size", type=int, default=16)
        parser.add_argument("--method", type=str, default=None, choices=["mtp", "eagle3"])
        parser.add_argument("--num-speculative-tokens", type=int, default=1)
        parser.add_argument("--online_quant_config", type=json.loads, default=None)
        return parser
"#;

const SERVER: &str = r#"import argparse

from atom.model_engine.arg_utils import EngineArgs


def main():
    parser = argparse.ArgumentParser(description="server")
    EngineArgs.add_cli_args(parser)
    parser.add_argument("--server-port", type=int, default=8000)
    args = parser.parse_args()
    return args


if __name__ == "__main__":
    main()
"#;

const ENVS: &str = r#"import os

environment_variables = {
    "ATOM_DP_SIZE": lambda: int(os.getenv("ATOM_DP_SIZE", "1")),
}
"#;

/// 2026-05-01, 2026-06-01 and 2026-07-01, 00:00 UTC: the commits' times.
const V1_TIME: i64 = 1_777_593_600;
const V2_TIME: i64 = 1_780_272_000;
const TIP_TIME: i64 = 1_782_864_000;

/// The mini ATOM: `v1` tagged at its first commit, the parser of the second
/// kept by `main`'s third and last commit.
fn mini_atom(dir: &Path) {
    let repo = Repository::init(dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let sig = Signature::new("t", "t@localhost", &Time::new(V1_TIME, 0)).unwrap();
    let files = |arg_utils| {
        [
            ("atom/__init__.py", ""),
            ("atom/model_engine/__init__.py", ""),
            ("atom/model_engine/arg_utils.py", arg_utils),
            ("atom/entrypoints/__init__.py", ""),
            ("atom/entrypoints/openai_server.py", SERVER),
            ("atom/utils/__init__.py", ""),
            ("atom/utils/envs.py", ENVS),
        ]
    };
    let first = commit(&repo, &sig, &files(ARG_UTILS_V1), None, V1_TIME);
    repo.tag_lightweight("v1", &repo.find_object(first, None).unwrap(), false).unwrap();
    let second = commit(&repo, &sig, &files(ARG_UTILS_V2), Some(first), V2_TIME);
    commit(&repo, &sig, &[("README.md", "mini ATOM\n")], Some(second), TIP_TIME);
}

/// A single-node bundle in the shape of InferenceX's ATOM recipes: snake_case
/// and kebab-case keys mixed, the engine's env beside aiter's.
fn recipe(container: &str) -> String {
    format!(
        r#"base:
  schema: 2
  name: mini-atom
  model:
    path: hf:org/model
    container: {container}
    precision: fp8
  resources:
    gpu_type: mi355x
    gpus_per_node: 8
  frontend:
    type: atom
  engine: atom
  roles:
    agg:
      nodes: 1
      workers: 1
      gpus: 8
      args:
        kv_cache_dtype: fp8
        max-model-len: 10240
        block-size: 64
        method: eagle3
      env:
        ATOM_DP_SIZE: '1'
        AITER_LOG_LEVEL: WARNING
"#
    )
}

fn audit(atom: &Path, recipe: &Path, args: &[&str]) -> (i32, Value) {
    // 2: nothing could be audited (the report is still written).
    audit_json(atom, recipe, args, 2)
}

/// (code, subject) of every finding, sorted.
fn found(report: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out
}

fn pair(code: &str, subject: &str) -> (String, String) {
    (code.to_string(), subject.to_string())
}

fn workspace(container: &str) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let atom = dir.path().join("atom");
    std::fs::create_dir(&atom).unwrap();
    mini_atom(&atom);
    let file = dir.path().join("agg.yaml");
    std::fs::write(&file, recipe(container)).unwrap();
    (dir, atom, file)
}

/// A dated build no later than the clone's tip is the last commit at or before
/// it; one later than the tip is named ("the clone is older than the image")
/// and its deployment is not audited, never judged against the newest commit.
#[test]
fn a_nightly_newer_than_the_clone_is_named_not_resolved_to_the_tip() {
    // 2026-05-15: after v1, before main's second commit.
    let (_dir, atom, file) = workspace("rocm/atom-dev:nightly_202605151200");
    let (_, report) = audit(&atom, &file, &[]);
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    // At v1, `--block-size` is not registered and `eagle3` is no method yet.
    assert_eq!(found(&report), [pair("EA001", "block-size"), pair("EA005", "method")], "{report:#}");

    // 2026-09-17: months after the clone's newest commit.
    let (_dir, atom, file) = workspace("rocm/atom-dev:nightly_202609171455");
    let (code, report) = audit(&atom, &file, &["--allow-unaudited", "atom"]);
    assert_eq!((code, report["coverage"]["audited"].as_u64()), (2, Some(0)), "{report:#}");
    let messages: Vec<&str> = report["findings"].as_array().unwrap().iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("the clone is older than the image: its default branch ends at")
            && messages[0].contains("(committed 2026-07-01 00:00 UTC), before 20260917 1455 UTC"),
        "{}",
        messages[0]
    );
    assert_eq!(report["findings"][0]["code"], "EA303");
}

/// `AITER_*` variables belong to the aiter library: a note says they are not
/// checked, and no finding judges them; the engine's own are still checked.
#[test]
fn aiter_variables_are_not_checked_and_said_so() {
    let (_dir, atom, file) = workspace("rocm/atom:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom20260601");
    let (_, report) = audit(&atom, &file, &[]);
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    // The second commit has every key: nothing to say of them, nor of the env.
    assert_eq!(found(&report), Vec::<(String, String)>::new(), "{report:#}");
    let notes: Vec<&str> = report["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    let aiter: Vec<&&str> = notes.iter().filter(|n| n.contains("AITER_LOG_LEVEL")).collect();
    assert_eq!(aiter.len(), 1, "{notes:?}");
    assert!(aiter[0].ends_with("agg.yaml:26:9: `AITER_LOG_LEVEL` not checked (aiter)"), "{}", aiter[0]);
    assert!(!notes.iter().any(|n| n.contains("ATOM_DP_SIZE")), "the engine's own variable is checked, not noted: {notes:?}");
}

/// `--atom-from`/`--atom-to` name ATOM's refs, as `--vllm-from`/`--vllm-to`
/// do vLLM's; the bump line says which flag chose them.
#[test]
fn atom_refs_are_named_by_their_own_flags() {
    let (_dir, atom, file) = workspace("rocm/atom-dev:nightly_202609171455");
    let (code, report) = audit(&atom, &file, &["--atom-from", "v1", "--atom-to", "main"]);
    assert_eq!((code, report["coverage"]["audited"].as_u64()), (0, Some(1)), "{report:#}");
    let bump = &report["bumps"][0];
    assert_eq!((bump["engine"].as_str(), bump["from"].as_str(), bump["to"].as_str()), (Some("atom"), Some("v1"), Some("main")));
    let how = bump["how"].to_string();
    assert!(how.contains("--atom-from") && how.contains("--atom-to"), "{how}");
    assert_eq!(found(&report), Vec::<(String, String)>::new(), "{report:#}");

    // Bumped down to v1: the keys it lacks are found.
    let (code, report) = audit(&atom, &file, &["--atom-from", "main", "--atom-to", "v1"]);
    assert_eq!(code, 1);
    assert_eq!(found(&report), [pair("EA001", "block-size"), pair("EA005", "method")], "{report:#}");
}

/// A model table in the shape `server_atom.sh` reads, and the master entry
/// that runs its model with a dated nightly.
const TABLE: &str = r#"Mini-MoE:
  env: "ATOM_DP_SIZE=1 ATOM_GONE=1 AITER_LOG_LEVEL=WARNING"
  kv_cache_flags: "--kv-cache-dtype fp8"
  mtp_flags: "--method eagle3 --num-speculative-tokens"
  block_size: "64"
  max_model_len: "8192"
  online_quant_config: '{"global_quant_config":"ptpc_fp8"}'
  online_quant_dpa_config: '{"global_quant_config":"ptpc_fp8",}'
"#;

fn master(image: &str) -> String {
    format!(
        r#"mini-fp8-mi355x-atom-disagg:
  image: {image}
  model: org/Mini-MoE
  model-prefix: mini
  runner: mi355x
  precision: fp8
  framework: atom-disagg
  multinode: true
  disagg: true
"#
    )
}

fn amd_chain(image: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let atom = dir.path().join("atom");
    std::fs::create_dir(&atom).unwrap();
    mini_atom(&atom);
    let utils = dir.path().join("ix/benchmarks/multi_node/amd_utils");
    std::fs::create_dir_all(&utils).unwrap();
    std::fs::write(utils.join("models_atom.yaml"), TABLE).unwrap();
    std::fs::create_dir_all(dir.path().join("ix/configs")).unwrap();
    std::fs::write(dir.path().join("ix/configs/amd-master.yaml"), master(image)).unwrap();
    (dir, atom)
}

fn audit_chain(dir: &Path, atom: &Path, args: &[&str]) -> (i32, Value) {
    let inputs = ["benchmarks/multi_node/amd_utils/models_atom.yaml", "configs/amd-master.yaml"].map(OsStr::new);
    audit_json_in(Some(&dir.join("ix")), &inputs, atom, args, 1)
}

fn distinct(report: &Value) -> Vec<(String, String)> {
    let mut f = found(report);
    f.dedup();
    f
}

/// Every configuration `server_atom.sh` builds from the table is audited at
/// the commit the `atom-disagg` entry's image names: the table's words and
/// fields against that parser, its env against that registry.
#[test]
fn the_amd_atom_table_is_audited_with_its_master_entrys_image() {
    // 2026-05-15: the first commit (v1), before `--block-size` and `eagle3`.
    let (dir, atom) = amd_chain("rocm/atom-dev:nightly_202605151200");
    let (code, report) = audit_chain(dir.path(), &atom, &[]);
    assert_eq!(code, 1);
    // tp, tp_dp, ep_dp, each with and without MTP; its two quantization
    // configs differ, so also the four jobs whose servers differ in DPA.
    assert_eq!(report["coverage"]["audited"], 14, "{report:#}");
    assert_eq!(report["master_entries_checked"], 1, "{report:#}");
    assert_eq!(
        distinct(&report),
        [
            pair("EA001", "block-size"),
            pair("EA001", "kv-cache-dtype"),
            pair("EA001", "online_quant_config"),
            pair("EA005", "method"),
            pair("EA104", "ATOM_GONE")
        ],
        "{report:#}"
    );
    let how = report["bumps"][0]["how"].to_string();
    assert!(how.contains("mini-fp8-mi355x-atom-disagg") && how.contains("dated build"), "{how}");
    let notes = report["notes"].to_string();
    assert!(notes.contains("`AITER_LOG_LEVEL` not checked (aiter)"), "{notes}");

    // 2026-06-01: the second commit has `--block-size` and `eagle3`; the kebab
    // spelling is still refused, and `--fix` writes the registered one in the
    // table's flag string.
    let (dir, atom) = amd_chain("rocm/atom:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom20260601");
    let (_, report) = audit_chain(dir.path(), &atom, &[]);
    // The DPA quantization config (a trailing comma) is no JSON: json.loads
    // fails at start-up in the tp_dp and ep_dp configurations, not in tp.
    assert_eq!(
        distinct(&report),
        [pair("EA001", "kv-cache-dtype"), pair("EA006", "online_quant_config"), pair("EA104", "ATOM_GONE")],
        "{report:#}"
    );
    let json: Vec<&Value> = report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "EA006").collect();
    // One per role, at the `_dpa` value: the tp configurations' plain config parses.
    let sites: Vec<(&str, u64)> = json.iter().map(|f| (f["role"].as_str().unwrap(), f["line"].as_u64().unwrap())).collect();
    assert_eq!(sites, [("decode", 8), ("prefill", 8)], "{json:#?}");
    let message = json[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(r#"`{"global_quant_config":"ptpc_fp8",}` is not JSON (trailing comma at line 1 column 35), but `--online_quant_config` is parsed with json.loads"#),
        "{message}"
    );
    audit_chain(dir.path(), &atom, &["--fix"]);
    let table = std::fs::read_to_string(dir.path().join("ix/benchmarks/multi_node/amd_utils/models_atom.yaml")).unwrap();
    assert_eq!(table, TABLE.replace("--kv-cache-dtype", "--kv_cache_dtype"));
    let (_, report) = audit_chain(dir.path(), &atom, &[]);
    assert_eq!(distinct(&report), [pair("EA006", "online_quant_config"), pair("EA104", "ATOM_GONE")], "{report:#}");
}

/// Without a master entry the table names no image: not audited, and the hint
/// names ATOM's own ref flag (`--to` names SGLang's as soon as its source is
/// given beside ATOM's).
#[test]
fn the_not_audited_hint_names_the_atom_ref_flag() {
    let (dir, atom) = amd_chain("unused");
    let table = dir.path().join("ix/benchmarks/multi_node/amd_utils/models_atom.yaml");
    let (_, report) = audit(&atom, &table, &["--allow-unaudited", "atom"]);
    assert_eq!(report["coverage"]["audited"], 0, "{report:#}");
    let not = &report["coverage"]["not_audited"][0];
    assert_eq!(not["engine"], "atom", "{report:#}");
    assert_eq!(not["enable"], "--atom-to REF, or an image in the recipe", "{report:#}");
    // And it does audit it.
    let (_, report) = audit(&atom, &table, &["--atom-to", "main"]);
    assert_eq!(report["coverage"]["audited"], 14, "{report:#}");
}

/// A JSON-typed flag's value is parsed as JSON: one that does not parse is
/// EA006 with the parse error; one known at run time only is said to be
/// unchecked, never taken as valid.
#[test]
fn json_typed_values_are_parsed_and_a_dynamic_one_is_said_unchecked() {
    let dir = tempfile::tempdir().unwrap();
    let atom = dir.path().join("atom");
    std::fs::create_dir(&atom).unwrap();
    mini_atom(&atom);
    let script = dir.path().join("serve_atom.sh");
    std::fs::write(
        &script,
        "#!/usr/bin/env bash\npython3 -m atom.entrypoints.openai_server --model /m \\\n    --online_quant_config \"$QUANT_CONFIG\" &\npython3 -m atom.entrypoints.openai_server --model /m \\\n    --online_quant_config '{\"global_quant_config\": ptpc_fp8}' &\n",
    )
    .unwrap();
    let (_, report) = audit(&atom, &script, &["--atom-to", "main"]);
    assert_eq!(report["coverage"]["audited"], 2, "{report:#}");
    assert_eq!(found(&report), [pair("EA006", "online_quant_config")], "{report:#}");
    let finding = &report["findings"][0];
    assert_eq!(finding["line"], 5, "{finding:#}");
    assert!(finding["message"].as_str().unwrap().contains("is not JSON (expected value at line 1 column 25)"), "{}", finding["message"]);
    let notes = report["notes"].to_string();
    assert!(
        notes
            .contains("serve_atom.sh:3:28: `--online_quant_config` is parsed as JSON; its value `$QUANT_CONFIG` is known at run time only"),
        "{notes}"
    );
}

/// The multi-node chain's env file: what `env_atom.sh` exports reaches the
/// launches of the server script that sources it, and is held to the target's
/// registry there (aiter's noted, not judged).
#[test]
fn env_atom_exports_reach_the_server_scripts_launches() {
    let dir = tempfile::tempdir().unwrap();
    let atom = dir.path().join("atom");
    std::fs::create_dir(&atom).unwrap();
    mini_atom(&atom);
    let utils = dir.path().join("amd_utils");
    std::fs::create_dir(&utils).unwrap();
    std::fs::write(utils.join("env_atom.sh"), "#!/bin/bash\nexport ATOM_DP_SIZE=1\nexport ATOM_GONE=1\nexport AITER_LOG_LEVEL=WARNING\n")
        .unwrap();
    std::fs::write(
        utils.join("server_atom.sh"),
        "#!/bin/bash\nsource $ATOM_WS_PATH/env_atom.sh\nPREFILL_CMD=\"python3 -m atom.entrypoints.openai_server --model /m --block-size 16\"\neval \"$PREFILL_CMD\" &\n",
    )
    .unwrap();
    let (_, report) = audit(&atom, &utils.join("server_atom.sh"), &["--atom-to", "main"]);
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    assert_eq!(found(&report), [pair("EA104", "ATOM_GONE")], "{report:#}");
    let gone = &report["findings"][0];
    assert!(gone["recipe"].as_str().unwrap().ends_with("env_atom.sh") && gone["line"] == 3, "{gone:#}");
    assert!(report["notes"].to_string().contains("env_atom.sh:4:8: `AITER_LOG_LEVEL` not checked (aiter)"), "{report:#}");
}
