//! Where a name gets bound in a module body or a class body, read straight off
//! the syntax tree (no index is kept: bodies are scanned per lookup, which is
//! cheap next to parsing).

use tree_sitter::Node;

use crate::extract::python::named_children;

/// How a statement binds a name.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BindingKind<'t> {
    /// `name = <value>` or `name: T = <value>`; `value` is `None` for a bare annotation.
    Assign {
        value: Option<Node<'t>>,
        annotation: Option<Node<'t>>,
    },
    /// `from <module_name> import <name> as alias` (`module_node` is the
    /// `dotted_name` or `relative_import`).
    ImportFrom {
        module_node: Node<'t>,
        name: Node<'t>,
    },
    /// `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`.
    Import {
        dotted: Node<'t>,
        aliased: bool,
    },
    Class(Node<'t>),
    Function(Node<'t>),
    /// Bound in a way folding does not follow (tuple unpacking, `for`, `with ... as`).
    Other(Node<'t>),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding<'t> {
    pub kind: BindingKind<'t>,
    /// The statement (for its position and evidence).
    pub stmt: Node<'t>,
    /// Inside an `if`/`for`/`while`/`try` handler: may not run, or run more than once.
    pub conditional: bool,
}

/// One statement of a body, with whether it runs unconditionally.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stmt<'t> {
    pub node: Node<'t>,
    pub conditional: bool,
}

/// Every statement of a body in source order, descending into compound
/// statements (their statements marked conditional) but not into functions
/// or classes (their bodies do not run when the module is imported).
pub(crate) fn flat_statements<'t>(body: Node<'t>) -> Vec<Stmt<'t>> {
    let mut out = Vec::new();
    collect(body, false, &mut out);
    out
}

