//! The reports users get, on the demo audit (mini SGLang v1.0.0 → v1.1.0, mini
//! vLLM v0.8.0 → v0.9.0, mini Dynamo 0.1.0), in every format:
//!
//! - `reports/` holds them as committed living docs; `reports_folder_is_current`
//!   fails when a renderer or the demo changed them (`UPDATE_REPORTS=1 cargo test
//!   --test reports` rewrites the folder).
//! - insta snapshots of each renderer (`tests/snapshots/`).
//! - structural checks: SARIF 2.1.0 required properties (written by hand, no
//!   network), GitHub workflow-command escaping, Markdown summary truthfulness,
//!   evidence links, the text report's snippets and colour.

use engine_audit::audit::AuditReport;
use engine_audit::report::{self, Format, Lang, RenderOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The demo audit, built once per test binary in a temporary folder (its paths
/// are relative to that folder, so nothing below depends on where it was).
fn demo() -> &'static AuditReport {
    static DEMO: OnceLock<AuditReport> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let (_, report) = engine_audit::cmd::demo::audit_demo(dir.path()).unwrap();
        report
    })
}

fn opts(lang: Lang) -> RenderOptions {
    RenderOptions { lang, ..RenderOptions::default() }
}

/// Each file of `reports/`: name, format, options.
fn report_files() -> Vec<(&'static str, Format, RenderOptions)> {
    vec![
        ("report.txt", Format::Text, opts(Lang::En)),
        ("report.md", Format::Markdown, opts(Lang::En)),
        ("report.en+zh.md", Format::Markdown, opts(Lang::EnZh)),
        ("report.json", Format::Json, opts(Lang::En)),
        ("report.sarif", Format::Sarif, opts(Lang::En)),
        ("report.github.txt", Format::Github, opts(Lang::En)),
    ]
}

fn reports_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reports")
}

#[test]
fn reports_folder_is_current() {
    let update = std::env::var_os("UPDATE_REPORTS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, format, o) in report_files() {
        let path = reports_dir().join(name);
        let fresh = format.render(demo(), &o);
        if update {
            std::fs::write(&path, &fresh).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(committed) if committed == fresh => {}
            Ok(_) => stale.push(format!("{name} differs")),
            Err(e) => stale.push(format!("{name}: {e}")),
        }
    }
    assert!(
        stale.is_empty(),
        "reports/ no longer matches what the demo renders: {}.\nRegenerate with: UPDATE_REPORTS=1 cargo test --test reports",
        stale.join(", ")
    );
}

#[test]
fn rendering_is_deterministic_and_independent_of_the_demo_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (_, other) = engine_audit::cmd::demo::audit_demo(&dir.path().join("elsewhere")).unwrap();
    for format in Format::ALL {
        let o = opts(Lang::EnZh);
        let a = format.render(demo(), &o);
        assert_eq!(a, format.render(demo(), &o), "{format:?} twice");
        assert_eq!(a, format.render(&other, &o), "{format:?} from another folder");
        assert!(!a.contains("/tmp") && !a.contains(".tmp"), "{format:?} names the temporary folder");
    }
}

// ---------------------------------------------------------------------------
// Snapshots

#[test]
fn snapshot_text() {
    insta::assert_snapshot!("text", report::Format::Text.render(demo(), &opts(Lang::En)));
}

#[test]
fn snapshot_markdown_en() {
    insta::assert_snapshot!("markdown_en", report::Format::Markdown.render(demo(), &opts(Lang::En)));
}

#[test]
fn snapshot_markdown_zh() {
    insta::assert_snapshot!("markdown_zh", report::Format::Markdown.render(demo(), &opts(Lang::Zh)));
}

#[test]
fn snapshot_json() {
    insta::assert_snapshot!("json", report::Format::Json.render(demo(), &opts(Lang::En)));
}

#[test]
fn snapshot_sarif() {
    insta::assert_snapshot!("sarif", report::Format::Sarif.render(demo(), &opts(Lang::En)));
}

#[test]
fn snapshot_github() {
    insta::assert_snapshot!("github", report::Format::Github.render(demo(), &opts(Lang::En)));
}

// ---------------------------------------------------------------------------
// Text

#[test]
fn text_shows_recipe_lines_evidence_fix_and_summary() {
    let text = report::Format::Text.render(demo(), &opts(Lang::En));
    // The code and name with the doc page, the labelled recipe line, evidence, help.
    assert!(text.contains(&format!("EA003 deprecated-alias [decode] ({}/docs/codes/EA003.md)", report::docs::DEFAULT_DOCS_URL)), "{text}");
    assert!(text.contains("[recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml:47:7]"));
    assert!(text.contains(" 47 │       cuda-graph-max-bs: 256"));
    assert!(text.contains("╰── decode: --cuda-graph-max-bs is a deprecated alias for --cuda-graph-max-bs-decode"));
    assert!(text
        .contains("  evidence: python/sglang/srt/server_args.py:42 @ v1.1.0 — --cuda-graph-max-bs forwards to --cuda-graph-max-bs-decode"));
    assert!(text.contains("  help: replace `cuda-graph-max-bs` with `cuda-graph-max-bs-decode` (--fix applies it)"));
    // Dynamo findings: no snippet (the file is not loaded), the place in the evidence.
    assert!(!text.contains("╭─[components/"), "no snippet of Dynamo files");
    assert!(text.contains("── components/src/dynamo/sglang/args.py (Dynamo 0.1.0 source)"));
    assert!(text
        .contains("  affects: recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml:13:11 installs this Dynamo"));
    // Grouped by file, in report order; summary last.
    let files: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("── ")).collect();
    assert_eq!(files.len(), 12, "{files:#?}");
    let (e, w, i) = report::counts(demo());
    let last = text.trim_end().lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "{e} errors, {w} warnings, {i} info in 8 deployments of 9 recipe files; 1 input problem among them; \
             sglang v1.0.0 → v1.1.0; vllm v0.8.0 → v0.9.0; atom v0.1.0 → v0.2.0; trtllm v1.2.0 → v1.3.0; dynamo 0.1.0, 0.2.0"
        )
    );
}

