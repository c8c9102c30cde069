//! Shell launch scripts: the command lines that start an engine's server (its
//! profile's launchers: `python3 -m sglang.launch_server ...`, `sglang serve ...`),
//! read with tree-sitter-bash.
//!
//! Words are evaluated the way the shell would, as far as that is knowable: quotes
//! are removed, `$VAR` / `${VAR:-default}` are substituted when `VAR` is assigned a
//! literal exactly once, at the top level of the script, before the use. Everything
//! else (environment input, loop variables, command substitutions, arrays) is
//! `Dynamic` and a note says so. A launch built with `eval` or inside a loop is
//! marked dynamic rather than guessed.
//!
//! Whether `--x y` gives `y` to `--x` depends on the engine's flag arity, which this
//! module does not know: the raw tokens are kept and [`bind`] pairs them once the
//! caller can say which flags are switches.

use super::format::{self, EditIntent, Loaded, RecipeFormat, Syntax};
use super::master_config::LinkMapping;
use super::span::{SourceText, Span};
use super::yaml::Node as YamlNode;
use super::yaml::ScalarType;
use super::{Deployment, EnvUse, FlagUse, FlagValue, Note, RecipeError, RecipeFile, RecipeKind, RoleConfig, Spanned};
use crate::bounded_parse::{parse_bounded, parse_deadline, Bounded, Skipped, StatementSyntax, WhyNot, MAX_SYNTAX_DEPTH};
use crate::finding::Edit;
use crate::profiles::{Engine, LaunchForm, Launcher};
use crate::surface::Known;
use serde::Serialize;
use std::collections::HashMap;
use tree_sitter::{Node, Parser, Tree};

/// One command-line word after the launcher.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgToken {
    /// The word after quote removal and substitution, or `Dynamic` with its source text.
    pub value: Known<String>,
    /// The text as written in the script (quotes included).
    pub raw: String,
    pub span: Span,
    pub quoted: bool,
}

/// Flags bound from a token sequence, and the tokens that are no flag.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub(crate) struct Binding {
    pub flags: Vec<FlagUse>,
    /// Tokens where a flag was expected: positionals, or dynamic words that may
    /// expand to flags nobody can see.
    pub unbound: Vec<ArgToken>,
}

/// Pair flags with their values as argparse would, given which flags take no value.
///
/// `--x=v` → `v`; a switch → `on`; any other `--x` takes the following non-flag
/// tokens (one → a scalar, several → a list; a single-value flag given a list is
/// then visibly wrong); `--x` with nothing after it → a bare switch, which the
/// checker reports when the flag needs a value.
pub(crate) fn bind(tokens: &[ArgToken], is_switch: impl Fn(&str) -> bool) -> Binding {
    let mut binding = Binding::default();
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        i += 1;
        // `--name="$X"`: the value is unknown but the flag name is written plainly.
        if let Some(name) = dynamic_flag_name(token) {
            let (_, value_span) = split_span_raw(token, name.len() + 2);
            let key_span = key_span(token, name);
            binding.flags.push(FlagUse { name: name.to_string(), value: dynamic(token), key_span, value_span, shadowed: Vec::new() });
            continue;
        }
        let Some(word) = token.value.value().filter(|w| is_flag(w)) else {
            binding.unbound.push(token.clone());
            continue;
        };
        let name_of = |w: &str| w.strip_prefix("--").unwrap_or(w).to_string();
        if let Some((name, value)) = word.split_once('=') {
            let (_, value_span) = split_span(token, name.len());
            let name = name_of(name);
            binding.flags.push(FlagUse {
                key_span: key_span(token, &name),
                name,
                value: scalar(value, token.quoted),
                value_span,
                shadowed: Vec::new(),
            });
            continue;
        }
        let name = name_of(word);
        let mut values = Vec::new();
        if !is_switch(&name) {
            while i < tokens.len() && !tokens[i].value.value().is_some_and(|w| is_flag(w)) && dynamic_flag_name(&tokens[i]).is_none() {
                // An unquoted unknown `$X` may expand to flags: it is taken as a value
                // only right after the flag (`--tp $TP`), not appended to a list.
                if tokens[i].value.is_dynamic() && !tokens[i].quoted && !values.is_empty() {
                    break;
                }
                values.push(&tokens[i]);
                i += 1;
            }
        }
        let value = match values.as_slice() {
            [] => FlagValue::Switch { on: true },
            [one] => match one.value.value() {
                Some(v) => scalar(v, one.quoted),
                None => dynamic(one),
            },
            many => match many.iter().find(|t| t.value.is_dynamic()) {
                Some(d) => dynamic(d),
                None => FlagValue::List {
                    items: many
                        .iter()
                        .map(|t| Spanned { value: t.value.value().cloned().unwrap_or_default(), span: t.span.clone() })
                        .collect(),
                },
            },
        };
        let value_span = match (values.first(), values.last()) {
            (Some(first), Some(last)) => Span { len: last.span.end() - first.span.offset, ..first.span.clone() },
            _ => token.span.clone(),
        };
        binding.flags.push(FlagUse { key_span: key_span(token, &name), name, value, value_span, shadowed: Vec::new() });
    }
    binding
}

