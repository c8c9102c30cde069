//! Bench-only: the naive approach the audit is measured against. Reads (and,
//! with `parse`, tree-sitter-parses) every `.py` file of each ref's tree.
//!
//!     cargo run --release --example parse_all -- parse REPO REF [REF...]
//!     cargo run --release --example parse_all -- read REPO REF [REF...]

use engine_audit::extract::python::PyFile;
use engine_audit::source::{EngineSource, OpenOptions};
use rayon::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(repo)) = (args.first(), args.get(1)) else {
        eprintln!("usage: parse_all parse|read REPO REF [REF...]");
        std::process::exit(2);
    };
    let parse = match mode.as_str() {
        "parse" => true,
        "read" => false,
        other => {
            eprintln!("unknown mode {other}: parse or read");
            std::process::exit(2);
        }
    };
    let source = EngineSource::open(repo, &OpenOptions { offline: true, ..OpenOptions::default() }).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    for at in &args[2..] {
        let start = Instant::now();
        let (tree, _) = source.tree(Some(at)).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        let paths: Vec<&str> = tree.entries().iter().filter(|e| e.path.ends_with(".py")).map(|e| e.path.as_str()).collect();
        // One file at a time per thread: a parse tree is dropped before the next.
        let (files, bytes, nodes) = paths
            .par_iter()
            .map(|p| {
                let Ok(bytes) = tree.read(p) else { return (0usize, 0usize, 0usize) };
                let len = bytes.len();
                if !parse {
                    return (1, len, 0);
                }
                let file = PyFile::parse(p, String::from_utf8_lossy(&bytes).into_owned());
                (1, len, file.root().descendant_count())
            })
            .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
        eprintln!("{at}: {mode} {files} files, {:.1} MB, {nodes} nodes in {:.2} s", bytes as f64 / 1e6, start.elapsed().as_secs_f64());
    }
}
