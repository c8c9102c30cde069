//! Findings and their renderings. `report` knows findings, not tree-sitter or git.
//!
//! Every format is a [`Render`] in a file of its own: a pure function of the
//! report and the options, with no clock, no environment and no terminal
//! queries (the caller decides colour and the base folder), so the same report
//! renders byte for byte the same anywhere.

pub(crate) mod annotations;
pub(crate) mod budget;
pub(crate) mod describe;
pub mod docs;
pub(crate) mod escape;
pub(crate) mod github;
pub mod identity;
pub(crate) mod json;
pub use json::SCHEMA_VERSION;
pub(crate) mod markdown;
pub use markdown::{groups as markdown_groups, Group as MarkdownGroup};
pub(crate) mod sarif;
pub(crate) mod text;
pub(crate) mod unbroken;

pub use crate::finding::{Edit, EvidenceRef, Finding, Fix, Lang, Location};

use crate::finding::AuditReport;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The output formats of `audit` (and `pr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// miette diagnostics for terminals and logs.
    Text,
    /// The "flag audit" section of a bump PR body.
    Markdown,
    /// Versioned machine-readable report (docs/report-schema.md).
    Json,
    /// SARIF 2.1.0 for GitHub code scanning.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…`).
    Github,
}

impl Format {
    pub const ALL: [Format; 5] = [Format::Text, Format::Markdown, Format::Json, Format::Sarif, Format::Github];

    /// The file `--output-dir` writes this format to.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Format::Text => "report.txt",
            Format::Markdown => "report.md",
            Format::Json => "report.json",
            Format::Sarif => "report.sarif",
            Format::Github => "report.github.txt",
        }
    }

    /// The renderer of this format.
    pub(crate) fn renderer(self) -> &'static dyn Render {
        match self {
            Format::Text => &text::Text,
            Format::Markdown => &markdown::Markdown,
            Format::Json => &json::Json,
            Format::Sarif => &sarif::Sarif,
            Format::Github => &github::Github,
        }
    }

    pub fn render(self, report: &AuditReport, opts: &RenderOptions) -> String {
        self.renderer().render(report, opts)
    }
}

/// One output format.
pub(crate) trait Render: Sync {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String;
}

/// How to render; everything a renderer may not find out by itself.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Markdown language(s).
    pub lang: Lang,
    /// ANSI colour in the text report (the caller checks the TTY and `NO_COLOR`).
    pub color: bool,
    /// Text report wrap width.
    pub width: usize,
    /// Web address of each engine's repository (`sglang` → `https://github.com/sgl-project/sglang`):
    /// evidence becomes a link to the file and line at its ref.
    pub repo_urls: BTreeMap<String, String>,
    /// Absolute recipe paths below this folder are written relative to it in SARIF,
    /// GitHub annotations, markdown and fingerprints (code scanning wants
    /// repository-relative paths): the git top level of the working folder.
    pub base_dir: Option<PathBuf>,
    /// The folder relative recipe paths (as given on the command line) are
    /// relative to, so they can be made relative to `base_dir`. `None` when the
    /// paths are already repository-relative (`pr` reads them from git).
    pub cwd: Option<PathBuf>,
    /// Where engine-audit's documentation is: the page of a code is
    /// `{docs_url}/docs/codes/EA003.md` ([`docs::DEFAULT_DOCS_URL`] unless the
    /// config's `docs_url` says otherwise).
    pub docs_url: String,
    /// Most annotations the github format writes (GitHub shows at most 10 of
    /// each level per step); the rest are counted in a last notice.
    pub max_annotations: usize,
    /// Character budget of the markdown report (0: none).
    pub max_chars: usize,
    /// Where the full report is, for a markdown report cut to its budget
    /// (`out/report.json`); `None` says how to get it instead.
    pub full_report: Option<String>,
}

