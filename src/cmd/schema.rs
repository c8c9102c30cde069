//! `engine-audit schema config|rule`: the JSON Schema of a file engine-audit reads.

use super::output::emit;
use crate::cli::SchemaArgs;
use std::process::ExitCode;

pub(crate) fn run(args: SchemaArgs) -> miette::Result<ExitCode> {
    emit(&args.name.render());
    Ok(ExitCode::SUCCESS)
}
