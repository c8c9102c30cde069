//! Compare extracted flags and env vars with the ground truth of the real
//! argparse parser (`/work/shared/oracle/sglang-<V>.json`, see its README).
//!
//! Conventions of the comparison:
//! - The oracle includes argparse's `-h/--help`; so does the extraction.
//! - A deprecated action is one the oracle gives `extra` (SGLang's own
//!   attributes): `error_message` set → removed, `error_message` null → noop,
//!   `new_flag` → alias with that replacement.
//! - Choices are compared as strings (non-strings by Python `repr`, as the
//!   oracle writes them); `choices_unordered` ones as sets. Values from stubs
//!   are skipped.
//! - A miss reported as dynamic (`{"dynamic": ...}`) is counted apart from a
//!   wrong value.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use engine_audit::surface::{EnvDeprecationKind, EnvVar, Flag, FlagDeprecationKind, Known};
use serde_json::Value;

/// Misses listed per measure.
const MAX_LISTED: usize = 40;

pub struct Oracle {
    pub version: String,
    pub actions: Vec<Value>,
    pub env_vars: Vec<Value>,
    pub env_deprecations: Value,
}

pub fn load(path: &Path) -> Oracle {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read oracle {}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).expect("oracle is JSON");
    Oracle {
        version: v["version"].as_str().unwrap_or_default().to_string(),
        actions: v["actions"].as_array().cloned().unwrap_or_default(),
        env_vars: v["env_vars"].as_array().cloned().unwrap_or_default(),
        env_deprecations: v["env_deprecations"].clone(),
    }
}

/// A ratio with the items that missed it.
#[derive(Default)]
pub struct Score {
    pub hit: usize,
    pub total: usize,
    /// Reported dynamic (not known) instead of the value.
    pub dynamic: Vec<String>,
    /// A known value that differs from the oracle's.
    pub wrong: Vec<String>,
}

impl Score {
    pub fn pct(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.hit as f64 / self.total as f64
        }
    }
    fn record(&mut self, ok: bool, dynamic: bool, what: String) {
        self.total += 1;
        if ok {
            self.hit += 1;
        } else if dynamic {
            self.dynamic.push(what);
        } else {
            self.wrong.push(what);
        }
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{} ({:.1}%)", self.hit, self.total, self.pct())?;
        if !self.dynamic.is_empty() {
            write!(f, ", {} dynamic", self.dynamic.len())?;
        }
        if !self.wrong.is_empty() {
            write!(f, ", {} WRONG", self.wrong.len())?;
        }
        Ok(())
    }
}

pub struct FlagReport {
    pub version: String,
    pub extracted: usize,
    pub options_recall: Score,
    pub options_precision: Score,
    pub dest: Score,
    pub deprecation: Score,
    pub choices: Score,
    pub defaults: Score,
    pub types: Score,
}

impl fmt::Display for FlagReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "== sglang {} ({} flags extracted)", self.version, self.extracted)?;
        let rows: [(&str, &Score); 7] = [
            ("option strings recall", &self.options_recall),
            ("option strings precision", &self.options_precision),
            ("dest", &self.dest),
            ("deprecation kind+replacement", &self.deprecation),
            ("choices", &self.choices),
            ("defaults", &self.defaults),
            ("type (informative)", &self.types),
        ];
        for (name, s) in rows {
            writeln!(f, "  {name:<30} {s}")?;
            // Long lists mean something broke wholesale; the head says what.
            for m in s.wrong.iter().take(MAX_LISTED) {
                writeln!(f, "      wrong:   {m}")?;
            }
            for m in s.dynamic.iter().take(MAX_LISTED) {
                writeln!(f, "      dynamic: {m}")?;
            }
            let more = (s.wrong.len() + s.dynamic.len()).saturating_sub(2 * MAX_LISTED);
            if s.wrong.len() > MAX_LISTED || s.dynamic.len() > MAX_LISTED {
                writeln!(f, "      ... and about {more} more")?;
            }
        }
        Ok(())
    }
}

