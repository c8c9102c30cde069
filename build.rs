//! Embeds the demo fixtures and the shipped rules in the binary, so `engine-audit
//! demo` and the built-in rules work wherever the binary is copied; and names the
//! commit the binary is built from, for `--version`.

#[path = "build/git_commit.rs"]
mod git_commit;

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn files_below(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else { continue };
        for entry in read.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    // A moved or removed file changes its folder, not itself.
                    println!("cargo:rerun-if-changed={}", path.display());
                    stack.push(path)
                }
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

fn embed(name: &str, root: &Path, code: &mut String) {
    println!("cargo:rerun-if-changed={}", root.display());
    let _ = writeln!(code, "pub(crate) static {name}: &[(&str, &[u8])] = &[");
    for file in files_below(root) {
        let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let abs = file.canonicalize().unwrap();
        let _ = writeln!(code, "    ({rel:?}, include_bytes!({:?})),", abs.display().to_string());
    }
    let _ = writeln!(code, "];");
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut code = String::new();
    embed("DEMO_FILES", &manifest.join("fixtures/demo"), &mut code);
    embed("RULE_FILES", &manifest.join("rules"), &mut code);
    embed("CODE_DOCS", &manifest.join("docs/codes"), &mut code);
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(out, code).unwrap();
    version(&manifest);
}

/// `ENGINE_AUDIT_LONG_VERSION` for `--version`: the package version and the
/// commit, from `ENGINE_AUDIT_BUILD_COMMIT` (a build that knows its commit but
/// has no usable checkout, as in a container) or from git; the bare version when
/// neither is there.
fn version(manifest: &Path) {
    println!("cargo:rerun-if-env-changed=ENGINE_AUDIT_BUILD_COMMIT");
    let given = std::env::var("ENGINE_AUDIT_BUILD_COMMIT").ok().filter(|c| !c.is_empty());
    let commit = match given {
        Some(id) if git_commit::is_commit_id(&id) => Some(id.to_ascii_lowercase()),
        Some(id) => panic!("ENGINE_AUDIT_BUILD_COMMIT={id:?} is not a full commit id: set it to `git rev-parse HEAD`, or unset it"),
        None => git_commit::git_commit(manifest).map(|found| {
            // A missing path would rerun this script on every build.
            for path in found.watch.iter().filter(|p| p.exists()) {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            found.id
        }),
    };
    let version = std::env::var("CARGO_PKG_VERSION").unwrap();
    println!("cargo:rustc-env=ENGINE_AUDIT_LONG_VERSION={}", git_commit::long_version(&version, commit.as_deref()));
}
