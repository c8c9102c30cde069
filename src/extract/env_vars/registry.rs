//! The typed env registry: a class whose body declares one descriptor per
//! variable (`SGLANG_LOG_GC = EnvBool(False)`).
//!
//! Nothing here knows the names `Envs` or `EnvBool`: a *field class* is any
//! class of the file whose lineage defines `__set_name__` (the descriptor hook
//! that gives each field its variable name), and a *registry* is any other class
//! whose body assigns instances of field classes. A field class that reads a
//! second variable through one of its constructor arguments
//! (`os.getenv(self.deprecated_name)`) declares an alias.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::literal::{known_value, KnownNames};
use super::reads::raw_read;
use super::syntax::{assignment, bind_arguments, callee, param_names, self_attribute, undecorated, FileIndex};
use crate::extract::python::{named_children, walk, PyFile};
use crate::surface::{EnvDeprecation, EnvDeprecationKind, EnvVar, Known};

/// How one field class is constructed.
struct FieldClass {
    params: Vec<String>,
    /// The parameter that carries the default (`default`, else the first).
    default_param: Option<String>,
    /// Parameters naming a second variable the field also reads.
    alias_params: Vec<String>,
}

/// Every registry field of the file, with alias names as their own entries.
pub(crate) fn registry_vars(file: &PyFile, index: &FileIndex, names: &KnownNames) -> Vec<EnvVar> {
    let field_classes = field_classes(file, index);
    let mut vars = Vec::new();
    for class in index.classes.values() {
        if field_classes.contains_key(&class.name) {
            continue;
        }
        for (stmt, target, value, class_name) in field_declarations(file, class.body, &field_classes) {
            let field = &field_classes[&class_name];
            let name = file.text(target).to_string();
            let args = bind_arguments(file, value, &field.params);
            let default = match field.default_param.as_ref().and_then(|p| args.get(p)) {
                Some(node) => known_value(file, *node, names),
                None => Known::dynamic(file.text(value)),
            };
            for alias_param in &field.alias_params {
                let Some(alias) = args.get(alias_param).and_then(|n| file.string_value(*n)) else {
                    continue;
                };
                vars.push(EnvVar {
                    name: alias,
                    kind: class_name.clone(),
                    default: default.clone(),
                    deprecated: Some(EnvDeprecation {
                        kind: EnvDeprecationKind::Alias,
                        replacement: Some(name.clone()),
                        transform: None,
                        message: None,
                    }),
                    evidence: file.evidence(stmt),
                });
            }
            vars.push(EnvVar { name, kind: class_name, default, deprecated: None, evidence: file.evidence(stmt) });
        }
    }
    vars
}

/// `NAME = FieldClass(...)` statements of a class body: (statement, target, call, field class).
fn field_declarations<'t>(
    file: &PyFile,
    body: Node<'t>,
    field_classes: &BTreeMap<String, FieldClass>,
) -> Vec<(Node<'t>, Node<'t>, Node<'t>, String)> {
    body_statements(body)
        .into_iter()
        .filter_map(|stmt| {
            let (target, value) = assignment(stmt)?;
            if target.kind() != "identifier" || value.kind() != "call" {
                return None;
            }
            let class_name = callee(file, value)?;
            field_classes.contains_key(&class_name).then_some((stmt, target, value, class_name))
        })
        .collect()
}

/// Module-level names bound to an instance of a registry class (`envs = Envs()`).
pub(crate) fn instance_names(file: &PyFile, index: &FileIndex) -> Vec<String> {
    let field_classes = field_classes(file, index);
    let is_registry = |class: &str| {
        !field_classes.contains_key(class)
            && index.classes.get(class).is_some_and(|c| !field_declarations(file, c.body, &field_classes).is_empty())
    };
    named_children(file.root())
        .into_iter()
        .filter_map(|stmt| {
            let (target, value) = assignment(stmt)?;
            let class = callee(file, value).filter(|_| value.kind() == "call")?;
            (target.kind() == "identifier" && is_registry(&class)).then(|| file.text(target).to_string())
        })
        .collect()
}

/// Class attributes with literal values (`GateGemvMode.PAIR` → 1), so defaults
/// written as enum members of the same file stay literal.
pub(crate) fn class_constants(file: &PyFile, index: &FileIndex) -> KnownNames {
    let mut known = KnownNames::new();
    let empty = KnownNames::new();
    for class in index.classes.values() {
        for stmt in named_children(class.body) {
            let Some((target, value)) = assignment(stmt) else {
                continue;
            };
            if target.kind() != "identifier" {
                continue;
            }
            if let Some(v) = super::literal::literal(file, value, &empty) {
                known.insert(format!("{}.{}", class.name, file.text(target)), v);
            }
        }
    }
    known
}

fn field_classes(file: &PyFile, index: &FileIndex) -> BTreeMap<String, FieldClass> {
    let defines = |class: &str, method: &str| {
        index.classes[class].body.named_children(&mut index.classes[class].body.walk()).any(|d| {
            let d = undecorated(d);
            d.kind() == "function_definition" && d.child_by_field_name("name").is_some_and(|n| file.text(n) == method)
        })
    };
    let mut out = BTreeMap::new();
    for name in index.classes.keys() {
        let lineage = index.lineage(name);
        if !lineage.iter().any(|c| defines(&c.name, "__set_name__")) {
            continue;
        }
        let (params, attr_of_param) = match index.method(file, name, "__init__") {
            Some(init) => (param_names(file, init, true), attributes_from_params(file, init)),
            None => (Vec::new(), BTreeMap::new()),
        };
        let read_attrs = env_read_attributes(file, &index.methods(name));
        let alias_params = params.iter().filter(|p| attr_of_param.get(*p).is_some_and(|a| read_attrs.contains(a))).cloned().collect();
        let default_param = params.iter().find(|p| *p == "default").or(params.first()).cloned();
        out.insert(name.clone(), FieldClass { params, default_param, alias_params });
    }
    out
}

/// `self.attr = param` assignments of a constructor: param → attr.
pub(super) fn attributes_from_params(file: &PyFile, init: Node) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(init, |n| {
        if n.kind() == "assignment" {
            if let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) {
                if let Some(attr) = self_attribute(file, left) {
                    if right.kind() == "identifier" {
                        out.insert(file.text(right).to_string(), attr);
                    }
                }
            }
        }
        true
    });
    out
}

/// Attributes used as the name in an environment read (`os.getenv(self.x)`).
fn env_read_attributes(file: &PyFile, methods: &[Node]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for method in methods {
        walk(*method, |n| {
            if let Some(read) = raw_read(file, n) {
                if let Some(attr) = read.key.and_then(|k| self_attribute(file, k)) {
                    out.insert(attr);
                }
            }
            true
        });
    }
    out
}

/// Statements of a class body, looking into `if`/`try` blocks (fields declared
/// conditionally are still fields).
fn body_statements(body: Node) -> Vec<Node> {
    let mut out = Vec::new();
    collect_statements(body, &mut out);
    out
}

fn collect_statements<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    for child in named_children(node) {
        match child.kind() {
            "block" | "if_statement" | "try_statement" | "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
                collect_statements(child, out)
            }
            _ if node.kind() == "block" => out.push(child),
            // Conditions and exception types of the clauses above.
            _ => {}
        }
    }
}
