//! The AMD multi-node model table (`benchmarks/multi_node/amd_utils/models.yaml`):
//! per model, the pieces InferenceX's `server_sglang.sh` builds the prefill and
//! decode command lines from (README, "AMD multi-node").
//!
//! Per role the script passes `base_flags`, plus `dp_flags` when data-parallel
//! attention is on, plus `ep_flags` when expert parallelism is on, plus
//! `mtp_flags` on both roles when MTP is on (the prefill's draft layers must
//! match the decode's); then the role's fields by name
//! (`mem_fraction_static` → `--mem-fraction-static`, ...), the per-mode ones taken
//! from the role's `dp`, `ep_only` or `no_dp` block. Each configuration the script
//! can produce is one [`Deployment`] (`variant` `dp`, `ep_only`, `no_dp`, each also
//! with `, mtp` when the model has MTP flags). DP attention without EP passes a
//! subset of the `dp` variant's flags, so it is no variant of its own. A role with
//! no `ep_only` block runs `no_dp`'s in EP-only mode: the header defines `no_dp`
//! as the config "when data-parallel attention is disabled".
//!
//! The command is a string run by `bash -c`, so a flag string is split into
//! words as bash parses it (quotes honoured, `$X` known only at run time). The
//! words are kept raw in [`RoleConfig::argv`]: whether `--x y` gives `y` to `--x`
//! is the engine's flag arity, bound by the checker. Each word's span is its
//! exact bytes inside the quoted YAML string, so a finding points at the flag and
//! `--fix` edits it in place (a field's key is never renamed: the script would
//! not know the new name).
//!
//! The same file shape names other engines: `models_vllm.yaml` is read by
//! [`vllm`], `models_atom.yaml` by [`atom`]; others are recognised and skipped,
//! never read as SGLang.

use super::format::{self, EditIntent, Loaded, RecipeFormat, Syntax};
use super::links::LinkMapping;
use super::yaml::{Entry, Node, NodeKind, Scalar, ScalarStyle, ScalarType};
use super::{ArgToken, Deployment, FlagUse, FlagValue, Note, RecipeError, RecipeFile, RecipeKind, RoleConfig};
use crate::surface::Known;
use crate::text::span::{SourceText, Span, Spanned};
use crate::text::Edit;

/// The AMD multi-node model table as a [`RecipeFormat`].
pub(crate) struct AmdModels;

impl RecipeFormat for AmdModels {
    fn kind(&self) -> RecipeKind {
        RecipeKind::AmdModels
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn detect(&self, path: &str, _: &str, root: Option<&Node>) -> bool {
        root.is_some_and(|root| table_engine(path, root).is_some())
    }
    fn read(&self, src: &SourceText, root: Option<&Node>, _: &LinkMapping) -> Result<Loaded, RecipeError> {
        let Some(root) = root else { return Ok(Loaded::default()) };
        match table_engine(&src.path, root) {
            Some(TableEngine::Vllm) => Ok(vllm::read(src, root)),
            Some(TableEngine::Atom) => Ok(atom::read(src, root)),
            Some(TableEngine::Other(engine)) => {
                let note = Note::info(
                    format!("AMD multi-node model table for {engine}: skipped, only the SGLang, vLLM and ATOM tables (models.yaml, models_vllm.yaml, models_atom.yaml) are audited"),
                    Some(root.span.clone()),
                );
                Ok(Loaded { kind: Some(RecipeKind::Other { backend: Some(engine) }), notes: vec![note], ..Loaded::default() })
            }
            _ => {
                let mut notes = vec![Note::info(
                    "the servers' environment comes from env.sh, which is not in this file: its SGLANG_*/MORI_* variables are not audited",
                    None,
                )];
                let deployments = root.as_map().unwrap_or_default().iter().flat_map(|entry| read_model(src, entry, &mut notes)).collect();
                Ok(Loaded { deployments, notes, ..Loaded::default() })
            }
        }
    }
    fn edit(&self, file: &RecipeFile, intent: EditIntent) -> Vec<Edit> {
        match intent {
            EditIntent::Rename { span, old, new } => rename(file, span, old, new).into_iter().collect(),
            EditIntent::SetValue { span, value } => set_value(file, span, value).into_iter().collect(),
            EditIntent::RenameSwitch { flag, new_name, value } => {
                let words = [format!("{new_name}={value}")];
                replace_word(file, &flag.key_span, &flag.name, &words).into_iter().collect()
            }
            EditIntent::SplitSwitch { flag, into } => {
                let words: Vec<String> = into.iter().map(|(name, value)| format!("{name}={value}")).collect();
                replace_word(file, &flag.key_span, &flag.name, &words).into_iter().collect()
            }
            EditIntent::Delete { key, value } if is_yaml_key(file, key) => {
                format::delete_yaml_entry(file, key, value).into_iter().collect()
            }
            EditIntent::Delete { key, value } => delete_words(file, key, value).into_iter().collect(),
        }
    }
}

/// The deployments one model of a loaded table yields, for the master-config
/// linker: an `amd-master.yaml` entry names the model (its `model` path's last
/// part is the table's key) and carries the image. Empty when the file is no
/// SGLang model table or has no such model.
pub fn model_deployments<'f>(file: &'f RecipeFile, model: &str) -> Vec<&'f Deployment> {
    if file.kind != RecipeKind::AmdModels {
        return Vec::new();
    }
    file.deployments.iter().filter(|d| d.name == model && d.engine == crate::profiles::SGLANG.id).collect()
}

