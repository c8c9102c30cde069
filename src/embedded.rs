//! Files compiled into the binary by `build.rs`: the demo fixtures and the shipped rules.
include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
