//! `audit`: recipes in, findings out. One run, in phases: [`Run::plan`] decides
//! which deployments are audited on which refs of which engines;
//! [`Run::prefetch`] reads only the engine facts those recipes ask about;
//! [`Run::check_servers`] checks each deployment against the engine it starts;
//! [`Run::check_consumers`] checks each consumer build (Dynamo's worker)
//! against the engine releases it runs with; [`Run::finish`] adds the master
//! configs and sums up. Engines are profiles (`crate::profiles`): nothing here
//! names one.

mod consumer_link;
mod current;
mod deployment_refs;
mod engines;
mod history;
mod master;
pub(crate) mod master_links;
mod options;
pub(crate) mod refs;
mod runtime_image;

use crate::check::{self, consumer::Consumer, worker_flags::WorkerParse, Bump};
use crate::extract::consumer::UseKind;
use crate::extract::worker_flags::WorkerFlags;
use crate::extract::{Demand, EnvReads};
pub use crate::finding::{AuditReport, BumpSummary, Coverage, NotAudited, Problem, RuleInfo};
use crate::finding::{Finding, Location};
use crate::profiles::{self, ConsumerLink, Engine};
use crate::recipe::{Deployment, FlagValue, RecipeFile, RecipeKind};
use crate::surface::{EngineSurface, ExtractWarning};
pub use consumer_link::{check_link, LinkBump};
pub(crate) use current::{current_releases, CurrentRelease};
use deployment_refs::{derive_refs, DeploymentRefs};
pub(crate) use engines::Engines;
use engines::{EngineHandle, RefTree};
pub use options::{AuditOptions, EngineSpec, RefFlags};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

pub fn run(files: &[RecipeFile], opts: &AuditOptions) -> Result<AuditReport, miette::Report> {
    run_with(files, opts, &mut Engines::open(opts)?)
}

/// [`run`] over engines already opened from `opts`.
pub(crate) fn run_with(files: &[RecipeFile], opts: &AuditOptions, engines: &mut Engines) -> Result<AuditReport, miette::Report> {
    let mut run = Run::plan(files, opts, engines);
    let demands = run.prefetch(engines);
    run.check_servers(engines, &demands);
    run.check_consumers(engines);
    Ok(run.finish(files, opts, engines))
}

/// One deployment to audit and the refs it is audited across.
struct Planned<'a> {
    file: &'a RecipeFile,
    dep: &'a Deployment,
    refs: DeploymentRefs,
    engine: Engine,
}

/// A consumer build against one bump of the engine it uses: its findings are
/// computed once and affect every recipe place that installs that build.
type ConsumerKey = (&'static str, String, Option<String>, String);

struct Run<'a> {
    opts: &'a AuditOptions,
    report: AuditReport,
    planned: Vec<Planned<'a>>,
    /// Per planned deployment: its engine surfaces once read (`None`: not audited).
    checked: Vec<Option<DeploymentSurfaces>>,
    /// Bumps covered: (engine id, from, to) → (how the refs were found, deployments).
    summaries: Summaries,
    audited_paths: BTreeSet<&'a str>,
}

