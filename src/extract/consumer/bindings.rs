//! Which names and expressions denote the engine's modules, one of the engine
//! classes the consumer link names (`ServerArgs`; `AsyncEngineArgs`,
//! `VllmConfig`), or a value of one, inside one consumer file. Classes are
//! told apart by their index in the link's list.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::extract::python::{named_children, walk, PyFile};
use crate::profiles::ConsumerClass;

/// Constructors whose result is known not to be an engine class value: Dynamo
/// builds `SimpleNamespace` stubs under the name `server_args` for diffusion workers.
const NON_VALUE_CONSTRUCTORS: [&str; 2] = ["SimpleNamespace", "Namespace"];

/// The classes one walk looks for (the consumer link's), by index.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Classes<'c>(pub &'c [ConsumerClass]);

impl<'c> Classes<'c> {
    /// The class `name` denotes (the class itself or one of its `also` names).
    fn by_name(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|c| c.class == name || c.also.contains(&name))
    }

    /// The class whose values a variable of this name holds by convention.
    fn by_variable(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|c| c.names.contains(&name))
    }

    /// The class whose values an attribute of this name holds by convention
    /// (`self.server_args`, `config.engine_args`).
    fn by_attribute(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|c| c.names.contains(&name) || c.attributes.contains(&name))
    }

    /// What uses of class `index` are reported as.
    pub(super) fn name(&self, index: usize) -> &'c str {
        self.0[index].class
    }
}

/// Names a file binds by importing from the engine package. Collected from every
/// import statement in the file, wherever it sits.
#[derive(Debug, Default)]
pub(super) struct EngineImports<'c> {
    pub classes: Classes<'c>,
    /// Names bound to engine modules: `sgl` for `import sglang as sgl`,
    /// `sglang` for `import sglang.srt.x`.
    pub modules: HashSet<String>,
    /// Names bound to an engine class (`ServerArgs`, or its `as` alias) → its index.
    pub class_aliases: HashMap<String, usize>,
    /// Every other name a `from <engine> import ...` binds (functions, classes,
    /// submodules): never a class value, whatever it is called.
    pub other_names: HashSet<String>,
    /// What each name a `from <engine> import ...` binds stands for: (module, name).
    pub sources: std::collections::HashMap<String, (String, String)>,
}

/// Whether a dotted module name belongs to the engine package.
pub(super) fn is_engine_module(module: &str, engine: &str) -> bool {
    module == engine || module.strip_prefix(engine).is_some_and(|rest| rest.starts_with('.'))
}

