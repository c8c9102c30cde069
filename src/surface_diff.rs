//! What changed between two releases of one engine: the changelog a bump reviewer
//! reads (`engine-audit diff`), and the same facts the checks read: changed
//! defaults (EA007), changed flag semantics (EA008), changed env defaults
//! (EA105), relocations (EA201). Each comparison is decided here once, so the
//! changelog and the findings cannot disagree.

use crate::surface::{EngineSurface, EnvDeprecation, EnvVar, Evidence, Flag, FlagDeprecation, Known, PyValue};
use serde::Serialize;

#[derive(Debug, Clone, Serialize, Default)]
pub struct SurfaceDiff {
    pub engine: String,
    pub from: String,
    pub to: String,
    pub flags_added: Vec<FlagChange>,
    pub flags_removed: Vec<FlagChange>,
    pub flags_deprecated: Vec<FlagDeprecated>,
    pub choices_changed: Vec<ChoicesChanged>,
    pub defaults_changed: Vec<ValueChanged>,
    pub semantics_changed: Vec<ValueChanged>,
    pub env_added: Vec<EnvChange>,
    pub env_removed: Vec<EnvChange>,
    pub env_deprecated: Vec<EnvDeprecated>,
    pub env_defaults_changed: Vec<ValueChanged>,
    pub modules_added: Vec<String>,
    pub modules_removed: Vec<ModuleRemoved>,
    pub class_members_removed: Vec<MemberRemoved>,
    /// Keys of the server's YAML configuration file (TRT-LLM's LlmArgs), by
    /// dotted path: only for an engine that has one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_keys_removed: Vec<FlagChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_keys_added: Vec<FlagChange>,
    /// A key's closed set (`Literal[...]`, enum) that changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_choices_changed: Vec<ChoicesChanged>,
    /// A key's known default, or its status (`prototype` → `beta`, → `deprecated`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_values_changed: Vec<ValueChanged>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlagChange {
    pub flag: String,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlagDeprecated {
    pub flag: String,
    #[serde(flatten)]
    pub deprecation: FlagDeprecation,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChoicesChanged {
    pub flag: String,
    pub added: Vec<PyValue>,
    pub removed: Vec<PyValue>,
    pub evidence: Evidence,
}

/// A value that differs: a default, or a flag's type / nargs / action.
#[derive(Debug, Clone, Serialize)]
pub struct ValueChanged {
    /// Flag (`--x`) or env var name.
    pub subject: String,
    /// `default`, `type`, `nargs` or `action`.
    pub what: String,
    pub from: serde_json::Value,
    pub to: serde_json::Value,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvChange {
    pub name: String,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvDeprecated {
    pub name: String,
    #[serde(flatten)]
    pub deprecation: EnvDeprecation,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleRemoved {
    pub module: String,
    /// Where it went, found by the same leaf name or the same symbols.
    pub moved_to: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemberRemoved {
    pub class: String,
    pub member: String,
    pub evidence: Evidence,
}

fn to_json<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// The flag at `to` that takes over an option string of `from`.
fn counterpart<'a>(to: &'a EngineSurface, flag: &Flag) -> Option<&'a Flag> {
    to.flag(flag.canonical()).or_else(|| flag.names.iter().find_map(|n| to.flag(n)))
}

/// A default that changed between two releases: both known, and different.
/// Defaults are effective ones ([`Flag::effective_default`]): what the field
/// resolves to when the flag is not passed, not argparse's `None`.
#[derive(Debug, Clone)]
pub(crate) struct DefaultChange<'a> {
    /// The flag at the target.
    pub flag: &'a Flag,
    /// The values, or for a config instance the fields that changed.
    pub from: Known<serde_json::Value>,
    pub to: Known<serde_json::Value>,
    /// The line that decides the target's value (the field, its fallback or the hook).
    pub evidence: &'a crate::surface::Evidence,
}

/// Every flag of `to` whose known effective default differs from its known
/// effective default at `from`, neither side deprecated (a deprecated flag's
/// default is not what runs), and not argparse's `--help`.
pub(crate) fn default_changes<'a>(from: &'a EngineSurface, to: &'a EngineSurface) -> Vec<DefaultChange<'a>> {
    let mut out = Vec::new();
    for new in &to.flags {
        if new.deprecated.is_some() || new.action == "help" || new.dest == "help" {
            continue;
        }
        let Some(old) = from.flag(new.canonical()).filter(|o| o.deprecated.is_none()) else { continue };
        let ((was, _), (is, evidence)) = (old.effective_default(), new.effective_default());
        if let (Known::Value(a), Known::Value(b)) = (was, is) {
            if let Some((a, b)) = changed(a, b) {
                out.push(DefaultChange { flag: new, from: Known::Value(a), to: Known::Value(b), evidence });
            }
        }
    }
    out
}

/// What changed between two defaults: both values; for two config instances
/// (objects), only the fields both have whose values differ. A field a release
/// adds or drops is a change of the class, not of a default.
fn changed(a: &serde_json::Value, b: &serde_json::Value) -> Option<(serde_json::Value, serde_json::Value)> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let fields: Vec<(String, (Value, Value))> = x.iter().filter_map(|(k, v)| Some((k.clone(), changed(v, y.get(k)?)?))).collect();
            let side =
                |pick: fn(&(Value, Value)) -> &Value| Value::Object(fields.iter().map(|(k, d)| (k.clone(), pick(d).clone())).collect());
            (!fields.is_empty()).then(|| (side(|d| &d.0), side(|d| &d.1)))
        }
        _ => (a != b).then(|| (a.clone(), b.clone())),
    }
}

