//! Loose blobs read without libgit2. libgit2 1.9 loops forever on a loose
//! object whose zlib stream is cut short (a disk filled mid-write, a copy
//! interrupted): it keeps asking zlib for output that can never come. A loose
//! object is one zlib stream of `<type> <size>\0<bytes>`, so it is inflated here
//! with a bound, and a short or damaged stream is an error. Packed objects (the
//! usual case in a clone) still go through libgit2.

use std::path::Path;

/// Room for the `blob <size>\0` header beyond a body limit.
const HEADER_ROOM: usize = 32;

#[derive(Debug, PartialEq, Eq)]
pub(super) enum LooseError {
    /// Not a complete `blob` object: truncated, not zlib, or another type.
    Corrupt(String),
    /// The header says more bytes than the caller's limit.
    TooLarge(u64),
}

/// Loose trees and commits are small; anything bigger is not worth inflating
/// just to check it (libgit2 reads it, as before this guard).
const CHECK_LIMIT: u64 = 64 << 20;

/// The body of loose blob `oid` under `objects`, `Ok(None)` when there is no
/// loose file for it (the object is packed, or absent: libgit2 says which).
pub(super) fn read_blob(objects: &Path, oid: &str, limit: Option<u64>) -> Result<Option<Vec<u8>>, LooseError> {
    let Some(object) = inflate(objects, oid, limit)? else { return Ok(None) };
    if object.kind != "blob" {
        return Err(LooseError::Corrupt(format!("loose object is a {}, not a blob", object.kind)));
    }
    Ok(Some(object.body))
}

/// Whether loose object `oid` (of any type), if there is one, inflates completely.
pub(super) fn check(objects: &Path, oid: &str) -> Result<(), String> {
    match inflate(objects, oid, Some(CHECK_LIMIT)) {
        Ok(_) | Err(LooseError::TooLarge(_)) => Ok(()),
        Err(LooseError::Corrupt(m)) => Err(m),
    }
}

struct Object {
    kind: String,
    body: Vec<u8>,
}

fn inflate(objects: &Path, oid: &str, limit: Option<u64>) -> Result<Option<Object>, LooseError> {
    if oid.len() < 3 || !oid.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let compressed = match std::fs::read(objects.join(&oid[..2]).join(&oid[2..])) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LooseError::Corrupt(e.to_string())),
    };
    let max = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX).saturating_add(HEADER_ROOM));
    let (inflated, complete) = match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&compressed, max) {
        Ok(all) => (all, true),
        // Over the limit: the partial output still holds the header and its size.
        Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput => (e.output, false),
        Err(e) => {
            // Refused by size whenever the header says so, as libgit2's header read would.
            if let Some((_, size, _)) = header(&e.output).filter(|(_, size, _)| limit.is_some_and(|l| *size > l)) {
                return Err(LooseError::TooLarge(size));
            }
            return Err(LooseError::Corrupt(format!("loose object does not inflate: {e}")));
        }
    };
    let (kind, size, body_at) = header(&inflated).ok_or_else(|| LooseError::Corrupt("loose object has no header".into()))?;
    if limit.is_some_and(|l| size > l) {
        return Err(LooseError::TooLarge(size));
    }
    let body = &inflated[body_at..];
    if !complete || body.len() as u64 != size {
        return Err(LooseError::Corrupt(format!("loose object holds {} of the {size} bytes its header says", body.len())));
    }
    Ok(Some(Object { kind: kind.to_string(), body: body.to_vec() }))
}

/// `<type> <size>\0`: the type, the size and where the body starts.
fn header(bytes: &[u8]) -> Option<(&str, u64, usize)> {
    let nul = bytes.iter().take(HEADER_ROOM).position(|&b| b == 0)?;
    let (kind, size) = std::str::from_utf8(&bytes[..nul]).ok()?.split_once(' ')?;
    if !matches!(kind, "blob" | "tree" | "commit" | "tag") || size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((kind, size.parse().ok()?, nul + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(objects: &Path, oid: &str, raw: &[u8]) {
        let dir = objects.join(&oid[..2]);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(&oid[2..]), miniz_oxide::deflate::compress_to_vec_zlib(raw, 6)).unwrap();
    }

    #[test]
    fn reads_a_blob_and_refuses_truncated_oversized_or_other_objects() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let body = "x = 1\n".repeat(1000);
        store(objects, "aa11", format!("blob {}\0{body}", body.len()).as_bytes());
        assert_eq!(read_blob(objects, "aa11", None).unwrap().as_deref(), Some(body.as_bytes()));
        assert_eq!(read_blob(objects, "aa11", Some(10)), Err(LooseError::TooLarge(body.len() as u64)));
        assert_eq!(read_blob(objects, "bb22", None), Ok(None), "not loose: packed or absent");

        let full = std::fs::read(objects.join("aa").join("11")).unwrap();
        for cut in [0, 1, 2, 5, full.len() / 2, full.len() - 1] {
            std::fs::write(objects.join("aa").join("11"), &full[..cut]).unwrap();
            assert!(matches!(read_blob(objects, "aa11", None), Err(LooseError::Corrupt(_))), "cut at {cut}");
        }
        store(objects, "cc33", b"tree 5\0abcde");
        assert!(matches!(read_blob(objects, "cc33", None), Err(LooseError::Corrupt(_))));
        store(objects, "dd44", b"blob 9\0short");
        assert!(matches!(read_blob(objects, "dd44", None), Err(LooseError::Corrupt(_))));
    }

    #[test]
    fn check_passes_whole_or_absent_objects_and_names_a_cut_one() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        store(objects, "ee55", b"tree 5\0abcde");
        assert_eq!(check(objects, "ee55"), Ok(()));
        assert_eq!(check(objects, "ff66"), Ok(()), "packed or absent: libgit2's to judge");
        let full = std::fs::read(objects.join("ee").join("55")).unwrap();
        std::fs::write(objects.join("ee").join("55"), &full[..full.len() - 3]).unwrap();
        assert!(check(objects, "ee55").is_err());
    }
}
