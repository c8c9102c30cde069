//! `engine-audit cache stats|clear`: the fact cache and the clone cache seen
//! from outside.

use crate::cache::FactCache;
use crate::cli::{CacheAction, CacheArgs};
use crate::source::{clear_clones, clone_report, default_cache_root, CloneInfo, CloneState};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("could not remove the clones in {dir}: {source}")]
#[diagnostic(
    code(engine_audit::cache::clones_not_removed),
    help("the folder is read-only to you or in use by a running audit; fix its permissions, or delete the clones yourself")
)]
struct ClonesNotRemoved {
    dir: String,
    source: std::io::Error,
}

pub(crate) fn run(args: CacheArgs) -> miette::Result<ExitCode> {
    let clones_dir = |flag: Option<PathBuf>| flag.unwrap_or_else(|| default_cache_root().join("repos"));
    match args.action {
        CacheAction::Stats { cache_dir } => {
            print!("{}", fact_stats(&FactCache::default_cache()));
            println!();
            let dir = clones_dir(cache_dir);
            print!("{}", clone_stats(&dir, &clone_report(&dir), SystemTime::now()));
            Ok(ExitCode::SUCCESS)
        }
        CacheAction::Clear { clones, all, cache_dir } => {
            if !clones || all {
                clear_facts(&FactCache::default_cache())?;
            }
            if clones || all {
                let dir = clones_dir(cache_dir);
                let cleared = clear_clones(&dir).map_err(|source| ClonesNotRemoved { dir: dir.display().to_string(), source })?;
                let busy = match cleared.in_use {
                    0 => String::new(),
                    n => format!("; {n} clone{} under way in a running audit kept", if n == 1 { "" } else { "s" }),
                };
                println!("removed {} clones ({}) from {}{busy}", cleared.removed, human(cleared.bytes), dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn fact_stats(cache: &FactCache) -> String {
    let Some(dir) = cache.dir().map(|d| d.display().to_string()) else {
        return "fact cache disabled (ENGINE_AUDIT_NO_CACHE, or no cache folder could be found)\n".into();
    };
    let stats = cache.stats().unwrap_or_default();
    format!(
        "fact cache: {dir}\nentries:    {}\nsize:       {} ({} bytes)\nlimit:      {} (oldest entries are evicted beyond it)\n",
        stats.entries,
        human(stats.bytes),
        stats.bytes,
        human(stats.limit)
    )
}

fn clear_facts(cache: &FactCache) -> miette::Result<()> {
    let Some(dir) = cache.dir().map(|d| d.display().to_string()) else {
        println!("fact cache disabled (ENGINE_AUDIT_NO_CACHE, or no cache folder could be found)");
        return Ok(());
    };
    // Each error names the folder and what to do; a partial clear is a failure.
    let removed = cache.clear()?;
    println!("removed {removed} entries from {dir}");
    Ok(())
}

/// The clone cache: a total, then one line per clone (URL, size, last
/// fetch) and its folder on the next. URLs and paths are never cut.
fn clone_stats(dir: &Path, clones: &[CloneInfo], now: SystemTime) -> String {
    let total: u64 = clones.iter().map(|c| c.bytes).sum();
    let mut out = format!("clone cache: {}\nclones:      {} ({})\n", dir.display(), clones.len(), human(total));
    for c in clones {
        let what = match (&c.state, &c.url) {
            (CloneState::Ok, Some(url)) => url.clone(),
            (CloneState::Ok, None) => "(no origin URL)".into(),
            (CloneState::Broken(why), _) => format!("(damaged, cloned again on the next run: {why})"),
            (CloneState::InProgress, _) => "(a clone under way, or left by a killed run)".into(),
        };
        let fetched = c.last_fetch.map(|t| format!("fetched {}", when(t, now))).unwrap_or_else(|| "never fetched".into());
        let partial = if c.partial { ", partial (file contents fetched per release read)" } else { "" };
        out.push_str(&format!("  {what}\n    {}, {fetched}{partial}\n    {}\n", human(c.bytes), c.dir.display()));
    }
    out
}

/// `2026-12-05 15:03 UTC (3 h ago)`.
fn when(t: SystemTime, now: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let ago = now.duration_since(t).map(|d| d.as_secs()).unwrap_or(0);
    let ago = match ago {
        a if a < 120 => format!("{a} s ago"),
        a if a < 2 * 3600 => format!("{} min ago", a / 60),
        a if a < 2 * 86400 => format!("{} h ago", a / 3600),
        a => format!("{} days ago", a / 86400),
    };
    let (y, m, d) = civil_from_days((secs / 86400) as i64);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC ({ago})", secs % 86400 / 3600, secs % 3600 / 60)
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_are_utc_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_427), (2025, 12, 5));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_947_000);
        assert_eq!(when(t, t + Duration::from_secs(3 * 3600)), "2025-12-05 15:03 UTC (3 h ago)");
    }

    #[test]
    fn each_clone_shows_its_url_size_last_fetch_and_folder() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_947_000);
        let long = format!("/tmp/{}/repos", "very-long-folder-name-".repeat(8));
        let clones = [CloneInfo {
            dir: PathBuf::from(format!("{long}/0123456789abcdef01234567")),
            url: Some("https://github.com/sgl-project/sglang".into()),
            bytes: 3 << 20,
            last_fetch: Some(t),
            partial: true,
            state: CloneState::Ok,
        }];
        let text = clone_stats(Path::new(&long), &clones, t + Duration::from_secs(60));
        assert_eq!(
            text,
            format!(
                "clone cache: {long}\nclones:      1 (3.0 MiB)\n  https://github.com/sgl-project/sglang\n    3.0 MiB, fetched 2025-12-05 15:03 UTC (60 s ago), partial (file contents fetched per release read)\n    {long}/0123456789abcdef01234567\n"
            )
        );
    }
}
