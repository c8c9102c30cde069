//! `engine-audit audit INPUT --atom ATOM ...` as the ATOM tests run it, with
//! no cache and JSON out: the exit code and the report.

use serde_json::Value;
use std::path::Path;

/// The run's exit code (at most `max_code`, else the test fails with its
/// stderr) and its JSON report.
pub fn audit_json(atom: &Path, input: &Path, args: &[&str], max_code: i32) -> (i32, Value) {
    let out = assert_cmd::Command::cargo_bin("engine-audit")
        .unwrap()
        .arg("audit")
        .arg(input)
        .arg("--atom")
        .arg(atom)
        .args(["--offline", "--no-cache", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().expect("exited, no signal");
    assert!(code <= max_code, "exit {code}: {}", String::from_utf8_lossy(&out.stderr));
    (code, serde_json::from_slice(&out.stdout).unwrap())
}
