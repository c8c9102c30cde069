//! Which releases a matrix covers: the engine repository's version tags in
//! PEP 440 order, pre-releases and dev builds only when asked, cut to the
//! `--since`/`--until` window.

use pep440_rs::Version;

/// The window of releases asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Window {
    pub since: Option<String>,
    pub until: Option<String>,
    /// Pre-releases (`rc`, `a`, `b`) and dev builds too.
    pub pre: bool,
    /// The Dynamo releases crossed with the engines' (`--dynamo-from`/`--dynamo-to`).
    pub dynamo_from: Option<String>,
    pub dynamo_to: Option<String>,
}

impl Window {
    /// The window of Dynamo releases, when one is asked for.
    pub(crate) fn dynamo_window(&self) -> Option<Window> {
        (self.dynamo_from.is_some() || self.dynamo_to.is_some()).then(|| Window {
            since: self.dynamo_from.clone(),
            until: self.dynamo_to.clone(),
            pre: self.pre,
            ..Window::default()
        })
    }
}

/// A release tag and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Release {
    pub tag: String,
    pub version: Version,
}

/// A bad window: names no version, or leaves no release.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WindowError {
    #[error("{flag} {value}: not a version (`v0.5.19`, `0.5.12.post1`)")]
    NotAVersion { flag: &'static str, value: String },
    #[error("no release of {engine} in the window{window} (the repository has {tags} version tags{pre})")]
    Empty { engine: String, window: String, tags: usize, pre: &'static str },
}

impl WindowError {
    /// The same error about the Dynamo window, naming its flags.
    pub(crate) fn dynamo(self) -> WindowError {
        match self {
            WindowError::NotAVersion { flag, value } => {
                WindowError::NotAVersion { flag: if flag == "--since" { "--dynamo-from" } else { "--dynamo-to" }, value }
            }
            other => other,
        }
    }
}

/// The releases among `tags` in `window`, oldest first. Tags that name no
/// version (branches' names, `nightly`) are never releases.
pub(crate) fn releases(engine: &str, tags: Vec<String>, window: &Window) -> Result<Vec<Release>, WindowError> {
    let bound = |flag: &'static str, value: &Option<String>| -> Result<Option<Version>, WindowError> {
        value
            .as_ref()
            .map(|v| crate::source::parse_version_ref(v).ok_or_else(|| WindowError::NotAVersion { flag, value: v.clone() }))
            .transpose()
    };
    let (since, until) = (bound("--since", &window.since)?, bound("--until", &window.until)?);
    let mut all: Vec<Release> =
        tags.into_iter().filter_map(|tag| Some(Release { version: crate::source::parse_version_ref(&tag)?, tag })).collect();
    let versions = all.len();
    all.retain(|r| window.pre || !(r.version.any_prerelease() || r.version.is_local()));
    all.retain(|r| since.as_ref().is_none_or(|s| r.version >= *s) && until.as_ref().is_none_or(|u| r.version <= *u));
    // One column per version: `v0.5.19` and `0.5.19` tagging the same release.
    all.sort_by(|a, b| a.version.cmp(&b.version).then(b.tag.starts_with('v').cmp(&a.tag.starts_with('v'))).then(a.tag.cmp(&b.tag)));
    all.dedup_by(|later, first| later.version == first.version);
    if all.is_empty() {
        let pre = if window.pre { "" } else { "; pre-releases need --pre" };
        let window = match (&window.since, &window.until) {
            (None, None) => String::new(),
            (s, u) => format!(" {} … {}", s.as_deref().unwrap_or("(oldest)"), u.as_deref().unwrap_or("(newest)")),
        };
        return Err(WindowError::Empty { engine: engine.to_string(), window, tags: versions, pre });
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn names(r: &[Release]) -> Vec<&str> {
        r.iter().map(|r| r.tag.as_str()).collect()
    }

    #[test]
    fn releases_are_ordered_by_pep440_not_by_spelling() {
        let got =
            releases("SGLang", tags(&["v0.5.9", "v0.5.10", "v0.5.12.post1", "v0.5.12", "gateway-v1.0", "nightly"]), &Window::default())
                .unwrap();
        assert_eq!(names(&got), ["v0.5.9", "v0.5.10", "v0.5.12", "v0.5.12.post1"]);
    }

    #[test]
    fn pre_releases_and_dev_builds_only_when_asked() {
        let all = tags(&["v0.5.19", "v0.5.20rc0", "v0.5.20.dev1", "v0.5.20"]);
        assert_eq!(names(&releases("SGLang", all.clone(), &Window::default()).unwrap()), ["v0.5.19", "v0.5.20"]);
        let pre = Window { pre: true, ..Window::default() };
        assert_eq!(names(&releases("SGLang", all, &pre).unwrap()), ["v0.5.19", "v0.5.20.dev1", "v0.5.20rc0", "v0.5.20"]);
    }

    #[test]
    fn the_window_is_inclusive_and_a_bare_version_names_its_tag() {
        let all = tags(&["v0.5.12.post1", "v0.5.16", "v0.5.19", "v0.5.23"]);
        let w = Window { since: Some("0.5.12.post1".into()), until: Some("v0.5.19".into()), ..Window::default() };
        assert_eq!(names(&releases("SGLang", all, &w).unwrap()), ["v0.5.12.post1", "v0.5.16", "v0.5.19"]);
    }

    #[test]
    fn a_bound_that_is_no_version_or_an_empty_window_is_an_error_that_says_so() {
        let w = Window { since: Some("main".into()), ..Window::default() };
        let e = releases("SGLang", tags(&["v1.0.0"]), &w).unwrap_err().to_string();
        assert!(e.contains("--since main: not a version"), "{e}");
        let w = Window { since: Some("v2.0.0".into()), ..Window::default() };
        let e = releases("SGLang", tags(&["v1.0.0", "v1.1.0rc1"]), &w).unwrap_err().to_string();
        assert!(e.contains("no release of SGLang in the window v2.0.0 … (newest)") && e.contains("2 version tags"), "{e}");
    }
}