fn as_str_vec(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// Python `repr` of a JSON value, as the oracle writes non-string choices.
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) if n.is_f64() => engine_audit::extract::consts::py_float_repr(n.as_f64().unwrap_or_default()),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

fn choice_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// JSON equality with Python's numeric semantics (`1 == 1.0`).
/// A Python repr as JSON: literals, lists and tuples, dicts, `Class(k=v, ...)`
/// as an object of its fields, `<Enum.X: v>` as `v`, `set()` as `[]`; `None`
/// when the text is anything else.
fn parse_py_repr(text: &str) -> Option<Value> {
    let mut p = ReprParser { s: text.as_bytes(), i: 0 };
    let v = p.value()?;
    p.blank();
    (p.i == p.s.len()).then_some(v)
}

struct ReprParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl ReprParser<'_> {
    fn blank(&mut self) {
        while self.s.get(self.i).is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.blank();
        let hit = self.s.get(self.i) == Some(&b);
        self.i += usize::from(hit);
        hit
    }

    /// Items up to `close`, separated by commas (a trailing one allowed).
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        loop {
            if self.eat(close) {
                return Some(());
            }
            item(self)?;
            if !self.eat(b',') {
                return self.eat(close).then_some(());
            }
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.blank();
        let start = self.i;
        while self.s.get(self.i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.') {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn value(&mut self) -> Option<Value> {
        self.blank();
        match *self.s.get(self.i)? {
            b'[' | b'(' => {
                let close = if self.s[self.i] == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut out = Vec::new();
                self.items(close, |p| {
                    out.push(p.value()?);
                    Some(())
                })?;
                Some(Value::Array(out))
            }
            b'{' => {
                self.i += 1;
                let mut out = serde_json::Map::new();
                self.items(b'}', |p| {
                    let Value::String(k) = p.value()? else { return None };
                    p.eat(b':').then_some(())?;
                    out.insert(k, p.value()?);
                    Some(())
                })?;
                Some(Value::Object(out))
            }
            q @ (b'\'' | b'"') => {
                self.i += 1;
                let mut out = String::new();
                while let Some(&b) = self.s.get(self.i) {
                    self.i += 1;
                    match b {
                        _ if b == q => return Some(Value::String(out)),
                        b'\\' => {
                            let e = *self.s.get(self.i)?;
                            self.i += 1;
                            out.push(match e {
                                b'n' => '\n',
                                b't' => '\t',
                                other => other as char,
                            });
                        }
                        _ => {
                            let len = std::str::from_utf8(&self.s[self.i - 1..]).ok()?.chars().next()?.len_utf8();
                            out.push_str(std::str::from_utf8(&self.s[self.i - 1..self.i - 1 + len]).ok()?);
                            self.i += len - 1;
                        }
                    }
                }
                None
            }
            b'<' => {
                let end = self.i + self.s[self.i..].iter().position(|b| *b == b'>')?;
                let v = enum_member_value(std::str::from_utf8(&self.s[self.i..=end]).ok()?)?;
                self.i = end + 1;
                Some(v)
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                self.i += 1;
                while self.s.get(self.i).is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')) {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                text.parse::<i64>().map(Value::from).ok().or_else(|| text.parse::<f64>().ok().map(Value::from))
            }
            _ => {
                let name = self.ident()?;
                match name.as_str() {
                    "None" => return Some(Value::Null),
                    "True" => return Some(Value::Bool(true)),
                    "False" => return Some(Value::Bool(false)),
                    _ => {}
                }
                self.eat(b'(').then_some(())?;
                let mut fields = serde_json::Map::new();
                self.items(b')', |p| {
                    let key = p.ident()?;
                    p.eat(b'=').then_some(())?;
                    fields.insert(key, p.value()?);
                    Some(())
                })?;
                // `set()`, `frozenset()`: empty collections.
                Some(if fields.is_empty() && matches!(name.as_str(), "set" | "frozenset" | "list" | "tuple") {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(fields)
                })
            }
        }
    }
}

