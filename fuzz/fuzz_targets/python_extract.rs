//! The Python extractors on one arbitrary file (bytes, mostly not Python: the
//! parser's error recovery and the extractors' partial facts). Valid Python in
//! the shapes the extractors fold is python_shapes' job.
#![no_main]
mod extractors;
#[path = "nesting.rs"]
mod nesting;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| extractors::run_extractors(&nesting::expand(data)));