// ---- detection ---------------------------------------------------------------

/// Which engine a model table is for.
#[derive(Debug, PartialEq)]
enum TableEngine {
    Sglang,
    /// `models_vllm.yaml`: per-role flag strings and env strings.
    Vllm,
    /// `models_atom.yaml`: flag strings per mode, value fields and env strings.
    Atom,
    /// Another engine's table, by the file's name (`models_vllm.yaml` → `vllm`).
    Other(String),
}

/// A model table maps model names to maps; the SGLang one has `base_flags`
/// strings (or per-role `prefill`/`decode` maps), the other engines' tables
/// other `*_flags` strings and are named `models_<engine>.yaml`.
fn table_engine(path: &str, root: &Node) -> Option<TableEngine> {
    let entries = root.as_map().filter(|e| !e.is_empty())?;
    if entries.iter().any(|e| e.value.as_map().is_none()) {
        return None;
    }
    let has = |e: &Entry, key: &str| e.value.get(key).is_some();
    let sglang_shaped = entries.iter().any(|e| e.value.get("base_flags").is_some_and(|v| v.as_scalar().is_some()))
        || entries.iter().all(|e| ROLES.iter().any(|r| e.value.get(r).is_some_and(|v| v.as_map().is_some())));
    let flag_strings = entries.iter().any(|e| {
        e.value
            .as_map()
            .unwrap_or_default()
            .iter()
            .any(|f| f.key.as_str().is_some_and(|k| k.ends_with("_flags")) && f.value.as_scalar().is_some())
    });
    let stem = std::path::Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let vllm_shaped = entries.iter().all(|e| has(e, "prefill_flags") || has(e, "decode_flags"));
    let atom_shaped = !sglang_shaped
        && entries.iter().all(|e| e.value.as_map().unwrap_or_default().iter().any(|f| f.key.as_str().is_some_and(atom::known_key)));
    match stem.strip_prefix("models_") {
        Some("vllm") if vllm_shaped => Some(TableEngine::Vllm),
        Some("atom") if atom_shaped => Some(TableEngine::Atom),
        Some(engine) if engine != "sglang" && !engine.is_empty() && (sglang_shaped || flag_strings) => {
            Some(TableEngine::Other(engine.to_string()))
        }
        _ if sglang_shaped && entries.iter().all(|e| !has(e, "prefill_flags") && !has(e, "tp_dp_flags")) => Some(TableEngine::Sglang),
        _ => None,
    }
}

// ---- reading one model -----------------------------------------------------------

const ROLES: [&str; 2] = ["prefill", "decode"];
/// The keys of a model entry that hold flag strings.
const FLAG_STRINGS: [&str; 4] = ["base_flags", "dp_flags", "ep_flags", "mtp_flags"];

/// How the script turns a field into command-line words.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FieldKind {
    /// `--flag value`.
    Value,
    /// `true` → `--flag`; `false` → nothing.
    Switch,
    /// A number, or a bash arithmetic expression of env vars (evaluated at run time).
    Arithmetic,
    /// Space-separated values: `--flag a b c`.
    Values,
    /// `"start-end"`, expanded with `seq`.
    Range,
}

struct Field {
    key: &'static str,
    flag: &'static str,
    kind: FieldKind,
    /// The roles the server script passes it for (it reads the others' but
    /// never puts them on a command line).
    roles: &'static [&'static str],
}

const BOTH: &[&str] = &ROLES;
const PREFILL: &[&str] = &["prefill"];
const DECODE: &[&str] = &["decode"];

