//! Loader tests on the small fixtures in `fixtures/recipes/`, plus a pass over the
//! real recipes in `../shared/recipes` when that folder exists.

use super::*;
use crate::recipe::yaml::ScalarType;
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/recipes").join(rel)
}

fn load(rel: &str) -> RecipeFile {
    load_path(&fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn role<'d>(d: &'d Deployment, name: &str) -> &'d RoleConfig {
    d.roles.iter().find(|r| r.role == name).unwrap_or_else(|| panic!("no role {name}"))
}

fn flag<'r>(flags: &'r [FlagUse], name: &str) -> &'r FlagUse {
    flags.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no flag {name} in {flags:#?}"))
}

fn at(file: &RecipeFile, span: &Span) -> String {
    file.text[span.offset..span.end()].to_string()
}

// ---- srt-slurm -------------------------------------------------------------------

#[test]
fn srt_recipe_reads_flags_env_and_metadata_with_spans() {
    let file = load("srt/disagg.yaml");
    assert_eq!(file.kind, RecipeKind::SrtSlurm);
    let [d] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    assert_eq!(d.name, "tiny-disagg-1p1d");
    assert_eq!(d.container.as_ref().unwrap().value, "lmsysorg/sglang:v0.5.19-cu130");
    assert_eq!(d.image.as_ref().unwrap().version.as_deref(), Some("0.5.19"));
    assert_eq!(d.model_path.as_ref().unwrap().value, "tiny-model");
    assert_eq!(d.precision.as_ref().unwrap().value, "fp8");
    assert_eq!(d.gpu_type.as_ref().unwrap().value, "h100");
    let dynamo = d.dynamo.as_ref().unwrap();
    assert_eq!((dynamo.field.as_str(), dynamo.install), ("hash", Some(true)));
    assert!(matches!(dynamo.reference, Some(DynamoRef::Hash { .. })));

    let prefill = role(d, "prefill");
    let bs = flag(&prefill.flags, "cuda-graph-max-bs");
    assert_eq!((bs.key_span.line, bs.key_span.column), (29, 7));
    assert_eq!(at(&file, &bs.key_span), "cuda-graph-max-bs");
    assert_eq!(at(&file, &bs.value_span), "128");
    assert_eq!(bs.value, FlagValue::Scalar { text: "128".into(), quoted: false, ty: ScalarType::Int });
    let mode = flag(&prefill.flags, "disaggregation-mode");
    assert_eq!(mode.value, FlagValue::Scalar { text: "prefill".into(), quoted: true, ty: ScalarType::Str });
    assert_eq!(at(&file, &mode.value_span), "\"prefill\"");

    // srtctl turns `_` into `-`; the span still shows the key as written.
    let mem = flag(&prefill.flags, "mem-fraction-static");
    assert_eq!(at(&file, &mem.key_span), "mem_fraction_static");
    assert!(matches!(mem.value, FlagValue::Scalar { ty: ScalarType::Float, .. }));
    assert_eq!(flag(&prefill.flags, "trust-remote-code").value, FlagValue::Switch { on: true });
    assert_eq!(flag(&prefill.flags, "enable-dp-attention").value, FlagValue::Switch { on: false });
    assert_eq!(flag(&prefill.flags, "load-balance-method").value, FlagValue::Null);
    let FlagValue::List { items } = &flag(&prefill.flags, "cuda-graph-bs").value else { panic!() };
    assert_eq!(items.iter().map(|i| i.value.as_str()).collect::<Vec<_>>(), ["1", "2", "4"]);
    assert_eq!(at(&file, &items[2].span), "\"4\"");
    assert!(matches!(flag(&prefill.flags, "kv-events-config").value, FlagValue::Invalid { .. }));
    assert!(file
        .notes
        .iter()
        .any(|n| n.level == NoteLevel::Error && n.message.contains("kv-events-config") && n.span.as_ref().unwrap().line == 35));

    // Decode merges an anchored map: merged values point at the anchor's lines,
    // and a key written in the map itself wins.
    let decode = role(d, "decode");
    let tp = flag(&decode.flags, "tensor-parallel-size");
    assert_eq!(tp.key_span.line, 38);
    let si = flag(&decode.flags, "stream-interval");
    assert_eq!((at(&file, &si.value_span).as_str(), si.value_span.line), ("30", 41));
    assert_eq!(decode.flags.iter().filter(|f| f.name == "stream-interval").count(), 1);

    // Env: the decode block is an alias of the prefill one, so both point at the same text.
    let env = &prefill.env;
    assert_eq!(env.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["SGLANG_ENABLE_SPEC_V2", "SGLANG_LEGACY_FLAG"]);
    assert_eq!(decode.env[0].name_span, env[0].name_span);
    assert_eq!(env[0].value, Known::Value("1".into()));
    assert_eq!(d.common_env[0].name, "PYTHONUNBUFFERED");
    assert!(file.notes.iter().any(|n| n.level == NoteLevel::Warning && n.message.contains("SGLANG_LEGACY_FLAG")));
}

#[test]
fn override_format_expands_like_srtctl() {
    let file = load("srt/sweep.yaml");
    let selectors: Vec<_> = file.deployments.iter().map(|d| d.variant.clone().unwrap()).collect();
    assert_eq!(selectors, ["override_long", "zip_override_lat[0]", "zip_override_lat[1]", "zip_override_lat[2]"]);
    let long = &file.deployments[0];
    assert_eq!(long.name, "tiny-sweep_long");
    assert_eq!(long.name_span, None, "generated names have no text in the file");
    let ctx = flag(&role(long, "prefill").flags, "context-length");
    assert_eq!((at(&file, &ctx.value_span).as_str(), ctx.value_span.line), ("16384", 22));
    assert_eq!(flag(&role(long, "decode").flags, "cuda-graph-max-bs").value_span.line, 16);

    for (i, expected) in ["8", "16", "32"].iter().enumerate() {
        let d = &file.deployments[i + 1];
        assert_eq!(d.name, ["lat-a", "lat-b", "lat-c"][i]);
        assert_eq!(at(&file, d.name_span.as_ref().unwrap()), ["lat-a", "lat-b", "lat-c"][i]);
        let decode = role(d, "decode");
        let bs = flag(&decode.flags, "cuda-graph-max-bs");
        assert_eq!(at(&file, &bs.value_span), *expected, "zip item {i} points at its own list element");
        assert_eq!(bs.value_span.line, 28);
        assert_eq!(flag(&decode.flags, "data-parallel-size").value_span.line, 29);
        assert!(decode.flags.iter().all(|f| f.name != "load-balance-method"), "null deletes the base key");
        // The prefill role is untouched by the zip group.
        assert_eq!(flag(&role(d, "prefill").flags, "context-length").value_span.line, 13);
    }
    let d = &file.deployments[1];
    assert_eq!(d.image.as_ref().unwrap().date.as_deref(), Some("20260608"));
    assert_eq!(
        d.dynamo.as_ref().unwrap().reference,
        Some(DynamoRef::Wheel { version: "1.4.0.dev20260807".into(), date: Some("20260807".into()) })
    );
}

