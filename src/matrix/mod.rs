//! `matrix`: every deployment against every release of the engine it starts,
//! from its current release on. Recipes are read once and the engines opened
//! once; every release in the window is extracted once, with a target's
//! demand, in the first audit (the fact cache keeps them across runs); each
//! release then only runs the checks. A cell is exactly what `audit --to
//! <release>` says of that deployment.

mod after_fix;
mod html;
mod json;
mod markdown;
mod releases;
mod text;

pub(crate) use after_fix::{AfterFix, Reload};
pub(crate) use html::Html;
pub(crate) use json::Json;
pub(crate) use markdown::Markdown;
pub(crate) use releases::Window;
pub(crate) use text::Text;

use crate::audit::{self, AuditOptions, AuditReport, CurrentRelease, Engines, NotAudited};
use crate::codes::{Impact, Severity};
use crate::finding::Finding;
use crate::profiles::{self, Engine};
use crate::recipe::{RecipeFile, RecipeKind};
use releases::Release;
use std::collections::{BTreeMap, BTreeSet};

/// One output format of the matrix (text, JSON, markdown, HTML): a pure
/// function of the matrix and the options, as `report::Render` is of a report.
pub(crate) trait Render {
    fn render(&self, m: &Matrix, opts: &RenderOptions) -> String;
}

/// What a renderer may not find out by itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct RenderOptions {
    /// Character budget of the markdown (0: none).
    pub max_chars: usize,
}

/// The matrix of one run: per engine audited, its releases and rows; and the
/// deployments that are not audited at all.
#[derive(Debug, Clone)]
pub(crate) struct Matrix {
    pub engines: Vec<EngineMatrix>,
    pub not_audited: Vec<NotAudited>,
}

/// One engine's axis: its releases (oldest first) and a row per deployment.
#[derive(Debug, Clone)]
pub(crate) struct EngineMatrix {
    pub engine: &'static str,
    pub releases: Vec<String>,
    /// The Dynamo releases crossed with this axis (`--dynamo-from`/`--dynamo-to`),
    /// oldest first; empty when each deployment runs the Dynamo its recipe pins.
    pub dynamo_releases: Vec<String>,
    pub rows: Vec<Row>,
}

/// Where a row starts, and why there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// At the deployment's current release (or the first release after it in the window).
    Current { release: String, how: String },
    /// The current release cannot be placed; the row starts at `--since`.
    Since { why: String },
    /// The current release cannot be placed and no `--since` was given: every
    /// release, and no claim of a newest safe target.
    Unknown { why: String },
    /// The current release is newer than every release in the window.
    PastWindow { release: String, how: String },
}

/// One deployment's row.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub path: String,
    pub deployment: String,
    pub variant: Option<String>,
    /// With a Dynamo axis, for a deployment with a `dynamo:` block: the Dynamo
    /// release this row runs (one row per Dynamo release).
    pub dynamo: Option<String>,
    /// The master-config key that runs this deployment (with `--master`).
    pub master_key: Option<String>,
    pub start: Start,
    /// One per release of the axis; `None` before the row starts.
    pub cells: Vec<Option<Cell>>,
    /// The last release with no error before the first that has one (or the
    /// last one checked); `None` when the row makes no such claim.
    pub newest_safe: Option<String>,
    pub first_break: Option<Break>,
    /// A release whose surface could not be read ended the walk before any break.
    pub unknown_at: Option<String>,
    /// With `--fix`, for a row that breaks: what the fixes at its first break clear.
    pub after_fix: Option<AfterFix>,
}

/// What `audit --to <release>` says of one deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Audited(Counts),
    NotAudited { reason: String },
}

/// The findings of one cell, summed up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub worst: Option<Severity>,
    pub errors: usize,
    pub breaks: usize,
    pub degrades: usize,
    pub informs: usize,
    pub input_problems: usize,
    /// Risk rules (`R001`): they have a severity, no catalog impact.
    pub risks: usize,
    pub codes: Vec<String>,
    /// Each finding in one line, in report order (what a heatmap shows on hover).
    pub findings: Vec<Brief>,
}

/// One finding of a cell, in short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Brief {
    pub severity: Severity,
    pub code: String,
    pub subject: String,
    /// `path:line` of the finding.
    pub at: String,
    pub message: String,
}

