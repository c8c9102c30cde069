//! vLLM's `get_kwargs(ConfigClass)`: the `add_argument` keywords of every field
//! of a config dataclass, as `vllm/engine/arg_utils.py` computes them from the
//! field's type, default and attribute docstring. Registered as a native of
//! the constant folder, so `**get_kwargs(ModelConfig)["seed"]`,
//! `kwargs = get_kwargs(cls)` followed by edits, and the frontend loop over
//! `kwargs.items()` all fold.
//!
//! The rules, in the function's order: a dataclass field takes JSON
//! (`type=parse_dataclass`); `bool | str | None` is an optional-valued flag
//! (where the release has that rule); a bool gets `BooleanOptionalAction`; a
//! `Literal` gives `type` and sorted `choices` (a `metavar` instead when `str`
//! is among the types); `tuple`/`list`/`set` give `nargs`; then `int`,
//! `float`, dicts and strings; an optional type appends the release's
//! "none" choice (`None` or `"None"`, read from the function's source). The
//! default is the field's (`= x`, `field(default=x)`, `default_factory`;
//! an enum member's value); one that is an object (a config instance) stays
//! dynamic.

use std::rc::Rc;

use tree_sitter::Node;

use super::type_hints::{hints, Hint};
use crate::extract::consts::classes::visit_record_fields;
use crate::extract::consts::{ClassRef, ConstEval, Folded, Native, Scope, Val};
use crate::extract::python::{named_children, PyFile};

/// What the release's generator function says beyond the shared rules.
struct Rules {
    /// `type_hints == {bool, str, type(None)}` makes a `nargs="?"`, `const=True` flag.
    optional_valued_bool_str: bool,
    /// What `choices` of an optional `Literal` gets appended.
    none_choice: Val,
    /// Fields whose `int` type is replaced by a converter of the release's
    /// (`if name == "max_model_len": kwargs[name]["type"] = human_readable_int_or_auto`,
    /// `elif name in human_readable_int_args: ... = human_readable_int`, which
    /// take `4K` / `1M`): field name → converter name.
    int_converters: Vec<(String, String)>,
}

/// The native computing `module.function(cls)`.
pub(crate) fn native(module: &str, function: &str) -> Native {
    let (module, function) = (module.to_string(), function.to_string());
    Rc::new(move |ev: &ConstEval, args: &[Val]| {
        let [Val::Class(class)] = args else { return Err(format!("{function}(...)")) };
        let rules = read_rules(ev, &module);
        Ok(kwargs_of(ev, class, &rules))
    })
}

fn read_rules(ev: &ConstEval, module: &str) -> Rules {
    let source = ev.module_file(module).map(|f| f.source.clone()).unwrap_or_default();
    let compact: String = source.chars().filter(|c| !c.is_whitespace()).collect();
    let none_choice = match compact.find("[\"choices\"].append(") {
        Some(at) if compact[at..].starts_with("[\"choices\"].append(None)") => Val::None,
        Some(_) => Val::Str("None".into()),
        None => Val::None,
    };
    Rules { optional_valued_bool_str: compact.contains("{bool,str,type(None)}"), none_choice, int_converters: int_converters(&source) }
}

