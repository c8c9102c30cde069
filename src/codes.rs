//! The catalog of finding codes: stable code, name, default severity, one-line
//! summary, and the doc page (`docs/codes/<CODE>.md`) each finding links to.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Code {
    EA001, EA002, EA003, EA004, EA005, EA006, EA007, EA008,
    EA101, EA102, EA103, EA104, EA105,
    EA201, EA202, EA203, EA204, EA205,
    EA301, EA302, EA303, EA304, EA305,
}

pub struct CodeInfo {
    pub code: Code,
    pub name: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

macro_rules! catalog {
    ($($code:ident $name:literal $sev:ident $summary:literal;)*) => {
        pub const CATALOG: &[CodeInfo] = &[
            $(CodeInfo { code: Code::$code, name: $name, severity: Severity::$sev, summary: $summary },)*
        ];
    };
}

catalog! {
    EA001 "unknown-flag" Error "the target engine's parser rejects this flag";
    EA002 "removed-flag" Error "the flag is still parsed but makes the server refuse to start";
    EA003 "deprecated-alias" Warning "the flag is a deprecated alias that forwards to a new flag";
    EA004 "deprecated-noop" Warning "the flag is accepted, only warns, and does nothing";
    EA005 "invalid-choice" Error "the value is not among the flag's choices at the target";
    EA006 "invalid-value" Error "the value has the wrong type or arity for the flag";
    EA007 "default-changed" Info "a flag the recipe does not set changed its default";
    EA008 "flag-semantics-changed" Warning "the flag's type, nargs or action changed";
    EA101 "env-removed" Warning "the env var is gone from the registry and no longer read";
    EA102 "env-renamed" Warning "the env var is deprecated and forwarded to a replacement";
    EA103 "env-removal-notice" Warning "the env var is only read to log that it was removed";
    EA104 "env-unknown" Info "the env var is known to neither release (typo?)";
    EA105 "env-default-changed" Info "an env var's default changed";
    EA201 "module-missing" Error "an imported engine module is absent at the target";
    EA202 "symbol-missing" Error "an imported name is not defined in that module at the target";
    EA203 "attribute-missing" Error "a ServerArgs (or other engine class) member used is absent";
    EA204 "guarded-fallback" Warning "missing at the target, but the use is guarded and falls back";
    EA205 "pin-mismatch" Warning "the consumer's requirement on the engine excludes the target";
    EA301 "image-mismatch" Error "the master config image differs from the recipe's container";
    EA302 "engine-ref-mismatch" Error "the master router version differs from the recipe's dynamo ref";
    EA303 "unresolved-ref" Error "an image tag or wheel version maps to no engine ref";
    EA304 "duplicate-key" Warning "a recipe sets a key twice in one map; the loader keeps the last";
    EA305 "unreadable-recipe" Error "a recipe the audit was given, or a master config links, could not be read";
}

impl Code {
    pub fn info(self) -> &'static CodeInfo {
        CATALOG.iter().find(|c| c.code == self).expect("every code is in the catalog")
    }
    pub fn as_str(self) -> String {
        format!("{self:?}")
    }
    /// Repository-relative doc page.
    pub fn doc_path(self) -> String {
        format!("docs/codes/{self:?}.md")
    }
    /// The doc page, as shipped in the binary.
    pub fn doc_page(self) -> Option<&'static str> {
        let name = format!("{self:?}.md");
        crate::embedded::CODE_DOCS
            .iter()
            .find(|(path, _)| *path == name)
            .and_then(|(_, bytes)| std::str::from_utf8(bytes).ok())
    }
    pub fn parse(s: &str) -> Option<Code> {
        CATALOG.iter().map(|c| c.code).find(|c| format!("{c:?}").eq_ignore_ascii_case(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_doc_page_and_a_unique_name() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut names = std::collections::BTreeSet::new();
        for info in CATALOG {
            assert!(names.insert(info.name), "duplicate name {}", info.name);
            let page = std::path::Path::new(root).join(info.code.doc_path());
            let text = std::fs::read_to_string(&page).unwrap_or_else(|_| panic!("missing {}", page.display()));
            assert!(text.starts_with(&format!("# {:?} {}", info.code, info.name)), "{} title", page.display());
        }
        assert_eq!(Code::parse("ea003"), Some(Code::EA003));
        assert!(Code::EA003.doc_page().unwrap().contains("--cuda-graph-max-bs"), "embedded doc pages");
    }
}