#[test]
fn text_colour_only_when_asked() {
    let plain = report::Format::Text.render(demo(), &opts(Lang::En));
    assert!(!plain.contains('\x1b'), "no escape codes without colour");
    let coloured = report::Format::Text.render(demo(), &RenderOptions { color: true, ..opts(Lang::En) });
    assert!(coloured.contains("\x1b["));
}

// ---------------------------------------------------------------------------
// Markdown

fn without(report: &AuditReport, codes: &[&str]) -> AuditReport {
    let mut r = report.clone();
    r.findings.retain(|f| !codes.contains(&f.code()));
    r
}

#[test]
fn markdown_lead_sentences_hold_for_the_findings() {
    let md = report::Format::Markdown.render(demo(), &opts(Lang::EnZh));
    assert!(
        md.starts_with(
            "**SGLang flag audit (v1.0.0 → v1.1.0); vLLM flag audit (v0.8.0 → v0.9.0); ATOM flag audit (v0.1.0 → v0.2.0); TensorRT-LLM flag audit (v1.2.0 → v1.3.0):** 21 errors, 27 warnings and 7 info in 8 deployments"
        ),
        "{md}"
    );
    // One line per area.
    let lead = md.lines().find(|l| l.starts_with("- **Flags:**")).unwrap();
    assert!(lead.starts_with("- **Flags:** 16 flag settings in the recipes will stop the server at startup"), "{lead}");
    assert!(!md.to_lowercase().contains("all recipe flags still parse"), "EA001/EA002/EA005/EA006 fired");
    assert!(!md.contains("所有配方参数仍可解析"));
    assert!(lead.contains("`--cuda-graph-max-bs` is a deprecated alias for `--cuda-graph-max-bs-decode`"));
    assert!(lead.contains("`--log-config-file` is a deprecated alias for `--logging-config.pylogging_config_file`"));
    assert!(lead.contains("Defaults changed for flags the recipes leave unset: `--enable_prefix_caching` (`false` → `true`), `--gpu-memory-utilization` (`0.9` → `0.92`), `--mem-fraction-static` (`0.85` → `0.88`)."));

    // Without the breaking findings, the flags still parse, in both languages.
    let clean = without(demo(), &["EA001", "EA002", "EA005", "EA006"]);
    let md = report::Format::Markdown.render(&clean, &opts(Lang::EnZh));
    assert!(md.contains("\n- **Flags:** All recipe flags still parse. `--cuda-graph-max-bs` is a deprecated alias"), "{md}");
    assert!(
        md.contains("\n- **参数**：所有配方参数仍可解析。`--cuda-graph-max-bs` 已弃用，是 `--cuda-graph-max-bs-decode` 的别名"),
        "{md}"
    );
    for code in ["EA001", "EA002", "EA005", "EA006"] {
        let only = without(demo(), &["EA001", "EA002", "EA005", "EA006"].into_iter().filter(|c| *c != code).collect::<Vec<_>>());
        assert!(
            !report::Format::Markdown.render(&only, &opts(Lang::En)).contains("All recipe flags still parse"),
            "{code} alone breaks parsing"
        );
    }

    // "Defaults unchanged" needs every deployment's current release: the launch
    // script has none (its bump starts at `?`), so nothing is claimed...
    let no_defaults = without(demo(), &["EA007"]);
    let md = report::Format::Markdown.render(&no_defaults, &opts(Lang::En));
    assert!(!md.contains("unchanged") && !md.contains("default of `--"), "{md}");
    // ... until every bump has a known start.
    let mut known = no_defaults.clone();
    known.bumps.retain(|b| b.from.is_some());
    let md = report::Format::Markdown.render(&known, &opts(Lang::EnZh));
    assert!(md.contains("Defaults of the flags the recipes leave unset are unchanged."));
    assert!(md.contains("配方未设置的参数，默认值均未改变。"));

    // Env and Dynamo sentences follow their findings.
    let quiet = without(demo(), &["EA101", "EA102", "EA103", "EA104", "EA105", "EA201", "EA202", "EA203", "EA204", "EA205"]);
    let md = report::Format::Markdown.render(&quiet, &opts(Lang::EnZh));
    assert!(md.contains("No `SGLANG_*`, `VLLM_*`, `ATOM_*`, `TRTLLM_*` env var the recipes set is affected."));
    assert!(md.contains("Dynamo 0.1.0: no import, attribute or pin problem against the SGLang target."));
    // Each Dynamo is said against the engine of the recipes that install it: 0.1.0
    // (SGLang recipes only) says nothing of vLLM.
    assert!(md.contains("Dynamo 0.2.0: no import, attribute or pin problem against the vLLM target."), "{md}");
    assert!(!md.contains("Dynamo 0.1.0: no import, attribute or pin problem against the vLLM target"), "{md}");
    assert!(md.contains("Dynamo 0.1.0：对 SGLang 目标版本的导入、属性访问和版本约束均未发现问题。"));
}

#[test]
fn markdown_collapses_identical_findings_across_recipes() {
    let md = report::Format::Markdown.render(demo(), &opts(Lang::En));
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `EA003`") && l.contains("`--cuda-graph-max-bs`")).collect();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    // Whole paths: one file name can be in several folders.
    assert!(
        rows[0].contains("**2** · `recipes/benchmarks/launch-aggregated.sh` (launch_server), `recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml` (decode)"),
        "{}",
        rows[0]
    );
    // Same subject, different facts: separate rows (the ATOM script's JSON is a third).
    assert_eq!(md.lines().filter(|l| l.starts_with("| `EA006`")).count(), 3);
    // One row per group in each section, and every finding in some row.
    let groups = report::markdown_groups(demo());
    assert_eq!(groups.iter().map(|g| g.findings.len()).sum::<usize>(), demo().findings.len());
    assert_eq!(md.lines().filter(|l| l.starts_with("| `")).count(), groups.len());
}

