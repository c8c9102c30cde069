//! The keys of the engine's YAML configuration file a role writes (TRT-LLM's
//! LlmArgs behind `--config`) against the target's models, by dotted path:
//! a key the model has no field (nor alias) for (EA001: refused at start-up
//! where the model forbids extras, silently dropped where it ignores them,
//! said "could not be read" where its policy was not read), a deprecated field
//! whose message names its successor (EA003), a value outside a `Literal`/enum
//! (EA005) or of the wrong plain type (EA006). A target whose keys could not
//! be read leaves the role's keys unchecked, and says so (EA306): never clean.
//!
//! Keys below a union picked by one of its keys through a table in the source
//! (TRT-LLM's `speculative_config: {decoding_type: MTP, ...}`) are checked
//! against the member the role's value picks; a value outside the table is
//! EA005. Keys below a field that nests no model the source picks statically
//! (a union pydantic picks at run time, a dict, a value the code tests before
//! its table) are the engine's to interpret: they are not checked.

use super::values::render_choices;
use super::Bump;
use crate::codes::Severity;
use crate::finding::{EvidenceRef, Finding, FindingKind, Fix, FixAction, KeyPolicy, KeyProblem, Location};
use crate::recipe::yaml::ScalarType;
use crate::recipe::{ConfigUse, ConfigValue, Deployment, RecipeFile, RoleConfig};
use crate::surface::{CheckOutcome, ConfigKey, ConfigUnion, EngineSurface, ExtraPolicy, Known, PyValue, TestedValue, UnionMember};
use std::collections::HashMap;

/// Every role's configuration keys against the target; `file` is where the
/// fixes edit (the recipe the deployment was read from).
pub(crate) fn check_deployment(file: &RecipeFile, dep: &Deployment, bump: Bump, out: &mut Vec<Finding>) {
    check_in(Some(file), dep, bump, out)
}

fn check_in(file: Option<&RecipeFile>, dep: &Deployment, bump: Bump, out: &mut Vec<Finding>) {
    let Some(profile) = crate::profiles::by_id(&bump.to.engine).and_then(|p| p.server.as_ref()).and_then(|s| s.config_file.as_ref()) else {
        return;
    };
    let models = Models::new(bump.to, profile.class);
    for role in dep.roles.iter().filter(|r| !r.config.is_empty()) {
        let mut found = Vec::new();
        match (bump.to.config_keys.is_empty(), role.config.first()) {
            (true, Some(first)) => found.push(unchecked(role, first, bump, profile.module, profile.class)),
            _ => check_role(file, role, &models, bump, &mut found),
        }
        out.extend(found.into_iter().map(|f| f.role(Some(&role.role)).deployment(&dep.name).variant(dep.variant.as_deref())));
    }
}

/// The keys a deployment writes that the target's models lack: what the
/// release history is asked about.
pub(crate) fn unknown_keys(dep: &Deployment, bump: Bump) -> std::collections::BTreeSet<String> {
    let mut found = Vec::new();
    check_in(None, dep, bump, &mut found);
    found
        .into_iter()
        .filter_map(|f| match f.kind {
            FindingKind::ConfigKey { key, problem: KeyProblem::Unknown { .. }, .. } => Some(key),
            _ => None,
        })
        .collect()
}

/// The target's keys, by the model path that holds them.
struct Models<'s> {
    /// Parent path (`""` for the root model) → its fields.
    children: HashMap<&'s str, Vec<&'s ConfigKey>>,
    root: &'s str,
}

impl<'s> Models<'s> {
    fn new(surface: &'s EngineSurface, root: &'s str) -> Models<'s> {
        let mut children: HashMap<&str, Vec<&ConfigKey>> = HashMap::new();
        for key in &surface.config_keys {
            children.entry(parent_of(&key.path)).or_default().push(key);
        }
        Models { children, root }
    }

    /// The field of the model at `parent` that `name` sets: its own name, or an alias.
    fn field(&self, parent: &str, name: &str) -> Option<&'s ConfigKey> {
        let fields = self.children.get(parent)?;
        fields.iter().find(|k| last_of(&k.path) == name).or_else(|| fields.iter().find(|k| k.aliases.iter().any(|a| a == name))).copied()
    }

    /// What the model at `parent` does with a key it has no field for: every
    /// field read of one model carries the model's own policy.
    fn policy(&self, parent: &str) -> ExtraPolicy {
        self.children.get(parent).and_then(|f| f.first()).map_or(ExtraPolicy::Unknown, |k| k.extra.clone())
    }

    /// The names a key of the model at `parent` may be written as.
    fn names(&self, parent: &str) -> Vec<&'s str> {
        let fields = self.children.get(parent).map_or(&[][..], Vec::as_slice);
        fields.iter().map(|k| last_of(&k.path)).chain(fields.iter().flat_map(|k| k.aliases.iter().map(String::as_str))).collect()
    }
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(p, _)| p)
}

