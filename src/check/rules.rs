//! Between the recipe model and the rules: what a rule's `when` reads from a
//! deployment, and a rule hit turned into a finding with its mechanical fix.

use crate::finding::{EvidenceRef, Finding, FindingKind, Fix, FixAction, Location};
use crate::recipe::{Deployment, EditIntent, EnvUse, FlagValue, RecipeFile, RoleConfig, Span};
use crate::rules::model::FixSpec;
use crate::rules::{DeploymentFacts, Fact, FactValue, RoleFacts, RuleHit, SpanRef};
use crate::surface::Known;

fn span_ref(s: &Span) -> SpanRef {
    SpanRef { path: s.path.clone(), line: s.line, column: s.column, offset: s.offset, len: s.len }
}

fn env_fact(e: &EnvUse) -> Fact {
    Fact {
        name: e.name.clone(),
        value: match &e.value {
            Known::Value(v) => FactValue::Text(v.clone()),
            Known::Dynamic { .. } => FactValue::Unknown,
        },
        key_span: Some(span_ref(&e.name_span)),
        value_span: Some(span_ref(&e.value_span)),
    }
}

fn role_facts(role: &RoleConfig, engine: &EngineView) -> RoleFacts {
    let flags = role
        .flag_uses(engine.is_switch)
        .into_iter()
        .filter_map(|u| {
            let value = match &u.value {
                FlagValue::Switch { on: true } => FactValue::Text("true".into()),
                FlagValue::Switch { on: false } | FlagValue::Null => return None,
                FlagValue::Scalar { text, .. } => FactValue::Text(text.clone()),
                FlagValue::List { items } => FactValue::List(items.iter().map(|i| i.value.clone()).collect()),
                FlagValue::Dynamic { .. } | FlagValue::Invalid { .. } => FactValue::Unknown,
            };
            Some(Fact {
                // A rule names the option; an abbreviation the parser takes is that option.
                name: crate::rules::when::normalize_flag(&(engine.option_of)(&u.name).unwrap_or(u.name.clone())),
                value,
                key_span: Some(span_ref(&u.key_span)),
                value_span: Some(span_ref(&u.value_span)),
            })
        })
        .collect();
    RoleFacts { role: role.role.clone(), flags, env: role.env.iter().map(env_fact).collect() }
}

/// How the target engine reads a recipe's flag names.
pub(crate) struct EngineView<'a> {
    /// Whether a flag takes no value (binds script tokens as the engine would).
    pub is_switch: &'a dyn Fn(&str) -> bool,
    /// The option string the parser gives a name (`tp` → `--tp-size`), when it knows it.
    pub option_of: &'a dyn Fn(&str) -> Option<String>,
}

/// The rule view of a deployment, its flags as the target engine reads them.
pub(crate) fn deployment_facts(dep: &Deployment, engine: &EngineView) -> DeploymentFacts {
    DeploymentFacts {
        name: dep.name.clone(),
        name_span: dep.name_span.as_ref().map(span_ref),
        model_path: dep.model_path.as_ref().map(|s| s.value.clone()),
        gpu_type: dep.gpu_type.as_ref().map(|s| s.value.clone()),
        precision: dep.precision.as_ref().map(|s| s.value.clone()),
        common_env: dep.common_env.iter().map(env_fact).collect(),
        roles: dep.roles.iter().map(|r| role_facts(r, engine)).collect(),
    }
}

fn to_span(s: &SpanRef) -> Span {
    Span { path: s.path.clone(), offset: s.offset, len: s.len, line: s.line, column: s.column }
}

pub(crate) fn to_finding(hit: RuleHit, file: &RecipeFile, dep: &Deployment) -> Finding {
    let location = hit.at.as_ref().map(|s| Location::from_span(&to_span(s))).unwrap_or(Location {
        path: file.path.clone(),
        line: 1,
        column: 1,
        offset: None,
        len: None,
    });
    let fix = fix_of(&hit, file, dep);
    Finding {
        kind: FindingKind::Rule { id: hit.rule_id, name: hit.rule_name, message: hit.message, doc: hit.doc },
        severity: hit.severity,
        location,
        deployment: Some(hit.deployment),
        variants: dep.variant.iter().cloned().collect(),
        role: hit.role,
        subject: hit.subject,
        evidence: hit
            .evidence
            .into_iter()
            .map(|c| EvidenceRef {
                path: c.path,
                line: c.line,
                ref_name: c.ref_name,
                note: Some(c.note).filter(|n| !n.is_empty()),
                engine: Some(dep.engine.into()),
            })
            .collect(),
        fix,
        affects: Vec::new(),
        condition: None,
    }
}

/// Turn the rule's fix actions into edits of this recipe, where they are mechanical.
fn fix_of(hit: &RuleHit, file: &RecipeFile, dep: &Deployment) -> Option<Fix> {
    if hit.fix.is_empty() {
        return None;
    }
    let mut actions = Vec::new();
    let mut edits = Vec::new();
    for action in &hit.fix {
        let role = dep.roles.iter().find(|r| Some(&r.role) == action.role.as_ref().or(hit.role.as_ref()));
        let flag = |name: &str| role.and_then(|r| r.flags.iter().find(|f| crate::rules::when::normalize_flag(&f.name) == *name));
        let env = |name: &str| {
            role.and_then(|r| r.env.iter().find(|e| e.name == name)).or_else(|| dep.common_env.iter().find(|e| e.name == name))
        };
        match &action.spec {
            FixSpec::SetFlag { name, value } => {
                actions.push(FixAction::Set { assignment: format!("{name}: {value}") });
                if let Some(f) = flag(name) {
                    edits.extend(file.edit(EditIntent::SetValue { span: &f.value_span, value }));
                }
            }
            FixSpec::RemoveFlag { name } => {
                actions.push(FixAction::Remove { name: name.clone(), use_instead: None });
                if let Some(f) = flag(name) {
                    edits.extend(file.delete_entry(&f.key_span, &f.value_span, &f.shadowed));
                }
            }
            FixSpec::RenameEnv { from, to } => {
                actions.push(FixAction::Rename { old: from.clone(), new: to.clone(), set: None });
                if let Some(e) = env(from) {
                    edits.extend(file.rename_key(&e.name_span, &e.shadowed, from, to));
                }
            }
            FixSpec::RemoveEnv { name } => {
                actions.push(FixAction::Remove { name: name.clone(), use_instead: None });
                if let Some(e) = env(name) {
                    edits.extend(file.delete_entry(&e.name_span, &e.value_span, &e.shadowed));
                }
            }
        }
    }
    Some(Fix { actions, edits })
}
