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
        let env = Envelope {
            version: version.into(),
            kind: "k".into(),
            key: "x".into(),
            variants: vec![Variant { deps: Deps::default(), value: 7u32 }],
        };
        frame(&serde_json::to_vec(&env).unwrap())
    };
    std::fs::write(&path, good(&inner.version)).unwrap();
    assert_eq!(cache.get::<u32>("k", "x", &tree), Some(7));
    assert_eq!(cache.get::<String>("k", "x", &tree), None, "a value of another shape");
    for bad in [
        good("0.0.0+another-binary"),
        b"not ours at all".to_vec(),
        good(&inner.version)[..MAGIC.len() + 10].to_vec(),
        Vec::new(),
        frame(&[0xff, 0xfe, 0x00]),
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
        frame(&[&serde_json::to_vec(&head).unwrap()[..], b"\n", b"body"].concat())
    };
    std::fs::write(&path, header(&inner.version, "x")).unwrap();
    assert_eq!(cache.get_bytes("k", "x").as_deref(), Some(&b"body"[..]));
    for bad in [header("0.0.0+another-binary", "x"), header(&inner.version, "another key"), frame(b"{\"version\":"), b"not ours".to_vec()] {
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
    let listing = Listing { entries: vec![Entry { path: "a.py".into(), id: "0a".into(), size: None }], ..Default::default() };
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
    let files = folder::items(dir.path()).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    let body = read_checked(&files[0].path).unwrap();
    assert!(decode::<serde_json::Value>(&body).is_some());
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

/// Set a file's modification time `secs` seconds in the past.
fn age(path: &Path, secs: u64) {
    let t = SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(t).unwrap();
}

#[test]
fn eviction_only_ever_removes_entries_the_cache_named() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::with_limit(dir.path(), 10_000);
    let big = "y".repeat(3000);
    cache.put("k", "0", Deps::default(), &big);
    let shard = cache.inner.as_ref().unwrap().path("k", "0").parent().unwrap().to_path_buf();
    // A user's files where the cache lives: in a shard, in a folder of their
    // own, named like an entry outside a shard. Old and large: the first to go
    // if eviction looked at anything but entries.
    let foreign = [
        shard.join("holiday.jpg"),
        dir.path().join("photos").join("img.jpg"),
        dir.path().join("photos").join(format!("{}.fact", "a".repeat(62))),
        shard.join(format!("{}.fact.bak", "b".repeat(62))),
    ];
    for path in &foreign {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![7u8; 20_000]).unwrap();
        age(path, 100_000);
    }
    for i in 1..6 {
        cache.put("k", &i.to_string(), Deps::default(), &big);
    }
    // File times are as coarse as the kernel's clock tick: writes a few
    // microseconds apart can tie. Age the entries explicitly, oldest first.
    for i in 0..6 {
        age(&cache.inner.as_ref().unwrap().path("k", &i.to_string()), 100 - i);
    }
    cache.evict_if_needed();
    for path in &foreign {
        assert!(path.exists(), "{} was deleted by eviction", path.display());
    }
    assert!(cache.get::<String>("k", "5", &MemTree::new("t")).is_some(), "the newest entry stays");
    assert!(cache.stats().unwrap().bytes <= 10_000, "entries alone are counted and bounded");
}

#[test]
fn clear_removes_entries_only_and_refuses_a_folder_that_is_not_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    cache.put("k", "x", Deps::default(), &1u32);
    let shard = cache.inner.as_ref().unwrap().path("k", "x").parent().unwrap().to_path_buf();
    std::fs::write(shard.join("notes.txt"), "mine").unwrap();
    std::fs::create_dir_all(dir.path().join("photos")).unwrap();
    std::fs::write(dir.path().join("photos").join("img.jpg"), "mine").unwrap();
    assert_eq!(cache.clear().unwrap(), 1);
    assert_eq!(cache.get::<u32>("k", "x", &MemTree::new("t")), None);
    assert!(shard.join("notes.txt").exists() && dir.path().join("photos").join("img.jpg").exists());

    // A folder of someone's files, never written by the cache: nothing goes.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("videos")).unwrap();
    std::fs::write(home.path().join("videos").join("clip.mp4"), "mine").unwrap();
    std::fs::write(home.path().join("photo.jpg"), "mine").unwrap();
    let err = FactCache::at(home.path()).clear().expect_err("not a cache folder");
    assert!(err.to_string().contains(&home.path().display().to_string()), "the folder is named: {err}");
    assert!(err.to_string().contains("CACHEDIR.TAG"), "{err}");
    assert!(home.path().join("videos").join("clip.mp4").exists() && home.path().join("photo.jpg").exists());
}

#[test]
fn a_new_cache_folder_is_tagged_and_a_folder_of_other_files_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let facts = dir.path().join("facts");
    let cache = FactCache::at(&facts);
    cache.put("k", "x", Deps::default(), &1u32);
    let tag = std::fs::read_to_string(facts.join("CACHEDIR.TAG")).expect("the cache tags the folder it creates");
    assert!(tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55"), "{tag}");
    assert_eq!(cache.get::<u32>("k", "x", &MemTree::new("t")), Some(1));

    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("photo.jpg"), "mine").unwrap();
    let cache = FactCache::at(home.path());
    cache.put("k", "x", Deps::default(), &1u32);
    cache.put_bytes("k", "y", b"body");
    let names: Vec<_> = std::fs::read_dir(home.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(names, ["photo.jpg"], "nothing is written into a folder that is not a cache");
}

/// Flip the lowest bit of the first byte of `needle` in the file at `path`.
fn flip_in(path: &Path, needle: &[u8]) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.windows(needle.len()).position(|w| w == needle).expect("needle in entry");
    bytes[at] ^= 1;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_entry_is_a_miss_and_is_removed() {
    use crate::source::{Entry, Listing, ListingStore};
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    let tree = MemTree::new("t");
    cache.put("k", "x", Deps::default(), &"flags: --tp-size".to_string());
    let path = cache.inner.as_ref().unwrap().path("k", "x");
    // `t` becomes `u`: still valid JSON, a different answer.
    flip_in(&path, b"tp-size");
    assert_eq!(cache.get::<String>("k", "x", &tree), None, "a flipped bit is caught");
    assert!(!path.exists(), "the damaged entry is removed");

    // A listing whose blob id lost a bit would send every read to a missing object.
    let listing = Listing { entries: vec![Entry { path: "a.py".into(), id: "0a1b2c".into(), size: None }], ..Default::default() };
    cache.keep("c1", &listing);
    let path = cache.inner.as_ref().unwrap().path(LISTING, "c1");
    flip_in(&path, b"0a1b2c");
    assert_eq!(cache.listing("c1"), None, "a damaged listing is walked again");
    assert!(!path.exists());
}

#[test]
fn stale_temporary_files_are_removed_and_fresh_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let cache = FactCache::at(dir.path());
    cache.put("k", "x", Deps::default(), &1u32);
    let shard = cache.inner.as_ref().unwrap().path("k", "x").parent().unwrap().to_path_buf();
    // What a `kill -9` between writing and renaming leaves behind.
    let (stale, fresh) = (shard.join(".tmp-Ab3xYz"), shard.join(".tmp-Qr7sTu"));
    std::fs::write(&stale, "half an entry").unwrap();
    std::fs::write(&fresh, "another process is writing this").unwrap();
    age(&stale, 2 * 3600);
    cache.put("k", "y", Deps::default(), &2u32);
    cache.evict_if_needed();
    assert!(!stale.exists(), "a temporary file hours old is a leftover");
    assert!(fresh.exists(), "a fresh one may still be renamed into place");
}