fn last_of(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(_, n)| n)
}

/// Where each written key stands at the target: the field it sets, or
/// nothing below it can be checked (it is unknown, or it nests no model).
enum Resolved<'s> {
    Field(&'s ConfigKey),
    Opaque,
}

impl<'s> Resolved<'s> {
    fn field(&self) -> Option<&'s ConfigKey> {
        match self {
            Resolved::Field(key) => Some(key),
            Resolved::Opaque => None,
        }
    }
}

fn check_role(file: Option<&RecipeFile>, role: &RoleConfig, models: &Models, bump: Bump, out: &mut Vec<Finding>) {
    let mut resolved: HashMap<&str, Resolved> = HashMap::new();
    for u in &role.config {
        let (parent_written, name) = u.parent_and_name();
        // The model path that holds this key, as the target spells it; `None`
        // when nothing below the parent can be checked.
        let holder: Option<(String, String)> = match parent_written {
            "" => Some((String::new(), models.root.to_string())),
            written => resolved.get(written).and_then(Resolved::field).and_then(|key| match (&key.nested, &key.union) {
                (Some(model), _) => Some((key.path.clone(), model.clone())),
                // The key that picks the member: taken out before the member reads the rest.
                (None, Some(union)) if name == union.discriminator => {
                    out.extend(check_discriminator(u, key, union, bump));
                    None
                }
                (None, Some(union)) => {
                    picked(role, written, union).map(|m| (ConfigUnion::member_path(&key.path, &m.value), m.model.clone()))
                }
                (None, None) => None,
            }),
        };
        let Some((parent, model)) = holder else {
            resolved.insert(&u.path, Resolved::Opaque);
            continue;
        };
        match models.field(&parent, name) {
            Some(key) => {
                resolved.insert(&u.path, Resolved::Field(key));
                out.extend(deprecated(file, role, u, key, models, bump));
                out.extend(check_value(u, key, bump));
            }
            None => {
                resolved.insert(&u.path, Resolved::Opaque);
                out.push(unknown(u, &parent, &model, models, bump));
            }
        }
    }
}

/// The member of a union the role's map at `written` picks: by the value it
/// writes for the union's key, when that value is known and picks by the
/// table alone. `None` leaves the keys under it unchecked (no key written,
/// a value not known or not in the table, which [`check_discriminator`] reports).
fn picked<'u>(role: &RoleConfig, written: &str, union: &'u ConfigUnion) -> Option<&'u UnionMember> {
    let at = format!("{written}.{}", union.discriminator);
    let text = role.config.iter().find_map(|c| match &c.value {
        ConfigValue::Scalar { text, .. } if c.path == at => Some(text),
        _ => None,
    })?;
    (!union.is_branched(text)).then(|| union.member(text)).flatten()
}

/// EA005: the union's key names no entry of the engine's table (the engine
/// raises at start-up: no model to build).
fn check_discriminator(u: &ConfigUse, key: &ConfigKey, union: &ConfigUnion, bump: Bump) -> Option<Finding> {
    let ConfigValue::Scalar { text, .. } = &u.value else { return None };
    if union.member(text).is_some() || union.is_branched(text) {
        return None;
    }
    let choices: Vec<PyValue> = union.members.iter().map(|m| PyValue::String(m.value.clone())).collect();
    let problem = KeyProblem::Choice { value: text.clone(), choices: render_choices(&choices) };
    let kind = FindingKind::ConfigKey { key: u.path.clone(), target: bump.target_ref().to_string(), problem };
    let note = format!("`{}` picks its model by `{}` from this table", key.path, union.discriminator);
    Some(
        Finding::new(kind, Location::from_span(&u.value_span), &u.path)
            .evidence(EvidenceRef::new(&union.evidence, bump.target_ref()).with_note(note)),
    )
}

