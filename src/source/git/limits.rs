//! Bounds of one fetch, so a hostile or broken server can neither run it
//! forever nor fill memory or disk: a total deadline, an idle limit per read,
//! byte budgets for the ref advertisement (held in memory by libgit2 and by
//! git's `remote-http`) and the pack (written to disk), and a number of refs
//! the advertisement may list. Generous defaults; each can be changed through
//! the environment.

use std::time::{Duration, Instant};

/// Seconds a whole fetch may take.
pub(super) const TIMEOUT_VAR: &str = "ENGINE_AUDIT_FETCH_TIMEOUT";
/// Seconds a server may stay silent.
pub(super) const IDLE_VAR: &str = "ENGINE_AUDIT_FETCH_IDLE_TIMEOUT";
/// MiB of ref advertisement (one response).
pub(super) const ADVERTISEMENT_VAR: &str = "ENGINE_AUDIT_MAX_REF_ADVERTISEMENT_MIB";
/// MiB of pack (one response).
pub(super) const PACK_VAR: &str = "ENGINE_AUDIT_MAX_PACK_MIB";
/// Refs one advertisement may list.
pub(super) const REFS_VAR: &str = "ENGINE_AUDIT_MAX_REFS";

/// A first clone of SGLang takes minutes on a slow link.
const DEFAULT_TIMEOUT_SECS: u64 = 600;
const DEFAULT_IDLE_SECS: u64 = 60;
/// SGLang's advertisement is well under 1 MiB.
const DEFAULT_ADVERTISEMENT_MIB: u64 = 64;
/// SGLang's whole history packs to a few hundred MiB.
const DEFAULT_PACK_MIB: u64 = 4096;
/// GitHub's advertisement of vLLM lists every pull request's refs (tens of
/// thousands); ten times that is still a repository, not a stream.
const DEFAULT_MAX_REFS: u64 = 500_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FetchLimits {
    pub total: Duration,
    pub idle: Duration,
    pub advertisement_mib: u64,
    pub pack_mib: u64,
    pub max_refs: u64,
}

impl FetchLimits {
    /// The limits the environment sets, or the defaults; `env` looks a
    /// variable up (`std::env::var` in use). A value that is not a whole
    /// number above 0 is an error naming the variable.
    pub(super) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<FetchLimits, String> {
        let get = |name: &str, default: u64| -> Result<u64, String> {
            match env(name).filter(|v| !v.trim().is_empty()) {
                None => Ok(default),
                Some(v) => {
                    v.trim().parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| format!("{name}=`{v}` is not a whole number above 0"))
                }
            }
        };
        Ok(FetchLimits {
            total: Duration::from_secs(get(TIMEOUT_VAR, DEFAULT_TIMEOUT_SECS)?),
            idle: Duration::from_secs(get(IDLE_VAR, DEFAULT_IDLE_SECS)?),
            advertisement_mib: get(ADVERTISEMENT_VAR, DEFAULT_ADVERTISEMENT_MIB)?,
            pack_mib: get(PACK_VAR, DEFAULT_PACK_MIB)?,
            max_refs: get(REFS_VAR, DEFAULT_MAX_REFS)?,
        })
    }
}

/// What a response is, for its budget and its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Budget {
    Advertisement,
    Pack,
}

/// The clock and the budgets of one fetch, shared by its requests.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fetch {
    pub limits: FetchLimits,
    pub deadline: Instant,
}

impl Fetch {
    pub(super) fn start(limits: FetchLimits) -> Fetch {
        // Far beyond any real deadline if the sum overflows: the idle limit still holds.
        let deadline = Instant::now().checked_add(limits.total).unwrap_or_else(|| Instant::now() + Duration::from_secs(u32::MAX as u64));
        Fetch { limits, deadline }
    }

    /// Time left, or the deadline's error.
    pub(super) fn remaining(&self, url: &str) -> Result<Duration, String> {
        self.deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()).ok_or_else(|| self.deadline_passed(url))
    }

    pub(super) fn deadline_passed(&self, url: &str) -> String {
        format!(
            "{url}: the fetch took longer than {} s and was given up ({TIMEOUT_VAR} sets the limit in seconds)",
            self.limits.total.as_secs()
        )
    }

    pub(super) fn silent(&self, url: &str) -> String {
        format!("{url}: the server sent nothing for {} s ({IDLE_VAR} sets the limit in seconds)", self.limits.idle.as_secs())
    }

    /// Bytes `budget` allows, and its error.
    pub(super) fn budget(&self, budget: Budget) -> u64 {
        let mib = match budget {
            Budget::Advertisement => self.limits.advertisement_mib,
            Budget::Pack => self.limits.pack_mib,
        };
        mib.saturating_mul(1 << 20)
    }

    pub(super) fn over_budget(&self, url: &str, budget: Budget) -> String {
        let (what, mib, var) = match budget {
            Budget::Advertisement => ("ref advertisement", self.limits.advertisement_mib, ADVERTISEMENT_VAR),
            Budget::Pack => ("pack", self.limits.pack_mib, PACK_VAR),
        };
        format!("{url}: the server's {what} exceeded {mib} MiB and was cut off ({var} sets the limit)")
    }

    pub(super) fn too_many_refs(&self, url: &str) -> String {
        format!(
            "{url}: the server's ref advertisement listed more than {} refs and was cut off ({REFS_VAR} sets the limit)",
            self.limits.max_refs
        )
    }
}

