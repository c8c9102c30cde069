//! TensorRT-LLM recipes audited end to end on the demo's mini TensorRT-LLM
//! (v1.2.0 → v1.3.0, `fixtures/demo/trtllm`, shaped like upstream's
//! `commands/serve.py` and `llmapi/llm_args.py`): the role args as the LlmArgs
//! YAML keys they are (by dotted path, refused or ignored as the declaring
//! model says, with history), closed sets, deprecations, `extra_args` against
//! `trtllm-serve`'s click options (no prefixes), both srt-slurm layouts, and a
//! release whose `llm_args.py` is not there (named, never clean).

use super::pr::{demo_recipes, json};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/trt-mini/trt-mini-fp8-agg.yaml";

pub(super) fn audit(trtllm: &Path, paths: &[&Path], extra: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .args(paths)
        .arg("--trtllm")
        .arg(trtllm)
        .args(["--offline", "--format", "json"])
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// (code, subject) → (severity, line, message) of every finding.
fn by_subject(report: &Value) -> BTreeMap<(String, String), (String, u64, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let key = (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string());
            let value =
                (f["severity"].as_str().unwrap().to_string(), f["line"].as_u64().unwrap_or(0), f["message"].as_str().unwrap().to_string());
            (key, value)
        })
        .collect()
}

fn get<'a>(found: &'a BTreeMap<(String, String), (String, u64, String)>, code: &str, subject: &str) -> &'a (String, u64, String) {
    found.get(&(code.to_string(), subject.to_string())).unwrap_or_else(|| panic!("no {code} on {subject} in {found:#?}"))
}

#[test]
fn the_demo_recipe_breaks_at_the_newer_release_key_by_key() {
    let (_dir, ws, root) = demo_recipes();
    let recipe = root.join(RECIPE);
    let out = audit(&ws.trtllm_repo, &[&recipe], &["--to", "v1.3.0"]);
    let report = json(&out);
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    let found = by_subject(&report);

    // A key the nested model no longer has, where that model forbids extras:
    // refused at start-up, with the release that last had it.
    let (severity, line, message) = get(&found, "EA001", "kv_cache_config.enable_partial_reuse");
    assert_eq!((severity.as_str(), *line), ("error", 27));
    assert!(message.contains("`KvCacheConfig`") && message.contains("refuses to start"), "{message}");
    assert!(message.contains("It was a field of `KvCacheConfig` up to v1.2.0"), "{message}");
    // The same, where the model ignores extras: silently dropped, a warning.
    let (severity, line, message) = get(&found, "EA001", "cache_transceiver_config.max_tokens_in_buffer");
    assert_eq!((severity.as_str(), *line), ("warning", 32));
    assert!(message.contains("silently dropped and has no effect"), "{message}");
    // A Literal that lost a member.
    let (severity, line, message) = get(&found, "EA005", "moe_config.backend");
    assert_eq!((severity.as_str(), *line), ("error", 29));
    assert!(message.contains("`DEEPGEMM`") && message.contains("CUTLASS, TRTLLM, WIDEEP"), "{message}");
    // A field deprecated with its successor named in its description.
    let (severity, _, message) = get(&found, "EA003", "use_cuda_graph");
    assert_eq!(severity, "warning");
    assert!(message.contains("names `cuda_graph_config` instead"), "{message}");
    // trtllm-serve's own option, gone from the click command.
    let (severity, line, _) = get(&found, "EA001", "num_postprocess_workers");
    assert_eq!((severity.as_str(), *line), ("error", 33));
    assert_eq!(found.len(), 5, "nothing else: {found:#?}");

    // At the release the image names, the same recipe is clean.
    let report = json(&audit(&ws.trtllm_repo, &[&recipe], &[]));
    assert_eq!(report["bumps"][0]["to"], "v1.2.0", "the enroot image `nvcr.io#nvidia/tensorrt-llm/release:1.2.0` is v1.2.0");
    assert!(by_subject(&report).is_empty(), "{report:#}");
}

const LEGACY: &str = "name: legacy-trt
model:
  path: /models/m
  container: nvcr.io/nvidia/tensorrt-llm/release:1.3.0
  precision: fp8
backend:
  type: trtllm
  trtllm_config:
    decode:
      tensor_parallel_sizee: 4
      max_batch_size: 16k
      scheduler_policy: MAX_UTILIZATION
      kv_cache_config:
        dtypee: fp8
        free_gpu_memory_fraction: 0.8
      moe_config:
        backend: WIDEEP
        not_a_field:
          deeper: 1