/// The first error-level finding of a row, at its first release with one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Break {
    pub release: String,
    pub code: String,
    pub subject: String,
    pub message: String,
    /// `path:line:column` in the recipe (or the consumer's source).
    pub at: String,
    /// `path:line @ ref`, the first evidence.
    pub evidence: Option<String>,
    /// How many error-level findings that cell has.
    pub errors: usize,
}

/// One audit as the `audit` command runs it (policy, suppressions, unreadable
/// files), over the engines opened once.
pub(crate) type AuditAt<'a> = &'a mut dyn FnMut(&[RecipeFile], &AuditOptions, &mut Engines) -> miette::Result<AuditReport>;

/// Build the matrix; with `fix`, each breaking row's answer after `--fix` too.
pub(crate) fn compute(
    files: &[RecipeFile],
    opts: &AuditOptions,
    engines: &mut Engines,
    window: &Window,
    fix: Option<&Reload>,
    audit_at: AuditAt,
) -> miette::Result<Matrix> {
    let current = audit::current_releases(files, opts, engines);
    let axes: Vec<Engine> = profiles::servers().map(|(e, _)| e).filter(|e| opts.sources.contains_key(e.id)).collect();
    let mut opts = opts.clone();
    let mut windows = Vec::new();
    for engine in &axes {
        let repo = repo_of(engine, engines)?;
        let releases = releases::releases(engine.display, repo.tags(), window).map_err(|e| miette::miette!("{e}"))?;
        opts.also_targets.insert(engine.id, releases.iter().map(|r| r.tag.clone()).collect());
        windows.push(releases);
    }
    let dynamo_releases = dynamo_axis(window, &opts, engines)?;
    // The deployments a Dynamo release changes: srt-slurm ones that install Dynamo.
    let runs_dynamo: BTreeSet<(&str, &str, Option<&str>)> = files
        .iter()
        .filter(|f| f.kind == RecipeKind::SrtSlurm)
        .flat_map(|f| f.deployments.iter().filter(|d| d.dynamo.is_some()).map(|d| (f.path.as_str(), d.name.as_str(), d.variant.as_deref())))
        .collect();
    let keys: BTreeMap<(&str, &str, Option<&str>), &str> = files
        .iter()
        .flat_map(|f| {
            f.deployments
                .iter()
                .filter_map(|d| Some(((f.path.as_str(), d.name.as_str(), d.variant.as_deref()), d.entry_image.as_ref()?.key.as_str())))
        })
        .collect();
    let master_key = |r: &Row| keys.get(&(r.path.as_str(), r.deployment.as_str(), r.variant.as_deref())).map(|k| k.to_string());
    let mut out = Vec::new();
    for (engine, releases) in axes.into_iter().zip(windows) {
        let rows: Vec<&CurrentRelease> = current.iter().filter(|c| c.engine == engine.id).collect();
        if rows.is_empty() {
            continue;
        }
        // Only the files that start this engine (and the master configs that
        // link them): the other engines' deployments are not this axis's work.
        let mine: Vec<RecipeFile> = files
            .iter()
            .filter(|f| f.kind == RecipeKind::MasterConfig || f.deployments.iter().any(|d| d.engine == engine.id))
            .cloned()
            .collect();
        let dynamo_of = |c: &CurrentRelease| runs_dynamo.contains(&(c.path.as_str(), c.deployment.as_str(), c.variant.as_deref()));
        let consumed = profiles::CONSUMER_LINKS.iter().any(|l| l.engine == engine.id && l.consumer == profiles::DYNAMO.id);
        // One slice of the matrix per Dynamo release (one slice, the pins, without the axis).
        let slices: Vec<Option<&String>> = if consumed && !dynamo_releases.is_empty() && rows.iter().any(|c| dynamo_of(c)) {
            dynamo_releases.iter().map(Some).collect()
        } else {
            vec![None]
        };
        let mut built: Vec<(usize, usize, Row)> = Vec::new();
        for (k, dynamo) in slices.iter().enumerate() {
            // Each Dynamo release after the first opens the engines afresh: the
            // surfaces an audit reads are kept by ref, with the demand of what
            // that Dynamo build imports, and another build imports other modules.
            // The fact cache keeps the cost of it to reading the cache.
            let mut fresh = None;
            let engines: &mut Engines = if k == 0 { &mut *engines } else { fresh.insert(Engines::open(&opts)?) };
            let at_dynamo = match dynamo {
                Some(d) => opts.clone().with_refs(&profiles::DYNAMO, opts.refs_of(&profiles::DYNAMO).from, Some((*d).clone())),
                None => opts.clone(),
            };
            let mut columns: Vec<AuditReport> = Vec::new();
            for release in &releases {
                let _span = crate::trace::span(|| {
                    format!("matrix: {} {}{}", engine.id, release.tag, dynamo.map(|d| format!(" × Dynamo {d}")).unwrap_or_default())
                });
                let at = at_dynamo.clone().with_refs(engine, opts.refs_of(engine).from, Some(release.tag.clone()));
                columns.push(audit_at(&mine, &at, engines)?);
            }
            // A deployment without Dynamo reads the same in every slice: its row is the first slice's.
            let here: Vec<(usize, &CurrentRelease)> =
                rows.iter().enumerate().filter(|(_, c)| k == 0 || dynamo_of(c)).map(|(i, c)| (i, *c)).collect();
            let mut slice: Vec<Row> = here
                .iter()
                .map(|(_, c)| Row { dynamo: dynamo.filter(|_| dynamo_of(c)).cloned(), ..row(c, &releases, &columns, window) })
                .collect();
            if let Some(reload) = fix {
                let current: Vec<&CurrentRelease> = here.iter().map(|(_, c)| *c).collect();
                after_fix::fill(engine, &releases, &columns, &current, &mut slice, &mine, &at_dynamo, engines, reload, &mut *audit_at)?;
            }
            built.extend(here.iter().map(|(i, _)| *i).zip(slice).map(|(i, r)| (i, k, r)));
            if let Some(e) = fresh {
                e.finish();
            }
        }
        // Each deployment's rows together, in Dynamo release order.
        built.sort_by_key(|(i, k, _)| (*i, *k));
        let dynamo_releases = if slices.len() > 1 { dynamo_releases.clone() } else { Vec::new() };
        out.push(EngineMatrix {
            engine: engine.id,
            releases: releases.into_iter().map(|r| r.tag).collect(),
            dynamo_releases,
            rows: built.into_iter().map(|(_, _, r)| Row { master_key: master_key(&r), ..r }).collect(),
        });
    }
    Ok(Matrix { engines: out, not_audited: not_audited(files, &opts) })
}