/// Fields read at the role's top level.
const ROLE_FIELDS: &[Field] = &[
    Field { key: "mem_fraction_static", flag: "mem-fraction-static", kind: FieldKind::Value, roles: BOTH },
    Field { key: "disable_radix_cache", flag: "disable-radix-cache", kind: FieldKind::Switch, roles: PREFILL },
    // `--disable-cuda-graph` in place of `--cuda-graph-bs`.
    Field { key: "disable_cuda_graph", flag: "disable-cuda-graph", kind: FieldKind::Switch, roles: PREFILL },
    Field { key: "prefill_round_robin_balance", flag: "prefill-round-robin-balance", kind: FieldKind::Switch, roles: DECODE },
    Field {
        key: "disagg_decode_enable_radix_cache",
        flag: "disaggregation-decode-enable-radix-cache",
        kind: FieldKind::Switch,
        roles: DECODE,
    },
];

/// Fields read in a role's `dp` / `ep_only` / `no_dp` block.
const BLOCK_FIELDS: &[Field] = &[
    Field { key: "max_running_requests", flag: "max-running-requests", kind: FieldKind::Value, roles: BOTH },
    Field { key: "chunked_prefill_size", flag: "chunked-prefill-size", kind: FieldKind::Arithmetic, roles: PREFILL },
    Field { key: "cuda_graph_bs", flag: "cuda-graph-bs", kind: FieldKind::Values, roles: BOTH },
    Field { key: "cuda_graph_bs_range", flag: "cuda-graph-bs", kind: FieldKind::Range, roles: BOTH },
    Field { key: "context_length", flag: "context-length", kind: FieldKind::Value, roles: BOTH },
    Field { key: "max_total_tokens", flag: "max-total-tokens", kind: FieldKind::Value, roles: PREFILL },
    // Read from the `dp` block only: without DP attention the script turns it off.
    Field { key: "enable_two_batch_overlap", flag: "enable-two-batch-overlap", kind: FieldKind::Switch, roles: PREFILL },
];

/// A range longer than this is not expanded (it would be as many spans).
const MAX_RANGE: u64 = 4096;

/// The parallelism a configuration runs with.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Dp,
    EpOnly,
    NoDp,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::Dp, Mode::EpOnly, Mode::NoDp];

    fn name(self) -> &'static str {
        match self {
            Mode::Dp => "dp",
            Mode::EpOnly => "ep_only",
            Mode::NoDp => "no_dp",
        }
    }

    /// The flag strings appended to `base_flags`.
    fn strings(self) -> &'static [&'static str] {
        match self {
            Mode::Dp => &["dp_flags", "ep_flags"],
            Mode::EpOnly => &["ep_flags"],
            Mode::NoDp => &[],
        }
    }

    /// The blocks a role's per-mode fields come from, the first present wins.
    fn blocks(self) -> &'static [&'static str] {
        match self {
            Mode::Dp => &["dp"],
            Mode::EpOnly => &["ep_only", "no_dp"],
            Mode::NoDp => &["no_dp"],
        }
    }
}

/// What one role of a model says, before it is put together per mode.
#[derive(Default)]
struct RoleFields {
    span: Option<Span>,
    fields: Vec<FlagUse>,
    /// Per block name, its fields.
    blocks: Vec<(String, Vec<FlagUse>)>,
}

fn read_model(src: &SourceText, entry: &Entry, notes: &mut Vec<Note>) -> Vec<Deployment> {
    let Some(model) = entry.key.as_str() else {
        notes.push(Note::warning("a model whose name is not a string; skipped", Some(entry.key.span.clone())));
        return Vec::new();
    };
    let mut strings: Vec<(&str, Vec<ArgToken>)> = Vec::new();
    let mut roles: [Option<RoleFields>; 2] = Default::default();
    for field in entry.value.as_map().unwrap_or_default() {
        let Some(key) = field.key.as_str() else { continue };
        if let Some(&name) = FLAG_STRINGS.iter().find(|&&s| s == key) {
            strings.push((name, flag_words(src, &format!("{model}.{key}"), &field.value, PrintedAs::InDoubleQuotes, notes)));
        } else if let Some(i) = ROLES.iter().position(|&r| r == key) {
            roles[i] = Some(read_role(src, model, ROLES[i], field, notes));
        } else {
            notes.push(Note::warning(
                format!("`{model}.{key}`: not a key the server script reads (base_flags, dp_flags, ep_flags, mtp_flags, prefill, decode); not audited"),
                Some(field.key.span.clone()),
            ));
        }
    }
    let roles: Vec<RoleFields> = roles
        .into_iter()
        .zip(ROLES)
        .map(|(read, role)| {
            read.unwrap_or_else(|| {
                notes.push(Note::warning(
                    format!("`{model}` has no `{role}` map: its {role} server is read with the flag strings only"),
                    Some(entry.key.span.clone()),
                ));
                RoleFields::default()
            })
        })
        .collect();
    let words = |key: &str| strings.iter().find(|(k, _)| *k == key).map(|(_, w)| w.as_slice()).unwrap_or_default();
    let mtp = if words("mtp_flags").is_empty() { vec![false] } else { vec![false, true] };
    let mut deployments = Vec::new();
    for mode in Mode::ALL {
        for &with_mtp in &mtp {
            let roles = ROLES
                .iter()
                .zip(&roles)
                .map(|(&name, role)| {
                    // In the script's order: base, EP, MTP (both roles: the prefill's
                    // draft layers must match the decode's), DP.
                    let mut argv: Vec<ArgToken> = words("base_flags").to_vec();
                    if mode.strings().contains(&"ep_flags") {
                        argv.extend_from_slice(words("ep_flags"));
                    }
                    if with_mtp {
                        argv.extend_from_slice(words("mtp_flags"));
                    }
                    if mode.strings().contains(&"dp_flags") {
                        argv.extend_from_slice(words("dp_flags"));
                    }
                    let flags = role_flags(mode, name, role, &roles[0]);
                    RoleConfig {
                        role: name.to_string(),
                        span: role.span.clone(),
                        flags,
                        env: Vec::new(),
                        argv: Some(argv),
                        dynamic: None,
                        config: Vec::new(),
                        config_unread: None,
                    }
                })
                .collect();
            deployments.push(Deployment {
                name_span: Some(entry.key.span.clone()),
                variant: Some(if with_mtp { format!("{}, mtp", mode.name()) } else { mode.name().to_string() }),
                ..Deployment::launched(crate::profiles::SGLANG.id, model.to_string(), roles, Vec::new())
            });
        }
    }
    deployments
}

