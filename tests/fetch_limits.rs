//! A hostile or broken git server cannot make a fetch run forever or fill
//! memory: the ref advertisement and the pack have byte budgets, and a fetch
//! a total deadline and an idle limit, each lowered here through the
//! environment. Its own test binary: it sets process-wide variables.

use engine_audit::source::{EngineRepo, FetchWith, OpenOptions, SourceError};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

#[path = "support/git_repo.rs"]
mod git_repo;
#[path = "support/http_server.rs"]
mod http_server;
use http_server::{git_backend, read_request, upstream, Request};

/// The limits every test here runs under, set before any fetch starts.
fn limits() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::set_var("ENGINE_AUDIT_FETCH_TIMEOUT", "2");
        std::env::set_var("ENGINE_AUDIT_FETCH_IDLE_TIMEOUT", "1");
        std::env::set_var("ENGINE_AUDIT_MAX_REF_ADVERTISEMENT_MIB", "1");
        std::env::set_var("ENGINE_AUDIT_MAX_PACK_MIB", "1");
        std::env::set_var("ENGINE_AUDIT_MAX_REFS", "5000");
    });
}

/// A server that hands each request's connection to `answer`, which writes
/// what it likes (slowly, endlessly, or not at all). Returns its base URL.
fn serve_raw(answer: impl Fn(&Request, TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = std::sync::Arc::clone(&answer);
            std::thread::spawn(move || {
                if let Some(request) = read_request(&stream) {
                    answer(&request, stream);
                }
            });
        }
    });
    url
}

/// A response head without a length: the body runs until the connection closes.
fn head(content_type: &str) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n")
}

fn pkt(line: &[u8]) -> Vec<u8> {
    [format!("{:04x}", line.len() + 4).as_bytes(), line].concat()
}

/// The error of cloning `{url}/sglang` with the built-in transport.
fn clone_error(url: &str) -> String {
    clone_error_with(url, FetchWith::Builtin)
}

