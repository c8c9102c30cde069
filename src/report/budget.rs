//! Fitting a markdown report into a character budget. GitHub caps a PR body or
//! comment at 65,536 characters and a step summary at 1 MiB; the InferenceX
//! tree's audit is 290 KB in English and Chinese, most of it notes.
//!
//! What goes first, until the report fits: the notes and the list of inputs
//! not fully read (beyond the first few), then the Chinese half of `en+zh`,
//! then table rows (the same number kept in each area, errors first as the
//! tables are ordered). The lead lines are never cut. Each cut is said where it
//! happened, and a last line says what was cut and where the full report is.

/// How much of each part a rendering keeps (`None`: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Limits {
    /// Rows of each area's table.
    pub rows: Option<usize>,
    /// Items of the notes and of the "not fully read" list.
    pub items: Option<usize>,
    /// Whether the Chinese half of `en+zh` is left out.
    pub drop_second_language: bool,
}

impl Limits {
    pub(crate) fn cuts_anything(&self) -> bool {
        self.rows.is_some() || self.items.is_some() || self.drop_second_language
    }
}

/// Count as GitHub counts: characters, not bytes (a Chinese character is one).
pub(crate) fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The least cutting under which `render` fits `max` characters, and the text.
/// `rows` and `items` are the largest counts any part has (the search bounds);
/// `two_languages` whether there is a second half to drop.
pub(crate) fn fit(max: usize, rows: usize, items: usize, two_languages: bool, render: impl Fn(Limits) -> String) -> (Limits, String) {
    let full = render(Limits::default());
    if max == 0 || chars(&full) <= max {
        return (Limits::default(), full);
    }
    let fits = |l: Limits| chars(&render(l)) <= max;
    let mut steps = vec![Limits { items: Some(0), ..Limits::default() }];
    if two_languages {
        steps.push(Limits { items: Some(0), drop_second_language: true, ..Limits::default() });
    }
    for base in &steps {
        if fits(*base) {
            // Keep as many items as fit (more items: longer, so a binary search holds).
            let n = largest(items, |n| fits(Limits { items: Some(n), ..*base }));
            let limits = Limits { items: Some(n), ..*base };
            return (limits, render(limits));
        }
    }
    let base = *steps.last().expect("one step at least");
    let zero = Limits { rows: Some(0), ..base };
    if !fits(zero) {
        return (zero, render(zero));
    }
    let n = largest(rows, |n| fits(Limits { rows: Some(n), ..base }));
    let limits = Limits { rows: Some(n), ..base };
    (limits, render(limits))
}

/// The largest `n` in `0..=max` with `ok(n)`, given `ok(0)` and that `ok` only
/// turns false as `n` grows.
pub(crate) fn largest(max: usize, ok: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in report: a lead of 10, 20 rows of 10, 30 items of 10, a second half of 300.
    fn render(l: Limits) -> String {
        let rows = l.rows.unwrap_or(20).min(20);
        let items = l.items.unwrap_or(30).min(30);
        let second = if l.drop_second_language { 0 } else { 300 };
        "x".repeat(10 + rows * 10 + items * 10 + second)
    }

    #[test]
    fn items_go_first_then_the_second_language_then_rows() {
        assert_eq!(fit(0, 20, 30, true, render).0, Limits::default(), "0 is no budget");
        assert_eq!(fit(810, 20, 30, true, render).0, Limits::default());
        assert_eq!(fit(700, 20, 30, true, render).0, Limits { items: Some(19), ..Limits::default() });
        assert_eq!(fit(400, 20, 30, true, render).0, Limits { items: Some(19), drop_second_language: true, rows: None });
        assert_eq!(fit(100, 20, 30, true, render).0, Limits { items: Some(0), drop_second_language: true, rows: Some(9) });
        // Nothing fits: everything that can go is gone.
        assert_eq!(fit(5, 20, 30, true, render).0, Limits { items: Some(0), drop_second_language: true, rows: Some(0) });
        let (l, text) = fit(250, 20, 30, false, |l| render(Limits { drop_second_language: true, ..l }));
        assert_eq!(l, Limits { items: Some(4), ..Limits::default() });
        assert_eq!(chars(&text), 250);
    }

    #[test]
    fn characters_not_bytes() {
        assert_eq!(chars("参数"), 2);
    }
}
