//! Fetching with the `git` program, kept to what the built-in transport may
//! do: it writes only into the clone it is given, runs no hook, prompts for
//! nothing, speaks only the protocols allowed here, and is killed (with every
//! process it started) past the deadline, after the idle limit without a
//! word, or once its pack is over the budget (`limits`).
//!
//! - Hooks: `core.hooksPath=/dev/null` (a fetch runs `reference-transaction`);
//!   no work tree, so no checkout and no submodule is ever touched.
//! - Protocols: `GIT_ALLOW_PROTOCOL` (it overrides every `protocol.*.allow`,
//!   the user's included) and `protocol.allow=never`: `https`, `ssh` and
//!   `git`; `http` and `file` only when the URL itself uses them (so no
//!   `ext::`, and an `insteadOf` cannot turn a URL into a local path).
//! - Prompts: `GIT_TERMINAL_PROMPT=0`, `credential.interactive=false`, and
//!   the child runs in a session of its own, without a controlling terminal,
//!   so ssh cannot ask for a password either; credential helpers still answer.
//! - Nothing left running: no auto gc or maintenance (they detach), the
//!   process group is killed on every limit.
//! - The repository is named with `--git-dir`; variables that would point git
//!   elsewhere (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`, ...) are removed.

use super::limits::{Budget, Fetch, FetchLimits};
use super::progress::{parse_git_line, Progress};
use crate::source::redact::redact_userinfo;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Variables that would make git read or write another repository than the one named.
const REDIRECTING_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/// Lines of git's own messages kept for an error (the last ones).
const KEPT_MESSAGES: usize = 8;

/// One run of git against the clone at `git_dir`, fetching from `url`.
pub(super) struct GitRun<'a> {
    pub exe: &'a Path,
    pub git_dir: &'a Path,
    /// The remote's URL as configured (it picks the protocols allowed).
    pub url: &'a str,
    /// `fetch …` arguments, after the options set here.
    pub args: Vec<String>,
    /// Written to git's standard input (then closed).
    pub stdin: Option<Vec<u8>>,
}

/// The protocols git may speak for `url`: https, ssh and git, and http or
/// file when the URL itself is one.
pub(super) fn allowed_protocols(url: &str) -> Vec<&'static str> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let mut allowed = vec!["https", "ssh", "git"];
    match scheme.as_deref() {
        Some("http") => allowed.push("http"),
        Some("file") => allowed.push("file"),
        _ => {}
    }
    allowed
}

/// The `-c` options every run carries; `url` decides whether `http` and
/// `file` are allowed.
pub(super) fn safety_config(url: &str, idle: Duration) -> Vec<String> {
    let allowed = allowed_protocols(url);
    let mut config = vec![
        "core.hooksPath=/dev/null".to_string(),
        "protocol.allow=never".to_string(),
        "gc.auto=0".to_string(),
        "maintenance.auto=false".to_string(),
        "fetch.writeCommitGraph=false".to_string(),
        "fetch.recurseSubmodules=false".to_string(),
        "credential.interactive=false".to_string(),
        // Everything fetched stays packed: loose objects are what `source::loose` guards.
        "fetch.unpackLimit=1".to_string(),
        // git's own idle limit for http(s) (curl's low-speed abort); ours below covers the rest.
        "http.lowSpeedLimit=1".to_string(),
        format!("http.lowSpeedTime={}", idle.as_secs().max(1)),
    ];
    config.extend(allowed.iter().map(|p| format!("protocol.{p}.allow=always")));
    // A user's `protocol.ext.allow=always` would beat `protocol.allow=never`:
    // the known others are refused by name too (GIT_ALLOW_PROTOCOL, set in
    // `run`, covers the rest).
    let refused = ["ext", "fd", "file", "http"].into_iter().filter(|p| !allowed.contains(p));
    config.extend(refused.map(|p| format!("protocol.{p}.allow=never")));
    config.into_iter().flat_map(|c| ["-c".to_string(), c]).collect()
}

