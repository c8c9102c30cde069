//! Recipe flags against the target engine's parser: EA001–EA006, EA008, EA009
//! (a flag that is only argparse's abbreviation of an option), and the changed
//! defaults of flags a recipe leaves unset (EA007).

use super::values::{arity, json_error, known_choices, render_choices, type_error, value_matches_choice};
use super::worker_flags::{worker_accepts, WorkerParse, WorkerVerdict};
use super::Bump;
use crate::finding::{EvidenceRef, Finding, FindingKind, Fix, FixAction, Location, PastFlag, SemanticChange, ValueProblem};
use crate::recipe::{Deployment, EditIntent, FlagUse, FlagValue, RecipeFile};
use crate::surface::{Flag, FlagDeprecationKind, Known, Prefixed, Rewritten};
use std::collections::BTreeSet;

/// The option string a recipe key stands for (`cuda-graph-max-bs` → `--cuda-graph-max-bs`).
pub(crate) fn option_of(name: &str) -> String {
    if name.starts_with('-') {
        name.to_string()
    } else {
        format!("--{name}")
    }
}

/// The option a recipe key stands for once the target's parser rewrote it
/// (`max_num_seqs` → `--max-num-seqs`, `compilation-config.mode` →
/// `--compilation-config`, `-O3` → `--optimization-level`).
pub(crate) fn rewritten(bump: &Bump, name: &str) -> Rewritten {
    bump.to.parser.rewrites.rewrite(&option_of(name))
}

/// Whether the engine treats the option as taking no value: the target's view,
/// else the current release's (an unknown flag is assumed to take one). A word
/// that carries its value (`-O3`) takes none after it.
fn is_switch(bump: &Bump, name: &str) -> bool {
    let rw = rewritten(bump, name);
    if rw.inline_value.is_some() {
        return true;
    }
    let option = rw.option;
    bump.to.resolve_flag(&option).or_else(|| bump.from.and_then(|f| f.resolve_flag(&option))).is_some_and(Flag::is_switch)
}

/// `worker`: the parser of the consumer's worker the flags go to, when it was
/// read (see [`super::worker_flags`]).
pub(crate) fn check_deployment(file: &RecipeFile, dep: &Deployment, bump: Bump, worker: Option<WorkerParse>, out: &mut Vec<Finding>) {
    if bump.to.flags.is_empty() {
        // Extraction found no parser at the target: nothing can be said about flags.
        return;
    }
    for role in &dep.roles {
        let binding = role.bound(|name| is_switch(&bump, name));
        out.extend(super::unreadable::unread_words(dep, &role.role, &binding.unbound));
        let uses = binding.flags;
        let taken = uses.iter().filter(|u| passed(&u.value)).map(|u| rewritten(&bump, &u.name).option).collect();
        let site = Site { file, taken, target: bump.to, worker: dep.worker.as_ref(), worker_parse: worker };
        // The words of a command line bind first; the recipe's structured flags follow.
        let words = uses.len() - role.flags.len();
        for (i, use_) in uses.into_iter().enumerate() {
            let mut found = Vec::new();
            match dep.worker.as_ref().filter(|_| i < words && super::worker::unlinked(dep.worker.as_ref(), bump)) {
                Some(worker) => found.push(super::worker::unlinked_word(worker, &use_, bump)),
                None => check_use(&site, &use_, bump, &mut found),
            }
            found.extend(semantics_changed(&use_, bump));
            out.extend(
                found.into_iter().map(|f| {
                    f.role(Some(&role.role)).deployment(&dep.name).variant(dep.variant.as_deref()).condition(use_.condition.clone())
                }),
            );
        }
    }
}

/// The option strings a deployment passes that the target's parser does not
/// take (unknown, or an ambiguous prefix): what the release history is asked about.
pub(crate) fn unknown_options(dep: &Deployment, bump: Bump) -> BTreeSet<String> {
    if bump.to.flags.is_empty() {
        return BTreeSet::new();
    }
    dep.roles
        .iter()
        .flat_map(|r| r.flag_uses(|name| is_switch(&bump, name)))
        .filter(|u| passed(&u.value))
        .map(|u| rewritten(&bump, &u.name).option)
        .filter(|o| bump.to.resolve_flag(o).is_none())
        .collect()
}

