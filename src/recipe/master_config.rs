//! The InferenceX master config (`configs/nvidia-master.yaml`): per config key, the
//! image, framework, router, runner and precision, and the recipes that belong to
//! the key through `CONFIG_FILE=...` settings.
//!
//! The links live in `scenarios.<name>[].search-space[].{prefill,decode}.additional-settings`
//! lists, but they are found anywhere under the key so a reshuffle of the scenario
//! layout does not silently drop them.

use super::format::{self, EditIntent, Loaded, RecipeFormat, Syntax};
use super::links::{split_selector, LinkMapping, MasterConfig, MasterEntry, ModelTableLink, RecipeLink, Router};
use super::script_naming::{self, EntryFacts, ScriptCandidates};
use super::yaml::{Node, NodeKind};
use super::{Note, RecipeError, RecipeFile, RecipeKind};
use crate::text::span::{SourceText, Span, Spanned};
use crate::text::Edit;
use std::collections::BTreeSet;

/// The InferenceX master config as a [`RecipeFormat`]: it starts no server
/// itself; the audit follows its entries to the recipes and scripts they name.
pub(crate) struct MasterConfigFormat;

impl RecipeFormat for MasterConfigFormat {
    fn kind(&self) -> RecipeKind {
        RecipeKind::MasterConfig
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn detect(&self, _: &str, _: &str, root: Option<&Node>) -> bool {
        root.is_some_and(looks_like)
    }
    fn read(&self, src: &SourceText, root: Option<&Node>, links: &LinkMapping) -> Result<Loaded, RecipeError> {
        let Some(root) = root else { return Ok(Loaded::default()) };
        let (master, notes) = read(src, root, links);
        Ok(Loaded { master: Some(master), notes, ..Loaded::default() })
    }
    fn edit(&self, file: &RecipeFile, intent: EditIntent) -> Vec<Edit> {
        match intent {
            EditIntent::Delete { key, value } => format::delete_yaml_entry(file, key, value).into_iter().collect(),
            other => format::edit_in_place(file, other),
        }
    }
}

/// A master config maps keys to entries that name an `image` and a `framework`.
pub(crate) fn looks_like(root: &Node) -> bool {
    let Some(entries) = root.as_map() else {
        return false;
    };
    if root.get("backend").is_some() || root.get("base").is_some() {
        return false;
    }
    let with_image = entries.iter().filter(|e| e.value.get("image").is_some() && e.value.get("framework").is_some()).count();
    with_image > 0 && with_image * 2 >= entries.len()
}

pub(crate) fn read(src: &SourceText, root: &Node, mapping: &LinkMapping) -> (MasterConfig, Vec<Note>) {
    let mut notes = Vec::new();
    let mut entries = Vec::new();
    for entry in root.as_map().unwrap_or_default() {
        let Some(key) = entry.key.as_str() else {
            continue;
        };
        let value = &entry.value;
        if value.as_map().is_none() {
            notes.push(Note::warning(format!("`{key}` is not a map; skipped"), Some(value.span.clone())));
            continue;
        }
        let scalar = |k: &str| spanned(value.get(k));
        let router =
            value.get("router").map(|r| Router { name: spanned(r.get("name")), version: spanned(r.get("version")), span: r.span.clone() });
        let mut links = Vec::new();
        find_links(src, value, mapping, &mut links);
        for link in links.iter().filter(|l| l.recipe.is_none()) {
            let note = if mapping.names_recipe_folder(&link.raw) {
                Note::warning(
                    format!("`{key}`: link `{}` leaves the recipes repository (`..`, `.` or an empty part); not read", link.raw),
                    Some(link.span.clone()),
                )
            } else {
                Note::info(format!("`{key}`: link `{}` names no known recipe folder; not followed", link.raw), Some(link.span.clone()))
            };
            notes.push(note);
        }
        let scripts = if links.is_empty() && field_str(value, "multinode") != Some("true") {
            single_node_scripts(value, mapping)
        } else {
            Vec::new()
        };
        let disagg_engine = field_str(value, "framework").and_then(|f| f.strip_suffix("-disagg"));
        let model_table = match (disagg_engine.and_then(|e| mapping.amd_model_table(e)), spanned(value.get("model"))) {
            (Some(table), Some(model)) if links.is_empty() => Some(ModelTableLink {
                table,
                model: Spanned { value: model.value.rsplit('/').next().unwrap_or(&model.value).to_string(), span: model.span },
            }),
            _ => None,
        };
        entries.push(MasterEntry {
            scripts,
            model_table,
            key: Spanned { value: key.to_string(), span: entry.key.span.clone() },
            image: scalar("image"),
            framework: scalar("framework"),
            router,
            runner: scalar("runner"),
            precision: scalar("precision"),
            links,
        });
    }
    (MasterConfig { entries }, notes)
}

/// The scripts the runners would look for, when the entry has every field the
/// names are made of.
fn single_node_scripts(entry: &Node, mapping: &LinkMapping) -> Vec<ScriptCandidates> {
    let field = |k: &str| entry.get(k).and_then(Node::as_str);
    let (Some(model_prefix), Some(precision), Some(runner), Some(framework)) =
        (field("model-prefix"), field("precision"), field("runner"), field("framework"))
    else {
        return Vec::new();
    };
    let scenarios = entry
        .get("scenarios")
        .and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| {
            let name = s.key.as_str()?.to_string();
            let specs: BTreeSet<String> = s
                .value
                .as_seq()
                .unwrap_or_default()
                .iter()
                .flat_map(|item| item.get("search-space").and_then(Node::as_seq).unwrap_or_default())
                .filter_map(|space| space.get("spec-decoding").and_then(Node::as_str).map(|v| v.trim().to_string()))
                .collect();
            Some((name, specs))
        })
        .collect();
    let facts = EntryFacts { model_prefix, precision, runner, framework, scenarios };
    script_naming::candidates(&mapping.single_node_scripts, &facts)
}

