//! Shell launch scripts: the command lines that start an engine's server (its
//! profile's launchers: `python3 -m sglang.launch_server ...`, `sglang serve ...`),
//! read with tree-sitter-bash and evaluated by [`super::shell`] (never run).
//!
//! Each command that starts a server is one [`Deployment`] (`launch_server@80`);
//! each distinct command line that reaches it on some path through the script is
//! one of its roles. A word or env var passed on some paths only carries the
//! condition it depends on ("DP_ATTENTION=true"), so a finding can say it. A launch
//! whose arguments cannot be read at all has no `argv` and says why in `dynamic`.
//!
//! Whether `--x y` gives `y` to `--x` depends on the engine's flag arity, which this
//! module does not know: the raw tokens are kept and [`bind`] pairs them once the
//! caller can say which flags are switches.

use super::argv::ArgToken;
use super::config_file::{self, LaunchConfig};
use super::format::{self, EditIntent, Loaded, RecipeFormat, Syntax};
use super::links::LinkMapping;
use super::shell::cond::{self, Path};
use super::shell::eval::{Interp, LookedAt, Run, Site, MAX_STEPS};
use super::shell::launch;
use super::yaml::Node as YamlNode;
use super::{Deployment, EnvUse, Note, RecipeError, RecipeFile, RecipeKind, RoleConfig};
use crate::bounded_parse::{parse_bounded, parse_deadline, Bounded, Skipped, StatementSyntax, WhyNot, MAX_SYNTAX_DEPTH};
use crate::text::span::{SourceText, Span};
use crate::text::Edit;
use std::collections::HashMap;
use tree_sitter::{Node, Parser};

// ---- the format ----------------------------------------------------------------

/// Shell launch scripts as a [`RecipeFormat`].
pub(crate) struct LaunchScript;

impl RecipeFormat for LaunchScript {
    fn kind(&self) -> RecipeKind {
        RecipeKind::LaunchScript
    }
    fn syntax(&self) -> Syntax {
        Syntax::Shell
    }
    /// A `.sh`/`.bash` file, or one whose `#!` line names a shell.
    fn detect(&self, path: &str, text: &str, _: Option<&YamlNode>) -> bool {
        let ext = std::path::Path::new(path).extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "sh" | "bash") {
            return true;
        }
        let first = text.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
        first.starts_with("#!") && (first.contains("sh") && !first.contains("python"))
    }
    fn read(&self, src: &SourceText, _: Option<&YamlNode>, _: &LinkMapping) -> Result<Loaded, RecipeError> {
        let (deployments, notes) = read(src)?;
        Ok(Loaded { deployments, notes, ..Loaded::default() })
    }
    /// A switch becomes `--new=value` in place; a word of a command line is not
    /// deleted (what follows it may be its value, or the next command).
    fn edit(&self, file: &RecipeFile, intent: EditIntent) -> Vec<Edit> {
        match intent {
            EditIntent::RenameSwitch { flag, .. } | EditIntent::SplitSwitch { flag, .. } if flag.key_span.path != file.path => Vec::new(),
            EditIntent::RenameSwitch { flag, new_name, value } => {
                format::replace_in_span(file, &flag.key_span, &flag.name, &format!("{new_name}={value}")).into_iter().collect()
            }
            // `--old` becomes `--a=v --b=v`, in place.
            EditIntent::SplitSwitch { flag, into } => {
                let words: Vec<String> = into.iter().map(|(name, value)| format!("{name}={value}")).collect();
                format::replace_in_span(file, &flag.key_span, &flag.name, &words.join(" --")).into_iter().collect()
            }
            EditIntent::Delete { .. } => Vec::new(),
            // A word read from another file (a sourced one) is not this file's to edit.
            EditIntent::Rename { span, .. } | EditIntent::SetValue { span, .. } if span.path != file.path => Vec::new(),
            other => format::edit_in_place(file, other),
        }
    }
}