/// Uses whose value is known at run time only (`$X`, or shell expansion text a
/// reader passed on unexpanded), of flags the target parses as JSON: whether
/// the value parses is not known, and is said so.
/// As (the use, the target's option).
pub(crate) fn unchecked_json(dep: &Deployment, bump: Bump) -> Vec<(FlagUse, String)> {
    dep.roles
        .iter()
        .flat_map(|r| r.flag_uses(|name| is_switch(&bump, name)))
        .filter(|u| match &u.value {
            FlagValue::Dynamic { .. } => true,
            FlagValue::Scalar { text, .. } => super::values::holds_expansion(text),
            _ => false,
        })
        .filter_map(|u| {
            let flag = bump.to.resolve_flag(&rewritten(&bump, &u.name).option)?;
            super::values::parses_json(flag).then(|| (u.clone(), flag.canonical().to_string()))
        })
        .collect()
}

fn passed(value: &FlagValue) -> bool {
    !matches!(value, FlagValue::Switch { on: false } | FlagValue::Null)
}

fn check_use(site: &Site, u: &FlagUse, bump: Bump, out: &mut Vec<Finding>) {
    if !passed(&u.value) {
        return;
    }
    let rw = rewritten(&bump, &u.name);
    let written = rw.option.clone();
    let at = Location::from_span(&u.key_span);
    let to_ref = bump.target_ref();
    // A worker that parses the flags itself: its own options are taken before
    // the engine's parser runs, and a serve-only one is refused at start.
    let verdict = site.worker_parse.map(|w| worker_accepts(bump.to, w.flags, &written));
    match (&verdict, site.worker_parse) {
        (Some(WorkerVerdict::Worker(_)), _) => return,
        (Some(WorkerVerdict::Rejected(flag)), Some(parse)) => return out.push(super::worker::refused(parse, flag, u, &written, bump)),
        _ => {}
    }
    // The worker's parser was read: what neither it nor the engine's takes is unknown.
    let worker_read = matches!(verdict, Some(WorkerVerdict::NotAnEngineFlag)) && site.worker_parse.is_some_and(|w| w.flags.complete());
    // An option string the parser does not register is an abbreviation (EA009,
    // then judged as the option it stands for) or unknown (EA001), unless the
    // worker that gets it may take it itself.
    let (flag, option) = match bump.to.flag(&written) {
        Some(flag) => (flag, written),
        None if !worker_read && super::worker::may_be_its_own(site.worker, &written, bump) => {
            return out.extend(super::worker::unread(site.worker, u, &written, None));
        }
        None => match unregistered(site, u, &written, bump) {
            Unregistered::Abbreviation { flag, full, finding } => {
                out.push(finding);
                (flag, full.to_string())
            }
            Unregistered::Refused(finding) => return out.push(finding),
        },
    };
    if let Some(f) = super::worker::engine_only_refuses(site.worker, flag, u, &option, bump) {
        return out.push(f);
    }
    let ev = EvidenceRef::new(&flag.evidence, to_ref);
    // `--config FILE`: the flags in the file are the parser's too, and not read.
    if bump.to.parser.rewrites.config_file.as_deref() == Some(option.as_str()) {
        out.push(super::worker::config_file_unread(u, &option));
    }
    // `--a.b v` sets a piece of `--a`'s JSON value; `-O3` carries its value.
    let value_use;
    let u = match (&rw.dotted_key, &rw.inline_value) {
        (Some(_), _) => &FlagUse { value: FlagValue::Dynamic { text: "a piece of a JSON value".into() }, ..u.clone() },
        (None, Some(value)) => {
            value_use = FlagUse {
                value: FlagValue::Scalar { text: value.clone(), quoted: false, ty: crate::recipe::yaml::ScalarType::Str },
                ..u.clone()
            };
            &value_use
        }
        (None, None) => u,
    };
    if let Some(dep) = &flag.deprecated {
        let (target, upstream) = (to_ref.to_string(), dep.message.clone());
        out.push(match dep.kind {
            // An announced deprecation still takes effect: its value is checked as any
            // other. One that names its successor (vLLM's "--log-config-file is
            // deprecated ... Use --logging-config.pylogging_config_file instead.") is an
            // alias the release still honours, and renaming is the fix.
            FlagDeprecationKind::Announced => {
                if let Some(replacement) = &dep.replacement {
                    let kind = FindingKind::DeprecatedAlias { option: option.clone(), replacement: replacement.clone(), target };
                    out.push(
                        Finding::new(kind, at, &u.name)
                            .evidence(ev.clone().with_note(format!("{option} deprecated: the release names {replacement} instead")))
                            .fix(Some(successor_fix(site, u, replacement, bump))),
                    );
                }
                return out.extend(check_value(u, flag, bump).map(|f| f.evidence(ev)));
            }
            FlagDeprecationKind::Removed => {
                Finding::new(FindingKind::RemovedFlag { option: option.clone(), target, upstream }, at, &u.name)
                    .evidence(ev.with_note(format!("{option} registered with an erroring action")))
                    .fix(Some(Fix::advice(FixAction::Remove { name: u.name.clone(), use_instead: dep.replacement.clone() })))
            }
            FlagDeprecationKind::Alias => {
                let replacement = dep.replacement.clone().unwrap_or_else(|| flag.dest.replace('_', "-"));
                Finding::new(FindingKind::DeprecatedAlias { option: option.clone(), replacement: replacement.clone(), target }, at, &u.name)
                    .evidence(ev.with_note(format!("{option} forwards to {replacement}")))
                    .fix(Some(rename_fix(site, u, &replacement)))
            }
            FlagDeprecationKind::Noop => {
                Finding::new(FindingKind::DeprecatedNoop { option: option.clone(), target, upstream }, at, &u.name)
                    .evidence(ev.with_note(format!("{option} registered with a warning-only action")))
                    .fix(Some(remove_fix(site, u)))
            }
        });
        return;
    }
    out.extend(check_value(u, flag, bump).map(|f| f.evidence(ev)));
}

