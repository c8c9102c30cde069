//! The engine's own `argparse.Action` subclasses, read from source: which
//! constructor defaults they apply (`nargs=0`, `default=False`), which extra
//! keywords they take (`new_flag`, `error_message`, `const_value`), and what
//! `__call__` does: error out (always, or when a keyword was given), store into
//! `dest`, or only warn. That decides removed / alias / noop for deprecated
//! flags without knowing any class by name.

use std::collections::HashMap;

use tree_sitter::Node;

use crate::extract::consts::{class_body, find_definition, ClassRef, ConstEval, Folded, Scope, Val};
use crate::extract::python::{named_children, walk, PyFile};

/// The keywords `argparse.Action.__init__` itself takes.
const ACTION_INIT_PARAMS: &[&str] =
    &["self", "option_strings", "dest", "nargs", "const", "default", "type", "choices", "required", "help", "metavar", "deprecated"];

/// When `__call__` makes parsing fail.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ErrorRule {
    Never,
    Always,
    /// Only when the constructor keyword was given a non-`None` value.
    WhenSet(String),
}

/// What `__call__` stores into `namespace.<dest>`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum StoreRule {
    Nothing,
    /// The parsed values.
    Values,
    /// The value of a constructor keyword (`self.const_value`).
    Param(String),
    /// A fixed value (`True`).
    Fixed(Val),
}

#[derive(Debug, Clone)]
pub(super) struct ActionClass {
    pub name: String,
    /// Constructor defaults for argparse's own keywords (`nargs`, `const`, `default`)
    /// and values forced in the `super().__init__` call.
    pub init_defaults: HashMap<String, Folded>,
    /// Keywords the class adds on top of argparse's (`new_flag`).
    pub custom_params: Vec<String>,
    /// Whether the class's code talks about deprecation at all.
    pub deprecation: bool,
    pub errors: ErrorRule,
    pub stores: StoreRule,
    /// The keyword named in the warning as what to use instead (`new_flag`).
    pub replacement_param: Option<String>,
}

/// Read an engine action class; `None` when its definition is not found.
pub(super) fn read_action_class(ev: &ConstEval, class: &ClassRef) -> Option<ActionClass> {
    let file = ev.module_file(&class.module)?;
    let def = ev.class_def(&file, &class.name)?;
    let body = class_body(def)?;
    let scope = Scope::module(&class.module);
    let own_init = find_definition(&file.source, body, "__init__");
    let own_call = find_definition(&file.source, body, "__call__");

    // Inherited parts come from engine base classes.
    let inherited = || {
        ev.class_bases(class).into_iter().find_map(|b| match b {
            Val::Class(base) => read_action_class(ev, &base),
            _ => None,
        })
    };
    let base = if own_init.is_none() || own_call.is_none() { inherited() } else { None };

    let mut init_defaults = HashMap::new();
    let mut custom_params = Vec::new();
    let mut attr_to_param: HashMap<String, String> = HashMap::new();
    match own_init {
        Some(init) => read_init(ev, &file, init, scope, &mut init_defaults, &mut custom_params, &mut attr_to_param),
        None => {
            if let Some(b) = &base {
                init_defaults = b.init_defaults.clone();
                custom_params = b.custom_params.clone();
                attr_to_param = b.custom_params.iter().map(|p| (p.clone(), p.clone())).collect();
            }
        }
    }

    let (errors, stores, replacement_param) = match own_call {
        Some(call) => read_call(ev, &file, call, scope, &attr_to_param),
        None => match &base {
            Some(b) => (b.errors.clone(), b.stores.clone(), b.replacement_param.clone()),
            None => (ErrorRule::Never, StoreRule::Nothing, None),
        },
    };
    let deprecation = file.text(def).to_ascii_lowercase().contains("deprecat") || base.as_ref().is_some_and(|b| b.deprecation);
    Some(ActionClass {
        name: class.name.rsplit('.').next().unwrap_or(&class.name).to_string(),
        init_defaults,
        custom_params,
        deprecation,
        errors,
        stores,
        replacement_param,
    })
}