/// The value of an enum member's repr, `<Class.NAME: 'text'>` or `<Class.NAME: 2>`.
fn enum_member_value(repr: &str) -> Option<Value> {
    let inner = repr.strip_prefix('<')?.strip_suffix('>')?;
    let (member, value) = inner.split_once(": ")?;
    let (class, name) = member.split_once('.')?;
    if !(class.chars().all(|c| c.is_alphanumeric() || c == '_') && name.chars().all(|c| c.is_alphanumeric() || c == '_')) {
        return None;
    }
    match value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        Some(text) => Some(Value::String(text.to_string())),
        None => value.parse::<i64>().ok().map(Value::from),
    }
}

fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w))),
        _ => a == b,
    }
}

/// Expected deprecation of an oracle action: (kind, replacement).
fn expected_deprecation(action: &Value) -> Option<(FlagDeprecationKind, Option<String>)> {
    let extra = action.get("extra")?.as_object()?;
    if let Some(msg) = extra.get("error_message") {
        return Some(if msg.is_null() { (FlagDeprecationKind::Noop, None) } else { (FlagDeprecationKind::Removed, None) });
    }
    // Before `error_message` existed, a `DeprecatedAction` carried no extra at all.
    let new_flag = extra.get("new_flag").and_then(Value::as_str).map(String::from);
    Some((FlagDeprecationKind::Alias, new_flag))
}

/// Deprecated actions older oracles list without `extra` (plain warn-only `DeprecatedAction`).
fn expected_deprecation_or_plain(action: &Value) -> Option<(FlagDeprecationKind, Option<String>)> {
    expected_deprecation(action).or_else(|| (action["action"] == "DeprecatedAction").then_some((FlagDeprecationKind::Noop, None)))
}

fn oracle_action_name(a: &Value) -> String {
    match a["action"].as_str().unwrap_or_default() {
        "_StoreAction" => "store".into(),
        "_StoreTrueAction" => "store_true".into(),
        "_StoreFalseAction" => "store_false".into(),
        "_StoreConstAction" => "store_const".into(),
        "_AppendAction" => "append".into(),
        "_CountAction" => "count".into(),
        "_HelpAction" => "help".into(),
        other => other.to_string(),
    }
}

