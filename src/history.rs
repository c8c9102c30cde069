//! What the releases before a target say of a flag or env var the target does
//! not know: the last release that had it, in what state (an option, a
//! deprecated alias of another, a no-op, renamed with a value transform, ...),
//! since which release it was in that state, and the first release without it.
//!
//! Only the releases the repository holds are known: "gone by v0.5.23" means
//! the first release here without it, not necessarily the one that removed it.

use crate::surface::{ConfigKey, EngineSurface, EnvDeprecationKind, EnvVar, Flag, FlagDeprecationKind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The releases before one target, oldest first, by version: for flags, from
/// the current release on when it is known; for env vars, every release the
/// repository holds (a var the current release no longer reads was read by an
/// earlier one: that is a removal, not a typo).
#[derive(Debug, Default)]
pub(crate) struct ReleaseHistory {
    pub releases: Vec<Arc<EngineSurface>>,
    pub env_releases: Vec<Arc<EngineSurface>>,
}

/// Where a name was last seen, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Past<S> {
    /// Its state at the last release that had it.
    pub was: S,
    /// The first release of the run of releases it was in that state.
    pub since: String,
    /// The last release that had it.
    pub last_seen: String,
    /// The first release after that (the target, or one before it) without it.
    pub gone_by: String,
}

/// A flag, as a release had it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PastFlag {
    Option,
    /// Still in effect, announced as deprecated with no successor named (vLLM's
    /// "Deprecated: ... will be removed" help texts).
    Announced,
    Alias {
        replacement: Option<String>,
    },
    Noop,
    /// Registered with an action that makes the server refuse to start.
    Erroring,
}

/// An env var, as a release had it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PastEnv {
    /// A registry field, or a variable the engine reads.
    Read,
    /// Forwarded to `replacement` through `transform`.
    Renamed { replacement: String, transform: Option<String> },
    /// In the deprecation table with no replacement, or only read to log that
    /// it was removed (`hint`: upstream's words).
    Retired { hint: Option<String> },
}

impl ReleaseHistory {
    /// `option` (exactly registered) in the releases before `target`.
    pub(crate) fn flag(&self, option: &str, target: &str) -> Option<Past<PastFlag>> {
        last_state(&self.releases, target, |s| s.flag(option).map(flag_state))
    }

    /// `name` in the releases' env registries and reads.
    pub(crate) fn env(&self, name: &str, target: &str) -> Option<Past<PastEnv>> {
        last_state(&self.env_releases, target, |s| s.env_var(name).map(env_state))
    }

    /// The oldest release whose env vars were searched (what "not read by any
    /// release from X on" says), if any was.
    pub(crate) fn env_searched_from(&self) -> Option<&str> {
        self.env_releases.first().map(|s| s.ref_name.as_str())
    }

    /// The flag itself at the last release that had it (its evidence).
    pub(crate) fn last_flag(&self, option: &str) -> Option<(&Flag, &str)> {
        self.releases.iter().rev().find_map(|s| s.flag(option).map(|f| (f, s.ref_name.as_str())))
    }

    /// The configuration-file key at `path` at the last release that had it.
    pub(crate) fn last_config_key(&self, path: &str) -> Option<(&ConfigKey, &str)> {
        self.releases.iter().rev().find_map(|s| s.config_keys.iter().find(|k| k.path == path).map(|k| (k, s.ref_name.as_str())))
    }

    /// The env var itself at the last release that had it.
    pub(crate) fn last_env(&self, name: &str) -> Option<(&EnvVar, &str)> {
        self.env_releases.iter().rev().find_map(|s| s.env_var(name).map(|v| (v, s.ref_name.as_str())))
    }
}

fn last_state<S: PartialEq>(
    releases: &[Arc<EngineSurface>],
    target: &str,
    state_at: impl Fn(&EngineSurface) -> Option<S>,
) -> Option<Past<S>> {
    let states: Vec<Option<S>> = releases.iter().map(|s| state_at(s)).collect();
    let last = states.iter().rposition(Option::is_some)?;
    let was = states[last].as_ref()?;
    let first = (0..=last).rev().take_while(|&i| states[i].as_ref() == Some(was)).last().unwrap_or(last);
    let gone_by = releases.get(last + 1).map_or(target, |s| s.ref_name.as_str());
    let was = states.into_iter().nth(last).flatten()?;
    Some(Past { was, since: releases[first].ref_name.clone(), last_seen: releases[last].ref_name.clone(), gone_by: gone_by.to_string() })
}

fn flag_state(f: &Flag) -> PastFlag {
    match &f.deprecated {
        None => PastFlag::Option,
        Some(d) => match d.kind {
            FlagDeprecationKind::Alias => PastFlag::Alias { replacement: d.replacement.clone() },
            FlagDeprecationKind::Noop => PastFlag::Noop,
            FlagDeprecationKind::Removed => PastFlag::Erroring,
            // Still an option that takes effect; one whose successor the release
            // names was, for a recipe, an alias of it (that era's fix renames).
            FlagDeprecationKind::Announced => match &d.replacement {
                Some(replacement) => PastFlag::Alias { replacement: Some(replacement.clone()) },
                None => PastFlag::Announced,
            },
        },
    }
}

fn env_state(v: &EnvVar) -> PastEnv {
    match &v.deprecated {
        None => PastEnv::Read,
        Some(d) => match (&d.kind, &d.replacement) {
            (EnvDeprecationKind::Renamed | EnvDeprecationKind::Alias, Some(replacement)) => {
                PastEnv::Renamed { replacement: replacement.clone(), transform: d.transform.clone() }
            }
            _ => PastEnv::Retired { hint: d.message.clone() },
        },
    }
}

