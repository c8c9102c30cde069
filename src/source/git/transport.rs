//! Which transport fetches a URL: the `git` program when it is on `PATH` (it
//! brings the user's credential helpers, ssh, `insteadOf` and partial clones),
//! else the built-in one (libgit2 over rustls, `smart_http`).
//!
//! `ENGINE_AUDIT_GIT=builtin|git|auto` overrides what the config's `fetch:`
//! key (or the caller) chose.

use std::path::{Path, PathBuf};

/// The variable that picks the transport.
pub const GIT_VAR: &str = "ENGINE_AUDIT_GIT";

/// How URL sources are fetched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FetchWith {
    /// `git` when it is on `PATH`, else built in.
    #[default]
    Auto,
    /// The `git` program; an error when there is none.
    Git,
    /// libgit2 with engine-audit's own smart HTTP (http(s) and file URLs only).
    Builtin,
}

impl FetchWith {
    fn parse(value: &str) -> Option<FetchWith> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Some(FetchWith::Auto),
            "git" | "cli" => Some(FetchWith::Git),
            "builtin" | "built-in" | "libgit2" => Some(FetchWith::Builtin),
            _ => None,
        }
    }
}

/// The transport one fetch uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Chosen {
    Git(PathBuf),
    Builtin,
}

/// The transport for `wanted`, after the environment (`env` looks a variable
/// up) and `PATH` (`path`). An error names what to change.
pub(super) fn choose(wanted: FetchWith, env: &dyn Fn(&str) -> Option<String>, path: Option<&std::ffi::OsStr>) -> Result<Chosen, String> {
    let wanted = match env(GIT_VAR) {
        Some(value) => FetchWith::parse(&value).ok_or_else(|| format!("{GIT_VAR}=`{value}`: expected `git`, `builtin` or `auto`"))?,
        None => wanted,
    };
    let found = || path.and_then(find_git);
    match wanted {
        FetchWith::Builtin => Ok(Chosen::Builtin),
        FetchWith::Auto => Ok(found().map_or(Chosen::Builtin, Chosen::Git)),
        FetchWith::Git => found()
            .map(Chosen::Git)
            .ok_or_else(|| format!("fetching with git was asked for ({GIT_VAR} or `fetch: git`), but there is no `git` on PATH")),
    }
}

/// The first executable `git` in a `PATH` value.
fn find_git(path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path).filter(|dir| dir.is_absolute()).map(|dir| dir.join("git")).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_path() -> (tempfile::TempDir, std::ffi::OsString) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join("git");
        std::fs::write(&git, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["relative/bin".into(), dir.path().to_path_buf()]).unwrap();
        (dir, path)
    }

    #[test]
    fn git_on_path_is_used_unless_builtin_is_asked_for() {
        let (dir, path) = fake_path();
        let none = |_: &str| None;
        assert_eq!(choose(FetchWith::Auto, &none, Some(&path)), Ok(Chosen::Git(dir.path().join("git"))));
        assert_eq!(choose(FetchWith::Builtin, &none, Some(&path)), Ok(Chosen::Builtin));
        assert_eq!(choose(FetchWith::Auto, &none, Some("/nonexistent".as_ref())), Ok(Chosen::Builtin));
        let err = choose(FetchWith::Git, &none, Some("/nonexistent".as_ref())).unwrap_err();
        assert!(err.contains("no `git` on PATH"), "{err}");
    }

    #[test]
    fn the_variable_overrides_the_config() {
        let (_dir, path) = fake_path();
        let builtin = |n: &str| (n == GIT_VAR).then(|| "builtin".to_string());
        assert_eq!(choose(FetchWith::Git, &builtin, Some(&path)), Ok(Chosen::Builtin));
        let bad = |n: &str| (n == GIT_VAR).then(|| "svn".to_string());
        assert!(choose(FetchWith::Auto, &bad, Some(&path)).unwrap_err().contains("`svn`"));
    }

    #[test]
    fn a_git_in_a_relative_path_entry_is_not_used() {
        // `PATH=.:...` must not run a `git` the working directory holds.
        let (_dir, path) = fake_path();
        let relative_only = std::env::split_paths(&path).filter(|p| !p.is_absolute()).collect::<Vec<_>>();
        assert_eq!(find_git(&std::env::join_paths(relative_only).unwrap()), None);
        assert_eq!(find_git(".".as_ref()), None);
    }
}
