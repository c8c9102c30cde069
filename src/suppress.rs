//! What the user chose not to see: severity overrides, codes ignored by flag or
//! config, and inline `# engine-audit: ignore[EA003, R001]` comments in recipes.
//!
//! An inline directive applies to the finding's own line (a trailing comment) or,
//! written alone on its line, to the line below. Bare `ignore` silences every code.
//! Suppressed findings leave the report but are counted (`AuditReport::suppressed`).

use crate::codes::Severity;
use crate::finding::AuditReport;
use crate::finding::Finding;
use crate::recipe::RecipeFile;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The choices that apply to a whole run (flags merged with the config file).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Policy {
    /// Codes dropped everywhere (`--ignore`, config `ignore`).
    pub ignore: Vec<String>,
    /// Severity per code (config `severity`).
    pub severity: BTreeMap<String, Severity>,
}

/// Which codes one inline directive silences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Directive {
    All,
    Codes(Vec<String>),
}

impl Directive {
    fn covers(&self, code: &str) -> bool {
        match self {
            Directive::All => true,
            Directive::Codes(codes) => codes.iter().any(|c| c.eq_ignore_ascii_case(code)),
        }
    }
}

/// A comment (`#` at line start or after whitespace, as in YAML and shell) that
/// says `engine-audit: ignore` or `engine-audit: ignore[CODE, ...]`.
static DIRECTIVE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|\s)#\s*engine-audit:\s*ignore(?:\[([^\]]*)\])?(?:\s|$)").expect("a valid pattern"));

/// The directive on one line of text, if any.
pub(crate) fn directive(line: &str) -> Option<Directive> {
    let caps = DIRECTIVE.captures(line)?;
    Some(match caps.get(1) {
        None => Directive::All,
        Some(list) => Directive::Codes(list.as_str().split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect()),
    })
}

/// Whether `text` holds a directive covering `code` at 1-based `line`: trailing on
/// that line, or on a comment-only line just above it.
pub(crate) fn is_suppressed_at(text: &str, line: u32, code: &str) -> bool {
    let Some(index) = (line as usize).checked_sub(1) else { return false };
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let (above, own) = if index == 0 {
        (None, lines.next())
    } else {
        let mut rest = lines.skip(index - 1);
        (rest.next(), rest.next())
    };
    let own_covers = own.and_then(directive).is_some_and(|d| d.covers(code));
    let above_covers = above.filter(|l| l.trim_start().starts_with('#')).and_then(directive).is_some_and(|d| d.covers(code));
    own_covers || above_covers
}

/// Apply severity overrides, then drop ignored codes and inline-suppressed
/// findings (in the recipe files the run read), counting what was dropped.
pub(crate) fn apply(report: &mut AuditReport, files: &[RecipeFile], policy: &Policy) {
    // Every directive holds this literal: files without it (most) are never
    // searched line by line, once per finding.
    let texts: BTreeMap<&str, &str> =
        files.iter().filter(|f| f.text.contains("engine-audit:")).map(|f| (f.path.as_str(), f.text.as_str())).collect();
    for finding in &mut report.findings {
        if let Some(severity) = override_for(&policy.severity, finding.code()) {
            finding.severity = severity;
        }
    }
    let before = report.findings.len();
    report.findings.retain(|f| !is_ignored(f, policy) && !is_inline_suppressed(f, &texts));
    report.suppressed += before - report.findings.len();
}

fn override_for(overrides: &BTreeMap<String, Severity>, code: &str) -> Option<Severity> {
    overrides.iter().find(|(c, _)| c.eq_ignore_ascii_case(code)).map(|(_, s)| *s)
}

fn is_ignored(f: &Finding, policy: &Policy) -> bool {
    policy.ignore.iter().any(|c| c.eq_ignore_ascii_case(f.code()))
}

fn is_inline_suppressed(f: &Finding, texts: &BTreeMap<&str, &str>) -> bool {
    texts.get(f.location.path.as_str()).is_some_and(|text| is_suppressed_at(text, f.location.line, f.code()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_directives() {
        assert_eq!(directive("  cuda-graph-max-bs: 256  # engine-audit: ignore[EA003]"), Some(Directive::Codes(vec!["EA003".into()])));
        assert_eq!(
            directive("# engine-audit: ignore[EA003, R001] reviewed in #123"),
            Some(Directive::Codes(vec!["EA003".into(), "R001".into()]))
        );
        assert_eq!(directive("export X=1 #engine-audit:ignore"), Some(Directive::All));
        assert_eq!(directive("# engine-audit: ignored"), None);
        assert_eq!(directive("url: http://x/#engine-audit: ignore"), None, "a # inside a word is no comment");
        assert_eq!(directive("# engine-audit: check this"), None);
    }

    #[test]
    fn applies_to_its_line_or_the_line_below_a_comment_line() {
        let text = "a: 1\n# engine-audit: ignore[EA003]\nb: 2\nc: 3  # engine-audit: ignore\r\nd: 4\n";
        assert!(is_suppressed_at(text, 3, "EA003"));
        assert!(is_suppressed_at(text, 3, "ea003"));
        assert!(!is_suppressed_at(text, 3, "EA004"), "only the named code");
        assert!(is_suppressed_at(text, 4, "R001"), "bare ignore, CRLF line");
        assert!(!is_suppressed_at(text, 5, "R001"), "a trailing directive covers its own line only");
        assert!(!is_suppressed_at(text, 1, "EA003"));
        assert!(!is_suppressed_at(text, 0, "EA003"));
        assert!(!is_suppressed_at(text, 99, "EA003"));
    }
}
