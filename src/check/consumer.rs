//! What Dynamo uses of SGLang, resolved against the SGLang target: EA201–EA204.
//!
//! A use that would fail is EA201/EA202/EA203 when nothing catches the failure,
//! EA204 when a guard (try/except, getattr default, hasattr) turns it into a
//! fallback. Module-level failures stop the worker at start; the message says so.

use super::Bump;
use crate::extract::consumer::{ConsumerUse, GuardKind, UseKind};
use crate::finding::{EvidenceRef, Finding, FindingKind, Fix, FixAction, Location, Missing};
use crate::profiles::ConsumerLink;
use crate::surface::{EngineSurface, Module};
use crate::surface_diff::{added_modules, relocation};

/// Where the uses were read: the consumer component of `link` at `consumer_ref`.
pub(crate) struct Consumer<'a> {
    pub link: &'a ConsumerLink,
    pub uses: &'a [ConsumerUse],
    pub consumer_ref: &'a str,
}

pub(crate) fn check(consumer: &Consumer, sglang: Bump, out: &mut Vec<Finding>) {
    let engine = consumer.link.engine;
    let new_modules = NewModules { bump: sglang, found: std::cell::OnceCell::new() };
    for u in consumer.uses.iter().filter(|u| !u.type_only) {
        if handler_never_runs(u, consumer.uses, sglang.to) {
            continue;
        }
        let failure = match &u.kind {
            UseKind::Import { module, name, .. } => import_failure(engine, module, name.as_deref(), &new_modules),
            UseKind::Attribute { class, attribute, write, .. } if !*write => attribute_failure(engine, class, attribute, sglang),
            UseKind::Attribute { .. } => None,
        };
        if let Some(f) = failure {
            out.push(finish(f, u, consumer));
        }
    }
}

/// What fails and why, before the guard decides the code.
struct Failure {
    subject: String,
    missing: Missing,
    hint: Option<String>,
    evidence: Vec<EvidenceRef>,
}

/// A folder of modules without `__init__.py` imports as a namespace package.
fn is_namespace_package(to: &EngineSurface, module: &str) -> bool {
    let prefix = format!("{module}.");
    let start = to.modules.partition_point(|m| m.name.as_str() < prefix.as_str());
    to.modules.get(start).is_some_and(|m| m.name.starts_with(&prefix))
}

/// Evidence is read in the engine's source (`engine` is its profile id; the
/// rest is the consumer's use site).
fn import_failure(engine: &str, module: &str, name: Option<&str>, new_modules: &NewModules) -> Option<Failure> {
    let to = new_modules.bump.to;
    let target = to.module(module);
    if target.is_none() && !is_namespace_package(to, module) {
        let hint = moved_to(module, new_modules);
        return Some(Failure {
            subject: module.to_string(),
            missing: Missing::Module { module: module.to_string(), target: to.ref_name.clone() },
            evidence: hint
                .as_ref()
                .and_then(|m| to.module(m))
                .map(|m| EvidenceRef {
                    path: m.path.clone(),
                    line: 1,
                    ref_name: to.ref_name.clone(),
                    note: Some(format!("{} is here now", m.name)),
                    engine: Some(engine.into()),
                })
                .into_iter()
                .collect(),
            hint,
        });
    }
    let name = name.filter(|n| *n != "*")?;
    let submodule = format!("{module}.{name}");
    if to.module(&submodule).is_some() || is_namespace_package(to, &submodule) {
        return None;
    }
    // A regular module: the name must be one of its symbols (unknown symbols: no claim).
    // A namespace package binds nothing but its submodules.
    if let Some(t) = target {
        if t.symbols.as_ref()?.iter().any(|s| s == name) {
            return None;
        }
    }
    let hint = if target.is_none() { moved_to(&submodule, new_modules) } else { None };
    Some(Failure {
        subject: submodule.clone(),
        missing: match target {
            Some(_) => Missing::Symbol { module: module.to_string(), name: name.to_string(), target: to.ref_name.clone() },
            None => Missing::Module { module: submodule.clone(), target: to.ref_name.clone() },
        },
        evidence: target
            .map(|t| EvidenceRef {
                path: t.path.clone(),
                line: 1,
                ref_name: to.ref_name.clone(),
                note: Some(format!("{module} at {}", to.ref_name)),
                engine: Some(engine.into()),
            })
            .into_iter()
            .collect(),
        hint,
    })
}

/// The modules of the target that the source release did not have: where a
/// module missing at the target may have moved. Found once per check, on the
/// first missing module.
struct NewModules<'a> {
    bump: Bump<'a>,
    found: std::cell::OnceCell<Vec<&'a Module>>,
}

