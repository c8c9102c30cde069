//! `engine-audit cache stats|clear`: the fact cache seen from outside.

use crate::cache::FactCache;
use crate::cli::{CacheAction, CacheArgs};
use std::process::ExitCode;

pub(crate) fn run(args: CacheArgs) -> miette::Result<ExitCode> {
    let cache = FactCache::default_cache();
    let Some(dir) = cache.dir().map(|d| d.display().to_string()) else {
        println!("fact cache disabled (ENGINE_AUDIT_NO_CACHE, or no cache folder could be found)");
        return Ok(ExitCode::SUCCESS);
    };
    match args.action {
        CacheAction::Stats => {
            let stats = cache.stats().unwrap_or_default();
            println!("fact cache: {dir}");
            println!("entries:    {}", stats.entries);
            println!("size:       {} ({} bytes)", human(stats.bytes), stats.bytes);
            println!("limit:      {} (oldest entries are evicted beyond it)", human(stats.limit));
        }
        CacheAction::Clear => {
            // Each error names the folder and what to do; a partial clear is a failure.
            let removed = cache.clear()?;
            println!("removed {removed} entries from {dir}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}
