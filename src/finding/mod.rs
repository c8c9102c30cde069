//! The data model of a finding: what is wrong (a typed [`FindingKind`]), where
//! in the recipe (or consumer file), the engine evidence that proves it, and
//! the fix. Renderers (`report`) read it; checks (`check`) build it.

mod audit_report;
mod fix;
mod kind;

pub use audit_report::{AuditReport, BumpSummary, Coverage, NotAudited, Problem, RuleInfo};
pub(crate) use fix::FixAction;
pub(crate) use kind::{
    EnvRename, FindingKind, KeyPolicy, KeyProblem, Missing, NumberKind, Past, PastEnv, PastFlag, SemanticChange, ValueProblem,
};

use crate::codes::{Code, Severity};
use serde::Serialize;

/// The languages of the Markdown report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
    /// English, then Chinese: the bilingual bump PR body.
    EnZh,
}

impl Lang {
    /// The single languages to write, in order.
    pub fn parts(self) -> &'static [Lang] {
        match self {
            Lang::En => &[Lang::En],
            Lang::Zh => &[Lang::Zh],
            Lang::EnZh => &[Lang::En, Lang::Zh],
        }
    }
}

impl std::str::FromStr for Lang {
    type Err = String;
    fn from_str(s: &str) -> Result<Lang, String> {
        match s.to_ascii_lowercase().as_str() {
            "en" => Ok(Lang::En),
            "zh" | "zh-cn" | "zh-hans" => Ok(Lang::Zh),
            "en+zh" | "en,zh" | "bilingual" => Ok(Lang::EnZh),
            other => Err(format!("unknown language `{other}` (en, zh or en+zh)")),
        }
    }
}

/// A place in a user's file (recipe, script, master config) or in Dynamo's source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    /// The path as given on the command line (recipes) or repo-relative (Dynamo).
    #[serde(rename = "recipe")]
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    /// Byte range in the file, when known (recipes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub len: Option<usize>,
}

impl Location {
    pub fn from_span(span: &crate::text::Span) -> Location {
        Location { path: span.path.clone(), line: span.line, column: span.column, offset: Some(span.offset), len: Some(span.len) }
    }
    pub fn from_evidence(e: &crate::surface::Evidence) -> Location {
        Location { path: e.path.clone(), line: e.line, column: 1, offset: None, len: None }
    }
}

/// Engine source that backs a finding: `path:line @ ref`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct EvidenceRef {
    pub path: String,
    pub line: u32,
    /// The engine ref the file was read at (`v0.5.19`).
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// What this evidence shows (`--cuda-graph-max-bs registered here`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Whose source `path` is in: `sglang` or `dynamo`; absent for the user's own
    /// files (a master config). Reports link engine evidence to the engine's repo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

impl EvidenceRef {
    pub fn new(e: &crate::surface::Evidence, ref_name: &str) -> EvidenceRef {
        EvidenceRef { path: e.path.clone(), line: e.line, ref_name: ref_name.to_string(), note: None, engine: None }
    }
    pub fn engine(mut self, engine: &str) -> EvidenceRef {
        self.engine = Some(engine.to_string());
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> EvidenceRef {
        self.note = Some(note.into());
        self
    }
}

pub use crate::text::Edit;

/// A fix: typed actions (rendered in words per language) and the byte edits
/// that `--fix` applies; no edits when the fix is advice only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub actions: Vec<FixAction>,
    /// Empty when the fix is advice only (no mechanical edit).
    pub edits: Vec<Edit>,
}

impl Fix {
    pub fn advice(action: FixAction) -> Fix {
        Fix { actions: vec![action], edits: Vec::new() }
    }

    /// What the fix does, in words (`replace `a` with `b``).
    pub fn description(&self, lang: Lang) -> String {
        fix::describe(&self.actions, lang)
    }
}

impl Serialize for Fix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Fix", 2)?;
        st.serialize_field("description", &self.description(Lang::En))?;
        st.serialize_field("edits", &self.edits)?;
        st.end()
    }
}

/// A finding: what (the typed [`FindingKind`], which renders the message), how
/// bad, where, about what, the evidence, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    pub location: Location,
    /// The deployment (recipe name) it is about, if any.
    pub deployment: Option<String>,
    /// The variants of that deployment (srtctl selectors) it was found in;
    /// empty for a recipe without variants or a finding about the whole file.
    /// Not in the reports (a finding on a line the variants share is said
    /// once); the matrix uses it to give each variant its own row.
    pub variants: Vec<String>,
    /// prefill / decode / ... for role-scoped flags and env vars.
    pub role: Option<String>,
    /// The flag without `--`, the env var, the module, or `Class.attribute`.
    pub subject: String,
    pub evidence: Vec<EvidenceRef>,
    pub fix: Option<Fix>,
    /// For findings located in engine source (EA201–EA205, in Dynamo): the recipe
    /// places that install that engine build (their `dynamo:` value), so reports
    /// can point at lines of the user's repository too.
    pub affects: Vec<Location>,
    /// For launch scripts: the paths through the script on which it happens,
    /// when not all of them ("DP_ATTENTION=true").
    pub condition: Option<String>,
}

