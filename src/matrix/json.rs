//! The matrix as JSON, versioned (docs/matrix.md describes every field).

use super::{Break, Cell, Matrix, Render, RenderOptions, Start};
use crate::audit::NotAudited;
use crate::codes::Severity;
use serde::Serialize;

/// Bumped on any change a reader could trip on (a field removed or changed in meaning).
/// 2: rows of a Dynamo axis (`dynamo_releases`, `rows[].dynamo`): a
/// deployment may have several rows.
pub(crate) const VERSION: u32 = 2;

/// The matrix as versioned JSON.
pub(crate) struct Json;

impl Render for Json {
    fn render(&self, m: &Matrix, _: &RenderOptions) -> String {
        render(m)
    }
}

#[derive(Serialize)]
struct Doc<'a> {
    version: u32,
    engines: Vec<EngineDoc<'a>>,
    not_audited: &'a [NotAudited],
}

#[derive(Serialize)]
struct EngineDoc<'a> {
    engine: &'a str,
    releases: &'a [String],
    /// The Dynamo releases crossed with the engine's; empty without `--dynamo-from`/`--dynamo-to`.
    dynamo_releases: &'a [String],
    /// Per release, the rows with an error there.
    breaking: Vec<usize>,
    rows: Vec<RowDoc<'a>>,
}

#[derive(Serialize)]
struct RowDoc<'a> {
    path: &'a str,
    deployment: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: &'a Option<String>,
    /// The Dynamo release of this row, on a Dynamo axis.
    #[serde(skip_serializing_if = "Option::is_none")]
    dynamo: &'a Option<String>,
    start: StartDoc<'a>,
    cells: Vec<Option<CellDoc<'a>>>,
    newest_safe: &'a Option<String>,
    first_break: Option<&'a Break>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_at: &'a Option<String>,
    /// With `--fix`, for a row that breaks.
    #[serde(skip_serializing_if = "Option::is_none")]
    after_fix: Option<AfterFixDoc<'a>>,
}

#[derive(Serialize)]
struct AfterFixDoc<'a> {
    fixes: usize,
    newest_safe: &'a Option<String>,
    first_break: Option<&'a Break>,
}

#[derive(Serialize)]
struct StartDoc<'a> {
    /// `current`, `since`, `unknown` or `past_window`.
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    release: Option<&'a str>,
    /// How the current release was found, or why it could not be.
    how: &'a str,
}

#[derive(Serialize)]
struct CellDoc<'a> {
    release: &'a str,
    audited: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    worst: Option<Severity>,
    errors: usize,
    breaks: usize,
    degrades: usize,
    informs: usize,
    input_problems: usize,
    risks: usize,
    codes: &'a [String],
}

fn render(m: &Matrix) -> String {
    let doc = Doc {
        version: VERSION,
        engines: m
            .engines
            .iter()
            .map(|e| EngineDoc {
                engine: e.engine,
                releases: &e.releases,
                dynamo_releases: &e.dynamo_releases,
                breaking: e.breaking(),
                rows: e
                    .rows
                    .iter()
                    .map(|r| RowDoc {
                        path: &r.path,
                        deployment: &r.deployment,
                        variant: &r.variant,
                        dynamo: &r.dynamo,
                        start: start(&r.start),
                        cells: r.cells.iter().zip(&e.releases).map(|(c, release)| c.as_ref().map(|c| cell(c, release))).collect(),
                        newest_safe: &r.newest_safe,
                        first_break: r.first_break.as_ref(),
                        unknown_at: &r.unknown_at,
                        after_fix: r.after_fix.as_ref().map(|f| AfterFixDoc {
                            fixes: f.fixes,
                            newest_safe: &f.newest_safe,
                            first_break: f.first_break.as_ref(),
                        }),
                    })
                    .collect(),
            })
            .collect(),
        not_audited: &m.not_audited,
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

fn start(s: &Start) -> StartDoc<'_> {
    match s {
        Start::Current { release, how } => StartDoc { kind: "current", release: Some(release), how },
        Start::Since { why } => StartDoc { kind: "since", release: None, how: why },
        Start::Unknown { why } => StartDoc { kind: "unknown", release: None, how: why },
        Start::PastWindow { release, how } => StartDoc { kind: "past_window", release: Some(release), how },
    }
}

fn cell<'a>(c: &'a Cell, release: &'a str) -> CellDoc<'a> {
    const NONE: &[String] = &[];
    match c {
        Cell::Audited(n) => CellDoc {
            release,
            audited: true,
            reason: None,
            worst: n.worst,
            errors: n.errors,
            breaks: n.breaks,
            degrades: n.degrades,
            informs: n.informs,
            input_problems: n.input_problems,
            risks: n.risks,
            codes: &n.codes,
        },
        Cell::NotAudited { reason } => CellDoc {
            release,
            audited: false,
            reason: Some(reason),
            worst: None,
            errors: 0,
            breaks: 0,
            degrades: 0,
            informs: 0,
            input_problems: 0,
            risks: 0,
            codes: NONE,
        },
    }
}
