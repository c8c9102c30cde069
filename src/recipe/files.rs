//! Which files an audit reads, and how: regular files only (a FIFO named
//! `x.yaml` would block forever, a symlink to `/dev/zero` never ends), at most
//! [`MAX_RECIPE_BYTES`], and inside the folder the user gave (a symlink or a
//! master-config link that leaves it is named and not read).

use super::{load_text, LinkMapping, RecipeError, RecipeFile};
use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest recipe file read: twelve times InferenceX's largest master
/// config (324 KB). Parsing costs about 200 bytes of memory per byte of YAML,
/// so this bounds one file's cost to under a gigabyte.
pub const MAX_RECIPE_BYTES: u64 = 4 << 20;

/// Read one file, telling its kind by its content (and `.sh` / a shell shebang
/// for scripts). Master-config links use the InferenceX layout
/// ([`LinkMapping::default`]).
pub fn load_path(path: &Path) -> Result<RecipeFile, RecipeError> {
    load_path_with(path, &LinkMapping::default())
}

/// Read one file named by the user: a symlink is followed (the user named it),
/// but only to a regular file, and only up to [`MAX_RECIPE_BYTES`].
pub fn load_path_with(path: &Path, links: &LinkMapping) -> Result<RecipeFile, RecipeError> {
    let shown = path.display().to_string();
    let bytes = read_regular(path, &shown)?;
    let text = String::from_utf8(bytes).map_err(|e| RecipeError::NotUtf8 { path: shown.clone(), offset: e.utf8_error().valid_up_to() })?;
    let mut file = load_text(&shown, text, links)?;
    file.disk_path = Some(path.to_path_buf());
    Ok(file)
}

/// The bytes of a regular file, bounded. It is opened without blocking (a FIFO
/// with no writer would wait forever) and checked on the open handle, so a file
/// swapped for a device after a check is still refused.
fn read_regular(path: &Path, shown: &str) -> Result<Vec<u8>, RecipeError> {
    let io = |message: String| RecipeError::Io { path: shown.to_string(), message };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io(e.to_string()))?;
    let meta = file.metadata().map_err(|e| io(e.to_string()))?;
    if !meta.is_file() {
        return Err(io("not a regular file (a folder, FIFO, socket or device); not read".into()));
    }
    if meta.len() > MAX_RECIPE_BYTES {
        return Err(too_large(shown, meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow after the check: never read past the limit.
    file.take(MAX_RECIPE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io(e.to_string()))?;
    if bytes.len() as u64 > MAX_RECIPE_BYTES {
        return Err(too_large(shown, bytes.len() as u64));
    }
    Ok(bytes)
}

fn too_large(shown: &str, size: u64) -> RecipeError {
    RecipeError::Io {
        path: shown.to_string(),
        message: format!("{size} bytes is over the {MAX_RECIPE_BYTES}-byte limit for a recipe; not read"),
    }
}

/// `path` when it stays inside `root` once every symlink is resolved, else why
/// not. Both are resolved on disk; `root` must exist.
pub fn read_confined(root: &Path, path: &Path) -> Result<PathBuf, String> {
    let root = root.canonicalize().map_err(|e| format!("{}: {e}", root.display()))?;
    let real = path.canonicalize().map_err(|e| e.to_string())?;
    if real.starts_with(&root) {
        Ok(real)
    } else {
        Err(format!("resolves to {}, outside {}; not read", real.display(), root.display()))
    }
}

/// Load every recipe under `paths`: files as given, folders walked recursively for
/// `.yaml`, `.yml` and `.sh` files. Sorted by path; a file that fails is reported
/// and the rest still load.
pub fn collect(paths: &[PathBuf]) -> (Vec<RecipeFile>, Vec<RecipeError>) {
    collect_with(paths, &LinkMapping::default())
}

/// [`collect`] with master-config links resolved by `links`.
pub fn collect_with(paths: &[PathBuf], links: &LinkMapping) -> (Vec<RecipeFile>, Vec<RecipeError>) {
    collect_walking(paths, links, &Walk::default())
}

/// [`collect_with`], skipping what `walk` excludes in folders.
pub fn collect_walking(paths: &[PathBuf], links: &LinkMapping, walk: &Walk) -> (Vec<RecipeFile>, Vec<RecipeError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk.files(path, &mut files, &mut errors);
        } else {
            // A file named on the command line is read whatever the walk skips.
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    // Each file is read and parsed on its own; the order stays the paths' order.
    let results: Vec<Result<RecipeFile, RecipeError>> = files.par_iter().map(|file| load_path_with(file, links)).collect();
    let mut loaded = Vec::new();
    for result in results {
        match result {
            Ok(recipe) => loaded.push(recipe),
            Err(e) => errors.push(e),
        }
    }
    (loaded, errors)
}

/// Folders that hold other people's files, never recipes of this repository.
const VENDORED: &[&str] = &["node_modules", "vendor", "third_party", "site-packages", "__pycache__", "venv"];

/// How folders are walked: as ripgrep walks them (the `ignore` crate), so a
/// recipe repo's `.gitignore`, `.ignore` and `.git/info/exclude` are honoured
/// (also outside a git clone: an unpacked tarball keeps them), hidden files and
/// folders are skipped (`.git`, `.venv`), and so are [`VENDORED`] folders and
/// the config's `exclude:` globs. The user's global gitignore is not read: CI
/// and a laptop walk the same files.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// `exclude:` globs and the folder they are relative to.
    exclude: Option<(PathBuf, globset::GlobSet)>,
}

impl Walk {
    /// A walk that also skips paths matching `globs` (relative to `root`).
    pub fn excluding(root: &Path, globs: &[String]) -> Result<Walk, globset::Error> {
        if globs.is_empty() {
            return Ok(Walk::default());
        }
        let mut set = globset::GlobSetBuilder::new();
        for g in globs {
            // `dir/` and `dir` both mean the folder and everything below it.
            let g = g.trim_end_matches('/');
            set.add(globset::GlobBuilder::new(g).literal_separator(true).build()?);
        }
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Ok(Walk { exclude: Some((root, set.build()?)) })
    }

    fn excluded(&self, path: &Path) -> bool {
        let Some((root, set)) = &self.exclude else { return false };
        let Ok(abs) = std::path::absolute(path) else { return false };
        abs.strip_prefix(root).is_ok_and(|rel| set.is_match(rel))
    }

    /// The recipe-like files below `root`.
    fn files(&self, root: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<RecipeError>) {
        let this = self.clone();
        let walker = ignore::WalkBuilder::new(root)
            .hidden(true)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(false)
            // Symlinked folders are not followed: a link cycle must not hang the walk.
            .follow_links(false)
            .filter_entry(move |e| {
                let vendored = e.depth() > 0
                    && e.file_type().is_some_and(|t| t.is_dir())
                    && e.file_name().to_str().is_some_and(|n| VENDORED.contains(&n));
                let excluded = e.depth() > 0 && this.excluded(e.path());
                !(vendored || excluded)
            })
            .build();
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = match &e {
                        ignore::Error::WithPath { path, .. } => path.display().to_string(),
                        _ => root.display().to_string(),
                    };
                    errors.push(RecipeError::Io { path, message: e.to_string() });
                    continue;
                }
            };
            let Some(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() || !matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "sh")) {
                continue;
            }
            // A symlinked recipe runs too: read it when it stays in the folder given,
            // name it when it does not.
            if kind.is_symlink() {
                if let Err(reason) = read_confined(root, path) {
                    errors.push(RecipeError::Io { path: path.display().to_string(), message: format!("a symlink that {reason}") });
                    continue;
                }
            }
            files.push(path.to_path_buf());
        }
    }
}

