//! Recipe-controlled text made safe to print. A recipe key, value or file
//! name can hold any character: a newline followed by `::error` becomes a
//! GitHub workflow command when a report is printed in an Actions job, and ESC
//! or CR sequences rewrite a terminal. The text, Markdown and GitHub renderers
//! read a copy of the report whose strings show control characters as escapes
//! (`\n`, `\x1b`); JSON and SARIF escape them by their own grammar.

use crate::finding::AuditReport;
pub(crate) use crate::text::escape::{is_unsafe, visible};
use std::borrow::Cow;

/// Every string of a report that a recipe (or a user's rule file) can
/// control, visited by shared (`for_each_string!(r, f)`) or by mutable
/// reference (`for_each_string!(r, f, mut)`): one list for the check and the
/// change.
macro_rules! for_each_string {
    ($report:expr, $visit:expr $(, $mut:tt)?) => {{
        #[allow(unused_mut)] // a visitor that only writes through its argument needs no `mut`
        let mut visit = $visit;
        for f in & $($mut)? $report.findings {
            for s in [& $($mut)? f.subject, & $($mut)? f.location.path] {
                visit(s);
            }
            for s in [& $($mut)? f.deployment, & $($mut)? f.role].into_iter().flatten() {
                visit(s);
            }
            for e in & $($mut)? f.evidence {
                for s in [& $($mut)? e.path, & $($mut)? e.ref_name] {
                    visit(s);
                }
                for s in [& $($mut)? e.note, & $($mut)? e.engine].into_iter().flatten() {
                    visit(s);
                }
            }
            for a in & $($mut)? f.affects {
                visit(& $($mut)? a.path);
            }
        }
        for b in & $($mut)? $report.bumps {
            for s in [& $($mut)? b.engine, & $($mut)? b.to] {
                visit(s);
            }
            for s in (& $($mut)? b.from).into_iter().chain(& $($mut)? b.how) {
                visit(s);
            }
        }
        for s in & $($mut)? $report.notes {
            visit(s);
        }
        for p in & $($mut)? $report.problems {
            for s in [& $($mut)? p.path, & $($mut)? p.message] {
                visit(s);
            }
        }
        for r in & $($mut)? $report.rules {
            for s in [& $($mut)? r.id, & $($mut)? r.name, & $($mut)? r.title, & $($mut)? r.doc] {
                visit(s);
            }
        }
    }};
}

/// The report with every string a recipe (or a user's rule file) can control
/// made [`visible`]; borrowed when there is nothing to escape, the usual case.
pub(crate) fn for_display(report: &AuditReport) -> Cow<'_, AuditReport> {
    let unsafe_text = |s: &str| s.chars().any(is_unsafe);
    let mut needs = report.sources.keys().any(|k| unsafe_text(k));
    for_each_string!(report, |s: &String| needs |= unsafe_text(s));
    // A finding's typed facts all reach its message, name, doc page or fix.
    needs |= report.findings.iter().any(|f| {
        unsafe_text(&f.message())
            || unsafe_text(f.name())
            || unsafe_text(&f.doc())
            || f.fix.as_ref().is_some_and(|fix| unsafe_text(&fix.description(super::Lang::En)))
    });
    if !needs {
        return Cow::Borrowed(report);
    }
    let mut copy = report.clone();
    let escape = |s: &mut String| {
        if let Cow::Owned(v) = visible(s) {
            *s = v;
        }
    };
    for_each_string!(copy, escape, mut);
    for f in &mut copy.findings {
        f.kind = map_strings(&f.kind, escape);
        if let Some(fix) = &mut f.fix {
            fix.actions = map_strings(&fix.actions, escape);
        }
    }
    // Findings index the recipe texts by path: keep the keys in step.
    copy.sources = copy.sources.into_iter().map(|(k, v)| (visible(&k).into_owned(), v)).collect();
    Cow::Owned(copy)
}

/// `value` with `f` applied to every string in it: typed facts are escaped
/// (and made relative, for the demo) field by field without naming the fields.
pub(crate) fn map_strings<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(value: &T, mut f: impl FnMut(&mut String)) -> T {
    fn walk(v: &mut serde_json::Value, f: &mut dyn FnMut(&mut String)) {
        match v {
            serde_json::Value::String(s) => f(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|i| walk(i, f)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|i| walk(i, f)),
            _ => {}
        }
    }
    let Ok(mut json) = serde_json::to_value(value) else { return value.clone() };
    walk(&mut json, &mut f);
    serde_json::from_value(json).unwrap_or_else(|_| value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Location};

    #[test]
    fn a_report_is_copied_only_when_something_needs_escaping() {
        use crate::finding::FindingKind;
        let at = Location { path: "r.yaml".into(), line: 1, column: 1, offset: None, len: None };
        let unknown = |option: &str| FindingKind::UnknownFlag {
            option: option.into(),
            target: "v1".into(),
            was_at: None,
            suggestion: None,
            ambiguous: vec![],
            history: None,
            worker: None,
        };
        let mut report = AuditReport::default();
        report.findings.push(Finding::new(unknown("--x"), at.clone(), "x"));
        assert!(matches!(for_display(&report), Cow::Borrowed(_)));
        report.findings.push(Finding::new(unknown("--a\n::error::pwned"), at, "a\n::error::pwned"));
        report.sources.insert("r.yaml".into(), "text".into());
        let shown = for_display(&report);
        assert_eq!(shown.findings[1].subject, "a\\n::error::pwned");
        assert!(!shown.findings[1].message().contains('\n'), "the typed facts are escaped too: {}", shown.findings[1].message());
        assert_eq!(shown.sources["r.yaml"], "text", "recipe texts keep their bytes: spans index them");
    }
}