#[test]
fn markdown_links_evidence_when_the_repo_url_is_known() {
    let o = RenderOptions { lang: Lang::En, ..RenderOptions::default() }.with_engine_sources(
        &[("sglang", engine_audit::audit::EngineSpec { spec: "https://github.com/sgl-project/sglang.git".into(), root: None })].into(),
    );
    let md = report::Format::Markdown.render(demo(), &o);
    assert!(md.contains(
        "[python/sglang/srt/server_args.py:42](https://github.com/sgl-project/sglang/blob/v1.1.0/python/sglang/srt/server_args.py#L42) @ v1.1.0"
    ));
    // Dynamo's address is unknown: its evidence stays `path:line @ ref`.
    assert!(md.contains("`components/src/dynamo/sglang/args.py:3` @ 0.1.0"));
    // Recipe-side evidence (the master config) is never an engine link.
    assert!(md.contains("`recipes/configs/demo-master.yaml:2`"));
    let plain = report::Format::Markdown.render(demo(), &opts(Lang::En));
    // Without a URL, the only link is the footer's to engine-audit's docs.
    let links: Vec<&str> = plain.match_indices("https://").map(|(i, _)| &plain[i..]).collect();
    assert_eq!(links.len(), 1, "no engine links without a URL");
    assert!(links[0].starts_with(report::docs::DEFAULT_DOCS_URL));
}

#[test]
fn markdown_chinese_is_written_out() {
    let md = report::Format::Markdown.render(demo(), &opts(Lang::Zh));
    for phrase in [
        "### 参数（24）",
        "| 代码 | 问题 | 涉及配方 | 依据 | 修复 |",
        "`SGLANG_QUEUE_TIMEOUT_MS` 已弃用，由 `SGLANG_QUEUE_TIMEOUT` 取代（单位由毫秒改为秒）",
        "`sglang.srt.config_parser` 在 SGLang v1.1.0 中不存在（已移至 `sglang.srt.utils.config_parser`），Dynamo worker 启动即崩溃",
        "将 `cuda-graph-max-bs` 替换为 `cuda-graph-max-bs-decode`（`--fix` 可自动修复）",
        "`--cuda-graph-bs` 只接受 1 个值，配方传了 4 个",
    ] {
        assert!(md.contains(phrase), "missing {phrase:?}\n{md}");
    }
    // The Chinese section has no English table text left over.
    for english in ["is deprecated", "does not exist", "| Finding |", "replace `", "remove `", "(via Dynamo"] {
        assert!(!md.contains(english), "English left in Chinese: {english:?}");
    }
    // en+zh: English first, then Chinese.
    let both = report::Format::Markdown.render(demo(), &opts(Lang::EnZh));
    let (en, zh) = both.split_once("\n<details><summary>中文版</summary>\n\n").unwrap();
    assert!(en.starts_with("**SGLang flag audit") && zh.starts_with("**SGLang 参数审计"), "{both}");
}

// ---------------------------------------------------------------------------
// SARIF 2.1.0: the schema's required properties and enumerations, by hand.

fn obj<'a>(v: &'a Value, at: &str, errors: &mut Vec<String>) -> Option<&'a serde_json::Map<String, Value>> {
    let o = v.as_object();
    if o.is_none() {
        errors.push(format!("{at}: not an object"));
    }
    o
}

fn req<'a>(o: &'a serde_json::Map<String, Value>, key: &str, at: &str, errors: &mut Vec<String>) -> Option<&'a Value> {
    let v = o.get(key);
    if v.is_none() {
        errors.push(format!("{at}: missing required `{key}`"));
    }
    v
}

/// `message` (and multiformatMessageString): `text` (or an `id`).
fn check_message(v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(o) = obj(v, at, errors) else { return };
    if !o.get("text").is_some_and(Value::is_string) && !o.get("id").is_some_and(Value::is_string) {
        errors.push(format!("{at}: a message needs `text` or `id`"));
    }
}

fn check_mfms(v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(o) = obj(v, at, errors) else { return };
    if !o.get("text").is_some_and(Value::is_string) {
        errors.push(format!("{at}: multiformatMessageString needs `text`"));
    }
}

fn check_region(v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(o) = obj(v, at, errors) else { return };
    for key in ["startLine", "startColumn", "endLine", "endColumn"] {
        if let Some(n) = o.get(key) {
            if n.as_u64().is_none_or(|n| n < 1) {
                errors.push(format!("{at}.{key}: must be an integer ≥ 1"));
            }
        }
    }
    for key in ["charOffset", "byteOffset", "charLength", "byteLength"] {
        if let Some(n) = o.get(key) {
            if n.as_u64().is_none() {
                errors.push(format!("{at}.{key}: must be an integer ≥ 0"));
            }
        }
    }
    if let (Some(s), Some(e)) = (o.get("startLine").and_then(Value::as_u64), o.get("endLine").and_then(Value::as_u64)) {
        if e < s {
            errors.push(format!("{at}: endLine before startLine"));
        }
    }
    if o.get("startLine").is_none() && o.get("charOffset").is_none() && o.get("byteOffset").is_none() {
        errors.push(format!("{at}: a region needs startLine, charOffset or byteOffset"));
    }
}

fn check_artifact_location(v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(o) = obj(v, at, errors) else { return };
    match o.get("uri") {
        Some(Value::String(u)) if u.contains(' ') || u.contains('\\') => errors.push(format!("{at}.uri: not a URI reference: {u}")),
        Some(Value::String(u)) if !u.is_empty() => {}
        Some(_) => errors.push(format!("{at}.uri: must be a non-empty string")),
        None if o.get("index").is_none() => errors.push(format!("{at}: needs `uri` or `index`")),
        None => {}
    }
    if let Some(b) = o.get("uriBaseId") {
        if !b.is_string() {
            errors.push(format!("{at}.uriBaseId: must be a string"));
        }
    }
}

fn check_location(v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(o) = obj(v, at, errors) else { return };
    if let Some(p) = o.get("physicalLocation") {
        let pat = format!("{at}.physicalLocation");
        if let Some(po) = obj(p, &pat, errors) {
            if po.get("artifactLocation").is_none() && po.get("address").is_none() {
                errors.push(format!("{pat}: needs artifactLocation or address"));
            }
            if let Some(a) = po.get("artifactLocation") {
                check_artifact_location(a, &format!("{pat}.artifactLocation"), errors);
            }
            if let Some(r) = po.get("region") {
                check_region(r, &format!("{pat}.region"), errors);
            }
        }
    }
    if let Some(m) = o.get("message") {
        check_message(m, &format!("{at}.message"), errors);
    }
    if let Some(id) = o.get("id") {
        if id.as_i64().is_none_or(|i| i < -1) {
            errors.push(format!("{at}.id: must be an integer ≥ -1"));
        }
    }
}

