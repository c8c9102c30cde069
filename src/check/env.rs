//! Recipe env vars against the engine's registry: EA101–EA105.
//!
//! Only the engine's own prefixes are judged (`SGLANG_`, `SGL_` against SGLang;
//! `DYN_` against Dynamo's Python reads). NCCL_, UCX_, ... belong to other software.

use super::edits::replace_in_span;
use super::Bump;
use crate::codes::Code;
use crate::recipe::{Deployment, EnvUse, RecipeFile};
use crate::report::{EvidenceRef, Finding, Fix, Location};
use crate::surface::{EngineSurface, EnvDeprecationKind, EnvVar, Known};
use std::collections::HashSet;

pub fn is_sglang_env(name: &str) -> bool {
    name.starts_with("SGLANG_") || name.starts_with("SGL_")
}

/// Every env var a deployment sets, with the role it is scoped to (`None` = all roles).
pub fn env_uses(dep: &Deployment) -> Vec<(Option<&str>, &EnvUse)> {
    let mut out: Vec<(Option<&str>, &EnvUse)> = dep.common_env.iter().map(|e| (None, e)).collect();
    for role in &dep.roles {
        out.extend(role.env.iter().map(|e| (Some(role.role.as_str()), e)));
    }
    out
}

/// The env checks of one deployment; common env whose name offset is in
/// `already_checked` was reported with an earlier deployment sharing it.
pub fn check_deployment(file: &RecipeFile, dep: &Deployment, bump: Bump, already_checked: &HashSet<usize>, out: &mut Vec<Finding>) {
    if bump.to.env.is_empty() {
        return;
    }
    for (role, use_) in env_uses(dep) {
        if !is_sglang_env(&use_.name) || (role.is_none() && already_checked.contains(&use_.name_span.offset)) {
            continue;
        }
        if let Some(f) = check_use(file, use_, bump) {
            out.push(f.role(role).deployment(&dep.name));
        }
    }
}

/// The registry entry that governs `name` at a release, following the `SGL_` →
/// `SGLANG_` rewrite when the name itself is not registered.
fn lookup<'a>(surface: &'a EngineSurface, name: &str) -> Option<(&'a EnvVar, Option<String>)> {
    if let Some(var) = surface.env_var(name) {
        return Some((var, None));
    }
    surface.env_prefix_rewrites.iter().find_map(|(old, new)| {
        let rest = name.strip_prefix(old.as_str())?;
        let rewritten = format!("{new}{rest}");
        surface.env_var(&rewritten).map(|v| (v, Some(rewritten)))
    })
}

fn check_use(file: &RecipeFile, u: &EnvUse, bump: Bump) -> Option<Finding> {
    let to_ref = bump.to_ref();
    let at = Location::from_span(&u.name_span);
    let Some((var, rewritten)) = lookup(bump.to, &u.name) else {
        return Some(missing(u, bump));
    };
    let ev = EvidenceRef::new(&var.evidence, to_ref);
    if let Some(new_name) = rewritten {
        let message = match var.deprecated.as_ref().and_then(|d| d.replacement.as_ref().map(|r| (r, d))) {
            // The rewritten name is itself retired: do not claim the value arrives anywhere.
            Some((final_name, d)) => format!(
                "`{}` is only read at {to_ref} through the legacy `SGL_` → `SGLANG_` prefix rewrite, as `{new_name}`, which is itself deprecated in favour of `{final_name}`: set `{final_name}` instead.",
                u.name
            ) + &d.transform.as_deref().map(|t| format!(" Its value is transformed by `{t}`.")).unwrap_or_default(),
            None => format!("`{}` is read at {to_ref} only through the legacy `SGL_` → `SGLANG_` prefix rewrite, as `{new_name}`.", u.name),
        };
        let (target, transform) = match &var.deprecated {
            Some(d) if d.replacement.is_some() => (d.replacement.clone().unwrap_or_default(), d.transform.as_deref()),
            _ => (new_name.clone(), None),
        };
        return Some(Finding::new(Code::EA102, at, &u.name, message).evidence(ev).fix(Some(rename_fix(file, u, &target, transform))));
    }
    let Some(dep) = &var.deprecated else {
        return default_changed(u, var, bump);
    };
    let message = dep.message.as_deref().map(|m| format!(" Upstream says: \"{m}\"")).unwrap_or_default();
    Some(match (dep.kind, &dep.replacement) {
        (EnvDeprecationKind::Renamed | EnvDeprecationKind::Alias, Some(new_name)) => {
            let transform = dep.transform.as_deref();
            let how = match transform {
                Some("_invert_bool") => " with inverted polarity (a true value now means the opposite: set the new name to the negated value)".to_string(),
                Some("_ms_to_s") => " with a unit change: milliseconds → seconds".to_string(),
                Some(t) => format!(" through the transform `{t}`"),
                None => String::new(),
            };
            Finding::new(Code::EA102, at, &u.name, format!("`{}` is deprecated at {to_ref}: its value is forwarded to `{new_name}`{how}.{message}", u.name))
                .evidence(ev.with_note(format!("{} → {new_name}", u.name)))
                .fix(Some(rename_fix(file, u, new_name, transform)))
        }
        _ => Finding::new(
            Code::EA103,
            at,
            &u.name,
            format!("`{}` no longer does anything at {to_ref}: the engine only reads it to log that it was removed.{message}", u.name),
        )
        .evidence(ev.with_note("read only to warn"))
        .fix(Some(Fix { description: format!("remove `{}`", u.name), edits: vec![] })),
    })
}