/// GitHub shows 10 error, 10 warning and 10 notice annotations per step.
pub const ANNOTATIONS_PER_LEVEL: usize = 10;
/// Every annotation one step can show: 10 of each level.
pub const DEFAULT_MAX_ANNOTATIONS: usize = 3 * ANNOTATIONS_PER_LEVEL;
/// Under the 65,536 characters GitHub allows in a PR body or comment, with room
/// for a title and the text around the section.
pub const DEFAULT_MAX_CHARS: usize = 60_000;

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            lang: Lang::En,
            color: false,
            width: 100,
            repo_urls: BTreeMap::new(),
            base_dir: None,
            cwd: None,
            docs_url: docs::DEFAULT_DOCS_URL.to_string(),
            max_annotations: DEFAULT_MAX_ANNOTATIONS,
            max_chars: DEFAULT_MAX_CHARS,
            full_report: None,
        }
    }
}

impl RenderOptions {
    /// Record the repository address of the engines given as URLs (`--sglang URL`).
    /// Local paths give no links.
    pub fn with_engine_sources(mut self, sources: &BTreeMap<&'static str, crate::audit::EngineSpec>) -> RenderOptions {
        for (engine, spec) in sources {
            if let Some(url) = web_url(&spec.spec) {
                self.repo_urls.insert(engine.to_string(), url);
            }
        }
        self
    }
}

/// The browsable address of a clone URL: `https://github.com/o/r(.git)` and
/// `git@github.com:o/r.git` → `https://github.com/o/r`. `None` for local paths.
pub(crate) fn web_url(spec: &str) -> Option<String> {
    let spec = spec.trim();
    let base = if let Some(rest) = spec.strip_prefix("git@") {
        let (host, path) = rest.split_once(':')?;
        format!("https://{host}/{path}")
    } else if let Some(rest) = spec.strip_prefix("ssh://git@") {
        format!("https://{rest}")
    } else if spec.starts_with("https://") || spec.starts_with("http://") {
        spec.to_string()
    } else {
        return None;
    };
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix(".git").unwrap_or(base);
    Some(base.to_string())
}

/// The link to an evidence line, when its engine's repository address is known
/// and the ref is a real one (not a plain folder).
pub(crate) fn evidence_url(e: &EvidenceRef, opts: &RenderOptions) -> Option<String> {
    let base = opts.repo_urls.get(e.engine.as_deref()?)?;
    if e.ref_name.is_empty() || e.ref_name.starts_with('(') {
        return None;
    }
    Some(format!("{base}/blob/{}/{}#L{}", encode_path(&e.ref_name), encode_path(&e.path), e.line))
}

/// `path:line @ ref`, the plain form of evidence.
pub(crate) fn evidence_plain(e: &EvidenceRef) -> String {
    format!("{}:{} @ {}", e.path, e.line, e.ref_name)
}

/// Percent-encode what may not stand in a URL path (`/` kept).
pub(crate) fn encode_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/+@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A recipe path as code scanning and annotations want it: relative to
/// `base_dir` when below it (a relative path is first put under `cwd`), `/`
/// separated, without `./`.
pub(crate) fn repo_path(path: &str, opts: &RenderOptions) -> String {
    let p = Path::new(path);
    let joined;
    let p = match (&opts.cwd, &opts.base_dir) {
        (Some(cwd), Some(_)) if p.is_relative() && !path.is_empty() => {
            joined = lexical_normal(&cwd.join(p));
            joined.as_path()
        }
        _ => p,
    };
    let rel = match &opts.base_dir {
        Some(base) if p.is_absolute() => p.strip_prefix(base).unwrap_or(p),
        _ => p,
    };
    let s = rel.to_string_lossy().replace('\\', "/");
    let mut s = s.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}