const LEVELS: [&str; 4] = ["none", "note", "warning", "error"];

fn check_sarif(doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let e = &mut errors;
    let Some(top) = obj(doc, "$", e) else { return errors };
    if req(top, "version", "$", e).and_then(Value::as_str) != Some("2.1.0") {
        e.push("$.version must be \"2.1.0\"".into());
    }
    if let Some(s) = top.get("$schema") {
        if !s.as_str().is_some_and(|s| s.starts_with("https://")) {
            e.push("$.$schema must be a URI".into());
        }
    }
    let Some(runs) = req(top, "runs", "$", e).and_then(Value::as_array) else {
        e.push("$.runs must be an array".into());
        return errors;
    };
    for (ri, run) in runs.iter().enumerate() {
        let at = format!("$.runs[{ri}]");
        let Some(run) = obj(run, &at, e) else { continue };
        let Some(tool) = req(run, "tool", &at, e).and_then(|t| obj(t, &format!("{at}.tool"), e)) else { continue };
        let Some(driver) = req(tool, "driver", &format!("{at}.tool"), e).and_then(|d| obj(d, &format!("{at}.tool.driver"), e)) else {
            continue;
        };
        if let Some(name) = req(driver, "name", &format!("{at}.tool.driver"), e) {
            if name.as_str().is_none_or(str::is_empty) {
                e.push(format!("{at}.tool.driver.name() must be a non-empty string"));
            }
        }
        let rules: Vec<Value> = driver.get("rules").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut ids = std::collections::BTreeSet::new();
        for (i, rule) in rules.iter().enumerate() {
            let rat = format!("{at}.tool.driver.rules[{i}]");
            let Some(r) = obj(rule, &rat, e) else { continue };
            match req(r, "id", &rat, e).and_then(Value::as_str) {
                Some(id) if ids.insert(id.to_string()) => {}
                Some(id) => e.push(format!("{rat}: duplicate rule id {id}")),
                None => e.push(format!("{rat}.id must be a string")),
            }
            for key in ["shortDescription", "fullDescription", "help"] {
                if let Some(m) = r.get(key) {
                    check_mfms(m, &format!("{rat}.{key}"), e);
                }
            }
            if let Some(level) = r.get("defaultConfiguration").and_then(|c| c.get("level")) {
                if !level.as_str().is_some_and(|l| LEVELS.contains(&l)) {
                    e.push(format!("{rat}.defaultConfiguration.level: {level}"));
                }
            }
            if let Some(u) = r.get("helpUri") {
                if !u.as_str().is_some_and(|u| !u.is_empty() && !u.contains(' ')) {
                    e.push(format!("{rat}.helpUri must be a URI reference"));
                }
            }
        }
        if let Some(kind) = run.get("columnKind") {
            if !kind.as_str().is_some_and(|k| ["utf16CodeUnits", "unicodeCodePoints"].contains(&k)) {
                e.push(format!("{at}.columnKind: {kind}"));
            }
        }
        if let Some(bases) = run.get("originalUriBaseIds") {
            if let Some(b) = obj(bases, &format!("{at}.originalUriBaseIds"), e) {
                for (k, v) in b {
                    obj(v, &format!("{at}.originalUriBaseIds.{k}"), e);
                }
            }
        }
        let Some(results) = run.get("results").and_then(Value::as_array) else { continue };
        for (i, result) in results.iter().enumerate() {
            let rat = format!("{at}.results[{i}]");
            let Some(r) = obj(result, &rat, e) else { continue };
            if let Some(m) = req(r, "message", &rat, e) {
                check_message(m, &format!("{rat}.message"), e);
            }
            let rule_id = r.get("ruleId").and_then(Value::as_str);
            if rule_id.is_none() {
                e.push(format!("{rat}: ruleId is required by code scanning"));
            }
            if let Some(idx) = r.get("ruleIndex") {
                match idx.as_u64().and_then(|i| rules.get(i as usize)) {
                    Some(rule) if rule.get("id").and_then(Value::as_str) == rule_id => {}
                    _ => e.push(format!("{rat}.ruleIndex does not point at rule {rule_id:?}")),
                }
            }
            if let Some(level) = r.get("level") {
                if !level.as_str().is_some_and(|l| LEVELS.contains(&l)) {
                    e.push(format!("{rat}.level: {level}"));
                }
            }
            // Code scanning needs a location with a URI on every result.
            let locations = r.get("locations").and_then(Value::as_array);
            if !locations.is_some_and(|l| {
                l.iter().any(|l| l.pointer("/physicalLocation/artifactLocation/uri").and_then(Value::as_str).is_some_and(|u| !u.is_empty()))
            }) {
                e.push(format!("{rat}: no location with an artifact URI"));
            }
            for (key, list) in [("locations", r.get("locations")), ("relatedLocations", r.get("relatedLocations"))] {
                for (j, l) in list.and_then(Value::as_array).into_iter().flatten().enumerate() {
                    check_location(l, &format!("{rat}.{key}[{j}]"), e);
                }
            }
            if let Some(fp) = r.get("partialFingerprints").and_then(Value::as_object) {
                if fp.values().any(|v| !v.is_string()) {
                    e.push(format!("{rat}.partialFingerprints: values must be strings"));
                }
            }
            for (j, fix) in r.get("fixes").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let fat = format!("{rat}.fixes[{j}]");
                let Some(changes) = fix.get("artifactChanges").and_then(Value::as_array).filter(|c| !c.is_empty()) else {
                    e.push(format!("{fat}: artifactChanges (at least one) is required"));
                    continue;
                };
                for (k, change) in changes.iter().enumerate() {
                    let cat = format!("{fat}.artifactChanges[{k}]");
                    match change.get("artifactLocation") {
                        Some(a) => check_artifact_location(a, &format!("{cat}.artifactLocation"), e),
                        None => e.push(format!("{cat}: artifactLocation is required")),
                    }
                    let Some(replacements) = change.get("replacements").and_then(Value::as_array).filter(|r| !r.is_empty()) else {
                        e.push(format!("{cat}: replacements (at least one) is required"));
                        continue;
                    };
                    for (n, rep) in replacements.iter().enumerate() {
                        match rep.get("deletedRegion") {
                            Some(region) => check_region(region, &format!("{cat}.replacements[{n}].deletedRegion"), e),
                            None => e.push(format!("{cat}.replacements[{n}]: deletedRegion is required")),
                        }
                    }
                }
            }
        }
    }
    errors
}

