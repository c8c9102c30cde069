//! The abstract interpreter: runs a script's statements over a bounded set of
//! states (variables, exports, the path condition), never executing anything.
//!
//! Every branch of an `if`/`elif`/`else`, a `case` or a `test && ...` is a
//! possible path: a state forks there, carrying the test it assumed, and states
//! that end up equal are joined again. Functions are inlined at their calls,
//! `source` reads the named file, `eval` and `bash -c` re-parse a string whose
//! value is known. Each of these nests at most [`MAX_DEPTH`] deep, at most
//! [`MAX_STATES`] states are kept (beyond that, differing variables become
//! unknown) and at most [`MAX_STEPS`] statements are evaluated per file.

use super::super::argv::ArgToken;
use super::super::{EnvUse, Note};
use super::cond::{decided, Atom, Path, Test};
use super::launch;
use super::vars::{self, Vars};
use super::words::{self, fields, joined, known_text, Field, Frag, Item, Origin};
use crate::profiles::{Engine, Launcher};
use crate::surface::Known;
use crate::text::span::{SourceText, Span};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path as FsPath, PathBuf};
use tree_sitter::{Node, Parser, Tree};

mod branch;
mod capture;
mod expand;
mod facts;
mod join;
mod nested;
mod reach;
mod relevant;
mod sourced;
mod written;

#[cfg(test)]
pub(crate) use written::placeholder;
pub(crate) use written::{WrittenFile, PLACEHOLDER};

/// States kept at once; more are joined, their differing variables unknown.
pub(crate) const MAX_STATES: usize = 32;
/// Nesting of function calls, `source`, `eval` and `bash -c`.
pub(crate) const MAX_DEPTH: usize = 8;
/// Statements evaluated (summed over states) per script.
pub(crate) const MAX_STEPS: usize = 200_000;
/// Elements kept in one array.
const MAX_ELEMENTS: usize = 4096;

/// One way a launch command ran: the path to it, its argv and its environment.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub path: Path,
    /// `None`: the command line could not be read at all (`dynamic` says why).
    pub argv: Option<Vec<ArgToken>>,
    /// Set for the command only (`A=1 python3 ...`, `env A=1 ...`).
    pub env: Vec<EnvUse>,
    /// The script's exported variables at the command.
    pub exports: Vec<EnvUse>,
    pub dynamic: Option<String>,
    /// The files the script wrote on this path that the command line names
    /// (`--config cfg.yml`), as the server reads them.
    pub files: Vec<WrittenFile>,
}

/// A command that starts an engine's server, and every path that reached it.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub engine: Engine,
    pub launcher: &'static Launcher,
    pub span: Span,
    pub runs: Vec<Run>,
}

/// What evaluating a script found.
pub(crate) struct Evaluation {
    pub sites: Vec<Site>,
    pub notes: Vec<Note>,
    /// Every file system fact the evaluation depended on, besides the
    /// script's own text: what a cached evaluation must find unchanged.
    pub looked_at: Vec<LookedAt>,
    /// Where in the script evaluation stopped (byte offset), past [`MAX_STEPS`].
    pub stopped_at: Option<usize>,
}

/// One file system fact an evaluation read: a file's text (by digest, or
/// `None` when it could not be read as text), or whether a path exists (or is
/// a regular file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum LookedAt {
    Text { path: PathBuf, digest: Option<String> },
    Exists { path: PathBuf, found: bool },
    IsFile { path: PathBuf, found: bool },
}

impl LookedAt {
    /// The fact as the file system has it now.
    pub(crate) fn now(&self) -> LookedAt {
        match self {
            LookedAt::Text { path, .. } => LookedAt::Text { path: path.clone(), digest: text_digest(path) },
            LookedAt::Exists { path, .. } => LookedAt::Exists { path: path.clone(), found: path.canonicalize().is_ok() },
            LookedAt::IsFile { path, .. } => LookedAt::IsFile { path: path.clone(), found: path.is_file() },
        }
    }
}

/// The digest of a file `source` would read: its text when it is a regular
/// text file within the size bound, `None` otherwise.
pub(crate) fn text_digest(path: &FsPath) -> Option<String> {
    use sha2::{Digest, Sha256};
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > crate::recipe::MAX_RECIPE_BYTES {
        return None;
    }
    let text = std::fs::read(path).ok()?;
    Some(Sha256::digest(&text).iter().map(|b| format!("{b:02x}")).collect())
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Value {
    Str(Vec<Frag>),
    Array(Vec<Field>),
}

/// A value shared between the states that hold it, with its hash computed once.
#[derive(Debug, Clone)]
struct Shared(std::rc::Rc<(Value, u64)>);

impl Shared {
    fn new(value: Value) -> Shared {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        value.hash(&mut h);
        Shared(std::rc::Rc::new((value, h.finish())))
    }
}

impl std::ops::Deref for Shared {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0 .0
    }
}

impl PartialEq for Shared {
    fn eq(&self, other: &Self) -> bool {
        std::rc::Rc::ptr_eq(&self.0, &other.0) || (self.0 .1 == other.0 .1 && self.0 .0 == other.0 .0)
    }
}

impl Eq for Shared {}

impl std::hash::Hash for Shared {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.0 .1);
    }
}

/// The condition of an env var that only some of the paths merged past the
/// cap export: it is not claimed to reach the launch, only that it may.
pub(crate) const ON_SOME_MERGED_PATHS: &str = "on some of the paths merged past the cap on paths only";

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Var {
    value: Shared,
    exported: bool,
    /// Set (or exported) on some of the paths merged into this state only:
    /// whether a launch sees it at all is not known.
    maybe_unset: bool,
    /// Where the name and the value were last written (for the env var's spans).
    name_at: Origin,
    value_at: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    vars: Vars<Var>,
    path: Path,
    /// `$1 ...` of the function (or script) being run.
    positional: Option<Vec<Field>>,
    /// Inside `$(...)`: what the commands printed so far.
    out: Option<Vec<Frag>>,
    /// Per function call: the variables `local` shadowed, to restore on return.
    frames: Vec<Vec<(String, Option<Var>)>>,
    returned: bool,
}