fn collect<'t>(body: Node<'t>, conditional: bool, out: &mut Vec<Stmt<'t>>) {
    for stmt in named_children(body) {
        match stmt.kind() {
            "if_statement" | "for_statement" | "while_statement" => {
                out.push(Stmt { node: stmt, conditional });
                for part in named_children(stmt) {
                    match part.kind() {
                        "block" => collect(part, true, out),
                        "elif_clause" | "else_clause" => {
                            for b in named_children(part).into_iter().filter(|b| b.kind() == "block") {
                                collect(b, true, out);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "try_statement" => {
                // The `try` body runs (up to a raise); handlers may not.
                for part in named_children(stmt) {
                    match part.kind() {
                        "block" => collect(part, conditional, out),
                        "finally_clause" => {
                            for b in named_children(part).into_iter().filter(|b| b.kind() == "block") {
                                collect(b, conditional, out);
                            }
                        }
                        "except_clause" | "except_group_clause" | "else_clause" => {
                            for b in named_children(part).into_iter().filter(|b| b.kind() == "block") {
                                collect(b, true, out);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "with_statement" => {
                if let Some(b) = stmt.child_by_field_name("body") {
                    collect(b, conditional, out);
                }
            }
            _ => out.push(Stmt { node: stmt, conditional }),
        }
    }
}

/// The bindings one statement makes, as `(bound name, binding)`.
pub(crate) fn statement_bindings<'t>(src: &str, stmt: Stmt<'t>) -> Vec<(String, Binding<'t>)> {
    let mut out = Vec::new();
    let node = stmt.node;
    let mk = |kind| Binding { kind, stmt: node, conditional: stmt.conditional };
    let text = |n: Node| src[n.byte_range()].to_string();
    match node.kind() {
        "expression_statement" => {
            for expr in named_children(node) {
                if expr.kind() != "assignment" {
                    continue;
                }
                // Chained `a = b = value`: every target gets the innermost value.
                let mut targets = Vec::new();
                let mut cur = expr;
                loop {
                    if let Some(left) = cur.child_by_field_name("left") {
                        targets.push(left);
                    }
                    match cur.child_by_field_name("right") {
                        Some(r) if r.kind() == "assignment" => cur = r,
                        other => {
                            let annotation = cur.child_by_field_name("type").and_then(|t| named_children(t).first().copied());
                            for left in targets {
                                if left.kind() == "identifier" {
                                    out.push((text(left), mk(BindingKind::Assign { value: other, annotation })));
                                } else {
                                    for name in pattern_names(src, left) {
                                        out.push((name, mk(BindingKind::Other(left))));
                                    }
                                }
                            }
                            break;
                        }
                    }
                }
            }
        }
        "import_from_statement" => {
            let Some(module_node) = node.child_by_field_name("module_name") else {
                return out;
            };
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let (imported, bound) = match name.kind() {
                    "aliased_import" => (name.child_by_field_name("name"), name.child_by_field_name("alias").map(text)),
                    _ => (Some(name), Some(text(name))),
                };
                if let (Some(imported), Some(bound)) = (imported, bound) {
                    out.push((bound, mk(BindingKind::ImportFrom { module_node, name: imported })));
                }
            }
        }
        "import_statement" => {
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                match name.kind() {
                    "aliased_import" => {
                        if let (Some(d), Some(a)) = (name.child_by_field_name("name"), name.child_by_field_name("alias")) {
                            out.push((text(a), mk(BindingKind::Import { dotted: d, aliased: true })));
                        }
                    }
                    _ => {
                        let first = text(name).split('.').next().unwrap_or_default().to_string();
                        out.push((first, mk(BindingKind::Import { dotted: name, aliased: false })));
                    }
                }
            }
        }
        "class_definition" | "function_definition" | "decorated_definition" => {
            let def = if node.kind() == "decorated_definition" { node.child_by_field_name("definition") } else { Some(node) };
            if let Some(def) = def {
                if let Some(name) = def.child_by_field_name("name") {
                    let kind = if def.kind() == "class_definition" { BindingKind::Class(def) } else { BindingKind::Function(def) };
                    out.push((text(name), mk(kind)));
                }
            }
        }
        "for_statement" => {
            if let Some(left) = node.child_by_field_name("left") {
                for name in pattern_names(src, left) {
                    out.push((name, mk(BindingKind::Other(left))));
                }
            }
        }
        _ => {}
    }
    out
}

/// Identifiers bound by a target pattern (`a, (b, c)`).
fn pattern_names(src: &str, pattern: Node) -> Vec<String> {
    let mut names = Vec::new();
    crate::extract::python::walk(pattern, |n| {
        if n.kind() == "identifier" {
            names.push(src[n.byte_range()].to_string());
            return false;
        }
        // `a.b = ...` / `a[i] = ...` bind no name.
        !matches!(n.kind(), "attribute" | "subscript")
    });
    names
}

/// The binding of `name` that is in effect after the whole body ran: the last
/// one. `Err(())` when a conditional binding could override it.
pub(crate) fn final_binding<'t>(src: &str, body: Node<'t>, name: &str) -> Option<Result<Binding<'t>, Binding<'t>>> {
    let mut last: Option<Binding<'t>> = None;
    let mut overridden_by_conditional: Option<Binding<'t>> = None;
    for stmt in flat_statements(body).into_iter().filter(|s| may_bind(src, *s, name)) {
        for (bound, binding) in statement_bindings(src, stmt) {
            if bound != name {
                continue;
            }
            if binding.conditional {
                overridden_by_conditional = Some(binding);
            } else {
                last = Some(binding);
                overridden_by_conditional = None;
            }
        }
    }
    match (last, overridden_by_conditional) {
        (_, Some(cond)) => Some(Err(cond)),
        (Some(b), None) => Some(Ok(b)),
        (None, None) => None,
    }
}

/// Whether `stmt` can bind (or mention) `name`: every binding form spells the
/// name in the statement's text. Checked before [`statement_bindings`], which
/// walks and allocates: lookups scan every statement of a body, and this made
/// constant folding over `server_args.py` a tenth of a cold audit.
pub(crate) fn may_bind(src: &str, stmt: Stmt, name: &str) -> bool {
    src.get(stmt.node.byte_range()).is_some_and(|text| text.contains(name))
}

/// The body (`block`) of a class definition.
pub(crate) fn class_body(class: Node) -> Option<Node> {
    class.child_by_field_name("body")
}

/// Find the last class or function definition of `name` directly in a body.
/// A later plain rebinding (`X = make_struct(X)`) does not hide the definition.
pub(crate) fn find_definition<'t>(src: &str, body: Node<'t>, name: &str) -> Option<Node<'t>> {
    let mut found = None;
    for stmt in flat_statements(body).into_iter().filter(|s| may_bind(src, *s, name)) {
        for (bound, binding) in statement_bindings(src, stmt) {
            if bound == name {
                if let BindingKind::Class(def) | BindingKind::Function(def) = binding.kind {
                    found = Some(def);
                }
            }
        }
    }
    found
}
