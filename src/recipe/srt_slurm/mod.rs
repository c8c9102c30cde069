//! srt-slurm recipe YAML (`srtctl apply -f recipe.yaml`), both layouts srtctl
//! 2.x loads, into one deployment model (no check knows which layout a flag
//! came from):
//! - schema 2 ([`schema2`]): `engine:` (a string, or a mapping with `type`, at
//!   the top or per role), `roles.{prefill,decode,agg}.{args,env,extra_args,
//!   container}`, `dynamo.source`, `identity`, a top-level `environment`;
//! - the legacy v1 layout ([`legacy`]): `backend.<engine>_config.<mode>` flag
//!   maps and `backend.<mode>_environment`, `dynamo: {hash|wheel|version}`.
//!
//! Override bundles are expanded first ([`bundle`]); values are read as srtctl
//! hands them on ([`values`]).
//!
//! Detection fails closed: a file that looks like a recipe but whose
//! `schema:`, role, engine or layout key srtctl would reject is read as far as
//! it can be, with an error note (EA305) naming the key and the fix; a role
//! whose engine has no profile is a deployment of that engine, which the audit
//! names "not audited".

mod bundle;
mod legacy;
mod schema2;
mod values;

use super::format::{self, EditIntent, Loaded, RecipeFormat, Syntax};
use super::image::parse_image;
use super::links::LinkMapping;
use super::yaml::Node;
use super::{Deployment, Note, RecipeError, RecipeFile, RecipeKind};
use crate::text::span::SourceText;
use crate::text::{Edit, Spanned};

/// srt-slurm recipe YAML as a [`RecipeFormat`].
pub(crate) struct SrtSlurm;

impl RecipeFormat for SrtSlurm {
    fn kind(&self) -> RecipeKind {
        RecipeKind::SrtSlurm
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn detect(&self, _: &str, _: &str, root: Option<&Node>) -> bool {
        root.is_some_and(looks_like)
    }
    fn read(&self, src: &SourceText, root: Option<&Node>, _: &LinkMapping) -> Result<Loaded, RecipeError> {
        let Some(root) = root else { return Ok(Loaded::default()) };
        let recipe = read(src, root)?;
        Ok(Loaded { kind: Some(recipe.kind), deployments: recipe.deployments, notes: recipe.notes, master: None })
    }
    /// A switch is `key: true`: the key is renamed and `true` becomes the
    /// value; an entry is deleted with its line.
    fn edit(&self, file: &RecipeFile, intent: EditIntent) -> Vec<Edit> {
        match intent {
            EditIntent::RenameSwitch { flag, new_name, value } => {
                let rename = format::replace_in_span(file, &flag.key_span, &flag.name, new_name);
                let set = format::replace_value(file, &flag.value_span, value);
                rename.into_iter().chain(set).collect()
            }
            // One `key: true` line becomes one `name: value` line per flag, at its indentation.
            EditIntent::SplitSwitch { flag, into } => format::yaml_entry_lines(file, &flag.key_span, &flag.value_span)
                .map(|(start, end, indent)| {
                    let lines: String = into.iter().map(|(name, value)| format!("{indent}{name}: {value}\n")).collect();
                    Edit { path: file.path.clone(), offset: start, len: end - start, replacement: lines }
                })
                .into_iter()
                .collect(),
            EditIntent::Delete { key, value } => format::delete_yaml_entry(file, key, value).into_iter().collect(),
            other => format::edit_in_place(file, other),
        }
    }
    /// A recipe for a backend without a server profile is still this format
    /// (read by earlier versions as `Other`; kept for baselines).
    fn owns(&self, kind: &RecipeKind) -> bool {
        matches!(kind, RecipeKind::SrtSlurm | RecipeKind::Other { backend: Some(_) })
    }
}

/// What one srt-slurm file yields.
pub(crate) struct SrtRecipe {
    pub kind: RecipeKind,
    pub deployments: Vec<Deployment>,
    pub notes: Vec<Note>,
}

/// Whether a YAML root is an srt-slurm recipe: it declares a `schema`, has a
/// `roles`, `engine` or `backend` block, or names a model container; or is an
/// override bundle whose `base` does.
pub(crate) fn looks_like(root: &Node) -> bool {
    let recipe_like = |n: &Node| {
        n.get("backend").is_some_and(|b| b.as_map().is_some())
            || n.get("roles").is_some_and(|r| r.as_map().is_some())
            || n.get("schema").is_some_and(|s| s.as_scalar().is_some())
            || n.get("engine").is_some() && n.get("model").is_some()
            || n.path(&["model", "container"]).is_some()
    };
    recipe_like(root) || root.get("base").is_some_and(recipe_like)
}

pub(crate) fn read(src: &SourceText, root: &Node) -> Result<SrtRecipe, RecipeError> {
    let mut notes = Vec::new();
    // A bundle may declare its schema beside `base` (it then holds for every variant).
    let bundle_schema = root.get("base").and(root.get("schema"));
    let variants = bundle::expand_variants(src, root, &mut notes)?;
    let mut deployments = Vec::new();
    for (variant, tree) in &variants {
        let schema = tree.get("schema").or(bundle_schema);
        if !schema2::schema_is_known(schema, variant.as_deref(), &mut notes) {
            continue;
        }
        // srtctl expands a `roles:` block whatever the schema says; a recipe
        // without one is the legacy layout.
        let layout = if tree.get("roles").is_some() || schema2::declares(schema) {
            schema2::read(src, tree, variant.clone(), &mut notes)
        } else {
            legacy::read(src, tree, variant.clone(), &mut notes)
        };
        deployments.extend(layout);
    }
    Ok(SrtRecipe { kind: RecipeKind::SrtSlurm, deployments, notes })
}

/// What both layouts share: the recipe's name, model, resources, Dynamo
/// build and frontend, around roles read by the layout's own reader.
pub(super) struct Shared {
    pub name: String,
    pub name_span: Option<crate::text::Span>,
    pub model_container: Option<Spanned<String>>,
    pub model_path: Option<Spanned<String>>,
    pub precision: Option<Spanned<String>>,
    pub gpu_type: Option<Spanned<String>>,
    pub worker: Option<super::Worker>,
}

impl Shared {
    pub(super) fn read(src: &SourceText, tree: &Node, variant: Option<&str>, notes: &mut Vec<Note>) -> Shared {
        let name_node = tree.get("name");
        let (name, name_span) = match name_node.and_then(|n| n.as_str().map(|s| (s, n))) {
            Some((s, n)) => {
                let generated = n.as_scalar().and_then(|s| s.tag.as_deref()) == Some("generated");
                (s.to_string(), (!generated).then(|| n.span.clone()))
            }
            None => (variant.map(str::to_string).unwrap_or_else(|| file_stem(&src.path)), None),
        };
        // A section that is not a map would otherwise be skipped without a word
        // (`model: [a, b]` has no `model.container` to find).
        for section in ["model", "resources", "backend", "frontend", "dynamo", "identity"] {
            if let Some(node) = tree.get(section).filter(|n| n.as_map().is_none() && !n.is_null()) {
                notes.push(Note::error(
                    format!("`{section}` should be a map, found a {}; its values are not read", node.kind_name()),
                    Some(node.span.clone()),
                ));
            }
        }
        let mut scalar = |keys: &[&str]| values::spanned_scalar(tree.path(keys), keys, notes);
        Shared {
            name,
            name_span,
            model_container: scalar(&["model", "container"]),
            model_path: scalar(&["model", "path"]),
            precision: scalar(&["model", "precision"]),
            gpu_type: scalar(&["resources", "gpu_type"]),
            worker: worker(tree),
        }
    }