/// A file the evaluator read: the script, a sourced file, or the text of an
/// `eval` (whose bytes map back to the file they are written in, where they are
/// written verbatim).
struct File {
    tree: Tree,
    text: String,
    /// For eval text: byte → (real file, offset), `None` where not verbatim.
    map: Option<Vec<Option<(usize, usize)>>>,
    /// For eval text: where to point when a byte does not map (the eval'd word).
    fallback: Option<Origin>,
    /// The real file's index in `Interp::real`.
    real: Option<usize>,
    /// For eval text: the byte ranges that stand for a value not known (its
    /// expansion as written, `${NODE0_ADDR}`), and why. Read again inside
    /// single quotes they would be text; they stay unknown.
    unknown: Vec<(usize, usize, String)>,
    /// What the file assigns, defines and launches with, when read already
    /// (a sourced file, read once per run).
    facts: Option<std::sync::Arc<facts::FileFacts>>,
}

impl File {
    /// Why bytes `start..end` of this file hold a value not known, when they do.
    fn unknown_within(&self, start: usize, end: usize) -> Option<&(usize, usize, String)> {
        self.unknown.iter().find(|(s, e, _)| *s < end && start < *e)
    }
}

pub(crate) struct Interp<'a> {
    files: Vec<std::rc::Rc<File>>,
    /// Real files, for spans (index 0 is the script).
    pub real: Vec<SourceText>,
    real_paths: Vec<Option<PathBuf>>,
    /// Where `source` may read from.
    root: Option<PathBuf>,
    functions: HashMap<String, (usize, usize, usize)>,
    /// Function definitions run so far (a judgement of calls holds until the next).
    definitions: usize,
    /// Variables the script assigns somewhere: unset on a path means empty, not
    /// "from the environment"...
    script_vars: BTreeSet<String>,
    /// ...unless the script also gives them a default (`${X:-d}`): those come
    /// from the job's environment when it sets them.
    env_vars: BTreeSet<String>,
    /// A `source` was not read: what it sets is unknown, so an unset variable
    /// is no longer known to be empty.
    unread_source: bool,
    sites: Vec<Site>,
    notes: Vec<Note>,
    steps: usize,
    /// Where evaluation stopped, past [`MAX_STEPS`].
    stopped_at: Option<Origin>,
    joined_note: bool,
    parser: &'a mut Parser,
    evals: HashMap<(String, Origin), usize>,
    reach: reach::LaunchReach,
    /// The statements being run up to their last launch only (the script's
    /// own, or a file or function body it runs last): see [`reach::Cut`].
    cut: Option<reach::Cut>,
    relevant: relevant::Relevant,
    text_facts: facts::TextFacts,
    /// The file system facts read so far ([`Evaluation::looked_at`]).
    looked_at: std::cell::RefCell<Vec<LookedAt>>,
}

impl<'a> Interp<'a> {
    /// Evaluate `src` (already parsed as `tree`). `disk` is the file on disk,
    /// when there is one: `source` reads relative to it, inside `root`.
    pub(crate) fn run(src: &SourceText, tree: Tree, disk: Option<PathBuf>, parser: &'a mut Parser) -> Evaluation {
        let mut looked_at = Vec::new();
        let root = disk.as_deref().and_then(|d| repository_root(d, &mut looked_at));
        let mut interp = Interp {
            files: Vec::new(),
            real: vec![src.clone()],
            real_paths: vec![disk],
            root,
            functions: HashMap::new(),
            definitions: 0,
            script_vars: BTreeSet::new(),
            env_vars: BTreeSet::new(),
            unread_source: false,
            sites: Vec::new(),
            notes: Vec::new(),
            steps: 0,
            stopped_at: None,
            joined_note: false,
            parser,
            evals: HashMap::new(),
            reach: reach::LaunchReach::default(),
            cut: None,
            relevant: relevant::Relevant::default(),
            text_facts: facts::TextFacts::default(),
            looked_at: std::cell::RefCell::new(looked_at),
        };
        let file = interp.add_file(File {
            tree,
            text: src.text.clone(),
            map: None,
            fallback: None,
            real: Some(0),
            unknown: Vec::new(),
            facts: None,
        });
        let start = State { vars: Vars::new(), path: Path::new(), positional: None, out: None, frames: Vec::new(), returned: false };
        interp.exec_file(file, vec![start], 0, true);
        interp.merged_paths_note();
        let stopped_at = interp.stopped_at.filter(|o| o.file == 0).map(|o| o.start);
        Evaluation { sites: interp.sites, notes: interp.notes, looked_at: interp.looked_at.into_inner(), stopped_at }
    }

    fn add_file(&mut self, file: File) -> usize {
        let names = FileNames::of(&file);
        self.add_file_with(file, &names)
    }

    fn add_file_with(&mut self, file: File, names: &FileNames) -> usize {
        self.script_vars.extend(names.assigned.iter().cloned());
        self.env_vars.extend(names.defaulted.iter().cloned());
        self.files.push(std::rc::Rc::new(file));
        self.files.len() - 1
    }

    /// Run a file's statements; `last` when nothing after it may launch, so
    /// that it runs only up to its own last launch.
    fn exec_file(&mut self, file: usize, states: Vec<State>, depth: usize, last: bool) -> Vec<State> {
        let f = self.files[file].clone();
        let root = f.tree.root_node();
        if last {
            return self.script_block(&f, file, root, states, depth);
        }
        self.block(&f, file, &named_children(root), states, depth)
    }

    // ---- positions ----------------------------------------------------------------

