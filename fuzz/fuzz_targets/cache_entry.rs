//! Tree listings as the fact cache stores them: a corrupt or foreign entry must
//! decode to nothing (the tree is walked again), never panic or allocate wildly,
//! and whatever does decode is exactly what encoding it gives back.
#![no_main]
use engine_audit::source::Listing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(listing) = Listing::decode(data) {
        assert_eq!(listing.encode(), data, "the encoding is canonical");
        assert!(listing.entries.windows(2).all(|w| w[0].path < w[1].path));
    }
});