pub fn compare_flags(oracle: &Oracle, flags: &[Flag]) -> FlagReport {
    let ours: BTreeSet<&str> = flags.iter().flat_map(|f| f.names.iter().map(String::as_str)).collect();
    let theirs: BTreeSet<String> = oracle.actions.iter().flat_map(|a| as_str_vec(&a["option_strings"])).collect();
    let mut report = FlagReport {
        version: oracle.version.clone(),
        extracted: flags.len(),
        options_recall: Score::default(),
        options_precision: Score::default(),
        dest: Score::default(),
        deprecation: Score::default(),
        choices: Score::default(),
        defaults: Score::default(),
        types: Score::default(),
    };
    for o in &theirs {
        report.options_recall.record(ours.contains(o.as_str()), false, format!("{o} missing"));
    }
    for o in &ours {
        report.options_precision.record(theirs.contains(*o), false, format!("{o} not in the real parser"));
    }
    let by_name: BTreeMap<&str, &Flag> = flags.iter().flat_map(|f| f.names.iter().map(move |n| (n.as_str(), f))).collect();
    for a in &oracle.actions {
        let names = as_str_vec(&a["option_strings"]);
        let Some(first) = names.first() else { continue };
        let Some(flag) = by_name.get(first.as_str()) else { continue };
        let label = first.clone();

        let dest = a["dest"].as_str().unwrap_or_default();
        report.dest.record(flag.dest == dest, false, format!("{label}: dest {} (real: {dest})", flag.dest));

        let expected = expected_deprecation_or_plain(a);
        let got = flag.deprecated.as_ref().map(|d| (d.kind, d.replacement.clone()));
        if expected.is_some() || got.is_some() {
            report.deprecation.record(expected == got, false, format!("{label}: {got:?} (real: {expected:?})"));
        }

        let oracle_choices = &a["choices"];
        if !a["choices_from_stub"].as_bool().unwrap_or(false) && (!oracle_choices.is_null() || flag.choices.is_some()) {
            let unordered = a["choices_unordered"].as_bool().unwrap_or(false);
            let want: Option<Vec<String>> = oracle_choices.as_array().map(|v| v.iter().map(choice_string).collect());
            match &flag.choices {
                Some(Known::Dynamic { dynamic }) => report.choices.record(false, true, format!("{label}: `{dynamic}` (real: {want:?})")),
                other => {
                    let got: Option<Vec<String>> = other.as_ref().and_then(|k| k.value()).map(|v| v.iter().map(choice_string).collect());
                    let ok = match (&got, &want) {
                        (Some(g), Some(w)) if unordered => g.iter().collect::<BTreeSet<_>>() == w.iter().collect::<BTreeSet<_>>(),
                        (g, w) => g == w,
                    };
                    report.choices.record(ok, false, format!("{label}: {got:?} (real: {want:?})"));
                }
            }
        }

        if !a["default_from_stub"].as_bool().unwrap_or(false) {
            let want = &a["default"];
            match &flag.default {
                Known::Dynamic { dynamic } => report.defaults.record(false, true, format!("{label}: `{dynamic}` (real: {want})")),
                Known::Value(v) => report.defaults.record(py_eq(v, want), false, format!("{label}: {v} (real: {want})")),
            }
        }

        let want_type = a["type"].as_str().map(String::from);
        report.types.record(
            flag.type_name == want_type && flag.action == oracle_action_name(a),
            false,
            format!("{label}: {} {:?} (real: {} {want_type:?})", flag.action, flag.type_name, oracle_action_name(a)),
        );
    }
    report
}

pub struct EnvReport {
    pub version: String,
    pub recall: Score,
    pub precision: Score,
    pub deprecation: Score,
}

impl fmt::Display for EnvReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "== sglang {} env", self.version)?;
        for (name, s) in
            [("env names recall", &self.recall), ("env names precision", &self.precision), ("env deprecations", &self.deprecation)]
        {
            writeln!(f, "  {name:<30} {s}")?;
            for m in s.wrong.iter().chain(&s.dynamic) {
                writeln!(f, "      miss: {m}")?;
            }
        }
        Ok(())
    }
}

/// What the oracle says an env deprecation is: (old name → accepted kinds, replacement, transform).
/// `None` for replacement/transform = not checked.
type EnvExpectation = (Vec<EnvDeprecationKind>, Option<Option<String>>, Option<Option<String>>);

pub fn expected_env_deprecations(oracle: &Oracle) -> BTreeMap<String, EnvExpectation> {
    use EnvDeprecationKind::*;
    let mut out = BTreeMap::new();
    let d = &oracle.env_deprecations;
    // From 0.5.19: the runtime `_DEPRECATED_ENVS` table.
    if let Some(table) = d["_DEPRECATED_ENVS"].as_object() {
        for (name, e) in table {
            let replacement = e["replacement"].as_str().map(String::from);
            let transform = e["transform"].as_str().map(String::from);
            let kinds = if replacement.is_some() { vec![Renamed] } else { vec![Removed, Notice] };
            out.insert(name.clone(), (kinds, Some(replacement), Some(transform)));
        }
    }
    // Earlier: the hard-coded calls in `environ.py`.
    for call in d["calls"].as_array().into_iter().flatten() {
        match call["func"].as_str() {
            Some("_print_deprecated_env") => {
                let old = call["old_name"].as_str().unwrap_or_default().to_string();
                let new = call["new_name"].as_str().map(String::from);
                let kinds = if new.is_some() { vec![Renamed] } else { vec![Removed, Notice] };
                out.insert(old, (kinds, Some(new), None));
            }
            Some(_) => {
                let name = call["env_name"].as_str().unwrap_or_default().to_string();
                out.insert(name, (vec![Removed, Notice], None, None));
            }
            None => {}
        }
    }
    for (_, table) in d["dicts"].as_object().into_iter().flatten() {
        for (old, new) in table.as_object().into_iter().flatten() {
            out.insert(old.clone(), (vec![Renamed], Some(new.as_str().map(String::from)), None));
        }
    }
    for (field, old) in d["aliases"].as_object().into_iter().flatten() {
        if let Some(old) = old.as_str() {
            out.insert(old.to_string(), (vec![Alias], Some(Some(field.clone())), None));
        }
    }
    out
}