/// The flag name of a dynamic `--name=...` token whose name part is literal text.
fn dynamic_flag_name(token: &ArgToken) -> Option<&str> {
    if !token.value.is_dynamic() {
        return None;
    }
    let (name, _) = token.raw.strip_prefix("--")?.split_once('=')?;
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then_some(name)
}

/// The span of a flag's name without its leading `--`, so a rename edits the same
/// text in scripts as in YAML keys. The whole word when it is not written plainly.
fn key_span(token: &ArgToken, name: &str) -> Span {
    if token.raw.starts_with("--") && token.raw[2..].starts_with(name) {
        Span { offset: token.span.offset + 2, len: name.len(), column: token.span.column + 2, ..token.span.clone() }
    } else {
        token.span.clone()
    }
}

/// Split a token's span after `key_len` bytes of its written text (`--name` then `=`).
fn split_span_raw(token: &ArgToken, key_len: usize) -> (Span, Span) {
    let key = Span { len: key_len, ..token.span.clone() };
    let value = Span {
        offset: token.span.offset + key_len + 1,
        len: token.span.len.saturating_sub(key_len + 1),
        column: token.span.column + token.raw[..=key_len].chars().count() as u32,
        ..token.span.clone()
    };
    (key, value)
}

/// `--x`, or a short option `-x`; a negative number is a value.
fn is_flag(word: &str) -> bool {
    word.starts_with('-') && word.len() > 1 && !word[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

fn scalar(text: &str, quoted: bool) -> FlagValue {
    FlagValue::Scalar { text: text.to_string(), quoted, ty: ScalarType::Str }
}

fn dynamic(token: &ArgToken) -> FlagValue {
    FlagValue::Dynamic { text: token.raw.clone() }
}

/// Key and value spans of `--name=value`. Exact when the token is written as
/// it reads (no quotes or substitutions inside); otherwise both are the whole word.
fn split_span(token: &ArgToken, name_len: usize) -> (Span, Span) {
    let written_plainly = token.value.value() == Some(&token.raw);
    if !written_plainly {
        return (token.span.clone(), token.span.clone());
    }
    split_span_raw(token, name_len)
}

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
            EditIntent::RenameSwitch { flag, new_name, value } => {
                format::replace_in_span(file, &flag.key_span, &flag.name, &format!("{new_name}={value}")).into_iter().collect()
            }
            // `--old` becomes `--a=v --b=v`, in place.
            EditIntent::SplitSwitch { flag, into } => {
                let words: Vec<String> = into.iter().map(|(name, value)| format!("{name}={value}")).collect();
                format::replace_in_span(file, &flag.key_span, &flag.name, &words.join(" --")).into_iter().collect()
            }
            EditIntent::Delete { .. } => Vec::new(),
            other => format::edit_in_place(file, other),
        }
    }
}

// ---- reading a script ----------------------------------------------------------

