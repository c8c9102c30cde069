//! Path conditions: what a script's `if`/`case`/`&&` tests assumed on the way to
//! a command, and the short "when ..." phrase a finding shows for a flag that is
//! passed on some paths only.

use std::collections::BTreeSet;

/// One test a path went through.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Test {
    /// `$VAR` equals one of `values` (`[[ $X == a ]]`, `case $X in a|b)`).
    Is { var: String, values: Vec<String> },
    /// Any other test, as written (`[[ $CONC -ge 64 ]]`).
    Text(String),
}

/// A test and whether the path took its true side.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Atom {
    pub test: Test,
    pub holds: bool,
}

/// The tests one path took (all of them hold on it).
pub(crate) type Path = BTreeSet<Atom>;

impl Atom {
    pub(crate) fn render(&self) -> String {
        match (&self.test, self.holds) {
            (Test::Is { var, values }, true) => format!("{var}={}", values.join("|")),
            (Test::Is { var, values }, false) if values.len() == 1 => format!("{var}!={}", values[0]),
            (Test::Is { var, values }, false) => format!("{var} not {}", values.join("|")),
            (Test::Text(t), true) => t.clone(),
            (Test::Text(t), false) => format!("not {t}"),
        }
    }

    pub(crate) fn negated(&self) -> Atom {
        Atom { test: self.test.clone(), holds: !self.holds }
    }

    /// Whether this atom cannot hold together with `other`.
    fn contradicts(&self, other: &Atom) -> bool {
        if self.test == other.test {
            return self.holds != other.holds;
        }
        match (&self.test, &other.test) {
            (Test::Is { var: a, values: va }, Test::Is { var: b, values: vb }) if a == b => match (self.holds, other.holds) {
                (true, true) => va.iter().all(|v| !vb.contains(v)),
                (true, false) => va.iter().all(|v| vb.contains(v)),
                (false, true) => vb.iter().all(|v| va.contains(v)),
                (false, false) => false,
            },
            _ => false,
        }
    }
}

/// Whether `atom` is decided on `path`: `Some(true)` when the path implies it,
/// `Some(false)` when the path contradicts it, `None` when both are possible.
pub(crate) fn decided(path: &Path, atom: &Atom) -> Option<bool> {
    if path.contains(atom) {
        return Some(true);
    }
    if path.iter().any(|p| p.contradicts(atom)) {
        return Some(false);
    }
    // `X=a` on the path decides `X == b` either way.
    if let Test::Is { var, values } = &atom.test {
        let known = path.iter().find_map(|p| match (&p.test, p.holds) {
            (Test::Is { var: v, values: vs }, true) if v == var && vs.len() == 1 => Some(&vs[0]),
            _ => None,
        });
        if let Some(value) = known {
            return Some(values.contains(value) == atom.holds);
        }
    }
    None
}

/// The condition under which something seen on the paths `present` (and not on
/// `absent`) happens: `None` when it happens on every path. The shortest
/// conjunction of tests shared by the `present` paths that rules out every
/// `absent` one; else the paths themselves, joined by "or".
pub(crate) fn describe(present: &[&Path], absent: &[&Path]) -> Option<String> {
    // A path joined from others (beyond the cap on paths) assumes nothing: it
    // cannot be told apart, so no condition is claimed.
    if absent.is_empty() || present.is_empty() || present.iter().any(|p| p.is_empty()) {
        return None;
    }
    let common: Vec<&Atom> = present[0].iter().filter(|a| present.iter().all(|p| p.contains(*a))).collect();
    let excludes = |chosen: &[&Atom]| absent.iter().all(|q| chosen.iter().any(|a| q.iter().any(|b| a.contradicts(b))));
    for a in &common {
        if excludes(&[*a]) {
            return Some(a.render());
        }
    }
    for (i, a) in common.iter().enumerate() {
        for b in &common[i + 1..] {
            if excludes(&[*a, *b]) {
                return Some(format!("{} and {}", a.render(), b.render()));
            }
        }
    }
    if !common.is_empty() && excludes(&common) {
        return Some(common.iter().map(|a| a.render()).collect::<Vec<_>>().join(" and "));
    }
    const SHOWN: usize = 4;
    let mut alternatives: Vec<String> = present.iter().map(|p| render_path(p)).collect();
    alternatives.sort();
    alternatives.dedup();
    // Long disjunctions help nobody: past a line, say how many paths.
    const LONGEST: usize = 160;
    let more = alternatives.len().saturating_sub(SHOWN);
    alternatives.truncate(SHOWN);
    let mut text = alternatives.iter().map(|a| format!("({a})")).collect::<Vec<_>>().join(" or ");
    if more > 0 {
        text.push_str(&format!(" or {more} more paths"));
    }
    if text.len() > LONGEST {
        text = format!("on {} of {} paths through the script", present.len(), present.len() + absent.len());
    }
    Some(text)
}

/// A whole path, for `show`: its tests joined by "and" ("always" when none).
pub(crate) fn render_path(path: &Path) -> String {
    if path.is_empty() {
        return "always".into();
    }
    path.iter().map(Atom::render).collect::<Vec<_>>().join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is(var: &str, v: &str, holds: bool) -> Atom {
        Atom { test: Test::Is { var: var.into(), values: vec![v.into()] }, holds }
    }

    #[test]
    fn the_shortest_distinguishing_test_is_named() {
        let p = |atoms: &[Atom]| atoms.iter().cloned().collect::<Path>();
        let (dp, eval) = (is("DP_ATTENTION", "true", true), is("EVAL_ONLY", "true", true));
        let paths =
            [p(&[dp.clone(), eval.clone()]), p(&[dp.clone(), eval.negated()]), p(&[dp.negated(), eval.clone()]), p(&[dp.negated()])];
        let present = [&paths[0], &paths[1]];
        let absent = [&paths[2], &paths[3]];
        assert_eq!(describe(&present, &absent).as_deref(), Some("DP_ATTENTION=true"));
        assert_eq!(describe(&[&paths[0]], &[&paths[1], &paths[2], &paths[3]]).as_deref(), Some("DP_ATTENTION=true and EVAL_ONLY=true"));
        assert_eq!(describe(&present, &[]), None);
        // Values of one variable decide each other.
        assert_eq!(decided(&p(&[is("TP", "8", true)]), &is("TP", "4", true)), Some(false));
        assert_eq!(decided(&p(&[is("TP", "8", true)]), &is("TP", "8", false)), Some(false));
        assert_eq!(decided(&p(&[is("TP", "8", false)]), &is("TP", "4", true)), None);
    }
}
