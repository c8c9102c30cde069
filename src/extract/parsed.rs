//! Reading and parsing one engine file, once per run.
//!
//! The flags, the `ServerArgs` class, the symbols Dynamo imports and the env
//! registry all read `server_args.py` / `environ.py`, often on different threads
//! at the same moment; parsing `server_args.py` (350 KB) three times per release
//! was a fifth of a cold audit. Parses are shared by content: the key is the
//! file's path and blob id, so a file changed between two refs is parsed again
//! and an unchanged one is not. The memo is bounded by source bytes (least
//! recently used out); a parse someone still holds stays alive until they drop it.
//!
//! The read rules live here too, so every extractor applies the same ones: an
//! oversized file is skipped, invalid UTF-8 is replaced, each with a warning.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use crate::extract::python::PyFile;
use crate::source::{BlobId, SourceError, Tree};
use crate::surface::ExtractWarning;

/// Larger source files are skipped with a warning: they are generated data,
/// not code, and parsing them would only cost time.
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// Source bytes whose parses are kept for reuse, least recently used out. A cold
/// audit parses ~1.8 MB per release, two releases at once; a parse tree takes
/// about 20 times its source in memory.
const MEMO_SOURCE_BYTES: usize = 4 << 20;

/// One file read and parsed: the parse (if the file could be read) and the
/// warnings reading it gave. Syntax errors are left to the caller, which knows
/// what they cost its facts.
#[derive(Clone, Default)]
pub(crate) struct Parsed {
    pub file: Option<Arc<PyFile>>,
    pub warnings: Vec<ExtractWarning>,
    /// The read failed (a damaged object), rather than the file being absent,
    /// too large or unparsable: another tree asking must read it itself.
    pub read_failed: bool,
}

/// Read and parse `path` of `tree`, or reuse the parse of the same content.
/// The lookup goes through `tree.entry`, so a recording tree still records
/// the file as a dependency when the parse is reused.
pub(crate) fn parse_file(tree: &dyn Tree, path: &str) -> Parsed {
    let Some(entry) = tree.entry(path) else {
        return read_and_parse(tree, path);
    };
    memoized(tree, path, entry.id.clone(), || read_and_parse(tree, path))
}

/// The parse of `path` if one is already in memory (never reads or parses).
pub(crate) fn in_memory(tree: &dyn Tree, path: &str) -> Option<Parsed> {
    let entry = tree.entry(path)?;
    memo().lock().unwrap_or_else(|p| p.into_inner()).parsed(&(path.to_string(), entry.id.clone()))
}

/// Whether `path`'s text is worth parsing by `worth`, asked without reading it
/// again when its parse is in memory (a recomputed unit costs no read). A file
/// read here that is worth it is parsed from those bytes and kept, so the
/// caller's `parse_file` finds it; one that cannot be read is worth parsing
/// (the parse says why, as a warning).
pub(crate) fn worth_parsing(tree: &dyn Tree, path: &str, worth: &dyn Fn(&[u8]) -> bool) -> bool {
    let Some(entry) = tree.entry(path) else { return true };
    let key = (path.to_string(), entry.id.clone());
    if let Some(done) = memo().lock().unwrap_or_else(|p| p.into_inner()).parsed(&key) {
        return done.file.as_ref().is_none_or(|f| worth(f.source.as_bytes()));
    }
    match read_bytes(tree, path) {
        Ok(bytes) if !worth(&bytes) => false,
        Ok(bytes) => {
            memoized(tree, path, entry.id.clone(), || parse_bytes(path, bytes));
            true
        }
        Err(_) => true,
    }
}