/// The git repository of `engine`'s source: its tags are the releases.
fn repo_of(engine: Engine, engines: &Engines) -> miette::Result<&crate::source::EngineRepo> {
    engines.get(engine).and_then(|h| h.source.repo()).ok_or_else(|| {
        miette::miette!(
            help = "pass a git clone or URL: a plain package folder is one release",
            "{}: the matrix reads the release tags of a git repository",
            engine.display
        )
    })
}

/// The Dynamo releases of `--dynamo-from`/`--dynamo-to`, oldest first; none
/// without them (each deployment runs the Dynamo its recipe pins).
fn dynamo_axis(window: &Window, opts: &AuditOptions, engines: &Engines) -> miette::Result<Vec<String>> {
    let Some(w) = window.dynamo_window() else { return Ok(Vec::new()) };
    if !opts.sources.contains_key(profiles::DYNAMO.id) {
        return Err(miette::miette!(
            help = "pass --dynamo PATH|URL (a git clone or URL of ai-dynamo/dynamo)",
            "--dynamo-from/--dynamo-to cross the releases with Dynamo's, and no Dynamo source is given"
        ));
    }
    let repo = repo_of(&profiles::DYNAMO, engines)?;
    let releases = releases::releases(profiles::DYNAMO.display, repo.tags(), &w).map_err(|e| miette::miette!("{}", e.dynamo()))?;
    Ok(releases.into_iter().map(|r| r.tag).collect())
}