pub fn compare_env(oracle: &Oracle, env: &[EnvVar]) -> EnvReport {
    let theirs: BTreeSet<&str> = oracle.env_vars.iter().filter_map(|e| e["name"].as_str()).collect();
    // Registry entries only: plain `os.environ` reads are not registry fields, and
    // neither is a deprecation record unless its kind is a registry field class
    // (`EnvBool`, ...): some registry fields are deprecated and still registered.
    // An alias (`EnvBoolWithAlias(deprecated_name=...)`) is a second name of a
    // field, which the oracle lists on the field, not as a field of its own.
    let ours: BTreeSet<&str> = env
        .iter()
        .filter(|e| e.kind != "read" && (e.deprecated.is_none() || e.kind.starts_with("Env")))
        .filter(|e| e.deprecated.as_ref().is_none_or(|d| d.kind != EnvDeprecationKind::Alias))
        .map(|e| e.name.as_str())
        .collect();
    let mut report =
        EnvReport { version: oracle.version.clone(), recall: Score::default(), precision: Score::default(), deprecation: Score::default() };
    for n in &theirs {
        report.recall.record(ours.contains(n), false, format!("{n} missing"));
    }
    for n in &ours {
        report.precision.record(theirs.contains(n), false, format!("{n} not in the registry"));
    }
    for (name, (kinds, replacement, transform)) in expected_env_deprecations(oracle) {
        let got = env.iter().filter(|e| e.name == name).find_map(|e| e.deprecated.as_ref());
        let ok = got.is_some_and(|d| {
            kinds.contains(&d.kind)
                && replacement.as_ref().is_none_or(|r| *r == d.replacement)
                && transform.as_ref().is_none_or(|t| *t == d.transform)
        });
        report.deprecation.record(
            ok,
            false,
            format!("{name}: {:?} (real: {kinds:?} {replacement:?} {transform:?})", got.map(|d| (d.kind, &d.replacement, &d.transform))),
        );
    }
    report
}

// ---- vLLM (`vllm-<V>.json`) ----
//
// - Option strings are those the parser accepts: `option_strings` and the
//   `hidden_option_strings` vLLM's `EnableDisableAction` keeps out of help.
//   The positional `model_tag` is not an option.
// - A deprecation is what the oracle action says: `deprecated=True`, else
//   what its real help text states (read by the crate's help rule, applied to
//   the oracle's help: the extraction must find the same help and deprecation).
// - Choices are scored over every option (an option without choices matches
//   when the extraction has none either) and over the options with choices.
// - Defaults the oracle can only show as an object's repr (`default_type`:
//   a config instance, an enum member) are counted apart: ours must be dynamic.

pub struct VllmReport {
    pub version: String,
    pub options_recall: Score,
    pub options_precision: Score,
    pub dest: Score,
    pub deprecation: Score,
    pub engine_parser: Score,
    pub choices_all: Score,
    pub choices_with: Score,
    pub defaults_literal: Score,
    pub defaults_object: Score,
}

impl VllmReport {
    /// Defaults over every option, object-valued ones included.
    pub fn defaults_all(&self) -> (usize, usize) {
        (self.defaults_literal.hit + self.defaults_object.hit, self.defaults_literal.total + self.defaults_object.total)
    }
}