#[test]
fn an_engine_without_a_profile_is_read_not_skipped() {
    // `trtllm_config` names the engine (no `backend.type`): its roles are read
    // as deployments of that engine, for the audit to name "not audited".
    let file = load("srt/trtllm_untyped.yaml");
    assert_eq!(file.kind, RecipeKind::SrtSlurm);
    let [d] = file.deployments.as_slice() else { panic!("{:?}", file.deployments) };
    assert_eq!(d.engine, "trtllm");
    let prefill = role(d, "prefill");
    let [key] = prefill.config.as_slice() else { panic!("{:?}", prefill.config) };
    assert_eq!(
        (key.path.as_str(), &key.value),
        ("max_batch_size", &ConfigValue::Scalar { text: "8".into(), quoted: false, ty: ScalarType::Int })
    );
    assert!(file.notes.iter().all(|n| n.level != NoteLevel::Error), "{:?}", file.notes);
}

#[test]
fn vllm_recipes_are_read_with_their_worker() {
    let file = load("srt/vllm.yaml");
    assert_eq!(file.kind, RecipeKind::SrtSlurm);
    assert_eq!(file.deployments.len(), 1);
    assert_eq!(file.deployments[0].engine, "vllm");
    assert!(!file.deployments[0].roles.is_empty(), "vllm_config roles");
}

#[test]
fn empty_file_loads_as_other_with_a_note() {
    let file = load("empty.yaml");
    assert_eq!(file.kind, RecipeKind::Other { backend: None });
    assert_eq!(file.notes.len(), 1);
}

#[test]
fn bad_files_give_typed_errors() {
    // A key written twice loads as srt-slurm loads it: the later value wins.
    let dup = load_path(&fixture("bad/duplicate.yaml")).unwrap();
    let d = &dup.duplicates[0];
    assert_eq!((d.key.as_str(), d.dead_key.line, d.kept_key.line), ("cuda-graph-max-bs", 4, 6));
    let bs = flag(&dup.deployments[0].roles[0].flags, "cuda-graph-max-bs");
    assert_eq!(at(&dup, &bs.value_span), "256");
    assert!(matches!(load_path(&fixture("bad/tabs.yaml")), Err(RecipeError::Yaml { .. })));
    match load_path(&fixture("bad/latin1.yaml")).unwrap_err() {
        RecipeError::NotUtf8 { path, offset } => {
            assert!(path.ends_with("bad/latin1.yaml"));
            assert_eq!(offset, 10);
        }
        e => panic!("{e:?}"),
    }
    match load_path(&fixture("bad/zip_mismatch.yaml")).unwrap_err() {
        RecipeError::Shape { line, message, .. } => {
            assert_eq!(line, 12);
            assert!(message.contains("zip"), "{message}");
        }
        e => panic!("{e:?}"),
    }
    assert!(matches!(load_path(&fixture("missing.yaml")), Err(RecipeError::Io { .. })));
}

#[test]
fn errors_render_with_the_offending_line() {
    let src = SourceText::new("d.yaml", std::fs::read_to_string(fixture("bad/duplicate.yaml")).unwrap());
    // Strict parsing (the tool's own files) still refuses a repeated key, with both lines.
    let err = yaml::parse(&src).unwrap_err();
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor()).render_report(&mut out, &err).unwrap();
    assert!(out.contains("cuda-graph-max-bs: 256"), "{out}");
    assert!(out.contains("again here"), "{out}");
}

#[test]
fn bom_and_crlf_recipe_loads_with_exact_spans() {
    let text = "\u{feff}name: x\r\nbackend:\r\n  sglang_config:\r\n    prefill:\r\n      tp-size: 2\r\n";
    let file = load_text("bom.yaml", text.into(), &LinkMapping::default()).unwrap();
    let f = flag(&file.deployments[0].roles[0].flags, "tp-size");
    assert_eq!((f.key_span.line, f.key_span.column), (5, 7));
    assert_eq!(at(&file, &f.value_span), "2");
    assert_eq!(file.deployments[0].name_span.as_ref().unwrap().column, 7);
}

// ---- master config -----------------------------------------------------------------

#[test]
fn master_config_fixture() {
    let file = load("master.yaml");
    assert_eq!(file.kind, RecipeKind::MasterConfig);
    let master = file.master.as_ref().unwrap();
    assert_eq!(master.entries.len(), 2);
    let link = &master.entries[0].links[0];
    assert_eq!(link.recipe.as_deref(), Some("benchmarks/multi_node/srt-slurm-recipes/srt/disagg.yaml"));
    assert_eq!(at(&file, &link.span), "recipes/srt/disagg.yaml");
    let version = master.entries[0].router.as_ref().unwrap().version.as_ref().unwrap();
    assert!(matches!(DynamoRef::from_router_version(&version.value), Some(DynamoRef::Hash { .. })));
}

// ---- collect -------------------------------------------------------------------------

#[test]
fn collect_walks_sorted_and_keeps_going_after_errors() {
    let (files, errors) = collect(&[fixture("")]);
    let root = fixture("");
    let rel: Vec<String> = files.iter().map(|f| PathBuf::from(&f.path).strip_prefix(&root).unwrap().display().to_string()).collect();
    let mut sorted = rel.clone();
    sorted.sort();
    assert_eq!(rel, sorted);
    assert!(rel.contains(&"scripts/launch_basic.sh".to_string()));
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors.iter().all(|e| e.path().contains("/bad/")));
    assert_eq!(files.len() + errors.len(), 22);
}

