//! `engine-audit pr`: recipes repos built with git2 by the test (base commit, then
//! the bump as the head commit), audited between the two commits. Hermetic on the
//! demo's mini engines; on the real corpus when ENGINE_AUDIT_CORPUS is set.

use assert_cmd::Command;
use git2::{IndexAddOption, Oid, Repository, Signature, Time};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pr");

/// A recipes repo with a `main` branch; commits take every file of the work tree.
pub(super) struct RecipesRepo {
    repo: Repository,
    root: PathBuf,
}

impl RecipesRepo {
    pub(super) fn init(root: &Path) -> RecipesRepo {
        let repo = Repository::init(root).unwrap();
        repo.set_head("refs/heads/main").unwrap();
        RecipesRepo { repo, root: root.to_path_buf() }
    }

    pub(super) fn commit(&self, branch: &str, parent: Option<Oid>, message: &str) -> Oid {
        let mut index = self.repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::new("engine-audit tests", "tests@localhost", &Time::new(1_767_225_600, 0)).unwrap();
        let parents: Vec<git2::Commit> = parent.iter().map(|p| self.repo.find_commit(*p).unwrap()).collect();
        let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
        self.repo.commit(Some(&format!("refs/heads/{branch}")), &sig, &sig, message, &tree, &parent_refs).unwrap()
    }

    /// Replace `old` (which must occur) by `new` in one file of the work tree.
    pub(super) fn edit(&self, path: &str, old: &str, new: &str) {
        let file = self.root.join(path);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(old), "{path} has no `{old}`");
        std::fs::write(&file, text.replacen(old, new, 1)).unwrap();
    }
}

/// A recipes repo at `root`: its files as `main`, then `edits` (path, old, new)
/// as the branch `bump`.
pub(super) fn bump_branch(root: &Path, edits: &[(&str, &str, &str)]) -> RecipesRepo {
    let repo = RecipesRepo::init(root);
    let base = repo.commit("main", None, "recipes as deployed");
    for (path, old, new) in edits {
        repo.edit(path, old, new);
    }
    repo.commit("bump", Some(base), "bump");
    repo
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub(super) fn pr(repo: &Path, base: &str, head: &str, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::cargo_bin("engine-audit")
        .unwrap()
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("pr")
        .arg("--repo")
        .arg(repo)
        .args(["--base", base, "--head", head, "--offline", "--format", "json"])
        .args(extra)
        .output()
        .unwrap()
}

pub(super) fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

pub(super) fn findings(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["code"].as_str().unwrap().to_string(), f["recipe"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string())
        })
        .collect()
}

pub(super) const DISAGG: &str = "benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml";
const AGG: &str = "benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-agg.yaml";

