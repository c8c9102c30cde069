//! The syntax walk over one consumer file: finds engine imports and attribute
//! uses of the link's engine classes (`ServerArgs`, `AsyncEngineArgs`, ...),
//! and records for each the guard and context it runs under.

use std::collections::HashMap;
use std::rc::Rc;

use tree_sitter::Node;

use super::bindings::{Binding, Classes, EngineImports, Scopes, ValueOracle};
use super::guards::{self, Failure, Handler};
use super::{ConsumerUse, ExceptContext, Guard, GuardKind, UseKind};
use crate::extract::python::{named_children, PyFile};
use crate::profiles::ConsumerClass;

/// Nesting beyond this is abandoned (CPython itself rejects far shallower code);
/// it keeps hostile input from exhausting the stack.
const MAX_DEPTH: usize = 400;

/// A protection active at some point of the walk, innermost last.
#[derive(Clone)]
enum Active {
    /// Inside the body of a `try`.
    Try { try_line: u32, handlers: Rc<Vec<Handler>> },
    /// A `hasattr` test proved these attributes present.
    Hasattr { attributes: Vec<String>, fallback: String },
}

/// Where the walk is.
#[derive(Clone)]
struct Ctx {
    /// Runs when the module is imported (not inside a def or lambda).
    top_level: bool,
    /// Under `if TYPE_CHECKING:`: never runs.
    type_only: bool,
    guards: Vec<Active>,
    in_except: Option<ExceptContext>,
    /// Engine names (`(module, name)` of a `from module import name`) whose
    /// import makes an earlier `if name is not None: ... return` leave the
    /// function: the code here runs only where the import failed.
    unreached_if_imported: Vec<(String, String)>,
}

impl Ctx {
    fn module() -> Ctx {
        Ctx { top_level: true, type_only: false, guards: Vec::new(), in_except: None, unreached_if_imported: Vec::new() }
    }

    fn with(&self, guard: Active) -> Ctx {
        let mut ctx = self.clone();
        ctx.guards.push(guard);
        ctx
    }

    fn with_facts(&self, attributes: Vec<String>, fallback: String) -> Ctx {
        if attributes.is_empty() {
            return self.clone();
        }
        self.with(Active::Hasattr { attributes, fallback })
    }

    /// A def or lambda body runs later, outside any `try` or handler around its
    /// definition. `hasattr` facts stay: they are facts about the class.
    fn function_body(&self) -> Ctx {
        Ctx {
            top_level: false,
            type_only: self.type_only,
            guards: self.guards.iter().filter(|g| matches!(g, Active::Hasattr { .. })).cloned().collect(),
            in_except: None,
            unreached_if_imported: Vec::new(),
        }
    }
}

/// What the walk of one file found.
pub(super) struct FileFacts {
    pub uses: Vec<ConsumerUse>,
    /// Nesting deeper than the walk follows was met (facts below it are missing).
    pub too_deep: bool,
}

pub(super) fn walk_file(file: &PyFile, engine: &str, classes: &[ConsumerClass]) -> FileFacts {
    let imports = EngineImports::collect(file, engine, Classes(classes));
    let mut walker = Walker {
        file,
        engine,
        oracle: ValueOracle { file, imports: &imports },
        scopes: Scopes::new(),
        lines: file.source.lines().collect(),
        uses: Vec::new(),
        depth: 0,
        too_deep: false,
    };
    walker.visit(file.root(), &Ctx::module());
    FileFacts { uses: walker.uses, too_deep: walker.too_deep }
}

struct Walker<'a> {
    file: &'a PyFile,
    engine: &'a str,
    oracle: ValueOracle<'a>,
    scopes: Scopes,
    lines: Vec<&'a str>,
    uses: Vec<ConsumerUse>,
    depth: usize,
    too_deep: bool,
}

impl<'a> Walker<'a> {
    fn visit(&mut self, node: Node<'a>, ctx: &Ctx) {
        if self.depth >= MAX_DEPTH {
            self.too_deep = true;
            return;
        }
        self.depth += 1;
        match node.kind() {
            "module" | "block" => self.visit_statements(node, ctx),
            "import_statement" => self.visit_import(node, ctx),
            "import_from_statement" => self.visit_from_import(node, ctx),
            "function_definition" | "lambda" => self.visit_function(node, ctx),
            "class_definition" => self.visit_class(node, ctx),
            "try_statement" => self.visit_try(node, ctx),
            "if_statement" => self.visit_if(node, ctx),
            "for_statement" | "while_statement" => self.visit_loop(node, ctx),
            "assignment" => self.visit_assignment(node, ctx),
            "augmented_assignment" => self.visit_augmented_assignment(node, ctx),
            "delete_statement" => {
                for target in named_children(node) {
                    self.visit_target(target, ctx);
                }
            }
            "attribute" => self.visit_attribute(node, ctx, false),
            "call" => self.visit_call(node, ctx),
            "boolean_operator" => self.visit_boolean(node, ctx),
            "conditional_expression" => self.visit_conditional(node, ctx),
            _ => self.visit_children(node, ctx),
        }
        self.depth -= 1;
    }