fn field_str<'n>(node: &'n Node, key: &str) -> Option<&'n str> {
    node.get(key).and_then(Node::as_str)
}

fn spanned(node: Option<&Node>) -> Option<Spanned<String>> {
    let node = node?;
    node.as_str().map(|s| Spanned { value: s.to_string(), span: node.span.clone() })
}

fn find_links(src: &SourceText, node: &Node, mapping: &LinkMapping, out: &mut Vec<RecipeLink>) {
    match &node.kind {
        NodeKind::Scalar(s) => {
            let Some((setting, path)) = s.text.split_once('=') else {
                return;
            };
            if !setting.ends_with("CONFIG_FILE") || setting.contains(char::is_whitespace) {
                return;
            }
            let (file, selector) = split_selector(path);
            out.push(RecipeLink {
                setting: setting.to_string(),
                raw: path.to_string(),
                recipe: mapping.resolve(file),
                selector: selector.map(str::to_string),
                span: value_span(src, &node.span, &s.text, setting.len() + 1),
            });
        }
        NodeKind::Seq(items) => items.iter().for_each(|i| find_links(src, i, mapping, out)),
        NodeKind::Map(entries) => entries.iter().for_each(|e| find_links(src, &e.value, mapping, out)),
    }
}

/// The span of the part of a scalar after `skip` bytes, when the written text holds
/// the value verbatim (plain or simply quoted); else the whole scalar.
fn value_span(src: &SourceText, scalar: &Span, value: &str, skip: usize) -> Span {
    let written = src.slice(scalar);
    match written.find(value) {
        Some(i) => src.span(scalar.offset + i + skip, scalar.offset + i + value.len()),
        None => scalar.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::yaml;

    const MASTER: &str = "\
m1-fp4-b200-dynamo-sglang:
  image: \"lmsysorg/sglang:v0.5.12.post1\"
  model: some/model
  runner: b200-multinode
  precision: fp4
  framework: dynamo-sglang
  router: { name: dynamo-router, version: \"5b4bc1dd70965017a737c71b19db5a0aeaa88727\" }
  scenarios:
    fixed-seq-len:
    - isl: 8192
      search-space:
      - conc-list: [4, 8]
        prefill:
          additional-settings:
          # a comment
          - \"CONFIG_FILE=recipes/sglang/m1/8k1k/a.yaml\"
        decode:
          tp: 8
      - prefill:
          additional-settings:
          - \"CONFIG_FILE=dsv4-low-latency.yaml\"
m2-fp8-h200-sglang:
  image: lmsysorg/sglang:v0.5.16-cu130
  framework: sglang
";

    #[test]
    fn entries_links_and_spans() {
        let src = SourceText::new("master.yaml", MASTER.to_string());
        let root = yaml::parse(&src).unwrap().unwrap();
        assert!(looks_like(&root));
        let (master, notes) = read(&src, &root, &LinkMapping::default());
        assert_eq!(master.entries.len(), 2);
        let e = &master.entries[0];
        assert_eq!(e.image.as_ref().unwrap().value, "lmsysorg/sglang:v0.5.12.post1");
        assert_eq!(e.framework.as_ref().unwrap().value, "dynamo-sglang");
        let router = e.router.as_ref().unwrap();
        assert_eq!(router.name.as_ref().unwrap().value, "dynamo-router");
        assert_eq!(router.version.as_ref().unwrap().span.line, 7);
        assert_eq!(e.links.len(), 2);
        let link = &e.links[0];
        assert_eq!(link.recipe.as_deref(), Some("benchmarks/multi_node/srt-slurm-recipes/sglang/m1/8k1k/a.yaml"));
        assert_eq!(src.slice(&link.span), "recipes/sglang/m1/8k1k/a.yaml");
        assert_eq!((link.span.line, link.span.column), (16, 26));
        assert_eq!(e.links[1].recipe, None);
        assert_eq!(notes.len(), 1, "the unresolvable link is noted: {notes:?}");
        assert!(master.entries[1].links.is_empty());
    }

    #[test]
    fn mapping_is_a_parameter() {
        let mapping = LinkMapping { link_prefix: "recipes/".into(), recipes_dir: "srt".into(), ..LinkMapping::default() };
        assert_eq!(mapping.resolve("recipes/a/b.yaml").as_deref(), Some("srt/a/b.yaml"));
        assert_eq!(mapping.resolve("srt/a.yaml").as_deref(), Some("srt/a.yaml"));
        assert_eq!(mapping.resolve("a.yaml"), None);
    }

    #[test]
    fn selectors_follow_the_file_name() {
        assert_eq!(split_selector("recipes/a/b.yaml:zip_override_x[3]"), ("recipes/a/b.yaml", Some("zip_override_x[3]")));
        assert_eq!(split_selector("recipes/a/b.yml:override_y"), ("recipes/a/b.yml", Some("override_y")));
        assert_eq!(split_selector("recipes/a/b.yaml"), ("recipes/a/b.yaml", None));
        assert_eq!(split_selector("recipes/a/b.yaml:"), ("recipes/a/b.yaml:", None));
        assert_eq!(split_selector("c:/x.yaml:/etc"), ("c:/x.yaml:/etc", None));
    }
}
