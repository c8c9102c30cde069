//! Plain-directory sources (unpacked wheels, site-packages) and package discovery.

use engine_audit::source::{discover_package_root, DirTree, SourceError, Tree};
use std::fs;

#[test]
fn discovers_both_layouts_and_the_override() {
    let wheel = tempfile::tempdir().unwrap();
    fs::create_dir_all(wheel.path().join("sglang/srt")).unwrap();
    fs::write(wheel.path().join("sglang/__init__.py"), "").unwrap();
    fs::write(wheel.path().join("sglang/srt/environ.py"), "").unwrap();
    let tree = DirTree::open(wheel.path()).unwrap();
    assert_eq!(discover_package_root(&tree, &engine_audit::profiles::SGLANG, None).unwrap(), "sglang");

    let upstream = tempfile::tempdir().unwrap();
    // Dynamo's package is a namespace package: no __init__.py at its root.
    fs::create_dir_all(upstream.path().join("components/src/dynamo/sglang")).unwrap();
    fs::write(upstream.path().join("components/src/dynamo/sglang/args.py"), "").unwrap();
    let tree = DirTree::open(upstream.path()).unwrap();
    assert_eq!(discover_package_root(&tree, &engine_audit::profiles::DYNAMO, None).unwrap(), "components/src/dynamo");
    assert_eq!(
        discover_package_root(&tree, &engine_audit::profiles::DYNAMO, Some("components/src/dynamo/sglang/")).unwrap(),
        "components/src/dynamo/sglang"
    );
    match discover_package_root(&tree, &engine_audit::profiles::SGLANG, None) {
        Err(SourceError::NoPackage { looked_for, .. }) => assert_eq!(looked_for, "python/sglang, sglang"),
        other => panic!("expected NoPackage, got {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed_and_paths_cannot_escape() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.py"), "TOKEN = 1\n").unwrap();
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("sglang")).unwrap();
    fs::write(root.path().join("sglang/__init__.py"), "").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.py"), root.path().join("sglang/linked.py")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("sglang/linked_dir")).unwrap();

    let tree = DirTree::open(root.path()).unwrap();
    let paths: Vec<_> = tree.entries().iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["sglang/__init__.py"]);
    assert!(matches!(tree.read("sglang/../../secret.py"), Err(SourceError::UnsafePath { .. })));
    assert!(matches!(tree.read("/etc/passwd"), Err(SourceError::UnsafePath { .. })));
    assert!(matches!(tree.read("sglang/linked.py"), Err(SourceError::MissingFile { .. })));
}

#[cfg(unix)]
#[test]
fn a_symlinked_engine_file_is_named_in_the_surface_warnings() {
    use engine_audit::extract::{extract_surface, Demand};
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("sglang/srt")).unwrap();
    fs::write(root.path().join("sglang/__init__.py"), "").unwrap();
    fs::write(root.path().join("sglang/srt/real_environ.py"), "X = 1\n").unwrap();
    // Without a note, every env var would read as removed.
    std::os::unix::fs::symlink("real_environ.py", root.path().join("sglang/srt/environ.py")).unwrap();
    let tree = DirTree::open(root.path()).unwrap();
    let surface =
        extract_surface(&tree, &engine_audit::profiles::SGLANG, "sglang", "(directory)", &Demand::full(&engine_audit::profiles::SGLANG));
    let named = surface.warnings.iter().find(|w| w.path == "sglang/srt/environ.py");
    let named = named.unwrap_or_else(|| panic!("the skipped link is not named: {:?}", surface.warnings));
    assert!(named.message.contains("symbolic link"), "{}", named.message);
}

#[test]
fn a_huge_compiled_library_is_listed_by_its_size_not_read() {
    let pkg = tempfile::tempdir().unwrap();
    fs::create_dir_all(pkg.path().join("sglang/srt")).unwrap();
    fs::write(pkg.path().join("sglang/srt/environ.py"), "X = 1\n").unwrap();
    // 1.5 GB, sparse: listing it must not read (or hash) its bytes.
    let so = fs::File::create(pkg.path().join("sglang/_kernels.so")).unwrap();
    so.set_len(1_500 << 20).unwrap();
    let tree = DirTree::open(pkg.path()).unwrap();
    let lib = tree.entry("sglang/_kernels.so").unwrap();
    assert!(lib.id.starts_with("unread:1572864000:"), "{}", lib.id);
    assert_eq!(lib.size, Some(1_500 << 20));
    // A source file is still identified by its content, as in memory trees.
    let src = tree.entry("sglang/srt/environ.py").unwrap();
    assert_eq!(src.id, engine_audit::source::MemTree::from_files("m", [("a.py", "X = 1\n")]).entries()[0].id);
    assert!(matches!(tree.read_limited("sglang/_kernels.so", 4 << 20), Err(SourceError::TooLarge { .. })));
}