/// The flags a role's fields give in `mode`, as the server script composes
/// them: the block's fields after the role's; with DP attention (and EP, as
/// the `dp` variant runs) `--max-running-requests` is the job's maximum
/// concurrency; a decode without a context length gets the prefill's; a
/// prefill without CUDA graphs passes no `--cuda-graph-bs`.
fn role_flags(mode: Mode, name: &str, role: &RoleFields, prefill: &RoleFields) -> Vec<FlagUse> {
    let block = mode.blocks().iter().find_map(|b| role.blocks.iter().find(|(k, _)| k == b));
    let mut flags = role.fields.clone();
    flags.extend(block.into_iter().flat_map(|(_, f)| f.iter().cloned()));
    let on = |flags: &[FlagUse], n: &str| flags.iter().any(|f| f.name == n && f.value == FlagValue::Switch { on: true });
    if on(&flags, "disable-cuda-graph") {
        flags.retain(|f| f.name != "cuda-graph-bs");
    }
    if !matches!(mode, Mode::Dp) {
        flags.retain(|f| f.name != "enable-two-batch-overlap");
    }
    if name == "decode" && !flags.iter().any(|f| f.name == "context-length") {
        let prefill_block = match mode {
            Mode::Dp => prefill.blocks.iter().find(|(k, _)| k == "dp"),
            _ => prefill.blocks.iter().find(|(k, _)| k == "no_dp"),
        };
        flags.extend(prefill_block.into_iter().flat_map(|(_, f)| f.iter().filter(|f| f.name == "context-length").cloned()));
    }
    if matches!(mode, Mode::Dp) {
        let otherwise = if name == "decode" { "the end of `cuda_graph_bs_range` times the decode TP size" } else { "this value" };
        for f in flags.iter_mut().filter(|f| f.name == "max-running-requests") {
            f.value = FlagValue::Dynamic { text: format!("the job's maximum concurrency when EP is on too, else {otherwise}") };
        }
    }
    flags
}

fn read_role(src: &SourceText, model: &str, role: &str, entry: &Entry, notes: &mut Vec<Note>) -> RoleFields {
    let mut out = RoleFields { span: Some(entry.key.span.clone()), ..RoleFields::default() };
    let Some(map) = entry.value.as_map() else {
        notes.push(Note::error(
            format!("`{model}.{role}` should be a map of fields, found a {}; its fields are not read", entry.value.kind_name()),
            Some(entry.value.span.clone()),
        ));
        return out;
    };
    for field in map {
        let Some(key) = field.key.as_str() else { continue };
        let path = format!("{model}.{role}.{key}");
        if let Some(known) = ROLE_FIELDS.iter().find(|f| f.key == key) {
            if known.roles.contains(&role) {
                out.fields.extend(field_flag(src, &path, known, field, notes));
            } else {
                notes.push(not_passed(&path, role, field));
            }
        } else if ["dp", "ep_only", "no_dp"].contains(&key) {
            out.blocks.push((key.to_string(), read_block(src, &path, role, field, notes)));
        } else {
            notes.push(unknown_field(&path, ROLE_FIELDS, field));
        }
    }
    for block in ["dp", "no_dp"].iter().filter(|b| !out.blocks.iter().any(|(k, _)| k == *b)) {
        notes.push(Note::warning(
            format!("`{model}.{role}` has no `{block}` block: in the {block} variants its per-mode fields are not known"),
            Some(entry.key.span.clone()),
        ));
    }
    out
}

