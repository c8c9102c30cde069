//! Dynamo's vLLM worker (`components/src/dynamo/vllm`) against real vLLM
//! releases: its pin (EA205) and what it uses of vLLM (EA201–EA204), each
//! finding spot-checked against the source it names.

use super::real_data::corpus;
use engine_audit::audit::{check_link, AuditOptions, AuditReport, LinkBump};
use engine_audit::profiles::{DYNAMO, VLLM};
use std::path::Path;

fn check(corpus: &Path, dynamo: &str, from: Option<&str>, to: &str) -> AuditReport {
    let opts = AuditOptions::default().with_source(&VLLM, Some(corpus.join("vllm.git").display().to_string()), None).with_source(
        &DYNAMO,
        Some(corpus.join("dynamo.git").display().to_string()),
        None,
    );
    check_link(&opts, &LinkBump { component: "dynamo.vllm", consumer_ref: dynamo, engine_from: from, engine_to: to }).unwrap()
}

/// (code, subject, path, line) of every finding.
fn listing(r: &AuditReport) -> Vec<(String, String, String, u32)> {
    r.findings.iter().map(|f| (f.code().to_string(), f.subject.clone(), f.location.path.clone(), f.location.line)).collect()
}

fn has(r: &AuditReport, code: &str, subject: &str, path: &str, line: u32) -> bool {
    listing(r).contains(&(code.into(), subject.into(), format!("components/src/dynamo/vllm/{path}"), line))
}

