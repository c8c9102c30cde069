//! Folding of one expression node.

use tree_sitter::Node;

use super::value::{set_insert, Folded, Val};
use super::{ConstEval, Locals, Scope};
use crate::extract::python::{named_children, PyFile};

pub(super) fn eval(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Folded {
    let unknown = || Err(file.text(node).to_string());
    let sub = |n: Node| ev.eval(file, n, scope);
    match node.kind() {
        "integer" => parse_int(file.text(node)).map(Val::Int).ok_or_else(|| file.text(node).to_string()),
        "float" => file.text(node).replace('_', "").parse::<f64>().map(Val::Float).map_err(|_| file.text(node).to_string()),
        "true" => Ok(Val::Bool(true)),
        "false" => Ok(Val::Bool(false)),
        "none" => Ok(Val::None),
        "string" | "concatenated_string" => match file.string_value(node) {
            Some(s) => Ok(Val::Str(s)),
            None => formatted(ev, file, node, scope).map(Val::Str).ok_or_else(|| file.text(node).to_string()),
        },
        // Parts of annotations are wrapped in `type`.
        "type" => match named_children(node).as_slice() {
            [inner] => sub(*inner),
            _ => unknown(),
        },
        "parenthesized_expression" => match named_children(node).as_slice() {
            [inner] => sub(*inner),
            _ => unknown(),
        },
        "list" => seq_items(ev, file, node, scope).map(Val::List),
        "tuple" | "expression_list" => seq_items(ev, file, node, scope).map(Val::Tuple),
        "set" => {
            let mut out = Vec::new();
            for v in seq_items(ev, file, node, scope)? {
                set_insert(&mut out, v);
            }
            Ok(Val::Set(out))
        }
        "dictionary" => {
            let mut out: Vec<(Val, Val)> = Vec::new();
            for item in named_children(node) {
                match item.kind() {
                    "pair" => {
                        let k = sub(item.child_by_field_name("key").ok_or_else(|| file.text(item).to_string())?)?;
                        let vnode = item.child_by_field_name("value").ok_or_else(|| file.text(item).to_string())?;
                        // A value that does not fold still leaves the keys known. A value
                        // that is a name imported from another module is left unfolded:
                        // following it parses that module, and registries such as
                        // `{"name": DetectorClass, ...}` are only ever read for their keys.
                        let v = if is_imported_name(file, vnode) {
                            Val::Opaque(file.text(vnode).to_string())
                        } else {
                            sub(vnode).unwrap_or_else(Val::Opaque)
                        };
                        dict_set(&mut out, k, v);
                    }
                    "dictionary_splat" => {
                        let inner = named_children(item).first().copied().ok_or_else(|| file.text(item).to_string())?;
                        match sub(inner)? {
                            Val::Dict(d) => {
                                for (k, v) in d {
                                    dict_set(&mut out, k, v);
                                }
                            }
                            _ => return unknown(),
                        }
                    }
                    _ => return unknown(),
                }
            }
            Ok(Val::Dict(out))
        }
        "identifier" => lookup_name(ev, file.text(node), scope),
        "attribute" => {
            let obj = node.child_by_field_name("object").ok_or_else(|| file.text(node).to_string())?;
            let attr = node.child_by_field_name("attribute").map(|a| file.text(a)).unwrap_or_default();
            let base = sub(obj).map_err(|_| file.text(node).to_string())?;
            attribute(ev, base, attr).ok_or_else(|| file.text(node).to_string())
        }
        "subscript" => {
            let value = sub(node.child_by_field_name("value").ok_or_else(|| file.text(node).to_string())?)?;
            if matches!(&value, Val::External(e) if is_literal_type(e)) {
                return literal_type(ev, file, node, scope);
            }
            let index_nodes = named_children(node);
            let [_, index] = index_nodes.as_slice() else { return unknown() };
            if index.kind() == "slice" {
                return unknown();
            }
            let index = sub(*index)?;
            subscript(&value, &index).ok_or_else(|| file.text(node).to_string())
        }
        "binary_operator" => {
            let l = sub(node.child_by_field_name("left").ok_or_else(|| file.text(node).to_string())?)?;
            let r = sub(node.child_by_field_name("right").ok_or_else(|| file.text(node).to_string())?)?;
            let op = node.child_by_field_name("operator").map(|o| file.text(o)).unwrap_or_default();
            binary(op, &l, &r).ok_or_else(|| file.text(node).to_string())
        }
        "unary_operator" => {
            let arg = sub(node.child_by_field_name("argument").ok_or_else(|| file.text(node).to_string())?)?;
            let op = node.child_by_field_name("operator").map(|o| file.text(o)).unwrap_or_default();
            match (op, arg) {
                ("-", Val::Int(i)) => Ok(Val::Int(-i)),
                ("-", Val::Float(f)) => Ok(Val::Float(-f)),
                ("+", v @ (Val::Int(_) | Val::Float(_))) => Ok(v),
                ("~", Val::Int(i)) => Ok(Val::Int(!i)),
                _ => unknown(),
            }
        }
        "not_operator" => {
            let arg = sub(node.child_by_field_name("argument").ok_or_else(|| file.text(node).to_string())?)?;
            arg.truthy().map(|b| Val::Bool(!b)).ok_or_else(|| file.text(node).to_string())
        }
        "boolean_operator" => {
            let l = sub(node.child_by_field_name("left").ok_or_else(|| file.text(node).to_string())?)?;
            let op = node.child_by_field_name("operator").map(|o| file.text(o)).unwrap_or_default();
            let truth = l.truthy().ok_or_else(|| file.text(node).to_string())?;
            match (op, truth) {
                ("or", true) | ("and", false) => Ok(l),
                _ => sub(node.child_by_field_name("right").ok_or_else(|| file.text(node).to_string())?),
            }
        }
        "conditional_expression" => {
            let parts = named_children(node);
            let [then, cond, otherwise] = parts.as_slice() else { return unknown() };
            let c = sub(*cond)?.truthy().ok_or_else(|| file.text(node).to_string())?;
            sub(if c { *then } else { *otherwise })
        }
        "call" => call(ev, file, node, scope),
        "comparison_operator" => compare(ev, file, node, scope),
        "list_comprehension" | "set_comprehension" | "generator_expression" => {
            let items = comprehension(ev, file, node, scope)?;
            if node.kind() == "set_comprehension" {
                let mut out = Vec::new();
                for v in items {
                    set_insert(&mut out, v);
                }
                Ok(Val::Set(out))
            } else {
                Ok(Val::List(items))
            }
        }
        _ => unknown(),
    }
}

/// `a == b`, `a != b`, `a in b`, `a not in b` on literal values (one operator:
/// a chain `a < b < c` is left unfolded).
fn compare(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Folded {
    let unknown = || Err(file.text(node).to_string());
    let operands = named_children(node);
    let [left, right] = operands.as_slice() else { return unknown() };
    let mut cursor = node.walk();
    let op: String = node.children_by_field_name("operators", &mut cursor).map(|o| file.text(o)).collect::<Vec<_>>().join(" ");
    let (l, r) = (ev.eval(file, *left, scope)?, ev.eval(file, *right, scope)?);
    let literal = |v: &Val| v.to_json().is_some();
    match op.as_str() {
        "==" if literal(&l) && literal(&r) => Ok(Val::Bool(l == r)),
        "!=" if literal(&l) && literal(&r) => Ok(Val::Bool(l != r)),
        "in" | "not in" if literal(&l) => {
            let items = r.iter_items().ok_or_else(|| file.text(node).to_string())?;
            Ok(Val::Bool(items.contains(&l) == (op == "in")))
        }
        _ => unknown(),
    }
}

fn parse_int(text: &str) -> Option<i64> {
    let t = text.replace('_', "").to_ascii_lowercase();
    let t = t.trim_end_matches('l');
    if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = t.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = t.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else {
        t.parse().ok()
    }
}

fn dict_set(d: &mut Vec<(Val, Val)>, k: Val, v: Val) {
    match d.iter_mut().find(|(key, _)| *key == k) {
        Some(slot) => slot.1 = v,
        None => d.push((k, v)),
    }
}

/// Items of a list/tuple/set display, expanding `*splat`s.
fn seq_items(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Result<Vec<Val>, String> {
    let mut out = Vec::new();
    for item in named_children(node) {
        if item.kind() == "list_splat" {
            let inner = named_children(item).first().copied().ok_or_else(|| file.text(item).to_string())?;
            let v = ev.eval(file, inner, scope)?;
            out.extend(iterate(ev, &v).ok_or_else(|| file.text(item).to_string())?);
        } else {
            out.push(ev.eval(file, item, scope)?);
        }
    }
    Ok(out)
}

/// What `for x in v` yields, including the members of an `Enum` class.
pub(super) fn iterate(ev: &ConstEval, v: &Val) -> Option<Vec<Val>> {
    match v {
        Val::Class(c) if ev.is_enum(c) => ev.enum_members(c),
        other => other.iter_items(),
    }
}

fn lookup_name(ev: &ConstEval, name: &str, scope: Scope) -> Folded {
    if let Some(v) = scope.locals.and_then(|l| l.get(name)) {
        return v.clone();
    }
    if let Some(class) = scope.class {
        if let Some(file) = ev.module_file(&class.module) {
            if let Some(body) = ev.class_def(&file, &class.name).and_then(super::class_body) {
                if super::final_binding(&file.source, body, name).is_some() {
                    return ev.class_attr(class, name);
                }
            }
        }
    }
    ev.global(scope.module, name)
}

fn attribute(ev: &ConstEval, base: Val, attr: &str) -> Option<Val> {
    match base {
        Val::Module(m) => {
            let sub = format!("{m}.{attr}");
            match ev.global(&m, attr) {
                Ok(v) => Some(v),
                Err(_) if ev.pkg.module_path(&sub).is_some() => Some(Val::Module(sub)),
                Err(_) => super::lazy_attr::lazy_attribute(ev, &m, attr),
            }
        }
        Val::Class(c) => ev.class_attr(&c, attr).ok(),
        Val::Field { class, name } => match attr {
            "name" => Some(Val::Str(name)),
            "default" => super::classes::field_default(ev, &class, &name).ok(),
            _ => None,
        },
        Val::EnumMember { name, value, .. } => match attr {
            "name" => Some(Val::Str(name)),
            "value" => value.as_ref().clone().ok(),
            _ => None,
        },
        // Read off the platform object: known when every platform it may be agrees.
        Val::CurrentPlatform(classes) => {
            let mut values = classes.iter().map(|c| ev.class_attr(c, attr).ok().filter(|v| v.to_json().is_some()));
            let first = values.next()??;
            values.all(|v| v.as_ref() == Some(&first)).then_some(first)
        }
        Val::External(e) => {
            let full = format!("{e}.{attr}");
            Some(match full.as_str() {
                // argparse's one constant that shows up as a default.
                "argparse.SUPPRESS" => Val::Str("==SUPPRESS==".into()),
                // `ssl.VerifyMode`'s members, fixed by the standard library
                // (`--ssl-cert-reqs` defaults to `int(ssl.CERT_NONE)`).
                "ssl.CERT_NONE" => Val::Int(0),
                "ssl.CERT_OPTIONAL" => Val::Int(1),
                "ssl.CERT_REQUIRED" => Val::Int(2),
                _ => Val::External(full),
            })
        }
        // Attributes of literals are methods, handled where they are called.
        _ => None,
    }
}

fn subscript(value: &Val, index: &Val) -> Option<Val> {
    match (value, index) {
        (Val::List(v) | Val::Tuple(v), Val::Int(i)) => {
            let len = v.len() as i64;
            let at = if *i < 0 { len + i } else { *i };
            (0..len).contains(&at).then(|| v[at as usize].clone())
        }
        (Val::Dict(d), k) => d.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).filter(|v| !matches!(v, Val::Opaque(_))),
        _ => None,
    }
}

fn binary(op: &str, l: &Val, r: &Val) -> Option<Val> {
    use Val::*;
    Some(match (op, l, r) {
        ("+", List(a), List(b)) => List(a.iter().chain(b).cloned().collect()),
        ("+", Tuple(a), Tuple(b)) => Tuple(a.iter().chain(b).cloned().collect()),
        ("+", Str(a), Str(b)) => Str(format!("{a}{b}")),
        ("|", Set(a), Set(b)) => {
            let mut out = a.clone();
            for x in b {
                set_insert(&mut out, x.clone());
            }
            Set(out)
        }
        ("-", Set(a), Set(b)) => Set(a.iter().filter(|x| !b.contains(x)).cloned().collect()),
        ("|", Dict(a), Dict(b)) => {
            let mut out = a.clone();
            for (k, v) in b {
                dict_set(&mut out, k.clone(), v.clone());
            }
            Dict(out)
        }
        ("*", List(a), Int(n)) | ("*", Int(n), List(a)) => List((0..(*n).max(0)).flat_map(|_| a.clone()).collect()),
        (_, Int(a), Int(b)) => match op {
            "+" => Int(a.checked_add(*b)?),
            "-" => Int(a.checked_sub(*b)?),
            "*" => Int(a.checked_mul(*b)?),
            "//" if *b != 0 => Int(a.div_euclid(*b)),
            "%" if *b != 0 => Int(a.rem_euclid(*b)),
            "/" if *b != 0 => Float(*a as f64 / *b as f64),
            "**" if *b >= 0 => Int(a.checked_pow(u32::try_from(*b).ok()?)?),
            "<<" if (0..63).contains(b) => Int(a.checked_shl(*b as u32)?),
            ">>" if (0..63).contains(b) => Int(a >> b),
            "|" => Int(a | b),
            "&" => Int(a & b),
            _ => return Option::None,
        },
        (_, Int(_) | Float(_), Int(_) | Float(_)) => {
            let (a, b) = (as_f64(l)?, as_f64(r)?);
            match op {
                "+" => Float(a + b),
                "-" => Float(a - b),
                "*" => Float(a * b),
                "/" if b != 0.0 => Float(a / b),
                "**" => Float(a.powf(b)),
                _ => return Option::None,
            }
        }
        _ => return Option::None,
    })
}

fn as_f64(v: &Val) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        _ => None,
    }
}

