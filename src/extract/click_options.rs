//! The options of a click command, read from its decorators
//! ([`FlagsStrategy::ClickCommand`](crate::profiles::FlagsStrategy::ClickCommand)):
//! TRT-LLM's `trtllm-serve serve`.
//!
//! Click registers an option per `@click.option(*names, **attrs)` decorator on
//! the command function; nothing is built at run time, so the decorators are
//! the whole parser. Values are folded by [`consts`](crate::extract::consts);
//! what cannot be folded is dynamic, never guessed.

use tree_sitter::Node;

use super::consts::{ConstEval, Scope, Val};
use super::package::Package;
use super::pydantic_models::STATUSES;
use super::python::{named_children, PyFile};
use crate::surface::{ExtractWarning, Flag, FlagDeprecation, FlagDeprecationKind, Known, PyValue};

/// Every option of the click command `function` in `module`, in decorator
/// order (top to bottom, as `--help` lists them).
pub(crate) fn extract_click_options(pkg: &Package, module: &str, function: &str, warnings: &mut Vec<ExtractWarning>) -> Vec<Flag> {
    let ev = ConstEval::new(pkg);
    let Some(file) = ev.module_file(module) else {
        warnings.push(ExtractWarning {
            path: pkg.module_path(module).unwrap_or_else(|| module.replace('.', "/") + ".py"),
            message: format!("the module of the click command `{function}` is missing or unreadable; no flags extracted"),
        });
        warnings.extend(ev.take_warnings());
        return Vec::new();
    };
    let Some(decorated) = command_definition(&file, function) else {
        warnings.push(ExtractWarning {
            path: file.path.clone(),
            message: format!("no function `{function}` decorated with `@click.command` at module level; no flags extracted"),
        });
        return Vec::new();
    };
    let mut flags = Vec::new();
    for decorator in named_children(decorated).into_iter().filter(|n| n.kind() == "decorator") {
        let Some(call) = named_children(decorator).into_iter().find(|n| n.kind() == "call") else { continue };
        let callee = call.child_by_field_name("function").map(|f| file.text(f)).unwrap_or_default();
        if callee.rsplit('.').next() != Some("option") {
            continue;
        }
        match read_option(&ev, &file, module, call) {
            Some(flag) => flags.push(flag),
            None => warnings.push(ExtractWarning {
                path: file.path.clone(),
                message: format!("line {}: a `@click.option` whose option strings are not literals; not read", file.line(call)),
            }),
        }
    }
    warnings.extend(ev.take_warnings());
    flags
}

/// The `decorated_definition` of `function` at module level, when one of its
/// decorators is a click command (`@click.command(...)`, `@main.command()`).
fn command_definition<'t>(file: &'t PyFile, function: &str) -> Option<Node<'t>> {
    named_children(file.root()).into_iter().find(|stmt| {
        stmt.kind() == "decorated_definition"
            && stmt
                .child_by_field_name("definition")
                .filter(|d| d.kind() == "function_definition")
                .and_then(|d| d.child_by_field_name("name"))
                .is_some_and(|n| file.text(n) == function)
            && named_children(*stmt).into_iter().filter(|n| n.kind() == "decorator").any(|d| {
                let text = file.text(d);
                text.contains(".command(") || text.ends_with(".command")
            })
    })
}

