//! A local HTTP/1.1 server for the fetch tests, and `git http-backend` (git's
//! own CGI) to answer with the real smart protocol.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    pub content_type: String,
    pub user_agent: String,
    pub body: Vec<u8>,
}

#[derive(Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: &str) -> Response {
        Response { status, headers: vec![("Content-Type".into(), content_type.into())], body: body.as_bytes().to_vec() }
    }
}

/// A local HTTP/1.1 server, one connection at a time, answering with `handler`.
/// `log` holds each request as `METHOD /path`, `agents` each one's User-Agent.
pub struct Server {
    pub url: String,
    pub log: Arc<Mutex<Vec<String>>>,
    pub agents: Arc<Mutex<Vec<String>>>,
}

pub fn serve(handler: impl Fn(&Request, &str) -> Response + Send + 'static) -> Server {
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

pub fn read_request(stream: &TcpStream) -> Option<Request> {
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
pub fn git_backend(root: &Path, request: &Request) -> Response {
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
pub fn upstream() -> (tempfile::TempDir, PathBuf, String) {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("sglang");
    let (_, _, second) = super::git_repo::build_repo(&repo);
    (root, repo, second)
}
