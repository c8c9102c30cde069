//! Where the time goes, behind an environment variable: `ENGINE_AUDIT_TRACE=1`
//! prints timing spans and a parse summary to stderr, `=2` also every parsed
//! file. Off (the default) it costs one atomic load per call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn level() -> u8 {
    static LEVEL: OnceLock<u8> = OnceLock::new();
    *LEVEL.get_or_init(|| std::env::var("ENGINE_AUDIT_TRACE").ok().and_then(|v| v.parse().ok()).unwrap_or(0))
}

pub(crate) fn enabled() -> bool {
    level() > 0
}

static PARSES: AtomicU64 = AtomicU64::new(0);
static PARSED_BYTES: AtomicU64 = AtomicU64::new(0);
static PARSE_NANOS: AtomicU64 = AtomicU64::new(0);

/// A timed region; prints its duration when dropped.
pub(crate) struct Span {
    name: String,
    start: Instant,
}

impl Drop for Span {
    fn drop(&mut self) {
        // The start offset shows what overlapped: spans of parallel work print
        // in the order they end.
        let from = self.start.saturating_duration_since(*origin()).as_secs_f64() * 1e3;
        eprintln!("[trace] {:>9.1} ms  (from {from:>6.1})  {}", self.start.elapsed().as_secs_f64() * 1e3, self.name);
    }
}

/// When tracing began: the first span of the process.
fn origin() -> &'static Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now)
}

/// Start a span; the name is only built when tracing is on.
pub(crate) fn span(name: impl FnOnce() -> String) -> Option<Span> {
    enabled().then(|| {
        origin();
        Span { name: name(), start: Instant::now() }
    })
}

/// A span printed only at level 2 (one per file: too many for level 1).
pub(crate) fn file_span(name: impl FnOnce() -> String) -> Option<Span> {
    (level() > 1).then(|| {
        origin();
        Span { name: name(), start: Instant::now() }
    })
}

/// Record one tree-sitter parse.
pub(crate) fn parsed(path: &str, bytes: usize, took: Duration) {
    if !enabled() {
        return;
    }
    PARSES.fetch_add(1, Ordering::Relaxed);
    PARSED_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
    PARSE_NANOS.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    if level() > 1 {
        eprintln!("[trace] parse {:>7.2} ms {:>8} B  {path}", took.as_secs_f64() * 1e3, bytes);
    }
}

/// Print what was parsed so far (files, bytes, summed parse time).
pub(crate) fn summary(what: &str) {
    if !enabled() {
        return;
    }
    eprintln!(
        "[trace] {what}: {} files parsed, {:.1} MB, {:.1} ms in tree-sitter (summed over threads)",
        PARSES.load(Ordering::Relaxed),
        PARSED_BYTES.load(Ordering::Relaxed) as f64 / 1e6,
        PARSE_NANOS.load(Ordering::Relaxed) as f64 / 1e6
    );
}
