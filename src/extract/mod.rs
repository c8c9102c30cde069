//! From engine source to [`EngineSurface`](crate::surface::EngineSurface).
//!
//! `extract` knows Python syntax (tree-sitter), not recipes and not git: it reads
//! files through [`Tree`](crate::source::Tree).

pub(crate) mod assemble;
pub(crate) mod clap_derive;
pub mod cli_flags;
pub(crate) mod click_options;
pub mod consts;
pub mod consumer;
pub(crate) mod outline;
pub(crate) mod package;
pub(crate) mod parsed;
pub mod python;

pub mod units;

pub use assemble::{extract_surface, extract_surface_with, Demand, EnvReads};
pub use package::Package;
pub(crate) mod env_vars;
pub(crate) mod pins;
pub(crate) mod pydantic_classes;
pub(crate) mod pydantic_models;
pub(crate) mod pydantic_unions;
pub(crate) mod pydantic_validators;
pub mod symbols;
#[cfg(test)]
mod trtllm_tests;
pub mod worker_flags;
