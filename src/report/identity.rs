//! A finding's stable identity: what code scanning tracks an alert by and what a
//! baseline remembers.
//!
//! The fingerprint hashes the code, the repository-relative path, the subject
//! and the role, and nothing that moves when nothing about the recipe changed:
//! not the message (its wording and the target version are in it), not the
//! line, not the target ref. A bump to the next release therefore keeps every
//! alert that is still true open instead of closing and reopening all of them.
//! The same (code, path, subject, role) more than once in a run (one flag in two
//! variants of a file) gets `~1`, `~2`, ... in report order, so each result has
//! its own identity and a baseline counts occurrences.

use super::{repo_path, Finding, Location, RenderOptions};
use crate::finding::AuditReport;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The hash of what identifies a finding at `place` (32 hex digits).
fn base(f: &Finding, place: &Location, opts: &RenderOptions) -> String {
    // An engine-side finding's own place is a path in the engine's repository:
    // already relative to it, and not the user's folder.
    let path = if super::in_engine_source(f) && place == &f.location { place.path.clone() } else { repo_path(&place.path, opts) };
    let mut h = Sha256::new();
    for part in [f.code(), path.as_str(), f.subject.as_str(), f.role.as_deref().unwrap_or("")] {
        h.update(part.as_bytes());
        // A separator no part contains: ("ab", "c") and ("a", "bc") differ.
        h.update([0]);
    }
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Hands out fingerprints in report order, numbering repeats.
#[derive(Default)]
pub(crate) struct Fingerprints {
    seen: BTreeMap<String, usize>,
}

impl Fingerprints {
    pub(crate) fn next(&mut self, f: &Finding, place: &Location, opts: &RenderOptions) -> String {
        let base = base(f, place, opts);
        let n = self.seen.entry(base.clone()).or_insert(0);
        let out = if *n == 0 { base } else { format!("{base}~{n}") };
        *n += 1;
        out
    }
}

/// Each finding's fingerprint at its own location, in report order (what the
/// JSON report and baselines carry).
pub fn of_report(report: &AuditReport, opts: &RenderOptions) -> Vec<String> {
    let mut prints = Fingerprints::default();
    report.findings.iter().map(|f| prints.next(f, &f.location, opts)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::FindingKind;

    fn finding(path: &str, line: u32, subject: &str, role: Option<&str>, message: &str) -> Finding {
        let loc = Location { path: path.into(), line, column: 1, offset: None, len: None };
        let kind = FindingKind::Rule { id: "R001".into(), name: "r".into(), message: message.into(), doc: "rules/R001.yaml".into() };
        Finding::new(kind, loc, subject).role(role)
    }

    #[test]
    fn identity_ignores_line_message_and_folder_but_not_what_it_is_about() {
        let opts = RenderOptions { base_dir: Some("/repo".into()), cwd: Some("/repo".into()), ..RenderOptions::default() };
        let a = base(&finding("./r/a.yaml", 3, "x", Some("decode"), "at v1"), &finding("./r/a.yaml", 3, "", None, "").location, &opts);
        let moved = finding("/repo/r/a.yaml", 90, "x", Some("decode"), "at v2, reworded");
        assert_eq!(a, base(&moved, &moved.location, &opts), "line, message and ./ or absolute path do not count");
        for other in [
            finding("r/b.yaml", 3, "x", Some("decode"), "at v1"),
            finding("r/a.yaml", 3, "y", Some("decode"), "at v1"),
            finding("r/a.yaml", 3, "x", Some("prefill"), "at v1"),
            finding("r/a.yaml", 3, "x", None, "at v1"),
        ] {
            assert_ne!(a, base(&other, &other.location, &opts), "{other:?}");
        }
    }

    #[test]
    fn repeats_are_numbered_in_order() {
        let opts = RenderOptions::default();
        let mut prints = Fingerprints::default();
        let f = finding("r/a.yaml", 3, "x", None, "m");
        let (one, two, three) =
            (prints.next(&f, &f.location, &opts), prints.next(&f, &f.location, &opts), prints.next(&f, &f.location, &opts));
        assert_eq!(one.len(), 32);
        assert_eq!(two, format!("{one}~1"));
        assert_eq!(three, format!("{one}~2"));
    }
}
