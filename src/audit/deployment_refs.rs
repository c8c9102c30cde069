//! Which refs one deployment is audited across, per engine: the refs named on
//! the command line, else the recipe's (the image for the engine it starts,
//! its `dynamo:` block for the consumer); in `pr`, the recipe's base version
//! gives "from". Unresolvable refs become EA303.

use super::engines::Engines;
use super::refs::{self, DerivedRef, Unresolved};
use super::AuditOptions;
use crate::finding::{Finding, Location};
use crate::profiles::{self, Engine};
use crate::recipe::{Deployment, RecipeKind};
use std::collections::BTreeMap;

/// The refs one deployment is audited across, by engine profile id: the engine
/// it starts, and each consumer of that engine.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DeploymentRefs {
    pub by_engine: BTreeMap<&'static str, EngineRefs>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct EngineRefs {
    pub from: Option<DerivedRef>,
    pub to: Option<DerivedRef>,
}

impl DeploymentRefs {
    pub(super) fn of(&self, engine: Engine) -> Option<&EngineRefs> {
        self.by_engine.get(engine.id)
    }
    pub(super) fn to(&self, engine: Engine) -> Option<&DerivedRef> {
        self.of(engine).and_then(|r| r.to.as_ref())
    }
    pub(super) fn from(&self, engine: Engine) -> Option<&DerivedRef> {
        self.of(engine).and_then(|r| r.from.as_ref())
    }
}

/// How a recipe names the ref of one engine: the image of the engine it
/// starts, or a consumer's install block.
fn recipe_ref(
    engine: Engine,
    dep: &Deployment,
    repo: &crate::source::EngineRepo,
    dynamo: Option<&crate::source::EngineRepo>,
) -> Result<Option<DerivedRef>, Unresolved> {
    match engine.server {
        Some(_) => refs::image_ref(engine, dep, repo, dynamo),
        None => refs::dynamo_ref(dep, repo),
    }
}

/// Where a recipe names that ref, for EA303: (span, subject).
fn recipe_place(engine: Engine, dep: &Deployment) -> (Option<&crate::recipe::Span>, &'static str) {
    match engine.server {
        Some(_) => match &dep.entry_image {
            Some(entry) => (Some(&entry.image.span), "image"),
            None => (dep.container.as_ref().map(|c| &c.span), "model.container"),
        },
        None => (dep.dynamo.as_ref().map(|d| &d.raw.span), "dynamo"),
    }
}

pub(super) fn derive_refs(
    kind: &RecipeKind,
    dep: &Deployment,
    base: Option<&Deployment>,
    opts: &AuditOptions,
    engines: &Engines,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) -> DeploymentRefs {
    let mut refs = DeploymentRefs::default();
    let Some(server) = profiles::by_id(dep.engine) else { return refs };
    // Only srt-slurm starts the engine under its consumers (Dynamo's workers);
    // a launch script or the AMD model table starts the server itself.
    let consumers = profiles::CONSUMER_LINKS
        .iter()
        .filter(|l| l.engine == server.id && kind == &RecipeKind::SrtSlurm)
        .filter_map(|l| profiles::by_id(l.consumer));
    // Dynamo's source, where a runtime image's engine release is read.
    let dynamo = engines.get(&profiles::DYNAMO).and_then(|h| h.source.repo());
    for engine in std::iter::once(server).chain(consumers) {
        let handle = engines.get(engine);
        let repo = handle.and_then(|h| h.source.repo());
        let flags = opts.refs_of(engine);
        let flag_ref = |value: &Option<String>, flag: &str| value.as_ref().map(|v| DerivedRef { wanted: v.clone(), how: flag.to_string() });
        let mut unresolved = |u: Unresolved| {
            let (span, subject) = recipe_place(engine, dep);
            let at = span.map(Location::from_span).unwrap_or(Location { path: String::new(), line: 1, column: 1, offset: None, len: None });
            findings.push(crate::check::refs::unresolved(u.engine, &u.what, u.message, at, subject, &dep.name));
        };
        let (from, mut to) = from_to(
            flag_ref(&flags.from, &flags.from_flag),
            flag_ref(&flags.to, &flags.to_flag),
            || match recipe_ref(engine, dep, repo?, dynamo) {
                Ok(r) => r,
                Err(u) => {
                    unresolved(u);
                    None
                }
            },
            base.map(|b| {
                || match recipe_ref(engine, b, repo?, dynamo) {
                    Ok(r) => r.map(|r| DerivedRef { how: format!("before: {}", r.how), ..r }),
                    Err(u) => {
                        // The recipe before the change names no span in this file: say it in a note.
                        notes.push(format!("{}: before the change: {}", dep.name, u.message));
                        None
                    }
                }
            }),
        );
        if handle.is_some_and(|h| h.source.repo().is_none()) {
            // A plain folder has one tree: audit against it.
            to.get_or_insert(DerivedRef { wanted: "(directory)".into(), how: format!("--{} folder", engine.id) });
        }
        refs.by_engine.insert(engine.id, EngineRefs { from, to });
    }
    refs
}

/// One engine's from and to. Flags win. Otherwise a plain audit takes both from
/// the recipe as it is (`own`); with the recipe's old version (`old`, in `pr`),
/// from is the old recipe's ref and to the recipe's own.
fn from_to(
    flag_from: Option<DerivedRef>,
    flag_to: Option<DerivedRef>,
    own: impl FnOnce() -> Option<DerivedRef>,
    old: Option<impl FnOnce() -> Option<DerivedRef>>,
) -> (Option<DerivedRef>, Option<DerivedRef>) {
    let (from, own_to) = match old {
        None => (flag_from.or_else(own), None),
        Some(old) => {
            let own_to = if flag_to.is_none() { own() } else { None };
            (flag_from.or_else(old), own_to)
        }
    };
    let to = flag_to.or(own_to).or_else(|| from.clone());
    (from, to)
}
