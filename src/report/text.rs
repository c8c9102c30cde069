//! Text for terminals and logs: one miette diagnostic per finding, grouped by
//! file. Each shows the code and name (with its doc page), the message, the
//! recipe line with the span labelled, the engine evidence (`path:line @ ref` and
//! what it shows) and the fix as help. Findings in Dynamo's source, whose text is
//! not loaded, have no snippet: their evidence names the line. A summary ends it.

use super::{describe, evidence_plain, in_engine_source, Finding, Lang, RenderOptions};
use crate::codes::Severity;
use crate::finding::AuditReport;
use crate::text::excerpt::Excerpt;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};
use std::fmt::{self, Write};

/// One finding as a miette diagnostic.
struct FindingDiagnostic<'a> {
    finding: &'a Finding,
    code: String,
    message: String,
    source: Option<Excerpt>,
    label: Option<LabeledSpan>,
    help: Option<String>,
    /// The code's page, absolute (a log is read far from this repository).
    url: String,
}

impl fmt::Debug for FindingDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FindingDiagnostic").field("code", &self.code).finish()
    }
}
impl fmt::Display for FindingDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for FindingDiagnostic<'_> {}

impl Diagnostic for FindingDiagnostic<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(&self.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }
    fn url<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(&self.url))
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.label.clone().map(|l| Box::new(std::iter::once(l)) as Box<dyn Iterator<Item = LabeledSpan>>)
    }
}

/// The recipe text a finding's span indexes into, when it is loaded and the span fits.
fn snippet<'a>(report: &'a AuditReport, f: &Finding) -> Option<(&'a str, usize, usize)> {
    let text = report.sources.get(&f.location.path)?;
    let (offset, len) = (f.location.offset?, f.location.len.unwrap_or(0));
    (offset + len <= text.len() && text.is_char_boundary(offset) && text.is_char_boundary(offset + len)).then_some((
        text.as_str(),
        offset,
        len,
    ))
}

fn diagnostic<'a>(report: &'a AuditReport, f: &'a Finding, opts: &RenderOptions) -> FindingDiagnostic<'a> {
    let rule_title = report.rules.iter().find(|r| r.id == f.code()).map(|r| r.title.as_str());
    let role = f.role.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
    let (source, label) = match snippet(report, f) {
        Some((text, offset, len)) => {
            let mut label = describe::phrase(f, Lang::En, rule_title).replace('`', "");
            if let Some(r) = &f.role {
                label = format!("{r}: {label}");
            }
            // Only the lines around the finding, cut on long lines: a flag deep in a
            // generated one-line mapping must not print the whole line.
            let (excerpt, at) = Excerpt::new(&f.location.path, text, &[(offset, len).into()]);
            (Some(excerpt), Some(LabeledSpan::new_with_span(Some(label), at[0])))
        }
        None => (None, None),
    };
    // Without a snippet, say where: the recipe line, or for engine-side findings
    // the recipe places they affect (the engine file is in the evidence).
    let mut message = f.message().clone();
    if source.is_none() && !in_engine_source(f) && !f.location.path.is_empty() {
        message = format!("{}:{}:{}: {message}", f.location.path, f.location.line, f.location.column);
    }
    let help = f.fix.as_ref().map(|fix| {
        let applies = if fix.edits.is_empty() { "" } else { " (--fix applies it)" };
        format!("{}{applies}", fix.description(super::Lang::En))
    });
    let url = super::docs::link(&opts.docs_url, &f.doc());
    FindingDiagnostic { finding: f, code: format!("{} {}{role}", f.code(), f.name()), message, source, label, help, url }
}

/// The lines under the diagnostic: each piece of evidence (`path:line @ ref — what
/// it shows`) and, for engine-side findings, the recipe places affected.
fn trailer(f: &Finding, opts: &RenderOptions) -> String {
    let label = |l: &str| if opts.color { format!("\x1b[36m{l}\x1b[0m") } else { l.to_string() };
    let mut out = String::new();
    for e in &f.evidence {
        let note = e.note.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
        let _ = writeln!(out, "  {} {}{note}", label("evidence:"), evidence_plain(e));
    }
    const SHOWN: usize = 5;
    let consumer = describe::consumer_display(f).unwrap_or("build");
    for a in f.affects.iter().take(SHOWN) {
        let _ = writeln!(out, "  {} {}:{}:{} installs this {consumer}", label("affects:"), a.path, a.line, a.column);
    }
    if f.affects.len() > SHOWN {
        let _ = writeln!(out, "  {} {} more recipe places install it", label("affects:"), f.affects.len() - SHOWN);
    }
    out
}

fn handler(opts: &RenderOptions) -> GraphicalReportHandler {
    let theme = if opts.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_width(opts.width)
        .with_context_lines(1)
        .without_syntax_highlighting();
    super::unbroken::handler(handler)
}

