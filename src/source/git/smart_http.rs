//! git's smart HTTP protocol (fetch only) for libgit2, over ureq and rustls.
//!
//! libgit2 is built without a TLS library of its own. With OpenSSL, its
//! start-up built a TLS context in every run: 14M instructions and ~3 ms, a
//! fifth of a warm audit, though an audit of local clones never opens a
//! connection. This transport is registered right before the first fetch, so
//! TLS (and the system's CA certificates) are only set up by a run that clones.
//!
//! Certificates come from the system store (`SSL_CERT_FILE` is honoured);
//! proxies from the environment, as git picks them (see `proxy`).
//!
//! A server cannot run a fetch forever or fill memory: each fetch has a total
//! deadline, each read an idle limit, and the ref advertisement and the pack
//! byte budgets (`limits`). Redirects are followed here, not by ureq: only the
//! first request of a fetch, and only to http(s) URLs, as git does (ureq
//! panicked on a redirect to `file:` or `data:`). URLs in messages never show
//! their user info (`redact`).

use super::limits::{limit_hit, Budget, Fetch, FetchLimits, LimitHit, RefCounter};
use super::proxy::proxy_for;
use crate::source::redact::redact_userinfo;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed for the first request of a fetch (git's curl allows 20;
/// a renamed repository needs one).
const MAX_REDIRECTS: usize = 5;

/// Make libgit2 fetch `http://` and `https://` URLs through this module.
/// Idempotent; every caller waits until registration is done, so no fetch can
/// start while it is under way.
pub(super) fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let agents = Arc::new(Agents::default());
            for scheme in ["http", "https"] {
                let agents = Arc::clone(&agents);
                // SAFETY: libgit2 requires registration not to race the creation
                // of a transport. It runs once, inside this OnceLock, and every
                // fetch calls `register` first, so none is under way.
                unsafe {
                    git2::transport::register(scheme, move |remote| {
                        // One transport per fetch: its clock starts now.
                        let limits = FetchLimits::from_env(&|name| std::env::var(name).ok()).map_err(|m| git2::Error::from_str(&m))?;
                        let smart = SmartHttp { agents: Arc::clone(&agents), redirected: Arc::default(), fetch: Fetch::start(limits) };
                        Transport::smart(remote, true, smart)
                    })
                }
                .map_err(|e| format!("registering the {scheme} transport: {}", e.message()))?;
            }
            Ok(())
        })
        .clone()
}

