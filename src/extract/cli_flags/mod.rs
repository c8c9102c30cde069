//! The options of an engine's server parser, as argparse builds them.
//!
//! Reading starts at `ServerArgs.add_cli_args(parser)` in `sglang.srt.server_args`
//! and walks its body in order: `parser.add_argument(...)` calls (also on
//! argument groups), calls that pass the parser on (followed into engine
//! functions and methods), the field-driven registrar (`dataclass`), local
//! choice lists and their mutations, and `set_defaults`. Values are folded by
//! [`consts`](crate::extract::consts); what cannot be folded is dynamic.

mod actions;
mod argparse;
pub(crate) mod config_kwargs;
mod dataclass;
mod entry;
pub mod help_deprecation;
mod parser;
mod paths;
mod resolution;
mod rewrites;
mod spellings;
mod type_hints;

use super::consts::env_gate;

pub(crate) use parser::parser_facts;

/// What the engine's parser class rewrites in the command line before argparse
/// reads it (vLLM's `FlexibleArgumentParser.parse_args`): the class is the one
/// the entry function's parser parameter is annotated with.
pub(crate) fn parser_rewrites(pkg: &Package, module: &str, class_name: &str, method: &str) -> crate::surface::ArgRewrites {
    let ev = ConstEval::new(pkg);
    let mut walker = Walker::new(&ev, true);
    let class = entry_class(module, class_name);
    walker.walk_function(module, class.as_ref(), method, &[Role::Parser], HashMap::new());
    match &walker.parser_class {
        Some(parser) => rewrites::read(&ev, parser),
        None => crate::surface::ArgRewrites::default(),
    }
}

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use self::argparse::{build_flag, ActionCache, ArgCall, KwArg};
use super::consts::{
    apply_mutation, class_body, find_definition, flat_statements, is_mutating_method, ClassRef, ConstEval, Folded, Locals, Scope, Stmt, Val,
};
use super::package::Package;
use super::python::{named_children, PyFile};
use crate::profiles::{FlagsStrategy, ResolutionProfile};
use crate::surface::{Evidence, ExtractWarning, Flag, Known, PyValue};

/// How deep calls that pass the parser on are followed.
const MAX_CALL_DEPTH: usize = 12;

/// Every option of the engine's server parser, as `strategy` says it is built,
/// in registration order, starting with argparse's own `-h/--help`.
pub fn extract_flags(
    pkg: &Package,
    strategy: &FlagsStrategy,
    resolution: Option<&ResolutionProfile>,
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<Flag> {
    match strategy {
        FlagsStrategy::ArgparseMethod { module, class, method } => {
            extract_flags_from(pkg, &format!("{}.{module}", pkg.name), class, method, resolution, warnings)
        }
        FlagsStrategy::ArgparseFunction { .. } => extract_flags_by(pkg, strategy, resolution, warnings),
        FlagsStrategy::ArgparseEntry { module, function } => extract_entry(pkg, &format!("{}.{module}", pkg.name), function, warnings).0,
        FlagsStrategy::ClickCommand { module, function } => {
            super::click_options::extract_click_options(pkg, &format!("{}.{module}", pkg.name), function, warnings)
        }
        FlagsStrategy::ClapDerive { file, subcommand, prefilter } => {
            let cmd = super::clap_derive::ClapCommand { file, subcommand, prefilter: *prefilter };
            super::clap_derive::extract_clap_file(pkg, &cmd, warnings).0
        }
    }
}

/// Flags and parser facts of an [`FlagsStrategy::ArgparseEntry`] engine: the
/// parser `function` (in `module`, or imported there) builds itself.
pub(crate) fn extract_entry(
    pkg: &Package,
    module: &str,
    function: &str,
    warnings: &mut Vec<ExtractWarning>,
) -> (Vec<Flag>, crate::surface::ParserFacts) {
    let options = WalkOptions { own_parser: true, ..WalkOptions::default() };
    let (flags, built) = walk_flags(pkg, module, "", function, options, warnings);
    let facts = match built {
        Some(built) => {
            let ev = ConstEval::new(pkg);
            crate::surface::ParserFacts {
                allow_abbrev: built.allow_abbrev,
                evidence: Some(built.evidence),
                rewrites: built.class.as_ref().map(|c| rewrites::read(&ev, c)).unwrap_or_default(),
            }
        }
        None => {
            warnings.push(ExtractWarning {
                path: pkg.module_path(module).unwrap_or_else(|| module.to_string()),
                message: format!("`{function}` builds no `ArgumentParser(...)` that options are added to; no flags extracted"),
            });
            crate::surface::ParserFacts::default()
        }
    };
    (flags, facts)
}

/// What the walk needs to know about an engine beyond its entry point.
#[derive(Default, Clone, Copy)]
pub(crate) struct WalkOptions<'s> {
    /// Where fields the parser leaves `None` are resolved ([`resolution`]).
    pub resolution: Option<&'s ResolutionProfile>,
    /// The function computing `add_argument` keywords from a config
    /// dataclass (dotted below the package root).
    pub kwargs_from_fields: Option<(&'s str, &'s str)>,
    /// Help texts that say the flag is deprecated mark it so.
    pub help_deprecations: bool,
    /// The entry function takes no parser: it builds its own
    /// ([`FlagsStrategy::ArgparseEntry`]), and parses it.
    pub own_parser: bool,
}

/// The parser an entry function builds itself.
pub(crate) struct BuiltParser {
    /// Its `allow_abbrev=`.
    pub allow_abbrev: Known<bool>,
    /// The construction.
    pub evidence: Evidence,
    /// The engine class it is made from (`FlexibleArgumentParser`), none for argparse's own.
    pub class: Option<ClassRef>,
}