#[test]
fn sarif_has_the_required_structure() {
    let text = report::Format::Sarif.render(demo(), &opts(Lang::En));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let errors = check_sarif(&doc);
    assert!(errors.is_empty(), "{errors:#?}");

    // The checker does catch what it claims to.
    let mut broken = doc.clone();
    broken["runs"][0]["results"][0].as_object_mut().unwrap().remove("message");
    broken["runs"][0]["results"][1]["ruleIndex"] = Value::from(0);
    broken["runs"][0]["results"][2]["level"] = Value::from("fatal");
    broken["runs"][0]["tool"]["driver"].as_object_mut().unwrap().remove("name");
    let errors = check_sarif(&broken);
    assert_eq!(errors.len(), 4, "{errors:#?}");
}

/// The official SARIF 2.1.0 schema (tests/schemas/README.md says where it is
/// from), formats checked too: `helpUri` and `uri` are `format: uri`.
fn sarif_schema_errors(doc: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles");
    validator.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path)).collect()
}

#[test]
fn sarif_validates_against_the_official_schema() {
    // With engine links and without.
    let linked = RenderOptions { lang: Lang::En, ..RenderOptions::default() }.with_engine_sources(
        &[("sglang", engine_audit::audit::EngineSpec { spec: "https://github.com/sgl-project/sglang".into(), root: None })].into(),
    );
    for o in [opts(Lang::En), linked] {
        let doc: Value = serde_json::from_str(&report::Format::Sarif.render(demo(), &o)).unwrap();
        let errors = sarif_schema_errors(&doc);
        assert!(errors.is_empty(), "{errors:#?}");
    }
    let doc: Value = serde_json::from_str(&report::Format::Sarif.render(demo(), &opts(Lang::En))).unwrap();
    // Every rule links its page absolutely and carries it in help.markdown.
    for rule in doc["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap() {
        let uri = rule["helpUri"].as_str().unwrap_or_else(|| panic!("no helpUri: {rule}"));
        assert!(uri.starts_with(report::docs::DEFAULT_DOCS_URL), "{uri}");
        let md = rule["help"]["markdown"].as_str().unwrap();
        assert!(md.starts_with(&format!("# {}", rule["id"].as_str().unwrap())), "{md}");
        assert!(md.contains(uri), "the page ends with its link: {md}");
    }
    // The validator does reject what SARIF forbids: a relative helpUri
    // (what this report carried before), a level outside the enumeration.
    let mut broken = doc.clone();
    broken["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = Value::from("docs/codes/EA001.md");
    broken["runs"][0]["results"][0]["level"] = Value::from("fatal");
    let errors = sarif_schema_errors(&broken);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors.iter().any(|e| e.contains("helpUri")), "{errors:#?}");
}

#[test]
fn sarif_rules_and_results_follow_the_catalog() {
    let doc: Value = serde_json::from_str(&report::Format::Sarif.render(demo(), &opts(Lang::En))).unwrap();
    let run = &doc["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for info in engine_audit::codes::CATALOG {
        let id = format!("{:?}", info.code);
        let rule = rules.iter().find(|r| r["id"] == id.as_str()).unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(rule["name"], info.name);
        assert_eq!(rule["shortDescription"]["text"], info.summary);
        assert_eq!(rule["helpUri"], format!("{}/docs/codes/{id}.md", report::docs::DEFAULT_DOCS_URL).as_str());
    }
    for id in ["R001", "R002", "R003", "R004"] {
        let rule = rules.iter().find(|r| r["id"] == id).unwrap();
        assert!(rule["helpUri"].as_str().unwrap().starts_with(&format!("{}/rules/{id}-", report::docs::DEFAULT_DOCS_URL)));
        assert!(!rule["shortDescription"]["text"].as_str().unwrap().is_empty());
    }
    assert_eq!(ids.len(), engine_audit::codes::CATALOG.len() + 4);

    // Every result is on a recipe line: the region is where the finding's span starts.
    let results = run["results"].as_array().unwrap();
    assert!(results.len() >= demo().findings.len());
    for r in results {
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
        assert!(demo().sources.contains_key(uri), "{uri} is not a recipe file");
        let region = &r["locations"][0]["physicalLocation"]["region"];
        let text = &demo().sources[uri];
        let line = region["startLine"].as_u64().unwrap() as usize;
        assert!(line <= text.lines().count(), "{uri}:{line}");
    }
    let alias = results.iter().find(|r| r["ruleId"] == "EA003" && r["properties"]["role"] == "decode").unwrap();
    assert_eq!(alias["level"], "warning");
    let region = &alias["locations"][0]["physicalLocation"]["region"];
    assert_eq!((region["startLine"].as_u64(), region["startColumn"].as_u64()), (Some(47), Some(7)));
    assert_eq!((region["endLine"].as_u64(), region["endColumn"].as_u64()), (Some(47), Some(24)), "end is exclusive");
    assert_eq!(alias["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"], "cuda-graph-max-bs-decode");
    // Dynamo findings stand on the recipe's `dynamo.source.pypi` line.
    let module = results.iter().find(|r| r["ruleId"] == "EA201").unwrap();
    assert_eq!(module["locations"][0]["physicalLocation"]["region"]["startLine"], 13);
    assert!(module["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Dynamo 0.1.0 (installed here), components/src/dynamo/sglang/args.py:3: "));
    assert_eq!(
        results.iter().filter(|r| r["level"] == "note").count(),
        demo().findings.iter().filter(|f| f.severity == engine_audit::codes::Severity::Info).count()
    );
}

