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

use super::proxy::proxy_for;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// A server that stays silent this long is given up on.
const READ_TIMEOUT: Duration = Duration::from_secs(300);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Make libgit2 fetch `http://` and `https://` URLs through this module.
/// Idempotent; every caller waits until registration is done, so no fetch can
/// start while it is under way.
pub fn register() -> Result<(), String> {
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
                        Transport::smart(remote, true, SmartHttp { agents: Arc::clone(&agents), redirected: Arc::default() })
                    })
                }
                .map_err(|e| format!("registering the {scheme} transport: {}", e.message()))?;
            }
            Ok(())
        })
        .clone()
}

/// HTTP clients, one per (proxy, first request or not), built when first
/// needed: building one loads the system's CA certificates.
///
/// As git by default (`http.followRedirects=initial`), the first request of a
/// fetch may be redirected (a renamed repository) and later ones may not, so a
/// server cannot send the rest of the exchange to a host the user never named.
#[derive(Default)]
struct Agents {
    built: Mutex<HashMap<(Option<String>, bool), ureq::Agent>>,
}

impl Agents {
    fn get(&self, url: &str, first: bool) -> Result<ureq::Agent, String> {
        let proxy = proxy_for(url, &|name| std::env::var(name).ok());
        let mut built = lock(&self.built);
        if let Some(agent) = built.get(&(proxy.clone(), first)) {
            return Ok(agent.clone());
        }
        let mut builder = ureq::AgentBuilder::new()
            .timeout_connect(CONNECT_TIMEOUT)
            .timeout_read(READ_TIMEOUT)
            .redirects(if first { 5 } else { 0 })
            // Some hosts serve the smart protocol only to agents named `git/…`.
            .user_agent(concat!("git/2.0 (engine-audit ", env!("CARGO_PKG_VERSION"), ")"))
            .try_proxy_from_env(false);
        if let Some(p) = &proxy {
            let parsed = ureq::Proxy::new(p).map_err(|e| format!("the proxy `{p}` set in the environment: {e}"))?;
            builder = builder.proxy(parsed);
        }
        let agent = builder.build();
        built.insert((proxy, first), agent.clone());
        Ok(agent)
    }
}

/// One remote's requests. `redirected` is where the server moved the repository
/// (its answer to the first request), so later requests go there directly.
struct SmartHttp {
    agents: Arc<Agents>,
    redirected: Arc<Mutex<Option<String>>>,
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
        let agent = self.agents.get(&base, !post).map_err(|message| git2::Error::from_str(&message))?;
        Ok(Box::new(Exchange {
            agent,
            base,
            path,
            post,
            body: Vec::new(),
            response: None,
            redirected: Arc::clone(&self.redirected),
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
    agent: ureq::Agent,
    base: String,
    path: &'static str,
    post: bool,
    body: Vec<u8>,
    response: Option<Box<dyn Read + Send + Sync>>,
    redirected: Arc<Mutex<Option<String>>>,
}

impl Exchange {
    fn send(&mut self) -> io::Result<Box<dyn Read + Send + Sync>> {
        let url = format!("{}{}", self.base, self.path);
        let result = if self.post {
            self.agent
                .post(&url)
                .set("Content-Type", "application/x-git-upload-pack-request")
                .set("Accept", "application/x-git-upload-pack-result")
                .send_bytes(&self.body)
        } else {
            self.agent.get(&url).call()
        };
        let response = result.map_err(|e| failure(&url, e))?;
        if (300..400).contains(&response.status()) {
            return Err(io::Error::other(format!(
                "{url}: the server redirects a request after the first (HTTP {}); git follows only the first",
                response.status()
            )));
        }
        let expected = if self.post { "application/x-git-upload-pack-result" } else { "application/x-git-upload-pack-advertisement" };
        // A plain web server (or a login page) answers 200 with something else.
        if response.content_type() != expected {
            return Err(io::Error::other(format!(
                "{url}: the server answered `{}`, not git's smart HTTP protocol (`{expected}`); is this a git repository URL?",
                response.content_type()
            )));
        }
        if !self.post {
            if let Some(moved) = response.get_url().strip_suffix(self.path).filter(|moved| *moved != self.base) {
                *lock(&self.redirected) = Some(moved.to_string());
            }
        }
        Ok(response.into_reader())
    }
}

/// What went wrong with a request, said so the user knows what to do.
fn failure(url: &str, error: ureq::Error) -> io::Error {
    io::Error::other(match error {
        ureq::Error::Status(401 | 403, _) => {
            format!("{url}: the server asks for credentials; engine-audit fetches public repositories only (clone it yourself and pass the path)")
        }
        ureq::Error::Status(code, response) => format!("{url}: HTTP {code} {}", response.status_text()),
        // ureq's own message names the URL.
        ureq::Error::Transport(transport) => transport.to_string(),
    })
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
