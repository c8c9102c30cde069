//! Clones and fetches of `http(s)://` URLs: git's smart HTTP protocol through
//! engine-audit's own transport (libgit2 is built without TLS). The server here
//! runs `git http-backend`, git's own CGI, so the exchange is the real protocol;
//! other servers stand in for a moved repository, a web page and a login.
//! Proxies are in `smart_http_proxy.rs` (they change the environment).

use engine_audit::source::{EngineRepo, FetchWith, OpenOptions, SourceError, Tree};
use git2::{Signature, Time};
use std::path::Path;

use crate::git_repo;
use crate::http_server;
use git_repo::commit;
use http_server::{git_backend, serve, upstream, Response};

/// The built-in transport (these tests are about it; `git` is on PATH here).
fn online(cache: &Path) -> OpenOptions {
    OpenOptions { offline: false, cache_dir: Some(cache.to_path_buf()), fetch: FetchWith::Builtin, ..Default::default() }
}

#[test]
fn clones_and_fetches_over_http_with_the_smart_protocol() {
    let (root, repo_dir, second) = upstream();
    let served = root.path().to_path_buf();
    let server = serve(move |request, _| git_backend(&served, request));
    let url = format!("{}/sglang", server.url);
    let cache = tempfile::tempdir().unwrap();

    let cloned = EngineRepo::open(&url, &online(cache.path())).unwrap();
    let resolved = cloned.resolve("v0.2.0").unwrap();
    assert_eq!(resolved.commit, second);
    let tree = cloned.tree_at(&resolved).unwrap();
    assert_eq!(tree.read("python/sglang/__init__.py").unwrap(), b"V = 2\n");

    // A release tagged upstream later: the cached clone fetches it, telling the
    // server what it has (a second request body, after the first fetch's).
    let repo = git2::Repository::open(&repo_dir).unwrap();
    let sig = Signature::new("t", "t@localhost", &Time::new(1_700_200_000, 0)).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap().id();
    let third = commit(&repo, &sig, &[("python/sglang/__init__.py", "V = 3\n")], Some(head), 1_700_200_000);
    repo.tag_lightweight("v0.3.0", &repo.find_object(third, None).unwrap(), false).unwrap();
    let again = EngineRepo::open(&url, &online(cache.path())).unwrap();
    assert_eq!(again.resolve("v0.3.0").unwrap().commit, third.to_string());

    let log = server.log.lock().unwrap().clone();
    assert_eq!(
        log,
        ["GET /sglang/info/refs", "POST /sglang/git-upload-pack", "GET /sglang/info/refs", "POST /sglang/git-upload-pack"],
        "one ref listing and one pack request per fetch"
    );
    // libgit2 still has a plain-http transport of its own: this was ours.
    for agent in server.agents.lock().unwrap().iter() {
        assert!(agent.starts_with("git/2.0 (engine-audit "), "{agent}");
    }
}

#[test]
fn a_moved_repository_is_followed_from_the_first_request_on() {
    let (root, _, second) = upstream();
    let served = root.path().to_path_buf();
    // `/old-name` answers the ref listing with a redirect and nothing else.
    let server = serve(move |request, base| match request.path.strip_prefix("/old-name") {
        Some(rest) if request.method == "GET" => {
            Response { status: 301, headers: vec![("Location".into(), format!("{base}/sglang{rest}?{}", request.query))], body: Vec::new() }
        }
        Some(_) => Response::new(404, "text/plain", "gone"),
        None => git_backend(&served, request),
    });
    let cache = tempfile::tempdir().unwrap();
    let cloned = EngineRepo::open(&format!("{}/old-name", server.url), &online(cache.path())).unwrap();
    assert_eq!(cloned.resolve("v0.2.0").unwrap().commit, second);
    let log = server.log.lock().unwrap().clone();
    assert_eq!(log, ["GET /old-name/info/refs", "GET /sglang/info/refs", "POST /sglang/git-upload-pack"]);
}

