//! Which statements may still start an engine: past the script's last one,
//! nothing the evaluator learns can change a launch, so it stops there.
//!
//! InferenceX's scripts launch the server and then call `benchmark_lib.sh`'s
//! client, eval and metadata functions, hundreds of lines of branches on job
//! variables. Evaluating them cost most of the run (and hit the statement cap)
//! for nothing. The test is conservative: a command may launch when its text
//! names a launcher (`sglang.launch_server`, `vllm`), when its program is not
//! known (`"$CMD"`, `eval`, `source`, `bash`), or when it calls a function that
//! may launch. Anything else is known not to.

use super::{named_children, File, Interp};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use tree_sitter::Node;

/// Programs whose run reads code the evaluator cannot see from the words alone.
const OPAQUE: &[&str] = &["eval", "source", ".", "bash", "sh", "exec", "trap", "xargs", "parallel"];

/// Statements run only up to their last launch: a file's or a function
/// body's (`container`), run at `depth`. The script's own are; a file it
/// sources or a function it calls are too when nothing after that `source`
/// or call may launch (`server.sh` ends by sourcing the engine's server script,
/// which goes on to its benchmark client after the launch).
#[derive(Clone, Copy)]
pub(super) struct Cut {
    file: usize,
    /// The container's node id (unique in its file's tree).
    container: usize,
    depth: usize,
    /// No statement of the container after the one being run may launch.
    pub(super) quiet_after: bool,
}

impl Cut {
    pub(super) fn new(file: usize, container: Node, depth: usize) -> Cut {
        Cut { file, container: container.id(), depth, quiet_after: false }
    }
}

/// What is known of which functions may launch, by their definition's place.
#[derive(Default)]
pub(super) struct LaunchReach {
    /// Judgements made since the last statement was judged, by the
    /// definition's (file, start); functions defined further on in the file
    /// being judged (not known to the evaluator yet) apart, since their calls
    /// are resolved among that file's definitions.
    functions: HashMap<(usize, usize), bool>,
    local_functions: HashMap<(usize, usize), bool>,
    /// Judgements of known functions that hold while no function is defined
    /// and no file is read (`settled_at`: the definitions and files then).
    /// Judging the same library functions again for each statement was most
    /// of what judging launches cost. A "no" read from a function still being
    /// judged (a call cycle) is provisional: what depends on it is not kept.
    settled: HashMap<(usize, usize), bool>,
    settled_at: (usize, usize),
    judging: HashSet<(usize, usize)>,
    provisional: usize,
    /// Variables some read file assigns a text naming a launcher: only
    /// through them can a word the evaluator expands become one. They depend
    /// on the files read only (`Some(n)`: computed when `n` files were read).
    launcher_vars: HashSet<String>,
    launcher_vars_at: Option<usize>,
    /// [`Interp::runs_last`] answers, by (file, command, functions known, files read).
    runs_last: HashMap<(usize, usize, usize, usize), bool>,
    /// Every function each file defines (its tree never changes): judging a
    /// command run last asks for them once per command reached, and walking
    /// the whole tree each time was a fifth of evaluating the AMD chain.
    file_definitions: HashMap<usize, Rc<Definitions>>,
}

/// Functions by name: where their definition is (byte range in its file).
type Definitions = HashMap<String, (usize, usize)>;

