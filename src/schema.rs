//! JSON Schemas of the files people write for engine-audit: `.engine-audit.yaml`
//! and `rules/*.yaml`. Both are derived from the serde models the tool reads
//! them with ([`crate::config::ConfigFile`], [`crate::rules::RuleSpec`]), so the
//! schema cannot drift from the reader; `schemas/` in the repository holds the
//! generated files (a test keeps them equal) for editors to point at.
//!
//! Draft 7: the draft yaml-language-server and VS Code's JSON service read
//! fully. What serde checks beyond the shape (a regex compiles, a glob parses,
//! a code is in the catalog) the reader still reports with its line.

use schemars::{json_schema, Schema, SchemaGenerator};

/// The files engine-audit reads that have a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SchemaName {
    /// `.engine-audit.yaml`, the per-repository config.
    Config,
    /// One risk rule, `rules/*.yaml`.
    Rule,
}

impl SchemaName {
    #[cfg(test)]
    pub(crate) const ALL: [SchemaName; 2] = [SchemaName::Config, SchemaName::Rule];

    /// Where the repository ships the generated schema.
    #[cfg(test)]
    pub(crate) fn shipped_path(self) -> &'static str {
        match self {
            SchemaName::Config => "schemas/engine-audit-config.schema.json",
            SchemaName::Rule => "schemas/rule.schema.json",
        }
    }

    pub(crate) fn generate(self) -> serde_json::Value {
        let generator = schemars::generate::SchemaSettings::draft07().into_generator();
        let schema = match self {
            SchemaName::Config => generator.into_root_schema_for::<crate::config::ConfigFile>(),
            SchemaName::Rule => generator.into_root_schema_for::<crate::rules::RuleSpec>(),
        };
        schema.to_value()
    }

    /// The schema as shipped: pretty JSON ending in a newline.
    pub(crate) fn render(self) -> String {
        let mut text = serde_json::to_string_pretty(&self.generate()).expect("a JSON value serialises");
        text.push('\n');
        text
    }
}

/// A finding code as the config reader takes it ([`crate::config::is_finding_code`]):
/// a catalog code in any case, or a rule id. The catalog is listed for
/// completion; the pattern is what is accepted.
fn finding_code() -> Schema {
    let ids: Vec<&str> = crate::codes::CATALOG.iter().map(|c| c.id).collect();
    let numbers: Vec<&str> = ids.iter().filter_map(|id| id.strip_prefix("EA")).collect();
    let pattern = format!("^([Ee][Aa]({})|R[0-9]+)$", numbers.join("|"));
    json_schema!({
        "anyOf": [{"enum": ids}, {"type": "string", "pattern": pattern}],
        "description": "A finding code (EA001..., see docs/codes/) or a risk-rule id (R001)."
    })
}

/// `severity:`: finding code → severity.
pub(crate) fn code_keyed_severities(generator: &mut SchemaGenerator) -> Schema {
    let severity = generator.subschema_for::<crate::codes::Severity>();
    json_schema!({
        "type": "object",
        "propertyNames": finding_code(),
        "additionalProperties": severity,
        "description": "Severity per finding code (`EA007: warning`, `R001: info`)."
    })
}

/// `ignore:`: a list of finding codes.
pub(crate) fn code_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": finding_code(),
        "description": "Codes dropped from every report, on top of `--ignore`."
    })
}

