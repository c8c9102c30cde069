//! Recipe env vars against the engine's registry: EA101–EA105.
//!
//! Only the engine's own prefixes are judged (its profile's `env_prefixes`:
//! `SGLANG_`, `SGL_` for SGLang). NCCL_, UCX_, ... belong to other software.

use super::Bump;
use crate::finding::{EnvRename, EvidenceRef, Finding, FindingKind, Fix, FixAction, Location, PastEnv};
use crate::profiles::Engine;
use crate::recipe::{Deployment, EditIntent, EnvUse, RecipeFile};
use crate::surface::{EngineSurface, EnvDeprecationKind, EnvVar, Known};
use std::collections::{BTreeSet, HashSet};

/// Every env var a deployment sets, with the role it is scoped to (`None` = all roles).
pub(crate) fn env_uses(dep: &Deployment) -> Vec<(Option<&str>, &EnvUse)> {
    let mut out: Vec<(Option<&str>, &EnvUse)> = dep.common_env.iter().map(|e| (None, e)).collect();
    for role in &dep.roles {
        out.extend(role.env.iter().map(|e| (Some(role.role.as_str()), e)));
    }
    out
}

/// The env checks of one deployment; common env whose name offset is in
/// `already_checked` was reported with an earlier deployment sharing it.
pub(crate) fn check_deployment(
    engine: Engine,
    file: &RecipeFile,
    dep: &Deployment,
    bump: Bump,
    already_checked: &HashSet<(String, usize)>,
    out: &mut Vec<Finding>,
) {
    if bump.to.env.is_empty() {
        return;
    }
    let uses = env_uses(dep);
    let site = Site { file, taken: uses.iter().map(|(_, u)| u.name.clone()).collect() };
    for (role, use_) in uses {
        if !engine.owns_env(&use_.name)
            || (role.is_none() && already_checked.contains(&(use_.name_span.path.clone(), use_.name_span.offset)))
        {
            continue;
        }
        if let Some(f) = check_use(&site, use_, bump) {
            out.push(f.role(role).deployment(&dep.name).variant(dep.variant.as_deref()).condition(use_.condition.clone()));
        }
    }
}

/// The env vars a deployment sets that belong to another library the engine's
/// server loads (ATOM's `AITER_*`), with that library: not checked, and said so.
pub(crate) fn foreign_env(engine: Engine, dep: &Deployment) -> Vec<(&EnvUse, &'static str)> {
    env_uses(dep).into_iter().filter_map(|(_, u)| engine.foreign_env(&u.name).map(|library| (u, library))).collect()
}

/// The engine's env vars a deployment sets that the target neither registers
/// nor reads: what the release history is asked about.
pub(crate) fn unknown_env(engine: Engine, dep: &Deployment, bump: Bump) -> BTreeSet<String> {
    if bump.to.env.is_empty() {
        return BTreeSet::new();
    }
    env_uses(dep).into_iter().map(|(_, u)| &u.name).filter(|n| engine.owns_env(n) && lookup(bump.to, n).is_none()).cloned().collect()
}

/// The registry entry that governs `name` at a release, following the `SGL_` →
/// `SGLANG_` rewrite when the name itself is not registered.
/// With a rewrite: the name it is read as, and the (old, new) prefixes.
type Rewritten = (String, (String, String));

fn lookup<'a>(surface: &'a EngineSurface, name: &str) -> Option<(&'a EnvVar, Option<Rewritten>)> {
    if let Some(var) = surface.env_var(name) {
        return Some((var, None));
    }
    surface.env_prefix_rewrites.iter().find_map(|(old, new)| {
        let rest = name.strip_prefix(old.as_str())?;
        let rewritten = format!("{new}{rest}");
        surface.env_var(&rewritten).map(|v| (v, Some((rewritten, (old.clone(), new.clone())))))
    })
}

