//! `engine-audit pr`: the CI gate on a recipes PR.
//!
//! Reads the recipes repo at the PR's base and head straight from git objects (no
//! checkout), finds the recipe files and master-config entries the PR adds or
//! changes, and audits each changed deployment from the engine refs its base
//! version ran (image tag, `dynamo:` spec) to those its head version names. A
//! recipe whose refs did not move is audited against its unchanged target, so a
//! flag-only change is checked too. Master-config entries are checked against the
//! recipes they link when either side changed. Unchanged files are not audited.
//!
//! The config (`.engine-audit.yaml`) and the risk rules in its `rules` folders
//! are read from the base commit: a PR cannot loosen its own gate.

use super::audit::{fail_on, policy};
use super::engines::audit_sources;
use super::output::emit;
use crate::audit::{self, AuditOptions, AuditReport, Problem};
use crate::cli::{PrArgs, PrFormat};
use crate::config::{Config, CONFIG_FILE_NAME};
use crate::gate::{exit_code, gate};
use crate::recipe::{self, Deployment, LinkMapping, MasterEntry, RecipeError, RecipeFile, RecipeKind};
use crate::report::{Finding, Format, RenderOptions};
use crate::source::{EngineRepo, GitTree, OpenOptions, Tree};
use crate::suppress;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn run(args: PrArgs) -> miette::Result<ExitCode> {
    let formats = formats(&args)?;
    let snaps = Snapshots::open(&args.repo, &args.base, &args.head)?;
    let config = match &args.gate.config {
        Some(path) => Config::load(path)?,
        None => snaps.base_config(&args.repo)?,
    };
    let mapping = config.link_mapping(args.recipes_dir.as_deref());
    let change = Change::read(&snaps, &config.file.recipe_roots, &mapping);

    let base = audit_sources(&args.sources, &config);
    if !change.recipes.is_empty() && !base.has_sources() {
        return Err(miette::miette!(
            help = "pass --sglang or --vllm PATH|URL (and --dynamo PATH|URL), or set them in the base commit's .engine-audit.yaml",
            "no engine source given"
        ));
    }
    // The repo's own rules, like its config, come from the base commit: a PR
    // cannot edit the rules that gate it. A config given with --config is the
    // CI's own file, and its rule folders are read from disk with it.
    let rules = match &args.gate.config {
        Some(_) => crate::rules::load_rules(&config.rule_dirs(&args.rules)),
        None => crate::rules::load_rules_with(&args.rules, snaps.base_rules(&config.file.rules)?),
    };
    let opts = AuditOptions {
        rules: rules.map_err(miette::Report::new)?,
        baseline: change.baseline.clone(),
        allow_unaudited: super::audit::allow_unaudited(&args.gate, &config),
        ..base
    }
    .with_own_refs(&crate::profiles::VLLM, None, args.vllm_to.clone())
    .with_own_refs(&crate::profiles::ATOM, None, args.atom_to.clone())
    .with_own_refs(&crate::profiles::TRTLLM, None, args.trtllm_to.clone())
    .with_server_refs(None, args.to.clone())
    .map_err(|e| {
        miette::miette!(
            help =
                "name vLLM's target with --vllm-to, ATOM's with --atom-to and TensorRT-LLM's with --trtllm-to, or pass one engine's source",
            "{e}"
        )
    })?
    .with_refs(&crate::profiles::DYNAMO, None, args.dynamo_to.clone());
    let mut result = if change.recipes.is_empty() { AuditReport::default() } else { audit::run(&change.recipes, &opts)? };
    result.findings.extend(change.findings.iter().cloned());
    crate::finding::normalize(&mut result.findings);
    result.problems.extend(change.problems.iter().cloned());
    result.problems.sort();
    result.notes.push(change.summary(&snaps));
    result.notes.sort();
    let read: Vec<RecipeFile> = change.recipes.iter().chain(change.others.iter()).cloned().collect();
    suppress::apply(&mut result, &read, &policy(&args.gate, &config));

    let title = format!("engine-audit: recipes {}..{}", short(&snaps.base_commit), short(&snaps.head_commit));
    // Paths are read from git: already relative to the repository.
    let render_opts =
        super::ci::render_options(RenderOptions { lang: args.lang.lang(), ..RenderOptions::default() }, &config, &args.ci, false)
            .with_engine_sources(&opts.sources);
    if args.new_only {
        super::pr_new::keep_new(&mut result, &change.base_files, &change.recipes, &opts, &render_opts)?;
    }
    super::ci::baselines(&mut result, &args.ci, &render_opts)?;
    // Annotations go to stdout whenever a github report is made (with
    // `--output-dir` they always are: the action's one run).
    let annotated = args.output_dir.is_some() || formats[0] == PrFormat::Github;
    match &args.output_dir {
        None => emit(&render(&result, formats[0], &render_opts)),
        Some(dir) => {
            write_files(&result, &formats, dir, &render_opts)?;
            emit(&render(&result, PrFormat::Github, &render_opts));
        }
    }
    if args.ci.statistics {
        eprint!("{}", super::ci::statistics(&result));
    }
    let mut markdown = format!("## {title}\n\n{}", Format::Markdown.render(&result, &render_opts));
    // Annotations grouped to fit GitHub's caps: the summary says so, above the full tables.
    if let Some(line) = crate::report::annotation_summary(&result, &render_opts).filter(|_| annotated) {
        markdown = markdown.replacen("\n\n", &format!("\n\n> {line}\n\n"), 1);
    }
    if let Some(summary) =
        args.summary.clone().or_else(|| std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()).map(Into::into))
    {
        append(&summary, &markdown)?;
    }
    // A change that touches no recipe has nothing to audit and passes; one whose
    // recipes could not be audited does not.
    if change.recipes.is_empty() {
        return Ok(gate(&result, fail_on(&args.gate, &config)));
    }
    Ok(exit_code(&result, fail_on(&args.gate, &config)))
}

