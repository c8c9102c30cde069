//! Files that scripts source, parsed once per run: InferenceX's 250 launch
//! scripts all source the same 2,300-line `benchmark_lib.sh`, and parsing it
//! (with the walks for the names it assigns) was a third of each script's
//! evaluation.

use super::facts::FileFacts;
use super::FileNames;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tree_sitter::{Parser, Tree};

/// A parsed file: its tree, names and text facts, valid for exactly this text.
struct Parsed {
    text: String,
    tree: Tree,
    names: Arc<FileNames>,
    facts: Arc<FileFacts>,
}

/// What [`parse`] gives: the tree and what was read from it once.
pub(super) struct Sourced {
    pub(super) tree: Tree,
    pub(super) names: Arc<FileNames>,
    pub(super) facts: Arc<FileFacts>,
}

/// Entries kept: enough for every library a repository's scripts share.
const MAX_ENTRIES: usize = 256;

fn cache() -> &'static Mutex<HashMap<PathBuf, Arc<Parsed>>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Parsed>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The tree of `text` (read from `path`, a file the script sources), its
/// names and facts, from the cache when that file was parsed with this very text.
pub(super) fn parse(path: &Path, text: &str, parser: &mut Parser) -> Option<Sourced> {
    if let Some(hit) = cache().lock().ok().and_then(|c| c.get(path).cloned()).filter(|p| p.text == text) {
        return Some(Sourced { tree: hit.tree.clone(), names: hit.names.clone(), facts: hit.facts.clone() });
    }
    let tree = parser.parse(text, None)?;
    let names = Arc::new(FileNames::read(&tree, text, true));
    let facts = Arc::new(FileFacts::read(&tree, text));
    if let Ok(mut c) = cache().lock() {
        if c.len() >= MAX_ENTRIES {
            c.clear();
        }
        let parsed = Parsed { text: text.to_string(), tree: tree.clone(), names: names.clone(), facts: facts.clone() };
        c.insert(path.to_path_buf(), Arc::new(parsed));
    }
    Some(Sourced { tree, names, facts })
}
