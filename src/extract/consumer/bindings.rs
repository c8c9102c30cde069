//! Which names and expressions denote the engine's modules, the `ServerArgs`
//! class, or a `ServerArgs` value, inside one consumer file.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::extract::python::{named_children, walk, PyFile};

/// The engine class whose attribute uses are reported.
pub(super) const CLASS: &str = "ServerArgs";

/// Variable and attribute names that by Dynamo's convention hold a `ServerArgs`
/// (`server_args`, `self.server_args`, `config.server_args`,
/// `engine.tokenizer_manager.server_args`, `self._server_args`).
const CONVENTIONAL_NAMES: [&str; 2] = ["server_args", "_server_args"];

/// Constructors whose result is known not to be a `ServerArgs`: Dynamo builds
/// `SimpleNamespace` stubs under the name `server_args` for diffusion workers.
const NON_SERVER_ARGS_CONSTRUCTORS: [&str; 2] = ["SimpleNamespace", "Namespace"];

/// Names a file binds by importing from the engine package. Collected from every
/// import statement in the file, wherever it sits.
#[derive(Debug, Default)]
pub(super) struct EngineImports {
    /// Names bound to engine modules: `sgl` for `import sglang as sgl`,
    /// `sglang` for `import sglang.srt.x`.
    pub modules: HashSet<String>,
    /// Names bound to the `ServerArgs` class (`ServerArgs`, or its `as` alias).
    pub class_aliases: HashSet<String>,
    /// Every other name a `from <engine> import ...` binds (functions, classes,
    /// submodules): never a `ServerArgs` value, whatever it is called.
    pub other_names: HashSet<String>,
    /// What each name a `from <engine> import ...` binds stands for: (module, name).
    pub sources: std::collections::HashMap<String, (String, String)>,
}

/// Whether a dotted module name belongs to the engine package.
pub(super) fn is_engine_module(module: &str, engine: &str) -> bool {
    module == engine || module.strip_prefix(engine).is_some_and(|rest| rest.starts_with('.'))
}

impl EngineImports {
    pub(super) fn collect(file: &PyFile, engine: &str) -> EngineImports {
        let mut found = EngineImports::default();
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
            if imported == CLASS {
                self.class_aliases.insert(bound.to_string());
            } else {
                self.other_names.insert(bound.to_string());
            }
        }
    }

    /// `ServerArgs`, an alias of it, or `sgl.ServerArgs` / `sglang.srt.server_args.ServerArgs`.
    pub(super) fn is_class_ref(&self, file: &PyFile, node: Node) -> bool {
        match node.kind() {
            "identifier" => self.class_aliases.contains(file.text(node)),
            "attribute" => {
                let is_class_name = node.child_by_field_name("attribute").is_some_and(|a| file.text(a) == CLASS);
                is_class_name && self.rooted_in_engine_module(file, node)
            }
            "parenthesized_expression" => {
                let inner = named_children(node);
                inner.len() == 1 && self.is_class_ref(file, inner[0])
            }
            _ => false,
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

    /// Whether an annotation says `ServerArgs`: `ServerArgs`, `"ServerArgs"`,
    /// `Optional[ServerArgs]`, `ServerArgs | None`, `Union[ServerArgs, None]`
    /// (with the class written as any alias or `sgl.ServerArgs`). Containers such
    /// as `list[ServerArgs]` are not values of the class and do not match.
    pub(super) fn annotation_is_class(&self, file: &PyFile, annotation: Node) -> bool {
        let text: String = file.text(annotation).chars().filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'').collect();
        let inner = text
            .strip_prefix("Optional[")
            .or_else(|| text.strip_prefix("typing.Optional["))
            .and_then(|t| t.strip_suffix(']'))
            .or_else(|| text.strip_suffix("|None"))
            .or_else(|| text.strip_prefix("None|"))
            .or_else(|| text.strip_prefix("Union[").and_then(|t| t.strip_suffix(",None]")))
            .unwrap_or(&text);
        if self.class_aliases.contains(inner) {
            return true;
        }
        match inner.rsplit_once('.') {
            Some((module, CLASS)) => {
                let root = module.split('.').next().unwrap_or(module);
                self.modules.contains(root)
            }
            _ => false,
        }
    }
}

/// What an assigned expression is known to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Binding {
    ServerArgs,
    NotServerArgs,
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

    /// Join two branch outcomes: a name may hold a `ServerArgs` after the join
    /// when it may on either path; it is known not to only when both agree.
    pub(super) fn join(a: &HashMap<String, Binding>, b: &HashMap<String, Binding>) -> HashMap<String, Binding> {
        let mut out = HashMap::new();
        for name in a.keys().chain(b.keys()) {
            let joined = match (a.get(name), b.get(name)) {
                (Some(Binding::ServerArgs), _) | (_, Some(Binding::ServerArgs)) => Some(Binding::ServerArgs),
                (Some(Binding::NotServerArgs), Some(Binding::NotServerArgs)) => Some(Binding::NotServerArgs),
                _ => None,
            };
            if let Some(j) = joined {
                out.insert(name.clone(), j);
            }
        }
        out
    }
}

/// Decides whether expressions denote `ServerArgs` values.
pub(super) struct ValueOracle<'a> {
    pub file: &'a PyFile,
    pub imports: &'a EngineImports,
}

impl ValueOracle<'_> {
    /// Whether `node` evaluates to a `ServerArgs` instance, given the current bindings.
    pub(super) fn is_value(&self, node: Node, scopes: &Scopes) -> bool {
        match node.kind() {
            "identifier" => {
                let name = self.file.text(node);
                match scopes.lookup(name) {
                    Some(b) => b == Binding::ServerArgs,
                    None => CONVENTIONAL_NAMES.contains(&name) && !self.imports.other_names.contains(name),
                }
            }
            "attribute" => {
                let conventional = node.child_by_field_name("attribute").is_some_and(|a| CONVENTIONAL_NAMES.contains(&self.file.text(a)));
                // `sglang.srt.server_args` is the module, not a value.
                conventional && !self.imports.rooted_in_engine_module(self.file, node)
            }
            "parenthesized_expression" => {
                let inner = named_children(node);
                inner.len() == 1 && self.is_value(inner[0], scopes)
            }
            "call" => self.is_construction(node),
            _ => false,
        }
    }

    /// `ServerArgs(...)` or `ServerArgs.from_cli_args(...)`.
    fn is_construction(&self, call: Node) -> bool {
        let Some(function) = call.child_by_field_name("function") else {
            return false;
        };
        if self.imports.is_class_ref(self.file, function) {
            return true;
        }
        function.kind() == "attribute"
            && function.child_by_field_name("attribute").is_some_and(|a| self.file.text(a) == "from_cli_args")
            && function.child_by_field_name("object").is_some_and(|o| self.imports.is_class_ref(self.file, o))
    }

    /// What binding an assignment of `value` gives its target, `None` when unknown.
    pub(super) fn classify(&self, value: Node, scopes: &Scopes) -> Option<Binding> {
        if self.is_value(value, scopes) {
            return Some(Binding::ServerArgs);
        }
        match value.kind() {
            "call" => {
                let function = value.child_by_field_name("function")?;
                let name = match function.kind() {
                    "attribute" => self.file.text(function.child_by_field_name("attribute")?),
                    "identifier" => self.file.text(function),
                    _ => return None,
                };
                NON_SERVER_ARGS_CONSTRUCTORS.contains(&name).then_some(Binding::NotServerArgs)
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
            | "set_comprehension" => Some(Binding::NotServerArgs),
            _ => None,
        }
    }
}
