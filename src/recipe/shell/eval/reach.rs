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
use tree_sitter::Node;

/// Programs whose run reads code the evaluator cannot see from the words alone.
const OPAQUE: &[&str] = &["eval", "source", ".", "bash", "sh", "exec", "trap", "xargs", "parallel"];

/// What is known of which functions may launch, by their definition's place.
#[derive(Default)]
pub(super) struct LaunchReach {
    functions: HashMap<(usize, usize), bool>,
    /// Variables some read file assigns a text naming a launcher: only
    /// through them can a word the evaluator expands become one.
    launcher_vars: HashSet<String>,
}

impl Interp<'_> {
    /// The index of the last of `nodes` (statements of `file`) that may start
    /// an engine, with the functions known now.
    pub(super) fn last_launch(&mut self, f: &File, nodes: &[Node]) -> Option<usize> {
        // A judgement of a function holds only for the functions known when it
        // was made: a `source` run since may define the ones it calls.
        self.reach.functions.clear();
        self.reach.launcher_vars = self.launcher_variables();
        let mut local = HashMap::new();
        for node in nodes {
            collect_definitions(f, *node, &mut local);
        }
        (0..nodes.len()).rev().find(|&i| self.node_may_launch(f, nodes[i], &local))
    }

    fn node_may_launch(&mut self, f: &File, node: Node, local: &HashMap<String, Node>) -> bool {
        if node.kind() == "function_definition" {
            // Defining is not running: a call is judged where it is made.
            return false;
        }
        if node.kind() == "command" && self.command_may_launch(f, node, local) {
            return true;
        }
        named_children(node).into_iter().any(|c| self.node_may_launch(f, c, local))
    }

    fn command_may_launch(&mut self, f: &File, node: Node, local: &HashMap<String, Node>) -> bool {
        let text = &f.text[node.byte_range()];
        if names_a_launcher(text) {
            return true;
        }
        let Some(name) = node.child_by_field_name("name") else { return false };
        let name = &f.text[name.byte_range()];
        if OPAQUE.contains(&name.rsplit('/').next().unwrap_or(name)) || name.contains(['`']) || name.contains("$(") {
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
        if let Some(def) = local.get(name) {
            // Defined further on in the script itself, not yet known to the evaluator.
            let key = (usize::MAX, def.start_byte());
            if let Some(known) = self.reach.functions.get(&key) {
                return *known;
            }
            self.reach.functions.insert(key, false);
            let may = self.body_may_launch(f, *def, local);
            self.reach.functions.insert(key, may);
            return may;
        }
        match self.functions.get(name).copied() {
            Some((file, start, end)) => {
                if let Some(known) = self.reach.functions.get(&(file, start)) {
                    return *known;
                }
                // A call cycle is judged "no launch" while it is being judged:
                // a launch inside it is found on its own text.
                self.reach.functions.insert((file, start), false);
                let def_file = self.files[file].clone();
                let Some(def) = def_file
                    .tree
                    .root_node()
                    .descendant_for_byte_range(start, end)
                    .and_then(|n| std::iter::successors(Some(n), |n| n.parent()).find(|n| n.kind() == "function_definition"))
                else {
                    self.reach.functions.insert((file, start), true);
                    return true;
                };
                let mut inner = HashMap::new();
                collect_definitions(&def_file, def, &mut inner);
                let may = self.body_may_launch(&def_file, def, &inner);
                self.reach.functions.insert((file, start), may);
                may
            }
            None => false,
        }
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

    /// Every variable a read file assigns (or loops over) a text naming a
    /// launcher, or naming such a variable (`CMD=("$PY" -m "$MODULE")`).
    fn launcher_variables(&self) -> HashSet<String> {
        let mut assignments: Vec<(String, String)> = Vec::new();
        for file in &self.files {
            let mut stack = vec![file.tree.root_node()];
            while let Some(node) = stack.pop() {
                let named = match node.kind() {
                    "variable_assignment" => node.child_by_field_name("name"),
                    "for_statement" => node.child_by_field_name("variable"),
                    _ => None,
                };
                if let Some(name) = named {
                    assignments.push((file.text[name.byte_range()].to_string(), file.text[node.byte_range()].to_string()));
                }
                stack.extend(named_children(node));
            }
        }
        let mut out: HashSet<String> = HashSet::new();
        loop {
            let before = out.len();
            for (name, text) in &assignments {
                if !out.contains(name) && (names_a_launcher(text) || mentions_any(text, &out)) {
                    out.insert(name.clone());
                }
            }
            if out.len() == before {
                return out;
            }
        }
    }

    fn body_may_launch(&mut self, f: &File, def: Node, local: &HashMap<String, Node>) -> bool {
        match def.child_by_field_name("body") {
            Some(body) => named_children(body).into_iter().any(|c| self.node_may_launch(f, c, local)),
            None => false,
        }
    }
}

/// Functions defined among `node` and below, by name.
fn collect_definitions<'t>(f: &File, node: Node<'t>, out: &mut HashMap<String, Node<'t>>) {
    if node.kind() == "function_definition" {
        if let Some(name) = node.child_by_field_name("name") {
            out.insert(f.text[name.byte_range()].to_string(), node);
        }
    }
    for c in named_children(node) {
        collect_definitions(f, c, out);
    }
}

/// The text names a launcher's module, or its program followed by its
/// subcommand or by a word only known when run (`vllm serve`, `vllm "$SUB"`).
fn names_a_launcher(text: &str) -> bool {
    // An engine not read yet is found by its program alone (`trtllm-serve MODEL`).
    let unread = crate::profiles::unread_servers().flat_map(|(_, s)| s.launchers.iter()).filter_map(|l| l.program());
    if unread.into_iter().any(|(program, _)| word_at(text, program).next().is_some()) {
        return true;
    }
    crate::profiles::script_servers().flat_map(|(_, s)| s.launchers.iter()).any(|l| match (l.program(), &l.form) {
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
