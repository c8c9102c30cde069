//! Changes a registering function makes to the keyword dicts it is about to
//! pass to `add_argument` (vLLM: `kwargs["lora_modules"]["type"] = ...`,
//! `del kwargs["allowed_origins"]["nargs"]`, `kwargs["x"]["help"] += "..."`,
//! `kwargs["all2all_backend"]["choices"].remove(X)`): a local name and a chain
//! of subscripts, applied to the local's folded value.

use tree_sitter::Node;

use crate::extract::consts::{apply_mutation, Val};
use crate::extract::python::{named_children, PyFile};

/// `name[k1][k2]...` → (`name`, [`k1`, `k2`, ...] nodes), outermost key first.
pub(super) fn subscript_path<'t>(file: &PyFile, node: Node<'t>) -> Option<(String, Vec<Node<'t>>)> {
    let mut keys = Vec::new();
    let mut cur = node;
    while cur.kind() == "subscript" {
        let value = cur.child_by_field_name("value")?;
        let parts = named_children(cur);
        let [_, key] = parts.as_slice() else { return None };
        if key.kind() == "slice" {
            return None;
        }
        keys.push(*key);
        cur = value;
    }
    if cur.kind() != "identifier" || keys.is_empty() {
        return None;
    }
    keys.reverse();
    Some((file.text(cur).to_string(), keys))
}

/// The value at `keys` inside `v` (dict keys or list indexes).
pub(super) fn get(v: &Val, keys: &[Val]) -> Option<Val> {
    let Some((first, rest)) = keys.split_first() else { return Some(v.clone()) };
    get(slot_of(v, first)?, rest)
}

fn slot_of<'v>(v: &'v Val, key: &Val) -> Option<&'v Val> {
    match (v, key) {
        (Val::Dict(d), k) => d.iter().find(|(key, _)| key == k).map(|(_, v)| v),
        (Val::List(items), Val::Int(i)) => usize::try_from(*i).ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

fn slot_of_mut<'v>(v: &'v mut Val, key: &Val) -> Option<&'v mut Val> {
    match (v, key) {
        (Val::Dict(d), k) => d.iter_mut().find(|(key, _)| key == k).map(|(_, v)| v),
        (Val::List(items), Val::Int(i)) => usize::try_from(*i).ok().and_then(move |i| items.get_mut(i)),
        _ => None,
    }
}

/// The container `v[k1]...[kn-1]` and the last key, when the path leads there.
fn parent_of<'v, 'k>(v: &'v mut Val, keys: &'k [Val]) -> Option<(&'v mut Val, &'k Val)> {
    let (last, parents) = keys.split_last()?;
    let mut cur = v;
    for k in parents {
        cur = slot_of_mut(cur, k)?;
    }
    Some((cur, last))
}

/// `v[k1]...[kn] = new`; a missing last dict key is added. `false` when the
/// path does not lead into a dict or list.
pub(super) fn set(v: &mut Val, keys: &[Val], new: Val) -> bool {
    let Some((cur, last)) = parent_of(v, keys) else { return false };
    match cur {
        Val::Dict(d) => {
            match d.iter_mut().find(|(key, _)| key == last) {
                Some(slot) => slot.1 = new,
                None => d.push((last.clone(), new)),
            }
            true
        }
        Val::List(_) => match slot_of_mut(cur, last) {
            Some(slot) => {
                *slot = new;
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// `del v[k1]...[kn]`: `false` when the key is not there (Python raises).
pub(super) fn delete(v: &mut Val, keys: &[Val]) -> bool {
    let Some((cur, last)) = parent_of(v, keys) else { return false };
    match cur {
        Val::Dict(d) => match d.iter().position(|(key, _)| key == last) {
            Some(i) => {
                d.remove(i);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// `v[k1]...[kn].method(*args)` for a mutating list/set/dict method.
pub(super) fn mutate(v: &mut Val, keys: &[Val], method: &str, args: &[Val]) -> bool {
    let Some(target) = get(v, keys) else { return false };
    match apply_mutation(&target, method, args) {
        Some(updated) => set(v, keys, updated),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Val {
        Val::Str(x.into())
    }

    #[test]
    fn nested_dict_edits() {
        let mut kwargs = Val::Dict(vec![(s("x"), Val::Dict(vec![(s("nargs"), s("+")), (s("choices"), Val::List(vec![s("a"), s("b")]))]))]);
        assert!(set(&mut kwargs, &[s("x"), s("type")], Val::External("json.loads".into())));
        assert!(delete(&mut kwargs, &[s("x"), s("nargs")]));
        assert!(!delete(&mut kwargs, &[s("x"), s("nargs")]), "a second del raises");
        assert!(mutate(&mut kwargs, &[s("x"), s("choices")], "remove", &[s("a")]));
        assert_eq!(get(&kwargs, &[s("x"), s("choices")]), Some(Val::List(vec![s("b")])));
        assert_eq!(get(&kwargs, &[s("x"), s("type")]), Some(Val::External("json.loads".into())));
        assert!(!set(&mut kwargs, &[s("missing"), s("type")], Val::None), "no such field");
    }
}