/// The per-name `type` overrides of the generator (see [`Rules::int_converters`]),
/// read from its source: an `if`/`elif` whose test is `name == "x"`,
/// `name in ("x", "y")` (the names in place, earlier releases) or `name in
/// <set>` (a set literal assigned in the module), and whose branch sets
/// `kwargs[name]["type"]`.
fn int_converters(source: &str) -> Vec<(String, String)> {
    static TEST: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static SET: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let test = TEST.get_or_init(|| {
        let names = r#"["']\w+["']|[\(\[\{](?:\s*["']\w+["']\s*,?)+\s*[\)\]\}]|\w+"#;
        regex::Regex::new(&format!(r#"(?:if|elif)\s+name\s*(?:==|\s+in\s+)\s*({names})\s*:\s*kwargs\[name\]\[["']type["']\]\s*=\s*(\w+)"#))
            .expect("valid")
    });
    let set_literal = SET.get_or_init(|| regex::Regex::new(r#"(\w+)\s*=\s*\{((?:\s*["']\w+["']\s*,?)+)\s*\}"#).expect("valid"));
    let quoted = |list: &str| -> Vec<String> {
        list.split(',')
            .map(|n| n.trim_matches(|c: char| c.is_whitespace() || "\"'()[]{}".contains(c)).to_string())
            .filter(|n| !n.is_empty())
            .collect()
    };
    let mut out = Vec::new();
    for c in test.captures_iter(source) {
        let (operand, converter) = (&c[1], &c[2]);
        let names = match operand.starts_with(|ch: char| ch.is_alphanumeric() || ch == '_') {
            // A set named by a variable: its literal's members.
            true => set_literal.captures_iter(source).find(|l| &l[1] == operand).map(|l| quoted(&l[2])).unwrap_or_default(),
            false => quoted(operand),
        };
        out.extend(names.into_iter().map(|name| (name, converter.to_string())));
    }
    out
}

/// One field's declaration, as the last class declaring it wrote it.
struct FieldDecl {
    name: String,
    hints: Vec<Hint>,
    default: Folded,
    help: String,
}

fn kwargs_of(ev: &ConstEval, class: &ClassRef, rules: &Rules) -> Val {
    let mut fields: Vec<FieldDecl> = Vec::new();
    visit_record_fields(ev, class, &mut |file, owner, site| {
        let decl = FieldDecl {
            name: site.name.clone(),
            hints: hints(ev, file, site.annotation, &owner.module),
            default: match site.default {
                Some(d) => field_default(ev, file, d, &owner.module),
                None => Err(format!("{}: no default", site.name)),
            },
            help: docstring_after(file, site.stmt).unwrap_or_default(),
        };
        match fields.iter_mut().find(|f| f.name == decl.name) {
            Some(slot) => {
                // A redeclaration keeps an inherited docstring unless it has its own.
                let inherited = std::mem::take(&mut slot.help);
                *slot = decl;
                if slot.help.is_empty() {
                    slot.help = inherited;
                }
            }
            None => fields.push(decl),
        }
    });
    let mut out = Vec::new();
    for f in &fields {
        let entry = field_kwargs(f, rules);
        out.push((Val::Str(f.name.clone()), Val::Dict(entry)));
    }
    Val::Dict(out)
}

fn s(x: &str) -> Val {
    Val::Str(x.to_string())
}

fn ext(x: &str) -> Val {
    Val::External(x.to_string())
}

fn field_kwargs(f: &FieldDecl, rules: &Rules) -> Vec<(Val, Val)> {
    let default = f.default.clone().unwrap_or_else(Val::Opaque);
    let mut kw: Vec<(Val, Val)> = vec![(s("default"), default), (s("help"), s(&f.help.replace('%', "%%")))];
    let set = |kw: &mut Vec<(Val, Val)>, k: &str, v: Val| match kw.iter_mut().find(|(key, _)| *key == s(k)) {
        Some(slot) => slot.1 = v,
        None => kw.push((s(k), v)),
    };
    let h = &f.hints;
    let has = |p: &dyn Fn(&Hint) -> bool| h.iter().any(p);
    let unknown = h.iter().find_map(|x| match x {
        Hint::Unknown(t) => Some(t.clone()),
        _ => None,
    });
    let has_none = has(&|x| *x == Hint::NoneType);
    let has_bool = has(&|x| *x == Hint::Bool);
    let has_str = has(&|x| *x == Hint::Str);
    let not_builtin = has(&|x| matches!(x, Hint::Class { .. } | Hint::Named { builtin: false, .. }));
    let literal = h.iter().find_map(|x| match x {
        Hint::Literal(v) => Some(v.clone()),
        _ => None,
    });
    let collection = |kind: &str| {
        h.iter().find_map(|x| match x {
            Hint::Collection { kind: k, elements, ellipsis } if *k == kind => Some((elements.clone(), *ellipsis)),
            _ => None,
        })
    };
    let only = |set: &[Hint]| h.len() == set.len() && set.iter().all(|x| h.contains(x));

    if has(&|x| matches!(x, Hint::Class { dataclass: true, .. })) {
        set(&mut kw, "type", Val::Opaque("parse_dataclass".into()));
    } else if rules.optional_valued_bool_str && only(&[Hint::Bool, Hint::Str, Hint::NoneType]) {
        set(&mut kw, "type", ext("str"));
        set(&mut kw, "nargs", s("?"));
        set(&mut kw, "const", Val::Bool(true));
    } else if has_bool {
        set(&mut kw, "action", ext("argparse.BooleanOptionalAction"));
    } else if let Some(options) = &literal {
        literal_kwargs(&mut kw, options, has_str);
    } else if let Some((elements, ellipsis)) = collection("tuple").or_else(|| collection("list")).or_else(|| collection("set")) {
        let kind = if collection("tuple").is_some() { "tuple" } else { "" };
        let elem = elements.first().cloned().unwrap_or_else(|| vec![Hint::Unknown("element type".into())]);
        let nargs = if kind != "tuple" || ellipsis { s("+") } else { Val::Int(elements.len() as i64) };
        match elem.as_slice() {
            [Hint::Literal(options)] => literal_kwargs(&mut kw, options, false),
            [single] => set(&mut kw, "type", converter(single)),
            // `list[int | str]`: any element as a string.
            many if many.contains(&Hint::Str) => set(&mut kw, "type", ext("str")),
            _ => set(&mut kw, "type", Val::Opaque("element type".into())),
        }
        set(&mut kw, "nargs", nargs);
    } else if has(&|x| *x == Hint::Int) {
        // A converter of the release's (`human_readable_int`) is opaque: what it takes is its code's.
        let special = rules.int_converters.iter().find(|(name, _)| *name == f.name);
        set(&mut kw, "type", special.map_or_else(|| ext("int"), |(_, converter)| Val::Opaque(converter.clone())));
    } else if has(&|x| *x == Hint::Float) {
        set(&mut kw, "type", ext("float"));
    } else if has(&|x| *x == Hint::Dict) && (has_str || not_builtin) {
        set(&mut kw, "type", Val::Opaque("union_dict_and_str".into()));
    } else if has(&|x| *x == Hint::Dict) {
        set(&mut kw, "type", Val::Opaque("parse_type(json.loads)".into()));
    } else if has_str || not_builtin {
        set(&mut kw, "type", ext("str"));
    }
    // A type that did not fold may be a `Literal` alias: its choices are not known.
    if let Some(text) = unknown.filter(|_| literal.is_none() && !has_bool) {
        set(&mut kw, "choices", Val::Opaque(text));
    }
    if has_none && !has_bool {
        let inner = kw.iter().find(|(k, _)| *k == s("type")).map(|(_, v)| v.repr()).unwrap_or_default();
        set(&mut kw, "type", Val::Opaque(format!("optional_type({inner})")));
        if let Some((_, Val::List(choices))) = kw.iter_mut().find(|(k, _)| *k == s("choices")) {
            if !choices.is_empty() {
                choices.push(rules.none_choice.clone());
            }
        }
    }
    kw
}

fn converter(h: &Hint) -> Val {
    match h {
        Hint::Int => ext("int"),
        Hint::Float => ext("float"),
        Hint::Bool => ext("bool"),
        Hint::Str | Hint::Class { .. } | Hint::Named { .. } => ext("str"),
        other => Val::Opaque(format!("{other:?}")),
    }
}

/// `literal_to_kwargs`: the options' type, and them sorted as `choices` (or `metavar`).
fn literal_kwargs(kw: &mut Vec<(Val, Val)>, options: &[Val], metavar: bool) {
    let mut sorted = options.to_vec();
    let comparable = sorted.iter().all(|v| matches!(v, Val::Str(_))) || sorted.iter().all(|v| matches!(v, Val::Int(_)));
    if comparable {
        sorted.sort_by(|a, b| match (a, b) {
            (Val::Str(a), Val::Str(b)) => a.cmp(b),
            (Val::Int(a), Val::Int(b)) => a.cmp(b),
            _ => std::cmp::Ordering::Equal,
        });
    }
    let option_type = match options.first() {
        Some(Val::Int(_)) => ext("int"),
        Some(Val::Float(_)) => ext("float"),
        Some(Val::Bool(_)) => ext("bool"),
        _ => ext("str"),
    };
    let mut put = |k: &str, v: Val| match kw.iter_mut().find(|(key, _)| *key == s(k)) {
        Some(slot) => slot.1 = v,
        None => kw.push((s(k), v)),
    };
    put("type", option_type);
    put(if metavar { "metavar" } else { "choices" }, Val::List(sorted));
}

/// A field's default: the value, `field(default=...)`/`Field(default=...)`,
/// or what `default_factory` makes; an enum member gives its value. An object
/// (a config instance) is not a literal: it stays unknown, as its text.
fn field_default(ev: &ConstEval, file: &PyFile, node: Node, module: &str) -> Folded {
    field_default_at(ev, file, node, module, 0)
}

/// [`field_default`] inside `depth` config instances (see [`instance_default`]).
fn field_default_at(ev: &ConstEval, file: &PyFile, node: Node, module: &str, depth: usize) -> Folded {
    let scope = Scope::module(module);
    let text = || file.text(node).to_string();
    if node.kind() == "call" {
        let callee = node.child_by_field_name("function").map(|f| ev.eval(file, f, scope));
        let no_arguments = node.child_by_field_name("arguments").is_some_and(|a| named_children(a).is_empty());
        // `= SomeConfig()`: an instance built with its own defaults.
        if let (Some(Ok(Val::Class(class))), true) = (&callee, no_arguments) {
            return instance_default(ev, class, depth).map_err(|_| text());
        }
        if let Some(Ok(Val::External(name))) = callee {
            if name.ends_with(".field") || name.ends_with(".Field") {
                let args = node.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                for kw in args.iter().filter(|a| a.kind() == "keyword_argument") {
                    let (Some(k), Some(v)) = (kw.child_by_field_name("name"), kw.child_by_field_name("value")) else { continue };
                    match file.text(k) {
                        "default" => return literal(ev.eval(file, v, scope), file.text(v)),
                        "default_factory" => return factory(ev, file, v, module, depth),
                        _ => {}
                    }
                }
                // `Field(x)`: the first positional argument is the default.
                if let Some(first) = args.iter().find(|a| a.kind() != "keyword_argument" && name.ends_with(".Field")) {
                    return literal(ev.eval(file, *first, scope), file.text(*first));
                }
                return Err(text());
            }
        }
    }
    literal(ev.eval(file, node, scope), &text())
}

fn literal(v: Folded, text: &str) -> Folded {
    match v {
        Ok(v) if v.to_json().is_some() => Ok(v),
        // An enum member default (`MambaBackendEnum.TRITON`) is, on the command
        // line, its value: what a recipe writes, and what a change of it changes.
        Ok(Val::EnumMember { value, .. }) => match *value {
            Ok(v) if v.to_json().is_some() => Ok(v),
            _ => Err(text.to_string()),
        },
        _ => Err(text.to_string()),
    }
}

fn factory(ev: &ConstEval, file: &PyFile, node: Node, module: &str, depth: usize) -> Folded {
    let scope = Scope::module(module);
    if node.kind() == "lambda" {
        return match node.child_by_field_name("body") {
            Some(body) => literal(ev.eval(file, body, scope), file.text(body)),
            None => Err(file.text(node).to_string()),
        };
    }
    match ev.eval(file, node, scope) {
        // A dict subclass (`MultiModalDummyOptions`) starts empty.
        Ok(Val::Class(c)) if ev.class_bases(&c).iter().any(|b| matches!(b, Val::External(n) if n == "dict")) => Ok(Val::Dict(Vec::new())),
        Ok(Val::Class(c)) => instance_default(ev, &c, depth).map_err(|_| format!("{}()", file.text(node))),
        Ok(Val::External(name)) => match name.as_str() {
            "list" => Ok(Val::List(Vec::new())),
            "dict" => Ok(Val::Dict(Vec::new())),
            "set" | "frozenset" => Ok(Val::Set(Vec::new())),
            "tuple" => Ok(Val::Tuple(Vec::new())),
            _ => Err(format!("{name}()")),
        },
        _ => Err(format!("{}()", file.text(node))),
    }
}

/// Config instances nested in one default, at most (a cycle of factories ends here).
const MAX_INSTANCE_DEPTH: usize = 4;

/// The default of a config class built with no arguments (`default_factory=
/// EPLBConfig`, `= EPLBConfig()`): its fields' defaults by name, when the class
/// is a decorated record (a dataclass, `@config`), every field's default is
/// literal, and nothing in it or its bases computes fields at construction
/// (`__init__`, `__post_init__`, a pydantic validator: then it is unknown).
fn instance_default(ev: &ConstEval, class: &ClassRef, depth: usize) -> Folded {
    let text = format!("{}()", class.name);
    if depth >= MAX_INSTANCE_DEPTH || !super::type_hints::is_decorated(ev, class) {
        return Err(text);
    }
    let mut fields: Vec<(String, Folded)> = Vec::new();
    let mut owners: Vec<ClassRef> = vec![class.clone()];
    visit_record_fields(ev, class, &mut |file, owner, site| {
        if !owners.contains(owner) {
            owners.push(owner.clone());
        }
        let value = match site.default {
            Some(d) => field_default_at(ev, file, d, &owner.module, depth + 1),
            None => Err(format!("{}: no default", site.name)),
        };
        match fields.iter_mut().find(|(n, _)| *n == site.name) {
            Some(slot) => slot.1 = value,
            None => fields.push((site.name.clone(), value)),
        }
    });
    if fields.is_empty() || owners.iter().any(|o| computes_fields(ev, o)) {
        return Err(text);
    }
    let mut out = Vec::new();
    for (name, value) in fields {
        out.push((Val::Str(name), value.map_err(|_| text.clone())?));
    }
    Ok(Val::Dict(out))
}

/// Whether constructing `class` with no arguments may set a field to other
/// than its default: it defines `__init__`; its `__post_init__` or an
/// `after` model validator assigns to `self`; a `before` model validator
/// rewrites the input; or field validators run on defaults
/// (`validate_default=True`). Pydantic's field validators otherwise never see
/// a default, and a validator that only checks changes nothing.
fn computes_fields(ev: &ConstEval, class: &ClassRef) -> bool {
    static ASSIGNS_SELF: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let assigns_self =
        ASSIGNS_SELF.get_or_init(|| regex::Regex::new(r"self\.\w+(?:\[[^\]]*\])?\s*(?:[-+*/|&]?=)[^=]|setattr\(").expect("valid"));
    let Some(file) = ev.module_file(&class.module) else { return true };
    let Some(def) = ev.class_def(&file, &class.name) else { return true };
    if def.parent().is_some_and(|p| file.text(p).contains("validate_default=True")) || file.text(def).contains("validate_default=True") {
        return true;
    }
    let Some(body) = def.child_by_field_name("body") else { return true };
    named_children(body).into_iter().any(|stmt| {
        let (decorators, function) = match stmt.kind() {
            "decorated_definition" => {
                let function = stmt.child_by_field_name("definition").filter(|d| d.kind() == "function_definition");
                let decorators: String =
                    named_children(stmt).into_iter().filter(|d| d.kind() == "decorator").map(|d| file.text(d)).collect();
                (decorators, function)
            }
            "function_definition" => (String::new(), Some(stmt)),
            _ => return false,
        };
        let Some(function) = function else { return false };
        let name = function.child_by_field_name("name").map(|n| file.text(n)).unwrap_or_default();
        let compact: String = decorators.chars().filter(|c| !c.is_whitespace()).collect();
        let body = file.text(function);
        match name {
            "__init__" => true,
            "__post_init__" => assigns_self.is_match(body),
            _ if compact.contains("model_validator(mode=\"before\")") || compact.contains("model_validator(mode='before')") => true,
            _ if compact.contains("model_validator") => assigns_self.is_match(body),
            _ => false,
        }
    })
}

/// The attribute docstring after a field's statement (what `get_attr_docs` reads), stripped.
fn docstring_after(file: &PyFile, stmt: Node) -> Option<String> {
    let mut statement = stmt;
    while statement.parent().is_some_and(|p| p.kind() != "block") {
        statement = statement.parent()?;
    }
    let mut next = statement.next_named_sibling();
    while let Some(n) = next.filter(|n| n.kind() == "comment") {
        next = n.next_named_sibling();
    }
    let next = next.filter(|n| n.kind() == "expression_statement")?;
    let children = named_children(next);
    let [string] = children.as_slice() else { return None };
    if !matches!(string.kind(), "string" | "concatenated_string") {
        return None;
    }
    file.string_value(*string).map(|s| s.trim().to_string())
}