/// A script that cannot be parsed at all (nested too deep throughout, or
/// too slow for the parser) is an error: none of its launches could be read.
pub(crate) fn read(src: &SourceText) -> Result<(Vec<Deployment>, Vec<Note>), RecipeError> {
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
    let src = if bounded.skipped_anything() {
        blanked = SourceText::new(src.path.clone(), bounded.text);
        &blanked
    } else {
        src
    };
    let tree = bounded.tree;
    let vars = Variables::collect(src, tree.root_node());
    let script = Script { src, tree: tree.clone(), vars };
    if tree.root_node().has_error() {
        let line = first_error(tree.root_node()).map(|n| n.start_position().row + 1).unwrap_or(1);
        notes.push(Note::warning(format!("shell syntax error near line {line}: commands around it may be missed"), None));
    }
    let mut commands = Vec::new();
    collect_kind(tree.root_node(), "command", &mut commands);
    let exports = script.exports(tree.root_node(), &mut notes);
    let mut deployments = Vec::new();
    for command in commands {
        if let Some((engine, mut role)) = script.launch(command, &mut notes) {
            let offset = command.start_byte();
            let line = command.start_position().row + 1;
            let common_env = exports.iter().filter(|e| e.name_span.offset < offset).cloned().collect();
            let name = format!("{}@{line}", role.role);
            role.span = Some(src.span(command.start_byte(), command.end_byte()));
            deployments.push(Deployment {
                engine: engine.id,
                name,
                name_span: None,
                variant: None,
                roles: vec![role],
                common_env,
                container: None,
                image: None,
                model_path: None,
                precision: None,
                gpu_type: None,
                dynamo: None,
                entry_image: None,
            });
        }
    }
    Ok((deployments, notes))
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

fn collect_kind<'t>(node: Node<'t>, kind: &str, out: &mut Vec<Node<'t>>) {
    // Iterative: deeply nested scripts must not overflow the stack.
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == kind {
            out.push(n);
        }
        let mut cursor = n.walk();
        let children: Vec<Node> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out.sort_by_key(|n| n.start_byte());
}

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

struct Script<'s> {
    src: &'s SourceText,
    tree: Tree,
    vars: Variables,
}