/// One argparse field of a flag that changed: `type`, `nargs` or `action`,
/// with both values as a reader writes them (`str` for no type, `one` for no nargs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FieldChange {
    pub field: &'static str,
    pub old: String,
    pub new: String,
}

/// How a flag's meaning changed between two releases (empty when it did not,
/// or when either side is deprecated: a deprecation is its own change).
pub(crate) fn semantic_changes(old: &Flag, new: &Flag) -> Vec<FieldChange> {
    if old.deprecated.is_some() || new.deprecated.is_some() {
        return Vec::new();
    }
    let mut changes = Vec::new();
    if old.type_name != new.type_name && !only_none_added(&old.type_name, &new.type_name) {
        let show = |t: &Option<String>| t.clone().unwrap_or_else(|| "str".into());
        changes.push(FieldChange { field: "type", old: show(&old.type_name), new: show(&new.type_name) });
    }
    if old.nargs != new.nargs {
        let show = |n: &Option<serde_json::Value>| n.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "one".into());
        changes.push(FieldChange { field: "nargs", old: show(&old.nargs), new: show(&new.nargs) });
    }
    if old.action != new.action && !(paired_boolean(old) && paired_boolean(new)) {
        changes.push(FieldChange { field: "action", old: old.action.clone(), new: new.action.clone() });
    }
    changes
}

/// A switch registered with its `--no-` form (argparse's `BooleanOptionalAction`,
/// or the class a parser registers in its place, vLLM's `EnableDisableAction`):
/// `--x` sets true, `--no-x` false, whatever the class is called.
fn paired_boolean(flag: &Flag) -> bool {
    flag.nargs == Some(serde_json::json!(0))
        && flag.names.iter().any(|n| n.strip_prefix("--").is_some_and(|rest| flag.names.iter().any(|m| *m == format!("--no-{rest}"))))
}

/// `T` → `optional_type(T)` (vLLM's wrapper that also takes `None`): every value
/// the old type took, the new one takes the same way.
fn only_none_added(old: &Option<String>, new: &Option<String>) -> bool {
    let (Some(old), Some(new)) = (old, new) else { return false };
    new.strip_prefix("optional_type(").and_then(|t| t.strip_suffix(')')) == Some(old.as_str())
}

