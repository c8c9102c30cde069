//! `engine-audit completions SHELL` and `engine-audit man`: generated from the
//! clap definition itself, so they never fall behind the flags.

use super::output::emit;
use crate::cli::{Cli, CompletionsArgs, ManArgs};
use clap::CommandFactory;
use std::process::ExitCode;

pub(crate) fn completions(args: CompletionsArgs) -> miette::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "engine-audit", &mut script);
    emit(&String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn man(args: ManArgs) -> miette::Result<ExitCode> {
    let command = Cli::command();
    let Some(dir) = args.dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page).map_err(|e| miette::miette!("cannot render the man page: {e}"))?;
        emit(&String::from_utf8_lossy(&page));
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        miette::miette!(help = "pass --dir a folder that can be created and written", "cannot create {}: {e}", dir.display())
    })?;
    // generate_to writes engine-audit.1 and engine-audit-<sub>.1 for every subcommand.
    clap_mangen::generate_to(command, &dir)
        .map_err(|e| miette::miette!(help = "pass --dir a writable folder", "cannot write the man pages to {}: {e}", dir.display()))?;
    Ok(ExitCode::SUCCESS)
}