fn call(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Folded {
    let unknown = || Err(file.text(node).to_string());
    let Some(func) = node.child_by_field_name("function") else { return unknown() };
    let Some(args_node) = node.child_by_field_name("arguments") else { return unknown() };
    let arg_nodes = if args_node.kind() == "generator_expression" { vec![args_node] } else { named_children(args_node) };
    if arg_nodes.iter().any(|a| matches!(a.kind(), "list_splat" | "dictionary_splat")) {
        return unknown();
    }
    let positional: Vec<Node> = arg_nodes.iter().copied().filter(|a| a.kind() != "keyword_argument").collect();
    let keywords: Vec<Node> = arg_nodes.iter().copied().filter(|a| a.kind() == "keyword_argument").collect();

    // Methods of literal values: `"x".lower()`, `D.keys()`.
    if func.kind() == "attribute" {
        let obj = func.child_by_field_name("object");
        let method = func.child_by_field_name("attribute").map(|a| file.text(a)).unwrap_or_default();
        if let Some(obj) = obj {
            let receiver = ev.eval(file, obj, scope).map_err(|_| file.text(node).to_string())?;
            if !matches!(receiver, Val::Module(_) | Val::Class(_) | Val::External(_)) {
                if !keywords.is_empty() {
                    return unknown();
                }
                let mut args = Vec::new();
                for a in &positional {
                    args.push(ev.eval(file, *a, scope)?);
                }
                return method_call(&receiver, method, &args).ok_or_else(|| file.text(node).to_string());
            }
        }
    }

    let callee = ev.eval(file, func, scope).map_err(|_| file.text(node).to_string())?;
    let dotted = match &callee {
        Val::Function(module, name) => Some(format!("{module}.{name}")),
        Val::External(name) => Some(name.clone()),
        _ => None,
    };
    if let Some(dotted) = dotted.filter(|d| ev.natives.contains_key(d)) {
        if !keywords.is_empty() {
            return unknown();
        }
        let mut args = Vec::new();
        for a in &positional {
            args.push(ev.eval(file, *a, scope)?);
        }
        return ev.native_call(&dotted, &args).unwrap_or_else(unknown).map_err(|_| file.text(node).to_string());
    }
    if let Val::Function(module, name) = &callee {
        if !keywords.is_empty() {
            return unknown();
        }
        let mut args = Vec::new();
        for a in &positional {
            args.push(ev.eval(file, *a, scope)?);
        }
        return super::function::call(ev, module, name, &args).map_err(|_| file.text(node).to_string());
    }
    let Val::External(name) = callee else { return unknown() };
    // `C = msgspec.defstruct("C", [...fields of C...], namespace=...)`: the
    // struct rebuilt from the class of the same name, whose fields the record
    // walk reads (its namespaces included).
    if matches!(name.as_str(), "msgspec.defstruct" | "dataclasses.make_dataclass") {
        let Some(Ok(Val::Str(class))) = positional.first().map(|n| ev.eval(file, *n, scope)) else { return unknown() };
        let module_file = ev.module_file(scope.module).ok_or_else(|| file.text(node).to_string())?;
        return match ev.class_def(&module_file, &class) {
            Some(_) => Ok(Val::Class(super::ClassRef { module: scope.module.to_string(), name: class })),
            None => unknown(),
        };
    }
    // `dataclasses.field(default=X)`: the class attribute is X.
    if matches!(name.as_str(), "dataclasses.field" | "msgspec.field") {
        for kw in &keywords {
            let key = kw.child_by_field_name("name").map(|n| file.text(n));
            if key == Some("default") {
                return ev.eval(file, kw.child_by_field_name("value").ok_or_else(|| file.text(node).to_string())?, scope);
            }
        }
        return unknown();
    }
    let mut args = Vec::new();
    for a in &positional {
        args.push(ev.eval(file, *a, scope)?);
    }
    // Keywords only where their position is known: `permutations(x, r=2)`.
    for kw in &keywords {
        let key = kw.child_by_field_name("name").map(|n| file.text(n)).unwrap_or_default();
        let position = keyword_positions(&name).iter().position(|p| *p == key);
        let (Some(position), Some(value)) = (position, kw.child_by_field_name("value")) else { return unknown() };
        if args.len() != position {
            return unknown();
        }
        args.push(ev.eval(file, value, scope)?);
    }
    builtin_call(ev, &name, &args).ok_or_else(|| file.text(node).to_string())
}

/// The positional parameters of the outside functions folded with keywords.
fn keyword_positions(name: &str) -> &'static [&'static str] {
    match name {
        "itertools.permutations" => &["iterable", "r"],
        _ => &[],
    }
}

