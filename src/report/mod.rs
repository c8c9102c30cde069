//! Findings and their renderings. `report` knows findings, not tree-sitter or git.

pub mod finding;
pub mod json;
pub mod text;

pub use finding::{Edit, EvidenceRef, Finding, Fix, Location};
