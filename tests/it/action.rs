//! The GitHub Action's scripts (scripts/action/*.sh, called by action.yml), run
//! as the runner runs them: GITHUB_* variables pointing at temporary files, a
//! recipes repo with a base and a head commit, the demo's engines.

use super::pr::{demo_recipes, RecipesRepo, DISAGG};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VLLM_RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/qwen-mini/qwen-mini-vllm-disagg.yaml";

fn script(name: &str) -> PathBuf {
    Path::new(ROOT).join("scripts").join(name)
}

/// Run a script with only the environment given (plus PATH and HOME).
fn run(name: &str, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(script(name)).args(args).env_clear();
    for var in ["PATH", "HOME"] {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (*k, v.as_os_str())));
    cmd.output().unwrap()
}

/// `name=value` lines a step wrote to $GITHUB_OUTPUT (the last of a name wins, as on the runner).
fn outputs(file: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_audit_step_gives_annotations_summary_and_sarif_from_one_run() {
    let (dir, ws, root) = demo_recipes();
    let repo = RecipesRepo::init(&root);
    let base = repo.commit("main", None, "recipes as deployed");
    repo.edit(DISAGG, "example/sglang:v1.0.0-cu130", "example/sglang:v1.1.0-cu130");
    // A vLLM recipe changed too, audited to the `vllm-to` input's release.
    repo.edit(VLLM_RECIPE, "max-num-seqs: 64", "max-num-seqs: 128");
    repo.commit("bump", Some(base), "bump");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_engine-audit"));
    let vllm_to = PathBuf::from("v0.9.0");

    let step = |fail_on: &str, base: &str| {
        let run_dir = tempfile::tempdir_in(dir.path()).unwrap();
        let summary = run_dir.path().join("step_summary.md");
        let output = run_dir.path().join("github_output");
        let report_dir = run_dir.path().join("runner_temp/engine-audit");
        let base = PathBuf::from(base);
        let head = PathBuf::from("bump");
        let fail_on = PathBuf::from(fail_on);
        let out = run(
            "action/run.sh",
            &[],
            &[
                ("EA_BIN", &bin),
                ("EA_REPO", &root),
                ("EA_BASE", &base),
                ("EA_HEAD", &head),
                ("EA_SGLANG", &ws.sglang_repo),
                ("EA_DYNAMO", &ws.dynamo_repo),
                ("EA_VLLM", &ws.vllm_repo),
                ("EA_VLLM_TO", &vllm_to),
                ("EA_FAIL_ON", &fail_on),
                ("RUNNER_TEMP", &run_dir.path().join("runner_temp")),
                ("GITHUB_STEP_SUMMARY", &summary),
                ("GITHUB_OUTPUT", &output),
            ],
        );
        let summary = std::fs::read_to_string(&summary).unwrap_or_default();
        (out, summary, outputs(&output), report_dir, run_dir)
    };

    // The bump has errors: fail-on error fails the step, with everything produced.
    let (out, summary, outs, report_dir, _keep) = step("error", "main");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::error file=") || l.starts_with("::warning file=")).collect();
    assert!(annotations.iter().any(|l| l.contains(DISAGG) && l.contains("EA005")), "{}", text(&out));
    assert!(annotations.iter().any(|l| l.contains(VLLM_RECIPE) && l.contains("title=EA003 ")), "{}", text(&out));
    assert!(summary.starts_with("## engine-audit: recipes ") && summary.contains("EA005"), "{summary}");
    assert_eq!(outs["exit-code"], "1");
    assert_eq!(Path::new(&outs["report-dir"]), report_dir);
    assert_eq!(Path::new(&outs["sarif"]), report_dir.join("report.sarif"));
    let sarif: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&outs["sarif"]).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["ruleId"] == "EA005"), "{sarif:#}");
    assert!(report_dir.join("report.md").is_file() && report_dir.join("report.json").is_file());

    // Same findings, fail-on never: the step passes and still reports.
    let (out, summary, outs, _, _keep) = step("never", "main");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("EA005"));
    assert!(summary.contains("EA005"));
    assert_eq!(outs["exit-code"], "0");
    assert!(Path::new(&outs["sarif"]).is_file());

    // A base that names no commit is bad input: exit 2, said on stderr and as an output.
    let (out, _, outs, _, _keep) = step("error", "no-such-branch");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-branch"), "{}", text(&out));
    assert_eq!(outs["exit-code"], "2");

    // No base at all (not a pull_request event, input not set): named, with the fix.
    let (out, _, outs, _, _keep) = step("error", "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("::error title=engine-audit::no base commit"), "{}", text(&out));
    assert_eq!(outs["exit-code"], "2");
}

