//! The fact cache under the extractors: warm runs read nothing, a changed file
//! is read again alone, and cached or not the surface is the same.

use crate::cache::FactCache;
use crate::extract::{extract_surface, extract_surface_with, Demand, EnvReads};
use crate::source::{DirTree, Entry, MemTree, SourceError, Tree};
use crate::surface::EngineSurface;
use std::path::Path;
use std::sync::Mutex;

/// A tree that remembers which files were read.
struct Counting<'t> {
    inner: &'t dyn Tree,
    reads: Mutex<Vec<String>>,
}

impl<'t> Counting<'t> {
    fn new(inner: &'t dyn Tree) -> Self {
        Counting { inner, reads: Mutex::new(Vec::new()) }
    }
    fn take(&self) -> Vec<String> {
        let mut r = std::mem::take(&mut *self.reads.lock().unwrap());
        r.sort();
        r.dedup();
        r
    }
}

impl Tree for Counting<'_> {
    fn entries(&self) -> &[Entry] {
        self.inner.entries()
    }
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        self.reads.lock().unwrap().push(path.to_string());
        self.inner.read(path)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

fn demo_engine() -> MemTree {
    demo_release("sglang/v1.1.0")
}

/// A release folder of the demo's fixtures (`sglang/v1.1.0`, `vllm/v0.9.0`) as a tree.
fn demo_release(release: &str) -> MemTree {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo").join(release);
    let dir = DirTree::open(&root).expect("fixture exists");
    let mut tree = MemTree::new("demo");
    for e in dir.entries() {
        tree.insert(&e.path, dir.read(&e.path).unwrap());
    }
    tree
}

fn demand() -> Demand {
    Demand {
        flags: true,
        env: true,
        env_reads: EnvReads::Names(vec!["SGLANG_NOT_IN_THE_REGISTRY".into()]),
        symbols_of: vec!["sglang.srt.server_args".into()],
        names_imported: Default::default(),
        classes: crate::profiles::SGLANG.config_class().into_iter().collect(),
        metadata: true,
        without_modules: false,
    }
}

fn extract(tree: &dyn Tree, cache: &FactCache) -> EngineSurface {
    extract_surface_with(tree, &crate::profiles::SGLANG, "python/sglang", "v1.1.0", &demand(), cache)
}

#[test]
fn warm_runs_read_nothing_and_a_changed_file_is_read_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let base = demo_engine();
    let uncached = extract_surface(&base, &crate::profiles::SGLANG, "python/sglang", "v1.1.0", &demand());

    let counting = Counting::new(&base);
    assert_eq!(extract(&counting, &cache), uncached, "cold");
    assert!(!counting.take().is_empty());
    assert_eq!(extract(&counting, &cache), uncached, "warm");
    assert_eq!(counting.take(), Vec::<String>::new(), "a warm run reads no engine file");

    // A new module that reads the asked-about variable: only it is read.
    let mut changed = base.clone();
    changed.insert("python/sglang/srt/late.py", b"import os\nX = os.getenv('SGLANG_NOT_IN_THE_REGISTRY', '3')\n".to_vec());
    let counting = Counting::new(&changed);
    let surface = extract(&counting, &cache);
    assert_eq!(counting.take(), ["python/sglang/srt/late.py"]);
    assert_eq!(surface, extract_surface(&changed, &crate::profiles::SGLANG, "python/sglang", "v1.1.0", &demand()));
    assert!(surface.env.iter().any(|v| v.name == "SGLANG_NOT_IN_THE_REGISTRY"));

    // The parser file changes: the units that read it are recomputed, the env
    // scan reads that file alone, and the result matches an uncached run.
    let mut edited = changed.clone();
    let args = String::from_utf8(changed.read("python/sglang/srt/server_args.py").unwrap()).unwrap();
    edited.insert("python/sglang/srt/server_args.py", format!("{args}\nLATE_CONSTANT = 1\n").into_bytes());
    let counting = Counting::new(&edited);
    let surface = extract(&counting, &cache);
    let reads = counting.take();
    assert!(reads.contains(&"python/sglang/srt/server_args.py".to_string()), "{reads:?}");
    assert!(!reads.contains(&"python/sglang/srt/late.py".to_string()), "{reads:?}");
    assert_eq!(surface, extract_surface(&edited, &crate::profiles::SGLANG, "python/sglang", "v1.1.0", &demand()));

    // Both earlier trees are still served from the cache (variants per release).
    let counting = Counting::new(&changed);
    extract(&counting, &cache);
    assert_eq!(counting.take(), Vec::<String>::new());
}

