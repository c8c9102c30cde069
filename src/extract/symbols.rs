//! Top-level names of a module: what `from module import name` can import.
//!
//! Counted: `def`/`class`, assignments (annotated with a value, tuple targets,
//! chained), imports and their aliases, names bound inside top-level
//! `if`/`try`/`with`/`for` blocks (except the `if TYPE_CHECKING:` branch,
//! which never runs), `__all__`, star imports of the package's own modules
//! (resolved recursively, cycle-safe), and the lazy names a module-level
//! `__getattr__` serves (`_LAZY.get(name)` over a literal dict, `name == "x"`).
//! Submodules of a package are not listed: the import system finds them
//! without the package binding them.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use crate::extract::python::{named_children, walk, PyFile};
use crate::extract::{parsed, Package};
use crate::surface::ExtractWarning;
use std::sync::Arc;

pub use crate::extract::parsed::MAX_SOURCE_BYTES;

/// Read and parse one file of the package for fact extraction (shared with the
/// other extractors: see [`crate::extract::parsed`]). Unreadable and
/// oversized files yield `None` and a warning naming the file; invalid UTF-8 is
/// replaced and syntax errors yield the partial tree, each with a warning.
pub(crate) fn parse_module_file(pkg: &Package, path: &str, warnings: &mut Vec<ExtractWarning>) -> Option<Arc<PyFile>> {
    with_syntax_warning(parsed::parse_file(pkg.tree, path), warnings)
}

/// The module-level outline of a file, parsed (see [`parsed::parse_outline`]):
/// all the symbols extractor reads, for a fraction of the parse.
fn parse_module_outline(pkg: &Package, path: &str, warnings: &mut Vec<ExtractWarning>) -> Option<Arc<PyFile>> {
    with_syntax_warning(parsed::parse_outline(pkg.tree, path), warnings)
}

/// Parse bytes already read (see [`parse_module_file`]).
pub(crate) fn parse_source(path: &str, bytes: Vec<u8>, warnings: &mut Vec<ExtractWarning>) -> Option<Arc<PyFile>> {
    with_syntax_warning(parsed::parse_bytes(path, bytes), warnings)
}

pub(crate) fn with_syntax_warning(parsed: parsed::Parsed, warnings: &mut Vec<ExtractWarning>) -> Option<Arc<PyFile>> {
    warnings.extend(parsed.warnings);
    let file = parsed.file?;
    if file.has_errors() {
        let line = file.first_error_line().unwrap_or(1);
        warnings.push(ExtractWarning {
            path: file.path.clone(),
            message: format!("syntax error at line {line}; facts from this file may be partial"),
        });
    }
    Some(file)
}

/// Sorted top-level names of module `dotted`; `None` when the module is not
/// in the package or cannot be read.
pub fn module_symbols(pkg: &Package, dotted: &str, warnings: &mut Vec<ExtractWarning>) -> Option<Vec<String>> {
    symbols_read_with(pkg, dotted, parse_module_outline, warnings)
}

/// [`module_symbols`] from whole files rather than outlines: the reference the
/// outline is checked against (`tests/corpus_acceptance.rs`).
pub fn module_symbols_from_whole_files(pkg: &Package, dotted: &str, warnings: &mut Vec<ExtractWarning>) -> Option<Vec<String>> {
    symbols_read_with(pkg, dotted, parse_module_file, warnings)
}

/// How a module's file is read and parsed.
type ReadModule = fn(&Package, &str, &mut Vec<ExtractWarning>) -> Option<Arc<PyFile>>;

fn symbols_read_with(pkg: &Package, dotted: &str, read: ReadModule, warnings: &mut Vec<ExtractWarning>) -> Option<Vec<String>> {
    let names = ModuleNames::collect(pkg, dotted, read, &mut Vec::new(), warnings)?;
    let mut all: BTreeSet<String> = names.bound;
    all.extend(names.dunder_all.unwrap_or_default());
    all.extend(names.lazy);
    Some(all.into_iter().collect())
}

