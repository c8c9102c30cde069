//! The AMD multi-node ATOM model table (`amd_utils/models_atom.yaml`), read the
//! way InferenceX's `server_atom.sh` reads it: a Python program loads the YAML,
//! takes the model's map and prints each field as a shell assignment, with
//! `''` for a missing key; the script then builds the prefill and decode
//! command lines (run by `eval`) from those variables.
//!
//! What each key becomes (the script, not the table, knows this mapping, as
//! for the SGLang table's fields):
//!
//! - `kv_cache_flags`: a whole flag string, on both roles;
//! - `tp_dp_flags` / `ep_dp_flags`: flag strings of the TP+DPA and EP+DPA modes,
//!   each overridden per role by `prefill_<key>` / `decode_<key>` (present,
//!   even empty, wins: `m.get('prefill_tp_dp_flags', tp_dp)`);
//! - `mtp_flags`: words passed before the master entry's `$DECODE_MTP_SIZE`,
//!   on both roles, when that size is above zero;
//! - `online_quant_config` (without DPA) / `online_quant_dpa_config` (with it,
//!   falling back to the first): the value of `--online_quant_config`;
//! - `block_size`, `mem_frac_static`, `max_model_len`, `max_num_batched_tokens`,
//!   `scheduler_delay_factor` (both roles) and `max_num_seqs` (prefill only:
//!   decode passes its own, the benchmark's largest concurrency): one flag each,
//!   not passed when empty;
//! - `env` (always), `tp_dp_env` / `ep_dp_env` (in that mode): `KEY=VALUE`
//!   words, exported for both servers.
//!
//! Each configuration the script can build is one [`Deployment`]: `tp` (no
//! DPA), `tp_dp`, `ep_dp`, each also with `, mtp` when the model has MTP flags.
//! EP without DPA passes no table flags beyond `tp`'s, so it is no variant of
//! its own. The script picks both servers' quantization config by the
//! prefill's mode: where the two configs differ, the jobs whose servers differ
//! in DPA are configurations too (`prefill tp_dp, decode tp`). What the script passes itself (`-tp`, `--kv-transfer-config`, the
//! defaults it falls back to) is audited at its own launches, not here.

use super::super::format::Loaded;
use super::super::yaml::{Entry, Node, NodeKind, ScalarType};
use super::super::{ArgToken, Deployment, EnvUse, FlagUse, FlagValue, Note, RoleConfig};
use super::vllm::env_pairs;
use super::{flag_words, PrintedAs, ROLES};
use crate::surface::Known;
use crate::text::span::SourceText;

/// The lines the script's reader prints, in its order: the key each prints,
/// and the key it falls back to when that one is absent. A value that is no
/// string stops the reader at its line: the lines after it are never printed.
const LINES: [(&str, Option<&str>); 17] = [
    (ENV, None),
    ("prefill_tp_dp_flags", Some(TP_DP)),
    ("decode_tp_dp_flags", Some(TP_DP)),
    ("prefill_ep_dp_flags", Some(EP_DP)),
    ("decode_ep_dp_flags", Some(EP_DP)),
    (TP_DP_ENV, None),
    (EP_DP_ENV, None),
    (MTP, None),
    (KV, None),
    (QUANT, None),
    (QUANT_DPA, Some(QUANT)),
    ("block_size", None),
    ("mem_frac_static", None),
    ("max_model_len", None),
    ("max_num_seqs", None),
    ("max_num_batched_tokens", None),
    ("scheduler_delay_factor", None),
];

const ENV: &str = "env";
const TP_DP: &str = "tp_dp_flags";
const EP_DP: &str = "ep_dp_flags";
const TP_DP_ENV: &str = "tp_dp_env";
const EP_DP_ENV: &str = "ep_dp_env";
const MTP: &str = "mtp_flags";
/// The word the script passes after the MTP flags.
const MTP_SIZE: &str = "$DECODE_MTP_SIZE";
const KV: &str = "kv_cache_flags";
const QUANT: &str = "online_quant_config";
const QUANT_DPA: &str = "online_quant_dpa_config";