impl Script<'_> {
    fn text(&self, node: Node) -> &str {
        &self.src.text[node.byte_range()]
    }

    fn span(&self, node: Node) -> Span {
        self.src.span(node.start_byte(), node.end_byte())
    }

    /// The engine and role of a command that starts an engine's server, if it is one.
    fn launch(&self, command: Node, notes: &mut Vec<Note>) -> Option<(Engine, RoleConfig)> {
        let mut cursor = command.walk();
        let parts: Vec<Node> = command.named_children(&mut cursor).collect();
        let name_node = command.child_by_field_name("name")?;
        let command_name = self.text(name_node);
        if matches!(command_name, "eval" | "bash" | "sh") {
            if let Some((engine, launcher)) = self.mentioned_launcher(command) {
                notes.push(Note::warning(
                    format!("{} launch built with `{command_name}`: its arguments cannot be known statically", engine.display),
                    Some(self.span(command)),
                ));
                return Some((
                    engine,
                    RoleConfig {
                        role: launcher.role.into(),
                        span: None,
                        flags: Vec::new(),
                        env: Vec::new(),
                        argv: None,
                        dynamic: Some(format!("command line built with `{command_name}`")),
                    },
                ));
            }
            return None;
        }
        let mut env = Vec::new();
        let mut words = Vec::new();
        for part in parts {
            match part.kind() {
                "variable_assignment" => env.push(self.env_use(part)),
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {}
                "command_name" => words.extend(self.words(part.named_child(0).unwrap_or(part))),
                _ => words.extend(self.words(part)),
            }
        }
        let (engine, launcher, start) = find_launcher(&words)?;
        // `env A=1 python3 -m ...`: assignments handed to `env` are the server's env.
        for token in &words[..start] {
            if let Some((name, value)) = token.value.value().and_then(|w| w.split_once('=')) {
                if is_env_name(name) {
                    env.push(EnvUse {
                        name: name.to_string(),
                        value: Known::Value(value.to_string()),
                        name_span: token.span.clone(),
                        value_span: token.span.clone(),
                        shadowed: Vec::new(),
                    });
                }
            }
        }
        let argv: Vec<ArgToken> = words[start..].to_vec();
        for token in argv.iter().filter(|t| t.value.is_dynamic()) {
            notes.push(Note::info(
                format!("`{}` is not assigned a literal earlier in the script: its value is unknown", token.raw),
                Some(token.span.clone()),
            ));
        }
        let in_loop = ancestors(command).find(|a| matches!(a.kind(), "for_statement" | "c_style_for_statement" | "while_statement"));
        Some((
            engine,
            RoleConfig {
                role: launcher.role.into(),
                span: None,
                flags: Vec::new(),
                env,
                argv: Some(argv),
                dynamic: in_loop.map(|l| {
                    format!("launched inside a loop (line {}): may run with other arguments each time", l.start_position().row + 1)
                }),
            },
        ))
    }

    /// The launcher a command's text, or the text assigned to any variable it
    /// expands, names (`eval "$CMD"` with `CMD="python3 -m sglang..."`).
    fn mentioned_launcher(&self, command: Node) -> Option<(Engine, &'static Launcher)> {
        let named_in = |t: &str| {
            crate::profiles::servers()
                .flat_map(|(engine, server)| server.launchers.iter().map(move |l| (engine, l)))
                .find(|(_, l)| t.contains(&l.text()))
        };
        if let Some(found) = named_in(self.text(command)) {
            return Some(found);
        }
        let mut expansions = Vec::new();
        collect_kind(command, "simple_expansion", &mut expansions);
        collect_kind(command, "expansion", &mut expansions);
        expansions.iter().find_map(|e| {
            let raw = self.text(*e);
            let name: String = raw.trim_start_matches(['$', '{']).chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            self.vars
                .sites
                .get(&name)
                .into_iter()
                .flatten()
                .find_map(|site| site.value.and_then(|(start, end)| named_in(&self.src.text[start..end])))
        })
    }

    fn env_use(&self, assignment: Node) -> EnvUse {
        let name = assignment.child_by_field_name("name").unwrap_or(assignment);
        let value_node = assignment.child_by_field_name("value");
        let at = assignment.start_byte();
        let (value, value_span) = match value_node {
            Some(v) => (self.eval(v, at), self.span(v)),
            None => (Known::Value(String::new()), self.src.span(assignment.end_byte(), assignment.end_byte())),
        };
        EnvUse { name: self.text(name).to_string(), value, name_span: self.span(name), value_span, shadowed: Vec::new() }
    }

    /// `export NAME=value` / `export NAME` / `declare -x NAME=value`, anywhere in the script.
    fn exports(&self, root: Node, notes: &mut Vec<Note>) -> Vec<EnvUse> {
        let mut declarations = Vec::new();
        collect_kind(root, "declaration_command", &mut declarations);
        let mut env = Vec::new();
        for declaration in declarations {
            let keyword = declaration.child(0).map(|k| self.text(k)).unwrap_or("");
            let exported = keyword == "export"
                || (keyword == "declare"
                    && named_children(declaration).iter().any(|c| self.text(*c).starts_with("-") && self.text(*c).contains('x')));
            if !exported {
                continue;
            }
            for child in named_children(declaration) {
                match child.kind() {
                    "variable_assignment" => env.push(self.env_use(child)),
                    "variable_name" => {
                        let name = self.text(child).to_string();
                        let value = match self.vars.resolve(self, &name, child.start_byte(), 0) {
                            Some(v) => Known::Value(v),
                            None => {
                                notes.push(Note::info(
                                    format!("`export {name}`: its value is not assigned literally in the script"),
                                    Some(self.span(child)),
                                ));
                                Known::dynamic(format!("${name}"))
                            }
                        };
                        env.push(EnvUse { name, value, name_span: self.span(child), value_span: self.span(child), shadowed: Vec::new() });
                    }
                    _ => {}
                }
            }
        }
        env
    }

    /// The command-line words one argument node stands for. An unquoted `$VAR`
    /// whose value holds spaces splits into several words, as the shell does.
    fn words(&self, node: Node) -> Vec<ArgToken> {
        let raw = self.text(node).to_string();
        let span = self.span(node);
        let value = self.eval(node, node.start_byte());
        let splits = matches!(node.kind(), "simple_expansion" | "expansion");
        if let (true, Known::Value(v)) = (splits, &value) {
            return v
                .split_whitespace()
                .map(|w| ArgToken { value: Known::Value(w.to_string()), raw: raw.clone(), span: span.clone(), quoted: false })
                .collect();
        }
        let quoted = contains_kind(node, &["string", "raw_string", "ansi_c_string"]);
        vec![ArgToken { value, raw, span, quoted }]
    }

    /// The value of a word at byte offset `at`, or `Dynamic` with its source text.
    fn eval(&self, node: Node, at: usize) -> Known<String> {
        self.eval_depth(node, at, 0)
    }

    fn eval_depth(&self, node: Node, at: usize, depth: usize) -> Known<String> {
        let raw = self.text(node);
        let dynamic = || Known::dynamic(raw);
        let value = match node.kind() {
            "word" | "number" => Some(unescape_word(raw)),
            "raw_string" => Some(raw.trim_start_matches('\'').trim_end_matches('\'').to_string()),
            "string" | "concatenation" => {
                let mut out = String::new();
                let mut last = if node.kind() == "string" { node.start_byte() + 1 } else { node.start_byte() };
                let end = if node.kind() == "string" { node.end_byte().saturating_sub(1) } else { node.end_byte() };
                for child in named_children(node) {
                    // Text between named children (e.g. plain `$` or `"` pieces) is literal.
                    if child.start_byte() > last && node.kind() == "string" {
                        out.push_str(&unescape_double_quoted(&self.src.text[last..child.start_byte()]));
                    }
                    match self.eval_depth(child, at, depth + 1) {
                        Known::Value(v) => out.push_str(&v),
                        Known::Dynamic { .. } => return dynamic(),
                    }
                    last = child.end_byte();
                }
                if end > last && node.kind() == "string" {
                    out.push_str(&unescape_double_quoted(&self.src.text[last..end]));
                }
                Some(out)
            }
            "string_content" => Some(unescape_double_quoted(raw)),
            "simple_expansion" => {
                let name = raw.trim_start_matches('$');
                self.vars.resolve(self, name, at, depth)
            }
            "expansion" => self.expansion(raw, at, depth),
            _ => None,
        };
        value.map(Known::Value).unwrap_or_else(dynamic)
    }

    /// `${NAME}`, `${NAME:-default}`, `${NAME-default}`; other operators are dynamic.
    fn expansion(&self, raw: &str, at: usize, depth: usize) -> Option<String> {
        let inner = raw.strip_prefix("${")?.strip_suffix('}')?;
        let name_len = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(inner.len());
        let (name, op) = inner.split_at(name_len);
        if name.is_empty() {
            return None;
        }
        let value = self.vars.resolve(self, name, at, depth);
        let literal_default = |d: &str| (!d.contains(['$', '`', '"', '\'', '\\'])).then(|| d.to_string());
        match op {
            "" => value,
            _ if op.starts_with(":-") => match value {
                Some(v) if !v.is_empty() => Some(v),
                Some(_) => literal_default(&op[2..]),
                None => None,
            },
            _ if op.starts_with('-') => value,
            _ => None,
        }
    }
}

