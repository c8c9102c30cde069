//! What changed between two releases of one engine: the changelog a bump reviewer
//! reads, and the facts `check` uses for relocation hints and changed defaults.

use crate::surface::{EngineSurface, EnvDeprecation, Evidence, Flag, FlagDeprecation, Known, PyValue};
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

pub fn diff(from: &EngineSurface, to: &EngineSurface) -> SurfaceDiff {
    let mut d = SurfaceDiff { engine: to.engine.clone(), from: from.ref_name.clone(), to: to.ref_name.clone(), ..Default::default() };
    diff_flags(from, to, &mut d);
    diff_env(from, to, &mut d);
    diff_modules(from, to, &mut d);
    diff_classes(from, to, &mut d);
    d
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
        if old.default != new.default {
            d.defaults_changed.push(ValueChanged {
                subject: name.to_string(),
                what: "default".into(),
                from: to_json(&old.default),
                to: to_json(&new.default),
                evidence: new.evidence.clone(),
            });
        }
        for (what, a, b) in [
            ("type", to_json(&old.type_name), to_json(&new.type_name)),
            ("nargs", to_json(&old.nargs), to_json(&new.nargs)),
            ("action", to_json(&old.action), to_json(&new.action)),
        ] {
            if a != b {
                d.semantics_changed.push(ValueChanged {
                    subject: name.to_string(),
                    what: what.into(),
                    from: a,
                    to: b,
                    evidence: new.evidence.clone(),
                });
            }
        }
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
                if old.default != new.default && new.deprecated.is_none() {
                    d.env_defaults_changed.push(ValueChanged {
                        subject: old.name.clone(),
                        what: "default".into(),
                        from: to_json(&old.default),
                        to: to_json(&new.default),
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
        d.modules_removed.push(ModuleRemoved { module: old.name.clone(), moved_to: relocation(old, &added) });
    }
}

/// The modules of `to` that `from` does not have: one merge of the two module
/// lists (both sorted by name).
pub fn added_modules<'a>(from: &EngineSurface, to: &'a EngineSurface) -> Vec<&'a crate::surface::Module> {
    let mut old = from.modules.iter().map(|m| m.name.as_str()).peekable();
    to.modules
        .iter()
        .filter(|m| {
            while old.next_if(|o| *o < m.name.as_str()).is_some() {}
            old.peek() != Some(&m.name.as_str())
        })
        .collect()
}

/// Where a removed module went: a new module with the same leaf name (the closest
/// in dotted path when several), else one defining the same symbols.
pub fn relocation(old: &crate::surface::Module, added: &[&crate::surface::Module]) -> Option<String> {
    fn leaf(name: &str) -> &str {
        name.rsplit('.').next().unwrap_or(name)
    }
    let old_leaf = leaf(&old.name);
    let shared_prefix = |a: &str, b: &str| a.split('.').zip(b.split('.')).take_while(|(x, y)| x == y).count();
    let same_leaf: Vec<&&crate::surface::Module> = added.iter().filter(|m| leaf(&m.name) == old_leaf && old_leaf != "__init__").collect();
    if let Some(best) = same_leaf.iter().max_by_key(|m| (shared_prefix(&m.name, &old.name), std::cmp::Reverse(m.name.len()))) {
        return Some(best.name.clone());
    }
    let old_symbols = old.symbols.as_ref().filter(|s| !s.is_empty())?;
    added
        .iter()
        .filter_map(|m| {
            let symbols = m.symbols.as_ref()?;
            let shared = old_symbols.iter().filter(|s| symbols.contains(s)).count();
            // Most of the old module's names must be there: a rename, not a coincidence.
            (shared * 2 > old_symbols.len()).then_some((shared, m))
        })
        .max_by_key(|(shared, _)| *shared)
        .map(|(_, m)| m.name.clone())
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