/// Flags of an [`FlagsStrategy::ArgparseFunction`] engine: the server parser,
/// each flag marked with whether the engine-only parser accepts it.
pub(crate) fn extract_flags_by(
    pkg: &Package,
    strategy: &FlagsStrategy,
    resolution: Option<&ResolutionProfile>,
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<Flag> {
    let FlagsStrategy::ArgparseFunction { module, function, kwargs_from_fields, engine_parser, help_deprecations } = strategy else {
        return extract_flags(pkg, strategy, resolution, warnings);
    };
    let options =
        WalkOptions { resolution, kwargs_from_fields: *kwargs_from_fields, help_deprecations: *help_deprecations, own_parser: false };
    let module = format!("{}.{module}", pkg.name);
    let mut flags = extract_flags_with(pkg, &module, "", function, options, warnings);
    if let Some((m, class, method)) = engine_parser {
        let mut engine_warnings = Vec::new();
        let engine = extract_flags_with(pkg, &format!("{}.{m}", pkg.name), class, method, options, &mut engine_warnings);
        // The engine parser's own problems are the server parser's too (it walks the same code).
        let accepted: HashSet<&str> = engine.iter().skip(1).flat_map(|f| f.names.iter().map(String::as_str)).collect();
        if accepted.is_empty() {
            warnings.push(ExtractWarning {
                path: pkg.module_path(&format!("{}.{m}", pkg.name)).unwrap_or_default(),
                message: format!("no `{class}.{method}` options found: which flags the engine-only parser accepts is unknown"),
            });
        } else {
            for f in &mut flags {
                f.engine_parser = Some(f.names.iter().any(|n| accepted.contains(n.as_str())));
            }
        }
    }
    flags
}

/// Flags registered by `module.class_name.method(parser)` (or a module-level
/// function when `class_name` is empty).
pub(crate) fn extract_flags_from(
    pkg: &Package,
    module: &str,
    class_name: &str,
    method: &str,
    resolution: Option<&ResolutionProfile>,
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<Flag> {
    extract_flags_with(pkg, module, class_name, method, WalkOptions { resolution, ..WalkOptions::default() }, warnings)
}

/// [`extract_flags_from`] with what the engine's profile adds.
pub(crate) fn extract_flags_with(
    pkg: &Package,
    module: &str,
    class_name: &str,
    method: &str,
    options: WalkOptions,
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<Flag> {
    walk_flags(pkg, module, class_name, method, options, warnings).0
}

/// [`extract_flags_with`], and the parser the entry built when it builds its own.
fn walk_flags(
    pkg: &Package,
    module: &str,
    class_name: &str,
    method: &str,
    options: WalkOptions,
    warnings: &mut Vec<ExtractWarning>,
) -> (Vec<Flag>, Option<BuiltParser>) {
    let mut ev = ConstEval::new(pkg);
    // A server that builds its own parser is read as started in a clean
    // environment: which entry runs and what defaults read from it are so.
    if options.own_parser {
        ev = super::consts::with_unset_env(ev);
    }
    let chosen = options.own_parser.then(|| entry::chosen_import(&ev, module, method)).flatten();
    let (module, method) = match &chosen {
        Some((m, f)) => (m.as_str(), f.as_str()),
        None => (module, method),
    };
    if let Some((m, f)) = options.kwargs_from_fields {
        // Defaults read from the environment are argparse's with it unset.
        ev = super::consts::with_unset_env(ev);
        let generator = format!("{}.{m}", pkg.name);
        ev = ev.with_native(&format!("{generator}.{f}"), config_kwargs::native(&generator, f));
    }
    let mut walker = Walker::new(&ev, false);
    walker.own_parser = options.own_parser;
    let class = entry_class(module, class_name);
    let entry_args: &[Role] = if options.own_parser { &[] } else { &[Role::Parser] };
    let entry_found = walker.walk_function(module, class.as_ref(), method, entry_args, HashMap::new());
    let mut flags = Vec::new();
    let registry = walker.parser_class.as_ref().map(|c| actions::parser_action_registry(&ev, c)).unwrap_or_default();
    // A parser class whose `add_argument` registers the other spelling of each
    // long option too (ATOM's `FlexibleArgumentParser`).
    let both_spellings = walker.parser_class.as_ref().and_then(|c| spellings::both_spellings(&ev, c));
    match entry_found {
        Some(walked) => flags.push(help_flag(walked.evidence)),
        None => walker.warnings.push(ExtractWarning {
            path: pkg.module_path(module).unwrap_or_else(|| module.to_string()),
            message: format!("no `{class_name}.{method}` found; no flags extracted"),
        }),
    }
    let mut calls = std::mem::take(&mut walker.calls);
    if both_spellings.is_some() {
        spellings::expand(&mut calls);
    }
    // Positionals (`model_tag`) are not options: recipes cannot name them.
    for call in calls.iter().filter(|c| c.names.iter().all(|n| n.starts_with('-'))) {
        let mut flag = build_flag(&ev, &mut walker.actions, &registry, call);
        if options.help_deprecations && flag.deprecated.is_none() {
            flag.deprecated = flag.help.as_deref().and_then(|h| help_deprecation::from_help(h, &flag.names, &flag.dest));
        }
        flags.push(flag);
    }
    for (dest, value) in &walker.set_defaults {
        for f in flags.iter_mut().filter(|f| &f.dest == dest) {
            f.default = value.clone();
            // A default other than `None` makes the field's fallback unreachable.
            if !matches!(value, Known::Value(PyValue::Null)) {
                f.effective_default = None;
            }
        }
    }
    if let Some(profile) = options.resolution {
        resolution::resolve_effective_defaults(&ev, pkg, profile, class_name, &mut flags);
    }
    let built = walker.built.take();
    warnings.extend(walker.warnings);
    warnings.extend(ev.take_warnings());
    (flags, built)
}

/// argparse adds `-h/--help` to every parser made with the default `add_help`.
fn help_flag(evidence: Evidence) -> Flag {
    Flag {
        names: vec!["-h".into(), "--help".into()],
        dest: "help".into(),
        action: "help".into(),
        type_name: None,
        nargs: Some(serde_json::json!(0)),
        choices: None,
        choices_when_env: Default::default(),
        default: Known::Value(PyValue::String("==SUPPRESS==".into())),
        const_value: None,
        required: false,
        deprecated: None,
        help: Some("show this help message and exit".into()),
        evidence,
        effective_default: None,
        engine_parser: None,
    }
}

/// What a value passed into a walked function is.
#[derive(Clone, Debug)]
enum Role {
    /// The parser.
    Parser,
    /// An argument group of it: registers on the parser's container, but
    /// with argparse's own `add_argument`, not the parser class's override.
    Group,
    Value(Folded),
}

struct Walker<'e, 'p> {
    ev: &'e ConstEval<'p>,
    actions: ActionCache,
    calls: Vec<ArgCall>,
    set_defaults: Vec<(String, Known<PyValue>)>,
    /// Functions being walked (recursion guard).
    stack: Vec<String>,
    warnings: Vec<ExtractWarning>,
    /// The engine class the entry function's parser parameter is annotated
    /// with (`parser: FlexibleArgumentParser`): its action registry applies.
    parser_class: Option<ClassRef>,
    /// Stop at the entry function once its parser class is known.
    probe_only: bool,
    /// The entry function builds its own parser ([`WalkOptions::own_parser`]).
    own_parser: bool,
    /// The parser it built.
    built: Option<BuiltParser>,
    /// The entry's parser was parsed: what follows registers nothing on it.
    parsed: bool,
}

impl<'e, 'p> Walker<'e, 'p> {
    fn new(ev: &'e ConstEval<'p>, probe_only: bool) -> Self {
        Walker {
            ev,
            actions: ActionCache::default(),
            calls: Vec::new(),
            set_defaults: Vec::new(),
            stack: Vec::new(),
            warnings: Vec::new(),
            parser_class: None,
            probe_only,
            own_parser: false,
            built: None,
            parsed: false,
        }
    }
}

/// The class the parser is built from (`ServerArgs`), none for a module-level function.
fn entry_class(module: &str, class_name: &str) -> Option<ClassRef> {
    (!class_name.is_empty()).then(|| ClassRef { module: module.to_string(), name: class_name.to_string() })
}

/// A function walked: where it is, and what its last unconditional `return` gave.
struct Walked {
    evidence: Evidence,
    returned: Option<Folded>,
}

/// Variables of the function being walked.
struct Frame<'a> {
    module: &'a str,
    /// The class the method was called on (`cls`).
    class: Option<&'a ClassRef>,
    /// The class that defines the method (`super()` starts above it).
    defined_in: Option<ClassRef>,
    parsers: HashSet<String>,
    /// Those of `parsers` that are argument groups.
    groups: HashSet<String>,
    locals: Locals,
    returned: Option<Folded>,
    /// What blocks that run only with an env var set would add to each local
    /// list: local → env var → values ([`env_gate`]).
    gated: HashMap<String, std::collections::BTreeMap<String, Vec<PyValue>>>,
}

impl Frame<'_> {
    fn scope(&self) -> Scope<'_> {
        Scope { module: self.module, locals: Some(&self.locals), class: None }
    }
}

