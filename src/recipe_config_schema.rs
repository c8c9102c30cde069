//! The role block of an srt-slurm recipe whose engine reads the role's `args`
//! as its YAML configuration file (`ArgsForm::YamlConfig`, TRT-LLM's LlmArgs),
//! as JSON Schema: the keys of [`EngineSurface::config_keys`](crate::surface::EngineSurface)
//! nested as the models nest them. A model that refuses unknown keys
//! (`extra="forbid"`) refuses them here too; one that drops them, or whose
//! policy is not known, leaves them open. A closed set (`Literal[...]`, an
//! enum) is an `enum`; a plain `int`/`float`/`bool`/`str` annotation is its
//! JSON type; anything else is not constrained (the schema says no more than
//! was read).

use crate::surface::{ConfigKey, ConfigUnion, ExtraPolicy, Known};
use serde_json::{json, Map, Value};

/// The schema of one role's `args` (`zip`: each value may also be a list of
/// values, one per sweep variant).
pub(crate) fn config_role(keys: &[ConfigKey], zip: bool) -> Value {
    let root_extra = keys.iter().find(|k| !k.path.contains('.')).map(|k| k.extra.clone()).unwrap_or(ExtraPolicy::Unknown);
    let mut role = object(keys, "", &root_extra, zip);
    role["type"] = json!(["object", "null"]);
    role["description"] = json!("Keys of the engine's YAML configuration file (nested maps as the models nest them).");
    // A YAML merge key (`<<: *prefill`), which srtctl's loader expands.
    let own = json!({"$ref": format!("#/definitions/{}", if zip { "zip_role" } else { "role" })});
    role["properties"]["<<"] = json!({"anyOf": [own, {"type": "array", "items": own}]});
    role
}

/// The object whose keys are the fields directly under `prefix`.
fn object(keys: &[ConfigKey], prefix: &str, extra: &ExtraPolicy, zip: bool) -> Value {
    // `prefix` is empty or ends with a dot: the fields under it have as many dots.
    let depth = prefix.matches('.').count();
    let mut properties = Map::new();
    for key in keys.iter().filter(|k| k.path.matches('.').count() == depth && k.path.starts_with(prefix)) {
        let name = key.path.rsplit('.').next().unwrap_or(&key.path);
        let children: Vec<&ConfigKey> = keys.iter().filter(|c| c.path.starts_with(&format!("{}.", key.path))).collect();
        let mut schema = match (&key.nested, children.first(), &key.union) {
            (Some(_), Some(child), _) => {
                let mut nested = object(keys, &format!("{}.", key.path), &child.extra, false);
                nested["type"] = json!(["object", "null"]);
                nested
            }
            (None, _, Some(union)) => union_object(keys, key, union),
            _ => leaf(key),
        };
        describe(&mut schema, key);
        let schema = if zip { json!({"anyOf": [schema.clone(), {"type": "array", "items": schema}]}) } else { schema };
        properties.insert(name.to_string(), schema.clone());
        for alias in &key.aliases {
            properties.insert(alias.clone(), schema.clone());
        }
    }
    let mut out = json!({"type": "object", "properties": properties});
    if *extra == ExtraPolicy::Forbid {
        out["additionalProperties"] = json!(false);
    }
    out
}