/// The formats asked, deduplicated in the order given. Several are written to
/// files, so they need `--output-dir`.
fn formats(args: &PrArgs) -> miette::Result<Vec<PrFormat>> {
    let mut formats: Vec<PrFormat> = Vec::new();
    for f in &args.format {
        if !formats.contains(f) {
            formats.push(*f);
        }
    }
    if formats.is_empty() {
        formats.push(PrFormat::Github);
    }
    if formats.len() > 1 && args.output_dir.is_none() {
        return Err(miette::miette!(
            help = "add --output-dir DIR: each format goes to its own file there, and the annotations to stdout",
            "several formats ({}) need --output-dir",
            formats.iter().map(|f| f.report_format().file_name()).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(formats)
}

/// What `pr` prints for one format (colour only for text on a terminal).
fn render(report: &AuditReport, format: PrFormat, opts: &RenderOptions) -> String {
    match format {
        PrFormat::Text => Format::Text.render(report, &RenderOptions { color: super::audit::use_color(), ..opts.clone() }),
        other => other.report_format().render(report, opts),
    }
}

/// `--output-dir`: one file per format, all from this one audit (no colour in files).
fn write_files(report: &AuditReport, formats: &[PrFormat], dir: &Path, opts: &RenderOptions) -> miette::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| miette::miette!(help = "pass --output-dir a folder that can be created", "cannot create {}: {e}", dir.display()))?;
    for format in formats.iter().map(|f| f.report_format()) {
        let path = dir.join(format.file_name());
        std::fs::write(&path, format.render(report, opts)).map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Append to the job summary (GitHub appends every step's part).
fn append(path: &Path, text: &str) -> miette::Result<()> {
    let io = |e: std::io::Error| miette::miette!("cannot write the summary to {}: {e}", path.display());
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The recipes repository at the PR's base and head commits.
struct Snapshots {
    base: GitTree,
    head: GitTree,
    base_commit: String,
    head_commit: String,
}

impl Snapshots {
    fn open(repo: &Path, base: &str, head: &str) -> miette::Result<Snapshots> {
        let spec = repo.to_str().ok_or_else(|| miette::miette!("{}: the repo path is not UTF-8", repo.display()))?;
        // Local only: the recipes repo is never fetched.
        let engine_repo = EngineRepo::open(spec, &OpenOptions { offline: true, cache_dir: None, ..Default::default() })?;
        let base_commit = commit_of(&engine_repo, base)?;
        let head_commit = commit_of(&engine_repo, head)?;
        let tree = |commit: &str| engine_repo.resolve(commit).and_then(|r| engine_repo.tree_at(&r));
        Ok(Snapshots { base: tree(&base_commit)?, head: tree(&head_commit)?, base_commit, head_commit })
    }

    /// `.engine-audit.yaml` at the base commit's root; defaults when there is none.
    fn base_config(&self, repo: &Path) -> miette::Result<Config> {
        if !self.base.contains(CONFIG_FILE_NAME) {
            return Ok(Config { root: repo.to_path_buf(), ..Config::default() });
        }
        let text = self.base.read_text_limited(CONFIG_FILE_NAME, recipe::MAX_RECIPE_BYTES)?;
        let label = format!("{CONFIG_FILE_NAME} @ {}", short(&self.base_commit));
        Ok(Config::from_text(&text, Path::new(&label), repo.to_path_buf())?)
    }
}

impl Snapshots {
    /// The rule files of the config's `rules` folders (relative to the repo
    /// root) at the base commit, as `load_rules` reads a folder: its own
    /// `*.yaml`/`*.yml` files, sorted, not its subfolders.
    fn base_rules(&self, dirs: &[String]) -> Result<Vec<(String, crate::rules::RuleOrigin)>, crate::rules::RuleError> {
        let label = short(&self.base_commit);
        let mut out = Vec::new();
        for dir in dirs {
            let dir = dir.trim_start_matches("./").trim_end_matches('/');
            let prefix = if dir.is_empty() || dir == "." { String::new() } else { format!("{dir}/") };
            let mut files: Vec<&str> = self
                .base
                .entries()
                .iter()
                .map(|e| e.path.as_str())
                .filter(|p| p.strip_prefix(prefix.as_str()).is_some_and(|name| !name.contains('/')))
                .filter(|p| crate::rules::is_rule_file(Path::new(p)))
                .collect();
            let is_folder = self.base.entries().iter().any(|e| e.path.starts_with(prefix.as_str()));
            if !is_folder {
                return Err(crate::rules::RuleError::Io {
                    path: format!("{dir} @ {label}"),
                    message: format!("`rules: [{dir}]` in {CONFIG_FILE_NAME} names no folder at the base commit (rules are read from there, as the config is)"),
                });
            }
            files.sort_unstable();
            for path in files {
                let text = self
                    .base
                    .read_text_limited(path, recipe::MAX_RECIPE_BYTES)
                    .map_err(|e| crate::rules::RuleError::Io { path: format!("{path} @ {label}"), message: source_reason(path, &e) })?;
                out.push((text, crate::rules::RuleOrigin::File(format!("{path} @ {label}").into())));
            }
        }
        Ok(out)
    }
}

/// A git revision (sha, branch, tag, `origin/main`, `HEAD~1`) to its commit id.
fn commit_of(repo: &EngineRepo, rev: &str) -> miette::Result<String> {
    repo.resolve_revision(rev)?.ok_or_else(|| {
        miette::miette!(help = "pass a commit sha, branch or tag of the recipes repo", "{}: `{rev}` names no commit", repo.spec)
    })
}

/// What a PR changed, read at head (and base, for the baseline).
struct Change {
    /// Changed recipe files (not master configs), at head.
    recipes: Vec<RecipeFile>,
    /// Their base versions' deployments, for recipes that existed at base.
    baseline: BTreeMap<String, Vec<Deployment>>,
    /// Master configs and linked recipes read for the consistency checks.
    others: Vec<RecipeFile>,
    /// The base versions of the changed recipes that existed at base (`--new-only`).
    base_files: Vec<RecipeFile>,
    /// EA301/EA302 between changed master entries or changed recipes and the
    /// other side, and EA305 for what the change touched that cannot be read.
    findings: Vec<Finding>,
    changed_entries: usize,
    removed: usize,
    problems: Vec<Problem>,
}

impl Change {
    fn read(snaps: &Snapshots, roots: &[String], mapping: &LinkMapping) -> Change {
        let mut change = Change {
            recipes: Vec::new(),
            baseline: BTreeMap::new(),
            others: Vec::new(),
            base_files: Vec::new(),
            findings: Vec::new(),
            changed_entries: 0,
            removed: 0,
            problems: Vec::new(),
        };
        let roots: Vec<String> = roots.iter().map(|r| r.trim_start_matches("./").trim_end_matches('/').to_string()).collect();
        let changed: Vec<&str> = changed_paths(&snaps.base, &snaps.head).into_iter().filter(|p| is_candidate(p, &roots)).collect();
        change.removed = snaps.base.entries().iter().filter(|e| is_candidate(&e.path, &roots) && !snaps.head.contains(&e.path)).count();
        // A recipe the PR adds as a symlink runs whatever it points at: named, never followed.
        for path in snaps.head.symlinks().iter().filter(|p| is_candidate(p, &roots) && !snaps.base.symlinks().contains(p)) {
            let error = RecipeError::Io { path: path.clone(), message: "a symlink in the recipes repository; not followed".into() };
            change.findings.push(crate::check::unreadable::unreadable(&error));
        }
        let mut masters: Vec<(RecipeFile, Option<RecipeFile>)> = Vec::new();
        for path in &changed {
            let Some(head) = change.load(&snaps.head, path, mapping, Touched::Yes) else { continue };
            let base = snaps.base.contains(path).then(|| load_quietly(&snaps.base, path, mapping)).flatten();
            if head.kind == RecipeKind::MasterConfig {
                masters.push((head, base));
                continue;
            }
            if let Some(base) = base {
                change.baseline.insert(path.to_string(), base.deployments.clone());
                change.base_files.push(base);
            }
            change.recipes.push(head);
        }
        // Unchanged master configs still name the images changed recipes must run.
        for entry in snaps.head.entries().iter().filter(|e| is_master_name(&e.path) && !changed.contains(&e.path.as_str())) {
            if let Some(head) = change.load(&snaps.head, &entry.path, mapping, Touched::No) {
                if head.kind == RecipeKind::MasterConfig {
                    let base = load_quietly(&snaps.base, &entry.path, mapping);
                    masters.push((head, base));
                }
            }
        }
        for (head, base) in &masters {
            change.check_master(snaps, head, base.as_ref(), mapping);
        }
        // A container alias runs the image of the entries that link the recipe:
        // at head for the audit, at base for the release it ran before.
        let head_masters: Vec<recipe::MasterConfig> = masters.iter().filter_map(|(h, _)| h.master.clone()).collect();
        let base_masters: Vec<recipe::MasterConfig> = masters.iter().filter_map(|(_, b)| b.as_ref()?.master.clone()).collect();
        for recipe in &mut change.recipes {
            audit::master_links::alias_images(&head_masters, &recipe.path, &mut recipe.deployments);
        }
        for (path, deployments) in &mut change.baseline {
            audit::master_links::alias_images(&base_masters, path, deployments);
        }
        change.others.extend(masters.into_iter().map(|(head, _)| head));
        change
    }

    /// A file at head. One the change touched that cannot be read fails the
    /// gate (EA305): its flags were never seen. Another is only listed.
    fn load(&mut self, tree: &GitTree, path: &str, mapping: &LinkMapping, touched: Touched) -> Option<RecipeFile> {
        let loaded = tree
            .read_text_limited(path, recipe::MAX_RECIPE_BYTES)
            .map_err(|e| RecipeError::Io { path: path.to_string(), message: source_reason(path, &e) })
            .and_then(|text| recipe::load_text(path, text, mapping));
        match loaded {
            Ok(file) => Some(file),
            Err(error) if touched == Touched::Yes => {
                self.findings.push(crate::check::unreadable::unreadable(&error));
                None
            }
            Err(error) => {
                self.problems.push(Problem { path: path.to_string(), message: error.to_string() });
                None
            }
        }
    }

    /// EA301/EA302 for each entry that changed, against every recipe it links,
    /// and for each entry that links a changed recipe, against that recipe.
    fn check_master(&mut self, snaps: &Snapshots, master: &RecipeFile, base: Option<&RecipeFile>, mapping: &LinkMapping) {
        let Some(config) = &master.master else { return };
        let before: BTreeMap<&str, &MasterEntry> =
            base.and_then(|b| b.master.as_ref()).map(|m| m.entries.iter().map(|e| (e.key.value.as_str(), e)).collect()).unwrap_or_default();
        for entry in &config.entries {
            let entry_changed = before.get(entry.key.value.as_str()).is_none_or(|old| fingerprint(old) != fingerprint(entry));
            self.changed_entries += usize::from(entry_changed);
            let linked: BTreeSet<&str> = entry.links.iter().filter_map(|l| l.recipe.as_deref()).collect();
            for path in linked {
                if let Some(recipe) = self.recipes.iter().find(|r| r.path == path) {
                    check_consistency(master, entry, recipe, &mut self.findings);
                } else if entry_changed {
                    let recipe = match self.others.iter().find(|r| r.path == path) {
                        Some(r) => r.clone(),
                        None if snaps.head.contains(path) => match self.load(&snaps.head, path, mapping, Touched::Yes) {
                            Some(r) => {
                                self.others.push(r.clone());
                                r
                            }
                            None => continue,
                        },
                        None => {
                            for link in entry.links.iter().filter(|l| l.recipe.as_deref() == Some(path)) {
                                self.findings.push(crate::check::unreadable::missing_link(&entry.key.value, link, path));
                            }
                            continue;
                        }
                    };
                    check_consistency(master, entry, &recipe, &mut self.findings);
                }
            }
        }
    }

    fn summary(&self, snaps: &Snapshots) -> String {
        format!(
            "pr {}..{}: {} changed recipe file(s), {} changed master-config entr{}{}",
            short(&snaps.base_commit),
            short(&snaps.head_commit),
            self.recipes.len(),
            self.changed_entries,
            if self.changed_entries == 1 { "y" } else { "ies" },
            if self.removed > 0 { format!(", {} removed file(s) not audited", self.removed) } else { String::new() }
        )
    }
}

/// Whether the change under audit touched a file (its failures gate).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touched {
    Yes,
    No,
}

/// Why a file of the recipes repo could not be read, without repeating its path.
fn source_reason(path: &str, error: &crate::source::SourceError) -> String {
    let text = error.to_string();
    text.strip_prefix(path).map(|r| r.trim_start_matches(':').trim_start().to_string()).unwrap_or(text)
}

fn check_consistency(master: &RecipeFile, entry: &MasterEntry, recipe: &RecipeFile, out: &mut Vec<Finding>) {
    if recipe.kind == RecipeKind::SrtSlurm {
        crate::check::consistency::check_entry(master, entry, recipe, out);
    }
}

/// A base version that cannot be read only loses the baseline: the head is what is audited.
fn load_quietly(tree: &GitTree, path: &str, mapping: &LinkMapping) -> Option<RecipeFile> {
    let text = tree.read_text_limited(path, recipe::MAX_RECIPE_BYTES).ok()?;
    recipe::load_text(path, text, mapping).ok()
}

/// What of a master entry bears on the engines and the recipes it links.
#[derive(PartialEq, Eq)]
struct EntryFingerprint<'a> {
    image: Option<&'a str>,
    framework: Option<&'a str>,
    router_name: Option<&'a str>,
    router_version: Option<&'a str>,
    links: Vec<&'a str>,
}

fn fingerprint(entry: &MasterEntry) -> EntryFingerprint<'_> {
    fn value(s: &Option<recipe::Spanned<String>>) -> Option<&str> {
        s.as_ref().map(|v| v.value.as_str())
    }
    let router = entry.router.as_ref();
    let mut links: Vec<&str> = entry.links.iter().map(|l| l.raw.as_str()).collect();
    links.sort();
    EntryFingerprint {
        image: value(&entry.image),
        framework: value(&entry.framework),
        router_name: router.and_then(|r| value(&r.name)),
        router_version: router.and_then(|r| value(&r.version)),
        links,
    }
}

/// Files added or modified at head (blob ids differ), sorted.
fn changed_paths<'a>(base: &dyn Tree, head: &'a dyn Tree) -> Vec<&'a str> {
    head.entries().iter().filter(|e| base.entry(&e.path).is_none_or(|b| b.id != e.id)).map(|e| e.path.as_str()).collect()
}

