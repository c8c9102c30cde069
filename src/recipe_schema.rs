//! One release's server flags as a JSON Schema for srt-slurm recipes
//! (`surface --format json-schema`): yaml-language-server completes the flags
//! of schema-2 `roles.<role>.args` and legacy `backend.<engine>_config.<role>`
//! blocks and underlines what the release's parser would refuse, before CI runs.
//!
//! The schema says what the audit says at that release, no more: a value is
//! judged as `check::flags` judges it (through `check::values`, the same
//! functions), so an editor and `engine-audit audit` agree. In detail:
//!
//! - keys: every `--` option string without its dashes, in any `-`/`_`
//!   spelling (srtctl turns `_` into `-`); any other key is refused unless its
//!   value is `false` or `null` (srtctl does not pass it, so the audit does
//!   not judge it), abbreviations too (the audit's EA009: write the full
//!   name). An option string registered with `_` cannot be reached through
//!   srtctl and is left out.
//! - values: `null` and `false` (not passed) always; `true` where the flag
//!   takes no value; one value or a list within the flag's arity; a value
//!   among `choices` (and the choices an env var adds); an `int`/`float` that
//!   converts. Flags deprecated as an alias, a no-op or removed take any value
//!   (the audit reports the deprecation, not the value) and carry
//!   `deprecated: true` with a description naming the replacement.
//! - override-format recipes: `base`, `override_*` (whose `null` deletes a
//!   key) and `zip_override_*` (whose lists are sweep axes: each item is one
//!   variant's value).
//!
//! An engine srtctl hands a role's args as a YAML configuration file
//! (`ArgsForm::YamlConfig`) gets the keys of that file instead of flags
//! ([`recipe_config_schema`](crate::recipe_config_schema)).
//!
//! Draft 7, as yaml-language-server reads it.

use crate::check::values::{arity, known_choices};
use crate::surface::{EngineSurface, Flag, FlagDeprecationKind, Known, PyValue};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// A Rust `str::parse::<i64>` after `trim()`, as `check::values::type_error` takes an `int`.
const INT_TEXT: &str = r"^\s*[+-]?[0-9]+\s*$";
/// What `check::values::type_error` takes as a `float`: Rust's `f64` syntax
/// (`1`, `1.`, `.5`, `1e-3`, `inf`, `infinity`, `nan` in any case), trimmed.
const FLOAT_TEXT: &str = r"^\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN])\s*$";

