//! One rule × one deployment × one engine tree → hits.
//!
//! Order: version gate, then `when` per role (cheap, no source read), then the
//! evidence (parsed once per call, shared across roles). A hit points at the
//! first flag or env var that made `when` hold, in the role it holds for.

use super::evidence::{Cite, SourceIndex};
use super::model::{FixSpec, Severity};
use super::when::{Ctx, DeploymentFacts, MatchKind, Matched, SpanRef};
use super::Rule;
use crate::source::Tree;

/// What a rule found; the orchestrator turns it into a `report::Finding`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleHit {
    pub rule_id: String,
    pub rule_name: String,
    pub severity: Severity,
    pub message: String,
    pub deployment: String,
    /// The role the hit is about; `None` for deployment-wide hits.
    pub role: Option<String>,
    /// The flag or env var the finding is about (`fp4-gemm-backend`), or the
    /// deployment name when no flag/env condition was involved.
    pub subject: String,
    pub subject_kind: SubjectKind,
    /// Where to point: the flag/env key in the recipe, if known.
    pub at: Option<SpanRef>,
    /// Its value, for `set_flag` fixes that replace it.
    pub value_at: Option<SpanRef>,
    pub evidence: Vec<EvidenceCite>,
    pub fix: Vec<FixAction>,
    /// Repository-relative path of the rule file (its docs).
    pub doc: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubjectKind {
    Flag,
    Env,
    Deployment,
}

/// `path:line @ ref`: engine evidence behind a hit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct EvidenceCite {
    pub path: String,
    pub line: u32,
    pub ref_name: String,
    pub note: String,
}

/// A fix, bound to the role of the hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FixAction {
    pub spec: FixSpec,
    pub role: Option<String>,
}

/// Evaluate one rule. `target_version` is the PEP 440 version of `ref_name` when
/// it names one; rules with `versions` are skipped only when it is known and
/// outside them.
pub(crate) fn evaluate(
    rule: &Rule,
    deployment: &DeploymentFacts,
    tree: &dyn Tree,
    package_root: &str,
    ref_name: &str,
    target_version: Option<&pep440_rs::Version>,
) -> Vec<RuleHit> {
    evaluate_with(rule, deployment, &SourceIndex::new(tree, package_root), ref_name, target_version)
}

/// [`evaluate`] against an index shared across rules and deployments of one
/// tree: each engine file is parsed once per tree, each predicate checked once.
pub(crate) fn evaluate_with(
    rule: &Rule,
    deployment: &DeploymentFacts,
    index: &SourceIndex,
    ref_name: &str,
    target_version: Option<&pep440_rs::Version>,
) -> Vec<RuleHit> {
    if let (Some(spec), Some(v)) = (&rule.spec.versions, target_version) {
        if !spec.0.contains(v) {
            return Vec::new();
        }
    }
    let roles: Vec<Option<&super::when::RoleFacts>> =
        if deployment.roles.is_empty() { vec![None] } else { deployment.roles.iter().map(Some).collect() };
    let mut hits: Vec<RuleHit> = Vec::new();
    for role in roles {
        let ctx = Ctx { deployment, role };
        let mut matched = Vec::new();
        if !ctx.holds(&rule.spec.when, &mut matched) {
            continue;
        }
        index.prefetch(&rule.spec.evidence);
        let Some(cites) = index.all(&rule.spec.evidence, &ctx) else { continue };
        if cites.is_empty() {
            // Only negative evidence held: not enough to fire.
            continue;
        }
        let hit = build_hit(rule, deployment, role.map(|r| r.role.as_str()), matched.first(), cites, ref_name);
        // A deployment-wide subject (common env, model) is reported once.
        let dup = hit.role.is_none() && hits.iter().any(|h| h.role.is_none() && h.subject == hit.subject && h.at == hit.at);
        if !dup {
            hits.push(hit);
        }
    }
    hits
}

fn build_hit(rule: &Rule, d: &DeploymentFacts, role: Option<&str>, anchor: Option<&Matched>, cites: Vec<Cite>, ref_name: &str) -> RuleHit {
    let (subject, kind, hit_role) = match anchor {
        Some(m) => (m.name.clone(), if m.kind == MatchKind::Env { SubjectKind::Env } else { SubjectKind::Flag }, m.role.clone()),
        None => (d.name.clone(), SubjectKind::Deployment, None),
    };
    let evidence: Vec<EvidenceCite> =
        cites.into_iter().map(|c| EvidenceCite { path: c.path, line: c.line, ref_name: ref_name.to_string(), note: c.note }).collect();
    let first = evidence.first().map(|e| format!("{}:{} @ {}", e.path, e.line, e.ref_name)).unwrap_or_default();
    let message = render(
        &rule.spec.message,
        &[
            ("flag", subject.as_str()),
            ("value", anchor.and_then(|m| m.value.as_deref()).unwrap_or("")),
            ("role", role.unwrap_or("")),
            ("ref", ref_name),
            ("evidence", first.as_str()),
            ("deployment", d.name.as_str()),
        ],
    );
    RuleHit {
        rule_id: rule.spec.id.clone(),
        rule_name: rule.spec.name.clone(),
        severity: rule.spec.severity,
        message,
        deployment: d.name.clone(),
        role: hit_role.clone(),
        subject: if kind == SubjectKind::Deployment { d.name.clone() } else { subject },
        subject_kind: kind,
        at: anchor.and_then(|m| m.key_span.clone()).or_else(|| d.name_span.clone()),
        value_at: anchor.and_then(|m| m.value_span.clone()),
        evidence,
        fix: rule.spec.fix.iter().map(|f| FixAction { spec: f.clone(), role: role.map(str::to_string) }).collect(),
        doc: rule.doc_path(),
    }
}

/// The placeholders a message may use; anything else in braces is a load error.
pub(crate) const PLACEHOLDERS: &[&str] = &["flag", "value", "role", "ref", "evidence", "deployment"];

/// Replace `{name}`; `{{` and `}}` are literal braces.
pub(crate) fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push(tail.as_bytes()[0] as char);
            rest = &tail[2..];
        } else if let (true, Some(end)) = (tail.starts_with('{'), tail.find('}')) {
            let key = &tail[1..end];
            match values.iter().find(|(k, _)| *k == key) {
                Some((_, v)) => out.push_str(v),
                None => out.push_str(&tail[..=end]),
            }
            rest = &tail[end + 1..];
        } else {
            out.push(tail.as_bytes()[0] as char);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Placeholder names used by a template (for load-time validation).
pub(crate) fn placeholders(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{") {
            rest = after;
            continue;
        }
        match tail.find('}') {
            Some(end) => {
                out.push(tail[1..end].to_string());
                rest = &tail[end + 1..];
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_known_placeholders_and_literal_braces() {
        let s = render("{flag}={value} in {role} {{x}} {other}", &[("flag", "a"), ("value", "b"), ("role", "decode")]);
        assert_eq!(s, "a=b in decode {x} {other}");
        assert_eq!(placeholders("{flag} {{no}} {ref}"), ["flag", "ref"]);
    }
}
