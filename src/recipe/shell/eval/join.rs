//! Two paths' values of one variable joined into a value that stands for both.
//!
//! When paths are merged, a variable they disagree on used to become wholly
//! unknown. A flag string that is built in branches (`CONFIG="--tp-size $TP"`,
//! then `CONFIG="$CONFIG --enable-x"` under some test) then lost every flag,
//! even the ones written on every path. Bash splits an unquoted value at
//! whitespace, so the join is done word by word: the words both values have,
//! in order (their longest common subsequence), stay known, and each stretch
//! where the two differ becomes one unknown piece that may stand for any number
//! of words. A word that differs only after its `=` keeps its `--flag=` part.

use super::super::words::{fields, Frag, Item, Origin};
use super::Value;

/// Words compared per value pair, beyond which the values are joined as a
/// whole (unknown): the alignment costs the product of the two lengths.
const MAX_WORDS: usize = 512;

/// The join of `a` and `b`, or `None` when nothing of them can be kept (the
/// caller makes the whole value unknown).
pub(super) fn join_values(name: &str, a: &Value, b: &Value, at: Origin) -> Option<Value> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => join_strings(name, x, y, at).map(Value::Str),
        // Elements are words of their own: arrays of one length are joined
        // element by element (a differing element keeps its `--flag=`); of
        // two lengths, as strings are, by their common elements.
        (Value::Array(x), Value::Array(y)) if x.len() != y.len() => join_arrays(name, x, y, at).map(Value::Array),
        (Value::Array(x), Value::Array(y)) => {
            let mut kept_any = false;
            let out = x
                .iter()
                .zip(y)
                .map(|(ex, ey)| {
                    if same_word(ex, ey) {
                        kept_any = true;
                        ex.clone()
                    } else {
                        let joined = join_word(name, ex, ey, at);
                        kept_any |= joined.len() > 1;
                        joined
                    }
                })
                .collect();
            kept_any.then_some(Value::Array(out))
        }
        _ => None,
    }
}

type Word = Vec<Frag>;

fn join_strings(name: &str, x: &[Frag], y: &[Frag], at: Origin) -> Option<Vec<Frag>> {
    let (wx, wy) = (words(x), words(y));
    if wx.len() > MAX_WORDS || wy.len() > MAX_WORDS {
        return None;
    }
    let pairs = common_words(&wx, &wy);
    let mut pieces: Vec<Word> = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut kept_any = false;
    for (ci, cj) in pairs.into_iter().chain(std::iter::once((wx.len(), wy.len()))) {
        let (gx, gy) = (&wx[i..ci], &wy[j..cj]);
        match (gx, gy) {
            ([], []) => {}
            ([one_x], [one_y]) => {
                let joined = join_word(name, one_x, one_y, at);
                kept_any |= joined.len() > 1;
                pieces.push(joined);
            }
            _ => pieces.push(vec![gap(name, at)]),
        }
        if ci < wx.len() {
            pieces.push(wx[ci].clone());
            kept_any = true;
        }
        (i, j) = (ci + 1, cj + 1);
    }
    if !kept_any {
        return None;
    }
    let mut out = Vec::new();
    for (k, piece) in pieces.into_iter().enumerate() {
        if k > 0 {
            out.push(Frag::literal(" ".into(), Origin { verbatim: false, ..at }, at, false));
        }
        out.extend(piece);
    }
    Some(out)
}

/// Arrays of two lengths (`A=(-tp "$TP")` on one path, `A=(-tp "$TP" ${EP_FLAGS})`
/// on another): the elements both have, in order, stay; each stretch where
/// they differ becomes one element that stands for any number of elements
/// (`"${A[@]}"` gives it as unknown words, never as exactly one).
fn join_arrays(name: &str, x: &[Word], y: &[Word], at: Origin) -> Option<Vec<Word>> {
    if x.len() > MAX_WORDS || y.len() > MAX_WORDS {
        return None;
    }
    let pairs = common_words(x, y);
    if pairs.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (ci, cj) in pairs.into_iter().chain(std::iter::once((x.len(), y.len()))) {
        if ci > i || cj > j {
            out.push(vec![Frag { split: true, ..gap(name, at) }]);
        }
        if ci < x.len() {
            out.push(x[ci].clone());
        }
        (i, j) = (ci + 1, cj + 1);
    }
    Some(out)
}

/// The pieces of a value that bash's splitting makes words: literal text is cut
/// at whitespace; an unknown piece stays inside the word it is written in
/// (bash's field splitting, [`fields`], with every literal piece split).
fn words(frags: &[Frag]) -> Vec<Word> {
    let items = frags.iter().map(|f| Item::Frag(Frag { split: f.split || f.unknown.is_none(), ..f.clone() })).collect();
    // A stored value's literal pieces are not split again where it is read.
    fields(items, false)
        .into_iter()
        .map(|w| w.into_iter().map(|f| if f.unknown.is_none() { Frag { split: false, ..f } } else { f }).collect())
        .collect()
}

/// Two words are the same when their text and what is unknown in them agree
/// (where they are written may differ: two branches writing the same flag).
fn same_word(x: &[Frag], y: &[Frag]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.text == b.text && a.unknown == b.unknown)
}