impl<'a> Run<'a> {
    /// Phase 1: Which deployments, on which refs; what the recipe files say by themselves.
    fn plan(files: &'a [RecipeFile], opts: &'a AuditOptions, engines: &Engines) -> Run<'a> {
        let mut report = AuditReport {
            recipes: files.len(),
            rules: opts.rules.iter().map(rule_info).collect(),
            sources: files.iter().map(|f| (f.path.clone(), f.text.clone())).collect(),
            ..Default::default()
        };
        let mut planned = Vec::new();
        for file in files {
            report.findings.extend(check::duplicates::findings(file));
            report.findings.extend(check::unreadable::unread_launches(file));
            // A part of a recipe that could not be read fails closed: an error
            // finding at its place, never a note nobody gates on.
            let unread = check::unreadable::unread_parts(file);
            report.coverage.unreadable += unread.len();
            report.findings.extend(unread);
            for note in &file.notes {
                // Keep the line: a note about a value that could not be read must say where
                // (in the file it is about: a script's note may be about a file it sources).
                let at = match &note.span {
                    Some(span) => format!("{}:{}:{}", span.path, span.line, span.column),
                    None => file.path.clone(),
                };
                report.notes.push(format!("{at}: {}", note.message));
            }
            match &file.kind {
                RecipeKind::SrtSlurm | RecipeKind::LaunchScript | RecipeKind::AmdModels => {}
                RecipeKind::Other { backend: Some(b) } => {
                    report.notes.push(format!("{}: not audited, a recipe for the {b} engine", file.path));
                    report.coverage.deployments += 1;
                    report.coverage.not_audited.push(NotAudited {
                        path: file.path.clone(),
                        deployment: "(every entry of the file)".into(),
                        variant: None,
                        roles: Vec::new(),
                        engine: b.clone(),
                        reason: "no profile yet".into(),
                        enable: None,
                        acknowledged: opts.acknowledges(b),
                    });
                    continue;
                }
                RecipeKind::Other { backend: None } | RecipeKind::MasterConfig => continue,
            }
            for dep in &file.deployments {
                report.coverage.deployments += 1;
                let Some(engine) = profiles::by_id(dep.engine).filter(|e| e.server.is_some()) else {
                    report.coverage.not_audited.push(not_audited(file, dep, "no profile yet".into(), None, opts));
                    continue;
                };
                // An engine audited by its recipes whose scripts' command lines
                // are not read: the script's launch is named, not read as clean.
                if file.kind == RecipeKind::LaunchScript && engine.server.as_ref().is_some_and(|s| !s.launches_read) {
                    let reason = "its launch command lines are not read yet".to_string();
                    report.coverage.not_audited.push(not_audited(file, dep, reason, None, opts));
                    continue;
                }
                let base =
                    opts.baseline.get(&file.path).and_then(|old| old.iter().find(|b| b.name == dep.name && b.variant == dep.variant));
                let refs = derive_refs(&file.kind, dep, base, opts, engines, &mut report.findings, &mut report.notes);
                planned.push(Planned { file, dep, refs, engine });
            }
        }
        // Counted later: a deployment is audited once its target surface was read.
        // One whose engine ref or package cannot be read is only listed under
        // `problems`, so a run where nothing could be checked reports 0 (exit 2).
        Run { opts, report, planned, checked: Vec::new(), summaries: BTreeMap::new(), audited_paths: BTreeSet::new() }
    }

    /// Phase 2: What each engine is asked: consumers' imports decide which engine
    /// modules need symbols (their trees load meanwhile), the recipes' env vars
    /// which reads are looked for. Every surface is then extracted in parallel.
    fn prefetch(&mut self, engines: &mut Engines) -> BTreeMap<&'static str, Demand> {
        let mut demands = BTreeMap::new();
        for engine in self.server_engines() {
            let (imported, problems) = imported_modules(engines, engine, &self.planned);
            self.report.problems.extend(problems);
            let env_names: BTreeSet<String> = self
                .planned
                .iter()
                .filter(|p| p.engine.id == engine.id)
                .flat_map(|p| check::env::env_uses(p.dep).into_iter().map(|(_, u)| u.name.clone()))
                .filter(|n| engine.owns_env(n))
                .collect();
            let demand = Demand {
                flags: true,
                env: true,
                env_reads: EnvReads::Names(env_names.into_iter().collect()),
                symbols_of: imported.modules,
                names_imported: imported.names,
                classes: engine_classes(engine),
                metadata: true,
                without_modules: false,
            };
            if let Some(handle) = engines.get_mut(engine) {
                let refs_of = |pick: fn(&DeploymentRefs, Engine) -> Option<&refs::DerivedRef>| -> BTreeSet<String> {
                    self.planned.iter().filter_map(|p| pick(&p.refs, engine).map(|d| d.wanted.clone())).collect()
                };
                let mut targets = refs_of(DeploymentRefs::to);
                targets.extend(self.opts.also_targets.get(engine.id).into_iter().flatten().cloned());
                let sources = refs_of(DeploymentRefs::from);
                let source_demand = engines::source_demand(handle, &demand, &targets);
                let wanted: Vec<(String, Demand)> = targets
                    .iter()
                    .map(|w| (w.clone(), demand.clone()))
                    .chain(sources.difference(&targets).map(|w| (w.clone(), source_demand.clone())))
                    .collect();
                handle.prefetch_surfaces(&wanted);
            }
            demands.insert(engine.id, demand);
        }
        demands
    }

    /// The engines the planned deployments start, in profile order.
    fn server_engines(&self) -> Vec<Engine> {
        profiles::PROFILES.iter().copied().filter(|e| e.server.is_some() && self.planned.iter().any(|p| p.engine.id == e.id)).collect()
    }

    /// Phase 3: Each deployment against the engine it starts: flags, env vars, changed
    /// defaults and risk rules.
    fn check_servers(&mut self, engines: &mut Engines, demands: &BTreeMap<&'static str, Demand>) {
        let span = crate::trace::span(|| "audit: per-deployment checks".into());
        // Each deployment's surfaces, extracted once per ref and shared. A ref
        // that cannot be read is a problem, and its deployments are not audited.
        for p in &self.planned {
            let surfaces = match deployment_surfaces(p, engines, demands, &self.opts.to_flag(p.engine), &mut self.report) {
                Ok(s) => Some(s),
                Err((reason, enable)) => {
                    self.report.coverage.not_audited.push(not_audited(p.file, p.dep, reason, enable, self.opts));
                    None
                }
            };
            self.checked.push(surfaces);
        }
        history::attach(&self.planned, &mut self.checked, engines, demands);
        // Rule evidence: one source index per target tree, shared by every rule
        // and deployment, seeded with the results cached for that tree.
        let rule_trees = rule_trees(self.opts, &self.planned, engines);
        let rules = rule_indexes(&rule_trees, engines);
        let Run { opts, report, planned, checked, summaries, audited_paths } = self;
        let checked = &*checked;
        // The flag and env checks and the changed defaults read only one recipe and
        // the shared surfaces: they run in parallel, and are emitted below in
        // deployment order (the output does not depend on the thread count).
        // Changed defaults are a property of the pair of releases, shared by the
        // deployments that bump between them (keyed by the surfaces' addresses).
        let pair_key =
            |bump: &Bump| bump.from.map(|from| (from as *const EngineSurface as usize, bump.to as *const EngineSurface as usize));
        let mut pair_defaults: HashMap<(usize, usize), Vec<check::flags::DefaultChange>> = HashMap::new();
        for bump in checked.iter().flatten().map(|c| c.bump()) {
            if let (Some(key), Some(from)) = (pair_key(&bump), bump.from) {
                pair_defaults.entry(key).or_insert_with(|| check::flags::default_changes(from, bump.to));
            }
        }
        let shared_env = already_checked_common_env(planned);
        let worker_parsers = worker_parsers(planned, engines);
        let found: Vec<Option<(Vec<Finding>, Vec<check::flags::DefaultChange>)>> = planned
            .par_iter()
            .zip(checked)
            .zip(&shared_env)
            .map(|((p, c), seen)| {
                let bump = c.as_ref()?.bump();
                let mut found = Vec::new();
                let worker =
                    worker_parser_of(p).and_then(|key| worker_parsers.get(&key.id())).map(|(flags, who)| WorkerParse { flags, who });
                check::flags::check_deployment(p.file, p.dep, bump, worker, &mut found);
                check::config_keys::check_deployment(p.file, p.dep, bump, &mut found);
                check::env::check_deployment(p.engine, p.file, p.dep, bump, seen, &mut found);
                let pair = pair_key(&bump).and_then(|k| pair_defaults.get(&k)).map_or(&[][..], Vec::as_slice);
                Some((found, check::flags::changed_defaults(p.dep, bump, pair)))
            })
            .collect();
        let mut defaults_seen = BTreeSet::new();
        let mut foreign_seen = BTreeSet::new();
        let mut json_seen = BTreeSet::new();
        for ((p, c), found) in planned.iter().zip(checked.iter()).zip(found) {
            let (Some(c), Some((found, defaults))) = (c, found) else { continue };
            let Some(to) = p.refs.to(p.engine) else { continue };
            // Once per place written: a sweep's variants share their env lines.
            for (u, library) in check::env::foreign_env(p.engine, p.dep) {
                let span = &u.name_span;
                if foreign_seen.insert((span.path.clone(), span.offset)) {
                    report.notes.push(format!("{}:{}:{}: `{}` not checked ({library})", span.path, span.line, span.column, u.name));
                }
            }
            for (u, option) in check::flags::unchecked_json(p.dep, c.bump()) {
                let span = &u.value_span;
                if json_seen.insert((span.path.clone(), span.offset)) {
                    let (FlagValue::Dynamic { text } | FlagValue::Scalar { text, .. }) = &u.value else { continue };
                    report.notes.push(format!(
                        "{}:{}:{}: `{option}` is parsed as JSON; its value `{text}` is known at run time only, so whether it parses is not checked",
                        span.path, span.line, span.column
                    ));
                }
            }
            report.deployments_audited += 1;
            report.coverage.audited += 1;
            audited_paths.insert(p.file.path.as_str());
            summarize(summaries, p.engine, p.refs.from(p.engine), to);
            let bump = c.bump();
            let first = report.findings.len();
            report.findings.extend(found);
            check::defaults::changed_defaults(p.file, p.dep, bump, defaults, &mut defaults_seen, &mut report.findings);
            check::config_keys::changed_defaults(p.file, p.dep, bump, &mut defaults_seen, &mut report.findings);
            if !opts.rules.is_empty() {
                let key = (p.engine.id, to.wanted.clone());
                match (rules.get(&key), rule_trees.get(&key)) {
                    (Some((index, _)), Some(tree)) => {
                        apply_rules(&opts.rules, p.file, p.dep, bump, index, &tree.ref_name, &mut report.findings)
                    }
                    _ => {
                        if let Some(Err(e)) = engines.get_mut(p.engine).map(|h| h.tree(&to.wanted)) {
                            report.problems.push(Problem { path: format!("{}@{}", p.engine.id, to.wanted), message: e });
                        }
                    }
                }
            }
            tag_engine(&mut report.findings, first, p.engine.id);
        }
        drop(span);
        for (key, (index, loaded)) in &rules {
            if let Some(handle) = engines.handles.get(key.0) {
                handle.store_rule_memo(&rule_trees[key], *loaded, &index.memo());
            }
        }
    }

    /// Phase 4: Each consumer build against the engine releases it runs with: its pin
    /// and what it uses of the engine. Said once per (build, engine bump), and
    /// affecting every recipe place that installs that build.
    fn check_consumers(&mut self, engines: &mut Engines) {
        let mut ranges: Vec<(ConsumerKey, std::ops::Range<usize>)> = Vec::new();
        let mut places: BTreeMap<ConsumerKey, Vec<Location>> = BTreeMap::new();
        let Run { report, planned, checked, summaries, .. } = self;
        for (p, c) in planned.iter().zip(checked.iter()) {
            let (Some(c), Some(to)) = (c, p.refs.to(p.engine)) else { continue };
            for link in profiles::CONSUMER_LINKS.iter().filter(|l| l.engine == p.engine.id) {
                let Some(consumer) = profiles::by_id(link.consumer) else { continue };
                let (Some(handle), Some(cto)) = (engines.get_mut(consumer), p.refs.to(consumer)) else { continue };
                summarize(summaries, consumer, p.refs.from(consumer), cto);
                let key = (link.component, cto.wanted.clone(), p.refs.from(p.engine).map(|r| r.wanted.clone()), to.wanted.clone());
                let seen = places.contains_key(&key);
                places.entry(key.clone()).or_default().extend(p.dep.dynamo.as_ref().map(|d| Location::from_span(&d.raw.span)));
                if seen {
                    continue;
                }
                let first = report.findings.len();
                check_consumer(report, handle, link, &cto.wanted, c.bump());
                ranges.push((key, first..report.findings.len()));
            }
        }
        for (key, range) in ranges {
            for f in &mut report.findings[range] {
                f.affects.extend(places[&key].iter().cloned());
            }
        }
    }

    /// Phase 5: Master configs against the recipes they link; what could be read only
    /// in part; the bumps covered; one order for everything.
    fn finish(mut self, files: &[RecipeFile], opts: &AuditOptions, engines: &Engines) -> AuditReport {
        master::check_masters(files, opts, &self.audited_paths, &mut self.report);
        for handle in engines.handles.values() {
            self.report
                .problems
                .extend(handle.warnings().into_iter().map(|w: ExtractWarning| Problem { path: w.path, message: w.message }));
        }
        self.report.bumps = self
            .summaries
            .into_iter()
            .map(|((engine, from, to), (how, deployments))| BumpSummary { engine, from, to, how: how.into_iter().collect(), deployments })
            .collect();
        crate::trace::summary("audit");
        let report = &mut self.report;
        crate::finding::normalize(&mut report.findings);
        report.notes.sort();
        report.notes.dedup();
        report.problems.sort();
        report.problems.dedup();
        report.coverage.not_audited.sort();
        self.report
    }
}