/// The schema of an srt-slurm recipe's `backend.<config_key>` role blocks for
/// the flags of `surface` (`config_key`: `sglang_config`).
pub(crate) fn srt_slurm_schema(surface: &EngineSurface, config_key: &str) -> Value {
    let (definitions, keys) = flag_definitions(surface);
    let dotted = dotted_keys(surface);
    let role = |zip: bool| {
        let reference = |def: &str| {
            let one = json!({"$ref": format!("#/definitions/{def}")});
            if zip {
                json!({"anyOf": [one, {"type": "array", "items": one}]})
            } else {
                one
            }
        };
        let mut properties: Map<String, Value> = keys.iter().map(|(key, def)| (key.clone(), reference(def))).collect();
        // A YAML merge key (`<<: *prefill`, which srtctl's loader expands, as the
        // audit does): its maps are this role's flags, judged the same way.
        let own = json!({"$ref": format!("#/definitions/{}", if zip { "zip_role" } else { "role" })});
        properties.insert("<<".into(), json!({"anyOf": [own, {"type": "array", "items": own}]}));
        // Mixed spellings (`cuda_graph-max-bs`): srtctl takes them too.
        let mut patterns: Map<String, Value> = keys
            .iter()
            .filter(|(key, _)| key.matches('-').count() >= 2)
            .map(|(key, def)| (spellings_pattern(key), reference(def)))
            .collect();
        patterns.extend(dotted.iter().map(|(pattern, schema)| (pattern.clone(), schema.clone())));
        // A key the parser does not know is harmless only when srtctl does not pass it.
        let not_passed = json!({"enum": [false, null]});
        let unknown = match zip {
            true => json!({"anyOf": [not_passed, {"type": "array", "items": not_passed}]}),
            false => not_passed,
        };
        let mut unknown = unknown;
        unknown["description"] = json!("Not an option of this release (nor an abbreviation written in full): only `false` or `null`, which srtctl does not pass, is harmless.");
        json!({
            "type": ["object", "null"],
            "description": "Flags of one role: each becomes `--flag value` on the server's command line (`true`: the bare flag; `false`, `null`: not passed; a list: several values).",
            "properties": properties,
            "patternProperties": patterns,
            "additionalProperties": unknown
        })
    };
    let backend = |role_def: &str| {
        json!({
            "type": ["object", "null"],
            "properties": {
                config_key: {
                    "type": ["object", "null"],
                    "description": "Server flags per role (`prefill`, `decode`, `aggregated`, ...).",
                    "additionalProperties": {"$ref": format!("#/definitions/{role_def}")}
                }
            }
        })
    };
    // Schema 2: `roles.<role>.args` holds the same flags.
    let roles = |role_def: &str| {
        json!({
            "type": ["object", "null"],
            "description": "Worker roles (`prefill`, `decode`, `agg`): each role's `args` are its server flags.",
            "additionalProperties": {
                "type": ["object", "null"],
                "properties": {"args": {"$ref": format!("#/definitions/{role_def}")}}
            }
        })
    };
    let fragment = |backend_def: &str, roles_def: &str| {
        json!({"type": ["object", "null"], "properties": {
            "backend": {"$ref": format!("#/definitions/{backend_def}")},
            "roles": {"$ref": format!("#/definitions/{roles_def}")}
        }})
    };
    let mut definitions = definitions;
    // An engine that reads a role's args as its YAML configuration file
    // (TRT-LLM's LlmArgs) is held to that file's keys, not to its flags.
    // (No key read leaves the role open: unknown, not empty.)
    let yaml_args = crate::profiles::recipe_engine(&surface.engine).is_some_and(|e| e.args == crate::profiles::ArgsForm::YamlConfig);
    let role = |zip: bool| match yaml_args {
        false => role(zip),
        true => crate::recipe_config_schema::config_role(&surface.config_keys, zip),
    };
    definitions.insert("role".into(), role(false));
    definitions.insert("zip_role".into(), role(true));
    definitions.insert("backend".into(), backend("role"));
    definitions.insert("zip_backend".into(), backend("zip_role"));
    definitions.insert("roles".into(), roles("role"));
    definitions.insert("zip_roles".into(), roles("zip_role"));
    let version = surface.version.as_deref().map(|v| format!(", version {v}")).unwrap_or_default();
    let commit = surface.commit.as_deref().map(|c| format!(" (commit {c})")).unwrap_or_default();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": format!("srt-slurm recipe: {} flags of {} {}{version}", config_key, surface.engine, surface.ref_name),
        "description": format!(
            "Generated by `engine-audit surface --{} REPO --at {} --format json-schema`{commit}. Checks the flags of schema-2 `roles.<role>.args` and legacy `backend.{config_key}` role blocks (and those of `base`, `override_*`, `zip_override_*`) against that release's parser; the rest of the recipe is not constrained.",
            surface.engine, surface.ref_name
        ),
        "type": "object",
        "properties": {
            "backend": {"$ref": "#/definitions/backend"},
            "roles": {"$ref": "#/definitions/roles"},
            "base": fragment("backend", "roles")
        },
        "patternProperties": {
            "^override_": fragment("backend", "roles"),
            "^zip_override_": fragment("zip_backend", "zip_roles")
        },
        "definitions": definitions
    })
}

/// One definition per flag (`flag:tp-size`), and every accepted key with the
/// definition it uses. An option string registered twice is the first
/// registration's, as argparse (and `EngineSurface::flag`) takes it.
fn flag_definitions(surface: &EngineSurface) -> (Map<String, Value>, BTreeMap<String, String>) {
    let mut definitions = Map::new();
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    for flag in &surface.flags {
        let reachable: Vec<&str> =
            flag.names.iter().filter_map(|n| n.strip_prefix("--")).filter(|n| !n.is_empty() && !n.contains('_')).collect();
        let Some(first) = reachable.first() else { continue };
        let mut def = format!("flag:{first}");
        while definitions.contains_key(&def) {
            def.push('\'');
        }
        let mut used = false;
        for name in &reachable {
            for key in [name.to_string(), name.replace('-', "_")] {
                if let std::collections::btree_map::Entry::Vacant(slot) = keys.entry(key) {
                    slot.insert(def.clone());
                    used = true;
                }
            }
        }
        if used {
            definitions.insert(def, flag_schema(flag, &surface.ref_name));
        }
    }
    (definitions, keys)
}