impl<'e, 'p> Walker<'e, 'p> {
    /// Walk a function (a method of `class` when given, found on the class or
    /// its engine bases; a module-level function found by the name `module`
    /// binds, imported or defined) with its positional parameters bound to
    /// `args` (after `self`/`cls`, which is the class). `None` when not found.
    fn walk_function(
        &mut self,
        module: &str,
        class: Option<&ClassRef>,
        name: &str,
        args: &[Role],
        kwargs: HashMap<String, Role>,
    ) -> Option<Walked> {
        let (def_module, defined_in, def_file) = match class {
            Some(c) => {
                let owner = self.method_owner(c, name, 0)?;
                let file = self.ev.module_file(&owner.module)?;
                (owner.module.clone(), Some(owner), file)
            }
            None => {
                let file = self.ev.module_file(module)?;
                let defined = find_definition(&file.source, file.root(), name).is_some_and(|d| d.kind() == "function_definition");
                if !defined {
                    // Imported: walk it where it is defined.
                    return match self.ev.global(module, name) {
                        Ok(Val::Function(m, q)) if (m.as_str(), q.as_str()) != (module, name) => match q.rsplit_once('.') {
                            Some((c, n)) => {
                                let class = ClassRef { module: m.clone(), name: c.to_string() };
                                self.walk_function(&m, Some(&class), n, args, kwargs)
                            }
                            None => self.walk_function(&m, None, &q, args, kwargs),
                        },
                        _ => None,
                    };
                }
                (module.to_string(), None, file)
            }
        };
        let file = def_file;
        let def = match &defined_in {
            Some(owner) => {
                let body = self.ev.class_def(&file, &owner.name).and_then(class_body)?;
                find_definition(&file.source, body, name)?
            }
            None => find_definition(&file.source, file.root(), name)?,
        };
        if def.kind() != "function_definition" {
            return None;
        }
        let key = format!("{def_module}:{}.{name}", class.map(|c| c.name.as_str()).unwrap_or(""));
        if self.stack.contains(&key) || self.stack.len() >= MAX_CALL_DEPTH {
            return Some(Walked { evidence: file.evidence(def), returned: None });
        }
        if self.stack.is_empty() && self.parser_class.is_none() {
            self.parser_class = self.parser_annotation(&file, &def_module, def, is_static(&file, def, class.is_some()));
        }
        if self.probe_only {
            return Some(Walked { evidence: file.evidence(def), returned: None });
        }
        self.stack.push(key);
        let mut frame = Frame {
            module: &def_module,
            class,
            defined_in,
            parsers: HashSet::new(),
            groups: HashSet::new(),
            locals: Locals::new(),
            returned: None,
            gated: HashMap::new(),
        };
        bind_params(&file, def, is_static(&file, def, class.is_some()), args, &kwargs, &mut frame);
        if let Some(body) = def.child_by_field_name("body") {
            self.walk_body(&file, body, &mut frame);
        }
        self.stack.pop();
        Some(Walked { evidence: file.evidence(def), returned: frame.returned })
    }

    /// The engine class (`c` or one of its engine bases, nearest first) that defines `name`.
    fn method_owner(&self, c: &ClassRef, name: &str, depth: usize) -> Option<ClassRef> {
        if depth > 16 {
            return None;
        }
        let file = self.ev.module_file(&c.module)?;
        let body = self.ev.class_def(&file, &c.name).and_then(class_body)?;
        if find_definition(&file.source, body, name).is_some() {
            return Some(c.clone());
        }
        self.ev.class_bases(c).into_iter().find_map(|b| match b {
            Val::Class(base) => self.method_owner(&base, name, depth + 1),
            _ => None,
        })
    }

