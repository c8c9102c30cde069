//! Recipe readers: what a deployment asks of the engine, with the exact place it asks.
//!
//! Four formats are read: srt-slurm recipe YAML ([`srt_slurm`]), the InferenceX
//! master config ([`master_config`]), shell launch scripts ([`launch_script`]) and
//! the AMD multi-node model table ([`amd_models`]).
//! Each yields [`Deployment`]s whose every value carries a [`Span`] into the file as
//! read, so a finding names the line and `--fix` can edit the text in place.
//!
//! This module knows recipe files, not engines or git: it reports what is written
//! (and what cannot be known statically, as `Dynamic`), never whether it is valid.

pub(crate) mod amd_models;
pub(crate) mod argv;
pub(crate) mod config_file;
mod files;
pub(crate) mod format;
pub(crate) mod image;
pub(crate) mod launch_script;
pub(crate) mod links;
pub(crate) mod master_config;
pub(crate) mod master_discovery;
mod registry;
mod script_cache;
mod script_naming;
pub(crate) mod shell;
pub(crate) mod srt_slurm;
pub(crate) mod yaml;

pub(crate) use crate::text::span::SourceText;
pub use crate::text::{Span, Spanned};
pub use amd_models::model_deployments;
pub(crate) use argv::{bind, ArgToken};
pub use files::{collect, collect_walking, collect_with, load_path, load_path_with, read_confined, Walk, MAX_RECIPE_BYTES};
pub(crate) use format::EditIntent;
pub use image::{is_container_alias, parse_image, DynamoRef, ImageTag};
pub use links::{LinkMapping, MasterConfig, MasterEntry, ModelTableLink, RecipeLink, Router};

use crate::surface::Known;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// An engine profile's id (`sglang`). A named type, not `&'static str` in the
/// fields: serde's derive would borrow a `&'static str` from the input, and a
/// cached reading is read back from a buffer that does not live that long.
pub type ProfileId = &'static str;

/// One file read from a recipes tree.
#[derive(Debug, Clone, Serialize)]
pub struct RecipeFile {
    /// The path as given to the loader.
    pub path: String,
    /// The file on disk, for `--fix` to write: `path` is its display form, lossy
    /// for a name that is not UTF-8. `None` for text not read from a file.
    #[serde(skip)]
    pub disk_path: Option<PathBuf>,
    pub kind: RecipeKind,
    /// The file's text exactly as read (BOM and CRLF kept): spans index into it.
    #[serde(skip)]
    pub text: String,
    pub deployments: Vec<Deployment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master: Option<MasterConfig>,
    /// Problems and remarks that did not stop the file from loading.
    pub notes: Vec<Note>,
    /// Keys written twice in one map (the later one wins, as in srt-slurm).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<yaml::DuplicateKey>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecipeKind {
    /// An srt-slurm recipe for the SGLang backend.
    SrtSlurm,
    MasterConfig,
    LaunchScript,
    /// The AMD multi-node SGLang model table (`amd_utils/models.yaml`).
    AmdModels,
    /// Recognised but not audited: an srt-slurm recipe or an AMD model table for
    /// another engine (`backend: Some("vllm")`), or a file that is no recipe
    /// (`backend: None`).
    Other {
        backend: Option<String>,
    },
}