#[test]
fn sarif_paths_are_relative_to_the_base_folder() {
    let mut r = demo().clone();
    let base = PathBuf::from("/work/recipes-repo");
    for f in &mut r.findings {
        if !report::in_engine_source(f) && !f.location.path.is_empty() {
            f.location.path = base.join(&f.location.path).display().to_string();
        }
    }
    let o = RenderOptions { base_dir: Some(base), ..opts(Lang::En) };
    let doc: Value = serde_json::from_str(&report::Format::Sarif.render(&r, &o)).unwrap();
    for result in doc["runs"][0]["results"].as_array().unwrap() {
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
        assert!(uri.starts_with("recipes/"), "{uri}");
    }
}

// ---------------------------------------------------------------------------
// GitHub workflow commands

#[test]
fn github_annotations_are_escaped_workflow_commands() {
    // The whole demo overflows GitHub's caps (its leftover line is checked in
    // the committed reports/); its SGLang side fits them, one annotation per
    // code and subject.
    let mut sglang = demo().clone();
    // (the vLLM side: findings on vLLM recipes, or on the Dynamo they install;
    // the TensorRT-LLM side: its recipe; the ATOM side: its script)
    sglang.findings.retain(|f| {
        !f.location.path.contains("vllm")
            && !f.location.path.contains("trt-mini")
            && !f.location.path.contains("_atom")
            && !f.affects.iter().any(|a| a.path.contains("vllm"))
    });
    let out = report::Format::Github.render(&sglang, &opts(Lang::En));
    let mut levels = std::collections::BTreeMap::new();
    // The last line is a plain log line (no annotation slot): what was grouped.
    let (commands, plain): (Vec<&str>, Vec<&str>) = out.lines().partition(|l| l.starts_with("::"));
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert!(plain[0].starts_with("engine-audit: GitHub shows 10 annotations"), "{}", plain[0]);
    for line in commands {
        let (command, rest) = line.strip_prefix("::").and_then(|l| l.split_once(' ')).unwrap_or_else(|| panic!("{line}"));
        *levels.entry(command).or_insert(0) += 1;
        let (props, message) = rest.split_once("::").unwrap();
        for prop in props.split(',') {
            let (key, value) = prop.split_once('=').unwrap_or_else(|| panic!("{prop}"));
            assert!(["file", "line", "col", "endLine", "endColumn", "title"].contains(&key), "{key}");
            assert!(!value.contains(':') && !value.contains('\n'), "{key}={value}");
        }
        assert!(!message.contains('\r') && !message.contains('\n'));
        // The doc page, absolute: a PR page is far from this repository.
        let base = report::docs::DEFAULT_DOCS_URL;
        assert!(
            message.contains(&format!("%0Adocs: {base}/docs/codes/")) || message.contains(&format!("%0Adocs: {base}/rules/")),
            "{message}"
        );
    }
    // One annotation per code and subject (the demo fits GitHub's caps).
    let sev = |s| {
        sglang
            .findings
            .iter()
            .filter(|f| f.severity == s)
            .map(|f| (f.code(), f.subject.as_str()))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    use engine_audit::codes::Severity;
    let codes = |s| sglang.findings.iter().filter(|f| f.severity == s).map(|f| f.code()).collect::<std::collections::BTreeSet<_>>().len();
    // 12 error groups and 11 warning groups do not fit GitHub's 10 per level: each folds by code.
    assert_eq!((sev(Severity::Error), sev(Severity::Warning)), (12, 11));
    assert_eq!(levels.get("error").copied().unwrap_or(0), codes(Severity::Error).min(10));
    assert_eq!(levels.get("warning").copied().unwrap_or(0), codes(Severity::Warning).min(10));
    assert_eq!(levels.get("notice").copied().unwrap_or(0), sev(Severity::Info));
    // One annotation for both places of EA003, on the first, naming the other.
    assert!(out.contains(
        "::warning file=recipes/benchmarks/launch-aggregated.sh,line=14,col=5,endLine=14,endColumn=21,title=EA003 deprecated-alias%3A cuda-graph-max-bs (2 places in 2 recipe files)::"
    ), "{out}");
    assert!(
        out.contains(
            "%0Aalso in 1 more recipe file(s): recipes/benchmarks/multi_node/srt-slurm-recipes/dsmini/dsmini-fp4-disagg.yaml:47 [decode]"
        ),
        "{out}"
    );
}

// ---------------------------------------------------------------------------
// The command line

fn demo_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    engine_audit::demo::build(dir.path()).unwrap();
    dir
}

fn audit_cmd(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("engine-audit").unwrap();
    // The four bumps of the demo in one run: `--to` names SGLang's, `--vllm-to`
    // vLLM's, `--atom-to` ATOM's, `--trtllm-to` TensorRT-LLM's.
    cmd.current_dir(dir).args([
        "audit",
        "recipes",
        "--sglang",
        "sglang.git",
        "--vllm",
        "vllm.git",
        "--atom",
        "atom.git",
        "--trtllm",
        "trtllm.git",
    ]);
    cmd.args([
        "--dynamo",
        "dynamo.git",
        "--to",
        "v1.1.0",
        "--vllm-to",
        "v0.9.0",
        "--atom-to",
        "v0.2.0",
        "--trtllm-to",
        "v1.3.0",
        "--offline",
    ]);
    cmd
}

#[test]
fn several_formats_need_an_output_dir() {
    let dir = demo_workspace();
    let out = audit_cmd(dir.path()).args(["--format", "markdown,json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output-dir"));
}

#[test]
fn output_dir_gets_one_file_per_format_and_stdout_the_text() {
    let dir = demo_workspace();
    let out = audit_cmd(dir.path())
        .args(["--format", "markdown,sarif", "--format", "github", "--output-dir", "out", "--lang", "en+zh"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "errors in the demo: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&format!("EA003 deprecated-alias [decode] ({}/docs/codes/EA003.md)", report::docs::DEFAULT_DOCS_URL))
            && !stdout.contains('\x1b')
    );
    let mut written: Vec<String> =
        std::fs::read_dir(dir.path().join("out")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["report.github.txt", "report.md", "report.sarif"]);
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("**SGLang 参数审计"), "--lang reaches the Markdown file");
}

