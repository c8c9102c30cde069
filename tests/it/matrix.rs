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
    assert_eq!(m["version"], 2);
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
    // vLLM, TensorRT-LLM and ATOM recipes with no source of their engine given are listed, not left out.
    let not: Vec<&str> = m["not_audited"].as_array().unwrap().iter().map(|n| n["reason"].as_str().unwrap()).collect();
    assert_eq!(
        not,
        [
            "no vLLM source given",
            "no vLLM source given",
            "no TensorRT-LLM source given",
            "no ATOM source given",
            "no TensorRT-LLM source given"
        ]
    );
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

/// Run the binary in `dir` (paths in the output relative to it); stdout and the exit code.
fn run_in(dir: &Path, args: &[&str], cache: &Path) -> (String, i32) {
    let out = bin().args(args).current_dir(dir).env("ENGINE_AUDIT_CACHE_DIR", cache).output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.code().unwrap_or(-1))
}

/// The demo with a second copy of its launch script: two rows with the same cells and answers.
fn demo_with_copy() -> Demo {
    let d = Demo::new();
    let bench = d.root.join("recipes/benchmarks");
    std::fs::copy(bench.join("launch-aggregated.sh"), bench.join("launch-aggregated-copy.sh")).unwrap();
    d
}

const MARKDOWN_TABLE: &str = "\
### SGLang: 4 deployments × 3 releases (v1.0.0 … v1.2.0)

| deployments | runs today | v1.0.0 | v1.1.0 | v1.2.0 | newest safe | first break |
|---|---|---|---|---|---|---|
| **2 deployments**: `recipes/benchmarks/launch-aggregated-copy.sh: launch_server@9`, `recipes/benchmarks/launch-aggregated.sh: launch_server@9` | unknown (from --since) | i1 EA009 | W3 EA003 EA009 EA102 | **E1** EA001 EA009 EA102 | v1.1.0 | v1.2.0 EA001 `cuda-graph-max-bs` |
| `recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml: dsmini-fp4-disagg` | v1.0.0 | **E4** EA001 EA006 EA104 EA301 EA302 EA304 | **E7** EA001 EA002 EA003 EA004 EA005 EA006 EA007 EA008 EA101 EA102 EA103 EA104 EA105 EA301 EA302 EA304 | **E8** EA001 EA002 EA004 EA005 EA006 EA007 EA008 EA101 EA102 EA103 EA104 EA105 EA301 EA302 EA304 | none | v1.0.0 EA301 `model.container` |
| `recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp8-agg.yaml: dsmini-fp8-agg` | unknown (from --since) | W1 EA303 | W1 EA303 | W1 EA303 | v1.2.0 | — |
| **with an error** | | 1 | 1 | 3 | | |
";

#[test]
fn markdown_groups_identical_rows_and_names_what_it_cuts_to_fit() {
    let d = demo_with_copy();
    let args = ["matrix", "recipes", "--sglang", "sglang.git", "--since", "v1.0.0", "--format", "markdown"];
    let (full, code) = run_in(&d.root, &args, &d.cache);
    assert_eq!(code, 0, "{full}");
    assert!(full.starts_with(MARKDOWN_TABLE), "{full}");
    assert!(full.contains("**Not audited (5)**") && full.contains("**First breaks**"), "{full}");
    assert!(!full.contains("_Cut to fit"), "the default budget holds the demo whole: {full}");
    // Budgets that force cuts: the text fits, says what went, and every table
    // ends with its own last row (never cut mid-table).
    let chars = full.chars().count();
    for max in [chars - 200, 1500, 1200, 1000] {
        let max_s = max.to_string();
        let (cut, code) = run_in(&d.root, &[&args[..], &["--max-chars", &max_s]].concat(), &d.cache);
        assert_eq!(code, 0);
        assert!(cut.chars().count() <= max, "{max}: {} chars\n{cut}", cut.chars().count());
        assert!(cut.contains("_Cut to fit: ") && cut.contains("`--format json` or `--format html` has everything"), "{max}: {cut}");
        assert!(cut.contains("| **with an error** | | 1 | 1 | 3 | | |"), "{max}: {cut}");
        assert!(cut.lines().filter(|l| l.starts_with('|')).all(|l| l.ends_with('|')), "{max}: {cut}");
    }
    // Just under the whole: only first-break details go, and it says how many stay.
    let (cut, _) = run_in(&d.root, &[&args[..], &["--max-chars", &(chars - 200).to_string()]].concat(), &d.cache);
    assert!(cut.contains("_Cut to fit: first-break details (1 of 2 kept). "), "{cut}");
    // Tighter: the codes in the cells and the not-audited list go too (the rest counted by reason).
    let (cut, _) = run_in(&d.root, &[&args[..], &["--max-chars", "1500"]].concat(), &d.cache);
    assert!(cut.contains("the codes in each cell; first-break details (0 of 2 kept); the not-audited list (0 of 5 named)"), "{cut}");
    assert!(cut.contains("launch-aggregated.sh: launch_server@9` | unknown (from --since) | i1 | W3 | **E1** | v1.1.0 |"), "{cut}");
    assert!(cut.contains("- 2 more: vLLM: no vLLM source given"), "{cut}");
    // Then the names in groups (the folder they share stays), then whole groups from the end.
    let (cut, _) = run_in(&d.root, &[&args[..], &["--max-chars", "1200"]].concat(), &d.cache);
    assert!(
        cut.contains("| **2 deployments** under `recipes/benchmarks/`: +2 more | unknown (from --since) | i1 | W3 | **E1** | v1.1.0 |"),
        "{cut}"
    );
    assert!(cut.contains("_2 more groups (2 deployments) of SGLang not shown._"), "{cut}");
    // Tighter still: whole groups go from the end, and the table says how many.
    let (cut, _) = run_in(&d.root, &[&args[..], &["--max-chars", "1000"]].concat(), &d.cache);
    assert!(cut.contains("_3 more groups (4 deployments) of SGLang not shown._"), "{cut}");
    // A budget nothing fits: the smallest rendering, and it says it is over.
    let (cut, _) = run_in(&d.root, &[&args[..], &["--max-chars", "100"]].concat(), &d.cache);
    assert!(cut.contains("over the 100 asked") && cut.contains("SGLang groups (0 of 3 kept)"), "{cut}");
}

