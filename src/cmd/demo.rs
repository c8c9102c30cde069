//! `engine-audit demo`: builds small engine repos from the bundled fixtures and runs
//! the pipeline on them, so a fresh clone shows what the tool does in one command.

use super::output::emit;
use crate::cli::DemoArgs;
use crate::extract::extract_surface;
use crate::source::{discover_package_root, Engine, EngineRepo, OpenOptions, Tree};
use crate::surface_diff::diff;
use std::process::ExitCode;

pub fn run(args: DemoArgs) -> miette::Result<ExitCode> {
    let temp;
    let root = match &args.keep {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::tempdir().map_err(|e| miette::miette!("cannot create a temporary folder: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    let ws = crate::demo::build(&root)?;
    emit(&format!(
        "engine-audit demo: mini SGLang {} and mini Dynamo {} built in {}\n",
        ws.sglang_tags.join(", "),
        ws.dynamo_tags.join(", "),
        root.display()
    ));

    let repo = EngineRepo::open(&ws.sglang_repo.to_string_lossy(), &OpenOptions { offline: true, cache_dir: None })?;
    let mut surfaces = Vec::new();
    for tag in [&ws.sglang_tags[0], ws.sglang_tags.last().unwrap_or(&ws.sglang_tags[0])] {
        let tree = repo.tree_at(&repo.resolve(tag)?)?;
        let package_root = discover_package_root(&tree as &dyn Tree, Engine::Sglang, None)?;
        surfaces.push(extract_surface(&tree, Engine::Sglang, &package_root, tag));
    }
    emit(&super::diff::render(&diff(&surfaces[0], &surfaces[1]), false));
    Ok(ExitCode::SUCCESS)
}
