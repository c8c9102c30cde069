//! engine-audit: what in a deployment recipe breaks, silently changes or crashes
//! when the SGLang / Dynamo engine underneath is bumped.
//!
//! Data flows one way: `source` (git trees) → `extract` (tree-sitter facts) →
//! `surface` (the model of one release) → `check` (findings) → `report`.

pub mod cli;
pub mod extract;
pub mod recipe;
pub mod source;
pub mod surface;