#[test]
fn html_is_one_self_contained_page_and_every_recipe_string_is_escaped() {
    let d = demo_with_copy();
    let bench = d.root.join("recipes/benchmarks");
    let evil = "evil<img src=x onerror=alert(1)>\"'&.sh";
    std::fs::copy(bench.join("launch-aggregated.sh"), bench.join(evil)).unwrap();
    let args = ["matrix", "recipes", "--sglang", "sglang.git", "--since", "v1.0.0"];
    let (html, code) = run_in(&d.root, &[&args[..], &["--format", "html"]].concat(), &d.cache);
    assert_eq!(code, 0, "{html}");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    // Nothing runs and nothing is fetched: no script, no image, no link out.
    for never in ["<script", "<img", "<link", "<iframe", " src=\"", " href=\"", "http://", "https://", "url("] {
        assert!(!html.contains(never), "{never}: {html}");
    }
    assert!(html.contains("evil&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;.sh"), "{html}");
    // The header of each release counts the rows with an error there, as the JSON does.
    let (out, _) = run_in(&d.root, &[&args[..], &["--format", "json"]].concat(), &d.cache);
    let m: Value = serde_json::from_str(&out).unwrap();
    let e = &m["engines"][0];
    for (release, n) in e["releases"].as_array().unwrap().iter().zip(e["breaking"].as_array().unwrap()) {
        let title = format!("title=\"{n} deployments with an error at {}\"", release.as_str().unwrap());
        assert!(html.contains(&title), "{title}: {html}");
    }
    // A cell is coloured by its worst severity, its findings on hover.
    assert!(html.contains("<td class=\"c error\" title=\"v1.2.0: 1 error,"), "{html}");
    assert!(html.contains("&#10;error EA001 cuda-graph-max-bs (recipes/benchmarks/launch-aggregated.sh:14)"), "{html}");
    // Rows grouped by folder; each row's answer in a details row; not-audited listed.
    assert!(html.contains("<tr class=\"group\"><th colspan=\"7\">recipes/benchmarks/ (3)</th></tr>"), "{html}");
    assert!(html.contains("<details><summary>answer</summary>current release unknown"), "{html}");
    assert!(html.contains("<h2>Not audited (5)</h2>"), "{html}");
}

#[test]
fn the_html_opens_in_headless_chromium_without_a_console_message() {
    if !Path::new("/usr/bin/chromium").exists() {
        eprintln!("/usr/bin/chromium is absent: the headless Chromium check of the matrix page is skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("matrix.png");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/matrix-screenshot.sh");
    let out = Command::new("bash").arg(&script).arg(&png).env("BIN", env!("CARGO_BIN_EXE_engine-audit")).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("no console message, 2 tables"), "{said}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{} bytes", bytes.len());
}

