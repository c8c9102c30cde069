//! The catalog of finding codes: stable code, name, default severity, one-line
//! summary, and the doc page (`docs/codes/<CODE>.md`) each finding links to.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What part of a deployment a code is about: the report's sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    /// Server flags against the engine's parser.
    Flags,
    /// Environment variables against the engine's registry.
    Env,
    /// A consumer of the engine (Dynamo's worker) against the engine's code.
    Consumer,
    /// Recipes against each other and the master config; input the audit could not place.
    Recipes,
    /// A risk rule from `rules/`.
    Rules,
}

/// What happens at the target when the finding is true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Impact {
    /// The server or worker does not start, or the benchmark runs something else.
    Breaks,
    /// It runs, but a setting is ignored, forwarded, or means something else.
    Degrades,
    /// Worth knowing; nothing the recipe says changes.
    Informs,
    /// The audit could not read or place part of its input.
    InputProblem,
}

/// Where a finding of the code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Located {
    /// A line of the user's recipe, script or master config.
    Recipe,
    /// A line of the consumer's source (Dynamo); reports also show the recipe
    /// places that install that build.
    ConsumerSource,
}

/// What a code is about, and so when it can fire (cargo-semver-checks' guard:
/// a release audited against itself gives no `Bump` finding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A difference between the current and the target release: a default,
    /// a flag's type, an env var that was registered before.
    Bump,
    /// The recipe against the target release alone (or recipe files against
    /// each other): fires on a release audited against itself too.
    Target,
}

pub struct CodeInfo {
    pub code: Code,
    /// `EA003`: the code as written.
    pub id: &'static str,
    pub name: &'static str,
    pub area: Area,
    pub severity: Severity,
    pub impact: Impact,
    pub located: Located,
    pub scope: Scope,
    pub summary: &'static str,
}

macro_rules! catalog {
    ($($code:ident $name:literal $area:ident $sev:ident $impact:ident $located:ident $scope:ident $summary:literal;)*) => {
        /// A catalog code; its facts are [`Code::info`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Code {
            $($code,)*
        }

        pub const CATALOG: &[CodeInfo] = &[
            $(CodeInfo {
                code: Code::$code,
                id: stringify!($code),
                name: $name,
                area: Area::$area,
                severity: Severity::$sev,
                impact: Impact::$impact,
                located: Located::$located,
                scope: Scope::$scope,
                summary: $summary,
            },)*
        ];
    };
}

// One line per code: id, name, area, default severity, impact, where it points,
// what it needs (a bump or only the target), summary.
catalog! {
    EA001 "unknown-flag" Flags Error Breaks Recipe Target "the target engine's parser rejects this flag";
    EA002 "removed-flag" Flags Error Breaks Recipe Target "the flag is still parsed but makes the server refuse to start";
    EA003 "deprecated-alias" Flags Warning Degrades Recipe Target "the flag is a deprecated alias that forwards to a new flag";
    EA004 "deprecated-noop" Flags Warning Degrades Recipe Target "the flag is accepted, only warns, and does nothing";
    EA005 "invalid-choice" Flags Error Breaks Recipe Target "the value is not among the flag's choices at the target";
    EA006 "invalid-value" Flags Error Breaks Recipe Target "the value has the wrong type or arity for the flag";
    EA007 "default-changed" Flags Info Informs Recipe Bump "a flag the recipe does not set changed its default";
    EA008 "flag-semantics-changed" Flags Warning Degrades Recipe Bump "the flag's type, nargs or action changed";
    EA009 "abbreviated-flag" Flags Info Informs Recipe Target "the flag is accepted only as argparse's abbreviation of a longer option";
    EA101 "env-removed" Env Warning Degrades Recipe Target "the env var is no longer read at the target; an earlier release read it";
    EA102 "env-renamed" Env Warning Degrades Recipe Target "the env var is deprecated and forwarded to a replacement";
    EA103 "env-removal-notice" Env Warning Degrades Recipe Target "the env var is only read to log that it was removed";
    EA104 "env-unknown" Env Info Informs Recipe Target "no release the repository holds reads the env var";
    EA105 "env-default-changed" Env Info Informs Recipe Bump "an env var's default changed";
    EA201 "module-missing" Consumer Error Breaks ConsumerSource Target "an imported engine module is absent at the target";
    EA202 "symbol-missing" Consumer Error Breaks ConsumerSource Target "an imported name is not defined in that module at the target";
    EA203 "attribute-missing" Consumer Error Breaks ConsumerSource Target "a ServerArgs (or other engine class) member used is absent";
    EA204 "guarded-fallback" Consumer Warning Degrades ConsumerSource Target "missing at the target, but the use is guarded and falls back";
    EA205 "pin-mismatch" Consumer Warning Degrades ConsumerSource Target "the consumer's requirement on the engine excludes the target";
    EA301 "image-mismatch" Recipes Error Breaks Recipe Target "the master config image differs from the recipe's container";
    EA302 "engine-ref-mismatch" Recipes Error Breaks Recipe Target "the master router version differs from the recipe's dynamo ref";
    EA303 "unresolved-ref" Recipes Warning InputProblem Recipe Target "an image tag or wheel version maps to no engine ref";
    EA304 "duplicate-key" Recipes Warning Degrades Recipe Target "a recipe sets a key twice in one map; the loader keeps the last";
    EA305 "unreadable-recipe" Recipes Error InputProblem Recipe Target "a recipe the audit was given, or a master config links, could not be read";
    EA306 "unread-launch" Recipes Warning InputProblem Recipe Target "a launch script passes flags the audit cannot read, or starts a server it cannot find";
}

