//! What a master-config entry runs of the srt-slurm recipes it links, applied
//! to the loaded files before the audit:
//!
//! - the variants its srtctl selectors name (`x.yaml:override_y`,
//!   `x.yaml:zip_override_z[0]`, `x.yaml:zip_override_z` for the whole group);
//!   a link without a selector runs every variant, as `srtctl apply -f x.yaml`;
//! - the entry's image for a deployment whose container is an srt-slurm alias
//!   (`dynamo-sglang`): the runners point the alias at the squash file made
//!   from that image, so it is the release the deployment runs;
//! - the entry's image for the single-node script it runs by name (see
//!   `recipe::script_naming`): CI runs the script in that image.

use crate::check::unreadable::missing_variant;
use crate::finding::Finding;
use crate::recipe::LinkMapping;
use crate::recipe::{
    is_container_alias, parse_image, Deployment, EntryImage, MasterConfig, MasterEntry, Note, RecipeFile, RecipeKind, RecipeLink,
};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// What applying a master config does to the recipes it links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Apply {
    /// The audit runs through the master (`--master`): only the selected
    /// variants run, with the entries' images.
    Selectors,
    /// The master config is one of the files audited: every variant is
    /// audited, aliases take the images of the entries that run them.
    ImagesOnly,
}

/// Apply the entries (only `key`'s, when given) of every master config among
/// `files` to the srt-slurm recipes they link. Returns an EA305 for each
/// selector that names no variant of its file.
pub(crate) fn apply(files: &mut [RecipeFile], key: Option<&str>, how: Apply) -> Vec<Finding> {
    let masters: Vec<MasterConfig> = files.iter().filter(|f| f.kind == RecipeKind::MasterConfig).filter_map(|f| f.master.clone()).collect();
    let mut findings = Vec::new();
    give_scripts_their_images(files, &masters, key);
    for file in files.iter_mut().filter(|f| f.kind == RecipeKind::AmdModels) {
        run_table_rows(file, &masters, key, how);
    }
    for file in files.iter_mut().filter(|f| f.kind == RecipeKind::SrtSlurm) {
        let runs = runs_of(&masters, key, &file.path);
        if runs.is_empty() {
            continue;
        }
        if how == Apply::Selectors {
            select_variants(file, &runs, &mut findings);
        }
        let notes = resolve_aliases(&mut file.deployments, &runs);
        file.notes.extend(notes);
    }
    findings
}

/// A recipe given without its master config (no `--master`, none among the
/// files): its deployments whose container is an alias take the images of the
/// entries that run them in the master configs of its repository
/// (`configs/*-master.yaml` above it), and a note names those files. Without
/// them the deployment names no release and is not audited.
pub(crate) fn resolve_aliases_from_found(files: &mut [RecipeFile], mapping: &LinkMapping) {
    if files.iter().any(|f| f.kind == RecipeKind::MasterConfig) {
        return;
    }
    let mut loaded: HashMap<PathBuf, Result<MasterConfig, String>> = HashMap::new();
    for file in files.iter_mut().filter(|f| f.kind == RecipeKind::SrtSlurm) {
        let aliased = |d: &Deployment| d.entry_image.is_none() && d.container.as_ref().is_some_and(|c| is_container_alias(&c.value));
        if !file.deployments.iter().any(aliased) {
            continue;
        }
        let Some(disk) = file.disk_path.clone() else { continue };
        let found = crate::recipe::master_discovery::master_configs_above(&disk);
        let mut masters = Vec::new();
        for path in &found {
            let master = loaded.entry(path.clone()).or_insert_with(|| match crate::recipe::load_path_with(path, mapping) {
                Ok(f) => f.master.ok_or_else(|| "not a master config".to_string()),
                Err(e) => Err(e.to_string()),
            });
            match master {
                Ok(m) => masters.push(m.clone()),
                Err(e) => file.notes.push(Note::warning(
                    format!("master config {} could not be read ({e}); container aliases are not resolved through it", path.display()),
                    None,
                )),
            }
        }
        let runs = runs_of(&masters, None, &file.path);
        if found.is_empty() || runs.is_empty() {
            continue;
        }
        let notes = resolve_aliases(&mut file.deployments, &runs);
        file.notes.extend(notes);
        let keys: BTreeSet<&str> = runs.iter().map(|(e, _)| e.key.value.as_str()).collect();
        let shown: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
        file.notes.push(Note::info(
            format!(
                "container aliases take the image of the master key(s) that run this recipe ({}), read from {} found above it; --master FILE to choose the master config",
                keys.into_iter().collect::<Vec<_>>().join(", "),
                shown.join(", ")
            ),
            None,
        ));
    }
}