/// The consumer link whose worker gets `p`'s flags and parses them itself
/// before the engine-only parser (srt-slurm's `frontend.type: dynamo` for
/// vLLM), with the consumer's target ref.
fn worker_parser_of(p: &Planned) -> Option<WorkerKey> {
    let worker = p.dep.worker.as_ref()?;
    let link =
        profiles::CONSUMER_LINKS.iter().find(|l| l.consumer == worker.consumer && l.engine == p.engine.id && l.worker_parser.is_some())?;
    let consumer = profiles::by_id(link.consumer)?;
    Some(WorkerKey { link, wanted: p.refs.to(consumer)?.wanted.clone() })
}

/// A worker's parser at one consumer ref.
#[derive(Clone)]
struct WorkerKey {
    link: &'static ConsumerLink,
    wanted: String,
}

impl WorkerKey {
    fn id(&self) -> (&'static str, &'static str, String) {
        (self.link.consumer, self.link.component, self.wanted.clone())
    }
}

/// The options each worker registers itself, read once per (link, consumer
/// ref), with how reports name that worker. A worker whose source cannot be
/// read is left out: its deployments' flags are then said to be unread (EA306),
/// and the consumer check names the unreadable ref.
fn worker_parsers(planned: &[Planned], engines: &mut Engines) -> HashMap<(&'static str, &'static str, String), (WorkerFlags, String)> {
    let mut out = HashMap::new();
    for key in planned.iter().filter_map(worker_parser_of) {
        if out.contains_key(&key.id()) {
            continue;
        }
        let Some(consumer) = profiles::by_id(key.link.consumer) else { continue };
        let Some(Some(Ok(flags))) = engines.get_mut(consumer).map(|h| h.worker_flags(&key.wanted, key.link)) else { continue };
        let engine = profiles::by_id(key.link.engine).map_or(key.link.engine, |e| e.display);
        let module = key.link.worker_parser.as_ref().map(|w| format!(" (`{}`)", w.module)).unwrap_or_default();
        let who = format!("{}'s {engine} worker{module} at {}", consumer.display, key.wanted);
        out.insert(key.id(), (flags, who));
    }
    out
}

