//! The files GitHub and pre-commit read: they parse, their inputs are wired to
//! the scripts that use them, the scripts they name exist, and the pre-commit
//! hook's command behaves as a hook needs. `actionlint` checks the workflows
//! too when it is on PATH (or at $ACTIONLINT).

use assert_cmd::Command;
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{path} is not valid YAML: {e}"))
}

/// Every `scripts/....sh` a text names exists.
fn named_scripts_exist(file: &str, text: &str) {
    let re = regex::Regex::new(r"scripts/[A-Za-z0-9_./-]+\.sh").unwrap();
    let mut seen = 0;
    for m in re.find_iter(text) {
        seen += 1;
        assert!(Path::new(ROOT).join(m.as_str()).is_file(), "{file} names {}, which does not exist", m.as_str());
    }
    assert!(seen > 0, "{file} names no script");
}

#[test]
fn action_inputs_reach_the_scripts_and_outputs_come_from_them() {
    let action = yaml("action.yml");
    let text = std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap();
    assert_eq!(action["runs"]["using"], "composite");
    let inputs: Vec<String> = action["inputs"].as_mapping().unwrap().keys().map(|k| k.as_str().unwrap().to_string()).collect();
    for input in &inputs {
        assert!(text.contains(&format!("inputs.{input} }}}}")), "input `{input}` is declared but never passed to a step");
    }
    let used = regex::Regex::new(r"inputs\.([a-z-]+)").unwrap();
    for c in used.captures_iter(&text) {
        assert!(inputs.contains(&c[1].to_string()), "a step reads `inputs.{}`, which is not declared", &c[1]);
    }
    // Every EA_* a step sets is read by the script it runs, and every one a
    // script reads is set by a step running it (install.sh runs twice, in two modes).
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let mut by_script: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    let script_re = regex::Regex::new(r"scripts/action/[a-z-]+\.sh").unwrap();
    let read = regex::Regex::new(r"\$\{(EA_[A-Z_]+)").unwrap();
    for step in steps.iter().filter(|s| s.get("run").is_some()) {
        let run = step["run"].as_str().unwrap();
        let script = script_re.find(run).expect("a step runs a script").as_str();
        let set = by_script.entry(script).or_default();
        set.extend(step["env"].as_mapping().map(|m| m.keys().map(|k| k.as_str().unwrap()).collect::<Vec<_>>()).unwrap_or_default());
    }
    assert_eq!(
        by_script.keys().copied().collect::<Vec<_>>(),
        ["scripts/action/cache-key.sh", "scripts/action/install.sh", "scripts/action/run.sh"]
    );
    for (script, set) in &by_script {
        let body = std::fs::read_to_string(Path::new(ROOT).join(script)).unwrap();
        for var in set {
            assert!(body.contains(&format!("${{{var}")) || body.contains(&format!("${var}")), "{script} never reads {var}");
        }
        for c in read.captures_iter(&body) {
            let var = &c[1];
            // Overrides for tests and local use, never set by the action.
            let test_only = ["EA_RELEASE_URL", "EA_TARGET", "EA_INSTALL_DIR", "EA_BUILD_ROOT"].contains(&var);
            assert!(test_only || set.contains(&var), "{script} reads {var}, which no step running it sets");
        }
    }
    for (name, output) in action["outputs"].as_mapping().unwrap() {
        let value = output["value"].as_str().unwrap();
        let id = value.trim_start_matches("${{ steps.").split('.').next().unwrap();
        assert!(steps.iter().any(|s| s["id"].as_str() == Some(id)), "output {name:?} reads step {id}, which does not exist");
        let key = value.rsplit('.').next().unwrap().trim_end_matches(" }}");
        assert!(std::fs::read_to_string(Path::new(ROOT).join("scripts/action/run.sh")).unwrap().contains(&format!("{key}=")));
    }
    named_scripts_exist("action.yml", &text);
}