impl Interp<'_> {
    /// The index of the last of `nodes` (statements of `file`) that may start
    /// an engine, with the functions known now.
    pub(super) fn last_launch(&mut self, f: &File, nodes: &[Node]) -> Option<usize> {
        // A judgement of a function holds only for the functions known when it
        // was made: a `source` run since may define the ones it calls.
        self.fresh_judgements();
        let mut local = Definitions::new();
        for node in nodes {
            collect_definitions(f, *node, &mut local);
        }
        (0..nodes.len()).rev().find(|&i| self.node_may_launch(f, nodes[i], &local))
    }

    /// Whether the command `node` (of `file`, run at `depth`) is run last:
    /// in statements that run up to their last launch, with no statement
    /// after it (in its block and each enclosing one, up to those statements)
    /// that may launch, and in no loop (its body runs again).
    pub(super) fn runs_last(&mut self, file: usize, node: Node, depth: usize) -> bool {
        let Some(cut) = self.cut.filter(|c| c.file == file && c.depth == depth && c.quiet_after) else { return false };
        // Asked once per state that reaches the command: the answer only
        // changes when a function is defined or a file read.
        let key = (file, node.id(), self.definitions, self.files.len());
        if let Some(known) = self.reach.runs_last.get(&key) {
            return *known;
        }
        let answer = self.judge_runs_last(cut, file, node);
        self.reach.runs_last.insert(key, answer);
        answer
    }

    fn judge_runs_last(&mut self, cut: Cut, file: usize, node: Node) -> bool {
        // What runs after the command: the statements after it in its block
        // and in each enclosing one, up to the container's. The container's
        // later statements were judged (`quiet_after`) before this statement
        // ran; they are judged again, since a file it sources may assign what
        // they run (`source lib.sh` then `$SERVER --tp 8`, `SERVER` set in
        // the library): judged before the library was read, the library was
        // cut before that assignment and the launch never seen.
        let mut after: Vec<Node> = Vec::new();
        let mut current = node;
        loop {
            let Some(parent) = current.parent() else { return false };
            let top = parent.id() == cut.container;
            let mut next = current.next_named_sibling();
            while let Some(sibling) = next {
                // The other branches of an `if` or a `case` are not run after this one.
                if matches!(sibling.kind(), "elif_clause" | "else_clause" | "case_item") {
                    break;
                }
                after.push(sibling);
                next = sibling.next_named_sibling();
            }
            if top {
                break;
            }
            if matches!(parent.kind(), "for_statement" | "c_style_for_statement" | "while_statement" | "function_definition") {
                return false;
            }
            current = parent;
        }
        if after.is_empty() {
            return true;
        }
        // Functions the file defines further on are not known to the evaluator yet.
        let f = self.files[file].clone();
        let local = self
            .reach
            .file_definitions
            .entry(file)
            .or_insert_with(|| {
                let mut all = Definitions::new();
                collect_definitions(&f, f.tree.root_node(), &mut all);
                Rc::new(all)
            })
            .clone();
        // Judgements hold for the functions known when made (see `last_launch`).
        self.fresh_judgements();
        !after.iter().any(|n| self.node_may_launch(&f, *n, &local))
    }

    /// Forget the judgements made for other statements, and the settled ones
    /// once a function was defined or a file read since; the variables that
    /// may hold a launcher are those of every file read.
    fn fresh_judgements(&mut self) {
        self.refresh_launcher_vars();
        self.reach.functions.clear();
        self.reach.local_functions.clear();
        let now = (self.definitions, self.files.len());
        if self.reach.settled_at != now {
            self.reach.settled.clear();
            self.reach.settled_at = now;
        }
    }

    fn node_may_launch(&mut self, f: &File, node: Node, local: &Definitions) -> bool {
        if node.kind() == "function_definition" {
            // Defining is not running: a call is judged where it is made.
            return false;
        }
        if node.kind() == "command" && self.command_may_launch(f, node, local) {
            return true;
        }
        may_hold_commands(f, node) && named_children(node).into_iter().any(|c| self.node_may_launch(f, c, local))
    }

    fn command_may_launch(&mut self, f: &File, node: Node, local: &Definitions) -> bool {
        let text = &f.text[node.byte_range()];
        if names_a_launcher(text) {
            return true;
        }
        let Some(name) = node.child_by_field_name("name") else { return false };
        let name = &f.text[name.byte_range()];
        let program = name.rsplit('/').next().unwrap_or(name);
        // `trap 'handler' EXIT`, `eval 'literal code'`: the code is in the
        // words as written, so it is judged as code, not as opaque.
        if matches!(program, "trap" | "eval") {
            return match literal_arguments(f, node) {
                Some(code) => self.code_may_launch(f, &code, local),
                None => true,
            };
        }
        if OPAQUE.contains(&program) || name.contains(['`']) || name.contains("$(") {
            return true;
        }
        // A program held in a variable: a launch only if the variable may hold
        // a launcher's name (an unknown value is never read as one).
        if name.contains('$') {
            return self.expands_launcher_variable(text);
        }
        // A wrapper or an interpreter whose words expand a variable that may
        // hold a launcher's name (`python3 -m $SERVER_MODULE`).
        let program = name.rsplit('/').next().unwrap_or(name);
        if (super::launch::is_python(program) || super::launch::is_wrapper(program)) && self.expands_launcher_variable(text) {
            return true;
        }
        self.function_may_launch(f, name, local).unwrap_or(false)
    }

    /// Whether the function `name` may launch; `None` when no function of
    /// that name is known.
    fn function_may_launch(&mut self, f: &File, name: &str, local: &Definitions) -> Option<bool> {
        if let Some(&(start, end)) = local.get(name) {
            // Defined further on in the script itself, not yet known to the evaluator.
            let key = (f as *const File as usize, start);
            if let Some(known) = self.reach.local_functions.get(&key) {
                return Some(*known);
            }
            self.reach.local_functions.insert(key, false);
            let may = match definition_at(f, start, end) {
                Some(def) => self.body_may_launch(f, def, local),
                None => true,
            };
            self.reach.local_functions.insert(key, may);
            return Some(may);
        }
        match self.functions.get(name).copied() {
            Some((file, start, end)) => {
                let key = (file, start);
                if let Some(known) = self.reach.settled.get(&key) {
                    return Some(*known);
                }
                if let Some(known) = self.reach.functions.get(&key) {
                    if self.reach.judging.contains(&key) {
                        self.reach.provisional += 1;
                    }
                    return Some(*known);
                }
                // A call cycle is judged "no launch" while it is being judged:
                // a launch inside it is found on its own text.
                self.reach.functions.insert(key, false);
                let def_file = self.files[file].clone();
                let Some(def) = definition_at(&def_file, start, end) else {
                    self.reach.functions.insert(key, true);
                    return Some(true);
                };
                let mut inner = Definitions::new();
                collect_definitions(&def_file, def, &mut inner);
                self.reach.judging.insert(key);
                let provisional = self.reach.provisional;
                let may = self.body_may_launch(&def_file, def, &inner);
                self.reach.judging.remove(&key);
                self.reach.functions.insert(key, may);
                if may || self.reach.provisional == provisional {
                    self.reach.settled.insert(key, may);
                }
                Some(may)
            }
            None => None,
        }
    }

    /// Code known as text (a trap's handler, an eval of literal words): it
    /// may launch when it names a launcher, runs code the words do not show
    /// (`eval`, `source`, `bash`, ...), or calls a function that may.
    fn code_may_launch(&mut self, f: &File, code: &str, local: &Definitions) -> bool {
        if names_a_launcher(code) || code.contains(['$', '`']) {
            return true;
        }
        let words = code.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '{' | '}'));
        words
            .filter(|w| !w.is_empty())
            .any(|w| OPAQUE.contains(&w.rsplit('/').next().unwrap_or(w)) || self.function_may_launch(f, w, local).unwrap_or(false))
    }

    /// Whether `text` expands a variable of [`LaunchReach::launcher_vars`] or a
    /// positional parameter (a function's caller names the launcher then, and
    /// its own call is judged on that).
    fn expands_launcher_variable(&self, text: &str) -> bool {
        let positional = text
            .match_indices('$')
            .any(|(i, _)| text[i + 1..].trim_start_matches('{').starts_with(|c: char| matches!(c, '@' | '*') || c.is_ascii_digit()));
        positional || mentions_any(text, &self.reach.launcher_vars)
    }

    /// [`Interp::launcher_variables`], computed again only once a file was read.
    pub(super) fn refresh_launcher_vars(&mut self) -> &HashSet<String> {
        if self.reach.launcher_vars_at != Some(self.files.len()) {
            self.reach.launcher_vars = self.launcher_variables();
            self.reach.launcher_vars_at = Some(self.files.len());
        }
        &self.reach.launcher_vars
    }

    /// Every variable a read file assigns (or loops over) a text naming a
    /// launcher, or naming such a variable (`CMD=("$PY" -m "$MODULE")`).
    fn launcher_variables(&mut self) -> HashSet<String> {
        let facts = self.text_facts();
        let mut out: HashSet<String> = facts.naming_a_launcher.clone();
        loop {
            let before = out.len();
            for (name, texts) in &facts.assigned {
                if !out.contains(name) && texts.iter().any(|text| mentions_any(text, &out)) {
                    out.insert(name.clone());
                }
            }
            if out.len() == before {
                return out;
            }
        }
    }

    fn body_may_launch(&mut self, f: &File, def: Node, local: &Definitions) -> bool {
        match def.child_by_field_name("body") {
            Some(body) => named_children(body).into_iter().any(|c| self.node_may_launch(f, c, local)),
            None => false,
        }
    }
}

