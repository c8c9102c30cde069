//! Files that scripts source, parsed once per run: InferenceX's 250 launch
//! scripts all source the same 2,300-line `benchmark_lib.sh`, and parsing it
//! (with the walks for the names it assigns) was a third of each script's
//! evaluation.

use super::FileNames;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tree_sitter::{Parser, Tree};

/// A parsed file: its tree and names, valid for exactly this text.
struct Parsed {
    text: String,
    tree: Tree,
    names: Arc<FileNames>,
}

/// Entries kept: enough for every library a repository's scripts share.
const MAX_ENTRIES: usize = 256;

fn cache() -> &'static Mutex<HashMap<PathBuf, Arc<Parsed>>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Parsed>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The tree of `text` (read from `path`, a file the script sources) and its
/// names, from the cache when that file was parsed with this very text.
pub(super) fn parse(path: &Path, text: &str, parser: &mut Parser) -> Option<(Tree, Arc<FileNames>)> {
    if let Some(hit) = cache().lock().ok().and_then(|c| c.get(path).cloned()).filter(|p| p.text == text) {
        return Some((hit.tree.clone(), hit.names.clone()));
    }
    let tree = parser.parse(text, None)?;
    let names = Arc::new(FileNames::read(&tree, text, true));
    if let Ok(mut c) = cache().lock() {
        if c.len() >= MAX_ENTRIES {
            c.clear();
        }
        c.insert(path.to_path_buf(), Arc::new(Parsed { text: text.to_string(), tree: tree.clone(), names: names.clone() }));
    }
    Some((tree, names))
}