fn contains_kind(node: Node, kinds: &[&str]) -> bool {
    if kinds.contains(&node.kind()) {
        return true;
    }
    named_children(node).into_iter().any(|c| contains_kind(c, kinds))
}

fn ancestors(node: Node) -> impl Iterator<Item = Node> {
    std::iter::successors(node.parent(), |n| n.parent())
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// Which engine the command starts and where the server's own arguments start:
/// after one of the engines' launchers (`python[3[.N]] -m sglang.launch_server`,
/// `sglang serve`), behind any wrapper (`srun ...`, `nohup`, `exec`, `env A=1`).
fn find_launcher(words: &[ArgToken]) -> Option<(Engine, &'static Launcher, usize)> {
    let word = |i: usize| words.get(i).and_then(|t| t.value.value()).map(String::as_str);
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    for i in 0..words.len() {
        let Some(w) = word(i) else { continue };
        let program = base(w);
        let is_python = program == "python"
            || program
                .strip_prefix("python3")
                .is_some_and(|rest| rest.is_empty() || (rest.starts_with('.') && rest[1..].chars().all(|c| c.is_ascii_digit())));
        for (engine, server) in crate::profiles::servers() {
            for launcher in server.launchers {
                let args = match launcher.form {
                    LaunchForm::PythonModule(module) if is_python && word(i + 1) == Some("-m") && word(i + 2) == Some(module) => i + 3,
                    LaunchForm::Program { program: p, subcommand } if program == p && word(i + 1) == Some(subcommand) => i + 2,
                    _ => continue,
                };
                return Some((engine, launcher, args));
            }
        }
    }
    None
}

/// Backslash removal in an unquoted word (`\"` → `"`, `\<newline>` → nothing).
fn unescape_word(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().unwrap_or_default()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---- shell variables --------------------------------------------------------------

/// Every place a shell variable is set, to tell which uses have a knowable value.
struct Variables {
    sites: HashMap<String, Vec<Site>>,
}

struct Site {
    offset: usize,
    /// Directly in the script body (not in a loop, branch, function, subshell or list).
    top_level: bool,
    /// The value node's byte range, for a `NAME=value` assignment.
    value: Option<(usize, usize)>,
}

impl Variables {
    fn collect(src: &SourceText, root: Node) -> Variables {
        let mut sites: HashMap<String, Vec<Site>> = HashMap::new();
        let text = |n: Node| src.text[n.byte_range()].to_string();
        let mut add = |name: String, site: Site| sites.entry(name).or_default().push(site);
        let mut nodes = Vec::new();
        for kind in ["variable_assignment", "for_statement", "command", "unset_command", "declaration_command"] {
            collect_kind(root, kind, &mut nodes);
        }
        for node in nodes {
            match node.kind() {
                // `A=1 cmd` sets A for cmd only; it is not a shell variable.
                "variable_assignment" if node.parent().is_some_and(|p| p.kind() == "command") => {}
                "variable_assignment" => {
                    let Some(name) = node.child_by_field_name("name") else {
                        continue;
                    };
                    let plain_name = name.kind() == "variable_name";
                    let op_is_set = node.child(1).is_some_and(|op| &src.text[op.byte_range()] == "=");
                    add(
                        text(if plain_name { name } else { name.named_child(0).unwrap_or(name) }),
                        Site {
                            offset: node.start_byte(),
                            top_level: plain_name && op_is_set && is_top_level(node),
                            value: node
                                .child_by_field_name("value")
                                .filter(|v| v.kind() != "array")
                                .map(|v| (v.start_byte(), v.end_byte()))
                                .or(Some((node.end_byte(), node.end_byte()))),
                        },
                    );
                }
                "for_statement" => {
                    if let Some(var) = node.child_by_field_name("variable") {
                        add(text(var), Site { offset: node.start_byte(), top_level: false, value: None });
                    }
                }
                "unset_command" => {
                    for child in named_children(node) {
                        add(text(child), Site { offset: node.start_byte(), top_level: false, value: None });
                    }
                }
                "declaration_command" => {
                    // `local X` / `declare X` without a value still (re)defines X.
                    let keyword = node.child(0).map(text).unwrap_or_default();
                    if keyword != "export" {
                        for child in named_children(node).into_iter().filter(|c| c.kind() == "variable_name") {
                            add(text(child), Site { offset: node.start_byte(), top_level: false, value: None });
                        }
                    }
                }
                "command" => {
                    // `read X`, `mapfile X`, `getopts spec X` set X from input.
                    let name = node.child_by_field_name("name").map(text).unwrap_or_default();
                    if matches!(name.as_str(), "read" | "mapfile" | "readarray" | "getopts" | "printf") {
                        for arg in named_children(node).into_iter().skip(1) {
                            let word = text(arg);
                            if is_env_name(&word) {
                                add(word, Site { offset: node.start_byte(), top_level: false, value: None });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Variables { sites }
    }

    /// The value of `name` at byte `at`: known only when it is set exactly once,
    /// to a literal, at the top level, before `at`.
    fn resolve(&self, script: &Script, name: &str, at: usize, depth: usize) -> Option<String> {
        const MAX_DEPTH: usize = 16; // `A=$B; B=$A`-style chains stop here
        let [site] = self.sites.get(name)?.as_slice() else {
            return None;
        };
        if !site.top_level || site.offset >= at || depth > MAX_DEPTH {
            return None;
        }
        let (start, end) = site.value?;
        if start == end {
            return Some(String::new());
        }
        let root = find_node(script, start, end)?;
        script.eval_depth(root, site.offset, depth + 1).value().cloned()
    }
}

/// The node spanning exactly `start..end` (the value of an assignment site).
fn find_node<'t>(script: &'t Script, start: usize, end: usize) -> Option<Node<'t>> {
    let n = script.tree.root_node().descendant_for_byte_range(start, end)?;
    Some(std::iter::successors(Some(n), |n| n.parent()).find(|n| n.start_byte() == start && n.end_byte() == end).unwrap_or(n))
}

fn is_top_level(node: Node) -> bool {
    let mut current = node;
    while let Some(parent) = current.parent() {
        match parent.kind() {
            "program" => return true,
            "declaration_command" | "variable_assignments" => current = parent,
            _ => return false,
        }
    }
    false
}