fn check_use(site: &Site, u: &EnvUse, bump: Bump) -> Option<Finding> {
    let to_ref = bump.target_ref();
    let at = Location::from_span(&u.name_span);
    let Some((var, rewritten)) = lookup(bump.to, &u.name) else {
        return Some(missing(site, u, bump));
    };
    let ev = EvidenceRef::new(&var.evidence, to_ref);
    if let Some((new_name, rewrite)) = rewritten {
        // The rewritten name may itself be retired: then the value arrives nowhere it means anything.
        let retired_for = var.deprecated.as_ref().and_then(|d| d.replacement.clone().map(|r| (r, d.transform.clone())));
        let (target, transform) = match &var.deprecated {
            Some(d) if d.replacement.is_some() => (d.replacement.clone().unwrap_or_default(), d.transform.as_deref()),
            _ => (new_name.clone(), None),
        };
        let how = EnvRename::PrefixRewrite { rewrite, read_as: new_name.clone(), retired_for };
        return Some(
            Finding::new(FindingKind::EnvRenamed { name: u.name.clone(), target: to_ref.to_string(), how }, at, &u.name)
                .evidence(ev)
                .fix(Some(rename_fix(site, u, &target, transform))),
        );
    }
    // A field upstream lists as deprecated without a successor ("the field is
    // still defined for legacy call sites") is still read: no removal notice.
    let retired_field = |d: &&crate::surface::EnvDeprecation| d.kind == EnvDeprecationKind::Removed && var.is_registry_field();
    let Some(dep) = var.deprecated.as_ref().filter(|d| !retired_field(d)) else {
        return default_changed(u, var, bump);
    };
    let (name, target, upstream) = (u.name.clone(), to_ref.to_string(), dep.message.clone());
    Some(match (dep.kind, &dep.replacement) {
        (EnvDeprecationKind::Renamed | EnvDeprecationKind::Alias, Some(new_name)) => {
            let transform = dep.transform.as_deref();
            let how = EnvRename::Forwarded { new: new_name.clone(), transform: dep.transform.clone(), upstream };
            Finding::new(FindingKind::EnvRenamed { name, target, how }, at, &u.name)
                .evidence(ev.with_note(format!("{} → {new_name}", u.name)))
                .fix(Some(rename_fix(site, u, new_name, transform)))
        }
        _ => Finding::new(FindingKind::EnvRemovalNotice { name, target, upstream }, at, &u.name)
            .evidence(ev.with_note("read only to warn"))
            .fix(Some(remove(u))),
    })
}

/// EA101 when the current release, or a release before the target that the
/// repository holds, knew the var (saying what became of it, with the fix of
/// its last state: the rename it was forwarded under); else EA104.
fn missing(site: &Site, u: &EnvUse, bump: Bump) -> Finding {
    let at = Location::from_span(&u.name_span);
    let target = bump.target_ref().to_string();
    if let Some(past) = bump.history.and_then(|h| h.env(&u.name, &target)) {
        let fix = match &past.was {
            // Renamed to a name the target still reads: the rename the engine asked for.
            PastEnv::Renamed { replacement, transform } if lookup(bump.to, replacement).is_some() => {
                rename_fix(site, u, replacement, transform.as_deref())
            }
            PastEnv::Renamed { .. } | PastEnv::Read | PastEnv::Retired { .. } => remove(u),
        };
        let mut finding = Finding::new(FindingKind::EnvRemoved { name: u.name.clone(), target, history: Some(past) }, at, &u.name);
        if let Some((var, seen_at)) = bump.history.and_then(|h| h.last_env(&u.name)) {
            finding = finding.evidence(EvidenceRef::new(&var.evidence, seen_at).with_note("registered here before"));
        }
        return finding.fix(Some(fix));
    }
    match bump.from.and_then(|f| lookup(f, &u.name)) {
        Some((old, _)) => Finding::new(FindingKind::EnvRemoved { name: u.name.clone(), target, history: None }, at, &u.name)
            .evidence(EvidenceRef::new(&old.evidence, bump.current_ref().unwrap_or_default()).with_note("registered here before"))
            .fix(Some(remove(u))),
        None => {
            // Only a near-identical name the target itself reads (a dropped or
            // doubled letter), never the least unlike of unrelated names.
            let read_at_target = bump.to.env.iter().filter(|v| v.deprecated.is_none()).map(|v| v.name.as_str());
            let suggestion = crate::spelling::closest(&u.name, read_at_target, SUGGESTION_SIMILARITY, 1).first().map(|s| s.to_string());
            let kind = FindingKind::EnvUnknown {
                name: u.name.clone(),
                engine: bump.engine_display().to_string(),
                bump: bump.label(),
                searched_from: bump.history.and_then(|h| h.env_searched_from().map(str::to_string)),
                suggestion: suggestion.clone(),
            };
            let finding = Finding::new(kind, at, &u.name);
            match suggestion {
                Some(name) => finding.fix(Some(Fix::advice(FixAction::DidYouMean { name }))),
                None => finding,
            }
        }
    }
}

