//! The matrix as text: per engine, a table of rows × releases (each cell the
//! worst severity and how many findings), the count of rows that break at
//! each release, then per row its newest safe target and first break.

use super::{Cell, EngineMatrix, Matrix, Render, RenderOptions, Row, Start};
use crate::codes::Severity;

/// The matrix as a text table per engine.
pub(crate) struct Text;

impl Render for Text {
    fn render(&self, m: &Matrix, _: &RenderOptions) -> String {
        render(m)
    }
}

/// `ok` (nothing), `i2` (info only), `W3` (warnings at worst), `E1` (errors:
/// how many), `?` (not audited at that release), blank before the row starts.
pub(super) fn mark(cell: &Option<Cell>) -> String {
    match cell {
        None => String::new(),
        Some(Cell::NotAudited { .. }) => "?".into(),
        Some(Cell::Audited(c)) => {
            let total = c.breaks + c.degrades + c.informs + c.input_problems + c.risks;
            match c.worst {
                None => "ok".into(),
                Some(Severity::Info) => format!("i{total}"),
                Some(Severity::Warning) => format!("W{total}"),
                Some(Severity::Error) => format!("E{}", c.errors),
            }
        }
    }
}

fn render(m: &Matrix) -> String {
    let mut out = String::new();
    for e in &m.engines {
        table(e, &mut out);
    }
    if !m.not_audited.is_empty() {
        out.push_str(&format!("Not audited ({}):\n", m.not_audited.len()));
        for n in &m.not_audited {
            let variant = n.variant.as_ref().map(|v| format!(" [{v}]")).unwrap_or_default();
            let enable = n.enable.as_ref().map(|e| format!("; {e}")).unwrap_or_default();
            let engine = crate::profiles::display(&n.engine);
            out.push_str(&format!("  {}: {}{variant}: {engine}: {}{enable}\n", n.path, n.deployment, n.reason));
        }
    }
    if m.engines.is_empty() && m.not_audited.is_empty() {
        out.push_str("No deployment found.\n");
    }
    out
}

fn table(e: &EngineMatrix, out: &mut String) {
    let display = crate::profiles::display(e.engine);
    out.push_str(&format!(
        "{display}: {} × {} release{} ({} … {})\n\n",
        e.count(),
        e.releases.len(),
        if e.releases.len() == 1 { "" } else { "s" },
        e.releases.first().map_or("", String::as_str),
        e.releases.last().map_or("", String::as_str),
    ));
    if let Some(note) = dynamo_note(e) {
        out.push_str(&format!("{note}\n\n"));
    }
    let widths: Vec<usize> = e.releases.iter().map(|r| r.chars().count().max(3)).collect();
    let line = |cells: Vec<String>, label: &str| -> String {
        let mut s = String::from(" ");
        for (c, w) in cells.iter().zip(&widths) {
            s.push_str(&format!(" {c:>w$}"));
        }
        format!("{s}  {label}\n")
    };
    out.push_str(&line(e.releases.clone(), "deployment"));
    for r in &e.rows {
        out.push_str(&line(r.cells.iter().map(mark).collect(), &r.label()));
    }
    out.push_str(&line(e.breaking().iter().map(|n| n.to_string()).collect(), "deployments with an error"));
    out.push_str("\n  ok: no finding; iN: N findings, info at worst; WN: warnings at worst; EN: N errors; ?: not audited there\n\n");
    for r in &e.rows {
        out.push_str(&format!("{}\n    {}\n", r.label(), verdict(r)));
    }
    out.push('\n');
}

/// With a Dynamo axis: which rows it splits.
pub(super) fn dynamo_note(e: &EngineMatrix) -> Option<String> {
    let (first, last) = (e.dynamo_releases.first()?, e.dynamo_releases.last()?);
    Some(format!(
        "× Dynamo {first} … {last}: a deployment with a `dynamo:` block has a row per Dynamo release (`× Dynamo vX`), the others one row"
    ))
}

/// One row's answer: where it starts, how far it is safe, what stops it.
pub(super) fn verdict(r: &Row) -> String {
    let start = match &r.start {
        Start::Current { release, how } => format!("current {release} ({how})"),
        Start::Since { why } => format!("current release unknown ({why}); from --since"),
        Start::Unknown { why } => format!("current release unknown ({why}): every release, no newest-safe claim"),
        Start::PastWindow { release, how } => format!("current {release} ({how}) is newer than every release in the window"),
    };
    let mut parts = vec![start];
    match (&r.newest_safe, &r.first_break) {
        (Some(safe), _) => parts.push(format!("newest safe: {safe}")),
        (None, Some(_)) if !matches!(r.start, Start::Unknown { .. }) => parts.push("no safe release in the window".into()),
        _ => {}
    }
    if let Some(b) = &r.first_break {
        let more = if b.errors > 1 { format!(" (+{} more errors)", b.errors - 1) } else { String::new() };
        let evidence = b.evidence.as_ref().map(|e| format!(" [evidence: {e}]")).unwrap_or_default();
        parts.push(format!("first break: {}: {} `{}` at {}: {}{evidence}{more}", b.release, b.code, b.subject, b.at, b.message));
    } else if let Some(at) = &r.unknown_at {
        parts.push(format!("not audited at {at}: nothing is claimed from there on"));
    } else if r.cells.iter().any(Option::is_some) {
        parts.push("no error in the window".into());
    }
    if let Some(f) = &r.after_fix {
        parts.push(after_fix(f, r.first_break.as_ref().map(|b| b.release.as_str())));
    }
    parts.join("; ")
}

/// `after --fix (2 fixes): safe up to v1.2.0` and what still stops it.
fn after_fix(f: &super::AfterFix, broke_at: Option<&str>) -> String {
    if f.fixes == 0 {
        return "--fix changes nothing there (no mechanical fix)".into();
    }
    let mut out = format!("after --fix ({} fix{})", f.fixes, if f.fixes == 1 { "" } else { "es" });
    match (&f.newest_safe, &f.first_break) {
        (Some(safe), None) => out.push_str(&format!(": safe up to {safe}")),
        (Some(safe), Some(b)) => out.push_str(&format!(": safe up to {safe}, then {}: {} `{}` at {}", b.release, b.code, b.subject, b.at)),
        (None, Some(b)) if Some(b.release.as_str()) == broke_at => {
            out.push_str(&format!(": still breaks at {}: {} `{}` at {}", b.release, b.code, b.subject, b.at))
        }
        (None, Some(b)) => out.push_str(&format!(": breaks at {}: {} `{}` at {}", b.release, b.code, b.subject, b.at)),
        (None, None) => out.push_str(": not audited"),
    }
    out
}