";

#[test]
fn the_legacy_layout_typos_types_and_enums() {
    let (dir, ws, _root) = demo_recipes();
    let recipe = dir.path().join("legacy-trt.yaml");
    std::fs::write(&recipe, LEGACY).unwrap();
    let report = json(&audit(&ws.trtllm_repo, &[&recipe], &[]));
    assert_eq!(report["bumps"][0]["to"], "v1.3.0", "{report:#}");
    let found = by_subject(&report);
    let (severity, line, message) = get(&found, "EA001", "tensor_parallel_sizee");
    assert_eq!((severity.as_str(), *line), ("error", 10));
    assert!(message.contains("not a field of `TorchLlmArgs`") && message.contains("Did you mean `tensor_parallel_size`?"), "{message}");
    let (_, line, message) = get(&found, "EA001", "kv_cache_config.dtypee");
    assert_eq!(*line, 14);
    assert!(message.contains("Did you mean `dtype`?"), "{message}");
    let (severity, line, message) = get(&found, "EA006", "max_batch_size");
    assert_eq!((severity.as_str(), *line), ("error", 11));
    assert!(message.contains("`16k` is not an integer"), "{message}");
    // An unknown key is said once: the keys below it are not judged.
    assert!(found.contains_key(&("EA001".into(), "moe_config.not_a_field".into())), "{found:#?}");
    assert!(!found.keys().any(|(_, s)| s.contains("deeper")), "{found:#?}");
    // An enum member's value and a Literal member are taken.
    assert_eq!(found.len(), 4, "{found:#?}");
}

#[test]
fn extra_args_are_click_options_taken_only_exactly() {
    let (dir, ws, _root) = demo_recipes();
    let recipe = dir.path().join("serve-words.yaml");
    let text = "schema: 2\nname: words\nmodel:\n  path: /m\n  container: nvcr.io/nvidia/tensorrt-llm/release:1.3.0\nfrontend:\n  type: trtllm_serve\nengine:\n  type: trtllm\nroles:\n  agg:\n    args:\n      max_batch_size: 8\n    extra_args: [--tool_pars, qwen3, --tp_size, \"4\", --tool_parser, minimax_m3]\n";
    std::fs::write(&recipe, text).unwrap();
    let found = by_subject(&json(&audit(&ws.trtllm_repo, &[&recipe], &[])));
    // Click has no unique-prefix matching for long options: a prefix is unknown.
    let (severity, _, _) = get(&found, "EA001", "tool_pars");
    assert_eq!(severity, "error");
    assert!(!found.keys().any(|(c, _)| c == "EA009"), "{found:#?}");
    assert_eq!(found.len(), 1, "`--tp_size` (a second spelling) and a member of the newer Choice are taken: {found:#?}");

    // Behind Dynamo's TRT-LLM worker, the words go to a parser not read here.
    let behind = text.replace("trtllm_serve", "dynamo");
    std::fs::write(&recipe, behind).unwrap();
    let found = by_subject(&json(&audit(&ws.trtllm_repo, &[&recipe], &[])));
    assert!(found.keys().all(|(c, _)| c == "EA306"), "{found:#?}");
    assert_eq!(found.len(), 3, "{found:#?}");
}

/// The mini TensorRT-LLM v1.3.0 without `llmapi/llm_args.py`, as the
/// assembled real repository is: its keys cannot be read.
#[test]
fn a_release_whose_config_models_are_not_there_leaves_the_keys_unchecked_and_says_so() {
    let (dir, ws, root) = demo_recipes();
    let git_dir = dir.path().join("no-llm-args.git");
    let release = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/trtllm/v1.3.0");
    commit_tagged(&bare_repo(&git_dir), &release, &["llm_args.py"], "v1.3.0", None);
    drop(ws);

    let report = json(&audit(&git_dir, &[&root.join(RECIPE)], &["--to", "v1.3.0"]));
    let found = by_subject(&report);
    let (severity, line, message) = get(&found, "EA306", "agg");
    assert_eq!((severity.as_str(), *line), ("error", 20), "at the role's first key");
    assert!(message.contains("the 13 configuration file keys role `agg` writes could not be checked at v1.3.0"), "{message}");
    assert!(message.contains("llm_args.py"), "names the file: {message}");
    // trtllm-serve's options were read: the extra_args are still checked.
    get(&found, "EA001", "num_postprocess_workers");
}