/// What argparse makes of an option string no option registers.
enum Unregistered<'a> {
    /// The option it stands for, and EA009.
    Abbreviation { flag: &'a Flag, full: &'a str, finding: Finding },
    /// EA001.
    Refused(Finding),
}

/// What argparse makes of an option string no option registers: the option
/// it is the one prefix of, with EA009 (when the parser takes abbreviations,
/// or when that could not be read); else EA001, saying "ambiguous" when
/// argparse would.
fn unregistered<'a>(site: &Site, u: &FlagUse, option: &str, bump: Bump<'a>) -> Unregistered<'a> {
    let setting = &bump.to.parser.allow_abbrev;
    let (flag, full) = match (bump.to.prefixed(option), setting) {
        (Prefixed::Unique { flag, full }, Known::Value(true) | Known::Dynamic { .. }) => (flag, full),
        (Prefixed::Ambiguous(candidates), Known::Value(true)) => {
            return Unregistered::Refused(unknown_flag(site, u, option, bump, candidates))
        }
        // Unknown, or ambiguous: either way the parser exits.
        _ => return Unregistered::Refused(unknown_flag(site, u, option, bump, Vec::new())),
    };
    let unread = match setting {
        Known::Dynamic { dynamic } => Some(dynamic.clone()),
        Known::Value(_) => None,
    };
    let kind =
        FindingKind::AbbreviatedFlag { option: option.to_string(), full: full.to_string(), target: bump.target_ref().to_string(), unread };
    let mut finding = Finding::new(kind, Location::from_span(&u.key_span), &u.name);
    if let Some(built) = &bump.to.parser.evidence {
        finding = finding.evidence(EvidenceRef::new(built, bump.target_ref()).with_note("the parser, built without allow_abbrev=False"));
    }
    finding = finding.evidence(EvidenceRef::new(&flag.evidence, bump.target_ref()).with_note(format!("{full} registered here")));
    // A deprecated option's own finding renames the same key: one edit, not two.
    let fix = match flag.deprecated {
        None => rename_fix(site, u, full),
        Some(_) => Fix::advice(FixAction::Replace { old: u.name.clone(), new: full.trim_start_matches("--").to_string() }),
    };
    Unregistered::Abbreviation { flag, full, finding: finding.fix(Some(fix)) }
}