/// A finding as the JSON report (and SARIF's properties) write it.
#[derive(Serialize)]
pub(crate) struct FindingRecord<'a> {
    code: &'a str,
    name: &'a str,
    severity: Severity,
    message: String,
    #[serde(flatten)]
    location: &'a Location,
    #[serde(skip_serializing_if = "Option::is_none")]
    deployment: &'a Option<String>,
    role: &'a Option<String>,
    subject: &'a str,
    evidence: &'a [EvidenceRef],
    fix: &'a Option<Fix>,
    doc: String,
    #[serde(skip_serializing_if = "<[Location]>::is_empty")]
    affects: &'a [Location],
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: &'a Option<String>,
    /// Set by the JSON report, which knows the repository the path is relative to.
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<String>,
}

impl FindingRecord<'_> {
    /// The same record with its doc link and fingerprint as a report renders them.
    pub(crate) fn rendered(mut self, doc: String, fingerprint: String) -> Self {
        self.doc = doc;
        self.fingerprint = Some(fingerprint);
        self
    }
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.record().serialize(s)
    }
}

impl Finding {
    /// Every field of the finding, as the JSON report writes it.
    pub(crate) fn record(&self) -> FindingRecord<'_> {
        FindingRecord {
            code: self.code(),
            name: self.name(),
            severity: self.severity,
            message: self.message(),
            location: &self.location,
            deployment: &self.deployment,
            role: &self.role,
            subject: &self.subject,
            evidence: &self.evidence,
            fix: &self.fix,
            doc: self.doc(),
            affects: &self.affects,
            condition: &self.condition,
            fingerprint: None,
        }
    }
}

impl Finding {
    /// A finding of `kind` at its code's default severity.
    pub fn new(kind: FindingKind, location: Location, subject: impl Into<String>) -> Finding {
        let severity = kind.code().map_or(Severity::Warning, |c| c.info().severity);
        Finding {
            kind,
            severity,
            location,
            deployment: None,
            variants: Vec::new(),
            role: None,
            subject: subject.into(),
            evidence: Vec::new(),
            fix: None,
            affects: Vec::new(),
            condition: None,
        }
    }
    pub fn role(mut self, role: Option<&str>) -> Self {
        self.role = role.map(str::to_string);
        self
    }
    pub fn deployment(mut self, name: &str) -> Self {
        self.deployment = Some(name.to_string());
        self
    }
    /// The variant of the deployment it was found in, if it has variants.
    pub fn variant(mut self, variant: Option<&str>) -> Self {
        self.variants = variant.map(str::to_string).into_iter().collect();
        self
    }
    pub fn evidence(mut self, e: EvidenceRef) -> Self {
        self.evidence.push(e);
        self
    }
    pub fn fix(mut self, fix: Option<Fix>) -> Self {
        self.fix = fix;
        self
    }
    pub fn condition(mut self, condition: Option<String>) -> Self {
        self.condition = condition;
        self
    }
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// `EA003`, or the rule's id (`R001`).
    pub fn code(&self) -> &str {
        match &self.kind {
            FindingKind::Rule { id, .. } => id,
            other => other.code().map_or("", Code::as_str),
        }
    }
    pub fn name(&self) -> &str {
        self.kind.name()
    }
    /// The message, in English, rendered from the kind.
    pub fn message(&self) -> String {
        match &self.condition {
            Some(c) => format!("{} (when {c})", self.kind.message()),
            None => self.kind.message(),
        }
    }
    /// Repository-relative doc page of the code or rule.
    pub fn doc(&self) -> String {
        self.kind.doc()
    }

    /// Deterministic order: file, position, code, subject.
    pub fn sort_key(&self) -> (String, u32, u32, String, String, Option<String>) {
        (
            self.location.path.clone(),
            self.location.line,
            self.location.column,
            self.code().to_string(),
            self.subject.clone(),
            self.role.clone(),
        )
    }
}

/// Sort and drop exact duplicates (the same fact reached twice). Findings that
/// differ only in the recipe places they affect become one, affecting all of them.
pub(crate) fn normalize(findings: &mut Vec<Finding>) {
    findings.sort_by_key(|a| a.sort_key());
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings.drain(..) {
        match out.iter_mut().rev().take_while(|o| o.sort_key() == f.sort_key()).find(|o| same_but_affects(o, &f)) {
            Some(o) => {
                o.affects.extend(f.affects);
                o.variants.extend(f.variants);
            }
            None => out.push(f),
        }
    }
    for f in &mut out {
        f.affects.sort();
        f.affects.dedup();
        f.variants.sort();
        f.variants.dedup();
    }
    *findings = out;
}

/// The same finding, but for the recipe places it affects and the variants it was found in.
fn same_but_affects(a: &Finding, b: &Finding) -> bool {
    let bare = |f: &Finding| Finding { affects: Vec::new(), variants: Vec::new(), ..f.clone() };
    bare(a) == bare(b)
}
