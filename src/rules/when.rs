//! What `when` conditions read from a deployment, and their evaluation.
//!
//! Rules do not depend on the recipe readers: [`DeploymentFacts`] is the small,
//! owned view they need. One adapter (recipe `Deployment` → `DeploymentFacts`)
//! lives with the orchestrator; rule self-tests build it from inline maps.

use super::model::{Presence, ValueCond, When};

/// A place in a recipe file (mirrors `recipe::Span`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct SpanRef {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub offset: usize,
    pub len: usize,
}

/// A value as the recipe gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FactValue {
    /// A scalar (or switch rendered as `true`/`false`), as written.
    Text(String),
    /// `--flag a b`.
    List(Vec<String>),
    /// Not knowable statically (`$VAR`); no equality test holds on it.
    Unknown,
}

impl FactValue {
    /// The value as one string, for messages and equality (`a b` for lists).
    pub(crate) fn as_text(&self) -> Option<String> {
        match self {
            FactValue::Text(t) => Some(t.clone()),
            FactValue::List(items) => Some(items.join(" ")),
            FactValue::Unknown => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fact {
    /// Flags: without `--`, `_` already turned into `-`. Env: as written.
    pub name: String,
    pub value: FactValue,
    /// The key (flag name / env name) in the recipe.
    pub key_span: Option<SpanRef>,
    pub value_span: Option<SpanRef>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RoleFacts {
    pub role: String,
    /// Flags that are actually passed (a switch set to false, or `null`, is left out).
    pub flags: Vec<Fact>,
    pub env: Vec<Fact>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DeploymentFacts {
    pub name: String,
    pub name_span: Option<SpanRef>,
    pub model_path: Option<String>,
    pub gpu_type: Option<String>,
    pub precision: Option<String>,
    pub common_env: Vec<Fact>,
    pub roles: Vec<RoleFacts>,
}

/// Flag names as the engine sees them: no leading dashes, `-` not `_`.
pub(crate) fn normalize_flag(name: &str) -> String {
    name.trim_start_matches('-').replace('_', "-")
}

/// A fact that made a condition hold: where the finding points and what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Matched {
    pub kind: MatchKind,
    pub name: String,
    pub value: Option<String>,
    pub role: Option<String>,
    pub key_span: Option<SpanRef>,
    pub value_span: Option<SpanRef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatchKind {
    Flag,
    Env,
}

/// Evaluates `when` for one role of one deployment.
pub(crate) struct Ctx<'a> {
    pub deployment: &'a DeploymentFacts,
    /// `None` when the deployment has no roles.
    pub role: Option<&'a RoleFacts>,
}

impl<'a> Ctx<'a> {
    /// Whether `cond` holds; positive flag/env matches are appended to `matched`
    /// (matches under `not` are dropped: they explain nothing).
    pub(crate) fn holds(&self, cond: &When, matched: &mut Vec<Matched>) -> bool {
        match cond {
            When::All(items) => {
                let mark = matched.len();
                for c in items {
                    if !self.holds(c, matched) {
                        matched.truncate(mark);
                        return false;
                    }
                }
                true
            }
            When::Any(items) => items.iter().any(|c| {
                let mark = matched.len();
                let ok = self.holds(c, matched);
                if !ok {
                    matched.truncate(mark);
                }
                ok
            }),
            When::Not(inner) => !self.holds(inner, &mut Vec::new()),
            When::Flag(c) => self.flag(c, matched),
            When::Env(c) => self.env(c, matched),
            When::Model(c) => self.model_names().iter().any(|m| c.matches.is_match(m)),
            When::GpuType(c) => in_set(self.deployment.gpu_type.as_deref(), &c.one_of),
            When::Precision(c) => in_set(self.deployment.precision.as_deref(), &c.one_of),
        }
    }

    fn role_named(&self, name: &str) -> Option<&'a RoleFacts> {
        self.deployment.roles.iter().find(|r| r.role == name)
    }

    fn flag(&self, c: &ValueCond, matched: &mut Vec<Matched>) -> bool {
        let role = match &c.role {
            Some(name) => self.role_named(name),
            None => self.role,
        };
        let wanted = normalize_flag(&c.name);
        let fact = role.and_then(|r| r.flags.iter().rev().find(|f| normalize_flag(&f.name) == wanted));
        let ok = value_test(c, fact.map(|f| &f.value));
        if ok {
            if let Some(f) = fact {
                matched.push(Matched {
                    kind: MatchKind::Flag,
                    name: wanted,
                    value: f.value.as_text(),
                    role: role.map(|r| r.role.clone()),
                    key_span: f.key_span.clone(),
                    value_span: f.value_span.clone(),
                });
            }
        }
        ok
    }

    /// Role env wins over common env, as srt-slurm merges them.
    fn env(&self, c: &ValueCond, matched: &mut Vec<Matched>) -> bool {
        let role = match &c.role {
            Some(name) => self.role_named(name),
            None => self.role,
        };
        let in_role = role.and_then(|r| r.env.iter().rev().find(|f| f.name == c.name));
        let (fact, from_role) = match in_role {
            Some(f) => (Some(f), true),
            None => (self.deployment.common_env.iter().rev().find(|f| f.name == c.name), false),
        };
        let ok = value_test(c, fact.map(|f| &f.value));
        if ok {
            if let Some(f) = fact {
                matched.push(Matched {
                    kind: MatchKind::Env,
                    name: c.name.clone(),
                    value: f.value.as_text(),
                    role: if from_role { role.map(|r| r.role.clone()) } else { None },
                    key_span: f.key_span.clone(),
                    value_span: f.value_span.clone(),
                });
            }
        }
        ok
    }

    /// The deployment's model path and the roles' `model-path` / `served-model-name`.
    fn model_names(&self) -> Vec<String> {
        let mut out: Vec<String> = self.deployment.model_path.iter().cloned().collect();
        for role in &self.deployment.roles {
            for f in &role.flags {
                if matches!(normalize_flag(&f.name).as_str(), "model-path" | "served-model-name") {
                    if let Some(v) = f.value.as_text() {
                        out.push(v);
                    }
                }
            }
        }
        out
    }
}

fn in_set(value: Option<&str>, set: &[String]) -> bool {
    value.is_some_and(|v| set.iter().any(|s| s.eq_ignore_ascii_case(v.trim())))
}

/// SGLang's `EnvBool.parse`: these spellings, case-insensitive; anything else
/// falls back to the default, so it is neither truthy nor falsy here.
pub(crate) fn truthiness(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "y" => Some(true),
        "false" | "0" | "no" | "n" => Some(false),
        _ => None,
    }
}

fn value_test(c: &ValueCond, value: Option<&FactValue>) -> bool {
    let text = value.and_then(FactValue::as_text);
    if let Some(want) = &c.equals {
        return text.as_deref() == Some(want.as_str());
    }
    if let Some(set) = &c.one_of {
        return text.is_some_and(|t| set.contains(&t));
    }
    match c.is {
        Some(Presence::Set) => value.is_some(),
        Some(Presence::Unset) => value.is_none(),
        Some(Presence::Truthy) => text.as_deref().and_then(truthiness) == Some(true),
        Some(Presence::Falsy) => text.as_deref().and_then(truthiness) == Some(false),
        // Rejected when the rule is loaded; never reached on a loaded rule.
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(name: &str, value: &str) -> Fact {
        Fact { name: name.into(), value: FactValue::Text(value.into()), key_span: None, value_span: None }
    }

    fn deployment() -> DeploymentFacts {
        DeploymentFacts {
            name: "d".into(),
            model_path: Some("dsr1".into()),
            gpu_type: Some("B200".into()),
            common_env: vec![fact("X", "0")],
            roles: vec![
                RoleFacts {
                    role: "prefill".into(),
                    flags: vec![fact("fp4_gemm_backend", "flashinfer_trtllm")],
                    env: vec![fact("X", "yes")],
                },
                RoleFacts { role: "decode".into(), flags: vec![fact("fp4-gemm-backend", "auto")], env: vec![] },
            ],
            ..Default::default()
        }
    }

    fn when(yaml: &str) -> When {
        crate::rules::model::from_yaml(yaml).unwrap()
    }

    #[test]
    fn flags_are_per_role_and_env_falls_back_to_common() {
        let d = deployment();
        let c = when("all: [{flag: {name: fp4-gemm-backend, equals: flashinfer_trtllm}}, {env: {name: X, is: truthy}}]");
        let mut m = Vec::new();
        assert!(Ctx { deployment: &d, role: Some(&d.roles[0]) }.holds(&c, &mut m));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].role.as_deref(), Some("prefill"));
        let mut m = Vec::new();
        assert!(!Ctx { deployment: &d, role: Some(&d.roles[1]) }.holds(&c, &mut m));
        assert!(m.is_empty(), "a failed `all` leaves no matches behind");
        let falsy = when("env: {name: X, is: falsy}");
        assert!(Ctx { deployment: &d, role: Some(&d.roles[1]) }.holds(&falsy, &mut Vec::new()));
    }

    #[test]
    fn deployment_level_conditions_and_not() {
        let d = deployment();
        let ctx = Ctx { deployment: &d, role: Some(&d.roles[1]) };
        assert!(ctx.holds(&when("gpu_type: {in: [b200, gb200]}"), &mut Vec::new()));
        assert!(ctx.holds(&when("model: {matches: '(?i)dsr1|deepseek'}"), &mut Vec::new()));
        assert!(ctx.holds(&when("not: {flag: {name: quantization, is: set}}"), &mut Vec::new()));
        assert!(ctx.holds(&when("flag: {name: fp4-gemm-backend, role: prefill, in: [flashinfer_trtllm]}"), &mut Vec::new()));
        assert!(!ctx.holds(&when("precision: {in: [fp4]}"), &mut Vec::new()), "unknown precision is not fp4");
    }

    #[test]
    fn unknown_values_satisfy_no_equality() {
        let mut d = deployment();
        d.roles[1].flags[0].value = FactValue::Unknown;
        let ctx = Ctx { deployment: &d, role: Some(&d.roles[1]) };
        assert!(!ctx.holds(&when("flag: {name: fp4-gemm-backend, equals: auto}"), &mut Vec::new()));
        assert!(ctx.holds(&when("flag: {name: fp4-gemm-backend, is: set}"), &mut Vec::new()));
    }
}