// ---- launch scripts ---------------------------------------------------------------------

fn is_switch(name: &str) -> bool {
    matches!(name, "trust-remote-code" | "enable-metrics")
}

#[test]
fn launch_script_resolves_literals_and_marks_the_rest_dynamic() {
    let file = load("scripts/launch_basic.sh");
    assert_eq!(file.kind, RecipeKind::LaunchScript);
    let names: Vec<_> = file.deployments.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["launch_server@15", "serve@31"], "the heredoc line is not a command");

    let d = &file.deployments[0];
    let r = &d.roles[0];
    assert_eq!(r.dynamic, None);
    let env: Vec<_> = r.env.iter().map(|e| (e.name.as_str(), e.value.value().cloned())).collect();
    assert_eq!(env, [("SGLANG_TORCH_PROFILER_DIR", Some("/tmp/prof".into())), ("NCCL_DEBUG", Some("WARN".into()))]);
    let common: Vec<_> = d.common_env.iter().map(|e| (e.name.as_str(), e.value.value().cloned())).collect();
    assert_eq!(
        common,
        [("SGLANG_ENABLE_SPEC_V2", Some("1".into())), ("SGLANG_DISAGGREGATION_TIMEOUT", None), ("SGLANG_LOCAL_ONLY", Some("1".into())),]
    );

    let flags = r.flag_uses(is_switch);
    let value = |name: &str| flag(&flags, name).value.clone();
    let scalar = |t: &str, quoted| FlagValue::Scalar { text: t.into(), quoted, ty: ScalarType::Str };
    assert_eq!(value("model-path"), scalar("/models/tiny", true));
    assert_eq!(value("tp"), scalar("4", false));
    assert_eq!(value("port"), FlagValue::Dynamic { text: "$PORT".into() });
    assert_eq!(value("mem-fraction-static"), scalar("0.85", false));
    assert_eq!(value("trust-remote-code"), FlagValue::Switch { on: true });
    assert!(matches!(value("cuda-graph-bs"), FlagValue::List { items } if items.len() == 3));
    assert_eq!(value("served-model-name"), scalar("tiny model", true));
    assert_eq!(value("enable-metrics"), FlagValue::Switch { on: true }, "split from unquoted $EXTRA");
    assert_eq!(value("log-level"), scalar("info", false));
    assert_eq!(value("chat-template"), FlagValue::Dynamic { text: "--chat-template=\"${TEMPLATE}\"".into() });

    let tp = flag(&flags, "tp");
    assert_eq!((tp.key_span.line, tp.key_span.column), (17, 7));
    assert_eq!(at(&file, &tp.key_span), "tp");
    // A value from a variable points where the value is written (`TP=4`).
    assert_eq!(at(&file, &tp.value_span), "4");
    assert_eq!(tp.value_span.line, 6);
    assert_eq!(at(&file, &flag(&flags, "port").value_span), "$PORT");
    // Words split from `$EXTRA` point into its value.
    assert_eq!(at(&file, &flag(&flags, "enable-metrics").key_span), "enable-metrics");
    let ct = flag(&flags, "chat-template");
    assert_eq!(at(&file, &ct.key_span), "chat-template");
    assert_eq!(at(&file, &ct.value_span), "\"${TEMPLATE}\"");
    // A value from the environment is fine as a value; the token says where it comes from.
    let port = r.argv.as_ref().unwrap().iter().find(|t| t.raw == "$PORT").unwrap();
    assert_eq!(port.unread.as_deref(), Some("`$PORT` comes from the environment or its default"));

    let serve = &file.deployments[1].roles[0];
    assert_eq!(serve.role, "serve");
    let flags = serve.flag_uses(is_switch);
    assert_eq!(flag(&flags, "model-path").value, scalar("/models/tiny", true));
}

#[test]
fn launch_lines_built_at_run_time_are_dynamic() {
    let file = load("scripts/launch_dynamic.sh");
    let roles: Vec<&RoleConfig> = file.deployments.iter().map(|d| &d.roles[0]).collect();
    assert_eq!(roles.len(), 4, "{:#?}", file.deployments);

    // $ARGS gains `--$flag` in a loop: a word in flag position nobody can read.
    let flags = roles[0].flag_uses(is_switch);
    assert_eq!(flags.len(), 1, "{:#?}", roles[0]);
    let b = bind(roles[0].argv.as_ref().unwrap(), is_switch);
    assert_eq!(b.unbound.len(), 1);
    assert!(b.unbound[0].value.is_dynamic());
    assert!(b.unbound[0].unread.as_deref().unwrap().contains("changed in the loop of line 4"), "{:#?}", b.unbound[0]);

    // eval of a known string: read as the script it is.
    let flags = roles[1].flag_uses(is_switch);
    assert_eq!(flag(&flags, "tp").value, FlagValue::Scalar { text: "8".into(), quoted: false, ty: ScalarType::Str });
    assert_eq!(at(&file, &flag(&flags, "tp").key_span), "tp", "spans point into the string");

    // Inside a loop: marked, and the loop variable is dynamic.
    assert!(roles[2].dynamic.as_ref().unwrap().contains("loop"));
    assert!(matches!(flag(&roles[2].flag_uses(is_switch), "tp").value, FlagValue::Dynamic { .. }));

    // `env A=1 /usr/bin/python3.11 -m ...`, a variable set only in a branch
    // (one command line per path, each value with its condition), arithmetic.
    let d = &file.deployments[3];
    assert_eq!(d.roles.len(), 2, "{:#?}", d.roles);
    assert_eq!(roles[3].env[0].name, "SGLANG_X");
    let modes: Vec<_> = d.roles.iter().map(|r| flag(&r.flag_uses(is_switch), "mode").clone()).collect();
    assert_eq!(modes[0].value, FlagValue::Scalar { text: "fast".into(), quoted: true, ty: ScalarType::Str });
    assert_eq!(modes[0].condition.as_deref(), Some("[ -n \"${FAST:-}\" ]"));
    assert_eq!(modes[1].condition.as_deref(), Some("not [ -n \"${FAST:-}\" ]"));
    let port = flag(&roles[3].flag_uses(is_switch), "port").clone();
    assert_eq!((port.value, port.condition), (FlagValue::Scalar { text: "30001".into(), quoted: false, ty: ScalarType::Str }, None));
}