/// Where the parser gathers `--opt.key value` into one key of `--opt`'s JSON
/// value (`ParserFacts::rewrites.dotted_keys`), a `opt.key:` entry sets that
/// piece (what `--fix` writes for `--logging-config.pylogging_config_file`):
/// one pattern per option, in any spelling, whose value the audit does not
/// judge; a deprecated option's pieces carry its deprecation.
fn dotted_keys(surface: &EngineSurface) -> Vec<(String, Value)> {
    if !surface.parser.rewrites.dotted_keys {
        return Vec::new();
    }
    let mut out: Vec<(String, Value)> = Vec::new();
    for flag in &surface.flags {
        for name in flag.names.iter().filter_map(|n| n.strip_prefix("--")).filter(|n| !n.is_empty() && !n.contains(['_', '.'])) {
            let pattern = format!("{}\\..+$", spellings_pattern(name).trim_end_matches('$'));
            if out.iter().any(|(p, _)| *p == pattern) {
                continue;
            }
            let mut schema = Map::new();
            if let Some(line) = deprecation_line(flag, &surface.ref_name) {
                schema.insert("deprecated".into(), json!(true));
                schema.insert("deprecationMessage".into(), json!(line));
            }
            let about = format!("One key of `--{name}`'s value: the parser gathers `--{name}.KEY VALUE` into it. The value is not judged.");
            schema.insert("description".into(), json!(about));
            out.push((pattern, Value::Object(schema)));
        }
    }
    out
}

/// `^cuda[-_]graph[-_]max[-_]bs$`.
fn spellings_pattern(key: &str) -> String {
    let parts: Vec<String> = key.split('-').map(regex_syntax::escape).collect();
    format!("^{}$", parts.join("[-_]"))
}

/// What a flag's key may hold, with its documentation.
fn flag_schema(flag: &Flag, ref_name: &str) -> Value {
    let judged = flag.deprecated.as_ref().is_none_or(|d| d.kind == FlagDeprecationKind::Announced);
    let mut schema = if judged { value_schema(flag) } else { Map::new() };
    let mut lines: Vec<String> = Vec::new();
    if let Some(line) = deprecation_line(flag, ref_name) {
        schema.insert("deprecated".into(), json!(true));
        schema.insert("deprecationMessage".into(), json!(line));
        lines.push(line);
    }
    if let Some(help) = flag.help.as_deref().filter(|h| !h.trim().is_empty()) {
        lines.push(help.trim().to_string());
    }
    if flag.names.len() > 1 {
        lines.push(format!("Option strings: {}.", flag.names.join(", ")));
    }
    if let Known::Value(default) = &flag.default {
        if !default.is_null() {
            schema.insert("default".into(), default.clone());
        }
    }
    if let Some(effective) = &flag.effective_default {
        let value = match &effective.value {
            Known::Value(v) => format!("`{v}`"),
            Known::Dynamic { .. } => "decided at startup".to_string(),
        };
        lines.push(format!("When not passed: {value} ({}:{} @ {ref_name}).", effective.evidence.path, effective.evidence.line));
    }
    lines.push(format!("Registered at {}:{} @ {ref_name}.", flag.evidence.path, flag.evidence.line));
    schema.insert("description".into(), json!(lines.join("\n\n")));
    Value::Object(schema)
}

fn deprecation_line(flag: &Flag, ref_name: &str) -> Option<String> {
    let dep = flag.deprecated.as_ref()?;
    let instead = dep.replacement.as_deref().map(|r| format!(" Use `{r}` instead.")).unwrap_or_default();
    let upstream = dep.message.as_deref().map(|m| format!(" Upstream: \"{m}\"")).unwrap_or_default();
    Some(match dep.kind {
        FlagDeprecationKind::Alias => format!("Deprecated at {ref_name}: an alias that forwards to another flag.{instead}"),
        FlagDeprecationKind::Noop => format!("Deprecated at {ref_name}: accepted but does nothing; remove it.{instead}{upstream}"),
        FlagDeprecationKind::Removed => {
            format!("Removed at {ref_name}: still parsed, but the server exits with an error.{instead}{upstream}")
        }
        FlagDeprecationKind::Announced => format!("Deprecated at {ref_name}: still takes effect, to be removed.{instead}{upstream}"),
    })
}