/// One consumer build's pin and uses against one bump of its engine.
fn check_consumer(report: &mut AuditReport, handle: &mut EngineHandle, link: &ConsumerLink, wanted: &str, bump: Bump) {
    report.links_checked.insert((link.consumer.to_string(), link.engine.to_string(), wanted.to_string()));
    let consumer_demand = Demand { metadata: true, ..Demand::default() };
    let first = report.findings.len();
    let surface = match handle.surface(wanted, &consumer_demand) {
        Ok(s) => s,
        Err(e) => {
            report.problems.push(Problem { path: format!("{}@{wanted}", link.consumer), message: e });
            return;
        }
    };
    check::pins::check(&surface, link.pin, bump.to, &mut report.findings);
    tag_engine(&mut report.findings, first, link.consumer);
    // A target tree that lacks what its own profile says every release has is
    // not the whole package (a few files assembled by hand): a module or name
    // the consumer imports may be missing from the tree only, so the uses are
    // named unchecked, never reported missing.
    if let Some(lacks) = lacks_own_surface(bump.to) {
        report.problems.push(Problem {
            path: format!("{}@{}", link.component, surface.ref_name),
            message: format!(
                "what `{}` uses of {} was not checked against {}: that tree {lacks}, so it is not the whole package",
                link.component,
                profiles::display(link.engine),
                bump.to.ref_name
            ),
        });
        return;
    }
    if let Ok(uses) = handle.consumer_uses(wanted, link) {
        let consumer = Consumer { link, uses, consumer_ref: &surface.ref_name };
        check::consumer::check(&consumer, bump, &mut report.findings);
    }
}

