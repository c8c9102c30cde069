//! `.engine-audit.yaml`: per recipes-repo defaults, so CI and people run the same
//! audit without repeating flags. Command-line flags always win over the file.
//!
//! ```yaml
//! sglang: https://github.com/sgl-project/sglang   # used when --sglang is not given
//! dynamo: https://github.com/ai-dynamo/dynamo
//! severity: {EA007: warning}                      # per-code severity overrides
//! ignore: [EA104]                                 # codes dropped (counted as suppressed)
//! recipe_roots: [benchmarks/multi_node/srt-slurm-recipes]
//! recipes_dir: benchmarks/multi_node/srt-slurm-recipes
//! single_node_scripts:                            # how an entry names its script (default: InferenceX's runners)
//!   - "benchmarks/single_node/{scenario}/{model_prefix}_{precision}_{gpu}_{framework}{spec}.sh"
//!   - "benchmarks/single_node/{scenario}/{model_prefix}_{precision}_{gpu}{framework_suffix}{spec}.sh"
//! fail_on: warning
//! ```

use crate::codes::{Code, Severity};
use crate::gate::FailOn;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name looked for at the recipes repo root.
pub(crate) const CONFIG_FILE_NAME: &str = ".engine-audit.yaml";

/// The file as written. Unknown keys are an error: a misspelt key silently
/// ignored would silently change what the gate checks.
///
/// `engine-audit schema config` prints its JSON Schema (shipped as
/// `schemas/engine-audit-config.schema.json`), derived from this type.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "engine-audit config (.engine-audit.yaml)",
    description = "Per-repository defaults for engine-audit; command-line flags win over the file. Unknown keys are errors. See the README's \"Fixing, suppressing, configuring\"."
)]
pub(crate) struct ConfigFile {
    /// SGLang source (path or URL) when `--sglang` is not given.
    pub sglang: Option<String>,
    /// Dynamo source (path or URL) when `--dynamo` is not given.
    pub dynamo: Option<String>,
    /// vLLM source (path or URL) when `--vllm` is not given.
    pub vllm: Option<String>,
    /// ATOM source (path or URL) when `--atom` is not given.
    pub atom: Option<String>,
    /// TensorRT-LLM source (path or URL) when `--trtllm` is not given.
    pub trtllm: Option<String>,
    /// Severity per finding code (`EA007: warning`, `R001: warning`).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::code_keyed_severities")]
    pub severity: BTreeMap<String, Severity>,
    /// Codes dropped from every report, on top of `--ignore`.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::code_list")]
    pub ignore: Vec<String>,
    /// Folders (relative to the config file) that hold recipes: what `audit` reads
    /// when given no paths, and where `pr` looks for changed recipes.
    #[serde(default)]
    pub recipe_roots: Vec<String>,
    /// Where master-config links (`recipes/...`) point, relative to the repo root.
    pub recipes_dir: Option<String>,
    /// How a master-config entry that links no recipe names its single-node
    /// script: patterns tried in order (placeholders in `recipe::script_naming`).
    #[serde(default)]
    pub single_node_scripts: Vec<String>,
    /// Lowest severity that makes the exit code 1 (`--fail-on` wins).
    pub fail_on: Option<FailOn>,
    /// Engines whose deployments may go unaudited without failing the run
    /// (`[tilert]`): an engine with no profile yet, or one whose source the
    /// run is not given. They are still listed in the coverage.
    #[serde(default)]
    pub allow_unaudited: Vec<String>,
    /// The repo's own risk-rule folders (relative to the config file), loaded on
    /// top of the built-in rules and `--rules`.
    #[serde(default)]
    pub rules: Vec<String>,
    /// Where reports link engine-audit's documentation (an absolute http(s)
    /// URL: a fork or an internal mirror) [default: the repository at this
    /// version's tag]. Pages are `{docs_url}/docs/codes/EA003.md`.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::http_url")]
    pub docs_url: Option<String>,
    /// Globs (relative to the config's folder, gitignore syntax) of files and
    /// folders the recipe walk skips: `exclude: [benchmarks/old/**, "**/*.draft.yaml"]`.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// How URL sources are fetched: `git` (the program on PATH: credential
    /// helpers, ssh, `insteadOf`), `builtin` (no git needed; http(s) and file
    /// URLs) or `auto` (git when on PATH) [default: auto]. `ENGINE_AUDIT_GIT`
    /// overrides it.
    pub fetch: Option<crate::source::FetchWith>,
}