    /// The engine class the first parser parameter of the entry function is
    /// annotated with.
    fn parser_annotation(&self, file: &PyFile, module: &str, def: Node, is_static: bool) -> Option<ClassRef> {
        let params = def.child_by_field_name("parameters")?;
        let typed: Vec<Node> = named_children(params).into_iter().collect();
        let first = typed.get(if is_static { 0 } else { 1 })?;
        let annotation = first.child_by_field_name("type")?;
        match self.ev.eval(file, annotation, Scope::module(module)) {
            Ok(Val::Class(c)) => Some(c),
            _ => None,
        }
    }

    fn walk_body(&mut self, file: &PyFile, body: Node, frame: &mut Frame) {
        let statements = flat_statements(body);
        // The end of a loop unrolled here: its flattened body is skipped.
        let mut unrolled_until = 0;
        // Blocks that run only with an env var set: (byte range, var).
        let mut skipped: Vec<(usize, usize, String)> = Vec::new();
        for stmt in statements {
            let node = stmt.node;
            if self.parsed {
                return;
            }
            if node.start_byte() < unrolled_until {
                continue;
            }
            let gate = skipped.iter().find(|(s, e, _)| node.start_byte() >= *s && node.end_byte() <= *e).map(|(_, _, env)| env.clone());
            if let Some(env) = gate {
                if let Some((local, values)) = env_gate::added_values(self.ev, file, frame.scope(), node) {
                    env_gate::merge(frame.gated.entry(local).or_default(), &env, values);
                }
                continue;
            }
            if let Some(env) = env_gate::off_by_default(self.ev, file, frame.module, node) {
                if let Some(block) = node.child_by_field_name("consequence") {
                    skipped.push((block.start_byte(), block.end_byte(), env));
                }
                continue;
            }
            // Under `if`s whose tests fold, a statement runs or not for certain.
            let conditional = match stmt.conditional.then(|| self.guards_hold(file, node, body, frame)) {
                Some(Some(false)) => continue,
                Some(Some(true)) | None => false,
                Some(None) => true,
            };
            let stmt = consts_stmt(node, conditional);
            if node.kind() == "import_from_statement" && !conditional {
                self.bind_local_imports(file, node, frame);
                continue;
            }
            if node.kind() == "return_statement" && !stmt.conditional {
                frame.returned = node.named_child(0).map(|v| self.ev.eval(file, v, frame.scope()));
                return;
            }
            if node.kind() == "for_statement" && !stmt.conditional && self.unroll(file, node, frame) {
                unrolled_until = node.end_byte();
                continue;
            }
            if node.kind() == "delete_statement" {
                self.visit_delete(file, node, frame, stmt.conditional);
                continue;
            }
            if node.kind() != "expression_statement" {
                continue;
            }
            for expr in named_children(node) {
                match expr.kind() {
                    "call" => self.visit_call(file, expr, frame, stmt.conditional),
                    "assignment" => self.visit_assignment(file, expr, frame, stmt.conditional),
                    "augmented_assignment" => self.visit_augmented(file, expr, frame, stmt.conditional),
                    _ => {}
                }
            }
        }
    }

    /// Whether the `if` tests between `node` and `body` all hold: `None` when
    /// one does not fold or `node` sits elsewhere than an `if`'s own block
    /// (an `else`, a loop, a handler).
    fn guards_hold(&self, file: &PyFile, node: Node, body: Node, frame: &Frame) -> Option<bool> {
        let mut cur = node;
        let mut holds = true;
        while let Some(parent) = cur.parent() {
            if parent.id() == body.id() {
                return Some(holds);
            }
            if parent.kind() == "block" {
                let owner = parent.parent()?;
                if owner.kind() != "if_statement" || owner.child_by_field_name("consequence").map(|c| c.id()) != Some(parent.id()) {
                    return None;
                }
                let test = owner.child_by_field_name("condition")?;
                holds &= self.ev.eval(file, test, frame.scope()).ok()?.truthy()?;
            }
            cur = parent;
        }
        None
    }

    /// `from m import a, b as c` inside the function: the names as the module binds them.
    fn bind_local_imports(&self, file: &PyFile, node: Node, frame: &mut Frame) {
        let Some(module_node) = node.child_by_field_name("module_name") else { return };
        let Some(target) = self.ev.import_target(frame.module, file, module_node) else { return };
        let mut cursor = node.walk();
        for name_node in node.children_by_field_name("name", &mut cursor) {
            let (orig, bound) = match name_node.kind() {
                "aliased_import" => match (name_node.child_by_field_name("name"), name_node.child_by_field_name("alias")) {
                    (Some(n), Some(a)) => (file.text(n).to_string(), file.text(a).to_string()),
                    _ => continue,
                },
                _ => (file.text(name_node).to_string(), file.text(name_node).to_string()),
            };
            let value = if self.ev.pkg.module_path(&target).is_none() {
                Ok(Val::External(format!("{target}.{orig}")))
            } else {
                match self.ev.global(&target, &orig) {
                    Ok(v) => Ok(v),
                    Err(e) if self.ev.pkg.module_path(&format!("{target}.{orig}")).is_some() => {
                        let _ = e;
                        Ok(Val::Module(format!("{target}.{orig}")))
                    }
                    Err(e) => Err(e),
                }
            };
            frame.locals.insert(bound, value);
        }
    }