/// Index pairs of the longest common subsequence of two word lists.
fn common_words(x: &[Word], y: &[Word]) -> Vec<(usize, usize)> {
    let (n, m) = (x.len(), y.len());
    // lengths[i][j]: the longest common subsequence of x[i..] and y[j..].
    let mut lengths = vec![0u16; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[at(i, j)] =
                if same_word(&x[i], &y[j]) { lengths[at(i + 1, j + 1)] + 1 } else { lengths[at(i + 1, j)].max(lengths[at(i, j + 1)]) };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same_word(&x[i], &y[j]) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[at(i + 1, j)] >= lengths[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// One word that differs between the two values: its `--flag=` part, when both
/// start with the same one, and the rest unknown.
fn join_word(name: &str, x: &[Frag], y: &[Frag], at: Origin) -> Word {
    let (Some(first_x), Some(first_y)) = (x.first(), y.first()) else { return vec![gap(name, at)] };
    if first_x.unknown.is_none() && first_y.unknown.is_none() {
        let common = first_x.text.bytes().zip(first_y.text.bytes()).take_while(|(a, b)| a == b).count();
        if let Some(eq) = first_x.text[..common].rfind('=') {
            let prefix = &first_x.text[..=eq];
            if prefix.starts_with('-') {
                let origin = if first_x.origin.verbatim && first_x.origin.end - first_x.origin.start == first_x.text.len() {
                    Origin { end: first_x.origin.start + prefix.len(), ..first_x.origin }
                } else {
                    Origin { verbatim: false, ..first_x.origin }
                };
                return vec![Frag { text: prefix.to_string(), origin, ..first_x.clone() }, gap(name, at)];
            }
        }
    }
    vec![gap(name, at)]
}

/// Where the two values differ: unknown, any number of words.
fn gap(name: &str, at: Origin) -> Frag {
    Frag {
        text: format!("${name}"),
        unknown: Some(super::DIFFERS.to_string()),
        split: false,
        quoted: false,
        origin: Origin { verbatim: false, ..at },
        word: at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Origin {
        Origin { file: 0, start: 0, end: 0, verbatim: false }
    }

    fn text(s: &str) -> Value {
        Value::Str(vec![Frag::literal(s.to_string(), at(), at(), false)])
    }

    /// The value as words, unknown pieces as `?`.
    fn shown(v: &Value) -> String {
        let Value::Str(frags) = v else { panic!("{v:?}") };
        frags.iter().map(|f| if f.unknown.is_some() { "?".to_string() } else { f.text.clone() }).collect()
    }

    #[test]
    fn shared_words_stay_and_differences_become_one_unknown_piece() {
        let joined = join_values("C", &text("--tp 8 --ep 8 --port 1"), &text("--tp 8 --port 1"), at()).unwrap();
        assert_eq!(shown(&joined), "--tp 8 ? --port 1");
        let joined = join_values("C", &text("--tp 8 --a --b"), &text("--tp 8 --c"), at()).unwrap();
        assert_eq!(shown(&joined), "--tp 8 ?");
    }

    #[test]
    fn a_word_that_differs_after_its_equals_sign_keeps_its_flag() {
        let joined = join_values("C", &text("--x 1 --len=8192"), &text("--x 1 --len=65536"), at()).unwrap();
        assert_eq!(shown(&joined), "--x 1 --len=?");
        // No `=`: the whole word is unknown (`--max-` is no flag).
        let joined = join_values("C", &text("--x --max-a"), &text("--x --max-b"), at()).unwrap();
        assert_eq!(shown(&joined), "--x ?");
    }

    #[test]
    fn nothing_shared_is_no_join() {
        assert!(join_values("C", &text("--a 1"), &text("--b 2"), at()).is_none());
        assert!(join_values("C", &text(""), &text("--b 2"), at()).is_none());
        let arrays = (Value::Array(vec![vec![]]), Value::Array(vec![]));
        assert!(join_values("C", &arrays.0, &arrays.1, at()).is_none());
    }

    #[test]
    fn arrays_of_two_lengths_keep_their_common_elements() {
        let el = |s: &str| vec![Frag::literal(s.to_string(), at(), at(), false)];
        let a = Value::Array(vec![el("-tp"), el("8")]);
        let b = Value::Array(vec![el("-tp"), el("8"), el("--enable-expert-parallel"), el("--enable-dp-attention")]);
        let Value::Array(out) = join_values("A", &a, &b, at()).unwrap() else { panic!() };
        let words: Vec<String> =
            out.iter().map(|f| f.iter().map(|x| if x.unknown.is_some() { "?".into() } else { x.text.clone() }).collect()).collect();
        assert_eq!(words, ["-tp", "8", "?"]);
        // The gap stands for any number of elements (none, on the first path).
        assert!(out[2][0].split);
        let c = Value::Array(vec![el("--x")]);
        assert!(join_values("A", &c, &b, at()).is_none());
    }

    #[test]
    fn arrays_of_one_length_join_element_by_element() {
        let el = |s: &str| vec![Frag::literal(s.to_string(), at(), at(), false)];
        let a = Value::Array(vec![el("--tp"), el("8"), el("--len=1")]);
        let b = Value::Array(vec![el("--tp"), el("4"), el("--len=2")]);
        let Value::Array(out) = join_values("A", &a, &b, at()).unwrap() else { panic!() };
        let words: Vec<String> =
            out.iter().map(|f| f.iter().map(|x| if x.unknown.is_some() { "?".into() } else { x.text.clone() }).collect()).collect();
        assert_eq!(words, ["--tp", "?", "--len=?"]);
    }
}