fn is_literal_type(external: &str) -> bool {
    matches!(external, "typing.Literal" | "typing_extensions.Literal")
}

/// `Literal["a", "b"]`, `Literal[Other, "c"]` (nested ones flattened, as Python does).
fn literal_type(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Folded {
    let head = node.child_by_field_name("value").map(|h| h.id());
    let mut args: Vec<Node> = named_children(node).into_iter().filter(|n| Some(n.id()) != head).collect();
    // `Literal[("a", "b")]` is `Literal["a", "b"]`.
    if let [one] = args.as_slice() {
        if matches!(one.kind(), "tuple" | "expression_list") {
            args = named_children(*one);
        }
    }
    let mut values = Vec::new();
    for a in args {
        match ev.eval(file, a, scope)? {
            Val::LiteralType(inner) => values.extend(inner),
            v @ Val::EnumMember { .. } => values.push(v),
            v if v.to_json().is_some() => values.push(v),
            _ => return Err(file.text(node).to_string()),
        }
    }
    Ok(Val::LiteralType(values))
}

/// `itertools.permutations(items, r)` in Python's order, when small.
fn permutations(items: &[Val], r: usize) -> Option<Vec<Val>> {
    const MAX_RESULTS: usize = 10_000;
    let n = items.len();
    if r > n {
        return Some(Vec::new());
    }
    let count = (n - r + 1..=n).try_fold(1usize, |acc, k| acc.checked_mul(k))?;
    if count > MAX_RESULTS {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    let mut chosen: Vec<usize> = Vec::with_capacity(r);
    fn extend(items: &[Val], r: usize, chosen: &mut Vec<usize>, out: &mut Vec<Val>) {
        if chosen.len() == r {
            out.push(Val::Tuple(chosen.iter().map(|&i| items[i].clone()).collect()));
            return;
        }
        for i in 0..items.len() {
            if !chosen.contains(&i) {
                chosen.push(i);
                extend(items, r, chosen, out);
                chosen.pop();
            }
        }
    }
    extend(items, r, &mut chosen, &mut out);
    Some(out)
}

fn method_call(receiver: &Val, method: &str, args: &[Val]) -> Option<Val> {
    match (receiver, method, args) {
        (Val::Str(s), "lower", []) => Some(Val::Str(s.to_lowercase())),
        (Val::Str(s), "upper", []) => Some(Val::Str(s.to_uppercase())),
        (Val::Str(s), "strip", []) => Some(Val::Str(s.trim().to_string())),
        (Val::Str(s), "replace", [Val::Str(a), Val::Str(b)]) => Some(Val::Str(s.replace(a.as_str(), b))),
        (Val::Str(sep), "join", [it]) => {
            let parts: Option<Vec<String>> = it
                .iter_items()?
                .into_iter()
                .map(|v| match v {
                    Val::Str(s) => Some(s),
                    _ => None,
                })
                .collect();
            Some(Val::Str(parts?.join(sep)))
        }
        (Val::Str(s), "removeprefix", [Val::Str(p)]) => Some(Val::Str(s.strip_prefix(p.as_str()).unwrap_or(s).to_string())),
        (Val::Str(s), "removesuffix", [Val::Str(p)]) => Some(Val::Str(s.strip_suffix(p.as_str()).unwrap_or(s).to_string())),
        (Val::Dict(d), "items", []) => Some(Val::List(d.iter().map(|(k, v)| Val::Tuple(vec![k.clone(), v.clone()])).collect())),
        (Val::Str(s), "split", [Val::Str(sep)]) => Some(Val::List(s.split(sep.as_str()).map(|p| Val::Str(p.into())).collect())),
        (Val::Dict(d), "keys", []) => Some(Val::List(d.iter().map(|(k, _)| k.clone()).collect())),
        (Val::Dict(d), "values", []) => {
            let vals: Vec<Val> = d.iter().map(|(_, v)| v.clone()).collect();
            (!vals.iter().any(|v| matches!(v, Val::Opaque(_)))).then_some(Val::List(vals))
        }
        (Val::Dict(d), "get", [k]) | (Val::Dict(d), "get", [k, _]) => match d.iter().find(|(key, _)| key == k) {
            Some((_, Val::Opaque(_))) => None,
            Some((_, v)) => Some(v.clone()),
            None => Some(args.get(1).cloned().unwrap_or(Val::None)),
        },
        (Val::List(_) | Val::Dict(_) | Val::Set(_), "copy", []) => Some(receiver.clone()),
        _ => None,
    }
}

fn builtin_call(ev: &ConstEval, name: &str, args: &[Val]) -> Option<Val> {
    let items = |v: &Val| iterate(ev, v);
    Some(match (name, args) {
        ("list", []) => Val::List(Vec::new()),
        ("list", [v]) => Val::List(items(v)?),
        ("tuple", []) => Val::Tuple(Vec::new()),
        ("tuple", [v]) => Val::Tuple(items(v)?),
        ("set" | "frozenset", []) => Val::Set(Vec::new()),
        ("set" | "frozenset", [v]) => {
            let mut out = Vec::new();
            for x in items(v)? {
                set_insert(&mut out, x);
            }
            Val::Set(out)
        }
        ("dict", []) => Val::Dict(Vec::new()),
        ("sorted", [v]) => {
            let mut xs = items(v)?;
            if xs.iter().all(|x| matches!(x, Val::Str(_))) || xs.iter().all(|x| matches!(x, Val::Int(_))) {
                xs.sort_by(|a, b| match (a, b) {
                    (Val::Str(a), Val::Str(b)) => a.cmp(b),
                    (Val::Int(a), Val::Int(b)) => a.cmp(b),
                    _ => std::cmp::Ordering::Equal,
                });
                Val::List(xs)
            } else {
                return None;
            }
        }
        ("len", [v]) => Val::Int(items(v)?.len() as i64),
        ("next", [v]) => items(v)?.into_iter().next()?,
        ("dataclasses.fields" | "msgspec.structs.fields", [Val::Class(c)]) => {
            Val::List(super::classes::record_fields(ev, c).into_iter().map(|(class, name)| Val::Field { class, name }).collect())
        }
        ("int", [Val::Int(i)]) => Val::Int(*i),
        ("int", [Val::Str(s)]) => Val::Int(s.trim().parse().ok()?),
        ("float", [Val::Int(i)]) => Val::Float(*i as f64),
        ("float", [Val::Float(f)]) => Val::Float(*f),
        ("float", [Val::Str(s)]) => Val::Float(match s.trim().to_ascii_lowercase().as_str() {
            "inf" | "+inf" | "infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            other => other.parse().ok()?,
        }),
        ("str", [Val::Str(s)]) => Val::Str(s.clone()),
        ("str", [v @ (Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::None)]) => Val::Str(v.repr()),
        ("bool", [v]) => Val::Bool(v.truthy()?),
        ("typing.get_args" | "typing_extensions.get_args", [Val::LiteralType(values)]) => Val::Tuple(values.clone()),
        ("itertools.permutations", [v]) => {
            let xs = items(v)?;
            Val::List(permutations(&xs, xs.len())?)
        }
        ("itertools.permutations", [v, Val::Int(r)]) => Val::List(permutations(&items(v)?, usize::try_from(*r).ok()?)?),
        _ => return None,
    })
}

/// `[body for x in it if cond]` with one `for` clause.
fn comprehension(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Result<Vec<Val>, String> {
    let unknown = || file.text(node).to_string();
    let body = node.child_by_field_name("body").ok_or_else(unknown)?;
    let clauses: Vec<Node> = named_children(node).into_iter().filter(|n| n.id() != body.id()).collect();
    let fors: Vec<&Node> = clauses.iter().filter(|c| c.kind() == "for_in_clause").collect();
    let [for_clause] = fors.as_slice() else { return Err(unknown()) };
    let target = for_clause.child_by_field_name("left").ok_or_else(unknown)?;
    if target.kind() != "identifier" {
        return Err(unknown());
    }
    let var = file.text(target).to_string();
    let iterable = for_clause.child_by_field_name("right").ok_or_else(unknown)?;
    let items = iterate(ev, &ev.eval(file, iterable, scope)?).ok_or_else(unknown)?;
    let mut locals: Locals = scope.locals.cloned().unwrap_or_default();
    let mut out = Vec::new();
    for item in items {
        locals.insert(var.clone(), Ok(item));
        let inner = Scope { module: scope.module, locals: Some(&locals), class: scope.class };
        let mut keep = true;
        for cond in clauses.iter().filter(|c| c.kind() == "if_clause") {
            let expr = named_children(*cond).first().copied().ok_or_else(unknown)?;
            keep &= ev.eval(file, expr, inner)?.truthy().ok_or_else(unknown)?;
        }
        if keep {
            out.push(ev.eval(file, body, inner)?);
        }
    }
    Ok(out)
}

/// A bare name bound at module level by `from x import name`. A class or local
/// scope that rebinds it is not looked at: the value is then left unfolded, which
/// is never wrong, only less precise.
fn is_imported_name(file: &PyFile, node: Node) -> bool {
    if node.kind() != "identifier" {
        return false;
    }
    matches!(
        super::bindings::final_binding(&file.source, file.root(), file.text(node)),
        Some(Ok(super::bindings::Binding { kind: super::bindings::BindingKind::ImportFrom { .. }, .. }))
    )
}

/// An f-string whose replacement fields are plain expressions that fold to
/// literals (`f"--{key.replace('_', '-')}"`); `None` for anything else
/// (conversions, format specs, bytes).
fn formatted(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> Option<String> {
    if node.kind() == "concatenated_string" {
        let mut out = String::new();
        for part in named_children(node) {
            out.push_str(&match file.string_value(part) {
                Some(s) => s,
                None => formatted(ev, file, part, scope)?,
            });
        }
        return Some(out);
    }
    if node.kind() != "string" {
        return None;
    }
    let mut out = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "string_start" => {
                let prefix = file.text(child).to_ascii_lowercase();
                if prefix.contains('b') || prefix.contains('r') {
                    return None;
                }
            }
            "string_content" | "escape_sequence" => out.push_str(&crate::extract::python::unescape_text(file.text(child))),
            "interpolation" => {
                let parts = named_children(child);
                let [expr] = parts.as_slice() else { return None };
                out.push_str(&match ev.eval(file, *expr, scope).ok()? {
                    Val::Str(s) => s,
                    v @ (Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::None) => v.repr(),
                    _ => return None,
                });
            }
            _ => {}
        }
    }
    Some(out)
}