/// A loaded config and the folder its relative paths are relative to.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Config {
    pub file: ConfigFile,
    /// The folder holding the config file (the recipes repo root).
    pub root: PathBuf,
    /// Where it was read from; `None` when no config file was found.
    pub path: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub(crate) enum ConfigError {
    #[error("{path}: `{key}`: {message}")]
    #[diagnostic(code(engine_audit::config::value))]
    Value {
        path: String,
        key: &'static str,
        message: String,
        #[help]
        help: String,
    },

    #[error("{path}: cannot read the config: {message}")]
    #[diagnostic(code(engine_audit::config::io))]
    Io { path: String, message: String },

    #[error("{path}:{line}:{column}: {message}")]
    #[diagnostic(
        code(engine_audit::config::invalid),
        help("known keys: sglang, vllm, atom, trtllm, dynamo, severity, ignore, recipe_roots, recipes_dir, single_node_scripts, fail_on, rules, docs_url, exclude, fetch")
    )]
    Invalid {
        path: String,
        line: usize,
        column: usize,
        message: String,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("here")]
        at: Option<miette::SourceSpan>,
    },

    #[error("{path}:{line}:{column}: `{key}`: `{code}` is not a finding code")]
    #[diagnostic(code(engine_audit::config::unknown_code), help("codes are EA001..EA305 (see docs/codes/) or risk-rule ids such as R001"))]
    UnknownCode {
        path: String,
        line: usize,
        column: usize,
        key: String,
        code: String,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("not a finding code")]
        at: Option<miette::SourceSpan>,
    },
}

impl ConfigFile {
    /// The engine source the config names for profile `id`.
    pub(crate) fn source_of(&self, id: &str) -> Option<&String> {
        match id {
            "sglang" => self.sglang.as_ref(),
            "dynamo" => self.dynamo.as_ref(),
            "vllm" => self.vllm.as_ref(),
            "atom" => self.atom.as_ref(),
            "trtllm" => self.trtllm.as_ref(),
            _ => None,
        }
    }
}

impl Config {
    /// `--config FILE` when given, else the first `.engine-audit.yaml` found walking
    /// up from `start` (a recipe path, or the working directory) to the git
    /// top level, else the defaults.
    pub(crate) fn locate(explicit: Option<&Path>, start: Option<&Path>) -> Result<Config, ConfigError> {
        if let Some(path) = explicit {
            return Config::load(path);
        }
        match start.and_then(find_upwards) {
            Some(path) => Config::load(&path),
            None => Ok(Config::default()),
        }
    }

