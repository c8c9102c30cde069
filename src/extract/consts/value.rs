//! The values constant folding can know: Python literals plus references to
//! engine classes, functions and modules (so attribute access can go on).

use crate::surface::PyValue;

/// Result of folding one expression: a value, or the source text of what could
/// not be known statically (becomes `Known::dynamic(text)`).
pub type Folded = Result<Val, String>;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassRef {
    /// Dotted module defining the class.
    pub module: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Val>),
    Tuple(Vec<Val>),
    /// Kept in insertion order, deduplicated; Python iteration order is not
    /// defined, so consumers treat it as unordered.
    Set(Vec<Val>),
    Dict(Vec<(Val, Val)>),
    /// A class defined in the engine.
    Class(ClassRef),
    /// A top-level function of the engine (`module`, `name`).
    Function(String, String),
    /// An engine module (from `import x` or `from pkg import submodule`).
    Module(String),
    /// A member of an engine `Enum` class.
    EnumMember {
        class: ClassRef,
        name: String,
        value: Box<Folded>,
    },
    /// One field of an engine dataclass or msgspec struct, as
    /// `dataclasses.fields(C)` / `msgspec.structs.fields(C)` yield it: its
    /// `name`, and its `default` (the class attribute).
    Field {
        class: ClassRef,
        name: String,
    },
    /// A name from outside the engine (`argparse.BooleanOptionalAction`, `int`, `json.loads`).
    External(String),
    /// A bound list/set/dict method kept in a name (`add_x = X.extend`): target
    /// global (`module`, `name`) and method.
    BoundMutator {
        module: String,
        name: String,
        method: String,
    },
    /// A value that exists but is no literal (a dict value that is a lambda, say).
    /// Only ever inside a container whose other parts are still useful.
    Opaque(String),
    /// A `typing.Literal[...]` type: its values in order, nested `Literal`s
    /// flattened (what `typing.get_args` returns).
    LiteralType(Vec<Val>),
    /// The engine's current platform object: an instance of one of these
    /// classes, depending on the machine ([`super::platform`]).
    CurrentPlatform(Vec<ClassRef>),
}

impl Val {
    /// Python truthiness, when known.
    pub(crate) fn truthy(&self) -> Option<bool> {
        Some(match self {
            Val::None => false,
            Val::Bool(b) => *b,
            Val::Int(i) => *i != 0,
            Val::Float(f) => *f != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::List(v) | Val::Tuple(v) | Val::Set(v) => !v.is_empty(),
            Val::Dict(d) => !d.is_empty(),
            Val::Class(_)
            | Val::Function(..)
            | Val::Module(_)
            | Val::EnumMember { .. }
            | Val::Field { .. }
            | Val::LiteralType(_)
            | Val::CurrentPlatform(_) => true,
            Val::External(_) | Val::BoundMutator { .. } | Val::Opaque(_) => return None,
        })
    }

    /// The items iterating over this value yields (`for x in v`, `list(v)`).
    pub(crate) fn iter_items(&self) -> Option<Vec<Val>> {
        match self {
            Val::List(v) | Val::Tuple(v) | Val::Set(v) => Some(v.clone()),
            Val::Dict(d) => Some(d.iter().map(|(k, _)| k.clone()).collect()),
            Val::Str(s) => Some(s.chars().map(|c| Val::Str(c.to_string())).collect()),
            _ => None,
        }
    }

    /// Plain JSON for the surface model; `None` when some part is not a literal.
    /// Sets are sorted by their repr so the output is deterministic.
    pub(crate) fn to_json(&self) -> Option<PyValue> {
        use serde_json::Value as J;
        Some(match self {
            Val::None => J::Null,
            Val::Bool(b) => J::Bool(*b),
            Val::Int(i) => J::from(*i),
            Val::Float(f) => J::Number(serde_json::Number::from_f64(*f)?),
            Val::Str(s) => J::String(s.clone()),
            Val::List(v) | Val::Tuple(v) => J::Array(v.iter().map(Val::to_json).collect::<Option<_>>()?),
            Val::Set(v) => {
                let mut items: Vec<Val> = v.clone();
                items.sort_by_key(|a| a.repr());
                J::Array(items.iter().map(Val::to_json).collect::<Option<_>>()?)
            }
            Val::Dict(d) => {
                let mut map = serde_json::Map::new();
                for (k, v) in d {
                    let Val::Str(k) = k else { return None };
                    map.insert(k.clone(), v.to_json()?);
                }
                J::Object(map)
            }
            Val::EnumMember { .. }
            | Val::Field { .. }
            | Val::Class(_)
            | Val::Function(..)
            | Val::Module(_)
            | Val::External(_)
            | Val::BoundMutator { .. }
            | Val::Opaque(_)
            | Val::LiteralType(_)
            | Val::CurrentPlatform(_) => return None,
        })
    }