/// Every file below `dir` but those named in `skip`, as a git tree.
/// A bare repository whose `main` the tests commit releases on.
pub(super) fn bare_repo(git_dir: &Path) -> git2::Repository {
    let repo = git2::Repository::init_bare(git_dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    repo
}

/// Commits the folder `dir` (less the names in `skip`) on `main` after
/// `parent`, tagged `tag`.
pub(super) fn commit_tagged(repo: &git2::Repository, dir: &Path, skip: &[&str], tag: &str, parent: Option<git2::Oid>) -> git2::Oid {
    let sig = git2::Signature::new("t", "t@localhost", &git2::Time::new(1_767_225_600, 0)).unwrap();
    let tree = repo.find_tree(tree_of(repo, dir, skip)).unwrap();
    let parents: Vec<git2::Commit> = parent.map(|p| repo.find_commit(p).unwrap()).into_iter().collect();
    let parents: Vec<&git2::Commit> = parents.iter().collect();
    let id = repo.commit(Some("refs/heads/main"), &sig, &sig, tag, &tree, &parents).unwrap();
    repo.tag_lightweight(tag, &repo.find_object(id, None).unwrap(), false).unwrap();
    id
}

pub(super) fn tree_of(repo: &git2::Repository, dir: &Path, skip: &[&str]) -> git2::Oid {
    let mut tb = repo.treebuilder(None).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if skip.contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            tb.insert(&name, tree_of(repo, &path, skip), 0o040000).unwrap();
        } else {
            tb.insert(&name, repo.blob(&std::fs::read(&path).unwrap()).unwrap(), 0o100644).unwrap();
        }
    }
    tb.write().unwrap()
}

/// The demo's single-node script writes its LlmArgs YAML with here-documents
/// and hands it to `trtllm-serve --extra_llm_api_options`: the file's keys are
/// audited as the server reads them, each at its line in the script, with the
/// value from a variable pointed at where the variable is given it.
#[test]
fn a_trtllm_serve_script_is_audited_with_the_config_file_it_writes() {
    let (_dir, ws, root) = demo_recipes();
    let script = root.join("benchmarks/single_node/fixed_seq_len/trtmini_fp8_b200_trt.sh");
    let report = json(&audit(&ws.trtllm_repo, &[&script], &["--to", "v1.3.0"]));
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    let found = by_subject(&report);
    let (severity, line, message) = get(&found, "EA001", "kv_cache_config.enable_partial_reuse");
    assert_eq!((severity.as_str(), *line), ("error", 23));
    assert!(message.contains("refuses to start") && message.contains("up to v1.2.0"), "{message}");
    // `backend: $MOE_BACKEND`, where `MOE_BACKEND="DEEPGEMM"` on the DP path.
    let (severity, line, message) = get(&found, "EA005", "moe_config.backend");
    assert_eq!((severity.as_str(), *line), ("error", 12));
    assert!(message.contains("`DEEPGEMM`"), "{message}");
    assert_eq!(found.len(), 2, "the options and the other keys are v1.3.0's: {found:#?}");

    // Audited against the release it was written for, it is clean.
    let report = json(&audit(&ws.trtllm_repo, &[&script], &["--to", "v1.2.0"]));
    assert_eq!(report["coverage"]["audited"], 1, "{report:#}");
    assert!(by_subject(&report).is_empty(), "{report:#}");
}

/// A key that is not a field, in a file a script writes, and a file it hands
/// over but does not write (named, never clean).
#[test]
fn a_script_config_file_is_held_to_the_models_or_named_unread() {
    let (dir, ws, _root) = demo_recipes();
    let script = dir.path().join("trt_serve.sh");
    std::fs::write(
        &script,
        "#!/bin/bash
cat > cfg.yml <<EOF
kv_cache_config:
  dtypee: fp8
EOF
trtllm-serve serve /models/m --config cfg.yml --tp_size 8
trtllm-serve /models/m --config /etc/other.yml
",
    )
    .unwrap();
    let found = by_subject(&json(&audit(&ws.trtllm_repo, &[&script], &["--to", "v1.3.0"])));
    let (severity, line, message) = get(&found, "EA001", "kv_cache_config.dtypee");
    assert_eq!((severity.as_str(), *line), ("error", 4));
    assert!(message.contains("Did you mean `dtype`?"), "{message}");
    let (severity, line, message) = get(&found, "EA306", "--config /etc/other.yml");
    assert_eq!((severity.as_str(), *line), ("warning", 7));
    assert!(message.contains("writes no `/etc/other.yml`"), "{message}");
    assert_eq!(found.len(), 2, "{found:#?}");
}

