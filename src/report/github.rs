//! GitHub Actions workflow commands: `::error`, `::warning` and `::notice` (for
//! info) lines that the runner turns into annotations on the recipe lines.
//!
//! `::error file=recipes/a.yaml,line=90,col=7,endLine=90,endColumn=24,title=EA003 deprecated-alias::message`
//!
//! Escaping follows the runner's rules (actions/toolkit `command.ts`): in the
//! message `%`, `\r`, `\n` become `%25`, `%0D`, `%0A`; in properties `:` and `,`
//! also become `%3A` and `%2C`. The message carries the evidence, the fix and the
//! doc page on further lines. Findings in Dynamo's source are annotated on each
//! recipe place that installs that Dynamo build.

use super::{evidence_plain, in_engine_source, repo_path, Finding, Location, RenderOptions};
use crate::codes::Severity;
use crate::finding::AuditReport;
use std::fmt::Write;

/// Escape a command's message.
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escape a command property value.
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// Where the span ends (line, column), when the recipe text is known.
fn end_of(report: &AuditReport, loc: &Location) -> Option<(u32, u32)> {
    let text = report.sources.get(&loc.path)?;
    let end = loc.offset? + loc.len?;
    if end > text.len() || !text.is_char_boundary(end) || loc.len? == 0 {
        return None;
    }
    // The last character of the span, inclusive (as GitHub counts it).
    let before = &text[..end];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() as u32;
    (column >= 1).then_some((line, column))
}

fn message(f: &Finding, prefix: &str) -> String {
    let mut m = format!("{prefix}{}", f.message());
    for e in &f.evidence {
        let note = e.note.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
        let _ = write!(m, "\nevidence: {}{note}", evidence_plain(e));
    }
    if let Some(fix) = &f.fix {
        let applies = if fix.edits.is_empty() { "" } else { " (engine-audit --fix applies it)" };
        let _ = write!(m, "\nfix: {}{applies}", fix.description(super::Lang::En));
    }
    let _ = write!(m, "\ndocs: {}", f.doc());
    m
}

fn annotation(out: &mut String, report: &AuditReport, f: &Finding, place: Option<&Location>, prefix: &str, opts: &RenderOptions) {
    let mut props: Vec<String> = Vec::new();
    if let Some(p) = place.filter(|p| !p.path.is_empty()) {
        props.push(format!("file={}", escape_property(&repo_path(&p.path, opts))));
        props.push(format!("line={}", p.line.max(1)));
        props.push(format!("col={}", p.column.max(1)));
        if let Some((line, column)) = end_of(report, p) {
            props.push(format!("endLine={line}"));
            props.push(format!("endColumn={column}"));
        }
    }
    let role = f.role.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
    props.push(format!("title={}", escape_property(&format!("{} {}{role}", f.code(), f.name()))));
    let _ = writeln!(out, "::{} {}::{}", command(f.severity), props.join(","), escape_data(&message(f, prefix)));
}

/// The github format.
pub(crate) struct Github;

impl super::Render for Github {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String {
        render(report, opts)
    }
}

fn render(report: &AuditReport, opts: &RenderOptions) -> String {
    let report = &*super::escape::for_display(report);
    let mut out = String::new();
    for f in &report.findings {
        if in_engine_source(f) {
            let prefix = super::installed_here(f);
            if f.affects.is_empty() {
                annotation(&mut out, report, f, None, &format!("{}:{}: ", f.location.path, f.location.line), opts);
            }
            for place in &f.affects {
                annotation(&mut out, report, f, Some(place), &prefix, opts);
            }
        } else {
            annotation(&mut out, report, f, Some(&f.location), "", opts);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(escape_data("50% done\r\nnext: a,b"), "50%25 done%0D%0Anext: a,b");
        assert_eq!(escape_property("EA003 deprecated-alias: a,b%\n"), "EA003 deprecated-alias%3A a%2Cb%25%0A");
    }
}