/// `a/./b/../c` → `a/c` without touching the disk (the file may be gone, and a
/// symlink must keep the name the user gave).
fn lexical_normal(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// What the github format's annotations leave to the full report, in one line
/// (`None` when every code-and-subject group has its own annotation).
pub fn annotation_summary(report: &AuditReport, opts: &RenderOptions) -> Option<String> {
    let report = escape::for_display(report);
    annotations::summary_line(&annotations::plan(&report, opts))
}

/// Findings located in engine source rather than in the user's files (EA201–EA205).
pub fn in_engine_source(f: &Finding) -> bool {
    f.location.offset.is_none() && crate::codes::in_consumer_source(f.code())
}

/// What a consumer-side finding says when it is shown on the recipe line that installs it:
/// `Dynamo 0.1.0 (installed here), components/src/dynamo/sglang/args.py:3: `.
pub(crate) fn installed_here(f: &Finding) -> String {
    let build = describe::consumer_build(f).unwrap_or_else(|| "The consumer build".into());
    format!("{build} (installed here), {}:{}: ", f.location.path, f.location.line)
}

/// Severity counts (errors, warnings, infos).
pub fn counts(report: &AuditReport) -> (usize, usize, usize) {
    use crate::codes::Severity;
    let n = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    (n(Severity::Error), n(Severity::Warning), n(Severity::Info))
}

/// `v0.5.12.post1 → v0.5.19` per engine, targets without a known start dropped
/// when another bump to the same target has one.
/// Findings about input the audit could not read or place (EA303, EA305):
/// counted apart, since they say nothing about the recipe at the target.
pub(crate) fn input_problems(report: &AuditReport) -> usize {
    report.findings.iter().filter(|f| crate::codes::impact_of(f.code()) == Some(crate::codes::Impact::InputProblem)).count()
}

/// `2 errors, 1 warning, 3 info in 4 deployments of 5 recipe files` (`last` joins
/// the last count: `", "` in the text summary, `" and "` in prose), with
/// `; 1 input problem among them` when some are.
pub(crate) fn counts_phrase(report: &AuditReport, last: &str) -> String {
    let (e, w, i) = counts(report);
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let inputs = match input_problems(report) {
        0 => String::new(),
        1 => "; 1 input problem among them".to_string(),
        n => format!("; {n} input problems among them"),
    };
    format!(
        "{}, {}{last}{} in {} of {}{inputs}",
        plural(e, "error", "errors"),
        plural(w, "warning", "warnings"),
        plural(i, "info", "info"),
        plural(report.deployments_audited, "deployment", "deployments"),
        plural(report.recipes, "recipe file", "recipe files"),
    )
}

/// The coverage line when something was not audited or could not be read
/// (`audited 3 of 5 deployments; 2 not audited (TileRT: no profile yet); 1 unreadable`);
/// `None` when every deployment found was audited.
pub(crate) fn coverage_phrase(report: &AuditReport) -> Option<String> {
    let c = &report.coverage;
    (!c.not_audited.is_empty() || c.unreadable > 0 || c.audited < c.deployments).then(|| c.line())
}

/// One not-audited deployment: `recipes/x.yaml: disagg [zip_override_a[0]] (prefill, decode): TileRT, no profile yet`.
pub(crate) fn not_audited_line(n: &crate::finding::NotAudited) -> String {
    let variant = n.variant.as_ref().map(|v| format!(" [{v}]")).unwrap_or_default();
    let roles = if n.roles.is_empty() { String::new() } else { format!(" ({})", n.roles.join(", ")) };
    let enable = n.enable.as_ref().map(|e| format!("; to audit it: {e}")).unwrap_or_default();
    let ack = if n.acknowledged { " (acknowledged)" } else { "" };
    format!("{}: {}{variant}{roles}: {}, {}{enable}{ack}", n.path, n.deployment, crate::profiles::display(&n.engine), n.reason)
}

pub(crate) fn bump_labels(report: &AuditReport, engine: &str) -> Vec<String> {
    labels_of(&report.bumps.iter().filter(|b| b.engine == engine).collect::<Vec<_>>())
}

/// [`bump_labels`] of some bumps of one engine.
pub(crate) fn labels_of(bumps: &[&crate::finding::BumpSummary]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for b in bumps {
        let label = match &b.from {
            Some(f) if *f != b.to => format!("{f} → {}", b.to),
            Some(_) => b.to.clone(),
            None if bumps.iter().any(|o| o.to == b.to && o.from.is_some()) => continue,
            None => b.to.clone(),
        };
        if !out.contains(&label) {
            out.push(label);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_urls_from_clone_specs() {
        assert_eq!(web_url("https://github.com/sgl-project/sglang").as_deref(), Some("https://github.com/sgl-project/sglang"));
        assert_eq!(web_url("https://github.com/sgl-project/sglang.git/").as_deref(), Some("https://github.com/sgl-project/sglang"));
        assert_eq!(web_url("git@github.com:ai-dynamo/dynamo.git").as_deref(), Some("https://github.com/ai-dynamo/dynamo"));
        assert_eq!(web_url("/srv/clones/sglang.git"), None);
        assert_eq!(web_url("../sglang"), None);
    }

    #[test]
    fn evidence_links_need_an_engine_url_and_a_ref() {
        let sources = [("sglang", crate::audit::EngineSpec { spec: "https://github.com/sgl-project/sglang".into(), root: None })].into();
        let opts = RenderOptions::default().with_engine_sources(&sources);
        let e = EvidenceRef {
            path: "python/sglang/srt/server_args.py".into(),
            line: 3928,
            ref_name: "v0.5.19".into(),
            note: None,
            engine: Some("sglang".into()),
        };
        assert_eq!(
            evidence_url(&e, &opts).as_deref(),
            Some("https://github.com/sgl-project/sglang/blob/v0.5.19/python/sglang/srt/server_args.py#L3928")
        );
        assert_eq!(evidence_url(&EvidenceRef { engine: Some("dynamo".into()), ..e.clone() }, &opts), None);
        assert_eq!(evidence_url(&EvidenceRef { engine: None, ..e.clone() }, &opts), None);
        assert_eq!(evidence_url(&EvidenceRef { ref_name: "(directory)".into(), ..e }, &opts), None);
    }

    #[test]
    fn repo_paths_are_relative_and_slashed() {
        let opts = RenderOptions { base_dir: Some(PathBuf::from("/work/repo")), ..RenderOptions::default() };
        assert_eq!(repo_path("/work/repo/recipes/a.yaml", &opts), "recipes/a.yaml");
        assert_eq!(repo_path("./recipes/a.yaml", &opts), "recipes/a.yaml");
        assert_eq!(repo_path("/elsewhere/a.yaml", &opts), "/elsewhere/a.yaml");
        // Without a working folder, relative paths are taken as repo-relative (`pr`).
        assert_eq!(repo_path("sub/a.yaml", &opts), "sub/a.yaml");
    }

    #[test]
    fn relative_paths_are_made_relative_to_the_git_top_level() {
        let opts = RenderOptions {
            base_dir: Some(PathBuf::from("/work/repo")),
            cwd: Some(PathBuf::from("/work/repo/benchmarks")),
            ..RenderOptions::default()
        };
        assert_eq!(repo_path("./multi_node/a.yaml", &opts), "benchmarks/multi_node/a.yaml");
        assert_eq!(repo_path("../configs/m.yaml", &opts), "configs/m.yaml");
        assert_eq!(repo_path("/work/repo/x.sh", &opts), "x.sh");
        // Outside the repository: an absolute path, never `../`.
        assert_eq!(repo_path("../../other/a.yaml", &opts), "/work/other/a.yaml");
    }

    #[test]
    fn languages_parse() {
        assert_eq!("en+zh".parse::<Lang>(), Ok(Lang::EnZh));
        assert_eq!("ZH".parse::<Lang>(), Ok(Lang::Zh));
        assert!("fr".parse::<Lang>().is_err());
    }
}