#[test]
fn broken_scripts_do_not_panic() {
    let file = load("scripts/broken.sh");
    assert!(file.deployments.is_empty(), "a launch line inside a heredoc is text: {:#?}", file.deployments);
    let file = load("scripts/unterminated_quote.sh");
    assert!(file.notes.iter().any(|n| n.level == NoteLevel::Warning && n.message.contains("syntax error")));
}

#[test]
fn bind_pairs_flags_by_arity() {
    let src = SourceText::new("t.sh", "--a 1 --sw pos --neg -1 --eq=x --last".into());
    let mut offset = 0;
    let tokens: Vec<ArgToken> = src
        .text
        .split(' ')
        .map(|w| {
            let span = src.span(offset, offset + w.len());
            offset += w.len() + 1;
            ArgToken { value: Known::Value(w.into()), raw: w.into(), span, quoted: false, condition: None, unread: None }
        })
        .collect();
    let b = bind(&tokens, |n| n == "sw");
    let names: Vec<_> = b.flags.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "sw", "neg", "eq", "last"]);
    assert_eq!(b.flags[1].value, FlagValue::Switch { on: true });
    assert_eq!(b.unbound.len(), 1, "`pos` after a switch is a positional");
    assert!(matches!(&b.flags[2].value, FlagValue::Scalar { text, .. } if text == "-1"));
    assert_eq!(src.slice(&b.flags[3].key_span), "eq");
    assert_eq!(src.slice(&b.flags[3].value_span), "x");
    assert_eq!(b.flags[4].value, FlagValue::Switch { on: true });
    // Without arity knowledge `--sw pos` binds `pos` as a value.
    assert!(bind(&tokens, |_| false).unbound.is_empty());
}

// ---- the real recipes ---------------------------------------------------------------------