#[cfg(test)]
mod walk_tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    fn walked(root: &Path, walk: &Walk) -> Vec<String> {
        let (mut files, mut errors) = (Vec::new(), Vec::new());
        walk.files(root, &mut files, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        let mut out: Vec<String> = files.iter().map(|p| p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/")).collect();
        out.sort();
        out
    }

    #[test]
    fn gitignore_hidden_vendored_and_excluded_files_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "a.yaml",
            "b/c.yml",
            "b/run.sh",
            "b/notes.md",
            "build/gen.yaml",
            ".hidden/x.yaml",
            ".github/workflows/ci.yml",
            "node_modules/p/x.yaml",
            "vendor/x.yaml",
            "old/y.yaml",
            "b/d.draft.yaml",
        ] {
            touch(root, f);
        }
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        assert_eq!(walked(root, &Walk::default()), ["a.yaml", "b/c.yml", "b/d.draft.yaml", "b/run.sh", "old/y.yaml"]);
        let walk = Walk::excluding(root, &["old/".into(), "**/*.draft.yaml".into()]).unwrap();
        assert_eq!(walked(root, &walk), ["a.yaml", "b/c.yml", "b/run.sh"]);
        // Globs are relative to the config's folder, also when a subfolder is walked.
        assert_eq!(walked(&root.join("b"), &walk), ["c.yml", "run.sh"]);
    }

    #[test]
    fn a_file_named_is_read_whatever_the_walk_skips() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "old/y.yaml");
        let walk = Walk::excluding(dir.path(), &["old/**".into()]).unwrap();
        let named = dir.path().join("old/y.yaml");
        let (files, errors) = collect_walking(std::slice::from_ref(&named), &LinkMapping::default(), &walk);
        // Read (and refused as no recipe, or loaded): either way not silently skipped.
        assert_eq!(files.len() + errors.len(), 1);
    }
}
