use super::*;
use crate::cache::RecordingTree;
use crate::source::MemTree;

fn deps_of(tree: &dyn Tree, paths: &[&str]) -> Deps {
    let rec = RecordingTree::new(tree);
    for p in paths {
        let _ = rec.read(p);
    }
    rec.deps()
}

#[test]
fn a_value_is_found_while_its_files_are_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let old = MemTree::from_files("t", [("a.py", "A"), ("b.py", "B")]);
    let new = MemTree::from_files("t", [("a.py", "A2"), ("b.py", "B")]);
    assert_eq!(cache.get::<String>("k", "x", &old), None);
    cache.put("k", "x", deps_of(&old, &["a.py"]), &"from old".to_string());
    assert_eq!(cache.get::<String>("k", "x", &old).as_deref(), Some("from old"));
    assert_eq!(cache.get::<String>("k", "x", &new), None, "a changed file invalidates");
    // Both refs of a bump keep their variant.
    cache.put("k", "x", deps_of(&new, &["a.py"]), &"from new".to_string());
    assert_eq!(cache.get::<String>("k", "x", &old).as_deref(), Some("from old"));
    assert_eq!(cache.get::<String>("k", "x", &new).as_deref(), Some("from new"));
    // Other kinds and keys are other entries.
    assert_eq!(cache.get::<String>("k2", "x", &old), None);
    assert_eq!(cache.get::<String>("k", "y", &old), None);
}

#[test]
fn corrupt_foreign_or_mistyped_entries_are_misses() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let tree = MemTree::from_files("t", [("a.py", "A")]);
    let inner = cache.inner.as_ref().unwrap();
    let path = inner.path("k", "x");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let good = |version: &str| {
        let env = Envelope { version: version.into(), kind: "k".into(), key: "x".into(), variants: vec![Variant { deps: Deps::default(), value: 7u32 }] };
        [MAGIC, &serde_json::to_vec(&env).unwrap()].concat()
    };
    std::fs::write(&path, good(&inner.version)).unwrap();
    assert_eq!(cache.get::<u32>("k", "x", &tree), Some(7));
    assert_eq!(cache.get::<String>("k", "x", &tree), None, "a value of another shape");
    for bad in [
        good("0.0.0+another-binary"),
        b"not ours at all".to_vec(),
        good(&inner.version)[..MAGIC.len() + 10].to_vec(),
        Vec::new(),
        [MAGIC, &[0xff, 0xfe, 0x00]].concat(),
    ] {
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(cache.get::<u32>("k", "x", &tree), None);
        // Writing over a corrupt entry replaces it.
        cache.put("k", "x", Deps::default(), &9u32);
        assert_eq!(cache.get::<u32>("k", "x", &tree), Some(9));
    }
}

#[test]
fn binary_entries_round_trip_and_refuse_foreign_or_torn_headers() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    assert_eq!(cache.get_bytes("k", "x"), None);
    cache.put_bytes("k", "x", b"\0body\nwith newlines\0");
    assert_eq!(cache.get_bytes("k", "x").as_deref(), Some(&b"\0body\nwith newlines\0"[..]));
    assert_eq!(cache.get_bytes("k", "y"), None);
    let inner = cache.inner.as_ref().unwrap();
    let path = inner.path("k", "x");
    let header = |version: &str, key: &str| {
        let head = RawHeader { version: version.into(), kind: "k".into(), key: key.into() };
        [MAGIC, &serde_json::to_vec(&head).unwrap(), b"\n", b"body"].concat()
    };
    std::fs::write(&path, header(&inner.version, "x")).unwrap();
    assert_eq!(cache.get_bytes("k", "x").as_deref(), Some(&b"body"[..]));
    for bad in [
        header("0.0.0+another-binary", "x"),
        header(&inner.version, "another key"),
        [MAGIC, b"{\"version\":"].concat(),
        b"not ours".to_vec(),
    ] {
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(cache.get_bytes("k", "x"), None);
    }
    // A JSON entry is not a binary one, nor the reverse.
    cache.put("k", "x", Deps::default(), &9u32);
    assert_eq!(cache.get_bytes("k", "x"), None);
    cache.put_bytes("k", "x", b"9");
    assert_eq!(cache.get::<u32>("k", "x", &MemTree::new("t")), None);
}

#[test]
fn listings_are_kept_by_commit() {
    use crate::source::{Entry, Listing, ListingStore};
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let listing = Listing { entries: vec![Entry { path: "a.py".into(), id: "0a".into(), size: None }], unsafe_paths: vec![] };
    assert_eq!(cache.listing("c1"), None);
    cache.keep("c1", &listing);
    assert_eq!(cache.listing("c1"), Some(listing));
    assert_eq!(cache.listing("c2"), None);
}

#[test]
fn concurrent_writers_never_leave_a_torn_entry() {
    let dir = tempfile::tempdir().unwrap();
    let trees: Vec<MemTree> = (0..6).map(|i| MemTree::from_files("t", [("a.py", format!("v{i}").leak() as &str)])).collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let trees = &trees;
            let dir = dir.path();
            s.spawn(move || {
                let cache = FactCache::at(dir);
                for round in 0..40 {
                    let i = (t + round) % trees.len();
                    let tree = &trees[i];
                    let want = format!("value {i} {}", "x".repeat(2000));
                    match cache.get::<String>("k", "shared", tree) {
                        Some(v) => assert_eq!(v, want, "a variant is only found for its own tree"),
                        None => cache.put("k", "shared", deps_of(tree, &["a.py"]), &want),
                    }
                }
            });
        }
    });
    // Every file in the folder decodes (no torn writes, no stray temp files).
    let cache = FactCache::at(dir.path());
    let files = entry_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let bytes = std::fs::read(&files[0].0).unwrap();
    assert!(decode::<serde_json::Value>(&bytes).is_some());
    assert!(cache.get::<String>("k", "shared", &trees[0]).is_none_or(|v| v.starts_with("value 0 ")));
}

#[test]
fn the_folder_is_bounded_oldest_first_and_can_be_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::with_limit(dir.path(), 10_000);
    let tree = MemTree::new("t");
    let big = "y".repeat(3000);
    for i in 0..6 {
        cache.put("k", &i.to_string(), Deps::default(), &big);
        // Distinct modification times, oldest first.
        let path = cache.inner.as_ref().unwrap().path("k", &i.to_string());
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(t).unwrap();
    }
    cache.evict_if_needed();
    let stats = cache.stats().unwrap();
    assert!(stats.bytes <= 10_000 * EVICT_TO_PERCENT / 100, "{stats:?}");
    assert!(cache.get::<String>("k", "5", &tree).is_some(), "the newest stays");
    assert!(cache.get::<String>("k", "0", &tree).is_none(), "the oldest went");
    assert!(cache.clear().unwrap() > 0);
    assert_eq!(cache.stats().unwrap().entries, 0);
}

#[test]
fn a_disabled_cache_stores_nothing() {
    let cache = FactCache::disabled();
    let tree = MemTree::new("t");
    cache.put("k", "x", Deps::default(), &1u32);
    assert_eq!(cache.get::<u32>("k", "x", &tree), None);
    assert!(cache.stats().is_none());
}