#[test]
fn every_real_recipe_loads() {
    let root = std::env::var_os("ENGINE_AUDIT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
        .join("recipes");
    if !root.is_dir() {
        eprintln!("note: {} not found; real-recipe test skipped", root.display());
        return;
    }
    let (files, errors) = collect(std::slice::from_ref(&root));
    assert!(errors.is_empty(), "{errors:#?}");
    let count = |k: &RecipeKind| files.iter().filter(|f| &f.kind == k).count();
    let deployments: usize = files.iter().map(|f| f.deployments.len()).sum();
    let flags: usize = files.iter().flat_map(|f| &f.deployments).flat_map(|d| &d.roles).map(|r| r.flags.len()).sum();
    eprintln!(
        "real recipes: {} files ({} srt-slurm, {} master, {} other), {deployments} deployments, {flags} flag uses",
        files.len(),
        count(&RecipeKind::SrtSlurm),
        count(&RecipeKind::MasterConfig),
        files.len() - count(&RecipeKind::SrtSlurm) - count(&RecipeKind::MasterConfig),
    );
    // configs/*-master.yaml and configs/deprecated/*-master.yaml.
    assert!(count(&RecipeKind::MasterConfig) >= 10, "{}", count(&RecipeKind::MasterConfig));
    assert!(count(&RecipeKind::SrtSlurm) >= 40);
    for file in files.iter().filter(|f| f.kind == RecipeKind::SrtSlurm) {
        assert!(!file.deployments.is_empty(), "{}", file.path);
        assert!(file.notes.iter().all(|n| n.level != NoteLevel::Error), "{}: {:#?}", file.path, file.notes);
        for d in &file.deployments {
            assert!(d.container.is_some(), "{}", file.path);
            for r in &d.roles {
                for f in &r.flags {
                    // Every key span reads back as the written key.
                    assert_eq!(at(file, &f.key_span).replace('_', "-"), f.name, "{}", file.path);
                }
            }
        }
    }

    let lowlat = files.iter().find(|f| f.path.ends_with("dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_lowlat_0.yaml")).unwrap();
    let d = &lowlat.deployments[0];
    let bs = flag(&role(d, "prefill").flags, "cuda-graph-max-bs");
    assert_eq!((bs.key_span.line, bs.key_span.column), (85, 7));
    assert_eq!(at(lowlat, &bs.value_span), "256");
    assert_eq!(d.image.as_ref().unwrap().version.as_deref(), Some("0.5.12.post1"));
    assert!(matches!(d.dynamo.as_ref().unwrap().reference, Some(DynamoRef::Hash { .. })));

    // The override-format glm5 file expands to one deployment per zip index.
    let glm = files.iter().find(|f| f.path.ends_with("glm5/gb200-fp4/glm5-mtp.yaml")).unwrap();
    assert_eq!(glm.deployments.len(), 4 + 6 + 4 + 3);

    let master = files.iter().find(|f| f.kind == RecipeKind::MasterConfig && f.path.ends_with("configs/nvidia-master.yaml")).unwrap();
    let m = master.master.as_ref().unwrap();
    let entry = m.entries.iter().find(|e| e.key.value == "dsr1-fp4-b200-dynamo-sglang-mtp").unwrap();
    assert_eq!(entry.image.as_ref().unwrap().value, "lmsysorg/sglang:v0.5.12.post1");
    assert!(entry.links.iter().any(|l| l.recipe.as_deref()
        == Some("benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_lowlat_0.yaml")));
    // Every linked recipe present in this checkout is one of the loaded files.
    let linked: Vec<&str> = m.entries.iter().flat_map(|e| &e.links).filter_map(|l| l.recipe.as_deref()).collect();
    let present = linked.iter().filter(|r| root.join(r).is_file()).count();
    eprintln!(
        "master: {} entries, {} links ({} resolved, {} present here)",
        m.entries.len(),
        m.entries.iter().map(|e| e.links.len()).sum::<usize>(),
        linked.len(),
        present
    );
    assert!(present >= 9);
}

#[test]
fn recipe_files_serialize_to_json() {
    for rel in ["srt/disagg.yaml", "master.yaml", "scripts/launch_basic.sh"] {
        let json = serde_json::to_value(load(rel)).unwrap();
        assert!(json["path"].as_str().unwrap().ends_with(rel));
    }
    let json = serde_json::to_value(load("srt/disagg.yaml")).unwrap();
    let flag = &json["deployments"][0]["roles"][0]["flags"][1];
    assert_eq!(flag["name"], "cuda-graph-max-bs");
    assert_eq!(flag["value"]["type"], "scalar");
    assert_eq!(flag["key_span"]["line"], 29);
    assert_eq!(json["kind"]["kind"], "srt_slurm");
}

#[test]
fn assign_defaults_and_arithmetic_follow_bash() {
    let text = "#!/bin/bash\n: \"${BASE_PORT:=30000}\"\nMODE=\n: \"${MODE:=fast}\"\nPORT=$(( BASE_PORT + 1 ))\npython3 -m sglang.launch_server --mode \"$MODE\" --port $PORT --base $BASE_PORT\n";
    let file = load_text("d.sh", text.into(), &LinkMapping::default()).unwrap();
    let flags = file.deployments[0].roles[0].flag_uses(is_switch);
    let value = |name: &str| flag(&flags, name).value.clone();
    let scalar = |t: &str, quoted| FlagValue::Scalar { text: t.into(), quoted, ty: ScalarType::Str };
    // A script variable set empty takes the default; one from the environment may keep its own value.
    assert_eq!(value("mode"), scalar("fast", true));
    assert!(matches!(value("base"), FlagValue::Dynamic { .. }), "{:?}", value("base"));
    assert!(matches!(value("port"), FlagValue::Dynamic { .. }));
}

/// tree-sitter-bash puts the blank before `${B}` in `"${A} ${B}"` into the
/// expansion: it is read as text, and `${B}` still expands.
#[test]
fn adjacent_expansions_in_a_string_both_expand() {
    let text = "#!/bin/bash\nA=\"--tp-size 8\"\nB=\"--enable-metrics\"\nS=\"python3 -m sglang.launch_server ${A} ${B} $A\"\n$S\n";
    let file = load_text("s.sh", text.into(), &LinkMapping::default()).unwrap();
    let words: Vec<_> = file.deployments[0].roles[0].argv.as_ref().unwrap().iter().filter_map(|t| t.value.value().cloned()).collect();
    assert_eq!(words, ["--tp-size", "8", "--enable-metrics", "--tp-size", "8"]);
}

// ---- srt-slurm schema 2 ----------------------------------------------------------

fn errors(file: &RecipeFile) -> Vec<&str> {
    file.notes.iter().filter(|n| n.level == NoteLevel::Error).map(|n| n.message.as_str()).collect()
}

#[test]
fn schema_2_roles_engine_environment_and_dynamo_source() {
    let file = load("srt2/disagg.yaml");
    assert_eq!(file.kind, RecipeKind::SrtSlurm);
    assert!(errors(&file).is_empty(), "{:?}", errors(&file));
    let [d] = file.deployments.as_slice() else { panic!("{:#?}", file.deployments) };
    assert_eq!((d.engine, d.name.as_str()), ("sglang", "tiny-disagg-v2"));
    assert_eq!(d.image.as_ref().unwrap().version.as_deref(), Some("0.5.12.post1"));
    assert_eq!(d.worker.as_ref().map(|w| w.consumer), Some("dynamo"));
    let prefill = role(d, "prefill");
    assert_eq!(
        prefill.flags.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["tensor-parallel-size", "fp4-gemm-backend", "cuda-graph-max-bs", "disable-radix-cache"]
    );
    let bs = flag(&prefill.flags, "cuda-graph-max-bs");
    assert_eq!(at(&file, &bs.key_span), "cuda_graph_max_bs", "the key as written, read as srtctl passes it");
    assert_eq!(bs.key_span.line, 33);
    assert_eq!(flag(&prefill.flags, "disable-radix-cache").value, FlagValue::Switch { on: true });
    assert_eq!(prefill.env[0].name, "SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK");
    let FlagValue::List { items } = &flag(&role(d, "decode").flags, "cuda-graph-bs").value else { panic!() };
    assert_eq!(items.len(), 3);
    assert_eq!(d.common_env.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["PYTHONUNBUFFERED"]);
    let dynamo = d.dynamo.as_ref().unwrap();
    assert_eq!(dynamo.field, "source.rev");
    assert!(matches!(&dynamo.reference, Some(DynamoRef::Hash { hash }) if hash.starts_with("5b4bc1dd")));
}

#[test]
fn schema_2_bundle_in_base_zips_point_by_point_and_null_deletes() {
    let file = load("srt2/bundle.yaml");
    assert!(errors(&file).is_empty(), "{:?}", errors(&file));
    let variants: Vec<_> = file.deployments.iter().map(|d| d.variant.clone().unwrap()).collect();
    assert_eq!(variants, ["override_no_graph", "zip_override_sweep[0]", "zip_override_sweep[1]"]);
    let no_graph = role(&file.deployments[0], "agg");
    assert!(no_graph.flags.iter().all(|f| f.name != "cuda-graph-max-bs"), "null deletes the base key");
    assert!(no_graph.env.iter().any(|e| e.name == "SGLANG_FLASHINFER_FP4_GEMM_BACKEND"));
    assert!(no_graph.env.iter().any(|e| e.name == "SGLANG_RADIX_FORCE_MISS"), "env maps merge");
    for (i, want) in ["10", "30"].iter().enumerate() {
        let agg = role(&file.deployments[i + 1], "agg");
        let v = flag(&agg.flags, "scheduler-recv-interval");
        assert_eq!(
            v.value,
            FlagValue::Scalar { text: want.to_string(), quoted: false, ty: ScalarType::Int },
            "one value per point, never the list"
        );
        assert_eq!(file.deployments[i + 1].worker, None, "`frontend.type: sglang` is the engine's own server");
    }
}

#[test]
fn schema_2_roles_of_different_engines_are_separate_deployments() {
    let file = load("srt2/mixed-engines.yaml");
    assert!(errors(&file).is_empty(), "{:?}", errors(&file));
    let engines: Vec<_> =
        file.deployments.iter().map(|d| (d.engine, d.roles.iter().map(|r| r.role.as_str()).collect::<Vec<_>>())).collect();
    assert_eq!(engines, [("vllm", vec!["prefill"]), ("tilert", vec!["decode"])]);
    assert_eq!(flag(&role(&file.deployments[1], "decode").flags, "decode-batch").value_span.line, 23);
}

#[test]
fn schema_2_trtllm_args_are_nested_yaml_and_extra_args_are_argv() {
    let file = load("srt2/trtllm.yaml");
    assert!(errors(&file).is_empty(), "{:?}", errors(&file));
    assert_eq!(file.deployments.len(), 2);
    let d = &file.deployments[0];
    assert_eq!(d.engine, "trtllm");
    assert_eq!(
        d.container.as_ref().unwrap().value,
        "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24",
        "identity's image when model names none"
    );
    let agg = role(d, "agg");
    // The args are the keys of the YAML file the engine reads, nested, each
    // with its own line: not flags. The first variant's `max_batch_size` is
    // the sweep's first point, at the sweep's line.
    let keys: Vec<(&str, u32)> = agg.config.iter().map(|c| (c.path.as_str(), c.key_span.line)).collect();
    assert_eq!(
        keys,
        [
            ("max_batch_size", 32),
            ("kv_cache_config", 22),
            ("kv_cache_config.free_gpu_memory_fraction", 23),
            ("kv_cache_config.dtype", 24),
            ("moe_config", 25),
            ("moe_config.backend", 26)
        ]
    );
    assert!(agg.flags.is_empty());
    assert_eq!(agg.config[0].shadowed.len(), 1, "the base's line, edited along with it");
    let config = |path: &str| agg.config.iter().find(|c| c.path == path).unwrap();
    assert_eq!(config("kv_cache_config").value, ConfigValue::Map);
    assert_eq!(config("kv_cache_config.dtype").name(), "dtype");
    assert_eq!(config("kv_cache_config.dtype").parent_and_name(), ("kv_cache_config", "dtype"));
    assert_eq!(config("max_batch_size").value, ConfigValue::Scalar { text: "16".into(), quoted: false, ty: ScalarType::Int });
    let words: Vec<_> = agg.argv.as_ref().unwrap().iter().map(|t| t.raw.as_str()).collect();
    assert_eq!(words, ["--tool_parser", "minimax_m3"]);
}

#[test]
fn schema_2_layouts_srtctl_rejects_are_error_notes_naming_the_key() {
    let file = load("srt2/unknown-schema.yaml");
    assert!(file.deployments.is_empty(), "an unknown schema's roles are not read as if known");
    assert!(errors(&file).iter().any(|e| e.contains("`schema: `3``") && e.contains("Write `schema: 2`")), "{:?}", errors(&file));

    let file = load("srt2/unknown-key.yaml");
    let errs = errors(&file);
    assert!(errs.iter().any(|e| e.starts_with("`rolez`")), "{errs:?}");
    assert!(errs.iter().any(|e| e.starts_with("`roles.agg.envs`")), "{errs:?}");
    assert_eq!(file.deployments.len(), 1, "the rest is read");

    let file = load("srt2/unknown-engine.yaml");
    assert!(file.deployments.is_empty());
    assert!(errors(&file).iter().any(|e| e.contains("`engine: sglangx` names no engine")), "{:?}", errors(&file));
}

#[test]
fn schema_2_atom_args_keep_the_spelling_srtctl_passes() {
    // srtctl's ATOM backend passes each key as written (`--kv_cache_dtype`),
    // not with `_` turned into `-`: ATOM's parser tells the two apart.
    let file = load("srt2/atom.yaml");
    assert!(errors(&file).is_empty(), "{:?}", errors(&file));
    let d = &file.deployments[0];
    assert_eq!(d.engine, "atom");
    let names: Vec<&str> = role(d, "agg").flags.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["kv_cache_dtype", "max-num-seqs", "block-size"]);
}