    /// `for k, v in d.items(): ...` / `for x in xs: ...` over a value that
    /// folds: the body walked once per item. `false` when it does not fold.
    fn unroll(&mut self, file: &PyFile, node: Node, frame: &mut Frame) -> bool {
        let (Some(target), Some(iterable), Some(body)) =
            (node.child_by_field_name("left"), node.child_by_field_name("right"), node.child_by_field_name("body"))
        else {
            return false;
        };
        if node.child_by_field_name("alternative").is_some() {
            return false;
        }
        let Some(items) = self.ev.eval(file, iterable, frame.scope()).ok().and_then(|v| v.iter_items()) else { return false };
        let names: Vec<String> = match target.kind() {
            "identifier" => vec![file.text(target).to_string()],
            "pattern_list" | "tuple_pattern" => {
                let parts = named_children(target);
                if parts.iter().any(|p| p.kind() != "identifier") {
                    return false;
                }
                parts.iter().map(|p| file.text(*p).to_string()).collect()
            }
            _ => return false,
        };
        for item in items {
            match (names.as_slice(), &item) {
                ([one], _) => {
                    frame.locals.insert(one.clone(), Ok(item.clone()));
                }
                (many, Val::Tuple(parts) | Val::List(parts)) if parts.len() == many.len() => {
                    for (n, v) in many.iter().zip(parts) {
                        frame.locals.insert(n.clone(), Ok(v.clone()));
                    }
                }
                _ => return false,
            }
            self.walk_body(file, body, frame);
        }
        true
    }

    fn visit_assignment(&mut self, file: &PyFile, expr: Node, frame: &mut Frame, conditional: bool) {
        let (Some(left), Some(right)) = (expr.child_by_field_name("left"), expr.child_by_field_name("right")) else {
            return;
        };
        if left.kind() == "subscript" {
            return self.assign_path(file, left, right, frame, conditional);
        }
        // `args, unknown = parser.parse_known_args()` too.
        if self.is_parse_call(file, right, frame) {
            self.parsed = true;
            return;
        }
        if left.kind() != "identifier" {
            return;
        }
        let name = file.text(left).to_string();
        if self.is_group_call(file, right, frame) {
            frame.groups.insert(name.clone());
            frame.parsers.insert(name);
            return;
        }
        if self.builds_own_parser(file, right, frame) {
            frame.parsers.insert(name);
            return;
        }
        // `parser = Cls.add_cli_args(parser)`: registering functions return the parser.
        if right.kind() == "call" {
            let args = right.child_by_field_name("arguments").map(named_children).unwrap_or_default();
            if args.iter().any(|a| self.is_parser_arg(file, *a, frame)) {
                self.visit_call(file, right, frame, conditional);
                frame.parsers.insert(name);
                return;
            }
        }
        frame.parsers.remove(&name);
        frame.groups.remove(&name);
        let value = if conditional { Err(name.clone()) } else { self.value_of(file, right, frame) };
        frame.locals.insert(name, value);
    }

    /// What an assigned expression gives: folded; for `d.pop(k, default)` on a
    /// local dict, the value (and the key leaves the dict); for a call of an
    /// engine function that does not fold, what its walked body returns.
    fn value_of(&mut self, file: &PyFile, right: Node, frame: &mut Frame) -> Folded {
        let folded = self.ev.eval(file, right, frame.scope());
        if folded.is_ok() || right.kind() != "call" {
            return folded;
        }
        let Some(func) = right.child_by_field_name("function") else { return folded };
        let args = right.child_by_field_name("arguments").map(named_children).unwrap_or_default();
        if let Some((obj, "pop")) = receiver_and_method(file, func) {
            if let Some(Ok(Val::Dict(mut d))) = frame.locals.get(obj).cloned() {
                let vals: Option<Vec<Val>> = args.iter().map(|a| self.ev.eval(file, *a, frame.scope()).ok()).collect();
                let popped = match vals.as_deref() {
                    Some([key, rest @ ..]) if rest.len() <= 1 => match d.iter().position(|(k, _)| k == key) {
                        Some(i) => Some(d.remove(i).1),
                        None => rest.first().cloned(),
                    },
                    _ => None,
                };
                let obj = obj.to_string();
                return match popped {
                    Some(v) => {
                        frame.locals.insert(obj, Ok(Val::Dict(d)));
                        Ok(v)
                    }
                    None => {
                        frame.locals.insert(obj.clone(), Err(obj));
                        folded
                    }
                };
            }
        }
        let Some((module, class, name)) = self.resolve_callee(file, func, frame) else { return folded };
        let mut positional = Vec::new();
        for a in &args {
            if a.kind() == "keyword_argument" || a.kind().ends_with("splat") {
                return folded;
            }
            positional.push(Role::Value(self.ev.eval(file, *a, frame.scope())));
        }
        match self.walk_function(&module, class.as_ref(), &name, &positional, HashMap::new()) {
            Some(Walked { returned: Some(Ok(v)), .. }) => Ok(v),
            _ => folded,
        }
    }

    /// `d[k1][k2] = value` on a local.
    fn assign_path(&mut self, file: &PyFile, left: Node, right: Node, frame: &mut Frame, conditional: bool) {
        let Some((name, keys)) = paths::subscript_path(file, left) else { return };
        let Some(Ok(mut current)) = frame.locals.get(&name).cloned() else { return };
        let keys: Option<Vec<Val>> = keys.iter().map(|k| self.ev.eval(file, *k, frame.scope()).ok()).collect();
        // A value that does not fold still replaces the old one: it is no longer known.
        let value = self.ev.eval(file, right, frame.scope()).unwrap_or_else(|_| Val::Opaque(file.text(right).to_string()));
        let value = if conditional { Val::Opaque(file.text(left).to_string()) } else { value };
        let updated = match keys {
            Some(keys) if paths::set(&mut current, &keys, value) => Ok(current),
            _ => Err(name.clone()),
        };
        frame.locals.insert(name, updated);
    }

    /// `del d[k1][k2]` on a local.
    fn visit_delete(&mut self, file: &PyFile, node: Node, frame: &mut Frame, conditional: bool) {
        for target in named_children(node).into_iter().flat_map(|t| if t.kind() == "expression_list" { named_children(t) } else { vec![t] })
        {
            let Some((name, keys)) = paths::subscript_path(file, target) else { continue };
            let Some(Ok(mut current)) = frame.locals.get(&name).cloned() else { continue };
            let keys: Option<Vec<Val>> = keys.iter().map(|k| self.ev.eval(file, *k, frame.scope()).ok()).collect();
            // A `del` that may not run leaves the key's presence unknown.
            let updated = match keys {
                Some(keys) if !conditional && paths::delete(&mut current, &keys) => Ok(current),
                Some(keys) if conditional && paths::set(&mut current, &keys, Val::Opaque(file.text(target).to_string())) => Ok(current),
                _ => Err(name.clone()),
            };
            frame.locals.insert(name, updated);
        }
    }