/// EA101 when the current release knew the var, else EA104.
fn missing(u: &EnvUse, bump: Bump) -> Finding {
    let at = Location::from_span(&u.name_span);
    match bump.from.and_then(|f| lookup(f, &u.name)) {
        Some((old, _)) => Finding::new(
            Code::EA101,
            at,
            &u.name,
            format!(
                "`{}` is gone at {}: no longer in the env registry and not read anywhere in the Python package; setting it has no effect.",
                u.name,
                bump.to_ref()
            ),
        )
        .evidence(EvidenceRef::new(&old.evidence, bump.from_ref().unwrap_or_default()).with_note("registered here before"))
        .fix(Some(Fix { description: format!("remove `{}`", u.name), edits: vec![] })),
        None => Finding::new(
            Code::EA104,
            at,
            &u.name,
            format!(
                "`{}` is not known to SGLang {} (typo?): not in the env registry and not read anywhere in the Python package; compiled extensions are not searched.",
                u.name,
                bump.label()
            ),
        ),
    }
}

/// EA105: the recipe sets a var whose default changed (its setting may now be
/// redundant, or no longer the deviation it was meant to be).
fn default_changed(u: &EnvUse, var: &EnvVar, bump: Bump) -> Option<Finding> {
    let old = bump.from?.env_var(&u.name)?;
    let (Known::Value(a), Known::Value(b)) = (&old.default, &var.default) else { return None };
    if a == b {
        return None;
    }
    Some(
        Finding::new(
            Code::EA105,
            Location::from_span(&u.name_span),
            &u.name,
            format!("the default of `{}` changed from {a} to {b} ({}); the recipe sets it explicitly.", u.name, bump.label()),
        )
        .evidence(EvidenceRef::new(&var.evidence, bump.to_ref())),
    )
}

/// Rename the key and, for known transforms, convert the value, keeping quotes.
fn rename_fix(file: &RecipeFile, u: &EnvUse, new_name: &str, transform: Option<&str>) -> Fix {
    let value = match &u.value {
        Known::Value(v) => Some(v.as_str()),
        Known::Dynamic { .. } => None,
    };
    let converted = match (transform, value) {
        (None, _) => None,
        (Some(t), Some(v)) => match transform_value(t, v) {
            Some(c) => Some(c),
            None => return Fix { description: format!("rename to `{new_name}` and convert the value with `{t}`"), edits: vec![] },
        },
        (Some(t), None) => return Fix { description: format!("rename to `{new_name}` and convert the value with `{t}`"), edits: vec![] },
    };
    let mut description = format!("rename `{}` to `{new_name}`", u.name);
    let mut edits = Vec::new();
    edits.extend(replace_in_span(file, &u.name_span, &u.name, new_name));
    if let (Some(new_value), Some(old_value)) = (converted, value) {
        description.push_str(&format!(" and set it to `{new_value}`"));
        edits.extend(replace_in_span(file, &u.value_span, old_value, &new_value));
    }
    Fix { description, edits }
}

/// The engine's value transforms, for the mechanical fix. Unknown ones are not guessed.
pub fn transform_value(transform: &str, value: &str) -> Option<String> {
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