#[test]
fn a_nul_byte_is_refused_by_every_reader_not_only_the_file_loader() {
    // The readers are reached without `load_text` too (config, rules, `pr`
    // trees): each refuses the text itself, naming the file and the offset.
    let script = "#!/bin/bash\n# note\0\npython3 -m sglang.launch_server --made-up-flag 1\n";
    let src = SourceText::new("launch.sh", script.to_string());
    assert!(matches!(launch_script::read(&src), Err(RecipeError::NotText { ref path, offset: 18 }) if path == "launch.sh"));
    let master = "dsr1-fp4-b200-sglang:\n  # note\0\n  image: lmsysorg/sglang:v0.5.19\n";
    let src = SourceText::new("configs/master.yaml", master.to_string());
    let Err(err) = registry::read(&src, &LinkMapping::default()) else { panic!("a NUL byte in a master config was read") };
    assert!(err.to_string().contains("configs/master.yaml: holds a NUL byte at offset 30"), "{err}");
}

/// The words bash passes for a launch line read from `text`, per command line
/// reaching it (in the order the evaluator records them).
fn words_of(text: &str) -> Vec<Vec<String>> {
    let file = load_text("w.sh", text.into(), &LinkMapping::default()).unwrap();
    file.deployments[0]
        .roles
        .iter()
        .map(|r| r.argv.as_ref().unwrap().iter().map(|t| t.value.value().cloned().unwrap_or_else(|| format!("?{}", t.raw))).collect())
        .collect()
}

/// An empty array in quotes and an empty string unquoted give no word (issue
/// 42's seed: `--stream-interval 10 "${A[@]}" $E` passed 10 and an empty word).
#[test]
fn empty_arrays_and_empty_unquoted_strings_are_no_word() {
    let text = "A=()\nif [ \"$X\" = \"true\" ]; then A=(--foo 1); fi\nE=\"\"\npython3 -m sglang.launch_server --stream-interval 10 \"${A[@]}\" $E\n";
    let mut lines = words_of(text);
    lines.sort();
    assert_eq!(lines, [vec!["--stream-interval", "10"], vec!["--stream-interval", "10", "--foo", "1"]]);
    // `declare -a` and `local -a` make empty arrays; `""` stays one empty word.
    let text = "declare -a B\nf() { local -a C; C+=(--c); python3 -m sglang.launch_server --x 1 \"${B[@]}\" \"${C[@]}\" \"\"; }\nf\n";
    assert_eq!(words_of(text), [vec!["--x", "1", "--c", ""]]);
}