/// One way the engine is started: a recipe (or one variant of an override-format
/// recipe), or one launch command of a script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    /// The engine profile id of the server it starts (`sglang`).
    #[serde(deserialize_with = "crate::profiles::deserialize_id")]
    pub engine: ProfileId,
    /// The recipe's `name`, or a label for scripts (`launch_server@12`).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_span: Option<Span>,
    /// For override-format recipes: the srtctl selector of this variant
    /// (`override_x`, `zip_override_y[2]`, `base`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    pub roles: Vec<RoleConfig>,
    /// Environment shared by every role (`backend.environment`, script `export`s).
    pub common_env: Vec<EnvUse>,
    pub container: Option<Spanned<String>>,
    /// `container` parsed; `None` when there is no container.
    pub image: Option<ImageTag>,
    pub model_path: Option<Spanned<String>>,
    pub precision: Option<Spanned<String>>,
    pub gpu_type: Option<Spanned<String>>,
    pub dynamo: Option<DynamoSpec>,
    /// The image a master-config entry runs this deployment with, when the
    /// recipe names none it can be audited by: a script (its image is the CI
    /// job's) or an srt-slurm container alias (`dynamo-sglang`, which the
    /// runners map to the entry's image). `image` is then this image parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_image: Option<EntryImage>,
    /// The consumer whose worker the engine's flags are handed to, when not the
    /// engine's own server (srt-slurm's `frontend.type: dynamo` runs
    /// `python -m dynamo.<engine>`, whose parser adds options of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<Worker>,
}

/// A consumer's worker that starts the engine from the recipe's flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worker {
    /// The consumer's profile id (`dynamo`).
    #[serde(deserialize_with = "crate::profiles::deserialize_id")]
    pub consumer: ProfileId,
    /// Where the recipe says so (`frontend.type`).
    pub span: Span,
}

impl Deployment {
    /// A server a script or table starts itself: its roles and environment,
    /// no image, model or Dynamo of its own (a master entry may give the image).
    pub(crate) fn launched(engine: &'static str, name: String, roles: Vec<RoleConfig>, common_env: Vec<EnvUse>) -> Deployment {
        Deployment {
            engine,
            name,
            name_span: None,
            variant: None,
            roles,
            common_env,
            container: None,
            image: None,
            model_path: None,
            precision: None,
            gpu_type: None,
            dynamo: None,
            entry_image: None,
            worker: None,
        }
    }
}

/// An image named by the master-config entry that runs a deployment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryImage {
    /// The master-config key.
    pub key: String,
    /// The entry's `image`, in the master config.
    pub image: Spanned<String>,
}

/// The server flags and environment of one worker role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleConfig {
    /// The key as written (`prefill`, `decode`, `aggregated`, ...), or for scripts
    /// the launcher (`launch_server`, `serve`).
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// Flags as the recipe passes them, when the recipe's structure says which
    /// value is whose. Words of a command line are kept in `argv` instead:
    /// whether `--x y` binds `y` to `--x` depends on the engine's flag arity, so
    /// the checker binds them with [`bind`].
    pub flags: Vec<FlagUse>,
    pub env: Vec<EnvUse>,
    /// Command-line tokens after the launcher (launch scripts), or the flag
    /// strings a role passes (AMD model tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<ArgToken>>,
    /// Why this role's command line cannot be fully known (built by `eval`, in a loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic: Option<String>,
    /// The keys of the engine's YAML configuration file the role writes, for an
    /// engine that reads its arguments from one (TRT-LLM's LlmArgs): every key
    /// at every depth, parents before their children, by dotted path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<ConfigUse>,
    /// A configuration file the command line hands the server (`--config
    /// cfg.yml`) whose keys could not be read: what names it, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_unread: Option<UnreadConfig>,
}

/// The configuration file of a launch that could not be read (a path not
/// known, a file the script does not write, YAML that does not parse).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnreadConfig {
    /// The words that name it, as written (`--config "$CONFIG_FILE"`).
    pub words: String,
    pub span: Span,
    pub why: String,
}

/// One key of the YAML configuration file a role hands the engine
/// (`kv_cache_config: {dtype: fp8}` gives `kv_cache_config` and
/// `kv_cache_config.dtype`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigUse {
    /// The keys from the file's root, as written, joined by `.`.
    pub path: String,
    /// How many keys `path` joins (a key holding a dot is one key).
    pub depth: usize,
    pub value: ConfigValue,
    pub key_span: Span,
    pub value_span: Span,
    /// As for [`FlagUse::shadowed`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<(Span, Span)>,
}

impl ConfigUse {
    /// The key's own name (the last part of its path).
    pub fn name(&self) -> &str {
        self.parent_and_name().1
    }

