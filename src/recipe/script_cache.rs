//! A launch script's reading, cached on disk by content: evaluating the real
//! InferenceX tree's scripts is most of a whole-tree audit, and a second audit
//! of the same files should not pay it again.
//!
//! The key is the script's text, the path it was given by and the working
//! folder (spans carry the given path; `$0` and relative `source` names resolve
//! from the working folder). An entry also records every file system fact the
//! evaluation read ([`LookedAt`]): the digest of each sourced file, whether each
//! path `source` tried exists, where the repository root is. It is used only
//! when all of them still hold, so an edited `benchmark_lib.sh`, or a file that
//! appeared where `source` looked, makes it a miss. The entry's integrity and
//! the tool version are the fact cache's ([`FactCache::get_bytes`]): a rebuilt
//! tool never reads an older reading.

use super::shell::eval::LookedAt;
use super::{Deployment, Note};
use crate::cache::FactCache;
use crate::text::span::SourceText;
use serde::{Deserialize, Serialize};

const KIND: &str = "script-reading";

#[derive(Deserialize)]
struct Entry {
    looked_at: Vec<LookedAt>,
    deployments: Vec<Deployment>,
    notes: Vec<Note>,
}

/// [`Entry`] as it is written, borrowing the reading.
#[derive(Serialize)]
struct EntryRef<'a> {
    looked_at: &'a [LookedAt],
    deployments: &'a [Deployment],
    notes: &'a [Note],
}

/// The cache key of `src` read from the current working folder.
pub(super) fn key(src: &SourceText) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
    for part in [cwd.as_str(), src.path.as_str(), src.text.as_str()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The stored reading of the script under `key`, when every fact it read still holds.
pub(super) fn lookup(cache: &FactCache, key: &str) -> Option<(Vec<Deployment>, Vec<Note>)> {
    let body = cache.get_bytes(KIND, key)?;
    let entry: Entry = serde_json::from_slice(&body).ok()?;
    entry.looked_at.iter().all(|fact| fact.now() == *fact).then_some((entry.deployments, entry.notes))
}

/// Store a reading with the facts it read (each once).
pub(super) fn store(cache: &FactCache, key: &str, looked_at: Vec<LookedAt>, deployments: &[Deployment], notes: &[Note]) {
    if !cache.is_enabled() {
        return;
    }
    let mut unique: Vec<LookedAt> = Vec::with_capacity(looked_at.len());
    for fact in looked_at {
        if !unique.contains(&fact) {
            unique.push(fact);
        }
    }
    let entry = EntryRef { looked_at: &unique, deployments, notes };
    if let Ok(body) = serde_json::to_vec(&entry) {
        cache.put_bytes(KIND, key, &body);
    }
}