    fn visit_augmented(&mut self, file: &PyFile, expr: Node, frame: &mut Frame, conditional: bool) {
        let (Some(left), Some(right)) = (expr.child_by_field_name("left"), expr.child_by_field_name("right")) else {
            return;
        };
        let method = match expr.child_by_field_name("operator").map(|o| file.text(o)) {
            Some("+=") => "__iadd__",
            Some("|=") => "__ior__",
            _ => "",
        };
        if left.kind() == "subscript" {
            let Some((name, keys)) = paths::subscript_path(file, left) else { return };
            let Some(Ok(mut current)) = frame.locals.get(&name).cloned() else { return };
            let keys: Option<Vec<Val>> = keys.iter().map(|k| self.ev.eval(file, *k, frame.scope()).ok()).collect();
            let arg = self.ev.eval(file, right, frame.scope()).ok();
            let updated = match (keys, arg, conditional) {
                (Some(keys), Some(arg), false) => {
                    let combined = paths::get(&current, &keys).and_then(|old| match (&old, &arg) {
                        (Val::Str(a), Val::Str(b)) => Some(Val::Str(format!("{a}{b}"))),
                        _ => apply_mutation(&old, method, std::slice::from_ref(&arg)),
                    });
                    let v = combined.unwrap_or_else(|| Val::Opaque(file.text(left).to_string()));
                    if paths::set(&mut current, &keys, v) {
                        Ok(current)
                    } else {
                        Err(name.clone())
                    }
                }
                // What the entry becomes is not known; the rest of the dict is.
                (Some(keys), _, _) if paths::set(&mut current, &keys, Val::Opaque(file.text(left).to_string())) => Ok(current),
                _ => Err(name.clone()),
            };
            frame.locals.insert(name, updated);
            return;
        }
        let name = file.text(left).to_string();
        let Some(current) = frame.locals.get(&name).cloned() else { return };
        let updated = match (current, conditional) {
            (Ok(v), false) => {
                self.ev.eval(file, right, frame.scope()).ok().and_then(|arg| apply_mutation(&v, method, &[arg])).ok_or_else(|| name.clone())
            }
            _ => Err(name.clone()),
        };
        frame.locals.insert(name, updated);
    }

    /// `parser = argparse.ArgumentParser(...)` (or an engine subclass of it)
    /// in the entry function of an [`WalkOptions::own_parser`] walk, before it
    /// has a parser: the one options are added to. Records it.
    fn builds_own_parser(&mut self, file: &PyFile, right: Node, frame: &Frame) -> bool {
        if !self.own_parser || self.built.is_some() || self.stack.len() != 1 || right.kind() != "call" {
            return false;
        }
        let Some(func) = right.child_by_field_name("function") else { return false };
        let class = match self.ev.eval(file, func, frame.scope()) {
            Ok(Val::External(name)) if name == "argparse.ArgumentParser" => None,
            Ok(Val::Class(c)) if self.derives_from_argparse(&c, 0) => Some(c),
            _ => return false,
        };
        self.parser_class = class.clone();
        self.built = Some(BuiltParser { allow_abbrev: parser::allow_abbrev_of(file, right), evidence: file.evidence(right), class });
        true
    }

    /// Whether an engine class is `argparse.ArgumentParser` below its engine bases.
    fn derives_from_argparse(&self, c: &ClassRef, depth: usize) -> bool {
        depth <= 16
            && self.ev.class_bases(c).into_iter().any(|b| match b {
                Val::External(name) => name == "argparse.ArgumentParser",
                Val::Class(base) => self.derives_from_argparse(&base, depth + 1),
                _ => false,
            })
    }

    /// `parser.parse_args(...)` / `parse_known_args(...)` on the parser the
    /// entry built: options added later are not the command line's.
    fn is_parse_call(&self, file: &PyFile, node: Node, frame: &Frame) -> bool {
        if !self.own_parser || node.kind() != "call" {
            return false;
        }
        let Some((obj, method)) = node.child_by_field_name("function").and_then(|f| receiver_and_method(file, f)) else {
            return false;
        };
        frame.parsers.contains(obj) && matches!(method, "parse_args" | "parse_known_args")
    }

    /// `parser.add_argument_group(...)` and the like: the result registers on the parser.
    fn is_group_call(&self, file: &PyFile, node: Node, frame: &Frame) -> bool {
        if node.kind() != "call" {
            return false;
        }
        let Some((obj, method)) = node.child_by_field_name("function").and_then(|f| receiver_and_method(file, f)) else {
            return false;
        };
        frame.parsers.contains(obj) && matches!(method, "add_argument_group" | "add_mutually_exclusive_group")
    }

