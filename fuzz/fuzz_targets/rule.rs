//! Rule files: any text is a rule or a typed error (never a panic, e.g. inside
//! tree-sitter query compilation or PEP 440 parsing).
#![no_main]
use engine_audit::rules::{parse_rule, RuleOrigin};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse_rule(text, RuleOrigin::File("fuzz.yaml".into()));
});
