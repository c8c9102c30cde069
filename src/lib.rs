//! engine-audit: what in a deployment recipe breaks, silently changes or crashes
//! when the SGLang / Dynamo engine underneath is bumped.
//!
//! Data flows one way: `source` (git trees) → `extract` (tree-sitter facts) →
//! `surface` (the model of one release) → `check` (findings) → `report`.
//! `recipe` reads the deployments; `audit` wires one run together.

pub mod audit;
pub mod cache;
pub mod check;
pub mod cli;
pub mod cmd;
pub mod codes;
pub mod config;
pub mod demo;
pub mod embedded;
pub mod excerpt;
pub mod extract;
pub mod fix;
pub mod recipe;
pub mod report;
pub mod rules;
pub mod source;
pub mod surface;
pub mod surface_diff;
pub mod suppress;
pub mod trace;

// Linked for its exported zlib symbols (see Cargo.toml), not called from Rust.
use libz_rs_sys as _;