// ---- reading a script ----------------------------------------------------------

/// A script that cannot be parsed at all (nested too deep throughout, or
/// too slow for the parser) is an error: none of its launches could be read.
pub(crate) fn read(src: &SourceText) -> Result<(Vec<Deployment>, Vec<Note>), RecipeError> {
    let cache = crate::cache::FactCache::default_cache();
    let key = cache.is_enabled().then(|| super::script_cache::key(src));
    if let Some(hit) = key.as_deref().and_then(|k| super::script_cache::lookup(&cache, k)) {
        return Ok(hit);
    }
    let (deployments, notes, looked_at) = read_uncached(src)?;
    if let (Some(key), Some(looked_at)) = (&key, looked_at) {
        super::script_cache::store(&cache, key, looked_at, &deployments, &notes);
    }
    Ok((deployments, notes))
}

/// A script's reading: its deployments and notes, and the file system facts
/// it read (`None`: the reading is not to be kept).
type Reading = (Vec<Deployment>, Vec<Note>, Option<Vec<LookedAt>>);

/// [`read`] without the cache.
fn read_uncached(src: &SourceText) -> Result<Reading, RecipeError> {
    // What bash does with a NUL depends on where it is (a binary file is
    // refused, elsewhere it is dropped); tree-sitter reads past it. Neither
    // can be trusted to see what the other does: refused, named, as in YAML.
    if let Some(offset) = src.text.find('\0') {
        return Err(RecipeError::NotText { path: src.path.clone(), offset });
    }
    let bounded = PARSER.with(|p| parse_bounded(src.text.clone(), &BASH_STATEMENTS, &mut p.borrow_mut()));
    if let Skipped::WholeFile(why) = bounded.skipped {
        let message = match why {
            WhyNot::TooDeep => format!("nested more than {MAX_SYNTAX_DEPTH} levels deep throughout; the script is not read"),
            WhyNot::TooSlow => format!(
                "the shell parser gave up after {:.1} s (a pathological line); the script is not read",
                parse_deadline().as_secs_f64()
            ),
        };
        return Err(RecipeError::shape(src, &src.span(0, src.line_end(0)), message));
    }
    let mut notes = depth_notes(&bounded);
    // Offsets and lines are unchanged by blanking: spans into the blanked text
    // are spans into the file.
    let blanked;
    let bounded_skipped = bounded.skipped_anything();
    let read_src = if bounded_skipped {
        blanked = SourceText::new(src.path.clone(), bounded.text);
        &blanked
    } else {
        src
    };
    let tree = bounded.tree;
    if tree.root_node().has_error() {
        let line = first_error(tree.root_node()).map(|n| n.start_position().row + 1).unwrap_or(1);
        notes.push(Note::warning(format!("shell syntax error near line {line}: commands around it may be missed"), None));
    }
    let mention = first_mention(read_src, tree.root_node(), 0);
    // `source` reads files next to the script, when it is one on disk.
    let script = std::path::PathBuf::from(&src.path);
    let on_disk = script.is_file();
    let disk = on_disk.then(|| script.clone());
    let root_tree = tree.clone();
    let _span = crate::trace::file_span(|| format!("  evaluate {}", read_src.path));
    let evaluation = PARSER.with(|p| Interp::run(read_src, tree, disk, &mut p.borrow_mut()));
    notes.extend(evaluation.notes);
    // A reading that skipped parts of the file (too deep, or the parser's
    // deadline) is not kept: the deadline depends on the machine's load.
    let looked_at = (!bounded_skipped).then(|| {
        let mut facts = vec![LookedAt::IsFile { path: script, found: on_disk }];
        facts.extend(evaluation.looked_at);
        facts
    });
    // Launches after the point evaluation stopped at are not read: each file
    // that has one says so in the report.
    let stopped = evaluation.stopped_at.and_then(|at| first_mention(read_src, root_tree.root_node(), at).map(|m| (at, m)));
    let mut deployments: Vec<Deployment> = evaluation.sites.into_iter().map(|site| deployment(src, site)).collect();
    // A script that names a launcher but in no command the evaluator reached,
    // or past the point it stopped at.
    let unread = match (stopped, mention) {
        (Some((at, (engine, launcher, span))), _) => Some((
            engine,
            launcher,
            format!(
                "evaluation stopped at line {} (more than {MAX_STEPS} statements); `{}` at line {} is not read",
                src.span(at, at).line,
                launcher.text(),
                span.line
            ),
            span,
        )),
        (None, Some((engine, launcher, span))) if deployments.is_empty() => Some((
            engine,
            launcher,
            format!(
                "line {} names `{}` but no command that starts it was found on any path (in a function never called, or a string never run?)",
                span.line,
                launcher.text()
            ),
            span,
        )),
        _ => None,
    };
    if let Some((engine, launcher, why, span)) = unread {
        let role = RoleConfig {
            role: launcher.role.into(),
            span: Some(span.clone()),
            flags: Vec::new(),
            env: Vec::new(),
            argv: None,
            dynamic: Some(why),
            config: Vec::new(),
            config_unread: None,
        };
        deployments.push(Deployment::launched(engine.id, format!("{}@{}", launcher.role, span.line), vec![role], Vec::new()));
    }
    Ok((deployments, notes, looked_at))
}

