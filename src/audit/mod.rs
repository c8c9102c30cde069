//! `audit`: recipes in, findings out. Derives each deployment's engine refs, reads
//! only the engine facts its recipes ask about, and runs every check.

mod engines;
pub mod refs;
mod rule_findings;

use crate::check::{self, consumer::Consumer, Bump};
use crate::codes::Code;
use crate::extract::{assemble::server_args_class, Demand, EnvReads};
use crate::extract::consumer::UseKind;
use crate::recipe::{Deployment, RecipeFile, RecipeKind};
use crate::report::{EvidenceRef, Finding, Location};
use crate::source::{Engine, OpenOptions};
use crate::surface::ExtractWarning;
use engines::EngineHandle;
use refs::{DerivedRef, Unresolved};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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
}

/// Where Dynamo's SGLang integration lives.
const DYNAMO_SGLANG_COMPONENT: &str = "dynamo.sglang";

/// Something that could not be read; the rest of the audit went on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// One engine bump the audit covered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct BumpSummary {
    pub engine: String,
    pub from: Option<String>,
    pub to: String,
    /// How the refs were found (`image lmsysorg/sglang:v0.5.12.post1`, `--to`).
    pub how: Vec<String>,
    pub deployments: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditReport {
    pub findings: Vec<Finding>,
    pub bumps: Vec<BumpSummary>,
    /// Info lines: recipes skipped (other backends), what was not checked and why.
    pub notes: Vec<String>,
    pub problems: Vec<Problem>,
    pub deployments_audited: usize,
    pub recipes: usize,
}

/// The refs one deployment is audited across.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
struct DeploymentRefs {
    sglang_from: Option<DerivedRef>,
    sglang_to: Option<DerivedRef>,
    dynamo_from: Option<DerivedRef>,
    dynamo_to: Option<DerivedRef>,
}

fn flag_ref(value: &Option<String>, flag: &str) -> Option<DerivedRef> {
    value.as_ref().map(|v| DerivedRef { wanted: v.clone(), how: flag.to_string() })
}

