//! `audit`: recipes in, findings out. Derives each deployment's engine refs, reads
//! only the engine facts its recipes ask about, and runs every check.

mod deployment_refs;
mod engines;
mod master;
pub mod refs;

use crate::check::{self, consumer::Consumer, Bump};
use crate::extract::consumer::UseKind;
use crate::extract::{assemble::server_args_class, Demand, EnvReads};
pub use crate::finding::{AuditReport, BumpSummary, Problem, RuleInfo};
use crate::finding::{Finding, Location};
use crate::recipe::{Deployment, RecipeFile, RecipeKind};
use crate::source::OpenOptions;
use crate::surface::{EngineSurface, ExtractWarning};
use deployment_refs::{derive_refs, DeploymentRefs};
use engines::EngineHandle;
pub use engines::Engines;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    pub sglang: Option<String>,
    pub dynamo: Option<String>,
    pub sglang_root: Option<String>,
    pub dynamo_root: Option<String>,
    pub open: OpenOptions,
    pub from: Option<String>,
    pub to: Option<String>,
    pub dynamo_from: Option<String>,
    pub dynamo_to: Option<String>,
    /// Only this master-config key's links are checked (EA301/EA302).
    pub master_key: Option<String>,
    /// Risk rules to apply (built-in plus `--rules DIR`).
    pub rules: Vec<crate::rules::Rule>,
    /// For `pr`: each recipe's deployments as they were before the change, by recipe
    /// path. A deployment found here (same name and variant) is audited from the
    /// engine refs of its old version to those of its own image and `dynamo:` spec;
    /// `--from`/`--to`/`--dynamo-from`/`--dynamo-to` still win.
    pub baseline: BTreeMap<String, Vec<Deployment>>,
}

/// Where Dynamo's SGLang integration lives.
const DYNAMO_SGLANG_COMPONENT: &str = "dynamo.sglang";

/// What reports show of a risk rule the audit applied.
fn rule_info(rule: &crate::rules::Rule) -> RuleInfo {
    RuleInfo {
        id: rule.spec.id.clone(),
        name: rule.spec.name.clone(),
        title: rule.spec.title.clone(),
        severity: rule.spec.severity,
        doc: rule.doc_path(),
    }
}