    pub(crate) fn load(path: &Path) -> Result<Config, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ConfigError::Io { path: path.display().to_string(), message: e.to_string() })?;
        let root = path.parent().map(Path::to_path_buf).filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| PathBuf::from("."));
        Config::from_text(&text, path, root)
    }

    /// A config whose text is already in memory (read from git by `pr`); `root` is
    /// what its relative paths are relative to.
    pub(crate) fn from_text(text: &str, path: &Path, root: PathBuf) -> Result<Config, ConfigError> {
        let file = parse(text, &path.display().to_string())?;
        Ok(Config { file, root, path: Some(path.to_path_buf()) })
    }

    /// An engine source from the file: relative paths are relative to the config's folder.
    pub(crate) fn engine_source(&self, spec: Option<&String>) -> Option<String> {
        let spec = spec?;
        if crate::source::is_url(spec) || Path::new(spec).is_absolute() {
            return Some(spec.clone());
        }
        Some(self.root.join(spec).display().to_string())
    }

    /// Rule folders: the ones given on the command line, then the config's.
    pub(crate) fn rule_dirs(&self, from_flags: &[PathBuf]) -> Vec<PathBuf> {
        let mut dirs = from_flags.to_vec();
        dirs.extend(self.file.rules.iter().map(|r| self.root.join(r)));
        dirs
    }

    /// How master configs name recipes: `recipes_dir` (the flag's, else the
    /// file's, else InferenceX's) and the single-node script patterns.
    pub(crate) fn link_mapping(&self, recipes_dir_flag: Option<&str>) -> crate::recipe::LinkMapping {
        let default = crate::recipe::LinkMapping::default();
        crate::recipe::LinkMapping {
            recipes_dir: recipes_dir_flag.map(str::to_string).or_else(|| self.file.recipes_dir.clone()).unwrap_or(default.recipes_dir),
            single_node_scripts: if self.file.single_node_scripts.is_empty() {
                default.single_node_scripts
            } else {
                self.file.single_node_scripts.clone()
            },
            ..default
        }
    }

    /// The docs base reports link to: the config's `docs_url`, else this version's tag.
    pub(crate) fn docs_url(&self) -> String {
        self.file.docs_url.clone().unwrap_or_else(|| crate::report::docs::DEFAULT_DOCS_URL.to_string())
    }

    /// `recipe_roots` as paths.
    pub(crate) fn recipe_roots(&self) -> Vec<PathBuf> {
        self.file.recipe_roots.iter().map(|r| self.root.join(r)).collect()
    }
}

