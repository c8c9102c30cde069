//! The model table on `fixtures/amd/models.yaml` (two models shaped like the
//! real ones) and on small texts for the edge cases.

use super::*;
use crate::recipe::{load_text, NoteLevel};

const FIXTURE: &str = include_str!("../../../fixtures/amd/models.yaml");

fn load_as(path: &str, text: &str) -> RecipeFile {
    load_text(path, text.to_string(), &LinkMapping::default()).unwrap()
}

fn fixture() -> RecipeFile {
    load_as("amd_utils/models.yaml", FIXTURE)
}

fn deployment<'f>(file: &'f RecipeFile, model: &str, variant: &str) -> &'f Deployment {
    file.deployments
        .iter()
        .find(|d| d.name == model && d.variant.as_deref() == Some(variant))
        .unwrap_or_else(|| panic!("no {model} [{variant}]"))
}

/// A role's flags bound as SGLang binds them (the fixture's switches).
fn flags(d: &Deployment, role: &str) -> Vec<FlagUse> {
    let switches = ["enable-dp-attention", "enable-dp-lm-head", "disable-radix-cache", "prefill-round-robin-balance"];
    d.roles.iter().find(|r| r.role == role).unwrap().flag_uses(|n| switches.contains(&n))
}

fn flag<'f>(flags: &'f [FlagUse], name: &str) -> &'f FlagUse {
    flags.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name} in {:?}", flags.iter().map(|f| &f.name).collect::<Vec<_>>()))
}

fn at<'t>(file: &'t RecipeFile, span: &Span) -> &'t str {
    &file.text[span.offset..span.end()]
}

fn apply(file: &RecipeFile, edits: &[Edit]) -> String {
    let mut text = file.text.clone();
    let mut edits = edits.to_vec();
    edits.sort_by_key(|e| std::cmp::Reverse(e.offset));
    for e in edits {
        text.replace_range(e.offset..e.offset + e.len, &e.replacement);
    }
    text
}

#[test]
fn the_sglang_table_is_read_and_other_engines_tables_are_not() {
    let file = fixture();
    assert_eq!(file.kind, RecipeKind::AmdModels);
    assert!(file.format().owns(&RecipeKind::AmdModels));
    let vllm =
        "Kimi:\n  prefill_flags: \"--tensor-parallel-size 8\"\n  decode_flags: \"--tensor-parallel-size 8\"\n  env: \"VLLM_USE_V1=1\"\n";
    // The vLLM table is read by its own reader (see the test below).
    assert_eq!(load_as("amd_utils/models_vllm.yaml", vllm).deployments[0].engine, "vllm");
    // Named for another engine: never read as SGLang, whatever its shape.
    let file = load_as("models_atom.yaml", FIXTURE);
    assert_eq!(file.kind, RecipeKind::Other { backend: Some("atom".into()) });
    assert!(file.deployments.is_empty());
    // Another engine's shape without the name is no table at all.
    assert_eq!(load_as("models.yaml", vllm).kind, RecipeKind::Other { backend: None });
    assert_eq!(load_as("x.yaml", "a:\n  b: 1\n").kind, RecipeKind::Other { backend: None });
    assert_eq!(load_as("x.yaml", "rules:\n  - framework: x\n").kind, RecipeKind::Other { backend: None });
}

#[test]
fn every_configuration_the_script_builds_is_a_deployment() {
    let file = fixture();
    let variants: Vec<String> =
        file.deployments.iter().map(|d| format!("{} [{}]", d.name, d.variant.as_deref().unwrap_or_default())).collect();
    assert_eq!(
        variants,
        [
            "DeepSeek-R1-0528 [dp]",
            "DeepSeek-R1-0528 [dp, mtp]",
            "DeepSeek-R1-0528 [ep_only]",
            "DeepSeek-R1-0528 [ep_only, mtp]",
            "DeepSeek-R1-0528 [no_dp]",
            "DeepSeek-R1-0528 [no_dp, mtp]",
            // `mtp_flags: ""`: MTP adds nothing, so no variant of its own.
            "GLM-5-FP8 [dp]",
            "GLM-5-FP8 [ep_only]",
            "GLM-5-FP8 [no_dp]",
        ]
    );
    for d in &file.deployments {
        assert_eq!(d.engine, "sglang");
        assert_eq!(d.roles.iter().map(|r| r.role.as_str()).collect::<Vec<_>>(), ["prefill", "decode"]);
        assert_eq!(at(&file, d.name_span.as_ref().unwrap()), d.name);
    }
    assert_eq!(model_deployments(&file, "GLM-5-FP8").len(), 3);
    assert!(model_deployments(&file, "GLM-5").is_empty());
    assert!(model_deployments(&load_as("models_vllm.yaml", FIXTURE), "GLM-5-FP8").is_empty());
}