/// A recipe-like file (YAML or shell) under the configured roots, or a master config.
fn is_candidate(path: &str, roots: &[String]) -> bool {
    let recipe_like = matches!(Path::new(path).extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "sh"));
    let under_roots = roots.is_empty() || roots.iter().any(|r| r.is_empty() || path.starts_with(&format!("{r}/")));
    recipe_like && path != CONFIG_FILE_NAME && (under_roots || is_master_name(path))
}

/// Master configs are named `<vendor>-master.yaml` (`configs/nvidia-master.yaml`).
fn is_master_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name.strip_suffix(".yaml").or_else(|| name.strip_suffix(".yml")), Some(stem) if stem == "master" || stem.ends_with("-master"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_recipes_under_the_roots_and_master_configs() {
        let roots = vec!["benchmarks/multi_node".to_string()];
        assert!(is_candidate("benchmarks/multi_node/a/r.yaml", &roots));
        assert!(is_candidate("configs/nvidia-master.yaml", &roots));
        assert!(!is_candidate("benchmarks/other/r.yaml", &roots));
        assert!(!is_candidate("benchmarks/multi_node/README.md", &roots));
        assert!(is_candidate(".github/workflows/ci.yml", &[]));
        assert!(!is_candidate(CONFIG_FILE_NAME, &[]));
        assert!(!is_master_name("configs/remaster.yaml"));
    }
}