/// A loop runs its body a number of times the script does not know (`while
/// (( C < CONC ))` doubles `C` up to the job's concurrency): what the body
/// changes is unknown after it, never the value after exactly one pass.
#[test]
fn what_a_loop_changes_is_unknown_after_it() {
    let text = "C=4\nwhile (( C < CONC )); do C=$((C * 2)); done\n(( C > 2048 )) && C=2048\npython3 -m sglang.launch_server --cuda-graph-max-bs $C --tp 8\n";
    let mut lines = words_of(text);
    lines.sort();
    // The cap after the loop is a path of its own: there the value is known.
    assert_eq!(lines, [["--cuda-graph-max-bs", "2048", "--tp", "8"], ["--cuda-graph-max-bs", "?$C", "--tp", "8"]]);
    // `(( ))` compares numbers, `C` is the variable (as text, "C" > "2048").
    assert_eq!(words_of("C=8\n(( C > 2048 )) && C=2048\npython3 -m sglang.launch_server --x $C\n"), [["--x", "8"]]);
    let text = "ARGS=\"--tp 8\"\nfor n in 1 2; do ARGS=\"$ARGS --node $n\"; done\nK=1\nfor n in 1 2; do echo $n; done\npython3 -m sglang.launch_server $ARGS --k $K\n";
    assert_eq!(words_of(text), [vec!["?$ARGS", "--k", "1"]]);
}

/// A name a library function assigns still comes from the job's environment
/// where that function is not called: its expansion is an unknown word, never
/// none (`--ep-size $EP_SIZE` passed 0 values).
#[test]
fn a_variable_only_a_library_function_sets_comes_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.sh"), "set_ep() {\n    export EP_SIZE=\"$1\"\n    local width\n    echo \"$width\"\n}\n").unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "source \"$(dirname \"$0\")/lib.sh\"\npython3 -m sglang.launch_server --ep-size $EP_SIZE --tp 8\n").unwrap();
    let file = load_path(&script).unwrap();
    let argv = file.deployments[0].roles[0].argv.clone().unwrap();
    let raw: Vec<_> = argv.iter().map(|t| (t.raw.as_str(), t.value.is_dynamic())).collect();
    assert_eq!(raw, [("--ep-size", false), ("$EP_SIZE", true), ("--tp", false), ("8", false)]);
}

/// `bash -c "$CMD"`: a part of the string not known in the parent (a job
/// variable) stays one unknown word in the new shell, not an empty one.
#[test]
fn unknown_parts_of_a_bash_c_string_stay_unknown() {
    let text = "NODES=$(( (TP_SIZE + 7) / 8 ))\nCMD=\"python3 -m sglang.launch_server --nnodes ${NODES} --node-rank 0\"\nsetsid bash -c \"$CMD\"\n";
    assert_eq!(words_of(text), [vec!["--nnodes", "?${NODES}", "--node-rank", "0"]]);
}

/// Assignments before the launcher in a string run by `bash -c`, after a part
/// not known where the string was built (server_sglang.sh's `PREFILL_CMD="A=1
/// ${MOE_ENV} B=${N} python3 -m ..."`): each `NAME=` word is env of the launch,
/// its value known or known at run time only.
#[test]
fn assignments_after_an_unknown_part_of_a_bash_c_string_are_env_of_the_launch() {
    let text = "CMD=\"SGLANG_A=1 ${MOE_ENV} SGLANG_B=${N} python3 -m sglang.launch_server --tp 8\"\nsetsid bash -c \"$CMD\"\n";
    let file = load_text("e.sh", text.into(), &LinkMapping::default()).unwrap();
    let role = &file.deployments[0].roles[0];
    let env: Vec<(&str, Option<&String>)> = role.env.iter().map(|e| (e.name.as_str(), e.value.value())).collect();
    assert_eq!(env.iter().find(|(n, _)| *n == "SGLANG_A"), Some(&("SGLANG_A", Some(&"1".to_string()))), "{env:?}");
    assert_eq!(env.iter().find(|(n, _)| *n == "SGLANG_B").map(|(_, v)| v.is_none()), Some(true), "{env:?}");
    assert_eq!(words_of(text), [["--tp", "8"]]);
}

/// `eval "$CMD"` where `CMD` holds single quotes around a value not known when
/// it was built (`'{"ip": "${NODE0_ADDR}"}'`, expanded inside the double
/// quotes of the assignment): the quoted word is that unknown value, never the
/// expansion's text as a literal JSON string.
#[test]
fn a_value_not_known_stays_unknown_inside_quotes_of_an_eval_string() {
    let text = "NODE0_ADDR=\"${NODE0_ADDR:-localhost}\"\nCMD=\"python3 -m sglang.launch_server --cfg '{\\\"ip\\\": \\\"${NODE0_ADDR}\\\"}' --tp 8\"\neval \"$CMD\"\n";
    let lines = words_of(text);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0][0], "--cfg");
    assert!(lines[0][1].starts_with('?'), "{lines:?}");
    assert_eq!(lines[0][2..], ["--tp", "8"]);
}

