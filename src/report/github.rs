//! GitHub Actions workflow commands: `::error`, `::warning` and `::notice` (for
//! info) lines that the runner turns into annotations on the recipe lines.
//!
//! `::error file=recipes/a.yaml,line=90,col=7,endLine=90,endColumn=24,title=EA003 deprecated-alias::message`
//!
//! Escaping follows the runner's rules (actions/toolkit `command.ts`): in the
//! message `%`, `\r`, `\n` become `%25`, `%0D`, `%0A`; in properties `:` and `,`
//! also become `%3A` and `%2C`. The message carries the evidence, the fix and the
//! doc page (absolute) on further lines. Findings in Dynamo's source are
//! annotated on the recipe places that install that Dynamo build.
//!
//! Findings are grouped to fit GitHub's 10 annotations per level per step
//! (`report::annotations`): one annotation per code and subject on its first
//! place, naming the other places; paths are relative to the repository.

use super::annotations::{Annotation, Place, Shown};
use super::{evidence_plain, repo_path, Finding, Location, RenderOptions};
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

fn message(f: &Finding, prefix: &str, opts: &RenderOptions) -> String {
    let mut m = format!("{prefix}{}", f.message());
    for e in &f.evidence {
        let note = e.note.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
        let _ = write!(m, "\nevidence: {}{note}", evidence_plain(e));
    }
    if let Some(fix) = &f.fix {
        let applies = if fix.edits.is_empty() { "" } else { " (engine-audit --fix applies it)" };
        let _ = write!(m, "\nfix: {}{applies}", fix.description(super::Lang::En));
    }
    let _ = write!(m, "\ndocs: {}", super::docs::link(&opts.docs_url, &f.doc()));
    m
}

/// `file=…,line=…,col=…[,endLine=…,endColumn=…]` of a place, or nothing.
fn place_props(report: &AuditReport, place: Option<&Location>, opts: &RenderOptions) -> Vec<String> {
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
    props
}

fn write_command(out: &mut String, severity: Severity, mut props: Vec<String>, title: &str, message: &str) {
    props.push(format!("title={}", escape_property(title)));
    let _ = writeln!(out, "::{} {}::{}", command(severity), props.join(","), escape_data(message));
}

/// The other places of a group, after the first: `path:line` (with the role),
/// at most [`LISTED`], then how many more recipe files.
fn also_in(places: &[Place], opts: &RenderOptions) -> String {
    const LISTED: usize = 10;
    let first_path = places[0].at.map(|p| p.path.as_str());
    let mut seen = std::collections::BTreeSet::new();
    let mut listed = Vec::new();
    let mut files = std::collections::BTreeSet::new();
    for p in &places[1..] {
        let Some(at) = p.at else { continue };
        if Some(at.path.as_str()) != first_path {
            files.insert(at.path.as_str());
        }
        let role = p.finding.role.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let item = format!("{}:{}{role}", repo_path(&at.path, opts), at.line);
        if seen.insert(item.clone()) && listed.len() < LISTED {
            listed.push(item);
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let more_places = seen.len() - listed.len();
    let more = if more_places > 0 { format!(", and {more_places} more places") } else { String::new() };
    format!("\nalso in {} more recipe file(s): {}{more}", files.len(), listed.join(", "))
}

/// Distinct recipe files of the places.
fn files(places: &[Place]) -> usize {
    places.iter().filter_map(|p| p.at.map(|a| a.path.as_str())).collect::<std::collections::BTreeSet<_>>().len()
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn annotation(out: &mut String, report: &AuditReport, a: &Annotation, opts: &RenderOptions) {
    match &a.shown {
        Shown::Subject { places } => {
            let first = &places[0];
            let f = first.finding;
            let role = f.role.as_deref().filter(|_| places.len() == 1).map(|r| format!(" [{r}]")).unwrap_or_default();
            let spread = match files(places) {
                0 | 1 if places.len() == 1 => String::new(),
                n => format!(" ({} in {})", count(places.len(), "place", "places"), count(n, "recipe file", "recipe files")),
            };
            let title = format!("{} {}: {}{role}{spread}", f.code(), f.name(), f.subject);
            let message = format!("{}{}", message(f, &first.prefix, opts), also_in(places, opts));
            write_command(out, a.severity, place_props(report, first.at, opts), &title, &message);
        }
        Shown::Code { places, subjects } => {
            let first = &places[0];
            let f = first.finding;
            let what = match subjects.as_slice() {
                [(only, _)] => only.clone(),
                _ => count(subjects.len(), "subject", "subjects"),
            };
            let title = format!(
                "{} {}: {what} ({} in {})",
                f.code(),
                f.name(),
                count(places.len(), "place", "places"),
                count(files(places), "recipe file", "recipe files")
            );
            let listed: Vec<String> = subjects.iter().map(|(s, n)| format!("`{s}` ({n})")).collect();
            let message = format!(
                "{} {}, findings per subject: {}.\nThe first, here: {}{}",
                f.code(),
                f.name(),
                listed.join(", "),
                message(f, &first.prefix, opts),
                also_in(places, opts)
            );
            write_command(out, a.severity, place_props(report, first.at, opts), &title, &message);
        }
        Shown::Rest { codes } => {
            let total: usize = codes.iter().map(|c| c.2).sum();
            let title = format!("{} more codes ({} findings) without an annotation of their own", codes.len(), total);
            let listed: Vec<String> = codes.iter().map(|(code, name, n)| format!("{code} {name} ({n})")).collect();
            let message =
                format!("{}. GitHub shows 10 annotations of each level per step; every finding is in the full report.", listed.join(", "));
            write_command(out, a.severity, Vec::new(), &title, &message);
        }
    }
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
    let plan = super::annotations::plan(report, opts);
    let mut out = String::new();
    for a in &plan.annotations {
        annotation(&mut out, report, a, opts);
    }
    // A plain line: the runner shows it in the log without taking an annotation slot.
    if let Some(line) = super::annotations::summary_line(&plan) {
        let _ = writeln!(out, "engine-audit: {line}");
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
