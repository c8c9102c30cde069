//! The YAML configuration file an engine reads its arguments from (TRT-LLM's
//! LlmArgs behind `--config`): its keys by dotted path, from a recipe's map
//! (srtctl writes a role's `args` into the file) or from the file a launch
//! script writes with a here-document and names on the command line.

use super::argv::ArgToken;
use super::shell::eval::{WrittenFile, PLACEHOLDER};
use super::yaml::{self, Node, NodeKind};
use super::{ConfigUse, ConfigValue, UnreadConfig};
use crate::profiles::ConfigFileProfile;
use crate::text::span::{SourceText, Span};

/// Every key of a configuration map at every depth, a map's own key before
/// its children's, with its value as the loader types it. The walk is over
/// the parsed tree, so its cost is the file's size.
pub(crate) fn keys(node: &Node) -> Vec<ConfigUse> {
    let mut out = Vec::new();
    keys_below(node, "", 0, &mut out);
    out
}

fn keys_below(node: &Node, prefix: &str, depth: usize, out: &mut Vec<ConfigUse>) {
    for entry in node.as_map().into_iter().flatten() {
        // A key that is not a string (`1: x`) is no field name: the model
        // refuses or drops it as any unknown key, so it is kept as written.
        let key = match entry.key.as_scalar() {
            Some(s) => s.text.clone(),
            None => continue,
        };
        let path = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
        let value = match &entry.value.kind {
            NodeKind::Scalar(_) if entry.value.is_null() => ConfigValue::Null,
            NodeKind::Scalar(s) => ConfigValue::Scalar { text: s.text.clone(), quoted: s.is_quoted(), ty: s.resolve() },
            NodeKind::Map(_) => ConfigValue::Map,
            NodeKind::Seq(items) => ConfigValue::List { len: items.len() },
        };
        out.push(ConfigUse {
            path: path.clone(),
            depth: depth + 1,
            value,
            key_span: entry.key.span.clone(),
            value_span: entry.value.span.clone(),
            shadowed: entry.shadows.clone(),
        });
        if matches!(entry.value.kind, NodeKind::Map(_)) {
            keys_below(&entry.value, &path, depth + 1, out);
        }
    }
}

/// What a launch's command line hands the server as its configuration file.
pub(crate) enum LaunchConfig {
    /// It names none.
    None,
    /// The keys of the file the script wrote, each at the place in the script
    /// where it is written.
    Read(Vec<ConfigUse>),
    Unread(UnreadConfig),
}

/// The configuration file a launch names with one of `profile.options`
/// (`--config cfg.yml`, `--config=cfg.yml`; the last one counts, as the
/// parser keeps the last value), read from what the script wrote to that
/// path on the launch's path through it.
pub(crate) fn of_launch(profile: &ConfigFileProfile, argv: &[ArgToken], files: &[WrittenFile]) -> LaunchConfig {
    let mut named = argv.iter().enumerate().filter_map(|(i, t)| {
        // `--config="$CFG"` with `$CFG` not known is still that option.
        let word = match &t.value {
            crate::surface::Known::Value(w) => w,
            crate::surface::Known::Dynamic { dynamic } => dynamic,
        };
        if profile.options.contains(&word.as_str()) {
            let value = argv.get(i + 1)?;
            return Some((format!("{} {}", t.raw, value.raw), t.span.clone(), value));
        }
        let (option, _) = word.split_once('=')?;
        profile.options.contains(&option).then(|| (t.raw.clone(), t.span.clone(), t))
    });
    let Some((words, span, value)) = named.next_back() else { return LaunchConfig::None };
    let unread = |why: String| LaunchConfig::Unread(UnreadConfig { words: words.clone(), span: span.clone(), why });
    let Some(path) = value.value.value().map(|w| w.split_once('=').filter(|_| w.starts_with('-')).map_or(w.as_str(), |(_, p)| p)) else {
        return unread("the file's path is not known, so its keys are not checked".into());
    };
    let Some(file) = files.iter().find(|f| f.path == path) else {
        return unread(format!(
            "the script writes no `{path}` that engine-audit reads (a here-document: `cat > {path} << EOF`) on this path, so its keys are not checked"
        ));
    };
    match read_written(file) {
        Ok(keys) => LaunchConfig::Read(keys),
        Err(why) => unread(why),
    }
}