/// `git show TAG:path` of a corpus repository.
fn show(corpus: &Path, repo: &str, tag: &str, path: &str) -> String {
    let out = std::process::Command::new("git")
        .arg(format!("--git-dir={}", corpus.join(repo).display()))
        .args(["show", &format!("{tag}:{path}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const FLEX: &str = "vllm.utils.FlexibleArgumentParser";

#[test]
fn a_release_against_its_pinned_vllm_breaks_nothing() {
    let Some(corpus) = corpus(module_path!()) else { return };
    // Dynamo v1.6.1 pins vllm==0.31.0.
    assert!(show(&corpus, "dynamo.git", "v1.6.1", "pyproject.toml").contains("\"vllm[flashinfer,otel,runai]==0.31.0\""));
    let r = check(&corpus, "v1.6.1", Some("v0.31.0"), "v0.31.0");
    // The link itself is checked: what is left are the extractor's notes on
    // vLLM's own files (options a platform hook adds are not seen).
    assert!(r.problems.iter().all(|p| p.path.starts_with("vllm/")), "{:?}", r.problems);
    // Only the guarded fallback import: vllm.utils re-exports no
    // FlexibleArgumentParser at 0.31.0; the handler's argparse_utils does.
    assert!(!show(&corpus, "vllm.git", "v0.31.0", "vllm/utils/__init__.py").contains("FlexibleArgumentParser"));
    assert!(show(&corpus, "vllm.git", "v0.31.0", "vllm/utils/argparse_utils.py").contains("class FlexibleArgumentParser"));
    assert_eq!(
        listing(&r),
        [
            ("EA204".into(), FLEX.into(), "components/src/dynamo/vllm/args.py".into(), 16),
            ("EA204".into(), FLEX.into(), "components/src/dynamo/vllm/omni/args.py".into(), 20),
        ],
        "no EA201/EA202/EA203/EA205 against the pin"
    );
}

#[test]
fn dynamo_1_6_1_on_vllm_0_34_0() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let r = check(&corpus, "v1.6.1", Some("v0.31.0"), "v0.34.0");
    // vllm/v1/engine/utils.py defines get_engine_zmq_addresses at 0.31.0, not at
    // 0.34.0; the worker imports it at module level (and main.py imports that module).
    assert!(show(&corpus, "vllm.git", "v0.31.0", "vllm/v1/engine/utils.py").contains("def get_engine_zmq_addresses("));
    assert!(!show(&corpus, "vllm.git", "v0.34.0", "vllm/v1/engine/utils.py").contains("get_engine_zmq_addresses"));
    assert!(show(&corpus, "dynamo.git", "v1.6.1", "components/src/dynamo/vllm/main.py").contains("from .embedding_worker_processes import"));
    assert!(has(&r, "EA202", "vllm.v1.engine.utils.get_engine_zmq_addresses", "embedding_worker_processes.py", 32), "{:?}", listing(&r));
    // vllm/entrypoints/chat_utils.py is gone at 0.34.0 (load_chat_template now in
    // vllm/renderers/chat_utils/); Dynamo imports it inside a realtime factory.
    assert!(show(&corpus, "vllm.git", "v0.34.0", "vllm/entrypoints/chat_utils.py").is_empty());
    assert!(show(&corpus, "vllm.git", "v0.34.0", "vllm/renderers/chat_utils/chat_template.py").contains("def load_chat_template("));
    assert!(has(&r, "EA201", "vllm.entrypoints.chat_utils", "realtime/factories.py", 92), "{:?}", listing(&r));
    let at_start = r.findings.iter().find(|f| f.code() == "EA202").unwrap();
    assert!(at_start.message().contains("crashes at start"), "{}", at_start.message());
    let pin = r.findings.iter().find(|f| f.code() == "EA205").unwrap();
    assert!(pin.message().contains("==0.31.0") && pin.location.path == "pyproject.toml", "{}", pin.message());
    assert!(!listing(&r).iter().any(|(c, ..)| c == "EA203"), "every member Dynamo reads is still there: {:?}", listing(&r));
}

#[test]
fn dynamo_1_5_0_on_vllm_0_27_1_and_0_34_0() {
    let Some(corpus) = corpus(module_path!()) else { return };
    assert!(show(&corpus, "dynamo.git", "v1.5.0", "pyproject.toml").contains("\"vllm[flashinfer,otel,runai]==0.28.0\""));
    // Back to 0.27.1: everything Dynamo imports and reads is there; only the pin says no.
    let down = check(&corpus, "v1.5.0", Some("v0.28.0"), "v0.27.1");
    let codes: Vec<&str> = down.findings.iter().map(|f| f.code()).collect();
    assert_eq!(codes, ["EA204", "EA204", "EA205"], "{:?}", listing(&down));
    // Up to 0.34.0: the same removed zmq helper as for v1.6.1.
    let up = check(&corpus, "v1.5.0", Some("v0.28.0"), "v0.34.0");
    assert!(show(&corpus, "dynamo.git", "v1.5.0", "components/src/dynamo/vllm/embedding_worker_processes.py")
        .contains("from vllm.v1.engine.utils import get_engine_zmq_addresses, launch_core_engines"));
    assert!(has(&up, "EA202", "vllm.v1.engine.utils.get_engine_zmq_addresses", "embedding_worker_processes.py", 32), "{:?}", listing(&up));
    assert!(!listing(&up).iter().any(|(c, ..)| c == "EA201" || c == "EA203"), "{:?}", listing(&up));
}

/// The options Dynamo's vLLM worker registers itself, read from its parser
/// module: none of `vllm serve`'s own (`--host`, `--port`, `--tool-call-parser`),
/// which its engine-only parser then rejects.
#[test]
fn the_workers_own_options_at_each_release() {
    let Some(corpus) = corpus(module_path!()) else { return };
    let repo = engine_audit::source::EngineRepo::open(
        corpus.join("dynamo.git").to_str().unwrap(),
        &engine_audit::source::OpenOptions { offline: true, ..Default::default() },
    )
    .unwrap();
    for tag in ["v1.3.0.post1", "v1.5.0", "v1.6.1"] {
        let tree = repo.tree_at(&repo.resolve(tag).unwrap()).unwrap();
        let mut warnings = Vec::new();
        let pkg = engine_audit::extract::Package::new(&tree, "components/src/dynamo");
        let flags = engine_audit::extract::worker_flags::worker_flags(&pkg, "dynamo.vllm.args", &mut warnings);
        assert!(flags.complete() && warnings.is_empty(), "{tag}: {:?} {warnings:?}", flags.unread);
        for own in ["--disaggregation-mode", "--endpoint", "--use-vllm-tokenizer", "--no-use-vllm-tokenizer", "--dyn-tool-call-parser"] {
            assert!(flags.option(own).is_some(), "{tag}: {own}");
        }
        for serve_only in ["--host", "--port", "--tool-call-parser", "--enable-auto-tool-choice"] {
            assert!(flags.option(serve_only).is_none(), "{tag}: {serve_only}");
        }
        // The router-advertisement flags, parsed by their own parser before vLLM's (v1.5.0 on).
        assert_eq!(flags.option("--router-mode").is_some(), tag != "v1.3.0.post1", "{tag}");
    }
    let args = show(&corpus, "dynamo.git", "v1.6.1", "components/src/dynamo/vllm/args.py");
    assert!(
        args.contains("AsyncEngineArgs.add_cli_args(vllm_parser, async_args_only=False)")
            && args.contains("vllm_parser.parse_args(unknown)")
    );
}
