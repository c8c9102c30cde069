//! Deep nesting from a few bytes. A mutation-based fuzzer rarely grows an
//! input to thousands of `- `, `$(`, `((` or `1+`, yet those shapes are what
//! overflowed the stack (5,000 × `- ` is 10 KB). An input starting with 0xFE
//! is an instruction: `FE, count (u16 LE, at most 20,000), len (low 3 bits + 1),
//! unit (len bytes), rest` becomes `unit × count, rest, closers × count`, the
//! closers being the unit's brackets mirrored (`$(` → `)`, `[` → `]`).

use std::borrow::Cow;

const MARK: u8 = 0xFE;
const MAX_COUNT: usize = 20_000;

pub fn expand(data: &[u8]) -> Cow<'_, [u8]> {
    let [MARK, lo, hi, len, rest @ ..] = data else { return Cow::Borrowed(data) };
    let count = usize::from(u16::from_le_bytes([*lo, *hi])).min(MAX_COUNT);
    let unit_len = usize::from(len & 7) + 1;
    if rest.len() < unit_len {
        return Cow::Borrowed(data);
    }
    let (unit, rest) = rest.split_at(unit_len);
    let closer: Vec<u8> = unit
        .iter()
        .rev()
        .filter_map(|b| match b {
            b'(' => Some(b')'),
            b'[' => Some(b']'),
            b'{' => Some(b'}'),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(count * (unit.len() + closer.len()) + rest.len());
    (0..count).for_each(|_| out.extend_from_slice(unit));
    out.extend_from_slice(rest);
    (0..count).for_each(|_| out.extend_from_slice(&closer));
    Cow::Owned(out)
}