/// One `@click.option(...)` as a flag.
fn read_option(ev: &ConstEval, file: &PyFile, module: &str, call: Node) -> Option<Flag> {
    let args = call.child_by_field_name("arguments")?;
    let mut decls: Vec<String> = Vec::new();
    let mut keywords: Vec<(String, Node)> = Vec::new();
    for arg in named_children(args) {
        if arg.kind() == "keyword_argument" {
            let (Some(name), Some(value)) = (arg.child_by_field_name("name"), arg.child_by_field_name("value")) else { continue };
            keywords.push((file.text(name).to_string(), value));
        } else {
            decls.push(file.string_value(arg)?);
        }
    }
    let keyword = |name: &str| keywords.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    let fold = |node: Node| ev.eval(file, node, Scope::module(module));
    let truthy = |name: &str| keyword(name).and_then(|v| fold(v).ok()).and_then(|v| v.truthy()).unwrap_or(false);

    // Click's declarations: option strings start with a dash, `--on/--off`
    // declares both sides of a boolean, a bare identifier names the parameter.
    let mut names: Vec<String> = Vec::new();
    let mut secondary = false;
    let mut explicit_name = None;
    for decl in &decls {
        if decl.starts_with('-') {
            match decl.split_once('/') {
                Some((on, off)) => {
                    names.push(on.trim().to_string());
                    names.push(off.trim().to_string());
                    secondary = true;
                }
                None => names.push(decl.clone()),
            }
        } else if decl.chars().all(|c| c.is_alphanumeric() || c == '_') && !decl.is_empty() {
            explicit_name = Some(decl.clone());
        }
    }
    if names.is_empty() {
        return None;
    }
    let dest = explicit_name.unwrap_or_else(|| click_name(&names));
    let is_flag = truthy("is_flag") || secondary;
    let multiple = truthy("multiple");
    let count = truthy("count");

    let type_node = keyword("type");
    let (type_name, choices) = match type_node {
        Some(node) => read_type(ev, file, module, node),
        None if is_flag => (Some("bool".to_string()), None),
        None => (None, None),
    };
    let default: Known<PyValue> = match keyword("default") {
        Some(node) => match fold(node) {
            Ok(v) => match v.to_json() {
                Some(json) => Known::Value(json),
                None => Known::Dynamic { dynamic: file.text(node).to_string() },
            },
            Err(text) => model_field_default(ev, file, module, node).unwrap_or(Known::Dynamic { dynamic: text }),
        },
        // Click's own: a flag is off, a counter is 0, anything else is `None`.
        None if is_flag => Known::Value(PyValue::Bool(false)),
        None if count => Known::Value(PyValue::from(0)),
        None => Known::Value(PyValue::Null),
    };
    // A type named by the default alone (`default=8000` is an int option).
    let type_name = type_name.or_else(|| match &default {
        Known::Value(PyValue::Bool(_)) => Some("bool".into()),
        Known::Value(PyValue::Number(n)) if n.is_i64() => Some("int".into()),
        Known::Value(PyValue::Number(_)) => Some("float".into()),
        _ => None,
    });
    let (help, status) = keyword("help").map(|node| read_help(ev, file, module, node)).unwrap_or((None, None));
    let deprecated_kw = keyword("deprecated").and_then(|v| fold(v).ok());
    let deprecated = match (&deprecated_kw, status.as_deref()) {
        (Some(Val::Str(message)), _) => {
            Some(FlagDeprecation { kind: FlagDeprecationKind::Announced, replacement: None, message: Some(message.clone()) })
        }
        (Some(v), _) if v.truthy() == Some(true) => {
            Some(FlagDeprecation { kind: FlagDeprecationKind::Announced, replacement: None, message: help.clone() })
        }
        (_, Some("deprecated")) => Some(FlagDeprecation { kind: FlagDeprecationKind::Announced, replacement: None, message: help.clone() }),
        _ => None,
    };
    let action = if count {
        "count"
    } else if secondary {
        "BooleanOptionalAction"
    } else if is_flag {
        "store_true"
    } else if multiple {
        "append"
    } else {
        "store"
    };
    Some(Flag {
        names,
        dest,
        action: action.to_string(),
        type_name,
        nargs: None,
        choices,
        choices_when_env: Default::default(),
        default,
        const_value: None,
        required: truthy("required"),
        deprecated,
        help: help.map(|h| match &status {
            // What `--help` prints: the tag the help helper prepends.
            Some(s) => format!(":tag:`{s}` {h}"),
            None => h,
        }),
        evidence: file.evidence(call),
        effective_default: None,
        engine_parser: None,
    })
}