/// Read the ref advertisement of the http(s) repository `url` under this
/// fetch's limits, before `git` fetches it: git's `remote-http` holds the
/// whole advertisement in memory before it looks at it and says nothing
/// meanwhile, so an endless one would run until the idle limit, reported as
/// a silent server. The error names the limit and the variable that raises it.
/// Only a limit is an error here: what else fails (no such host, a login, an
/// `insteadOf` that sends git elsewhere) is git's to meet and report, with the
/// user's credential helpers and configuration.
pub(super) fn probe_advertisement(url: &str, fetch: Fetch) -> Result<(), String> {
    let mut exchange = Exchange {
        agents: Arc::new(Agents::default()),
        base: url.trim_end_matches('/').to_string(),
        path: "/info/refs?service=git-upload-pack",
        post: false,
        body: Vec::new(),
        response: None,
        redirected: Arc::default(),
        fetch,
    };
    match io::copy(&mut exchange, &mut io::sink()) {
        Err(e) if e.get_ref().is_some_and(|inner| inner.is::<LimitHit>()) => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// HTTP clients, one per (proxy, idle limit), built when first needed:
/// building one loads the system's CA certificates. None follows redirects
/// itself (see [`Exchange::send`]).
#[derive(Default)]
struct Agents {
    built: Mutex<HashMap<(Option<String>, Duration), ureq::Agent>>,
}

impl Agents {
    fn get(&self, url: &str, idle: Duration) -> Result<ureq::Agent, String> {
        let proxy = proxy_for(url, &|name| std::env::var(name).ok());
        let mut built = lock(&self.built);
        if let Some(agent) = built.get(&(proxy.clone(), idle)) {
            return Ok(agent.clone());
        }
        let mut builder = ureq::AgentBuilder::new()
            .timeout_connect(CONNECT_TIMEOUT.min(idle))
            // Per read and write: a silent server. The total is the fetch's deadline.
            .timeout_read(idle)
            .timeout_write(idle)
            .redirects(0)
            // Some hosts serve the smart protocol only to agents named `git/…`.
            .user_agent(concat!("git/2.0 (engine-audit ", env!("CARGO_PKG_VERSION"), ")"))
            .try_proxy_from_env(false);
        if let Some(p) = &proxy {
            let parsed = ureq::Proxy::new(p).map_err(|e| redact_userinfo(&format!("the proxy `{p}` set in the environment: {e}")))?;
            builder = builder.proxy(parsed);
        }
        let agent = builder.build();
        built.insert((proxy, idle), agent.clone());
        Ok(agent)
    }
}

/// One remote's requests. `redirected` is where the server moved the repository
/// (its answer to the first request), so later requests go there directly.
struct SmartHttp {
    agents: Arc<Agents>,
    redirected: Arc<Mutex<Option<String>>>,
    fetch: Fetch,
}

impl SmartSubtransport for SmartHttp {
    fn action(&self, url: &str, action: Service) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let (path, post) = match action {
            Service::UploadPackLs => ("/info/refs?service=git-upload-pack", false),
            Service::UploadPack => ("/git-upload-pack", true),
            Service::ReceivePackLs | Service::ReceivePack => {
                return Err(git2::Error::from_str("engine-audit only fetches; it never pushes"));
            }
        };
        let base = lock(&self.redirected).clone().unwrap_or_else(|| url.trim_end_matches('/').to_string());
        Ok(Box::new(Exchange {
            agents: Arc::clone(&self.agents),
            base,
            path,
            post,
            body: Vec::new(),
            response: None,
            redirected: Arc::clone(&self.redirected),
            fetch: self.fetch,
        }))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One request and its response. libgit2 writes the request body (in as many
/// pieces as it likes), then reads: the request is sent on the first read, and
/// the response streams from the socket, never held whole (a pack can be large).
struct Exchange {
    agents: Arc<Agents>,
    base: String,
    path: &'static str,
    post: bool,
    body: Vec<u8>,
    response: Option<Bounded>,
    redirected: Arc<Mutex<Option<String>>>,
    fetch: Fetch,
}

impl Exchange {
    /// Send the request, following redirects of the first one (a GET) to
    /// http(s) URLs only, and check that the answer is git's protocol.
    fn send(&mut self) -> io::Result<Bounded> {
        let mut url = format!("{}{}", self.base, self.path);
        let mut hops = 0;
        let response = loop {
            let response = self.request(&url)?;
            if !(300..400).contains(&response.status()) {
                break response;
            }
            let shown = redact_userinfo(&url);
            if self.post {
                return Err(io::Error::other(format!(
                    "{shown}: the server redirects a request after the first (HTTP {}); git follows only the first",
                    response.status()
                )));
            }
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(io::Error::other(format!("{shown}: more than {MAX_REDIRECTS} redirects")));
            }
            let location = response.header("location").unwrap_or_default().to_string();
            url = follow(&url, &location).map_err(|why| io::Error::other(format!("{shown}: the server redirects {why}")))?;
        };
        let shown = redact_userinfo(&url);
        let expected = if self.post { "application/x-git-upload-pack-result" } else { "application/x-git-upload-pack-advertisement" };
        // A plain web server (or a login page) answers 200 with something else.
        if response.content_type() != expected {
            return Err(io::Error::other(format!(
                "{shown}: the server answered `{}`, not git's smart HTTP protocol (`{expected}`); is this a git repository URL?",
                response.content_type()
            )));
        }
        if !self.post {
            if let Some(moved) = url.strip_suffix(self.path).filter(|moved| *moved != self.base) {
                *lock(&self.redirected) = Some(moved.to_string());
            }
        }
        let budget = if self.post { Budget::Pack } else { Budget::Advertisement };
        Ok(Bounded { inner: response.into_reader(), url: shown, fetch: self.fetch, budget, read: 0, refs: RefCounter::default() })
    }

    /// One request, given up at the fetch's deadline even if the server
    /// trickles its response head a byte at a time (ureq's own timeouts bound
    /// each read, not the whole): it runs on a thread this one stops waiting for.
    fn request(&mut self, url: &str) -> io::Result<ureq::Response> {
        let shown = redact_userinfo(url);
        let remaining = self.fetch.remaining(&shown).map_err(limit_hit)?;
        let agent = self.agents.get(url, self.fetch.limits.idle).map_err(io::Error::other)?;
        let request = if self.post {
            agent
                .post(url)
                .set("Content-Type", "application/x-git-upload-pack-request")
                .set("Accept", "application/x-git-upload-pack-result")
        } else {
            agent.get(url)
        };
        // A POST is never redirected, so its body is sent once.
        let body = self.post.then(|| std::mem::take(&mut self.body));
        let (answer, answered) = std::sync::mpsc::channel();
        std::thread::Builder::new().name("engine-audit-http".into()).spawn(move || {
            let result = match body {
                Some(body) => request.send_bytes(&body),
                None => request.call(),
            };
            // The fetch may have given up waiting: then nobody listens.
            let _ = answer.send(result);
        })?;
        match answered.recv_timeout(remaining) {
            Ok(result) => result.map_err(|e| failure(&shown, e, &self.fetch)),
            Err(_) => Err(limit_hit(self.fetch.deadline_passed(&shown))),
        }
    }
}

/// Where a redirect from `from` to `location` leads: an absolute http(s) URL
/// with a host, or why it is refused.
fn follow(from: &str, location: &str) -> Result<String, String> {
    let shown = redact_userinfo(location);
    if location.is_empty() {
        return Err("without saying where (no Location)".into());
    }
    let (from_scheme, from_rest) = from.split_once("://").ok_or_else(|| format!("from `{}`, which is not a URL", redact_userinfo(from)))?;
    let target = match scheme_of(location) {
        Some(_) => location.to_string(),
        None if location.starts_with("//") => format!("{from_scheme}:{location}"),
        None => {
            let origin_end = from_rest.find('/').unwrap_or(from_rest.len());
            let origin = format!("{from_scheme}://{}", &from_rest[..origin_end]);
            if location.starts_with('/') {
                format!("{origin}{location}")
            } else {
                // Relative to the folder of the current path (its query dropped).
                let path = from_rest[origin_end..].split(['?', '#']).next().unwrap_or_default();
                let folder = path.rfind('/').map_or("/", |i| &path[..=i]);
                format!("{origin}{folder}{location}")
            }
        }
    };
    let scheme = scheme_of(&target).unwrap_or_default().to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("to `{shown}`; only http:// and https:// redirects are followed"));
    }
    let authority = target.split_once("://").map_or("", |(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or_default());
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if host.is_empty() || host.starts_with(':') {
        return Err(format!("to `{shown}`, which names no host"));
    }
    Ok(target)
}

/// The scheme of an absolute URL (`data:` has no `//`), if `url` is one.
fn scheme_of(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let valid =
        chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// What went wrong with a request, said so the user knows what to do.
fn failure(url: &str, error: ureq::Error, fetch: &Fetch) -> io::Error {
    io::Error::other(match error {
        ureq::Error::Status(401 | 403, _) => {
            format!("{url}: the server asks for credentials; engine-audit fetches public repositories only (clone it yourself and pass the path)")
        }
        ureq::Error::Status(code, response) => format!("{url}: HTTP {code} {}", response.status_text()),
        ureq::Error::Transport(transport) if timed_out(&transport) => return limit_hit(fetch.silent(url)),
        // ureq's own message names the URL, user info and all.
        ureq::Error::Transport(transport) => redact_userinfo(&transport.to_string()),
    })
}

/// Whether a transport error is a read that waited out the idle limit (not
/// a connection that could not be made).
fn timed_out(transport: &ureq::Transport) -> bool {
    transport.kind() == ureq::ErrorKind::Io
        && std::error::Error::source(transport)
            .and_then(|source| source.downcast_ref::<io::Error>())
            .is_some_and(|e| matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock))
}

/// A response body under the fetch's deadline and its byte budget: libgit2
/// keeps the whole ref advertisement in memory and writes the pack to disk.
struct Bounded {
    inner: Box<dyn Read + Send + Sync>,
    /// For messages, without user info.
    url: String,
    fetch: Fetch,
    budget: Budget,
    read: u64,
    /// Refs of an advertisement so far.
    refs: RefCounter,
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if Instant::now() >= self.fetch.deadline {
            return Err(limit_hit(self.fetch.deadline_passed(&self.url)));
        }
        let n = self.inner.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => limit_hit(self.fetch.silent(&self.url)),
            _ => io::Error::new(e.kind(), redact_userinfo(&e.to_string())),
        })?;
        self.read += n as u64;
        if self.read > self.fetch.budget(self.budget) {
            return Err(limit_hit(self.fetch.over_budget(&self.url, self.budget)));
        }
        if self.budget == Budget::Advertisement {
            self.refs.feed(&buf[..n]);
            if self.refs.lines > self.fetch.limits.max_refs {
                return Err(limit_hit(self.fetch.too_many_refs(&self.url)));
            }
        }
        Ok(n)
    }
}

