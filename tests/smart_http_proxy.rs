//! Fetches through the proxy the environment names, and around it for hosts
//! `no_proxy` covers. Its own test binary: it sets process-wide variables.

use engine_audit::source::{EngineRepo, FetchWith, OpenOptions, SourceError};

#[path = "support/git_repo.rs"]
mod git_repo;
#[path = "support/http_server.rs"]
mod http_server;
use http_server::{git_backend, serve, upstream, Request, Response};

#[test]
fn fetches_go_through_the_named_proxy_unless_no_proxy_covers_the_host() {
    let (root, _, second) = upstream();
    let served = root.path().to_path_buf();
    // A proxy receives absolute URLs; this one serves `git.invalid` itself, a
    // host nobody can reach directly (`.invalid` never resolves).
    let proxy = serve(move |request, _| match request.path.strip_prefix("http://git.invalid") {
        Some(path) => git_backend(&served, &Request { path: path.to_string(), ..request.clone() }),
        None => Response::new(400, "text/plain", "not a proxy request"),
    });
    for name in ["no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "https_proxy", "HTTPS_PROXY", "HTTP_PROXY"] {
        std::env::remove_var(name);
    }
    std::env::set_var("http_proxy", &proxy.url);
    let options = |cache: &tempfile::TempDir| OpenOptions {
        offline: false,
        cache_dir: Some(cache.path().to_path_buf()),
        fetch: FetchWith::Builtin,
        ..Default::default()
    };

    let cache = tempfile::tempdir().unwrap();
    let cloned = EngineRepo::open("http://git.invalid/sglang", &options(&cache)).unwrap();
    assert_eq!(cloned.resolve("v0.2.0").unwrap().commit, second);
    let log = proxy.log.lock().unwrap().clone();
    assert_eq!(log, ["GET http://git.invalid/sglang/info/refs", "POST http://git.invalid/sglang/git-upload-pack"]);

    // Covered by no_proxy: a direct connection, which cannot find the host.
    std::env::set_var("no_proxy", "example.org, .invalid");
    let cache = tempfile::tempdir().unwrap();
    let err = EngineRepo::open("http://git.invalid/sglang", &options(&cache)).err().expect("no direct way to git.invalid");
    assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
    assert_eq!(proxy.log.lock().unwrap().len(), 2, "the proxy saw nothing more");
}
