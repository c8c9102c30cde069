//! Which annotations a GitHub step gets. GitHub shows at most 10 error, 10
//! warning and 10 notice annotations per step (50 per job) and drops the rest
//! silently, so one annotation per finding (2,955 on the InferenceX tree) hides
//! nearly everything. Findings are grouped instead:
//!
//! 1. by code and subject (`EA001` `cuda-graph-max-bs` in 120 recipes is one
//!    annotation, on its first place, naming the others: "and 117 more");
//! 2. when a level still has more groups than it has slots, by code alone
//!    (each annotation names its subjects with their counts);
//! 3. when even the codes do not fit, the last slot of the level lists the
//!    codes left over, so every finding of the level is at least counted there.
//!
//! Errors take their slots first, then warnings, then notices, within
//! `max_annotations` in all. What is not annotated is counted by [`Plan::left_out`]:
//! the caller points to the full report (the step summary for `pr`).

use super::{in_engine_source, installed_here, Finding, Location, RenderOptions, ANNOTATIONS_PER_LEVEL};
use crate::codes::Severity;
use crate::finding::AuditReport;
use std::collections::BTreeMap;

/// One place a finding is shown: a recipe line (an engine-side finding is
/// shown on each recipe line that installs that build), or none.
#[derive(Clone)]
pub(crate) struct Place<'a> {
    pub finding: &'a Finding,
    pub at: Option<&'a Location>,
    /// Said before the message (`Dynamo 0.1.0 (installed here), args.py:3: `).
    pub prefix: String,
}

/// What one annotation stands for.
pub(crate) enum Shown<'a> {
    /// Every place of one code and subject.
    Subject { places: Vec<Place<'a>> },
    /// Every place of one code, over several subjects (first place first).
    Code { places: Vec<Place<'a>>, subjects: Vec<(String, usize)> },
    /// Codes of this level that got no annotation of their own: (code, name, findings).
    Rest { codes: Vec<(String, String, usize)> },
}

pub(crate) struct Annotation<'a> {
    pub severity: Severity,
    pub shown: Shown<'a>,
}

/// The annotations to write, and how many groups of each level were folded or left out.
pub(crate) struct Plan<'a> {
    pub annotations: Vec<Annotation<'a>>,
    /// Per level (errors, warnings, notices): (code-and-subject groups, how many
    /// have an annotation of their own, how they were folded).
    pub levels: Vec<LevelSummary>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LevelSummary {
    pub severity: Severity,
    /// Findings of the level.
    pub findings: usize,
    /// Code-and-subject groups of the level.
    pub groups: usize,
    pub fold: Fold,
    /// Annotations written for the level.
    pub annotations: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fold {
    /// One annotation per code and subject.
    BySubject,
    /// One per code.
    ByCode,
    /// One per code, the last slot listing the codes left over.
    ByCodeWithRest,
    /// No slot left for the level at all.
    None,
}

impl Plan<'_> {
    /// Whether some group has no annotation of its own (it is folded into a
    /// wider one, or not annotated at all).
    pub(crate) fn left_out(&self) -> bool {
        self.levels.iter().any(|l| l.findings > 0 && l.fold != Fold::BySubject)
    }
}

/// Every place of every finding, in report order.
fn places(report: &AuditReport) -> Vec<Place<'_>> {
    let mut out = Vec::new();
    for f in &report.findings {
        if in_engine_source(f) {
            if f.affects.is_empty() {
                out.push(Place { finding: f, at: None, prefix: format!("{}:{}: ", f.location.path, f.location.line) });
            }
            let prefix = installed_here(f);
            out.extend(f.affects.iter().map(|a| Place { finding: f, at: Some(a), prefix: prefix.clone() }));
        } else {
            out.push(Place { finding: f, at: Some(&f.location), prefix: String::new() });
        }
    }
    out
}

/// One code's places, and its subjects with their finding counts.
type CodeGroup<'a> = (Vec<Place<'a>>, Vec<(String, usize)>);

const LEVELS: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Info];