/// How alike an unknown env var and a name the target reads must be for
/// "did you mean" (difflib's ratio): `SGLANG_ENABLE_JIT_DEEPGEM` and
/// `..._DEEPGEMM` are 0.98, a letter or two in a long name. Different vars
/// sharing most words are not: `SGLANG_OPT_DEEPGEMM_MEGA_MOE` and
/// `..._MEGA_GATE` are 0.91, `VLLM_USE_AITER_TRITON_ROPE` and
/// `VLLM_ROCM_USE_AITER_TRITON_ROPE` 0.91 (measured on the InferenceX tree).
const SUGGESTION_SIMILARITY: f64 = 0.95;

/// Advice to remove a var that no longer does anything.
fn remove(u: &EnvUse) -> Fix {
    Fix::advice(FixAction::Remove { name: u.name.clone(), use_instead: None })
}

/// EA105: the recipe sets a var whose default changed (its setting may now be
/// redundant, or no longer the deviation it was meant to be).
fn default_changed(u: &EnvUse, var: &EnvVar, bump: Bump) -> Option<Finding> {
    let old = bump.from?.env_var(&u.name)?;
    let (a, b) = crate::surface_diff::env_default_change(old, var)?;
    let kind = FindingKind::EnvDefaultChanged { name: u.name.clone(), bump: bump.label(), old: a.to_string(), new: b.to_string() };
    Some(Finding::new(kind, Location::from_span(&u.name_span), &u.name).evidence(EvidenceRef::new(&var.evidence, bump.target_ref())))
}

/// Rename the key and, for known transforms, convert the value, keeping quotes.
fn rename_fix(site: &Site, u: &EnvUse, new_name: &str, transform: Option<&str>) -> Fix {
    let value = match &u.value {
        Known::Value(v) => Some(v.as_str()),
        Known::Dynamic { .. } => None,
    };
    // The deployment sets the new name already: a rename would set it twice.
    if site.taken.contains(new_name) {
        return Fix::advice(FixAction::Remove { name: u.name.clone(), use_instead: Some(new_name.to_string()) });
    }
    let advice = |t: &str| Fix::advice(FixAction::RenameConvert { new: new_name.to_string(), transform: t.to_string() });
    let converted = match (transform, value) {
        (None, _) => None,
        // A shadowed base entry's value would need converting too: the author's call.
        (Some(t), _) if !u.shadowed.is_empty() => return advice(t),
        (Some(t), Some(v)) => match transform_value(t, v) {
            Some(c) => Some(c),
            None => return advice(t),
        },
        (Some(t), None) => return advice(t),
    };
    let mut edits = site.file.rename_key(&u.name_span, &u.shadowed, &u.name, new_name);
    if let (Some(new_value), Some(old_value), false) = (&converted, value, edits.is_empty()) {
        edits.extend(site.file.edit(EditIntent::Rename { span: &u.value_span, old: old_value, new: new_value }));
    }
    Fix { actions: vec![FixAction::Rename { old: u.name.clone(), new: new_name.to_string(), set: converted }], edits }
}

/// Where an env var is set: its file, and every env name its deployment sets
/// (a rename must not set one twice).
struct Site<'a> {
    file: &'a RecipeFile,
    taken: BTreeSet<String>,
}

/// The engine's value transforms, for the mechanical fix. Unknown ones are not guessed.
pub(crate) fn transform_value(transform: &str, value: &str) -> Option<String> {
    match transform {
        // SGLang's `_invert_bool`: "0" if value.lower() in ("true", "1", "yes", "y") else "1".
        "_invert_bool" => {
            let v = value.to_ascii_lowercase();
            Some(if matches!(v.as_str(), "true" | "1" | "yes" | "y") { "0" } else { "1" }.into())
        }
        "_ms_to_s" => {
            let ms: f64 = value.trim().parse().ok()?;
            let s = ms / 1000.0;
            Some(if s.fract() == 0.0 { format!("{}", s as i64) } else { format!("{s}") })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::transform_value;

    #[test]
    fn transforms_follow_the_engine() {
        assert_eq!(transform_value("_invert_bool", "1").as_deref(), Some("0"));
        assert_eq!(transform_value("_invert_bool", "False").as_deref(), Some("1"));
        assert_eq!(transform_value("_invert_bool", "on").as_deref(), Some("1"), "the engine only knows true/1/yes/y");
        assert_eq!(transform_value("_ms_to_s", "30000").as_deref(), Some("30"));
        assert_eq!(transform_value("_ms_to_s", "1500").as_deref(), Some("1.5"));
        assert_eq!(transform_value("_unknown", "1"), None);
    }
}
