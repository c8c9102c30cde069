//! How a master config links what it runs: the link mapping of a recipes
//! repository (where `recipes/X` points, how single-node scripts are named) and
//! the master config read as data (entries, images, routers, recipe links).
//! The master config format (`master_config`) fills these; the audit follows them.

use super::script_naming::ScriptCandidates;
use crate::text::{Span, Spanned};
use serde::Serialize;

/// How a link in the master config names a recipe file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkMapping {
    /// The prefix links start with (`recipes/`).
    pub link_prefix: String,
    /// Where that prefix points, relative to the recipes repository root.
    pub recipes_dir: String,
    /// How an entry that links nothing names its single-node script (see
    /// [`script_naming`](super::script_naming)): patterns tried in order.
    pub single_node_scripts: Vec<String>,
    /// The AMD multi-node model table (`models.yaml`) a `sglang-disagg` entry
    /// runs its model's entry of, by the last part of its `model` path; the
    /// other engines' tables (`models_<engine>.yaml`) are beside it.
    pub amd_models: String,
}

impl Default for LinkMapping {
    /// The InferenceX layout: `recipes/X` is `benchmarks/multi_node/srt-slurm-recipes/X`,
    /// single-node scripts as its runners name them.
    fn default() -> Self {
        LinkMapping {
            link_prefix: "recipes/".into(),
            recipes_dir: "benchmarks/multi_node/srt-slurm-recipes".into(),
            single_node_scripts: super::script_naming::DEFAULT_PATTERNS.iter().map(|p| p.to_string()).collect(),
            amd_models: "benchmarks/multi_node/amd_utils/models.yaml".into(),
        }
    }
}

impl LinkMapping {
    /// The repository path a link names, or `None` when it names no known place
    /// (a bare file name, resolved by the benchmark scripts at run time).
    /// A link that would leave the repository (`recipes/../../etc/x.yaml`, an
    /// absolute path) names no place either: it is never read.
    pub(crate) fn resolve(&self, link: &str) -> Option<String> {
        let path = if let Some(rest) = link.strip_prefix(&self.link_prefix) {
            format!("{}/{rest}", self.recipes_dir.trim_end_matches('/'))
        } else if link.starts_with(&format!("{}/", self.recipes_dir.trim_end_matches('/'))) {
            link.to_string()
        } else {
            return None;
        };
        crate::source::is_safe_tree_path(&path).then_some(path)
    }

    /// The model table a `<engine>-disagg` entry's server script reads:
    /// `models.yaml` for SGLang's, `models_<engine>.yaml` beside it for the
    /// others whose tables are read (vLLM's, ATOM's), as the AMD scripts name them.
    pub(crate) fn amd_model_table(&self, engine: &str) -> Option<String> {
        match engine {
            "sglang" => Some(self.amd_models.clone()),
            "vllm" | "atom" => {
                let folder = self.amd_models.rsplit_once('/').map_or("", |(folder, _)| folder);
                Some(if folder.is_empty() { format!("models_{engine}.yaml") } else { format!("{folder}/models_{engine}.yaml") })
            }
            _ => None,
        }
    }

    /// Whether a link is written in a recipe folder's form, resolvable or not.
    pub(super) fn names_recipe_folder(&self, link: &str) -> bool {
        link.starts_with(&self.link_prefix) || link.starts_with(&format!("{}/", self.recipes_dir.trim_end_matches('/')))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MasterConfig {
    pub entries: Vec<MasterEntry>,
}

/// One top-level key of the master config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MasterEntry {
    pub key: Spanned<String>,
    pub image: Option<Spanned<String>>,
    pub framework: Option<Spanned<String>>,
    pub router: Option<Router>,
    pub runner: Option<Spanned<String>>,
    pub precision: Option<Spanned<String>>,
    pub links: Vec<RecipeLink>,
    /// For an entry that links no recipe and is not multi-node: the launch
    /// scripts its runner would look for, by the naming convention.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptCandidates>,
    /// For an AMD disaggregated entry (`framework: sglang-disagg`, `atom-disagg`, ...) that
    /// links no recipe: the model table its server script reads, and the
    /// table key (the `model` path's last part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_table: Option<ModelTableLink>,
}

/// A master entry's row of the AMD model table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelTableLink {
    /// The table's path in the recipes repository.
    pub table: String,
    /// The table key: `amd/DeepSeek-R1-0528-MXFP4-v2` → `DeepSeek-R1-0528-MXFP4-v2`.
    pub model: Spanned<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Router {
    pub name: Option<Spanned<String>>,
    /// A version or a Dynamo commit hash; see `DynamoRef::from_router_version`.
    pub version: Option<Spanned<String>>,
    pub span: Span,
}

/// A `CONFIG_FILE=<path>` setting (or another `*CONFIG_FILE=`, such as `EVAL_CONFIG_FILE`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecipeLink {
    /// The setting name before `=`.
    pub setting: String,
    /// The path as written after `=`.
    pub raw: String,
    /// The repository path it names, when the mapping knows it.
    pub recipe: Option<String>,
    /// The srtctl selector after the file name (`x.yaml:override_y`,
    /// `x.yaml:zip_override_z[0]`): which of the file's variants the entry runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Span of the path text (after `=`), inside the quoted setting.
    pub span: Span,
}

/// `x.yaml:selector` → (`x.yaml`, `selector`), as srtctl reads `-f FILE:SELECTOR`:
/// only after a YAML file name, so a `:` elsewhere in a path is kept.
pub(super) fn split_selector(link: &str) -> (&str, Option<&str>) {
    for ext in [".yaml:", ".yml:"] {
        if let Some(i) = link.rfind(ext) {
            let (file, selector) = (&link[..i + ext.len() - 1], &link[i + ext.len()..]);
            if !selector.is_empty() && !selector.contains('/') {
                return (file, Some(selector));
            }
        }
    }
    (link, None)
}
