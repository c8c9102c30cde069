//! The master configs beside a recipe given on its own: a recipe whose
//! container is an srt-slurm alias (`dynamo-sglang`) names no release, the
//! master config of its repository does (the entry that runs it). Looked for
//! where InferenceX keeps them, `configs/*-master.yaml`, in the recipe's
//! folder and each folder above it up to the repository's root.

use std::path::{Path, PathBuf};

/// Folders climbed at most: a recipe sits a few levels below its repository.
const MAX_LEVELS: usize = 12;

/// The master configs of the repository `recipe` is in, nearest first: the
/// `configs/*-master.yaml` files of the first folder above it that has any.
/// The climb stops at a repository's root (a `.git` entry) or after
/// [`MAX_LEVELS`] folders; symlinked files are not taken.
pub(crate) fn master_configs_above(recipe: &Path) -> Vec<PathBuf> {
    let start = match recipe.canonicalize() {
        Ok(p) => p,
        Err(_) => return Vec::new(),
    };
    for dir in start.ancestors().skip(1).take(MAX_LEVELS) {
        let found = masters_in(&dir.join("configs"));
        if !found.is_empty() {
            return found;
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    Vec::new()
}

fn masters_in(configs: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(configs) else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("-master.yaml") || n.ends_with("-master.yml")))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_configs_folder_up_to_the_repository_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let recipe = root.join("benchmarks/multi_node/recipes/m/sglang/x.yaml");
        std::fs::create_dir_all(recipe.parent().unwrap()).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("configs")).unwrap();
        std::fs::write(&recipe, "name: x\n").unwrap();
        std::fs::write(root.join("configs/nvidia-master.yaml"), "k: {}\n").unwrap();
        std::fs::write(root.join("configs/amd-master.yaml"), "k: {}\n").unwrap();
        std::fs::write(root.join("configs/runners.yaml"), "k: {}\n").unwrap();
        let found: Vec<_> = master_configs_above(&recipe).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(found, ["amd-master.yaml", "nvidia-master.yaml"]);
        // Above the repository's root nothing is looked at.
        std::fs::create_dir_all(dir.path().join("configs")).unwrap();
        std::fs::write(dir.path().join("configs/other-master.yaml"), "k: {}\n").unwrap();
        std::fs::remove_file(root.join("configs/nvidia-master.yaml")).unwrap();
        std::fs::remove_file(root.join("configs/amd-master.yaml")).unwrap();
        assert!(master_configs_above(&recipe).is_empty());
    }
}
