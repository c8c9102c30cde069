//! Launch scripts: any text loads, but for a NUL byte ("not text") and a
//! script the parser cannot read at all (nested too deep throughout, too slow);
//! the argv of every role binds, and every span indexes the text.
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
    let loaded = load_text("fuzz.sh", text.to_string(), &LinkMapping::default());
    if text.contains('\0') {
        assert!(loaded.is_err(), "a NUL byte is refused, not read past");
        return;
    }
    // A script fails as a whole only when nothing of it can be parsed.
    let file = match loaded {
        Ok(file) => file,
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("the script is not read"), "{message}");
            return;
        }
    };
    for d in &file.deployments {
        for role in &d.roles {
            // Both arities: every token a switch, and no token a switch.
            let _ = role.flag_uses(|_| true);
            let _ = role.flag_uses(|_| false);
        }
    }
    common::check_spans(&file);
});