/// The keys of a file the script wrote: parsed as the text bash writes, each
/// key and value then placed where the script writes it. A value written from
/// an expansion not known is [`ConfigValue::Dynamic`]; a key not known (or
/// anything below it) is left out, as no key can be judged by a name not known.
fn read_written(file: &WrittenFile) -> Result<Vec<ConfigUse>, String> {
    if let [piece] = &file.pieces[..] {
        if let Some((_, why)) = &piece.unknown {
            return Err(format!("what the script writes to `{}` {why}", file.path));
        }
    }
    let text = SourceText::new(file.path.clone(), file.text.clone());
    let root = match yaml::parse_last_wins(&text) {
        Ok((root, _)) => root,
        Err(e) => {
            let unknown: Vec<String> =
                file.pieces.iter().filter_map(|p| p.unknown.as_ref()).map(|(raw, why)| format!("`{raw}` {why}")).collect();
            let holding = match unknown.is_empty() {
                true => String::new(),
                false => format!(", with values not known in it ({})", unknown.join("; ")),
            };
            return Err(format!("what the script writes to `{}` is not YAML the engine can load ({e}){holding}", file.path));
        }
    };
    let Some(root) = root else { return Ok(Vec::new()) };
    if root.as_map().is_none() && !root.is_null() {
        return Err(format!("what the script writes to `{}` is a {}, not a map of configuration keys", file.path, root.kind_name()));
    }
    let mut out: Vec<ConfigUse> = Vec::new();
    let mut unknown_keys: Vec<String> = Vec::new();
    for mut key in keys(&root) {
        if unknown_keys.iter().any(|u| key.path == *u || key.path.starts_with(&format!("{u}."))) {
            continue;
        }
        if key.path.contains(PLACEHOLDER) {
            unknown_keys.push(key.path.clone());
            continue;
        }
        // A scalar or a list holding a value not known is not known (a
        // placeholder in `[$TOKENS]` stands for any number of items).
        let holds_unknown = match &key.value {
            ConfigValue::Scalar { text, .. } => text.contains(PLACEHOLDER),
            ConfigValue::List { .. } => file.text.get(key.value_span.offset..key.value_span.end()).is_some_and(|t| t.contains(PLACEHOLDER)),
            _ => false,
        };
        if holds_unknown {
            key.value = ConfigValue::Dynamic { text: written_text(file, &key.value_span) };
        }
        key.key_span = placed(file, &key.key_span);
        key.value_span = placed(file, &key.value_span);
        key.shadowed = key.shadowed.iter().map(|(k, v)| (placed(file, k), placed(file, v))).collect();
        out.push(key);
    }
    Ok(out)
}

/// A span of the written text, as the span in the script it is written at:
/// exact where the text is the script's own bytes, else the expansion or
/// line that gives it.
fn placed(file: &WrittenFile, span: &Span) -> Span {
    let (start, end) = (span.offset, span.offset + span.len);
    let covering: Vec<_> = file.pieces.iter().filter(|p| p.start < end.max(start + 1) && start < p.end.max(p.start + 1)).collect();
    let (Some(first), Some(last)) = (covering.first(), covering.last()) else {
        return file.pieces.last().map(|p| p.span.clone()).unwrap_or_else(|| span.clone());
    };
    let one_piece = std::ptr::eq(*first, *last);
    if one_piece && first.verbatim && first.unknown.is_none() {
        let offset = first.span.offset + (start - first.start);
        return Span { offset, len: end - start, column: first.span.column + (start - first.start) as u32, ..first.span.clone() };
    }
    if first.span.path == last.span.path && last.span.end() >= first.span.offset {
        return Span { len: last.span.end() - first.span.offset, ..first.span.clone() };
    }
    first.span.clone()
}