    fn origin(&self, file: usize, start: usize, end: usize, verbatim: bool) -> Origin {
        let f = &self.files[file];
        match (&f.map, f.real) {
            (None, Some(real)) => Origin { file: real, start, end, verbatim },
            (Some(map), _) => {
                let first = map.get(start).copied().flatten();
                let last = if end > start { map.get(end - 1).copied().flatten() } else { first };
                match (first, last) {
                    // An eval'd text joined from values written out of order (`CMD="x $CFG"` with
                    // `CFG` assigned above) maps its last byte before its first: no one span.
                    (Some((a, s)), Some((b, e))) if a == b && e >= s && e + 1 - s == end - start => {
                        Origin { file: a, start: s, end: e + 1, verbatim }
                    }
                    (Some((a, s)), _) if end == start => Origin { file: a, start: s, end: s, verbatim },
                    _ => Origin { verbatim: false, ..f.fallback.unwrap_or(Origin { file: 0, start: 0, end: 0, verbatim: false }) },
                }
            }
            (None, None) => Origin { file: 0, start: 0, end: 0, verbatim: false },
        }
    }

    fn node_origin(&self, file: usize, node: Node) -> Origin {
        self.origin(file, node.start_byte(), node.end_byte(), false)
    }

    fn span_of(&self, origin: Origin) -> Span {
        self.real[origin.file].span(origin.start, origin.end)
    }

    fn line(&self, file: usize, node: Node) -> String {
        let o = self.node_origin(file, node);
        let span = self.span_of(o);
        if o.file == 0 {
            format!("line {}", span.line)
        } else {
            format!("{}:{}", span.path, span.line)
        }
    }