#[test]
fn workflows_parse_name_existing_scripts_and_pass_actionlint() {
    let dir = Path::new(ROOT).join(".github/workflows");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    let names: Vec<String> = names.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["ci.yml", "release.yml"]);
    for name in &names {
        let path = format!(".github/workflows/{name}");
        let workflow = yaml(&path);
        assert!(workflow["jobs"].as_mapping().is_some_and(|j| !j.is_empty()), "{path} has jobs");
        named_scripts_exist(&path, &std::fs::read_to_string(Path::new(ROOT).join(&path)).unwrap());
    }
    let release = yaml(".github/workflows/release.yml");
    assert_eq!(release["on"]["push"]["tags"][0], "v*");
    let targets: Vec<&str> = release["jobs"]["binaries"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]);

    let actionlint = std::env::var_os("ACTIONLINT").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("actionlint"));
    match std::process::Command::new(&actionlint).arg("-version").output() {
        Ok(_) => {
            let out = std::process::Command::new(&actionlint).current_dir(ROOT).output().unwrap();
            assert!(out.status.success(), "actionlint:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        }
        Err(_) => eprintln!("actionlint not on PATH (nor $ACTIONLINT): the workflows were checked as YAML only"),
    }
}

#[test]
fn the_pre_commit_hook_takes_recipes_and_passes_over_other_files() {
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_sequence().unwrap();
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["engine-audit", "engine-audit-system"]);
    for hook in hooks {
        assert_eq!(hook["pass_filenames"], Value::Bool(true));
        assert_eq!(hook["entry"], "engine-audit audit --hook");
        // pre-commit matches `files` and `exclude` with Python's re.search.
        let files = regex::Regex::new(hook["files"].as_str().unwrap()).unwrap();
        let exclude = regex::Regex::new(hook["exclude"].as_str().unwrap()).unwrap();
        let taken = |p: &str| files.is_match(p) && !exclude.is_match(p);
        for recipe in [
            "benchmarks/multi_node/srt-slurm-recipes/a/b.yaml",
            "recipes/c.yml",
            "benchmarks/single_node/run.sh",
            "configs/nvidia-master.yaml",
        ] {
            assert!(taken(recipe), "{recipe}");
        }
        for other in [
            "README.md",
            ".pre-commit-config.yaml",
            ".engine-audit.yaml",
            "sub/.engine-audit.yaml",
            ".github/workflows/ci.yml",
            "x.yaml.bak",
        ] {
            assert!(!taken(other), "{other}");
        }
    }

    // The entry on what a commit stages, in the demo's recipes with a config naming the engines.
    let dir = tempfile::tempdir().unwrap();
    let ws = engine_audit::demo::build(dir.path()).unwrap();
    let recipes = &ws.recipes;
    std::fs::write(
        recipes.join(".engine-audit.yaml"),
        format!("sglang: {}\ndynamo: {}\n", ws.sglang_repo.display(), ws.dynamo_repo.display()),
    )
    .unwrap();
    std::fs::write(recipes.join("tool.sh"), "#!/bin/sh\necho no engine here\n").unwrap();
    std::fs::write(recipes.join("compose.yaml"), "services: {web: {image: nginx}}\n").unwrap();
    let hook = |files: &[&str]| {
        Command::cargo_bin("engine-audit").unwrap().current_dir(recipes).args(["audit", "--hook"]).args(files).output().unwrap()
    };
    let disagg = "benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml";
    let out = hook(&[disagg, "tool.sh", "compose.yaml"]);
    assert_eq!(out.status.code(), Some(1), "the recipe at its own image has errors: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("sglang v1.0.0"), "audited at its own image's release");
    let out = hook(&["tool.sh", "compose.yaml"]);
    assert_eq!(out.status.code(), Some(0), "no recipe staged: the commit passes: {}", String::from_utf8_lossy(&out.stderr));
    // Without --hook the same files are bad input.
    let plain =
        Command::cargo_bin("engine-audit").unwrap().current_dir(recipes).args(["audit", "tool.sh", "compose.yaml"]).output().unwrap();
    assert_eq!(plain.status.code(), Some(2));
}

/// The README's workflow and pre-commit config use the Action's inputs and
/// outputs and the hook ids as they are declared.
#[test]
fn the_readme_examples_use_what_is_declared() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let blocks: Vec<Value> = readme
        .split("```yaml\n")
        .skip(1)
        .map(|rest| serde_yaml_ng::from_str(rest.split("```").next().unwrap()).unwrap_or_else(|e| panic!("README yaml block: {e}\n{rest}")))
        .collect();
    let action = yaml("action.yml");
    let inputs = action["inputs"].as_mapping().unwrap();
    let outputs = action["outputs"].as_mapping().unwrap();
    let workflow = blocks.iter().find(|b| b.get("jobs").is_some()).expect("a workflow in the README");
    let steps = workflow["jobs"]["audit"]["steps"].as_sequence().unwrap();
    let step =
        steps.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.ends_with("/engine-audit@v1"))).expect("uses: OWNER/engine-audit@v1");
    for key in step["with"].as_mapping().unwrap().keys() {
        assert!(inputs.contains_key(key), "the README passes {key:?}, which action.yml does not declare");
    }
    let id = step["id"].as_str().unwrap();
    let used = regex::Regex::new(&format!(r"steps\.{id}\.outputs\.([a-z-]+)")).unwrap();
    let text = serde_yaml_ng::to_string(workflow).unwrap();
    assert!(used.is_match(&text), "the README reads the SARIF path from the step");
    for c in used.captures_iter(&text) {
        assert!(outputs.contains_key(&c[1]), "the README reads output {}, which action.yml does not declare", &c[1]);
    }
    let hooks = yaml(".pre-commit-hooks.yaml");
    let config = blocks.iter().find(|b| b.get("repos").is_some()).expect("a .pre-commit-config.yaml in the README");
    for hook in config["repos"][0]["hooks"].as_sequence().unwrap() {
        assert!(hooks.as_sequence().unwrap().iter().any(|h| h["id"] == hook["id"]), "the README names hook {:?}", hook["id"]);
        if let Some(files) = hook["files"].as_str() {
            regex::Regex::new(files).unwrap_or_else(|e| panic!("the README's files pattern: {e}"));
        }
    }
}