/// The value as the script writes it (`$CONC`, `${BS:-8}`), for a value that
/// holds an expansion not known.
fn written_text(file: &WrittenFile, span: &Span) -> String {
    let (start, end) = (span.offset, span.offset + span.len);
    let mut out = String::new();
    for piece in file.pieces.iter().filter(|p| p.start < end && start < p.end) {
        match &piece.unknown {
            Some((raw, _)) => out.push_str(raw),
            None => out.push_str(&file.text[piece.start.max(start)..piece.end.min(end)]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::shell::eval::placeholder;
    use super::*;
    use crate::recipe::{load_text, LinkMapping, RecipeFile, RoleConfig};

    #[test]
    fn the_placeholder_is_a_plain_scalar_the_yaml_loader_keeps_as_text() {
        let text = format!("a: {}\n", placeholder(3));
        let root = yaml::parse(&SourceText::new("x.yml", text)).unwrap().unwrap();
        let used = keys(&root);
        assert!(matches!(&used[0].value, ConfigValue::Scalar { text, .. } if text == "__engine_audit_unknown_3__"));
    }

    fn script(text: &str) -> RecipeFile {
        load_text("serve_trt.sh", text.to_string(), &LinkMapping::default()).unwrap()
    }

    /// (dotted key, value as the loader types it or the expansion not known, line, text at the key's span).
    fn keys_of(file: &RecipeFile, role: &RoleConfig) -> Vec<(String, String, u32, String)> {
        role.config
            .iter()
            .map(|k| {
                let value = match &k.value {
                    ConfigValue::Scalar { text, .. } => text.clone(),
                    ConfigValue::Dynamic { text } => format!("dynamic {text}"),
                    ConfigValue::Map => "map".into(),
                    ConfigValue::Null => "null".into(),
                    ConfigValue::List { len } => format!("list of {len}"),
                };
                (k.path.clone(), value, k.key_span.line, file.text[k.key_span.offset..k.key_span.end()].to_string())
            })
            .collect()
    }

    const WRITES_AND_APPENDS: &str = "#!/bin/bash\nCFG=serve.yml\nBACKEND=CUTLASS\nif [[ \"$DP\" == \"true\" ]]; then\n    BACKEND=WIDEEP\nfi\ncat > $CFG << EOF\nmax_batch_size: $CONC\nmoe_config:\n    backend: $BACKEND\nEOF\nif [[ \"$DP\" == \"true\" ]]; then\n    cat << EOF >> \"$CFG\"\nattention_dp_config:\n    enable_balance: true\nEOF\nfi\nmpirun -n 1 trtllm-serve $MODEL --port=8000 --extra_llm_api_options=$CFG > log 2>&1 &\n";

    #[test]
    fn a_here_document_written_then_appended_on_some_paths_is_the_file_each_launch_reads() {
        let file = script(WRITES_AND_APPENDS);
        assert_eq!(file.deployments.len(), 1, "{:#?}", file.deployments);
        let dep = &file.deployments[0];
        assert_eq!((dep.engine, dep.name.as_str()), ("trtllm", "trtllm-serve@18"));
        assert_eq!(dep.roles.len(), 2, "one command line per path: {:#?}", dep.roles);
        let mut seen: Vec<Vec<(String, String, u32, String)>> = dep.roles.iter().map(|r| keys_of(&file, r)).collect();
        seen.sort();
        let common = |backend: &str| {
            vec![
                ("max_batch_size".to_string(), "dynamic $CONC".to_string(), 8, "max_batch_size".to_string()),
                ("moe_config".into(), "map".into(), 9, "moe_config".into()),
                ("moe_config.backend".into(), backend.to_string(), 10, "backend".into()),
            ]
        };
        let mut with_dp = common("WIDEEP");
        with_dp.extend([
            ("attention_dp_config".to_string(), "map".to_string(), 14, "attention_dp_config".to_string()),
            ("attention_dp_config.enable_balance".into(), "true".into(), 15, "enable_balance".into()),
        ]);
        assert_eq!(seen, [common("CUTLASS"), with_dp]);
        // A value from a variable is where the variable is given it.
        let role = dep.roles.iter().find(|r| r.config.len() == 5).unwrap();
        let backend = role.config.iter().find(|k| k.path == "moe_config.backend").unwrap();
        assert_eq!((backend.value_span.line, &file.text[backend.value_span.offset..backend.value_span.end()]), (5, "WIDEEP"));
        // The model word is the click argument, not a flag.
        let words: Vec<&str> = role.argv.as_ref().unwrap().iter().map(|t| t.raw.as_str()).collect();
        assert_eq!(words, ["--port=8000", "--extra_llm_api_options=$CFG"]);
    }

    #[test]
    fn a_quoted_delimiter_writes_its_text_as_is_and_dash_strips_leading_tabs() {
        let text = "#!/bin/bash\nif true; then\n\tcat <<-'EOF' > c.yml\n\tprint_iter_log: $KEEP\n\tEOF\nfi\ntrtllm-serve serve /m --config c.yml\n";
        let file = script(text);
        let role = &file.deployments[0].roles[0];
        assert_eq!(keys_of(&file, role), [("print_iter_log".to_string(), "$KEEP".to_string(), 4, "print_iter_log".to_string())]);
        assert_eq!(role.config[0].key_span.column, 2, "after the stripped tab");
    }

    #[test]
    fn cat_reading_stdin_as_dash_writes_the_here_document_too() {
        let file = script("#!/bin/bash\ncat - > c.yml << EOF\nprint_iter_log: true\nEOF\ntrtllm-serve /m --config c.yml\n");
        let role = &file.deployments[0].roles[0];
        assert_eq!(keys_of(&file, role), [("print_iter_log".to_string(), "true".to_string(), 3, "print_iter_log".to_string())]);
    }

    #[test]
    fn a_backslash_in_an_unquoted_here_document_escapes_only_what_bash_unescapes() {
        let text = "#!/bin/bash\ncat > c.yml << EOF\nchat_template: \\$HOME\\n\nEOF\ntrtllm-serve /m --config c.yml\n";
        let file = script(text);
        let role = &file.deployments[0].roles[0];
        assert!(matches!(&role.config[0].value, ConfigValue::Scalar { text, .. } if text == "$HOME\\n"), "{:?}", role.config);
    }

    #[test]
    fn a_file_the_script_does_not_write_or_cannot_know_is_named_unread() {
        let file = script("#!/bin/bash\ntrtllm-serve /m --config /etc/serve.yml\n");
        let unread = file.deployments[0].roles[0].config_unread.as_ref().expect("named");
        assert_eq!(unread.words, "--config /etc/serve.yml");
        assert!(unread.why.contains("writes no `/etc/serve.yml`"), "{}", unread.why);

        let file = script("#!/bin/bash\ntrtllm-serve /m --extra_llm_api_options=\"$CFG\"\n");
        let unread = file.deployments[0].roles[0].config_unread.as_ref().expect("named");
        assert!(unread.why.contains("path is not known"), "{}", unread.why);

        // What bash writes is not YAML: named with the loader's error and the value not known in it.
        let file = script("#!/bin/bash\ncat > c.yml << EOF\na: 1\n$EXTRA\nEOF\ntrtllm-serve /m --config c.yml\n");
        let unread = file.deployments[0].roles[0].config_unread.as_ref().expect("named");
        assert!(unread.why.contains("not YAML the engine can load") && unread.why.contains("`$EXTRA`"), "{}", unread.why);
    }

    #[test]
    fn another_command_of_the_trtllm_serve_group_is_named_not_read() {
        let file = script("#!/bin/bash\ntrtllm-serve disaggregated -c disagg.yaml &\n");
        let role = &file.deployments[0].roles[0];
        assert_eq!(role.argv, None);
        assert_eq!(role.dynamic.as_deref(), Some("`trtllm-serve disaggregated` is not read (only `trtllm-serve` is)"));
    }

    #[test]
    fn a_list_holding_a_value_not_known_has_no_known_length() {
        let text = "#!/bin/bash\ncat > c.yml << EOF\ncuda_graph_config:\n    batch_sizes: [1, 2, ${MORE%, }]\n    fixed: [1, 2]\nEOF\ntrtllm-serve /m --config c.yml\n";
        let file = script(text);
        let role = &file.deployments[0].roles[0];
        let values: Vec<(&str, &ConfigValue)> = role.config.iter().map(|k| (k.path.as_str(), &k.value)).collect();
        assert_eq!(values[1], ("cuda_graph_config.batch_sizes", &ConfigValue::Dynamic { text: "[1, 2, ${MORE%, }]".into() }));
        assert_eq!(values[2], ("cuda_graph_config.fixed", &ConfigValue::List { len: 2 }));
    }

    #[test]
    fn a_key_written_from_a_value_not_known_is_left_out_with_what_is_below_it() {
        let text = "#!/bin/bash\ncat > c.yml << EOF\n$SECTION:\n    x: 1\nstream_interval: 2\nEOF\ntrtllm-serve /m --config c.yml\n";
        let file = script(text);
        let role = &file.deployments[0].roles[0];
        let paths: Vec<&str> = role.config.iter().map(|k| k.path.as_str()).collect();
        assert_eq!(paths, ["stream_interval"]);
    }
}