/// The images of `masters` for the aliased deployments of the recipe at
/// `path`, read apart from its file (`pr`'s deployments before the change).
pub(crate) fn alias_images(masters: &[MasterConfig], path: &str, deployments: &mut [Deployment]) {
    let runs = runs_of(masters, None, path);
    resolve_aliases(deployments, &runs);
}

/// The links of the entries (only `key`'s) that name the file at `path`.
fn runs_of<'m>(masters: &'m [MasterConfig], key: Option<&str>, path: &str) -> Vec<(&'m MasterEntry, &'m RecipeLink)> {
    masters
        .iter()
        .flat_map(|m| &m.entries)
        .filter(|e| key.is_none_or(|k| e.key.value == k))
        .flat_map(|e| e.links.iter().filter(|l| l.recipe.as_deref().is_some_and(|r| names_file(path, r))).map(move |l| (e, l)))
        .collect()
}

/// A single-node script runs with the image of the entries that name it (the
/// first of an entry's candidates among the files, as the runner takes the
/// first that exists), when they agree on one.
fn give_scripts_their_images(files: &mut [RecipeFile], masters: &[MasterConfig], key: Option<&str>) {
    let paths: Vec<String> = files.iter().filter(|f| f.kind == RecipeKind::LaunchScript).map(|f| f.path.clone()).collect();
    let chosen = |candidates: &[String]| candidates.iter().find_map(|c| paths.iter().find(|p| names_file(p, c))).cloned();
    let mut runs: Vec<(String, &MasterEntry)> = Vec::new();
    for entry in masters.iter().flat_map(|m| &m.entries).filter(|e| key.is_none_or(|k| e.key.value == k)) {
        runs.extend(entry.scripts.iter().filter_map(|s| chosen(&s.paths)).map(|path| (path, entry)));
    }
    for file in files.iter_mut().filter(|f| f.kind == RecipeKind::LaunchScript) {
        match agreed_image(runs.iter().filter(|(p, _)| *p == file.path).map(|(_, e)| *e)) {
            Ok(Some(image)) => file.deployments.iter_mut().for_each(|dep| give_image(dep, image.clone())),
            Ok(None) => {}
            Err(images) => file.notes.push(Note::warning(disagreeing("this script", &images), None)),
        }
    }
}

/// The image the entries that run a deployment agree on: `Ok(None)` when none
/// names one, `Err(their images)` when they disagree.
fn agreed_image<'e>(entries: impl IntoIterator<Item = &'e MasterEntry>) -> Result<Option<EntryImage>, String> {
    let entries: Vec<&MasterEntry> = entries.into_iter().filter(|e| e.image.is_some()).collect();
    let images: BTreeSet<&str> = entries.iter().filter_map(|e| e.image.as_ref()).map(|i| i.value.as_str()).collect();
    match (entries.first(), images.len()) {
        (Some(entry), 1) => Ok(Some(EntryImage { key: entry.key.value.clone(), image: entry.image.clone().expect("filtered on image") })),
        (_, 0) => Ok(None),
        _ => Err(images.into_iter().collect::<Vec<_>>().join(", ")),
    }
}

fn give_image(dep: &mut Deployment, image: EntryImage) {
    dep.image = Some(parse_image(&image.image.value));
    dep.entry_image = Some(image);
}

fn disagreeing(what: &str, images: &str) -> String {
    format!("{what} is run by master keys with different images ({images}); no release is taken from them: audit one key with --key")
}

/// The AMD model table: each `sglang-disagg` entry runs its model's rows
/// (every mode the server script may build for it) with the entry's image.
/// Through `--master`, only the rows of the keys' models are audited.
fn run_table_rows(file: &mut RecipeFile, masters: &[MasterConfig], key: Option<&str>, how: Apply) {
    let entries: Vec<&MasterEntry> = masters
        .iter()
        .flat_map(|m| &m.entries)
        .filter(|e| key.is_none_or(|k| e.key.value == k))
        .filter(|e| e.model_table.as_ref().is_some_and(|t| names_file(&file.path, &t.table)))
        .collect();
    if entries.is_empty() {
        return;
    }
    let models: BTreeSet<&str> = file.deployments.iter().map(|d| d.name.as_str()).collect();
    for entry in &entries {
        let model = &entry.model_table.as_ref().expect("filtered on the table").model;
        if !models.contains(model.value.as_str()) {
            file.notes.push(Note::warning(
                format!(
                    "`{}` runs model `{}`, which this table has no entry for (its models: {}); nothing of the key is audited",
                    entry.key.value,
                    model.value,
                    models.iter().copied().collect::<Vec<_>>().join(", ")
                ),
                Some(model.span.clone()),
            ));
        }
    }
    if how == Apply::Selectors {
        file.deployments.retain(|d| entries.iter().any(|e| e.model_table.as_ref().is_some_and(|t| t.model.value == d.name)));
    }
    let mut notes: Vec<Note> = Vec::new();
    for dep in &mut file.deployments {
        let running = entries.iter().copied().filter(|e| e.model_table.as_ref().is_some_and(|t| t.model.value == dep.name));
        match agreed_image(running) {
            Ok(Some(image)) => give_image(dep, image),
            Ok(None) => {}
            // One note per model, not per row.
            Err(images) => {
                let message = disagreeing(&format!("`{}`", dep.name), &images);
                if !notes.iter().any(|n| n.message == message) {
                    notes.push(Note::warning(message, dep.name_span.clone()));
                }
            }
        }
    }
    file.notes.extend(notes);
}