/// The memo's parse of `path` at blob `id`, made by `parse` if there is none.
fn memoized(tree: &dyn Tree, path: &str, id: BlobId, parse: impl FnOnce() -> Parsed) -> Parsed {
    // A read that fails is not shared: each tree (and each cached unit) that
    // asks must see its own failure, so none keeps a fact computed without it.
    let failed_before = tree.failed_reads();
    let key = (path.to_string(), id);
    let slot = memo().lock().unwrap_or_else(|p| p.into_inner()).slot(&key);
    let mut fresh = false;
    let parsed = slot
        .get_or_init(|| {
            fresh = true;
            parse()
        })
        .clone();
    if parsed.read_failed && !fresh {
        // Another tree's read of this blob failed: this tree reads for itself.
        return read_and_parse(tree, path);
    }
    if fresh {
        let mut memo = memo().lock().unwrap_or_else(|p| p.into_inner());
        if tree.failed_reads() > failed_before {
            memo.forget(&key);
        } else {
            memo.account(key, parsed.file.as_ref().map_or(0, |f| f.source.len()));
        }
    }
    parsed
}

/// The module-level outline of `path` parsed (see [`outline`](super::outline)),
/// or the whole file when the outline cannot be trusted (the scan was unsure,
/// or the outline does not parse cleanly). A full parse of the same content
/// already in memory serves as well. Outlines are not kept: each is asked for
/// once per release.
pub(crate) fn parse_outline(tree: &dyn Tree, path: &str) -> Parsed {
    let Some(entry) = tree.entry(path) else {
        return read_and_parse(tree, path);
    };
    let key = (path.to_string(), entry.id.clone());
    if let Some(full) = memo().lock().unwrap_or_else(|p| p.into_inner()).parsed(&key) {
        return full;
    }
    let (source, warnings) = match read_bytes(tree, path) {
        Ok(bytes) => read_text(path, bytes),
        Err(refused) => return refused,
    };
    let file = source.map(|source| {
        let outline = super::outline::outline(&source).map(|text| PyFile::parse(path, text));
        Arc::new(outline.filter(|f| !f.has_errors()).unwrap_or_else(|| PyFile::parse(path, source)))
    });
    with_depth_warning(file, warnings)
}

/// A parsed file and its read warnings, plus the one for statements nested too deep.
fn with_depth_warning(file: Option<Arc<PyFile>>, mut warnings: Vec<ExtractWarning>) -> Parsed {
    warnings.extend(file.as_ref().and_then(|f| f.depth_warning()));
    Parsed { file, warnings, read_failed: false }
}

/// Parse bytes already read (the env-read scan reads every file itself to
/// prefilter it). Not memoized: those files are rarely asked for again.
pub(crate) fn parse_bytes(path: &str, bytes: Vec<u8>) -> Parsed {
    let (source, warnings) = read_text(path, bytes);
    with_depth_warning(source.map(|source| Arc::new(PyFile::parse(path, source))), warnings)
}

/// The text of a file by the read rules: too large is skipped, invalid UTF-8
/// (a latin-1 comment) is replaced rather than costing the whole file's facts;
/// each says so in a warning.
fn read_text(path: &str, bytes: Vec<u8>) -> (Option<String>, Vec<ExtractWarning>) {
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return (None, skipped(path, bytes.len() as u64).warnings);
    }
    match String::from_utf8(bytes) {
        Ok(source) => (Some(source), Vec::new()),
        Err(e) => {
            let error = SourceError::NotUtf8 { path: path.to_string(), offset: e.utf8_error().valid_up_to() };
            let w = warning(path, format!("{error}; read with replacement characters"));
            (Some(String::from_utf8_lossy(e.as_bytes()).into_owned()), vec![w])
        }
    }
}

fn read_and_parse(tree: &dyn Tree, path: &str) -> Parsed {
    match read_bytes(tree, path) {
        Ok(bytes) => parse_bytes(path, bytes),
        Err(refused) => refused,
    }
}

/// The bytes of a file, or why there are none (as a `Parsed` with no file and a
/// warning). One over [`MAX_SOURCE_BYTES`] is refused by its size before it is
/// read (in git, before it is inflated).
pub(crate) fn read_bytes(tree: &dyn Tree, path: &str) -> Result<Vec<u8>, Parsed> {
    tree.read_limited(path, MAX_SOURCE_BYTES).map_err(|e| match e {
        SourceError::TooLarge { size, .. } => skipped(path, size),
        e => Parsed { file: None, read_failed: e.is_read_failure(), warnings: vec![warning(path, format!("not parsed: {e}"))] },
    })
}

