//! The matrix as one self-contained HTML page: a heatmap per engine (rows =
//! deployments grouped by master-config key or folder, columns = releases,
//! each cell coloured by its worst severity with its findings on hover), the
//! count of deployments that break at each release in the column header, each
//! row's newest safe target and first break, its full answer in a details
//! row, and the deployments not audited. Inline CSS only: no script, nothing
//! fetched. Every string is escaped: recipe paths and messages are input.

use super::text::{dynamo_note, mark, verdict};
use super::{Cell, EngineMatrix, Matrix, Render, RenderOptions, Row, Start};
use crate::codes::Severity;
use std::collections::BTreeMap;

/// The matrix as an HTML page.
pub(crate) struct Html;

impl Render for Html {
    fn render(&self, m: &Matrix, _: &RenderOptions) -> String {
        render(m)
    }
}

/// Findings listed in a cell's hover text; the rest are counted. A cell of a
/// large tree can hold dozens, and the page repeats them per release.
const HOVER_FINDINGS: usize = 8;
/// Characters of one message in the hover text.
const HOVER_MESSAGE: usize = 160;

const STYLE: &str = "\
body{font:13px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:16px;color:#1f2328;background:#fff}\
h1{font-size:18px;margin:0 0 8px}h2{font-size:15px;margin:20px 0 6px}\
p{margin:4px 0}code{font:12px ui-monospace,Menlo,Consolas,monospace}\
table{border-collapse:collapse;margin:6px 0}\
th,td{border:1px solid #d0d7de;padding:2px 6px;vertical-align:top}\
thead th{background:#f6f8fa;font-weight:600;white-space:nowrap}\
th small{display:block;font-weight:400;color:#cf222e}\
tr.group th{background:#eaeef2;text-align:left;font-weight:600}\
td.name{max-width:34em;overflow-wrap:anywhere}\
td.c{text-align:center;font:12px ui-monospace,Menlo,Consolas,monospace;min-width:3.2em;cursor:default}\
.ok{background:#dafbe1}.info{background:#ddf4ff}.warning{background:#fff8c5}\
.error{background:#ff8182;font-weight:700}.na{background:#d0d7de;color:#57606a}\
td.more{border-top:none;padding:0 6px 2px;color:#57606a}\
details summary{cursor:pointer}\
.legend span{display:inline-block;padding:0 6px;margin-right:4px;border:1px solid #d0d7de;font:12px ui-monospace,Menlo,Consolas,monospace}";

