//! The variables of one state, cheap to fork and cheap to compare with a
//! sibling: a persistent ordered map (`imbl`'s B-tree, whose nodes are shared
//! between the states forked from one another), with a fingerprint kept up to
//! date so equal states are found without comparing every variable.
//!
//! A 10,000-line script forks states at every branch, and past the cap of
//! paths each merge compares every state with the others. Copying every
//! variable at each fork made evaluation quadratic; a shared base with a small
//! map of changes made each comparison of two states whose bases had parted
//! walk both maps in full. Here a fork copies nothing, a write copies one path
//! of nodes, and a comparison skips every node the two states still share.

use imbl::shared_ptr::RcK;
use imbl::GenericOrdMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// A variable's name, shared between the states that hold it.
pub(crate) type Name = Rc<str>;

#[derive(Debug, Clone)]
pub(crate) struct Vars<V> {
    map: GenericOrdMap<Name, V, RcK>,
    /// XOR of the hashes of every (name, value): equal maps have equal fingerprints.
    fingerprint: u64,
}

fn entry_hash<V: Hash>(name: &str, value: &V) -> u64 {
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    value.hash(&mut h);
    h.finish()
}

impl<V: Clone + Hash + PartialEq> Vars<V> {
    pub(crate) fn new() -> Vars<V> {
        Vars { map: GenericOrdMap::new(), fingerprint: 0 }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        self.map.get(name)
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub(crate) fn insert(&mut self, name: impl Into<Name>, value: V) {
        let name = name.into();
        self.fingerprint ^= entry_hash(&name, &value);
        if let Some(old) = self.map.insert(name.clone(), value) {
            self.fingerprint ^= entry_hash(&name, &old);
        }
    }

    pub(crate) fn remove(&mut self, name: &str) {
        if let Some(old) = self.map.remove(name) {
            self.fingerprint ^= entry_hash(name, &old);
        }
    }

    /// Every variable, in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Name, &V)> {
        self.map.iter()
    }

    /// The names whose values differ between `self` and `other` (set in one
    /// only, or set to two values), in name order. Nodes the two maps share
    /// (states forked from one another) are skipped unread.
    pub(crate) fn differing_names<'a>(&'a self, other: &'a Self) -> impl Iterator<Item = &'a Name> + 'a {
        use imbl::ordmap::DiffItem;
        self.map.diff(&other.map).map(|item| match item {
            DiffItem::Add(name, _) | DiffItem::Remove(name, _) => name,
            DiffItem::Update { old: (name, _), .. } => name,
        })
    }

    /// [`Vars::differing_names`], collected.
    pub(crate) fn differing(&self, other: &Self) -> Vec<Name> {
        self.differing_names(other).cloned().collect()
    }

    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

impl<V: Clone + Hash + PartialEq> PartialEq for Vars<V> {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint && (self.map.ptr_eq(&other.map) || self.differing_names(other).next().is_none())
    }
}

impl<V: Clone + Hash + PartialEq> Eq for Vars<V> {}

impl<V: Clone + Hash + PartialEq, N: Into<Name>> FromIterator<(N, V)> for Vars<V> {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(items: I) -> Self {
        let mut vars = Vars::new();
        for (k, v) in items {
            vars.insert(k, v);
        }
        vars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: Vec<Name>) -> Vec<String> {
        v.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn equal_contents_are_equal_however_they_were_built() {
        let mut a: Vars<u32> = Vars::new();
        let mut b: Vars<u32> = Vars::new();
        for i in 0..200 {
            a.insert(format!("v{i}"), i);
        }
        for i in (0..200).rev() {
            b.insert(format!("v{i}"), i);
        }
        b.insert("extra", 1);
        assert_ne!(a, b);
        b.remove("extra");
        assert_eq!(a, b);
        let c = a.clone();
        a.insert("v3", 9);
        assert_ne!(a, c);
        assert_eq!(c.get("v3"), Some(&3));
        assert_eq!(a.iter().count(), 200);
        assert_eq!(names(a.differing(&c)), ["v3"]);
        assert!(b.differing(&c).is_empty());
        // Maps built apart (no node shared): names only one has, and changed
        // values, in name order, from either side.
        let mut d = b.clone();
        d.remove("v10");
        d.insert("zz", 1);
        d.insert("v5", 50);
        assert_eq!(names(d.differing(&c)), ["v10", "v5", "zz"]);
        assert_eq!(names(c.differing(&d)), ["v10", "v5", "zz"]);
        // Setting a variable back to the value it had makes the maps equal again.
        a.insert("v3", 3);
        assert_eq!(a, c);
        assert!(a.differing(&c).is_empty());
    }
}