impl fmt::Display for VllmReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "== vllm {}", self.version)?;
        let (hit, total) = self.defaults_all();
        let rows: [(&str, &Score); 9] = [
            ("option strings recall", &self.options_recall),
            ("option strings precision", &self.options_precision),
            ("dest", &self.dest),
            ("deprecation kind+replacement", &self.deprecation),
            ("engine-only parser marker", &self.engine_parser),
            ("choices (every option)", &self.choices_all),
            ("choices (options with choices)", &self.choices_with),
            ("defaults (literal in the oracle)", &self.defaults_literal),
            ("defaults (objects: repr only)", &self.defaults_object),
        ];
        for (name, s) in rows {
            writeln!(f, "  {name:<34} {s}")?;
            for m in s.wrong.iter().take(MAX_LISTED) {
                writeln!(f, "      wrong:   {m}")?;
            }
            for m in s.dynamic.iter().take(MAX_LISTED) {
                writeln!(f, "      dynamic: {m}")?;
            }
        }
        writeln!(f, "  {:<34} {hit}/{total} ({:.1}%)", "defaults (every option)", 100.0 * hit as f64 / total.max(1) as f64)
    }
}

fn accepted(a: &Value) -> Vec<String> {
    let mut names = as_str_vec(&a["option_strings"]);
    names.extend(as_str_vec(&a["hidden_option_strings"]));
    names
}

pub fn compare_vllm_flags(oracle: &Oracle, flags: &[Flag]) -> VllmReport {
    use engine_audit::extract::cli_flags::help_deprecation::from_help;
    let ours: BTreeSet<&str> = flags.iter().flat_map(|f| f.names.iter().map(String::as_str)).collect();
    let theirs: BTreeSet<String> = oracle.actions.iter().flat_map(accepted).collect();
    let mut r = VllmReport {
        version: oracle.version.clone(),
        options_recall: Score::default(),
        options_precision: Score::default(),
        dest: Score::default(),
        deprecation: Score::default(),
        engine_parser: Score::default(),
        choices_all: Score::default(),
        choices_with: Score::default(),
        defaults_literal: Score::default(),
        defaults_object: Score::default(),
    };
    for o in &theirs {
        r.options_recall.record(ours.contains(o.as_str()), false, format!("{o} missing"));
    }
    for o in &ours {
        r.options_precision.record(theirs.contains(*o), false, format!("{o} not in the real parser"));
    }
    let by_name: BTreeMap<&str, &Flag> = flags.iter().flat_map(|f| f.names.iter().map(move |n| (n.as_str(), f))).collect();
    for a in &oracle.actions {
        let names = as_str_vec(&a["option_strings"]);
        let Some(flag) = names.first().and_then(|n| by_name.get(n.as_str())) else { continue };
        let label = names[0].clone();
        let dest = a["dest"].as_str().unwrap_or_default();
        r.dest.record(flag.dest == dest, false, format!("{label}: dest {} (real: {dest})", flag.dest));

        let help = a["help"].as_str().unwrap_or_default();
        let expected = if a["deprecated"].as_bool().unwrap_or(false) {
            Some((FlagDeprecationKind::Announced, from_help(help, &names, dest).and_then(|d| d.replacement)))
        } else {
            from_help(help, &names, dest).map(|d| (d.kind, d.replacement))
        };
        let got = flag.deprecated.as_ref().map(|d| (d.kind, d.replacement.clone()));
        if expected.is_some() || got.is_some() {
            r.deprecation.record(expected == got, false, format!("{label}: {got:?} (real: {expected:?})"));
        }
        if let Some(want) = a["in_engine_args_parser"].as_bool() {
            r.engine_parser.record(flag.engine_parser == Some(want), false, format!("{label}: {:?} (real: {want})", flag.engine_parser));
        }

        let oracle_choices = &a["choices"];
        let want: Option<Vec<String>> = oracle_choices.as_array().map(|v| v.iter().map(choice_string).collect());
        let unordered = a["choices_unordered"].as_bool().unwrap_or(false);
        let (ok, dynamic, what) = match &flag.choices {
            Some(Known::Dynamic { dynamic }) => (false, true, format!("{label}: `{dynamic}` (real: {want:?})")),
            other => {
                let got: Option<Vec<String>> = other.as_ref().and_then(|k| k.value()).map(|v| v.iter().map(choice_string).collect());
                let ok = match (&got, &want) {
                    (Some(g), Some(w)) if unordered => g.iter().collect::<BTreeSet<_>>() == w.iter().collect::<BTreeSet<_>>(),
                    (g, w) => g == w,
                };
                (ok, false, format!("{label}: {got:?} (real: {want:?})"))
            }
        };
        r.choices_all.record(ok, dynamic, what.clone());
        if !oracle_choices.is_null() || flag.choices.is_some() {
            r.choices_with.record(ok, dynamic, what);
        }

        // An enum member's repr (`<MambaBackendEnum.TRITON: 'triton'>`) is its
        // value on the command line: compared as that value, among the literals.
        let enum_value = a["default"].as_str().and_then(enum_member_value);
        let want = enum_value.as_ref().unwrap_or(&a["default"]);
        let score = if a["default_type"].is_string() && enum_value.is_none() { &mut r.defaults_object } else { &mut r.defaults_literal };
        match &flag.default {
            Known::Dynamic { dynamic } => score.record(false, true, format!("{label}: `{dynamic}` (real: {want})")),
            // An object default (a config instance) against its repr, parsed:
            // every field the repr shows has our value.
            Known::Value(Value::Object(ours)) if a["default_type"].is_string() => {
                let same = match want.as_str().and_then(parse_py_repr) {
                    Some(Value::Object(theirs)) => theirs.iter().all(|(k, w)| ours.get(k).is_some_and(|o| py_eq(o, w))),
                    _ => false,
                };
                score.record(same, false, format!("{label}: {} (real: {want})", Value::Object(ours.clone())))
            }
            Known::Value(v) => score.record(py_eq(v, want), false, format!("{label}: {v} (real: {want})")),
        }
    }
    r
}