fn unknown_flag(site: &Site, u: &FlagUse, option: &str, bump: Bump, ambiguous: Vec<&str>) -> Finding {
    let to_ref = bump.target_ref();
    let before = bump.from.and_then(|f| f.flag(option));
    let history = bump.history.and_then(|h| h.flag(option, to_ref));
    let names: Vec<&str> = bump.to.flags.iter().flat_map(|f| f.names.iter().map(String::as_str)).collect();
    // A name with a history is no typo; argparse's ambiguity message names the
    // candidates itself. Only the rest get a guess.
    // The same option with the other word separator (`--kv-cache-dtype` where
    // the parser registers only `--kv_cache_dtype`): no guess, the rename.
    let respelled = ambiguous.is_empty().then(|| other_separator(option, &names)).flatten();
    let suggestion = match respelled {
        Some(name) => Some(name.to_string()),
        None => (ambiguous.is_empty() && history.is_none()).then(|| similar_names(option, &names).first().map(|c| c.to_string())).flatten(),
    };
    let fix = match history.as_ref().map(|p| p.was.clone()) {
        // What the alias era's fix was: the declared replacement.
        Some(PastFlag::Alias { replacement: Some(replacement) }) => Some(successor_fix(site, u, &replacement, bump)),
        Some(PastFlag::Noop | PastFlag::Erroring) => Some(remove_fix(site, u)),
        _ if respelled.is_some() => respelled.map(|name| rename_fix(site, u, name)),
        Some(PastFlag::Alias { replacement: None } | PastFlag::Option | PastFlag::Announced) | None => {
            suggestion.clone().map(|name| Fix::advice(FixAction::DidYouMean { name }))
        }
    };
    let kind = FindingKind::UnknownFlag {
        option: option.to_string(),
        target: to_ref.to_string(),
        was_at: bump.current_ref().filter(|_| before.is_some()).map(str::to_string),
        suggestion,
        ambiguous: ambiguous.into_iter().map(str::to_string).collect(),
        history,
        worker: None,
    };
    let mut finding = Finding::new(kind, Location::from_span(&u.key_span), &u.name);
    let last = bump.history.and_then(|h| h.last_flag(option));
    if let Some((flag, at)) = last.or(before.zip(bump.current_ref())) {
        finding = finding.evidence(EvidenceRef::new(&flag.evidence, at).with_note(format!("{option} registered here")));
    }
    finding.fix(fix)
}

/// The long option among `names` that is `option` with `-` and `_` swapped
/// between words (argparse compares option strings exactly).
fn other_separator<'n>(option: &str, names: &[&'n str]) -> Option<&'n str> {
    let stem = option.strip_prefix("--")?;
    let key = stem.replace('_', "-");
    names.iter().copied().find(|n| n.strip_prefix("--").is_some_and(|s| s != stem && s.replace('_', "-") == key))
}

/// Whether a declared replacement (`--new`, `--new=value`) is an option of the target.
/// Moving a use to the successor an engine names: the rename where the target
/// accepts the successor, else advice (a rename would write a refused flag).
fn successor_fix(site: &Site, u: &FlagUse, replacement: &str, bump: Bump) -> Fix {
    match accepted_at_target(replacement, bump) {
        true => rename_fix(site, u, replacement),
        false => Fix::advice(FixAction::Replace { old: u.name.clone(), new: replacement.trim_start_matches("--").to_string() }),
    }
}

fn accepted_at_target(replacement: &str, bump: Bump) -> bool {
    let name = replacement.split_once('=').map_or(replacement, |(n, _)| n);
    // `--opt.key`: a piece of `--opt`'s value, where the parser gathers dotted keys.
    let name = match name.split_once('.') {
        Some((option, _)) if bump.to.parser.rewrites.dotted_keys => option,
        _ => name,
    };
    bump.to.flag(name).is_some_and(|f| f.deprecated.is_none())
}

fn similar_names<'a>(option: &str, names: &[&'a str]) -> Vec<&'a str> {
    crate::spelling::closest(option, names.iter().copied(), 0.8, 3)
}