pub fn run(files: &[RecipeFile], opts: &AuditOptions) -> Result<AuditReport, miette::Report> {
    let mut report = AuditReport { recipes: files.len(), ..Default::default() };
    let mut sglang = match &opts.sglang {
        Some(spec) => Some(EngineHandle::open(Engine::Sglang, spec, opts.sglang_root.clone(), &opts.open)?),
        None => None,
    };
    let mut dynamo = match &opts.dynamo {
        Some(spec) => Some(EngineHandle::open(Engine::Dynamo, spec, opts.dynamo_root.clone(), &opts.open)?),
        None => None,
    };

    // 1. Which deployments, on which refs.
    let mut audited: Vec<(&RecipeFile, &Deployment, DeploymentRefs)> = Vec::new();
    for file in files {
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
            let refs = derive_refs(dep, opts, sglang.as_ref(), dynamo.as_ref(), &mut report.findings);
            audited.push((file, dep, refs));
        }
    }
    // Counted below: a deployment is audited once its target surface was read.
    // One whose engine ref or package cannot be read is only listed under
    // `problems`, so a run where nothing could be checked reports 0 (exit 2).

    // 2. Dynamo first: its imports decide which SGLang modules need symbols.
    let mut symbols_of: BTreeSet<String> = BTreeSet::new();
    if let Some(dynamo) = dynamo.as_mut() {
        let dynamo_refs: BTreeSet<String> = audited.iter().filter_map(|(_, _, r)| r.dynamo_to.as_ref().map(|d| d.wanted.clone())).collect();
        for wanted in dynamo_refs {
            match dynamo.consumer_uses(&wanted, DYNAMO_SGLANG_COMPONENT) {
                Ok(uses) => {
                    for u in uses {
                        if let UseKind::Import { module, .. } = &u.kind {
                            symbols_of.insert(module.clone());
                        }
                    }
                }
                Err(e) => report.problems.push(Problem { path: format!("dynamo@{wanted}"), message: e }),
            }
        }
    }
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
    let mut summaries: BTreeMap<(String, Option<String>, String), (BTreeSet<String>, usize)> = BTreeMap::new();
    let mut consumer_done: BTreeSet<(String, Option<String>, String)> = BTreeSet::new();
    let mut defaults_seen: BTreeSet<(String, String, Option<String>, String)> = BTreeSet::new();
    for (file, dep, refs) in &audited {
        let (Some(handle), Some(to)) = (sglang.as_mut(), &refs.sglang_to) else {
            report.notes.push(format!("{}: {}: no SGLang ref to audit against (no image and no --to)", file.path, dep.name));
            continue;
        };
        // Surfaces are extracted once per ref and shared.
        let to_surface = match handle.surface(&to.wanted, &sglang_demand) {
            Ok(s) => s,
            Err(e) => {
                report.problems.push(Problem { path: format!("sglang@{}", to.wanted), message: e });
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
        report.deployments_audited += 1;
        let bump = Bump { from: from_surface.as_deref(), to: &to_surface };
        let entry = summaries
            .entry(("sglang".into(), refs.sglang_from.as_ref().map(|r| r.wanted.clone()), to.wanted.clone()))
            .or_default();
        entry.0.extend(refs.sglang_from.iter().chain(std::iter::once(to)).map(|r| r.how.clone()));
        entry.1 += 1;

        check::flags::check_deployment(file, dep, bump, &mut report.findings);
        check::env::check_deployment(file, dep, bump, &mut report.findings);
        changed_defaults(file, dep, bump, &mut defaults_seen, &mut report.findings);
        if !opts.rules.is_empty() {
            match handle.tree(&to.wanted) {
                Ok(tree) => apply_rules(&opts.rules, file, dep, bump, &tree, &mut report.findings),
                Err(e) => report.problems.push(Problem { path: format!("sglang@{}", to.wanted), message: e }),
            }
        }

        let (Some(dynamo), Some(dto)) = (dynamo.as_mut(), &refs.dynamo_to) else { continue };
        let dentry = summaries
            .entry(("dynamo".into(), refs.dynamo_from.as_ref().map(|r| r.wanted.clone()), dto.wanted.clone()))
            .or_default();
        dentry.0.extend(refs.dynamo_from.iter().chain(std::iter::once(dto)).map(|r| r.how.clone()));
        dentry.1 += 1;
        let key = (dto.wanted.clone(), refs.sglang_from.as_ref().map(|r| r.wanted.clone()), to.wanted.clone());
        if !consumer_done.insert(key) {
            continue;
        }
        let dynamo_surface = match dynamo.surface(&dto.wanted, &dynamo_demand) {
            Ok(s) => s,
            Err(e) => {
                report.problems.push(Problem { path: format!("dynamo@{}", dto.wanted), message: e });
                continue;
            }
        };
        check::pins::check(&dynamo_surface, &to_surface, &mut report.findings);
        if let Ok(uses) = dynamo.consumer_uses(&dto.wanted, DYNAMO_SGLANG_COMPONENT) {
            let consumer = Consumer { uses, dynamo_ref: &dynamo_surface.ref_name };
            check::consumer::check(&consumer, bump, &mut report.findings);
        }
    }

    // 4. Master configs against the recipes they link.
    for master in files.iter().filter(|f| f.kind == RecipeKind::MasterConfig) {
        let Some(config) = &master.master else { continue };
        for entry in config.entries.iter().filter(|e| opts.master_key.as_ref().is_none_or(|k| *k == e.key.value)) {
            let linked: BTreeSet<&str> = entry.links.iter().filter_map(|l| l.recipe.as_deref()).collect();
            for recipe in files.iter().filter(|f| f.kind == RecipeKind::SrtSlurm) {
                if linked.iter().any(|l| recipe.path.ends_with(l)) {
                    check::consistency::check_entry(master, entry, recipe, &mut report.findings);
                }
            }
        }
    }

    for handle in [sglang.as_ref(), dynamo.as_ref()].into_iter().flatten() {
        report.problems.extend(handle.warnings().into_iter().map(|w: ExtractWarning| Problem { path: w.path, message: w.message }));
    }
    report.bumps = summaries
        .into_iter()
        .map(|((engine, from, to), (how, deployments))| BumpSummary { engine, from, to, how: how.into_iter().collect(), deployments })
        .collect();
    crate::report::finding::normalize(&mut report.findings);
    report.notes.sort();
    report.notes.dedup();
    report.problems.sort();
    report.problems.dedup();
    Ok(report)
}

fn derive_refs(
    dep: &Deployment,
    opts: &AuditOptions,
    sglang: Option<&EngineHandle>,
    dynamo: Option<&EngineHandle>,
    findings: &mut Vec<Finding>,
) -> DeploymentRefs {
    let mut refs = DeploymentRefs::default();
    let mut unresolved = |u: Unresolved, span: Option<&crate::recipe::Span>, subject: &str| {
        let at = span.map(Location::from_span).unwrap_or(Location { path: String::new(), line: 1, column: 1, offset: None, len: None });
        findings.push(Finding::new(Code::EA303, at, subject, u.message).deployment(&dep.name));
    };
    refs.sglang_from = flag_ref(&opts.from, "--from").or_else(|| {
        let repo = sglang.and_then(|h| h.source.repo())?;
        match refs::sglang_ref(dep, repo) {
            Ok(r) => r,
            Err(u) => {
                unresolved(u, dep.container.as_ref().map(|c| &c.span), "model.container");
                None
            }
        }
    });
    refs.sglang_to = flag_ref(&opts.to, "--to").or_else(|| refs.sglang_from.clone());
    if sglang.is_some_and(|h| h.source.repo().is_none()) {
        // A plain folder has one tree: audit against it.
        refs.sglang_to.get_or_insert(DerivedRef { wanted: "(directory)".into(), how: "--sglang folder".into() });
    }
    refs.dynamo_from = flag_ref(&opts.dynamo_from, "--dynamo-from").or_else(|| {
        let repo = dynamo.and_then(|h| h.source.repo())?;
        match refs::dynamo_ref(dep, repo) {
            Ok(r) => r,
            Err(u) => {
                unresolved(u, dep.dynamo.as_ref().map(|d| &d.raw.span), "dynamo");
                None
            }
        }
    });
    refs.dynamo_to = flag_ref(&opts.dynamo_to, "--dynamo-to").or_else(|| refs.dynamo_from.clone());
    if dynamo.is_some_and(|h| h.source.repo().is_none()) {
        refs.dynamo_to.get_or_insert(DerivedRef { wanted: "(directory)".into(), how: "--dynamo folder".into() });
    }
    refs
}

/// Every rule whose conditions hold and whose evidence is in the target's source.
fn apply_rules(rules: &[crate::rules::Rule], file: &RecipeFile, dep: &Deployment, bump: Bump, tree: &engines::RefTree, out: &mut Vec<Finding>) {
    let is_switch = |name: &str| bump.to.flag(&check::flags::option_of(name)).is_some_and(|f| f.is_switch());
    let facts = rule_findings::deployment_facts(dep, &is_switch);
    let version = check::pins::surface_version(bump.to);
    for rule in rules {
        for hit in crate::rules::evaluate(rule, &facts, tree.tree.as_ref(), &tree.package_root, &tree.ref_name, version.as_ref()) {
            out.push(rule_findings::to_finding(hit, file, dep));
        }
    }
}

/// A recipe family: the folder a recipe sits in (recipes of one benchmark family
/// share a folder in srt-slurm layouts).
fn family_of(path: &str) -> String {
    std::path::Path::new(path).parent().map(|p| p.display().to_string()).unwrap_or_default()
}

/// EA007, once per recipe family, flag and bump.
fn changed_defaults(
    file: &RecipeFile,
    dep: &Deployment,
    bump: Bump,
    seen: &mut BTreeSet<(String, String, Option<String>, String)>,
    out: &mut Vec<Finding>,
) {
    let family = family_of(&file.path);
    for change in check::flags::changed_defaults(dep, bump) {
        let key = (family.clone(), change.flag.canonical().to_string(), bump.from_ref().map(str::to_string), bump.to_ref().to_string());
        if !seen.insert(key) {
            continue;
        }
        let at = dep
            .roles
            .first()
            .and_then(|r| r.span.as_ref())
            .map(Location::from_span)
            .unwrap_or(Location { path: file.path.clone(), line: 1, column: 1, offset: None, len: None });
        let show = |v: &crate::surface::Known<serde_json::Value>| serde_json::to_string(v).unwrap_or_default();
        out.push(
            Finding::new(
                Code::EA007,
                at,
                change.flag.canonical().trim_start_matches("--"),
                format!(
                    "`{}` is not set by recipes in `{family}`, and its default changed {}: {} → {}.",
                    change.flag.canonical(),
                    bump.label(),
                    show(change.from),
                    show(change.to)
                ),
            )
            .deployment(&dep.name)
            .evidence(EvidenceRef::new(&change.flag.evidence, bump.to_ref())),
        );
    }
}