/// EA001: a key the model has no field for.
fn unknown(u: &ConfigUse, parent: &str, model: &str, models: &Models, bump: Bump) -> Finding {
    let name = u.name();
    let path = if parent.is_empty() { name.to_string() } else { format!("{parent}.{name}") };
    let policy = match models.policy(parent) {
        ExtraPolicy::Forbid => KeyPolicy::Refused,
        ExtraPolicy::Ignore => KeyPolicy::Ignored,
        ExtraPolicy::Allow => KeyPolicy::Kept,
        ExtraPolicy::Unknown => KeyPolicy::Unread,
    };
    // The last release (the current one, or one of the history) whose model had it.
    let last = bump
        .history
        .and_then(|h| h.last_config_key(&path))
        .or_else(|| bump.from.and_then(|f| f.config_keys.iter().find(|k| k.path == path).map(|k| (k, f.ref_name.as_str()))));
    let names = models.names(parent);
    let suggestion = match last {
        Some(_) => None,
        None => crate::spelling::closest(name, names.iter().copied(), 0.8, 1).first().map(|s| s.to_string()),
    };
    let kind = FindingKind::ConfigKey {
        key: u.path.clone(),
        target: bump.target_ref().to_string(),
        problem: KeyProblem::Unknown {
            model: model.to_string(),
            policy,
            suggestion: suggestion.clone(),
            last: last.map(|(k, at)| (k.model.clone(), at.to_string())),
        },
    };
    let severity = match policy {
        // Refused, or possibly refused: the server may not start.
        KeyPolicy::Refused | KeyPolicy::Unread => Severity::Error,
        KeyPolicy::Ignored | KeyPolicy::Kept => Severity::Warning,
    };
    let mut finding = Finding::new(kind, Location::from_span(&u.key_span), &u.path).severity(severity);
    // Evidence: a field of the same model at the target (where the model is), and the field where it last was.
    if let Some(sibling) = models.children.get(parent).and_then(|f| f.first()) {
        let note = format!("the first of the {} keys `{model}` takes", names.len());
        finding = finding.evidence(EvidenceRef::new(&sibling.evidence, bump.target_ref()).with_note(note));
    }
    if let Some((key, at)) = last {
        finding = finding.evidence(EvidenceRef::new(&key.evidence, at).with_note(format!("`{path}` declared here")));
    }
    finding.fix(suggestion.map(|name| Fix::advice(FixAction::DidYouMean { name })))
}

/// EA003: a deprecated field whose message names a successor the target has.
/// The fix renames the key in place when the successor is a field of the same
/// model with the same type (the value carries over) that the role does not
/// set already; else (a key of another map, a nested model, another type)
/// it is advice.
fn deprecated(
    file: Option<&RecipeFile>,
    role: &RoleConfig,
    u: &ConfigUse,
    key: &ConfigKey,
    models: &Models,
    bump: Bump,
) -> Option<Finding> {
    let message = key.deprecated.as_deref()?;
    let parent = parent_of(&key.path);
    // The successor: a word of the message that is another key of the target,
    // written from the root (`moe_config.backend`) or beside this one.
    let replacement = message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty() && *w != last_of(&key.path) && *w != key.path)
        .find_map(|w| {
            let full = match w.split_once('.') {
                Some(_) => w.to_string(),
                None if parent.is_empty() => w.to_string(),
                None => format!("{parent}.{w}"),
            };
            models.field(parent_of(&full), last_of(&full)).filter(|k| k.path == full && k.deprecated.is_none()).map(|k| k.path.clone())
        })?;
    let kind = FindingKind::ConfigKey {
        key: u.path.clone(),
        target: bump.target_ref().to_string(),
        problem: KeyProblem::Deprecated { replacement: replacement.clone(), upstream: Some(message.to_string()) },
    };
    let ev = EvidenceRef::new(&key.evidence, bump.target_ref()).with_note(format!("`{}` deprecated: \"{message}\"", key.path));
    let successor = models.field(parent_of(&replacement), last_of(&replacement));
    let fix = match (file, successor) {
        (Some(file), Some(new)) if in_place(role, u, key, new) => {
            let (written_parent, _) = u.parent_and_name();
            let written =
                if written_parent.is_empty() { last_of(&new.path).to_string() } else { format!("{written_parent}.{}", last_of(&new.path)) };
            let edits = file.rename_key(&u.key_span, &u.shadowed, u.name(), last_of(&new.path));
            Fix { actions: vec![FixAction::Replace { old: u.path.clone(), new: written }], edits }
        }
        _ => Fix::advice(FixAction::Replace { old: u.path.clone(), new: replacement }),
    };
    Some(Finding::new(kind, Location::from_span(&u.key_span), &u.path).evidence(ev).fix(Some(fix)))
}