    /// Python `repr()` of literal values (what argparse prints in its messages).
    pub(crate) fn repr(&self) -> String {
        match self {
            Val::None => "None".into(),
            Val::Bool(true) => "True".into(),
            Val::Bool(false) => "False".into(),
            Val::Int(i) => i.to_string(),
            Val::Float(f) => py_float_repr(*f),
            Val::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Val::List(v) => format!("[{}]", join_repr(v)),
            Val::Tuple(v) if v.len() == 1 => format!("({},)", v[0].repr()),
            Val::Tuple(v) => format!("({})", join_repr(v)),
            Val::Set(v) => format!("{{{}}}", join_repr(v)),
            Val::Dict(d) => format!("{{{}}}", d.iter().map(|(k, v)| format!("{}: {}", k.repr(), v.repr())).collect::<Vec<_>>().join(", ")),
            Val::EnumMember { class, name, .. } => format!("{}.{}", class.name, name),
            Val::Class(c) => c.name.clone(),
            Val::Field { class, name } => format!("<field {}.{name}>", class.name),
            Val::Function(_, n) => n.clone(),
            Val::Module(m) => m.clone(),
            Val::External(e) => e.clone(),
            Val::BoundMutator { name, method, .. } => format!("{name}.{method}"),
            Val::Opaque(t) => t.clone(),
            Val::LiteralType(v) => format!("Literal[{}]", join_repr(v)),
            Val::CurrentPlatform(_) => "current_platform".into(),
        }
    }
}

fn join_repr(v: &[Val]) -> String {
    v.iter().map(Val::repr).collect::<Vec<_>>().join(", ")
}

/// Python prints floats with the shortest round-tripping form, always with a
/// `.` or exponent (`1.0`, `0.1`, `1e-05`).
pub fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{f:?}");
    // Rust's `{:?}` gives `1e-5`; Python gives `1e-05`.
    if let Some((mantissa, exp)) = s.split_once('e') {
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("+", exp),
        };
        return format!("{mantissa}e{sign}{digits:0>2}").replace(".0e", "e");
    }
    s
}

/// Add a value to a set-like vector unless already present.
pub(super) fn set_insert(items: &mut Vec<Val>, v: Val) {
    if !items.contains(&v) {
        items.push(v);
    }
}

/// Apply a mutating list/set/dict method call (`x.extend(y)`) to a value.
/// `None` when the method or the operands are not understood.
pub fn apply_mutation(target: &Val, method: &str, args: &[Val]) -> Option<Val> {
    let mut out = target.clone();
    match (&mut out, method, args) {
        (Val::List(v), "extend", [it]) | (Val::List(v), "__iadd__", [it]) => v.extend(it.iter_items()?),
        (Val::List(v), "append", [x]) => v.push(x.clone()),
        (Val::List(v), "insert", [Val::Int(i), x]) => {
            let len = v.len() as i64;
            let at = if *i < 0 { (len + i).max(0) } else { (*i).min(len) };
            v.insert(at as usize, x.clone());
        }
        (Val::List(v), "remove", [x]) | (Val::Set(v), "remove", [x]) | (Val::Set(v), "discard", [x]) => {
            let pos = v.iter().position(|e| e == x);
            match (pos, method) {
                (Some(p), _) => {
                    v.remove(p);
                }
                (None, "discard") => {}
                (None, _) => return None,
            }
        }
        (Val::Set(v), "add", [x]) => set_insert(v, x.clone()),
        (Val::Set(v), "update", [it]) | (Val::Set(v), "__ior__", [it]) => {
            for x in it.iter_items()? {
                set_insert(v, x);
            }
        }
        (Val::Dict(d), "update", [Val::Dict(other)]) | (Val::Dict(d), "__ior__", [Val::Dict(other)]) => {
            for (k, val) in other {
                match d.iter_mut().find(|(key, _)| key == k) {
                    Some(slot) => slot.1 = val.clone(),
                    None => d.push((k.clone(), val.clone())),
                }
            }
        }
        (Val::List(v) | Val::Set(v), "clear", []) => v.clear(),
        (Val::Dict(d), "clear", []) => d.clear(),
        _ => return None,
    }
    Some(out)
}

/// Whether a method name mutates its receiver in place (so a call to it at
/// module level changes a constant).
pub fn is_mutating_method(method: &str) -> bool {
    matches!(method, "extend" | "append" | "insert" | "remove" | "add" | "update" | "discard" | "clear" | "pop" | "setdefault")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        assert_eq!(py_float_repr(1.0), "1.0");
        assert_eq!(py_float_repr(0.1), "0.1");
        assert_eq!(py_float_repr(1e-5), "1e-05");
        assert_eq!(py_float_repr(2.5e10), "25000000000.0");
    }

    #[test]
    fn mutations_extend_lists_and_sets() {
        let l = Val::List(vec![Val::Str("a".into())]);
        let ext = apply_mutation(&l, "extend", &[Val::Tuple(vec![Val::Str("b".into())])]).unwrap();
        assert_eq!(ext, Val::List(vec![Val::Str("a".into()), Val::Str("b".into())]));
        let s = Val::Set(vec![Val::Str("a".into())]);
        let added = apply_mutation(&s, "add", &[Val::Str("a".into())]).unwrap();
        assert_eq!(added, s, "adding a present member changes nothing");
        assert!(apply_mutation(&l, "sort", &[]).is_none(), "unknown methods are not guessed");
    }

    #[test]
    fn sets_serialise_sorted_and_opaque_parts_are_unknown() {
        let s = Val::Set(vec![Val::Str("b".into()), Val::Str("a".into())]);
        assert_eq!(s.to_json(), Some(serde_json::json!(["a", "b"])));
        assert_eq!(Val::List(vec![Val::Opaque("f".into())]).to_json(), None);
    }
}