/// A finding's code as written (`EA003`, or a rule id such as `R001`): the
/// catalog's facts about it. Rule ids are in the rules area; their severity
/// and impact come from the rule itself.
pub(crate) fn area_of(code: &str) -> Area {
    Code::parse(code).map_or(Area::Rules, |c| c.info().area)
}

/// Whether findings of `code` point into the consumer's source.
pub(crate) fn in_consumer_source(code: &str) -> bool {
    Code::parse(code).is_some_and(|c| c.info().located == Located::ConsumerSource)
}

/// The impact of a catalog code (`None` for rules).
pub(crate) fn impact_of(code: &str) -> Option<Impact> {
    Code::parse(code).map(|c| c.info().impact)
}

/// What a catalog code needs to fire (`None` for rules).
pub(crate) fn scope_of(code: &str) -> Option<Scope> {
    Code::parse(code).map(|c| c.info().scope)
}

impl Area {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Area::Flags => "flags",
            Area::Env => "env",
            Area::Consumer => "dynamo",
            Area::Recipes => "consistency",
            Area::Rules => "rules",
        }
    }
}

impl Code {
    pub fn info(self) -> &'static CodeInfo {
        CATALOG.iter().find(|c| c.code == self).expect("every code is in the catalog")
    }
    pub fn as_str(self) -> &'static str {
        self.info().id
    }
    /// Repository-relative doc page.
    pub(crate) fn doc_path(self) -> String {
        format!("docs/codes/{self:?}.md")
    }
    /// The doc page, as shipped in the binary.
    pub(crate) fn doc_page(self) -> Option<&'static str> {
        let name = format!("{self:?}.md");
        crate::embedded::CODE_DOCS.iter().find(|(path, _)| *path == name).and_then(|(_, bytes)| std::str::from_utf8(bytes).ok())
    }
    pub fn parse(s: &str) -> Option<Code> {
        CATALOG.iter().map(|c| c.code).find(|c| format!("{c:?}").eq_ignore_ascii_case(s))
    }
}

/// The table of `docs/codes/README.md`, between its markers: one row per
/// catalog line, so the docs cannot disagree with the tool.
#[cfg(test)]
fn docs_table() -> String {
    let mut out = String::from("| code | name | area | severity | impact | fires on | summary |\n|---|---|---|---|---|---|---|\n");
    for c in CATALOG {
        let impact = match c.impact {
            Impact::Breaks => "breaks",
            Impact::Degrades => "degrades",
            Impact::Informs => "informs",
            Impact::InputProblem => "input problem",
        };
        let scope = match c.scope {
            Scope::Bump => "a change between the releases",
            Scope::Target => "the target release",
        };
        out.push_str(&format!(
            "| [{code}]({code}.md) | {} | {} | {} | {impact} | {scope} | {} |\n",
            c.name,
            c.area.as_str(),
            c.severity.as_str(),
            c.summary,
            code = c.code.as_str()
        ));
    }
    out
}

/// Markers around the generated table in `docs/codes/README.md`.
#[cfg(test)]
const DOCS_TABLE_START: &str = "<!-- codes table: generated from src/codes.rs -->\n";
#[cfg(test)]
const DOCS_TABLE_END: &str = "<!-- end of codes table -->\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// `UPDATE_DOCS=1 cargo test docs_table` rewrites the table.
    #[test]
    fn the_docs_table_is_the_catalog() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/codes/README.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (start, end) = (text.find(DOCS_TABLE_START).expect("start marker"), text.find(DOCS_TABLE_END).expect("end marker"));
        let wanted = format!("{}{DOCS_TABLE_START}{}{}", &text[..start], docs_table(), &text[end..]);
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &wanted).unwrap();
        }
        assert_eq!(text, wanted, "docs/codes/README.md disagrees with the catalog: UPDATE_DOCS=1 cargo test docs_table");
    }

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