/// A recipe whose image names no release is not audited, and the hint names
/// TensorRT-LLM's own ref flag: `--to` would name another engine's release
/// as soon as another engine's source is given.
#[test]
fn the_not_audited_hint_names_the_trtllm_ref_flag() {
    let (dir, ws, _root) = demo_recipes();
    let recipe = dir.path().join("no-image.yaml");
    let text = "schema: 2\nname: dev\nmodel:\n  path: /m\n  container: my-registry/trt:latest\nfrontend:\n  type: trtllm_serve\nengine:\n  type: trtllm\nroles:\n  agg:\n    args:\n      kv_cache_config:\n        enable_partial_reuse: true\n";
    std::fs::write(&recipe, text).unwrap();
    let report = json(&audit(&ws.trtllm_repo, &[&recipe], &["--allow-unaudited", "trtllm"]));
    let not = &report["coverage"]["not_audited"][0];
    assert_eq!(not["engine"], "trtllm", "{report:#}");
    assert!(not["enable"].as_str().is_some_and(|e| e.starts_with("--trtllm-to REF")), "{report:#}");
}

/// A dated dev image (`X.devYYYYMMDDHHMM`) no tag names is the last
/// default-branch commit at or before its build minute, said in the bump line;
/// the demo's v1.2.0 is committed at 2026-01-01 00:00 UTC, v1.3.0 a day later.
#[test]
fn a_dated_dev_image_is_placed_by_its_build_time() {
    let (dir, ws, _root) = demo_recipes();
    let recipe = dir.path().join("dev-build.yaml");
    let text = "schema: 2\nname: dev\nmodel:\n  path: /m\n  container: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc1.dev202601011200\nfrontend:\n  type: trtllm_serve\nengine:\n  type: trtllm\nroles:\n  agg:\n    args:\n      kv_cache_config:\n        enable_partial_reuse: true\n";
    std::fs::write(&recipe, text).unwrap();
    let report = json(&audit(&ws.trtllm_repo, &[&recipe], &[]));
    let v120 =
        git2::Repository::open(&ws.trtllm_repo).unwrap().revparse_single("v1.2.0").unwrap().peel_to_commit().unwrap().id().to_string();
    let bump = &report["bumps"][0];
    assert_eq!(bump["to"], v120, "{report:#}");
    let how = bump["how"][0].as_str().unwrap();
    assert!(
        how.contains(
            "dated dev build of 1.3.0rc1.dev202601011200, which no tag names: last default-branch commit at or before 20260101 1200 UTC"
        ),
        "{how}"
    );
    // Audited there: the key v1.2.0 still has is no finding.
    assert!(by_subject(&report).is_empty(), "{report:#}");
}