/// `reports/README.md` says the folder is what this command writes: it is.
#[test]
fn the_cli_writes_what_reports_holds() {
    let dir = demo_workspace();
    for (lang, md) in [("en", "report.md"), ("en+zh", "report.en+zh.md")] {
        let out_dir = format!("out-{lang}");
        let out = audit_cmd(dir.path())
            .args(["--format", "text,markdown,json,sarif,github", "--output-dir", &out_dir, "--lang", lang])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout == std::fs::read(reports_dir().join("report.txt")).unwrap(), "stdout differs from reports/report.txt");
        for (written, committed) in [
            ("report.txt", "report.txt"),
            ("report.md", md),
            ("report.json", "report.json"),
            ("report.sarif", "report.sarif"),
            ("report.github.txt", "report.github.txt"),
        ] {
            let a = std::fs::read_to_string(dir.path().join(&out_dir).join(written)).unwrap();
            let b = std::fs::read_to_string(reports_dir().join(committed)).unwrap();
            assert!(a == b, "{out_dir}/{written} differs from reports/{committed}");
        }
    }
}

#[test]
fn a_baseline_leaves_out_what_it_recorded() {
    let dir = demo_workspace();
    let first = audit_cmd(dir.path()).args(["--format", "json", "--write-baseline", "base.json"]).output().unwrap();
    assert_eq!(first.status.code(), Some(1));
    let all: Value = serde_json::from_slice(&first.stdout).unwrap();
    let prints: Vec<&str> = all["findings"].as_array().unwrap().iter().map(|f| f["fingerprint"].as_str().unwrap()).collect();
    let base_path = dir.path().join("base.json");
    let mut recorded: Value = serde_json::from_str(&std::fs::read_to_string(&base_path).unwrap()).unwrap();
    let entries: Vec<&str> = recorded["findings"].as_array().unwrap().iter().map(|f| f["fingerprint"].as_str().unwrap()).collect();
    assert_eq!(entries, prints, "the baseline records every finding by the JSON's fingerprint");

    let again = audit_cmd(dir.path()).args(["--format", "json", "--baseline", "base.json"]).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stderr));
    let none: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(none["findings"].as_array().unwrap().len(), 0);
    assert_eq!(none["suppressed"].as_u64().unwrap(), all["suppressed"].as_u64().unwrap() + prints.len() as u64);

    // A finding the baseline does not have comes through, alone.
    let error = all["findings"].as_array().unwrap().iter().find(|f| f["severity"] == "error").unwrap();
    recorded["findings"].as_array_mut().unwrap().retain(|f| f["fingerprint"] != error["fingerprint"]);
    std::fs::write(&base_path, recorded.to_string()).unwrap();
    let one = audit_cmd(dir.path()).args(["--format", "json", "--baseline", "base.json"]).output().unwrap();
    assert_eq!(one.status.code(), Some(1));
    let one: Value = serde_json::from_slice(&one.stdout).unwrap();
    let left: Vec<&Value> = one["findings"].as_array().unwrap().iter().collect();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["fingerprint"], error["fingerprint"]);

    // Not a baseline: exit 2, naming the file.
    std::fs::write(&base_path, "{}").unwrap();
    let bad = audit_cmd(dir.path()).args(["--baseline", "base.json", "--color", "never"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("base.json: not an engine-audit baseline"), "{err}");
}