#[derive(Default)]
struct ModuleNames {
    bound: BTreeSet<String>,
    /// `__all__` when it is a literal list (possibly extended).
    dunder_all: Option<Vec<String>>,
    /// Served by a module-level `__getattr__`.
    lazy: BTreeSet<String>,
}

impl ModuleNames {
    fn collect(
        pkg: &Package,
        dotted: &str,
        read: ReadModule,
        visiting: &mut Vec<String>,
        warnings: &mut Vec<ExtractWarning>,
    ) -> Option<Self> {
        if visiting.iter().any(|m| m == dotted) {
            return None; // import cycle: the outer collection already covers it
        }
        let path = pkg.module_path(dotted)?;
        let file = read(pkg, &path, warnings)?;
        visiting.push(dotted.to_string());
        let mut names = ModuleNames::default();
        let mut scope = Scope { pkg, read, file: &file, module: dotted, is_package: path.ends_with("/__init__.py"), visiting, warnings };
        scope.block(file.root(), &mut names);
        names.lazy = lazy_names(&file);
        visiting.pop();
        Some(names)
    }

    /// What `from module import *` binds.
    fn star_exports(self) -> Vec<String> {
        match self.dunder_all {
            Some(all) => all,
            None => self.bound.into_iter().filter(|n| !n.starts_with('_')).collect(),
        }
    }
}

struct Scope<'a, 'p> {
    pkg: &'a Package<'p>,
    read: ReadModule,
    file: &'a PyFile,
    module: &'a str,
    is_package: bool,
    visiting: &'a mut Vec<String>,
    warnings: &'a mut Vec<ExtractWarning>,
}

impl Scope<'_, '_> {
    fn block(&mut self, block: Node, names: &mut ModuleNames) {
        for stmt in named_children(block) {
            self.statement(stmt, names);
        }
    }