/// The real TensorRT-LLM recipes (`../shared/recipes-v2`, schema 2 and the
/// single-node bundles) against each tag of the assembled repository
/// `ENGINE_AUDIT_TRTLLM` (docs/trtllm.md): every TRT-LLM deployment is
/// audited, none skipped; where the tag has no `llm_args.py` every role with
/// args says its keys were not checked (an error), never clean. Skipped, saying
/// so, when the repository or the recipes are absent.
#[test]
fn the_real_recipes_against_the_assembled_releases() {
    let Some(repo) = std::env::var_os("ENGINE_AUDIT_TRTLLM").map(std::path::PathBuf::from) else {
        eprintln!("ENGINE_AUDIT_TRTLLM is not set: the_real_recipes_against_the_assembled_releases is skipped");
        return;
    };
    let recipes = super::real_data::shared().join("recipes-v2/benchmarks");
    if !recipes.is_dir() {
        eprintln!("{} is absent: the_real_recipes_against_the_assembled_releases is skipped", recipes.display());
        return;
    }
    let names = git2::Repository::open_bare(&repo).unwrap().tag_names(None).unwrap();
    let tags: Vec<String> = names.iter().flatten().flatten().map(str::to_string).collect();
    assert!(!tags.is_empty(), "{}: no tag", repo.display());
    for tag in tags {
        let out = audit(
            &repo,
            &[&recipes],
            &["--to", &tag, "--allow-unaudited", "sglang", "--allow-unaudited", "vllm", "--allow-unaudited", "atom"],
        );
        assert!(out.status.code().is_some_and(|c| c <= 1), "{tag}: {}", String::from_utf8_lossy(&out.stderr));
        let report = json(&out);
        let not: Vec<&Value> = report["coverage"]["not_audited"].as_array().unwrap().iter().filter(|n| n["engine"] == "trtllm").collect();
        assert!(not.is_empty(), "{tag}: every TRT-LLM deployment is audited: {not:#?}");
        let audited = report["bumps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["engine"] == "trtllm")
            .map(|b| b["deployments"].as_u64().unwrap())
            .sum::<u64>();
        assert!(audited > 0, "{tag}: {report:#}");
        let findings = report["findings"].as_array().unwrap();
        let unchecked =
            findings.iter().filter(|f| f["code"] == "EA306" && f["message"].as_str().unwrap().contains("configuration file key")).count();
        let config_findings = findings.iter().filter(|f| f["message"].as_str().unwrap().contains("is not a field of")).count();
        eprintln!("{tag}: {audited} TRT-LLM deployments audited; {unchecked} roles' keys not checked; {config_findings} unknown keys");
        // Either the keys were read (and judged) or every role says they were not.
        assert!(unchecked > 0 || config_findings > 0 || findings.iter().all(|f| f["severity"] != "error"), "{tag}");
        assert!(findings
            .iter()
            .filter(|f| f["code"] == "EA306")
            .all(|f| f["severity"] == "error" || !f["message"].as_str().unwrap().contains("configuration file key")));
    }
}

/// A Dynamo tree (plain folder) whose TensorRT-LLM worker imports what the
/// mini TensorRT-LLM v1.3.0 has, what it does not, and one missing name behind
/// a guard; its `trtllm` extra pins another release.
fn dynamo_with_trtllm_worker(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("dynamo-trt");
    let component = root.join("components/src/dynamo/trtllm");
    std::fs::create_dir_all(&component).unwrap();
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"ai-dynamo\"\nversion = \"0.3.0\"\ndependencies = [\"uvloop\"]\n\n\
         [project.optional-dependencies]\ntrtllm = [\"uvloop\", \"tensorrt-llm==1.2.0\"]\n",
    )
    .unwrap();
    std::fs::write(root.join("components/src/dynamo/__init__.py"), "").unwrap();
    std::fs::write(component.join("__init__.py"), "").unwrap();
    std::fs::write(
        component.join("main.py"),
        "import argparse\n\
         \n\
         from tensorrt_llm.commands.serve import serve\n\
         from tensorrt_llm.llmapi.llm_args import KvCacheConfig, SleepConfig\n\
         \n\
         try:\n    from tensorrt_llm.visual_gen import VisualGen\nexcept ImportError:\n    VisualGen = None\n\
         \n\
         \n\
         def engine_args(config):\n    return {\"kv_cache_config\": KvCacheConfig(), \"model\": config.model}\n",
    )
    .unwrap();
    root
}