/// EA005 / EA006: the value against choices, type and arity.
fn check_value(u: &FlagUse, flag: &Flag, bump: Bump) -> Option<Finding> {
    let option = flag.canonical();
    let to_ref = bump.target_ref();
    let at = Location::from_span(&u.value_span);
    let invalid = |problem| {
        Finding::new(FindingKind::InvalidValue { option: option.to_string(), target: to_ref.to_string(), problem }, at.clone(), &u.name)
    };
    let values: Vec<&str> = match &u.value {
        FlagValue::Switch { .. } => Vec::new(),
        FlagValue::Scalar { text, .. } => vec![text.as_str()],
        FlagValue::List { items } => items.iter().map(|i| i.value.as_str()).collect(),
        FlagValue::Dynamic { .. } | FlagValue::Null => return None,
        FlagValue::Invalid { reason } => {
            return Some(invalid(ValueProblem::Unusable { reason: reason.clone() }));
        }
    };
    let (min, max) = arity(flag);
    if values.len() < min || max.is_some_and(|m| values.len() > m) {
        return Some(invalid(ValueProblem::Arity { min, max, passed: values.len() }));
    }
    if let Some(choices) = known_choices(flag) {
        // A value the parser accepts only with an env var set is not judged:
        // where the recipe's environment sets it, it is valid.
        let env_choices: Vec<&serde_json::Value> = flag.choices_when_env.values().flatten().collect();
        let accepted = |v: &str| choices.iter().chain(env_choices.iter().copied()).any(|c| value_matches_choice(v, c));
        if let Some(bad) = values.iter().find(|v| !accepted(v)) {
            let kind = FindingKind::InvalidChoice {
                option: option.to_string(),
                value: bad.to_string(),
                target: to_ref.to_string(),
                choices: render_choices(choices),
            };
            return Some(Finding::new(kind, at, &u.name));
        }
    }
    let expects = flag.type_name.clone().unwrap_or_else(|| "a value".into());
    if let Some((value, error)) = values.iter().find_map(|v| Some((v, json_error(flag, v)?))) {
        return Some(invalid(ValueProblem::NotJson { value: value.to_string(), error }));
    }
    values
        .iter()
        .find_map(|v| Some((v, type_error(flag, v)?)))
        .map(|(v, not_a)| invalid(ValueProblem::Type { value: v.to_string(), not_a, expects }))
}

/// EA008: a flag the recipe passes whose type, nargs or action changed.
fn semantics_changed(u: &FlagUse, bump: Bump) -> Option<Finding> {
    if !passed(&u.value) {
        return None;
    }
    let option = rewritten(&bump, &u.name).option;
    let new = bump.to.resolve_flag(&option)?;
    let old = bump.from?.resolve_flag(&option).filter(|old| old.dest == new.dest)?;
    let changes: Vec<SemanticChange> = crate::surface_diff::semantic_changes(old, new)
        .into_iter()
        .map(|c| SemanticChange { field: c.field.into(), old: c.old, new: c.new })
        .collect();
    if changes.is_empty() {
        return None;
    }
    Some(
        Finding::new(FindingKind::SemanticsChanged { option, bump: bump.label(), changes }, Location::from_span(&u.key_span), &u.name)
            .evidence(EvidenceRef::new(&old.evidence, bump.current_ref().unwrap_or_default()))
            .evidence(EvidenceRef::new(&new.evidence, bump.target_ref())),
    )
}

/// Replace the old flag name inside the key's text, keeping dashes, quotes and
/// comments as written. A replacement that also sets a value (`--x=v`, from a
/// deprecated store-const flag) sets that value too.
fn rename_fix(site: &Site, u: &FlagUse, replacement: &str) -> Fix {
    let (new_flag, new_value) = match replacement.split_once('=') {
        Some((f, v)) => (f, Some(v)),
        None => (replacement, None),
    };
    let new = replacement.trim_start_matches("--").to_string();
    // `--cuda-graph-backend-{decode,prefill}=disabled` names two flags, each set to the value.
    if let Some(flags) = brace_flags(new_flag) {
        return split_fix(site, u, &flags, new_value, new);
    }
    if new_flag.contains([' ', ',']) || !new_flag.starts_with("--") {
        return Fix::advice(FixAction::Replace { old: u.name.clone(), new });
    }
    // The role sets the new flag already: a rename would write it twice, and
    // which value wins is for the author to say.
    if site.taken.contains(new_flag) {
        return Fix::advice(FixAction::Remove { name: u.name.clone(), use_instead: Some(new) });
    }
    let new_name = if u.name.starts_with('-') { new_flag.to_string() } else { new_flag.trim_start_matches("--").to_string() };
    let edits = match (new_value, &u.value) {
        (None, _) => site.file.rename_key(&u.key_span, &u.shadowed, &u.name, &new_name),
        // A shadowed base entry may hold another value: the switch's rewrite is the author's.
        (Some(value), FlagValue::Switch { on: true }) if u.shadowed.is_empty() => {
            site.file.edit(EditIntent::RenameSwitch { flag: u, new_name: &new_name, value })
        }
        (Some(_), _) => Vec::new(),
    };
    Fix { actions: vec![FixAction::Replace { old: u.name.clone(), new }], edits }
}

