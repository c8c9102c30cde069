//! Evidence predicates over one engine tree, each hit cited as `path:line`.
//!
//! A predicate that cannot be checked (file missing, not UTF-8, function absent)
//! does not hold: a rule never fires without evidence. Source predicates are
//! pure functions of the tree, so they are memoized per evaluation while the
//! `deployment` predicate is re-checked for every role.

use super::model::*;
use super::pyscope::{binds_name, class_bodies, find_functions, glob_match, is_glob, mentions, own_descendants};
use super::when::{Ctx, Matched};
use crate::extract::python::PyFile;
use crate::source::Tree;
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use tree_sitter::{Node, QueryCursor, StreamingIterator};

/// One cited place in the engine source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub(crate) struct Cite {
    /// Path in the tree (`python/sglang/srt/...`).
    pub path: String,
    pub line: u32,
    pub note: String,
}

/// Results of source predicates, keyed by the predicate as written (its
/// `Debug` form): the same predicate in two rules is checked once.
pub(crate) type EvidenceMemo = BTreeMap<String, Option<Vec<Cite>>>;

/// Parsed files of one tree, shared by every predicate of every rule and
/// deployment evaluated against it.
pub(crate) struct SourceIndex<'t> {
    tree: &'t dyn Tree,
    root: String,
    parsed: RefCell<HashMap<String, Option<Rc<PyFile>>>>,
    memo: RefCell<EvidenceMemo>,
}

impl<'t> SourceIndex<'t> {
    pub(crate) fn new(tree: &'t dyn Tree, package_root: &str) -> Self {
        SourceIndex {
            tree,
            root: package_root.trim_end_matches('/').to_string(),
            parsed: RefCell::new(HashMap::new()),
            memo: RefCell::new(EvidenceMemo::new()),
        }
    }

    /// Start from results known for this tree (the fact cache's).
    pub(crate) fn with_memo(mut self, memo: EvidenceMemo) -> Self {
        self.memo = RefCell::new(memo);
        self
    }

    /// Every predicate result so far.
    pub(crate) fn memo(&self) -> EvidenceMemo {
        self.memo.borrow().clone()
    }

    /// Tree paths named by `patterns` (relative to the package root), in order, deduplicated.
    fn files(&self, patterns: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for pat in patterns {
            let full = if self.root.is_empty() { pat.clone() } else { format!("{}/{}", self.root, pat) };
            if is_glob(pat) {
                for e in self.tree.entries() {
                    if glob_match(&full, &e.path) && !out.contains(&e.path) {
                        out.push(e.path.clone());
                    }
                }
            } else if self.tree.contains(&full) && !out.contains(&full) {
                out.push(full);
            }
        }
        out
    }

    fn read(&self, path: &str) -> Option<String> {
        read_source(self.tree, path)
    }

    /// Parse, in parallel, every file that the source predicates in `items`
    /// would parse and that no known result answers already. Evaluation then
    /// finds them parsed, instead of parsing them one after another on one core
    /// (two model files, ~35 ms of a cold audit's serial tail). A predicate that
    /// fails first may leave a file unread by evaluation; parsing it anyway
    /// takes a core that would be idle.
    pub(crate) fn prefetch(&self, items: &[Evidence]) {
        let mut paths: Vec<String> = Vec::new();
        self.files_to_parse(items, &mut paths);
        {
            let parsed = self.parsed.borrow();
            paths.retain(|p| !parsed.contains_key(p));
        }
        if paths.len() < 2 {
            return;
        }
        let tree = self.tree;
        let files: Vec<(String, Option<PyFile>)> = paths
            .into_par_iter()
            .map(|path| {
                let file = read_source(tree, &path).map(|text| PyFile::parse(&path, text));
                (path, file)
            })
            .collect();
        let mut parsed = self.parsed.borrow_mut();
        for (path, file) in files {
            parsed.insert(path, file.map(Rc::new));
        }
    }

