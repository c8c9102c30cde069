//! `engine-audit matrix` end to end: on the demo (hermetic; the mini SGLang's
//! third release breaks the demo script that v1.1.0 still runs), each cell
//! against a separate `audit --to <release>`, and on the wider corpus (the seed
//! family's R001, when `ENGINE_AUDIT_CORPUS_WIDE` and `ENGINE_AUDIT_SHARED` are set).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCRIPT: &str = "benchmarks/launch-aggregated.sh";
const RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml";
const VLLM_RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/qwen-mini/qwen-mini-vllm-disagg.yaml";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine-audit"));
    c.env("NO_COLOR", "1");
    c
}

/// Run the binary; stdout, and the exit code.
fn run(args: &[&str], cache: &Path) -> (String, i32) {
    let out = bin().args(args).env("ENGINE_AUDIT_CACHE_DIR", cache).output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.code().unwrap_or(-1))
}

fn json(args: &[&str], cache: &Path) -> Value {
    let (out, code) = run(args, cache);
    assert_eq!(code, 0, "{args:?}: {out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

struct Demo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
}

impl Demo {
    fn new() -> Demo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        engine_audit::demo::build(&root).unwrap();
        let cache = root.join("facts");
        Demo { _dir: dir, root, cache }
    }
    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }
    fn recipes(&self) -> String {
        self.path("recipes")
    }
}

fn row<'a>(m: &'a Value, engine: &str, path_end: &str) -> &'a Value {
    let e = m["engines"].as_array().unwrap().iter().find(|e| e["engine"] == engine).unwrap_or_else(|| panic!("no {engine}: {m}"));
    let rows: Vec<&Value> = e["rows"].as_array().unwrap().iter().filter(|r| r["path"].as_str().unwrap().ends_with(path_end)).collect();
    assert_eq!(rows.len(), 1, "{path_end}: {rows:#?}");
    rows[0]
}