/// `--a-{x,y}` as its flags (`--a-x`, `--a-y`): one brace group of plain names.
fn brace_flags(pattern: &str) -> Option<Vec<String>> {
    let (head, rest) = pattern.split_once('{')?;
    let (alternatives, tail) = rest.split_once('}')?;
    let ok = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !head.starts_with("--") || !ok(&head[2..]) || !ok(tail) {
        return None;
    }
    let flags: Vec<String> = alternatives.split(',').map(|a| format!("{head}{}{tail}", a.trim())).collect();
    (flags.len() > 1 && flags.iter().all(|f| ok(&f[2..]))).then_some(flags)
}

/// A switch the engine forwards to several flags with one value: each of them,
/// written where the switch was, when the target takes them all and the role
/// sets none of them; else the advice.
fn split_fix(site: &Site, u: &FlagUse, flags: &[String], value: Option<&str>, new: String) -> Fix {
    let advice = || Fix::advice(FixAction::Replace { old: u.name.clone(), new: new.clone() });
    let Some(value) = value.filter(|_| matches!(u.value, FlagValue::Switch { on: true }) && u.shadowed.is_empty()) else {
        return advice();
    };
    let target_takes = |f: &String| site.target.flag(f).is_some_and(|flag| flag.deprecated.is_none());
    if !flags.iter().all(target_takes) || flags.iter().any(|f| site.taken.contains(f)) {
        return advice();
    }
    let into: Vec<(String, String)> = flags
        .iter()
        .map(|f| (if u.name.starts_with('-') { f.clone() } else { f.trim_start_matches("--").to_string() }, value.to_string()))
        .collect();
    let edits = site.file.edit(EditIntent::SplitSwitch { flag: u, into: &into });
    let actions = into.iter().map(|(name, value)| FixAction::Set { assignment: format!("{name}: {value}") }).collect();
    Fix { actions: [vec![FixAction::Remove { name: u.name.clone(), use_instead: None }], actions].concat(), edits }
}

/// Delete the flag's entry (and the base entries it shadows), where the
/// recipe's format can.
fn remove_fix(site: &Site, u: &FlagUse) -> Fix {
    Fix {
        actions: vec![FixAction::Remove { name: u.name.clone(), use_instead: None }],
        edits: site.file.delete_entry(&u.key_span, &u.value_span, &u.shadowed),
    }
}

/// Where a flag is written: its file, and the option strings its role sets
/// (a rename must not write one twice).
struct Site<'a> {
    file: &'a RecipeFile,
    taken: BTreeSet<String>,
    /// The target surface: a replacement is only written if it takes it.
    target: &'a crate::surface::EngineSurface,
    /// The consumer's worker the flags go to, if not the engine's server.
    worker: Option<&'a crate::recipe::Worker>,
    /// That worker's own options, when they were read.
    worker_parse: Option<WorkerParse<'a>>,
}

pub(crate) use crate::surface_diff::{default_changes, DefaultChange};

