//! Parser classes that register the other spelling of every long option
//! themselves: ATOM's `FlexibleArgumentParser.add_argument` adds `--a-b` beside
//! `--a_b` (and the reverse) before argparse registers the action, so both are
//! option strings of the same action, with `dest` from the first.
//!
//! Recognised by the code that does it, not by the class's name: an
//! `add_argument` override (on the class or an engine base) that calls both
//! `.replace("_", "-")` and `.replace("-", "_")`.

use std::collections::HashSet;

use super::super::consts::{class_body, find_definition, ClassRef, ConstEval, Scope, Val};
use super::super::python::{named_children, walk};
use super::argparse::ArgCall;
use crate::surface::Evidence;

/// Where `class` (or an engine base) adds both spellings in `add_argument`.
pub(super) fn both_spellings(ev: &ConstEval, class: &ClassRef) -> Option<Evidence> {
    let mut todo = vec![class.clone()];
    let mut seen = Vec::new();
    while let Some(c) = todo.pop() {
        if seen.contains(&c) || seen.len() > 16 {
            continue;
        }
        seen.push(c.clone());
        let file = ev.module_file(&c.module)?;
        let body = ev.class_def(&file, &c.name).and_then(class_body)?;
        if let Some(def) = find_definition(&file.source, body, "add_argument") {
            let scope = Scope::module(&c.module);
            let (mut to_dash, mut to_underscore) = (false, false);
            walk(def, |node| {
                if node.kind() == "call" && node.child_by_field_name("function").is_some_and(|f| file.text(f).ends_with(".replace")) {
                    let args = node.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                    let strings: Vec<String> = args
                        .iter()
                        .filter_map(|a| match ev.eval(&file, *a, scope) {
                            Ok(Val::Str(s)) => Some(s),
                            _ => None,
                        })
                        .collect();
                    match strings.as_slice() {
                        [from, to] if from == "_" && to == "-" => to_dash = true,
                        [from, to] if from == "-" && to == "_" => to_underscore = true,
                        _ => {}
                    }
                }
                true
            });
            // An override that does something else decides alone.
            return (to_dash && to_underscore).then(|| file.evidence(def));
        }
        todo.extend(ev.class_bases(&c).into_iter().filter_map(|b| match b {
            Val::Class(b) => Some(b),
            _ => None,
        }));
    }
    None
}

/// Each registration's long options with their other spelling added after
/// them, as the override does: not when the call already names it, nor when an
/// earlier registration has it (the real option wins over the alias). Groups
/// register with argparse's own `add_argument`: one spelling.
pub(super) fn expand(calls: &mut [ArgCall]) {
    let mut registered: HashSet<String> = ["-h", "--help"].map(String::from).into();
    for call in calls.iter_mut() {
        if call.on_group {
            registered.extend(call.names.iter().cloned());
            continue;
        }
        let mut expanded = call.names.clone();
        for name in &call.names {
            let Some(stem) = name.strip_prefix("--") else { continue };
            for alt in [format!("--{}", stem.replace('_', "-")), format!("--{}", stem.replace('-', "_"))] {
                if !expanded.contains(&alt) && !registered.contains(&alt) {
                    expanded.push(alt);
                }
            }
        }
        registered.extend(expanded.iter().cloned());
        call.names = expanded;
    }
}