#[test]
fn a_redirect_after_the_first_request_is_refused() {
    let (root, _, _) = upstream();
    let served = root.path().to_path_buf();
    let server = serve(move |request, _| match request.method.as_str() {
        "POST" => Response { status: 302, headers: vec![("Location".into(), "http://198.51.100.1/elsewhere".into())], body: Vec::new() },
        _ => git_backend(&served, request),
    });
    let cache = tempfile::tempdir().unwrap();
    let err = EngineRepo::open(&format!("{}/sglang", server.url), &online(cache.path())).err().expect("the clone fails");
    assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
    assert!(err.to_string().contains("redirects a request after the first (HTTP 302)"), "{err}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "no half-done clone is left to reuse");
}

#[test]
fn servers_that_do_not_serve_a_repository_get_a_clear_error() {
    let cases = [
        (Response::new(200, "text/html", "<html>sign in</html>"), "answered `text/html`, not git's smart HTTP protocol"),
        (Response::new(401, "text/plain", "who are you"), "asks for credentials; engine-audit fetches public repositories only"),
        (Response::new(404, "text/plain", "no such repository"), "info/refs?service=git-upload-pack: HTTP 404"),
    ];
    for (answer, expected) in cases {
        let server = serve(move |_, _| answer.clone());
        let cache = tempfile::tempdir().unwrap();
        let err = EngineRepo::open(&format!("{}/sglang", server.url), &online(cache.path())).err().expect("the clone fails");
        assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
        assert!(err.to_string().contains(expected), "expected `{expected}` in: {err}");
    }
}

#[test]
fn urls_without_a_fetch_transport_say_what_to_do() {
    let cache = tempfile::tempdir().unwrap();
    for url in ["git@github.com:sgl-project/sglang.git", "ssh://git@github.com/sgl-project/sglang.git"] {
        let err = EngineRepo::open(url, &online(cache.path())).err().expect("no ssh transport");
        assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
        assert!(
            err.to_string().contains("the built-in transport fetches only http(s):// and file:// URLs (no ssh); put git on PATH"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "nothing is left in the cache");
}

#[test]
fn a_pack_cut_short_is_a_fetch_error_and_leaves_no_clone() {
    let (root, _, _) = upstream();
    let served = root.path().to_path_buf();
    let server = serve(move |request, _| {
        let mut response = git_backend(&served, request);
        if request.method == "POST" {
            response.body.truncate(response.body.len() / 2);
        }
        response
    });
    let cache = tempfile::tempdir().unwrap();
    let err = EngineRepo::open(&format!("{}/sglang", server.url), &online(cache.path())).err().expect("half a pack cannot be indexed");
    assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "no half-done clone is left to reuse");
}

#[test]
fn a_redirect_to_another_scheme_is_an_error_not_a_panic() {
    // ureq followed these and then unwrapped a host the URL does not have.
    for location in ["file:///etc/passwd", "data:,hello", "ftp://198.51.100.1/sglang", "http:///no-host"] {
        let server = serve(move |_, _| Response { status: 302, headers: vec![("Location".into(), location.into())], body: Vec::new() });
        let cache = tempfile::tempdir().unwrap();
        let err = EngineRepo::open(&format!("{}/sglang", server.url), &online(cache.path())).err().expect("the clone fails");
        assert!(matches!(err, SourceError::Fetch { .. }), "{location}: {err}");
        let message = err.to_string();
        assert!(message.contains("redirect"), "{location}: {message}");
    }
}

#[test]
fn passwords_in_a_url_never_appear_in_messages() {
    let server = serve(|request, _| match request.method.as_str() {
        "GET" => Response::new(404, "text/plain", "no such repository"),
        _ => Response::new(500, "text/plain", "no"),
    });
    let with_password = server.url.replacen("http://", "http://alice:s3cr3t-t0ken@", 1);
    // A closed port: the connection itself fails, with ureq's own message.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://alice:s3cr3t-t0ken@{}", listener.local_addr().unwrap())
    };
    for url in [format!("{with_password}/sglang"), format!("{closed}/sglang"), "https://alice:s3cr3t-t0ken@/sglang".to_string()] {
        let cache = tempfile::tempdir().unwrap();
        let err = EngineRepo::open(&url, &online(cache.path())).err().expect("the clone fails");
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("s3cr3t"), "the password is shown: {shown}");
        let offline = OpenOptions { offline: true, ..online(cache.path()) };
        let err = EngineRepo::open(&url, &offline).err().expect("nothing cached");
        assert!(!format!("{err} {err:?}").contains("s3cr3t"), "{err}");
    }
}
