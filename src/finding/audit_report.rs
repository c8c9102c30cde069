//! What one audit run found: the findings, the bumps it covered, what it could
//! not read, and the recipe texts the findings' spans index.

use super::Finding;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Something that could not be read; the rest of the audit went on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// One engine bump the audit covered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct BumpSummary {
    pub engine: String,
    pub from: Option<String>,
    pub to: String,
    /// How the refs were found (`image lmsysorg/sglang:v0.5.12.post1`, `--to`).
    pub how: Vec<String>,
    pub deployments: usize,
}

/// A risk rule the audit applied (reports list them next to the finding codes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RuleInfo {
    pub id: String,
    pub name: String,
    pub title: String,
    pub severity: crate::codes::Severity,
    /// The rule file: repository-relative for shipped rules, else as given.
    pub doc: String,
    /// The rule's `docs:` text (markdown), for SARIF's `help.markdown`; the JSON
    /// report links the rule file instead.
    #[serde(skip)]
    pub help: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditReport {
    pub findings: Vec<Finding>,
    pub bumps: Vec<BumpSummary>,
    /// Info lines: recipes skipped (other backends), what was not checked and why.
    pub notes: Vec<String>,
    pub problems: Vec<Problem>,
    pub deployments_audited: usize,
    /// Master-config entries checked against a linked recipe that was itself
    /// audited (see `audit::master`).
    pub master_entries_checked: usize,
    pub recipes: usize,
    /// Findings dropped by `--ignore`, the config's `ignore` or inline
    /// `# engine-audit: ignore[...]` comments.
    pub suppressed: usize,
    /// The risk rules applied, by id.
    pub rules: Vec<RuleInfo>,
    /// Each consumer build checked against an engine target, as (consumer id,
    /// engine id, consumer ref): a report says "no problem" only for a link that
    /// was checked (a Dynamo that only SGLang recipes install says nothing of vLLM).
    #[serde(skip)]
    pub links_checked: BTreeSet<(String, String, String)>,
    /// The text of every recipe file read, by path: what findings' byte spans index
    /// into (the text report shows the lines). Engine files are not kept.
    #[serde(skip)]
    pub sources: BTreeMap<String, String>,
}

impl AuditReport {
    /// Nothing was checked against an engine: the run exits 2 (bad input).
    pub fn nothing_audited(&self) -> bool {
        self.deployments_audited == 0 && self.master_entries_checked == 0
    }
}