/// One deployment per launch site; one role per distinct command line reaching
/// it. Words and env vars seen on some paths only carry their condition.
fn deployment(src: &SourceText, site: Site) -> Deployment {
    let mut runs: Vec<Run> = Vec::new();
    for run in site.runs {
        match runs.iter_mut().find(|r| {
            r.argv == run.argv && r.env == run.env && r.exports == run.exports && r.dynamic == run.dynamic && r.files == run.files
        }) {
            // The same command line on two paths: on either of them.
            Some(r) => r.path = r.path.intersection(&run.path).cloned().collect(),
            None => runs.push(run),
        }
    }
    let paths: Vec<Path> = runs.iter().map(|r| r.path.clone()).collect();
    // Which runs pass each word and each env var (by where it is written and its
    // value), and the condition of each set of runs, computed once.
    type Key = (String, usize, usize, String);
    let token_key = |t: &ArgToken| (t.span.path.clone(), t.span.offset, t.span.len, format!("{:?}", t.value));
    let env_key = |e: &EnvUse| (e.name_span.path.clone(), e.name_span.offset, e.name.len(), format!("{}={:?}", e.name, e.value));
    let mut token_runs: HashMap<Key, Vec<usize>> = HashMap::new();
    let mut env_runs: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, run) in runs.iter().enumerate() {
        for t in run.argv.iter().flatten() {
            let seen = token_runs.entry(token_key(t)).or_default();
            if seen.last() != Some(&i) {
                seen.push(i);
            }
        }
        for e in run.env.iter().chain(&run.exports) {
            let seen = env_runs.entry(env_key(e)).or_default();
            if seen.last() != Some(&i) {
                seen.push(i);
            }
        }
    }
    let mut conditions: HashMap<Vec<usize>, Option<String>> = HashMap::new();
    let mut condition = |present: &[usize]| -> Option<String> {
        conditions
            .entry(present.to_vec())
            .or_insert_with(|| {
                let yes: Vec<&Path> = present.iter().map(|i| &paths[*i]).collect();
                let no: Vec<&Path> = (0..runs.len()).filter(|i| !present.contains(i)).map(|i| &paths[i]).collect();
                cond::describe(&yes, &no)
            })
            .clone()
    };
    let everywhere = |present: &[usize]| present.len() == runs.len();
    let common_env: Vec<EnvUse> =
        runs.first().map(|r| r.exports.iter().filter(|e| everywhere(&env_runs[&env_key(e)])).cloned().collect()).unwrap_or_default();
    let config_profile = site.engine.server.as_ref().and_then(|s| s.config_file.as_ref());
    let mut roles = Vec::new();
    for run in &runs {
        let (config, config_unread) = match (config_profile, &run.argv) {
            (Some(profile), Some(argv)) => match config_file::of_launch(profile, argv, &run.files) {
                LaunchConfig::None => (Vec::new(), None),
                LaunchConfig::Read(keys) => (keys, None),
                LaunchConfig::Unread(unread) => (Vec::new(), Some(unread)),
            },
            _ => (Vec::new(), None),
        };
        let argv = run
            .argv
            .as_ref()
            .map(|argv| argv.iter().map(|t| ArgToken { condition: condition(&token_runs[&token_key(t)]), ..t.clone() }).collect());
        let env = run
            .env
            .iter()
            .chain(run.exports.iter().filter(|e| !everywhere(&env_runs[&env_key(e)])))
            // An export only some merged paths have keeps saying so.
            .map(|e| EnvUse { condition: e.condition.clone().or_else(|| condition(&env_runs[&env_key(e)])), ..e.clone() })
            .collect();
        roles.push(RoleConfig {
            role: site.launcher.role.into(),
            span: Some(site.span.clone()),
            flags: Vec::new(),
            env,
            argv,
            dynamic: run.dynamic.clone(),
            config,
            config_unread,
        });
    }
    let name = if site.span.path == src.path {
        format!("{}@{}", site.launcher.role, site.span.line)
    } else {
        format!("{}@{}:{}", site.launcher.role, site.span.path.rsplit('/').next().unwrap_or(&site.span.path), site.span.line)
    };
    Deployment::launched(site.engine.id, name, roles, common_env)
}