/// Group the report's findings into at most `max` annotations (at most
/// [`ANNOTATIONS_PER_LEVEL`] per level).
pub(crate) fn plan<'a>(report: &'a AuditReport, opts: &RenderOptions) -> Plan<'a> {
    let mut budget = opts.max_annotations;
    let mut annotations = Vec::new();
    let mut levels = Vec::new();
    let all = places(report);
    for severity in LEVELS {
        let mine: Vec<Place<'a>> = all.iter().filter(|p| p.finding.severity == severity).cloned().collect();
        let findings = report.findings.iter().filter(|f| f.severity == severity).count();
        let mut by_subject: BTreeMap<(String, String), Vec<Place<'a>>> = BTreeMap::new();
        for p in &mine {
            by_subject.entry((p.finding.code().to_string(), p.finding.subject.clone())).or_default().push(p.clone());
        }
        let slots = budget.min(ANNOTATIONS_PER_LEVEL);
        let before = annotations.len();
        let fold = if by_subject.is_empty() {
            Fold::BySubject
        } else if slots == 0 {
            Fold::None
        } else if by_subject.len() <= slots {
            annotations.extend(by_subject.into_values().map(|places| Annotation { severity, shown: Shown::Subject { places } }));
            Fold::BySubject
        } else {
            let mut by_code: BTreeMap<String, CodeGroup<'a>> = BTreeMap::new();
            for ((code, subject), places) in &by_subject {
                let entry = by_code.entry(code.clone()).or_default();
                entry.0.extend(places.iter().cloned());
                entry.1.push((
                    subject.clone(),
                    places.iter().map(|p| p.finding as *const Finding).collect::<std::collections::BTreeSet<_>>().len(),
                ));
            }
            let mut codes: Vec<(String, CodeGroup<'a>)> = by_code.into_iter().collect();
            for (_, (places, subjects)) in &mut codes {
                // First place in report order; the subjects most often hit first.
                places.sort_by_key(|p| p.finding.sort_key());
                subjects.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            }
            let fits = codes.len() <= slots;
            let own = if fits { codes.len() } else { slots - 1 };
            let rest = codes.split_off(own);
            annotations
                .extend(codes.into_iter().map(|(_, (places, subjects))| Annotation { severity, shown: Shown::Code { places, subjects } }));
            if fits {
                Fold::ByCode
            } else {
                let codes = rest
                    .into_iter()
                    .map(|(code, (places, _))| {
                        let name = places[0].finding.name().to_string();
                        let n = places.iter().map(|p| p.finding as *const Finding).collect::<std::collections::BTreeSet<_>>().len();
                        (code, name, n)
                    })
                    .collect();
                annotations.push(Annotation { severity, shown: Shown::Rest { codes } });
                Fold::ByCodeWithRest
            }
        };
        let written = annotations.len() - before;
        budget -= written;
        let groups = mine.iter().map(|p| (p.finding.code(), p.finding.subject.as_str())).collect::<std::collections::BTreeSet<_>>().len();
        levels.push(LevelSummary { severity, findings, groups, fold, annotations: written });
    }
    Plan { annotations, levels }
}

/// One line for a step summary or a log: what the annotations show and what
/// they leave to the full report.
pub(crate) fn summary_line(plan: &Plan) -> Option<String> {
    if !plan.left_out() {
        return None;
    }
    let mut parts = Vec::new();
    for l in plan.levels.iter().filter(|l| l.findings > 0) {
        let level = match l.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let how = match l.fold {
            Fold::BySubject => format!("{} annotation(s), one per code and subject", l.annotations),
            Fold::ByCode => format!("{} annotation(s), one per code", l.annotations),
            Fold::ByCodeWithRest => format!("{} annotation(s), one per code, the last listing the codes left over", l.annotations),
            Fold::None => "not annotated".to_string(),
        };
        parts.push(format!("{} {level} finding(s) in {} code/subject group(s): {how}", l.findings, l.groups));
    }
    Some(format!(
        "GitHub shows 10 annotations of each level per step, so they are grouped: {}. Every finding is in the full report.",
        parts.join("; ")
    ))
}