    /// The files parsed so far, sorted.
    #[cfg(test)]
    pub(crate) fn parsed_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.parsed.borrow().keys().cloned().collect();
        paths.sort();
        paths
    }

    fn files_to_parse(&self, items: &[Evidence], out: &mut Vec<String>) {
        for e in items {
            let patterns = match e {
                Evidence::AllOf(inner) | Evidence::AnyOf(inner) => {
                    self.files_to_parse(inner, out);
                    continue;
                }
                Evidence::Not(inner) => {
                    self.files_to_parse(std::slice::from_ref(inner.as_ref()), out);
                    continue;
                }
                Evidence::Deployment(_) | Evidence::FileExists(_) | Evidence::TextInFile(_) => continue,
                _ if self.memo.borrow().contains_key(&memo_key(e)) => continue,
                Evidence::SymbolExists(p) => &p.files,
                Evidence::AssignsAttribute(p) => &p.files,
                Evidence::ReturnsBefore(p) => &p.files,
                Evidence::GuardExcludes(p) => {
                    for path in self.files(&p.helper_files) {
                        if !out.contains(&path) {
                            out.push(path);
                        }
                    }
                    &p.files
                }
                Evidence::TextInFunction(p) => &p.files,
                Evidence::Query(p) => &p.files,
            };
            for path in self.files(patterns) {
                if !out.contains(&path) {
                    out.push(path);
                }
            }
        }
    }

    fn parse(&self, path: &str) -> Option<Rc<PyFile>> {
        if let Some(cached) = self.parsed.borrow().get(path) {
            return cached.clone();
        }
        let file = self.read(path).map(|text| Rc::new(PyFile::parse(path, text)));
        self.parsed.borrow_mut().insert(path.to_string(), file.clone());
        file
    }

    /// The first non-empty result of `check` over every function `class.function`
    /// in the named files (all same-named classes and overloads considered).
    fn first_in_functions(
        &self,
        files: &[String],
        class: Option<&str>,
        function: &str,
        mut check: impl FnMut(&PyFile, Node) -> Vec<Cite>,
    ) -> Vec<Cite> {
        for path in self.files(files) {
            let Some(file) = self.parse(&path) else { continue };
            for func in find_functions(&file, class, function) {
                let cites = check(&file, func);
                if !cites.is_empty() {
                    return cites;
                }
            }
        }
        Vec::new()
    }

    /// Evaluate a list that must all hold (the rule's top-level `evidence`).
    /// `None` when one fails; otherwise every citation, in order.
    pub(crate) fn all(&self, items: &[Evidence], ctx: &Ctx) -> Option<Vec<Cite>> {
        let mut cites = Vec::new();
        for e in items {
            cites.extend(self.holds(e, ctx)?);
        }
        Some(cites)
    }

    pub(crate) fn holds(&self, e: &Evidence, ctx: &Ctx) -> Option<Vec<Cite>> {
        match e {
            Evidence::AllOf(items) => self.all(items, ctx),
            Evidence::AnyOf(items) => items.iter().find_map(|i| self.holds(i, ctx)),
            Evidence::Not(inner) => match self.holds(inner, ctx) {
                Some(_) => None,
                None => Some(Vec::new()),
            },
            Evidence::Deployment(cond) => {
                let mut matched: Vec<Matched> = Vec::new();
                ctx.holds(cond, &mut matched).then(Vec::new)
            }
            source => {
                let key = memo_key(source);
                if let Some(hit) = self.memo.borrow().get(&key) {
                    return hit.clone();
                }
                let hit = self.source_predicate(source);
                self.memo.borrow_mut().insert(key, hit.clone());
                hit
            }
        }
    }

    fn source_predicate(&self, e: &Evidence) -> Option<Vec<Cite>> {
        let cites = match e {
            Evidence::FileExists(p) => self
                .files(&p.files)
                .into_iter()
                .take(1)
                .map(|path| Cite { path, line: 1, note: note(&p.note, || "file exists".into()) })
                .collect(),
            Evidence::SymbolExists(p) => self.symbol_exists(p),
            Evidence::AssignsAttribute(p) => self.assigns_attribute(p),
            Evidence::ReturnsBefore(p) => self.returns_before(p),
            Evidence::GuardExcludes(p) => self.guard_excludes(p),
            Evidence::TextInFunction(p) => self.text_in_function(p),
            Evidence::TextInFile(p) => self.text_in_file(p),
            Evidence::Query(p) => self.query(p),
            // Combinators are handled by `holds`.
            _ => Vec::new(),
        };
        (!cites.is_empty()).then_some(cites)
    }

    fn symbol_exists(&self, p: &SymbolExists) -> Vec<Cite> {
        let mut out = Vec::new();
        for path in self.files(&p.files) {
            let Some(file) = self.parse(&path) else { continue };
            let scopes: Vec<Node> = match &p.class {
                None => vec![file.root()],
                Some(cls) => class_bodies(&file, cls),
            };
            for scope in scopes {
                if let Some(line) = binds_name(&file, scope, &p.name) {
                    let what = match &p.class {
                        Some(c) => format!("{c}.{}", p.name),
                        None => p.name.clone(),
                    };
                    out.push(cite(&path, line, &p.note, || format!("`{what}` is defined here")));
                    return out;
                }
            }
        }
        out
    }

    fn assigns_attribute(&self, p: &AssignsAttribute) -> Vec<Cite> {
        self.first_in_functions(&p.files, p.class.as_deref(), &p.function, |file, func| {
            for a in own_descendants(func, "assignment") {
                let (Some(left), Some(right)) = (a.child_by_field_name("left"), a.child_by_field_name("right")) else {
                    continue;
                };
                let attr_ok =
                    left.kind() == "attribute" && left.child_by_field_name("attribute").is_some_and(|n| file.text(n) == p.attribute);
                let value_ok = p.value.as_deref().is_none_or(|v| file.text(right).trim() == v.trim());
                if attr_ok && value_ok {
                    let text = file.text(a).lines().next().unwrap_or("").trim().to_string();
                    return vec![cite(&file.path, file.line(a), &p.note, || {
                        format!("{} assigns `{text}`", scope_name(p.class.as_deref(), &p.function))
                    })];
                }
            }
            Vec::new()
        })
    }

    fn returns_before(&self, p: &ReturnsBefore) -> Vec<Cite> {
        self.first_in_functions(&p.files, p.class.as_deref(), &p.function, |file, func| {
            let Some(body) = func.child_by_field_name("body") else { return Vec::new() };
            // No mention of Y at all: the function does not build it, nothing to skip.
            let Some(&first_y) = mentions(file, body, &p.before_mentions).first() else { return Vec::new() };
            let y_line = file.source[..first_y].matches('\n').count() as u32 + 1;
            for branch in condition_branches(body) {
                let (cond, consequence) = branch;
                if mentions(file, cond, &p.condition_mentions).is_empty() {
                    continue;
                }
                let early = own_descendants(consequence, "return_statement").into_iter().find(|r| r.end_byte() <= first_y);
                if let Some(ret) = early {
                    let scope = scope_name(p.class.as_deref(), &p.function);
                    return vec![
                        cite(&file.path, file.line(cond), &p.note, || {
                            format!("{scope}: the branch on `{}` returns at line {} ...", p.condition_mentions, file.line(ret))
                        }),
                        Cite {
                            path: file.path.clone(),
                            line: y_line,
                            note: format!("... before `{}` is first set up here", p.before_mentions),
                        },
                    ];
                }
            }
            Vec::new()
        })
    }

    /// Cites, for every assignment of the attribute, the guard that excludes it
    /// and the helper's `return not (...)`; nothing when one assignment is not
    /// excluded (or there is none).
    fn guard_excludes(&self, p: &GuardExcludes) -> Vec<Cite> {
        self.first_in_functions(&p.files, p.class.as_deref(), &p.function, |file, func| {
            let assignments: Vec<Node> = own_descendants(func, "assignment")
                .into_iter()
                .filter(|a| {
                    a.child_by_field_name("left").is_some_and(|l| {
                        l.kind() == "attribute" && l.child_by_field_name("attribute").is_some_and(|n| file.text(n) == p.attribute)
                    })
                })
                .collect();
            let mut cites = Vec::new();
            for a in &assignments {
                let excluded = required_calls(*a, func).into_iter().find_map(|call| {
                    let name = called_name(file, call)?;
                    let helper = self.negated_helper(&p.helper_files, name, &p.excludes)?;
                    Some((call, name, helper))
                });
                let Some((call, name, helper)) = excluded else { return Vec::new() };
                let scope = scope_name(p.class.as_deref(), &p.function);
                cites.push(cite(&file.path, file.line(call), &p.note, || {
                    format!("{scope}: `{}` at line {} needs `{name}()` ...", p.attribute, file.line(*a))
                }));
                cites.push(Cite { note: format!("... which is false for `{}`", p.excludes), ..helper });
            }
            cites
        })
    }

    /// The `return not (...)` of a function named `name` whose negated operand
    /// is an `or` chain of terms one of which mentions `excludes`.
    fn negated_helper(&self, files: &[String], name: &str, excludes: &str) -> Option<Cite> {
        for path in self.files(files) {
            let Some(file) = self.parse(&path) else { continue };
            for func in find_functions(&file, None, name) {
                let Some(body) = func.child_by_field_name("body") else { continue };
                let returns = own_descendants(body, "return_statement");
                // One return: a helper with several answers is not folded.
                let [ret] = returns.as_slice() else { continue };
                let Some(value) = ret.named_child(0) else { continue };
                if value.kind() != "not_operator" {
                    continue;
                }
                let Some(operand) = value.child_by_field_name("argument") else { continue };
                if or_terms(operand).into_iter().any(|t| !mentions(&file, t, excludes).is_empty()) {
                    return Some(Cite { path: path.clone(), line: file.line(*ret), note: String::new() });
                }
            }
        }
        None
    }

    fn text_in_function(&self, p: &TextInFunction) -> Vec<Cite> {
        self.first_in_functions(&p.files, p.class.as_deref(), &p.function, |file, func| {
            let Some(at) = file.text(func).find(&p.text) else { return Vec::new() };
            let line = file.line(func) + file.text(func)[..at].matches('\n').count() as u32;
            vec![cite(&file.path, line, &p.note, || format!("{} mentions `{}`", scope_name(p.class.as_deref(), &p.function), p.text))]
        })
    }

    fn text_in_file(&self, p: &TextInFile) -> Vec<Cite> {
        for path in self.files(&p.files) {
            let Some(text) = self.read(&path) else { continue };
            if let Some(at) = text.find(&p.text) {
                let line = text[..at].matches('\n').count() as u32 + 1;
                return vec![cite(&path, line, &p.note, || format!("`{}` appears here", p.text))];
            }
        }
        Vec::new()
    }

    fn query(&self, p: &QueryPred) -> Vec<Cite> {
        let query = &p.query.query;
        let wanted = p.capture.as_deref().and_then(|c| query.capture_index_for_name(c));
        let mut out = Vec::new();
        for path in self.files(&p.files) {
            let Some(file) = self.parse(&path) else { continue };
            let scopes: Vec<Node> = match &p.function {
                Some(f) => find_functions(&file, p.class.as_deref(), f),
                None => vec![file.root()],
            };
            for scope in scopes {
                let mut cursor = QueryCursor::new();
                let mut matches = cursor.matches(query, scope, file.source.as_bytes());
                while let Some(m) = matches.next() {
                    let node = m.captures.iter().find(|c| wanted.is_none_or(|w| c.index == w)).map(|c| c.node);
                    if let Some(node) = node {
                        let first = file.text(node).lines().next().unwrap_or("").trim().to_string();
                        out.push(cite(&path, file.line(node), &p.note, || format!("query matches `{first}`")));
                    }
                }
                if !out.is_empty() {
                    out.sort();
                    out.dedup();
                    out.truncate(3);
                    return out;
                }
            }
        }
        out
    }
}

