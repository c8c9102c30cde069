//! Whether to colour: one decision for the report and for error messages, from
//! `--color` and the environment, so a CI log is either coloured throughout or
//! plain throughout.
//!
//! `--color always|never` wins. With `auto`: `NO_COLOR` set and not empty turns
//! colour off (<https://no-color.org>); else `FORCE_COLOR` or `CLICOLOR_FORCE`
//! set to anything but empty or `0` turns it on (CI runners are no terminal
//! but show colour: GitHub Actions honours ANSI); else colour when the stream
//! written to is a terminal.

use std::io::IsTerminal;

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// What the environment says, when it says anything.
fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<bool> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    if set("NO_COLOR").is_some() {
        return Some(false);
    }
    if ["FORCE_COLOR", "CLICOLOR_FORCE"].iter().any(|n| set(n).is_some_and(|v| v != "0")) {
        return Some(true);
    }
    None
}

/// The decision for a stream that is (`tty`) or is not a terminal.
fn decide(choice: ColorChoice, var: impl Fn(&str) -> Option<String>, tty: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => from_env(var).unwrap_or(tty),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

impl ColorChoice {
    /// Colour for what goes to stdout (the report).
    pub fn stdout(self) -> bool {
        decide(self, env, std::io::stdout().is_terminal())
    }
    /// Colour for what goes to stderr (errors, diagnostics of unreadable files).
    pub fn stderr(self) -> bool {
        decide(self, env, std::io::stderr().is_terminal())
    }

    /// Make miette's error reports follow the same decision.
    pub fn install_error_hook(self) {
        let color = self.stderr();
        // A second install (tests calling `main` twice) keeps the first: same decision.
        // URLs and paths in errors are never cut (report::unbroken).
        let _ = miette::set_hook(Box::new(move |_| {
            Box::new(crate::report::unbroken::hook(miette::MietteHandlerOpts::new().color(color)).build())
        }));
    }
}

/// The run's choice (`--color`), made once in `main`.
static CHOSEN: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Record `--color` for the run and make error reports follow it.
pub fn choose(choice: ColorChoice) {
    let _ = CHOSEN.set(choice);
    choice.install_error_hook();
}

/// The run's choice (`auto` when `main` did not set one: tests, the library).
pub fn chosen() -> ColorChoice {
    CHOSEN.get().copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn flags_win_then_no_color_then_force_then_the_terminal() {
        assert!(decide(ColorChoice::Always, vars(&[("NO_COLOR", "1")]), false));
        assert!(!decide(ColorChoice::Never, vars(&[("FORCE_COLOR", "1")]), true));
        assert!(!decide(ColorChoice::Auto, vars(&[("NO_COLOR", "1"), ("FORCE_COLOR", "1")]), true));
        assert!(decide(ColorChoice::Auto, vars(&[("FORCE_COLOR", "1")]), false));
        assert!(decide(ColorChoice::Auto, vars(&[("CLICOLOR_FORCE", "1")]), false));
        assert!(decide(ColorChoice::Auto, vars(&[]), true));
        assert!(!decide(ColorChoice::Auto, vars(&[]), false));
    }

    #[test]
    fn empty_and_zero_say_nothing() {
        // An empty NO_COLOR is unset (no-color.org); FORCE_COLOR=0 forces nothing.
        assert!(decide(ColorChoice::Auto, vars(&[("NO_COLOR", "")]), true));
        assert!(!decide(ColorChoice::Auto, vars(&[("FORCE_COLOR", "0")]), false));
        assert!(!decide(ColorChoice::Auto, vars(&[("CLICOLOR_FORCE", "")]), false));
    }
}