/// A union's value: the key that picks the member must name an entry of the
/// table, and with it the map holds that member's keys (its policy on
/// others). A value the engine tests before its table picks by more than the
/// value: its map is left open.
fn union_object(keys: &[ConfigKey], key: &ConfigKey, union: &ConfigUnion) -> Value {
    let spelled = |value: &str| -> Value {
        if union.lowercased {
            // The engine lowers the value first: any case names the entry.
            let pattern: String = value
                .chars()
                .map(|c| match (c.to_lowercase().next(), c.to_uppercase().next()) {
                    (Some(l), Some(u)) if l != u => format!("[{l}{u}]"),
                    _ => regex::escape(&c.to_string()),
                })
                .collect();
            json!({"type": "string", "pattern": format!("^{pattern}$")})
        } else {
            json!({"const": value})
        }
    };
    let mut cases = Vec::new();
    for member in &union.members {
        if union.is_branched(&member.value) {
            continue;
        }
        let path = ConfigUnion::member_path(&key.path, &member.value);
        let extra = keys.iter().find(|k| k.path.starts_with(&format!("{path}."))).map_or(ExtraPolicy::Unknown, |k| k.extra.clone());
        let mut then = object(keys, &format!("{path}."), &extra, false);
        // The key that picks the member is taken out before the member reads the rest.
        then["properties"][union.discriminator.as_str()] = json!({});
        cases.push(json!({
            "if": {"type": "object", "properties": {union.discriminator.as_str(): spelled(&member.value)}, "required": [union.discriminator]},
            "then": then,
        }));
    }
    let entries: Vec<Value> = union.members.iter().map(|m| spelled(&m.value)).collect();
    json!({
        "type": ["object", "null"],
        "properties": {union.discriminator.as_str(): {"anyOf": entries}},
        "allOf": cases,
    })
}

/// A key holding a value: its closed set or plain type, `null` where the
/// annotation allows `None`.
fn leaf(key: &ConfigKey) -> Value {
    let optional = key.type_name.contains("Optional") || key.type_name.contains("None");
    if let Some(Known::Value(choices)) = &key.choices {
        let mut values = choices.clone();
        if optional {
            values.push(Value::Null);
        }
        return json!({"enum": values});
    }
    let json_type = match key.type_name.trim() {
        "int" | "Optional[int]" | "int | None" => Some("integer"),
        "float" | "Optional[float]" | "float | None" => Some("number"),
        "bool" | "Optional[bool]" | "bool | None" => Some("boolean"),
        "str" | "Optional[str]" | "str | None" => Some("string"),
        _ => None,
    };
    match json_type {
        Some(t) if optional => json!({"type": [t, "null"]}),
        Some(t) => json!({"type": t}),
        None => json!({}),
    }
}