fn read_init(
    ev: &ConstEval,
    file: &PyFile,
    init: Node,
    scope: Scope,
    defaults: &mut HashMap<String, Folded>,
    custom: &mut Vec<String>,
    attr_to_param: &mut HashMap<String, String>,
) {
    if let Some(params) = init.child_by_field_name("parameters") {
        for p in named_children(params) {
            let (name, value) = match p.kind() {
                "identifier" => (file.text(p).to_string(), None),
                "default_parameter" | "typed_default_parameter" => {
                    (p.child_by_field_name("name").map(|n| file.text(n).to_string()).unwrap_or_default(), p.child_by_field_name("value"))
                }
                "typed_parameter" => (named_children(p).first().map(|n| file.text(*n).to_string()).unwrap_or_default(), None),
                _ => continue,
            };
            if name.is_empty() {
                continue;
            }
            if !ACTION_INIT_PARAMS.contains(&name.as_str()) {
                custom.push(name.clone());
            }
            if let Some(v) = value {
                defaults.insert(name, ev.eval(file, v, scope));
            }
        }
    }
    let Some(body) = init.child_by_field_name("body") else { return };
    walk(body, |n| {
        match n.kind() {
            // `self.x = param`: which attribute holds which keyword.
            "assignment" => {
                if let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) {
                    if let Some(attr) = self_attribute(file, l) {
                        if r.kind() == "identifier" {
                            attr_to_param.insert(attr, file.text(r).to_string());
                        }
                    }
                }
            }
            // `super().__init__(..., nargs=0)`: a literal forced here wins over any default.
            "call" => {
                let callee = n.child_by_field_name("function").map(|f| file.text(f)).unwrap_or_default();
                if callee.ends_with("__init__") {
                    if let Some(args) = n.child_by_field_name("arguments") {
                        for kw in named_children(args).into_iter().filter(|a| a.kind() == "keyword_argument") {
                            let (Some(k), Some(v)) = (kw.child_by_field_name("name"), kw.child_by_field_name("value")) else {
                                continue;
                            };
                            let key = file.text(k).to_string();
                            if v.kind() != "identifier" || file.text(v) != key {
                                // Passing `nargs=nargs` keeps the parameter default; anything else is forced.
                                if v.kind() == "identifier" {
                                    if let Some(d) = defaults.get(file.text(v)).cloned() {
                                        defaults.insert(key, d);
                                        continue;
                                    }
                                }
                                defaults.insert(key, ev.eval(file, v, scope));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        true
    });
}

/// `self.<attr>` → `attr`.
fn self_attribute(file: &PyFile, node: Node) -> Option<String> {
    if node.kind() != "attribute" {
        return None;
    }
    let obj = node.child_by_field_name("object")?;
    (obj.kind() == "identifier" && file.text(obj) == "self")
        .then(|| node.child_by_field_name("attribute").map(|a| file.text(a).to_string()))
        .flatten()
}

fn read_call(
    ev: &ConstEval,
    file: &PyFile,
    call: Node,
    scope: Scope,
    attr_to_param: &HashMap<String, String>,
) -> (ErrorRule, StoreRule, Option<String>) {
    let params: Vec<String> = call
        .child_by_field_name("parameters")
        .map(|p| named_children(p).iter().map(|n| file.text(*n).to_string()).collect())
        .unwrap_or_default();
    // `(self, parser, namespace, values, option_string=None)` by position.
    let param = |i: usize| params.get(i).map(|s| s.split(['=', ':']).next().unwrap_or("").trim().to_string());
    let parser_name = param(1).unwrap_or_else(|| "parser".into());
    let namespace_name = param(2).unwrap_or_else(|| "namespace".into());
    let values_name = param(3).unwrap_or_else(|| "values".into());
    let param_of = |attr: &str| attr_to_param.get(attr).cloned().unwrap_or_else(|| attr.to_string());

    let Some(body) = call.child_by_field_name("body") else {
        return (ErrorRule::Never, StoreRule::Nothing, None);
    };
    let mut errors = ErrorRule::Never;
    let mut stores = StoreRule::Nothing;
    let mut excluded_attrs: Vec<String> = Vec::new();
    let mut message_attrs: Vec<String> = Vec::new();
    walk(body, |n| {
        match n.kind() {
            "call" => {
                let Some(func) = n.child_by_field_name("function") else { return true };
                let func_text = file.text(func);
                let args = n.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                if func_text == format!("{parser_name}.error") {
                    errors = merge_error(errors.clone(), guard_of(file, n, body), &param_of, &mut excluded_attrs);
                } else if func_text == "setattr" && args.len() == 3 {
                    let target_ok = file.text(args[0]) == namespace_name && self_attribute(file, args[1]).as_deref() == Some("dest");
                    if target_ok {
                        stores = if file.text(args[2]) == values_name {
                            StoreRule::Values
                        } else if let Some(attr) = self_attribute(file, args[2]) {
                            excluded_attrs.push(attr.clone());
                            StoreRule::Param(param_of(&attr))
                        } else {
                            match ev.eval(file, args[2], scope) {
                                Ok(v) => StoreRule::Fixed(v),
                                Err(_) => StoreRule::Values,
                            }
                        };
                    }
                }
            }
            "raise_statement" => {
                errors = merge_error(errors.clone(), guard_of(file, n, body), &param_of, &mut excluded_attrs);
            }
            "interpolation" => {
                walk(n, |m| {
                    if let Some(attr) = self_attribute(file, m) {
                        message_attrs.push(attr);
                        return false;
                    }
                    true
                });
            }
            _ => {}
        }
        true
    });
    let replacement = message_attrs.into_iter().filter(|a| !excluded_attrs.contains(a) && a != "dest").map(|a| param_of(&a)).next();
    (errors, stores, replacement)
}

/// The condition guarding an error: `None` when unconditional.
enum Guard {
    None,
    AttrSet(String),
    Other,
}

fn guard_of(file: &PyFile, node: Node, body: Node) -> Guard {
    let mut cur = node.parent();
    while let Some(p) = cur {
        if p.id() == body.id() {
            return Guard::None;
        }
        if p.kind() == "if_statement" {
            let Some(cond) = p.child_by_field_name("condition") else { return Guard::Other };
            // `if self.x is not None:` / `if self.x:`
            let target = match cond.kind() {
                "comparison_operator" if file.text(cond).replace(' ', "").ends_with("isnotNone") => named_children(cond).first().copied(),
                "attribute" => Some(cond),
                _ => None,
            };
            return match target.and_then(|t| self_attribute(file, t)) {
                Some(attr) => Guard::AttrSet(attr),
                None => Guard::Other,
            };
        }
        cur = p.parent();
    }
    Guard::None
}

fn merge_error(current: ErrorRule, guard: Guard, param_of: &dyn Fn(&str) -> String, excluded: &mut Vec<String>) -> ErrorRule {
    match (current, guard) {
        (ErrorRule::Always, _) | (_, Guard::None) => ErrorRule::Always,
        (_, Guard::AttrSet(attr)) => {
            excluded.push(attr.clone());
            ErrorRule::WhenSet(param_of(&attr))
        }
        // An error under a condition we cannot read: not claimed either way.
        (other, Guard::Other) => other,
    }
}

/// What the parser class's action registry changes (`self.register("action",
/// BooleanOptionalAction, EnableDisableAction)` in its `__init__`): argparse
/// then builds the registered class wherever `action=BooleanOptionalAction`.
#[derive(Debug, Clone, Default)]
pub(super) struct ActionRegistry {
    pub boolean_optional: Option<PairedBoolean>,
}

/// An engine subclass of `BooleanOptionalAction` that also pairs option
/// prefixes (`--enable-x` with `--disable-x`), read from its class-level map
/// of prefix → inverse prefix; the `--no-` forms stay accepted (hidden in help).
#[derive(Debug, Clone)]
pub(super) struct PairedBoolean {
    pub name: String,
    pub inverse_prefixes: Vec<(String, String)>,
}

/// The action registry of an engine parser class (and its engine bases).
pub(super) fn parser_action_registry(ev: &ConstEval, class: &ClassRef) -> ActionRegistry {
    let mut registry = ActionRegistry::default();
    let mut seen = Vec::new();
    let mut todo = vec![class.clone()];
    while let Some(c) = todo.pop() {
        if seen.contains(&c) || seen.len() > 16 {
            continue;
        }
        seen.push(c.clone());
        todo.extend(ev.class_bases(&c).into_iter().filter_map(|b| match b {
            Val::Class(b) => Some(b),
            _ => None,
        }));
        let Some(file) = ev.module_file(&c.module) else { continue };
        let Some(init) = ev.class_def(&file, &c.name).and_then(class_body).and_then(|b| find_definition(&file.source, b, "__init__"))
        else {
            continue;
        };
        let scope = Scope::module(&c.module);
        walk(init, |n| {
            if n.kind() != "call" || n.child_by_field_name("function").is_none_or(|f| file.text(f) != "self.register") {
                return true;
            }
            let args = n.child_by_field_name("arguments").map(named_children).unwrap_or_default();
            let folded: Vec<Folded> = args.iter().map(|a| ev.eval(&file, *a, scope)).collect();
            if let [Ok(Val::Str(kind)), Ok(Val::External(builtin)), Ok(Val::Class(engine))] = folded.as_slice() {
                if kind == "action" && builtin.ends_with("BooleanOptionalAction") && registry.boolean_optional.is_none() {
                    registry.boolean_optional = Some(paired_boolean(ev, engine));
                }
            }
            false
        });
    }
    registry
}

fn paired_boolean(ev: &ConstEval, class: &ClassRef) -> PairedBoolean {
    let mut inverse_prefixes = Vec::new();
    if let Some(file) = ev.module_file(&class.module) {
        if let Some(body) = ev.class_def(&file, &class.name).and_then(class_body) {
            for stmt in named_children(body) {
                let Some(assign) = named_children(stmt).into_iter().find(|n| n.kind() == "assignment") else { continue };
                let Some(value) = assign.child_by_field_name("right") else { continue };
                if let Ok(Val::Dict(pairs)) = ev.eval(&file, value, Scope { module: &class.module, locals: None, class: Some(class) }) {
                    let prefixes: Vec<(String, String)> = pairs
                        .into_iter()
                        .filter_map(|(k, v)| match (k, v) {
                            (Val::Str(k), Val::Str(v)) if k.starts_with("--") && v.starts_with("--") => Some((k, v)),
                            _ => None,
                        })
                        .collect();
                    if !prefixes.is_empty() {
                        inverse_prefixes = prefixes;
                        break;
                    }
                }
            }
        }
    }
    PairedBoolean { name: class.name.rsplit('.').next().unwrap_or(&class.name).to_string(), inverse_prefixes }
}