/// The demo recipes plus an aggregated recipe already on the target; the head
/// commit bumps the disaggregated recipe and its master entry, and changes only a
/// flag of the aggregated one.
#[test]
fn a_bump_pr_on_the_demo_engines() {
    let (dir, ws, root) = demo_recipes();
    std::fs::copy(Path::new(FIXTURES).join("engine-audit.yaml"), root.join(".engine-audit.yaml")).unwrap();
    let repo = RecipesRepo::init(&root);
    let base = repo.commit("main", None, "recipes as deployed");

    repo.edit(DISAGG, "example/sglang:v1.0.0-cu130", "example/sglang:v1.1.0-cu130");
    repo.edit(DISAGG, "pypi: 0.1.0", "pypi: 0.2.0");
    // The master entry moves to v1.1.0 but keeps its cu129 build: EA301.
    repo.edit("configs/demo-master.yaml", "example/sglang:v1.0.0-cu129", "example/sglang:v1.1.0-cu129");
    // (the master's router is already at 0.2.0: the demo's base disagrees with the recipe)
    repo.edit(AGG, "      attention-backend: trtllm_mla\n", "      attention-backend: trtllm_mla\n      cuda-graph-max-bs: 128\n");
    // The PR tries to loosen its own gate: the base's config is the one read.
    std::fs::write(root.join(".engine-audit.yaml"), "fail_on: never\n").unwrap();
    repo.commit("bump", Some(base), "bump the mini engines");

    let summary = dir.path().join("summary.md");
    let out = pr(
        &root,
        "main",
        "bump",
        &[
            "--sglang".as_ref(),
            ws.sglang_repo.as_os_str(),
            "--dynamo".as_ref(),
            ws.dynamo_repo.as_os_str(),
            "--summary".as_ref(),
            summary.as_os_str(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "errors fail the gate: {}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let found = findings(&report);

    let bumps: Vec<(String, String, String, u64)> = report["bumps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["engine"].as_str().unwrap().into(),
                b["from"].as_str().unwrap_or("?").into(),
                b["to"].as_str().unwrap().into(),
                b["deployments"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bumps,
        vec![
            ("dynamo".into(), "0.1.0".into(), "0.2.0".into(), 1),
            ("dynamo".into(), "0.2.0".into(), "0.2.0".into(), 1),
            ("sglang".into(), "v1.0.0".into(), "v1.1.0".into(), 1),
            ("sglang".into(), "v1.1.0".into(), "v1.1.0".into(), 1),
        ],
        "the disagg recipe from its base refs to its head refs; the agg recipe at its unchanged target"
    );
    let how = report["bumps"][2]["how"].as_array().unwrap();
    assert_eq!(
        how,
        &vec![serde_json::json!("before: image example/sglang:v1.0.0-cu130"), serde_json::json!("image example/sglang:v1.1.0-cu130")]
    );

    let has = |code: &str, path: &str, subject: &str| found.iter().any(|f| f.0 == code && f.1 == path && f.2 == subject);
    assert!(has("EA102", DISAGG, "SGLANG_DISABLE_MEM_CHECK"), "{found:#?}");
    assert!(has("EA005", DISAGG, "attention-backend"), "{found:#?}");
    assert!(has("EA003", AGG, "cuda-graph-max-bs"), "the flag-only change is audited: {found:#?}");
    assert!(has("EA301", DISAGG, "model.container"), "the changed master entry disagrees with the recipe: {found:#?}");
    assert!(!found.iter().any(|f| f.0 == "EA302"), "router and dynamo agree: {found:#?}");
    assert!(!found.iter().any(|f| f.1.ends_with("launch-aggregated.sh")), "an unchanged file is not audited: {found:#?}");
    assert!(!found.iter().any(|f| f.0 == "EA007"), "ignored by the base config");
    assert!(report["suppressed"].as_u64().unwrap() >= 1);
    let notes: Vec<&str> = report["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.ends_with(": 2 changed recipe file(s), 1 changed master-config entry")), "{notes:?}");

    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.starts_with("## engine-audit: recipes "), "{markdown}");
    assert!(markdown.contains("EA301"), "{markdown}");

    // The base as CI often spells it: the head's parent.
    let engines = ["--sglang".as_ref(), ws.sglang_repo.as_os_str(), "--dynamo".as_ref(), ws.dynamo_repo.as_os_str()];
    let by_parent = pr(&root, "bump~1", "bump", &engines);
    assert_eq!(findings(&json(&by_parent)), found, "`bump~1` is `main`");

    // No change between the two refs: nothing to audit, no engine needed, a pass.
    let same = pr(&root, "main", "main", &[]);
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stderr));
    let report = json(&same);
    assert!(findings(&report).is_empty());
    assert_eq!(report["deployments_audited"], 0);

    let bad = pr(&root, "main", "no-such-branch", &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no-such-branch"));
}

/// A gate that fails closed: what the change touched and the audit cannot read
/// is an error on that file, never a silent pass.
#[test]
fn a_pr_whose_changes_cannot_be_read_fails_the_gate() {
    let (_dir, ws, root) = demo_recipes();
    let repo = RecipesRepo::init(&root);
    let base = repo.commit("main", None, "recipes as deployed");
    let engines = ["--sglang".as_ref(), ws.sglang_repo.as_os_str(), "--dynamo".as_ref(), ws.dynamo_repo.as_os_str()];
    let codes = |out: &std::process::Output| findings(&json(out)).into_iter().map(|f| (f.0, f.1)).collect::<Vec<_>>();

    // An unknown flag alone fails the gate; the same flag in a file the same
    // change broke (a tab) must fail it too.
    repo.edit(AGG, "      attention-backend: trtllm_mla\n", "      attention-backend: trtllm_mla\n      no-such-flag: 1\n");
    repo.commit("flag", Some(base), "an unknown flag");
    let out = pr(&root, "main", "flag", &engines);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    repo.edit(AGG, "      no-such-flag: 1\n", "\tno-such-flag: 1\n");
    repo.commit("tab", Some(base), "an unknown flag behind a tab");
    let out = pr(&root, "main", "tab", &engines);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(codes(&out).contains(&("EA305".into(), AGG.into())), "{:?}", codes(&out));

    // Not UTF-8: the same.
    std::fs::write(root.join(AGG), b"name: caf\xe9\n").unwrap();
    repo.commit("latin1", Some(base), "latin-1");
    let out = pr(&root, "main", "latin1", &engines);
    assert_eq!(out.status.code(), Some(1));
    assert!(codes(&out).contains(&("EA305".into(), AGG.into())), "{:?}", codes(&out));

    // A recipe added as a symlink: named, never followed.
    std::fs::copy(Path::new(FIXTURES).join("dsmini-fp4-agg.yaml"), root.join(AGG)).unwrap();
    #[cfg(unix)]
    {
        let link = root.join("benchmarks/multi_node/srt-slurm-recipes/dsmini/linked.yaml");
        std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
        repo.commit("symlink", Some(base), "a symlinked recipe");
        let out = pr(&root, "main", "symlink", &engines);
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
        assert!(
            codes(&out).contains(&("EA305".into(), "benchmarks/multi_node/srt-slurm-recipes/dsmini/linked.yaml".into())),
            "{:?}",
            codes(&out)
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("root:"), "never followed");
        std::fs::remove_file(&link).unwrap();
    }

    // A changed master entry that links a recipe missing at head: an error on the link.
    std::fs::copy(Path::new(FIXTURES).join("dsmini-fp4-agg.yaml"), root.join(AGG)).unwrap();
    std::fs::remove_file(root.join(DISAGG)).unwrap();
    repo.edit("configs/demo-master.yaml", "example/sglang:v1.0.0-cu129", "example/sglang:v1.1.0-cu129");
    repo.commit("dangling", Some(base), "the master entry links a removed recipe");
    let out = pr(&root, "main", "dangling", &engines);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let found = codes(&out);
    assert!(found.contains(&("EA305".into(), "configs/demo-master.yaml".into())), "{found:?}");
}

/// The demo's engines, and a recipes folder of the demo's recipes plus an
/// aggregated one (not yet a git repository).
pub(super) fn demo_recipes() -> (tempfile::TempDir, engine_audit::demo::DemoWorkspace, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(&dir.path().join("demo")).unwrap();
    let root = dir.path().join("recipes");
    std::fs::create_dir(&root).unwrap();
    copy_tree(&ws.recipes, &root);
    std::fs::copy(Path::new(FIXTURES).join("dsmini-fp4-agg.yaml"), root.join(AGG)).unwrap();
    (dir, ws, root)
}

/// The real bump PR: dsr1 FP4 recipes from `lmsysorg/sglang:v0.5.12.post1` and
/// Dynamo source hash 5b4bc1dd to `v0.5.19-cu130` and a Dynamo 1.5.0 nightly wheel,
/// with the master entry updated to match.
#[test]
fn the_real_bump_pr_on_the_corpus() {
    let Some(corpus) = super::real_data::corpus("the real pr test") else { return };
    let shared = super::real_data::shared().join("recipes");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("recipes");
    std::fs::create_dir(&root).unwrap();
    copy_tree(&shared, &root);
    let repo = RecipesRepo::init(&root);
    let base = repo.commit("main", None, "InferenceX recipes as given");

    let mut bumped = Vec::new();
    let mut stack = vec![root.join("benchmarks")];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if text.contains("lmsysorg/sglang:v0.5.12.post1") {
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                repo.edit(&rel, "lmsysorg/sglang:v0.5.12.post1", "lmsysorg/sglang:v0.5.19-cu130");
                repo.edit(&rel, "hash: \"5b4bc1dd70965017a737c71b19db5a0aeaa88727\"", "wheel: \"1.5.0.dev20260910\"");
                bumped.push(rel);
            }
        }
    }
    bumped.sort();
    assert_eq!(bumped.len(), 9, "the 8k1k dsr1 FP4 family: {bumped:?}");
    let master = "configs/nvidia-master.yaml";
    repo.edit(
        master,
        "dsr1-fp4-b200-dynamo-sglang-mtp:\n  image: \"lmsysorg/sglang:v0.5.12.post1\"",
        "dsr1-fp4-b200-dynamo-sglang-mtp:\n  image: \"lmsysorg/sglang:v0.5.19-cu130\"",
    );
    repo.edit(master, "version: \"5b4bc1dd70965017a737c71b19db5a0aeaa88727\"", "version: \"1.5.0.dev20260910\"");
    repo.commit("bump", Some(base), "bump SGLang to v0.5.19 and Dynamo to 1.5.0");

    let summary = dir.path().join("summary.md");
    let started = std::time::Instant::now();
    let out = pr(
        &root,
        "main",
        "bump",
        &[
            "--sglang".as_ref(),
            corpus.join("sglang.git").as_os_str(),
            "--dynamo".as_ref(),
            corpus.join("dynamo.git").as_os_str(),
            "--dynamo-to".as_ref(),
            "v1.5.0".as_ref(),
            "--summary".as_ref(),
            summary.as_os_str(),
        ],
    );
    eprintln!("pr on the real bump took {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let found = findings(&report);

    let sglang = report["bumps"].as_array().unwrap().iter().find(|b| b["engine"] == "sglang").unwrap();
    assert_eq!(
        (sglang["from"].as_str(), sglang["to"].as_str(), sglang["deployments"].as_u64()),
        (Some("v0.5.12.post1"), Some("v0.5.19"), Some(9))
    );
    let dynamo = report["bumps"].as_array().unwrap().iter().find(|b| b["engine"] == "dynamo").unwrap();
    assert_eq!((dynamo["to"].as_str(), dynamo["deployments"].as_u64()), (Some("v1.5.0"), Some(9)));
    assert_eq!(report["deployments_audited"], 9);

    // Findings land on the bumped recipes (or Dynamo's own files), never elsewhere.
    for (code, path, subject) in &found {
        let in_recipes = path.starts_with("benchmarks/") || path.starts_with("configs/");
        assert!(!in_recipes || bumped.contains(path), "{code} {path} {subject}: not a changed file");
    }
    let on_every_recipe =
        |code: &str, subject: &str| bumped.iter().all(|p| found.iter().any(|f| f.0 == code && &f.1 == p && f.2 == subject));
    assert!(on_every_recipe("EA102", "SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK"), "{found:#?}");
    assert!(on_every_recipe("EA103", "SGLANG_ENABLE_SPEC_V2"), "{found:#?}");
    assert!(found.iter().any(|f| f.0 == "EA003" && f.2 == "cuda-graph-max-bs"));
    assert!(found.iter().any(|f| f.0 == "R001"));
    assert!(!found.iter().any(|f| f.0 == "EA301" || f.0 == "EA302" || f.0 == "EA303"), "master and recipes agree: {found:#?}");
    let notes: Vec<&str> = report["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.ends_with(": 9 changed recipe file(s), 1 changed master-config entry")), "{notes:?}");
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.contains("SGLang flag audit (v0.5.12.post1 → v0.5.19)"), "{markdown}");
    assert!(markdown.contains("`--cuda-graph-max-bs` is a deprecated alias for `--cuda-graph-max-bs-decode`"), "{markdown}");
}

/// A recipe whose container is the srt-slurm alias `dynamo-sglang` runs the
/// master entry's image: the PR that moves the entry's image is a bump of the
/// recipe, from the image at base to the image at head.
#[test]
fn a_container_alias_is_bumped_by_its_master_entry() {
    let (_dir, ws, root) = demo_recipes();
    let repo = RecipesRepo::init(&root);
    repo.edit(DISAGG, "\"example/sglang:v1.0.0-cu130\"", "dynamo-sglang");
    let base = repo.commit("main", None, "the recipe runs the entry's image");
    repo.edit("configs/demo-master.yaml", "example/sglang:v1.0.0-cu129", "example/sglang:v1.1.0-cu129");
    repo.edit(DISAGG, "pypi: 0.1.0", "pypi: 0.2.0");
    repo.commit("bump", Some(base), "bump the entry's image");
    let engines = ["--sglang".as_ref(), ws.sglang_repo.as_os_str(), "--dynamo".as_ref(), ws.dynamo_repo.as_os_str()];
    let out = pr(&root, "main", "bump", &engines);
    let report = json(&out);
    let sglang = report["bumps"].as_array().unwrap().iter().find(|b| b["engine"] == "sglang").unwrap().clone();
    assert_eq!((sglang["from"].as_str(), sglang["to"].as_str()), (Some("v1.0.0"), Some("v1.1.0")), "{:#}", report["bumps"]);
    let found = findings(&report);
    assert!(!found.iter().any(|(code, _, _)| code == "EA301" || code == "EA303"), "the alias is the entry's image: {found:?}");
}

/// `--output-dir`: the annotations, the job summary and every format asked come
/// from one run, and agree with each other; several formats without a folder are refused.
#[test]
fn one_run_writes_every_format_asked() {
    let (dir, ws, root) = demo_recipes();
    let repo = RecipesRepo::init(&root);
    let base = repo.commit("main", None, "recipes as deployed");
    repo.edit(DISAGG, "example/sglang:v1.0.0-cu130", "example/sglang:v1.1.0-cu130");
    repo.commit("bump", Some(base), "bump");
    let out_dir = dir.path().join("out");
    let summary = dir.path().join("summary.md");
    let run = |formats: &str, out_dir: Option<&Path>| {
        let mut cmd = Command::cargo_bin("engine-audit").unwrap();
        cmd.env("GITHUB_STEP_SUMMARY", &summary).arg("pr").arg("--repo").arg(&root);
        cmd.args(["--base", "main", "--head", "bump", "--offline", "--format", formats]);
        cmd.arg("--sglang").arg(&ws.sglang_repo).arg("--dynamo").arg(&ws.dynamo_repo);
        if let Some(d) = out_dir {
            cmd.arg("--output-dir").arg(d);
        }
        cmd.output().unwrap()
    };
    let out = run("sarif,json,markdown,sarif", Some(&out_dir));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let annotations = String::from_utf8(out.stdout).unwrap();
    assert!(annotations.lines().any(|l| l.starts_with("::error file=") && l.contains("EA005")), "{annotations}");
    let mut written: Vec<String> =
        std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["report.json", "report.md", "report.sarif"]);
    let sarif: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap()).unwrap();
    let found = findings(&json);
    assert!(found.iter().any(|f| f.0 == "EA005"), "{found:?}");
    assert_eq!(results.len(), found.len(), "one SARIF result per finding");
    for (code, _, _) in &found {
        assert!(annotations.contains(code.as_str()), "{code} is annotated: {annotations}");
    }
    assert!(std::fs::read_to_string(out_dir.join("report.md")).unwrap().contains("EA005"));
    assert!(std::fs::read_to_string(&summary).unwrap().starts_with("## engine-audit: recipes "), "the summary is written too");

    let refused = run("sarif,github", None);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("several formats") && err.contains("--output-dir"), "{err}");
}

