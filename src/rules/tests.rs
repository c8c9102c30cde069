//! Loading errors, and every shipped rule's self-test cases under `cargo test`
//! (corpus cases only when ENGINE_AUDIT_CORPUS names the corpus).

use super::selftest::CaseOutcome;
use super::*;
use crate::source::MemTree;

fn origin() -> RuleOrigin {
    RuleOrigin::File(PathBuf::from("my-rules/R900.yaml"))
}

/// MINIMAL with `evidence` (YAML list items) in place of its own, and a
/// deployment its `when` holds for.
fn rule_with_evidence(evidence: &str) -> (Rule, DeploymentFacts) {
    let text = MINIMAL.replace("  - file_exists: {files: [srt/a.py]}\n", evidence);
    let facts = selftest::deployment_facts("d", &model::from_yaml("flags: {x: 'on'}").unwrap());
    (parse_rule(&text, origin()).unwrap(), facts)
}

const MINIMAL: &str = "\
id: R900
name: minimal-rule
title: t
severity: warning
engine: sglang
when: {flag: {name: x, equals: 'on'}}
evidence:
  - file_exists: {files: [srt/a.py]}
message: '{flag} is {value} at {ref}'
docs: d
tests:
  invalid:
    - name: c
      engines: [{fixture: none}]
      deployment: {flags: {x: 'on'}}
";

#[test]
fn shipped_rules_load() {
    let rules = load_rules(&[]).expect("shipped rules are valid");
    assert!(rules.iter().any(|r| r.spec.id == "R001"));
    let mut ids: Vec<_> = rules.iter().map(|r| r.spec.id.clone()).collect();
    ids.dedup();
    assert_eq!(ids.len(), rules.len());
}

#[test]
fn shipped_model_patterns_compile() {
    // Shipped rules build their regexes on first use: this is where a pattern
    // that parses but cannot be built would show.
    for rule in load_rules(&[]).unwrap() {
        compile_patterns(&rule.spec.when, "when").unwrap_or_else(|e| panic!("{}: {}: {}", rule.spec.id, e.key, e.message));
    }
}

#[test]
fn a_user_pattern_too_big_to_build_is_located_when_the_rule_loads() {
    // It parses; only building it fails (the regex size limit).
    let huge =
        MINIMAL.replace("when: {flag: {name: x, equals: 'on'}}", "when: {all: [{model: {matches: '(?:\\w{100}){100}(?:\\w{100}){100}'}}]}");
    let err = parse_rule(&huge, origin()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("when.all[0].model.matches") && text.contains("size limit"), "{text}");
    // A shipped rule with the same pattern would only fail on use, as no match.
    let shipped = parse_rule(&huge, RuleOrigin::BuiltIn("R900.yaml".into())).unwrap();
    let When::All(items) = &shipped.spec.when else { panic!() };
    let When::Model(c) = &items[0] else { panic!() };
    assert!(!c.matches.is_match("deepseek"));
}

#[test]
fn the_first_bad_rule_in_file_order_is_the_one_reported() {
    // Rules parse in parallel; which error is shown must not depend on timing.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..12 {
        std::fs::write(dir.path().join(format!("R9{i:02}.yaml")), "id: R9\nname: broken\n").unwrap();
    }
    for _ in 0..5 {
        let err = load_rules(&[dir.path().to_path_buf()]).unwrap_err().to_string();
        assert!(err.contains("R900.yaml"), "{err}");
    }
}

#[test]
fn unknown_key_is_an_error_with_file_and_line() {
    let text = MINIMAL.replace("docs: d", "docs: d\nseverty: error");
    let err = parse_rule(&text, origin()).unwrap_err().to_string();
    assert!(err.starts_with("my-rules/R900.yaml:"), "{err}");
    assert!(err.contains("severty"), "{err}");
    match parse_rule(&text, origin()).unwrap_err() {
        RuleError::Parse { line, .. } => assert!(line > 0),
        other => panic!("expected a parse error, got {other}"),
    }
}