/// vLLM's units (the serve parser over `get_kwargs` of config dataclasses in
/// other modules, the getter dict in envs.py): a warm run reads no file, and
/// a changed config module is read again without the untouched env registry.
#[test]
fn vllm_warm_runs_read_nothing_and_a_changed_config_is_read_again() {
    use crate::profiles::VLLM;
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let demand = Demand::full(&VLLM);
    let extract = |tree: &dyn Tree| extract_surface_with(tree, &VLLM, "vllm", "v0.9.0", &demand, &cache);
    let mut base = demo_release("vllm/v0.9.0");
    // Content of this test's own: another test's parse of the demo's file,
    // kept in memory by content, would spare the cold run its read.
    let own = format!("# {}\n{}", module_path!(), String::from_utf8(base.read("vllm/config/cache.py").unwrap()).unwrap());
    base.insert("vllm/config/cache.py", own.into_bytes());

    // Cold first: an uncached run would leave its parses in memory.
    let counting = Counting::new(&base);
    let cold = extract(&counting);
    assert!(counting.take().contains(&"vllm/config/cache.py".to_string()));
    let uncached = extract_surface(&base, &VLLM, "vllm", "v0.9.0", &demand);
    assert!(uncached.flag("--log-config-file").is_some() && uncached.env.iter().any(|v| v.name == "VLLM_ENGINE_READY_TIMEOUT_S"));
    assert_eq!(cold, uncached, "cold");
    assert_eq!(extract(&counting), uncached, "warm");
    assert_eq!(counting.take(), Vec::<String>::new(), "a warm run reads no engine file");

    // A config dataclass changes its default: the parser is built again from
    // it, and the answer is the uncached one.
    let mut edited = base.clone();
    let cache_py = String::from_utf8(base.read("vllm/config/cache.py").unwrap()).unwrap();
    edited.insert(
        "vllm/config/cache.py",
        cache_py.replace("gpu_memory_utilization: float = 0.92", "gpu_memory_utilization: float = 0.8").into_bytes(),
    );
    let counting = Counting::new(&edited);
    let surface = extract(&counting);
    let reads = counting.take();
    assert!(reads.contains(&"vllm/config/cache.py".to_string()), "{reads:?}");
    assert!(!reads.contains(&"vllm/envs.py".to_string()), "the env registry did not change: {reads:?}");
    assert_eq!(surface, extract_surface(&edited, &VLLM, "vllm", "v0.9.0", &demand));
    assert_eq!(surface.flag("--gpu-memory-utilization").unwrap().default, crate::surface::Known::Value(serde_json::json!(0.8)));
}

#[test]
fn a_corrupt_cache_folder_is_recomputed_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let base = demo_engine();
    let good = extract(&base, &cache);
    // Garble every entry: half of each file, then garbage (shard folders
    // hold the entries; the folder's CACHEDIR.TAG is not one).
    for sub in std::fs::read_dir(dir.path()).unwrap().flatten().filter(|e| e.path().is_dir()) {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            let bytes = std::fs::read(f.path()).unwrap();
            std::fs::write(f.path(), [&bytes[..bytes.len() / 2], b"\xff garbage"].concat()).unwrap();
        }
    }
    assert_eq!(extract(&base, &cache), good);
}

/// A module gone from its package, imported by name: of the package's other
/// modules only those naming it are read for where it went, cold; warm, none.
#[test]
fn a_missing_module_s_successors_are_read_only_where_they_name_what_was_imported() {
    let mut tree = demo_engine();
    tree.insert("python/sglang/srt/utils/encoder_server.py", b"from sglang.srt.utils.common import x\nclass MMEncoder: ...\n".to_vec());
    tree.insert("python/sglang/srt/utils/unrelated.py", b"def helper():\n    return 1\n".to_vec());
    let gone = "sglang.srt.utils.encode_server".to_string();
    let demand =
        Demand { symbols_of: vec![gone.clone()], names_imported: [(gone, ["MMEncoder".to_string()].into())].into(), ..Demand::default() };
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let counting = Counting::new(&tree);
    let extract = |t: &dyn Tree| extract_surface_with(t, &crate::profiles::SGLANG, "python/sglang", "v1.1.0", &demand, &cache);
    let surface = extract(&counting);
    let symbols_of = |name: &str| surface.modules.iter().find(|m| m.name == name).and_then(|m| m.symbols.clone());
    assert!(symbols_of("sglang.srt.utils.encoder_server").is_some_and(|s| s.contains(&"MMEncoder".to_string())));
    assert_eq!(symbols_of("sglang.srt.utils.unrelated"), None, "a module not naming MMEncoder is not parsed");
    assert!(counting.take().contains(&"python/sglang/srt/utils/encoder_server.py".to_string()));
    let warm = extract(&counting);
    assert_eq!(counting.take(), Vec::<String>::new(), "a warm run reads nothing");
    assert_eq!(warm, surface);
}