/// What the engine tree `surface` was read from lacks of what its profile
/// says every release has (the server's parser, the configuration file's root
/// model), in words; `None` when it has them.
fn lacks_own_surface(surface: &EngineSurface) -> Option<String> {
    let server = profiles::known(&surface.engine)?.server.as_ref()?;
    if surface.flags.is_empty() {
        return Some("has no server options (its parser module was not found)".to_string());
    }
    match &server.config_file {
        Some(file) if surface.config_keys.is_empty() => Some(format!("has no `{}` (module `{}`)", file.class, file.module)),
        _ => None,
    }
}

type Summaries = BTreeMap<(String, Option<String>, String), (BTreeSet<String>, usize)>;

/// Count a deployment under its bump of `engine`.
fn summarize(summaries: &mut Summaries, engine: Engine, from: Option<&refs::DerivedRef>, to: &refs::DerivedRef) {
    let entry = summaries.entry((engine.id.into(), from.map(|r| r.wanted.clone()), to.wanted.clone())).or_default();
    entry.0.extend(from.into_iter().chain(std::iter::once(to)).map(|r| r.how.clone()));
    entry.1 += 1;
}

/// A deployment this run does not audit, with why and what would audit it.
fn not_audited(file: &RecipeFile, dep: &Deployment, reason: String, enable: Option<String>, opts: &AuditOptions) -> NotAudited {
    NotAudited {
        path: file.path.clone(),
        deployment: dep.name.clone(),
        variant: dep.variant.clone(),
        roles: dep.roles.iter().map(|r| r.role.clone()).collect(),
        engine: dep.engine.to_string(),
        reason,
        enable,
        acknowledged: opts.acknowledges(dep.engine),
    }
}