/// A line whose value becomes one flag with its value.
pub(super) struct Field {
    pub(super) key: &'static str,
    flag: &'static str,
    /// The roles it is passed to.
    roles: &'static [&'static str],
}

pub(super) const FIELDS: &[Field] = &[
    Field { key: "block_size", flag: "block-size", roles: &ROLES },
    Field { key: "mem_frac_static", flag: "gpu-memory-utilization", roles: &ROLES },
    Field { key: "max_model_len", flag: "max-model-len", roles: &ROLES },
    Field { key: "max_num_seqs", flag: "max-num-seqs", roles: &["prefill"] },
    Field { key: "max_num_batched_tokens", flag: "max-num-batched-tokens", roles: &ROLES },
    Field { key: "scheduler_delay_factor", flag: "scheduler-delay-factor", roles: &ROLES },
    Field { key: QUANT, flag: QUANT, roles: &ROLES },
    Field { key: QUANT_DPA, flag: QUANT, roles: &ROLES },
];

/// Every key the script's reader takes from a model's map.
pub(super) fn known_key(key: &str) -> bool {
    LINES.iter().any(|(k, fallback)| *k == key || *fallback == Some(key))
}

/// The parallelism a configuration runs with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// No data-parallel attention: `-tp` only (with or without EP).
    Tp,
    /// Data-parallel attention without EP.
    TpDp,
    /// Data-parallel attention with EP.
    EpDp,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::Tp, Mode::TpDp, Mode::EpDp];

    fn name(self) -> &'static str {
        match self {
            Mode::Tp => "tp",
            Mode::TpDp => "tp_dp",
            Mode::EpDp => "ep_dp",
        }
    }

    /// The flag-string (without its role's prefix) and env lines of the mode,
    /// when it has its own.
    fn lines(self) -> Option<(&'static str, &'static str)> {
        match self {
            Mode::Tp => None,
            Mode::TpDp => Some((TP_DP, TP_DP_ENV)),
            Mode::EpDp => Some((EP_DP, EP_DP_ENV)),
        }
    }

    /// The line holding the `--online_quant_config` value in this mode.
    fn quant(self) -> &'static str {
        match self {
            Mode::Tp => QUANT,
            Mode::TpDp | Mode::EpDp => QUANT_DPA,
        }
    }
}

pub(super) fn read(src: &SourceText, root: &Node) -> Loaded {
    let notes = vec![Note::info(
        "what server_atom.sh passes besides a model's table fields (-tp, --kv-transfer-config, the defaults it falls back to) is audited at the script's own launches, not in this file",
        None,
    )];
    let mut loaded = Loaded { notes, ..Loaded::default() };
    for entry in root.as_map().unwrap_or_default() {
        loaded.deployments.extend(read_model(src, entry, &mut loaded.notes));
    }
    loaded
}