impl<'a> NewModules<'a> {
    fn get(&self) -> &[&'a Module] {
        self.found.get_or_init(|| match self.bump.from {
            Some(from) => added_modules(from, self.bump.to),
            None => self.bump.to.modules.iter().collect(),
        })
    }
}

/// The relocation of a module absent at the target: same leaf name, else same symbols.
fn moved_to(module: &str, new_modules: &NewModules) -> Option<String> {
    let old = new_modules.bump.from.and_then(|f| f.module(module).cloned()).unwrap_or_else(|| Module {
        name: module.to_string(),
        path: String::new(),
        symbols: None,
    });
    relocation(&old, new_modules.get())
}

fn attribute_failure(engine: &str, class: &str, attribute: &str, sglang: Bump) -> Option<Failure> {
    let info = sglang.to.classes.get(class)?;
    if info.members.iter().any(|m| m.name == attribute) {
        return None;
    }
    // Only a member the current release really had is a regression; one missing
    // from both may be set dynamically somewhere the model cannot see.
    let before = match sglang.from {
        Some(from) => Some(from.classes.get(class)?.members.iter().find(|m| m.name == attribute)?),
        None => None,
    };
    Some(Failure {
        subject: format!("{class}.{attribute}"),
        missing: Missing::Attribute { class: class.to_string(), attribute: attribute.to_string(), target: sglang.to.ref_name.clone() },
        hint: None,
        evidence: before
            .map(|m| {
                EvidenceRef::new(&m.evidence, sglang.current_ref().unwrap_or_default())
                    .with_note(format!("{class}.{attribute} defined here before"))
                    .engine(engine)
            })
            .into_iter()
            .chain(std::iter::once(
                EvidenceRef::new(&info.evidence, &sglang.to.ref_name)
                    .with_note(format!("{class} at {} has no {attribute}", sglang.to.ref_name))
                    .engine(engine),
            ))
            .collect(),
    })
}

/// A use in an `except` handler runs only when its `try` failed: when every import
/// that `try` guards resolves at the target, the handler is dead code there.
fn handler_never_runs(u: &ConsumerUse, all: &[ConsumerUse], to: &EngineSurface) -> bool {
    let Some(ctx) = &u.in_except else { return false };
    let guarded: Vec<&ConsumerUse> = all
        .iter()
        .filter(|o| o.evidence.path == u.evidence.path)
        .filter(|o| matches!(&o.guard, Some(g) if matches!(g.kind, GuardKind::TryExcept { try_line, .. } if try_line == ctx.try_line)))
        .collect();
    !guarded.is_empty()
        && guarded.iter().all(|o| match &o.kind {
            UseKind::Import { module, name, .. } => to.module(module).is_some_and(|m| match (name.as_deref(), &m.symbols) {
                (Some(n), Some(symbols)) if n != "*" => symbols.iter().any(|s| s == n) || to.module(&format!("{module}.{n}")).is_some(),
                _ => true,
            }),
            UseKind::Attribute { .. } => false,
        })
}

fn finish(f: Failure, u: &ConsumerUse, c: &Consumer) -> Finding {
    let at = Location::from_evidence(&u.evidence);
    let display = |id: &str| crate::profiles::by_id(id).map_or(id.to_string(), |p| p.display.to_string());
    let (engine, consumer) = (display(c.link.engine), display(c.link.consumer));
    let (consumer_ref, snippet, moved_to) = (c.consumer_ref.to_string(), u.snippet.clone(), f.hint.clone());
    let kind = match &u.guard {
        Some(g) => FindingKind::ConsumerFallback {
            missing: f.missing,
            engine,
            consumer,
            consumer_ref,
            snippet,
            guard: guard_words(&g.kind),
            fallback: g.fallback.clone(),
            moved_to,
        },
        None => {
            FindingKind::ConsumerMissing { missing: f.missing, engine, consumer, consumer_ref, snippet, at_start: u.top_level, moved_to }
        }
    };
    let mut finding = Finding::new(kind, at, f.subject).evidence(EvidenceRef {
        path: u.evidence.path.clone(),
        line: u.evidence.line,
        ref_name: c.consumer_ref.to_string(),
        note: Some(u.snippet.clone()),
        engine: Some(c.link.consumer.into()),
    });
    for e in f.evidence {
        finding = finding.evidence(e);
    }
    finding.fix(f.hint.map(|module| Fix::advice(FixAction::ImportFrom { module })))
}

fn guard_words(kind: &GuardKind) -> String {
    match kind {
        GuardKind::TryExcept { catches, try_line } if catches.is_empty() => format!("bare `except:` of the `try` at line {try_line}"),
        GuardKind::TryExcept { catches, try_line } => format!("`except {}` of the `try` at line {try_line}", catches.join(", ")),
        GuardKind::Getattr => "`getattr` with a default".into(),
        GuardKind::Hasattr => "`hasattr` test".into(),
    }
}