/// The values the audit accepts for a flag, by arity: `null` and `false`
/// always, `true` for no value, one scalar, or a list.
fn value_schema(flag: &Flag) -> Map<String, Value> {
    let (min, max) = arity(flag);
    let mut any_of = vec![json!({"type": "null"}), json!({"const": false})];
    if min == 0 {
        any_of.push(json!({"const": true}));
    }
    if min <= 1 && max.is_none_or(|m| m >= 1) {
        any_of.push(scalar_schema(flag, false));
    }
    let mut list = json!({"type": "array", "items": scalar_schema(flag, true), "minItems": min});
    if let Some(max) = max {
        list["maxItems"] = json!(max);
    }
    any_of.push(list);
    let mut out = Map::new();
    out.insert("anyOf".into(), Value::Array(any_of));
    out
}

/// One value as YAML gives it (a scalar's text is what the audit judges). At
/// the top of a key a YAML boolean is a switch, not a value; inside a list it
/// is its text (`true`), so `in_list` lets booleans through where their text would pass.
fn scalar_schema(flag: &Flag, in_list: bool) -> Value {
    let typed = match flag.type_name.as_deref() {
        Some("int") => Some(json!({"anyOf": [{"type": "integer"}, {"type": "string", "pattern": INT_TEXT}]})),
        Some("float") => Some(json!({"anyOf": [{"type": "number"}, {"type": "string", "pattern": FLOAT_TEXT}]})),
        _ => None,
    };
    let Some(choices) = known_choices(flag) else {
        return typed.unwrap_or_else(|| match in_list {
            true => json!({"type": ["string", "number", "boolean", "null"]}),
            false => json!({"type": ["string", "number"]}),
        });
    };
    let mut forms: Vec<Value> = Vec::new();
    for choice in choices.iter().chain(flag.choices_when_env.values().flatten()) {
        for form in choice_forms(choice, in_list) {
            if !forms.contains(&form) {
                forms.push(form);
            }
        }
    }
    let choices = json!({"enum": forms});
    match typed {
        Some(typed) => json!({"allOf": [choices, typed]}),
        None => choices,
    }
}