/// EA007 inputs: the pair's [`default_changes`] that no role of the deployment
/// sets.
pub(crate) fn changed_defaults<'a>(dep: &Deployment, bump: Bump<'a>, pair: &[DefaultChange<'a>]) -> Vec<DefaultChange<'a>> {
    if bump.from.is_none() {
        return Vec::new();
    }
    let set: std::collections::BTreeSet<String> = dep
        .roles
        .iter()
        .flat_map(|r| r.flag_uses(|n| is_switch(&bump, n)))
        .filter_map(|u| bump.to.resolve_flag(&rewritten(&bump, &u.name).option).map(|f| f.dest.clone()))
        .collect();
    pair.iter().filter(|c| !set.contains(&c.flag.dest)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{extract_surface, Demand};
    use crate::profiles::SGLANG;
    use crate::recipe::{load_text, LinkMapping};
    use crate::source::MemTree;
    use crate::surface::EngineSurface;

    /// A mini SGLang whose parser is built as upstream builds it, with
    /// `parser_args` passed to `ArgumentParser(...)`.
    fn engine(parser_args: &str) -> EngineSurface {
        let server_args = format!(
            "import argparse

class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument('--tp-size', '--tensor-parallel-size', type=int, default=1)
        parser.add_argument('--attention-backend', type=str, choices=['flashinfer', 'triton'])
        parser.add_argument('--cuda-graph-max-bs-decode', type=int)
        parser.add_argument('--cuda-graph-max-bs-prefill', type=int)

def prepare_server_args(argv):
    parser = argparse.ArgumentParser({parser_args})
    ServerArgs.add_cli_args(parser)
    return parser.parse_args(argv)
"
        );
        let tree = MemTree::from_files(
            "v2",
            [
                ("python/sglang/__init__.py", ""),
                ("python/sglang/srt/__init__.py", ""),
                ("python/sglang/srt/server_args.py", server_args.as_str()),
            ],
        );
        extract_surface(&tree, &SGLANG, "python/sglang", "v2", &Demand::full(&SGLANG))
    }

    /// The findings for one `decode` role holding `flags` (YAML lines).
    fn findings(target: &EngineSurface, flags: &str) -> Vec<Finding> {
        let text = format!("name: r\nbackend:\n  type: sglang\n  sglang_config:\n    decode:\n{flags}");
        let file = load_text("r.yaml", text, &LinkMapping::default()).unwrap();
        let mut out = Vec::new();
        check_deployment(&file, &file.deployments[0], Bump { from: None, to: target, history: None }, None, &mut out);
        out
    }

    fn codes(found: &[Finding]) -> Vec<(String, String)> {
        found.iter().map(|f| (f.code().to_string(), f.subject.clone())).collect()
    }

    #[test]
    fn a_unique_prefix_is_the_option_it_stands_for() {
        let target = engine("prog='sglang serve'");
        assert_eq!(target.parser.allow_abbrev, Known::Value(true));
        let found = findings(&target, "      tp: 8\n      attention-back: fa3\n");
        assert_eq!(
            codes(&found),
            [("EA009".into(), "tp".into()), ("EA009".into(), "attention-back".into()), ("EA005".into(), "attention-back".into())],
            "the abbreviation's value is judged against the option's choices"
        );
        assert!(found[0].message().contains("abbreviation of `--tp-size`"), "{}", found[0].message());
        assert_eq!(found[0].fix.as_ref().unwrap().edits[0].replacement, "tp-size");
        assert!(found[0].evidence.iter().any(|e| e.note.as_deref() == Some("the parser, built without allow_abbrev=False")));
    }

    /// A help-text deprecation (vLLM's): naming a successor the target accepts,
    /// the rename is the fix; naming one it lacks, advice only; naming none, no
    /// finding while the flag still takes effect (its value still judged).
    #[test]
    fn an_announced_deprecation_is_an_alias_only_with_a_successor() {
        let announce = |successor: Option<&str>| {
            let mut target = engine("");
            let flag = target.flags.iter_mut().find(|f| f.names[0] == "--cuda-graph-max-bs-decode").unwrap();
            flag.deprecated = Some(crate::surface::FlagDeprecation {
                kind: FlagDeprecationKind::Announced,
                replacement: successor.map(str::to_string),
                message: Some("--cuda-graph-max-bs-decode is deprecated and will be removed.".into()),
            });
            findings(&target, "      cuda-graph-max-bs-decode: 8\n      attention-backend: fa3\n")
        };
        let renamed = announce(Some("--cuda-graph-max-bs-prefill"));
        assert_eq!(codes(&renamed)[0], ("EA003".into(), "cuda-graph-max-bs-decode".into()));
        assert_eq!(renamed[0].fix.as_ref().unwrap().edits[0].replacement, "cuda-graph-max-bs-prefill");
        let missing = announce(Some("--no-such-successor"));
        assert_eq!(codes(&missing)[0].0, "EA003");
        assert!(missing[0].fix.as_ref().unwrap().edits.is_empty(), "a rename to a refused flag is advice only");
        let silent = announce(None);
        assert_eq!(codes(&silent), [("EA005".into(), "attention-backend".into())], "still in effect: nothing to say of it");
    }

    #[test]
    fn several_prefixes_are_argparse_s_ambiguous_option() {
        let found = findings(&engine(""), "      cuda-graph-max-bs: 8\n");
        assert_eq!(codes(&found), [("EA001".into(), "cuda-graph-max-bs".into())]);
        assert!(
            found[0].message().contains("ambiguous option, it could match `--cuda-graph-max-bs-decode`, `--cuda-graph-max-bs-prefill`"),
            "{}",
            found[0].message()
        );
        assert!(found[0].fix.is_none(), "argparse names the candidates; no guess");
    }

    #[test]
    fn allow_abbrev_false_makes_a_prefix_unknown() {
        let found = findings(&engine("allow_abbrev=False"), "      tp: 8\n      cuda-graph-max-bs: 8\n");
        assert_eq!(codes(&found), [("EA001".into(), "tp".into()), ("EA001".into(), "cuda-graph-max-bs".into())]);
        assert!(found.iter().all(|f| f.message().contains("is not accepted by the parser")));
    }

    #[test]
    fn an_unread_setting_is_said_not_guessed() {
        let target = engine("allow_abbrev=STRICT");
        let found = findings(&target, "      tp: 8\n      cuda-graph-max-bs: 8\n");
        assert_eq!(codes(&found), [("EA009".into(), "tp".into()), ("EA001".into(), "cuda-graph-max-bs".into())]);
        assert!(
            found[0].message().contains("if the parser allows abbreviations, which could not be read (STRICT)"),
            "{}",
            found[0].message()
        );
        assert!(!found[1].message().contains("ambiguous"), "refused either way, but not in argparse's ambiguity words");
    }

    /// Every finding of an override-format recipe, all variants.
    fn variant_findings(target: &EngineSurface, text: &str) -> (RecipeFile, Vec<Finding>) {
        let file = load_text("r.yaml", text.to_string(), &LinkMapping::default()).unwrap();
        let mut out = Vec::new();
        for dep in &file.deployments {
            check_deployment(&file, dep, Bump { from: None, to: target, history: None }, None, &mut out);
        }
        (file, out)
    }

    #[test]
    fn a_rename_of_an_override_key_renames_the_base_key_it_shadows() {
        let text = "base:\n  name: r\n  backend:\n    type: sglang\n    sglang_config:\n      decode:\n        tp: 2\noverride_big:\n  backend:\n    sglang_config:\n      decode:\n        tp: 8\n";
        let (file, found) = variant_findings(&engine(""), text);
        assert_eq!(codes(&found), [("EA009".into(), "tp".into())], "the base entry is shadowed: one finding");
        let edits = &found[0].fix.as_ref().unwrap().edits;
        let lines: Vec<u32> = edits.iter().map(|e| file.text[..e.offset].lines().count() as u32).collect();
        assert_eq!(lines, [12, 7], "the override's key and the base's: {edits:?}");
        assert!(edits.iter().all(|e| e.replacement == "tp-size"));
    }

    #[test]
    fn a_rename_onto_a_flag_the_role_sets_is_advice() {
        let found = findings(&engine(""), "      tp: 8\n      tp-size: 4\n");
        assert_eq!(codes(&found), [("EA009".into(), "tp".into())]);
        let fix = found[0].fix.as_ref().unwrap();
        assert!(fix.edits.is_empty(), "`tp-size` is set already: which value wins is the author's call");
        assert_eq!(fix.actions, [FixAction::Remove { name: "tp".into(), use_instead: Some("tp-size".into()) }]);
    }

    #[test]
    fn a_choice_accepted_only_with_an_env_var_set_is_not_judged() {
        let mut target = engine("");
        let backend = target.flags.iter_mut().find(|f| f.canonical() == "--attention-backend").unwrap();
        backend.choices_when_env.insert("SGLANG_X".into(), vec![serde_json::json!("token_oracle")]);
        assert!(findings(&target, "      attention-backend: token_oracle\n").is_empty());
        let found = findings(&target, "      attention-backend: fa3\n");
        assert_eq!(codes(&found), [("EA005".into(), "attention-backend".into())]);
    }

    #[test]
    fn an_exact_option_string_is_never_an_abbreviation() {
        let found = findings(&engine(""), "      tensor-parallel-size: 8\n      tp-size: 8\n");
        assert!(found.is_empty(), "{:?}", codes(&found));
    }
}
