//! engine-audit: what in a deployment recipe breaks, silently changes or crashes
//! when the SGLang / Dynamo engine underneath is bumped.
//!
//! Data flows one way: `source` (git trees) → `extract` (tree-sitter facts) →
//! `surface` (the model of one release) → `check` (findings) → `report`.
//! `recipe` reads the deployments; `audit` wires one run together.
//!
//! The public modules are the facade the binary, the integration tests, the
//! fuzz targets and the benchmarks use; everything else is `pub(crate)`.

#![warn(unreachable_pub)]

pub mod audit;
mod baseline;
mod bounded_parse;
mod build_info;
pub mod cache;
mod check;
mod cli;
pub mod cmd;
pub mod codes;
pub mod color;
mod config;
pub mod demo;
mod embedded;
pub mod extract;
mod finding;
pub mod fix;
mod gate;
mod history;
mod matrix;
pub mod profiles;
pub mod recipe;
mod recipe_config_schema;
mod recipe_schema;
pub mod report;
pub mod rules;
mod schema;
pub mod source;
mod spelling;
mod suppress;
pub mod surface;
pub mod surface_diff;
pub mod text;
mod trace;

// Linked for its exported zlib symbols (see Cargo.toml), not called from Rust.
use libz_rs_sys as _;

#[cfg(test)]
mod zlib_tests {
    /// The C symbol libgit2 links against, resolved by the linker as libgit2's
    /// own references are: if the system zlib ever wins the link again, blob
    /// inflation silently slows down by a third of a cold audit.
    #[test]
    fn libgit2_inflates_through_zlib_rs() {
        extern "C" {
            fn zlibVersion() -> *const std::ffi::c_char;
        }
        // SAFETY: zlibVersion returns a static NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(zlibVersion()) }.to_string_lossy().into_owned();
        assert!(version.contains("zlib-rs"), "zlib in use: {version}");
    }
}
