//! The demo workspace: small git repos of a mini SGLang, a mini vLLM, a mini
//! ATOM, a mini TensorRT-LLM and a mini Dynamo, built from the embedded
//! fixtures (one commit and tag per version folder), plus recipes.

use crate::embedded::DEMO_FILES;
use git2::{Repository, Signature, Time};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct DemoWorkspace {
    pub sglang_repo: PathBuf,
    pub vllm_repo: PathBuf,
    pub atom_repo: PathBuf,
    pub trtllm_repo: PathBuf,
    pub dynamo_repo: PathBuf,
    pub recipes: PathBuf,
    /// Tags in commit order, per engine.
    pub sglang_tags: Vec<String>,
    /// The SGLang release the demo audit bumps to. The mini SGLang has one
    /// release after it (v1.2.0, which drops a deprecated alias the demo
    /// script still passes): the matrix's third column, where a deployment
    /// safe at v1.1.0 breaks.
    pub sglang_target: String,
    pub vllm_tags: Vec<String>,
    pub atom_tags: Vec<String>,
    pub trtllm_tags: Vec<String>,
    pub dynamo_tags: Vec<String>,
}

/// Fixture files below `prefix/`, grouped by their version folder (`v1.0.0/...`).
fn versions(prefix: &str) -> BTreeMap<String, Vec<(String, &'static [u8])>> {
    let mut out: BTreeMap<String, Vec<(String, &'static [u8])>> = BTreeMap::new();
    for (path, bytes) in DEMO_FILES {
        let Some(rest) = path.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) else { continue };
        let Some((version, file)) = rest.split_once('/') else { continue };
        out.entry(version.to_string()).or_default().push((file.to_string(), bytes));
    }
    out
}

fn build_repo(dir: &Path, prefix: &str) -> Result<Vec<String>, git2::Error> {
    let repo = Repository::init_bare(dir)?;
    repo.set_head("refs/heads/main")?;
    let mut parent: Option<git2::Oid> = None;
    let mut tags = Vec::new();
    let mut by_version: Vec<_> = versions(prefix).into_iter().collect();
    // Commit in version order (PEP 440), the way release tags follow each other.
    by_version.sort_by(|a, b| {
        let va = crate::source::parse_version_ref(&a.0);
        let vb = crate::source::parse_version_ref(&b.0);
        va.cmp(&vb).then(a.0.cmp(&b.0))
    });
    for (i, (version, files)) in by_version.into_iter().enumerate() {
        let mut builder = TreeBuilderByPath::default();
        for (path, bytes) in files {
            builder.insert(&path, repo.blob(bytes)?);
        }
        let tree_id = builder.write(&repo)?;
        let tree = repo.find_tree(tree_id)?;
        // Fixed dates: the demo's repos are the same on every machine.
        let sig = Signature::new("engine-audit demo", "demo@localhost", &Time::new(1_767_225_600 + i as i64 * 86_400, 0))?;
        let parents: Vec<git2::Commit> = parent.iter().map(|p| repo.find_commit(*p)).collect::<Result<_, _>>()?;
        let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
        let oid = repo.commit(Some("refs/heads/main"), &sig, &sig, &format!("release {version}"), &tree, &parent_refs)?;
        repo.tag_lightweight(&version, &repo.find_object(oid, None)?, true)?;
        tags.push(version);
        parent = Some(oid);
    }
    Ok(tags)
}

/// Nested trees from flat paths.
#[derive(Default)]
struct TreeBuilderByPath {
    files: BTreeMap<String, git2::Oid>,
    dirs: BTreeMap<String, TreeBuilderByPath>,
}

impl TreeBuilderByPath {
    fn insert(&mut self, path: &str, oid: git2::Oid) {
        match path.split_once('/') {
            Some((dir, rest)) => self.dirs.entry(dir.to_string()).or_default().insert(rest, oid),
            None => {
                self.files.insert(path.to_string(), oid);
            }
        }
    }
    fn write(&self, repo: &Repository) -> Result<git2::Oid, git2::Error> {
        let mut tb = repo.treebuilder(None)?;
        for (name, oid) in &self.files {
            tb.insert(name, *oid, 0o100644)?;
        }
        for (name, sub) in &self.dirs {
            tb.insert(name, sub.write(repo)?, 0o040000)?;
        }
        tb.write()
    }
}

/// The release the demo audit bumps the mini SGLang to (see [`DemoWorkspace::sglang_target`]).
const SGLANG_TARGET: &str = "v1.1.0";

/// Write the demo workspace below `root`.
pub fn build(root: &Path) -> Result<DemoWorkspace, miette::Report> {
    let io = |e: std::io::Error| miette::miette!("cannot write the demo workspace in {}: {e}", root.display());
    let sglang_repo = root.join("sglang.git");
    let vllm_repo = root.join("vllm.git");
    let atom_repo = root.join("atom.git");
    let trtllm_repo = root.join("trtllm.git");
    let dynamo_repo = root.join("dynamo.git");
    let recipes = root.join("recipes");
    let git = |e: git2::Error| miette::miette!("cannot build the demo repositories: {}", e.message());
    let sglang_tags = build_repo(&sglang_repo, "sglang").map_err(git)?;
    let vllm_tags = build_repo(&vllm_repo, "vllm").map_err(git)?;
    let atom_tags = build_repo(&atom_repo, "atom").map_err(git)?;
    let trtllm_tags = build_repo(&trtllm_repo, "trtllm").map_err(git)?;
    let dynamo_tags = build_repo(&dynamo_repo, "dynamo").map_err(git)?;
    for (path, bytes) in DEMO_FILES {
        if let Some(rest) = path.strip_prefix("recipes/") {
            let target = recipes.join(rest);
            std::fs::create_dir_all(target.parent().unwrap_or(&recipes)).map_err(io)?;
            std::fs::write(&target, bytes).map_err(io)?;
        }
    }
    let sglang_target = SGLANG_TARGET.to_string();
    if !sglang_tags.contains(&sglang_target) {
        return Err(miette::miette!("the demo's mini SGLang has no {sglang_target} (tags: {})", sglang_tags.join(", ")));
    }
    Ok(DemoWorkspace {
        sglang_repo,
        vllm_repo,
        atom_repo,
        trtllm_repo,
        dynamo_repo,
        recipes,
        sglang_tags,
        sglang_target,
        vllm_tags,
        atom_tags,
        trtllm_tags,
        dynamo_tags,
    })
}