/// The first `.engine-audit.yaml` in `start`'s folder or above it, up to the
/// top level of the git repository holding it (a folder with `.git`, a
/// directory or a worktree's file): a config outside the repository does not
/// govern it. Outside any repository, up to the root.
fn find_upwards(start: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start).ok()?;
    let first = if start.is_dir() { Some(start.as_path()) } else { start.parent() };
    for dir in first?.ancestors() {
        let candidate = dir.join(CONFIG_FILE_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Parse and validate a config's text (`path` is for messages).
pub(crate) fn parse(text: &str, path: &str) -> Result<ConfigFile, ConfigError> {
    // An empty file is a valid config with every default.
    if text.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    // The snippet shows only the lines around the label, cut on long lines.
    let source = |at: Option<miette::SourceSpan>| {
        let (excerpt, labels) = crate::text::excerpt::Excerpt::new(path, text, at.as_slice());
        (std::sync::Arc::new(excerpt), labels.first().copied())
    };
    let file: ConfigFile = serde_yaml_ng::from_str(text).map_err(|e| {
        let message = crate::recipe::yaml::strip_serde_location(&e.to_string()).to_string();
        // serde reports a repeated key at the document start; the spanned reader
        // knows where the second one is.
        let at = if message.contains("duplicate") { duplicate_key_at(text) } else { None };
        let at = at.or_else(|| e.location().map(|l| (l.line(), l.column(), l.index())));
        let (src, label) = source(at.map(|a| (a.2, 1).into()));
        ConfigError::Invalid { path: path.to_string(), line: at.map_or(1, |a| a.0), column: at.map_or(1, |a| a.1), message, src, at: label }
    })?;
    if let Some(url) = &file.docs_url {
        if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains(char::is_whitespace) {
            return Err(ConfigError::Value {
                path: path.to_string(),
                key: "docs_url",
                message: format!("`{url}` is not an absolute http(s) URL"),
                help: "reports link pages as {docs_url}/docs/codes/EA003.md, and SARIF needs an absolute URI: write e.g. https://github.com/you/engine-audit/blob/main".into(),
            });
        }
    }
    for glob in &file.exclude {
        if let Err(e) = globset::Glob::new(glob) {
            return Err(ConfigError::Value {
                path: path.to_string(),
                key: "exclude",
                message: format!("`{glob}` is not a glob: {e}"),
                help: "globs are relative to the config's folder: `benchmarks/old/**`, `**/*.draft.yaml`".into(),
            });
        }
    }
    let codes = file.severity.keys().map(|c| ("severity", c)).chain(file.ignore.iter().map(|c| ("ignore", c)));
    for (key, code) in codes {
        if !is_finding_code(code) {
            let span = code_span(text, key, code);
            let (src, at) = source(span.as_ref().map(|s| s.source_span()));
            return Err(ConfigError::UnknownCode {
                path: path.to_string(),
                line: span.as_ref().map_or(1, |s| s.line as usize),
                column: span.as_ref().map_or(1, |s| s.column as usize),
                key: key.to_string(),
                code: code.to_string(),
                src,
                at,
            });
        }
    }
    Ok(file)
}

/// `(line, column, offset)` of the second occurrence of a repeated key.
fn duplicate_key_at(text: &str) -> Option<(usize, usize, usize)> {
    let src = crate::recipe::SourceText::new("config", text.to_string());
    match crate::recipe::yaml::parse(&src) {
        Err(crate::recipe::RecipeError::DuplicateKey { second_line, second_column, second_offset, .. }) => {
            Some((second_line as usize, second_column as usize, second_offset))
        }
        _ => None,
    }
}

/// Where `code` is written under `key`: the map key of `severity`, the list item
/// of `ignore`. Only called on an error, so a valid config is read once.
fn code_span(text: &str, key: &str, code: &str) -> Option<crate::recipe::Span> {
    let src = crate::recipe::SourceText::new("config", text.to_string());
    let root = crate::recipe::yaml::parse(&src).ok()??;
    let value = root.get(key)?;
    let by_key = value.entry(code).map(|e| e.key.span.clone());
    by_key.or_else(|| value.as_seq()?.iter().find(|n| n.as_str() == Some(code)).map(|n| n.span.clone()))
}

/// A finding code: a catalog code (`EA003`) or a rule id (`R001`).
pub(crate) fn is_finding_code(code: &str) -> bool {
    Code::parse(code).is_some() || (code.len() >= 2 && code.starts_with('R') && code[1..].bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_key() {
        let text = "sglang: https://github.com/sgl-project/sglang\ndynamo: ../dynamo.git\nseverity:\n  EA007: warning\n  R001: info\nignore: [EA104]\nrecipe_roots: [benchmarks]\nrecipes_dir: benchmarks/multi_node/srt-slurm-recipes\nfail_on: warning\nrules: [ci/rules]\n";
        let file = parse(text, "c.yaml").unwrap();
        assert_eq!(file.sglang.as_deref(), Some("https://github.com/sgl-project/sglang"));
        assert_eq!(file.severity.get("EA007"), Some(&Severity::Warning));
        assert_eq!(file.severity.get("R001"), Some(&Severity::Info));
        assert_eq!(file.ignore, vec!["EA104"]);
        assert_eq!(file.fail_on, Some(FailOn::Warning));
        let config = Config { file, root: PathBuf::from("/repo"), path: None };
        assert_eq!(config.engine_source(config.file.dynamo.as_ref()).as_deref(), Some("/repo/../dynamo.git"));
        assert_eq!(config.engine_source(config.file.sglang.as_ref()).as_deref(), Some("https://github.com/sgl-project/sglang"));
        assert_eq!(config.rule_dirs(&[PathBuf::from("extra")]), [PathBuf::from("extra"), PathBuf::from("/repo/ci/rules")]);
    }

    #[test]
    fn every_audited_engine_has_a_source_key() {
        let file = parse("sglang: s\nvllm: v\natom: ../atom.git\ntrtllm: ../trtllm.git\ndynamo: d\n", "c.yaml").unwrap();
        // A program of another engine's repository (ATOM's router) takes that engine's key.
        for profile in crate::profiles::PROFILES {
            assert!(file.source_of(profile.source_id()).is_some(), "`{}:` in .engine-audit.yaml", profile.source_id());
        }
        assert_eq!(file.source_of("atom").map(String::as_str), Some("../atom.git"));
        // Accepted before the engine is audited (its recipes are not yet).
        assert_eq!(file.source_of("trtllm").map(String::as_str), Some("../trtllm.git"));
    }

    #[test]
    fn docs_url_and_exclude_are_checked() {
        let file = parse("docs_url: https://example.com/ea/blob/main\nexclude: [old/**]\n", "c.yaml").unwrap();
        let config = Config { file, ..Config::default() };
        assert_eq!(config.docs_url(), "https://example.com/ea/blob/main");
        assert_eq!(Config::default().docs_url(), crate::report::docs::DEFAULT_DOCS_URL);
        let err = parse("docs_url: docs/\n", "c.yaml").unwrap_err();
        assert!(err.to_string().contains("`docs_url`: `docs/` is not an absolute http(s) URL"), "{err}");
        let err = parse("exclude: ['a/[b']\n", "c.yaml").unwrap_err();
        assert!(err.to_string().starts_with("c.yaml: `exclude`: `a/[b` is not a glob"), "{err}");
    }

    #[test]
    fn fetch_names_the_transport() {
        use crate::source::FetchWith;
        assert_eq!(parse("fetch: builtin\n", "c.yaml").unwrap().fetch, Some(FetchWith::Builtin));
        assert_eq!(parse("fetch: git\n", "c.yaml").unwrap().fetch, Some(FetchWith::Git));
        assert_eq!(parse("sglang: x\n", "c.yaml").unwrap().fetch, None);
        assert!(parse("fetch: svn\n", "c.yaml").is_err());
    }

    #[test]
    fn an_unknown_key_names_the_key_and_its_line() {
        let err = parse("ignore: [EA104]\nfail-on: warning\n", "c.yaml").unwrap_err();
        let ConfigError::Invalid { line, message, .. } = &err else { panic!("{err:?}") };
        assert_eq!(*line, 2);
        assert!(message.contains("unknown field `fail-on`"), "{message}");
        assert!(err.to_string().starts_with("c.yaml:2:"), "{err}");
    }

    #[test]
    fn bad_values_and_codes_are_errors() {
        assert!(matches!(parse("fail_on: sometimes\n", "c").unwrap_err(), ConfigError::Invalid { line: 1, .. }));
        assert!(matches!(parse("severity: {EA007: loud}\n", "c").unwrap_err(), ConfigError::Invalid { .. }));
        let err = parse("ignore: [EA999]\n", "c").unwrap_err();
        assert!(matches!(&err, ConfigError::UnknownCode { code, .. } if code == "EA999"), "{err:?}");
        assert_eq!(parse("\n# nothing\n", "c").unwrap(), ConfigFile::default());
    }

    #[test]
    fn found_by_walking_up_from_a_recipe() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "fail_on: info\n").unwrap();
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("r.yaml"), "name: x\n").unwrap();
        let config = Config::locate(None, Some(&deep.join("r.yaml"))).unwrap();
        assert_eq!(config.file.fail_on, Some(FailOn::Info));
        assert_eq!(config.root, std::path::absolute(dir.path()).unwrap());
        // From the working directory too (`audit` with no paths), but not past
        // the top level of the repository the walk starts in.
        let repo = dir.path().join("a");
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(Config::locate(None, Some(&deep)).unwrap().path, None, "the config above the repository is not its config");
        std::fs::write(repo.join(CONFIG_FILE_NAME), "fail_on: warning\n").unwrap();
        let found = Config::locate(None, Some(&deep)).unwrap();
        assert_eq!((found.file.fail_on, found.root), (Some(FailOn::Warning), std::path::absolute(&repo).unwrap()));
        let explicit = dir.path().join("other.yaml");
        std::fs::write(&explicit, "ignore: [R001]\n").unwrap();
        assert_eq!(Config::locate(Some(&explicit), Some(&deep)).unwrap().file.ignore, vec!["R001"]);
    }
}