/// `docs_url:`: an absolute http(s) URL without spaces, as the reader requires.
pub(crate) fn http_url(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": ["string", "null"],
        "pattern": "^https?://[^\\s]+$",
        "description": "Where reports link engine-audit's documentation (an absolute http(s) URL); pages are `{docs_url}/docs/codes/EA003.md`."
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn validator(name: SchemaName) -> jsonschema::Validator {
        jsonschema::validator_for(&name.generate()).unwrap_or_else(|e| panic!("{name:?}: not a valid schema: {e}"))
    }

    /// A YAML file as the JSON a schema validator (and yaml-language-server) sees.
    fn yaml_json(text: &str) -> serde_json::Value {
        serde_yaml_ng::from_str(text).unwrap()
    }

    fn errors(v: &jsonschema::Validator, text: &str) -> Vec<String> {
        v.iter_errors(&yaml_json(text)).map(|e| format!("{} at {}", e, e.instance_path)).collect()
    }

    /// `schemas/*.json` are the generated schemas; `UPDATE_SCHEMAS=1` rewrites them.
    #[test]
    fn the_shipped_schemas_are_the_generated_ones() {
        let update = std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1");
        for name in SchemaName::ALL {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name.shipped_path());
            let generated = name.render();
            if update {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &generated).unwrap();
            }
            let shipped = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(shipped == generated, "{} is stale: regenerate with UPDATE_SCHEMAS=1 cargo test --lib schema", path.display());
        }
    }

    #[test]
    fn every_shipped_rule_and_every_form_validates() {
        let v = validator(SchemaName::Rule);
        let mut checked = 0;
        for (name, bytes) in crate::embedded::RULE_FILES.iter().filter(|(n, _)| n.ends_with(".yaml")) {
            let text = String::from_utf8_lossy(bytes);
            assert_eq!(errors(&v, &text), Vec::<String>::new(), "rules/{name}");
            checked += 1;
        }
        assert!(checked >= 3, "the shipped rules were read ({checked})");
        // Every predicate, condition, fix and test-case form the reader knows, in one rule it loads.
        let every_form = "\
id: R901
name: every-form
title: t
severity: info
engine: sglang
versions: '>=0.5.16,<0.6'
when:
  all:
    - flag: {name: x, role: decode, equals: 'on'}
    - any: [{env: {name: SGLANG_X, in: ['1', 'true']}}, {env: {name: SGLANG_Y, is: truthy}}]
    - not: {flag: {name: y, is: set}}
    - model: {matches: '(?i)deepseek'}
    - gpu_type: {in: [b200]}
    - precision: {in: [fp4]}
evidence:
  - file_exists: {files: [srt/a.py], note: n}
  - symbol_exists: {files: [srt/a.py], class: C, name: f}
  - assigns_attribute: {files: [srt/a.py], class: C, function: f, attribute: a, value: 'True'}
  - returns_before: {files: [srt/a.py], function: f, condition_mentions: c, before_mentions: b}
  - guard_excludes: {files: [srt/a.py], function: f, attribute: a, helper_files: [srt/b.py], excludes: e}
  - text_in_function: {files: [srt/a.py], function: f, text: t}
  - text_in_file: {files: ['srt/**/*.py'], text: t}
  - query: {files: [srt/a.py], function: f, query: '(identifier) @id', capture: id}
  - any_of: [{text_in_file: {files: [srt/a.py], text: t}}, {all_of: [{not: {text_in_file: {files: [srt/a.py], text: u}}}]}]
  - deployment: {flag: {name: x, is: falsy}}
message: m
fix:
  - set_flag: {name: x, value: 'off'}
  - remove_flag: {name: y}
  - rename_env: {from: A, to: B}
  - remove_env: {name: C}
docs: d
tests:
  valid:
    - name: v
      engines: [{fixture: none}, {corpus: v0.5.19}]
      version: 0.5.16
      deployment: {model: m, gpu_type: b200, precision: fp4, env: {SGLANG_X: '1'}, roles: {decode: {flags: {x: 'on', n: 3}, env: {A: b}}}}
  invalid:
    - name: i
      engines: [{fixture: none}]
      hits: 1
      deployment: {flags: {x: 'on'}}
";
        crate::rules::parse_rule(every_form, crate::rules::RuleOrigin::File("R901.yaml".into())).unwrap();
        assert_eq!(errors(&v, every_form), Vec::<String>::new());
    }

    #[test]
    fn a_broken_rule_is_rejected_where_the_reader_rejects_it() {
        let v = validator(SchemaName::Rule);
        let good = String::from_utf8_lossy(crate::embedded::RULE_FILES.iter().find(|(n, _)| n.starts_with("R001")).unwrap().1).into_owned();
        assert!(errors(&v, &good).is_empty());
        let cases = [
            ("an unknown top-level key", good.replacen("severity: error", "severity: error\nseverity_note: x", 1)),
            ("a misspelt predicate", good.replacen("- returns_before:", "- return_before:", 1)),
            ("a severity that is none", good.replacen("severity: error", "severity: fatal", 1)),
            ("a list where a map goes", good.replacen("when:\n  all:", "when:\n  - all:", 1)),
            ("a missing required key", good.replacen("title:", "heading:", 1)),
            ("an unknown `is`", "id: R9\nname: n\ntitle: t\nseverity: info\nengine: sglang\nwhen: {flag: {name: x, is: on}}\nevidence: []\nmessage: m\ndocs: d\n".to_string()),
        ];
        for (what, text) in cases {
            assert_ne!(text, good, "{what}: the edit applied");
            assert!(!errors(&v, &text).is_empty(), "{what} is rejected by the schema");
            assert!(crate::rules::parse_rule(&text, crate::rules::RuleOrigin::File("x.yaml".into())).is_err(), "{what}: and by the reader");
        }
    }

    #[test]
    fn configs_validate_and_broken_ones_are_rejected() {
        let v = validator(SchemaName::Config);
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let samples = [
            std::fs::read_to_string(root.join("fixtures/pr/engine-audit.yaml")).unwrap(),
            // The module's own example and every key the reader knows.
            "sglang: https://github.com/sgl-project/sglang\ndynamo: ../dynamo.git\nseverity: {EA007: warning, R001: info, ea104: error}\nignore: [EA104]\nrecipe_roots: [benchmarks]\nrecipes_dir: benchmarks/multi_node/srt-slurm-recipes\nsingle_node_scripts: [\"a/{gpu}.sh\"]\nfail_on: warning\nrules: [ci/rules]\ndocs_url: https://example.com/ea/blob/main\nexclude: [old/**]\n".to_string(),
            "fail_on: never\n".to_string(),
            "docs_url:\n".to_string(),
        ];
        for text in &samples {
            assert!(crate::config::parse(text, "c.yaml").is_ok(), "the reader takes {text}");
            assert_eq!(errors(&v, text), Vec::<String>::new(), "{text}");
        }
        let broken = [
            "fail_on: sometimes\n",
            "fial_on: error\n",
            "ignore: EA104\n",
            "ignore: [EA999]\n",
            "severity: {EA007: loud}\n",
            "severity: {XY1: info}\n",
            "recipe_roots: benchmarks\n",
            "docs_url: docs/\n",
        ];
        for text in broken {
            assert!(crate::config::parse(text, "c.yaml").is_err(), "the reader rejects {text}");
            assert!(!errors(&v, text).is_empty(), "the schema rejects {text}");
        }
    }
}