#[test]
fn nested_typos_and_bad_values_are_located() {
    let typo = MINIMAL.replace("file_exists: {files: [srt/a.py]}", "file_exists: {file: [srt/a.py]}");
    let err = parse_rule(&typo, origin()).unwrap_err().to_string();
    assert!(err.contains("file") && err.contains(":8:"), "{err}");

    let regex = MINIMAL.replace("when: {flag: {name: x, equals: 'on'}}", "when: {model: {matches: '(unclosed'}}");
    assert!(parse_rule(&regex, origin()).unwrap_err().to_string().contains("invalid regex"));

    let spec = MINIMAL.replace("engine: sglang", "engine: sglang\nversions: '>=banana'");
    assert!(parse_rule(&spec, origin()).unwrap_err().to_string().contains("PEP 440"));

    let query = MINIMAL.replace("file_exists: {files: [srt/a.py]}", "query: {files: [srt/a.py], query: '(no_such_node) @x'}");
    assert!(parse_rule(&query, origin()).unwrap_err().to_string().contains("tree-sitter query"));
}

#[test]
fn semantic_validation() {
    let two_tests = MINIMAL.replace("equals: 'on'}", "equals: 'on', is: set}");
    assert!(parse_rule(&two_tests, origin()).unwrap_err().to_string().contains("exactly one"));

    let placeholder = MINIMAL.replace("{flag} is {value}", "{flga} is {value}");
    assert!(parse_rule(&placeholder, origin()).unwrap_err().to_string().contains("unknown placeholder"));

    let only_negative = MINIMAL.replace("file_exists: {files: [srt/a.py]}", "not: {file_exists: {files: [srt/a.py]}}");
    assert!(parse_rule(&only_negative, origin()).unwrap_err().to_string().contains("nothing to cite"));

    let escape = MINIMAL.replace("[srt/a.py]", "[../../etc/passwd]");
    assert!(parse_rule(&escape, origin()).unwrap_err().to_string().contains("without `..`"));

    let bad_id = MINIMAL.replace("id: R900", "id: X1");
    assert!(parse_rule(&bad_id, origin()).unwrap_err().to_string().contains("R001"));
}

#[test]
fn fires_only_with_evidence_and_cites_it() {
    let rule = parse_rule(MINIMAL, origin()).unwrap();
    let facts = selftest::deployment_facts("d", &model::from_yaml("flags: {x: 'on'}").unwrap());
    let with = MemTree::from_files("t", [("python/sglang/srt/a.py", "")]);
    let without = MemTree::from_files("t", [("python/sglang/srt/b.py", "")]);
    let hits = evaluate(&rule, &facts, &with, "python/sglang", "v1", None);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message, "x is on at v1");
    assert_eq!(hits[0].evidence[0].path, "python/sglang/srt/a.py");
    assert_eq!(hits[0].role.as_deref(), Some("worker"));
    assert!(evaluate(&rule, &facts, &without, "python/sglang", "v1", None).is_empty());

    // Version gate: outside the specifiers nothing is evaluated; unknown version → evidence decides.
    let gated = parse_rule(&MINIMAL.replace("engine: sglang", "engine: sglang\nversions: '>=2'"), origin()).unwrap();
    let v1: pep440_rs::Version = "1.5".parse().unwrap();
    assert!(evaluate(&gated, &facts, &with, "python/sglang", "v1.5", Some(&v1)).is_empty());
    assert_eq!(evaluate(&gated, &facts, &with, "python/sglang", "main", None).len(), 1);
}

#[test]
fn query_and_symbol_predicates() {
    let (rule, facts) = rule_with_evidence(
        "  - symbol_exists: {files: ['srt/*.py'], class: Envs, name: FLAG_A}\n  - query:\n      files: [srt/a.py]\n      function: run\n      query: '((call function: (identifier) @f) (#eq? @f \"boom\"))'\n",
    );
    let src = "class Envs:\n    FLAG_A = 1\n\ndef run():\n    safe()\n    boom()\n";
    let tree = MemTree::from_files("t", [("python/sglang/srt/a.py", src)]);
    let hits = evaluate(&rule, &facts, &tree, "python/sglang", "v1", None);
    assert_eq!(hits.len(), 1);
    let lines: Vec<u32> = hits[0].evidence.iter().map(|e| e.line).collect();
    assert_eq!(lines, [2, 6]);
    let quieter = src.replace("boom()", "fine()");
    let quiet = MemTree::from_files("t", [("python/sglang/srt/a.py", quieter.as_str())]);
    assert!(evaluate(&rule, &facts, &quiet, "python/sglang", "v1", None).is_empty());
}