/// Why a deployment is not audited, and the option that would audit it.
type NotAuditedWhy = (String, Option<String>);

/// The surfaces of the engine a deployment starts, at its refs; why not (and
/// a note or problem) when there is no source or ref, or it cannot be read.
fn deployment_surfaces(
    p: &Planned,
    engines: &mut Engines,
    demands: &BTreeMap<&'static str, Demand>,
    to_flag: &str,
    report: &mut AuditReport,
) -> Result<DeploymentSurfaces, NotAuditedWhy> {
    let (Some(handle), Some(to), Some(demand)) = (engines.get_mut(p.engine), p.refs.to(p.engine), demands.get(p.engine.id)) else {
        // No source is a different miss than no ref: say which, with its remedy.
        let (why, enable) = match engines.get_mut(p.engine) {
            None => (
                format!("no {} source given", p.engine.display),
                format!("--{} PATH|URL, or `{}:` in .engine-audit.yaml", p.engine.id, p.engine.id),
            ),
            Some(_) => {
                let flag = to_flag;
                // An image that names a release the source lacks is not "no image".
                let named = p.dep.image.as_ref().filter(|i| i.version.is_some() || i.commit.is_some() || i.date.is_some());
                match (named, p.dep.entry_image.as_ref().map(|e| &e.image.value).or(p.dep.container.as_ref().map(|c| &c.value))) {
                    (Some(_), Some(image)) => (
                        format!("no {} ref to audit against (its image {image} names no ref of the source)", p.engine.display),
                        format!("{flag} REF, or a source that has that release"),
                    ),
                    _ => (
                        format!("no {} ref to audit against (no image)", p.engine.display),
                        format!("{flag} REF, or an image in the recipe"),
                    ),
                }
            }
        };
        report.notes.push(format!("{}: {}: {why} ({enable})", p.file.path, p.dep.name));
        return Err((why, Some(enable)));
    };
    let to_surface = match handle.surface(&to.wanted, demand) {
        Ok(s) => s,
        Err(e) => {
            report.problems.push(Problem { path: format!("{}@{}", p.engine.id, to.wanted), message: e });
            return Err((format!("{} ref `{}` could not be read", p.engine.display, to.wanted), Some("see the problems listed".into())));
        }
    };
    let from_surface = match p.refs.from(p.engine) {
        Some(f) if f.wanted != to.wanted => match handle.surface(&f.wanted, demand) {
            Ok(s) => Some(s),
            Err(e) => {
                report.problems.push(Problem { path: format!("{}@{}", p.engine.id, f.wanted), message: e });
                None
            }
        },
        Some(_) => Some(to_surface.clone()),
        None => None,
    };
    Ok(DeploymentSurfaces { to: to_surface, from: from_surface, history: None })
}