/// Dynamo's TensorRT-LLM worker (`python -m dynamo.trtllm`) is held to the
/// TensorRT-LLM target the way its SGLang and vLLM workers are: a name the
/// target does not define (EA202, at import: the worker crashes at start), a
/// missing module behind `except ImportError` (EA204), the pin of its
/// `trtllm` extra (EA205). Against a tree that is not the whole package (its
/// own parser module absent), nothing is claimed missing: the uses are named
/// unchecked.
#[test]
fn dynamos_trtllm_worker_against_the_target() {
    let (dir, ws, root) = demo_recipes();
    let dynamo = dynamo_with_trtllm_worker(dir.path());
    let recipe = root.join(RECIPE);
    let report = json(&audit(&ws.trtllm_repo, &[&recipe], &["--trtllm-to", "v1.3.0", "--dynamo", dynamo.to_str().unwrap()]));
    let found = by_subject(&report);
    let (severity, _, message) = get(&found, "EA202", "tensorrt_llm.llmapi.llm_args.SleepConfig");
    assert_eq!(severity, "error");
    assert!(message.contains("crashes at start"), "{message}");
    let (severity, _, message) = get(&found, "EA204", "tensorrt_llm.visual_gen");
    assert_eq!(severity, "warning");
    assert!(message.contains("VisualGen = None"), "{message}");
    let (severity, _, message) = get(&found, "EA205", "tensorrt-llm");
    assert_eq!(severity, "warning");
    assert!(message.contains("tensorrt-llm==1.2.0") && message.contains("1.3.0"), "{message}");
    // What the target has is no finding.
    assert!(!found.keys().any(|(_, s)| s.starts_with("tensorrt_llm.commands") || s.ends_with("KvCacheConfig")), "{found:#?}");

    // The same worker against a folder holding only `llm_args.py` of that
    // release: `commands/serve.py` is missing from the folder, not from
    // TensorRT-LLM, so no use is called missing.
    let partial = dir.path().join("trtllm-partial");
    std::fs::create_dir_all(partial.join("tensorrt_llm/llmapi")).unwrap();
    let demo_llmapi = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/trtllm/v1.3.0/tensorrt_llm/llmapi");
    for file in ["__init__.py", "llm_args.py", "utils.py"] {
        std::fs::copy(demo_llmapi.join(file), partial.join("tensorrt_llm/llmapi").join(file)).unwrap();
    }
    std::fs::write(partial.join("tensorrt_llm/__init__.py"), "").unwrap();
    let report = json(&audit(&partial, &[&recipe], &["--dynamo", dynamo.to_str().unwrap()]));
    let found = by_subject(&report);
    assert!(!found.keys().any(|(code, _)| ["EA201", "EA202", "EA203", "EA204"].contains(&code.as_str())), "{found:#?}");
    let problems = report["problems"].as_array().unwrap();
    assert!(
        problems.iter().any(|p| p["path"].as_str().unwrap().starts_with("dynamo.trtllm@")
            && p["message"].as_str().unwrap().contains("not checked")
            && p["message"].as_str().unwrap().contains("not the whole package")),
        "{problems:#?}"
    );
}

/// A TensorRT-LLM folder whose `KvCacheConfig` deprecates a field for a
/// sibling of the same type, and `TorchLlmArgs` one for a nested model.
fn trtllm_with_renamed_fields(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("trtllm-renames");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/trtllm/v1.3.0/tensorrt_llm");
    std::fs::create_dir_all(root.join("tensorrt_llm/llmapi")).unwrap();
    std::fs::create_dir_all(root.join("tensorrt_llm/commands")).unwrap();
    for file in ["__init__.py", "commands/__init__.py", "commands/serve.py", "llmapi/__init__.py", "llmapi/utils.py"] {
        std::fs::copy(demo.join(file), root.join("tensorrt_llm").join(file)).unwrap();
    }
    std::fs::write(
        root.join("tensorrt_llm/llmapi/llm_args.py"),
        "from typing import Optional\n\
         \n\
         from pydantic import Field\n\
         \n\
         from .utils import StrictBaseModel\n\
         \n\
         \n\
         class KvCacheConfig(StrictBaseModel):\n    \
             reuse_partial_blocks: bool = Field(default=True, json_schema_extra={\"status\": \"deprecated\"},\n                                       description=\"Use allow_partial_reuse instead.\")\n    \
             allow_partial_reuse: bool = True\n    \
             free_gpu_memory_fraction: Optional[float] = 0.9\n\
         \n\
         \n\
         class CudaGraphConfig(StrictBaseModel):\n    \
             max_batch_size: int = 0\n\
         \n\
         \n\
         class TorchLlmArgs(StrictBaseModel):\n    \
             model: str = Field(...)\n    \
             kv_cache_config: KvCacheConfig = Field(default_factory=KvCacheConfig)\n    \
             cuda_graph_config: Optional[CudaGraphConfig] = None\n    \
             use_cuda_graph: bool = Field(default=False, deprecated=\"Use cuda_graph_config instead.\")\n",
    )
    .unwrap();
    root
}

const RENAMES: &str = "schema: 2
name: trt-renames
model:
  path: /models/m
  container: nvcr.io/nvidia/tensorrt-llm/release:1.3.0
  precision: fp8
frontend:
  type: trtllm_serve
engine:
  type: trtllm