    fn statement(&mut self, stmt: Node, names: &mut ModuleNames) {
        let file = self.file;
        match stmt.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = stmt.child_by_field_name("name") {
                    names.bound.insert(file.text(name).to_string());
                }
            }
            "decorated_definition" => {
                if let Some(def) = stmt.child_by_field_name("definition") {
                    self.statement(def, names);
                }
            }
            "expression_statement" => {
                for expr in named_children(stmt) {
                    self.expression(expr, names);
                }
            }
            "import_statement" => {
                for imported in named_children(stmt) {
                    let bound = match imported.kind() {
                        "aliased_import" => imported.child_by_field_name("alias").map(|a| file.text(a).to_string()),
                        // `import a.b` binds `a`.
                        "dotted_name" => file.text(imported).split('.').next().map(str::to_string),
                        _ => None,
                    };
                    names.bound.extend(bound);
                }
            }
            // `from __future__ import annotations` binds `annotations` like any import.
            "import_from_statement" | "future_import_statement" => self.import_from(stmt, names),
            "type_alias_statement" => {
                if let Some(left) = named_children(stmt).first() {
                    names.bound.insert(file.text(*left).to_string());
                }
            }
            "if_statement" => {
                let type_checking_only =
                    stmt.child_by_field_name("condition").is_some_and(|c| matches!(file.text(c), "TYPE_CHECKING" | "typing.TYPE_CHECKING"));
                for part in named_children(stmt) {
                    match part.kind() {
                        "block" if !type_checking_only => self.block(part, names),
                        "elif_clause" | "else_clause" => self.clause(part, names),
                        _ => {}
                    }
                }
            }
            "try_statement" | "with_statement" | "for_statement" | "while_statement" => {
                if stmt.kind() == "for_statement" {
                    if let Some(target) = stmt.child_by_field_name("left") {
                        bind_targets(file, target, &mut names.bound);
                    }
                }
                if stmt.kind() == "with_statement" {
                    walk(stmt, |n| {
                        if n.kind() == "as_pattern_target" {
                            bind_targets(file, n, &mut names.bound);
                        }
                        n.kind() != "block"
                    });
                }
                self.clause(stmt, names);
            }
            _ => {}
        }
    }

    /// Blocks of a compound statement or clause (`else:`, `except:`, `finally:`).
    fn clause(&mut self, node: Node, names: &mut ModuleNames) {
        for part in named_children(node) {
            match part.kind() {
                "block" => self.block(part, names),
                "elif_clause" | "else_clause" | "except_clause" | "except_group_clause" | "finally_clause" => self.clause(part, names),
                _ => {}
            }
        }
    }

    fn expression(&mut self, expr: Node, names: &mut ModuleNames) {
        let file = self.file;
        match expr.kind() {
            "assignment" => {
                let Some(left) = expr.child_by_field_name("left") else {
                    return;
                };
                let right = expr.child_by_field_name("right");
                // A bare annotation (`x: int`) binds nothing at run time.
                if right.is_none() {
                    return;
                }
                bind_targets(file, left, &mut names.bound);
                if file.text(left) == "__all__" {
                    names.dunder_all = right.and_then(|r| string_list(file, r));
                }
                if let Some(right) = right.filter(|r| r.kind() == "assignment") {
                    self.expression(right, names); // a = b = 1
                }
            }
            "augmented_assignment" => {
                let Some(left) = expr.child_by_field_name("left") else {
                    return;
                };
                bind_targets(file, left, &mut names.bound);
                if file.text(left) == "__all__" {
                    let extra = expr.child_by_field_name("right").and_then(|r| string_list(file, r));
                    extend_all(names, extra);
                }
            }
            // `__all__.extend([...])`, `__all__.append("x")`
            "call" => {
                let Some(func) = expr.child_by_field_name("function") else {
                    return;
                };
                let extra = match file.text(func) {
                    "__all__.extend" => expr
                        .child_by_field_name("arguments")
                        .and_then(|a| named_children(a).first().copied())
                        .and_then(|a| string_list(file, a)),
                    "__all__.append" => expr
                        .child_by_field_name("arguments")
                        .and_then(|a| named_children(a).first().copied())
                        .and_then(|a| file.string_value(a))
                        .map(|s| vec![s]),
                    _ => None,
                };
                extend_all(names, extra);
            }
            _ => {}
        }
    }

    fn import_from(&mut self, stmt: Node, names: &mut ModuleNames) {
        let file = self.file;
        let mut cursor = stmt.walk();
        let imported: Vec<Node> = stmt.children_by_field_name("name", &mut cursor).collect();
        for name in &imported {
            let bound = match name.kind() {
                "aliased_import" => name.child_by_field_name("alias").map(|a| file.text(a).to_string()),
                _ => Some(file.text(*name).to_string()),
            };
            names.bound.extend(bound);
        }
        let star = named_children(stmt).into_iter().any(|n| n.kind() == "wildcard_import");
        if !star {
            return;
        }
        let Some(module) = stmt.child_by_field_name("module_name") else {
            return;
        };
        let target = match module.kind() {
            "relative_import" => {
                let text = file.text(module);
                let dots = text.chars().take_while(|c| *c == '.').count();
                let rest = text[dots..].trim();
                self.pkg.resolve_relative(self.module, self.is_package, dots, rest)
            }
            _ => Some(file.text(module).to_string()),
        };
        let resolved = target.clone().filter(|t| self.pkg.module_path(t).is_some());
        match resolved {
            Some(target) => {
                if let Some(inner) = ModuleNames::collect(self.pkg, &target, self.read, self.visiting, self.warnings) {
                    names.bound.extend(inner.star_exports());
                }
            }
            None => {
                let inside = target.as_deref().is_some_and(|t| t == self.pkg.name || t.starts_with(&format!("{}.", self.pkg.name)));
                let why = if inside {
                    "has no source file in the package (a namespace package or a missing module)"
                } else {
                    "is outside the package"
                };
                self.warnings.push(ExtractWarning {
                    path: file.path.clone(),
                    message: format!(
                        "line {}: `from {} import *`: the module {why}; the names it binds are not listed",
                        file.line(stmt),
                        file.text(module)
                    ),
                })
            }
        }
    }
}