/// The engine surfaces one deployment is checked against.
struct DeploymentSurfaces {
    to: Arc<EngineSurface>,
    from: Option<Arc<EngineSurface>>,
    /// Read only when the deployment names something the target does not know.
    history: Option<Arc<crate::history::ReleaseHistory>>,
}

impl DeploymentSurfaces {
    fn bump(&self) -> Bump<'_> {
        Bump { from: self.from.as_deref(), to: &self.to, history: self.history.as_deref() }
    }
}

/// The target trees rule evidence is read in: (engine id, wanted ref) → tree.
type RuleTrees = BTreeMap<(&'static str, String), Arc<RefTree>>;

/// One source index per rule tree, seeded with the results the fact cache
/// holds for that tree, and how many that was.
type RuleIndexes<'t> = BTreeMap<(&'static str, String), (crate::rules::SourceIndex<'t>, usize)>;

/// The target trees of the planned deployments, when there are rules to apply.
fn rule_trees(opts: &AuditOptions, planned: &[Planned], engines: &mut Engines) -> RuleTrees {
    let mut trees = RuleTrees::new();
    if opts.rules.is_empty() {
        return trees;
    }
    for p in planned {
        let Some(to) = p.refs.to(p.engine) else { continue };
        let key = (p.engine.id, to.wanted.clone());
        if trees.contains_key(&key) {
            continue;
        }
        if let Some(Ok(tree)) = engines.get_mut(p.engine).map(|h| h.tree(&to.wanted)) {
            trees.insert(key, tree);
        }
    }
    trees
}

fn rule_indexes<'t>(trees: &'t RuleTrees, engines: &Engines) -> RuleIndexes<'t> {
    trees
        .iter()
        .map(|(key, tree)| {
            let memo = engines.handles.get(key.0).map(|h| h.rule_memo(tree)).unwrap_or_default();
            let loaded = memo.len();
            (key.clone(), (crate::rules::SourceIndex::new(tree.tree.as_ref(), &tree.package_root).with_memo(memo), loaded))
        })
        .collect()
}

/// What reports show of a risk rule the audit applied.
fn rule_info(rule: &crate::rules::Rule) -> RuleInfo {
    RuleInfo {
        id: rule.spec.id.clone(),
        name: rule.spec.name.clone(),
        title: rule.spec.title.clone(),
        severity: rule.spec.severity,
        doc: rule.doc_path(),
        help: rule.spec.docs.clone(),
    }
}

/// For each deployment, the environment it shares with an earlier deployment
/// of the same file on the same refs (a script's `export` before several
/// launches, an override recipe's `backend.environment`), by byte offset: that
/// line is checked once, with the first deployment that sets it. Checked for
/// every launch, 1,000 exports before 1,000 launches made a million findings.
fn already_checked_common_env(planned: &[Planned]) -> Vec<HashSet<(String, usize)>> {
    // By the file the line is written in: a sourced file's exports are not the script's.
    let mut seen: HashSet<(&str, usize, Option<&str>, Option<&str>)> = HashSet::new();
    planned
        .iter()
        .map(|p| {
            let from = p.refs.from(p.engine).map(|r| r.wanted.as_str());
            let to = p.refs.to(p.engine).map(|r| r.wanted.as_str());
            p.dep
                .common_env
                .iter()
                .filter(|e| !seen.insert((e.name_span.path.as_str(), e.name_span.offset, from, to)))
                .map(|e| (e.name_span.path.clone(), e.name_span.offset))
                .collect()
        })
        .collect()
}

