//! `engine-audit completions` and `engine-audit man`: generated from the clap
//! definition, so every subcommand appears in both.

use assert_cmd::Command;

const SUBCOMMANDS: &[&str] =
    &["audit", "matrix", "surface", "diff", "demo", "explain", "rules", "pr", "cache", "show", "completions", "man"];

fn run(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("engine-audit").unwrap().args(args).output().unwrap()
}

#[test]
fn bash_completion_offers_every_subcommand_and_pr_flags() {
    let out = run(&["completions", "bash"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        script.lines().any(|l| l.trim_start().starts_with("complete -F ") && l.ends_with(" engine-audit")),
        "a bash completion function is registered:\n{script}"
    );
    // The top level's word list names every subcommand.
    let top = script.lines().find(|l| l.contains("opts=\"") && l.contains("audit")).expect("top-level word list");
    for sub in SUBCOMMANDS {
        assert!(top.split_whitespace().any(|w| w.trim_matches('"') == *sub), "`{sub}` missing from {top}");
    }
    assert!(script.contains("--output-dir"), "flags are completed too");
}

#[test]
fn every_shell_clap_complete_knows_is_offered() {
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", String::from_utf8_lossy(&out.stderr));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("engine-audit") && script.contains("fail-on"), "{shell}: flags are completed");
    }
    let bad = run(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("possible values"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn man_page_has_name_synopsis_and_subcommands() {
    let out = run(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH engine-audit 1"), "roff:\n{page}");
    assert!(page.contains(".SH NAME\nengine\\-audit \\- Before bumping SGLang, vLLM or Dynamo"), "NAME section:\n{page}");
    assert!(page.contains(".SH SYNOPSIS"));
    assert!(page.contains(".SH SUBCOMMANDS") && page.contains("engine\\-audit\\-pr(1)"), "{page}");
    assert!(page.contains(env!("CARGO_PKG_VERSION")), "the version is in the page's footer");
}

#[test]
fn man_dir_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let out = run(&["man", "--dir", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    for sub in SUBCOMMANDS {
        let page = std::fs::read_to_string(out_dir.join(format!("engine-audit-{sub}.1"))).unwrap();
        assert!(page.contains(".SH NAME"), "{sub}");
    }
    assert!(std::fs::read_to_string(out_dir.join("engine-audit.1")).unwrap().contains(".SH NAME"));

    // A folder that cannot be created is named, with the fix.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let bad = run(&["man", "--dir", file.join("sub").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("a-file/sub") && err.contains("--dir"), "{err}");
}
