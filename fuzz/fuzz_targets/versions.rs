//! Image references, Dynamo refs and version refs: total functions on any text.
#![no_main]
use engine_audit::recipe::{parse_image, DynamoRef};
use engine_audit::source::parse_version_ref;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let image = parse_image(text);
    // A parsed version is normalised PEP 440: it must parse again to itself.
    if let Some(v) = &image.version {
        let again: pep440_rs::Version = v.parse().expect("normalised version reparses");
        assert_eq!(&again.to_string(), v);
    }
    for field in ["hash", "version", "wheel", "other"] {
        let _ = DynamoRef::from_field(field, text);
    }
    let _ = DynamoRef::from_router_version(text);
    let _ = parse_version_ref(text);
});