/// An env var's default that changed: both known and different, the var not
/// deprecated at the target.
pub(crate) fn env_default_change<'a>(old: &'a EnvVar, new: &'a EnvVar) -> Option<(&'a serde_json::Value, &'a serde_json::Value)> {
    match (&old.default, &new.default) {
        (Known::Value(a), Known::Value(b)) if a != b && new.deprecated.is_none() => Some((a, b)),
        _ => None,
    }
}

pub fn diff(from: &EngineSurface, to: &EngineSurface) -> SurfaceDiff {
    let mut d = SurfaceDiff { engine: to.engine.clone(), from: from.ref_name.clone(), to: to.ref_name.clone(), ..Default::default() };
    diff_flags(from, to, &mut d);
    diff_env(from, to, &mut d);
    diff_modules(from, to, &mut d);
    diff_classes(from, to, &mut d);
    diff_config_keys(from, to, &mut d);
    d
}

/// The configuration file's keys, matched by path.
fn diff_config_keys(from: &EngineSurface, to: &EngineSurface, d: &mut SurfaceDiff) {
    use std::collections::BTreeMap;
    let old: BTreeMap<&str, &crate::surface::ConfigKey> = from.config_keys.iter().map(|k| (k.path.as_str(), k)).collect();
    let new: BTreeMap<&str, &crate::surface::ConfigKey> = to.config_keys.iter().map(|k| (k.path.as_str(), k)).collect();
    for (path, key) in &old {
        let Some(now) = new.get(path) else {
            d.config_keys_removed.push(FlagChange { flag: path.to_string(), evidence: key.evidence.clone() });
            continue;
        };
        if let (Some(Known::Value(a)), Some(Known::Value(b))) = (&key.default, &now.default) {
            if a != b {
                d.config_values_changed.push(value_changed(path, "default", a.clone(), b.clone(), &now.evidence));
            }
        }
        if key.status != now.status {
            let status = |s: &Option<String>| s.clone().map_or(serde_json::Value::Null, serde_json::Value::String);
            d.config_values_changed.push(value_changed(path, "status", status(&key.status), status(&now.status), &now.evidence));
        }
        if let (Some(Known::Value(a)), Some(Known::Value(b))) = (&key.choices, &now.choices) {
            let added: Vec<PyValue> = b.iter().filter(|v| !a.contains(v)).cloned().collect();
            let removed: Vec<PyValue> = a.iter().filter(|v| !b.contains(v)).cloned().collect();
            if !added.is_empty() || !removed.is_empty() {
                d.config_choices_changed.push(ChoicesChanged { flag: path.to_string(), added, removed, evidence: now.evidence.clone() });
            }
        }
    }
    for (path, key) in &new {
        if !old.contains_key(path) {
            d.config_keys_added.push(FlagChange { flag: path.to_string(), evidence: key.evidence.clone() });
        }
    }
}

fn value_changed(subject: &str, what: &str, from: serde_json::Value, to: serde_json::Value, evidence: &Evidence) -> ValueChanged {
    ValueChanged { subject: subject.to_string(), what: what.to_string(), from, to, evidence: evidence.clone() }
}