/// Whether `u` (the deprecated `old`) can become `new` by renaming its key: a
/// field of the same model, of the same type, holding no model, with a scalar
/// value written, and not set by the role already (a rename would write it
/// twice, and which value wins is the author's to say).
fn in_place(role: &RoleConfig, u: &ConfigUse, old: &ConfigKey, new: &ConfigKey) -> bool {
    let (written_parent, _) = u.parent_and_name();
    let sets_new = role.config.iter().any(|o| {
        let (p, n) = o.parent_and_name();
        p == written_parent && (n == last_of(&new.path) || new.aliases.iter().any(|a| a == n))
    });
    parent_of(&old.path) == parent_of(&new.path)
        && new.nested.is_none()
        && bare_type(&old.type_name) == bare_type(&new.type_name)
        && matches!(u.value, ConfigValue::Scalar { .. })
        && !sets_new
}

/// An annotation without `Optional[...]` and spaces: `Optional[int]` and `int` alike.
fn bare_type(annotation: &str) -> String {
    let compact: String = annotation.chars().filter(|c| !c.is_whitespace()).collect();
    match compact.strip_prefix("Optional[").and_then(|r| r.strip_suffix(']')) {
        Some(inner) => inner.to_string(),
        None => compact.strip_suffix("|None").map_or(compact.clone(), str::to_string),
    }
}

/// EA005 / EA006: a scalar value against the field's closed set or plain
/// type, then against its validators' guards.
fn check_value(u: &ConfigUse, key: &ConfigKey, bump: Bump) -> Option<Finding> {
    let ConfigValue::Scalar { text, ty, .. } = &u.value else { return None };
    let problem = match &key.choices {
        Some(Known::Value(choices)) => (!choices.iter().any(|c| matches_choice(text, ty, c)))
            .then(|| KeyProblem::Choice { value: text.clone(), choices: render_choices(choices) }),
        Some(Known::Dynamic { .. }) => None,
        None => type_problem(text, ty, &key.type_name),
    };
    let Some(problem) = problem else { return rejected(u, key, text, ty, bump) };
    let note = format!("`{}: {}` declared here", key.path, key.type_name);
    let kind = FindingKind::ConfigKey { key: u.path.clone(), target: bump.target_ref().to_string(), problem };
    Some(
        Finding::new(kind, Location::from_span(&u.value_span), &u.path)
            .evidence(EvidenceRef::new(&key.evidence, bump.target_ref()).with_note(note)),
    )
}

/// EA006: a validator of the field raises on the value. The validators run
/// in order; one whose outcome cannot be known, or that may hand on another
/// value, ends what can be said.
fn rejected(u: &ConfigUse, key: &ConfigKey, text: &str, ty: &ScalarType, bump: Bump) -> Option<Finding> {
    let value = match ty {
        ScalarType::Int | ScalarType::Float => text.parse::<f64>().map_or(TestedValue::Other, TestedValue::Number),
        ScalarType::Null => TestedValue::None,
        _ => TestedValue::Other,
    };
    let (check, guard) = key.checks.iter().find_map(|check| match check.outcome(value) {
        CheckOutcome::Rejected(guard) => Some(Some((check, guard))),
        CheckOutcome::Accepted => None,
        CheckOutcome::PastGuards | CheckOutcome::Unknown => Some(None),
    })??;
    let problem = KeyProblem::Rejected {
        value: text.to_string(),
        validator: check.function.clone(),
        test: guard.text.clone(),
        message: guard.message.clone(),
    };
    let note = format!("`{}` raises when `{}`", check.function, guard.text);
    let kind = FindingKind::ConfigKey { key: u.path.clone(), target: bump.target_ref().to_string(), problem };
    Some(
        Finding::new(kind, Location::from_span(&u.value_span), &u.path)
            .evidence(EvidenceRef::new(&guard.evidence, bump.target_ref()).with_note(note)),
    )
}

