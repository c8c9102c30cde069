//! Turning what a user or recipe names (a tag, a bare version, a branch, a sha) into
//! candidate ref names, and picking the nearest tags for an error message.

/// A ref resolved to a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRef {
    /// What the user asked for.
    pub wanted: String,
    /// The full ref name it matched (`refs/tags/v0.5.19`), or the sha itself.
    pub matched: String,
    pub commit: String,
}

/// Full ref names to try for `wanted`, most specific first. A bare version
/// (`0.5.19`) also tries the `v`-prefixed tag, as engines tag `v0.5.19`.
pub(super) fn candidate_refs(wanted: &str) -> Vec<String> {
    let mut out = Vec::new();
    if wanted.starts_with("refs/") {
        out.push(wanted.to_string());
        return out;
    }
    out.push(format!("refs/tags/{wanted}"));
    if parse_version_ref(wanted).is_some() && !wanted.starts_with('v') {
        out.push(format!("refs/tags/v{wanted}"));
    }
    out.push(format!("refs/heads/{wanted}"));
    out.push(format!("refs/remotes/origin/{wanted}"));
    out
}

/// A PEP 440 version named by a ref (`v0.5.12.post1` → `0.5.12.post1`), if it is one.
pub fn parse_version_ref(name: &str) -> Option<pep440_rs::Version> {
    let bare = name.strip_prefix("refs/tags/").unwrap_or(name);
    let bare = bare.strip_prefix('v').unwrap_or(bare);
    // Only digits-first strings: PEP 440 also accepts things like `main` as nothing,
    // but it would accept a bare number like `1` too, which is fine as a version.
    if !bare.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    bare.parse().ok()
}

/// Whether `s` can be a (possibly abbreviated) commit id.
pub(super) fn looks_like_sha(s: &str) -> bool {
    (4..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// One step from a commit to an ancestor, as git spells it after a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// `~N`: N first parents back.
    Back(usize),
    /// `^N`: the N-th parent (`^0` is the commit itself).
    Parent(usize),
}

/// `main~2^2` as the name `main` and its steps; `None` for any other revision
/// syntax (`@{u}`, `:/text`, ranges), which only `git rev-parse` knows.
pub(super) fn split_revision(rev: &str) -> Option<(&str, Vec<Step>)> {
    let at = rev.find(['~', '^']).unwrap_or(rev.len());
    let (name, mut rest) = rev.split_at(at);
    if name.is_empty() || (name.contains(['@', ':', ' ']) && name != "@") || name.contains("..") {
        return None;
    }
    let mut steps = Vec::new();
    while let Some(op) = rest.chars().next() {
        let digits = rest[1..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len(), |i| i + 1);
        // A bare `~` or `^` means 1; a count too large for usize is not a revision.
        let n = if digits == 1 { 1 } else { rest[1..digits].parse().ok()? };
        steps.push(match op {
            '~' => Step::Back(n),
            '^' => Step::Parent(n),
            _ => return None,
        });
        rest = &rest[digits..];
    }
    Some((name, steps))
}

/// The tags closest to `wanted`: same version family first, then by spelling.
pub(super) fn nearest_tags(wanted: &str, tags: &[String], limit: usize) -> Vec<String> {
    let wanted_bare = wanted.trim_start_matches('v');
    let mut scored: Vec<(usize, f64, &String)> = tags
        .iter()
        .map(|t| {
            let bare = t.trim_start_matches('v');
            let prefix = common_prefix(wanted_bare, bare);
            let ratio = crate::spelling::similarity(wanted_bare, bare, 0.5).unwrap_or(0.0);
            (prefix, ratio, t)
        })
        .filter(|(prefix, ratio, _)| *prefix > 0 || *ratio > 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal)).then(a.2.cmp(b.2)));
    scored.into_iter().take(limit).map(|(_, _, t)| t.clone()).collect()
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_versions_also_try_the_v_tag() {
        assert_eq!(candidate_refs("0.5.19"), ["refs/tags/0.5.19", "refs/tags/v0.5.19", "refs/heads/0.5.19", "refs/remotes/origin/0.5.19"]);
        assert_eq!(candidate_refs("main")[0], "refs/tags/main");
        assert!(!candidate_refs("main").contains(&"refs/tags/vmain".to_string()));
    }

    #[test]
    fn revisions_split_into_a_name_and_steps() {
        assert_eq!(split_revision("main"), Some(("main", vec![])));
        assert_eq!(split_revision("HEAD~1"), Some(("HEAD", vec![Step::Back(1)])));
        assert_eq!(split_revision("origin/main~12^2^"), Some(("origin/main", vec![Step::Back(12), Step::Parent(2), Step::Parent(1)])));
        assert_eq!(split_revision("v1.0^0"), Some(("v1.0", vec![Step::Parent(0)])));
        assert_eq!(split_revision("@~"), Some(("@", vec![Step::Back(1)])));
        for other in ["main@{u}", ":/fix", "a..b", "HEAD~x", "~1", "HEAD^{tree}", "HEAD~99999999999999999999999"] {
            assert_eq!(split_revision(other), None, "{other}");
        }
    }

    #[test]
    fn versions_are_pep440() {
        assert_eq!(parse_version_ref("v0.5.12.post1").unwrap().to_string(), "0.5.12.post1");
        assert_eq!(parse_version_ref("1.5.0.dev20260910").unwrap().to_string(), "1.5.0.dev20260910");
        assert!(parse_version_ref("main").is_none());
    }

    #[test]
    fn nearest_tags_prefer_the_same_version_family() {
        let tags: Vec<String> = ["v0.5.12.post1", "v0.5.16", "v0.5.19", "v0.5.23", "v1.5.0"].iter().map(|s| s.to_string()).collect();
        let near = nearest_tags("v0.5.18", &tags, 3);
        assert_eq!(near[0], "v0.5.16");
        assert!(near.contains(&"v0.5.19".to_string()));
        assert!(!near.contains(&"v1.5.0".to_string()));
    }
}
