//! Absolute links to engine-audit's own documentation.
//!
//! Reports are read away from this repository (a PR page, code scanning, a CI
//! log), so a repository-relative `docs/codes/EA003.md` leads nowhere, and SARIF
//! 2.1.0 (§3.49.12) requires `helpUri` to be an absolute URI. Links point at the
//! repository at the running version's tag, so a page matches the binary that
//! wrote the report; the config's `docs_url` points them elsewhere (a fork, an
//! internal mirror).

use crate::finding::RuleInfo;

/// The repository at this version's tag: `https://github.com/o/engine-audit/blob/v0.1.0`.
pub const DEFAULT_DOCS_URL: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/v", env!("CARGO_PKG_VERSION"));

/// `{base}/{path}` with exactly one `/` between.
fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), super::encode_path(path.trim_start_matches('/')))
}

/// The absolute page of a doc path a finding or rule carries: shipped pages
/// (`docs/codes/EA003.md`, `rules/R001-….yaml` of a built-in rule) under
/// `base`; `None` for a rule file of the user's (`--rules DIR`), which only
/// exists on their disk.
pub fn url(base: &str, doc: &str) -> Option<String> {
    shipped(doc).then(|| join(base, doc))
}

/// Whether `doc` is one of this repository's files: a code page or a built-in rule.
fn shipped(doc: &str) -> bool {
    if let Some(name) = doc.strip_prefix("docs/codes/") {
        return crate::embedded::CODE_DOCS.iter().any(|(path, _)| *path == name);
    }
    if let Some(name) = doc.strip_prefix("rules/") {
        return crate::embedded::RULE_FILES.iter().any(|(path, _)| *path == name);
    }
    false
}

/// The link a report shows for `doc`: the absolute page when shipped, else the
/// path as it is (a user's rule file).
pub fn link(base: &str, doc: &str) -> String {
    url(base, doc).unwrap_or_else(|| doc.to_string())
}

/// The page behind `doc` as markdown, for SARIF's `help.markdown`: a code's
/// doc page as shipped in the binary, a rule's `docs:` text.
pub(crate) fn page(doc: &str, rule: Option<&RuleInfo>) -> Option<String> {
    if let Some(name) = doc.strip_prefix("docs/codes/") {
        let (_, bytes) = crate::embedded::CODE_DOCS.iter().find(|(path, _)| *path == name)?;
        return std::str::from_utf8(bytes).ok().map(str::to_string);
    }
    let rule = rule?;
    let docs = rule.help.trim();
    (!docs.is_empty()).then(|| format!("# {} {}\n\n{}\n\n{docs}\n", rule.id, rule.name, rule.title))
}

/// The index of every code: `{base}/docs/codes/README.md`.
pub fn codes_index(base: &str) -> String {
    join(base, "docs/codes/README.md")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_this_version_s_tag() {
        assert!(DEFAULT_DOCS_URL.starts_with("https://"), "{DEFAULT_DOCS_URL}");
        assert!(DEFAULT_DOCS_URL.ends_with(&format!("/blob/v{}", env!("CARGO_PKG_VERSION"))));
    }

    #[test]
    fn shipped_pages_are_absolute_and_user_rules_stay_paths() {
        let base = "https://example.com/ea/blob/v1.2.3/";
        assert_eq!(url(base, "docs/codes/EA003.md").as_deref(), Some("https://example.com/ea/blob/v1.2.3/docs/codes/EA003.md"));
        let rule = crate::embedded::RULE_FILES[0].0;
        assert_eq!(url(base, &format!("rules/{rule}")), Some(format!("https://example.com/ea/blob/v1.2.3/rules/{rule}")));
        // A page that is not shipped is no link: a typo must not become a 404.
        assert_eq!(url(base, "docs/codes/EA999.md"), None);
        assert_eq!(url(base, "rules/R900-mine.yaml"), None);
        assert_eq!(url(base, "/home/me/ci/rules/R900.yaml"), None);
        assert_eq!(link(base, "ci/rules/R900.yaml"), "ci/rules/R900.yaml");
    }

    #[test]
    fn code_pages_are_the_shipped_files() {
        let text = page("docs/codes/EA003.md", None).unwrap();
        assert!(text.starts_with("# EA003"), "{text}");
        assert_eq!(page("docs/codes/EA999.md", None), None);
    }
}