/// `Model.model_fields["name"].default`: the default the engine's pydantic
/// model declares for that field (TRT-LLM takes `--max_batch_size`'s from
/// `BuildConfig`). `None` when the expression is not of that shape or the
/// field's default is not known.
fn model_field_default(ev: &ConstEval, file: &PyFile, module: &str, node: Node) -> Option<Known<PyValue>> {
    if node.kind() != "attribute" || file.text(node.child_by_field_name("attribute")?) != "default" {
        return None;
    }
    let subscript = node.child_by_field_name("object")?;
    if subscript.kind() != "subscript" {
        return None;
    }
    let fields = subscript.child_by_field_name("value")?;
    if fields.kind() != "attribute" || file.text(fields.child_by_field_name("attribute")?) != "model_fields" {
        return None;
    }
    let name = file.string_value(subscript.child_by_field_name("subscript")?)?;
    let Ok(Val::Class(class)) = ev.eval(file, fields.child_by_field_name("object")?, Scope::module(module)) else { return None };
    super::pydantic_models::field_default(ev, &class, &name)?
}

/// The parameter name click derives from option strings: the first with the
/// longest prefix (`--` before `-`), dashes as underscores, lower case.
fn click_name(names: &[String]) -> String {
    let prefix_len = |n: &String| n.len() - n.trim_start_matches('-').len();
    let longest = names.iter().map(prefix_len).max().unwrap_or(0);
    let first = names.iter().find(|n| prefix_len(n) == longest).map(|n| n.trim_start_matches('-')).unwrap_or_default();
    first.replace('-', "_").to_lowercase()
}

/// `type=`: a builtin (`int`), `click.Choice([...])` (or a subclass called
/// the same way, first argument the choices), `click.Path(...)`.
fn read_type(ev: &ConstEval, file: &PyFile, module: &str, node: Node) -> (Option<String>, Option<Known<Vec<PyValue>>>) {
    if node.kind() != "call" {
        let text = file.text(node);
        return (Some(text.rsplit('.').next().unwrap_or(text).to_string()), None);
    }
    let callee = node.child_by_field_name("function").map(|f| file.text(f)).unwrap_or_default();
    let short = callee.rsplit('.').next().unwrap_or(callee).to_string();
    if !short.contains("Choice") {
        return (Some(short), None);
    }
    let first = node.child_by_field_name("arguments").and_then(|a| named_children(a).into_iter().find(|n| n.kind() != "keyword_argument"));
    let choices = match first {
        Some(arg) => match ev.eval(file, arg, Scope::module(module)) {
            Ok(v) => match v.iter_items().and_then(|items| items.iter().map(choice_json).collect::<Option<Vec<_>>>()) {
                Some(values) => Known::Value(values),
                None => Known::Dynamic { dynamic: file.text(arg).to_string() },
            },
            Err(text) => Known::Dynamic { dynamic: text },
        },
        None => Known::Dynamic { dynamic: file.text(node).to_string() },
    };
    (Some("Choice".to_string()), Some(choices))
}

/// A choice as click compares it: an enum member is its value.
fn choice_json(v: &Val) -> Option<PyValue> {
    match v {
        Val::EnumMember { value, .. } => value.as_ref().as_ref().ok()?.to_json(),
        other => other.to_json(),
    }
}

/// `help=`: the text, and the status when it is wrapped in the engine's tag
/// helper (`help_info_with_stability_tag("text", "beta")`: a call whose last
/// positional argument is a status).
fn read_help(ev: &ConstEval, file: &PyFile, module: &str, node: Node) -> (Option<String>, Option<String>) {
    if node.kind() == "call" {
        let positional: Vec<Node> = node
            .child_by_field_name("arguments")
            .map(|a| named_children(a).into_iter().filter(|n| n.kind() != "keyword_argument").collect())
            .unwrap_or_default();
        if let [text, .., tag] = positional.as_slice() {
            if let Some(status) = file.string_value(*tag).filter(|s| STATUSES.contains(&s.as_str())) {
                let help = match ev.eval(file, *text, Scope::module(module)) {
                    Ok(Val::Str(s)) => Some(s),
                    _ => Some(file.text(*text).to_string()),
                };
                return (help, Some(status));
            }
        }
    }
    match ev.eval(file, node, Scope::module(module)) {
        Ok(Val::Str(s)) => (Some(s), None),
        _ => (Some(file.text(node).to_string()), None),
    }
}
