//! The binary run as a user runs it (no colour), for the demo tests.

use std::ffi::OsStr;
use std::process::Output;

pub fn run(args: &[&OsStr]) -> Output {
    assert_cmd::Command::cargo_bin("engine-audit").unwrap().args(args).env("NO_COLOR", "1").output().unwrap()
}

/// `run` of `args` followed by the plain words `extra`.
pub fn run_with<'a>(mut args: Vec<&'a OsStr>, extra: &'a [&'a str]) -> Output {
    args.extend(extra.iter().map(OsStr::new));
    run(&args)
}

pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
