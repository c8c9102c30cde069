//! Which variables can reach an engine's command line or environment: the
//! ones a path-set merge must keep apart.
//!
//! Independent branches multiply paths (AMD's `env.sh` sets NIC and QoS
//! variables in a dozen `if`s; a models table sets a flag string per model).
//! Past [`MAX_STATES`] paths, states that agree on every variable that can
//! reach a launch are merged and only the others become unknown: bash runs one
//! path per job, and a value that is the same on each path the launch can see
//! stays known. The set is an over-approximation read from the text: the
//! engine's env vars, every name a launching command mentions, and, to a
//! fixed point, every name mentioned where those are assigned or in the
//! functions called there.

use super::super::vars::Name;
use super::facts::identifiers;
use super::{Interp, State, MAX_STATES};
use std::collections::{HashMap, HashSet};

/// The relevant names, computed for the files read so far.
#[derive(Default)]
pub(super) struct Relevant {
    files: usize,
    names: HashSet<String>,
    /// Paths were merged; and the variables reaching a launch given up.
    merged: bool,
    given_up: std::collections::BTreeSet<String>,
}

impl Interp<'_> {
    /// States beyond [`MAX_STATES`] grouped by what can reach a launch; each
    /// group becomes one state whose other differing variables are unknown.
    /// When that still leaves too many, the variable that reaches a launch
    /// with the most different values is given up too (said in a note), and
    /// so on. `None` when the paths differ in more than variables.
    pub(super) fn merge_irrelevant(&mut self, states: &[State]) -> Option<Vec<State>> {
        self.refresh_relevant();
        // Differences relative to one state: states forked from one another
        // share their variables' base, so only their changes are compared.
        let reference = &states[0];
        let diffs: Vec<Vec<Name>> = states.iter().map(|s| s.vars.differing(&reference.vars)).collect();
        // A file the script writes may be handed to a launch (`--config cfg.yml`).
        let relevant = |n: &str| self.relevant.names.contains(n) || super::written::is_written(n);
        let mut kept: HashSet<Name> = diffs.iter().flatten().filter(|n| relevant(n)).cloned().collect();
        let mut given_up: Vec<String> = Vec::new();
        // Flags are what the audit checks: a variable holding some is given up
        // last; among the others, the one with the most values first. The
        // states do not change while names are given up, so the order is
        // computed once (the last is given up first).
        let mut order: Vec<_> = kept
            .iter()
            .map(|n| {
                let held = || states.iter().filter_map(|s| s.vars.get(n));
                // A written file holds keys the audit checks, as a flag string does.
                let flags = super::written::is_written(n) || held().any(|v| holds_flags(&v.value));
                let values: HashSet<u64> = states.iter().map(|s| name_value_hash(n, s.vars.get(n))).collect();
                ((!flags, values.len(), std::cmp::Reverse(n.clone())), n.clone())
            })
            .collect();
        order.sort_unstable();
        loop {
            if let Some(groups) = group(states, &diffs, &kept) {
                // Said once, after the run, with every name given up (`given_up`).
                self.relevant.given_up.extend(given_up);
                self.relevant.merged = true;
                return Some(groups);
            }
            let (_, name) = order.pop()?;
            kept.remove(&name);
            given_up.push(name.to_string());
        }
    }

    /// The note on merged paths, once per script.
    pub(super) fn merged_paths_note(&mut self) {
        if !self.relevant.merged {
            return;
        }
        let mut message = format!(
            "more than {MAX_STATES} paths through the script: paths that agree on every variable that can reach a launch are merged, and the other variables that differ between them are taken as unknown"
        );
        if !self.relevant.given_up.is_empty() {
            const SHOWN: usize = 8;
            let names: Vec<String> = self.relevant.given_up.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
            let more = self.relevant.given_up.len().saturating_sub(SHOWN);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            message.push_str(&format!(
                "; where even those were too many, these were taken as unknown where paths differ: {}{more}",
                names.join(", ")
            ));
        }
        self.note(message, None);
    }

    fn refresh_relevant(&mut self) {
        if self.relevant.files == self.files.len() {
            return;
        }
        let launcher_vars = self.refresh_launcher_vars().clone();
        let text = self.text_facts();
        let mut work: Vec<String> = text.seeds.iter().cloned().chain(launcher_vars).collect();
        let engine_env = |n: &str| crate::profiles::servers().any(|(p, _)| p.owns_env(n));
        work.extend(text.assigned.keys().filter(|n| engine_env(n)).cloned());
        let mut names: HashSet<String> = HashSet::new();
        while let Some(name) = work.pop() {
            if !names.insert(name.clone()) {
                continue;
            }
            // A function named where a relevant value is built (`$(build_args)`)
            // is named itself: its body's names are relevant too.
            let texts = text.assigned.get(&name).into_iter().flatten().chain(text.bodies.get(&name));
            for t in texts {
                work.extend(identifiers(t).filter(|id| !names.contains(id)));
            }
        }
        names.insert("IFS".to_string());
        self.relevant.files = self.files.len();
        self.relevant.names = names;
    }
}

/// Whether a value holds a word that starts like a flag (`--tp 8`).
fn holds_flags(value: &super::Value) -> bool {
    let flag = |frag: &super::words::Frag| frag.unknown.is_none() && frag.text.split_whitespace().any(|w| w.starts_with('-'));
    match value {
        super::Value::Str(frags) => frags.iter().any(flag),
        super::Value::Array(fields) => fields.iter().flatten().any(flag),
    }
}

fn name_value_hash(name: &str, var: Option<&super::Var>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    var.hash(&mut h);
    h.finish()
}

/// The states grouped by the values of `kept` (and their flow), each group
/// widened into one; `None` past [`MAX_STATES`] groups.
fn group(states: &[State], diffs: &[Vec<Name>], kept: &HashSet<Name>) -> Option<Vec<State>> {
    let mut groups: Vec<State> = Vec::new();
    let mut by_key: HashMap<u64, Vec<usize>> = HashMap::new();
    for (s, diff) in states.iter().zip(diffs) {
        let key = diff.iter().filter(|n| kept.contains(*n)).fold(0u64, |acc, n| acc ^ name_value_hash(n, s.vars.get(n)));
        let found = by_key.get(&key).and_then(|candidates| {
            candidates.iter().copied().find(|&i| {
                let g = &groups[i];
                g.returned == s.returned
                    && g.frames.len() == s.frames.len()
                    && g.positional == s.positional
                    && g.out == s.out
                    && g.vars.differing_names(&s.vars).all(|n| !kept.contains(n))
            })
        });
        match found {
            Some(i) => super::widen(&mut groups[i], s),
            None if groups.len() == MAX_STATES => return None,
            None => {
                by_key.entry(key).or_default().push(groups.len());
                groups.push(s.clone());
            }
        }
    }
    Some(groups)
}
