//! Risk rules: YAML files (`rules/R001-*.yaml`) that pair deployment conditions
//! with evidence in the target engine's source. A rule fires only when its
//! `when` holds for a role of a deployment and every evidence predicate holds at
//! the target ref; each hit cites the engine lines that prove it.
//!
//! A new rule made of known predicate kinds is one YAML file, no Rust change.

pub(crate) mod eval;
pub(crate) mod evidence;
mod locate;
pub(crate) mod model;
pub(crate) mod pyscope;
pub(crate) mod selftest;
pub(crate) mod when;

pub(crate) use eval::{evaluate, evaluate_with, RuleHit};
pub(crate) use evidence::{EvidenceMemo, SourceIndex};
pub(crate) use model::{RuleSpec, Severity};
pub(crate) use selftest::run_self_tests;
pub(crate) use when::{DeploymentFacts, Fact, FactValue, RoleFacts, SpanRef};

use model::{Evidence, ValueCond, When};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// A loaded, validated rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub spec: RuleSpec,
    pub origin: RuleOrigin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOrigin {
    /// Shipped in the binary; the name under `rules/`.
    BuiltIn(String),
    /// Read from `--rules DIR`.
    File(PathBuf),
}

impl Rule {
    /// Repository-relative (built-in) or on-disk path of the rule file: its documentation.
    pub(crate) fn doc_path(&self) -> String {
        match &self.origin {
            RuleOrigin::BuiltIn(name) => format!("rules/{name}"),
            RuleOrigin::File(p) => p.display().to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RuleError {
    #[error("{file}:{line}:{column}: {message}")]
    #[diagnostic(code(engine_audit::rules::parse), help("see rules/README.md for the rule format"))]
    Parse {
        file: String,
        line: usize,
        column: usize,
        message: String,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("here")]
        at: Option<miette::SourceSpan>,
    },

    #[error("{file}:{line}:{column}: {key}: {message}")]
    #[diagnostic(code(engine_audit::rules::invalid), help("see rules/README.md for the rule format"))]
    Invalid {
        file: String,
        line: usize,
        column: usize,
        key: String,
        message: String,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("{key}")]
        at: Option<miette::SourceSpan>,
    },

    #[error("{file}: rule id {id} is also defined in {other}")]
    #[diagnostic(code(engine_audit::rules::duplicate), help("rule ids are unique; a --rules file cannot redefine a shipped rule"))]
    Duplicate { file: String, id: String, other: String },

    #[error("{path}: cannot read rules: {message}")]
    #[diagnostic(code(engine_audit::rules::io))]
    Io { path: String, message: String },
}

/// The shipped rules (embedded at build time) plus every `*.yaml`/`*.yml` in
/// `extra_dirs`, sorted by id. The first malformed file is the error.
pub fn load_rules(extra_dirs: &[PathBuf]) -> Result<Vec<Rule>, RuleError> {
    load_rules_with(extra_dirs, Vec::new())
}

/// [`load_rules`] plus rule files already read (`pr` reads the recipes
/// repo's own rules from its base commit): their text and where it came from.
pub(crate) fn load_rules_with(extra_dirs: &[PathBuf], read: Vec<(String, RuleOrigin)>) -> Result<Vec<Rule>, RuleError> {
    let mut sources: Vec<(String, RuleOrigin)> = crate::embedded::RULE_FILES
        .iter()
        .filter(|(name, _)| is_rule_file(Path::new(name)))
        .map(|(name, bytes)| (String::from_utf8_lossy(bytes).into_owned(), RuleOrigin::BuiltIn(name.to_string())))
        .collect();
    for dir in extra_dirs {
        let read = std::fs::read_dir(dir).map_err(|e| RuleError::Io { path: dir.display().to_string(), message: e.to_string() })?;
        let mut files: Vec<PathBuf> = read.flatten().map(|e| e.path()).filter(|p| p.is_file() && is_rule_file(p)).collect();
        files.sort();
        for path in files {
            let text =
                std::fs::read_to_string(&path).map_err(|e| RuleError::Io { path: path.display().to_string(), message: e.to_string() })?;
            sources.push((text, RuleOrigin::File(path)));
        }
    }
    sources.extend(read);
    // Parsed in parallel (a rule's YAML costs about a millisecond); the first
    // error in file order is the one reported, whatever the thread count.
    let parsed: Vec<Result<Rule, RuleError>> = sources.into_par_iter().map(|(text, origin)| parse_rule(&text, origin)).collect();
    let mut rules = parsed.into_iter().collect::<Result<Vec<Rule>, RuleError>>()?;
    check_unique(&rules)?;
    rules.sort_by(|a, b| a.spec.id.cmp(&b.spec.id));
    Ok(rules)
}

pub(crate) fn is_rule_file(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// Parse and validate one rule file's text.
pub fn parse_rule(text: &str, origin: RuleOrigin) -> Result<Rule, RuleError> {
    let rule_stub = Rule { spec: placeholder_spec(), origin: origin.clone() };
    let file = rule_stub.doc_path();
    let spec: RuleSpec = model::from_yaml(text).map_err(|e| {
        let loc = e.location();
        let mut message = crate::recipe::yaml::strip_serde_location(&e.to_string()).to_string();
        // serde always has a position here; 1:1 (the document) should it ever not.
        let mut at = loc.as_ref().map_or((1, 1), |l| (l.line(), l.column()));
        if let Some((key, line, column)) = locate::key_of_error(text, &message) {
            at = (line, column);
            if !message.starts_with(&key) {
                message = format!("{key}: {message}");
            }
        }
        let (src, at_span) = snippet(&file, text, at.0, at.1);
        RuleError::Parse { file: file.clone(), line: at.0, column: at.1, message, src, at: at_span }
    })?;
    let checked = validate(&spec).and_then(|()| match origin {
        RuleOrigin::File(_) => compile_patterns(&spec.when, "when"),
        RuleOrigin::BuiltIn(_) => Ok(()),
    });
    checked.map_err(|Invalid { key, message }| {
        let (line, column) = locate::key_path(text, &key);
        let (src, at) = snippet(&file, text, line, column);
        RuleError::Invalid { file, line, column, key, message, src, at }
    })?;
    Ok(Rule { spec, origin })
}

/// The lines around `line:column` of a rule file, for the diagnostic.
fn snippet(
    file: &str,
    text: &str,
    line: usize,
    column: usize,
) -> (std::sync::Arc<crate::text::excerpt::Excerpt>, Option<miette::SourceSpan>) {
    let offset = crate::recipe::SourceText::new(file, text.to_string()).offset_of(line, column.saturating_sub(1));
    let (excerpt, labels) = crate::text::excerpt::Excerpt::new(file, text, &[(offset, 0).into()]);
    (std::sync::Arc::new(excerpt), labels.first().copied())
}

fn placeholder_spec() -> RuleSpec {
    RuleSpec {
        id: String::new(),
        name: String::new(),
        title: String::new(),
        severity: Severity::Info,
        engine: String::new(),
        versions: None,
        when: When::All(Vec::new()),
        evidence: Vec::new(),
        message: String::new(),
        fix: Vec::new(),
        docs: String::new(),
        tests: Default::default(),
    }
}

/// A rule that reads but does not validate: the YAML path of the key at fault
/// (`evidence[0].file_exists.files[1]`), which [`parse_rule`] turns into its line.
struct Invalid {
    key: String,
    message: String,
}

fn invalid(key: &str, message: impl Into<String>) -> Invalid {
    Invalid { key: key.to_string(), message: message.into() }
}

/// What serde cannot say: id/name shape, exactly-one value tests, placeholders,
/// evidence that can cite something. Keys are YAML paths as written, so the
/// error can name the line.
fn validate(spec: &RuleSpec) -> Result<(), Invalid> {
    let id_ok = spec.id.len() >= 2 && spec.id.starts_with('R') && spec.id[1..].chars().all(|c| c.is_ascii_digit());
    if !id_ok {
        return Err(invalid("id", format!("`{}` is not of the form R001", spec.id)));
    }
    let name_ok = !spec.name.is_empty()
        && spec.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !spec.name.starts_with('-')
        && !spec.name.ends_with('-');
    if !name_ok {
        return Err(invalid("name", format!("`{}` is not kebab-case", spec.name)));
    }
    if crate::profiles::by_id(&spec.engine).is_none_or(|p| p.server.is_none()) {
        let known: Vec<&str> = crate::profiles::PROFILES.iter().filter(|p| p.server.is_some()).map(|p| p.id).collect();
        return Err(invalid("engine", format!("`{}` is not an engine the tool knows ({})", spec.engine, known.join(", "))));
    }
    validate_when(&spec.when, "when")?;
    if spec.evidence.is_empty() {
        return Err(invalid("evidence", "a rule needs at least one evidence predicate"));
    }
    for (i, e) in spec.evidence.iter().enumerate() {
        validate_evidence(e, &format!("evidence[{i}]"))?;
    }
    if !spec.evidence.iter().any(can_cite) {
        return Err(invalid("evidence", "only negative (`not`) or deployment predicates: nothing to cite"));
    }
    for p in eval::placeholders(&spec.message) {
        if !eval::PLACEHOLDERS.contains(&p.as_str()) {
            return Err(invalid("message", format!("unknown placeholder `{{{p}}}` (known: {})", eval::PLACEHOLDERS.join(", "))));
        }
    }
    if spec.tests.invalid.is_empty() {
        return Err(invalid("tests.invalid", "a rule needs at least one case that must fire"));
    }
    for (kind, cases) in [("valid", &spec.tests.valid), ("invalid", &spec.tests.invalid)] {
        for (i, case) in cases.iter().enumerate() {
            if case.engines.is_empty() {
                return Err(invalid(&format!("tests.{kind}[{i}].engines"), "name at least one engine"));
            }
            if let Some(v) = &case.version {
                if v.parse::<pep440_rs::Version>().is_err() {
                    return Err(invalid(&format!("tests.{kind}[{i}].version"), format!("`{v}` is not a PEP 440 version")));
                }
            }
        }
    }
    Ok(())
}

fn validate_value_cond(c: &ValueCond, key: &str) -> Result<(), Invalid> {
    let tests = [c.equals.is_some(), c.one_of.is_some(), c.is.is_some()].iter().filter(|b| **b).count();
    if tests != 1 {
        return Err(invalid(key, format!("`{}`: give exactly one of `equals`, `in`, `is`", c.name)));
    }
    Ok(())
}

/// `key` is the path of the condition itself (`when`, `when.all[0]`); each
/// variant adds its own name, as the YAML spells it.
fn validate_when(w: &When, key: &str) -> Result<(), Invalid> {
    match w {
        When::All(items) | When::Any(items) => {
            let kind = if matches!(w, When::All(_)) { "all" } else { "any" };
            if items.is_empty() {
                return Err(invalid(&format!("{key}.{kind}"), format!("`{kind}` needs at least one condition")));
            }
            for (i, c) in items.iter().enumerate() {
                validate_when(c, &format!("{key}.{kind}[{i}]"))?;
            }
            Ok(())
        }
        When::Not(inner) => validate_when(inner, &format!("{key}.not")),
        When::Flag(c) => validate_value_cond(c, &format!("{key}.flag")),
        When::Env(c) => validate_value_cond(c, &format!("{key}.env")),
        When::Model(_) | When::GpuType(_) | When::Precision(_) => Ok(()),
    }
}

/// Compile every model pattern of a rule read from `--rules` (see [`model::Pattern`]).
fn compile_patterns(w: &When, key: &str) -> Result<(), Invalid> {
    match w {
        When::All(items) | When::Any(items) => {
            let kind = if matches!(w, When::All(_)) { "all" } else { "any" };
            items.iter().enumerate().try_for_each(|(i, c)| compile_patterns(c, &format!("{key}.{kind}[{i}]")))
        }
        When::Not(inner) => compile_patterns(inner, &format!("{key}.not")),
        When::Model(c) => c.matches.compile().map(drop).map_err(|message| invalid(&format!("{key}.model.matches"), message)),
        When::Flag(_) | When::Env(_) | When::GpuType(_) | When::Precision(_) => Ok(()),
    }
}

fn validate_evidence(e: &Evidence, key: &str) -> Result<(), Invalid> {
    let files = |kind: &str, files: &[String]| files_ok(files, &format!("{key}.{kind}.files"));
    match e {
        Evidence::AnyOf(items) | Evidence::AllOf(items) => {
            let kind = if matches!(e, Evidence::AnyOf(_)) { "any_of" } else { "all_of" };
            if items.is_empty() {
                return Err(invalid(&format!("{key}.{kind}"), format!("`{kind}` needs at least one predicate")));
            }
            for (i, c) in items.iter().enumerate() {
                validate_evidence(c, &format!("{key}.{kind}[{i}]"))?;
            }
            Ok(())
        }
        Evidence::Not(inner) => validate_evidence(inner, &format!("{key}.not")),
        Evidence::Deployment(w) => validate_when(w, &format!("{key}.deployment")),
        Evidence::FileExists(p) => files("file_exists", &p.files),
        Evidence::SymbolExists(p) => files("symbol_exists", &p.files),
        Evidence::AssignsAttribute(p) => files("assigns_attribute", &p.files),
        Evidence::ReturnsBefore(p) => files("returns_before", &p.files),
        Evidence::GuardExcludes(p) => {
            files("guard_excludes", &p.files)?;
            files_ok(&p.helper_files, &format!("{key}.guard_excludes.helper_files"))
        }
        Evidence::TextInFunction(p) => files("text_in_function", &p.files),
        Evidence::TextInFile(p) => files("text_in_file", &p.files),
        Evidence::Query(p) => files("query", &p.files),
    }
}

/// Paths stay inside the package: no absolute paths, no `..`. `key` is the
/// `files` list; a bad path is reported at its own item.
fn files_ok(files: &[String], key: &str) -> Result<(), Invalid> {
    if files.is_empty() {
        return Err(invalid(key, "name at least one file or glob"));
    }
    for (i, f) in files.iter().enumerate() {
        if f.starts_with('/') || f.split('/').any(|c| c == ".." || c.is_empty()) {
            return Err(invalid(&format!("{key}[{i}]"), format!("`{f}` must be relative to the package root, without `..`")));
        }
    }
    Ok(())
}

/// Whether a predicate can produce a citation when it holds.
fn can_cite(e: &Evidence) -> bool {
    match e {
        Evidence::Not(_) | Evidence::Deployment(_) => false,
        Evidence::AllOf(items) => items.iter().any(can_cite),
        Evidence::AnyOf(items) => items.iter().all(can_cite),
        _ => true,
    }
}

fn check_unique(rules: &[Rule]) -> Result<(), RuleError> {
    for (i, a) in rules.iter().enumerate() {
        for b in &rules[..i] {
            if a.spec.id == b.spec.id || a.spec.name == b.spec.name {
                return Err(RuleError::Duplicate { file: a.doc_path(), id: a.spec.id.clone(), other: b.doc_path() });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