/// The first place at or after byte `from`, outside comments and
/// here-documents, that names a launcher.
fn first_mention(src: &SourceText, root: Node, from: usize) -> Option<(crate::profiles::Engine, &'static crate::profiles::Launcher, Span)> {
    let mut stack = vec![root];
    let mut found: Option<(usize, crate::profiles::Engine, &'static crate::profiles::Launcher, Node)> = None;
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "comment" | "heredoc_body" | "heredoc_content") || n.end_byte() <= from {
            continue;
        }
        if n.child_count() == 0 || matches!(n.kind(), "word" | "string_content" | "raw_string") {
            if n.start_byte() < from {
                continue;
            }
            if let Some((engine, launcher)) = launch::mentions_launcher(&src.text[n.byte_range()]) {
                if found.as_ref().is_none_or(|(at, ..)| n.start_byte() < *at) {
                    found = Some((n.start_byte(), engine, launcher, n));
                }
            }
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    found.map(|(_, engine, launcher, n)| (engine, launcher, src.span(n.start_byte(), n.end_byte())))
}

/// bash's commands and compound statements, and the no-op that stands in for
/// one nested too deep.
const BASH_STATEMENTS: StatementSyntax = StatementSyntax {
    is_statement: |kind| {
        matches!(
            kind,
            "command"
                | "pipeline"
                | "list"
                | "redirected_statement"
                | "variable_assignment"
                | "declaration_command"
                | "negated_command"
                | "test_command"
                | "subshell"
                | "compound_statement"
                | "function_definition"
                | "unset_command"
        ) || kind.ends_with("_statement")
    },
    no_op: ":",
};

/// What blanking statements nested too deep left unread.
fn depth_notes(bounded: &Bounded) -> Vec<Note> {
    let Skipped::Statements(lines) = &bounded.skipped else { return Vec::new() };
    lines
        .iter()
        .map(|line| {
            Note::warning(
                format!("line {line}: a command nested more than {MAX_SYNTAX_DEPTH} levels deep; not read (flags in it are not audited)"),
                None,
            )
        })
        .collect()
}

thread_local! {
    static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new({
        let mut p = Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into())
            .expect("tree-sitter-bash grammar matches the tree-sitter version");
        p
    });
}

fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    children.into_iter().filter(|c| c.has_error()).find_map(first_error)
}