    fn visit_children(&mut self, node: Node<'a>, ctx: &Ctx) {
        for child in named_children(node) {
            self.visit(child, ctx);
        }
    }

    /// Statements in order. After `if not hasattr(x, "a"): return`, the rest of
    /// the block runs only when `a` exists; after `if new_api is not None: ...
    /// return`, only when the engine name `new_api` could not be imported.
    fn visit_statements(&mut self, block: Node<'a>, ctx: &Ctx) {
        let mut ctx = ctx.clone();
        for statement in named_children(block) {
            self.visit(statement, &ctx);
            if let Some((facts, fallback)) = self.early_exit_facts(statement) {
                ctx = ctx.with_facts(facts, fallback);
            }
            if let Some(source) = self.exit_when_imported(statement) {
                ctx.unreached_if_imported.push(source);
            }
        }
    }

    /// `if NAME is not None: ... return` (or `if NAME:` / `if callable(NAME):`)
    /// with no `else`, where `NAME` is bound by `from <engine module> import ...`:
    /// the engine name whose import makes the function leave here.
    fn exit_when_imported(&self, statement: Node<'a>) -> Option<(String, String)> {
        if statement.kind() != "if_statement" || statement.child_by_field_name("alternative").is_some() {
            return None;
        }
        let body = statement.child_by_field_name("consequence")?;
        if !named_children(body).last().is_some_and(|s| matches!(s.kind(), "return_statement" | "raise_statement")) {
            return None;
        }
        let condition = statement.child_by_field_name("condition")?;
        let text: String = self.file.text(condition).split_whitespace().collect::<Vec<_>>().join(" ");
        let name =
            text.strip_suffix(" is not None").or_else(|| text.strip_prefix("callable(").and_then(|t| t.strip_suffix(')'))).unwrap_or(&text);
        let is_identifier = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        is_identifier.then(|| self.oracle.imports.sources.get(name).cloned()).flatten()
    }

    fn early_exit_facts(&self, statement: Node<'a>) -> Option<(Vec<String>, String)> {
        if statement.kind() != "if_statement" || statement.child_by_field_name("alternative").is_some() {
            return None;
        }
        let body = statement.child_by_field_name("consequence")?;
        if !guards::always_leaves_quietly(body) {
            return None;
        }
        let condition = statement.child_by_field_name("condition")?;
        let facts = self.facts(condition, false);
        Some((facts, self.first_statement_text(body)))
    }

    // ---- imports -------------------------------------------------------------

    fn visit_import(&mut self, statement: Node<'a>, ctx: &Ctx) {
        for name in named_children(statement) {
            let (module, alias) = match name.kind() {
                "dotted_name" => (self.file.text(name), None),
                "aliased_import" => {
                    let (Some(module), Some(alias)) = (name.child_by_field_name("name"), name.child_by_field_name("alias")) else {
                        continue;
                    };
                    (self.file.text(module), Some(self.file.text(alias).to_string()))
                }
                _ => continue,
            };
            self.emit_import(statement, module.to_string(), None, alias, ctx);
        }
    }