/// The words after a command's name, as bash reads them, when none expands
/// anything (`trap '_stop_monitor' EXIT`, `eval 'set -x'`); `None` otherwise.
fn literal_arguments(f: &File, node: Node) -> Option<String> {
    let mut out = Vec::new();
    for arg in named_children(node).into_iter().filter(|c| c.kind() != "command_name") {
        let text = &f.text[arg.byte_range()];
        let plain = match arg.kind() {
            "raw_string" => text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')),
            "string" if !text.contains(['$', '`', '\\']) => text.strip_prefix('"').and_then(|t| t.strip_suffix('"')),
            "word" if !text.contains(['$', '`', '\\', '*', '?', '[']) => Some(text),
            "file_redirect" | "herestring_redirect" => continue,
            _ => None,
        }?;
        out.push(plain.to_string());
    }
    Some(out.join(" "))
}

/// Functions defined among `node` and below, by name.
fn collect_definitions(f: &File, node: Node, out: &mut Definitions) {
    if node.kind() == "function_definition" {
        if let Some(name) = node.child_by_field_name("name") {
            out.insert(f.text[name.byte_range()].to_string(), (node.start_byte(), node.end_byte()));
        }
    }
    if may_hold_commands(f, node) {
        for c in named_children(node) {
            collect_definitions(f, c, out);
        }
    }
}