/// A limit of this module was reached: the error of a read or a request that
/// carries it, so a caller can tell it from a failure of the network or the
/// server (`smart_http::probe_advertisement` leaves those to git).
#[derive(Debug)]
pub(super) struct LimitHit(pub String);

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LimitHit {}

/// `message` (one of [`Fetch`]'s) as an I/O error that says a limit was hit.
pub(super) fn limit_hit(message: String) -> std::io::Error {
    std::io::Error::other(LimitHit(message))
}

/// Counts the pkt-lines of a ref advertisement as it streams by (one ref a
/// line, after the service line), without holding any of it.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct RefCounter {
    /// Length digits of the next pkt-line header read so far.
    header: [u8; 4],
    have: usize,
    /// Bytes of the current line's payload still to skip.
    skip: usize,
    /// Data lines seen (flushes and delimiters are not lines).
    pub lines: u64,
    /// Not pkt-lines: counting stopped (libgit2 or git reports the error).
    broken: bool,
}

impl RefCounter {
    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.broken {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            self.header[self.have] = bytes[0];
            self.have += 1;
            bytes = &bytes[1..];
            if self.have < 4 {
                continue;
            }
            self.have = 0;
            let len = std::str::from_utf8(&self.header).ok().and_then(|h| usize::from_str_radix(h, 16).ok());
            match len {
                // 0000 flush, 0001 delimiter, 0002 response end.
                Some(0..=3) => {}
                Some(len) => {
                    self.lines += 1;
                    self.skip = len - 4;
                }
                None => self.broken = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'v>(vars: &'v [(&'v str, &'v str)]) -> impl Fn(&str) -> Option<String> + 'v {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn defaults_are_generous_and_each_can_be_set() {
        let limits = FetchLimits::from_env(&with(&[])).unwrap();
        assert_eq!((limits.total.as_secs(), limits.idle.as_secs(), limits.advertisement_mib, limits.pack_mib), (600, 60, 64, 4096));
        assert_eq!(limits.max_refs, 500_000);
        let set = [(TIMEOUT_VAR, "30"), (IDLE_VAR, " 5 "), (ADVERTISEMENT_VAR, "2"), (PACK_VAR, ""), (REFS_VAR, "10")];
        let limits = FetchLimits::from_env(&with(&set)).unwrap();
        assert_eq!((limits.total.as_secs(), limits.idle.as_secs(), limits.advertisement_mib, limits.pack_mib), (30, 5, 2, 4096));
        assert_eq!(limits.max_refs, 10);
        for bad in ["0", "-1", "ten", "1.5"] {
            let err = FetchLimits::from_env(&with(&[(TIMEOUT_VAR, bad)])).unwrap_err();
            assert!(err.contains(TIMEOUT_VAR) && err.contains(bad), "{err}");
        }
    }

    #[test]
    fn a_deadline_past_is_an_error_naming_the_url_and_the_limit() {
        let fetch = Fetch::start(FetchLimits::from_env(&with(&[(TIMEOUT_VAR, "1")])).unwrap());
        assert!(fetch.remaining("http://h/r").is_ok());
        let past = Fetch { deadline: Instant::now() - Duration::from_millis(1), ..fetch };
        let err = past.remaining("http://h/r").unwrap_err();
        assert!(err.contains("http://h/r") && err.contains("longer than 1 s"), "{err}");
        assert_eq!(fetch.budget(Budget::Advertisement), 64 << 20);
    }

    #[test]
    fn refs_are_counted_across_reads_of_any_size() {
        let pkt = |line: &str| format!("{:04x}{line}", line.len() + 4);
        let refs: String = (0..3).map(|i| pkt(&format!("{} refs/tags/v0.5.{i}\n", "a".repeat(40)))).collect();
        let stream = format!("{}0000{}{refs}0000", pkt("# service=git-upload-pack\n"), pkt("x HEAD\0side-band-64k\n"));
        for chunk in [1, 3, 7, stream.len()] {
            let mut counter = RefCounter::default();
            stream.as_bytes().chunks(chunk).for_each(|c| counter.feed(c));
            assert_eq!(counter.lines, 5, "chunks of {chunk}");
        }
        let mut counter = RefCounter::default();
        counter.feed(b"<html>0010abcdefghijkl");
        assert_eq!(counter.lines, 0, "not pkt-lines: nothing counted");
    }
}
