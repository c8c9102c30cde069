//! Robustness and safety: every bad input gets a clear, located error, nothing
//! panics, the rest of the audit still runs, and nothing audited is executed.
//!
//! Exit codes and messages are checked end to end through the binary (assert_cmd);
//! the rest at module level. Engine repos come from the demo fixtures
//! (`engine_audit::demo::build`) or are built here with git2; nothing is fetched.

use assert_cmd::Command;
use engine_audit::extract::consumer::consumer_uses;
use engine_audit::extract::{extract_surface, Demand, Package};
use engine_audit::recipe::{self, FlagValue, LinkMapping, NoteLevel, RecipeError, RecipeFile};
use engine_audit::rules::{parse_rule, RuleOrigin};
use engine_audit::source::{EngineRepo, MemTree, OpenOptions, SourceError, Tree};
use std::path::{Path, PathBuf};
use std::time::Instant;

// ---------------------------------------------------------------------------
// helpers

/// A recipe that audits cleanly against the demo SGLang (only info findings).
const OK_RECIPE: &str = "name: ok
model:
  path: /models/m
  container: \"lmsysorg/sglang:v1.0.0\"
backend:
  type: sglang
  sglang_config:
    aggregated:
      tp-size: 8
";

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    sglang: PathBuf,
    dynamo: PathBuf,
}

fn ws() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let demo = engine_audit::demo::build(&root).unwrap();
    Ws { root, sglang: demo.sglang_repo, dynamo: demo.dynamo_repo, _dir: dir }
}

impl Ws {
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }
    /// `engine-audit audit --sglang <demo> --offline --cache-dir <tmp>` plus `args`.
    fn audit(&self, args: &[&str]) -> Command {
        let mut cmd = Command::cargo_bin("engine-audit").unwrap();
        cmd.current_dir(&self.root)
            .env("NO_COLOR", "1")
            .env("XDG_CACHE_HOME", self.root.join("xdg"))
            .arg("audit")
            .arg("--sglang")
            .arg(&self.sglang)
            .arg("--offline")
            .arg("--cache-dir")
            .arg(self.root.join("cache"));
        cmd.args(args);
        cmd
    }
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(mut cmd: Command) -> Out {
    let out = cmd.output().unwrap();
    let o = Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!o.stderr.contains("panicked"), "panic:\n{}", o.stderr);
    o
}

fn load(path: &str, text: &str) -> Result<RecipeFile, RecipeError> {
    recipe::load_text(path, text.to_string(), &LinkMapping::default())
}

fn note_with<'a>(file: &'a RecipeFile, needle: &str) -> &'a recipe::Note {
    file.notes.iter().find(|n| n.message.contains(needle)).unwrap_or_else(|| panic!("no note containing {needle:?}: {:#?}", file.notes))
}

// ---------------------------------------------------------------------------
// recipes: located errors, and the rest of the audit still runs

#[test]
fn malformed_yaml_is_located_and_the_other_recipes_are_still_audited() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    w.write("bad.yaml", "name: bad\nbackend:\n  sglang_config: [1, 2\n");
    let o = run(w.audit(&["ok.yaml", "bad.yaml", "--to", "v1.1.0"]));
    assert_eq!(o.code, 1, "only infos in ok.yaml, but bad.yaml was not audited: the gate fails closed\n{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("bad.yaml:4:1: YAML syntax error"), "{}", o.stderr);
    assert!(
        o.stdout.contains("EA305 unreadable-recipe") && o.stdout.contains("bad.yaml:4:1") && o.stdout.contains("1 deployment"),
        "{}",
        o.stdout
    );
}

