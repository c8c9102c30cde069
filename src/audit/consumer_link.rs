//! One consumer component against one bump of the engine it uses, without a
//! recipe: what an audit says, for every recipe that runs that build, about the
//! consumer's pin (EA205) and what it uses of the engine (EA201–EA204). The
//! same phases as a recipe audit (uses first, so the engine is asked only for
//! the modules and classes they name), for one (build, bump).

use super::{check_consumer, engine_classes, AuditOptions, Engines};
use crate::check::Bump;
use crate::extract::consumer::UseKind;
use crate::extract::Demand;
use crate::finding::{AuditReport, BumpSummary, Problem};
use crate::profiles::{self, ConsumerLink};

/// What to check: the component (`dynamo.vllm`), the consumer's ref, and the
/// engine refs (from is optional: without it, every member missing at the
/// target is reported, as when a recipe names no current release).
#[derive(Debug, Clone)]
pub struct LinkBump<'a> {
    pub component: &'a str,
    pub consumer_ref: &'a str,
    pub engine_from: Option<&'a str>,
    pub engine_to: &'a str,
}

/// Check `bump.component` as the audit checks it for a recipe. The engine and
/// consumer sources come from `opts.sources` (their profile ids).
pub fn check_link(opts: &AuditOptions, bump: &LinkBump) -> Result<AuditReport, miette::Report> {
    let link = profiles::CONSUMER_LINKS
        .iter()
        .find(|l| l.component == bump.component)
        .ok_or_else(|| miette::miette!("no consumer component `{}`", bump.component))?;
    let mut engines = Engines::open(opts)?;
    let report = check_link_with(&mut engines, link, bump);
    engines.finish();
    report
}

fn check_link_with(engines: &mut Engines, link: &'static ConsumerLink, bump: &LinkBump) -> Result<AuditReport, miette::Report> {
    let (Some(engine), Some(consumer)) = (profiles::known(link.engine), profiles::known(link.consumer)) else {
        return Err(miette::miette!("consumer link `{}` names an unknown profile", link.component));
    };
    let mut report = AuditReport::default();
    let given = |id: &str| miette::miette!("no {id} source given (--{id})");
    let consumer_handle = engines.get_mut(consumer).ok_or_else(|| given(consumer.id))?;
    let modules: Vec<String> = match consumer_handle.consumer_uses(bump.consumer_ref, link) {
        Ok(uses) => uses
            .iter()
            .filter_map(|u| match &u.kind {
                UseKind::Import { module, .. } => Some(module.clone()),
                UseKind::Attribute { .. } => None,
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
        Err(e) => return Err(miette::miette!("{} {}: {e}", consumer.display, bump.consumer_ref)),
    };
    // The server options too, as an audit reads them: whether the target tree is
    // the whole package is judged by them (`lacks_own_surface`), and a surface
    // read without them would look like a tree assembled by hand.
    let demand = Demand { flags: true, symbols_of: modules, classes: engine_classes(engine), metadata: true, ..Demand::default() };
    let engine_handle = engines.get_mut(engine).ok_or_else(|| given(engine.id))?;
    let wanted: Vec<(String, Demand)> =
        bump.engine_from.into_iter().chain([bump.engine_to]).map(|w| (w.to_string(), demand.clone())).collect();
    engine_handle.prefetch_surfaces(&wanted);
    let read =
        |handle: &mut super::EngineHandle, w: &str| handle.surface(w, &demand).map_err(|e| miette::miette!("{} {w}: {e}", engine.display));
    let to = read(engine_handle, bump.engine_to)?;
    let from = bump.engine_from.map(|w| read(engine_handle, w)).transpose()?;
    report.problems.extend(engine_handle.warnings().into_iter().map(|w| Problem { path: w.path, message: w.message }));
    let consumer_handle = engines.get_mut(consumer).ok_or_else(|| given(consumer.id))?;
    check_consumer(&mut report, consumer_handle, link, bump.consumer_ref, Bump { from: from.as_deref(), to: &to, history: None });
    report.problems.extend(consumer_handle.warnings().into_iter().map(|w| Problem { path: w.path, message: w.message }));
    report.bumps = vec![BumpSummary {
        engine: engine.id.to_string(),
        from: bump.engine_from.map(str::to_string),
        to: bump.engine_to.to_string(),
        how: vec![format!("{} {}", consumer.display, bump.consumer_ref)],
        deployments: 0,
    }];
    crate::finding::normalize(&mut report.findings);
    report.problems.sort();
    report.problems.dedup();
    Ok(report)
}