fn skipped(path: &str, size: u64) -> Parsed {
    Parsed {
        file: None,
        warnings: vec![warning(path, format!("skipped: {size} bytes is over the {MAX_SOURCE_BYTES}-byte limit"))],
        read_failed: false,
    }
}

fn warning(path: &str, message: String) -> ExtractWarning {
    ExtractWarning { path: path.to_string(), message }
}

type Key = (String, BlobId);

#[derive(Default)]
struct Memo {
    slots: HashMap<Key, Arc<OnceLock<Parsed>>>,
    /// Parsed entries, least recently used first, with their source size.
    order: VecDeque<(Key, usize)>,
    bytes: usize,
}

impl Memo {
    /// The slot of `key`; concurrent callers share it, and all but the first
    /// wait for the first one's parse instead of parsing again.
    fn slot(&mut self, key: &Key) -> Arc<OnceLock<Parsed>> {
        if let Some(i) = self.order.iter().position(|(k, _)| k == key) {
            let used = self.order.remove(i).expect("position is in range");
            self.order.push_back(used);
        }
        self.slots.entry(key.clone()).or_default().clone()
    }

    /// The parse of `key` if one is done (never waits for one in progress).
    fn parsed(&self, key: &Key) -> Option<Parsed> {
        self.slots.get(key).and_then(|slot| slot.get().cloned())
    }

    /// Drop `key`'s slot (a parse whose read failed is not shared).
    fn forget(&mut self, key: &Key) {
        self.slots.remove(key);
    }

    fn account(&mut self, key: Key, bytes: usize) {
        self.order.push_back((key, bytes));
        self.bytes += bytes;
        while self.bytes > MEMO_SOURCE_BYTES && self.order.len() > 1 {
            let Some((old, size)) = self.order.pop_front() else { break };
            self.slots.remove(&old);
            self.bytes -= size;
        }
    }
}

fn memo() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemTree;

    #[test]
    fn the_same_content_is_parsed_once_and_a_changed_file_again() {
        let a = MemTree::from_files("a", [("pkg/m.py", "X = 1\n")]);
        let b = MemTree::from_files("b", [("pkg/m.py", "X = 1\n")]);
        let c = MemTree::from_files("c", [("pkg/m.py", "X = 2\n")]);
        let first = parse_file(&a, "pkg/m.py").file.unwrap();
        let same = parse_file(&b, "pkg/m.py").file.unwrap();
        let changed = parse_file(&c, "pkg/m.py").file.unwrap();
        assert!(Arc::ptr_eq(&first, &same), "an unchanged file is not parsed again");
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(changed.source, "X = 2\n");
    }

    #[test]
    fn read_problems_are_warnings_naming_the_file() {
        let mut tree = MemTree::new("t");
        tree.insert("pkg/latin1.py", b"# caf\xe9\nX = 1\n".to_vec());
        let parsed = parse_file(&tree, "pkg/latin1.py");
        assert!(parsed.file.is_some(), "the rest of the file still parses");
        assert!(parsed.warnings[0].message.contains("replacement characters"), "{:?}", parsed.warnings);
        let missing = parse_file(&tree, "pkg/missing.py");
        assert!(missing.file.is_none());
        assert_eq!(missing.warnings[0].path, "pkg/missing.py");
        let huge = parse_bytes("pkg/huge.py", vec![b'#'; MAX_SOURCE_BYTES as usize + 1]);
        assert!(huge.file.is_none() && huge.warnings[0].message.contains("over the"), "{:?}", huge.warnings);
    }

    #[test]
    fn the_memo_stays_within_its_budget() {
        let mut memo = Memo::default();
        for i in 0..20 {
            let key = (format!("f{i}.py"), BlobId::from(format!("{i}")));
            memo.slot(&key);
            memo.account(key, 1 << 20);
        }
        assert!(memo.bytes <= MEMO_SOURCE_BYTES);
        assert_eq!(memo.slots.len(), memo.order.len());
    }
}