fn read_block(src: &SourceText, path: &str, role: &str, entry: &Entry, notes: &mut Vec<Note>) -> Vec<FlagUse> {
    let Some(map) = entry.value.as_map() else {
        notes.push(Note::error(
            format!("`{path}` should be a map of fields, found a {}; its fields are not read", entry.value.kind_name()),
            Some(entry.value.span.clone()),
        ));
        return Vec::new();
    };
    let mut flags = Vec::new();
    for field in map {
        let Some(key) = field.key.as_str() else { continue };
        match BLOCK_FIELDS.iter().find(|f| f.key == key) {
            Some(known) if known.roles.contains(&role) => flags.extend(field_flag(src, &format!("{path}.{key}"), known, field, notes)),
            Some(_) => notes.push(not_passed(&format!("{path}.{key}"), role, field)),
            None => notes.push(unknown_field(&format!("{path}.{key}"), BLOCK_FIELDS, field)),
        }
    }
    flags
}

/// A field the server script reads for the other role only: nothing of it
/// reaches this role's server.
fn not_passed(path: &str, role: &str, field: &Entry) -> Note {
    Note::info(format!("`{path}`: the server script does not pass it to the {role} server; not audited"), Some(field.key.span.clone()))
}

/// The server script's field-to-flag mapping is documented, not readable: a
/// field outside it may or may not reach the server, so it is named, not guessed.
fn unknown_field(path: &str, known: &[Field], field: &Entry) -> Note {
    let names: Vec<&str> = known.iter().map(|f| f.key).collect();
    Note::warning(
        format!("`{path}`: not a field the server script is known to pass here ({}); not audited", names.join(", ")),
        Some(field.key.span.clone()),
    )
}

/// The flag a known field becomes.
fn field_flag(src: &SourceText, path: &str, field: &Field, entry: &Entry, notes: &mut Vec<Note>) -> Option<FlagUse> {
    let node = &entry.value;
    let Some(scalar) = node.as_scalar() else {
        notes.push(Note::error(
            format!("`{path}` should be a single value, found a {}; not read", node.kind_name()),
            Some(node.span.clone()),
        ));
        return None;
    };
    let invalid = |notes: &mut Vec<Note>, reason: String| {
        notes.push(Note::error(format!("`{path}`: {reason}"), Some(node.span.clone())));
        FlagValue::Invalid { reason }
    };
    let value = match (field.kind, scalar.resolve()) {
        (_, ScalarType::Null) => FlagValue::Null,
        (FieldKind::Switch, ScalarType::Bool(on)) => FlagValue::Switch { on },
        (FieldKind::Switch, _) => invalid(notes, format!("`{}` is not true or false", scalar.text)),
        (FieldKind::Value, ty) => FlagValue::Scalar { text: scalar.text.clone(), quoted: scalar.is_quoted(), ty },
        (FieldKind::Arithmetic, ty) if scalar.text.trim().bytes().all(|b| b.is_ascii_digit()) => {
            FlagValue::Scalar { text: scalar.text.trim().to_string(), quoted: scalar.is_quoted(), ty }
        }
        (FieldKind::Arithmetic, _) => {
            notes.push(Note::info(
                format!("`{path}` is the bash arithmetic `{}`: --{} is passed, its value is known at run time", scalar.text, field.flag),
                Some(node.span.clone()),
            ));
            FlagValue::Dynamic { text: scalar.text.clone() }
        }
        (FieldKind::Values, _) => {
            let (chars, _) = source_chars(src, node, scalar);
            let items: Vec<Spanned<String>> = shell_words(&chars, &mut Vec::new())
                .into_iter()
                .map(|w| Spanned { value: w.value, span: src.span(chars[w.first].at, chars[w.end - 1].end()) })
                .collect();
            match items.len() {
                0 => invalid(notes, "no values: the flag would be passed without one".into()),
                1 => FlagValue::Scalar { text: items[0].value.clone(), quoted: scalar.is_quoted(), ty: ScalarType::Int },
                _ => FlagValue::List { items },
            }
        }
        (FieldKind::Range, _) => match seq_range(&scalar.text) {
            Ok((start, end)) => {
                let inner = inner_span(src, node, scalar);
                FlagValue::List { items: (start..=end).map(|n| Spanned { value: n.to_string(), span: inner.clone() }).collect() }
            }
            Err(reason) => invalid(notes, reason),
        },
    };
    Some(FlagUse {
        name: field.flag.to_string(),
        value,
        key_span: entry.key.span.clone(),
        value_span: node.span.clone(),
        shadowed: Vec::new(),
        condition: None,
    })
}