#[test]
fn a_dynamo_deployment_gets_a_row_per_dynamo_release_each_cell_as_audit_says() {
    let d = Demo::new();
    let recipes = d.recipes();
    let (sglang, vllm, dynamo) = (d.path("sglang.git"), d.path("vllm.git"), d.path("dynamo.git"));
    let mut checked = 0;
    for (engine, source, to_flag, since) in [("vllm", &vllm, "--vllm-to", "v0.8.0"), ("sglang", &sglang, "--to", "v1.0.0")] {
        let flag = format!("--{engine}");
        let args =
            ["matrix", &recipes, &flag, source, "--dynamo", &dynamo, "--dynamo-from", "v0.1.0", "--since", since, "--format", "json"];
        let m = json(&args, &d.cache);
        let e = m["engines"].as_array().unwrap().iter().find(|e| e["engine"] == engine).unwrap();
        assert_eq!(e["dynamo_releases"], serde_json::json!(["v0.1.0", "v0.2.0"]));
        let rows = e["rows"].as_array().unwrap();
        if engine == "vllm" {
            // Dynamo 0.1.0's vLLM worker runs on vLLM v0.9.0; 0.2.0's reads an
            // engine argument v0.9.0 removed. The launch script has no Dynamo: one row.
            let qwen: Vec<&Value> = rows.iter().filter(|r| r["path"].as_str().unwrap().ends_with(VLLM_RECIPE)).collect();
            let dynamos: Vec<&str> = qwen.iter().map(|r| r["dynamo"].as_str().unwrap()).collect();
            assert_eq!(dynamos, ["v0.1.0", "v0.2.0"]);
            assert_eq!((qwen[0]["newest_safe"].as_str(), qwen[0]["first_break"].is_null()), (Some("v0.9.0"), true), "{:#}", qwen[0]);
            assert_eq!(qwen[1]["newest_safe"], "v0.8.0");
            assert_eq!(
                (qwen[1]["first_break"]["release"].as_str(), qwen[1]["first_break"]["code"].as_str()),
                (Some("v0.9.0"), Some("EA203"))
            );
            let script: Vec<&Value> = rows.iter().filter(|r| r["path"].as_str().unwrap().ends_with("launch-vllm.sh")).collect();
            assert!(script.len() == 1 && script[0].get("dynamo").is_none(), "{script:#?}");
        }
        // Every cell of every Dynamo row against `audit --to R --dynamo-to D`.
        for r in rows.iter().filter(|r| r.get("dynamo").is_some()) {
            let dynamo_to = r["dynamo"].as_str().unwrap();
            for (i, release) in e["releases"].as_array().unwrap().iter().enumerate() {
                let (release, cell) = (release.as_str().unwrap(), &r["cells"][i]);
                if cell.is_null() {
                    continue;
                }
                let cache = d.root.join(format!("facts-{engine}-{release}-{dynamo_to}"));
                let audit = [
                    "audit",
                    &recipes,
                    &flag,
                    source,
                    "--dynamo",
                    &dynamo,
                    to_flag,
                    release,
                    "--dynamo-to",
                    dynamo_to,
                    "--format",
                    "json",
                    "--fail-on",
                    "never",
                ];
                let (out, code) = run(&audit, &cache);
                assert!(code == 0 || code == 1, "{audit:?}: {out}");
                let report: Value = serde_json::from_str(&out).unwrap();
                let (path, name) = (r["path"].as_str().unwrap(), r["deployment"].as_str().unwrap());
                let (worst, errors, codes) = audit_cell(&report, path, name);
                let got: Vec<String> = cell["codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
                let at = format!("{engine} {release} × Dynamo {dynamo_to} {path}");
                assert_eq!(cell["worst"].as_str().map(str::to_string), worst, "{at}: {cell:#}");
                assert_eq!(cell["errors"].as_u64().unwrap() as usize, errors, "{at}: {cell:#}");
                assert_eq!(got, codes, "{at}");
                checked += 1;
            }
        }
    }
    // vLLM: qwen-mini × 2 Dynamo × 2 releases; SGLang: dsmini-fp4 × 2 × 3.
    assert_eq!(checked, 10);
    // A Dynamo window with no Dynamo source is a clear error.
    let out = bin()
        .args(["matrix", &recipes, "--vllm", &vllm, "--dynamo-from", "v0.1.0"])
        .env("ENGINE_AUDIT_CACHE_DIR", &d.cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cross the releases with Dynamo's") && err.contains("pass --dynamo PATH|URL"), "{err}");
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