fn clone_error_with(url: &str, fetch: FetchWith) -> String {
    limits();
    let cache = tempfile::tempdir().unwrap();
    let options = OpenOptions { offline: false, cache_dir: Some(cache.path().to_path_buf()), fetch, ..Default::default() };
    let err = EngineRepo::open(&format!("{url}/sglang"), &options).err().expect("the clone fails");
    assert!(matches!(err, SourceError::Fetch { .. }), "{err}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "no half-done clone is left to reuse");
    err.to_string()
}

/// An endless pack response: the real ref listing, then progress messages
/// on side band 2 that never end (8 MiB of them), `pause` between them.
fn endless_progress_server(pause: Duration) -> (tempfile::TempDir, String) {
    let (root, _, _) = upstream();
    let served = root.path().to_path_buf();
    let url = serve_raw(move |request, mut stream| {
        if request.method == "GET" {
            let response = git_backend(&served, request);
            let mut out = head("application/x-git-upload-pack-advertisement").into_bytes();
            out.extend(response.body);
            let _ = stream.write_all(&out);
            return;
        }
        let mut out = head("application/x-git-upload-pack-result").into_bytes();
        out.extend(pkt(b"NAK\n"));
        let _ = stream.write_all(&out);
        let progress = pkt(&[&[2u8][..], &[b'.'; 60_000], b"\r"].concat());
        for _ in 0..140 {
            std::thread::sleep(pause);
            if stream.write_all(&progress).is_err() {
                return;
            }
        }
    });
    (root, url)
}

/// A server whose ref advertisement never ends: well-formed pkt-lines, one
/// ref each, named `refs/heads/<name_len digits>`, written until the client
/// hangs up (or 10 s pass).
fn endless_advertisement(name_len: usize) -> String {
    serve_raw(move |_, mut stream| {
        let mut out = head("application/x-git-upload-pack-advertisement").into_bytes();
        out.extend(pkt(b"# service=git-upload-pack\n"));
        out.extend(b"0000");
        out.extend(pkt(format!("{} HEAD\0multi_ack side-band-64k ofs-delta\n", "1".repeat(40)).as_bytes()));
        let _ = stream.write_all(&out);
        let started = std::time::Instant::now();
        for i in 0u64.. {
            let line = pkt(format!("{} refs/heads/{i:0name_len$}\n", "1".repeat(40)).as_bytes());
            if stream.write_all(&line).is_err() || started.elapsed() > Duration::from_secs(10) {
                return;
            }
        }
    })
}

#[test]
fn an_endless_ref_advertisement_is_cut_at_its_budget() {
    // Long names: the 1 MiB is reached before the 5000 refs.
    let err = clone_error(&endless_advertisement(1000));
    assert!(err.contains("ref advertisement exceeded 1 MiB") && err.contains("ENGINE_AUDIT_MAX_REF_ADVERTISEMENT_MIB"), "{err}");
}

#[test]
fn an_endless_ref_advertisement_is_cut_at_its_number_of_refs() {
    let err = clone_error(&endless_advertisement(20));
    assert!(err.contains("listed more than 5000 refs") && err.contains("ENGINE_AUDIT_MAX_REFS"), "{err}");
}

#[test]
fn git_is_stopped_by_an_endless_ref_advertisement_with_the_limit_named() {
    // git's remote-http reads the whole advertisement before a word on
    // stderr: before the fix the run lasted until the idle limit and blamed
    // a silent server. Now the listing is read under the limits first.
    for (name_len, limit) in [(20, "listed more than 5000 refs"), (1000, "ref advertisement exceeded 1 MiB")] {
        let url = endless_advertisement(name_len);
        let started = std::time::Instant::now();
        let err = clone_error_with(&url, FetchWith::Git);
        assert!(err.contains(limit) && err.contains(&url) && !err.contains("sent nothing"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2), "cut at the limit, not at a timeout: {:?}", started.elapsed());
    }
}

#[test]
fn git_is_killed_when_a_server_goes_silent() {
    // Accepts, reads the request, says nothing for 6 s: git itself would wait.
    let url = serve_raw(|_, stream| {
        std::thread::sleep(Duration::from_secs(6));
        drop(stream);
    });
    let started = std::time::Instant::now();
    let err = clone_error_with(&url, FetchWith::Git);
    assert!(err.contains("sent nothing for 1 s") && err.contains(&url), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "bounded: {:?}", started.elapsed());
}

#[test]
fn git_is_killed_at_the_deadline_when_a_server_talks_forever() {
    // The server keeps talking (git relays its messages), so only the deadline ends it.
    let (root, url) = endless_progress_server(Duration::from_millis(20));
    let started = std::time::Instant::now();
    let err = clone_error_with(&url, FetchWith::Git);
    drop(root);
    assert!(err.contains("longer than 2 s") && err.contains(&url), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "bounded: {:?}", started.elapsed());
}

#[test]
fn git_is_killed_when_the_pack_is_over_its_budget() {
    // A real repository whose pack is 3 MiB of random bytes, over the 1 MiB budget.
    let root = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(root.path().join("sglang")).unwrap();
    let mut noise = vec![0u8; 3 << 20];
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for b in noise.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let blob = repo.blob(&noise).unwrap();
    let mut tree = repo.treebuilder(None).unwrap();
    tree.insert("weights.bin", blob, 0o100644).unwrap();
    let tree = repo.find_tree(tree.write().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@localhost").unwrap();
    repo.commit(Some("refs/heads/main"), &sig, &sig, "big", &tree, &[]).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let served = root.path().to_path_buf();
    let server = http_server::serve(move |request, _| git_backend(&served, request));
    let err = clone_error_with(&server.url, FetchWith::Git);
    assert!(err.contains("pack exceeded 1 MiB"), "{err}");
}

#[test]
fn an_endless_pack_response_is_cut_at_its_budget() {
    let (root, url) = endless_progress_server(Duration::ZERO);
    let err = clone_error(&url);
    drop(root);
    assert!(err.contains("pack exceeded 1 MiB"), "{err}");
}

#[test]
fn a_server_trickling_bytes_is_given_up_at_the_deadline() {
    // A long pkt-line announced, then its bytes one every 100 ms (well within
    // the idle limit) for 10 s: libgit2 waits for the whole line.
    let url = serve_raw(|_, mut stream| {
        let _ =
            stream.write_all(format!("{}fff0# service=git-upload-pack", head("application/x-git-upload-pack-advertisement")).as_bytes());
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(100));
            if stream.write_all(b"0").is_err() {
                return;
            }
        }
    });
    let err = clone_error(&url);
    assert!(err.contains("longer than 2 s") && err.contains(&url), "{err}");
}

#[test]
fn a_server_trickling_its_response_head_is_given_up_at_the_deadline() {
    let url = serve_raw(|_, mut stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nX-Slow: ");
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(100));
            if stream.write_all(b"a").is_err() {
                return;
            }
        }
    });
    let err = clone_error(&url);
    assert!(err.contains("longer than 2 s") && err.contains(&url), "{err}");
}

#[test]
fn a_silent_server_is_given_up_after_the_idle_limit() {
    // Accepts, reads the request, says nothing for 6 s.
    let url = serve_raw(|_, stream| {
        std::thread::sleep(Duration::from_secs(6));
        drop(stream);
    });
    let err = clone_error(&url);
    assert!(err.contains("sent nothing for 1 s") && err.contains(&url), "{err}");
}
