//! srt-slurm recipes and master configs: any text loads or gives a typed error,
//! and every span it returns indexes the text.
#![no_main]
use engine_audit::recipe::{load_text, LinkMapping};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
#[path = "nesting.rs"]
mod nesting;

fuzz_target!(|data: &[u8]| {
    let data = nesting::expand(data);
    let Ok(text) = std::str::from_utf8(&data) else { return };
    if let Ok(file) = load_text("fuzz.yaml", text.to_string(), &LinkMapping::default()) {
        common::check_spans(&file);
    }
});