/// Whether pydantic takes the YAML value for a `Literal`/enum member: the
/// loader's type must match (a YAML `4` is not `Literal["4"]`).
fn matches_choice(text: &str, ty: &ScalarType, choice: &PyValue) -> bool {
    match (ty, choice) {
        (ScalarType::Str, PyValue::String(s)) => s == text,
        (ScalarType::Int | ScalarType::Float, PyValue::Number(n)) => text.parse::<f64>().ok().zip(n.as_f64()).is_some_and(|(a, b)| a == b),
        (ScalarType::Bool(b), PyValue::Bool(c)) => b == c,
        _ => false,
    }
}

/// EA006 for the plain types pydantic converts in lax mode: only a value no
/// conversion takes (`int` from `"16k"`), never a guess at a custom type.
fn type_problem(text: &str, ty: &ScalarType, annotation: &str) -> Option<KeyProblem> {
    let plain = plain_type(annotation)?;
    let bad = match (plain, ty) {
        (_, ScalarType::Null) => false,
        ("int", ScalarType::Str) => text.trim().parse::<i64>().is_err(),
        ("int", ScalarType::Float) => text.parse::<f64>().is_ok_and(|f| f.fract() != 0.0),
        ("float", ScalarType::Str) => text.trim().parse::<f64>().is_err(),
        ("bool", ScalarType::Str) => !matches!(
            text.trim().to_ascii_lowercase().as_str(),
            "0" | "1" | "true" | "false" | "t" | "f" | "yes" | "no" | "y" | "n" | "on" | "off"
        ),
        ("bool", ScalarType::Int) => !matches!(text, "0" | "1"),
        ("bool", ScalarType::Float) => !matches!(text.parse::<f64>(), Ok(f) if f == 0.0 || f == 1.0),
        _ => false,
    };
    let expects = match plain {
        "int" => "an integer",
        "float" => "a number",
        _ => "a boolean",
    };
    bad.then(|| KeyProblem::Type { value: text.to_string(), expects: expects.to_string() })
}

/// `int`, `float` or `bool` when the annotation is one of them (or the
/// constrained forms pydantic names), optionally `Optional`.
fn plain_type(annotation: &str) -> Option<&'static str> {
    let a = annotation.trim();
    let a = a.strip_prefix("Optional[").and_then(|r| r.strip_suffix(']')).unwrap_or(a);
    let a = a.strip_suffix("| None").or_else(|| a.strip_suffix("|None")).unwrap_or(a).trim();
    match a {
        "int" | "PositiveInt" | "NonNegativeInt" | "StrictInt" => Some("int"),
        "float" | "PositiveFloat" | "NonNegativeFloat" => Some("float"),
        "bool" | "StrictBool" => Some("bool"),
        _ => None,
    }
}

/// EA306: the target's keys were not read, so none of the role's was checked.
fn unchecked(role: &RoleConfig, first: &ConfigUse, bump: Bump, module: &str, class: &str) -> Finding {
    let module_file = format!("{}.py", module.replace('.', "/"));
    let why = bump
        .to
        .warnings
        .iter()
        .find(|w| w.path.ends_with(&module_file))
        .map(|w| format!("{}: {}", w.path, w.message))
        .unwrap_or_else(|| format!("no field of `{class}` was read (is `{module_file}` in the tree?)"));
    let kind = FindingKind::ConfigKey {
        key: role.role.clone(),
        target: bump.target_ref().to_string(),
        problem: KeyProblem::Unchecked { count: role.config.len(), reason: why },
    };
    // Fail closed: what the server would refuse at start-up is not known.
    Finding::new(kind, Location::from_span(&first.key_span), &role.role).severity(Severity::Error)
}