impl GitRun<'_> {
    /// Run it to the end or to a limit. The error is a message for
    /// `SourceError::Fetch` (user info taken out of URLs).
    pub(super) fn run(self, shown: &str, progress: &mut Progress) -> Result<(), String> {
        let limits = FetchLimits::from_env(&|name| std::env::var(name).ok())?;
        let fetch = Fetch::start(limits);
        // git bounds neither the refs nor the bytes of an advertisement.
        if matches!(self.url.split_once("://").map(|(s, _)| s.to_ascii_lowercase()).as_deref(), Some("http" | "https")) {
            super::smart_http::probe_advertisement(self.url, fetch)?;
        }
        let mut command = Command::new(self.exe);
        command.args(safety_config(self.url, limits.idle)).arg("--git-dir").arg(self.git_dir).args(&self.args);
        for var in REDIRECTING_VARS {
            command.env_remove(var);
        }
        command
            // Overrides every protocol.*.allow setting, the user's included.
            .env("GIT_ALLOW_PROTOCOL", allowed_protocols(self.url).join(":"))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("SSH_ASKPASS_REQUIRE", "never")
            .env("GCM_INTERACTIVE", "never")
            // Progress lines are read in English.
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            .current_dir(self.git_dir)
            .stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        new_session(&mut command);
        let mut child = command.spawn().map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        let pid = child.id();
        if let (Some(bytes), Some(mut stdin)) = (self.stdin, child.stdin.take()) {
            // In a thread: git reads it while writing to a pipe we must drain.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        let lines = read_lines(child.stderr.take().expect("stderr is piped"));
        let mut messages: Vec<String> = Vec::new();
        let mut last_word = Instant::now();
        let give_up = |why: String, child: &mut std::process::Child| {
            kill_group(pid);
            let _ = child.wait();
            Err(why)
        };
        loop {
            match lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    last_word = Instant::now();
                    match parse_git_line(&line) {
                        Some(counts) => {
                            if counts.received_bytes > fetch.budget(Budget::Pack) {
                                return give_up(fetch.over_budget(shown, Budget::Pack), &mut child);
                            }
                            progress.update(counts);
                        }
                        None if is_message(&line) => {
                            messages.push(redact_userinfo(clip(line.trim())));
                            if messages.len() > KEPT_MESSAGES {
                                messages.remove(0);
                            }
                        }
                        None => {}
                    }
                }
                // Its stderr is closed: it has ended, or is about to (still
                // under the deadline: a process could close stderr and go on).
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = loop {
                        match child.try_wait().map_err(|e| format!("waiting for git: {e}"))? {
                            Some(status) => break status,
                            None if Instant::now() >= fetch.deadline => return give_up(fetch.deadline_passed(shown), &mut child),
                            None => std::thread::sleep(Duration::from_millis(20)),
                        }
                    };
                    if status.success() {
                        return Ok(());
                    }
                    let said = if messages.is_empty() { format!("git exited with {status}") } else { messages.join("; ") };
                    return Err(said);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() >= fetch.deadline {
                return give_up(fetch.deadline_passed(shown), &mut child);
            }
            if last_word.elapsed() >= limits.idle {
                return give_up(fetch.silent(shown), &mut child);
            }
        }
    }
}

/// A message cut to a length an error can show (a server chooses what
/// `remote:` lines say).
fn clip(line: &str) -> &str {
    const MAX: usize = 300;
    match line.char_indices().nth(MAX) {
        Some((end, _)) => &line[..end],
        None => line,
    }
}

/// Whether a stderr line is one of git's messages (not a progress line).
fn is_message(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty()
        && !line.ends_with('%')
        && !["remote: Enumerating", "remote: Counting", "remote: Compressing", "remote: Total", "Resolving deltas", "Receiving objects"]
            .iter()
            .any(|p| line.starts_with(p))
}

/// git's stderr, split at `\r` and `\n` (progress rewrites its line with
/// `\r`), one line per message; the channel closes at end of file.
fn read_lines(mut stderr: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut pending = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            for &b in &buf[..n] {
                if b == b'\r' || b == b'\n' {
                    if !pending.is_empty() && send.send(String::from_utf8_lossy(&pending).into_owned()).is_err() {
                        return;
                    }
                    pending.clear();
                } else if pending.len() < 64 * 1024 {
                    pending.push(b);
                }
            }
        }
        if !pending.is_empty() {
            let _ = send.send(String::from_utf8_lossy(&pending).into_owned());
        }
    });
    receive
}

/// Start the child in a session of its own: no controlling terminal (nothing
/// can prompt on it) and a process group that [`kill_group`] ends whole.
fn new_session(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Kill git and everything it started (remote helpers, ssh, index-pack).
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: a plain system call; the group is the child's own session.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_urls_own_scheme_adds_http_or_file() {
        let idle = Duration::from_secs(60);
        let joined = |url: &str| safety_config(url, idle).join(" ");
        let https = joined("https://github.com/sgl-project/sglang");
        assert!(https.contains("-c protocol.allow=never") && https.contains("protocol.https.allow=always"), "{https}");
        assert!(https.contains("core.hooksPath=/dev/null") && https.contains("http.lowSpeedTime=60"), "{https}");
        assert!(!https.contains("protocol.file.allow=always") && !https.contains("protocol.http.allow=always"), "{https}");
        assert!(joined("file:///srv/sglang.git").contains("protocol.file.allow=always"));
        assert!(joined("http://mirror.lan/sglang").contains("protocol.http.allow=always"));
        assert!(!joined("git@github.com:sgl-project/sglang").contains("protocol.file.allow=always"));
        assert!(joined("ext::sh -c evil").contains("protocol.ext.allow=never"), "ext is never allowed");
        assert!(https.contains("protocol.file.allow=never") && https.contains("protocol.fd.allow=never"), "{https}");
        assert_eq!(allowed_protocols("file:///srv/x").join(":"), "https:ssh:git:file");
        assert_eq!(allowed_protocols("git@github.com:org/repo").join(":"), "https:ssh:git");
    }

    #[test]
    fn progress_lines_are_not_kept_as_messages() {
        assert!(!is_message("Receiving objects:  45% (123/456), 1.23 MiB | 2.00 MiB/s"));
        assert!(!is_message("remote: Counting objects: 100% (5/5), done."));
        assert!(is_message("fatal: repository 'https://github.com/x/y/' not found"));
    }
}
