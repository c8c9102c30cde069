//! Output that fits GitHub, on the whole InferenceX tree (`../shared/recipes`,
//! SGLang v0.5.23, Dynamo v1.6.1): annotations within GitHub's caps with every
//! error group visible and every count they state true; the markdown within
//! its budget, saying what was cut and where the rest is; and the walk still
//! finding the same 267 deployments.

use crate::real_data;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A workflow command: level, properties, message (unescaped enough to read).
struct Command {
    level: String,
    props: BTreeMap<String, String>,
    message: String,
}

fn unescape(s: &str) -> String {
    s.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

fn commands(text: &str) -> Vec<Command> {
    text.lines()
        .filter_map(|l| l.strip_prefix("::"))
        .map(|l| {
            let (level, rest) = l.split_once(' ').unwrap();
            let (props, message) = rest.split_once("::").unwrap();
            let props = props.split(',').map(|p| p.split_once('=').unwrap()).map(|(k, v)| (k.to_string(), unescape(v))).collect();
            Command { level: level.to_string(), props, message: unescape(message) }
        })
        .collect()
}

/// The number inside `(N things` / `N things` before `word` in `s`.
fn number_before(s: &str, word: &str) -> Option<usize> {
    let i = s.find(word)?;
    s[..i].split(|c: char| !c.is_ascii_digit()).rfind(|t| !t.is_empty())?.parse().ok()
}

#[test]
fn the_whole_tree_fits_github() {
    let Some(corpus) = real_data::corpus("the_whole_tree_fits_github") else { return };
    let recipes = real_data::shared().join("recipes");
    let out = tempfile::tempdir().unwrap();
    let run = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .current_dir(&recipes)
        .arg("audit")
        .arg(".")
        .arg("--sglang")
        .arg(corpus.join("sglang.git"))
        .arg("--dynamo")
        .arg(corpus.join("dynamo.git"))
        .args(["--to", "v0.5.23", "--dynamo-to", "v1.6.1", "--offline", "--fail-on", "never", "--color", "never"])
        .args(["--format", "github,markdown,json", "--lang", "en+zh", "--output-dir"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap()).unwrap();
    // The `ignore` walker reads what the hand-written walk read.
    assert_eq!(json["deployments_audited"], 267);
    let findings = json["findings"].as_array().unwrap();

    // --- Annotations: within the caps, errors first.
    let github = std::fs::read_to_string(out.path().join("report.github.txt")).unwrap();
    let cmds = commands(&github);
    let per: BTreeMap<&str, usize> = cmds.iter().fold(BTreeMap::new(), |mut m, c| {
        *m.entry(c.level.as_str()).or_default() += 1;
        m
    });
    assert!(cmds.len() <= 30, "{per:?}");
    for (level, n) in &per {
        assert!(*n <= 10, "{level}: {n}");
    }
    let levels: Vec<&str> = cmds.iter().map(|c| c.level.as_str()).collect();
    let first_other = levels.iter().position(|l| *l != "error").unwrap_or(levels.len());
    assert!(levels[first_other..].iter().all(|l| *l != "error"), "errors come first: {levels:?}");
    // Paths are repository-relative (no `./`, no absolute path).
    for c in &cmds {
        if let Some(file) = c.props.get("file") {
            assert!(!file.starts_with("./") && !file.starts_with('/'), "{file}");
            assert!(recipes.join(file).is_file(), "{file}");
        }
    }

    // --- Every error group is visible, and what each annotation counts is true.
    let mut places: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for f in findings.iter().filter(|f| f["severity"] == "error") {
        let key = (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string());
        let recipe = f["recipe"].as_str().unwrap().trim_start_matches("./").to_string();
        places.entry(key).or_default().push(recipe);
    }
    let mut visible: BTreeSet<(String, String)> = BTreeSet::new();
    for c in cmds.iter().filter(|c| c.level == "error") {
        let title = &c.props["title"];
        let code = title.split(' ').next().unwrap().to_string();
        if let Some((_, subject)) = title.split_once(": ") {
            let subject = subject.split(" (").next().unwrap().to_string();
            if let Some(ps) = places.get(&(code.clone(), subject.clone())) {
                // "(N places in F recipe files)", "also in F-1 more recipe file(s)".
                let files: BTreeSet<&String> = ps.iter().collect();
                if ps.len() > 1 {
                    assert_eq!(number_before(title, " places"), Some(ps.len()), "{title}");
                    assert_eq!(number_before(title, " recipe file"), Some(files.len()), "{title}");
                }
                if files.len() > 1 {
                    assert_eq!(number_before(&c.message, " more recipe file"), Some(files.len() - 1), "{}", c.message);
                }
                visible.insert((code, subject));
                continue;
            }
        }
        // Folded by code: each subject with its count.
        for (key, ps) in places.iter().filter(|(k, _)| k.0 == code) {
            let item = format!("`{}` ({})", key.1, ps.len());
            if c.message.contains(&item) || c.message.contains(&format!("{code} ")) && title.contains("more codes") {
                visible.insert(key.clone());
            }
        }
    }
    let hidden: Vec<_> = places.keys().filter(|k| !visible.contains(*k)).collect();
    assert!(hidden.is_empty(), "error groups without an annotation: {hidden:?}\n{github}");
    // The warnings do not fit by subject: the log line says how they were folded.
    let warning_groups: BTreeSet<(&str, &str)> = findings
        .iter()
        .filter(|f| f["severity"] == "warning")
        .map(|f| (f["code"].as_str().unwrap(), f["subject"].as_str().unwrap()))
        .collect();
    if warning_groups.len() > 10 {
        let line = github.lines().find(|l| l.starts_with("engine-audit: ")).expect("a line on what was folded");
        assert!(line.contains(&format!("in {} code/subject group(s)", warning_groups.len())), "{line}");
    }

    // --- Markdown: within the default budget, the cut said, the full report named.
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    let chars = md.chars().count();
    assert!(chars <= 60_000, "{chars} characters");
    let cut = md.lines().find(|l| l.starts_with("> **Cut to fit 60,000 characters:**")).expect("the cut is said");
    assert!(cut.contains("report.json"), "{cut}");
    let notes = json["notes"].as_array().unwrap().len();
    if let Some(n) = number_before(cut, &format!(" of {notes} notes")) {
        // "N of M notes" left out: the notes list shows M - N of them.
        let shown = md
            .split("<summary>Notes")
            .nth(1)
            .unwrap()
            .split("</details>")
            .next()
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("- ") && !l.starts_with("- …"))
            .count();
        assert_eq!(shown, notes - n, "{cut}");
    }
    // Repository-relative paths, and no Chinese table left unfolded.
    assert!(!md.contains("`./"), "paths are repo-relative");
    assert!(md.contains("<details><summary>中文版</summary>"));
}

#[test]
fn an_error_naming_a_long_path_keeps_it_on_one_line() {
    let path = format!("/nonexistent/ci-runner/_work/{}/engine-sources/sglang-mirror.git", "deployment-recipes-".repeat(6));
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--sglang", &path, "--at", "v0.5.19", "--color", "never"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.lines().any(|l| l.contains(&path)), "the path whole on one line:\n{stderr}");
}
