//! Which flags a consumer's worker accepts when it parses its own options and
//! hands the rest to the engine's engine-only parser (`python -m dynamo.vllm`:
//! Dynamo's parsers first, then vLLM's `AsyncEngineArgs.add_cli_args` parser,
//! which exits on anything it does not know). A flag only `vllm serve`
//! registers (`--host`, `--port`, `--tool-call-parser`) is then a start-up error
//! for that worker, unless the worker registers it itself.
//!
//! The recipe check asks [`worker_accepts`] for each flag a deployment started
//! by such a worker passes, and reports [`WorkerVerdict::Rejected`] as an error;
//! the other verdicts say why it is accepted or why that cannot be told.

use crate::extract::worker_flags::{WorkerFlags, WorkerOption};
use crate::surface::{EngineSurface, Flag, Known};

/// The parser of the worker a deployment's flags go to: its own options, read
/// at the consumer's target, and how reports name it ("Dynamo's vLLM worker at
/// v1.6.1").
#[derive(Clone, Copy)]
pub(crate) struct WorkerParse<'a> {
    pub flags: &'a WorkerFlags,
    pub who: &'a str,
}

/// What the worker does with one option string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WorkerVerdict<'a> {
    /// The worker's own parsers register it: they take it before the engine
    /// parser runs (whatever the engine does with that name).
    Worker(&'a WorkerOption),
    /// The engine-only parser registers it.
    Engine(&'a Flag),
    /// Taken by the engine-only parser as the unique prefix of `full`
    /// (argparse abbreviations, which that parser allows or may allow).
    Abbreviation { flag: &'a Flag, full: &'a str },
    /// Only the engine's server parser registers it: the worker exits at start.
    Rejected(&'a Flag),
    /// The engine does not register it at all: the engine's flag check says so
    /// (EA001); the worker's parser does not register it either.
    NotAnEngineFlag,
    /// Not knowable: the engine surface says nothing about the engine-only
    /// parser for this flag, or the worker's own options were not all read.
    Unknown(String),
}

/// What the worker does with `option` (a `--` option string as the recipe
/// passes it), given the engine's surface at the target and the worker's own
/// options (see [`crate::extract::worker_flags`]).
pub(crate) fn worker_accepts<'a>(engine: &'a EngineSurface, worker: &'a WorkerFlags, option: &str) -> WorkerVerdict<'a> {
    if let Some(own) = worker.option(option) {
        return WorkerVerdict::Worker(own);
    }
    let Some(flag) = engine.flag(option) else {
        return match engine_prefix(engine, option) {
            Some(Ok((flag, full))) => WorkerVerdict::Abbreviation { flag, full },
            Some(Err(why)) => WorkerVerdict::Unknown(why),
            None => WorkerVerdict::NotAnEngineFlag,
        };
    };
    match flag.engine_parser {
        Some(true) => WorkerVerdict::Engine(flag),
        None => WorkerVerdict::Unknown(format!("whether the engine-only parser of {} accepts {option} was not read", engine.ref_name)),
        Some(false) if !worker.complete() => WorkerVerdict::Unknown(match &worker.module {
            None => "the worker's parser module is not in this build".to_string(),
            Some(m) => format!("{} of the options `{m}` registers are computed, not literal", worker.unread.len()),
        }),
        Some(false) => match engine_prefix(engine, option) {
            Some(Ok((flag, full))) => WorkerVerdict::Abbreviation { flag, full },
            Some(Err(why)) => WorkerVerdict::Unknown(why),
            None => WorkerVerdict::Rejected(flag),
        },
    }
}

/// The engine-only option `option` is a unique prefix of, when that parser
/// takes abbreviations (`Err` when whether it does is not known).
fn engine_prefix<'a>(engine: &'a EngineSurface, option: &str) -> Option<Result<(&'a Flag, &'a str), String>> {
    if !option.starts_with("--") || option.len() <= 2 {
        return None;
    }
    let mut matches: Vec<(&'a Flag, &'a str)> = Vec::new();
    for f in engine.flags.iter().filter(|f| f.engine_parser == Some(true)) {
        for n in f.names.iter().filter(|n| n.starts_with(option) && n.as_str() != option) {
            if !matches.iter().any(|(_, m)| m == n) {
                matches.push((f, n));
            }
        }
    }
    // Several candidates: argparse exits with "ambiguous option" (a rejection too).
    let [(flag, full)] = matches[..] else { return None };
    match &engine.parser.allow_abbrev {
        Known::Value(false) => None,
        Known::Value(true) => Some(Ok((flag, full))),
        Known::Dynamic { .. } => Some(Err(format!("{option} abbreviates {full}, and whether the parser takes abbreviations was not read"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::worker_flags::worker_flags;
    use crate::extract::Package;
    use crate::source::MemTree;

    /// vLLM's parsers in miniature: `make_arg_parser` adds the frontend's
    /// options to `AsyncEngineArgs.add_cli_args`'s (as `vllm/entrypoints` does).
    fn vllm() -> EngineSurface {
        let tree = MemTree::from_files(
            "v0.31.0",
            [
                ("vllm/__init__.py", ""),
                ("vllm/engine/__init__.py", ""),
                (
                    "vllm/engine/arg_utils.py",
                    "class EngineArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument('--tensor-parallel-size', '-tp', type=int, default=1)\n        parser.add_argument('--max-model-len', type=int)\n        return parser\n\nclass AsyncEngineArgs(EngineArgs):\n    @staticmethod\n    def add_cli_args(parser, async_args_only=False):\n        parser = EngineArgs.add_cli_args(parser)\n        parser.add_argument('--enable-log-requests', action='store_true')\n        return parser\n",
                ),
                ("vllm/entrypoints/__init__.py", ""),
                ("vllm/entrypoints/cli/__init__.py", ""),
                ("vllm/entrypoints/cli/serve.py", "from vllm.entrypoints.openai.cli_args import make_arg_parser\n"),
                ("vllm/entrypoints/openai/__init__.py", ""),
                (
                    "vllm/entrypoints/openai/cli_args.py",
                    "from vllm.engine.arg_utils import AsyncEngineArgs\n\ndef make_arg_parser(parser):\n    parser.add_argument('--host', type=str)\n    parser.add_argument('--port', type=int, default=8000)\n    parser.add_argument('--tool-call-parser', type=str)\n    parser.add_argument('--max-model', type=int)\n    parser = AsyncEngineArgs.add_cli_args(parser)\n    return parser\n",
                ),
            ],
        );
        let demand = crate::extract::Demand { flags: true, ..Default::default() };
        crate::extract::extract_surface(&tree, &crate::profiles::VLLM, "vllm", "v0.31.0", &demand)
    }

    fn dynamo(extra: &str) -> WorkerFlags {
        let args = format!("import argparse\n\ndef parse_args(argv):\n    parser = argparse.ArgumentParser(allow_abbrev=False)\n    parser.add_argument('--disaggregation-mode')\n    parser.add_argument('--port-range')\n{extra}");
        let tree = MemTree::from_files(
            "v1.6.1",
            [
                ("components/src/dynamo/__init__.py", ""),
                ("components/src/dynamo/vllm/__init__.py", ""),
                ("components/src/dynamo/vllm/args.py", args.as_str()),
            ],
        );
        worker_flags(&Package::new(&tree, "components/src/dynamo"), "dynamo.vllm.args", &mut Vec::new())
    }

    fn verdict(engine: &EngineSurface, worker: &WorkerFlags, option: &str) -> String {
        match worker_accepts(engine, worker, option) {
            WorkerVerdict::Worker(o) => format!("worker {}", o.name),
            WorkerVerdict::Engine(f) => format!("engine {}", f.canonical()),
            WorkerVerdict::Abbreviation { full, .. } => format!("abbreviation of {full}"),
            WorkerVerdict::Rejected(f) => format!("rejected {}", f.canonical()),
            WorkerVerdict::NotAnEngineFlag => "not an engine flag".into(),
            WorkerVerdict::Unknown(why) => format!("unknown: {why}"),
        }
    }

    #[test]
    fn serve_only_flags_are_rejected_and_the_rest_accepted() {
        let engine = vllm();
        assert_eq!(engine.flag("--host").and_then(|f| f.engine_parser), Some(false), "{:#?}", engine.flags);
        let worker = dynamo("");
        let v = |o: &str| verdict(&engine, &worker, o);
        assert_eq!(v("--host"), "rejected --host");
        assert_eq!(v("--tool-call-parser"), "rejected --tool-call-parser");
        assert_eq!(v("--tensor-parallel-size"), "engine --tensor-parallel-size");
        assert_eq!(v("-tp"), "engine --tensor-parallel-size");
        assert_eq!(v("--disaggregation-mode"), "worker --disaggregation-mode", "Dynamo's own option");
        assert_eq!(v("--made-up"), "not an engine flag");
        // `--max-model` is serve-only, but an engine parser that takes
        // abbreviations takes it for `--max-model-len`: not a crash. Whether it
        // does is read where the parser is built (not in this miniature).
        assert!(v("--max-model").starts_with("unknown: --max-model abbreviates --max-model-len"), "{}", v("--max-model"));
        let mut abbreviating = vllm();
        abbreviating.parser.allow_abbrev = Known::Value(true);
        assert_eq!(verdict(&abbreviating, &worker, "--max-model"), "abbreviation of --max-model-len");
        abbreviating.parser.allow_abbrev = Known::Value(false);
        assert_eq!(verdict(&abbreviating, &worker, "--max-model"), "rejected --max-model");
    }

    #[test]
    fn a_worker_that_registers_the_flag_itself_accepts_it() {
        let engine = vllm();
        let worker = dynamo("    parser.add_argument('--port', type=int)\n");
        assert_eq!(verdict(&engine, &worker, "--port"), "worker --port");
        assert_eq!(verdict(&engine, &worker, "--host"), "rejected --host");
    }

    #[test]
    fn an_incomplete_worker_or_an_unread_engine_parser_decides_nothing() {
        let engine = vllm();
        let computed = dynamo("    for n in ('a',):\n        parser.add_argument(f'--{n}')\n");
        assert!(
            verdict(&engine, &computed, "--host").starts_with("unknown: 1 of the options"),
            "{}",
            verdict(&engine, &computed, "--host")
        );
        let mut unread = vllm();
        unread.flags.iter_mut().for_each(|f| f.engine_parser = None);
        assert!(verdict(&unread, &dynamo(""), "--host").starts_with("unknown: whether the engine-only parser"));
        let missing = WorkerFlags::default();
        assert_eq!(verdict(&engine, &missing, "--host"), "unknown: the worker's parser module is not in this build");
    }
}