    fn note(&mut self, message: String, origin: Option<Origin>) {
        let span = origin.map(|o| self.span_of(o));
        let note = Note::warning(message, span);
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    // ---- statements ---------------------------------------------------------------

    fn block(&mut self, f: &File, file: usize, nodes: &[Node], mut states: Vec<State>, depth: usize) -> Vec<State> {
        for node in nodes {
            if states.is_empty() {
                break;
            }
            states = self.step(f, file, *node, states, depth);
        }
        states
    }

    /// The statements of `container` (a file's root, or the body of a function
    /// run last) up to the last one that may launch (as last judged): past it
    /// nothing can change a launch. It is judged again on reaching it, since
    /// what ran (a `source`) may have defined the functions the rest calls.
    fn script_block(&mut self, f: &File, file: usize, container: Node, mut states: Vec<State>, depth: usize) -> Vec<State> {
        let nodes = named_children(container);
        let outer = self.cut.replace(reach::Cut::new(file, container, depth));
        let mut last_launch: Option<usize> = None;
        for (i, node) in nodes.iter().enumerate() {
            if states.is_empty() {
                break;
            }
            if last_launch.is_none_or(|j| i > j) {
                match self.last_launch(f, &nodes[i..]) {
                    Some(k) => last_launch = Some(i + k),
                    None => {
                        // Past the cut, a sourced file's functions are still
                        // defined: what sourced it calls them.
                        for rest in &nodes[i..] {
                            if rest.kind() == "function_definition" {
                                self.statement(f, file, *rest, Vec::new(), depth);
                            }
                        }
                        break;
                    }
                }
            }
            // Judged afresh: the statements before may have defined functions
            // the later ones call.
            let quiet_after = last_launch == Some(i) && self.last_launch(f, &nodes[i + 1..]).is_none();
            if let Some(cut) = self.cut.as_mut() {
                cut.quiet_after = quiet_after;
            }
            states = self.step(f, file, *node, states, depth);
        }
        self.cut = outer;
        states
    }

    /// One statement over the states that have not returned, then joined.
    fn step(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        let (live, mut states): (Vec<State>, Vec<State>) = states.into_iter().partition(|s| !s.returned);
        if !live.is_empty() {
            states.extend(self.statement(f, file, node, live, depth));
        }

        self.join(states)
    }

    fn statement(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        self.steps += states.len();
        if self.steps > MAX_STEPS {
            if self.stopped_at.is_none() {
                self.stopped_at = Some(self.node_origin(file, node));
                let at = self.line(file, node);
                self.note(
                    format!("{at}: stopped evaluating after {MAX_STEPS} statements; commands from here on are not read"),
                    Some(self.node_origin(file, node)),
                );
            }
            return states;
        }
        match node.kind() {
            "comment" => states,
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let name = f.text[name.byte_range()].to_string();
                    self.functions.insert(name, (file, node.start_byte(), node.end_byte()));
                    self.definitions += 1;
                }
                states
            }
            "variable_assignment" => {
                states.into_iter().flat_map(|s| self.assign_statement(f, file, node, s, false, false, depth)).collect()
            }
            "variable_assignments" => {
                let parts = named_children(node);
                self.block(f, file, &parts, states, depth)
            }
            "declaration_command" => states.into_iter().flat_map(|s| self.declare(f, file, node, s, depth)).collect(),
            "unset_command" => states
                .into_iter()
                .map(|mut s| {
                    for child in named_children(node) {
                        s.vars.remove(&f.text[child.byte_range()]);
                    }
                    s
                })
                .collect(),
            "command" => states.into_iter().flat_map(|s| self.command(f, file, node, s, depth)).collect(),
            "redirected_statement" => {
                let states: Vec<State> = states.into_iter().map(|s| self.write_heredoc(f, file, node, s)).collect();
                self.redirected(f, file, node, states, depth)
            }
            "compound_statement" | "do_group" => self.block(f, file, &named_children(node), states, depth),
            // A subshell, a pipeline's parts: their assignments do not reach the
            // script, their launches do.
            "subshell" | "pipeline" => {
                for child in named_children(node) {
                    self.statement(f, file, child, states.clone(), depth);
                }
                states
            }
            "negated_command" => match node.named_child(0) {
                Some(inner) => self.statement(f, file, inner, states, depth),
                None => states,
            },
            "list" => self.list(f, file, node, states, depth),
            "if_statement" => self.if_statement(f, file, node, states, depth),
            "case_statement" => self.case_statement(f, file, node, states, depth),
            "for_statement" | "c_style_for_statement" | "while_statement" => self.loop_statement(f, file, node, states, depth),
            _ => states,
        }
    }

    /// A statement with redirections: its body, run as any statement.
    fn redirected(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        match node.child_by_field_name("body") {
            Some(body) if states.iter().any(|s| s.out.is_some()) && capture::stdout_redirected(f, node) => {
                // Inside `$(...)`, what goes to a file or stderr is not output.
                let mut out = Vec::new();
                for state in states {
                    let printed = state.out.clone();
                    let quiet = self.statement(f, file, body, vec![State { out: None, ..state }], depth);
                    out.extend(quiet.into_iter().map(|s| State { out: printed.clone(), ..s }));
                }
                out
            }
            Some(body) => self.statement(f, file, body, states, depth),
            None => states,
        }
    }

    // ---- assignments ------------------------------------------------------------------

    fn assign(&mut self, f: &File, file: usize, node: Node, mut state: State, export: bool, local: bool) -> State {
        let Some(name_node) = node.child_by_field_name("name") else { return state };
        let append = (0..node.child_count()).filter_map(|i| node.child(i)).any(|c| c.kind() == "+=");
        let (name, index) = match name_node.kind() {
            "subscript" => {
                let n = name_node.child_by_field_name("name").map(|n| f.text[n.byte_range()].to_string()).unwrap_or_default();
                (n, name_node.child_by_field_name("index"))
            }
            _ => (f.text[name_node.byte_range()].to_string(), None),
        };
        if local {
            let previous = state.vars.get(&name).cloned();
            if let Some(frame) = state.frames.last_mut() {
                frame.push((name.clone(), previous));
            }
        }
        let value_node = node.child_by_field_name("value");
        if let Some(v) = value_node {
            self.assign_defaults(f, file, v, &mut state);
        }
        let name_at = self.origin(file, name_node.start_byte(), name_node.end_byte(), true);
        let value_at = match value_node {
            Some(v) => self.node_origin(file, v),
            None => self.origin(file, node.end_byte(), node.end_byte(), true),
        };
        let new_value = match value_node {
            Some(v) if v.kind() == "array" => {
                let mut elements = Vec::new();
                for element in named_children(v).into_iter().filter(|c| c.kind() != "comment") {
                    elements.extend(fields(self.expand(f, file, element, &state, false), true));
                }
                Value::Array(elements)
            }
            Some(v) => Value::Str(joined(self.expand(f, file, v, &state, true), value_at)),
            None => Value::Str(Vec::new()),
        };
        let old = state.vars.get(&name).cloned();
        let exported = export || old.as_ref().is_some_and(|o| o.exported);
        let value = match (index, new_value, old.map(|o| (*o.value).clone())) {
            (Some(index), Value::Str(frags), old) => {
                let mut elements = match old {
                    Some(Value::Array(e)) => e,
                    Some(Value::Str(s)) => vec![s],
                    None => Vec::new(),
                };
                let at = known_text(&joined(self.expand(f, file, index, &state, true), value_at)).and_then(|t| t.parse::<usize>().ok());
                match at.filter(|i| *i < MAX_ELEMENTS) {
                    Some(i) => {
                        if elements.len() <= i {
                            elements.resize(i + 1, Vec::new());
                        }
                        elements[i] = if append { [std::mem::take(&mut elements[i]), frags].concat() } else { frags };
                        Value::Array(elements)
                    }
                    None => unknown_value(&name, "an element of it is set at an index not known", value_at),
                }
            }
            (_, Value::Array(new), Some(Value::Array(mut old))) if append => {
                old.extend(new);
                old.truncate(MAX_ELEMENTS);
                Value::Array(old)
            }
            (_, Value::Array(new), Some(Value::Str(old))) if append => Value::Array([vec![old], new].concat()),
            (_, Value::Str(new), Some(Value::Str(old))) if append => Value::Str([old, new].concat()),
            (_, Value::Str(new), Some(Value::Array(mut old))) if append => {
                if let Some(first) = old.first_mut() {
                    first.extend(new);
                }
                Value::Array(old)
            }
            (_, new, _) => new,
        };
        state.vars.insert(name, Var { value: Shared::new(value), exported, maybe_unset: false, name_at, value_at });
        state
    }

    /// `export`, `local`, `declare [-x] [-a]`, `readonly`, `typeset`.
    fn declare(&mut self, f: &File, file: usize, node: Node, state: State, depth: usize) -> Vec<State> {
        let keyword = node.child(0).map(|k| &f.text[k.byte_range()]).unwrap_or("");
        let children = named_children(node);
        let options: Vec<&str> = children.iter().map(|c| &f.text[c.byte_range()]).filter(|t| t.starts_with('-')).collect();
        let export = keyword == "export" || options.iter().any(|o| o.contains('x'));
        let local = keyword == "local" || (matches!(keyword, "declare" | "typeset") && !state.frames.is_empty());
        let array = options.iter().any(|o| o.contains(['a', 'A']));
        let mut states = vec![state];
        for child in children {
            match child.kind() {
                "variable_assignment" => {
                    states = states.into_iter().flat_map(|s| self.assign_statement(f, file, child, s, export, local, depth)).collect();
                }
                "variable_name" => {
                    states = states.into_iter().map(|s| self.declare_name(f, file, child, s, export, local, array)).collect()
                }
                _ => {}
            }
        }
        states
    }

    /// `local x`, `declare -a A`, `export X` without a value.
    #[allow(clippy::too_many_arguments)]
    fn declare_name(&mut self, f: &File, file: usize, child: Node, mut state: State, export: bool, local: bool, array: bool) -> State {
        let name = f.text[child.byte_range()].to_string();
        let at = self.origin(file, child.start_byte(), child.end_byte(), true);
        if local {
            let previous = state.vars.get(&name).cloned();
            if let Some(frame) = state.frames.last_mut() {
                frame.push((name.clone(), previous));
            }
            // `local x`: empty inside the function, never the job's value.
            let value = Shared::new(if array { Value::Array(Vec::new()) } else { Value::Str(Vec::new()) });
            state.vars.insert(name.clone(), Var { value, exported: false, maybe_unset: false, name_at: at, value_at: at });
        } else if array && !state.vars.contains_key(&name) {
            // `declare -a X`: an empty array, whatever the job's environment holds.
            let value = Shared::new(Value::Array(Vec::new()));
            state.vars.insert(name.clone(), Var { value, exported: false, maybe_unset: false, name_at: at, value_at: at });
        }
        if export {
            let from_environment = self.is_environment_input(&name, &state);
            match state.vars.get(&name).cloned() {
                Some(var) => state.vars.insert(name, Var { exported: true, ..var }),
                // Exporting a variable the script never sets passes on the job's value.
                None if from_environment => {
                    let value = unknown_value(&name, "comes from the environment", at);
                    state
                        .vars
                        .insert(name, Var { value: Shared::new(value), exported: true, maybe_unset: false, name_at: at, value_at: at });
                }
                None => {}
            }
        }
        state
    }

    // ---- commands -----------------------------------------------------------------------

    /// `${X:=d}` / `${X=d}` inside `node` assign `d` to `X` when it is unset (or
    /// empty, for `:=`), as bash does while expanding (`: "${PORT:=30000}"`).
    fn assign_defaults(&mut self, f: &File, file: usize, node: Node, state: &mut State) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            stack.extend(named_children(n));
            if n.kind() != "expansion" {
                continue;
            }
            let raw = &f.text[n.byte_range()];
            let Some(inner) = raw.strip_prefix("${") else { continue };
            let name: String = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let op = &inner[name.len()..];
            if !launch::is_env_name(&name) || !(op.starts_with(":=") || op.starts_with('=')) {
                continue;
            }
            let empty =
                state.vars.get(&name).map(|v| matches!(&*v.value, Value::Str(frags) if known_text(frags).is_some_and(|t| t.is_empty())));
            if !(empty.is_none() || (op.starts_with(':') && empty == Some(true))) {
                continue;
            }
            let at = self.node_origin(file, n);
            let value = joined(self.expand(f, file, n, state, true), at);
            let exported = state.vars.get(&name).is_some_and(|v| v.exported);
            state.vars.insert(name, Var { value: Shared::new(Value::Str(value)), exported, maybe_unset: false, name_at: at, value_at: at });
        }
    }

    fn command(&mut self, f: &File, file: usize, node: Node, mut state: State, depth: usize) -> Vec<State> {
        self.assign_defaults(f, file, node, &mut state);
        let mut prefix = Vec::new();
        let mut items_per_word = Vec::new();
        for part in named_children(node) {
            match part.kind() {
                "variable_assignment" => prefix.push(part),
                "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {}
                "command_name" => items_per_word.push(part.named_child(0).unwrap_or(part)),
                _ => items_per_word.push(part),
            }
        }
        let mut words: Vec<Field> = Vec::new();
        for w in &items_per_word {
            let keep = has_quotes(f, *w);
            words.extend(fields(self.expand(f, file, *w, &state, false), keep));
        }
        if self.collect_output(file, node, &words, &mut state) {
            return vec![state];
        }
        let name = words.first().and_then(|w| known_text(w));
        match name.as_deref() {
            Some("source" | ".") => return self.source(file, node, &words, state, depth),
            Some("eval") => return self.eval(f, file, node, &words[1..], state, depth, false),
            Some("exit") => return Vec::new(),
            Some("return") => {
                if !state.frames.is_empty() {
                    state.returned = true;
                }
                return vec![state];
            }
            Some("shift") => {
                if let Some(p) = state.positional.as_mut() {
                    let n = words.get(1).and_then(|w| known_text(w)).and_then(|t| t.parse().ok()).unwrap_or(1usize);
                    p.drain(..n.min(p.len()));
                }
                return vec![state];
            }
            Some("read" | "mapfile" | "readarray" | "getopts") => {
                for w in words.iter().skip(1).filter_map(|w| known_text(w)).filter(|w| launch::is_env_name(w)) {
                    let at = self.node_origin(file, node);
                    state.vars.insert(
                        w.clone(),
                        Var {
                            value: Shared::new(unknown_value(&w, "is read from input", at)),
                            exported: false,
                            maybe_unset: false,
                            name_at: at,
                            value_at: at,
                        },
                    );
                }
                return vec![state];
            }
            Some(n) if self.functions.contains_key(n) => return self.call(n.to_string(), file, node, &words, state, depth),
            _ => {}
        }
        let tokens: Vec<ArgToken> = words.iter().filter_map(|w| words::token(w, &self.real)).collect();
        // `bash -c "$CMD"`, `setsid bash -c ...`: a new shell reads the string.
        if let Some(c) = tokens.windows(2).position(|w| {
            w[0].value.value().is_some_and(|p| matches!(p.rsplit('/').next(), Some("bash" | "sh")))
                && w[1].value.value().is_some_and(|o| o == "-c")
        }) {
            if let Some(script) = words.get(c + 2) {
                let mut child = State {
                    vars: state.vars.iter().filter(|(_, v)| v.exported).map(|(k, v)| (k.clone(), v.clone())).collect(),
                    ..state.clone()
                };
                // A part of the string not known here is kept as written (`${NODES}`):
                // the new shell must read it as the same unknown value, not as a
                // variable it lacks.
                for frag in script.iter().filter(|fr| fr.unknown.is_some()) {
                    if let Some(name) = expansion_name(&frag.text).filter(|n| !child.vars.contains_key(n)) {
                        let value = Value::Str(vec![Frag { split: false, quoted: false, ..frag.clone() }]);
                        let var = Var {
                            value: Shared::new(value),
                            exported: false,
                            maybe_unset: false,
                            name_at: frag.origin,
                            value_at: frag.origin,
                        };
                        child.vars.insert(name, var);
                    }
                }
                self.eval(f, file, node, std::slice::from_ref(script), child, depth, true);
                return vec![state];
            }
        }
        let Some(found) = launch::find(&tokens) else {
            if let Some((engine, launcher, why)) = launch::find_unread(&tokens) {
                let span = self.span_of(self.node_origin(file, node));
                self.record(
                    engine,
                    launcher,
                    span,
                    Run {
                        path: state.path.clone(),
                        argv: None,
                        env: Vec::new(),
                        exports: Vec::new(),
                        dynamic: Some(why),
                        files: Vec::new(),
                    },
                );
                return vec![state];
            }
            if tokens.first().is_some_and(|t| t.value.is_dynamic()) {
                self.unknown_command(f, file, node, &tokens);
            }
            return vec![state];
        };
        let mut env: Vec<EnvUse> = Vec::new();
        for assignment in prefix {
            let s = self.assign(f, file, assignment, state.clone(), true, false);
            if let Some(name) = assignment.child_by_field_name("name") {
                let name = &f.text[name.byte_range()];
                if let Some(var) = s.vars.get(name) {
                    env.retain(|e| e.name != name);
                    env.push(self.env_use(name, var));
                }
            }
        }
        for &i in &found.env_words {
            let token = &tokens[i];
            if let Some((name, value)) = launch::assignment_word(token) {
                env.retain(|e| e.name != name);
                env.push(EnvUse {
                    name: name.to_string(),
                    value,
                    name_span: token.span.clone(),
                    value_span: token.span.clone(),
                    shadowed: Vec::new(),
                    condition: None,
                });
            }
        }
        let argv = tokens[found.args..].to_vec();
        let site = self.span_of(self.node_origin(file, node));
        let dynamic = ancestors(node)
            .find(|a| matches!(a.kind(), "for_statement" | "c_style_for_statement" | "while_statement"))
            .map(|l| format!("launched inside a loop ({}): may run with other arguments each time", self.line(file, l)));
        let exports = self.exported_env(&state).into_iter().filter(|e| !env.iter().any(|p| p.name == e.name)).collect();
        let files = self.files_named(&state, &argv);
        self.record(found.engine, found.launcher, site, Run { path: state.path.clone(), argv: Some(argv), env, exports, dynamic, files });
        vec![state]
    }

    fn record(&mut self, engine: Engine, launcher: &'static Launcher, span: Span, run: Run) {
        match self.sites.iter_mut().find(|s| s.span == span) {
            Some(site) => site.runs.push(run),
            None => self.sites.push(Site { engine, launcher, span, runs: vec![run] }),
        }
    }

    /// A command whose program is not known: a launch nobody can read, if its
    /// text (or what the variables it expands were set to) names a launcher.
    fn unknown_command(&mut self, f: &File, file: usize, node: Node, tokens: &[ArgToken]) {
        let text = &f.text[node.byte_range()];
        if let Some((engine, launcher)) = launch::mentions_launcher(text) {
            let span = self.span_of(self.node_origin(file, node));
            let why = format!("the command's name `{}` is not known", tokens[0].raw);
            self.record(
                engine,
                launcher,
                span,
                Run { path: Path::new(), argv: None, env: Vec::new(), exports: Vec::new(), dynamic: Some(why), files: Vec::new() },
            );
        }
    }

    fn exported_env(&self, state: &State) -> Vec<EnvUse> {
        // In the order they are written, as the script reads.
        let mut exported: Vec<(&vars::Name, &Var)> = state.vars.iter().filter(|(_, v)| v.exported).collect();
        exported.sort_by_key(|(_, v)| (v.name_at.file, v.name_at.start));
        exported.into_iter().map(|(name, var)| self.env_use(name, var)).collect()
    }

    fn env_use(&self, name: &str, var: &Var) -> EnvUse {
        let value = match &*var.value {
            Value::Str(frags) => match known_text(frags) {
                Some(t) => Known::Value(t),
                None => {
                    Known::dynamic(self.real[var.value_at.file].text.get(var.value_at.start..var.value_at.end).unwrap_or("").to_string())
                }
            },
            Value::Array(_) => Known::dynamic("(an array: bash exports no arrays)"),
        };
        EnvUse {
            name: name.to_string(),
            value,
            name_span: self.span_of(var.name_at),
            value_span: self.span_of(var.value_at),
            shadowed: Vec::new(),
            condition: var.maybe_unset.then(|| ON_SOME_MERGED_PATHS.to_string()),
        }
    }

    // ---- states -----------------------------------------------------------------------------

    /// Equal states (but their paths) become one whose path keeps the tests both
    /// share. Beyond [`MAX_STATES`], all states become one: what differs between
    /// them is unknown from there on (said once, in a note).
    fn join(&mut self, states: Vec<State>) -> Vec<State> {
        if states.len() < 2 {
            return states;
        }
        let mut out: Vec<State> = Vec::with_capacity(states.len());
        let mut by_fingerprint: HashMap<u64, Vec<usize>> = HashMap::new();
        for s in states {
            let same = by_fingerprint.get(&s.vars.fingerprint()).and_then(|candidates| {
                candidates.iter().copied().find(|&i| {
                    let o = &out[i];
                    o.vars == s.vars && o.positional == s.positional && o.frames == s.frames && o.returned == s.returned && o.out == s.out
                })
            });
            match same {
                Some(i) => out[i].path = out[i].path.intersection(&s.path).cloned().collect(),
                None => {
                    by_fingerprint.entry(s.vars.fingerprint()).or_default().push(out.len());
                    out.push(s);
                }
            }
        }
        if out.len() <= MAX_STATES {
            return out;
        }
        if let Some(merged) = self.merge_irrelevant(&out) {
            return merged;
        }
        if !self.joined_note {
            self.joined_note = true;
            self.note(
                format!("more than {MAX_STATES} paths through the script: values that differ between them are taken as unknown"),
                None,
            );
        }
        // Flow (a `return` taken) and function frames must agree to be joined.
        let mut groups: Vec<State> = Vec::new();
        for s in out {
            match groups
                .iter_mut()
                .find(|g| g.returned == s.returned && g.frames.len() == s.frames.len() && g.positional == s.positional && g.out == s.out)
            {
                Some(g) => widen(g, &s),
                None => groups.push(s),
            }
        }
        groups
    }
}