impl<S> Past<S> {
    /// "from v0.5.16 to v0.5.19", or "at v0.5.19" for one release.
    pub(crate) fn span_en(&self) -> String {
        if self.since == self.last_seen {
            format!("at {}", self.last_seen)
        } else {
            format!("from {} to {}", self.since, self.last_seen)
        }
    }

    /// "v0.5.16 至 v0.5.19", or "v0.5.19".
    pub(crate) fn span_zh(&self) -> String {
        if self.since == self.last_seen {
            self.last_seen.clone()
        } else {
            format!("{} 至 {}", self.since, self.last_seen)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn flag(name: &str, deprecated: Value) -> Value {
        json!({"names": [name], "dest": "d", "action": "store", "type": null, "nargs": null, "choices": null,
               "default": null, "deprecated": deprecated, "evidence": {"path": "server_args.py", "line": 7}})
    }

    fn env(name: &str, deprecated: Value) -> Value {
        json!({"name": name, "kind": "EnvBool", "default": false, "deprecated": deprecated, "evidence": {"path": "environ.py", "line": 3}})
    }

    fn release(tag: &str, flags: Vec<Value>, env: Vec<Value>) -> Arc<EngineSurface> {
        let surface = json!({"engine": "sglang", "ref": tag, "commit": null, "version": null, "package_root": "python/sglang",
            "flags": flags, "env": env, "env_prefix_rewrites": [], "modules": [], "classes": {}, "requires": [], "warnings": []});
        Arc::new(serde_json::from_value(surface).unwrap())
    }

    fn alias_of(new: &str) -> Value {
        json!({"kind": "alias", "replacement": new, "message": null})
    }

    /// v1: an option; v2, v3: a deprecated alias; v4: gone; target v5.
    fn history() -> ReleaseHistory {
        let h = ReleaseHistory {
            releases: vec![
                release("v1", vec![flag("--max-bs", Value::Null)], vec![env("SGLANG_OLD", Value::Null)]),
                release("v2", vec![flag("--max-bs", alias_of("--max-bs-decode"))], vec![]),
                release(
                    "v3",
                    vec![flag("--max-bs", alias_of("--max-bs-decode"))],
                    vec![env(
                        "SGLANG_OFF",
                        json!({"kind": "renamed", "replacement": "SGLANG_ON", "transform": "_invert_bool", "message": null}),
                    )],
                ),
                release("v4", vec![], vec![]),
            ],
            env_releases: Vec::new(),
        };
        ReleaseHistory { env_releases: h.releases.clone(), ..h }
    }

    #[test]
    fn the_last_state_its_first_release_and_the_first_release_without_it() {
        let past = history().flag("--max-bs", "v5").unwrap();
        assert_eq!(past.was, PastFlag::Alias { replacement: Some("--max-bs-decode".into()) });
        assert_eq!((past.since.as_str(), past.last_seen.as_str(), past.gone_by.as_str()), ("v2", "v3", "v4"));
        assert_eq!(past.span_en(), "from v2 to v3");
        let env = history().env("SGLANG_OFF", "v5").unwrap();
        assert_eq!(env.was, PastEnv::Renamed { replacement: "SGLANG_ON".into(), transform: Some("_invert_bool".into()) });
        assert_eq!((env.span_en(), env.gone_by.as_str()), ("at v3".to_string(), "v4"));
        let old = history().env("SGLANG_OLD", "v5").unwrap();
        assert_eq!((old.was, old.gone_by.as_str()), (PastEnv::Read, "v2"));
    }

    #[test]
    fn the_target_is_where_it_is_gone_when_the_last_release_had_it() {
        let mut h = history();
        h.releases.pop();
        h.env_releases.pop();
        assert_eq!(h.flag("--max-bs", "v5").unwrap().gone_by, "v5");
    }

    /// vLLM's help-text deprecations: one naming its successor was an alias of
    /// it (the rename is that era's fix); one naming none was an option
    /// announced to go.
    #[test]
    fn an_announced_deprecation_is_an_alias_only_when_it_names_a_successor() {
        let announced = |new: Value| json!({"kind": "announced", "replacement": new, "message": "--x is deprecated"});
        let h = ReleaseHistory {
            releases: vec![release(
                "v1",
                vec![
                    flag("--log-config-file", announced(json!("--logging-config.pylogging_config_file"))),
                    flag("--scales", announced(Value::Null)),
                ],
                vec![],
            )],
            env_releases: Vec::new(),
        };
        let renamed = h.flag("--log-config-file", "v2").unwrap().was;
        assert_eq!(renamed, PastFlag::Alias { replacement: Some("--logging-config.pylogging_config_file".into()) });
        assert_eq!(h.flag("--scales", "v2").unwrap().was, PastFlag::Announced);
    }

    #[test]
    fn env_vars_are_looked_up_in_every_release_flags_only_from_the_current_one() {
        // The recipe's current release is v3: flags have history from there;
        // env vars from every release held, v1 included.
        let all = history();
        let h = ReleaseHistory { releases: all.releases[2..].to_vec(), env_releases: all.releases.clone() };
        assert_eq!(h.env("SGLANG_OLD", "v5").map(|p| p.last_seen), Some("v1".to_string()));
        assert_eq!(h.last_env("SGLANG_OLD").map(|(_, at)| at), Some("v1"));
        assert_eq!(h.env_searched_from(), Some("v1"));
        assert_eq!(h.flag("--max-bs", "v5").map(|p| p.since), Some("v3".to_string()));
        assert_eq!(ReleaseHistory::default().env_searched_from(), None);
    }

    #[test]
    fn a_name_no_release_had_has_no_history() {
        assert!(history().flag("--never", "v5").is_none());
        assert!(history().env("SGLANG_NEVER", "v5").is_none());
        assert!(ReleaseHistory::default().flag("--max-bs", "v5").is_none());
    }
}