/// Mark the evidence of findings `findings[from..]` that names no engine yet as
/// read in `engine`'s source.
fn tag_engine(findings: &mut [Finding], from: usize, engine: &str) {
    for f in findings.iter_mut().skip(from) {
        for e in f.evidence.iter_mut().filter(|e| e.engine.is_none()) {
            e.engine = Some(engine.to_string());
        }
    }
}

/// The classes of `engine` whose members are read: its configuration class and
/// those its consumers use.
fn engine_classes(engine: Engine) -> Vec<(String, String)> {
    let mut classes: Vec<(String, String)> = engine.config_class().into_iter().collect();
    for link in profiles::CONSUMER_LINKS.iter().filter(|l| l.engine == engine.id) {
        classes.extend(link.class_demand());
    }
    classes.sort();
    classes.dedup();
    classes
}

/// The modules of `engine` its consumers import, at every consumer ref the
/// planned deployments install.
/// The engine modules the consumers of `engine` import, and for each module
/// only ever imported by name (`from m import a`), those names.
fn imported_modules(engines: &mut Engines, engine: Engine, planned: &[Planned]) -> (ImportedModules, Vec<Problem>) {
    let mut modules: BTreeMap<String, Option<BTreeSet<String>>> = BTreeMap::new();
    let mut problems = Vec::new();
    for link in profiles::CONSUMER_LINKS.iter().filter(|l| l.engine == engine.id) {
        let Some(consumer) = profiles::by_id(link.consumer) else { continue };
        let refs: BTreeSet<String> =
            planned.iter().filter(|p| p.engine.id == engine.id).filter_map(|p| p.refs.to(consumer).map(|d| d.wanted.clone())).collect();
        let Some(handle) = engines.get_mut(consumer) else { continue };
        for wanted in &refs {
            match handle.consumer_uses(wanted, link) {
                Ok(uses) => {
                    for u in uses.iter() {
                        let UseKind::Import { module, name, .. } = &u.kind else { continue };
                        let names = modules.entry(module.clone()).or_insert_with(|| Some(BTreeSet::new()));
                        match name.as_deref() {
                            Some(name) if name != "*" => {
                                if let Some(names) = names {
                                    names.insert(name.to_string());
                                }
                            }
                            // The module itself, or all of it: any successor may do.
                            _ => *names = None,
                        }
                    }
                }
                Err(e) => problems.push(Problem { path: format!("{}@{wanted}", consumer.id), message: e }),
            }
        }
    }
    let names = modules.iter().filter_map(|(m, names)| Some((m.clone(), names.clone()?))).collect();
    (ImportedModules { modules: modules.into_keys().collect(), names }, problems)
}

struct ImportedModules {
    modules: Vec<String>,
    names: BTreeMap<String, BTreeSet<String>>,
}

/// Every rule whose conditions hold and whose evidence is in the target's source.
fn apply_rules(
    rules: &[crate::rules::Rule],
    file: &RecipeFile,
    dep: &Deployment,
    bump: Bump,
    index: &crate::rules::SourceIndex,
    ref_name: &str,
    out: &mut Vec<Finding>,
) {
    let resolve = |name: &str| bump.to.resolve_flag(&check::flags::option_of(name));
    let is_switch = |name: &str| resolve(name).is_some_and(|f| f.is_switch());
    let option_of = |name: &str| {
        let option = check::flags::option_of(name);
        resolve(name).filter(|f| !f.names.contains(&option)).map(|f| f.canonical().to_string())
    };
    let facts = check::rules::deployment_facts(dep, &check::rules::EngineView { is_switch: &is_switch, option_of: &option_of });
    let version = check::pins::surface_version(bump.to);
    for rule in rules.iter().filter(|r| r.spec.engine == dep.engine) {
        for hit in crate::rules::evaluate_with(rule, &facts, index, ref_name, version.as_ref()) {
            out.push(check::rules::to_finding(hit, file, dep));
        }
    }
}