#[test]
fn unreadable_files_beside_a_clean_recipe_fail_the_gate() {
    let w = ws();
    w.write("mine/ok.yaml", OK_RECIPE);
    w.write("mine/tab.yaml", "name: t\nbackend:\n\ttype: sglang\n");
    w.write("mine/latin1.yaml", b"name: caf\xe9\nbackend: {type: sglang}\n");
    // A flag after a NUL byte is not silently dropped: the file is refused, named.
    w.write("mine/nul.yaml", b"name: n\nbackend:\n  type: sglang\n\0  sglang_config: {aggregated: {no-such-flag: 1}}\n");
    let o = run(w.audit(&["mine", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    let report = json_report(&o);
    let mut unread: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA305" && f["severity"] == "error")
        .map(|f| (f["recipe"].as_str().unwrap().rsplit('/').next().unwrap().to_string(), f["line"].as_u64().unwrap()))
        .collect();
    unread.sort();
    assert_eq!(unread, [("latin1.yaml".into(), 1), ("nul.yaml".into(), 1), ("tab.yaml".into(), 3)], "{report}");
    assert!(report["findings"].to_string().contains("NUL byte at offset 32"), "{report}");
}

#[cfg(unix)]
#[test]
fn special_files_and_huge_files_are_named_not_read() {
    let w = ws();
    w.write("mine/ok.yaml", OK_RECIPE);
    // A FIFO with no writer would block a plain open forever.
    let fifo = w.root.join("mine/fifo.yaml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    // A symlink to an endless device inside the tree's reach is never read to the end.
    std::os::unix::fs::symlink("/dev/zero", w.root.join("mine/zero.yaml")).unwrap();
    // Over the size cap: refused by its size, not parsed.
    let mut big = String::from(OK_RECIPE);
    big.push_str("extra:\n");
    while big.len() as u64 <= engine_audit::recipe::MAX_RECIPE_BYTES {
        big.push_str("  - padding padding padding padding padding padding\n");
    }
    w.write("mine/big.yaml", big);
    let o = run(w.audit(&["mine", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    let findings = json_report(&o)["findings"].to_string();
    assert!(findings.contains("fifo.yaml") && findings.contains("not a regular file"), "{findings}");
    assert!(findings.contains("zero.yaml") && findings.contains("outside"), "{findings}");
    assert!(findings.contains("big.yaml") && findings.contains("-byte limit for a recipe"), "{findings}");
    // Named on the command line, the device is followed (the user named it) but not read.
    let o = run(w.audit(&["mine/zero.yaml", "mine/ok.yaml", "--to", "v1.1.0", "--format", "json"]));
    assert!(json_report(&o)["findings"].to_string().contains("not a regular file"), "{}", o.stdout);
}

#[test]
fn nothing_readable_exits_2_with_every_reason() {
    let w = ws();
    w.write("tab.yaml", "name: a\nbackend:\n\ttype: sglang\n");
    w.write("latin1.yaml", b"name: caf\xe9\nbackend: {type: sglang}\n");
    w.write("empty.yaml", "");
    let o = run(w.audit(&["tab.yaml", "latin1.yaml", "empty.yaml", "--to", "v1.1.0"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("tab.yaml:3:2: YAML syntax error"), "{}", o.stderr);
    assert!(o.stderr.contains("latin1.yaml: not valid UTF-8 (first bad byte at offset 9)"), "{}", o.stderr);
    assert!(o.stdout.contains("empty.yaml: empty file"), "{}", o.stdout);
    assert!(o.stderr.contains("no deployment could be audited"), "{}", o.stderr);
}

/// A generated recipe whose `sglang_config` is one flow mapping on one line of
/// about 200 KB, with a syntax error near its end; returns the text and the
/// character column of the bad token.
fn long_line_recipe() -> (String, usize) {
    let mut line = String::from("backend: {type: sglang, sglang_config: {aggregated: {tp-size: 8, ");
    let mut i = 0;
    while line.len() < 200_000 {
        line.push_str(&format!("cuda-graph-bs-{i}: {i}, "));
        i += 1;
    }
    line.push_str("served-model-name: tiny, ");
    let bad = line.chars().count() + 1;
    line.push_str("] }}}");
    (format!("name: generated-sweep\n{line}\n"), bad)
}

#[test]
fn a_syntax_error_on_a_200_kb_line_shows_a_short_excerpt_at_the_exact_position() {
    let (text, bad) = long_line_recipe();
    let start = Instant::now();
    let err = load("gen.yaml", &text).unwrap_err();
    println!("200 KB line read to its error in {:?}", start.elapsed());
    // Positions were once found by counting characters from the line start for
    // every token: minutes on this line. Linear reading takes well under a second.
    assert!(start.elapsed() < std::time::Duration::from_secs(15), "{:?}", start.elapsed());
    let RecipeError::Yaml { line, column, .. } = &err else { panic!("{err:?}") };
    assert_eq!((*line, *column as usize), (2, bad), "{err}");
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).render_report(&mut out, &err).unwrap();
    assert!(out.len() < 1_500, "{} bytes rendered:\n{}", out.len(), &out[..out.len().min(3_000)]);
    // The snippet's own header keeps the exact place, and shows what is there.
    assert!(out.contains(&format!("[gen.yaml:2:{bad}]")), "{out}");
    assert!(out.contains("served-model-name: tiny, ] }}}"), "{out}");
    assert!(out.contains('…'), "the cut is marked: {out}");
    // The label still points at the bad token: its column in the excerpt is
    // the `]`'s column in the excerpt line.
    let lines: Vec<&str> = out.lines().collect();
    let at = lines.iter().position(|l| l.contains("served-model-name: tiny, ]")).unwrap();
    let caret = lines[at + 1].find('┬').or_else(|| lines[at + 1].find('▲')).expect("a label under the line");
    let bracket = lines[at].find(", ]").unwrap() + 2;
    assert_eq!(lines[at][..bracket].chars().count(), lines[at + 1][..caret].chars().count(), "{out}");

    // Through the CLI: the other recipe is still audited, the error stays short.
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    w.write("gen.yaml", &text);
    let o = run(w.audit(&["ok.yaml", "gen.yaml", "--to", "v1.1.0"]));
    assert_eq!(o.code, 1, "an unreadable recipe (EA305) fails the gate: {}", &o.stderr[..o.stderr.len().min(3_000)]);
    assert!(o.stderr.len() < 2_000 && o.stderr.contains(&format!("gen.yaml:2:{bad}")), "{}", &o.stderr[..o.stderr.len().min(3_000)]);
}

#[test]
fn yaml_errors_name_line_and_column() {
    let cases: &[(&str, &str, u32)] = &[
        ("tabs", "name: x\nbackend:\n\tsglang_config: {}\n", 3),
        ("unclosed flow", "a: {b: 1\n", 2),
        // yaml-rust2 names where the string starts: the line to fix.
        ("unterminated string", "a: \"x\nb: 1\n", 1),
        ("unknown alias", "a: 1\nb: *nope\n", 2),
    ];
    for (what, text, line) in cases {
        match load("r.yaml", text) {
            Err(RecipeError::Yaml { line: l, column, .. }) => {
                assert_eq!(l, *line, "{what}");
                assert!(column >= 1, "{what}");
            }
            other => panic!("{what}: expected a YAML error, got {other:?}"),
        }
    }
}

#[test]
fn shape_errors_are_typed_and_located() {
    let cases: &[(&str, &str, u32, &str)] = &[
        ("second document", "a: 1\n---\nb: 2\n", 2, "second YAML document"),
        ("merge of a scalar", "a: &s 1\nb:\n  <<: *s\n", 3, "merges maps"),
        ("base not a map", "backend: {type: sglang}\nbase: [1]\noverride_x: {}\n", 2, "`base` should be a map"),
        ("override not a map", "base: {backend: {type: sglang}}\noverride_x: [1]\n", 2, "`override_x` should be a map"),
    ];
    for (what, text, line, needle) in cases {
        let err = load("r.yaml", text).expect_err(what);
        let message = err.to_string();
        assert!(message.contains(needle), "{what}: {message}");
        let got = match &err {
            RecipeError::Shape { line, .. } => *line,
            RecipeError::DuplicateKey { first_line, .. } => *first_line,
            other => panic!("{what}: {other:?}"),
        };
        assert_eq!(got, *line, "{what}: {message}");
    }
}

#[test]
fn anchors_aliases_and_merge_keys_point_at_the_written_text() {
    let text = "common: &common\n  tp-size: 8\n  mem-fraction-static: 0.8\nname: anchored\nmodel:\n  container: \"lmsysorg/sglang:v1.0.0\"\nbackend:\n  type: sglang\n  sglang_config:\n    prefill:\n      <<: *common\n      dp-size: 2\n    decode: *common\n";
    let file = load("a.yaml", text).unwrap();
    let roles = &file.deployments[0].roles;
    for role in roles {
        let tp = role.flags.iter().find(|f| f.name == "tp-size").expect("tp-size through the alias");
        assert_eq!(tp.value_span.line, 2, "{}: the value's span is the anchored text", role.role);
        assert_eq!(&file.text[tp.value_span.offset..tp.value_span.end()], "8");
    }
    let prefill = roles.iter().find(|r| r.role == "prefill").unwrap();
    assert_eq!(prefill.flags.len(), 3, "merged keys plus its own");
}

#[test]
fn a_section_of_the_wrong_shape_is_a_located_note_and_the_rest_is_read() {
    let text = "name: shapes\nmodel: [a, b]\nbackend:\n  type: sglang\n  sglang_config:\n    prefill: \"--tp 8\"\n    decode:\n      tp-size: 8\nenvironment: [A, B]\n";
    let file = load("s.yaml", text).unwrap();
    let model = note_with(&file, "`model` should be a map");
    assert_eq!((model.level, model.span.as_ref().unwrap().line), (NoteLevel::Error, 2));
    assert_eq!(note_with(&file, "sglang_config.prefill").span.as_ref().unwrap().line, 6);
    assert_eq!(note_with(&file, "environment block").span.as_ref().unwrap().line, 9);
    let decode = file.deployments[0].roles.iter().find(|r| r.role == "decode").unwrap();
    assert_eq!(decode.flags[0].name, "tp-size", "the well-formed role is still read");

    let not_a_map = load("c.yaml", "name: x\nbackend:\n  type: sglang\n  sglang_config: 5\n").unwrap();
    assert_eq!(note_with(&not_a_map, "should map roles to flags").span.as_ref().unwrap().line, 4);
}

#[test]
fn a_flag_value_that_is_a_map_is_invalid_not_guessed() {
    let text = "name: m\nbackend:\n  type: sglang\n  sglang_config:\n    aggregated:\n      tp-size: {a: 1}\n      dp-size: 2\n";
    let file = load("m.yaml", text).unwrap();
    let flags = &file.deployments[0].roles[0].flags;
    let tp = flags.iter().find(|f| f.name == "tp-size").unwrap();
    assert!(matches!(tp.value, FlagValue::Invalid { .. }), "{:?}", tp.value);
    assert_eq!(tp.value_span.line, 6);
    assert_eq!(note_with(&file, "tp-size").span.as_ref().unwrap().line, 6);
    assert!(flags.iter().any(|f| f.name == "dp-size"), "the next flag is still read");
}

#[test]
fn notes_in_the_report_carry_their_line() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    w.write("m.yaml", "name: m\nmodel:\n  container: \"lmsysorg/sglang:v1.0.0\"\nbackend:\n  type: sglang\n  sglang_config:\n    aggregated:\n      tp-size: {a: 1}\n");
    let o = run(w.audit(&["ok.yaml", "m.yaml", "--to", "v1.1.0", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let notes = report["notes"].to_string();
    assert!(notes.contains("m.yaml:8:16: `aggregated.tp-size` is a map"), "{notes}");
}

#[test]
fn bom_and_crlf_keep_spans_exact() {
    let text = "\u{feff}name: crlf\r\nbackend:\r\n  type: sglang\r\n  sglang_config:\r\n    aggregated:\r\n      tp-size: 8\r\n      attention-backend: \"fa3\"\r\n";
    let file = load("b.yaml", text).unwrap();
    let flags = &file.deployments[0].roles[0].flags;
    let tp = &flags[0];
    assert_eq!((tp.key_span.line, tp.key_span.column), (6, 7));
    assert_eq!(&file.text[tp.value_span.offset..tp.value_span.end()], "8");
    let ab = &flags[1];
    assert_eq!(&file.text[ab.value_span.offset..ab.value_span.end()], "\"fa3\"");
    assert_eq!(file.deployments[0].name_span.as_ref().unwrap().column, 7, "the BOM takes no column");
}

#[test]
fn an_empty_or_comment_only_recipe_is_a_note() {
    for text in ["", "\u{feff}", "# only a comment\n", "\n\n"] {
        let file = load("e.yaml", text).unwrap();
        note_with(&file, "empty file");
        assert!(file.deployments.is_empty());
    }
}

#[test]
fn an_alias_bomb_is_refused_quickly() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); 9].join(", ")));
    }
    text.push_str("backend: {type: sglang}\n");
    let start = Instant::now();
    let err = load("bomb.yaml", &text).unwrap_err();
    println!("alias bomb refused in {:?}", start.elapsed());
    assert!(err.to_string().contains("aliases expand"), "{err}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!("backend: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(load("d.yaml", &deep), Err(RecipeError::Yaml { .. })));
    let deep_map = format!("backend: {}1{}\n", "{a: ".repeat(20_000), "}".repeat(20_000));
    assert!(load("d.yaml", &deep_map).is_err());
}

/// A recipe of about 50 MB: one real deployment, then a huge `extra:` block
/// (a flat map and a long list), the shapes a generated file would have.
fn big_recipe(bytes: usize) -> String {
    let mut text = String::from(OK_RECIPE);
    text.push_str("extra:\n  table:\n");
    let mut i = 0usize;
    while text.len() < bytes / 2 {
        text.push_str(&format!("    key_{i:08}: value number {i}\n"));
        i += 1;
    }
    text.push_str("  list:\n");
    while text.len() < bytes {
        text.push_str(&format!("    - item {i}\n"));
        i += 1;
    }
    text
}

#[test]
fn a_50_mb_recipe_loads_in_bounded_time() {
    let text = big_recipe(50 << 20);
    let start = Instant::now();
    let file = load("big.yaml", &text).unwrap();
    println!("50 MB recipe ({} bytes) loaded in {:?}", text.len(), start.elapsed());
    assert_eq!(file.deployments.len(), 1);
    assert_eq!(file.deployments[0].roles[0].flags[0].name, "tp-size");
}

#[test]
fn an_override_sweep_that_multiplies_past_the_limit_is_refused() {
    // Every zip variant copies `base`: 3000 values × 2000 variants = 6M.
    let mut text = String::from("base:\n  name: sweep\n  backend:\n    type: sglang\n  extra:\n");
    for i in 0..1500 {
        text.push_str(&format!("    k{i}: {i}\n"));
    }
    text.push_str("zip_override_tp:\n  backend:\n    sglang_config:\n      aggregated:\n        tp-size: [");
    text.push_str(&(0..2000).map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    text.push_str("]\n");
    let start = Instant::now();
    let err = load("sweep.yaml", &text).unwrap_err();
    println!("oversized sweep refused in {:?}", start.elapsed());
    assert!(matches!(&err, RecipeError::Shape { line: 2, .. }), "points at `base`: {err}");
    assert!(err.to_string().contains("2000 variants"), "{err}");
    // A real sweep is fine.
    let small = text.replace(&(0..2000).map(|i| i.to_string()).collect::<Vec<_>>().join(", "), "4, 8");
    assert_eq!(load("sweep.yaml", &small).unwrap().deployments.len(), 2);
}

// ---------------------------------------------------------------------------
// shell scripts

#[test]
fn an_unterminated_quote_does_not_lose_the_script() {
    let text = "#!/bin/bash\npython3 -m sglang.launch_server --tp-size 8 --model-path \"/m\npython3 -m sglang.launch_server --dp 2\n";
    let file = load("u.sh", text).unwrap();
    assert!(!file.deployments.is_empty() || !file.notes.is_empty(), "either something is read or the problem is said: {file:#?}");
    for note in &file.notes {
        if let Some(span) = &note.span {
            assert!(file.text.get(span.offset..span.end()).is_some());
        }
    }
}

#[test]
fn a_quote_left_open_later_keeps_the_launch_before_it() {
    let text = "#!/bin/bash\npython3 -m sglang.launch_server --tp-size 8\necho \"unterminated\nexport SGLANG_Y=1\n";
    let file = load("q.sh", text).unwrap();
    let words: Vec<_> = file.deployments[0].roles[0].argv.as_ref().unwrap().iter().filter_map(|t| t.value.value().cloned()).collect();
    assert_eq!(words, ["--tp-size", "8"]);
    note_with(&file, "shell syntax error near line");
}

/// `source` of a file that is not there: named, and the rest is read.
#[test]
fn a_missing_sourced_file_is_named_and_the_rest_is_audited() {
    let w = ws();
    w.write("bench/.git/HEAD", "ref: refs/heads/main\n");
    w.write("bench/launch.sh", "#!/bin/bash\nsource \"$(dirname \"$0\")/missing_lib.sh\"\n. ../../../etc/passwd\npython3 -m sglang.launch_server --tp-size 8 --bogus-flag\n");
    let file = recipe::load_path(&w.root.join("bench/launch.sh")).unwrap();
    note_with(&file, "line 2: `source ");
    assert!(note_with(&file, "missing_lib.sh").message.contains("what it sets is not read"));
    // Never outside the repository the script is in.
    let outside = note_with(&file, "line 3: `source ../../../etc/passwd`");
    assert!(outside.message.contains("outside") || outside.message.contains("no such file"), "{outside:?}");
    let o = run(w.audit(&["bench/launch.sh", "--to", "v1.1.0", "--format", "json", "--fail-on", "never"]));
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let codes: Vec<_> =
        report["findings"].as_array().unwrap().iter().map(|f| (f["code"].as_str().unwrap(), f["subject"].as_str().unwrap())).collect();
    assert!(codes.contains(&("EA001", "bogus-flag")), "{codes:?}");
}

/// A variable the script assigns only on one branch would be empty on the
/// other, but not after a `source` that was not read: the unread library (or
/// the job) may set it, so the word is unknown, never a missing value. The
/// real deprecated InferenceX scripts source `benchmark_lib.sh` one folder
/// too shallow and then copy `$EVAL_MAX_MODEL_LEN` into `MAX_MODEL_LEN`.
#[test]
fn after_an_unread_source_an_unset_variable_is_unknown_not_empty() {
    let w = ws();
    w.write("bench/.git/HEAD", "ref: refs/heads/main\n");
    let script = "#!/bin/bash\n{source}if [ \"${EVAL_ONLY}\" = \"true\" ]; then\n    setup_eval_context\n    MAX_RUNNING=\"$EVAL_RUNNING\"\nfi\npython3 -m sglang.launch_server --tp-size 8 --max-running-requests $MAX_RUNNING --cuda-graph-bs 8\n";
    let codes = |source: &str| {
        w.write("bench/launch.sh", script.replace("{source}", source));
        let o = run(w.audit(&["bench/launch.sh", "--to", "v1.1.0", "--format", "json", "--fail-on", "never"]));
        let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["code"].as_str().unwrap().to_string(), f["subject"].as_str().unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    // Everything read: on the false side the script never set it, so bash passes no word.
    let read = codes("");
    assert!(read.iter().any(|(c, s)| c == "EA006" && s.contains("max-running-requests")), "{read:?}");
    let unread = codes("source \"$(dirname \"$0\")/../lib/missing_lib.sh\"\n");
    assert!(!unread.iter().any(|(c, _)| c == "EA006"), "{unread:?}");
}

/// Past the script's last launch the evaluator stops: the client and eval
/// functions InferenceX calls after the server starts branch on dozens of job
/// variables and used to exhaust the statement budget for nothing.
#[test]
fn what_runs_after_the_last_launch_is_not_evaluated() {
    let w = ws();
    w.write("bench/.git/HEAD", "ref: refs/heads/main\n");
    w.write("bench/lib.sh", heavy_function("report_results"));
    // The launch itself is in a function the sourced file defines: judged
    // again once the `source` has run.
    w.write(
        "bench/serve.sh",
        "start_server() {\n  python3 -m sglang.launch_server --tp-size \"$1\" --bogus-flag --mark \"$R_0$R_1$R_2$R_3$R_4\"\n}\n",
    );
    let script =
        "#!/bin/bash\nsource \"$(dirname \"$0\")/serve.sh\"\nsource \"$(dirname \"$0\")/lib.sh\"\nstart_server 8\nreport_results\n";
    w.write("bench/launch.sh", script);
    let file = recipe::load_path(&w.root.join("bench/launch.sh")).unwrap();
    assert!(!file.notes.iter().any(|n| n.message.contains("stopped evaluating")), "{:#?}", file.notes);
    let o = run(w.audit(&["bench/launch.sh", "--to", "v1.1.0", "--format", "json", "--fail-on", "never"]));
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let codes: Vec<_> =
        report["findings"].as_array().unwrap().iter().map(|f| (f["code"].as_str().unwrap(), f["subject"].as_str().unwrap())).collect();
    assert!(codes.contains(&("EA001", "bogus-flag")), "{codes:?}");
    // The same tail before the launch is evaluated (and hits the budget): the
    // cut is at the last launch, not anywhere.
    w.write(
        "bench/launch.sh",
        "#!/bin/bash\nsource \"$(dirname \"$0\")/serve.sh\"\nsource \"$(dirname \"$0\")/lib.sh\"\nreport_results\nstart_server 8\n",
    );
    let file = recipe::load_path(&w.root.join("bench/launch.sh")).unwrap();
    assert!(file.notes.iter().any(|n| n.message.contains("stopped evaluating")), "{:#?}", file.notes);
}

/// A function of 2^5 paths that all differ in what a launch passes (`$R_i`
/// reach its `--mark`, so none are merged) through 8,000 statements: past the
/// 200,000-statement budget when evaluated.
fn heavy_function(name: &str) -> String {
    let mut text = format!("{name}() {{\n");
    for i in 0..5 {
        text.push_str(&format!("  if [[ \"$MODE_{i}\" == on ]]; then R_{i}=1; else R_{i}=2; fi\n"));
    }
    for i in 0..8000 {
        text.push_str(&format!("  echo \"$R_{}\"\n", i % 5));
    }
    text.push_str("}\n");
    text
}

/// `trap 'handler' EXIT` names its code in literal words: it may launch only
/// when that code may, so it does not keep the evaluation going past the
/// last launch.
#[test]
fn a_trap_with_a_literal_handler_is_judged_by_its_handler() {
    let script = |handler: &str| {
        format!(
            "#!/bin/bash\n{}cleanup() {{ echo bye; }}\nrelaunch() {{ python3 -m sglang.launch_server --tp-size 4; }}\n\
             python3 -m sglang.launch_server --tp-size 8 --mark \"$R_0$R_1$R_2$R_3$R_4\"\nwork\ntrap '{handler}' EXIT\n",
            heavy_function("work")
        )
    };
    let file = load("t.sh", &script("cleanup")).unwrap();
    assert!(!file.notes.iter().any(|n| n.message.contains("stopped evaluating")), "{:#?}", file.notes);
    // A handler that launches is a launch after `work`: evaluated up to it.
    let file = load("t.sh", &script("relaunch")).unwrap();
    assert!(file.notes.iter().any(|n| n.message.contains("stopped evaluating")), "{:#?}", file.notes);
}

/// A script that ends by sourcing the engine's server script (AMD's
/// `server.sh` dispatcher): nothing after the `source` may launch, so the
/// sourced file too is evaluated only up to its own last launch.
#[test]
fn a_file_sourced_last_is_evaluated_up_to_its_last_launch() {
    let w = ws();
    w.write("amd/.git/HEAD", "ref: refs/heads/main\n");
    w.write(
        "amd/server_x.sh",
        format!("{}python3 -m sglang.launch_server --tp-size 8 --bogus-flag\nreport_results\n", heavy_function("report_results")),
    );
    let dispatcher =
        |after: &str| format!("#!/bin/bash\nif [[ \"$ENGINE\" == x ]]; then\n  source \"$(dirname \"$0\")/server_x.sh\"\nfi\n{after}");
    w.write("amd/server.sh", dispatcher(""));
    let file = recipe::load_path(&w.root.join("amd/server.sh")).unwrap();
    assert!(!file.notes.iter().any(|n| n.message.contains("stopped evaluating")), "{:#?}", file.notes);
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    assert!(dep.roles.iter().all(|r| r.argv.is_some()), "{:#?}", dep.roles);
    // A launch after the `source`: the sourced file's tail may change it, so it is evaluated.
    w.write("amd/server.sh", dispatcher("python3 -m sglang.launch_server --tp-size \"$R_0\"\n"));
    let file = recipe::load_path(&w.root.join("amd/server.sh")).unwrap();
    assert!(file.notes.iter().any(|n| n.message.contains("stopped evaluating")), "{:#?}", file.notes);
}

/// Past the cap on paths, paths that agree on what can reach a launch are
/// merged: a flag array set before many unrelated branches stays known on
/// each of its paths (before, every value that differed became unknown).
#[test]
fn paths_that_agree_on_what_reaches_a_launch_are_merged_and_stay_known() {
    let mut text = String::from("#!/bin/bash\nARGS=(--tp-size 8)\nif [[ \"$DP\" == true ]]; then ARGS+=(--dp-size 8); fi\n");
    for i in 0..7 {
        text.push_str(&format!("if [[ \"$NIC_{i}\" == on ]]; then export NCCL_X_{i}=1; QOS_{i}=96; fi\n"));
    }
    text.push_str("python3 -m sglang.launch_server \"${ARGS[@]}\"\n");
    let file = load("m.sh", &text).unwrap();
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    let unknown = dep.roles.iter().flat_map(|r| r.argv.iter().flatten()).filter(|t| t.value.is_dynamic()).count();
    assert_eq!(unknown, 0, "{:#?}", dep.roles);
    let flags: Vec<_> = dep.roles.iter().flat_map(|r| r.flag_uses(|_| true)).collect();
    let dp = flags.iter().find(|f| f.name == "dp-size").expect("--dp-size on the DP path");
    assert_eq!(dp.condition.as_deref(), Some("DP=true"));
    note_with(&file, "paths that agree on every variable that can reach a launch are merged");
}

/// Past the cap, a flag string built up in branches (`CONFIG="$CONFIG --x"`
/// under tests the job decides) differs on every path, so no merge keeps it
/// apart and it is given up. What every path writes stays known: the words
/// all its values share, in order, and `--flag=` of a word that differs after
/// its `=`; where the values differ is unknown (and said), never dropped.
#[test]
fn a_flag_string_given_up_past_the_cap_keeps_the_words_every_path_writes() {
    let mut text = String::from("#!/bin/bash\nCONFIG=\"--tp-size 8\"\nif [[ \"$EP\" == true ]]; then CONFIG=\"$CONFIG --ep-size 8\"; fi\n");
    text.push_str("CONFIG=\"$CONFIG --mem-fraction-static 0.8\"\n");
    for i in 0..7 {
        text.push_str(&format!("if [[ \"$OPT_{i}\" == on ]]; then CONFIG=\"$CONFIG --opt-{i}\"; fi\n"));
    }
    text.push_str("CONFIG=\"$CONFIG --port 30000\"\npython3 -m sglang.launch_server $CONFIG\n");
    let file = load("c.sh", &text).unwrap();
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    note_with(&file, "more than 32 paths");
    for role in &dep.roles {
        let flags = role.flag_uses(|_| false);
        let value = |name: &str| flags.iter().find(|f| f.name == name).map(|f| f.value.clone());
        for (name, text) in [("tp-size", "8"), ("mem-fraction-static", "0.8"), ("port", "30000")] {
            assert!(matches!(value(name), Some(FlagValue::Scalar { text: t, .. }) if t == text), "--{name} {text} in {flags:#?}");
        }
        // A word only some of the merged paths write is not claimed: it is
        // in the unknown part, which is there for EA306 to report.
        assert!(value("ep-size").is_none() && value("opt-0").is_none(), "{flags:#?}");
        assert!(role.argv.iter().flatten().any(|t| t.value.is_dynamic()), "{role:#?}");
    }
}

/// An array that paths build to different lengths (`A=(--tp-size 8)`, with
/// optional flags appended under tests), past the cap on paths: the elements
/// every path writes stay known, in `"${A[@]}"` and in `${A[*]}` inside a
/// string run by `eval` (server_atom.sh's `DECODE_PARALLEL_ARGS`); what
/// differs is unknown words, never claimed.
#[test]
fn an_array_of_two_lengths_given_up_past_the_cap_keeps_its_common_elements() {
    let mut text = String::from("#!/bin/bash\nA=(--tp-size 8)\n");
    for i in 0..7 {
        text.push_str(&format!("if [[ \"$OPT_{i}\" == on ]]; then A=(\"${{A[@]}}\" --opt-{i}); fi\n"));
    }
    text.push_str("A=(\"${A[@]}\" --port 30000)\npython3 -m sglang.launch_server \"${A[@]}\" &\n");
    text.push_str("CMD=\"python3 -m sglang.launch_server ${A[*]} --host h\"\neval \"$CMD\"\n");
    let file = load("a.sh", &text).unwrap();
    assert_eq!(file.deployments.len(), 2, "{:#?}", file.deployments);
    note_with(&file, "more than 32 paths");
    let roles: Vec<_> = file.deployments.iter().flat_map(|d| &d.roles).collect();
    for role in &roles {
        let flags = role.flag_uses(|_| false);
        let value = |name: &str| flags.iter().find(|f| f.name == name).map(|f| f.value.clone());
        for (name, text) in [("tp-size", "8"), ("port", "30000")] {
            assert!(matches!(value(name), Some(FlagValue::Scalar { text: t, .. }) if t == text), "--{name} {text} in {flags:#?}");
        }
    }
    // The merged paths' optional flags are unknown words on those roles.
    assert!(roles.iter().any(|r| r.argv.iter().flatten().any(|t| t.value.is_dynamic())), "{roles:#?}");
}

/// An env var exported on some paths only, past the cap on paths (AMD's
/// `env.sh`: `if [[ $MODEL_NAME == X ]]; then export SGLANG_...=1; fi` per
/// model): the merged state is not claimed to export it, only that it may;
/// one every path exports stays plain.
#[test]
fn an_export_only_some_merged_paths_have_is_said_to_be_maybe() {
    let mut text = String::from("#!/bin/bash\nexport SGLANG_ALWAYS=1\n");
    for i in 0..7 {
        text.push_str(&format!("if [[ \"$MODEL_NAME\" == m{i} ]]; then export SGLANG_ONLY_{i}=1; fi\n"));
        text.push_str(&format!("if [[ \"$OPT_{i}\" == on ]]; then export SGLANG_OPT_{i}=1; fi\n"));
    }
    text.push_str("python3 -m sglang.launch_server --tp 8\n");
    let file = load("m.sh", &text).unwrap();
    note_with(&file, "more than 32 paths");
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    let maybe = "on some of the paths merged past the cap on paths only";
    let envs: Vec<_> = dep.common_env.iter().chain(dep.roles.iter().flat_map(|r| &r.env)).collect();
    let always = envs.iter().find(|e| e.name == "SGLANG_ALWAYS").expect("SGLANG_ALWAYS");
    assert_eq!(always.condition, None);
    let only: Vec<_> = envs.iter().filter(|e| e.name.starts_with("SGLANG_ONLY_")).collect();
    assert!(!only.is_empty(), "{envs:#?}");
    // A merged state's export of a model's variable is a maybe, never a claim.
    assert!(only.iter().any(|e| e.condition.as_deref() == Some(maybe)), "{only:#?}");
}

/// A string of flags expanded unquoted is split into its words; a word with
/// an unknown part keeps its literal flag name (`--dp-size=$TP`): the name is
/// the one bash passes whatever `$TP` holds.
#[test]
fn a_flag_split_out_of_a_string_keeps_its_name_when_its_value_is_unknown() {
    let text = "#!/bin/bash\nARGS=\"--tp-size=1 --dp-size=$TP --enable-dp-attention\"\npython3 -m sglang.launch_server $ARGS\n";
    let file = load("s.sh", text).unwrap();
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    let flags = dep.roles[0].flag_uses(|n| n == "enable-dp-attention");
    let names: Vec<&str> = flags.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["tp-size", "dp-size", "enable-dp-attention"], "{flags:#?}");
    assert!(matches!(&flags[1].value, FlagValue::Dynamic { .. }), "{:?}", flags[1].value);
}

/// A script that starts TensorRT-LLM (`trtllm-serve`, behind `mpirun`), whose
/// command lines are not read yet, is a deployment named not audited, beside
/// the SGLang launch the same run audits: never a clean file with nothing in it.
#[test]
fn a_trtllm_serve_launch_is_named_not_audited() {
    let w = ws();
    w.write("bench/trt.sh", "#!/bin/bash\nmpirun -n 1 --oversubscribe \\\n    trtllm-serve \"$MODEL\" --port=8000 --tp_size=8 --extra_llm_api_options=/tmp/c.yml &\n");
    w.write("bench/sgl.sh", "#!/bin/bash\npython3 -m sglang.launch_server --tp-size 8\n");
    let o = run(w.audit(&["bench", "--to", "v1.1.0", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let coverage = &report["coverage"];
    assert_eq!((coverage["deployments"].as_u64(), coverage["audited"].as_u64()), (Some(2), Some(1)), "{coverage:#}");
    let missed = &coverage["not_audited"][0];
    assert_eq!((missed["engine"].as_str(), missed["path"].as_str()), (Some("trtllm"), Some("bench/trt.sh")), "{coverage:#}");
    assert_ne!(o.code, 0, "a deployment not audited fails the run unless acknowledged");
    let acknowledged = run(w.audit(&["bench", "--to", "v1.1.0", "--allow-unaudited", "trtllm"]));
    assert_eq!(acknowledged.code, 0, "{}{}", acknowledged.stdout, acknowledged.stderr);
}

/// A 10,000-line script in the shape of the real ones, grown: thousands of
/// assignments, exports, helper functions and their calls, and branches on the
/// same few job variables. Read quickly, and exactly.
#[test]
fn a_10k_line_script_is_read_in_bounded_time() {
    let mut text = String::from("#!/bin/bash\nARGS=(--tp-size 8)\nDP_ATTENTION=${DP_ATTENTION:-false}\n");
    for i in 0..1000 {
        let var = ["DP_ATTENTION", "EVAL_ONLY", "SPEC", "KV"][i % 4];
        text.push_str(&format!("export SGLANG_V{i}=$(( {i} + 1 ))\nVALUE_{i}=\"x{i}\"\nhelper_{i}() {{\n  local y=\"$1\"\n  Z_{i}=\"$y\"\n}}\nhelper_{i} \"$VALUE_{i}\"\n"));
        text.push_str(&format!("if [[ \"${var}\" == \"true\" ]]; then\n  ARGS+=(--flag-{})\nfi\n", i % 4));
    }
    text.push_str("python3 -m sglang.launch_server \"${ARGS[@]}\"\n");
    assert!(text.lines().count() >= 10_000, "{}", text.lines().count());
    let started = std::time::Instant::now();
    let file = load("big.sh", &text).unwrap();
    let took = started.elapsed();
    eprintln!("10k-line script read in {took:?}");
    // About 3 s alone in a debug build (16 paths through 10,000 lines). The
    // bound only catches a runaway (speed is measured by scripts/bench.sh),
    // with room for a loaded 2-core machine (21 s and 35 s were seen there).
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.notes) };
    let flags: Vec<_> = dep.roles.iter().flat_map(|r| r.flag_uses(|_| true)).collect();
    let condition = |name: &str| flags.iter().find(|f| f.name == name).and_then(|f| f.condition.clone());
    assert_eq!(condition("tp-size"), None);
    assert_eq!(condition("flag-0").as_deref(), Some("DP_ATTENTION=true"));
    assert_eq!(condition("flag-3").as_deref(), Some("KV=true"));
    assert_eq!(dep.common_env.len(), 1000);
}

/// Hundreds of independent branches: the paths are capped, what differs
/// between them becomes unknown (and is reported, EA306), in bounded time.
#[test]
fn independent_branches_past_the_cap_are_bounded_and_said() {
    let mut text = String::from("#!/bin/bash\nARGS=(--tp-size 8)\n");
    for i in 0..400 {
        text.push_str(&format!("if [[ \"$V{i}\" == on ]]; then\n  ARGS+=(--flag-{i})\n  X{i}=$(( {i} * 2 ))\nfi\n"));
    }
    text.push_str("python3 -m sglang.launch_server \"${ARGS[@]}\"\n");
    let started = std::time::Instant::now();
    let file = load("branches.sh", &text).unwrap();
    let took = started.elapsed();
    eprintln!("400 independent branches read in {took:?}");
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.notes) };
    assert!(dep.roles.len() <= 32, "{} command lines", dep.roles.len());
    note_with(&file, "more than 32 paths");
    let unread = dep.roles.iter().flat_map(|r| r.argv.iter().flatten()).filter(|t| t.value.is_dynamic()).count();
    assert!(unread > 0, "what became unknown is there to report");
}

/// Past the statement budget, evaluation stops: a launch after that point is
/// reported as not read (EA306), never dropped.
#[test]
fn a_launch_past_the_statement_budget_is_reported() {
    let mut text = String::from("#!/bin/bash\n");
    // 32 paths that differ in what the launch passes (none merged), through
    // 8,000 statements each.
    for i in 0..5 {
        text.push_str(&format!("if [[ \"$V{i}\" == on ]]; then A{i}=1; fi\n"));
    }
    for i in 0..8000 {
        text.push_str(&format!("B{i}=$(( {i} + 1 ))\n"));
    }
    text.push_str("python3 -m sglang.launch_server --tp-size 8 --mark \"$A0$A1$A2$A3$A4\"\n");
    let file = load("long.sh", &text).unwrap();
    note_with(&file, "stopped evaluating after 200000 statements");
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    let why = dep.roles[0].dynamic.as_deref().unwrap_or("");
    assert!(dep.roles[0].argv.is_none() && why.contains("evaluation stopped at line") && why.contains("at line 8007 is not read"), "{why}");
}

/// A fork bomb of functions calling each other is cut at the depth cap.
#[test]
fn recursion_and_self_reference_are_bounded() {
    let text = "#!/bin/bash\nf() { f; g; }\ng() { f; }\nA=$A$A\nf\npython3 -m sglang.launch_server --tp-size 8\n";
    let file = load("r.sh", text).unwrap();
    assert_eq!(file.deployments.len(), 1);
    note_with(&file, "more than 8 levels deep");
}

#[test]
fn heredoc_text_is_not_read_as_flags() {
    let text = "#!/bin/bash\ncat > cfg.txt <<EOF\npython3 -m sglang.launch_server --not-a-real-flag 1\nEOF\npython3 -m sglang.launch_server --tp-size 8\n";
    let file = load("h.sh", text).unwrap();
    let argvs: Vec<String> =
        file.deployments.iter().flat_map(|d| &d.roles).flat_map(|r| r.argv.iter().flatten()).map(|t| format!("{:?}", t.value)).collect();
    assert!(argvs.iter().any(|t| t.contains("--tp-size")), "{argvs:?}");
    assert!(!argvs.iter().any(|t| t.contains("not-a-real-flag")), "heredoc body read as a command: {argvs:?}");
}

#[test]
fn launches_in_a_loop_are_marked_and_eval_is_read_only_when_known() {
    let looped = "#!/bin/bash\nfor tp in 4 8; do\n  python3 -m sglang.launch_server --tp-size $tp\ndone\n";
    let file = load("l.sh", looped).unwrap();
    let role = &file.deployments[0].roles[0];
    assert!(role.dynamic.as_deref().unwrap_or("").contains("loop (line 2)"), "{role:#?}");

    // A known string is read as the script it is.
    let evaled = "#!/bin/bash\nCMD=\"python3 -m sglang.launch_server --tp-size 8\"\neval \"$CMD\"\n";
    let file = load("e.sh", evaled).unwrap();
    let role = &file.deployments[0].roles[0];
    assert_eq!(role.dynamic, None, "{role:#?}");
    let words: Vec<_> = role.argv.as_ref().unwrap().iter().map(|t| t.value.value().cloned().unwrap_or_default()).collect();
    assert_eq!(words, ["--tp-size", "8"]);

    // A string nobody can know is named, never guessed.
    let unknown = "#!/bin/bash\neval \"$SERVER_CMD\"\n";
    let file = load("u.sh", unknown).unwrap();
    assert!(file.deployments.is_empty());
    assert!(
        file.notes
            .iter()
            .any(|n| n.message.contains("line 2: `eval` of a string that is not known (`$SERVER_CMD` comes from the environment)")),
        "{:#?}",
        file.notes
    );
}

#[test]
fn launch_scripts_are_read_never_run() {
    let w = ws();
    let marker = w.root.join("SCRIPT_RAN");
    w.write(
        "launch.sh",
        format!("#!/bin/bash\ntouch {m}\npython3 -m sglang.launch_server --tp-size 8 $(touch {m})\n", m = marker.display()),
    );
    let o = run(w.audit(&["launch.sh", "--to", "v1.1.0"]));
    assert!(o.code == 0 || o.code == 1, "{}\n{}", o.stdout, o.stderr);
    assert!(!marker.exists(), "the launch script was executed");
}

// ---------------------------------------------------------------------------
// engine source

const SERVER_ARGS_HEAD: &str = "import argparse\n\nclass ServerArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument(\"--tp-size\", type=int, default=1)\n        parser.add_argument(\"--dp-size\", type=int, default=1)\n";

fn sglang_tree(files: &[(&str, &[u8])]) -> MemTree {
    let mut tree = MemTree::new("mem");
    tree.insert("sglang/__init__.py", b"".to_vec());
    tree.insert("sglang/srt/__init__.py", b"".to_vec());
    for (path, bytes) in files {
        tree.insert(path, bytes.to_vec());
    }
    tree
}

fn full_surface(tree: &MemTree) -> engine_audit::surface::EngineSurface {
    let demand = Demand {
        symbols_of: vec!["sglang.srt.server_args".into(), "sglang.srt.a".into(), "sglang.srt.b".into()],
        ..Demand::full(&engine_audit::profiles::SGLANG)
    };
    extract_surface(tree, &engine_audit::profiles::SGLANG, "sglang", "test", &demand)
}

#[test]
fn a_python_syntax_error_gives_partial_facts_and_a_warning_naming_the_file() {
    let broken = format!("{SERVER_ARGS_HEAD}        parser.add_argument(\"--broken\", type=int, default=(\n\ndef oops(:\n    pass\n");
    let tree = sglang_tree(&[("sglang/srt/server_args.py", broken.as_bytes())]);
    let s = full_surface(&tree);
    assert!(s.flag("--tp-size").is_some() && s.flag("--dp-size").is_some(), "facts before the error survive");
    let w = s.warnings.iter().find(|w| w.path == "sglang/srt/server_args.py").expect("a warning names the file");
    assert!(w.message.contains("syntax error"), "{}", w.message);
}

#[test]
fn non_utf8_python_is_a_warning_naming_the_file() {
    let mut bytes = SERVER_ARGS_HEAD.as_bytes().to_vec();
    bytes.extend_from_slice(b"# caf\xe9\n");
    let tree = sglang_tree(&[("sglang/srt/server_args.py", &bytes), ("dynamo/sglang/main.py", b"import sglang\n# \xff\n")]);
    let s = full_surface(&tree);
    assert!(s.warnings.iter().any(|w| w.path == "sglang/srt/server_args.py" && w.message.contains("UTF-8")), "{:?}", s.warnings);
    assert!(s.flag("--tp-size").is_some(), "a latin-1 comment does not cost the file's facts");
    let pkg = Package::new(&tree, "dynamo");
    let mut warnings = Vec::new();
    let uses = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
    assert!(!uses.is_empty(), "the consumer file is read with replacement characters");
    assert!(warnings.iter().any(|w| w.path == "dynamo/sglang/main.py" && w.message.contains("UTF-8")), "{warnings:?}");
}

/// About 20 MB of generated module: a long constant table.
fn generated_module(bytes: usize) -> String {
    let mut text = String::from("TABLE = {\n");
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&format!("    \"key_{i:08}\": [{i}, {i}.5, \"v{i}\"],\n"));
        i += 1;
    }
    text.push_str("}\n");
    text
}

#[test]
fn a_20_mb_generated_module_is_handled_in_bounded_time() {
    let big = generated_module(20 << 20);
    let head = format!("{SERVER_ARGS_HEAD}from sglang.srt.gen import TABLE\n");
    let tree = sglang_tree(&[
        ("sglang/srt/server_args.py", head.as_bytes()),
        ("sglang/srt/gen.py", big.as_bytes()),
        ("sglang/srt/a.py", big.as_bytes()),
        ("dynamo/sglang/big.py", big.as_bytes()),
    ]);
    let start = Instant::now();
    let s = full_surface(&tree);
    println!("surface with 20 MB modules in {:?}", start.elapsed());
    assert!(s.flag("--tp-size").is_some());
    assert!(s.warnings.iter().any(|w| w.path == "sglang/srt/a.py"), "the oversized module is named: {:?}", s.warnings);
    let start = Instant::now();
    let pkg = Package::new(&tree, "dynamo");
    let mut warnings = Vec::new();
    let _ = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
    println!("consumer uses with a 20 MB module in {:?}", start.elapsed());
    assert!(warnings.iter().any(|w| w.path == "dynamo/sglang/big.py" && w.message.contains("limit")), "{warnings:?}");
}

/// A git repo holding a small SGLang package whose `srt/gen.py` is a 20 MB
/// generated module, committed and tagged `v1.0.0`; returns the git dir and the
/// 20 MB blob's loose object file.
fn repo_with_a_huge_module(dir: &Path) -> (PathBuf, PathBuf, usize) {
    let repo = git2::Repository::init_bare(dir.join("sglang.git")).unwrap();
    // The parser takes a flag's choices from the generated table: reading the flags reads it.
    let head = format!(
        "from sglang.srt.gen import TABLE\n{SERVER_ARGS_HEAD}        parser.add_argument(\"--gen-mode\", choices=list(TABLE))\n\nimport os\nLEVEL = os.getenv(\"SGLANG_LOG_LEVEL\")\n"
    );
    // Env names in it too: the env-read scan's prefilter would want to look inside.
    let big = generated_module(20 << 20).replace("TABLE = {", "import os\nX = os.environ.get(\"SGLANG_GEN_MODE\")\nTABLE = {");
    let mut tree: Option<git2::Oid> = None;
    let mut big_oid = None;
    for (path, bytes) in [
        ("python/sglang/__init__.py", b"".as_slice()),
        ("python/sglang/srt/__init__.py", b""),
        ("python/sglang/srt/server_args.py", head.as_bytes()),
        ("python/sglang/srt/gen.py", big.as_bytes()),
    ] {
        let oid = repo.blob(bytes).unwrap();
        if path.ends_with("gen.py") {
            big_oid = Some(oid);
        }
        let base = tree.map(|t| repo.find_tree(t).unwrap());
        tree = Some(put(&repo, base.as_ref(), &path.split('/').collect::<Vec<_>>(), oid, 0o100644));
    }
    let sig = git2::Signature::now("t", "t@localhost").unwrap();
    let tree = repo.find_tree(tree.unwrap()).unwrap();
    let commit = repo.commit(None, &sig, &sig, "generated table", &tree, &[]).unwrap();
    repo.tag_lightweight("v1.0.0", &repo.find_object(commit, None).unwrap(), false).unwrap();
    (repo.path().to_path_buf(), loose_object(repo.path(), big_oid.unwrap()), big.len())
}

/// A loose blob object whose header declares `size` bytes but whose zlib stream
/// holds only `prefix` and then an invalid deflate block: the header reads
/// fine, inflating the content fails at once. (A truncated stream would not
/// do: libgit2 1.9 spins forever on one.)
fn header_only_loose_blob(size: usize, prefix: &[u8]) -> Vec<u8> {
    let mut raw = format!("blob {size}\0").into_bytes();
    raw.extend_from_slice(prefix);
    assert!(raw.len() <= 0xffff, "one stored block");
    let len = raw.len() as u16;
    // zlib header, one non-final stored block, then a block of reserved type 3.
    let mut out = vec![0x78, 0x01, 0x00];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(&raw);
    out.push(0x07);
    out.extend_from_slice(&[0; 16]);
    out
}

#[test]
fn a_huge_git_blob_is_refused_by_its_size_before_it_is_inflated() {
    let dir = tempfile::tempdir().unwrap();
    let (git_dir, object, size) = repo_with_a_huge_module(dir.path());
    // Only the header is intact: a size warning can only come from the header,
    // any attempt to read the content is a git error.
    let prefix = generated_module(4096);
    make_writable(&object);
    std::fs::write(&object, header_only_loose_blob(size, &prefix.as_bytes()[..4096])).unwrap();

    let engine =
        EngineRepo::open(git_dir.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() }).unwrap();
    let tree = engine.tree_at(&engine.resolve("v1.0.0").unwrap()).unwrap();
    let demand = Demand {
        symbols_of: vec!["sglang.srt.server_args".into(), "sglang.srt.gen".into()],
        ..Demand::full(&engine_audit::profiles::SGLANG)
    };
    let start = Instant::now();
    let s = extract_surface(&tree, &engine_audit::profiles::SGLANG, "python/sglang", "v1.0.0", &demand);
    println!("surface with a 20 MB blob in git in {:?}", start.elapsed());
    assert!(s.flag("--tp-size").is_some(), "the rest of the package is read");
    let about_gen: Vec<&str> = s.warnings.iter().filter(|w| w.path == "python/sglang/srt/gen.py").map(|w| w.message.as_str()).collect();
    assert!(!about_gen.is_empty(), "the oversized module is named: {:?}", s.warnings);
    for message in &about_gen {
        assert!(
            message.starts_with("skipped: ") && message.contains("bytes is over the 4194304-byte limit"),
            "refused by size, never read: {message}"
        );
        assert!(message.contains(&format!(" {size} bytes ")), "the size the header declares: {message}");
    }
    // The consumer reader (Dynamo's imports) refuses it the same way.
    let pkg = Package::new(&tree, "python/sglang");
    let mut warnings = Vec::new();
    let _ = consumer_uses(&pkg, "sglang", "sglang.srt", &mut warnings);
    let consumer: Vec<&str> = warnings.iter().filter(|w| w.path.ends_with("gen.py")).map(|w| w.message.as_str()).collect();
    assert!(!consumer.is_empty() && consumer.iter().all(|m| m.contains("-byte limit")), "{warnings:?}");
    // The typed error, and reads under the limit as before.
    let limit = engine_audit::extract::symbols::MAX_SOURCE_BYTES;
    match tree.read_limited("python/sglang/srt/gen.py", limit) {
        Err(SourceError::TooLarge { path, size: s, .. }) => assert_eq!((path.as_str(), s), ("python/sglang/srt/gen.py", size as u64)),
        other => panic!("expected TooLarge, got {:?}", other.map(|b| b.len())),
    }
    assert!(tree
        .read_limited("python/sglang/srt/server_args.py", limit)
        .unwrap()
        .starts_with(b"from sglang.srt.gen import TABLE\nimport argparse"));

    // Through the CLI (and the fact cache's recording tree): listed under
    // problems with the same text, and the recipe is audited.
    let recipe = dir.path().join("ok.yaml");
    std::fs::write(&recipe, OK_RECIPE).unwrap();
    let mut cmd = Command::cargo_bin("engine-audit").unwrap();
    cmd.current_dir(dir.path())
        .args(["audit", "ok.yaml", "--offline", "--to", "v1.0.0", "--format", "json", "--sglang"])
        .arg(&git_dir)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .env("ENGINE_AUDIT_CACHE_DIR", dir.path().join("facts"));
    let o = run(cmd);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let problems = report["problems"].as_array().unwrap();
    let gen: Vec<&str> =
        problems.iter().filter(|p| p["path"] == "python/sglang/srt/gen.py").filter_map(|p| p["message"].as_str()).collect();
    assert!(!gen.is_empty() && gen.iter().all(|m| m.starts_with("skipped: ") && m.contains("-byte limit")), "{problems:?}");
    assert_eq!(report["deployments_audited"], 1);
}

#[test]
fn circular_imports_and_self_referential_constants_terminate() {
    let server_args = format!(
        "{SERVER_ARGS_HEAD}from sglang.srt.a import *\nfrom sglang.srt.b import B\nSELF = SELF + [1]\nX = Y\nY = X\n\
         class More:\n    @staticmethod\n    def add(parser):\n        pass\n\
         def _more(parser):\n    parser.add_argument(\"--cyc\", choices=B)\n    parser.add_argument(\"--self\", choices=SELF)\n    parser.add_argument(\"--xy\", choices=X)\n"
    );
    let server_args = server_args.replace(
        "default=1)\n        parser.add_argument(\"--dp-size\", type=int, default=1)\n",
        "default=1)\n        parser.add_argument(\"--dp-size\", type=int, default=1)\n        _more(parser)\n",
    );
    let a = "from sglang.srt.b import *\nfrom sglang.srt.server_args import *\nA = B + A\n";
    let b = "from sglang.srt.a import *\nfrom .a import A\nB = A\nfrom . import b\nC = b.C\n";
    let tree = sglang_tree(&[
        ("sglang/srt/server_args.py", server_args.as_bytes()),
        ("sglang/srt/a.py", a.as_bytes()),
        ("sglang/srt/b.py", b.as_bytes()),
    ]);
    let start = Instant::now();
    let s = full_surface(&tree);
    println!("cyclic package folded in {:?}", start.elapsed());
    for name in ["--cyc", "--self", "--xy"] {
        let flag = s.flag(name).unwrap_or_else(|| panic!("{name} registered"));
        // A value folding cannot know is unknown, never a guessed list.
        assert!(!matches!(&flag.choices, Some(engine_audit::surface::Known::Value(v)) if !v.is_empty()), "{name}: {:?}", flag.choices);
    }
    assert!(s.flag("--tp-size").is_some());
}

// ---------------------------------------------------------------------------
// rules: each error names the file, the line and the key

const RULE: &str = "id: R900
name: robust-test
title: t
severity: warning
engine: sglang
versions: \">=0.5\"
when:
  flag: {name: tp-size, equals: \"8\"}
evidence:
  - query:
      files: [srt/server_args.py]
      query: \"(call) @c\"
message: m
docs: d
tests:
  invalid:
    - name: c
      engines: [{fixture: r001}]
      deployment: {flags: {tp-size: 8}}
";

fn rule_error(text: &str) -> String {
    match parse_rule(text, RuleOrigin::File("rules/robust.yaml".into())) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn rule_errors_name_file_line_and_key() {
    parse_rule(RULE, RuleOrigin::File("rules/robust.yaml".into())).expect("the baseline rule is valid");
    let cases: &[(&str, String, &str, &str)] = &[
        ("unknown top-level key", RULE.replace("docs: d\n", "docs: d\ncolour: red\n"), "colour", ":15:"),
        ("unknown nested key", RULE.replace("equals: \"8\"}", "equals: \"8\", rol: x}"), "rol", ":8:"),
        ("wrong type", RULE.replace("message: m\n", "message: [1, 2]\n"), "message", ":13:"),
        ("invalid tree-sitter query", RULE.replace("\"(call) @c\"", "\"(call @c\""), "evidence[0].query", ":12:"),
        ("bad PEP 440 specifier", RULE.replace("\">=0.5\"", "\">=0.5.x\""), "versions", ":6:"),
        ("bad regex", RULE.replace("  flag: {name: tp-size, equals: \"8\"}", "  model: {matches: \"(\"}"), "model", ":8:"),
    ];
    for (what, text, key, line) in cases {
        let message = rule_error(text);
        assert!(message.contains("rules/robust.yaml"), "{what}: {message}");
        assert!(message.contains(key), "{what}: key `{key}` not named: {message}");
        assert!(message.contains(line), "{what}: line {line} not named: {message}");
    }
}

/// The checks after serde (shape of ids and names, exactly-one tests, empty
/// lists, paths, placeholders, test cases) and the serde errors whose position
/// is not the key's own: each names `file:line:` of the key at fault, and the key.
#[test]
fn rule_validation_errors_name_file_line_and_key() {
    let evidence = "  - query:\n      files: [srt/server_args.py]\n      query: \"(call) @c\"\n";
    let invalid_cases = "  invalid:\n    - name: c\n      engines: [{fixture: r001}]\n      deployment: {flags: {tp-size: 8}}\n";
    let cases: &[(&str, String, &str, &str)] = &[
        ("id shape", RULE.replace("id: R900", "id: X900"), "id", ":1:"),
        ("name not kebab-case", RULE.replace("name: robust-test", "name: Robust_Test"), "name", ":2:"),
        ("two value tests", RULE.replace("equals: \"8\"}", "equals: \"8\", is: set}"), "when.flag", ":8:"),
        ("empty `all`", RULE.replace("  flag: {name: tp-size, equals: \"8\"}", "  all: []"), "when.all", ":8:"),
        (
            "nested `env` without a test",
            RULE.replace(
                "  flag: {name: tp-size, equals: \"8\"}",
                "  any:\n    - flag: {name: tp-size, equals: \"8\"}\n    - env: {name: SGLANG_X}",
            ),
            "when.any[1].env",
            ":10:",
        ),
        ("no evidence", RULE.replace(&format!("evidence:\n{evidence}"), "evidence: []\n"), "evidence", ":9:"),
        ("nothing to cite", RULE.replace(evidence, "  - not: {file_exists: {files: [srt/a.py]}}\n"), "evidence", ":9:"),
        ("empty `any_of`", RULE.replace(evidence, "  - file_exists: {files: [srt/a.py]}\n  - any_of: []\n"), "evidence[1].any_of", ":11:"),
        ("no files", RULE.replace("files: [srt/server_args.py]", "files: []"), "evidence[0].query.files", ":11:"),
        (
            "a path leaving the package",
            RULE.replace("files: [srt/server_args.py]", "files:\n        - srt/server_args.py\n        - ../../etc/passwd"),
            "evidence[0].query.files[1]",
            ":13:",
        ),
        ("unknown placeholder", RULE.replace("message: m\n", "message: \"{flga} is set\"\n"), "message", ":13:"),
        ("no case that must fire", RULE.replace(invalid_cases, "  valid: []\n"), "tests.invalid", ":15:"),
        ("a case without engines", RULE.replace("engines: [{fixture: r001}]", "engines: []"), "tests.invalid[0].engines", ":18:"),
        (
            "a bad case version",
            RULE.replace("    - name: c\n", "    - name: c\n      version: banana\n"),
            "tests.invalid[0].version",
            ":18:",
        ),
        // serde reports these at the enclosing map or at the document start.
        ("unknown key in a block map", RULE.replace("    - name: c\n", "    - name: c\n      engine: sglang\n"), "engine", ":18:"),
        ("duplicate key", RULE.replace("docs: d\n", "docs: d\nid: R901\n"), "id", ":15:"),
    ];
    // Every case is checked before failing: the list says which kinds regressed.
    let mut wrong = Vec::new();
    for (what, text, key, line) in cases {
        let message = rule_error(text);
        let located = message.starts_with(&format!("rules/robust.yaml{line}")) && !message.contains(" at line ");
        let keyed = message.contains(&format!("{key}:")) || message.contains(&format!("`{key}`"));
        if !located || !keyed {
            wrong.push(format!("{what} (want `{line}` and `{key}`): {message}"));
        }
    }
    assert!(wrong.is_empty(), "errors without their line or key:\n{}", wrong.join("\n"));
}

#[test]
fn a_bad_rules_dir_is_a_usage_error() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    w.write("myrules/bad.yaml", RULE.replace("\"(call) @c\"", "\"(call @c\""));
    let o = run(w.audit(&["ok.yaml", "--to", "v1.1.0", "--rules", "myrules"]));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("bad.yaml") && o.stderr.contains("tree-sitter query"), "{}", o.stderr);
}

// ---------------------------------------------------------------------------
// engine repos that cannot be read (CLI)

#[test]
fn a_missing_tag_is_named_with_the_nearest_on_stderr_and_exits_2() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    let o = run(w.audit(&["ok.yaml", "--to", "v1.1.9"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    // The reason reaches a user whose stdout goes to a file.
    assert!(o.stderr.contains("--to v1.1.9") && o.stderr.contains("ref `v1.1.9` not found"), "{}", o.stderr);
    assert!(o.stderr.contains("nearest tags: v1.1.0"), "{}", o.stderr);
    assert!(o.stdout.is_empty(), "no report for a run that was not done: {}", o.stdout);
}

#[test]
fn fix_exits_2_too_when_nothing_could_be_audited() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    for mode in [&["--fix", "--dry-run"][..], &["--fix"][..]] {
        let o = run(w.audit(&[&["ok.yaml", "--to", "v1.1.9"][..], mode].concat()));
        assert_eq!(o.code, 2, "{mode:?}\n{}\n{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("ref `v1.1.9` not found"), "{mode:?}: {}", o.stderr);
    }
    assert_eq!(std::fs::read_to_string(w.root.join("ok.yaml")).unwrap(), OK_RECIPE, "nothing to fix, nothing written");
}

#[test]
fn a_missing_from_tag_is_a_usage_error_too() {
    // A bump from a release that is not there cannot be audited as asked: a
    // report of the target alone would be mistaken for the bump's.
    let w = ws();
    w.write("ok.yaml", OK_RECIPE.replace("tp-size: 8", "tp-size: 8\n      no-such-flag: 1"));
    let o = run(w.audit(&["ok.yaml", "--from", "v0.0.7", "--to", "v1.1.0"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("--from v0.0.7") && o.stderr.contains("ref `v0.0.7` not found"), "{}", o.stderr);
}

#[test]
fn a_repo_without_an_sglang_package_exits_2_and_says_where_it_looked() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    // The Dynamo repo as --sglang: it has no SGLang package.
    let mut cmd = Command::cargo_bin("engine-audit").unwrap();
    cmd.current_dir(&w.root).args(["audit", "ok.yaml", "--offline", "--to", "v0.2.0", "--sglang"]).arg(&w.dynamo);
    let o = run(cmd);
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("cannot find the sglang package"), "{}", o.stderr);
}

/// Path of a loose object in a repo's object store.
fn loose_object(git_dir: &Path, oid: git2::Oid) -> PathBuf {
    let hex = oid.to_string();
    git_dir.join("objects").join(&hex[..2]).join(&hex[2..])
}

#[test]
fn a_tag_whose_commit_is_missing_is_a_git_error_not_a_panic() {
    // What a shallow clone looks like from libgit2: the tag is there, its commit is not.
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    let repo = git2::Repository::open_bare(&w.sglang).unwrap();
    let commit = repo.find_reference("refs/tags/v1.1.0").unwrap().peel_to_commit().unwrap().id();
    drop(repo);
    std::fs::remove_file(loose_object(&w.sglang, commit)).unwrap();
    let o = run(w.audit(&["ok.yaml", "--to", "v1.1.0"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("git error") || o.stderr.contains("git error"), "{}\n{}", o.stdout, o.stderr);
    let engine =
        EngineRepo::open(w.sglang.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() }).unwrap();
    assert!(matches!(engine.resolve("v1.1.0"), Err(SourceError::Git { .. })));
}

/// Replace the loose object of SGLang v1.1.0's `server_args.py` (the flag
/// parser) with `damage` of its bytes.
fn damage_parser_object(w: &Ws, damage: impl FnOnce(&[u8]) -> Vec<u8>) {
    let repo = git2::Repository::open_bare(&w.sglang).unwrap();
    let tree = repo.find_reference("refs/tags/v1.1.0").unwrap().peel_to_tree().unwrap();
    let blob = tree.get_path(Path::new("python/sglang/srt/server_args.py")).unwrap().id();
    let path = loose_object(&w.sglang, blob);
    let bytes = std::fs::read(&path).unwrap();
    make_writable(&path);
    std::fs::write(&path, damage(&bytes)).unwrap();
}

/// Git writes loose objects read-only.
fn make_writable(path: &Path) {
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(path, perms).unwrap();
}

#[test]
fn a_corrupt_object_is_named_and_never_read_as_an_empty_engine() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE.replace("tp-size: 8", "tp-size: 8\n      no-such-flag: 1"));
    damage_parser_object(&w, |_| b"this is not a zlib stream".to_vec());
    let o = run(w.audit(&["ok.yaml", "--to", "v1.1.0", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout, o.stderr));
    let problems = report["problems"].to_string();
    assert!(problems.contains("server_args.py"), "the unreadable file is named: {problems}");
    // Without its parser the target knows no flags: that must not read as
    // "every flag was removed".
    let ea001 = report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "EA001").count();
    assert!(ea001 <= 1, "flags reported unknown against an unreadable parser: {}", report["findings"]);
}

#[test]
fn a_truncated_object_stream_is_an_error_not_a_hang() {
    // A loose object cut short (a disk filled mid-write): the zlib stream starts
    // well and ends early. libgit2 1.9 loops forever on this input.
    let w = ws();
    w.write("ok.yaml", OK_RECIPE.replace("tp-size: 8", "tp-size: 8\n      no-such-flag: 1"));
    damage_parser_object(&w, |bytes| bytes[..bytes.len() / 2].to_vec());
    let mut cmd = w.audit(&["ok.yaml", "--to", "v1.1.0", "--format", "json"]);
    cmd.timeout(std::time::Duration::from_secs(60));
    let out = cmd.output().expect("the audit finishes within 60 s");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert!(report["problems"].to_string().contains("server_args.py"), "the unreadable file is named: {}", report["problems"]);
}

// ---------------------------------------------------------------------------
// safety

/// A TCP port nobody else uses: any connection to it is a network access the
/// audit must not make. `connections()` counts what arrived.
struct Tripwire(std::net::TcpListener);

impl Tripwire {
    fn new() -> Tripwire {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Tripwire(l)
    }
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.0.local_addr().unwrap().port())
    }
    fn connections(&self) -> usize {
        std::iter::from_fn(|| self.0.accept().ok()).count()
    }
}

