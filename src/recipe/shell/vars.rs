//! The variables of one state, cheap to fork: a shared base map and a small map
//! of changes, with a fingerprint kept up to date so equal states are found
//! without comparing every variable. A 10,000-line script forks states at every
//! branch; copying every variable at each fork made it quadratic.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// Changes kept before they are folded into a new base.
const MAX_DELTA: usize = 128;

#[derive(Debug, Clone)]
pub(crate) struct Vars<V> {
    base: Rc<BTreeMap<String, V>>,
    /// `None`: removed from the base.
    delta: BTreeMap<String, Option<V>>,
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
        Vars { base: Rc::new(BTreeMap::new()), delta: BTreeMap::new(), fingerprint: 0 }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        match self.delta.get(name) {
            Some(changed) => changed.as_ref(),
            None => self.base.get(name),
        }
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub(crate) fn insert(&mut self, name: String, value: V) {
        if let Some(old) = self.get(&name) {
            self.fingerprint ^= entry_hash(&name, old);
        }
        self.fingerprint ^= entry_hash(&name, &value);
        self.delta.insert(name, Some(value));
        self.compact();
    }

    pub(crate) fn remove(&mut self, name: &str) {
        if let Some(old) = self.get(name) {
            self.fingerprint ^= entry_hash(name, old);
            self.delta.insert(name.to_string(), None);
            self.compact();
        }
    }

    /// Every variable, in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        let base = self.base.iter().filter(|(k, _)| !self.delta.contains_key(*k));
        let changed = self.delta.iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, v)));
        let mut all: Vec<(&String, &V)> = base.chain(changed).collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all.into_iter()
    }

    /// The names whose values differ between `self` and `other`. Two states
    /// forked from one share their base: then only their changes are compared.
    pub(crate) fn differing(&self, other: &Self) -> Vec<String> {
        if Rc::ptr_eq(&self.base, &other.base) {
            let mut names: Vec<&String> = self.delta.keys().chain(other.delta.keys()).collect();
            names.sort();
            names.dedup();
            return names.into_iter().filter(|n| self.get(n) != other.get(n)).cloned().collect();
        }
        // Different bases (each state folded its changes into a base of its
        // own): one pass over both in name order. Looking each name up in both
        // maps was most of what merging paths cost on the AMD chain's scripts.
        let (a, b): (Vec<_>, Vec<_>) = (self.iter().collect(), other.iter().collect());
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        loop {
            match (a.get(i), b.get(j)) {
                (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                    Ordering::Less => {
                        out.push((*ka).clone());
                        i += 1;
                    }
                    Ordering::Greater => {
                        out.push((*kb).clone());
                        j += 1;
                    }
                    Ordering::Equal => {
                        if va != vb {
                            out.push((*ka).clone());
                        }
                        i += 1;
                        j += 1;
                    }
                },
                (Some((ka, _)), None) => {
                    out.push((*ka).clone());
                    i += 1;
                }
                (None, Some((kb, _))) => {
                    out.push((*kb).clone());
                    j += 1;
                }
                (None, None) => return out,
            }
        }
    }

    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn compact(&mut self) {
        if self.delta.len() <= MAX_DELTA {
            return;
        }
        let base = Rc::make_mut(&mut self.base);
        for (name, value) in std::mem::take(&mut self.delta) {
            match value {
                Some(v) => base.insert(name, v),
                None => base.remove(&name),
            };
        }
    }
}

impl<V: Clone + Hash + PartialEq> PartialEq for Vars<V> {
    fn eq(&self, other: &Self) -> bool {
        if self.fingerprint != other.fingerprint {
            return false;
        }
        if Rc::ptr_eq(&self.base, &other.base) && self.delta == other.delta {
            return true;
        }
        self.iter().eq(other.iter())
    }
}

impl<V: Clone + Hash + PartialEq> Eq for Vars<V> {}

impl<V: Clone + Hash + PartialEq> FromIterator<(String, V)> for Vars<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(items: I) -> Self {
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
        b.insert("extra".into(), 1);
        assert_ne!(a, b);
        b.remove("extra");
        assert_eq!(a, b);
        let c = a.clone();
        a.insert("v3".into(), 9);
        assert_ne!(a, c);
        assert_eq!(c.get("v3"), Some(&3));
        assert_eq!(a.iter().count(), 200);
        assert_eq!(a.differing(&c), ["v3"]);
        assert_eq!(b.differing(&c), Vec::<String>::new());
        // Maps with bases of their own: names only one has, and changed values,
        // in name order, from either side.
        let mut d = b.clone();
        d.remove("v10");
        d.insert("zz".into(), 1);
        d.insert("v5".into(), 50);
        assert!(!Rc::ptr_eq(&d.base, &c.base));
        assert_eq!(d.differing(&c), ["v10", "v5", "zz"]);
        assert_eq!(c.differing(&d), ["v10", "v5", "zz"]);
    }
}