/// `path` (as loaded: the recipes root joined with the link) is the file `target` names.
pub(super) fn names_file(path: &str, target: &str) -> bool {
    path == target || path.strip_suffix(target).is_some_and(|rest| rest.ends_with('/'))
}

/// Whether a selector picks a variant: its name, or a whole zip group.
fn selects(selector: &str, variant: &str) -> bool {
    variant == selector
        || (selector.starts_with("zip_override_") && variant.strip_prefix(selector).is_some_and(|rest| rest.starts_with('[')))
}

/// Keep the variants the links select, when every link carries a selector.
fn select_variants(file: &mut RecipeFile, runs: &[(&MasterEntry, &RecipeLink)], findings: &mut Vec<Finding>) {
    if runs.iter().any(|(_, l)| l.selector.is_none()) {
        return;
    }
    let variants: Vec<String> = file.deployments.iter().filter_map(|d| d.variant.clone()).collect();
    let mut wanted = BTreeSet::new();
    for (entry, link) in runs {
        let (Some(selector), Some(target)) = (link.selector.as_deref(), link.recipe.as_deref()) else { continue };
        if variants.iter().any(|v| selects(selector, v)) {
            wanted.insert(selector);
        } else if selector == "base" {
            // Without a selector srtctl runs the overrides, not `base`: the loader
            // expands only those, so `:base` is said, not guessed at.
            file.notes.push(Note::warning(
                format!("`{}` runs `:base` of this file, which is not audited (only its override variants are read)", entry.key.value),
                Some(link.span.clone()),
            ));
        } else {
            let names: Vec<&str> = variants.iter().map(String::as_str).collect();
            findings.push(missing_variant(&entry.key.value, link, target, selector, &names));
        }
    }
    file.deployments.retain(|d| d.variant.as_deref().is_some_and(|v| wanted.iter().any(|s| selects(s, v))));
}