/// Replace (or add) `path` in `tree`, building the subtrees on the way.
fn put(repo: &git2::Repository, tree: Option<&git2::Tree>, path: &[&str], oid: git2::Oid, mode: i32) -> git2::Oid {
    let mut tb = repo.treebuilder(tree).unwrap();
    if path.len() == 1 {
        tb.insert(path[0], oid, mode).unwrap();
    } else {
        let sub = tree.and_then(|t| t.get_name(path[0])).map(|e| repo.find_tree(e.id()).unwrap());
        let sub_id = put(repo, sub.as_ref(), &path[1..], oid, mode);
        tb.insert(path[0], sub_id, 0o040000).unwrap();
    }
    tb.write().unwrap()
}

/// A raw tree object: libgit2's tree builder refuses names like `..`, a
/// hostile repository need not.
fn raw_tree(repo: &git2::Repository, entries: &[(&str, &[u8], git2::Oid)]) -> git2::Oid {
    let mut bytes = Vec::new();
    for (mode, name, oid) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(oid.as_bytes());
    }
    repo.odb().unwrap().write(git2::ObjectType::Tree, &bytes).unwrap()
}

/// The demo SGLang in a non-bare repository, plus a hostile v1.0.1: Python that
/// would run commands when imported, a symlink out of the tree, a submodule with
/// a URL, paths with `..` and `/`, hooks and config that would run commands.
struct Hostile {
    _w: Ws,
    repo: PathBuf,
    marker: PathBuf,
    wire: Tripwire,
    root: PathBuf,
}