#[test]
fn flag_strings_and_fields_become_flags_per_mode() {
    let file = fixture();
    let names = |d: &Deployment, role: &str| flags(d, role).into_iter().map(|f| f.name).collect::<Vec<_>>();
    let dp_mtp = deployment(&file, "DeepSeek-R1-0528", "dp, mtp");
    let decode = flags(dp_mtp, "decode");
    assert_eq!(flag(&decode, "enable-dp-attention").value, FlagValue::Switch { on: true });
    assert!(matches!(&flag(&decode, "speculative-algorithm").value, FlagValue::Scalar { text, .. } if text == "NEXTN"));
    assert!(matches!(&flag(&decode, "deepep-mode").value, FlagValue::Scalar { text, .. } if text == "normal"));
    assert_eq!(flag(&decode, "prefill-round-robin-balance").value, FlagValue::Switch { on: true });
    assert!(matches!(&flag(&decode, "mem-fraction-static").value, FlagValue::Scalar { text, ty: ScalarType::Float, .. } if text == "0.85"));
    // The script passes no chunk size to decode, and with DP attention and EP
    // the job's maximum concurrency as `--max-running-requests`.
    assert!(!names(dp_mtp, "decode").contains(&"chunked-prefill-size".to_string()));
    assert!(
        matches!(&flag(&decode, "max-running-requests").value, FlagValue::Dynamic { text } if text.starts_with("the job's maximum concurrency"))
    );
    assert!(
        matches!(&flag(&flags(dp_mtp, "prefill"), "chunked-prefill-size").value, FlagValue::Dynamic { text } if text.starts_with("MORI_MAX_DISPATCH_TOKENS_PREFILL"))
    );
    let FlagValue::List { items } = &flag(&decode, "cuda-graph-bs").value else { panic!() };
    assert_eq!(items.iter().map(|i| i.value.as_str()).collect::<Vec<_>>(), ["1", "2", "3", "4", "5", "6", "7", "8"], "seq 1 8");
    assert!(items.iter().all(|i| at(&file, &i.span) == "1-8"));
    // MTP goes to both servers (the prefill's draft layers must match the
    // decode's), and only in the MTP variant.
    assert!(names(dp_mtp, "prefill").contains(&"speculative-algorithm".to_string()));
    assert!(!names(deployment(&file, "DeepSeek-R1-0528", "dp"), "prefill").contains(&"speculative-algorithm".to_string()));
    let prefill = flags(dp_mtp, "prefill");
    let FlagValue::List { items } = &flag(&prefill, "cuda-graph-bs").value else { panic!() };
    assert_eq!(items.iter().map(|i| at(&file, &i.span)).collect::<Vec<_>>(), ["1", "2", "3"], "each value where it is written");

    let no_dp = deployment(&file, "DeepSeek-R1-0528", "no_dp");
    for absent in ["enable-dp-attention", "moe-a2a-backend", "speculative-algorithm"] {
        assert!(!names(no_dp, "decode").contains(&absent.to_string()), "{absent}");
    }
    assert!(matches!(&flag(&flags(no_dp, "prefill"), "chunked-prefill-size").value, FlagValue::Scalar { text, .. } if text == "262144"));
    assert!(matches!(&flag(&flags(no_dp, "decode"), "max-running-requests").value, FlagValue::Scalar { text, .. } if text == "128"));
    // EP without DP attention: ep_flags, and the ep_only block where the role has one (else no_dp's).
    let ep = deployment(&file, "DeepSeek-R1-0528", "ep_only");
    assert!(
        names(ep, "decode").contains(&"moe-a2a-backend".to_string()) && !names(ep, "decode").contains(&"enable-dp-attention".to_string())
    );
    let range = |role: &str| at(&file, &flag(&flags(ep, role), "cuda-graph-bs").value_span).to_string();
    assert_eq!((range("decode").as_str(), range("prefill").as_str()), ("\"1-16\"", "\"1-4\""));

    let glm = deployment(&file, "GLM-5-FP8", "dp");
    let prefill = flags(glm, "prefill");
    assert_eq!(flag(&prefill, "disable-radix-cache").value, FlagValue::Switch { on: false }, "false: not passed");
    // No CUDA graphs: `--disable-cuda-graph` in place of `--cuda-graph-bs`;
    // decode without a context length of its own gets the prefill's.
    assert_eq!(flag(&prefill, "disable-cuda-graph").value, FlagValue::Switch { on: true });
    assert!(prefill.iter().all(|f| f.name != "cuda-graph-bs"));
    assert!(matches!(&flag(&prefill, "context-length").value, FlagValue::Scalar { text, .. } if text == "9217"));
    assert!(matches!(&flag(&flags(glm, "decode"), "context-length").value, FlagValue::Scalar { text, .. } if text == "9217"));
    assert!(matches!(&flag(&prefill, "chunked-prefill-size").value, FlagValue::Scalar { text, quoted: true, .. } if text == "16384"));
    // A quoted JSON value with spaces is one word, as `bash -c` reads it, with
    // the backslashes the `eval`ed double quotes took away.
    let json = flag(&prefill, "model-loader-extra-config");
    assert!(matches!(&json.value, FlagValue::Scalar { text, quoted: true, .. } if text == r#"{"num_threads": 8}"#), "{:?}", json.value);
    assert_eq!(at(&file, &json.value_span), r#"'{\\\"num_threads\\\": 8}'"#);
}

#[test]
fn every_span_is_the_text_it_was_read_from() {
    let file = fixture();
    for d in &file.deployments {
        for role in ["prefill", "decode"] {
            for f in flags(d, role) {
                let key = at(&file, &f.key_span);
                let field = key.contains('_');
                if field {
                    assert_eq!(key.trim_end_matches("_range").replace('_', "-"), f.name);
                } else {
                    assert_eq!(key, f.name);
                    assert_eq!(&file.text[f.key_span.offset - 2..f.key_span.offset], "--");
                }
            }
        }
    }
    let decode = flags(deployment(&file, "DeepSeek-R1-0528", "dp, mtp"), "decode");
    let topk = flag(&decode, "speculative-eagle-topk");
    assert_eq!((topk.key_span.line, topk.key_span.column), (4, 47));
    assert_eq!(at(&file, &topk.value_span), "1");
    let balance = flag(&decode, "prefill-round-robin-balance");
    assert_eq!((balance.key_span.line, balance.key_span.column, at(&file, &balance.value_span)), (20, 5, "true"));
}

#[test]
fn what_the_format_cannot_read_is_noted() {
    let file = fixture();
    let warnings: Vec<&str> = file.notes.iter().filter(|n| n.level == NoteLevel::Warning).map(|n| n.message.as_str()).collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
    // A field the script reads for the other role only is named, not audited.
    let infos: Vec<&str> = file.notes.iter().filter(|n| n.level == NoteLevel::Info).map(|n| n.message.as_str()).collect();
    assert!(
        infos
            .iter()
            .any(|m| m
                .starts_with("`DeepSeek-R1-0528.decode.dp.chunked_prefill_size`: the server script does not pass it to the decode server")),
        "{infos:#?}"
    );
    let arithmetic = file.notes.iter().filter(|n| n.message.contains("is the bash arithmetic")).count();
    assert_eq!(arithmetic, 1, "once per field, not per variant (decode's is not passed)");
    assert!(file.notes.iter().any(|n| n.message.contains("env.sh")));

    let odd = "M:\n  base_flags: \"--a 1 # rest\"\n  dp_flags: \"--b $X\"\n  ep_flags:\n  mtp_flags: [x]\n  extra: 1\n  prefill:\n    dp:\n      cuda_graph_bs_range: \"9-1\"\n    no_dp: []\n";
    let file = load_as("models.yaml", odd);
    let messages: Vec<&str> = file.notes.iter().map(|n| n.message.as_str()).collect();
    for expected in [
        "`M.base_flags`: a `#` starts a shell comment",
        "`M.dp_flags`: `$X` is expanded by the shell at run time",
        "`M.ep_flags` is null",
        "`M.mtp_flags` should be a string of flags",
        "`M.extra`: not a key the server script reads",
        "`M.prefill.dp.cuda_graph_bs_range`: `9-1` is empty",
        "`M.prefill.no_dp` should be a map",
        "`M` has no `decode` map",
    ] {
        assert!(messages.iter().any(|m| m.starts_with(expected)), "{expected}: {messages:#?}");
    }
    let prefill = flags(deployment(&file, "M", "dp"), "prefill");
    assert!(matches!(flag(&prefill, "b").value, FlagValue::Dynamic { .. }));
    assert!(matches!(flag(&prefill, "cuda-graph-bs").value, FlagValue::Invalid { .. }));
    assert!(prefill.iter().all(|f| f.name != "rest"));
}

#[test]
fn a_string_over_several_lines_is_read_but_never_edited() {
    let text = "M:\n  base_flags: \"--tp 4\n    --log-level info\"\n  prefill: {}\n  decode: {}\n";
    let file = load_as("models.yaml", text);
    assert!(file.notes.iter().any(|n| n.message.contains("over several lines")));
    let decode = flags(deployment(&file, "M", "no_dp"), "decode");
    let level = flag(&decode, "log-level");
    assert_eq!(at(&file, &level.key_span), "\"--tp 4\n    --log-level info\"", "the whole value");
    assert!(file.edit(EditIntent::Rename { span: &level.key_span, old: "log-level", new: "log-lvl" }).is_empty());
    assert!(file.edit(EditIntent::Delete { key: &level.key_span, value: &level.value_span }).is_empty());
}

#[test]
fn renames_switch_rewrites_and_deletes_edit_the_flag_strings() {
    let file = fixture();
    let decode = flags(deployment(&file, "DeepSeek-R1-0528", "dp, mtp"), "decode");
    let mode = flag(&decode, "deepep-mode");
    let edited = apply(&file, &file.edit(EditIntent::Rename { span: &mode.key_span, old: "deepep-mode", new: "moe-deepep-mode" }));
    assert!(edited.contains("--moe-a2a-backend mori --moe-deepep-mode normal\"\n"));
    assert!(file.edit(EditIntent::Rename { span: &mode.key_span, old: "deepep-mode", new: "a b" }).is_empty(), "never a word that splits");

    let head = flag(&decode, "enable-dp-lm-head");
    let edited = apply(&file, &file.edit(EditIntent::RenameSwitch { flag: head, new_name: "dp-lm-head", value: "on" }));
    assert!(edited.contains("--moe-dense-tp-size 1 --dp-lm-head=on\"\n"));
    let into = [("a-x".to_string(), "off".to_string()), ("a-y".to_string(), "off".to_string())];
    let edited = apply(&file, &file.edit(EditIntent::SplitSwitch { flag: head, into: &into }));
    assert!(edited.contains("--moe-dense-tp-size 1 --a-x=off --a-y=off\"\n"));

    // Deleted with its value and one blank, at the start, middle or end of a string.
    let delete = |f: &FlagUse| apply(&file, &file.edit(EditIntent::Delete { key: &f.key_span, value: &f.value_span }));
    assert!(delete(mode).contains("  ep_flags: \"--ep-dispatch-algorithm fake --moe-a2a-backend mori\"\n"));
    assert!(delete(flag(&decode, "speculative-algorithm")).contains("  mtp_flags: \"--speculative-eagle-topk 1\"\n"));
    assert!(delete(flag(&decode, "moe-dense-tp-size")).contains("  dp_flags: \"--enable-dp-attention --enable-dp-lm-head\"\n"));
    assert!(
        delete(flag(&decode, "enable-dp-attention")).contains("  dp_flags: \"--moe-dense-tp-size 1 --enable-dp-lm-head\"\n"),
        "a switch"
    );
    assert!(delete(head).contains("  dp_flags: \"--enable-dp-attention --moe-dense-tp-size 1\"\n"));
    let only = load_as("models.yaml", "M:\n  base_flags: \"--tp 4\"\n  mtp_flags: --x 1\n  prefill: {}\n  decode: {}\n");
    let decode = flags(deployment(&only, "M", "no_dp, mtp"), "decode");
    let tp = flag(&decode, "tp");
    assert!(apply(&only, &only.edit(EditIntent::Delete { key: &tp.key_span, value: &tp.value_span })).contains("  base_flags: \"\"\n"));
    let x = flag(&decode, "x");
    assert!(only.edit(EditIntent::Delete { key: &x.key_span, value: &x.value_span }).is_empty(), "a plain scalar left empty is null");

    let json = delete(flag(&flags(deployment(&file, "GLM-5-FP8", "dp"), "prefill"), "model-loader-extra-config"));
    assert!(json.contains("  base_flags: \"--log-level warning --tool-call-parser glm47\"\n"), "{json}");
    // Every edit leaves a table that reads back.
    for edited in [delete(mode), json] {
        assert_eq!(load_as("models.yaml", &edited).deployments.len(), 9, "{edited}");
    }
}

#[test]
fn fields_are_deleted_or_set_but_never_renamed() {
    let file = fixture();
    let decode = flags(deployment(&file, "DeepSeek-R1-0528", "dp"), "decode");
    let balance = flag(&decode, "prefill-round-robin-balance");
    assert!(file.edit(EditIntent::Rename { span: &balance.key_span, old: &balance.name, new: "balance" }).is_empty());
    assert!(file.edit(EditIntent::RenameSwitch { flag: balance, new_name: "balance", value: "on" }).is_empty());
    let edited = apply(&file, &file.edit(EditIntent::Delete { key: &balance.key_span, value: &balance.value_span }));
    assert!(edited.contains("    mem_fraction_static: 0.85\n    dp:\n      max_running_requests: 4096\n"), "{edited}");

    let mem = flag(&decode, "mem-fraction-static");
    assert!(apply(&file, &file.edit(EditIntent::SetValue { span: &mem.value_span, value: "0.9" })).contains("mem_fraction_static: 0.9\n"));
    let glm_prefill = flags(deployment(&file, "GLM-5-FP8", "dp"), "prefill");
    let chunk = flag(&glm_prefill, "chunked-prefill-size");
    let edited = apply(&file, &file.edit(EditIntent::SetValue { span: &chunk.value_span, value: "8192" }));
    assert!(edited.contains("      chunked_prefill_size: \"8192\"\n"), "quotes kept");
    let bs = flag(&decode, "cuda-graph-bs");
    assert!(file.edit(EditIntent::SetValue { span: &bs.value_span, value: "8" }).is_empty(), "a range is no single value");
    let decode = flags(deployment(&file, "DeepSeek-R1-0528", "dp, mtp"), "decode");
    let topk = flag(&decode, "speculative-eagle-topk");
    assert!(
        apply(&file, &file.edit(EditIntent::SetValue { span: &topk.value_span, value: "2" })).contains("--speculative-eagle-topk 2\"\n")
    );
}

#[test]
fn words_split_as_bash_splits_them() {
    let chars = |s: &str| s.chars().enumerate().map(|(at, c)| SrcChar { c, at, len: 1 }).collect::<Vec<_>>();
    let words = |s: &str| {
        let mut problems = Vec::new();
        let words = shell_words(&chars(s), &mut problems);
        (words.into_iter().map(|w| (w.value, w.quoted, w.dynamic)).collect::<Vec<_>>(), problems)
    };
    let (w, p) = words(r#"--a 'x y' --b "q \"r\" $S" c\ d --e=f"#);
    assert_eq!(
        w,
        [
            ("--a".to_string(), false, false),
            ("x y".to_string(), true, false),
            ("--b".to_string(), false, false),
            (r#"q "r" $S"#.to_string(), true, true),
            ("c d".to_string(), false, false),
            ("--e=f".to_string(), false, false),
        ]
    );
    assert!(p.is_empty());
    let (w, p) = words("--a 'open");
    assert!(w[1].2 && p[0].contains("never closed"));
    let (w, p) = words("--a x;y");
    assert!(w[1].2 && p[0].contains("shell operator"));
}

/// `models_vllm.yaml`: per model one vLLM deployment, each role's flag string
/// split into words at their places, `env` for both roles and `<role>_env` for
/// one, unknown keys named.
#[test]
fn the_vllm_table_is_read_as_vllm_serve_gets_it() {
    let text = "Kimi-K2.5:\n  prefill_flags: \"--tensor-parallel-size 8 --max-num-batched-tokens 4K\"\n  decode_flags: \"--tensor-parallel-size 8 --no-enable-prefix-caching\"\n  env: \"VLLM_USE_V1=1 VLLM_ROCM_USE_AITER=1\"\n  prefill_env: \"VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4\"\n  hf_dir: \"models--amd--Kimi\"\n  tp_flags: \"--x\"\n";
    let file = load_as("amd_utils/models_vllm.yaml", text);
    assert_eq!(file.kind, RecipeKind::AmdModels);
    let [dep] = file.deployments.as_slice() else { panic!("{:?}", file.deployments) };
    assert_eq!((dep.engine, dep.name.as_str()), ("vllm", "Kimi-K2.5"));
    let words =
        |role: usize| -> Vec<String> { dep.roles[role].argv.as_ref().unwrap().iter().map(|t| at(&file, &t.span).to_string()).collect() };
    assert_eq!(words(0), ["--tensor-parallel-size", "8", "--max-num-batched-tokens", "4K"]);
    assert_eq!(words(1), ["--tensor-parallel-size", "8", "--no-enable-prefix-caching"]);
    let env: Vec<(String, String, String)> = dep
        .common_env
        .iter()
        .map(|e| (e.name.clone(), at(&file, &e.name_span).to_string(), at(&file, &e.value_span).to_string()))
        .collect();
    assert_eq!(env[1], ("VLLM_ROCM_USE_AITER".to_string(), "VLLM_ROCM_USE_AITER".to_string(), "1".to_string()));
    assert_eq!(dep.roles[0].env.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["VLLM_ROCM_QUICK_REDUCE_QUANTIZATION"]);
    assert!(dep.roles[1].env.is_empty());
    assert!(file.notes.iter().any(|n| n.message.contains("`Kimi-K2.5.tp_flags`: not a key")), "{:?}", file.notes);
    assert!(!file.notes.iter().any(|n| n.message.contains("`Kimi-K2.5.hf_dir`")), "{:?}", file.notes);
    // Not an SGLang table: the SGLang master entries find no model in it.
    assert!(model_deployments(&file, "Kimi-K2.5").is_empty());
}

// ---- the ATOM table ---------------------------------------------------------------

const ATOM_FIXTURE: &str = include_str!("../../../fixtures/amd/models_atom.yaml");

fn atom_fixture() -> RecipeFile {
    load_as("amd_utils/models_atom.yaml", ATOM_FIXTURE)
}

/// A role's flags bound as ATOM binds them (the fixture's switches).
fn atom_flags(d: &Deployment, role: &str) -> Vec<FlagUse> {
    let switches = ["enable-dp-attention", "enable-expert-parallel"];
    d.roles.iter().find(|r| r.role == role).unwrap().flag_uses(|n| switches.contains(&n))
}

fn scalar(flags: &[FlagUse], name: &str) -> String {
    match &flag(flags, name).value {
        FlagValue::Scalar { text, .. } => text.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn the_atom_table_is_one_deployment_per_mode_the_script_builds() {
    let file = atom_fixture();
    assert_eq!(file.kind, RecipeKind::AmdModels);
    let variants: Vec<String> =
        file.deployments.iter().map(|d| format!("{} [{}]", d.name, d.variant.as_deref().unwrap_or_default())).collect();
    assert_eq!(
        variants,
        [
            "Alpha-MoE-FP4 [tp]",
            "Alpha-MoE-FP4 [tp, mtp]",
            "Alpha-MoE-FP4 [tp_dp]",
            "Alpha-MoE-FP4 [tp_dp, mtp]",
            "Alpha-MoE-FP4 [ep_dp]",
            "Alpha-MoE-FP4 [ep_dp, mtp]",
            // Its two quantization configs differ: the jobs whose servers
            // differ in data-parallel attention are configurations of their own.
            "Alpha-MoE-FP4 [prefill tp, decode tp_dp]",
            "Alpha-MoE-FP4 [prefill tp, decode tp_dp, mtp]",
            "Alpha-MoE-FP4 [prefill tp, decode ep_dp]",
            "Alpha-MoE-FP4 [prefill tp, decode ep_dp, mtp]",
            "Alpha-MoE-FP4 [prefill tp_dp, decode tp]",
            "Alpha-MoE-FP4 [prefill tp_dp, decode tp, mtp]",
            "Alpha-MoE-FP4 [prefill ep_dp, decode tp]",
            "Alpha-MoE-FP4 [prefill ep_dp, decode tp, mtp]",
            // No mtp_flags: no MTP variants; no quantization config: no mixed jobs.
            "Beta-Dense [tp]",
            "Beta-Dense [tp_dp]",
            "Beta-Dense [ep_dp]",
        ]
    );
    assert!(file.deployments.iter().all(|d| d.engine == "atom"));
    // Not the SGLang rows a `sglang-disagg` entry looks for.
    assert!(model_deployments(&file, "Alpha-MoE-FP4").is_empty());
}

#[test]
fn atom_flag_strings_fall_back_per_role_and_fields_go_where_the_script_passes_them() {
    let file = atom_fixture();
    let names = |d: &Deployment, role: &str| atom_flags(d, role).into_iter().map(|f| f.name).collect::<Vec<_>>();
    // TP+DPA: decode has its own string, prefill falls back to `tp_dp_flags`.
    let tp_dp = deployment(&file, "Alpha-MoE-FP4", "tp_dp");
    assert_eq!(
        names(tp_dp, "prefill"),
        ["enable-dp-attention", "kv-cache-dtype", "block-size", "gpu-memory-utilization", "max-num-seqs", "online_quant_config"]
    );
    assert_eq!(scalar(&atom_flags(tp_dp, "decode"), "enable-tbo"), "all");
    // Decode passes its own --max-num-seqs (the benchmark's concurrency), not the table's.
    assert!(!names(tp_dp, "decode").contains(&"max-num-seqs".to_string()));
    // The quantization config with DPA is the `_dpa` one, without it the plain one.
    assert!(scalar(&atom_flags(tp_dp, "decode"), "online_quant_config").contains("exclude_layer"));
    let tp = deployment(&file, "Alpha-MoE-FP4", "tp");
    assert_eq!(scalar(&atom_flags(tp, "decode"), "online_quant_config"), r#"{"global_quant_config":"ptpc_fp8"}"#);
    assert!(!names(tp, "prefill").contains(&"enable-dp-attention".to_string()));
    // Env: `env` always, the mode's own in that mode only.
    let env = |d: &Deployment| d.common_env.iter().map(|e| e.name.clone()).collect::<Vec<_>>();
    assert_eq!(env(tp), ["ATOM_DP_SIZE", "AITER_LOG_LEVEL"]);
    assert_eq!(env(tp_dp), ["ATOM_DP_SIZE", "AITER_LOG_LEVEL", "ATOM_TBO_CHUNKS"]);
    assert_eq!(env(deployment(&file, "Alpha-MoE-FP4", "ep_dp")), ["ATOM_DP_SIZE", "AITER_LOG_LEVEL", "ATOM_EP_LB"]);
    // Each flag points at its word in the quoted string, a field at its key.
    let kv = flag(&atom_flags(tp, "prefill"), "kv-cache-dtype").clone();
    assert_eq!((at(&file, &kv.key_span), scalar(&atom_flags(tp, "prefill"), "kv-cache-dtype").as_str()), ("kv-cache-dtype", "fp8"));
    assert_eq!(at(&file, &flag(&atom_flags(tp, "prefill"), "block-size").key_span), "block_size");
}

/// server_atom.sh picks both servers' `--online_quant_config` by the
/// prefill's `PREFILL_ENABLE_DP`: a decode without DPA beside a DPA prefill
/// gets the `_dpa` config, with its own mode's flag strings; both modes' env
/// words are exported in the shell both servers start from.
#[test]
fn in_a_job_whose_servers_differ_in_dpa_the_decode_gets_the_prefills_quant_config() {
    let file = atom_fixture();
    let names = |d: &Deployment, role: &str| atom_flags(d, role).into_iter().map(|f| f.name).collect::<Vec<_>>();
    let mixed = deployment(&file, "Alpha-MoE-FP4", "prefill tp_dp, decode tp");
    assert!(scalar(&atom_flags(mixed, "decode"), "online_quant_config").contains("exclude_layer"));
    assert!(!names(mixed, "decode").contains(&"enable-dp-attention".to_string()));
    assert!(names(mixed, "prefill").contains(&"enable-dp-attention".to_string()));
    let other = deployment(&file, "Alpha-MoE-FP4", "prefill tp, decode ep_dp");
    assert_eq!(scalar(&atom_flags(other, "decode"), "online_quant_config"), r#"{"global_quant_config":"ptpc_fp8"}"#);
    assert!(names(other, "decode").contains(&"enable-expert-parallel".to_string()));
    let env = |d: &Deployment| d.common_env.iter().map(|e| e.name.clone()).collect::<Vec<_>>();
    assert_eq!(env(deployment(&file, "Alpha-MoE-FP4", "prefill ep_dp, decode tp")), ["ATOM_DP_SIZE", "AITER_LOG_LEVEL", "ATOM_EP_LB"]);
}

#[test]
fn atom_mtp_words_take_the_size_the_script_appends() {
    let file = atom_fixture();
    for role in ["prefill", "decode"] {
        let flags = atom_flags(deployment(&file, "Alpha-MoE-FP4", "ep_dp, mtp"), role);
        assert_eq!(scalar(&flags, "method"), "mtp");
        // `--num-speculative-tokens` ends the string: its value is `$DECODE_MTP_SIZE`.
        assert!(
            matches!(&flag(&flags, "num-speculative-tokens").value, FlagValue::Dynamic { text } if text == "$DECODE_MTP_SIZE"),
            "{role}"
        );
        let bound = deployment(&file, "Alpha-MoE-FP4", "ep_dp, mtp").roles.iter().find(|r| r.role == role).unwrap().bound(|_| false);
        assert!(bound.unbound.is_empty(), "{:?}", bound.unbound);
    }
    assert!(!atom_flags(deployment(&file, "Alpha-MoE-FP4", "ep_dp"), "decode").iter().any(|f| f.name == "method"));
}

#[test]
fn a_non_string_value_stops_the_reader_and_what_follows_is_not_set() {
    let file = atom_fixture();
    let beta = deployment(&file, "Beta-Dense", "tp");
    let names: Vec<String> = atom_flags(beta, "prefill").into_iter().map(|f| f.name).collect();
    // `max_num_batched_tokens: 8192` is an int: `.replace` fails there, so
    // neither it nor `scheduler_delay_factor` (printed after it) is set;
    // `max_model_len` (before it) is.
    assert_eq!(names, ["max-model-len"]);
    let note = file.notes.iter().find(|n| n.message.contains("Beta-Dense.max_num_batched_tokens")).expect("noted");
    assert_eq!(note.level, NoteLevel::Warning);
    assert!(
        note.message.contains("`8192`, which YAML loads as a number") && note.message.contains("(scheduler_delay_factor)"),
        "{}",
        note.message
    );
    // A key the reader never prints is named, not guessed at.
    assert!(file.notes.iter().any(|n| n.message.contains("`Beta-Dense.draft_model`: not a key server_atom.sh reads")));
    // `kv_cache_flags: ""` passes nothing.
    assert!(beta.roles.iter().all(|r| r.argv.as_ref().unwrap().is_empty()));
}

#[test]
fn atom_flag_words_are_renamed_in_place_and_fields_set() {
    let file = atom_fixture();
    let tp = deployment(&file, "Alpha-MoE-FP4", "tp");
    let kv = flag(&atom_flags(tp, "prefill"), "kv-cache-dtype").clone();
    let edits = file.edit(EditIntent::Rename { span: &kv.key_span, old: "kv-cache-dtype", new: "kv_cache_dtype" });
    assert!(apply(&file, &edits).contains(r#"kv_cache_flags: "--kv_cache_dtype fp8""#));
    let block = flag(&atom_flags(tp, "prefill"), "block-size").clone();
    // The key is the script's: never renamed.
    assert!(file.edit(EditIntent::Rename { span: &block.key_span, old: "block-size", new: "kv-block-size" }).is_empty());
    let edits = file.edit(EditIntent::SetValue { span: &block.value_span, value: "128" });
    assert!(apply(&file, &edits).contains(r#"block_size: "128""#), "{edits:?}");
}

/// server_sglang.sh prints `base_flags` inside the double quotes of an
/// assignment that it `eval`s, and runs the command line with `bash -c`: a
/// JSON value written `'{\"k\": true}'` in the string reaches SGLang as
/// `{"k": true}` (the first shell removes the backslashes, the second the
/// single quotes). The vLLM table goes the same way; ATOM's prints with `'...'`.
#[test]
fn a_flag_string_printed_in_double_quotes_loses_the_backslashes_bash_removes() {
    let text = "M:\n  base_flags: \"--tp-size 8 --model-loader-extra-config '{\\\\\\\"enable_multithread_load\\\\\\\": true}' --x \\\\\\\\y\"\n  mtp_flags: \"\"\n  prefill:\n    mem_fraction_static: 0.8\n  decode:\n    mem_fraction_static: 0.8\n";
    assert!(text.contains(r#"'{\\\"enable_multithread_load\\\": true}'"#), "{text}");
    let file = load_as("amd_utils/models.yaml", text);
    let d = &file.deployments[0];
    let f = flags(d, "prefill");
    assert!(
        matches!(&flag(&f, "model-loader-extra-config").value, FlagValue::Scalar { text, .. } if text == r#"{"enable_multithread_load": true}"#),
        "{:?}",
        flag(&f, "model-loader-extra-config")
    );
    // `\\y` in the printed string is `\y` to the second shell, which gives `y`.
    assert!(matches!(&flag(&f, "x").value, FlagValue::Scalar { text, .. } if text == "y"), "{:?}", flag(&f, "x"));
    let vllm = "Kimi:\n  prefill_flags: \"--kv-transfer-config '{\\\\\\\"kv_role\\\\\\\": \\\\\\\"kv_both\\\\\\\"}'\"\n  decode_flags: \"--tensor-parallel-size 8\"\n";
    let file = load_as("amd_utils/models_vllm.yaml", vllm);
    let word = file.deployments[0].roles[0].argv.as_ref().unwrap()[1].value.clone();
    assert_eq!(word, Known::Value(r#"{"kv_role": "kv_both"}"#.to_string()));
}
