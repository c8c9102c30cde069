//! The launch-script evaluator checked against bash itself. Each InferenceX-shaped
//! fixture runs under bash, for several values of the variables it tests, with
//! stubs first on `PATH`: `python3`/`python`/`sglang` record their argv and their
//! `SGLANG_*`/`SGL_*` environment and exit 0; `curl`, `numactl` and `nvidia-smi`
//! stand in for the rest. `engine-audit show --format json` must have read, for
//! every run, a command line with exactly the words bash passed (a word whose
//! value comes from the job's environment matches any value) and exactly the
//! `SGLANG_*` environment; every command line it read must be one bash ran; and a
//! flag or env var passed on some runs only must carry its condition.
//!
//! Only this test runs the scripts; the tool never does.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FIXTURES: &str = "fixtures/inferencex/benchmarks/single_node";

/// The job environment every run gets (InferenceX's CI sets these).
const BASE: &[(&str, &str)] =
    &[("MODEL", "/models/m"), ("TP", "8"), ("EP_SIZE", "1"), ("CONC", "16"), ("ISL", "1024"), ("OSL", "1024"), ("PORT", "30000")];

struct Script {
    path: &'static str,
    /// The variable settings to run it with, on top of [`BASE`].
    runs: Vec<Vec<(&'static str, &'static str)>>,
}

fn scripts() -> Vec<Script> {
    let mut dsr1 = Vec::new();
    for dp in ["true", "false"] {
        for eval in ["true", "false"] {
            for conc in ["16", "128"] {
                dsr1.push(vec![("DP_ATTENTION", dp), ("EVAL_ONLY", eval), ("CONC", conc)]);
            }
        }
    }
    let mut agentic = Vec::new();
    for (dp, ep) in [("true", "1"), ("false", "8"), ("false", "1")] {
        for kv in ["true", "false"] {
            agentic.push(vec![("DP_ATTENTION", dp), ("EP_SIZE", ep), ("KV_OFFLOADING", kv)]);
        }
    }
    let mut gptoss = Vec::new();
    for tp in ["4", "8", "2"] {
        for spec in ["true", "false"] {
            gptoss.push(vec![("TP", tp), ("SPEC_DECODING", spec)]);
        }
    }
    vec![
        Script { path: "fixed_seq_len/dsr1_fp4_b200.sh", runs: dsr1 },
        Script { path: "agentic/dsr1_fp8_h200.sh", runs: agentic },
        Script { path: "fixed_seq_len/gptoss_fp4_b200.sh", runs: gptoss },
        Script { path: "fixed_seq_len/qwen3_fp8_h100.sh", runs: vec![vec![("RUN_EVAL", "true")], vec![("RUN_EVAL", "false")]] },
        Script { path: "fixed_seq_len/llama_fp8_mi300x.sh", runs: vec![vec![("DP_ATTENTION", "true")], vec![("DP_ATTENTION", "false")]] },
    ]
}

/// A program that records how it was started when it starts a server.
const RECORDER: &str = r#"#!/bin/bash
is_server=0
for a in "$@"; do
    case "$a" in sglang.launch_server|serve) is_server=1 ;; esac
done
if [[ "$is_server" == "1" ]]; then
    f=$(mktemp "$RECORD_DIR/server.XXXXXX")
    printf '%s\0' "$@" > "$f.argv"
    env -0 > "$f.env"
    mv "$f" "$f.done"
fi
exit 0
"#;