fn hostile() -> Hostile {
    let w = ws();
    let wire = Tripwire::new();
    let marker = w.root.join("MARKER");
    let dir = w.root.join("hostile");
    let repo = git2::Repository::init(&dir).unwrap();
    repo.remote_anonymous(w.sglang.to_str().unwrap())
        .unwrap()
        .fetch(&["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], None, None)
        .unwrap();
    let base = repo.find_reference("refs/tags/v1.0.0").unwrap().peel_to_commit().unwrap();
    let m = marker.display().to_string();
    let evil_py = format!("import os\nos.system('touch {m}')\nopen('{m}', 'w').write('imported')\n");
    let mut tree = base.tree().unwrap().id();
    let blob = |bytes: &[u8]| repo.blob(bytes).unwrap();
    for (path, bytes, mode) in [
        ("python/sglang/__init__.py", evil_py.as_bytes(), 0o100644),
        ("python/sglang/srt/evil_import.py", evil_py.as_bytes(), 0o100755),
        ("python/setup.py", evil_py.as_bytes(), 0o100755),
        ("python/sglang/srt/environ.py", b"/etc/passwd".as_slice(), 0o120000),
        (".gitmodules", format!("[submodule \"sub\"]\n\tpath = python/sglang/sub\n\turl = {}\n", wire.url("sub.git")).as_bytes(), 0o100644),
        (".gitattributes", b"* filter=evil\n".as_slice(), 0o100644),
    ] {
        let t = repo.find_tree(tree).unwrap();
        tree = put(&repo, Some(&t), &path.split('/').collect::<Vec<_>>(), blob(bytes), mode);
    }
    // A submodule: a commit id the object store does not have.
    let t = repo.find_tree(tree).unwrap();
    tree = put(
        &repo,
        Some(&t),
        &["python", "sglang", "sub"],
        git2::Oid::from_str("1111111111111111111111111111111111111111").unwrap(),
        0o160000,
    );
    // `..`, `.` and a backslash path as names inside python/sglang/srt.
    let t = repo.find_tree(tree).unwrap();
    let srt = t.get_path(Path::new("python/sglang/srt")).unwrap().to_object(&repo).unwrap().peel_to_tree().unwrap();
    let escape = blob(evil_py.as_bytes());
    let mut entries: Vec<(String, Vec<u8>, git2::Oid)> = vec![
        ("100644".into(), b"..".to_vec(), escape),
        ("100644".into(), b".".to_vec(), escape),
        ("100644".into(), b"..\\..\\x.py".to_vec(), escape),
    ];
    for e in srt.iter() {
        let mode = format!("{:o}", e.filemode());
        entries.push((mode, e.name_bytes().to_vec(), e.id()));
    }
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    let refs: Vec<(&str, &[u8], git2::Oid)> = entries.iter().map(|(m, n, o)| (m.as_str(), n.as_slice(), *o)).collect();
    let raw = raw_tree(&repo, &refs);
    let t = repo.find_tree(tree).unwrap();
    tree = put(&repo, Some(&t), &["python", "sglang", "srt"], raw, 0o040000);

    let sig = git2::Signature::now("t", "t@localhost").unwrap();
    let tree = repo.find_tree(tree).unwrap();
    let commit = repo.commit(None, &sig, &sig, "hostile", &tree, &[&base]).unwrap();
    repo.tag_lightweight("v1.0.1", &repo.find_object(commit, None).unwrap(), false).unwrap();

    // Hooks (default folder and core.hooksPath) and config that would run commands.
    let hook = format!("#!/bin/sh\ntouch {m}\ntouch \"$0.ran\"\n");
    let hooks_dirs = [dir.join(".git/hooks"), w.root.join("hookspath")];
    for hooks in &hooks_dirs {
        std::fs::create_dir_all(hooks).unwrap();
        for name in
            ["post-checkout", "pre-commit", "post-merge", "post-rewrite", "reference-transaction", "pre-auto-gc", "fsmonitor-watchman"]
        {
            let path = hooks.join(name);
            std::fs::write(&path, &hook).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let mut config = repo.config().unwrap();
    config.set_str("core.hooksPath", hooks_dirs[1].to_str().unwrap()).unwrap();
    config.set_str("core.fsmonitor", &format!("touch {m}")).unwrap();
    config.set_str("filter.evil.smudge", &format!("touch {m}")).unwrap();
    config.set_str("filter.evil.clean", &format!("touch {m}")).unwrap();
    config.set_str("filter.evil.process", &format!("touch {m}")).unwrap();
    config.set_str("core.sshCommand", &format!("touch {m}")).unwrap();
    config.set_str("submodule.sub.url", &wire.url("sub2.git")).unwrap();
    config.set_bool("submodule.recurse", true).unwrap();

    // The hook is real: run once by hand it leaves its mark (then clean up).
    let probe = std::process::Command::new(hooks_dirs[0].join("pre-commit")).status().unwrap();
    assert!(probe.success() && marker.exists(), "the test hook must work when run");
    std::fs::remove_file(&marker).unwrap();
    for hooks in &hooks_dirs {
        std::fs::remove_file(hooks.join("pre-commit.ran")).unwrap_or(());
    }
    Hostile { root: w.root.clone(), _w: w, repo: dir, marker, wire }
}

impl Hostile {
    fn assert_untouched(&self) {
        assert!(!self.marker.exists(), "something from the audited repository was executed");
        for hooks in [self.repo.join(".git/hooks"), self.root.join("hookspath")] {
            for e in std::fs::read_dir(hooks).unwrap().flatten() {
                assert!(!e.file_name().to_string_lossy().ends_with(".ran"), "hook {:?} ran", e.path());
            }
        }
        assert_eq!(self.wire.connections(), 0, "the network was used");
        assert!(!self.repo.join("python/sglang/sub").exists(), "a submodule was checked out");
    }
}

#[test]
fn opening_resolving_and_reading_a_hostile_repo_runs_nothing_and_leaves_nothing() {
    let h = hostile();
    let repo = EngineRepo::open(h.repo.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None, ..Default::default() }).unwrap();
    let resolved = repo.resolve("v1.0.1").unwrap();
    let tree = repo.tree_at(&resolved).unwrap();
    let paths: Vec<&str> = tree.entries().iter().map(|e| e.path.as_str()).collect();
    for e in tree.entries() {
        tree.read(&e.path).unwrap();
        assert!(engine_audit::source::is_safe_tree_path(&e.path), "{}", e.path);
    }
    assert!(!paths.contains(&"python/sglang/srt/environ.py"), "a symlink is not listed (never followed)");
    assert!(!paths.iter().any(|p| p.starts_with("python/sglang/sub")), "a submodule is not listed");
    assert!(paths.contains(&"python/sglang/srt/server_args.py"));
    assert!(
        tree.unsafe_paths.iter().any(|p| p.ends_with("/..")) && tree.unsafe_paths.iter().any(|p| p.ends_with("/.")),
        "`..` and `.` are rejected: {:?}",
        tree.unsafe_paths
    );
    assert!(tree.unsafe_paths.iter().any(|p| p.contains('\\')), "{:?}", tree.unsafe_paths);
    assert!(matches!(tree.read("python/sglang/srt/.."), Err(SourceError::MissingFile { .. })));
    assert!(matches!(tree.read("/etc/passwd"), Err(SourceError::MissingFile { .. })));
    h.assert_untouched();
}

#[test]
fn auditing_a_hostile_repo_runs_nothing_and_uses_no_network() {
    let h = hostile();
    let recipe = h.root.join("ok.yaml");
    // A recipe naming URLs (a wheel, a model) that must not be fetched either.
    std::fs::write(
        &recipe,
        OK_RECIPE.replace("  path: /models/m\n", &format!("  path: {}\n", h.wire.url("model")))
            + &format!("dynamo:\n  wheel: {}\n", h.wire.url("ai_dynamo-1.0.0-py3-none-any.whl")),
    )
    .unwrap();
    for to in ["v1.0.1", "HEAD", "v1.1.0"] {
        let mut cmd = Command::cargo_bin("engine-audit").unwrap();
        cmd.current_dir(&h.root)
            .env("XDG_CACHE_HOME", h.root.join("xdg"))
            .args(["audit", "ok.yaml", "--offline", "--to", to, "--sglang"])
            .arg(&h.repo)
            .args(["--dynamo", &h.wire.url("dynamo.git"), "--cache-dir"])
            .arg(h.root.join("cache"));
        let o = run(cmd);
        // The Dynamo URL cannot be opened offline: a usage error, said plainly.
        assert_eq!(o.code, 2, "{to}: {}\n{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("--offline"), "{to}: {}", o.stderr);
        let mut cmd = Command::cargo_bin("engine-audit").unwrap();
        cmd.current_dir(&h.root)
            .env("XDG_CACHE_HOME", h.root.join("xdg"))
            .args(["audit", "ok.yaml", "--offline", "--to", to, "--sglang"])
            .arg(&h.repo);
        let o = run(cmd);
        assert!(o.code == 0 || o.code == 1 || (to == "HEAD"), "{to}: {}\n{}", o.stdout, o.stderr);
    }
    let mut cmd = Command::cargo_bin("engine-audit").unwrap();
    cmd.current_dir(&h.root).args(["surface", "--at", "v1.0.1", "--format", "json", "--sglang"]).arg(&h.repo);
    let o = run(cmd);
    assert_eq!(o.code, 0, "{}", o.stderr);
    h.assert_untouched();
}

#[test]
fn offline_never_touches_the_network_even_with_a_cached_clone() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    let wire = Tripwire::new();
    let url = wire.url("sglang.git");
    let cache = w.root.join("cache");
    let audit = |to: &str| {
        let mut cmd = Command::cargo_bin("engine-audit").unwrap();
        cmd.current_dir(&w.root).args(["audit", "ok.yaml", "--offline", "--to", to, "--sglang", &url, "--cache-dir"]).arg(&cache);
        run(cmd)
    };
    // No clone yet: refused, and said why.
    let o = audit("v1.1.0");
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--offline"), "{}", o.stderr);
    // A cached clone (the cache folder is named by the URL's hash): used as is.
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(url.as_bytes()).iter().take(12).map(|b| format!("{b:02x}")).collect();
    git2::Repository::init_bare(cache.join(&hex))
        .unwrap()
        .remote_anonymous(w.sglang.to_str().unwrap())
        .unwrap()
        .fetch(&["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], None, None)
        .unwrap();
    let o = audit("v1.1.0");
    assert!(o.code == 0 || o.code == 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("v1.0.0 → v1.1.0"), "{}", o.stdout);
    // A ref the cache lacks: named, not fetched (the demo's mini SGLang stops at v1.2.0).
    let o = audit("v1.9.0");
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("--offline forbids fetching"), "{}", o.stderr);
    assert_eq!(wire.connections(), 0, "--offline used the network");
}

#[test]
fn a_truncated_tag_commit_or_tree_is_a_git_error_not_a_hang() {
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    let repo = git2::Repository::open_bare(&w.sglang).unwrap();
    let commit = repo.find_reference("refs/tags/v1.1.0").unwrap().peel_to_commit().unwrap();
    let sig = git2::Signature::now("a", "a@example.com").unwrap();
    let tag = repo.tag("v1.1.0-annotated", commit.as_object(), &sig, "annotated", false).unwrap();
    let objects = [("v1.1.0-annotated", tag), ("v1.1.0", commit.id()), ("v1.1.0", commit.tree_id())];
    drop(commit);
    drop(repo);
    for (at, oid) in objects {
        let path = loose_object(&w.sglang, oid);
        let bytes = std::fs::read(&path).unwrap();
        make_writable(&path);
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        let mut cmd = w.audit(&["ok.yaml", "--to", at]);
        cmd.timeout(std::time::Duration::from_secs(60));
        let out = cmd.output().expect("the audit finishes within 60 s");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{at} {oid}: {stdout}\n{stderr}");
        assert!(stdout.contains("does not inflate") || stderr.contains("does not inflate"), "{at} {oid}: {stdout}\n{stderr}");
        std::fs::write(&path, &bytes).unwrap();
    }
}

/// Pack the demo SGLang repository (git2's pack builder, as a fresh clone
/// holds its objects) and delete its loose objects. Returns the pack's path.
fn pack_objects(git_dir: &Path) -> PathBuf {
    let repo = git2::Repository::open_bare(git_dir).unwrap();
    let mut builder = repo.packbuilder().unwrap();
    let mut walk = repo.revwalk().unwrap();
    walk.push_glob("refs/tags/*").unwrap();
    builder.insert_walk(&mut walk).unwrap();
    let pack_dir = git_dir.join("objects/pack");
    builder.write(&pack_dir, 0o644).unwrap();
    for dir in std::fs::read_dir(git_dir.join("objects")).unwrap().flatten() {
        if dir.file_name().len() == 2 {
            std::fs::remove_dir_all(dir.path()).unwrap();
        }
    }
    std::fs::read_dir(&pack_dir).unwrap().flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "pack")).unwrap()
}

/// Audit once per 64-byte window of `file` (after its first `skip` bytes and
/// before its 20-byte checksum), with that window passed through `damage`.
/// Every run must end (exit 0, 1 or 2) without a panic; returns the problems
/// the runs reported, joined.
fn audit_each_window_damaged(w: &Ws, file: &Path, skip: usize, damage: impl Fn(&mut [u8])) -> String {
    let bytes = std::fs::read(file).unwrap();
    make_writable(file);
    let mut problems = String::new();
    for start in (skip..bytes.len() - 20).step_by(64) {
        let mut damaged = bytes.clone();
        damage(&mut damaged[start..(start + 64).min(bytes.len() - 20)]);
        std::fs::write(file, &damaged).unwrap();
        let mut cmd = w.audit(&["ok.yaml", "--to", "v1.1.0", "--format", "json"]);
        // A fresh fact cache each time: facts are keyed by blob id, which damage does not change.
        cmd.env("XDG_CACHE_HOME", w.root.join(format!("xdg-{start}"))).timeout(std::time::Duration::from_secs(60));
        let out = cmd.output().expect("the audit finishes within 60 s");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let at = format!("{} damaged at {start}", file.display());
        assert!(matches!(out.status.code(), Some(0..=2)), "{at}: {:?}\n{stdout}\n{stderr}", out.status.code());
        assert!(!stderr.contains("panicked"), "{at}: {stderr}");
        if out.status.code() == Some(2) {
            problems.push_str(&stdout);
        } else {
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{at}: {e}: {stdout}"));
            problems.push_str(&report["problems"].to_string());
        }
    }
    std::fs::write(file, &bytes).unwrap();
    problems
}

#[test]
fn a_damaged_pack_is_named_never_a_panic() {
    // Zero each window of the pack in turn: entry headers, deltas and
    // compressed data. git2's header read panicked on an entry whose type
    // became 0. (The 12-byte pack header is checked when libgit2 opens it.)
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    let pack = pack_objects(&w.sglang);
    let problems = audit_each_window_damaged(&w, &pack, 12, |window| window.fill(0));
    assert!(problems.contains("damaged object header"), "no window hit an entry's type: the sweep no longer covers the case that panicked");
}

#[test]
fn a_damaged_pack_index_is_never_a_panic() {
    // The index: fan-out table, object ids, CRCs and offsets, each window's
    // bits flipped (an offset past the pack's end, ids out of order).
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    let index = pack_objects(&w.sglang).with_extension("idx");
    let problems = audit_each_window_damaged(&w, &index, 8, |window| window.iter_mut().for_each(|b| *b ^= 0xff));
    assert!(problems.contains("git error"), "no damage was noticed: {problems}");
}

#[test]
fn a_url_is_not_cloned_when_the_inputs_are_bad() {
    // Local engines open while the recipes and rules load; a URL (a clone) waits
    // until they are known good, so a typo costs no download.
    let w = ws();
    w.write("ok.yaml", OK_RECIPE);
    w.write("my-rules/R900.yaml", "id: R900\nname: broken\n");
    let wire = Tripwire::new();
    let mut cmd = Command::cargo_bin("engine-audit").unwrap();
    cmd.current_dir(&w.root)
        .args(["audit", "ok.yaml", "--to", "v1.1.0", "--rules", "my-rules", "--sglang", &wire.url("sglang.git"), "--cache-dir"])
        .arg(w.root.join("cache"))
        // A clone of the tripwire would wait for an answer that never comes.
        .timeout(std::time::Duration::from_secs(60));
    let o = run(cmd);
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("R900"), "the bad rule is named: {}", o.stderr);
    assert_eq!(wire.connections(), 0, "a clone was started for an audit that could not run");
}

// ---------------------------------------------------------------------------
// .engine-audit.yaml: each error names the file, the line and the key

#[test]
fn config_errors_name_file_line_and_key() {
    let base =
        "sglang: https://github.com/sgl-project/sglang\nseverity:\n  EA007: warning\n  R001: info\nignore:\n  - EA104\nfail_on: warning\n";
    // Needles without spaces: miette wraps long lines at spaces.
    let cases: &[(&str, String, &str, &[&str])] = &[
        ("unknown code in severity", base.replace("  R001: info\n", "  R001: info\n  EA1O4: info\n"), ":5:3:", &["severity", "`EA1O4`"]),
        ("unknown code in ignore", base.replace("  - EA104\n", "  - EA104\n  - R00l\n"), ":7:5:", &["ignore", "`R00l`"]),
        ("duplicate key", format!("{base}fail_on: error\n"), ":8:1:", &["`fail_on`"]),
        ("unknown key", base.replace("fail_on:", "fail-on:"), ":7:1:", &["`fail-on`"]),
        ("bad value", base.replace("fail_on: warning", "fail_on: sometimes"), ":7:", &["fail_on:", "`sometimes`"]),
    ];
    let mut wrong = Vec::new();
    for (what, text, line, needles) in cases {
        let w = ws();
        w.write(".engine-audit.yaml", text);
        w.write("ok.yaml", OK_RECIPE);
        let o = run(w.audit(&["ok.yaml", "--to", "v1.1.0"]));
        let located = o.stderr.contains(&format!(".engine-audit.yaml{line}"));
        if o.code != 2 || !located || !needles.iter().all(|n| o.stderr.contains(n)) {
            wrong.push(format!("{what} (exit 2, want `{line}` and {needles:?}): exit {}\n{}", o.code, o.stderr));
        }
    }
    assert!(wrong.is_empty(), "config errors without their line or key:\n{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------
// exit codes with a master config: 2 only when nothing in it could be audited

const TINY_MASTER: &str = "tiny-fp8-h100-sglang:
  image: lmsysorg/sglang:v1.0.0
  model: tiny/model
  runner: h100-multinode
  precision: fp8
  framework: sglang
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4, 8]
        prefill:
          num-worker: 1
          additional-settings:
          - \"CONFIG_FILE=recipes/tiny/tiny-fp8-agg.yaml\"
";

const TINY_RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/tiny/tiny-fp8-agg.yaml";

/// A recipes repo: `configs/tiny-master.yaml` whose one key links one recipe.
fn master_ws(image: &str) -> Ws {
    let w = ws();
    w.write("configs/tiny-master.yaml", TINY_MASTER.replace("lmsysorg/sglang:v1.0.0", image));
    w.write(TINY_RECIPE, OK_RECIPE.replace("lmsysorg/sglang:v1.0.0", image));
    w
}

fn json_report(o: &Out) -> serde_json::Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout, o.stderr))
}

