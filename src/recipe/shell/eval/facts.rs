//! What the files read so far assign, define and launch with, by name:
//! read once per file (files are only ever added) for the judgements that
//! need it across all of them (which variables may hold a launcher, which can
//! reach a launch).

use super::reach::names_a_launcher;
use super::{named_children, Interp};
use std::collections::{HashMap, HashSet};
use tree_sitter::Tree;

/// What one file assigns, defines and launches with. A file that scripts
/// source is read once per run (with its parse, see `sourced`): judging
/// launches asked for these facts of InferenceX's 2,000-line library in each
/// of the 250 scripts that source it.
#[derive(Default)]
pub(super) struct FileFacts {
    assigned: HashMap<String, Vec<String>>,
    bodies: HashMap<String, String>,
    seeds: HashSet<String>,
    /// Variables assigned a text that names a launcher.
    naming_a_launcher: HashSet<String>,
}

impl FileFacts {
    pub(super) fn read(tree: &Tree, text: &str) -> FileFacts {
        let mut facts = FileFacts::default();
        let assigned = |facts: &mut FileFacts, name: &str, statement: &str| {
            if names_a_launcher(statement) {
                facts.naming_a_launcher.insert(name.to_string());
            }
            facts.assigned.entry(name.to_string()).or_default().push(statement.to_string());
        };
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            let statement = &text[node.byte_range()];
            match node.kind() {
                "variable_assignment" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        let name = name.child_by_field_name("name").unwrap_or(name);
                        assigned(&mut facts, &text[name.byte_range()], statement);
                    }
                }
                "for_statement" => {
                    if let Some(name) = node.child_by_field_name("variable") {
                        assigned(&mut facts, &text[name.byte_range()], statement);
                    }
                }
                "function_definition" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        facts.bodies.insert(text[name.byte_range()].to_string(), statement.to_string());
                    }
                }
                "command" if names_a_launcher(statement) => facts.seeds.extend(identifiers(statement)),
                // What a here-document writes to a file may reach a launch
                // that names the file (`--config cfg.yml`).
                "redirected_statement" if super::written::heredoc_write(text, node).is_some() => facts.seeds.extend(identifiers(statement)),
                _ => {}
            }
            stack.extend(named_children(node));
        }
        facts
    }
}

/// The facts of every file read so far, by name.
#[derive(Default)]
pub(super) struct TextFacts {
    /// Files read (a prefix of `Interp::files`).
    files: usize,
    /// Per variable, the text of each statement that sets it (`X=...`, a
    /// `for X in ...` loop).
    pub(super) assigned: HashMap<String, Vec<String>>,
    /// Per function, its definition's text.
    pub(super) bodies: HashMap<String, String>,
    /// Every name a command that starts an engine mentions.
    pub(super) seeds: HashSet<String>,
    /// Variables some file assigns a text that names a launcher.
    pub(super) naming_a_launcher: HashSet<String>,
}

impl TextFacts {
    fn add(&mut self, file: &FileFacts) {
        for (name, texts) in &file.assigned {
            self.assigned.entry(name.clone()).or_default().extend(texts.iter().cloned());
        }
        self.bodies.extend(file.bodies.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.seeds.extend(file.seeds.iter().cloned());
        self.naming_a_launcher.extend(file.naming_a_launcher.iter().cloned());
    }
}

impl Interp<'_> {
    /// The facts of every file read so far (the new ones read now).
    pub(super) fn text_facts(&mut self) -> &TextFacts {
        let read = self.text_facts.files;
        for file in &self.files[read..] {
            match &file.facts {
                Some(shared) => self.text_facts.add(shared),
                None => self.text_facts.add(&FileFacts::read(&file.tree, &file.text)),
            }
        }
        self.text_facts.files = self.files.len();
        &self.text_facts
    }
}

/// Every shell-name-like token of `text` (an over-approximation of the names
/// it reads: `$X`, `${X:-d}`, `$((X * 2))`, `[[ -v X ]]`, a function's name).
pub(super) fn identifiers(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .map(str::to_string)
}