fn diff_flags(from: &EngineSurface, to: &EngineSurface, d: &mut SurfaceDiff) {
    for old in &from.flags {
        let Some(new) = counterpart(to, old) else {
            d.flags_removed.push(FlagChange { flag: old.canonical().to_string(), evidence: old.evidence.clone() });
            continue;
        };
        // The old canonical name may now be a deprecated alias registered on its own.
        let name = old.canonical();
        let as_registered = to.flag(name).unwrap_or(new);
        if old.deprecated.is_none() {
            if let Some(dep) = &as_registered.deprecated {
                d.flags_deprecated.push(FlagDeprecated {
                    flag: name.to_string(),
                    deprecation: dep.clone(),
                    evidence: as_registered.evidence.clone(),
                });
                continue;
            }
        }
        if as_registered.deprecated.is_some() {
            continue;
        }
        if let (Some(Known::Value(a)), Some(Known::Value(b))) = (&old.choices, &new.choices) {
            let added: Vec<PyValue> = b.iter().filter(|v| !a.contains(v)).cloned().collect();
            let removed: Vec<PyValue> = a.iter().filter(|v| !b.contains(v)).cloned().collect();
            if !added.is_empty() || !removed.is_empty() {
                d.choices_changed.push(ChoicesChanged { flag: name.to_string(), added, removed, evidence: new.evidence.clone() });
            }
        }
        for c in semantic_changes(old, new) {
            d.semantics_changed.push(ValueChanged {
                subject: name.to_string(),
                what: c.field.into(),
                from: serde_json::Value::String(c.old),
                to: serde_json::Value::String(c.new),
                evidence: new.evidence.clone(),
            });
        }
    }
    for c in default_changes(from, to) {
        d.defaults_changed.push(ValueChanged {
            subject: c.flag.canonical().to_string(),
            what: "default".into(),
            from: to_json(&c.from),
            to: to_json(&c.to),
            evidence: c.evidence.clone(),
        });
    }
    for new in &to.flags {
        if new.deprecated.is_none() && !new.names.iter().any(|n| from.flag(n).is_some()) {
            d.flags_added.push(FlagChange { flag: new.canonical().to_string(), evidence: new.evidence.clone() });
        }
    }
}

fn diff_env(from: &EngineSurface, to: &EngineSurface, d: &mut SurfaceDiff) {
    for old in &from.env {
        match to.env_var(&old.name) {
            None => d.env_removed.push(EnvChange { name: old.name.clone(), evidence: old.evidence.clone() }),
            Some(new) => {
                if old.deprecated.is_none() {
                    if let Some(dep) = &new.deprecated {
                        d.env_deprecated.push(EnvDeprecated {
                            name: old.name.clone(),
                            deprecation: dep.clone(),
                            evidence: new.evidence.clone(),
                        });
                        continue;
                    }
                }
                if let Some((a, b)) = env_default_change(old, new) {
                    d.env_defaults_changed.push(ValueChanged {
                        subject: old.name.clone(),
                        what: "default".into(),
                        from: a.clone(),
                        to: b.clone(),
                        evidence: new.evidence.clone(),
                    });
                }
            }
        }
    }
    for new in &to.env {
        if from.env_var(&new.name).is_none() && new.deprecated.is_none() {
            d.env_added.push(EnvChange { name: new.name.clone(), evidence: new.evidence.clone() });
        }
    }
}

fn diff_modules(from: &EngineSurface, to: &EngineSurface, d: &mut SurfaceDiff) {
    let added = added_modules(from, to);
    d.modules_added = added.iter().map(|m| m.name.clone()).collect();
    for old in &from.modules {
        if to.module(&old.name).is_some() {
            continue;
        }
        d.modules_removed.push(ModuleRemoved { module: old.name.clone(), moved_to: relocation(old, &added, None) });
    }
}

/// The modules of `to` that `from` does not have: one merge of the two module
/// lists (both sorted by name).
pub(crate) fn added_modules<'a>(from: &EngineSurface, to: &'a EngineSurface) -> Vec<&'a crate::surface::Module> {
    let mut old = from.modules.iter().map(|m| m.name.as_str()).peekable();
    to.modules
        .iter()
        .filter(|m| {
            while old.next_if(|o| *o < m.name.as_str()).is_some() {}
            old.peek() != Some(&m.name.as_str())
        })
        .collect()
}

