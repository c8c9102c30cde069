//! What the files read so far assign, define and launch with, by name:
//! read once per file (files are only ever added) for the judgements that
//! need it across all of them (which variables may hold a launcher, which can
//! reach a launch).

use super::reach::names_a_launcher;
use super::{named_children, File, Interp};
use std::collections::{HashMap, HashSet};

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
}

impl TextFacts {
    fn read(&mut self, file: &File) {
        let mut stack = vec![file.tree.root_node()];
        while let Some(node) = stack.pop() {
            let text = &file.text[node.byte_range()];
            match node.kind() {
                "variable_assignment" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        let name = name.child_by_field_name("name").unwrap_or(name);
                        self.assigned.entry(file.text[name.byte_range()].to_string()).or_default().push(text.to_string());
                    }
                }
                "for_statement" => {
                    if let Some(name) = node.child_by_field_name("variable") {
                        self.assigned.entry(file.text[name.byte_range()].to_string()).or_default().push(text.to_string());
                    }
                }
                "function_definition" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        self.bodies.insert(file.text[name.byte_range()].to_string(), text.to_string());
                    }
                }
                "command" if names_a_launcher(text) => self.seeds.extend(identifiers(text)),
                // What a here-document writes to a file may reach a launch
                // that names the file (`--config cfg.yml`).
                "redirected_statement" if super::written::heredoc_write(&file.text, node).is_some() => self.seeds.extend(identifiers(text)),
                _ => {}
            }
            stack.extend(named_children(node));
        }
    }
}

impl Interp<'_> {
    /// The facts of every file read so far (the new ones read now).
    pub(super) fn text_facts(&mut self) -> &TextFacts {
        let read = self.text_facts.files;
        for file in &self.files[read..] {
            self.text_facts.read(file);
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