/// One deployment's row over the releases of its engine.
fn row(c: &CurrentRelease, releases: &[Release], columns: &[AuditReport], window: &Window) -> Row {
    let start = start_of(c, releases, window);
    let first = match &start {
        Start::Current { release, .. } => {
            let v = crate::source::parse_version_ref(release);
            releases.iter().position(|r| v.as_ref().is_some_and(|v| r.version >= *v))
        }
        Start::Since { .. } | Start::Unknown { .. } => Some(0),
        Start::PastWindow { .. } => None,
    };
    let cells: Vec<Option<Cell>> =
        columns.iter().enumerate().map(|(i, report)| first.filter(|f| i >= *f).map(|_| cell(c, report))).collect();
    let (mut newest_safe, first_break, unknown_at) = walk(&cells, releases, |i, errors| break_of(c, &releases[i], &columns[i], errors));
    // With the current release unknown, "safe up to" would be relative to nothing.
    if matches!(start, Start::Unknown { .. }) {
        newest_safe = None;
    }
    Row {
        path: c.path.clone(),
        deployment: c.deployment.clone(),
        variant: c.variant.clone(),
        dynamo: None,
        master_key: None,
        start,
        cells,
        newest_safe,
        first_break,
        unknown_at,
        after_fix: None,
    }
}

/// Along a row's cells: the newest safe release, the first break (built by
/// `break_at(column, errors)`), and the release not audited that ended the walk.
fn walk(
    cells: &[Option<Cell>],
    releases: &[Release],
    break_at: impl Fn(usize, usize) -> Option<Break>,
) -> (Option<String>, Option<Break>, Option<String>) {
    let mut newest_safe = None;
    for (i, (release, cell)) in releases.iter().zip(cells).enumerate() {
        match cell {
            None => continue,
            Some(Cell::NotAudited { .. }) => return (newest_safe, None, Some(release.tag.clone())),
            Some(Cell::Audited(counts)) if counts.errors > 0 => return (newest_safe, break_at(i, counts.errors), None),
            Some(Cell::Audited(_)) => newest_safe = Some(release.tag.clone()),
        }
    }
    (newest_safe, None, None)
}

/// Where the row starts: its current release when it can be placed among
/// the versions; else `--since`; else every release, saying so.
fn start_of(c: &CurrentRelease, releases: &[Release], window: &Window) -> Start {
    let why = match &c.current {
        Ok(r) if crate::source::parse_version_ref(&r.wanted).is_some() => {
            let v = crate::source::parse_version_ref(&r.wanted);
            return if releases.iter().any(|x| v.as_ref().is_some_and(|v| x.version >= *v)) {
                Start::Current { release: r.wanted.clone(), how: r.how.clone() }
            } else {
                Start::PastWindow { release: r.wanted.clone(), how: r.how.clone() }
            };
        }
        Ok(r) => format!("`{}` ({}) is no release version: it cannot be placed among the releases", r.wanted, r.how),
        Err(why) => why.clone(),
    };
    match &window.since {
        Some(_) => Start::Since { why },
        None => Start::Unknown { why },
    }
}

/// Whether `f` is about deployment `c`: in its file and of its name (or of
/// the whole file), of its variant when the finding names variants; or a
/// consumer finding that affects a line of its file.
fn belongs(f: &Finding, c: &CurrentRelease) -> bool {
    let here = f.location.path == c.path
        && f.deployment.as_ref().is_none_or(|d| *d == c.deployment)
        && (f.variants.is_empty() || c.variant.as_ref().is_some_and(|v| f.variants.contains(v)));
    here || f.affects.iter().any(|a| a.path == c.path)
}

/// What one audit says of one deployment.
fn cell(c: &CurrentRelease, report: &AuditReport) -> Cell {
    let not_audited =
        report.coverage.not_audited.iter().find(|n| n.path == c.path && n.deployment == c.deployment && n.variant == c.variant);
    if let Some(n) = not_audited {
        return Cell::NotAudited { reason: n.reason.clone() };
    }
    let mut counts = Counts::default();
    let mut codes = BTreeSet::new();
    for f in report.findings.iter().filter(|f| belongs(f, c)) {
        counts.worst = counts.worst.max(Some(f.severity));
        if f.severity == Severity::Error {
            counts.errors += 1;
        }
        match crate::codes::impact_of(f.code()) {
            Some(Impact::Breaks) => counts.breaks += 1,
            Some(Impact::Degrades) => counts.degrades += 1,
            Some(Impact::Informs) => counts.informs += 1,
            Some(Impact::InputProblem) => counts.input_problems += 1,
            None => counts.risks += 1,
        }
        codes.insert(f.code().to_string());
        counts.findings.push(Brief {
            severity: f.severity,
            code: f.code().to_string(),
            subject: f.subject.clone(),
            at: format!("{}:{}", f.location.path, f.location.line),
            message: f.message(),
        });
    }
    counts.codes = codes.into_iter().collect();
    Cell::Audited(counts)
}