#[test]
fn the_clone_cache_key_moves_with_the_engine_tags() {
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(&dir.path().join("demo")).unwrap();
    let url = PathBuf::from(format!("file://{}", ws.sglang_repo.display()));
    let key = |env: &[(&str, &Path)]| {
        let output = tempfile::NamedTempFile::new().unwrap();
        let mut env = env.to_vec();
        env.push(("GITHUB_OUTPUT", output.path()));
        let out = run("action/cache-key.sh", &[], &env);
        assert!(out.status.success(), "{}", text(&out));
        outputs(output.path())
    };
    let runner_os = PathBuf::from("Linux");
    let first = key(&[("EA_SGLANG", &url), ("RUNNER_OS", &runner_os)]);
    assert!(first["key"].starts_with("engine-audit-repos-Linux-") && first["key"].len() > "engine-audit-repos-Linux-".len(), "{first:?}");
    assert_eq!(first["restore-prefix"], "engine-audit-repos-Linux-");
    assert!(first["path"].ends_with("/engine-audit"), "{first:?}");
    assert_eq!(key(&[("EA_SGLANG", &url), ("RUNNER_OS", &runner_os)])["key"], first["key"], "no new tag, same key");

    // A new tag upstream: a new key, so the run that fetched it saves the cache.
    let repo = git2::Repository::open(&ws.sglang_repo).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    repo.tag_lightweight("v9.9.9", head.as_object(), false).unwrap();
    let moved = key(&[("EA_SGLANG", &url), ("RUNNER_OS", &runner_os)]);
    assert_ne!(moved["key"], first["key"]);

    // The sources may come from the recipes repo's config instead.
    let recipes = dir.path().join("recipes");
    std::fs::create_dir(&recipes).unwrap();
    std::fs::write(recipes.join(".engine-audit.yaml"), format!("fail_on: error\nsglang: \"{}\"   # the engine\n", url.display())).unwrap();
    assert_eq!(key(&[("EA_REPO", &recipes), ("RUNNER_OS", &runner_os)])["key"], moved["key"]);

    // A vLLM source is a cached clone too: its tags move the key.
    let vllm = PathBuf::from(format!("file://{}", ws.vllm_repo.display()));
    let both = key(&[("EA_SGLANG", &url), ("EA_VLLM", &vllm), ("RUNNER_OS", &runner_os)]);
    assert_ne!(both["key"], moved["key"]);
    let vllm_repo = git2::Repository::open(&ws.vllm_repo).unwrap();
    vllm_repo.tag_lightweight("v9.9.9", vllm_repo.head().unwrap().peel_to_commit().unwrap().as_object(), false).unwrap();
    assert_ne!(key(&[("EA_SGLANG", &url), ("EA_VLLM", &vllm), ("RUNNER_OS", &runner_os)])["key"], both["key"]);

    // Local paths are not cached clones: no key, the cache step is skipped.
    let local = key(&[("EA_SGLANG", &ws.sglang_repo)]);
    assert_eq!(local["key"], "");
}

#[test]
fn the_install_step_verifies_the_release_checksum_or_falls_back_to_source() {
    let dir = tempfile::tempdir().unwrap();
    let releases = dir.path().join("releases");
    let assets = releases.join("download/v0.1.0");
    let target = "x86_64-unknown-linux-gnu";
    // The asset as the release workflow packs it.
    let packed = run("release/package.sh", &[target, env!("CARGO_BIN_EXE_engine-audit"), assets.to_str().unwrap()], &[]);
    assert!(packed.status.success(), "{}", text(&packed));
    let tarball = assets.join(format!("engine-audit-{target}.tar.gz"));
    assert!(tarball.is_file() && assets.join(format!("engine-audit-{target}.tar.gz.sha256")).is_file());

    let url = PathBuf::from(format!("file://{}", releases.display()));
    let action = PathBuf::from(ROOT);
    let target_path = PathBuf::from(target);
    let install = |version: &str| {
        let output = dir.path().join(format!("github_output_{version}"));
        let install_dir = dir.path().join(format!("bin_{version}"));
        let version = PathBuf::from(version);
        let out = run(
            "action/install.sh",
            &["download"],
            &[
                ("EA_VERSION", &version),
                ("EA_RELEASE_URL", &url),
                ("EA_TARGET", &target_path),
                ("EA_ACTION_PATH", &action),
                ("EA_INSTALL_DIR", &install_dir),
                ("GITHUB_OUTPUT", &output),
            ],
        );
        (out, outputs(&output), install_dir)
    };

    let (out, outs, bin_dir) = install("0.1.0");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(outs["installed"], "true");
    assert_eq!(Path::new(&outs["bin"]), bin_dir.join("engine-audit"));
    let version = Command::new(&outs["bin"]).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("engine-audit "), "the installed binary runs");

    // No such release: the build-from-source path, with a key for its cache.
    let (out, outs, bin_dir) = install("v7.7.7");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(outs["installed"], "false");
    assert_eq!(outs["source-key"].len(), 16, "{outs:?}");
    assert!(!bin_dir.exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("building from source"), "{}", text(&out));

    // A tarball that is not what its checksum says is refused, never installed.
    let mut bytes = std::fs::read(&tarball).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&tarball, bytes).unwrap();
    let (out, outs, bin_dir) = install("v0.1.0");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("checksum mismatch"), "{}", text(&out));
    assert!(!outs.contains_key("installed") && !bin_dir.join("engine-audit").exists());
}

#[test]
fn the_build_step_reuses_a_cached_build() {
    // The cached install root (actions/cache restored it): no cargo run at all.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("build");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_engine-audit"), root.join("bin/engine-audit")).unwrap();
    let output = dir.path().join("github_output");
    let action = PathBuf::from(ROOT);
    let out = run("action/install.sh", &["build"], &[("EA_ACTION_PATH", &action), ("EA_BUILD_ROOT", &root), ("GITHUB_OUTPUT", &output)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reusing the cached build"), "{}", text(&out));
    assert_eq!(Path::new(&outputs(&output)["bin"]), root.join("bin/engine-audit"));
}
