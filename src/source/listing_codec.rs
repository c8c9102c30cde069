//! A compact binary form of a [`Listing`], for the fact cache: a warm audit
//! loads three listings of ~5,000 entries each, and decoding them as JSON rows
//! was a tenth of its CPU. Decoding is defensive: a truncated or foreign body
//! gives `None` (the listing is walked again), never a panic.
//!
//! Layout, integers little-endian:
//! `u32 entries`, then per entry `u32 path length, path, u8 id length, id,
//! u8 has-size, [u64 size]`; then `u32 unsafe paths`, each `u32 length, path`;
//! then `u32 symlinks`, each `u32 length, path`.

use super::{Entry, Listing};

impl Listing {
    pub fn encode(&self) -> Vec<u8> {
        let bytes: usize = self.entries.iter().map(|e| e.path.len() + e.id.len() + 18).sum();
        let mut out = Vec::with_capacity(bytes + 8);
        out.extend((self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            put_str(&mut out, &e.path);
            // Ids are hex digests (40 or 64 chars); anything longer is not an id.
            let id = &e.id.as_bytes()[..e.id.len().min(u8::MAX as usize)];
            out.push(id.len() as u8);
            out.extend(id);
            match e.size {
                Some(size) => {
                    out.push(1);
                    out.extend(size.to_le_bytes());
                }
                None => out.push(0),
            }
        }
        put_strs(&mut out, &self.unsafe_paths);
        put_strs(&mut out, &self.symlinks);
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<Listing> {
        let mut r = Reader(bytes);
        let n = r.u32()? as usize;
        // Every entry takes at least 6 bytes: a count beyond that is corrupt, and
        // must not size an allocation.
        let mut entries = Vec::with_capacity(n.min(r.0.len() / 6));
        for _ in 0..n {
            let path = r.string()?;
            let id_len = r.u8()? as usize;
            let id = std::str::from_utf8(r.take(id_len)?).ok()?.to_string();
            let size = match r.u8()? {
                0 => None,
                1 => Some(u64::from_le_bytes(r.take(8)?.try_into().ok()?)),
                _ => return None,
            };
            entries.push(Entry { path, id, size });
        }
        let unsafe_paths = r.strings()?;
        let symlinks = r.strings()?;
        // Lookups binary-search the entries: an unsorted body is not ours.
        let sorted = entries.windows(2).all(|w| w[0].path < w[1].path);
        (r.0.is_empty() && sorted).then_some(Listing { entries, unsafe_paths, symlinks })
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u32).to_le_bytes());
    out.extend(s.as_bytes());
}

fn put_strs(out: &mut Vec<u8>, strs: &[String]) {
    out.extend((strs.len() as u32).to_le_bytes());
    for s in strs {
        put_str(out, s);
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok().map(str::to_string)
    }
    /// A count, then that many strings (each at least 4 bytes: a larger count
    /// is corrupt and must not size an allocation).
    fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.u32()? as usize;
        let mut out = Vec::with_capacity(n.min(self.0.len() / 4));
        for _ in 0..n {
            out.push(self.string()?);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Listing {
        Listing {
            entries: vec![
                Entry { path: "python/sglang/__init__.py".into(), id: "26fad58b07d9cf39ebcc98917bcbf932a1b648ae".into(), size: None },
                Entry {
                    path: "python/sglang/srt/environ.py".into(),
                    id: "c78ad659826dbf284b1a99ebc2b2701585eb53ec".into(),
                    size: Some(48_292),
                },
                Entry { path: "python/sglang/ünïcode.py".into(), id: "ab".into(), size: Some(0) },
            ],
            unsafe_paths: vec!["../escape.py".into()],
            symlinks: vec!["python/sglang/srt/environ.py".into()],
        }
    }

    #[test]
    fn round_trips() {
        let listing = sample();
        assert_eq!(Listing::decode(&listing.encode()), Some(listing));
        assert_eq!(Listing::decode(&Listing::default().encode()), Some(Listing::default()));
    }

    #[test]
    fn every_truncation_and_trailing_garbage_is_refused() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert_eq!(Listing::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Listing::decode(&longer), None);
    }

    #[test]
    fn a_huge_count_or_unsorted_body_is_refused_without_allocating_it() {
        assert_eq!(Listing::decode(&u32::MAX.to_le_bytes()), None);
        let mut unsorted = sample();
        unsorted.entries.swap(0, 1);
        assert_eq!(Listing::decode(&unsorted.encode()), None);
    }
}