/// `"start-end"` as `seq start end` reads it, when it is a range worth expanding.
fn seq_range(text: &str) -> Result<(u64, u64), String> {
    let parsed = text.trim().split_once('-').and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)));
    match parsed {
        None => Err(format!("`{text}` is not a range `start-end` of whole numbers")),
        Some((start, end)) if start > end => Err(format!("`{text}` is empty: seq yields no value, the flag would be passed without one")),
        Some((start, end)) if end - start >= MAX_RANGE => Err(format!("`{text}` spans more than {MAX_RANGE} values; not expanded")),
        Some(range) => Ok(range),
    }
}

/// The span of a scalar's text without its quotes.
fn inner_span(src: &SourceText, node: &Node, scalar: &Scalar) -> Span {
    match scalar.style {
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted if node.span.len >= 2 => src.span(node.span.offset + 1, node.span.end() - 1),
        _ => node.span.clone(),
    }
}

// ---- flag strings -------------------------------------------------------------------

/// One character of a scalar's value and the bytes that wrote it in the file.
#[derive(Debug, Clone, Copy)]
struct SrcChar {
    c: char,
    at: usize,
    len: usize,
}

impl SrcChar {
    fn end(&self) -> usize {
        self.at + self.len
    }
}

/// How a server script hands a table string to the shell before the launch's
/// words are parsed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PrintedAs {
    /// As it is (`'...'` with its quotes escaped: server_atom.sh's `sh()`).
    AsIs,
    /// Inside the double quotes of an assignment the script `eval`s
    /// (`print(f'MODEL_BASE_FLAGS="{...}"')`): bash first removes the
    /// backslash of `\"`, `\\`, `\$` and `` \` `` (server_sglang.sh, server_vllm.sh).
    InDoubleQuotes,
}

/// The words of one flag string, each spanning its bytes in the file.
pub(super) fn flag_words(src: &SourceText, path: &str, node: &Node, printed: PrintedAs, notes: &mut Vec<Note>) -> Vec<ArgToken> {
    let scalar = match &node.kind {
        NodeKind::Scalar(s) if s.resolve() == ScalarType::Null => {
            notes.push(Note::warning(format!("`{path}` is null: read as no flags"), Some(node.span.clone())));
            return Vec::new();
        }
        NodeKind::Scalar(s) => s,
        _ => {
            notes.push(Note::error(
                format!("`{path}` should be a string of flags, found a {}; not read", node.kind_name()),
                Some(node.span.clone()),
            ));
            return Vec::new();
        }
    };
    let (mut chars, exact) = source_chars(src, node, scalar);
    if printed == PrintedAs::InDoubleQuotes {
        chars = in_double_quotes(chars, path, node, notes);
    }
    if !exact {
        notes.push(Note::warning(
            format!("`{path}` is written over several lines or with escapes: its flags point at the whole value and are not edited"),
            Some(node.span.clone()),
        ));
    }
    let mut problems = Vec::new();
    let words = shell_words(&chars, &mut problems);
    notes.extend(problems.into_iter().map(|p| Note::warning(format!("`{path}`: {p}"), Some(node.span.clone()))));
    words
        .into_iter()
        .map(|w| {
            let (start, end) = (chars[w.first].at, chars[w.end - 1].end());
            // Without exact positions no part of the span may be taken for the
            // flag's name: the raw text is left empty.
            let raw = if exact { src.text[start..end].to_string() } else { String::new() };
            if w.dynamic {
                notes.push(Note::info(format!("`{path}`: `{}` is expanded by the shell at run time", w.value), Some(src.span(start, end))));
            }
            let value = if w.dynamic { Known::dynamic(w.value) } else { Known::Value(w.value) };
            ArgToken { value, raw, span: src.span(start, end), quoted: w.quoted, condition: None, unread: None }
        })
        .collect()
}

/// The characters of a scalar's value with where each was written, and whether
/// those places are exact: they are for a one-line plain or quoted scalar;
/// otherwise (folded lines, block scalars, escapes this does not decode) every
/// character is given the whole scalar.
fn source_chars(src: &SourceText, node: &Node, scalar: &Scalar) -> (Vec<SrcChar>, bool) {
    match exact_chars(src, node, scalar) {
        Some(chars) => (chars, true),
        None => (scalar.text.chars().map(|c| SrcChar { c, at: node.span.offset, len: node.span.len }).collect(), false),
    }
}