/// Where a removed module went: a new module with most of its names and the
/// same leaf name; or, split up within its package (`disaggregation.encode_server`
/// → `disaggregation.encoder.server`, `.runtime`, ...), the new module there that
/// has the name a consumer imports from it and most of the old names; or nearly
/// all of them under another name (a move, not a coincidence of file names: `replay/__main__.py` and
/// `triton/__main__.py` share a leaf and little else). Among those, the most
/// names shared, then the same leaf name, then the closest dotted path. When a
/// consumer imports `name` from it, only modules that have `name` qualify.
/// `None` when the symbols of either side are unknown: no successor is claimed
/// without evidence.
pub(crate) fn relocation(old: &crate::surface::Module, added: &[&crate::surface::Module], name: Option<&str>) -> Option<String> {
    fn leaf(name: &str) -> &str {
        name.rsplit('.').next().unwrap_or(name)
    }
    fn parent(name: &str) -> &str {
        name.rsplit_once('.').map_or("", |(p, _)| p)
    }
    let shared_prefix = |a: &str, b: &str| a.split('.').zip(b.split('.')).take_while(|(x, y)| x == y).count();
    let old_symbols: Vec<&String> = old.symbols.as_ref()?.iter().filter(|s| is_telling(s)).collect();
    if old_symbols.is_empty() {
        return None;
    }
    let in_package = |m: &str| !parent(&old.name).is_empty() && m.starts_with(&format!("{}.", parent(&old.name)));
    added
        .iter()
        .filter_map(|m| {
            let symbols = m.symbols.as_ref()?;
            if name.is_some_and(|n| !symbols.iter().any(|s| s == n)) {
                return None;
            }
            let shared = old_symbols.iter().filter(|s| symbols.contains(s)).count();
            // Symbols include what a module imports, which files of one kind
            // (tests, entry points) share: under another name elsewhere,
            // nearly all of the old module's names must be there.
            // A split within the package is claimed only for the module that
            // has the name a consumer imports: test files of one package share
            // most of their imports, and so half of their names.
            let split = name.is_some() && in_package(&m.name);
            let enough = if leaf(&m.name) == leaf(&old.name) || split {
                shared * 2 > old_symbols.len()
            } else {
                shared >= 2 && shared * 10 >= old_symbols.len() * 9
            };
            enough.then_some((shared, m))
        })
        .max_by_key(|(shared, m)| {
            (*shared, leaf(&m.name) == leaf(&old.name), shared_prefix(&m.name, &old.name), std::cmp::Reverse(m.name.len()))
        })
        .map(|(_, m)| m.name.clone())
}

/// A name that says what a module is: not private, not a dunder, not one
/// every entry point or test file defines (`main`, `logger`, `test_*`).
fn is_telling(name: &str) -> bool {
    const GENERIC: &[&str] = &["main", "logger", "log", "app", "cli", "run", "parser", "parse_args", "setup", "TYPE_CHECKING"];
    !name.starts_with('_') && !name.starts_with("test_") && !GENERIC.contains(&name)
}

fn diff_classes(from: &EngineSurface, to: &EngineSurface, d: &mut SurfaceDiff) {
    for (name, old) in &from.classes {
        let Some(new) = to.classes.get(name) else { continue };
        for member in &old.members {
            if !new.members.iter().any(|m| m.name == member.name) {
                d.class_members_removed.push(MemberRemoved {
                    class: name.clone(),
                    member: member.name.clone(),
                    evidence: member.evidence.clone(),
                });
            }
        }
    }
}

#[cfg(test)]
mod relocation_tests {
    use super::relocation;
    use crate::surface::Module;

    fn module(name: &str, symbols: Option<&[&str]>) -> Module {
        Module { name: name.into(), path: String::new(), symbols: symbols.map(|s| s.iter().map(|x| x.to_string()).collect()) }
    }

