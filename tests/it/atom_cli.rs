//! `engine-audit audit INPUT... --atom ATOM ...` as the ATOM tests run it, with
//! no cache and JSON out: the exit code and the report.

use serde_json::Value;
use std::ffi::OsStr;
use std::path::Path;

/// The run's exit code (at most `max_code`, else the test fails with its
/// stderr) and its JSON report.
pub fn audit_json(atom: &Path, input: &Path, args: &[&str], max_code: i32) -> (i32, Value) {
    audit_json_in(None, &[input.as_os_str()], atom, args, max_code)
}

/// The same, for several inputs, run from `dir` when given (relative paths as
/// a user in that folder writes them).
pub fn audit_json_in(dir: Option<&Path>, inputs: &[&OsStr], atom: &Path, args: &[&str], max_code: i32) -> (i32, Value) {
    let mut cmd = assert_cmd::Command::cargo_bin("engine-audit").unwrap();
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let out = cmd
        .arg("audit")
        .args(inputs)
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