fn describe(schema: &mut Value, key: &ConfigKey) {
    let mut lines = vec![format!("`{}` of `{}`", key.type_name, key.model)];
    if let Some(status) = &key.status {
        lines.push(format!("status: {status}"));
    }
    if let Some(message) = key.deprecated.as_deref() {
        schema["deprecated"] = json!(true);
        lines.push(if message.is_empty() { "deprecated".to_string() } else { format!("deprecated: {message}") });
    }
    if let Some(Known::Value(default)) = &key.default {
        lines.push(format!("default: {default}"));
    }
    schema["description"] = json!(lines.join("; "));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::Evidence;

    fn key(path: &str, model: &str, ty: &str, extra: ExtraPolicy) -> ConfigKey {
        ConfigKey {
            path: path.into(),
            model: model.into(),
            type_name: ty.into(),
            choices: None,
            default: None,
            default_factory: None,
            aliases: Vec::new(),
            status: None,
            deprecated: None,
            extra,
            nested: None,
            union: None,
            checks: Vec::new(),
            evidence: Evidence { path: "llm_args.py".into(), line: 1 },
        }
    }

    fn keys() -> Vec<ConfigKey> {
        use ExtraPolicy::*;
        let mut kv = key("kv_cache_config", "TorchLlmArgs", "KvCacheConfig", Forbid);
        kv.nested = Some("KvCacheConfig".into());
        let mut dtype = key("kv_cache_config.dtype", "KvCacheConfig", "Literal[\"auto\", \"fp8\"]", Forbid);
        dtype.choices = Some(Known::Value(vec![json!("auto"), json!("fp8")]));
        let mut loose = key("loose", "TorchLlmArgs", "Optional[Loose]", Forbid);
        loose.nested = Some("Loose".into());
        let mut old = key("old_knob", "TorchLlmArgs", "Optional[int]", Forbid);
        old.deprecated = Some("Use kv_cache_config.dtype instead.".into());
        vec![
            key("max_batch_size", "TorchLlmArgs", "Optional[int]", Forbid),
            kv,
            dtype,
            key("kv_cache_config.free_gpu_memory_fraction", "KvCacheConfig", "Optional[float]", Forbid),
            loose,
            key("loose.enabled", "Loose", "bool", Ignore),
            old,
        ]
    }

    fn errors(schema: &Value, yaml: &str) -> usize {
        let mut root = json!({"definitions": {"role": schema.clone(), "zip_role": config_role(&keys(), true)}});
        root["$ref"] = json!("#/definitions/role");
        let instance: Value = serde_yaml_ng::from_str(yaml).unwrap();
        jsonschema::validator_for(&root).unwrap().iter_errors(&instance).count()
    }

    /// A union picked by `kind` (lowered first): each member's keys and policy
    /// once `kind` names it; a value the engine tests before its table is open.
    #[test]
    fn a_union_holds_each_members_keys_once_its_key_names_it() {
        use crate::surface::{Evidence, UnionMember};
        use ExtraPolicy::*;
        let mut field = key("attention", "TorchLlmArgs", "AttentionConfig", Forbid);
        field.union = Some(ConfigUnion {
            discriminator: "kind".into(),
            members: vec![
                UnionMember { value: "local".into(), model: "Local".into() },
                UnionMember { value: "wide".into(), model: "Wide".into() },
                UnionMember { value: "legacy".into(), model: "Local".into() },
            ],
            lowercased: true,
            branched: vec!["legacy".into()],
            evidence: Evidence { path: "llm_args.py".into(), line: 9 },
        });
        let keys = vec![
            field,
            key("attention[local].radius", "Local", "int", Forbid),
            key("attention[wide].stride", "Wide", "int", Ignore),
            key("attention[legacy].radius", "Local", "int", Forbid),
        ];
        let root =
            json!({"definitions": {"role": config_role(&keys, false), "zip_role": config_role(&keys, true)}, "$ref": "#/definitions/role"});
        let validator = jsonschema::validator_for(&root).unwrap();
        let errors = |yaml: &str| validator.iter_errors(&serde_yaml_ng::from_str::<Value>(yaml).unwrap()).count();
        assert_eq!(errors("attention: {kind: local, radius: 4}"), 0);
        assert_eq!(errors("attention: {kind: LOCAL, radius: 4}"), 0, "the engine lowers the value");
        assert!(errors("attention: {kind: local, radius: many}") > 0, "the member's type");
        assert!(errors("attention: {kind: local, stride: 2}") > 0, "`Local` forbids another member's key");
        assert_eq!(errors("attention: {kind: wide, anything: 2}"), 0, "`Wide` drops unknown keys");
        assert!(errors("attention: {kind: dense}") > 0, "not in the table");
        assert_eq!(errors("attention: {kind: legacy, anything: 2}"), 0, "tested before the table: open");
        assert_eq!(errors("attention: null"), 0);
    }

    #[test]
    fn nested_keys_values_and_extra_policies_are_held() {
        let role = config_role(&keys(), false);
        assert_eq!(errors(&role, "max_batch_size: 8\nkv_cache_config:\n  dtype: fp8\n  free_gpu_memory_fraction: 0.8\n"), 0);
        assert_eq!(errors(&role, "kv_cache_config:\n  dtypee: fp8\n"), 1, "a forbidding model refuses a misspelt key");
        assert_eq!(errors(&role, "kv_cache_config:\n  dtype: fp16\n"), 1, "a value outside the Literal");
        assert_eq!(errors(&role, "max_batch_size: many\n"), 1);
        assert_eq!(errors(&role, "max_batch_sizee: 8\n"), 1, "the root model forbids extras");
        assert_eq!(errors(&role, "loose:\n  whatever: 1\n"), 0, "a model that drops unknown keys leaves them open");
        assert_eq!(role["properties"]["old_knob"]["deprecated"], json!(true));
        let zip = config_role(&keys(), true);
        assert_eq!(errors(&zip, "kv_cache_config:\n  - {dtype: fp8}\n  - {dtype: auto}\n"), 0, "a sweep lists one value per variant");
    }
}