/// An `if`/`elif` clause's condition statements and body statements.
fn split_then<'t>(n: Node<'t>) -> (Vec<Node<'t>>, Vec<Node<'t>>) {
    let mut cond = Vec::new();
    let mut body = Vec::new();
    let mut seen_then = false;
    let mut cursor = n.walk();
    for child in n.children(&mut cursor) {
        match child.kind() {
            "then" => seen_then = true,
            "elif_clause" | "else_clause" | "comment" => {}
            _ if !child.is_named() => {}
            _ if seen_then => body.push(child),
            _ => cond.push(child),
        }
    }
    (cond, body)
}

/// `into` becomes a state that stands for itself and `other`: the tests both
/// share, and each variable they disagree on joined word by word (what both
/// values have stays known, see [`join`]) or, where nothing is shared, unknown.
fn widen(into: &mut State, other: &State) {
    into.path = into.path.intersection(&other.path).cloned().collect();
    for name in into.vars.differing(&other.vars) {
        let (x, y) = (into.vars.get(&name), other.vars.get(&name));
        let template = x.or(y).cloned().unwrap_or_else(|| unreachable!("the name comes from one of the maps"));
        // A group of merged paths takes its members in one by one: a value
        // already unknown here stays so, whatever the next member holds.
        if let Some(x) = x.filter(|x| is_merge_gap(&name, x)) {
            let maybe_unset = y.is_none_or(|y| x.maybe_unset || y.maybe_unset || x.exported != y.exported);
            let exported = x.exported || y.is_some_and(|v| v.exported);
            if (maybe_unset, exported) != (x.maybe_unset, x.exported) {
                into.vars.insert(name, Var { maybe_unset, exported, ..template });
            }
            continue;
        }
        let joined = match (x, y) {
            // A file's text joined word by word would be no file either path
            // writes (a key of one path beside a gap of the other's).
            _ if written::is_written(&name) => None,
            (Some(x), Some(y)) => join::join_values(&name, &x.value, &y.value, template.value_at),
            _ => None,
        };
        let value = joined.unwrap_or_else(|| unknown_value(&name, DIFFERS, template.value_at));
        // Set or exported on one side only: the merged state may not have it.
        let maybe_unset = match (x, y) {
            (Some(x), Some(y)) => x.maybe_unset || y.maybe_unset || x.exported != y.exported,
            _ => true,
        };
        let exported = x.is_some_and(|v| v.exported) || y.is_some_and(|v| v.exported);
        into.vars.insert(name, Var { value: Shared::new(value), exported, maybe_unset, ..template });
    }
}