/// Give each deployment whose container is an alias the image of the entries
/// that run it, when they agree on one.
fn resolve_aliases(deployments: &mut [Deployment], runs: &[(&MasterEntry, &RecipeLink)]) -> Vec<Note> {
    let mut notes = Vec::new();
    for dep in deployments {
        let Some(container) = dep.container.as_ref().filter(|c| is_container_alias(&c.value)) else { continue };
        let running = runs.iter().filter(|(_, l)| match (l.selector.as_deref(), dep.variant.as_deref()) {
            (None, _) => true,
            (Some(s), Some(v)) => selects(s, v),
            (Some(_), None) => false,
        });
        match agreed_image(running.map(|(e, _)| *e)) {
            Ok(Some(image)) => give_image(dep, image),
            Ok(None) => {}
            Err(images) => {
                let what = format!("`{}` (container alias `{}`)", dep.name, container.value);
                notes.push(Note::warning(disagreeing(&what, &images), Some(container.span.clone())));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_pick_variants_as_srtctl_does() {
        assert!(selects("override_a", "override_a"));
        assert!(!selects("override_a", "override_ab"));
        assert!(selects("zip_override_z[1]", "zip_override_z[1]"));
        assert!(selects("zip_override_z", "zip_override_z[1]"));
        assert!(!selects("zip_override_z", "zip_override_zz[1]"));
        assert!(!selects("zip_override_z[1]", "zip_override_z[10]"));
    }

    #[test]
    fn links_name_files_by_whole_path_parts() {
        assert!(names_file("/r/benchmarks/x/a.yaml", "benchmarks/x/a.yaml"));
        assert!(names_file("benchmarks/x/a.yaml", "benchmarks/x/a.yaml"));
        assert!(!names_file("/r/benchmarks/xx/a.yaml", "x/a.yaml"));
    }

    const MASTER: &str = "\
k-sweep:
  image: lmsysorg/sglang:v0.5.16-cu130
  framework: dynamo-sglang
  scenarios:
    s:
    - prefill:
        additional-settings:
        - \"CONFIG_FILE=recipes/sglang/sweep.yaml:zip_override_tp[1]\"
    - prefill:
        additional-settings:
        - \"CONFIG_FILE=recipes/sglang/sweep.yaml:override_nope\"
k-alias:
  image: lmsysorg/sglang:v0.5.19
  framework: dynamo-sglang
  scenarios:
    s:
    - prefill:
        additional-settings:
        - \"CONFIG_FILE=recipes/sglang/sweep.yaml:override_low\"
";

    const SWEEP: &str = "\
base:
  name: sweep
  model: { path: m, container: dynamo-sglang, precision: fp4 }
  backend:
    type: sglang
    sglang_config:
      decode: { tensor-parallel-size: 4 }
override_low:
  backend: { sglang_config: { decode: { mem-fraction-static: 0.7 } } }
zip_override_tp:
  backend: { sglang_config: { decode: { tensor-parallel-size: [4, 8, 16] } } }
";

    fn files() -> Vec<RecipeFile> {
        let mapping = crate::recipe::LinkMapping::default();
        let load = |path: &str, text: &str| crate::recipe::load_text(path, text.to_string(), &mapping).unwrap();
        vec![load("configs/master.yaml", MASTER), load("benchmarks/multi_node/srt-slurm-recipes/sglang/sweep.yaml", SWEEP)]
    }

    #[test]
    fn a_key_runs_the_variants_its_selectors_name_with_its_image() {
        let mut files = files();
        assert_eq!(files[1].deployments.len(), 4, "override_low and three zip variants");
        let findings = apply(&mut files, Some("k-sweep"), Apply::Selectors);
        let kept: Vec<_> = files[1].deployments.iter().map(|d| d.variant.as_deref().unwrap()).collect();
        assert_eq!(kept, ["zip_override_tp[1]"]);
        assert_eq!(findings.len(), 1, "override_nope names no variant");
        assert!(
            findings[0].message().contains("has no variant `override_nope` (it has `override_low`, `zip_override_tp[0]`"),
            "{}",
            findings[0].message()
        );
        let dep = &files[1].deployments[0];
        assert_eq!(dep.image.as_ref().unwrap().version.as_deref(), Some("0.5.16"), "the alias stands for k-sweep's image");
        assert_eq!(dep.entry_image.as_ref().unwrap().image.span.path, "configs/master.yaml");
    }

    #[test]
    fn without_a_key_every_entry_applies_and_disagreeing_images_are_said() {
        let mut files = files();
        apply(&mut files, None, Apply::Selectors);
        let kept: Vec<_> = files[1].deployments.iter().map(|d| d.variant.clone().unwrap()).collect();
        assert_eq!(kept, ["override_low", "zip_override_tp[1]"]);
        assert_eq!(files[1].deployments[0].image.as_ref().unwrap().version.as_deref(), Some("0.5.19"));
        assert_eq!(files[1].deployments[1].image.as_ref().unwrap().version.as_deref(), Some("0.5.16"));
        assert!(files[1].notes.is_empty(), "each variant is run by one key: {:?}", files[1].notes);
    }

    #[test]
    fn a_link_without_selector_runs_every_variant() {
        let mut files = files();
        let plain = MASTER.replace(":zip_override_tp[1]", "");
        files[0] = crate::recipe::load_text("configs/master.yaml", plain, &crate::recipe::LinkMapping::default()).unwrap();
        let fresh = files.clone();
        apply(&mut files, Some("k-sweep"), Apply::Selectors);
        assert_eq!(files[1].deployments.len(), 4);
        let mut files = fresh;
        apply(&mut files, None, Apply::Selectors);
        assert_eq!(files[1].deployments.len(), 4);
        assert!(files[1].deployments[0].entry_image.is_none(), "two keys with two images run override_low");
        assert!(files[1].notes.iter().any(|n| n.message.contains("different images")), "{:?}", files[1].notes);
    }

    #[test]
    fn a_master_among_the_files_gives_images_and_keeps_every_variant() {
        let mut files = files();
        let findings = apply(&mut files, None, Apply::ImagesOnly);
        assert!(findings.is_empty());
        assert_eq!(files[1].deployments.len(), 4);
        let low = files[1].deployments.iter().find(|d| d.variant.as_deref() == Some("override_low")).unwrap();
        assert_eq!(low.entry_image.as_ref().unwrap().key, "k-alias");
        let unlinked = files[1].deployments.iter().find(|d| d.variant.as_deref() == Some("zip_override_tp[0]")).unwrap();
        assert!(unlinked.entry_image.is_none(), "no key runs zip_override_tp[0]");
    }
}
