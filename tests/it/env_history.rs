//! An env var that an earlier release read, and neither the recipe's current
//! release nor the target does, is EA101 with that release and its line, not
//! EA104 "typo?": every release the engine repository holds is asked. A name
//! no release read stays EA104, saying how far back it was looked for, and
//! "did you mean" offers only a near-identical name the target reads.
//! The engine is the demo's mini SGLang with an older release before it;
//! the real cases run on the corpus (`ENGINE_AUDIT_CORPUS`, and the wider one
//! under `ENGINE_AUDIT_CORPUS_WIDE`).

use super::real_data::{corpus, shared};
use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The files of the demo's SGLang release `tag` (`fixtures/demo/sglang/<tag>`).
fn demo_release(tag: &str) -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/sglang").join(tag);
    let mut files = BTreeMap::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
                files.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    files
}

/// A commit of exactly `files` on `main`, tagged `tag`.
fn release(repo: &git2::Repository, tag: &str, files: &BTreeMap<String, String>, time: i64) {
    let mut index = git2::Index::new().unwrap();
    for (path, text) in files {
        let id = repo.blob(text.as_bytes()).unwrap();
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            file_size: text.len() as u32,
            id,
            flags: path.len() as u16,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree = repo.find_tree(index.write_tree_to(repo).unwrap()).unwrap();
    let sig = git2::Signature::new("t", "t@localhost", &git2::Time::new(time, 0)).unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    let commit = repo.commit(Some("refs/heads/main"), &sig, &sig, tag, &tree, &parents).unwrap();
    repo.tag_lightweight(tag, &repo.find_object(commit, None).unwrap(), false).unwrap();
}

/// The mini SGLang with v0.9.0 before the demo's two releases: v0.9.0 reads
/// `SGLANG_OLD_GEMM_BACKEND` in a kernel module (a direct read, outside the
/// registry); v1.0.0 and v1.1.0 do not.
fn engine(dir: &Path) -> PathBuf {
    let git_dir = dir.join("sglang.git");
    let repo = git2::Repository::init_bare(&git_dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let mut old = demo_release("v1.0.0");
    old.insert("python/sglang/__init__.py".into(), old["python/sglang/__init__.py"].replace("1.0.0", "0.9.0"));
    old.insert(
        "python/sglang/srt/layers/gemm.py".into(),
        "import os\n\n\ndef backend():\n    # The FP4 GEMM kernel: picked by the user until v1.0.0.\n    return os.environ.get(\"SGLANG_OLD_GEMM_BACKEND\", \"auto\")\n".into(),
    );
    release(&repo, "v0.9.0", &old, 1_700_000_000);
    release(&repo, "v1.0.0", &demo_release("v1.0.0"), 1_700_086_400);
    release(&repo, "v1.1.0", &demo_release("v1.1.0"), 1_700_172_800);
    git_dir
}

const RECIPE: &str = "name: case
model:
  path: /models/m
  container: \"example/sglang:v1.0.0-cu130\"
environment:
  SGLANG_OLD_GEMM_BACKEND: cutlass
  SGLANG_ENABLE_MEM_CHEK: \"1\"
  SGLANG_NEVER_READ_ANYWHERE: \"1\"
backend:
  type: sglang
  sglang_config:
    decode:
      model-path: /models/m
";

fn findings(report: &Value, code: &str) -> BTreeMap<String, Value> {
    let all = report["findings"].as_array().unwrap().iter();
    all.filter(|f| f["code"] == code).map(|f| (f["subject"].as_str().unwrap().to_string(), f.clone())).collect()
}

fn audit(args: &[&str], dir: &Path) -> Value {
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg(dir)
        .args(args)
        .args(["--offline", "--format", "json", "--fail-on", "never"])
        .env("ENGINE_AUDIT_CACHE_DIR", dir.join("facts"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_var_an_earlier_release_read_is_removed_with_its_last_read() {
    let tmp = tempfile::tempdir().unwrap();
    let git_dir = engine(tmp.path());
    let recipes = tmp.path().join("recipes");
    std::fs::create_dir(&recipes).unwrap();
    std::fs::write(recipes.join("recipe.yaml"), RECIPE).unwrap();
    let report = audit(&["--sglang", git_dir.to_str().unwrap(), "--to", "v1.1.0"], &recipes);

    let removed = findings(&report, "EA101");
    let gemm = removed.get("SGLANG_OLD_GEMM_BACKEND").unwrap_or_else(|| panic!("EA101 for the var v0.9.0 read: {report:#}"));
    let message = gemm["message"].as_str().unwrap();
    assert!(message.contains("It was read by the engine at v0.9.0; it is gone by v1.0.0"), "{message}");
    let evidence = gemm["evidence"].to_string();
    assert!(evidence.contains("python/sglang/srt/layers/gemm.py") && evidence.contains("v0.9.0"), "{evidence}");

    let unknown = findings(&report, "EA104");
    assert_eq!(unknown.keys().collect::<Vec<_>>(), ["SGLANG_ENABLE_MEM_CHEK", "SGLANG_NEVER_READ_ANYWHERE"], "{report:#}");
    let typo = unknown["SGLANG_ENABLE_MEM_CHEK"]["message"].as_str().unwrap();
    assert!(typo.contains("typo? the target reads `SGLANG_ENABLE_MEM_CHECK`"), "{typo}");
    let never = unknown["SGLANG_NEVER_READ_ANYWHERE"]["message"].as_str().unwrap();
    assert!(never.contains("nor read by any SGLang release from v0.9.0 on") && !never.contains("typo"), "{never}");
}

/// The findings on `var` in the whole InferenceX tree audited against the
/// corpus in `corpus_dir`, to the targets the issue measured.
fn tree_findings(corpus_dir: &Path, var: &str) -> Vec<(String, String)> {
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg(shared().join("recipes"))
        .arg("--sglang")
        .arg(corpus_dir.join("sglang.git"))
        .arg("--vllm")
        .arg(corpus_dir.join("vllm.git"))
        .arg("--dynamo")
        .arg(corpus_dir.join("dynamo.git"))
        .args(["--to", "v0.5.23", "--vllm-to", "v0.34.0", "--dynamo-to", "v1.6.1", "--offline", "--format", "json", "--fail-on", "never"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut seen: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"] == var)
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().to_string()))
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

#[test]
fn corpus_removed_vllm_vars_are_ea101_and_unread_sglang_ones_say_how_far_back() {
    let Some(corpus) = corpus(module_path!()) else { return };
    for var in ["VLLM_USE_FLASHINFER_MOE_FP4", "VLLM_NIXL_ABORT_REQUEST_TIMEOUT"] {
        let seen = tree_findings(&corpus, var);
        assert!(
            !seen.is_empty() && seen.iter().all(|(code, m)| code == "EA101" && m.contains("It was read by the engine")),
            "{var}: {seen:#?}"
        );
    }
    let seen = tree_findings(&corpus, "SGLANG_FLASHINFER_FP4_GEMM_BACKEND");
    assert!(
        !seen.is_empty()
            && seen.iter().all(|(code, m)| code == "EA104"
                && m.contains("nor read by any SGLang release from v0.5.12.post1 on")
                && !m.contains("typo")),
        "{seen:#?}"
    );
}

#[test]
fn wide_corpus_the_sglang_var_read_up_to_v0_5_9_is_ea101() {
    let Some(wide) = std::env::var_os("ENGINE_AUDIT_CORPUS_WIDE").map(PathBuf::from) else {
        eprintln!("ENGINE_AUDIT_CORPUS_WIDE is not set: {} is skipped", module_path!());
        return;
    };
    let seen = tree_findings(&wide, "SGLANG_FLASHINFER_FP4_GEMM_BACKEND");
    assert!(!seen.is_empty() && seen.iter().all(|(code, m)| code == "EA101" && m.contains("v0.5.9;")), "{seen:#?}");
}
