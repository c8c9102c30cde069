//! SARIF 2.1.0 for GitHub code scanning: one run whose `tool.driver.rules` are the
//! finding-code catalog and the risk rules applied, and whose results sit on
//! recipe lines so code scanning annotates them in the PR diff.
//!
//! - Recipe findings: `physicalLocation` with the recipe path (relative to the
//!   base folder), `startLine`/`startColumn` (columns in Unicode code points:
//!   `columnKind: unicodeCodePoints`) and the end of the span when the text is known.
//! - Findings in Dynamo's source (EA201–EA205): one result per recipe place that
//!   installs that Dynamo (its `dynamo:` value), the Dynamo file as a related
//!   location. With no such place, the Dynamo path itself (under `uriBaseId: DYNAMO`).
//! - Engine evidence: `relatedLocations` (the blob URL when the engine's
//!   repository address is known), and every field in `properties`.
//! - Mechanical fixes: `fixes` with byte-offset replacements.
//! - `partialFingerprints` from code, repository-relative file, subject and
//!   role (`report::identity`), so an alert keeps its identity when lines move
//!   and when the target release changes.
//! - Rules: `helpUri` is the absolute doc page (`report::docs`), and the page
//!   itself is `help.markdown`.

use super::{docs, evidence_plain, evidence_url, identity, in_engine_source, repo_path, Finding, Location, RenderOptions};
use crate::codes::{Severity, CATALOG};
use crate::finding::AuditReport;
use serde_json::{json, Map, Value};

pub(crate) const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// `tool.driver.rules`: every finding code, then the risk rules applied. Each
/// carries its page twice: `helpUri` (absolute, as SARIF requires; absent for a
/// user's own rule file) and the page itself in `help.markdown`, which code
/// scanning shows beside the alert.
fn rules(report: &AuditReport, opts: &RenderOptions) -> Vec<Value> {
    let mut out: Vec<Value> = CATALOG
        .iter()
        .map(|c| {
            let doc = c.code.doc_path();
            let mut rule = json!({
                "id": c.code.as_str(),
                "name": c.name,
                "shortDescription": { "text": c.summary },
                "fullDescription": { "text": format!("{} {}: {}.", c.code.as_str(), c.name, c.summary) },
                "help": help(c.summary, &doc, None, opts),
                "defaultConfiguration": { "level": level(c.severity) },
                "properties": { "tags": ["engine-audit", c.area.as_str()] },
            });
            if let Some(url) = docs::url(&opts.docs_url, &doc) {
                rule["helpUri"] = json!(url);
            }
            rule
        })
        .collect();
    for r in &report.rules {
        let mut rule = json!({
            "id": r.id,
            "name": r.name,
            "shortDescription": { "text": r.title },
            "fullDescription": { "text": format!("{} {}: {}", r.id, r.name, r.title) },
            "help": help(&r.title, &r.doc, Some(r), opts),
            "defaultConfiguration": { "level": level(r.severity) },
            "properties": { "tags": ["engine-audit", "risk-rule"] },
        });
        if let Some(url) = docs::url(&opts.docs_url, &r.doc) {
            rule["helpUri"] = json!(url);
        }
        out.push(rule);
    }
    out
}

/// `help`: a line with the link in `text`; the page in `markdown` (with the
/// link under it), or the line again when no page is shipped.
fn help(summary: &str, doc: &str, rule: Option<&crate::finding::RuleInfo>, opts: &RenderOptions) -> Value {
    let link = docs::link(&opts.docs_url, doc);
    let markdown = match docs::page(doc, rule) {
        Some(page) => format!("{}\n\n[{link}]({link})\n", page.trim_end()),
        None => format!("{summary} — see [{link}]({link})"),
    };
    json!({ "text": format!("{summary} — see {link}"), "markdown": markdown })
}

/// The 1-based line and column (in characters) where byte `end` of the span
/// falls, when the recipe text is loaded.
fn end_of(report: &AuditReport, loc: &Location) -> Option<(u32, u32)> {
    let text = report.sources.get(&loc.path)?;
    let end = loc.offset? + loc.len?;
    if end > text.len() || !text.is_char_boundary(end) {
        return None;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some((line, before[line_start..].chars().count() as u32 + 1))
}

fn region(report: &AuditReport, loc: &Location) -> Value {
    let mut r = Map::new();
    r.insert("startLine".into(), json!(loc.line.max(1)));
    r.insert("startColumn".into(), json!(loc.column.max(1)));
    if let Some((line, column)) = end_of(report, loc).filter(|&(l, c)| (l, c) > (loc.line, loc.column)) {
        r.insert("endLine".into(), json!(line));
        r.insert("endColumn".into(), json!(column));
    }
    Value::Object(r)
}

/// A recipe path as a URI: relative to the base folder, or a `file://` URI when
/// it lies outside it.
fn recipe_uri(path: &str, opts: &RenderOptions) -> String {
    let rel = repo_path(path, opts);
    if rel.starts_with('/') {
        format!("file://{}", super::encode_path(&rel))
    } else {
        super::encode_path(&rel)
    }
}

fn physical(report: &AuditReport, loc: &Location, opts: &RenderOptions) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": recipe_uri(&loc.path, opts) },
            "region": region(report, loc),
        }
    })
}

/// Where an engine file is: its blob URL when known, else the path under the
/// engine's base id (`SGLANG`, `DYNAMO`).
fn engine_artifact(e: &super::EvidenceRef, opts: &RenderOptions) -> Value {
    match evidence_url(e, opts) {
        Some(url) => json!({ "uri": url }),
        None => match e.engine.as_deref() {
            Some(engine) => {
                // A program read from another engine's repository (ATOM's router) is under that repository's id.
                let repository = crate::profiles::by_id(engine).map_or(engine, |p| p.source_id());
                json!({ "uri": super::encode_path(&e.path), "uriBaseId": repository.to_ascii_uppercase() })
            }
            None => json!({ "uri": recipe_uri(&e.path, opts) }),
        },
    }
}