/// What a test is known to be on a path.
enum Cond {
    Known(bool),
    Atom(Atom),
}

impl Cond {
    fn negate(self) -> Cond {
        match self {
            Cond::Known(b) => Cond::Known(!b),
            Cond::Atom(a) => Cond::Atom(a.negated()),
        }
    }
}

/// The state on the true side and on the false side of a test, where possible.
fn fork(state: State, cond: Cond) -> (Option<State>, Option<State>) {
    match cond {
        Cond::Known(true) => (Some(state), None),
        Cond::Known(false) => (None, Some(state)),
        Cond::Atom(atom) => match decided(&state.path, &atom) {
            Some(true) => (Some(state), None),
            Some(false) => (None, Some(state)),
            None => {
                let mut yes = state.clone();
                yes.path.insert(atom.clone());
                let mut no = state;
                no.path.insert(atom.negated());
                (Some(yes), Some(no))
            }
        },
    }
}

fn unknown_frag(raw: &str, why: &str, split: bool, quoted: bool, at: Origin) -> Item {
    Item::Frag(Frag { text: raw.to_string(), unknown: Some(why.to_string()), split, quoted, origin: at, word: at })
}

/// Why a variable that paths merged past the cap disagree on is not known.
pub(super) const DIFFERS: &str = "differs between paths through the script";