    fn visit_call(&mut self, file: &PyFile, call: Node, frame: &mut Frame, conditional: bool) {
        let Some(func) = call.child_by_field_name("function") else { return };
        let args = call.child_by_field_name("arguments").map(named_children).unwrap_or_default();
        if let Some((obj, method)) = receiver_and_method(file, func) {
            if frame.parsers.contains(obj) {
                match method {
                    "add_argument" => {
                        if let Some(c) = self.arg_call(file, call, &args, frame) {
                            self.calls.push(c);
                        }
                    }
                    "set_defaults" => self.record_set_defaults(file, &args, frame),
                    "parse_args" | "parse_known_args" if self.own_parser => self.parsed = true,
                    _ => {}
                }
                return;
            }
            if is_mutating_method(method) {
                if let Some(Ok(current)) = frame.locals.get(obj).cloned() {
                    let folded: Option<Vec<Val>> = args.iter().map(|a| self.ev.eval(file, *a, frame.scope()).ok()).collect();
                    let updated = match (conditional, folded) {
                        (false, Some(vals)) => apply_mutation(&current, method, &vals).ok_or_else(|| obj.to_string()),
                        _ => Err(obj.to_string()),
                    };
                    frame.locals.insert(obj.to_string(), updated);
                    return;
                }
            }
        }
        // `d["x"]["choices"].remove(v)` on a local.
        if let (Some(object), Some(method)) = (
            func.child_by_field_name("object").filter(|_| func.kind() == "attribute"),
            func.child_by_field_name("attribute").map(|m| file.text(m)),
        ) {
            if is_mutating_method(method) {
                if let Some((name, keys)) = paths::subscript_path(file, object) {
                    if let Some(Ok(mut current)) = frame.locals.get(&name).cloned() {
                        let keys: Option<Vec<Val>> = keys.iter().map(|k| self.ev.eval(file, *k, frame.scope()).ok()).collect();
                        let vals: Option<Vec<Val>> = args.iter().map(|a| self.ev.eval(file, *a, frame.scope()).ok()).collect();
                        let updated = match (keys, vals, conditional) {
                            (Some(keys), Some(vals), false) if paths::mutate(&mut current, &keys, method, &vals) => Ok(current),
                            (Some(keys), _, _) if paths::set(&mut current, &keys, Val::Opaque(file.text(object).to_string())) => {
                                Ok(current)
                            }
                            _ => Err(name.clone()),
                        };
                        frame.locals.insert(name, updated);
                        return;
                    }
                }
            }
        }
        // A call that passes the parser on.
        let passes_parser = args.iter().any(|a| self.is_parser_arg(file, *a, frame));
        if passes_parser {
            self.follow_call(file, call, func, &args, frame);
        }
    }

    fn is_parser_arg(&self, file: &PyFile, arg: Node, frame: &Frame) -> bool {
        let node = if arg.kind() == "keyword_argument" {
            match arg.child_by_field_name("value") {
                Some(v) => v,
                None => return false,
            }
        } else {
            arg
        };
        node.kind() == "identifier" && frame.parsers.contains(file.text(node))
    }

    fn follow_call(&mut self, file: &PyFile, call: Node, func: Node, args: &[Node], frame: &mut Frame) {
        let target = self.resolve_callee(file, func, frame);
        let Some((module, class, name)) = target else {
            self.warnings.push(ExtractWarning {
                path: file.path.clone(),
                message: format!(
                    "line {}: parser passed to `{}`, which is not engine code; its options are not seen",
                    file.line(call),
                    file.text(func)
                ),
            });
            return;
        };
        let mut positional = Vec::new();
        let mut keywords = HashMap::new();
        for a in args {
            let role = |node: Node, this: &Self| {
                if node.kind() == "identifier" && frame.groups.contains(file.text(node)) {
                    Role::Group
                } else if node.kind() == "identifier" && frame.parsers.contains(file.text(node)) {
                    Role::Parser
                } else {
                    Role::Value(this.ev.eval(file, node, frame.scope()))
                }
            };
            if a.kind() == "keyword_argument" {
                if let (Some(k), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value")) {
                    keywords.insert(file.text(k).to_string(), role(v, self));
                }
            } else {
                positional.push(role(*a, self));
            }
        }
        // The field-driven registrar: flags come from the class passed to it.
        if let Some(registrar) = self.registrar(&module, class.as_ref(), &name) {
            let record = positional
                .iter()
                .chain(keywords.values())
                .find_map(|r| match r {
                    Role::Value(Ok(Val::Class(c))) => Some(c.clone()),
                    _ => None,
                })
                .or_else(|| self.rebuilt_record(file, args, frame));
            match record {
                Some(record) => {
                    let calls = dataclass::dataclass_calls(self.ev, &registrar, &record, &mut self.warnings);
                    self.calls.extend(calls);
                }
                None => self.warnings.push(ExtractWarning {
                    path: file.path.clone(),
                    message: format!("line {}: registrar called with a class that does not fold: {}", file.line(call), file.text(call)),
                }),
            }
            return;
        }
        if self.walk_function(&module, class.as_ref(), &name, &positional, keywords).is_none() {
            self.warnings.push(ExtractWarning {
                path: file.path.clone(),
                message: format!("line {}: cannot find `{}` to follow the parser into", file.line(call), file.text(func)),
            });
        }
    }

    /// The engine function a callee expression names: (module, class, name).
    fn resolve_callee(&self, file: &PyFile, func: Node, frame: &Frame) -> Option<(String, Option<ClassRef>, String)> {
        // `cls.helper(parser)` / `self.helper(parser)` inside a class.
        // `super().helper(...)`: from the class above the one defining the method.
        if func.kind() == "attribute" {
            let object = func.child_by_field_name("object")?;
            if object.kind() == "call" && object.child_by_field_name("function").is_some_and(|f| file.text(f) == "super") {
                let method = file.text(func.child_by_field_name("attribute")?);
                let defined_in = frame.defined_in.as_ref()?;
                let owner = self.ev.class_bases(defined_in).into_iter().find_map(|b| match b {
                    Val::Class(base) => self.method_owner(&base, method, 0),
                    _ => None,
                })?;
                return Some((owner.module.clone(), Some(owner), method.to_string()));
            }
        }
        if let Some((obj, method)) = receiver_and_method(file, func) {
            if matches!(obj, "cls" | "self") {
                let class = frame.class?.clone();
                return Some((class.module.clone(), Some(class), method.to_string()));
            }
            if let Ok(Val::Class(c)) = self.ev.eval(file, func.child_by_field_name("object")?, frame.scope()) {
                return Some((c.module.clone(), Some(c), method.to_string()));
            }
        }
        match self.ev.eval(file, func, frame.scope()) {
            Ok(Val::Function(module, qual)) => match qual.rsplit_once('.') {
                Some((class, name)) => Some((module.clone(), Some(ClassRef { module, name: class.to_string() }), name.to_string())),
                None => Some((module, None, qual)),
            },
            _ => None,
        }
    }