    #[test]
    fn a_move_is_claimed_only_from_shared_names() {
        let old = module("dynamo.replay.__main__", Some(&["main", "_run", "ReplayConfig", "sys"]));
        let unrelated = module("dynamo.triton.__main__", Some(&["main", "sys", "TritonServer"]));
        assert_eq!(relocation(&old, &[&unrelated], None), None, "a leaf, `main` and one import are no evidence");
        let old = module("e.config_parser", Some(&["ConfigMerger", "load"]));
        let moved = module("e.utils.config_parser", Some(&["ConfigMerger", "load", "extra"]));
        let same_leaf_other = module("e.other.config_parser", Some(&["Parser"]));
        assert_eq!(relocation(&old, &[&same_leaf_other, &moved], None).as_deref(), Some("e.utils.config_parser"));
        assert_eq!(relocation(&old, &[&same_leaf_other], None), None, "same leaf, nothing shared");
        let unknown = module("e.utils.config_parser", None);
        assert_eq!(relocation(&old, &[&unknown], None), None, "symbols not read: no claim");
        let renamed = module("e.settings_loader", Some(&["ConfigMerger", "load"]));
        assert_eq!(relocation(&old, &[&renamed], None).as_deref(), Some("e.settings_loader"), "all names under another name");
        let partly = module("e.tests.test_b", Some(&["ConfigMerger"]));
        assert_eq!(relocation(&old, &[&partly], None), None, "another name needs nearly all names");
    }

    #[test]
    fn a_module_split_within_its_package_goes_where_most_of_it_went() {
        // SGLang v0.5.16 → v0.5.19: `disaggregation/encode_server.py` became
        // `disaggregation/encoder/{server,runtime,http_server}.py`.
        let old = module("s.dis.encode_server", Some(&["MMEncoder", "MMError", "launch_encoder", "ReqState", "torch", "zmq"]));
        let server = module("s.dis.encoder.server", Some(&["MMEncoder", "MMError", "ReqState", "launch_encoder", "msgspec"]));
        let runtime = module("s.dis.encoder.runtime", Some(&["MMError", "ReqState", "torch", "zmq", "run"]));
        let elsewhere = module("s.other.server", Some(&["MMEncoder", "MMError", "ReqState", "launch_encoder"]));
        assert_eq!(relocation(&old, &[&runtime, &server], Some("MMEncoder")).as_deref(), Some("s.dis.encoder.server"));
        assert_eq!(
            relocation(&old, &[&runtime, &server], Some("torch")).as_deref(),
            Some("s.dis.encoder.runtime"),
            "the module with the imported name"
        );
        assert_eq!(relocation(&old, &[&runtime, &server], Some("Gone")), None, "no module has the name");
        assert_eq!(relocation(&old, &[&runtime, &server], None), None, "no name to anchor a split: half the names is no move");
        assert_eq!(relocation(&old, &[&elsewhere], Some("MMEncoder")), None, "outside the package, half is not a move");
    }
}

#[cfg(test)]
mod default_change_tests {
    use super::changed;
    use serde_json::json;

    #[test]
    fn config_instances_change_only_in_fields_both_releases_have() {
        // v0.31.0 → v0.34.0's `EPLBConfig`: one default changed, one field added.
        let old = json!({"window_size": 1000, "num_redundant_experts": 0, "nested": {"a": 1}});
        let new = json!({"window_size": 1000, "num_redundant_experts": null, "policy": "default", "nested": {"a": 1, "b": 2}});
        assert_eq!(changed(&old, &new), Some((json!({"num_redundant_experts": 0}), json!({"num_redundant_experts": null}))));
        // Only added fields (here and nested): no change of a default.
        let grown = json!({"window_size": 1000, "num_redundant_experts": 0, "extra": true, "nested": {"a": 1, "b": 2}});
        assert_eq!(changed(&old, &grown), None);
        // A nested field that changed is named inside its parent.
        let nested = json!({"window_size": 1000, "num_redundant_experts": 0, "nested": {"a": 3}});
        assert_eq!(changed(&old, &nested), Some((json!({"nested": {"a": 1}}), json!({"nested": {"a": 3}}))));
        // Plain values, and a value that became an object, are compared whole.
        assert_eq!(changed(&json!(32), &json!(11)), Some((json!(32), json!(11))));
        assert_eq!(changed(&json!(null), &json!({"a": 1})), Some((json!(null), json!({"a": 1}))));
        assert_eq!(changed(&json!("x"), &json!("x")), None);
    }
}