impl Read for Exchange {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let response = match self.response.take() {
            Some(response) => response,
            None => self.send()?,
        };
        self.response.insert(response).read(buf)
    }
}

impl Write for Exchange {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.response.is_some() {
            return Err(io::Error::other("git wrote to an HTTP request already sent"));
        }
        self.body.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_resolve_like_a_browser_and_only_to_http() {
        let from = "https://git.example/old/repo/info/refs?service=git-upload-pack";
        for (location, want) in [
            ("https://new.example/repo/info/refs?service=git-upload-pack", "https://new.example/repo/info/refs?service=git-upload-pack"),
            ("HTTP://new.example/r", "HTTP://new.example/r"),
            ("//cdn.example/r/info/refs", "https://cdn.example/r/info/refs"),
            ("/moved/info/refs", "https://git.example/moved/info/refs"),
            ("refs2", "https://git.example/old/repo/info/refs2"),
        ] {
            assert_eq!(follow(from, location).as_deref(), Ok(want), "{location}");
        }
        for location in ["file:///etc/passwd", "data:,hello", "ftp://x/y", "javascript:alert(1)", "http:///no-host", "https://user@/x", ""]
        {
            assert!(follow(from, location).is_err(), "{location}");
        }
        let refused = follow(from, "file://alice:s3cret@host/x").unwrap_err();
        assert!(!refused.contains("s3cret"), "{refused}");
    }
}