/// `X=$(f ...)`: what the script's own function prints on each path through
/// it (what goes to stderr is not output), and nothing of its variables.
#[test]
fn a_function_s_output_is_the_value_of_its_command_substitution() {
    let text = r#"build() {
    local mode="$1"
    local args="--tp-size $2"
    if [[ "$mode" == "decode" ]]; then
        args="$args --speculative-num-steps 3"
    fi
    LEAK=1
    echo "building $mode" >&2
    echo "$args"
}
P=$(build prefill 8)
D="$(build decode 4)"
python3 -m sglang.launch_server $P $D --leak "$LEAK"
"#;
    assert_eq!(words_of(text), [vec!["--tp-size", "8", "--tp-size", "4", "--speculative-num-steps", "3", "--leak", ""]]);
    // A test the function cannot decide forks the caller: one command line per path.
    let text = "build() {\n    if [ \"$1\" -gt 0 ]; then\n        echo \"--mtp $1\"\n    else\n        echo \"--no-mtp\"\n    fi\n}\nC=$(build \"$MTP\")\npython3 -m sglang.launch_server $C\n";
    let mut lines = words_of(text);
    lines.sort();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].len() == 2 && lines[0][0] == "--mtp" && lines[0][1].starts_with('?'), "{lines:?}");
    assert_eq!(lines[1], ["--no-mtp"]);
}

/// `source $WS_PATH/env.sh`: the folder is a mount the job sets; the file is
/// next to the script, read from there (said in a note), and its exports
/// reach the server.
#[test]
fn a_sourced_file_in_an_unknown_folder_is_read_from_beside_the_script() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("env.sh"), "export SGLANG_SPEC_X=\"${SGLANG_SPEC_X:-1}\"\nexport PLAIN=2\n").unwrap();
    let script = dir.path().join("server.sh");
    std::fs::write(&script, "source $WS_PATH/env.sh\npython3 -m sglang.launch_server --tp 8\n").unwrap();
    let file = load_path(&script).unwrap();
    let d = &file.deployments[0];
    let env: Vec<_> = d.common_env.iter().map(|e| (e.name.as_str(), e.value.value().cloned())).collect();
    assert_eq!(env, [("SGLANG_SPEC_X", None), ("PLAIN", Some("2".into()))]);
    assert!(
        file.notes.iter().any(|n| n.message.contains("`$WS_PATH` is not known; read env.sh from the script's own folder")),
        "{:?}",
        file.notes
    );
}

/// A variable the script assigns on one path only but checks the job sets
/// (`check_env_vars MAX_MODEL_LEN`, a function reading `${!name}`) comes from
/// the job elsewhere: one unknown word, not none (EA006 "passes 0").
#[test]
fn a_variable_the_script_checks_the_job_sets_comes_from_the_job() {
    let text = "check_env_vars() {\n    for v in \"$@\"; do [ -z \"${!v}\" ] && exit 1; done\n}\ncheck_env_vars MAX_MODEL_LEN\nif [ \"$EVAL_ONLY\" = true ]; then MAX_MODEL_LEN=8192; fi\npython3 -m sglang.launch_server --max-model-len $MAX_MODEL_LEN --tp 8\n";
    let mut lines = words_of(text);
    lines.sort();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l.len() == 4), "{lines:?}");
    assert!(lines.iter().any(|l| l[1] == "8192") && lines.iter().any(|l| l[1].starts_with('?')), "{lines:?}");
}

/// A launcher held in a variable that a sourced library assigns (`source
/// lib.sh` then `$SERVER --tp 2`): whether the statements after the `source`
/// may launch is judged again once the library is read. Judged before, the
/// library was run only up to its own last launch (it has none), so `SERVER`
/// was never assigned and the launch was missed without a word.
#[test]
fn a_launcher_that_a_sourced_library_assigns_is_reached() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.sh"), "SERVER=\"python3 -m sglang.launch_server\"\nARGS=(--tp 2)\n").unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "source \"$(dirname \"$0\")/lib.sh\"\n$SERVER \"${ARGS[@]}\"\necho done\n").unwrap();
    let file = load_path(&script).unwrap();
    let argv: Vec<&str> = file.deployments[0].roles[0].argv.as_ref().unwrap().iter().map(|t| t.raw.as_str()).collect();
    assert_eq!(argv, ["--tp", "2"]);
}

/// What a sourced file assigns is read once per run and shared by every
/// script that sources it, for exactly its text: a library changed between
/// two reads is read again (its launcher variable renamed here).
#[test]
fn a_sourced_library_is_judged_by_its_text_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib.sh");
    std::fs::write(&lib, "SERVER=\"python3 -m sglang.launch_server\"\n").unwrap();
    let first = dir.path().join("first.sh");
    std::fs::write(&first, "source \"$(dirname \"$0\")/lib.sh\"\n$SERVER --tp 2\n").unwrap();
    let argv =
        |file: &RecipeFile| -> Vec<String> { file.deployments[0].roles[0].argv.as_ref().unwrap().iter().map(|t| t.raw.clone()).collect() };
    assert_eq!(argv(&load_path(&first).unwrap()), ["--tp", "2"]);
    std::fs::write(&lib, "SERVER=echo\nOTHER=\"python3 -m sglang.launch_server\"\n").unwrap();
    let second = dir.path().join("second.sh");
    std::fs::write(&second, "source \"$(dirname \"$0\")/lib.sh\"\n$OTHER --tp 4\n").unwrap();
    assert_eq!(argv(&load_path(&second).unwrap()), ["--tp", "4"]);
    assert!(load_path(&first).unwrap().deployments.is_empty());
}

/// A string built from an array that paths merged past the cap disagree on,
/// then run by `eval` (server_atom.sh's `DECODE_CMD` with its
/// `${DECODE_PARALLEL_ARGS[*]}`): the merged part stays unknown in the eval'd
/// string. Read again as `$A` it was the array's first element, a second
/// `--tp-size` on the line.
#[test]
fn a_merged_array_in_an_eval_string_is_not_read_again_as_its_first_element() {
    let mut text = String::from("A=(--tp-size \"$TP\")\nif [ \"$M\" = ep ]; then A=(--tp-size \"$TP\" $EP_FLAGS); fi\n");
    for i in 1..=5 {
        text.push_str(&format!("if [ \"$B{i}\" = 1 ]; then F{i}=--f{i}; else F{i}=--g{i}; fi\n"));
    }
    text.push_str("CMD=\"python3 -m sglang.launch_server ${A[*]} $F1 $F2 $F3 $F4 $F5\"\neval \"$CMD\"\n");
    let lines = words_of(&text);
    assert!(!lines.is_empty());
    for line in &lines {
        assert_eq!(line.iter().filter(|w| *w == "--tp-size").count(), 1, "{line:?}");
    }
}
