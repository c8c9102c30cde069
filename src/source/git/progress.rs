//! How far a clone or fetch is, on stderr: on a terminal one line rewritten in
//! place (four times a second at most); in a log (CI) a plain line every few
//! seconds and one when it ends, so a long first clone does not look hung;
//! nothing with `--quiet`.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often a log gets a progress line.
pub(super) const LOG_INTERVAL: Duration = Duration::from_secs(5);
/// How often a terminal's line is rewritten.
const TERMINAL_INTERVAL: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// `\r`-rewritten line.
    Terminal,
    /// One line every [`LOG_INTERVAL`], and a last one.
    Log,
    Quiet,
}

impl Style {
    /// The style for this run's stderr.
    pub(super) fn for_stderr(quiet: bool) -> Style {
        match (quiet, std::io::stderr().is_terminal()) {
            (true, _) => Style::Quiet,
            (false, true) => Style::Terminal,
            (false, false) => Style::Log,
        }
    }
}

/// Counts of one transfer, as far as they are known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub received_objects: u64,
    /// 0 while unknown.
    pub total_objects: u64,
    pub received_bytes: u64,
}

/// The progress of one transfer (`what`: `fetching https://…`).
pub(super) struct Progress {
    what: String,
    style: Style,
    start: Instant,
    last: Option<Instant>,
    counts: Counts,
    /// A terminal line is open (no newline yet).
    open_line: bool,
}

impl Progress {
    pub(super) fn new(what: String, style: Style) -> Progress {
        Progress { what, style, start: Instant::now(), last: None, counts: Counts::default(), open_line: false }
    }

    /// New counts; a line is written when its interval has passed.
    pub(super) fn update(&mut self, counts: Counts) {
        self.counts = counts;
        if let Some(line) = self.line_due(Instant::now()) {
            self.write(&line);
        }
    }

    /// The line to write at `now`, if one is due (and marks it written).
    fn line_due(&mut self, now: Instant) -> Option<String> {
        let every = match self.style {
            Style::Quiet => return None,
            Style::Terminal => TERMINAL_INTERVAL,
            Style::Log => LOG_INTERVAL,
        };
        // A log's first line waits a whole interval: a fetch that ends sooner
        // gets only its last line.
        let since = self.last.unwrap_or(self.start);
        let due = match (self.style, self.last) {
            (Style::Terminal, None) => true,
            _ => now.duration_since(since) >= every,
        };
        if !due {
            return None;
        }
        self.last = Some(now);
        Some(self.describe(now, false))
    }

    fn describe(&self, now: Instant, done: bool) -> String {
        let c = self.counts;
        let objects = match (c.total_objects, done) {
            (0, _) => format!("{} objects", c.received_objects),
            (total, false) => format!("{}/{} objects", c.received_objects, total),
            (total, true) => format!("{total} objects"),
        };
        let secs = now.duration_since(self.start).as_secs();
        format!("{}: {objects}, {} received, {secs} s", self.what, mib(c.received_bytes))
    }

    fn write(&mut self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = match self.style {
            Style::Terminal => {
                self.open_line = true;
                write!(err, "\r{line}")
            }
            Style::Log => writeln!(err, "{line}"),
            Style::Quiet => Ok(()),
        };
        let _ = err.flush();
    }

    /// The transfer ended (well or not): a log gets its last line, a
    /// terminal's line is ended.
    pub(super) fn finish(&mut self, ok: bool) {
        let line = self.last_line(Instant::now(), ok);
        let mut err = std::io::stderr().lock();
        let _ = match (self.style, line) {
            (Style::Terminal, Some(line)) if self.open_line => writeln!(err, "\r{line}"),
            (Style::Log, Some(line)) => writeln!(err, "{line}"),
            _ => Ok(()),
        };
        self.open_line = false;
    }