fn exact_chars(src: &SourceText, node: &Node, scalar: &Scalar) -> Option<Vec<SrcChar>> {
    let written = src.slice(&node.span);
    let (inner, start) = match scalar.style {
        ScalarStyle::Plain => (written, node.span.offset),
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => (written.get(1..written.len().checked_sub(1)?)?, node.span.offset + 1),
        ScalarStyle::Literal | ScalarStyle::Folded => return None,
    };
    if inner.contains(['\n', '\r']) {
        return None;
    }
    let mut out = Vec::new();
    let mut chars = inner.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at = start + i;
        let (c, len) = match (scalar.style, c) {
            (ScalarStyle::DoubleQuoted, '\\') => {
                let (_, escaped) = chars.next()?;
                let c = match escaped {
                    '\\' | '"' | '/' | ' ' => escaped,
                    't' | '\t' => '\t',
                    _ => return None,
                };
                (c, 1 + escaped.len_utf8())
            }
            (ScalarStyle::SingleQuoted, '\'') => {
                chars.next().filter(|&(_, q)| q == '\'')?;
                ('\'', 2)
            }
            _ => (c, c.len_utf8()),
        };
        out.push(SrcChar { c, at, len });
    }
    (out.iter().map(|c| c.c).collect::<String>() == scalar.text).then_some(out)
}

/// The characters bash leaves of text inside double quotes: a backslash before
/// `"`, `\\`, `$` or `` ` `` is removed (the character keeps both places). An
/// unescaped `"` would end those quotes and change the words: named, not guessed.
fn in_double_quotes(chars: Vec<SrcChar>, path: &str, node: &Node, notes: &mut Vec<Note>) -> Vec<SrcChar> {
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (c.c, chars.get(i + 1)) {
            ('\\', Some(next)) if matches!(next.c, '"' | '\\' | '$' | '`') => {
                out.push(SrcChar { c: next.c, at: c.at, len: next.end() - c.at });
                i += 2;
                continue;
            }
            ('"', _) => notes.push(Note::warning(
                format!("`{path}`: a `\"` ends the double quotes the server script prints the string in; the words after it may differ from those read here"),
                Some(node.span.clone()),
            )),
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// One shell word: its value after quote removal and the characters it spans.
struct Word {
    value: String,
    first: usize,
    end: usize,
    quoted: bool,
    /// Holds an expansion (`$X`, `` `x` ``) or an operator: known at run time only.
    dynamic: bool,
}

/// Split text into words as bash parses a command line: blanks separate words,
/// quotes and backslashes are removed, `#` at a word's start begins a comment.
fn shell_words(chars: &[SrcChar], problems: &mut Vec<String>) -> Vec<Word> {
    let mut words = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if chars[i].c == '#' {
            problems.push("a `#` starts a shell comment: the rest of the string is not passed".into());
            break;
        }
        let mut w = Word { value: String::new(), first: i, end: i, quoted: false, dynamic: false };
        while i < chars.len() && !chars[i].c.is_ascii_whitespace() {
            let c = chars[i].c;
            i += 1;
            match c {
                '\'' => {
                    w.quoted = true;
                    match chars[i..].iter().position(|ch| ch.c == '\'') {
                        Some(n) => {
                            w.value.extend(chars[i..i + n].iter().map(|ch| ch.c));
                            i += n + 1;
                        }
                        None => {
                            problems.push("a `'` is never closed: the command would not run".into());
                            w.dynamic = true;
                            w.value.extend(chars[i..].iter().map(|ch| ch.c));
                            i = chars.len();
                        }
                    }
                }
                '"' => {
                    w.quoted = true;
                    loop {
                        let Some(ch) = chars.get(i).map(|ch| ch.c) else {
                            problems.push("a `\"` is never closed: the command would not run".into());
                            w.dynamic = true;
                            break;
                        };
                        i += 1;
                        match ch {
                            '"' => break,
                            '\\' if chars.get(i).is_some_and(|n| matches!(n.c, '$' | '`' | '"' | '\\')) => {
                                w.value.push(chars[i].c);
                                i += 1;
                            }
                            '$' | '`' => {
                                w.dynamic = true;
                                w.value.push(ch);
                            }
                            _ => w.value.push(ch),
                        }
                    }
                }
                '\\' => {
                    if let Some(next) = chars.get(i) {
                        w.value.push(next.c);
                        i += 1;
                    }
                }
                '$' | '`' => {
                    w.dynamic = true;
                    w.value.push(c);
                }
                ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                    problems.push(format!("`{c}` is a shell operator: the command line around it cannot be known"));
                    w.dynamic = true;
                    w.value.push(c);
                }
                _ => w.value.push(c),
            }
        }
        w.end = i;
        words.push(w);
    }
    words
}

