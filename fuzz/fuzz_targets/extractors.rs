//! Shared by the Python targets: one module's text placed where each extractor
//! looks (server_args, environ, a module whose symbols are asked for, a consumer
//! module of a Dynamo-like package), and every extractor run on it. Nothing may
//! panic or hang; bytes need not be UTF-8.

use engine_audit::extract::consumer::consumer_uses;
use engine_audit::extract::{extract_surface, Demand, EnvReads, Package};
use engine_audit::source::{MemTree};

pub fn run_extractors(data: &[u8]) {
    let mut tree = MemTree::new("fuzz");
    tree.insert("sglang/__init__.py", data.to_vec());
    tree.insert("sglang/srt/__init__.py", b"from .server_args import *\n".to_vec());
    tree.insert("sglang/srt/server_args.py", data.to_vec());
    tree.insert("sglang/srt/environ.py", data.to_vec());
    // A second module importing the first, so cross-module folding runs (and cycles).
    tree.insert("sglang/srt/utils.py", b"from sglang.srt.server_args import *\nfrom . import environ\nX = environ.X\n".to_vec());
    tree.insert("dynamo/sglang/__init__.py", data.to_vec());
    let demand = Demand {
        flags: true,
        env: true,
        env_reads: EnvReads::Prefixes(vec!["SGLANG_".into(), "SGL_".into()]),
        symbols_of: vec!["sglang".into(), "sglang.srt.server_args".into(), "sglang.srt.utils".into()],
        classes: vec![("sglang.srt.server_args".into(), "ServerArgs".into())],
        metadata: true,
    };
    let surface = extract_surface(&tree, &engine_audit::profiles::SGLANG, "sglang", "fuzz", &demand);
    let _ = serde_json::to_string(&surface).expect("a surface serializes");
    let pkg = Package::new(&tree, "dynamo");
    let mut warnings = Vec::new();
    let _ = consumer_uses(&pkg, "sglang", "dynamo.sglang", &mut warnings);
}
