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

/// How far a run read what it was given. Every role of every deployment ends
/// audited, not audited (named, with the reason and what would enable it), or
/// unreadable (an EA305 finding): nothing read in part is called clean.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Coverage {
    /// Deployments found in the recipes (one per engine and image of a recipe
    /// variant, launch site or table configuration).
    pub deployments: usize,
    /// Of those, audited against their engine's target.
    pub audited: usize,
    /// Roles not audited, grouped by deployment.
    pub not_audited: Vec<NotAudited>,
    /// Recipe files, or parts of them, that could not be read (each an EA305 finding).
    pub unreadable: usize,
}

/// A deployment (or some of its roles) this run did not audit, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct NotAudited {
    pub path: String,
    pub deployment: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub roles: Vec<String>,
    /// The engine's id (`tilert`).
    pub engine: String,
    /// Why (`no profile yet`, `no vLLM source given`, `ref v0.9 not in the repository`).
    pub reason: String,
    /// What would audit it (`--vllm PATH|URL`); `None` when nothing can yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable: Option<String>,
    /// The user acknowledged the engine (`--allow-unaudited`, `allow_unaudited:`):
    /// still listed, no longer failing the run.
    pub acknowledged: bool,
}

impl Coverage {
    /// Not-audited deployments the user did not acknowledge: they fail the run.
    pub fn unacknowledged(&self) -> impl Iterator<Item = &NotAudited> {
        self.not_audited.iter().filter(|n| !n.acknowledged)
    }

    /// `audited 3 of 5 deployments; 2 not audited (TileRT: no profile yet; vLLM: no source given); 1 unreadable`.
    pub fn line(&self) -> String {
        let mut out =
            format!("audited {} of {} deployment{}", self.audited, self.deployments, if self.deployments == 1 { "" } else { "s" });
        if !self.not_audited.is_empty() {
            let mut why: Vec<String> = Vec::new();
            for n in &self.not_audited {
                let engine = crate::profiles::display(&n.engine);
                let ack = if n.acknowledged { ", acknowledged" } else { "" };
                let one = format!("{engine}: {}{ack}", n.reason);
                if !why.contains(&one) {
                    why.push(one);
                }
            }
            out.push_str(&format!("; {} not audited ({})", self.not_audited.len(), why.join("; ")));
        }
        if self.unreadable > 0 {
            out.push_str(&format!("; {} unreadable", self.unreadable));
        }
        out
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditReport {
    /// What was audited, not audited and unreadable (the coverage line).
    pub coverage: Coverage,
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