/// `(condition, consequence)` of every `if` and `elif` in a body (own scope only).
/// The calls that must be true for `node` to run: the `and`-conjuncts that are
/// calls, of the condition of every `if` (up to `func`) whose consequence holds it.
fn required_calls<'t>(node: Node<'t>, func: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut child = node;
    while let Some(parent) = child.parent() {
        if parent == func {
            break;
        }
        if parent.kind() == "if_statement" && parent.child_by_field_name("consequence") == Some(child) {
            if let Some(cond) = parent.child_by_field_name("condition") {
                out.extend(and_terms(cond).into_iter().filter(|t| t.kind() == "call"));
            }
        }
        child = parent;
    }
    out
}

/// `a and (b and c)` → `[a, b, c]`, parentheses dropped.
fn and_terms(node: Node) -> Vec<Node> {
    bool_terms(node, "and")
}

fn or_terms(node: Node) -> Vec<Node> {
    bool_terms(node, "or")
}

fn bool_terms<'t>(node: Node<'t>, op: &str) -> Vec<Node<'t>> {
    match node.kind() {
        "parenthesized_expression" => node.named_child(0).map(|n| bool_terms(n, op)).unwrap_or_default(),
        "boolean_operator" if node.child_by_field_name("operator").is_some_and(|o| o.kind() == op) => {
            let mut out = Vec::new();
            for side in ["left", "right"] {
                out.extend(node.child_by_field_name(side).map(|n| bool_terms(n, op)).unwrap_or_default());
            }
            out
        }
        _ => vec![node],
    }
}