/// Whether `var` holds the value [`widen`] gives `name` where nothing of two
/// paths' values is shared (and would give it again).
fn is_merge_gap(name: &str, var: &Var) -> bool {
    matches!(&*var.value, Value::Str(frags) if matches!(frags.as_slice(),
        [only] if only.unknown.as_deref() == Some(DIFFERS) && only.text.strip_prefix('$') == Some(name)
            && only.origin == var.value_at && only.word == var.value_at && !only.split && !only.quoted))
}

fn unknown_value(name: &str, why: &str, at: Origin) -> Value {
    Value::Str(vec![Frag { text: format!("${name}"), unknown: Some(why.to_string()), split: false, quoted: false, origin: at, word: at }])
}

/// `[[ ]]`, `[ ]`, `test`: a command whose only effect is its status.
fn is_test(f: &File, node: Node) -> bool {
    match node.kind() {
        "test_command" => true,
        "compound_statement" => is_arithmetic_test(f, node),
        "negated_command" => node.named_child(0).is_some_and(|n| is_test(f, n)),
        "command" => node.child_by_field_name("name").is_some_and(|n| matches!(&f.text[n.byte_range()], "test" | "[" | "true" | "false")),
        _ => false,
    }
}

/// `(( C > 2048 ))`: an arithmetic command, whose status is its value's.
fn is_arithmetic_test(f: &File, node: Node) -> bool {
    node.kind() == "compound_statement" && f.text[node.byte_range()].starts_with("((")
}

