//! Acceptance on the real upstream corpus (built by ../shared/corpus/build-corpus.sh).
//! Runs when ENGINE_AUDIT_CORPUS names the corpus folder; `.ci/run` sets it.
//! Without it each test prints why it did nothing.

use engine_audit::source::{discover_package_root, Engine, EngineRepo, OpenOptions, Tree};
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    match std::env::var_os("ENGINE_AUDIT_CORPUS") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("ENGINE_AUDIT_CORPUS is not set: corpus acceptance skipped (.ci/run sets it)");
            None
        }
    }
}

fn open(corpus: &std::path::Path, name: &str) -> EngineRepo {
    let path = corpus.join(name);
    EngineRepo::open(path.to_str().unwrap(), &OpenOptions { offline: true, cache_dir: None })
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn opens_the_real_repos_and_reads_the_engine_files() {
    let Some(corpus) = corpus() else { return };
    let sglang = open(&corpus, "sglang.git");
    for tag in ["v0.5.12.post1", "v0.5.19"] {
        let tree = sglang.tree_at(&sglang.resolve(tag).unwrap()).unwrap();
        let root = discover_package_root(&tree, Engine::Sglang, None).unwrap();
        assert_eq!(root, "python/sglang", "{tag}");
        for file in ["srt/server_args.py", "srt/environ.py"] {
            let text = tree.read_text(&format!("{root}/{file}")).unwrap();
            assert!(text.contains("SGLANG_") || text.contains("add_argument") || text.contains("class ServerArgs"), "{tag} {file}");
            assert!(text.len() > 10_000, "{tag} {file} is the real file ({} bytes)", text.len());
        }
    }
    let dynamo = open(&corpus, "dynamo.git");
    for tag in ["v1.3.0.post1", "v1.5.0"] {
        let tree = dynamo.tree_at(&dynamo.resolve(tag).unwrap()).unwrap();
        assert_eq!(discover_package_root(&tree, Engine::Dynamo, None).unwrap(), "components/src/dynamo", "{tag}");
        assert!(tree.contains("components/src/dynamo/sglang/args.py"), "{tag}");
    }
    // A bare version resolves to the v-tag.
    assert_eq!(sglang.resolve("0.5.19").unwrap().matched, "refs/tags/v0.5.19");
}

#[test]
fn surface_json_names_the_commit_and_the_modules() {
    let Some(corpus) = corpus() else { return };
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .args(["surface", "--sglang"])
        .arg(corpus.join("sglang.git"))
        .args(["--at", "v0.5.19", "--format", "json", "--offline"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sglang = open(&corpus, "sglang.git");
    assert_eq!(json["commit"], sglang.resolve("v0.5.19").unwrap().commit);
    let modules: Vec<&str> = json["modules"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(modules.contains(&"sglang.srt.server_args"));
    assert!(modules.contains(&"sglang.srt.utils.server_args_config_parser"));
    assert!(!modules.contains(&"sglang.srt.server_args_config_parser"), "moved away by v0.5.19");
    assert!(modules.len() > 2000, "{} modules", modules.len());
}