    /// The path of the map holding this key (empty at the root), and its name.
    pub fn parent_and_name(&self) -> (&str, &str) {
        match self.depth {
            1 => ("", &self.path),
            _ => self.path.rsplit_once('.').unwrap_or(("", &self.path)),
        }
    }
}

/// A value of the configuration file, as the YAML loader types it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConfigValue {
    Scalar {
        text: String,
        quoted: bool,
        ty: yaml::ScalarType,
    },
    Null,
    /// A map: its keys follow as their own uses.
    Map,
    /// A list (of scalars or maps: its items are not keys).
    List {
        len: usize,
    },
    /// Not knowable statically: a script writes the value from an expansion
    /// whose value is not known (`max_batch_size: $CONC`); the text as written.
    Dynamic {
        text: String,
    },
}

impl RoleConfig {
    /// The flags of this role: raw command-line tokens bound with the engine's
    /// knowledge of which flags take no value, then the flags read as such.
    pub fn flag_uses(&self, is_switch: impl Fn(&str) -> bool) -> Vec<FlagUse> {
        self.bound(is_switch).flags
    }

    /// [`flag_uses`](Self::flag_uses), with the words where a flag was
    /// expected that bind to none (positionals, unknown `$X`).
    pub(crate) fn bound(&self, is_switch: impl Fn(&str) -> bool) -> argv::Binding {
        let mut binding = self.argv.as_ref().map(|tokens| bind(tokens, is_switch)).unwrap_or_default();
        binding.flags.extend(self.flags.iter().cloned());
        binding
    }
}

/// One flag passed to the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagUse {
    /// As it reaches the command line, without the leading `--`
    /// (`cuda-graph-max-bs`; srtctl turns `_` in keys into `-`). A single-dash
    /// option from a script keeps its dash (`-h`).
    pub name: String,
    pub value: FlagValue,
    pub key_span: Span,
    pub value_span: Span,
    /// (key, value) spans of base entries an override variant's entry replaced
    /// (see `yaml::Entry::shadows`): edits of this flag's key carry over to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<(Span, Span)>,
    /// For launch scripts: the paths through the script that pass it, when not
    /// all of them ("DP_ATTENTION=true").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FlagValue {
    /// `true`: passed as a bare `--flag`; `false`: not passed at all.
    Switch { on: bool },
    /// One value, as written (unquoted). `ty` is how the YAML loader types it
    /// (`str` for every script token).
    Scalar { text: String, quoted: bool, ty: yaml::ScalarType },
    /// Several values after one flag (`--flag a b`).
    List { items: Vec<Spanned<String>> },
    /// `null`: srtctl does not pass the flag.
    Null,
    /// Not knowable statically (`$VAR` assigned outside the script); the source text.
    Dynamic { text: String },
    /// A value that is not a flag value (a map); see the file's notes.
    Invalid { reason: String },
}

/// One environment variable set for the server process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvUse {
    pub name: String,
    pub value: Known<String>,
    pub name_span: Span,
    pub value_span: Span,
    /// As for [`FlagUse::shadowed`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<(Span, Span)>,
    /// As for [`FlagUse::condition`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// The Dynamo build a recipe installs (`dynamo: {hash|wheel|version, install}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DynamoSpec {
    /// Which key named it: `hash`, `wheel` or `version`.
    pub field: String,
    /// The value as written.
    pub raw: Spanned<String>,
    /// The parsed reference; `None` when the value is not one (see notes).
    pub reference: Option<DynamoRef>,
    pub install: Option<bool>,
    /// The whole `dynamo:` block.
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoteLevel {
    Info,
    Warning,
    Error,
}

/// A remark about a file that loaded: skipped content, suspicious values, values
/// that could not be read (the "error items" of a file that is otherwise usable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub level: NoteLevel,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