/// The variable a word is: `$X`, `"$X"`, `${X}`, `${X:-d}` → `X`.
fn plain_variable(f: &File, node: Node) -> Option<String> {
    let node = if node.kind() == "string" && node.named_child_count() == 1 { node.named_child(0)? } else { node };
    let raw = &f.text[node.byte_range()];
    let inner = match node.kind() {
        "simple_expansion" => raw.strip_prefix('$')?,
        "expansion" => raw.strip_prefix("${")?.strip_suffix('}')?,
        _ => return None,
    };
    let name: String = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let rest = &inner[name.len()..];
    (launch::is_env_name(&name) && (rest.is_empty() || rest.starts_with(":-") || rest.starts_with('-'))).then_some(name)
}

/// Whether a word always yields a field: it has quotes, and is not only a
/// quoted `"${A[@]}"` / `"$@"` (which yields none for an empty array).
fn has_quotes(f: &File, node: Node) -> bool {
    match node.kind() {
        "raw_string" | "ansi_c_string" | "translated_string" => true,
        "string" => !(node.named_child_count() == 1 && node.named_child(0).is_some_and(|c| expands_all(&f.text[c.byte_range()]))),
        "concatenation" => named_children(node).into_iter().any(|c| has_quotes(f, c)),
        _ => false,
    }
}

fn expands_all(raw: &str) -> bool {
    raw == "$@" || raw == "${@}" || (raw.starts_with("${") && raw.ends_with("[@]}") && !raw.starts_with("${#"))
}

/// The variable `$X`, `${X}`, `${X[i]}` or `${X:-d}` names.
fn expansion_name(text: &str) -> Option<String> {
    let inner = text.strip_prefix("${").or_else(|| text.strip_prefix('$'))?;
    let name: String = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    launch::is_env_name(&name).then_some(name)
}

/// Whitespace runs as one space, for conditions shown in one line.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn ancestors(node: Node) -> impl Iterator<Item = Node> {
    std::iter::successors(node.parent(), |n| n.parent())
}

/// Every name a file assigns anywhere (`X=`, `X+=`, `X[i]=`, `declare X`,
/// `read X`, `for X in`); in function bodies too when `in_functions`.
/// The names a file assigns and gives defaults (see [`Interp::script_vars`]).
pub(super) struct FileNames {
    assigned: BTreeSet<String>,
    defaulted: BTreeSet<String>,
}

impl FileNames {
    fn of(file: &File) -> FileNames {
        FileNames::read(&file.tree, &file.text, file.real.is_some_and(|r| r != 0))
    }

    /// `library`: a file the script sources, not the script itself.
    fn read(tree: &Tree, text: &str, library: bool) -> FileNames {
        // A library's functions set variables only when called (and then on
        // that path): a name they assign still comes from the job's
        // environment elsewhere (`benchmark_lib.sh` exports `EP_SIZE` in one
        // of its functions; scripts take it from the job).
        let mut names = FileNames { assigned: BTreeSet::new(), defaulted: BTreeSet::new() };
        collect_assigned(tree.root_node(), text, !library, &mut names.assigned);
        collect_defaulted(tree.root_node(), text, &mut names.defaulted);
        names
    }
}

fn collect_assigned(root: Node, text: &str, in_functions: bool, out: &mut BTreeSet<String>) {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "function_definition" if !in_functions => continue,
            "variable_assignment" if n.parent().is_none_or(|p| p.kind() != "command") => {
                if let Some(name) = n.child_by_field_name("name") {
                    let name = if name.kind() == "subscript" { name.child_by_field_name("name").unwrap_or(name) } else { name };
                    out.insert(text[name.byte_range()].to_string());
                }
            }
            "for_statement" => {
                if let Some(v) = n.child_by_field_name("variable") {
                    out.insert(text[v.byte_range()].to_string());
                }
            }
            _ => {}
        }
        stack.extend(named_children(n));
    }
}

/// Names the script expects from the job's environment although it assigns
/// them: given a default from themselves (`X=${X:-d}`, `export X="${X:-d}"`) or
/// with `${X:=d}`. A bare `${X:-}` elsewhere is only `set -u` safety.
fn collect_defaulted(root: Node, text: &str, out: &mut BTreeSet<String>) {
    let defaulted = |expr: &str, name: &str| {
        expr.match_indices("${").any(|(i, _)| {
            let rest = &expr[i + 2..];
            rest.strip_prefix(name)
                .is_some_and(|op| op.starts_with(":-") || op.starts_with('-') || op.starts_with(":=") || op.starts_with('='))
        })
    };
    for (i, _) in text.match_indices("${") {
        let rest = &text[i + 2..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && (rest[name.len()..].starts_with(":=") || rest[name.len()..].starts_with('=')) {
            out.insert(name);
        }
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "variable_assignment" {
            if let (Some(name), Some(value)) = (n.child_by_field_name("name"), n.child_by_field_name("value")) {
                let name = &text[name.byte_range()];
                if defaulted(&text[value.byte_range()], name) {
                    out.insert(name.to_string());
                }
            }
        }
        stack.extend(named_children(n));
    }
}

/// The folder `source` may read in: the repository the script is in (the
/// nearest folder above it with a `.git`), else the script's own folder.
fn repository_root(script: &FsPath, looked_at: &mut Vec<LookedAt>) -> Option<PathBuf> {
    let script = script.canonicalize().ok()?;
    let dir = script.parent()?;
    let found = dir.ancestors().find(|d| {
        let git = d.join(".git");
        let found = git.canonicalize().is_ok();
        looked_at.push(LookedAt::Exists { path: git, found });
        found
    });
    found.map(FsPath::to_path_buf).or_else(|| Some(dir.to_path_buf()))
}