/// What the reader prints for a model, by line (its primary key).
#[derive(Default)]
struct Printed<'n> {
    words: Vec<(&'static str, Vec<ArgToken>)>,
    env: Vec<(&'static str, Vec<EnvUse>)>,
    flags: Vec<(&'static str, FlagUse)>,
    mtp_node: Option<&'n Node>,
}

impl Printed<'_> {
    fn words(&self, line: &str) -> &[ArgToken] {
        self.words.iter().find(|(k, _)| *k == line).map(|(_, w)| w.as_slice()).unwrap_or_default()
    }
    fn env(&self, line: &str) -> &[EnvUse] {
        self.env.iter().find(|(k, _)| *k == line).map(|(_, e)| e.as_slice()).unwrap_or_default()
    }
    fn flag(&self, line: &str) -> Option<&FlagUse> {
        self.flags.iter().find(|(k, _)| *k == line).map(|(_, f)| f)
    }
}

fn read_model(src: &SourceText, entry: &Entry, notes: &mut Vec<Note>) -> Vec<Deployment> {
    let Some(model) = entry.key.as_str() else {
        notes.push(Note::warning("a model whose name is not a string; skipped", Some(entry.key.span.clone())));
        return Vec::new();
    };
    let fields = entry.value.as_map().unwrap_or_default();
    for field in fields {
        if let Some(key) = field.key.as_str().filter(|k| !known_key(k)) {
            notes.push(Note::warning(
                format!("`{model}.{key}`: not a key server_atom.sh reads from the table; not audited"),
                Some(field.key.span.clone()),
            ));
        }
    }
    let get = |key: &str| fields.iter().find(|f| f.key.as_str() == Some(key));
    let mut printed = Printed::default();
    // A key read by two lines (a fallback) is split once, so its notes are said once.
    let mut split: Vec<(&str, Vec<ArgToken>)> = Vec::new();
    for (i, &(line, fallback)) in LINES.iter().enumerate() {
        let Some(field) = get(line).or_else(|| fallback.and_then(get)) else { continue };
        let key = field.key.as_str().unwrap_or(line);
        let path = format!("{model}.{key}");
        if let Some(found) = not_text(&field.value) {
            let lost: Vec<&str> = LINES[i + 1..].iter().map(|(k, _)| *k).filter(|k| get(k).is_some()).collect();
            let lost = if lost.is_empty() { String::new() } else { format!(", nor what it prints after it ({})", lost.join(", ")) };
            notes.push(Note::warning(
                format!("`{path}` is {found}, not a string: server_atom.sh's reader fails on it (`.replace` of a non-string), so the script sets neither it{lost}; quote it. Not audited"),
                Some(field.value.span.clone()),
            ));
            break;
        }
        if line == ENV || line == TP_DP_ENV || line == EP_DP_ENV {
            printed.env.push((line, env_pairs(src, &path, &field.value, notes)));
        } else if let Some(f) = FIELDS.iter().find(|f| f.key == line) {
            printed.flags.extend(value_flag(&path, f.flag, field, notes).map(|flag| (line, flag)));
        } else {
            if line == MTP {
                printed.mtp_node = Some(&field.value);
            }
            let words = match split.iter().find(|(k, _)| *k == key) {
                Some((_, words)) => words.clone(),
                None => {
                    let words = flag_words(src, &path, &field.value, PrintedAs::AsIs, notes);
                    split.push((key, words.clone()));
                    words
                }
            };
            printed.words.push((line, words));
        }
    }
    let mtp = !printed.words(MTP).is_empty();
    let mut deployments = Vec::new();
    for (prefill, decode) in mode_pairs(&printed) {
        for with_mtp in if mtp { vec![false, true] } else { vec![false] } {
            // The script picks both servers' `--online_quant_config` by the
            // prefill's mode (`PREFILL_ENABLE_DP`).
            let roles = [("prefill", prefill), ("decode", decode)]
                .into_iter()
                .map(|(role, mode)| role_config(&printed, role, mode, prefill.quant(), with_mtp, entry))
                .collect();
            let mut env = printed.env(ENV).to_vec();
            // Each server's mode exports its env words in the one shell both start from.
            for mode in if prefill == decode { vec![prefill] } else { vec![prefill, decode] } {
                if let Some((_, env_line)) = mode.lines() {
                    env.extend_from_slice(printed.env(env_line));
                }
            }
            let modes = if prefill == decode {
                prefill.name().to_string()
            } else {
                format!("prefill {}, decode {}", prefill.name(), decode.name())
            };
            deployments.push(Deployment {
                name_span: Some(entry.key.span.clone()),
                variant: Some(if with_mtp { format!("{modes}, mtp") } else { modes }),
                ..Deployment::launched(crate::profiles::ATOM.id, model.to_string(), roles, env)
            });
        }
    }
    deployments
}

/// The (prefill, decode) modes read as configurations of their own: each mode
/// on both servers; and where the table gives the two modes' quantization
/// configs different values, the jobs whose servers differ in data-parallel
/// attention, since there the decode gets the config of the prefill's mode,
/// which no configuration of one mode shows.
fn mode_pairs(printed: &Printed) -> Vec<(Mode, Mode)> {
    let mut pairs: Vec<(Mode, Mode)> = Mode::ALL.iter().map(|&m| (m, m)).collect();
    let value = |line: &str| printed.flag(line).map(|f| &f.value);
    if value(QUANT) != value(QUANT_DPA) {
        for prefill in Mode::ALL {
            for decode in Mode::ALL {
                if (prefill == Mode::Tp) != (decode == Mode::Tp) {
                    pairs.push((prefill, decode));
                }
            }
        }
    }
    pairs
}

fn role_config(printed: &Printed, role: &str, mode: Mode, quant: &str, with_mtp: bool, entry: &Entry) -> RoleConfig {
    let mut argv: Vec<ArgToken> = Vec::new();
    if let Some((flags_line, _)) = mode.lines() {
        argv.extend_from_slice(printed.words(&format!("{role}_{flags_line}")));
    }
    if with_mtp {
        argv.extend_from_slice(printed.words(MTP));
        // The script appends the MTP size itself: the master entry's setting,
        // known at run time.
        if let Some(node) = printed.mtp_node {
            argv.push(ArgToken {
                value: Known::dynamic(MTP_SIZE),
                // As server_atom.sh writes it; it is in no byte of the table.
                raw: MTP_SIZE.to_string(),
                span: node.span.clone(),
                quoted: true,
                condition: None,
                unread: Some("set by the master entry (DECODE_MTP_SIZE)".into()),
            });
        }
    }
    argv.extend_from_slice(printed.words(KV));
    let mut flags: Vec<FlagUse> =
        FIELDS.iter().filter(|f| f.roles.contains(&role) && f.flag != QUANT).filter_map(|f| printed.flag(f.key).cloned()).collect();
    flags.extend(printed.flag(quant).cloned());
    RoleConfig {
        role: role.to_string(),
        span: Some(entry.key.span.clone()),
        flags,
        env: Vec::new(),
        argv: Some(argv),
        dynamic: None,
        config: Vec::new(),
        config_unread: None,
    }
}

/// The reader calls `.replace` on every value it prints: what a value YAML
/// loads as anything but a string (a number, `true`, `null`, a list) is.
fn not_text(node: &Node) -> Option<String> {
    match &node.kind {
        NodeKind::Scalar(s) => match s.resolve() {
            ScalarType::Str => None,
            ScalarType::Null => Some("null".to_string()),
            ScalarType::Bool(_) => Some(format!("`{}`, which YAML loads as a boolean", s.text)),
            ScalarType::Int | ScalarType::Float => Some(format!("`{}`, which YAML loads as a number", s.text)),
        },
        _ => Some(format!("a {}", node.kind_name())),
    }
}

/// A field that becomes `--flag value`; an empty string passes nothing.
fn value_flag(path: &str, flag: &str, entry: &Entry, notes: &mut Vec<Note>) -> Option<FlagUse> {
    let node = &entry.value;
    let scalar = node.as_scalar()?;
    if scalar.text.is_empty() {
        return None;
    }
    // The value is pasted into the command string that `eval` runs: blanks,
    // quotes or expansions in it are parsed again by the shell.
    let plain = !scalar.text.contains(|c: char| c.is_whitespace() || "$`'\"\\;&|<>()".contains(c));
    let value = if plain || flag == QUANT {
        FlagValue::Scalar { text: scalar.text.clone(), quoted: scalar.is_quoted(), ty: ScalarType::Str }
    } else {
        notes.push(Note::info(
            format!(
                "`{path}`: `{}` is parsed again by the shell when the command line is run; its value is known at run time",
                scalar.text
            ),
            Some(node.span.clone()),
        ));
        FlagValue::Dynamic { text: scalar.text.clone() }
    };
    Some(FlagUse {
        name: flag.to_string(),
        value,
        key_span: entry.key.span.clone(),
        value_span: node.span.clone(),
        shadowed: Vec::new(),
        condition: None,
    })
}