    /// A deployment of `engine` with these shared facts.
    pub(super) fn deployment(&self, engine: &'static str, variant: Option<String>, container: Option<Spanned<String>>) -> Deployment {
        Deployment {
            engine,
            name: self.name.clone(),
            name_span: self.name_span.clone(),
            variant,
            roles: Vec::new(),
            common_env: Vec::new(),
            image: container.as_ref().map(|c| parse_image(&c.value)),
            container,
            model_path: self.model_path.clone(),
            precision: self.precision.clone(),
            gpu_type: self.gpu_type.clone(),
            dynamo: None,
            entry_image: None,
            worker: self.worker.clone(),
        }
    }
}

/// The engine a name means, as srtctl reads it: the profile's id for an
/// engine the tool audits, the recipe engine's id for one it knows of but
/// has no profile for; `None` for a name srtctl rejects.
pub(super) fn engine_id(name: &str) -> Option<&'static str> {
    crate::profiles::recipe_engine(name).map(|e| e.id)
}

/// The workers srtctl starts: `frontend.type` naming a consumer profile
/// (`dynamo`, srtctl's default when no frontend is written) starts each
/// worker as the consumer's module for the engine (`python -m dynamo.vllm`),
/// not as the engine's own server (`type: vllm`, `sglang` there).
fn worker(tree: &Node) -> Option<super::Worker> {
    let written = tree.path(&["frontend", "type"]);
    let (name, span) = match written {
        Some(node) => (node.as_str()?, node.span.clone()),
        None => ("dynamo", tree.get("frontend").unwrap_or(tree).span.clone()),
    };
    let consumer = crate::profiles::by_id(name).filter(|p| p.server.is_none())?;
    Some(super::Worker { consumer: consumer.id, span })
}

fn file_stem(path: &str) -> String {
    std::path::Path::new(path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}
