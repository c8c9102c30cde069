//! What an audit is asked to do: the engine sources, the refs named on the
//! command line, the rules, and (for `pr`) each recipe's version before the
//! change. Keyed by engine profile id: no engine is named here.

use crate::profiles::{Engine, EngineProfile};
use crate::recipe::Deployment;
use crate::source::OpenOptions;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    /// Each engine's source, by profile id.
    pub sources: BTreeMap<&'static str, EngineSpec>,
    /// Refs named on the command line, by profile id: they win over every recipe's.
    pub refs: BTreeMap<&'static str, RefFlags>,
    pub open: OpenOptions,
    /// Only this master-config key's links are checked (EA301/EA302).
    pub master_key: Option<String>,
    /// Risk rules to apply (built-in plus `--rules DIR`).
    pub rules: Vec<crate::rules::Rule>,
    /// For `pr`: each recipe's deployments as they were before the change, by recipe
    /// path. A deployment found here (same name and variant) is audited from the
    /// engine refs of its old version to those of its own image and consumer spec;
    /// refs named on the command line still win.
    pub baseline: BTreeMap<String, Vec<Deployment>>,
    /// Engines (ids) whose deployments may go unaudited without failing the run
    /// (`--allow-unaudited`, the config's `allow_unaudited`): still listed.
    pub allow_unaudited: BTreeSet<String>,
    /// Refs of each engine (by id) that later runs over the same [`Engines`](super::Engines)
    /// audit against (the matrix's releases): read with a target's demand in the
    /// first run, so a surface first read as a deployment's current release,
    /// or for the release history, serves unchanged when it is a target.
    pub also_targets: BTreeMap<&'static str, BTreeSet<String>>,
    /// Engines (ids) whose refs the command line names with flags of their own
    /// (`--atom-to`), given or not: a hint names those, since `--to` names
    /// another engine's release as soon as another engine's source is given.
    pub own_ref_flags: BTreeSet<&'static str>,
}

/// One engine's source as given: a path or URL, and the package folder inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSpec {
    pub spec: String,
    pub root: Option<String>,
}

/// The refs of one engine named on the command line, and the flags that named
/// them (reports say how each ref was chosen).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefFlags {
    pub from: Option<String>,
    pub to: Option<String>,
    pub from_flag: String,
    pub to_flag: String,
}

impl RefFlags {
    /// The refs of `engine` as its flags name them: `--from`/`--to` for an
    /// engine recipes start, `--<id>-from`/`--<id>-to` for a consumer.
    pub(crate) fn named(engine: &EngineProfile, from: Option<String>, to: Option<String>) -> RefFlags {
        let (from_flag, to_flag) = match engine.server {
            Some(_) => ("--from".to_string(), "--to".to_string()),
            None => (format!("--{}-from", engine.id), format!("--{}-to", engine.id)),
        };
        RefFlags { from, to, from_flag, to_flag }
    }
}

impl AuditOptions {
    /// Whether the user acknowledged that `engine`'s deployments go unaudited
    /// (by id or by the name reports use, in any case).
    pub(crate) fn acknowledges(&self, engine: &str) -> bool {
        let display = crate::profiles::display(engine);
        self.allow_unaudited.iter().any(|a| a.eq_ignore_ascii_case(engine) || a.eq_ignore_ascii_case(&display))
    }

    /// Give `engine`'s source (a path or URL, and an optional package folder).
    pub fn with_source(mut self, engine: Engine, spec: Option<String>, root: Option<String>) -> AuditOptions {
        if let Some(spec) = spec {
            self.sources.insert(engine.id, EngineSpec { spec, root });
        }
        self
    }

    /// Name `engine`'s refs, as its flags would.
    pub fn with_refs(mut self, engine: Engine, from: Option<String>, to: Option<String>) -> AuditOptions {
        if from.is_some() || to.is_some() {
            self.refs.insert(engine.id, RefFlags::named(engine, from, to));
        }
        self
    }

    /// Name `engine`'s refs by flags of its own (`--vllm-from`/`--vllm-to`), as
    /// reports say how each ref was chosen.
    pub fn with_own_refs(mut self, engine: Engine, from: Option<String>, to: Option<String>) -> AuditOptions {
        self.own_ref_flags.insert(engine.id);
        if from.is_some() || to.is_some() {
            let flags = RefFlags { from, to, from_flag: format!("--{}-from", engine.id), to_flag: format!("--{}-to", engine.id) };
            self.refs.insert(engine.id, flags);
        }
        self
    }

    /// Name the refs of the engine recipes start (`--from`/`--to`): the one
    /// server engine whose source is given and whose refs are not named by
    /// flags of its own (`--vllm-to`). With several such, the refs would name
    /// releases of different engines: an error that says so.
    pub fn with_server_refs(self, from: Option<String>, to: Option<String>) -> Result<AuditOptions, String> {
        if from.is_none() && to.is_none() {
            return Ok(self);
        }
        let servers: Vec<Engine> = crate::profiles::servers()
            .map(|(engine, _)| engine)
            // A program read from another engine's source follows that engine's refs.
            .filter(|e| e.source_of.is_none() && self.sources.contains_key(e.id) && !self.refs.contains_key(e.id))
            .collect();
        match servers.as_slice() {
            [] => Ok(self.with_refs(&crate::profiles::SGLANG, from, to)),
            [engine] => Ok(self.with_refs(engine, from, to)),
            several => {
                let names: Vec<String> = several.iter().map(|e| format!("--{}", e.id)).collect();
                Err(format!(
                    "--from/--to name a release of one engine, and the sources of {} are given: audit one engine at a time",
                    names.join(" and ")
                ))
            }
        }
    }

    /// The flag that names `engine`'s target ref on this command line.
    pub(crate) fn to_flag(&self, engine: Engine) -> String {
        if self.own_ref_flags.contains(engine.source_id()) {
            format!("--{}-to", engine.source_id())
        } else {
            RefFlags::named(engine, None, None).to_flag
        }
    }

    /// The refs named for `engine`, if any.
    /// A program read from another engine's source ([`EngineProfile::source_of`])
    /// is at that engine's refs.
    pub(crate) fn refs_of(&self, engine: Engine) -> RefFlags {
        self.refs
            .get(engine.id)
            .or_else(|| self.refs.get(engine.source_id()))
            .cloned()
            .unwrap_or_else(|| RefFlags::named(engine, None, None))
    }

    /// Whether any engine source was given.
    pub(crate) fn has_sources(&self) -> bool {
        !self.sources.is_empty()
    }
}
