//! One module per subcommand: read inputs, call the pipeline, print.

pub mod audit;
pub mod cache;
pub mod demo;
pub mod diff;
pub mod engines;
pub mod explain;
pub mod output;
pub mod pr;
pub mod rules;
pub mod surface;