roles:
  prefill:
    args:
      use_cuda_graph: true
      kv_cache_config:
        reuse_partial_blocks: false
        free_gpu_memory_fraction: 0.8
  decode:
    args:
      kv_cache_config:
        reuse_partial_blocks: false
        allow_partial_reuse: true
";

/// `--fix` on EA003 for a configuration key: a deprecated field whose
/// successor is a field of the same model and type is renamed in place
/// (`kv_cache_config.reuse_partial_blocks` → `allow_partial_reuse`, at its
/// depth); where the role sets the successor already, or the successor is a
/// nested model (`use_cuda_graph` → `cuda_graph_config`), it stays advice.
#[test]
fn fix_renames_a_deprecated_key_to_its_sibling_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let engine = trtllm_with_renamed_fields(dir.path());
    let recipe = dir.path().join("trt-renames.yaml");
    std::fs::write(&recipe, RENAMES).unwrap();

    let report = json(&audit(&engine, &[&recipe], &[]));
    let mut fixes: Vec<(String, String, bool)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA003")
        .map(|f| {
            let edits = f["fix"]["edits"].as_array().map_or(0, Vec::len);
            (f["role"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string(), edits > 0)
        })
        .collect();
    fixes.sort();
    assert_eq!(
        fixes,
        [
            ("decode".to_string(), "kv_cache_config.reuse_partial_blocks".to_string(), false),
            ("prefill".to_string(), "kv_cache_config.reuse_partial_blocks".to_string(), true),
            ("prefill".to_string(), "use_cuda_graph".to_string(), false),
        ],
        "{report:#}"
    );

    let out = audit(&engine, &[&recipe], &["--fix"]);
    assert!(out.status.code().is_some(), "{}", String::from_utf8_lossy(&out.stderr));
    let fixed = std::fs::read_to_string(&recipe).unwrap();
    let expected =
        RENAMES.replacen("        reuse_partial_blocks: false\n        free", "        allow_partial_reuse: false\n        free", 1);
    assert_eq!(fixed, expected, "only the prefill key is renamed, in place");
    // Fixed, the prefill role no longer has that finding.
    let report = json(&audit(&engine, &[&recipe], &[]));
    let mut left: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA003")
        .map(|f| (f["role"].as_str().unwrap(), f["subject"].as_str().unwrap()))
        .collect();
    left.sort();
    assert_eq!(left, [("decode", "kv_cache_config.reuse_partial_blocks"), ("prefill", "use_cuda_graph")], "{report:#}");
}

/// EA007 for configuration keys: over a bump whose release changes the
/// default of `kv_cache_config.free_gpu_memory_fraction`, a role that leaves
/// the key unset is told (once, on that role), a role that writes it is not;
/// a key whose default did not change says nothing.
#[test]
fn a_changed_default_of_a_key_a_role_leaves_unset() {
    let dir = tempfile::tempdir().unwrap();
    let old = trtllm_with_renamed_fields(dir.path());
    let git_dir = dir.path().join("trtllm-defaults.git");
    let repo = bare_repo(&git_dir);
    let first = commit_tagged(&repo, &old, &[], "v1.0.0", None);
    let args = old.join("tensorrt_llm/llmapi/llm_args.py");
    let text = std::fs::read_to_string(&args).unwrap();
    std::fs::write(
        &args,
        text.replace("free_gpu_memory_fraction: Optional[float] = 0.9", "free_gpu_memory_fraction: Optional[float] = 0.85"),
    )
    .unwrap();
    commit_tagged(&repo, &old, &[], "v1.1.0", Some(first));

    let recipe = dir.path().join("trt-renames.yaml");
    std::fs::write(&recipe, RENAMES).unwrap();
    let report = json(&audit(&git_dir, &[&recipe], &["--trtllm-from", "v1.0.0", "--trtllm-to", "v1.1.0"]));
    let changed: Vec<(&str, &str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA007")
        .map(|f| (f["role"].as_str().unwrap(), f["subject"].as_str().unwrap(), f["message"].as_str().unwrap()))
        .collect();
    assert_eq!(changed.len(), 1, "{report:#}");
    let (role, subject, message) = changed[0];
    assert_eq!((role, subject), ("decode", "kv_cache_config.free_gpu_memory_fraction"), "prefill writes it; decode does not");
    assert!(message.contains("v1.0.0 → v1.1.0: 0.9 → 0.85"), "{message}");
}