/// Whether a command (or a function definition) may be written below `node`.
/// A statement may hold others; a command, an assignment or a word only
/// through a substitution (`$(...)`, `` `...` ``, `<(...)`), which its text
/// shows. Walking every word of every command of a 2,000-line library, for
/// each script that sources it, was most of what judging launches cost.
fn may_hold_commands(f: &File, node: Node) -> bool {
    match node.kind() {
        "command"
        | "variable_assignment"
        | "declaration_command"
        | "unset_command"
        | "test_command"
        | "word"
        | "string"
        | "raw_string"
        | "concatenation"
        | "simple_expansion"
        | "expansion"
        | "number"
        | "heredoc_body"
        | "comment" => {
            let text = &f.text[node.byte_range()];
            memchr::memmem::find(text.as_bytes(), b"$(").is_some() || text.contains(['`']) || text.contains("<(") || text.contains(">(")
        }
        _ => true,
    }
}

/// The function definition at `start..end` of the file.
fn definition_at(f: &File, start: usize, end: usize) -> Option<Node<'_>> {
    let inner = f.tree.root_node().descendant_for_byte_range(start, end)?;
    std::iter::successors(Some(inner), |n| n.parent()).find(|n| n.kind() == "function_definition")
}

/// The text names a launcher's module, or its program followed by its
/// subcommand or by a word only known when run (`vllm serve`, `vllm "$SUB"`).
pub(super) fn names_a_launcher(text: &str) -> bool {
    // An engine not read yet is found by its program alone (`trtllm-serve MODEL`).
    let unread = crate::profiles::unread_servers().flat_map(|(_, s)| s.launchers.iter()).filter_map(|l| l.program());
    if unread.into_iter().any(|(program, _)| word_at(text, program).next().is_some()) {
        return true;
    }
    crate::profiles::script_servers().flat_map(|(_, s)| s.launchers.iter()).any(|l| match (l.program(), &l.form) {
        // A group run with its default command is named by its program alone.
        (Some((program, _)), crate::profiles::LaunchForm::DefaultCommand { .. }) => word_at(text, program).next().is_some(),
        (Some((program, subcommand)), _) => word_at(text, program).any(|after| {
            let next = text[after..].trim_start_matches([' ', '\t', '\\', '\n', '"', '\'']);
            next.starts_with('$') || next.strip_prefix(subcommand).is_some_and(|rest| rest.chars().next().is_none_or(|c| !is_word_char(c)))
        }),
        (None, crate::profiles::LaunchForm::PythonModule(module)) => word_at(text, module).next().is_some(),
        _ => false,
    })
}

/// The text expands one of `names` (`$NAME`, `${NAME...}`).
fn mentions_any(text: &str, names: &HashSet<String>) -> bool {
    !names.is_empty()
        && text.match_indices('$').any(|(i, _)| {
            let rest = text[i + 1..].trim_start_matches('{');
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            names.contains(&name)
        })
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Where `needle` ends, at each place it stands as a word (a path's last part counts).
fn word_at<'t>(text: &'t str, needle: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(needle).filter_map(move |(i, m)| {
        let before = text[..i].chars().next_back();
        let after = text[i + m.len()..].chars().next();
        let starts = before.is_none_or(|c| !is_word_char(c) && c != '.' || c == '/');
        (starts && after.is_none_or(|c| !is_word_char(c) && c != '.')).then_some(i + m.len())
    })
}

#[cfg(test)]
mod tests {
    use super::names_a_launcher;

    #[test]
    fn a_launcher_is_named_as_a_word_with_its_subcommand() {
        assert!(names_a_launcher("python3 -m sglang.launch_server --tp 8"));
        assert!(names_a_launcher("/opt/venv/bin/vllm serve /models/x"));
        assert!(names_a_launcher("vllm \"$SUBCOMMAND\" --tp 8"));
        // A client naming the engine as a backend starts no server.
        assert!(!names_a_launcher("run_benchmark_serving --backend vllm --port 8000"));
        assert!(!names_a_launcher("pip install vllm==0.9.0"));
        assert!(!names_a_launcher("python3 -m sglang.launch_server_helper"));
        assert!(!names_a_launcher("python3 -m mysglang.launch_server"));
        // An engine whose command lines are not read yet: by its program alone.
        assert!(names_a_launcher("mpirun -n 1 trtllm-serve /models/x --port 8000"));
    }
}