impl<'c> EngineImports<'c> {
    pub(super) fn collect(file: &PyFile, engine: &str, classes: Classes<'c>) -> EngineImports<'c> {
        let mut found = EngineImports { classes, ..EngineImports::default() };
        walk(file.root(), |node| {
            match node.kind() {
                "import_statement" => found.add_import(file, node, engine),
                "import_from_statement" => found.add_from_import(file, node, engine),
                _ => return true,
            }
            false
        });
        found
    }

    fn add_import(&mut self, file: &PyFile, node: Node, engine: &str) {
        for name in named_children(node) {
            match name.kind() {
                "dotted_name" => {
                    let module = file.text(name);
                    if is_engine_module(module, engine) {
                        // `import sglang.srt.x` binds the top package name.
                        let root = module.split('.').next().unwrap_or(module);
                        self.modules.insert(root.to_string());
                    }
                }
                "aliased_import" => {
                    let module = name.child_by_field_name("name").map(|n| file.text(n));
                    let alias = name.child_by_field_name("alias").map(|n| file.text(n));
                    if let (Some(module), Some(alias)) = (module, alias) {
                        if is_engine_module(module, engine) {
                            self.modules.insert(alias.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn add_from_import(&mut self, file: &PyFile, node: Node, engine: &str) {
        let Some(module) = node.child_by_field_name("module_name") else {
            return;
        };
        if module.kind() != "dotted_name" || !is_engine_module(file.text(module), engine) {
            return;
        }
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (imported, bound) = match name.kind() {
                "aliased_import" => {
                    (name.child_by_field_name("name").map(|n| file.text(n)), name.child_by_field_name("alias").map(|n| file.text(n)))
                }
                _ => (Some(file.text(name)), Some(file.text(name))),
            };
            let (Some(imported), Some(bound)) = (imported, bound) else {
                continue;
            };
            self.sources.insert(bound.to_string(), (file.text(module).to_string(), imported.to_string()));
            if let Some(class) = self.classes.by_name(imported) {
                self.class_aliases.insert(bound.to_string(), class);
            } else {
                self.other_names.insert(bound.to_string());
            }
        }
    }

    /// The class `node` names: `ServerArgs`, an alias of it, or `sgl.ServerArgs` /
    /// `sglang.srt.server_args.ServerArgs`.
    pub(super) fn class_ref(&self, file: &PyFile, node: Node) -> Option<usize> {
        match node.kind() {
            "identifier" => self.class_aliases.get(file.text(node)).copied(),
            "attribute" => {
                let class = node.child_by_field_name("attribute").and_then(|a| self.classes.by_name(file.text(a)))?;
                self.rooted_in_engine_module(file, node).then_some(class)
            }
            "parenthesized_expression" => {
                let inner = named_children(node);
                if inner.len() == 1 {
                    self.class_ref(file, inner[0])
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether an attribute chain (`a.b.c`) starts at a name bound to an engine module.
    fn rooted_in_engine_module(&self, file: &PyFile, node: Node) -> bool {
        let mut root = node;
        while root.kind() == "attribute" {
            match root.child_by_field_name("object") {
                Some(object) => root = object,
                None => return false,
            }
        }
        root.kind() == "identifier" && self.modules.contains(file.text(root))
    }

    /// The class an annotation says: `ServerArgs`, `"ServerArgs"`,
    /// `Optional[ServerArgs]`, `ServerArgs | None`, `Union[ServerArgs, None]`
    /// (with the class written as any alias or `sgl.ServerArgs`). Containers such
    /// as `list[ServerArgs]` are not values of the class and do not match.
    pub(super) fn annotation_class(&self, file: &PyFile, annotation: Node) -> Option<usize> {
        let text: String = file.text(annotation).chars().filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'').collect();
        let inner = text
            .strip_prefix("Optional[")
            .or_else(|| text.strip_prefix("typing.Optional["))
            .and_then(|t| t.strip_suffix(']'))
            .or_else(|| text.strip_suffix("|None"))
            .or_else(|| text.strip_prefix("None|"))
            .or_else(|| text.strip_prefix("Union[").and_then(|t| t.strip_suffix(",None]")))
            .unwrap_or(&text);
        if let Some(class) = self.class_aliases.get(inner) {
            return Some(*class);
        }
        let (module, name) = inner.rsplit_once('.')?;
        let class = self.classes.by_name(name)?;
        let root = module.split('.').next().unwrap_or(module);
        self.modules.contains(root).then_some(class)
    }
}

/// What an assigned expression is known to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Binding {
    /// A value of the class with this index.
    Value(usize),
    /// Known not to be a value of any of them.
    NotValue,
}

/// Flow-sensitive bindings of plain names, one map per function or class body
/// (innermost last). Only the innermost body is consulted: a name it does not
/// bind (a parameter without a telling annotation, a global, a closure variable)
/// falls back to the naming convention, so a module-level placeholder such as
/// `server_args = None` cannot hide the uses inside functions.
#[derive(Debug, Default)]
pub(super) struct Scopes {
    stack: Vec<HashMap<String, Binding>>,
}

impl Scopes {
    pub(super) fn new() -> Scopes {
        Scopes { stack: vec![HashMap::new()] }
    }

    pub(super) fn push(&mut self, bindings: HashMap<String, Binding>) {
        self.stack.push(bindings);
    }

    pub(super) fn pop(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Binding> {
        self.stack.last().and_then(|m| m.get(name).copied())
    }

    /// Bind a name in the innermost scope; `None` forgets what it was (back to the convention).
    pub(super) fn bind(&mut self, name: &str, binding: Option<Binding>) {
        let top = self.stack.last_mut().expect("scope stack never empty");
        match binding {
            Some(b) => {
                top.insert(name.to_string(), b);
            }
            None => {
                top.remove(name);
            }
        }
    }

    /// The innermost scope's bindings, to restore before walking another branch.
    pub(super) fn snapshot(&self) -> HashMap<String, Binding> {
        self.stack.last().cloned().unwrap_or_default()
    }

    pub(super) fn restore(&mut self, bindings: HashMap<String, Binding>) {
        *self.stack.last_mut().expect("scope stack never empty") = bindings;
    }

    /// Join two branch outcomes: a name may hold a class value after the join
    /// when it may on either path (the first path's class when both do); it is
    /// known not to only when both agree.
    pub(super) fn join(a: &HashMap<String, Binding>, b: &HashMap<String, Binding>) -> HashMap<String, Binding> {
        let mut out = HashMap::new();
        for name in a.keys().chain(b.keys()) {
            let joined = match (a.get(name), b.get(name)) {
                (Some(Binding::Value(class)), _) | (_, Some(Binding::Value(class))) => Some(Binding::Value(*class)),
                (Some(Binding::NotValue), Some(Binding::NotValue)) => Some(Binding::NotValue),
                _ => None,
            };
            if let Some(j) = joined {
                out.insert(name.clone(), j);
            }
        }
        out
    }
}

/// Decides whether expressions denote class values, and of which class.
pub(super) struct ValueOracle<'a> {
    pub file: &'a PyFile,
    pub imports: &'a EngineImports<'a>,
}

impl ValueOracle<'_> {
    /// The class of the instance `node` evaluates to, given the current bindings.
    pub(super) fn value_class(&self, node: Node, scopes: &Scopes) -> Option<usize> {
        match node.kind() {
            "identifier" => {
                let name = self.file.text(node);
                match scopes.lookup(name) {
                    Some(Binding::Value(class)) => Some(class),
                    Some(Binding::NotValue) => None,
                    None if self.imports.other_names.contains(name) => None,
                    None => self.imports.classes.by_variable(name),
                }
            }
            "attribute" => {
                let class = node.child_by_field_name("attribute").and_then(|a| self.imports.classes.by_attribute(self.file.text(a)))?;
                // `sglang.srt.server_args` is the module, not a value.
                (!self.imports.rooted_in_engine_module(self.file, node)).then_some(class)
            }
            "parenthesized_expression" => {
                let inner = named_children(node);
                if inner.len() == 1 {
                    self.value_class(inner[0], scopes)
                } else {
                    None
                }
            }
            "call" => self.construction(node),
            _ => None,
        }
    }

    /// `ServerArgs(...)` or `ServerArgs.from_cli_args(...)`.
    fn construction(&self, call: Node) -> Option<usize> {
        let function = call.child_by_field_name("function")?;
        if let Some(class) = self.imports.class_ref(self.file, function) {
            return Some(class);
        }
        if function.kind() != "attribute" || function.child_by_field_name("attribute").is_none_or(|a| self.file.text(a) != "from_cli_args")
        {
            return None;
        }
        function.child_by_field_name("object").and_then(|o| self.imports.class_ref(self.file, o))
    }

    /// What binding an assignment of `value` gives its target, `None` when unknown.
    pub(super) fn classify(&self, value: Node, scopes: &Scopes) -> Option<Binding> {
        if let Some(class) = self.value_class(value, scopes) {
            return Some(Binding::Value(class));
        }
        match value.kind() {
            "call" => {
                let function = value.child_by_field_name("function")?;
                let name = match function.kind() {
                    "attribute" => self.file.text(function.child_by_field_name("attribute")?),
                    "identifier" => self.file.text(function),
                    _ => return None,
                };
                NON_VALUE_CONSTRUCTORS.contains(&name).then_some(Binding::NotValue)
            }
            "none"
            | "true"
            | "false"
            | "integer"
            | "float"
            | "string"
            | "concatenated_string"
            | "dictionary"
            | "list"
            | "tuple"
            | "set"
            | "dictionary_comprehension"
            | "list_comprehension"
            | "set_comprehension" => Some(Binding::NotValue),
            _ => None,
        }
    }
}