/// The first error-level finding of `c` in `report` (reports are in file and line order).
fn break_of(c: &CurrentRelease, release: &Release, report: &AuditReport, errors: usize) -> Option<Break> {
    let f = report.findings.iter().find(|f| f.severity == Severity::Error && belongs(f, c))?;
    Some(Break {
        release: release.tag.clone(),
        code: f.code().to_string(),
        subject: f.subject.clone(),
        message: f.message(),
        at: format!("{}:{}:{}", f.location.path, f.location.line, f.location.column),
        evidence: f.evidence.first().map(|e| format!("{}:{} @ {}", e.path, e.line, e.ref_name)),
        errors,
    })
}

/// The deployments no axis covers: of an engine with no profile, or whose
/// source was not given. Listed, never left out.
fn not_audited(files: &[RecipeFile], opts: &AuditOptions) -> Vec<NotAudited> {
    let mut out = Vec::new();
    let entry =
        |path: &str, deployment: String, variant: Option<String>, roles: Vec<String>, engine: &str, why: (String, Option<String>)| {
            NotAudited {
                path: path.to_string(),
                deployment,
                variant,
                roles,
                engine: engine.to_string(),
                reason: why.0,
                enable: why.1,
                acknowledged: opts.acknowledges(engine),
            }
        };
    for file in files {
        match &file.kind {
            RecipeKind::Other { backend: Some(b) } => {
                out.push(entry(&file.path, "(every entry of the file)".into(), None, Vec::new(), b, ("no profile yet".into(), None)));
            }
            RecipeKind::SrtSlurm | RecipeKind::LaunchScript | RecipeKind::AmdModels => {
                for dep in &file.deployments {
                    let why = match profiles::by_id(dep.engine).filter(|e| e.server.is_some()) {
                        None => ("no profile yet".to_string(), None),
                        Some(e) if !opts.sources.contains_key(e.id) => (
                            format!("no {} source given", e.display),
                            Some(format!("--{} PATH|URL, or `{}:` in .engine-audit.yaml", e.id, e.id)),
                        ),
                        Some(_) => continue,
                    };
                    let roles = dep.roles.iter().map(|r| r.role.clone()).collect();
                    out.push(entry(&file.path, dep.name.clone(), dep.variant.clone(), roles, dep.engine, why));
                }
            }
            RecipeKind::Other { backend: None } | RecipeKind::MasterConfig => {}
        }
    }
    out.sort();
    out
}

impl EngineMatrix {
    /// `3 deployments`, or `2 deployments (3 rows)` on a Dynamo axis.
    pub(crate) fn count(&self) -> String {
        let distinct: BTreeSet<(&str, &str, Option<&str>)> =
            self.rows.iter().map(|r| (r.path.as_str(), r.deployment.as_str(), r.variant.as_deref())).collect();
        let n = distinct.len();
        let mut s = format!("{n} deployment{}", if n == 1 { "" } else { "s" });
        if self.rows.len() != n {
            s.push_str(&format!(" ({} rows)", self.rows.len()));
        }
        s
    }

    /// Per release, how many rows have an error there.
    pub(crate) fn breaking(&self) -> Vec<usize> {
        (0..self.releases.len())
            .map(|i| self.rows.iter().filter(|r| matches!(&r.cells[i], Some(Cell::Audited(c)) if c.errors > 0)).count())
            .collect()
    }
}

impl Row {
    /// `path: name [variant]`, and `× Dynamo v0.2.0` on a Dynamo axis.
    pub(crate) fn label(&self) -> String {
        format!("{}: {}", self.path, self.name())
    }