fn related(f: &Finding, opts: &RenderOptions) -> Vec<Value> {
    f.evidence
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let note = e.note.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
            json!({
                "id": i,
                "physicalLocation": {
                    "artifactLocation": engine_artifact(e, opts),
                    "region": { "startLine": e.line.max(1) },
                },
                "message": { "text": format!("evidence: {}{note}", evidence_plain(e)) },
            })
        })
        .collect()
}

fn fixes(f: &Finding, opts: &RenderOptions) -> Option<Value> {
    let fix = f.fix.as_ref().filter(|x| !x.edits.is_empty())?;
    let mut by_file: std::collections::BTreeMap<&str, Vec<Value>> = std::collections::BTreeMap::new();
    for e in &fix.edits {
        by_file.entry(e.path.as_str()).or_default().push(json!({
            "deletedRegion": { "byteOffset": e.offset, "byteLength": e.len },
            "insertedContent": { "text": e.replacement },
        }));
    }
    let changes: Vec<Value> = by_file
        .into_iter()
        .map(|(path, replacements)| json!({ "artifactLocation": { "uri": recipe_uri(path, opts) }, "replacements": replacements }))
        .collect();
    Some(json!([{ "description": { "text": fix.description(super::Lang::En) }, "artifactChanges": changes }]))
}

fn results(report: &AuditReport, rule_index: &dyn Fn(&str) -> Option<usize>, opts: &RenderOptions) -> Vec<Value> {
    let mut out = Vec::new();
    let mut prints = identity::Fingerprints::default();
    for f in &report.findings {
        let mut text = f.message().clone();
        if let Some(fix) = &f.fix {
            text.push_str(&format!(" Fix: {}.", fix.description(super::Lang::En).trim_end_matches('.')));
        }
        let mut props = Map::new();
        props.insert("subject".into(), json!(f.subject));
        props.insert("name".into(), json!(f.name()));
        if let Some(d) = &f.deployment {
            props.insert("deployment".into(), json!(d));
        }
        if let Some(r) = &f.role {
            props.insert("role".into(), json!(r));
        }
        props.insert("evidence".into(), serde_json::to_value(&f.evidence).unwrap_or(Value::Null));
        props.insert("doc".into(), json!(docs::link(&opts.docs_url, &f.doc())));
        // Engine-side findings stand on every recipe place that installs that build.
        let places: Vec<(Location, bool)> = if in_engine_source(f) && !f.affects.is_empty() {
            f.affects.iter().map(|a| (a.clone(), true)).collect()
        } else {
            vec![(f.location.clone(), false)]
        };
        for (place, via_recipe) in places {
            let mut result = Map::new();
            result.insert("ruleId".into(), json!(f.code()));
            if let Some(i) = rule_index(f.code()) {
                result.insert("ruleIndex".into(), json!(i));
            }
            result.insert("level".into(), json!(level(f.severity)));
            let related = related(f, opts);
            let message = if via_recipe { format!("{}{text}", super::installed_here(f)) } else { text.clone() };
            result.insert("message".into(), json!({ "text": message }));
            let location = if in_engine_source(f) && !via_recipe {
                json!({
                    "physicalLocation": {
                        "artifactLocation": { "uri": super::encode_path(&place.path), "uriBaseId": "DYNAMO" },
                        "region": { "startLine": place.line.max(1), "startColumn": place.column.max(1) },
                    }
                })
            } else if place.path.is_empty() {
                Value::Null
            } else {
                physical(report, &place, opts)
            };
            if !location.is_null() {
                result.insert("locations".into(), json!([location]));
            }
            if !related.is_empty() {
                result.insert("relatedLocations".into(), Value::Array(related));
            }
            if !via_recipe {
                if let Some(fixes) = fixes(f, opts) {
                    result.insert("fixes".into(), fixes);
                }
            }
            // v2: without the message (v1 had it, so every bump reopened every alert).
            result.insert("partialFingerprints".into(), json!({ "engineAuditFinding/v2": prints.next(f, &place, opts) }));
            result.insert("properties".into(), Value::Object(props.clone()));
            out.push(Value::Object(result));
        }
    }
    out
}

/// The sarif format.
pub(crate) struct Sarif;

impl super::Render for Sarif {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String {
        render(report, opts)
    }
}

fn render(report: &AuditReport, opts: &RenderOptions) -> String {
    let rules = rules(report, opts);
    let ids: Vec<String> = rules.iter().map(|r| r["id"].as_str().unwrap_or_default().to_string()).collect();
    let index = |code: &str| ids.iter().position(|id| id == code);
    let results = results(report, &index, opts);
    let mut base_ids = Map::new();
    // One id per repository: a program read from another engine's source has none of its own.
    for engine in crate::profiles::PROFILES.iter().filter(|p| p.source_of.is_none()).map(|p| p.id) {
        // No `uri`: each location names its own ref (and carries a blob URL when known).
        let description = json!({ "text": format!("the {engine} repository, at the ref each location's message names") });
        base_ids.insert(engine.to_ascii_uppercase(), json!({ "description": description }));
    }
    let doc = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "engine-audit",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "originalUriBaseIds": base_ids,
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {
                "bumps": report.bumps,
                "deploymentsAudited": report.deployments_audited,
                "recipes": report.recipes,
            },
        }]
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("plain data");
    text.push('\n');
    text
}