/// `s` escaped for HTML text and attribute values; control characters shown.
fn esc(s: &str) -> String {
    let s = crate::text::escape::visible(s);
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn render(m: &Matrix) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>engine-audit matrix</title>\n");
    out.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n<h1>engine-audit matrix</h1>\n"));
    out.push_str(
        "<p class=\"legend\"><span class=\"ok\">ok</span>no finding \
         <span class=\"info\">iN</span>N findings, info at worst \
         <span class=\"warning\">WN</span>warnings at worst \
         <span class=\"error\">EN</span>N errors \
         <span class=\"na\">?</span>not audited there; blank: before the release the deployment runs today. \
         Hover a cell for its findings; open a row's details for its full answer.</p>\n",
    );
    for e in &m.engines {
        engine(e, &mut out);
    }
    if !m.not_audited.is_empty() {
        out.push_str(&format!("<h2>Not audited ({})</h2>\n<ul>\n", m.not_audited.len()));
        for n in &m.not_audited {
            let variant = n.variant.as_ref().map(|v| format!(" [{v}]")).unwrap_or_default();
            let enable = n.enable.as_ref().map(|e| format!("; {e}")).unwrap_or_default();
            out.push_str(&format!(
                "<li><code>{}</code>: {}: {}</li>\n",
                esc(&format!("{}: {}{variant}", n.path, n.deployment)),
                esc(&crate::profiles::display(&n.engine)),
                esc(&format!("{}{enable}", n.reason))
            ));
        }
        out.push_str("</ul>\n");
    }
    if m.engines.is_empty() && m.not_audited.is_empty() {
        out.push_str("<p>No deployment found.</p>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// Where a row is listed: under the master-config key that runs it, else its folder.
fn group_of(r: &Row) -> String {
    match &r.master_key {
        Some(k) => format!("master key {k}"),
        None => match r.path.rfind('/') {
            Some(i) => format!("{}/", &r.path[..i]),
            None => "./".into(),
        },
    }
}

fn engine(e: &EngineMatrix, out: &mut String) {
    let display = crate::profiles::display(e.engine);
    out.push_str(&format!("<h2>{}: {} × {} releases</h2>\n", esc(&display), e.count(), e.releases.len()));
    if let Some(note) = dynamo_note(e) {
        out.push_str(&format!("<p>{}</p>\n", esc(&note)));
    }
    let width = e.releases.len() + 4;
    out.push_str("<table>\n<thead><tr><th>deployment</th><th>runs today</th>");
    for (release, n) in e.releases.iter().zip(e.breaking()) {
        let breaks = if n == 0 { String::new() } else { format!("<small>{n} break{}</small>", if n == 1 { "" } else { "s" }) };
        out.push_str(&format!("<th title=\"{n} deployments with an error at {r}\">{r}{breaks}</th>", r = esc(release)));
    }
    out.push_str("<th>newest safe</th><th>first break</th></tr></thead>\n<tbody>\n");
    let mut groups: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in &e.rows {
        groups.entry(group_of(r)).or_default().push(r);
    }
    for (group, rows) in &groups {
        out.push_str(&format!("<tr class=\"group\"><th colspan=\"{width}\">{} ({})</th></tr>\n", esc(group), rows.len()));
        for r in rows {
            row(r, &e.releases, width, out);
        }
    }
    out.push_str("</tbody>\n</table>\n");
}

fn row(r: &Row, releases: &[String], width: usize, out: &mut String) {
    let name = r.path.rsplit('/').next().map_or(r.name(), |file| format!("{file}: {}", r.name()));
    out.push_str(&format!("<tr><td class=\"name\" title=\"{}\">{}</td>", esc(&r.label()), esc(&name)));
    let today = match &r.start {
        Start::Current { release, how } | Start::PastWindow { release, how } => (release.clone(), how.clone()),
        Start::Since { why } => ("unknown (from --since)".into(), why.clone()),
        Start::Unknown { why } => ("unknown".into(), why.clone()),
    };
    out.push_str(&format!("<td title=\"{}\">{}</td>", esc(&today.1), esc(&today.0)));
    for (c, release) in r.cells.iter().zip(releases) {
        let (class, hover) = match c {
            None => ("", String::new()),
            Some(Cell::NotAudited { reason }) => ("na", format!("{release}: not audited: {reason}")),
            Some(Cell::Audited(n)) => {
                let class = match n.worst {
                    None => "ok",
                    Some(Severity::Info) => "info",
                    Some(Severity::Warning) => "warning",
                    Some(Severity::Error) => "error",
                };
                (class, hover(release, n))
            }
        };
        // One line a finding: each escaped on its own, joined by an escaped line break.
        let title: Vec<String> = hover.lines().map(esc).collect();
        out.push_str(&format!("<td class=\"c {class}\" title=\"{}\">{}</td>", title.join("&#10;"), esc(&mark(c))));
    }
    let safe = match (&r.newest_safe, &r.first_break, &r.start) {
        (Some(s), _, _) => s.clone(),
        (None, _, Start::Unknown { .. }) => "no claim".into(),
        (None, Some(_), _) => "none".into(),
        (None, None, _) => "—".into(),
    };
    let brk = match (&r.first_break, &r.unknown_at) {
        (Some(b), _) => format!("{} {} <code>{}</code>", esc(&b.release), esc(&b.code), esc(&b.subject)),
        (None, Some(at)) => format!("not audited at {}", esc(at)),
        (None, None) => "—".into(),
    };
    out.push_str(&format!("<td>{}</td><td>{brk}</td></tr>\n", esc(&safe)));
    out.push_str(&format!(
        "<tr><td class=\"more\" colspan=\"{width}\"><details><summary>answer</summary>{}</details></td></tr>\n",
        esc(&verdict(r))
    ));
}

/// A cell's findings, one a line: `error EA001 cuda-graph-max-bs (path:14): message`.
fn hover(release: &str, n: &super::Counts) -> String {
    let mut s = format!("{release}: {} error{}", n.errors, if n.errors == 1 { "" } else { "s" });
    s.push_str(&format!(
        ", {} breaks, {} degrades, {} informs, {} input problems, {} risks",
        n.breaks, n.degrades, n.informs, n.input_problems, n.risks
    ));
    for f in n.findings.iter().take(HOVER_FINDINGS) {
        // A message is one line of the hover text, whatever it holds.
        let mut message: String = f.message.replace('\n', " ").chars().take(HOVER_MESSAGE).collect();
        if f.message.chars().count() > HOVER_MESSAGE {
            message.push('…');
        }
        let line = format!("{} {} {} ({}): {message}", f.severity.as_str(), f.code, f.subject, f.at);
        s.push('\n');
        s.push_str(&line.replace('\n', " "));
    }
    if n.findings.len() > HOVER_FINDINGS {
        s.push_str(&format!("\n… {} more", n.findings.len() - HOVER_FINDINGS));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipe_text_is_escaped_in_text_and_attributes() {
        assert_eq!(esc("<img src=x onerror='a()'>&\"\n"), "&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;&quot;\\n");
    }
}
