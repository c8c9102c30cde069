//! Files compiled into the binary by `build.rs`: the demo fixtures, the shipped
//! rules and the finding codes' doc pages.
include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