    fn last_line(&self, now: Instant, ok: bool) -> Option<String> {
        // A fetch that fails before any line was written: its error says it all.
        if self.style == Style::Quiet || (!ok && self.last.is_none()) {
            return None;
        }
        let line = self.describe(now, ok);
        Some(if ok { format!("{line}, done") } else { format!("{line}, failed") })
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// The counts in one of git's progress lines (`Receiving objects:  45%
/// (123/456), 1.23 MiB | 2.00 MiB/s`), if it is one.
pub(super) fn parse_git_line(line: &str) -> Option<Counts> {
    let rest = line.trim().strip_prefix("Receiving objects:")?;
    let (_, after) = rest.split_once('(')?;
    let (fraction, after) = after.split_once(')')?;
    let (received, total) = fraction.split_once('/')?;
    let mut counts =
        Counts { received_objects: received.trim().parse().ok()?, total_objects: total.trim().parse().ok()?, received_bytes: 0 };
    // `, 1.23 MiB | 2.00 MiB/s` (absent until a first chunk is in).
    if let Some(size) = after.trim_start_matches(',').split('|').next().map(str::trim).filter(|s| !s.is_empty()) {
        counts.received_bytes = parse_size(size)?;
    }
    Some(counts)
}

/// `1.23 MiB`, `512 bytes`, `1 byte`, `12.00 KiB`, `2.5 GiB` in bytes.
fn parse_size(size: &str) -> Option<u64> {
    let (number, unit) = size.split_once(' ')?;
    let number: f64 = number.trim().parse().ok()?;
    let scale = match unit.trim().trim_end_matches(',') {
        "byte" | "bytes" => 1u64,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    };
    Some((number * scale as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_gets_a_line_every_interval_and_a_last_one() {
        let mut p = Progress::new("fetching https://example.org/sglang".into(), Style::Log);
        let t0 = p.start;
        p.counts = Counts { received_objects: 10, total_objects: 100, received_bytes: 3 << 20 };
        assert_eq!(p.line_due(t0 + Duration::from_secs(1)), None, "nothing in the first seconds");
        let line = p.line_due(t0 + LOG_INTERVAL).expect("a line after one interval");
        assert_eq!(line, "fetching https://example.org/sglang: 10/100 objects, 3.0 MiB received, 5 s");
        assert_eq!(p.line_due(t0 + LOG_INTERVAL + Duration::from_secs(2)), None);
        assert!(p.line_due(t0 + LOG_INTERVAL * 2).is_some());
        p.counts.received_objects = 100;
        assert!(p.last_line(t0, false).unwrap().ends_with(", failed"), "a failure after lines is said");
        let last = p.last_line(t0 + LOG_INTERVAL * 3, true).unwrap();
        assert_eq!(last, "fetching https://example.org/sglang: 100 objects, 3.0 MiB received, 15 s, done");
    }

    #[test]
    fn quiet_writes_nothing_and_a_terminal_starts_at_once() {
        let mut quiet = Progress::new("x".into(), Style::Quiet);
        assert_eq!(quiet.line_due(quiet.start + Duration::from_secs(60)), None);
        assert_eq!(quiet.last_line(quiet.start, true), None);
        let early = Progress::new("x".into(), Style::Log);
        assert_eq!(early.last_line(early.start, false), None, "a quick failure is left to its error");
        let mut tty = Progress::new("x".into(), Style::Terminal);
        assert!(tty.line_due(tty.start).is_some());
        assert_eq!(tty.line_due(tty.start + Duration::from_millis(10)), None);
    }

    #[test]
    fn reads_the_counts_in_gits_progress_lines() {
        let c = parse_git_line("Receiving objects:  45% (123/456), 1.50 MiB | 2.00 MiB/s").unwrap();
        assert_eq!(c, Counts { received_objects: 123, total_objects: 456, received_bytes: 3 << 19 });
        let c = parse_git_line("Receiving objects: 100% (7/7), 512 bytes | 512.00 KiB/s, done.").unwrap();
        assert_eq!(c, Counts { received_objects: 7, total_objects: 7, received_bytes: 512 });
        assert_eq!(parse_git_line("Receiving objects:   0% (1/4000)").unwrap().received_bytes, 0);
        assert_eq!(parse_git_line("remote: Counting objects: 100% (5/5), done."), None);
        assert_eq!(parse_git_line("Resolving deltas: 100% (2/2), done."), None);
    }
}