/// Render one finding (used by the full report and by tests).
pub(crate) fn render_finding(report: &AuditReport, f: &Finding, opts: &RenderOptions) -> String {
    let mut out = String::new();
    let _ = handler(opts).render_report(&mut out, &diagnostic(report, f, opts));
    let mut out = out.trim_end().to_string();
    out.push('\n');
    out.push_str(&trailer(f, opts));
    out
}

/// The text format.
pub(crate) struct Text;

impl super::Render for Text {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String {
        render(report, opts)
    }
}

fn render(report: &AuditReport, opts: &RenderOptions) -> String {
    let report = &*super::escape::for_display(report);
    let mut out = String::new();
    for bump in &report.bumps {
        let _ = writeln!(
            out,
            "{} {} → {} ({} deployment{}; {})",
            bump.engine,
            bump.from.as_deref().unwrap_or("?"),
            bump.to,
            bump.deployments,
            if bump.deployments == 1 { "" } else { "s" },
            bump.how.join("; ")
        );
    }
    // The user's files first, then findings in engine source.
    let ordered = report.findings.iter().filter(|f| !in_engine_source(f)).chain(report.findings.iter().filter(|f| in_engine_source(f)));
    let mut current = None;
    for f in ordered {
        if current != Some(&f.location.path) {
            let title = match f.location.path.as_str() {
                "" => "(no file)".to_string(),
                p if in_engine_source(f) => match describe::consumer_build(f) {
                    Some(build) => format!("{p} ({build} source)"),
                    None => format!("{p} (engine source)"),
                },
                p => p.to_string(),
            };
            blank_line(&mut out);
            let _ = writeln!(out, "── {title}\n");
            current = Some(&f.location.path);
        }
        out.push_str(&render_finding(report, f, opts));
        out.push('\n');
    }
    if !report.notes.is_empty() {
        blank_line(&mut out);
        let _ = writeln!(out, "notes:");
        for n in &report.notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    if !report.problems.is_empty() {
        blank_line(&mut out);
        let _ = writeln!(out, "not fully read:");
        for p in &report.problems {
            let _ = writeln!(out, "  {}: {}", p.path, p.message);
        }
    }
    if !report.coverage.not_audited.is_empty() {
        blank_line(&mut out);
        let _ = writeln!(out, "not audited:");
        for n in &report.coverage.not_audited {
            let _ = writeln!(out, "  {}", super::not_audited_line(n));
        }
    }
    blank_line(&mut out);
    let _ = writeln!(out, "{}", summary_line(report));
    out
}

/// End `out` with one empty line (none at the very start).
fn blank_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

/// `3 errors, 10 warnings, 1 info in 2 deployments of 3 recipe files; sglang v1.0.0 → v1.1.0; dynamo 0.1.0`
pub(crate) fn summary_line(report: &AuditReport) -> String {
    let mut refs = Vec::new();
    for engine in crate::profiles::PROFILES.iter().map(|p| p.id) {
        let labels = super::bump_labels(report, engine);
        if !labels.is_empty() {
            refs.push(format!("{engine} {}", labels.join(", ")));
        }
    }
    let refs = if refs.is_empty() { String::new() } else { format!("; {}", refs.join("; ")) };
    let suppressed = if report.suppressed > 0 { format!("; {} suppressed", report.suppressed) } else { String::new() };
    let coverage = super::coverage_phrase(report).map(|c| format!("; {c}")).unwrap_or_default();
    format!("{}{suppressed}{refs}{coverage}", super::counts_phrase(report, ", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{FindingKind, Location};

    #[test]
    fn a_long_path_and_url_are_never_cut() {
        let path = format!("recipes/{}/disagg/decode-only-with-a-long-name.yaml", "gb200-fp8-deepseek-r1-1k8k".repeat(3));
        let url = "https://github.com/sgl-project/sglang/blob/v0.5.19/python/sglang/srt/server_args.py#L1234-L1290";
        let message = format!("the deprecated flag is read at {url} and nowhere else in the target release");
        let loc = Location { path: path.clone(), line: 3, column: 1, offset: None, len: None };
        let kind = FindingKind::Rule { id: "R001".into(), name: "r".into(), message, doc: "rules/R001.yaml".into() };
        let f = Finding::new(kind, loc, "x");
        let report = AuditReport { findings: vec![f.clone()], ..AuditReport::default() };
        let opts = RenderOptions { width: 60, ..RenderOptions::default() };
        let whole = render(&report, &opts);
        assert!(whole.lines().any(|l| l.contains(&path)), "the file's heading holds the whole path:\n{whole}");
        let one = render_finding(&report, &f, &opts);
        assert!(one.lines().any(|l| l.contains(url)), "the message holds the whole URL:\n{one}");
    }
}