/// For each deployment, the environment it shares with an earlier deployment
/// of the same file on the same refs (a script's `export` before several
/// launches, an override recipe's `backend.environment`), by byte offset: that
/// line is checked once, with the first deployment that sets it. Checked for
/// every launch, 1,000 exports before 1,000 launches made a million findings.
fn already_checked_common_env(audited: &[(&RecipeFile, &Deployment, DeploymentRefs)]) -> Vec<std::collections::HashSet<usize>> {
    let mut seen: std::collections::HashSet<(&str, usize, Option<&str>, Option<&str>)> = Default::default();
    audited
        .iter()
        .map(|(file, dep, refs)| {
            let from = refs.sglang_from.as_ref().map(|r| r.wanted.as_str());
            let to = refs.sglang_to.as_ref().map(|r| r.wanted.as_str());
            dep.common_env
                .iter()
                .map(|e| e.name_span.offset)
                .filter(|&offset| !seen.insert((file.path.as_str(), offset, from, to)))
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

pub fn run(files: &[RecipeFile], opts: &AuditOptions) -> Result<AuditReport, miette::Report> {
    run_with(files, opts, &mut Engines::open(opts)?)
}

/// [`run`] over engines already opened from `opts`.
pub fn run_with(files: &[RecipeFile], opts: &AuditOptions, engines: &mut Engines) -> Result<AuditReport, miette::Report> {
    let mut report = AuditReport {
        recipes: files.len(),
        rules: opts.rules.iter().map(rule_info).collect(),
        sources: files.iter().map(|f| (f.path.clone(), f.text.clone())).collect(),
        ..Default::default()
    };
    let Engines { sglang, dynamo } = engines;

    // 1. Which deployments, on which refs.
    let mut audited: Vec<(&RecipeFile, &Deployment, DeploymentRefs)> = Vec::new();
    for file in files {
        report.findings.extend(check::duplicates::findings(file));
        for note in &file.notes {
            // Keep the line: a note about a value that could not be read must say where.
            let at = match &note.span {
                Some(span) => format!("{}:{}:{}", file.path, span.line, span.column),
                None => file.path.clone(),
            };
            report.notes.push(format!("{at}: {}", note.message));
        }
        match &file.kind {
            RecipeKind::SrtSlurm | RecipeKind::LaunchScript => {}
            RecipeKind::Other { backend: Some(b) } => {
                report.notes.push(format!("{}: skipped, a recipe for the {b} backend", file.path));
                continue;
            }
            RecipeKind::Other { backend: None } | RecipeKind::MasterConfig => continue,
        }
        for dep in &file.deployments {
            let base = opts.baseline.get(&file.path).and_then(|old| old.iter().find(|b| b.name == dep.name && b.variant == dep.variant));
            let refs = derive_refs(dep, base, opts, sglang.as_ref(), dynamo.as_ref(), &mut report.findings, &mut report.notes);
            audited.push((file, dep, refs));
        }
    }
    // Counted below: a deployment is audited once its target surface was read.
    // One whose engine ref or package cannot be read is only listed under
    // `problems`, so a run where nothing could be checked reports 0 (exit 2).

    // 2. Dynamo's imports decide which SGLang modules need symbols; the SGLang
    // trees those symbols are read from load meanwhile.
    let sglang_refs: BTreeSet<String> =
        audited.iter().flat_map(|(_, _, r)| r.sglang_to.iter().chain(r.sglang_from.iter()).map(|d| d.wanted.clone())).collect();
    let dynamo_refs: BTreeSet<String> = audited.iter().filter_map(|(_, _, r)| r.dynamo_to.as_ref().map(|d| d.wanted.clone())).collect();
    let (symbols_of, ()) = rayon::join(
        || match dynamo.as_mut() {
            Some(dynamo) => imported_modules(dynamo, &dynamo_refs),
            None => Default::default(),
        },
        || {
            if let Some(handle) = sglang.as_mut() {
                // Errors are kept in the handle and reported where the tree is used.
                sglang_refs.iter().for_each(|w| drop(handle.tree(w)));
            }
        },
    );
    let (symbols_of, problems) = symbols_of;
    report.problems.extend(problems);
    let env_names: BTreeSet<String> = audited
        .iter()
        .flat_map(|(_, dep, _)| check::env::env_uses(dep).into_iter().map(|(_, u)| u.name.clone()))
        .filter(|n| check::env::is_sglang_env(n))
        .collect();
    let sglang_demand = Demand {
        flags: true,
        env: true,
        env_reads: EnvReads::Names(env_names.into_iter().collect()),
        symbols_of: symbols_of.into_iter().collect(),
        classes: vec![server_args_class()],
        metadata: true,
    };
    let dynamo_demand = Demand { metadata: true, ..Demand::default() };

    // 3. Per deployment checks.
    // Dynamo findings are computed once per (Dynamo, SGLang from, SGLang to); every
    // deployment sharing that key is affected by them. Bumps are keyed alike:
    // (engine, from, to).
    type ConsumerKey = (String, Option<String>, String);
    let mut summaries: BTreeMap<ConsumerKey, (BTreeSet<String>, usize)> = BTreeMap::new();
    let mut consumer_ranges: Vec<(ConsumerKey, std::ops::Range<usize>)> = Vec::new();
    let mut consumer_places: BTreeMap<ConsumerKey, Vec<Location>> = BTreeMap::new();
    let mut defaults_seen: BTreeSet<(String, String, Option<String>, String)> = BTreeSet::new();
    // Every SGLang ref the deployments need, extracted in parallel up front.
    if let Some(handle) = sglang.as_mut() {
        let targets: BTreeSet<String> = audited.iter().filter_map(|(_, _, r)| r.sglang_to.as_ref().map(|d| d.wanted.clone())).collect();
        let sources: BTreeSet<String> = audited.iter().filter_map(|(_, _, r)| r.sglang_from.as_ref().map(|d| d.wanted.clone())).collect();
        let source_demand = engines::source_demand(handle, &sglang_demand, &targets);
        let wanted: Vec<(String, Demand)> = targets
            .iter()
            .map(|w| (w.clone(), sglang_demand.clone()))
            .chain(sources.difference(&targets).map(|w| (w.clone(), source_demand.clone())))
            .collect();
        handle.prefetch_surfaces(&wanted);
    }
    // Rule evidence: one source index per target tree, shared by every rule and
    // deployment, seeded with the results cached for that tree.
    let rule_trees: BTreeMap<String, std::sync::Arc<engines::RefTree>> = match sglang.as_mut() {
        Some(handle) if !opts.rules.is_empty() => audited
            .iter()
            .filter_map(|(_, _, r)| r.sglang_to.as_ref())
            .filter_map(|to| handle.tree(&to.wanted).ok().map(|t| (to.wanted.clone(), t)))
            .collect(),
        _ => BTreeMap::new(),
    };
    let rule_indexes: BTreeMap<&str, (crate::rules::SourceIndex, usize)> = rule_trees
        .iter()
        .map(|(wanted, t)| {
            let memo = sglang.as_ref().map(|h| h.rule_memo(t)).unwrap_or_default();
            let loaded = memo.len();
            (wanted.as_str(), (crate::rules::SourceIndex::new(t.tree.as_ref(), &t.package_root).with_memo(memo), loaded))
        })
        .collect();

    let span = crate::trace::span(|| "audit: per-deployment checks".into());
    let mut audited_paths: BTreeSet<&str> = BTreeSet::new();
    // Each deployment's SGLang surfaces, extracted once per ref and shared. A ref
    // that cannot be read is a problem, and its deployments are not audited.
    let mut surfaces: Vec<Option<DeploymentSurfaces>> = Vec::with_capacity(audited.len());
    for (file, dep, refs) in &audited {
        let (Some(handle), Some(to)) = (sglang.as_mut(), &refs.sglang_to) else {
            report.notes.push(format!("{}: {}: no SGLang ref to audit against (no image and no --to)", file.path, dep.name));
            surfaces.push(None);
            continue;
        };
        let to_surface = match handle.surface(&to.wanted, &sglang_demand) {
            Ok(s) => s,
            Err(e) => {
                report.problems.push(Problem { path: format!("sglang@{}", to.wanted), message: e });
                surfaces.push(None);
                continue;
            }
        };
        let from_surface = match &refs.sglang_from {
            Some(f) if f.wanted != to.wanted => match handle.surface(&f.wanted, &sglang_demand) {
                Ok(s) => Some(s),
                Err(e) => {
                    report.problems.push(Problem { path: format!("sglang@{}", f.wanted), message: e });
                    None
                }
            },
            Some(_) => Some(to_surface.clone()),
            None => None,
        };
        surfaces.push(Some(DeploymentSurfaces { to: to_surface, from: from_surface }));
    }
    // The flag and env checks and the changed defaults read only one recipe and
    // the shared surfaces: they run in parallel, and are emitted below in
    // deployment order (the output does not depend on the thread count).
    // Changed defaults are a property of the pair of releases, shared by the
    // deployments that bump between them (keyed by the surfaces' addresses).
    let pair_key =
        |bump: &check::Bump| bump.from.map(|from| (from as *const EngineSurface as usize, bump.to as *const EngineSurface as usize));
    let mut pair_defaults: HashMap<(usize, usize), Vec<check::flags::DefaultChange>> = HashMap::new();
    for bump in surfaces.iter().flatten().map(DeploymentSurfaces::bump) {
        if let (Some(key), Some(from)) = (pair_key(&bump), bump.from) {
            pair_defaults.entry(key).or_insert_with(|| check::flags::default_changes(from, bump.to));
        }
    }
    let shared_env = already_checked_common_env(&audited);
    let checked: Vec<Option<(Vec<Finding>, Vec<check::flags::DefaultChange>)>> = audited
        .par_iter()
        .zip(&surfaces)
        .zip(&shared_env)
        .map(|(((file, dep, _), s), seen)| {
            let bump = s.as_ref()?.bump();
            let mut found = Vec::new();
            check::flags::check_deployment(file, dep, bump, &mut found);
            check::env::check_deployment(file, dep, bump, seen, &mut found);
            let pair = pair_key(&bump).and_then(|k| pair_defaults.get(&k)).map_or(&[][..], Vec::as_slice);
            Some((found, check::flags::changed_defaults(dep, bump, pair)))
        })
        .collect();
    for (((file, dep, refs), s), checked) in audited.iter().zip(&surfaces).zip(checked) {
        let (Some(handle), Some(to), Some(s), Some((found, defaults))) = (sglang.as_mut(), &refs.sglang_to, s, checked) else { continue };
        report.deployments_audited += 1;
        audited_paths.insert(file.path.as_str());
        let bump = s.bump();
        let to_surface = &s.to;
        let entry = summaries.entry(("sglang".into(), refs.sglang_from.as_ref().map(|r| r.wanted.clone()), to.wanted.clone())).or_default();
        entry.0.extend(refs.sglang_from.iter().chain(std::iter::once(to)).map(|r| r.how.clone()));
        entry.1 += 1;

        let first = report.findings.len();
        report.findings.extend(found);
        check::defaults::changed_defaults(file, dep, bump, defaults, &mut defaults_seen, &mut report.findings);
        if !opts.rules.is_empty() {
            match (rule_indexes.get(to.wanted.as_str()), &rule_trees.get(&to.wanted)) {
                (Some((index, _)), Some(tree)) => apply_rules(&opts.rules, file, dep, bump, index, &tree.ref_name, &mut report.findings),
                _ => {
                    if let Err(e) = handle.tree(&to.wanted) {
                        report.problems.push(Problem { path: format!("sglang@{}", to.wanted), message: e });
                    }
                }
            }
        }
        tag_engine(&mut report.findings, first, "sglang");

        let (Some(dynamo), Some(dto)) = (dynamo.as_mut(), &refs.dynamo_to) else { continue };
        let dentry =
            summaries.entry(("dynamo".into(), refs.dynamo_from.as_ref().map(|r| r.wanted.clone()), dto.wanted.clone())).or_default();
        dentry.0.extend(refs.dynamo_from.iter().chain(std::iter::once(dto)).map(|r| r.how.clone()));
        dentry.1 += 1;
        let key = (dto.wanted.clone(), refs.sglang_from.as_ref().map(|r| r.wanted.clone()), to.wanted.clone());
        let seen = consumer_places.contains_key(&key);
        consumer_places.entry(key.clone()).or_default().extend(dep.dynamo.as_ref().map(|d| Location::from_span(&d.raw.span)));
        if seen {
            continue;
        }
        let first = report.findings.len();
        let dynamo_surface = match dynamo.surface(&dto.wanted, &dynamo_demand) {
            Ok(s) => s,
            Err(e) => {
                report.problems.push(Problem { path: format!("dynamo@{}", dto.wanted), message: e });
                continue;
            }
        };
        check::pins::check(&dynamo_surface, to_surface, &mut report.findings);
        tag_engine(&mut report.findings, first, "dynamo");
        if let Ok(uses) = dynamo.consumer_uses(&dto.wanted, DYNAMO_SGLANG_COMPONENT) {
            let consumer = Consumer { uses, dynamo_ref: &dynamo_surface.ref_name };
            check::consumer::check(&consumer, bump, &mut report.findings);
        }
        consumer_ranges.push((key, first..report.findings.len()));
    }
    for (key, range) in consumer_ranges {
        let places = &consumer_places[&key];
        for f in &mut report.findings[range] {
            f.affects.extend(places.iter().cloned());
        }
    }

    drop(span);
    if let Some(handle) = sglang.as_ref() {
        for (wanted, (index, loaded)) in &rule_indexes {
            handle.store_rule_memo(&rule_trees[*wanted], *loaded, &index.memo());
        }
    }

    // 4. Master configs against the recipes they link.
    master::check_masters(files, opts, &audited_paths, &mut report);

    for handle in [sglang.as_ref(), dynamo.as_ref()].into_iter().flatten() {
        report.problems.extend(handle.warnings().into_iter().map(|w: ExtractWarning| Problem { path: w.path, message: w.message }));
    }
    report.bumps = summaries
        .into_iter()
        .map(|((engine, from, to), (how, deployments))| BumpSummary { engine, from, to, how: how.into_iter().collect(), deployments })
        .collect();
    crate::trace::summary("audit");
    crate::finding::normalize(&mut report.findings);
    report.notes.sort();
    report.notes.dedup();
    report.problems.sort();
    report.problems.dedup();
    Ok(report)
}

/// The SGLang surfaces one deployment is checked against.
struct DeploymentSurfaces {
    to: std::sync::Arc<crate::surface::EngineSurface>,
    from: Option<std::sync::Arc<crate::surface::EngineSurface>>,
}

impl DeploymentSurfaces {
    fn bump(&self) -> Bump<'_> {
        Bump { from: self.from.as_deref(), to: &self.to }
    }
}

/// The SGLang modules Dynamo's SGLang component imports at each of `refs`.
fn imported_modules(dynamo: &mut EngineHandle, refs: &BTreeSet<String>) -> (BTreeSet<String>, Vec<Problem>) {
    let mut modules = BTreeSet::new();
    let mut problems = Vec::new();
    for wanted in refs {
        match dynamo.consumer_uses(wanted, DYNAMO_SGLANG_COMPONENT) {
            Ok(uses) => modules.extend(uses.iter().filter_map(|u| match &u.kind {
                UseKind::Import { module, .. } => Some(module.clone()),
                UseKind::Attribute { .. } => None,
            })),
            Err(e) => problems.push(Problem { path: format!("dynamo@{wanted}"), message: e }),
        }
    }
    (modules, problems)
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
    let is_switch = |name: &str| bump.to.flag(&check::flags::option_of(name)).is_some_and(|f| f.is_switch());
    let facts = check::rules::deployment_facts(dep, &is_switch);
    let version = check::pins::surface_version(bump.to);
    for rule in rules {
        for hit in crate::rules::evaluate_with(rule, &facts, index, ref_name, version.as_ref()) {
            out.push(check::rules::to_finding(hit, file, dep));
        }
    }
}
