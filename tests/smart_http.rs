//! Clones and fetches of `http(s)://` URLs: git's smart HTTP protocol through
//! engine-audit's own transport (libgit2 is built without TLS). The server here
//! runs `git http-backend`, git's own CGI, so the exchange is the real protocol;
//! other servers stand in for a moved repository, a web page and a login.

use engine_audit::source::{EngineRepo, OpenOptions, SourceError, Tree};
use git2::{Signature, Time};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

#[path = "support/git_repo.rs"]
mod git_repo;
use git_repo::{build_repo, commit};

struct Request {
    method: String,
    path: String,
    query: String,
    content_type: String,
    user_agent: String,
    body: Vec<u8>,
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn new(status: u16, content_type: &str, body: &str) -> Response {
        Response { status, headers: vec![("Content-Type".into(), content_type.into())], body: body.as_bytes().to_vec() }
    }
}

/// A local HTTP/1.1 server, one connection at a time, answering with `handler`.
/// `log` holds each request as `METHOD /path`, `agents` each one's User-Agent.
struct Server {
    url: String,
    log: Arc<Mutex<Vec<String>>>,
    agents: Arc<Mutex<Vec<String>>>,
}

fn serve(handler: impl Fn(&Request, &str) -> Response + Send + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (log, agents) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let (base, seen, seen_agents) = (url.clone(), Arc::clone(&log), Arc::clone(&agents));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let Some(request) = read_request(&stream) else { continue };
            seen.lock().unwrap().push(format!("{} {}", request.method, request.path));
            seen_agents.lock().unwrap().push(request.user_agent.clone());
            write_response(stream, handler(&request, &base));
        }
    });
    Server { url, log, agents }
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (path, query) = (path.to_string(), query.to_string());
    let (mut length, mut content_type, mut user_agent) = (0, String::new(), String::new());
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "content-type" => content_type = value.trim().to_string(),
            "user-agent" => user_agent = value.trim().to_string(),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, path, query, content_type, user_agent, body })
}

fn write_response(mut stream: TcpStream, response: Response) {
    let mut head = format!("HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n", response.status, response.body.len());
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&response.body));
}

/// `git http-backend` serving every repository under `root`.
fn git_backend(root: &Path, request: &Request) -> Response {
    let mut child = Command::new("git")
        .arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .env("REQUEST_METHOD", &request.method)
        .env("PATH_INFO", &request.path)
        .env("QUERY_STRING", &request.query)
        .env("CONTENT_TYPE", &request.content_type)
        .env("CONTENT_LENGTH", request.body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("these tests need git on PATH (they serve repositories with `git http-backend`)");
    child.stdin.take().unwrap().write_all(&request.body).unwrap();
    let output = child.wait_with_output().unwrap();
    // CGI output: header lines, a blank line, the body.
    let split = output.stdout.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, i + 4));
    let split = split.or_else(|| output.stdout.windows(2).position(|w| w == b"\n\n").map(|i| (i, i + 2)));
    let (end, body) = split.expect("CGI headers end with a blank line");
    let mut response = Response { status: 200, headers: Vec::new(), body: output.stdout[body..].to_vec() };
    for line in String::from_utf8_lossy(&output.stdout[..end]).lines() {
        let (name, value) = line.split_once(':').expect("a CGI header");
        if name.eq_ignore_ascii_case("status") {
            response.status = value.trim()[..3].parse().unwrap();
        } else {
            response.headers.push((name.to_string(), value.trim().to_string()));
        }
    }
    response
}

/// An upstream repository (the shared two-release layout) under a served root.
fn upstream() -> (tempfile::TempDir, PathBuf, String) {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("sglang");
    let (_, _, second) = build_repo(&repo);
    (root, repo, second)
}

fn online(cache: &Path) -> OpenOptions {
    OpenOptions { offline: false, cache_dir: Some(cache.to_path_buf()) }
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
        Some(rest) if request.method == "GET" => Response {
            status: 301,
            headers: vec![("Location".into(), format!("{base}/sglang{rest}?{}", request.query))],
            body: Vec::new(),
        },
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
        let answer = Arc::new(answer);
        let server = serve(move |_, _| Response { status: answer.status, headers: answer.headers.clone(), body: answer.body.clone() });
        let cache = tempfile::tempdir().unwrap();
        let err = EngineRepo::open(&format!("{}/sglang", server.url), &online(cache.path())).err().expect("the clone fails");
        assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
        assert!(err.to_string().contains(expected), "expected `{expected}` in: {err}");
    }
}