/// The YAML values whose text matches `choice` as `check::values::value_matches_choice`
/// compares them: a string choice is its text (and the number or, inside a
/// list, the boolean YAML reads that text as); a number is itself or its text;
/// a Python bool is `True`/`False`.
fn choice_forms(choice: &PyValue, in_list: bool) -> Vec<Value> {
    match choice {
        PyValue::String(s) => {
            let mut out = vec![json!(s)];
            if let Ok(i) = s.parse::<i64>() {
                out.push(json!(i));
            } else if let Some(n) = s.parse::<f64>().ok().filter(|f| f.is_finite() && s.contains(['.', 'e', 'E'])) {
                out.push(json!(n));
            }
            if in_list {
                match s.as_str() {
                    "true" | "True" | "TRUE" => out.push(json!(true)),
                    "false" | "False" | "FALSE" => out.push(json!(false)),
                    _ => {}
                }
            }
            out
        }
        PyValue::Number(n) => vec![Value::Number(n.clone()), json!(n.to_string())],
        PyValue::Bool(b) => {
            let text = if *b { "True" } else { "False" };
            let mut out = vec![json!(text)];
            if in_list {
                out.push(json!(b));
            }
            out
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::{Evidence, FlagDeprecation};

    fn flag(names: &[&str], action: &str, type_name: Option<&str>, nargs: Option<Value>, choices: Option<Vec<Value>>) -> Flag {
        Flag {
            names: names.iter().map(|n| n.to_string()).collect(),
            dest: names[0].trim_start_matches('-').replace('-', "_"),
            action: action.into(),
            type_name: type_name.map(str::to_string),
            nargs,
            choices: choices.map(Known::Value),
            choices_when_env: BTreeMap::new(),
            default: Known::Value(Value::Null),
            const_value: None,
            required: false,
            deprecated: None,
            help: None,
            evidence: Evidence { path: "python/sglang/srt/server_args.py".into(), line: 7 },
            effective_default: None,
            engine_parser: None,
        }
    }

    fn surface(flags: Vec<Flag>) -> EngineSurface {
        EngineSurface {
            engine: "sglang".into(),
            ref_name: "v9.9.9".into(),
            commit: None,
            version: Some("9.9.9".into()),
            package_root: "python/sglang".into(),
            flags,
            parser: Default::default(),
            env: Vec::new(),
            env_prefix_rewrites: Vec::new(),
            modules: Vec::new(),
            classes: Default::default(),
            requires: Vec::new(),
            warnings: Vec::new(),
            config_keys: Vec::new(),
            flag_index: Default::default(),
        }
    }

    fn mini() -> EngineSurface {
        let mut tp = flag(&["--tp-size", "--tp"], "store", Some("int"), None, None);
        tp.default = Known::Value(json!(1));
        let mut attention = flag(&["--attention-backend"], "store", None, None, Some(vec![json!("fa3"), json!("trtllm_mla")]));
        attention.choices_when_env.insert("SGLANG_X".into(), vec![json!("canary")]);
        let mut old = flag(&["--cuda-graph-max-bs"], "DeprecatedAliasStoreAction", Some("int"), None, None);
        old.deprecated = Some(FlagDeprecation {
            kind: FlagDeprecationKind::Alias,
            replacement: Some("--cuda-graph-max-bs-decode".into()),
            message: None,
        });
        surface(vec![
            tp,
            attention,
            old,
            flag(&["--mem-fraction-static"], "store", Some("float"), None, None),
            flag(&["--enable-dp-attention"], "store_true", None, None, None),
            flag(&["--cuda-graph-bs"], "store", Some("int"), Some(json!("+")), None),
            flag(&["--page-size"], "store", Some("int"), None, Some(vec![json!(1), json!(64)])),
            flag(&["--served-model-name"], "store", Some("str"), None, None),
            flag(&["--odd_name"], "store", None, None, None),
        ])
    }

    fn check(schema: &Value, yaml: &str) -> Vec<String> {
        let validator = jsonschema::validator_for(schema).unwrap();
        let value: Value = serde_yaml_ng::from_str(yaml).unwrap();
        validator.iter_errors(&value).map(|e| format!("{}: {e}", e.instance_path)).collect()
    }

    fn role(flags: &str) -> String {
        format!("backend:\n  sglang_config:\n    decode:\n{}", flags.lines().map(|l| format!("      {l}\n")).collect::<String>())
    }

    #[test]
    fn values_the_audit_accepts_validate() {
        let schema = srt_slurm_schema(&mini(), "sglang_config");
        let ok = [
            "tp-size: 8",
            "tp_size: '8'",
            "tp: 4",
            "tp-size: null",
            "tp-size: [8]",
            "attention-backend: trtllm_mla",
            "attention_backend: canary",
            "cuda-graph-max-bs: not-an-int",
            "mem-fraction-static: 0.8",
            "mem-fraction-static: '1e-1'",
            "mem-fraction-static: 1",
            "enable-dp-attention: true",
            "enable_dp-attention: false",
            "cuda-graph-bs: [1, 2, '4']",
            "cuda-graph-bs: 8",
            "page-size: 64",
            "page-size: '64'",
            "served-model-name: 123",
            "served-model-name: [x]",
            "no-such-flag: false",
            "no-such-flag: null",
        ];
        for flags in ok {
            assert_eq!(check(&schema, &role(flags)), Vec::<String>::new(), "{flags}");
        }
    }

    #[test]
    fn what_the_audit_refuses_is_underlined() {
        let schema = srt_slurm_schema(&mini(), "sglang_config");
        let bad = [
            ("tp-sise: 8", "unknown key"),
            ("tp-sise: true", "an unknown switch"),
            ("tp-siz: 8", "an abbreviation (EA009) is refused: write the full name"),
            ("odd_name: x", "registered with `_`: srtctl passes --odd-name"),
            ("tp-size: eight", "not an int"),
            ("tp-size: true", "a value is needed"),
            ("tp-size: [1, 2]", "one value"),
            ("attention-backend: fa4", "not a choice"),
            ("mem-fraction-static: high", "not a float"),
            ("enable-dp-attention: 'yes'", "a switch takes no value"),
            ("enable-dp-attention: [x]", "a switch takes no value"),
            ("cuda-graph-bs: []", "at least one"),
            ("cuda-graph-bs: [1, x]", "an item that is not an int"),
            ("page-size: 32", "not a choice"),
            ("served-model-name: true", "a value is needed"),
            ("served-model-name: {a: 1}", "a map is no value"),
        ];
        for (flags, why) in bad {
            assert!(!check(&schema, &role(flags)).is_empty(), "{flags}: {why}");
        }
    }

    /// A parser that gathers `--opt.key value` (vLLM's `FlexibleArgumentParser`)
    /// takes `opt.key:` entries, as the audit reads them (and `--fix` writes
    /// them); without that rewrite they are unknown keys.
    #[test]
    fn dotted_keys_are_pieces_of_an_option_where_the_parser_gathers_them() {
        let plain = srt_slurm_schema(&mini(), "sglang_config");
        assert!(!check(&plain, &role("tp-size.x: 1")).is_empty(), "argparse alone has no `--tp-size.x`");
        let mut gathering = mini();
        gathering.parser.rewrites.dotted_keys = true;
        let schema = srt_slurm_schema(&gathering, "sglang_config");
        for ok in ["tp-size.x: 1", "tp_size.x.y: {a: 1}", "cuda-graph-max-bs.x: 2", "tp.x: [1]"] {
            assert_eq!(check(&schema, &role(ok)), Vec::<String>::new(), "{ok}");
        }
        for bad in ["no-such-flag.x: 1", "tp-siz.x: 1", "tp-size.: 1"] {
            assert!(!check(&schema, &role(bad)).is_empty(), "{bad}");
        }
        let piece = &schema["definitions"]["role"]["patternProperties"]["^cuda[-_]graph[-_]max[-_]bs\\..+$"];
        assert_eq!(piece["deprecated"], json!(true), "{piece}");
    }

    /// `<<: *anchor` in a role (the srt-slurm vLLM recipes share flags so): the
    /// merged map's keys are judged as the role's own.
    #[test]
    fn merge_keys_hold_flags_of_the_role() {
        let schema = srt_slurm_schema(&mini(), "sglang_config");
        let yaml = |merged: &str| {
            format!("backend:\n  sglang_config:\n    prefill: &p {{{merged}}}\n    decode:\n      <<: *p\n      tp-size: 4\n")
        };
        assert_eq!(check(&schema, &yaml("tp-size: 8, page-size: 64")), Vec::<String>::new());
        assert!(!check(&schema, "backend:\n  sglang_config:\n    decode: {'<<': {tp-sise: 1}}\n").is_empty());
        assert!(!check(&schema, "backend:\n  sglang_config:\n    decode: {'<<': [{page-size: 32}]}\n").is_empty());
    }

    #[test]
    fn override_formats_and_other_sections() {
        let schema = srt_slurm_schema(&mini(), "sglang_config");
        let ok = "name: x\nmodel: {path: /m}\nbase:\n  backend:\n    type: sglang\n    sglang_config:\n      prefill: {tp-size: 4}\noverride_a:\n  backend:\n    sglang_config:\n      prefill: {tp-size: null}\n      decode: null\nzip_override_b:\n  backend:\n    sglang_config:\n      decode: {tp-size: [1, 2, 4], attention-backend: fa3}\n";
        assert_eq!(check(&schema, ok), Vec::<String>::new());
        let bad = [
            "base:\n  backend:\n    sglang_config:\n      prefill: {tp-sise: 4}\n",
            "override_a:\n  backend:\n    sglang_config:\n      prefill: {tp-size: x}\n",
            "zip_override_b:\n  backend:\n    sglang_config:\n      decode: {tp-size: [1, x]}\n",
            "backend:\n  sglang_config:\n    decode: [tp-size]\n",
        ];
        for yaml in bad {
            assert!(!check(&schema, yaml).is_empty(), "{yaml}");
        }
    }

    #[test]
    fn deprecations_defaults_and_choices_are_documented() {
        let schema = srt_slurm_schema(&mini(), "sglang_config");
        let defs = &schema["definitions"];
        let old = &defs["flag:cuda-graph-max-bs"];
        assert_eq!(old["deprecated"], json!(true));
        assert!(old["description"].as_str().unwrap().contains("Use `--cuda-graph-max-bs-decode` instead."), "{old}");
        assert_eq!(defs["flag:tp-size"]["default"], json!(1));
        assert!(defs["flag:tp-size"]["description"].as_str().unwrap().contains("--tp-size, --tp"));
        assert_eq!(defs["flag:attention-backend"]["anyOf"][2]["enum"], json!(["fa3", "trtllm_mla", "canary"]));
        let props = schema["definitions"]["role"]["properties"].as_object().unwrap();
        for key in ["tp-size", "tp_size", "tp", "cuda-graph-max-bs", "cuda_graph_max_bs"] {
            assert!(props.contains_key(key), "{key}");
        }
        assert!(!props.contains_key("odd_name") && !props.contains_key("odd-name"));
        assert_eq!(spellings_pattern("cuda-graph-max-bs"), "^cuda[-_]graph[-_]max[-_]bs$");
    }
}
