//! Recipe flags against the target engine's parser: EA001–EA006, EA008, and the
//! changed defaults of flags a recipe leaves unset (EA007).

use super::values::{arity, known_choices, render_choices, type_error, value_matches_choice};
use super::Bump;
use crate::finding::{EvidenceRef, Finding, FindingKind, Fix, FixAction, Location, SemanticChange, ValueProblem};
use crate::recipe::{Deployment, EditIntent, FlagUse, FlagValue, RecipeFile};
use crate::surface::{Flag, FlagDeprecationKind};

/// The option string a recipe key stands for (`cuda-graph-max-bs` → `--cuda-graph-max-bs`).
pub(crate) fn option_of(name: &str) -> String {
    if name.starts_with('-') {
        name.to_string()
    } else {
        format!("--{name}")
    }
}

/// Whether the engine treats the option as taking no value: the target's view,
/// else the current release's (an unknown flag is assumed to take one).
fn is_switch(bump: &Bump, name: &str) -> bool {
    let option = option_of(name);
    bump.to.flag(&option).or_else(|| bump.from.and_then(|f| f.flag(&option))).is_some_and(Flag::is_switch)
}

pub(crate) fn check_deployment(file: &RecipeFile, dep: &Deployment, bump: Bump, out: &mut Vec<Finding>) {
    if bump.to.flags.is_empty() {
        // Extraction found no parser at the target: nothing can be said about flags.
        return;
    }
    for role in &dep.roles {
        for use_ in role.flag_uses(|name| is_switch(&bump, name)) {
            if let Some(finding) = check_use(file, &use_, bump) {
                out.push(finding.role(Some(&role.role)).deployment(&dep.name));
            }
            if let Some(finding) = semantics_changed(&use_, bump) {
                out.push(finding.role(Some(&role.role)).deployment(&dep.name));
            }
        }
    }
}

fn passed(value: &FlagValue) -> bool {
    !matches!(value, FlagValue::Switch { on: false } | FlagValue::Null)
}

fn check_use(file: &RecipeFile, u: &FlagUse, bump: Bump) -> Option<Finding> {
    if !passed(&u.value) {
        return None;
    }
    let option = option_of(&u.name);
    let at = Location::from_span(&u.key_span);
    let to_ref = bump.target_ref();
    let Some(flag) = bump.to.flag(&option) else {
        return Some(unknown_flag(u, &option, bump));
    };
    let ev = EvidenceRef::new(&flag.evidence, to_ref);
    if let Some(dep) = &flag.deprecated {
        let (target, upstream) = (to_ref.to_string(), dep.message.clone());
        return Some(match dep.kind {
            FlagDeprecationKind::Removed => {
                Finding::new(FindingKind::RemovedFlag { option: option.clone(), target, upstream }, at, &u.name)
                    .evidence(ev.with_note(format!("{option} registered with an erroring action")))
                    .fix(Some(Fix::advice(FixAction::Remove { name: u.name.clone(), use_instead: dep.replacement.clone() })))
            }
            FlagDeprecationKind::Alias => {
                let replacement = dep.replacement.clone().unwrap_or_else(|| flag.dest.replace('_', "-"));
                Finding::new(FindingKind::DeprecatedAlias { option: option.clone(), replacement: replacement.clone(), target }, at, &u.name)
                    .evidence(ev.with_note(format!("{option} forwards to {replacement}")))
                    .fix(Some(rename_fix(file, u, &replacement)))
            }
            FlagDeprecationKind::Noop => {
                Finding::new(FindingKind::DeprecatedNoop { option: option.clone(), target, upstream }, at, &u.name)
                    .evidence(ev.with_note(format!("{option} registered with a warning-only action")))
                    .fix(Some(remove_fix(file, u)))
            }
        });
    }
    check_value(u, flag, bump).map(|f| f.evidence(ev))
}

fn unknown_flag(u: &FlagUse, option: &str, bump: Bump) -> Finding {
    let to_ref = bump.target_ref();
    let before = bump.from.and_then(|f| f.flag(option));
    let names: Vec<&str> = bump.to.flags.iter().flat_map(|f| f.names.iter().map(String::as_str)).collect();
    let suggestion = similar_names(option, &names).first().map(|c| c.to_string());
    let kind = FindingKind::UnknownFlag {
        option: option.to_string(),
        target: to_ref.to_string(),
        was_at: bump.current_ref().filter(|_| before.is_some()).map(str::to_string),
        suggestion: suggestion.clone(),
    };
    let mut finding = Finding::new(kind, Location::from_span(&u.key_span), &u.name);
    if let (Some(flag), Some(from)) = (before, bump.current_ref()) {
        finding = finding.evidence(EvidenceRef::new(&flag.evidence, from).with_note(format!("{option} registered here")));
    }
    finding.fix(suggestion.map(|name| Fix::advice(FixAction::DidYouMean { name })))
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
        if let Some(bad) = values.iter().find(|v| !choices.iter().any(|c| value_matches_choice(v, c))) {
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
    let option = option_of(&u.name);
    let (old, new) = (bump.from?.flag(&option)?, bump.to.flag(&option)?);
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
fn rename_fix(file: &RecipeFile, u: &FlagUse, replacement: &str) -> Fix {
    let (new_flag, new_value) = match replacement.split_once('=') {
        Some((f, v)) => (f, Some(v)),
        None => (replacement, None),
    };
    let actions = vec![FixAction::Replace { old: u.name.clone(), new: replacement.trim_start_matches("--").to_string() }];
    // `--cuda-graph-backend-{decode,prefill}=disabled` names two flags: advice only.
    if new_flag.contains(['{', ' ', ',']) || !new_flag.starts_with("--") {
        return Fix { actions, edits: vec![] };
    }
    let new_name = if u.name.starts_with('-') { new_flag.to_string() } else { new_flag.trim_start_matches("--").to_string() };
    let edits = match (new_value, &u.value) {
        (None, _) => file.edit(EditIntent::Rename { span: &u.key_span, old: &u.name, new: &new_name }),
        (Some(value), FlagValue::Switch { on: true }) => file.edit(EditIntent::RenameSwitch { flag: u, new_name: &new_name, value }),
        (Some(_), _) => Vec::new(),
    };
    Fix { actions, edits }
}

/// Delete the flag's entry, where the recipe's format can.
fn remove_fix(file: &RecipeFile, u: &FlagUse) -> Fix {
    Fix {
        actions: vec![FixAction::Remove { name: u.name.clone(), use_instead: None }],
        edits: file.edit(EditIntent::Delete { key: &u.key_span, value: &u.value_span }),
    }
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
        .filter_map(|u| bump.to.flag(&option_of(&u.name)).map(|f| f.dest.clone()))
        .collect();
    pair.iter().filter(|c| !set.contains(&c.flag.dest)).cloned().collect()
}
