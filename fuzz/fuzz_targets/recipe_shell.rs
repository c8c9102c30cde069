//! Launch scripts: any text loads (scripts never fail as a whole), the argv of
//! every role binds, and every span indexes the text.
#![no_main]
use engine_audit::recipe::{load_text, LinkMapping};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = load_text("fuzz.sh", text.to_string(), &LinkMapping::default())
        .expect("a launch script always loads");
    for d in &file.deployments {
        for role in &d.roles {
            // Both arities: every token a switch, and no token a switch.
            let _ = role.flag_uses(|_| true);
            let _ = role.flag_uses(|_| false);
        }
    }
    common::check_spans(&file);
});
