//! Where the real data is, for the tests that read it: the upstream corpus
//! (`ENGINE_AUDIT_CORPUS`, which `.ci/run` sets; without it such a test says
//! so and does nothing) and the shared InferenceX data (`ENGINE_AUDIT_SHARED`,
//! else `../shared` beside the project).

use std::path::{Path, PathBuf};

/// The corpus folder, or `None` after saying that `test` is skipped.
pub fn corpus(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("ENGINE_AUDIT_CORPUS").map(PathBuf::from);
    if dir.is_none() {
        eprintln!("ENGINE_AUDIT_CORPUS is not set: {test} is skipped (.ci/run sets it)");
    }
    dir
}

/// The shared data folder (`recipes/`, `oracle/`, `corpus/`).
pub fn shared() -> PathBuf {
    std::env::var_os("ENGINE_AUDIT_SHARED").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// Findings of a JSON report that still carry an edit `--fix` could apply.
pub fn fixable(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["fix"]["edits"].as_array().is_some_and(|e| !e.is_empty()))
        .map(|f| format!("{} {}:{} {}", f["code"], f["recipe"], f["line"], f["subject"]))
        .collect()
}