/// EA007 for configuration keys: a key whose known default changed over the
/// bump (neither side deprecated, neither made by a factory) that a role of
/// the deployment does not write, said once per recipe family, key and bump
/// (`seen` is shared with the flags' EA007), on the first such role. Each role
/// is its own server with its own file, so one role setting the key does not
/// set it for another. A key below a map the role writes as something else
/// than a map (`kv_cache_config: null`) is the role's choice: not reported.
pub(crate) fn changed_defaults(
    file: &RecipeFile,
    dep: &Deployment,
    bump: Bump,
    seen: &mut std::collections::BTreeSet<(String, String, Option<String>, String)>,
    out: &mut Vec<Finding>,
) {
    let Some(from) = bump.from else { return };
    if from.ref_name == bump.to.ref_name || bump.to.config_keys.is_empty() || from.config_keys.is_empty() {
        return;
    }
    let family = std::path::Path::new(&file.path).parent().map(|p| p.display().to_string()).filter(|d| !d.is_empty()).unwrap_or(".".into());
    for new in bump.to.config_keys.iter().filter(|k| k.deprecated.is_none() && k.default_factory.is_none()) {
        let Some(old) = from.config_keys.iter().find(|k| k.path == new.path && k.deprecated.is_none() && k.default_factory.is_none())
        else {
            continue;
        };
        let (Some(Known::Value(a)), Some(Known::Value(b))) = (&old.default, &new.default) else { continue };
        if a == b {
            continue;
        }
        // A key of a union's member counts for a role that picks that member only.
        // Said as the role writes it (`speculative_config.max_draft_len`).
        let Some((role, written)) =
            dep.roles.iter().find_map(|r| written_path(r, &bump.to.config_keys, &new.path).filter(|w| !writes(r, new, w)).map(|w| (r, w)))
        else {
            continue;
        };
        if !seen.insert((family.clone(), new.path.clone(), bump.current_ref().map(str::to_string), bump.target_ref().to_string())) {
            continue;
        }
        let at = role.span.as_ref().map(Location::from_span).unwrap_or(Location {
            path: file.path.clone(),
            line: 1,
            column: 1,
            offset: None,
            len: None,
        });
        let (a, b) = (serde_json::to_string(a).unwrap_or_default(), serde_json::to_string(b).unwrap_or_default());
        let note = format!("`{}` defaults to {b} here", new.path);
        let kind = FindingKind::DefaultChanged { option: written.clone(), family: family.clone(), bump: bump.label(), old: a, new: b };
        out.push(
            Finding::new(kind, at, &written)
                .role(Some(&role.role))
                .deployment(&dep.name)
                .variant(dep.variant.as_deref())
                .evidence(EvidenceRef::new(&new.evidence, bump.target_ref()).with_note(note)),
        );
    }
}

/// Whether `role` writes `key` (by its name or an alias) at `written` (its
/// path as the role writes it), or a parent of it as something else than a
/// map (the role then decides the whole value).
fn writes(role: &RoleConfig, key: &ConfigKey, written: &str) -> bool {
    let (parent, name) = (parent_of(written), last_of(written));
    role.config.iter().any(|u| {
        let (p, n) = u.parent_and_name();
        (p == parent && (n == name || key.aliases.iter().any(|a| a == n)))
            || (written.starts_with(&format!("{}.", u.path)) && !matches!(u.value, ConfigValue::Map))
    })
}

/// A key's model path as `role` writes it: each union member on the way
/// (`speculative_config[MTP]`) must be the one the role picks; `None` when it
/// is not (the key is none of the role's).
fn written_path(role: &RoleConfig, keys: &[ConfigKey], path: &str) -> Option<String> {
    let mut model = String::new();
    let mut written = String::new();
    for part in path.split('.') {
        let (name, value) = match part.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']')?)),
            None => (part, None),
        };
        let join = |prefix: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
        let (field_model, field_written) = (join(&model), join(&written));
        if let Some(value) = value {
            let union = keys.iter().find(|k| k.path == field_model).and_then(|k| k.union.as_ref())?;
            (picked(role, &field_written, union)?.value == value).then_some(())?;
        }
        model = match value {
            Some(value) => ConfigUnion::member_path(&field_model, value),
            None => field_model,
        };
        written = field_written;
    }
    Some(written)
}