fn extend_all(names: &mut ModuleNames, extra: Option<Vec<String>>) {
    if let Some(extra) = extra {
        names.dunder_all.get_or_insert_with(Vec::new).extend(extra);
    }
}

/// Names bound by an assignment target: `a`, `a, b`, `(a, [b, *c])`.
fn bind_targets(file: &PyFile, target: Node, bound: &mut BTreeSet<String>) {
    match target.kind() {
        "identifier" => {
            bound.insert(file.text(target).to_string());
        }
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "list_splat_pattern"
        | "as_pattern_target"
        | "parenthesized_expression"
        | "tuple"
        | "list" => {
            for part in named_children(target) {
                bind_targets(file, part, bound);
            }
        }
        // Attribute and subscript targets bind no new name.
        _ => {}
    }
}

/// A literal list/tuple of strings.
fn string_list(file: &PyFile, node: Node) -> Option<Vec<String>> {
    if !matches!(node.kind(), "list" | "tuple") {
        return None;
    }
    named_children(node).into_iter().map(|n| file.string_value(n)).collect()
}

/// Names a module-level `__getattr__` serves: keys of literal dicts it looks
/// the name up in (its own or module-level), and strings it compares the name to.
fn lazy_names(file: &PyFile) -> BTreeSet<String> {
    let top: Vec<Node> = named_children(file.root());
    let module_dicts: BTreeMap<&str, Node> = top
        .iter()
        .filter_map(|stmt| {
            let assign = named_children(*stmt).into_iter().find(|n| n.kind() == "assignment")?;
            let left = assign.child_by_field_name("left")?;
            let right = assign.child_by_field_name("right")?;
            (left.kind() == "identifier" && right.kind() == "dictionary").then(|| (file.text(left), right))
        })
        .collect();
    let getattr = top.iter().copied().find(|stmt| {
        stmt.kind() == "function_definition" && stmt.child_by_field_name("name").is_some_and(|n| file.text(n) == "__getattr__")
    });
    let mut out = BTreeSet::new();
    let Some(getattr) = getattr else { return out };
    let Some(param) = getattr
        .child_by_field_name("parameters")
        .and_then(|p| named_children(p).first().copied())
        .map(|p| file.text(p.child_by_field_name("name").unwrap_or(p)).split(':').next().unwrap_or("").trim().to_string())
    else {
        return out;
    };
    let dict_keys = |dict: Node, out: &mut BTreeSet<String>| {
        for pair in named_children(dict) {
            out.extend(pair.child_by_field_name("key").and_then(|k| file.string_value(k)));
        }
    };
    walk(getattr, |n| {
        match n.kind() {
            // `_LAZY.get(name)`, `_LAZY[name]`
            "call" | "subscript" => {
                let base = match n.kind() {
                    "call" => n.child_by_field_name("function").and_then(|f| file.text(f).strip_suffix(".get").map(str::to_string)),
                    _ => n.child_by_field_name("value").map(|v| file.text(v).to_string()),
                };
                if let Some(dict) = base.as_deref().and_then(|b| module_dicts.get(b)) {
                    dict_keys(*dict, &mut out);
                }
            }
            // `name == "x"`, `name in ("a", "b")`, `name in _LAZY`
            "comparison_operator" => {
                let parts = named_children(n);
                if parts.len() == 2 && file.text(parts[0]) == param {
                    let other = parts[1];
                    match other.kind() {
                        "string" => out.extend(file.string_value(other)),
                        "tuple" | "list" | "set" => out.extend(named_children(other).into_iter().filter_map(|s| file.string_value(s))),
                        "dictionary" => dict_keys(other, &mut out),
                        "identifier" => {
                            if let Some(dict) = module_dicts.get(file.text(other)) {
                                dict_keys(*dict, &mut out);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        true
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{DirTree, MemTree};
    use std::path::Path;

    fn fixture() -> DirTree {
        DirTree::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/env/symbols")).expect("fixture exists")
    }

    fn symbols_of(tree: &dyn crate::source::Tree, root: &str, module: &str) -> (Option<Vec<String>>, Vec<ExtractWarning>) {
        let pkg = Package::new(tree, root);
        let mut warnings = Vec::new();
        (module_symbols(&pkg, module, &mut warnings), warnings)
    }

    fn sorted(names: &[&str]) -> Vec<String> {
        let set: BTreeSet<String> = names.iter().map(|s| s.to_string()).collect();
        set.into_iter().collect()
    }

    #[test]
    fn every_kind_of_top_level_binding() {
        let tree = fixture();
        let (names, warnings) = symbols_of(&tree, "python/toypkg", "toypkg.core");
        assert!(warnings.is_empty(), "{warnings:?}");
        let expected = sorted(&[
            // imports, aliases, `import os.path` binds `os`, the __future__ feature
            "annotations",
            "os",
            "t",
            "TYPE_CHECKING",
            "Any",
            "loud",
            "whisper",
            // star import of a module with __all__ (its cycle back here is cut)
            "shout",
            // try / else / finally, if / elif / else
            "json_impl",
            "JSON_FAST",
            "LOADED",
            "SEP",
            "PLATFORM_SEP",
            // assignments: plain, nested tuple targets, chained, annotated, augmented
            "VERSION",
            "first",
            "second",
            "rest",
            "alpha",
            "beta",
            "counter",
            "make",
            "Widget",
            "decorated",
            "_LAZY",
            "__getattr__",
            "__all__",
            // served by __getattr__
            "current_mode",
            "LazyThing",
            "OtherLazy",
        ]);
        assert_eq!(names.unwrap(), expected);
    }

    #[test]
    fn star_imports_follow_all_or_public_names() {
        let tree = fixture();
        let (root, _) = symbols_of(&tree, "python/toypkg", "toypkg");
        assert_eq!(root.unwrap(), sorted(&["LazyThing", "VERSION", "Widget", "make", "helper_module", "toypkg", "_json"]));
        let (user, warnings) = symbols_of(&tree, "python/toypkg", "toypkg.sub.user");
        assert_eq!(user.unwrap(), sorted(&["PUBLIC", "visible", "build"]));
        // The external star import is named, not silently dropped.
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path, "python/toypkg/sub/plain.py");
        assert!(warnings[0].message.contains("from torch import *"));

        // Each side of the helpers <-> core cycle still sees the other's exports.
        let (helpers, _) = symbols_of(&tree, "python/toypkg", "toypkg.sub.helpers");
        let helpers = helpers.unwrap();
        for name in ["make", "Widget", "VERSION", "LazyThing", "shout", "_private", "not_exported"] {
            assert!(helpers.iter().any(|n| n == name), "{name} missing from {helpers:?}");
        }
    }

    #[test]
    fn missing_and_unreadable_modules() {
        let tree = fixture();
        assert_eq!(symbols_of(&tree, "python/toypkg", "toypkg.nowhere").0, None);

        let mut tree = MemTree::from_files("bad", [("p/__init__.py", "A = 1\ndef broken(:\n    pass\nB = 2\n")]);
        tree.insert("p/latin1.py", b"X = '\xe9'\n".to_vec());
        let (names, warnings) = symbols_of(&tree, "p", "p");
        let names = names.unwrap();
        assert!(names.contains(&"A".to_string()) && names.contains(&"B".to_string()), "{names:?}");
        assert!(warnings.iter().any(|w| w.path == "p/__init__.py" && w.message.contains("syntax error")));
        // Invalid UTF-8 is replaced, not fatal: the module's names survive, with a warning.
        let (names, warnings) = symbols_of(&tree, "p", "p.latin1");
        assert_eq!(names, Some(vec!["X".to_string()]));
        assert_eq!(warnings[0].path, "p/latin1.py");
        assert!(warnings[0].message.contains("UTF-8"), "{warnings:?}");
    }
}