pub struct VllmEnvReport {
    pub recall: Score,
    pub precision: Score,
    /// Informative: defaults of the getters (dynamic where the getter is not a plain lambda).
    pub defaults: Score,
}

impl fmt::Display for VllmEnvReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (name, s) in
            [("env names recall", &self.recall), ("env names precision", &self.precision), ("env defaults (informative)", &self.defaults)]
        {
            writeln!(f, "  {name:<34} {s}")?;
            for m in s.wrong.iter().take(MAX_LISTED) {
                writeln!(f, "      wrong:   {m}")?;
            }
        }
        Ok(())
    }
}

pub fn compare_vllm_env(oracle: &Oracle, env: &[EnvVar]) -> VllmEnvReport {
    let registry: BTreeMap<&str, &EnvVar> = env.iter().filter(|e| e.kind != "read").map(|e| (e.name.as_str(), e)).collect();
    let theirs: BTreeMap<&str, &Value> = oracle.env_vars.iter().filter_map(|e| Some((e["name"].as_str()?, e))).collect();
    let mut r = VllmEnvReport { recall: Score::default(), precision: Score::default(), defaults: Score::default() };
    for n in theirs.keys() {
        r.recall.record(registry.contains_key(n), false, format!("{n} missing"));
    }
    for n in registry.keys() {
        r.precision.record(theirs.contains_key(n), false, format!("{n} not in envs.py"));
    }
    for (n, e) in &theirs {
        let Some(ours) = registry.get(n) else { continue };
        if e["default_from_stub"].as_bool().unwrap_or(false) || e["default_depends_on_stub"].as_bool().unwrap_or(false) {
            continue;
        }
        match &ours.default {
            Known::Dynamic { .. } => r.defaults.record(false, true, n.to_string()),
            Known::Value(v) => r.defaults.record(py_eq(v, &e["default"]), false, format!("{n}: {v} (real: {})", e["default"])),
        }
    }
    r
}