impl Note {
    pub(crate) fn info(message: impl Into<String>, span: Option<Span>) -> Note {
        Note { level: NoteLevel::Info, message: message.into(), span }
    }
    pub(crate) fn warning(message: impl Into<String>, span: Option<Span>) -> Note {
        Note { level: NoteLevel::Warning, message: message.into(), span }
    }
    pub(crate) fn error(message: impl Into<String>, span: Option<Span>) -> Note {
        Note { level: NoteLevel::Error, message: message.into(), span }
    }
}

/// A file that could not be read as a recipe at all.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RecipeError {
    #[error("{path}: cannot read: {message}")]
    #[diagnostic(code(engine_audit::recipe::io))]
    Io { path: String, message: String },

    #[error("{path}: not valid UTF-8 (first bad byte at offset {offset})")]
    #[diagnostic(code(engine_audit::recipe::not_utf8), help("recipes are read as UTF-8 text; re-encode the file"))]
    NotUtf8 { path: String, offset: usize },

    #[error("{path}: holds a NUL byte at offset {offset}: not a text file; not read")]
    #[diagnostic(
        code(engine_audit::recipe::not_text),
        help("recipes are text; remove the NUL byte (tools stop reading at it, so what follows is easily missed)")
    )]
    NotText { path: String, offset: usize },

    #[error("{path}:{line}:{column}: YAML syntax error: {message}")]
    #[diagnostic(code(engine_audit::recipe::yaml))]
    Yaml {
        path: String,
        line: u32,
        column: u32,
        message: String,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("here")]
        at: miette::SourceSpan,
    },

    #[error("{path}: key `{key}` appears twice (lines {first_line} and {second_line})")]
    #[diagnostic(code(engine_audit::recipe::duplicate_key), help("YAML loaders keep only the last one; remove the key that is not meant"))]
    DuplicateKey {
        path: String,
        key: String,
        first_line: u32,
        second_line: u32,
        /// Where the second key is written in the file (the labels index the
        /// excerpt): 1-based character column and byte offset.
        second_column: u32,
        second_offset: usize,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("first here")]
        first: miette::SourceSpan,
        #[label("again here")]
        second: miette::SourceSpan,
    },

    #[error("{path}:{line}: {message}")]
    #[diagnostic(code(engine_audit::recipe::shape))]
    Shape {
        path: String,
        line: u32,
        message: String,
        #[source_code]
        src: std::sync::Arc<crate::text::excerpt::Excerpt>,
        #[label("here")]
        at: miette::SourceSpan,
    },
}

impl RecipeError {
    /// The file the error is about.
    pub(crate) fn path(&self) -> &str {
        match self {
            RecipeError::Io { path, .. }
            | RecipeError::NotUtf8 { path, .. }
            | RecipeError::NotText { path, .. }
            | RecipeError::Yaml { path, .. }
            | RecipeError::DuplicateKey { path, .. }
            | RecipeError::Shape { path, .. } => path,
        }
    }

    pub(crate) fn shape(src: &SourceText, span: &Span, message: impl Into<String>) -> RecipeError {
        let (excerpt, at) = src.excerpt_at(span);
        RecipeError::Shape { path: src.path.clone(), line: span.line, message: message.into(), src: excerpt, at }
    }
}

/// Read a file's text that is already in memory (from git, or a test).
pub fn load_text(path: &str, text: String, links: &LinkMapping) -> Result<RecipeFile, RecipeError> {
    if let Some(offset) = text.find('\0') {
        // The YAML and shell parsers stop at a NUL: what follows it (a flag)
        // would silently never be audited.
        return Err(RecipeError::NotText { path: path.to_string(), offset });
    }
    let src = SourceText::new(path, text);
    let (kind, loaded, duplicates) = registry::read(&src, links)?;
    Ok(RecipeFile {
        path: path.to_string(),
        disk_path: None,
        kind,
        text: src.text,
        deployments: loaded.deployments,
        master: loaded.master,
        notes: loaded.notes,
        duplicates,
    })
}

#[cfg(test)]
mod tests;