    fn visit_from_import(&mut self, statement: Node<'a>, ctx: &Ctx) {
        // Relative imports name the consumer's own modules, never the engine.
        let Some(module) = statement.child_by_field_name("module_name").filter(|m| m.kind() == "dotted_name") else {
            return;
        };
        let module = self.file.text(module).to_string();
        let mut cursor = statement.walk();
        let names: Vec<Node> = statement.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            let (imported, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name").map(|n| self.file.text(n)),
                    name.child_by_field_name("alias").map(|n| self.file.text(n).to_string()),
                ),
                _ => (Some(self.file.text(name)), None),
            };
            if let Some(imported) = imported {
                self.emit_import(statement, module.clone(), Some(imported.to_string()), alias, ctx);
            }
        }
        if named_children(statement).iter().any(|n| n.kind() == "wildcard_import") {
            self.emit_import(statement, module, Some("*".to_string()), None, ctx);
        }
    }

    fn emit_import(&mut self, at: Node<'a>, module: String, name: Option<String>, alias: Option<String>, ctx: &Ctx) {
        if !super::bindings::is_engine_module(&module, self.engine) {
            return;
        }
        let guard = self.guard_for(Failure::Import, None, ctx);
        self.emit(UseKind::Import { module, name, alias }, guard, at, ctx);
    }

    /// `importlib.import_module("sglang.x")` with a literal name.
    fn visit_dynamic_import(&mut self, call: Node<'a>, args: &[Node<'a>], ctx: &Ctx) {
        let Some(module) = args.first().and_then(|a| self.file.string_value(*a)) else {
            return;
        };
        self.emit_import(call, module, None, None, ctx);
    }

    // ---- scopes ----------------------------------------------------------------

    /// A def or a lambda (both have `parameters` and `body` fields): the body
    /// runs later, in its own scope.
    fn visit_function(&mut self, function: Node<'a>, ctx: &Ctx) {
        let bindings = match function.child_by_field_name("parameters") {
            Some(parameters) => self.visit_parameters(parameters, ctx),
            None => HashMap::new(),
        };
        if let Some(body) = function.child_by_field_name("body") {
            self.scopes.push(bindings);
            self.visit(body, &ctx.function_body());
            self.scopes.pop();
        }
    }

    /// Default values run where the def is (visited in `ctx`); annotations say
    /// which parameters hold a `ServerArgs`.
    fn visit_parameters(&mut self, parameters: Node<'a>, ctx: &Ctx) -> HashMap<String, Binding> {
        let mut bindings = HashMap::new();
        for parameter in named_children(parameters) {
            if let Some(default) = parameter.child_by_field_name("value") {
                self.visit(default, ctx);
            }
            let annotation = parameter.child_by_field_name("type");
            let name =
                parameter.child_by_field_name("name").or_else(|| named_children(parameter).into_iter().find(|n| n.kind() == "identifier"));
            if let (Some(annotation), Some(name)) = (annotation, name) {
                if let Some(class) = self.oracle.imports.annotation_class(self.file, annotation).filter(|_| name.kind() == "identifier") {
                    bindings.insert(self.file.text(name).to_string(), Binding::Value(class));
                }
            }
        }
        bindings
    }

    fn visit_class(&mut self, class: Node<'a>, ctx: &Ctx) {
        if let Some(bases) = class.child_by_field_name("superclasses") {
            self.visit(bases, ctx);
        }
        if let Some(body) = class.child_by_field_name("body") {
            // A class body runs when its definition does: same context, own names.
            self.scopes.push(HashMap::new());
            self.visit(body, ctx);
            self.scopes.pop();
        }
    }

    // ---- control flow ----------------------------------------------------------

    fn visit_try(&mut self, statement: Node<'a>, ctx: &Ctx) {
        let try_line = self.file.line(statement);
        let handlers = Rc::new(guards::handlers(self.file, statement));
        let mut handler_index = 0;
        for part in named_children(statement) {
            match part.kind() {
                "block" => {
                    let body_ctx = ctx.with(Active::Try { try_line, handlers: Rc::clone(&handlers) });
                    self.visit(part, &body_ctx);
                }
                "except_clause" => {
                    let mut handler_ctx = ctx.clone();
                    handler_ctx.in_except = Some(ExceptContext {
                        try_line,
                        catches: handlers.get(handler_index).map(|h| h.catches.clone()).unwrap_or_default(),
                    });
                    handler_index += 1;
                    for block in named_children(part).into_iter().filter(|n| n.kind() == "block") {
                        self.visit(block, &handler_ctx);
                    }
                }
                _ => self.visit(part, ctx),
            }
        }
    }

    fn visit_if(&mut self, statement: Node<'a>, ctx: &Ctx) {
        let Some(condition) = statement.child_by_field_name("condition") else {
            return self.visit_children(statement, ctx);
        };
        self.visit(condition, ctx);
        let before = self.scopes.snapshot();
        let mut outcomes = Vec::new();
        let mut cursor = statement.walk();
        let alternatives: Vec<Node> = statement.children_by_field_name("alternative", &mut cursor).collect();

        if let Some(consequence) = statement.child_by_field_name("consequence") {
            let mut body_ctx = ctx.clone();
            if is_type_checking(self.file.text(condition)) {
                body_ctx.type_only = true;
            }
            let else_raises =
                alternatives.iter().any(|a| a.kind() == "else_clause" && a.child_by_field_name("body").is_some_and(guards::ends_in_raise));
            if !else_raises {
                let fallback = match alternatives.first() {
                    Some(alternative) => self.branch_text(*alternative),
                    None => "(if body skipped)".to_string(),
                };
                body_ctx = body_ctx.with_facts(self.facts(condition, true), fallback);
            }
            self.visit(consequence, &body_ctx);
            outcomes.push(self.scopes.snapshot());
        }

        // Each `elif`/`else` runs only when every earlier condition was false.
        let mut missing_ctx = ctx.clone();
        let mut earlier = condition;
        let mut earlier_body = statement.child_by_field_name("consequence");
        let mut has_else = false;
        for alternative in alternatives {
            self.scopes.restore(before.clone());
            // When the earlier branch raises, a failed test still fails the worker.
            if !earlier_body.is_some_and(guards::ends_in_raise) {
                let fallback = earlier_body.map(|b| self.first_statement_text(b)).unwrap_or_default();
                missing_ctx = missing_ctx.with_facts(self.facts(earlier, false), fallback);
            }
            match alternative.kind() {
                "elif_clause" => {
                    if let Some(elif_condition) = alternative.child_by_field_name("condition") {
                        self.visit(elif_condition, &missing_ctx);
                        if let Some(body) = alternative.child_by_field_name("consequence") {
                            let body_ctx = missing_ctx.with_facts(self.facts(elif_condition, true), "(elif body skipped)".to_string());
                            self.visit(body, &body_ctx);
                        }
                        earlier = elif_condition;
                        earlier_body = alternative.child_by_field_name("consequence");
                    }
                }
                _ => {
                    has_else = true;
                    self.visit_children(alternative, &missing_ctx);
                }
            }
            outcomes.push(self.scopes.snapshot());
        }
        if !has_else {
            outcomes.push(before);
        }
        self.join_outcomes(outcomes);
    }

    /// Loop bodies may run zero times: bindings after the loop join both cases.
    fn visit_loop(&mut self, statement: Node<'a>, ctx: &Ctx) {
        let before = self.scopes.snapshot();
        self.visit_children(statement, ctx);
        let after = self.scopes.snapshot();
        self.scopes.restore(Scopes::join(&before, &after));
    }

    fn join_outcomes(&mut self, outcomes: Vec<HashMap<String, Binding>>) {
        let mut iter = outcomes.into_iter();
        if let Some(first) = iter.next() {
            let joined = iter.fold(first, |acc, next| Scopes::join(&acc, &next));
            self.scopes.restore(joined);
        }
    }

    /// `a and b`: `b` runs only when `a` is true; `a or b`: only when `a` is false.
    fn visit_boolean(&mut self, expression: Node<'a>, ctx: &Ctx) {
        let (Some(left), Some(right)) = (expression.child_by_field_name("left"), expression.child_by_field_name("right")) else {
            return self.visit_children(expression, ctx);
        };
        let is_and = expression.child_by_field_name("operator").is_some_and(|o| o.kind() == "and");
        self.visit(left, ctx);
        let facts = self.facts(left, is_and);
        let right_ctx = ctx.with_facts(facts, guards::statement_text(self.file, left));
        self.visit(right, &right_ctx);
    }

    /// `x if c else y`.
    fn visit_conditional(&mut self, expression: Node<'a>, ctx: &Ctx) {
        let parts = named_children(expression);
        let [body, condition, other] = parts[..] else {
            return self.visit_children(expression, ctx);
        };
        self.visit(condition, ctx);
        let body_ctx = ctx.with_facts(self.facts(condition, true), guards::statement_text(self.file, other));
        self.visit(body, &body_ctx);
        let other_ctx = ctx.with_facts(self.facts(condition, false), guards::statement_text(self.file, body));
        self.visit(other, &other_ctx);
    }

    fn facts(&self, condition: Node<'a>, truth: bool) -> Vec<String> {
        let oracle = &self.oracle;
        let scopes = &self.scopes;
        let file = self.file;
        let is_receiver = |n: Node| oracle.value_class(n, scopes).or_else(|| oracle.imports.class_ref(file, n)).is_some();
        guards::hasattr_facts(self.file, condition, truth, &is_receiver)
    }

    // ---- assignments -----------------------------------------------------------

    fn visit_assignment(&mut self, assignment: Node<'a>, ctx: &Ctx) {
        let right = assignment.child_by_field_name("right");
        if let Some(right) = right {
            self.visit(right, ctx);
        }
        let Some(left) = assignment.child_by_field_name("left") else {
            return;
        };
        self.visit_target(left, ctx);
        // `a = b = value`: every target takes the innermost value.
        let mut value = right;
        while let Some(v) = value.filter(|v| v.kind() == "assignment") {
            value = v.child_by_field_name("right");
        }
        let annotated = assignment.child_by_field_name("type").and_then(|t| self.oracle.imports.annotation_class(self.file, t));
        match left.kind() {
            "identifier" => {
                let binding = match annotated {
                    Some(class) => Some(Binding::Value(class)),
                    None => value.and_then(|v| self.oracle.classify(v, &self.scopes)),
                };
                self.scopes.bind(self.file.text(left), binding);
            }
            _ => self.forget_names(left),
        }
    }

    /// Unpacking targets get values the walk cannot follow.
    fn forget_names(&mut self, target: Node<'a>) {
        if target.kind() == "identifier" {
            self.scopes.bind(self.file.text(target), None);
            return;
        }
        if target.kind() == "attribute" || target.kind() == "subscript" {
            return;
        }
        for child in named_children(target) {
            self.forget_names(child);
        }
    }

    fn visit_augmented_assignment(&mut self, assignment: Node<'a>, ctx: &Ctx) {
        if let Some(right) = assignment.child_by_field_name("right") {
            self.visit(right, ctx);
        }
        if let Some(left) = assignment.child_by_field_name("left") {
            self.visit_target(left, ctx);
        }
    }

    /// An assignment or `del` target: attributes in it are written, the rest is read.
    fn visit_target(&mut self, target: Node<'a>, ctx: &Ctx) {
        match target.kind() {
            "attribute" => self.visit_attribute(target, ctx, true),
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "expression_list"
            | "tuple"
            | "list"
            | "parenthesized_expression"
            | "list_splat_pattern" => {
                for child in named_children(target) {
                    self.visit_target(child, ctx);
                }
            }
            _ => self.visit(target, ctx),
        }
    }

    // ---- attribute uses --------------------------------------------------------

    fn visit_attribute(&mut self, attribute: Node<'a>, ctx: &Ctx, write: bool) {
        let (Some(object), Some(name)) = (attribute.child_by_field_name("object"), attribute.child_by_field_name("attribute")) else {
            return self.visit_children(attribute, ctx);
        };
        if let Some(class) = self.receiver_class(object) {
            let name = self.file.text(name).to_string();
            let called = !write && is_called(attribute);
            let guard = self.guard_for(Failure::Attribute, Some(&name), ctx);
            let kind = UseKind::Attribute { class: self.oracle.imports.classes.name(class).to_string(), attribute: name, called, write };
            self.emit(kind, guard, attribute, ctx);
        }
        self.visit(object, ctx);
    }

    /// The class whose value (or the class itself) `node` is.
    fn receiver_class(&self, node: Node<'a>) -> Option<usize> {
        self.oracle.value_class(node, &self.scopes).or_else(|| self.oracle.imports.class_ref(self.file, node))
    }

    fn visit_call(&mut self, call: Node<'a>, ctx: &Ctx) {
        let function = call.child_by_field_name("function");
        let args: Vec<Node> = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a.kind() != "keyword_argument")
            .collect();
        if let Some(function) = function {
            match function.kind() {
                "identifier" => match self.file.text(function) {
                    "getattr" | "hasattr" | "setattr" => self.visit_reflection(call, function, &args, ctx),
                    "import_module" => self.visit_dynamic_import(call, &args, ctx),
                    _ => {}
                },
                "attribute" if self.file.text(function) == "importlib.import_module" => self.visit_dynamic_import(call, &args, ctx),
                _ => {}
            }
        }
        self.visit_children(call, ctx);
    }

    /// `getattr(sa, "x"[, default])`, `hasattr(sa, "x")`, `setattr(sa, "x", v)`
    /// with a literal name; a computed name is not knowable and not reported.
    fn visit_reflection(&mut self, call: Node<'a>, function: Node<'a>, args: &[Node<'a>], ctx: &Ctx) {
        let Some(class) = args.first().filter(|_| args.len() >= 2).and_then(|a| self.receiver_class(*a)) else {
            return;
        };
        let Some(name) = self.file.string_value(args[1]) else {
            return;
        };
        let reflection = self.file.text(function);
        let guard = match (reflection, args.get(2)) {
            ("getattr", Some(default)) => Some(Guard {
                kind: GuardKind::Getattr,
                fallback: guards::statement_text(self.file, *default),
                then_calls: self.engine_calls_after(call),
            }),
            ("hasattr", _) => Some(Guard { kind: GuardKind::Hasattr, fallback: "False".to_string(), then_calls: Vec::new() }),
            _ => self.guard_for(Failure::Attribute, Some(&name), ctx),
        };
        let kind = UseKind::Attribute {
            class: self.oracle.imports.classes.name(class).to_string(),
            attribute: name,
            called: reflection == "getattr" && is_called(call),
            write: reflection == "setattr",
        };
        self.emit(kind, guard, call, ctx);
    }

    /// The engine functions (imported by name) called by the statements that
    /// follow the one holding `node` in its function's body.
    fn engine_calls_after(&self, node: Node<'a>) -> Vec<(String, String)> {
        let mut stmt = node;
        while let Some(parent) = stmt.parent() {
            if parent.kind() == "block" && parent.parent().is_some_and(|p| p.kind() == "function_definition") {
                break;
            }
            stmt = parent;
        }
        let Some(body) = stmt.parent().filter(|b| b.kind() == "block") else { return Vec::new() };
        let mut out = Vec::new();
        for later in named_children(body).into_iter().skip_while(|s| s.id() != stmt.id()).skip(1) {
            crate::extract::python::walk(later, |n| {
                let callee = (n.kind() == "call").then(|| n.child_by_field_name("function")).flatten();
                if let Some(source) =
                    callee.filter(|f| f.kind() == "identifier").and_then(|f| self.oracle.imports.sources.get(self.file.text(f)))
                {
                    out.push(source.clone());
                }
                true
            });
        }
        out.sort();
        out.dedup();
        out
    }

    // ---- output ----------------------------------------------------------------

    /// The innermost active protection against `failure`.
    fn guard_for(&self, failure: Failure, attribute: Option<&str>, ctx: &Ctx) -> Option<Guard> {
        ctx.guards.iter().rev().find_map(|active| match active {
            Active::Try { try_line, handlers } => guards::recovering_handler(handlers, failure).map(|h| Guard {
                kind: GuardKind::TryExcept { catches: h.catches.clone(), try_line: *try_line },
                fallback: h.fallback.clone(),
                then_calls: Vec::new(),
            }),
            Active::Hasattr { attributes, fallback } => {
                let proven = failure == Failure::Attribute && attribute.is_some_and(|a| attributes.iter().any(|p| p == a));
                proven.then(|| Guard { kind: GuardKind::Hasattr, fallback: fallback.clone(), then_calls: Vec::new() })
            }
        })
    }

    fn emit(&mut self, kind: UseKind, guard: Option<Guard>, at: Node<'a>, ctx: &Ctx) {
        let evidence = self.file.evidence(at);
        let snippet = self.lines.get(evidence.line as usize - 1).map(|l| l.trim().to_string()).unwrap_or_default();
        self.uses.push(ConsumerUse {
            kind,
            guard,
            top_level: ctx.top_level,
            type_only: ctx.type_only,
            in_except: ctx.in_except.clone(),
            unreached_if_imported: ctx.unreached_if_imported.clone(),
            evidence,
            snippet,
        });
    }

    fn first_statement_text(&self, block: Node<'a>) -> String {
        named_children(block).first().map(|s| guards::statement_text(self.file, *s)).unwrap_or_default()
    }

    /// What an `elif`/`else` branch does first, as fallback text.
    fn branch_text(&self, alternative: Node<'a>) -> String {
        match alternative.kind() {
            "elif_clause" => alternative
                .child_by_field_name("condition")
                .map(|c| format!("elif {}:", guards::statement_text(self.file, c)))
                .unwrap_or_default(),
            _ => alternative.child_by_field_name("body").map(|b| self.first_statement_text(b)).unwrap_or_default(),
        }
    }
}

/// Whether `node` is the callee of a call (`node(...)`).
fn is_called(node: Node) -> bool {
    node.parent().is_some_and(|p| p.kind() == "call" && p.child_by_field_name("function").is_some_and(|f| f.id() == node.id()))
}

fn is_type_checking(condition: &str) -> bool {
    matches!(condition.trim(), "TYPE_CHECKING" | "typing.TYPE_CHECKING")
}