// ---- edits ------------------------------------------------------------------------

/// A word that reads the same in a YAML scalar of any style and to bash: no
/// quotes, escapes, blanks, expansions, globs or comments.
fn plain_word(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/+=,@%".contains(c))
}

/// A key of a YAML map entry (`key: value`), as opposed to a word in a flag string.
fn is_yaml_key(file: &RecipeFile, key: &Span) -> bool {
    file.text.get(key.end()..).is_some_and(|rest| rest.trim_start_matches([' ', '\t']).starts_with(':'))
}

/// The span is a flag's name (after its `--`) in a flag string, written exactly as `name`.
fn is_flag_word(file: &RecipeFile, span: &Span, name: &str) -> bool {
    let before = span.offset.checked_sub(2).and_then(|s| file.text.get(s..span.offset));
    before == Some("--") && file.text.get(span.offset..span.end()) == Some(name) && !is_yaml_key(file, span)
}

/// A flag's name in a flag string is renamed in place. A field's key is not:
/// the script passes the fields it knows by name, and no two of them pass the
/// same flag the same way, so a renamed key would pass nothing (advice only).
fn rename(file: &RecipeFile, span: &Span, old: &str, new: &str) -> Option<Edit> {
    (is_flag_word(file, span, old) && plain_word(new)).then(|| Edit {
        path: file.path.clone(),
        offset: span.offset,
        len: span.len,
        replacement: new.to_string(),
    })
}

/// A value is set in a flag string's word, or in a field that takes one value.
fn set_value(file: &RecipeFile, span: &Span, value: &str) -> Option<Edit> {
    if !plain_word(value) {
        return None;
    }
    let line = line_before(file, span.offset)?;
    let field_value = match line.trim().strip_suffix(':') {
        Some(key) => {
            [ROLE_FIELDS, BLOCK_FIELDS]
                .iter()
                .flat_map(|t| t.iter())
                .any(|f| f.key == key.trim() && matches!(f.kind, FieldKind::Value | FieldKind::Arithmetic))
                || atom::FIELDS.iter().any(|f| f.key == key.trim())
        }
        None => false,
    };
    let written = file.text.get(span.offset..span.end())?;
    // A switch's value span is the switch itself: it is not a value to replace.
    let in_flag_string = !line.trim().ends_with(':') && plain_word(written) && !written.starts_with('-');
    (field_value || in_flag_string).then(|| format::replace_value(file, span, value)).flatten()
}

/// The text of the line holding `offset`, up to it.
fn line_before(file: &RecipeFile, offset: usize) -> Option<&str> {
    let before = file.text.get(..offset)?;
    Some(&before[before.rfind('\n').map_or(0, |i| i + 1)..])
}

/// `--name` in a flag string becomes `--a=v --b=v`.
fn replace_word(file: &RecipeFile, key: &Span, name: &str, words: &[String]) -> Option<Edit> {
    if !is_flag_word(file, key, name) || !words.iter().all(|w| plain_word(w)) {
        return None;
    }
    Some(Edit { path: file.path.clone(), offset: key.offset, len: key.len, replacement: words.join(" --") })
}

/// Remove a flag and its value words from a flag string, with the blanks that
/// separate them from the next word (or, at the end, the previous one).
fn delete_words(file: &RecipeFile, key: &Span, value: &Span) -> Option<Edit> {
    let start = key.offset.checked_sub(2)?;
    let end = key.end().max(value.end());
    let text = file.text.as_bytes();
    let words = file.text.get(start..end)?;
    // Spans of whole words on one line (escapes inside them go with them); a
    // switch's value span is its own word.
    if !words.starts_with("--") || words.contains(['\n', '\r']) || value.offset < start {
        return None;
    }
    let blank = |b: u8| b == b' ' || b == b'\t';
    let after = text[end..].iter().take_while(|&&b| blank(b)).count();
    let before = text[..start].iter().rev().take_while(|&&b| blank(b)).count();
    let word_follows = text.get(end + after).is_some_and(|&b| !matches!(b, b'"' | b'\'' | b'\n' | b'\r' | b'#'));
    let (from, to) = if word_follows { (start, end + after) } else { (start - before, end) };
    // A plain scalar left empty would be null, not an empty string of flags.
    if line_before(file, from)?.trim_end().ends_with(':') {
        return None;
    }
    // The words must be a whole part of the string: a quote or a blank before them.
    let opens = text.get(start.checked_sub(1)?).is_some_and(|&b| blank(b) || b == b'"' || b == b'\'');
    opens.then(|| Edit { path: file.path.clone(), offset: from, len: to - from, replacement: String::new() })
}

mod atom;
mod vllm;

#[cfg(test)]
mod tests;
