//! Which commands start an engine's server: one of the profiles' launchers
//! (`python3 -m sglang.launch_server`, `sglang serve`), possibly behind wrappers
//! (`exec`, `nohup`, `srun ...`, `numactl ...`, `timeout 3600`, `env A=1`) or a
//! program held in a variable (`"$SGLANG_PYTHON" -m sglang.launch_server`).

use super::super::argv::ArgToken;
use crate::profiles::{Engine, LaunchForm, Launcher};

/// Programs that run the command after their own options.
const WRAPPERS: &[&str] = &[
    "exec", "nohup", "srun", "numactl", "timeout", "env", "setsid", "stdbuf", "taskset", "nice", "time", "command", "ionice", "chrt",
    "sudo", "uv", "conda", "mpirun",
];

/// A launch found in a command's words.
pub(crate) struct Found {
    pub engine: Engine,
    pub launcher: &'static Launcher,
    /// Index of the first server argument.
    pub args: usize,
    /// Words before the launcher that `env` hands to it as `NAME=value`.
    pub env_words: Vec<usize>,
}

/// A program that runs the command after its own options (`srun`, `nohup`).
pub(crate) fn is_wrapper(program: &str) -> bool {
    WRAPPERS.contains(&base(program))
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

pub(crate) fn is_python(word: &str) -> bool {
    let program = base(word);
    program == "python"
        || program
            .strip_prefix("python3")
            .is_some_and(|rest| rest.is_empty() || (rest.starts_with('.') && rest[1..].chars().all(|c| c.is_ascii_digit())))
}

/// The launch a command's words make, if any: the command must start with a
/// launcher, a wrapper, or a program whose name is not known (`"$PY"`).
pub(crate) fn find(words: &[ArgToken]) -> Option<Found> {
    let word = |i: usize| words.get(i).and_then(|t| t.value.value()).map(String::as_str);
    let first = words.first()?;
    let starts_plausibly = match first.value.value() {
        Some(w) => WRAPPERS.contains(&base(w)) || is_python(w) || launcher_program(w),
        None => true,
    };
    if !starts_plausibly {
        return None;
    }
    let mut env_words = Vec::new();
    for i in 0..words.len() {
        // A program held in an unknown variable, run with `-m <module>`, is a Python.
        let python = match words[i].value.value() {
            Some(w) => is_python(w),
            None => true,
        };
        for (engine, server) in crate::profiles::script_servers() {
            for launcher in server.launchers {
                let args = match (&launcher.form, launcher.program()) {
                    (LaunchForm::PythonModule(module), _) if python => python_module_args(words, i, module),
                    (LaunchForm::DefaultCommand { program, subcommand, others, .. }, _) if word(i).map(base) == Some(program) => {
                        match word(i + 1) {
                            Some(w) if w == *subcommand => Some(i + 2),
                            Some(w) if others.contains(&w) => None,
                            _ => Some(i + 1),
                        }
                    }
                    (_, Some((program, subcommand))) if word(i).map(base) == Some(program) && word(i + 1) == Some(subcommand) => {
                        Some(i + 2)
                    }
                    _ => None,
                };
                if let Some(args) = args {
                    let args = args + usize::from(launcher.leading_positional().is_some() && takes_positional(words.get(args)));
                    return Some(Found { engine, launcher, args, env_words });
                }
            }
        }
        if assignment_word(&words[i]).is_some() {
            env_words.push(i);
        }
    }
    None
}

/// A command that starts an engine whose command lines are not read (one
/// not audited yet, or another command of a launcher's group:
/// `trtllm-serve disaggregated ...`), by its program's name, directly or
/// behind wrappers (`mpirun -n 1 trtllm-serve ...`): the engine, the
/// launcher, and why it is not read.
pub(crate) fn find_unread(words: &[ArgToken]) -> Option<(Engine, &'static Launcher, String)> {
    let first = words.first()?.value.value()?;
    let at = |i: usize| words.get(i).and_then(|t| t.value.value()).map(String::as_str);
    let unread = || crate::profiles::unread_servers().flat_map(|(e, s)| s.launchers.iter().map(move |l| (e, l)));
    let read = || crate::profiles::script_servers().flat_map(|(e, s)| s.launchers.iter().map(move |l| (e, l)));
    let found_at = |i: usize| {
        let w = at(i)?;
        if let Some((engine, launcher)) = unread().find(|(_, l)| l.program().is_some_and(|(p, _)| p == base(w))) {
            return Some((engine, launcher, format!("{}'s command lines are not read yet", engine.display)));
        }
        read().find_map(|(engine, launcher)| {
            let (program, _) = launcher.program()?;
            let command = at(i + 1).filter(|c| launcher.other_commands().is_some_and(|o| o.contains(c)))?;
            (program == base(w)).then(|| (engine, launcher, format!("`{program} {command}` is not read (only `{}` is)", launcher.text())))
        })
    };
    if let Some(found) = found_at(0) {
        return Some(found);
    }
    if !WRAPPERS.contains(&base(first)) {
        return None;
    }
    (1..words.len()).find_map(found_at)
}

fn launcher_program(word: &str) -> bool {
    crate::profiles::script_servers()
        .flat_map(|(_, s)| s.launchers.iter())
        .any(|l| l.program().is_some_and(|(program, _)| program == base(word)))
}

/// Whether the word after a launcher that takes a positional (`vllm serve
/// [model_tag]`) is that positional: argparse gives the first word that is not
/// an option to it. A word whose text is not known (`"$MODEL"`) is taken as
/// the positional only when it is one expansion, quoted or not: its text is
/// what argparse sees first, and a model path is what scripts put there.
fn takes_positional(token: Option<&ArgToken>) -> bool {
    let Some(token) = token else { return false };
    match token.value.value() {
        Some(w) => !w.starts_with('-'),
        None => is_one_expansion(&token.raw),
    }
}

/// `$X`, `${X}`, `"$X"`, `"${X}"`.
fn is_one_expansion(raw: &str) -> bool {
    let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')).unwrap_or(raw);
    let Some(name) = inner.strip_prefix('$') else { return false };
    let name = name.strip_prefix('{').and_then(|n| n.strip_suffix('}')).unwrap_or(name);
    is_env_name(name)
}

/// `python [-u|-O|-B|-X opt ...] -m <module>`: where the module's arguments start.
fn python_module_args(words: &[ArgToken], at: usize, module: &str) -> Option<usize> {
    let word = |i: usize| words.get(i).and_then(|t| t.value.value()).map(String::as_str);
    let mut i = at + 1;
    while let Some(w) = word(i) {
        match w {
            "-m" => return (word(i + 1) == Some(module)).then_some(i + 2),
            "-X" | "-W" => i += 2,
            _ if w.starts_with('-') && w.len() > 1 && !w.starts_with("--") => i += 1,
            _ => return None,
        }
    }
    None
}

/// A word before the launcher that is `NAME=value` (`env` hands it to the
/// program; in a string run by `bash -c` it is an assignment before the
/// command): its name, and its value, known or not. The name must be literal
/// text (`SGLANG_X=${N}` gives `SGLANG_X` a value known at run time only).
pub(crate) fn assignment_word(token: &ArgToken) -> Option<(&str, crate::surface::Known<String>)> {
    use crate::surface::Known;
    let (text, known) = match &token.value {
        Known::Value(w) => (w, true),
        Known::Dynamic { dynamic } => (dynamic, false),
    };
    let (name, value) = text.split_once('=')?;
    if !is_env_name(name) {
        return None;
    }
    Some((name, if known { Known::Value(value.to_string()) } else { Known::dynamic(value.to_string()) }))
}

pub(crate) fn is_env_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// Whether a text names one of the engines' launchers (`sglang.launch_server`).
pub(crate) fn mentions_launcher(text: &str) -> Option<(Engine, &'static Launcher)> {
    crate::profiles::script_servers().flat_map(|(engine, server)| server.launchers.iter().map(move |l| (engine, l))).find(|(_, l)| match l
        .form
    {
        LaunchForm::PythonModule(module) => text.contains(module),
        LaunchForm::Program { .. } | LaunchForm::ProgramWithPositional { .. } | LaunchForm::DefaultCommand { .. } => {
            text.contains(&l.text())
        }
    })
}
