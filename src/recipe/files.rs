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
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, path, &mut files, &mut errors);
        } else {
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

fn walk(root: &Path, dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<RecipeError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(RecipeError::Io { path: dir.display().to_string(), message: e.to_string() });
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // Symlinked folders are not followed: a link cycle must not hang the walk.
        if kind.is_dir() {
            walk(root, &path, files, errors);
            continue;
        }
        if !matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "sh")) {
            continue;
        }
        // A symlinked recipe runs too: read it when it stays in the folder given,
        // name it when it does not.
        if kind.is_symlink() {
            if let Err(reason) = read_confined(root, &path) {
                errors.push(RecipeError::Io { path: path.display().to_string(), message: format!("a symlink that {reason}") });
                continue;
            }
        }
        files.push(path);
    }
}