/// `--new-only`: a finding the base commit already has for the same target is
/// left out (counted as suppressed); one the PR brings is reported, and so is
/// every finding of a recipe the PR adds.
#[test]
fn new_only_reports_what_the_pr_brings() {
    let (_dir, ws, root) = demo_recipes();
    let repo = RecipesRepo::init(&root);
    // At the base, the aggregated recipe already passes a deprecated alias (EA003).
    repo.edit(AGG, "      attention-backend: trtllm_mla\n", "      attention-backend: trtllm_mla\n      cuda-graph-max-bs: 128\n");
    let base = repo.commit("main", None, "recipes as deployed, one finding already");
    // The PR adds an unknown flag to it, and a new recipe with the same old alias.
    repo.edit(AGG, "      tp-size: 8\n", "      tp-size: 8\n      no-such-flag: 1\n");
    let added = AGG.replace("dsmini-fp4-agg", "dsmini-fp4-agg-copy");
    std::fs::write(root.join(&added), std::fs::read_to_string(root.join(AGG)).unwrap()).unwrap();
    repo.commit("change", Some(base), "a new flag and a new recipe");

    let engines = ["--sglang".as_ref(), ws.sglang_repo.as_os_str(), "--dynamo".as_ref(), ws.dynamo_repo.as_os_str()];
    let flags = |report: &serde_json::Value| -> Vec<(String, String, String)> {
        let mut found: Vec<_> = findings(report).into_iter().filter(|f| f.0.starts_with("EA00")).collect();
        found.sort();
        found
    };
    let all = json(&pr(&root, "main", "change", &engines));
    let ea = |code: &str, path: &str, subject: &str| (code.to_string(), path.to_string(), subject.to_string());
    let sorted = |mut v: Vec<(String, String, String)>| {
        v.sort();
        v
    };
    assert_eq!(
        flags(&all),
        sorted(vec![
            ea("EA001", AGG, "no-such-flag"),
            ea("EA001", &added, "no-such-flag"),
            ea("EA003", AGG, "cuda-graph-max-bs"),
            ea("EA003", &added, "cuda-graph-max-bs")
        ]),
        "without --new-only, the base's finding is reported too"
    );

    let mut with_flag = engines.to_vec();
    with_flag.push("--new-only".as_ref());
    let out = pr(&root, "main", "change", &with_flag);
    let new = json(&out);
    assert_eq!(
        flags(&new),
        sorted(vec![ea("EA001", AGG, "no-such-flag"), ea("EA001", &added, "no-such-flag"), ea("EA003", &added, "cuda-graph-max-bs")]),
        "the base's EA003 is left out; the added recipe's findings are all new"
    );
    assert_eq!(out.status.code(), Some(1), "the new EA001 still fails the gate");
    assert!(new["suppressed"].as_u64().unwrap() > all["suppressed"].as_u64().unwrap(), "the left-out finding is counted");
}

