//! "Did you mean": how close two spellings are, bounded. A recipe can hold
//! thousands of unknown flags and a command line a 100 kB ref; comparing each
//! against every known name with a Myers diff cost seconds to minutes (3.5 ms
//! per unknown flag). rapidfuzz's bit-parallel Indel similarity computes the
//! same ratio in a few words of work per character, with the threshold as a
//! cutoff; nothing longer than [`MAX_COMPARED`] characters is compared.

use rapidfuzz::distance::indel;

/// Longer words get no suggestion: no flag, env var or tag is this long.
pub(crate) const MAX_COMPARED: usize = 128;

/// The share of characters two spellings have in common, in order (difflib's
/// ratio: 2 × the longest common subsequence / both lengths; 1.0 = equal),
/// when it can reach `min`; else `None` without computing it. A prefix left
/// out counts less than under an edit distance, so `--speculative-algo`
/// still finds `--speculative-algorithm`.
pub(crate) fn similarity(a: &str, b: &str, min: f64) -> Option<f64> {
    let (la, lb) = (a.chars().count(), b.chars().count());
    if la > MAX_COMPARED || lb > MAX_COMPARED {
        return None;
    }
    if la + lb == 0 {
        return Some(1.0);
    }
    indel::normalized_similarity_with_args(a.chars(), b.chars(), &indel::Args::default().score_cutoff(min))
}

/// The `limit` candidates closest to `word` with a similarity of at least
/// `min`, best first (ties by name).
pub(crate) fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>, min: f64, limit: usize) -> Vec<&'a str> {
    if word.chars().count() > MAX_COMPARED {
        return Vec::new();
    }
    let scorer = indel::BatchComparator::new(word.chars());
    let args = indel::Args::default().score_cutoff(min);
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter(|c| c.len() <= MAX_COMPARED * 4)
        .filter_map(|c| Some((scorer.normalized_similarity_with_args(c.chars(), &args)?, c)))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(limit).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_found_and_far_ones_skipped() {
        let names = ["--enable-metrics", "--enable-mixed-chunk", "--tp-size", "--enable-metrics"];
        assert_eq!(closest("--enable-metric", names, 0.8, 3), ["--enable-metrics"]);
        assert!(closest("--x", names, 0.8, 3).is_empty());
        assert_eq!(closest("--speculative-algo", ["--speculative-algorithm", "--tp-size"], 0.8, 3), ["--speculative-algorithm"]);
        assert_eq!(
            similarity("--speculative-algo", "--speculative-algorithm", 0.0),
            Some(36.0 / 41.0),
            "difflib's ratio: 2 × 18 common / 41"
        );
        assert_eq!(similarity("abc", "abcdefghij", 0.8), None, "ruled out by length alone");
        let huge = "1".repeat(100_000);
        assert_eq!(similarity(&huge, &huge, 0.5), None, "never compared");
    }
}
