//! Loading errors, and every shipped rule's self-test cases under `cargo test`.