fn releases(m: &Value, engine: &str) -> Vec<String> {
    let e = m["engines"].as_array().unwrap().iter().find(|e| e["engine"] == engine).unwrap();
    e["releases"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect()
}

#[test]
fn the_demo_script_is_safe_up_to_v1_1_0_and_breaks_at_v1_2_0() {
    let d = Demo::new();
    let m = json(&["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "v1.0.0", "--format", "json"], &d.cache);
    assert_eq!(m["version"], 1);
    assert_eq!(releases(&m, "sglang"), ["v1.0.0", "v1.1.0", "v1.2.0"]);
    let script = row(&m, "sglang", SCRIPT);
    // The script names no image: it starts at --since, and says why.
    assert_eq!(script["start"]["kind"], "since", "{script:#}");
    assert!(script["start"]["how"].as_str().unwrap().contains("names no image"), "{script:#}");
    assert_eq!(script["newest_safe"], "v1.1.0", "{script:#}");
    let b = &script["first_break"];
    assert_eq!(
        (b["release"].as_str(), b["code"].as_str(), b["subject"].as_str()),
        (Some("v1.2.0"), Some("EA001"), Some("cuda-graph-max-bs"))
    );
    assert!(b["at"].as_str().unwrap().ends_with(&format!("{SCRIPT}:14:5")), "{b:#}");
    // The evidence is the release that last had it, and the message says what it was.
    assert_eq!(b["evidence"].as_str().unwrap(), "python/sglang/srt/server_args.py:42 @ v1.1.0");
    assert!(b["message"].as_str().unwrap().contains("deprecated alias of `--cuda-graph-max-bs-decode` at v1.1.0"), "{b:#}");
    let cells = script["cells"].as_array().unwrap();
    let worst: Vec<&str> = cells.iter().map(|c| c["worst"].as_str().unwrap()).collect();
    assert_eq!(worst, ["info", "warning", "error"]);
    assert_eq!(cells[2]["breaks"], 1);
    assert!(cells[2]["codes"].as_array().unwrap().iter().any(|c| c == "EA001"));
    // Per release, how many rows have an error.
    let sglang = &m["engines"][0];
    assert_eq!(sglang["breaking"], serde_json::json!([1, 1, 2]));
    // vLLM and TensorRT-LLM recipes with no source of their engine given are listed, not left out.
    let not: Vec<&str> = m["not_audited"].as_array().unwrap().iter().map(|n| n["reason"].as_str().unwrap()).collect();
    assert_eq!(not, ["no vLLM source given", "no vLLM source given", "no TensorRT-LLM source given"]);
}

#[test]
fn a_row_starts_at_its_current_release_and_an_unplaced_one_makes_no_safe_claim() {
    let d = Demo::new();
    let m = json(&["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--format", "json"], &d.cache);
    let script = row(&m, "sglang", SCRIPT);
    assert_eq!(script["start"]["kind"], "unknown");
    assert!(script["newest_safe"].is_null(), "no newest safe target relative to an unknown today: {script:#}");
    // It still covers every release (never silently the oldest alone), and the break is found.
    assert!(script["cells"].as_array().unwrap().iter().all(|c| !c.is_null()));
    assert_eq!(script["first_break"]["release"], "v1.2.0");
    let recipe = row(&m, "sglang", RECIPE);
    assert_eq!((recipe["start"]["kind"].as_str(), recipe["start"]["release"].as_str()), (Some("current"), Some("v1.0.0")));
    // Its image disagrees with the master config already at its current release.
    assert!(recipe["newest_safe"].is_null());
    assert_eq!((recipe["first_break"]["release"].as_str(), recipe["first_break"]["code"].as_str()), (Some("v1.0.0"), Some("EA301")));
    // A window that starts after a row's current release cuts the cells before it.
    let m = json(&["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "v1.1.0", "--format", "json"], &d.cache);
    assert_eq!(releases(&m, "sglang"), ["v1.1.0", "v1.2.0"]);
    // The text names the answer per row.
    let (text, code) = run(&["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "v1.0.0"], &d.cache);
    assert_eq!(code, 0);
    assert!(text.contains("from --since; newest safe: v1.1.0; first break: v1.2.0: EA001 `cuda-graph-max-bs`"), "{text}");
    assert!(text.contains("deployments with an error"), "{text}");
}

#[test]
fn fix_says_how_far_the_mechanical_fixes_at_the_first_break_carry() {
    let d = Demo::new();
    let script = d.root.join("recipes").join(SCRIPT);
    let before = std::fs::read(&script).unwrap();
    let args = ["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "v1.0.0", "--fix", "--format", "json"];
    let m = json(&args, &d.cache);
    let r = row(&m, "sglang", SCRIPT);
    // v1.2.0 breaks on `--cuda-graph-max-bs` (it was a deprecated alias of
    // `--cuda-graph-max-bs-decode`); renamed, the script is safe up to v1.2.0.
    let f = &r["after_fix"];
    // The rename, and the two others `audit --to v1.2.0 --fix` makes there (EA009, EA102).
    assert_eq!(f["fixes"], 3, "{r:#}");
    assert_eq!(f["newest_safe"], "v1.2.0", "{r:#}");
    assert!(f["first_break"].is_null(), "{r:#}");
    // The answer is computed in memory: the recipe is not written.
    assert_eq!(std::fs::read(&script).unwrap(), before);
    // A row whose first break has no mechanical fix says so: the image the
    // master config disagrees with is a decision, not an edit.
    let recipe = row(&m, "sglang", RECIPE);
    let f = &recipe["after_fix"];
    assert_eq!(f["first_break"]["code"], "EA301", "{recipe:#}");
    assert!(f["newest_safe"].is_null(), "{recipe:#}");
    // Rows that do not break get no after_fix; without --fix, none does.
    assert!(row(&m, "sglang", "dsmini-fp8-agg.yaml").get("after_fix").is_none());
    let (text, _) = run(&args[..args.len() - 2], &d.cache);
    assert!(text.contains("after --fix (3 fixes): safe up to v1.2.0"), "{text}");
    let m = json(&["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "v1.0.0", "--format", "json"], &d.cache);
    assert!(row(&m, "sglang", SCRIPT).get("after_fix").is_none());
}

#[test]
fn the_vllm_axis_with_dynamo_breaks_where_dynamo_s_worker_meets_the_next_release() {
    let d = Demo::new();
    let m = json(&["matrix", &d.recipes(), "--vllm", &d.path("vllm.git"), "--dynamo", &d.path("dynamo.git"), "--format", "json"], &d.cache);
    let r = row(&m, "vllm", VLLM_RECIPE);
    assert_eq!(r["start"]["release"], "v0.8.0");
    assert_eq!(r["newest_safe"], "v0.8.0");
    // A Dynamo/engine pair that fails the consumer checks is a break.
    assert_eq!((r["first_break"]["release"].as_str(), r["first_break"]["code"].as_str()), (Some("v0.9.0"), Some("EA203")));
}

#[test]
fn bad_windows_and_sources_are_clear_errors() {
    let d = Demo::new();
    let (_, code) = run(&["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "main"], &d.cache);
    assert_eq!(code, 2);
    let out = bin()
        .args(["matrix", &d.recipes(), "--sglang", &d.path("sglang.git"), "--since", "v9.0.0"])
        .env("ENGINE_AUDIT_CACHE_DIR", &d.cache)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("no release of SGLang in the window v9.0.0"), "{err}");
}

/// Which findings of an audit's JSON report are about one deployment: in its
/// file and of its name (or of the whole file), or a consumer finding that
/// affects its file. (The demo has no recipe variants.)
fn audit_cell(report: &Value, path: &str, deployment: &str) -> (Option<String>, usize, Vec<String>) {
    let mut worst: Option<String> = None;
    let rank = |s: &str| ["info", "warning", "error"].iter().position(|x| *x == s).unwrap();
    let mut errors = 0;
    let mut codes: Vec<String> = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        let here = f["recipe"] == path && f.get("deployment").is_none_or(|d| d == deployment);
        let affects = f.get("affects").and_then(Value::as_array).is_some_and(|a| a.iter().any(|l| l["recipe"] == path));
        if !(here || affects) {
            continue;
        }
        let sev = f["severity"].as_str().unwrap().to_string();
        if sev == "error" {
            errors += 1;
        }
        if worst.as_ref().is_none_or(|w| rank(&sev) > rank(w)) {
            worst = Some(sev);
        }
        codes.push(f["code"].as_str().unwrap().to_string());
    }
    codes.sort();
    codes.dedup();
    (worst, errors, codes)
}

#[test]
fn every_cell_of_the_demo_equals_what_audit_to_that_release_says() {
    let d = Demo::new();
    let (sglang, vllm, dynamo) = (d.path("sglang.git"), d.path("vllm.git"), d.path("dynamo.git"));
    let recipes = d.recipes();
    let axes: [(&str, [&str; 4], &str); 2] =
        [("sglang", ["--sglang", &sglang, "--dynamo", &dynamo], "--to"), ("vllm", ["--vllm", &vllm, "--dynamo", &dynamo], "--vllm-to")];
    let mut checked = 0;
    for (engine, sources, to_flag) in axes {
        let mut args =
            vec!["matrix", recipes.as_str(), "--since", if engine == "sglang" { "v1.0.0" } else { "v0.8.0" }, "--format", "json"];
        args.extend(sources);
        let m = json(&args, &d.cache);
        let e = m["engines"].as_array().unwrap().iter().find(|e| e["engine"] == engine).unwrap();
        for (i, release) in e["releases"].as_array().unwrap().iter().enumerate() {
            let release = release.as_str().unwrap();
            // A fresh fact cache: the audit reads each release on its own.
            let cache = d.root.join(format!("facts-{engine}-{release}"));
            let mut audit = vec!["audit", recipes.as_str(), to_flag, release, "--format", "json", "--fail-on", "never"];
            audit.extend(sources);
            // Exit 1: the other engine's recipes are not audited (no source given).
            let (out, code) = run(&audit, &cache);
            assert!(code == 0 || code == 1, "{audit:?}: {out}");
            let report: Value = serde_json::from_str(&out).unwrap();
            for r in e["rows"].as_array().unwrap() {
                let cell = &r["cells"][i];
                if cell.is_null() {
                    continue;
                }
                let (path, name) = (r["path"].as_str().unwrap(), r["deployment"].as_str().unwrap());
                let (worst, errors, codes) = audit_cell(&report, path, name);
                let got: Vec<String> = cell["codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
                assert_eq!(cell["worst"].as_str().map(str::to_string), worst, "{engine} {release} {path}: {cell:#}");
                assert_eq!(cell["errors"].as_u64().unwrap() as usize, errors, "{engine} {release} {path}: {cell:#}");
                assert_eq!(got, codes, "{engine} {release} {path}");
                checked += 1;
            }
        }
    }
    // 3 SGLang rows × 3 releases, 2 vLLM rows × 2 releases.
    assert_eq!(checked, 13);
}

// ---------------------------------------------------------------------------
// The wider corpus: the seed family of ../shared/recipes-v2.

const SEED: &str = "recipes-v2/benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/b200-fp4/8k1k";

fn wide_and_shared() -> Option<(PathBuf, PathBuf)> {
    let wide = std::env::var_os("ENGINE_AUDIT_CORPUS_WIDE").map(PathBuf::from);
    let shared = std::env::var_os("ENGINE_AUDIT_SHARED").map(PathBuf::from);
    match (wide, shared) {
        (Some(w), Some(s)) if w.join("sglang.git").exists() && s.join(SEED).exists() => Some((w, s)),
        _ => {
            eprintln!(
                "ENGINE_AUDIT_CORPUS_WIDE or ENGINE_AUDIT_SHARED is not set (or lacks the seed family): the matrix corpus test is skipped"
            );
            None
        }
    }
}

#[test]
fn the_seed_family_matrix_names_where_r001_first_fires_and_where_it_stops() {
    let Some((wide, shared)) = wide_and_shared() else { return };
    let cache = tempfile::tempdir().unwrap();
    let family = shared.join(SEED).display().to_string();
    let sglang = wide.join("sglang.git").display().to_string();
    let m = json(&["matrix", &family, "--sglang", &sglang, "--since", "v0.5.12.post1", "--format", "json"], cache.path());
    let e = &m["engines"][0];
    let releases: Vec<&str> = e["releases"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert_eq!(releases.first(), Some(&"v0.5.12.post1"));
    let r001 = |cell: &Value| cell["codes"].as_array().is_some_and(|c| c.iter().any(|c| c == "R001"));
    let mut rows_with_r001 = 0;
    for row in e["rows"].as_array().unwrap() {
        let cells = row["cells"].as_array().unwrap();
        let Some(first) = cells.iter().position(r001) else { continue };
        rows_with_r001 += 1;
        // The FP4 GEMM/SwiGLU path: absent at v0.5.12.post1, first at v0.5.13.post1,
        // gone again at v0.5.23 (upstream asks the backend before fusing).
        assert_eq!(releases[first], "v0.5.13.post1", "{}", row["path"]);
        let last = cells.iter().rposition(r001).unwrap();
        assert_eq!(releases[last + 1], "v0.5.23", "{}", row["path"]);
        // A row at its current release v0.5.12.post1 whose first error is R001's.
        if row["start"]["release"] == "v0.5.12.post1" && row["first_break"]["code"] == "R001" {
            assert_eq!(row["newest_safe"], "v0.5.12.post1");
            assert_eq!(row["first_break"]["release"], "v0.5.13.post1");
            assert!(row["first_break"]["evidence"].as_str().unwrap().contains("modelopt_quant.py"), "{row:#}");
        }
    }
    assert!(rows_with_r001 >= 8, "{rows_with_r001} rows with R001");
}