/// Prefetching parses every file a rule's source predicates name (nested ones
/// too, text-only ones not), none whose answer is known, and changes no result.
#[test]
fn prefetch_parses_what_evaluation_would_and_nothing_answered() {
    let (rule, facts) = rule_with_evidence(
        "  - any_of:\n    - symbol_exists: {files: [srt/a.py], name: A}\n    - not: {text_in_function: {files: [srt/b.py], function: f, text: x}}\n  - text_in_file: {files: [srt/c.py], text: C}\n",
    );
    let tree = MemTree::from_files(
        "t",
        [("python/sglang/srt/a.py", "A = 1\n"), ("python/sglang/srt/b.py", "def f():\n    pass\n"), ("python/sglang/srt/c.py", "C = 1\n")],
    );
    let cold = SourceIndex::new(&tree, "python/sglang");
    let first = evaluate_with(&rule, &facts, &cold, "v1", None);
    assert_eq!(first.len(), 1);

    let fresh = SourceIndex::new(&tree, "python/sglang");
    fresh.prefetch(&rule.spec.evidence);
    assert_eq!(fresh.parsed_paths(), ["python/sglang/srt/a.py", "python/sglang/srt/b.py"]);
    assert_eq!(evaluate_with(&rule, &facts, &fresh, "v1", None), first);

    // Warm: every predicate is answered by the memo, so nothing is parsed.
    let warm = SourceIndex::new(&tree, "python/sglang").with_memo(cold.memo());
    warm.prefetch(&rule.spec.evidence);
    assert!(warm.parsed_paths().is_empty());
    assert_eq!(evaluate_with(&rule, &facts, &warm, "v1", None), first);
    assert!(warm.parsed_paths().is_empty());
}

#[test]
fn evidence_is_never_read_from_a_file_over_the_size_limit() {
    let (rule, facts) = rule_with_evidence("  - text_in_file: {files: [srt/a.py], text: NEEDLE}\n");
    let small = MemTree::from_files("t", [("python/sglang/srt/a.py", "NEEDLE = 1\n")]);
    assert_eq!(evaluate(&rule, &facts, &small, "python/sglang", "v1", None).len(), 1);
    // A generated table past the limit: the same text in it is no evidence.
    let huge = format!("NEEDLE = 1\n{}", "x = 0\n".repeat((crate::extract::symbols::MAX_SOURCE_BYTES / 6 + 1) as usize));
    let big = MemTree::from_files("t", [("python/sglang/srt/a.py", huge.as_str())]);
    assert!(evaluate(&rule, &facts, &big, "python/sglang", "v1", None).is_empty());
}

/// Every shipped rule's cases. Fixture cases always run; corpus cases run when
/// ENGINE_AUDIT_CORPUS is set (the corpus folder or the sglang.git clone).
#[test]
fn shipped_rule_cases() {
    let rules = load_rules(&[]).unwrap();
    let corpus = std::env::var_os("ENGINE_AUDIT_CORPUS").map(PathBuf::from);
    if corpus.is_none() {
        eprintln!("note: ENGINE_AUDIT_CORPUS is not set; corpus cases are skipped");
    }
    let results = run_self_tests(&rules, corpus.as_deref());
    for r in &results {
        eprintln!("{r}");
    }
    eprintln!("{}", selftest::summary(&results));
    let failures: Vec<String> = results.iter().filter(|r| r.outcome.is_failure()).map(|r| r.to_string()).collect();
    assert!(failures.is_empty(), "failing rule cases:\n{}", failures.join("\n"));
    let fixture_runs = results.iter().filter(|r| r.engine.starts_with("fixture:")).count();
    assert!(results.iter().filter(|r| r.engine.starts_with("fixture:")).all(|r| !matches!(r.outcome, CaseOutcome::Skipped(_))));
    assert!(fixture_runs > 0);
}

#[test]
fn noisy_and_missing_are_reported() {
    // A rule whose cases are wrong on purpose: the runner must say so.
    let text = MINIMAL
        .replace("fixture: none", "fixture: r001/unconditional")
        .replace("file_exists: {files: [srt/a.py]}", "file_exists: {files: [srt/environ.py]}")
        + "  valid:\n    - name: v\n      engines: [{fixture: r001/unconditional}]\n      deployment: {flags: {x: 'on'}}\n";
    let text = text.replace("      deployment: {flags: {x: 'on'}}\n  valid", "      deployment: {flags: {x: 'off'}}\n  valid");
    let rule = parse_rule(&text, RuleOrigin::BuiltIn("R900.yaml".into())).unwrap();
    let results = run_self_tests(&[rule], None);
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome.clone()).collect();
    assert_eq!(outcomes, [CaseOutcome::Missing, CaseOutcome::Noisy]);
}

// R001 on the real recipes (through the real recipe readers and the audit) is
// checked in tests/corpus_acceptance.rs.