    /// A record class rebound at module level after its definition
    /// (`Cls = make_struct("Cls", ...annotations of Cls...)`): the name no longer
    /// folds, but the rebuilt record is made from the class's own declarations.
    fn rebuilt_record(&self, file: &PyFile, args: &[Node], frame: &Frame) -> Option<ClassRef> {
        args.iter().find_map(|a| {
            if a.kind() != "identifier" || frame.parsers.contains(file.text(*a)) {
                return None;
            }
            let module_file = self.ev.module_file(frame.module)?;
            let def = find_definition(&module_file.source, module_file.root(), file.text(*a))?;
            (def.kind() == "class_definition").then(|| ClassRef { module: frame.module.to_string(), name: file.text(*a).to_string() })
        })
    }

    fn registrar(&self, module: &str, class: Option<&ClassRef>, name: &str) -> Option<dataclass::Registrar> {
        if class.is_some() {
            return None;
        }
        let file = self.ev.module_file(module)?;
        let def = find_definition(&file.source, file.root(), name)?;
        dataclass::as_registrar(&file, def)
    }

    /// Fold an `add_argument(...)` call's option strings and keywords.
    fn arg_call(&mut self, file: &PyFile, call: Node, args: &[Node], frame: &Frame) -> Option<ArgCall> {
        let scope = frame.scope();
        let mut names = Vec::new();
        let mut kwargs = Vec::new();
        for a in args {
            match a.kind() {
                "keyword_argument" => {
                    let (Some(k), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value")) else { continue };
                    kwargs.push((file.text(k).to_string(), KwArg { value: self.ev.eval(file, v, scope), text: file.text(v).to_string() }));
                }
                "dictionary_splat" => {
                    let inner = named_children(*a).first().copied()?;
                    match self.ev.eval(file, inner, scope) {
                        Ok(Val::Dict(d)) => {
                            for (k, v) in d {
                                if let Val::Str(k) = k {
                                    kwargs.push((k, KwArg::literal(v)));
                                }
                            }
                        }
                        _ => self.unreadable(file, call, "keyword arguments do not fold"),
                    }
                }
                "list_splat" => {
                    let inner = named_children(*a).first().copied()?;
                    match self.ev.eval(file, inner, scope).ok().and_then(|v| v.iter_items()) {
                        Some(items) => {
                            for item in items {
                                match item {
                                    Val::Str(s) => names.push(s),
                                    _ => self.unreadable(file, call, "an option string does not fold"),
                                }
                            }
                        }
                        None => self.unreadable(file, call, "option strings do not fold"),
                    }
                }
                _ => match self.ev.eval(file, *a, scope) {
                    Ok(Val::Str(s)) => names.push(s),
                    _ => self.unreadable(file, call, "an option string does not fold"),
                },
            }
        }
        if names.is_empty() {
            return None;
        }
        let env_choices = args
            .iter()
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| a.child_by_field_name("name").is_some_and(|k| file.text(k) == "choices"))
            .and_then(|a| a.child_by_field_name("value"))
            .and_then(|v| frame.gated.get(file.text(v)).cloned().or_else(|| self.ev.gated_choices(file.text(v))))
            .unwrap_or_default();
        let on_group = receiver_and_method(file, call.child_by_field_name("function")?).is_some_and(|(obj, _)| frame.groups.contains(obj));
        Some(ArgCall { names, kwargs, evidence: file.evidence(call), fallback: None, env_choices, on_group })
    }

    fn record_set_defaults(&mut self, file: &PyFile, args: &[Node], frame: &Frame) {
        for a in args.iter().filter(|a| a.kind() == "keyword_argument") {
            if let (Some(k), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value")) {
                let value = self.ev.known(file, v, frame.scope());
                self.set_defaults.push((file.text(k).to_string(), value));
            }
        }
    }

    fn unreadable(&mut self, file: &PyFile, call: Node, why: &str) {
        self.warnings
            .push(ExtractWarning { path: file.path.clone(), message: format!("line {}: {why}: {}", file.line(call), file.text(call)) });
    }
}

/// A statement of a walked body, with whether it may not run.
fn consts_stmt(node: Node<'_>, conditional: bool) -> Stmt<'_> {
    Stmt { node, conditional }
}

/// `obj.method` with `obj` a plain name.
fn receiver_and_method<'f>(file: &'f PyFile, func: Node) -> Option<(&'f str, &'f str)> {
    if func.kind() != "attribute" {
        return None;
    }
    let obj = func.child_by_field_name("object")?;
    let method = func.child_by_field_name("attribute")?;
    (obj.kind() == "identifier").then(|| (file.text(obj), file.text(method)))
}

/// A method without `self`/`cls` (a `@staticmethod`), or a plain function.
fn is_static(file: &PyFile, def: Node, in_class: bool) -> bool {
    if !in_class {
        return true;
    }
    def.parent()
        .filter(|p| p.kind() == "decorated_definition")
        .map(|p| named_children(p).into_iter().any(|d| d.kind() == "decorator" && file.text(d).contains("staticmethod")))
        .unwrap_or(false)
}

fn bind_params(file: &PyFile, def: Node, is_static: bool, args: &[Role], kwargs: &HashMap<String, Role>, frame: &mut Frame) {
    let Some(params) = def.child_by_field_name("parameters") else { return };
    let names: Vec<String> = named_children(params)
        .into_iter()
        .filter_map(|p| match p.kind() {
            "identifier" => Some(file.text(p).to_string()),
            "typed_parameter" => named_children(p).first().map(|n| file.text(*n).to_string()),
            "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name").map(|n| file.text(n).to_string()),
            _ => None,
        })
        .collect();
    if !is_static {
        if let (Some(first), Some(class)) = (names.first(), frame.class) {
            frame.locals.insert(first.clone(), Ok(Val::Class(class.clone())));
        }
    }
    let names = if is_static { &names[..] } else { names.get(1..).unwrap_or(&[]) };
    for (i, name) in names.iter().enumerate() {
        let role = args.get(i).or_else(|| kwargs.get(name));
        match role {
            Some(Role::Group) => {
                frame.groups.insert(name.clone());
                frame.parsers.insert(name.clone());
            }
            Some(Role::Parser) => {
                frame.parsers.insert(name.clone());
            }
            Some(Role::Value(v)) => {
                frame.locals.insert(name.clone(), v.clone());
            }
            None => {
                frame.locals.insert(name.clone(), Err(name.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod vllm_tests;

#[cfg(test)]
mod atom_tests;