    /// `name [variant]`, and `× Dynamo v0.2.0` on a Dynamo axis.
    pub(crate) fn name(&self) -> String {
        let mut s = self.deployment.clone();
        if let Some(v) = &self.variant {
            s.push_str(&format!(" [{v}]"));
        }
        if let Some(d) = &self.dynamo {
            s.push_str(&format!(" × Dynamo {d}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{FindingKind, Location};

    fn dep(path: &str, name: &str, variant: Option<&str>) -> CurrentRelease {
        CurrentRelease {
            path: path.into(),
            deployment: name.into(),
            variant: variant.map(str::to_string),
            engine: "sglang",
            current: Err("the recipe names no image".into()),
        }
    }

    fn finding(path: &str, deployment: Option<&str>, variant: Option<&str>) -> Finding {
        let at = Location { path: path.into(), line: 3, column: 5, offset: None, len: None };
        let kind = FindingKind::UnreadLaunch { words: Some("$EXTRA".into()), why: "from the job".into() };
        let f = Finding::new(kind, at, "$EXTRA").variant(variant);
        match deployment {
            Some(d) => f.deployment(d),
            None => f,
        }
    }

    #[test]
    fn a_finding_is_a_rows_by_file_name_and_variant() {
        let (a, b) = (dep("r.yaml", "big", Some("override_a")), dep("r.yaml", "big", Some("override_b")));
        // Found in variant a only (its override sets the flag): not b's.
        let only_a = finding("r.yaml", Some("big"), Some("override_a"));
        assert!(belongs(&only_a, &a) && !belongs(&only_a, &b));
        // On a line both variants read, normalized into one finding naming both.
        let mut both = only_a.clone();
        both.variants.push("override_b".into());
        assert!(belongs(&both, &a) && belongs(&both, &b));
        // About the whole file (no deployment): every row of the file; not another file's.
        let file = finding("r.yaml", None, None);
        assert!(belongs(&file, &a) && !belongs(&file, &dep("s.yaml", "big", None)));
        // Another deployment of the same file is not this one.
        assert!(!belongs(&finding("r.yaml", Some("small"), None), &dep("r.yaml", "big", None)));
        // A consumer finding in Dynamo's source is the row's when it affects the row's file.
        let mut consumer = finding("components/src/dynamo/sglang/args.py", None, None);
        assert!(!belongs(&consumer, &a));
        consumer.affects.push(Location { path: "r.yaml".into(), line: 9, column: 3, offset: None, len: None });
        assert!(belongs(&consumer, &a));
    }

    fn release(tag: &str) -> Release {
        Release { tag: tag.into(), version: crate::source::parse_version_ref(tag).unwrap() }
    }

    fn audited(errors: usize) -> Option<Cell> {
        Some(Cell::Audited(Counts { errors, worst: (errors > 0).then_some(Severity::Error), ..Counts::default() }))
    }

    #[test]
    fn the_walk_stops_at_the_first_error_or_the_first_release_not_audited() {
        let releases: Vec<Release> = ["v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0"].into_iter().map(release).collect();
        let brk = |i: usize, errors: usize| {
            Some(Break {
                release: releases[i].tag.clone(),
                code: "EA001".into(),
                subject: "x".into(),
                message: String::new(),
                at: String::new(),
                evidence: None,
                errors,
            })
        };
        // Before the row starts (None), then safe, safe, broken, safe again: the first break counts.
        let (safe, first, unknown) = walk(&[None, audited(0), audited(2), audited(0)], &releases, brk);
        assert_eq!((safe.as_deref(), first.map(|b| (b.release, b.errors)), unknown), (Some("v1.1.0"), Some(("v1.2.0".into(), 2)), None));
        // Broken at its first release: no safe target.
        let (safe, first, _) = walk(&[audited(1), audited(0), audited(0), audited(0)], &releases, brk);
        assert_eq!((safe, first.map(|b| b.release)), (None, Some("v1.0.0".into())));
        // A release not audited ends the walk: nothing is claimed after it, not even a later break.
        let gap = Some(Cell::NotAudited { reason: "ref could not be read".into() });
        let (safe, first, unknown) = walk(&[audited(0), gap, audited(1), audited(0)], &releases, brk);
        assert_eq!((safe.as_deref(), first, unknown.as_deref()), (Some("v1.0.0"), None, Some("v1.1.0")));
        // No error anywhere: safe up to the newest.
        let (safe, first, _) = walk(&[audited(0), audited(0), audited(0), audited(0)], &releases, brk);
        assert_eq!((safe.as_deref(), first), (Some("v1.3.0"), None));
    }
}
