//! Small structural helpers over one parsed file: its classes and functions,
//! parameter lists, call-argument binding, and the `os.environ` idioms.

use std::collections::BTreeMap;

use tree_sitter::Node;

use crate::extract::python::{named_children, PyFile};

/// A class defined at the top level of a file.
pub(crate) struct ClassDef<'t> {
    pub name: String,
    /// Base classes as written (`EnvField`, `_DeprecatedEnvFallback`).
    pub bases: Vec<String>,
    pub body: Node<'t>,
}

/// The top-level classes and functions of one file, by name.
pub(crate) struct FileIndex<'t> {
    pub classes: BTreeMap<String, ClassDef<'t>>,
    pub functions: BTreeMap<String, Node<'t>>,
}

impl<'t> FileIndex<'t> {
    pub(crate) fn new(file: &'t PyFile) -> Self {
        let mut classes = BTreeMap::new();
        let mut functions = BTreeMap::new();
        for stmt in named_children(file.root()) {
            let def = undecorated(stmt);
            let Some(name) = def.child_by_field_name("name").map(|n| file.text(n).to_string()) else {
                continue;
            };
            match def.kind() {
                "class_definition" => {
                    let bases = def
                        .child_by_field_name("superclasses")
                        .map(|args| {
                            named_children(args)
                                .into_iter()
                                .filter(|a| matches!(a.kind(), "identifier" | "attribute"))
                                .map(|a| file.text(a).to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    if let Some(body) = def.child_by_field_name("body") {
                        classes.insert(name.clone(), ClassDef { name, bases, body });
                    }
                }
                "function_definition" => {
                    functions.insert(name, def);
                }
                _ => {}
            }
        }
        FileIndex { classes, functions }
    }

    /// The class and its in-file ancestors, depth-first left to right, each once.
    /// Bases defined elsewhere are not followed.
    pub(crate) fn lineage(&self, class: &str) -> Vec<&ClassDef<'t>> {
        let mut out: Vec<&ClassDef> = Vec::new();
        let mut stack = vec![class.to_string()];
        while let Some(name) = stack.pop() {
            let Some(def) = self.classes.get(&name) else {
                continue;
            };
            if out.iter().any(|c| c.name == def.name) {
                continue;
            }
            out.push(def);
            for base in def.bases.iter().rev() {
                stack.push(base.clone());
            }
        }
        out
    }

    /// Methods of a class and its in-file ancestors.
    pub(crate) fn methods(&self, class: &str) -> Vec<Node<'t>> {
        self.lineage(class)
            .into_iter()
            .flat_map(|c| named_children(c.body))
            .map(undecorated)
            .filter(|d| d.kind() == "function_definition")
            .collect()
    }

    /// The first `name` method found along the lineage (`__init__`).
    pub(crate) fn method(&self, file: &PyFile, class: &str, name: &str) -> Option<Node<'t>> {
        self.methods(class).into_iter().find(|m| m.child_by_field_name("name").is_some_and(|n| file.text(n) == name))
    }
}

/// `@decorator def f` → `def f`.
pub(super) fn undecorated(node: Node) -> Node {
    if node.kind() == "decorated_definition" {
        node.child_by_field_name("definition").unwrap_or(node)
    } else {
        node
    }
}

/// Parameter names of a function, without `self`/`cls` when `is_method`,
/// and without `*args`/`**kwargs`.
pub(super) fn param_names(file: &PyFile, func: Node, is_method: bool) -> Vec<String> {
    let Some(params) = func.child_by_field_name("parameters") else {
        return Vec::new();
    };
    let mut names: Vec<String> = named_children(params)
        .into_iter()
        .filter_map(|p| match p.kind() {
            "identifier" => Some(p),
            "typed_parameter" => named_children(p).into_iter().find(|c| c.kind() == "identifier"),
            "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name"),
            _ => None,
        })
        .map(|n| file.text(n).to_string())
        .collect();
    if is_method && !names.is_empty() {
        names.remove(0);
    }
    names
}

/// Bind a call's arguments to parameter names: positional by order, keywords by
/// name. Arguments that fit no parameter (`*args`, unknown keywords) are dropped.
pub(super) fn bind_arguments<'t>(file: &PyFile, call: Node<'t>, params: &[String]) -> BTreeMap<String, Node<'t>> {
    let mut bound = BTreeMap::new();
    let Some(args) = call.child_by_field_name("arguments") else {
        return bound;
    };
    let mut position = 0;
    for arg in named_children(args) {
        match arg.kind() {
            "keyword_argument" => {
                if let (Some(name), Some(value)) = (arg.child_by_field_name("name"), arg.child_by_field_name("value")) {
                    bound.insert(file.text(name).to_string(), value);
                }
            }
            "list_splat" | "dictionary_splat" => {}
            _ => {
                if let Some(param) = params.get(position) {
                    bound.insert(param.clone(), arg);
                }
                position += 1;
            }
        }
    }
    bound
}

/// `os.environ` (or `environ` imported from `os`).
pub(super) fn is_environ(file: &PyFile, node: Node) -> bool {
    matches!(node.kind(), "attribute" | "identifier") && matches!(file.text(node), "os.environ" | "environ")
}

/// Callee text of a call without whitespace (`os.environ.get`).
pub(super) fn callee(file: &PyFile, call: Node) -> Option<String> {
    let func = call.child_by_field_name("function")?;
    Some(file.text(func).split_whitespace().collect())
}

/// Whether a call emits a message: `warnings.warn`, `logger.warning`, `print`, ...
pub(super) fn is_message_call(file: &PyFile, call: Node) -> bool {
    let Some(name) = callee(file, call) else {
        return false;
    };
    let last = name.rsplit('.').next().unwrap_or(&name);
    let receiver = name.rsplit_once('.').map(|(r, _)| r).unwrap_or("");
    last.contains("warn")
        || matches!(last, "print" | "error" | "info" | "critical" | "exception") && (receiver.is_empty() || receiver.contains("log"))
}

/// The first positional argument of a call.
pub(super) fn first_argument<'t>(call: Node<'t>) -> Option<Node<'t>> {
    let args = call.child_by_field_name("arguments")?;
    named_children(args).into_iter().find(|a| a.kind() != "keyword_argument")
}

/// A parenthesised expression's content (`(x)` → `x`).
pub(super) fn unparenthesized(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" {
        let inner = named_children(node);
        if inner.len() != 1 {
            break;
        }
        node = inner[0];
    }
    node
}

/// The right-hand side of an `x = value` / `x: T = value` statement, with its target.
pub(super) fn assignment<'t>(stmt: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    let assign = if stmt.kind() == "expression_statement" { *named_children(stmt).first()? } else { stmt };
    if assign.kind() != "assignment" {
        return None;
    }
    Some((assign.child_by_field_name("left")?, assign.child_by_field_name("right")?))
}

/// `self.attr` → `attr`.
pub(super) fn self_attribute(file: &PyFile, node: Node) -> Option<String> {
    if node.kind() != "attribute" {
        return None;
    }
    let object = node.child_by_field_name("object")?;
    let attribute = node.child_by_field_name("attribute")?;
    (file.text(object) == "self").then(|| file.text(attribute).to_string())
}