#[test]
fn a_master_config_entry_that_was_checked_exits_by_its_findings() {
    let w = master_ws("lmsysorg/sglang:v1.0.0");
    let args = ["--master", "configs/tiny-master.yaml", "--key", "tiny-fp8-h100-sglang", "--to", "v1.1.0", "--format", "json"];
    let o = run(w.audit(&args));
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let report = json_report(&o);
    assert_eq!((report["deployments_audited"].as_u64(), report["master_entries_checked"].as_u64()), (Some(1), Some(1)), "{report}");

    // The master config names another image than the recipe runs: EA301, exit 1.
    w.write("configs/tiny-master.yaml", TINY_MASTER.replace("lmsysorg/sglang:v1.0.0", "lmsysorg/sglang:v1.1.0"));
    let o = run(w.audit(&args));
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(json_report(&o)["findings"].as_array().unwrap().iter().any(|f| f["code"] == "EA301"), "{}", o.stdout);

    // A `*-master.yaml` among the paths, with the recipe it links: checked too.
    let o = run(w.audit(&["configs/tiny-master.yaml", TINY_RECIPE, "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(json_report(&o)["master_entries_checked"], 1);
}

#[test]
fn a_master_config_where_nothing_could_be_audited_exits_2_and_says_why() {
    let w = master_ws("lmsysorg/sglang:v1.0.0");
    // The key is not in the master config.
    let o =
        run(w.audit(&["--master", "configs/tiny-master.yaml", "--key", "tiny-fp8-h100-sglang-mtp", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    let problems = json_report(&o)["problems"].to_string();
    assert!(problems.contains("configs/tiny-master.yaml") && problems.contains("key `tiny-fp8-h100-sglang-mtp` not found"), "{problems}");
    assert!(problems.contains("tiny-fp8-h100-sglang"), "the keys it has are listed: {problems}");

    // The engine ref the entry pins (its image, which the recipe runs) is not in the repo.
    let w = master_ws("lmsysorg/sglang:v1.0.7");
    let o = run(w.audit(&["--master", "configs/tiny-master.yaml", "--key", "tiny-fp8-h100-sglang", "--format", "json"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    let report = json_report(&o);
    assert_eq!((report["deployments_audited"].as_u64(), report["master_entries_checked"].as_u64()), (Some(0), Some(0)), "{report}");
    // Why, both ways: the recipe's ref (EA303) and the entry that could not be checked.
    let ea303 = report["findings"].as_array().unwrap().iter().find(|f| f["code"] == "EA303").expect("EA303");
    assert!(ea303["message"].as_str().unwrap().contains("v1.0.7"), "{ea303}");
    let problems = report["problems"].to_string();
    assert!(problems.contains("key `tiny-fp8-h100-sglang` not checked") && problems.contains(TINY_RECIPE), "{problems}");

    // A master config alone among the paths: the recipe it links is not read.
    let w = master_ws("lmsysorg/sglang:v1.0.0");
    let o = run(w.audit(&["configs/tiny-master.yaml", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    let problems = json_report(&o)["problems"].to_string();
    assert!(problems.contains("configs/tiny-master.yaml") && problems.contains("tiny-fp8-agg.yaml"), "{problems}");

    // A linked recipe that is not on disk is an EA305 on the link, not silently dropped.
    std::fs::remove_file(w.root.join(TINY_RECIPE)).unwrap();
    let o = run(w.audit(&["--master", "configs/tiny-master.yaml", "--key", "tiny-fp8-h100-sglang", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    let report = json_report(&o);
    let ea305 = report["findings"].as_array().unwrap().iter().find(|f| f["code"] == "EA305").expect("EA305");
    assert_eq!(
        (ea305["recipe"].as_str(), ea305["line"].as_u64(), ea305["severity"].as_str()),
        (Some("configs/tiny-master.yaml"), Some(16), Some("error")),
        "{ea305}"
    );
    assert!(
        ea305["message"].as_str().unwrap().contains(TINY_RECIPE) && ea305["message"].as_str().unwrap().contains("tiny-fp8-h100-sglang"),
        "{ea305}"
    );
}

#[test]
fn a_master_config_link_out_of_the_tree_is_not_read() {
    let w = master_ws("lmsysorg/sglang:v1.0.0");
    // `recipes/../../../x.yaml` would leave the recipes repository: a warning, never read.
    w.write("configs/tiny-master.yaml", TINY_MASTER.replace("recipes/tiny/tiny-fp8-agg.yaml", "recipes/../../../../etc/passwd.yaml"));
    let o = run(w.audit(&["--master", "configs/tiny-master.yaml", "--key", "tiny-fp8-h100-sglang", "--to", "v1.1.0", "--format", "json"]));
    assert!(!o.stdout.contains("root:") && !o.stderr.contains("root:"), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("leaves the recipes repository"), "{}", o.stdout);
    // A link to a symlink that resolves outside the repository: EA305, not read.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.yaml"), "secret: [1, 2\n").unwrap();
    std::fs::remove_file(w.root.join(TINY_RECIPE)).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("secret.yaml"), w.root.join(TINY_RECIPE)).unwrap();
    w.write("configs/tiny-master.yaml", TINY_MASTER);
    let o = run(w.audit(&["--master", "configs/tiny-master.yaml", "--key", "tiny-fp8-h100-sglang", "--to", "v1.1.0", "--format", "json"]));
    let report = json_report(&o);
    let ea305 = report["findings"].as_array().unwrap().iter().find(|f| f["code"] == "EA305").expect("EA305");
    assert!(ea305["message"].as_str().unwrap().contains("outside"), "{ea305}");
    assert!(!o.stderr.contains("secret"), "its content is never read: {}", o.stderr);
}

// ---------------------------------------------------------------------------
// output: recipe-controlled text never acts on a terminal or a CI runner

#[test]
fn recipe_text_cannot_inject_workflow_commands_or_terminal_sequences() {
    let w = ws();
    // A key with a newline and a workflow command after it, an ESC sequence in
    // another key, a CR that would rewrite the line, and a file name with a newline.
    let recipe = format!("{}      \"x\\n::error file=a,line=1::pwned\": 1\n      \"\\e[2Jwipe\": 2\n      \"y\\rfake\": 3\n", OK_RECIPE);
    w.write("mine/evil\n::warning::named.yaml", &recipe);
    for format in ["text", "markdown", "github"] {
        let o = run(w.audit(&["mine", "--to", "v1.1.0", "--format", format]));
        assert_eq!(o.code, 1, "{format}: {}\n{}", o.stdout, o.stderr);
        assert!(o.stdout.contains("pwned"), "{format}: the flag is still reported: {}", o.stdout);
        for (i, line) in o.stdout.lines().enumerate() {
            let trimmed = line.trim_start();
            let ours = format == "github"
                && (trimmed.starts_with("::error file=")
                    || trimmed.starts_with("::warning file=")
                    || trimmed.starts_with("::notice file="));
            assert!(!trimmed.starts_with("::") || ours, "{format}: line {i} is a workflow command from the recipe: {line}");
            if format == "github" && ours {
                let props = &trimmed[..trimmed[2..].find("::").unwrap() + 2];
                assert!(!props[2..].contains("::") && props.contains("evil") && props.contains("%3A%3Awarning%3A%3Anamed.yaml"), "{props}");
            }
        }
        for stream in [&o.stdout, &o.stderr] {
            assert!(!stream.contains('\x1b'), "{format}: an ESC reached the output: {stream:?}");
            assert!(!stream.replace("\r\n", "\n").contains('\r'), "{format}: a bare CR reached the output");
        }
    }
}

// ---------------------------------------------------------------------------
// nesting: small files nested deep are named and skipped, never a stack overflow

#[test]
fn deeply_nested_recipes_are_refused_and_the_others_audited() {
    let w = ws();
    w.write("deep/ok.yaml", OK_RECIPE);
    // 14 KB of `- - - …`: a compact block sequence 5,000 deep.
    w.write("deep/compact.yaml", format!("{OK_RECIPE}extra:\n  {}x\n", "- ".repeat(5_000)));
    // Block maps 2,000 deep.
    let mut maps = String::from(OK_RECIPE);
    for i in 0..2_000 {
        maps.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
    }
    maps.push_str(&format!("{}v: 1\n", "  ".repeat(2_000)));
    w.write("deep/maps.yaml", maps);
    let o = run(w.audit(&["deep", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 1, "{}", &o.stderr[..o.stderr.len().min(2_000)]);
    let report = json_report(&o);
    assert_eq!(report["deployments_audited"], 1, "ok.yaml is audited");
    let nested: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA305" && f["message"].as_str().unwrap().contains("nested more than 128 levels"))
        .map(|f| f["recipe"].as_str().unwrap())
        .collect();
    assert_eq!(nested.len(), 2, "{report}");
}

#[test]
fn a_script_nested_deep_keeps_its_other_launches() {
    let w = ws();
    // 30 KB of nested command substitutions after a launch with an unknown flag,
    // and arithmetic nested 5,000 deep with a syntax error.
    let script = format!(
        "#!/bin/bash\npython3 -m sglang.launch_server --tp-size 8 --no-such-flag 1\necho {}x{}\necho $(({}1\n",
        "$(".repeat(10_000),
        ")".repeat(10_000),
        "((".repeat(5_000)
    );
    w.write("deep/launch.sh", script);
    let o = run(w.audit(&["deep/launch.sh", "--to", "v1.1.0", "--format", "json"]));
    assert_eq!(o.code, 1, "{}", &o.stderr[..o.stderr.len().min(2_000)]);
    let report = json_report(&o);
    assert!(report["findings"].as_array().unwrap().iter().any(|f| f["code"] == "EA001" && f["subject"] == "no-such-flag"), "{report}");
    assert!(report["notes"].to_string().contains("line 3: a command nested more than 400 levels deep; not read"), "{}", report["notes"]);
}

#[test]
fn a_registry_entry_nested_deep_is_skipped_and_the_rest_of_the_registry_read() {
    // The demo's registry with one entry whose default is a 5,000-term sum.
    let demo =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/sglang/v1.1.0/python/sglang/srt/environ.py")).unwrap();
    let at = demo.find("class Envs:\n").unwrap() + "class Envs:\n".len();
    let line = demo[..at].matches('\n').count() + 1;
    let environ = format!("{}    SGLANG_DEEP = EnvInt({})\n{}", &demo[..at], vec!["1"; 5_000].join("+"), &demo[at..]);
    let tree = sglang_tree(&[("sglang/srt/server_args.py", SERVER_ARGS_HEAD.as_bytes()), ("sglang/srt/environ.py", environ.as_bytes())]);
    let surface = full_surface(&tree);
    assert!(surface.env_var("SGLANG_LOG_LEVEL_DETAIL").is_some(), "the rest of the registry is read: {:?}", surface.env);
    assert!(surface.env_var("SGLANG_DEEP").is_none());
    let warning = surface.warnings.iter().find(|w| w.path == "sglang/srt/environ.py").expect("a warning naming the file");
    assert!(
        warning.message.contains(&format!("line {line}")) && warning.message.contains("nested more than 400 levels deep"),
        "{warning:?}"
    );
}

#[test]
fn an_export_before_many_launches_is_reported_once() {
    let w = ws();
    let mut script = String::from("#!/bin/bash\nexport SGLANG_NO_SUCH_VAR=1\nexport SGLANG_USE_OLD_ALLOCATOR=1\n");
    for port in 0..50 {
        script.push_str(&format!("python3 -m sglang.launch_server --tp-size 8 --port {port}\n"));
    }
    w.write("many/launch.sh", script);
    let o = run(w.audit(&["many/launch.sh", "--to", "v1.1.0", "--format", "json"]));
    let report = json_report(&o);
    assert_eq!(report["deployments_audited"], 50);
    let env: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().starts_with("SGLANG_"))
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["line"].as_u64().unwrap()))
        .collect();
    // SGLANG_USE_OLD_ALLOCATOR was read at v1.0.0: EA101 with that history, though the script names no release.
    assert_eq!(env, [("EA104".to_string(), 2), ("EA101".to_string(), 3)], "each export line once, not once per launch");
}

#[test]
fn a_script_the_parser_cannot_finish_is_named_not_waited_on() {
    let w = ws();
    w.write("slow/ok.yaml", OK_RECIPE);
    // One 60 KB line on which tree-sitter-bash's scanner is quadratic (20 s unbounded).
    w.write("slow/launch.sh", format!("#!/bin/bash\n{}{}\n", "%(1".repeat(15_000), ")".repeat(15_000)));
    let mut cmd = w.audit(&["slow", "--to", "v1.1.0", "--format", "json"]);
    cmd.env("ENGINE_AUDIT_PARSE_DEADLINE_MS", "300");
    let o = run(cmd);
    assert_eq!(o.code, 1, "{}", &o.stderr[..o.stderr.len().min(2_000)]);
    let report = json_report(&o);
    assert_eq!(report["deployments_audited"], 1, "ok.yaml is audited");
    let ea305 = report["findings"].as_array().unwrap().iter().find(|f| f["code"] == "EA305").expect("EA305");
    assert!(
        ea305["recipe"].as_str().unwrap().ends_with("launch.sh")
            && ea305["message"].as_str().unwrap().contains("the shell parser gave up after 0.3 s"),
        "{ea305}"
    );
}

/// A command run by `eval` from a variable whose value joins another one
/// assigned above it (`CMD="vllm serve m $CFG"`, as InferenceX's AMD
/// `server_vllm.sh` builds its command): the eval'd text's last byte comes
/// from earlier in the file than its first. Read, with the flag at its value's
/// place, never a panic (it overflowed in debug builds).
#[test]
fn an_eval_of_values_written_out_of_order_is_read_without_a_panic() {
    let text = "#!/bin/bash\nCFG=\"--max-num-seqs 1\"\nCMD=\"vllm serve m $CFG\"\neval \"$CMD\" > log 2>&1 &\n";
    let file = load("out_of_order.sh", text).unwrap();
    let [dep] = file.deployments.as_slice() else { panic!("{:#?}", file.notes) };
    let words: Vec<&str> = dep.roles[0].argv.as_ref().unwrap().iter().filter_map(|t| t.value.value().map(String::as_str)).collect();
    assert_eq!(words, ["--max-num-seqs", "1"], "the words after `vllm serve`'s model");
}