/// Waits (a little) for the server started in the background to have recorded.
const CURL: &str = r#"#!/bin/bash
for _ in $(seq 100); do
    ls "$RECORD_DIR"/*.done > /dev/null 2>&1 && exit 0
    sleep 0.05
done
exit 0
"#;

const NUMACTL: &str = "#!/bin/bash\nwhile [[ \"$1\" == -* ]]; do shift; done\nexec \"$@\"\n";

fn stubs(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for (name, text) in [
        ("python3", RECORDER),
        ("python", RECORDER),
        ("sglang", RECORDER),
        ("curl", CURL),
        ("numactl", NUMACTL),
        ("nvidia-smi", "#!/bin/sh\nexit 0\n"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// What one bash run passed to the server: its words after the launcher and
/// its `SGLANG_*`/`SGL_*` environment.
#[derive(Debug)]
struct Launch {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
}

fn run_bash(script: &Path, settings: &[(&str, &str)], stub_dir: &Path, records: &Path) -> Vec<Launch> {
    let _ = std::fs::remove_dir_all(records);
    std::fs::create_dir_all(records).unwrap();
    let mut env: BTreeMap<&str, &str> = BASE.iter().copied().collect();
    env.extend(settings.iter().copied());
    let out = std::process::Command::new("bash")
        .arg(script)
        .env_clear()
        .envs(env)
        .env("PATH", format!("{}:/usr/bin:/bin", stub_dir.display()))
        .env("RECORD_DIR", records)
        .output()
        .unwrap();
    assert!(out.status.success(), "bash {} {settings:?}: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    let mut launches = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(records).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for done in names.iter().filter(|p| p.extension().is_some_and(|e| e == "done")) {
        let base = done.with_extension("");
        let words = |ext: &str| -> Vec<String> {
            let bytes = std::fs::read(format!("{}.{ext}", base.display())).unwrap();
            bytes.split(|b| *b == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()).collect()
        };
        let argv = words("argv");
        let start = argv.iter().position(|w| w == "sglang.launch_server" || w == "serve").unwrap() + 1;
        let env = words("env")
            .into_iter()
            .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .filter(|(k, _)| k.starts_with("SGLANG_") || k.starts_with("SGL_"))
            .collect();
        launches.push(Launch { argv: argv[start..].to_vec(), env });
    }
    launches
}

fn show(script: &Path) -> Value {
    let out = Command::cargo_bin("engine-audit").unwrap().args(["show", "--format", "json"]).arg(script).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether a role read by the tool is the command line of a bash run.
fn same_launch(role: &Value, common_env: &[Value], launch: &Launch) -> bool {
    let Some(argv) = role["argv"].as_array() else { return false };
    let words_match = argv.len() == launch.argv.len()
        && argv.iter().zip(&launch.argv).all(|(word, passed)| match word["value"].as_str() {
            Some(v) => v == passed,
            // From the job's environment: any value.
            None => true,
        });
    let env: BTreeMap<&str, Option<&str>> = common_env
        .iter()
        .chain(role["env"].as_array().into_iter().flatten())
        .filter_map(|e| Some((e["name"].as_str()?, e["value"].as_str())))
        .filter(|(k, _)| k.starts_with("SGLANG_") || k.starts_with("SGL_"))
        .collect();
    let env_match =
        env.len() == launch.env.len() && env.iter().all(|(k, v)| launch.env.get(*k).is_some_and(|passed| v.is_none_or(|v| v == passed)));
    words_match && env_match
}

#[test]
fn the_evaluator_reads_what_bash_passes() {
    if std::process::Command::new("bash").arg("-c").arg("true").output().is_err() {
        eprintln!("SKIPPED: `bash` is not installed; the evaluator is not checked against it");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    let work = tempfile::tempdir().unwrap();
    let stub_dir = work.path().join("bin");
    std::fs::create_dir_all(&stub_dir).unwrap();
    stubs(&stub_dir);
    let mut checked = 0;
    for script in scripts() {
        let path = root.join(script.path);
        let shown = show(&path);
        let [file] = shown["files"].as_array().unwrap().as_slice() else { panic!("{shown:#}") };
        let [dep] = file["deployments"].as_array().unwrap().as_slice() else { panic!("{}: one launch site: {file:#}", script.path) };
        let roles = dep["roles"].as_array().unwrap();
        let common_env = dep["common_env"].as_array().unwrap();
        let mut matched: Vec<usize> = Vec::new();
        for settings in &script.runs {
            let launches = run_bash(&path, settings, &stub_dir, &work.path().join("records"));
            let [launch] = launches.as_slice() else { panic!("{} {settings:?}: bash started {} servers", script.path, launches.len()) };
            let Some(i) = roles.iter().position(|r| same_launch(r, common_env, launch)) else {
                panic!("{} {settings:?}: bash passed {launch:#?}\nbut show read:\n{dep:#}", script.path)
            };
            matched.push(i);
            checked += 1;
        }
        for (i, role) in roles.iter().enumerate() {
            assert!(matched.contains(&i), "{}: a command line bash never ran: {role:#}", script.path);
        }
        // Flags and env vars passed on some runs only carry their condition.
        let flags_of = |i: usize| -> Vec<Value> {
            let r = &roles[i];
            r["flags"].as_array().unwrap().iter().chain(r["env"].as_array().unwrap()).cloned().collect()
        };
        for &i in &matched {
            for item in flags_of(i) {
                let key = (item["name"].clone(), item["at"].clone(), item["value"].clone());
                let everywhere =
                    matched.iter().all(|&j| flags_of(j).iter().any(|o| (o["name"].clone(), o["at"].clone(), o["value"].clone()) == key));
                if !everywhere {
                    assert!(item["condition"].is_string(), "{}: {item} is passed on some runs only but has no condition", script.path);
                }
            }
        }
    }
    assert_eq!(checked, 24);
}

#[test]
fn conditions_name_the_variables_tested() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    let shown = show(&root.join("fixed_seq_len/dsr1_fp4_b200.sh"));
    let roles = shown["files"][0]["deployments"][0]["roles"].as_array().unwrap().clone();
    let conditions = |name: &str| -> Vec<String> {
        let mut c: Vec<String> = roles
            .iter()
            .flat_map(|r| r["flags"].as_array().unwrap().iter().chain(r["env"].as_array().unwrap()).cloned().collect::<Vec<_>>())
            .filter(|f| f["name"] == name)
            .map(|f| f["condition"].as_str().unwrap_or("always").to_string())
            .collect();
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(conditions("enable-dp-attention"), ["DP_ATTENTION=true"]);
    assert_eq!(conditions("SGLANG_DP_ATTENTION_LOAD_BALANCE"), ["DP_ATTENTION=true"]);
    assert_eq!(conditions("context-length"), ["EVAL_ONLY=true"]);
    assert_eq!(conditions("cuda-graph-max-bs"), ["always"]);
    assert_eq!(conditions("chunked-prefill-size"), ["[[ \"$CONC\" -ge 64 ]]", "not [[ \"$CONC\" -ge 64 ]]"]);
    // Assigned but never exported: not the server's.
    assert!(conditions("SGLANG_BENCH_TAG").is_empty());
}

#[test]
fn show_text_lists_launches_flags_env_conditions_and_what_is_unread() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::cargo_bin("engine-audit")
        .unwrap()
        .current_dir(dir)
        .args([
            "show",
            "fixtures/inferencex/benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh",
            "tests/codes/EA306/flags-from-env/launch.sh",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let script = "fixtures/inferencex/benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh";
    for line in [
        format!("{script} (launch script)"),
        "  launch_server@35 (sglang, 8 distinct command lines)".to_string(),
        format!("    --enable-dp-attention  {script}:20:85  [when DP_ATTENTION=true]"),
        format!("    --cuda-graph-max-bs 256  {script}:42:7"),
        format!("    env  SGLANG_DP_ATTENTION_LOAD_BALANCE=1  {script}:21:12  [when DP_ATTENTION=true]"),
        "    not read: `$EXTRA_ARGS` at tests/codes/EA306/flags-from-env/launch.sh:7:56: `$EXTRA_ARGS` comes from the environment"
            .to_string(),
    ] {
        assert!(text.lines().any(|l| l == line), "no line {line:?} in:\n{text}");
    }
    // Never exported: not the server's.
    assert!(!text.contains("SGLANG_BENCH_TAG"), "{text}");
}