/// `x.y().name()` / `name()` → `name`.
fn called_name<'f>(file: &'f PyFile, call: Node) -> Option<&'f str> {
    let function = call.child_by_field_name("function")?;
    match function.kind() {
        "attribute" => function.child_by_field_name("attribute").map(|n| file.text(n)),
        "identifier" => Some(file.text(function)),
        _ => None,
    }
}

fn condition_branches(body: Node) -> Vec<(Node, Node)> {
    let mut out = Vec::new();
    for kind in ["if_statement", "elif_clause"] {
        for n in own_descendants(body, kind) {
            if let (Some(c), Some(b)) = (n.child_by_field_name("condition"), n.child_by_field_name("consequence")) {
                out.push((c, b));
            }
        }
    }
    out.sort_by_key(|(c, _)| c.start_byte());
    out
}

/// The memo's key for a source predicate: all of it, so two rules asking the
/// same question share the answer.
fn memo_key(source: &Evidence) -> String {
    format!("{source:?}")
}

/// A file's text, unless it is unreadable or over the extractors' size limit
/// (a generated table is no evidence; reading it whole could exhaust memory).
fn read_source(tree: &dyn Tree, path: &str) -> Option<String> {
    tree.read_text_limited(path, crate::extract::symbols::MAX_SOURCE_BYTES).ok()
}

fn scope_name(class: Option<&str>, function: &str) -> String {
    match class {
        Some(c) => format!("{c}.{function}"),
        None => function.to_string(),
    }
}

fn note(custom: &Option<String>, default: impl FnOnce() -> String) -> String {
    custom.clone().unwrap_or_else(default)
}

fn cite(path: &str, line: u32, custom: &Option<String>, default: impl FnOnce() -> String) -> Cite {
    Cite { path: path.to_string(), line, note: note(custom, default) }
}