/// A custom rule of the recipes repo (the config's `rules:` folder), as a PR
/// can see it change: the gate runs the base commit's rules.
fn custom_rule(severity: &str, backend: &str) -> String {
    format!(
        "id: R950\nname: repo-own-rule\ntitle: t\nseverity: {severity}\nengine: sglang\nwhen: {{flag: {{name: attention-backend, equals: {backend}}}}}\nevidence:\n  - file_exists: {{files: [srt/server_args.py]}}\nmessage: '{{flag}} is {{value}}'\ndocs: d\n\
         tests:\n  invalid:\n    - {{name: c, engines: [{{fixture: none}}], deployment: {{flags: {{attention-backend: {backend}}}}}}}\n"
    )
}

#[test]
fn the_gate_runs_the_rules_of_the_base_commit() {
    let (_dir, ws, root) = demo_recipes();
    std::fs::write(root.join(".engine-audit.yaml"), "rules: [ci/rules]\n").unwrap();
    std::fs::create_dir_all(root.join("ci/rules")).unwrap();
    std::fs::write(root.join("ci/rules/R950.yaml"), custom_rule("error", "trtllm_mla")).unwrap();
    let repo = RecipesRepo::init(&root);
    let base = repo.commit("main", None, "recipes and the repo's own rule");
    // The PR touches the recipe the rule fires on, and edits the rule so it
    // would neither fail nor fire, and adds a rule of its own.
    repo.edit(AGG, "      tp-size: 8\n", "      tp-size: 4\n");
    std::fs::write(root.join("ci/rules/R950.yaml"), custom_rule("info", "never_this")).unwrap();
    std::fs::write(
        root.join("ci/rules/R951.yaml"),
        custom_rule("error", "trtllm_mla").replace("R950", "R951").replace("repo-own-rule", "pr-rule"),
    )
    .unwrap();
    repo.commit("change", Some(base), "loosen the gate");

    let engines = ["--sglang".as_ref(), ws.sglang_repo.as_os_str(), "--dynamo".as_ref(), ws.dynamo_repo.as_os_str()];
    let out = pr(&root, "main", "change", &engines);
    let report = json(&out);
    let rules: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"].as_str().unwrap().starts_with('R'))
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        rules,
        vec![("R950".to_string(), "error".to_string())],
        "the base's rule, as the base wrote it: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "and it fails the gate");

    // A base config naming a folder the base does not hold is bad input, said as such.
    std::fs::write(root.join(".engine-audit.yaml"), "rules: [ci/missing]\n").unwrap();
    let broken = repo.commit("broken", Some(base), "the config names no folder");
    repo.edit(AGG, "      tp-size: 4\n", "      tp-size: 2\n");
    repo.commit("after-broken", Some(broken), "a recipe change");
    let out = pr(&root, "broken", "after-broken", &engines);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ci/missing") && stderr.contains("names no folder at the base commit"), "{stderr}");
}