#[test]
fn colour_follows_the_flag_and_the_environment_for_reports_and_errors() {
    let dir = demo_workspace();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = audit_cmd(dir.path());
        cmd.args(args).env_remove("NO_COLOR").env_remove("FORCE_COLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let coloured = |out: &std::process::Output| (out.stdout.contains(&0x1b), out.stderr.contains(&0x1b));
    // Not a terminal: plain, unless forced.
    assert!(!coloured(&run(&[], &[])).0);
    assert!(coloured(&run(&[], &[("FORCE_COLOR", "1")])).0);
    assert!(coloured(&run(&[], &[("CLICOLOR_FORCE", "1")])).0);
    assert!(!coloured(&run(&[], &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")])).0, "NO_COLOR wins");
    assert!(coloured(&run(&["--color", "always"], &[("NO_COLOR", "1")])).0, "the flag wins");
    assert!(!coloured(&run(&["--color", "never"], &[("FORCE_COLOR", "1")])).0);
    // Errors follow the same decision.
    let missing = ["--baseline", "missing.json"];
    assert_eq!(coloured(&run(&missing, &[("FORCE_COLOR", "1")])), (false, true));
    assert_eq!(coloured(&run(&missing, &[])), (false, false));
    assert!(coloured(&run(&[&missing[..], &["--color", "always"]].concat(), &[("NO_COLOR", "1")])).1);
}

#[test]
fn statistics_count_findings_per_code() {
    let dir = demo_workspace();
    let out = audit_cmd(dir.path()).args(["--statistics", "--format", "json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let findings = json["findings"].as_array().unwrap();
    let mut per = std::collections::BTreeMap::new();
    for f in findings {
        *per.entry(f["code"].as_str().unwrap()).or_insert(0) += 1;
    }
    for (code, n) in &per {
        assert!(err.lines().any(|l| l.split_whitespace().take(2).eq([n.to_string().as_str(), *code])), "{code} {n}\n{err}");
    }
    let total = findings.len().to_string();
    assert!(err.lines().any(|l| l.split_whitespace().eq([total.as_str(), "in", "all"])), "{err}");
}

#[test]
fn explain_and_rules_list_speak_json() {
    let run = |args: &[&str]| -> Value {
        let out = assert_cmd::Command::cargo_bin("engine-audit").unwrap().args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let base = report::docs::DEFAULT_DOCS_URL;
    let codes = run(&["explain", "--format", "json"]);
    let codes = codes.as_array().unwrap();
    assert_eq!(codes.len(), engine_audit::codes::CATALOG.len());
    for c in codes {
        assert_eq!(c["doc"], format!("{base}/docs/codes/{}.md", c["code"].as_str().unwrap()).as_str());
    }
    let one = run(&["explain", "EA003", "--format", "json"]);
    assert_eq!(one["severity"], "warning");
    assert!(one["page"].as_str().unwrap().starts_with("# EA003 deprecated-alias"));
    let rules = run(&["rules", "list", "--format", "json"]);
    let rules = rules.as_array().unwrap();
    assert!(!rules.is_empty());
    for r in rules {
        assert!(r["doc"].as_str().unwrap().starts_with(&format!("{base}/rules/{}-", r["id"].as_str().unwrap())), "{r}");
    }
    let id = rules[0]["id"].as_str().unwrap();
    assert!(!run(&["explain", id, "--format", "json"])["docs"].as_str().unwrap().is_empty());
}

#[test]
fn markdown_keeps_to_its_budget_and_says_what_it_cut() {
    let full = report::Format::Markdown.render(demo(), &RenderOptions { max_chars: 0, ..opts(Lang::EnZh) });
    assert!(!full.contains("Cut to fit"));
    assert_eq!(full, report::Format::Markdown.render(demo(), &opts(Lang::EnZh)), "the demo fits the default budget");
    let budget = full.chars().count() / 2;
    let cut = report::Format::Markdown.render(demo(), &RenderOptions { max_chars: budget, ..opts(Lang::EnZh) });
    assert!(cut.chars().count() <= budget, "{} > {budget}", cut.chars().count());
    let note = cut.lines().find(|l| l.contains("**Cut to fit")).expect("the cut is said");
    assert!(note.contains("the Chinese half") && note.contains("--max-chars 0"), "{note}");
    // The lead is whole: every area line of the full report is there.
    for line in full.lines().take_while(|l| !l.is_empty()) {
        assert!(cut.contains(line), "lead line cut: {line}");
    }
    let to = RenderOptions { max_chars: budget, full_report: Some("in `out/report.json`".into()), ..opts(Lang::EnZh) };
    assert!(report::Format::Markdown.render(demo(), &to).contains("the full report is in `out/report.json`"));
}

#[test]
fn annotations_fold_to_the_caps_and_keep_every_error_code() {
    let errors: std::collections::BTreeSet<&str> =
        demo().findings.iter().filter(|f| f.severity == engine_audit::codes::Severity::Error).map(|f| f.code()).collect();
    for max in [1, 2, 3] {
        let out = report::Format::Github.render(demo(), &RenderOptions { max_annotations: max, ..opts(Lang::En) });
        let commands: Vec<&str> = out.lines().filter(|l| l.starts_with("::")).collect();
        assert!(commands.len() <= max, "{max}: {commands:#?}");
        assert!(commands.iter().all(|c| c.starts_with("::error")), "errors first: {commands:#?}");
        for code in &errors {
            // Its own annotation (the title), or listed in the level's last one.
            let visible = commands.iter().any(|c| {
                let message = c.splitn(3, "::").nth(2).unwrap_or("");
                c.contains(&format!("title={code} ")) || message.starts_with(&format!("{code} ")) || message.contains(&format!(", {code} "))
            });
            assert!(visible, "{max}: {code} not visible\n{out}");
        }
        assert!(out.lines().last().unwrap().starts_with("engine-audit: GitHub shows 10 annotations"), "{out}");
    }
}

#[test]
fn one_format_goes_to_stdout() {
    let dir = demo_workspace();
    let out = audit_cmd(dir.path()).args(["--format", "json"]).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema_version"], report::SCHEMA_VERSION);
}

// ---------------------------------------------------------------------------
// Nothing to report

#[test]
fn clean_and_empty_audits_say_so() {
    let mut clean = demo().clone();
    clean.findings.clear();
    let md = report::Format::Markdown.render(&clean, &opts(Lang::EnZh));
    assert!(
        md.starts_with(
            "**SGLang flag audit (v1.0.0 → v1.1.0); vLLM flag audit (v0.8.0 → v0.9.0); ATOM flag audit (v0.1.0 → v0.2.0); TensorRT-LLM flag audit (v1.2.0 → v1.3.0):** 0 errors, 0 warnings and 0 info in 8 deployments of 9 recipe files.\n\
         - **Flags:** All recipe flags still parse.\n\
         - **Env vars:** No `SGLANG_*`, `VLLM_*`, `ATOM_*`, `TRTLLM_*` env var the recipes set is affected.\n\
         - **Dynamo compatibility:** Dynamo 0.1.0: no import, attribute or pin problem against the SGLang target. \
         Dynamo 0.2.0: no import, attribute or pin problem against the vLLM target.\n"
        ),
        "{md}"
    );
    assert!(
        md.contains("- **参数**：所有配方参数仍可解析。\n- **环境变量**：配方设置的 `SGLANG_*`、`VLLM_*`、`ATOM_*`、`TRTLLM_*` 环境变量均不受影响。"),
        "{md}"
    );
    assert!(!md.contains("| Code |"), "no empty tables");
    assert_eq!(report::Format::Github.render(&clean, &opts(Lang::En)), "");
    let sarif: Value = serde_json::from_str(&report::Format::Sarif.render(&clean, &opts(Lang::En))).unwrap();
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
    assert!(check_sarif(&sarif).is_empty());

    let empty = AuditReport::default();
    let md = report::Format::Markdown.render(&empty, &opts(Lang::EnZh));
    assert!(md.starts_with("**Engine audit:** no deployment was audited. 0 errors"), "{md}");
    assert!(md.contains("**引擎审计**：没有可审计的部署。合计："));
    assert_eq!(report::Format::Text.render(&empty, &opts(Lang::En)), "0 errors, 0 warnings, 0 info in 0 deployments of 0 recipe files\n");
}

// ---------------------------------------------------------------------------
// docs/report-schema.md describes what the JSON holds

#[test]
fn json_schema_doc_matches_the_output() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report-schema.md")).unwrap();
    let json: Value = serde_json::from_str(&report::Format::Json.render(demo(), &opts(Lang::En))).unwrap();
    assert_eq!(json["schema_version"], report::SCHEMA_VERSION);
    // Every key the demo's JSON uses is documented.
    let mut keys = std::collections::BTreeSet::new();
    fn walk(v: &Value, keys: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    keys.insert(k.clone());
                    walk(v, keys);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, keys)),
            _ => {}
        }
    }
    walk(&json, &mut keys);
    for k in &keys {
        assert!(doc.contains(&format!("`{k}`")) || doc.contains(&format!("\"{k}\"")), "`{k}` is not documented");
    }
    // The example is a finding of reports/report.json, as it is.
    let example = doc.split("```json\n").nth(1).unwrap().split("\n```").next().unwrap();
    let example: Value = serde_json::from_str(example).unwrap();
    assert!(json["findings"].as_array().unwrap().contains(&example), "the example is not a demo finding");
}
