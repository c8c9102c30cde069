//! Flags handed to a consumer's worker instead of the engine's own server
//! (srt-slurm's `frontend.type: dynamo` runs `python -m dynamo.<engine>`).
//! Where the engine has an engine-only parser (vLLM's
//! `AsyncEngineArgs.add_cli_args`, which Dynamo's vLLM worker builds its parser
//! from), the worker's parser is that parser plus options of the worker's own.
//! When the consumer's source at its target was read, those options are known
//! ([`super::worker_flags`]): the worker's own are taken, a serve-only option is
//! a start-up error (EA001, [`refused`]). When they are not known, an option
//! neither parser of any release knows may be the worker's
//! (`--dyn-tool-call-parser`), and a serve-only option may or may not be: both
//! are named as not audited (EA306), never guessed into an error. An option an
//! earlier engine release had is still the engine's, and checked as such.

use super::worker_flags::WorkerParse;
use super::Bump;
use crate::finding::{EvidenceRef, Finding, FindingKind, Location};
use crate::recipe::{FlagUse, Worker};
use crate::surface::Flag;

/// Whether the target knows which options its engine-only parser takes.
fn has_engine_parser(bump: Bump) -> bool {
    bump.to.flags.iter().any(|f| f.engine_parser.is_some())
}

fn consumer(worker: &Worker) -> &'static str {
    crate::profiles::by_id(worker.consumer).map_or(worker.consumer, |p| p.display)
}

fn engine(bump: Bump) -> String {
    crate::profiles::by_id(&bump.to.engine).map_or_else(|| bump.to.engine.clone(), |p| p.display.to_string())
}

/// Whether an option the target's server parser does not register may be the
/// worker's own: the flags go to a worker, and no release of the engine had it.
pub(super) fn may_be_its_own(worker: Option<&Worker>, option: &str, bump: Bump) -> bool {
    worker.is_some()
        && has_engine_parser(bump)
        && bump.to.resolve_flag(option).is_none()
        && bump.from.and_then(|f| f.resolve_flag(option)).is_none()
        && bump.history.and_then(|h| h.flag(option, bump.target_ref())).is_none()
}

/// Whether the flags go to a consumer's worker whose parser is not the
/// engine's (no link to this engine, or a link whose worker parses its own
/// options: Dynamo's TRT-LLM worker, `python -m dynamo.trtllm`, whose options
/// are not read): every word it gets is named unread (EA306), never checked
/// against the server's options.
pub(super) fn unlinked(worker: Option<&Worker>, bump: Bump) -> bool {
    worker.is_some_and(|w| {
        !crate::profiles::CONSUMER_LINKS.iter().any(|l| l.consumer == w.consumer && l.engine == bump.to.engine && l.argv_to_engine)
    })
}

/// EA306 for a word handed to a worker whose parser is not read.
pub(super) fn unlinked_word(worker: &Worker, u: &FlagUse, bump: Bump) -> Finding {
    let why = format!(
        "this deployment's words go to {}'s {} worker (`frontend.type: {}`), not to the engine's server, and that worker's options are not read",
        consumer(worker),
        engine(bump),
        worker.consumer
    );
    let kind = FindingKind::UnreadLaunch { words: Some(u.name.clone()), why };
    Finding::new(kind, Location::from_span(&u.key_span), &u.name)
}

/// EA306 for an option left to the worker's own parser.
pub(super) fn unread(worker: Option<&Worker>, u: &FlagUse, option: &str, flag: Option<&Flag>) -> Option<Finding> {
    let worker = worker?;
    let why = match flag {
        None => format!(
            "`{option}` is an option of no release of the engine read here, and this deployment's flags go to {}'s worker (`frontend.type: {}`), whose own options are not read",
            consumer(worker),
            worker.consumer
        ),
        Some(_) => format!(
            "`{option}` is an option of the engine's server only, not of the engine-only parser {}'s worker (`frontend.type: {}`) builds its parser from; whether the worker adds it is not read",
            consumer(worker),
            worker.consumer
        ),
    };
    let kind = FindingKind::UnreadLaunch { words: Some(u.name.clone()), why };
    Some(Finding::new(kind, Location::from_span(&u.key_span), &u.name))
}

/// EA306 for a serve-only option handed to a worker whose parser starts from
/// the engine-only one.
pub(super) fn engine_only_refuses(worker: Option<&Worker>, flag: &Flag, u: &FlagUse, option: &str, bump: Bump) -> Option<Finding> {
    if worker.is_none() || flag.engine_parser != Some(false) {
        return None;
    }
    let f = unread(worker, u, option, Some(flag))?;
    let note = format!("{option} registered by {}'s server parser only", engine(bump));
    Some(f.evidence(EvidenceRef::new(&flag.evidence, bump.target_ref()).with_note(note)))
}

/// EA001 for a serve-only option handed to a worker whose parsers (its own
/// and the engine-only one) were read and do not take it: the worker exits at
/// start.
pub(super) fn refused(parse: WorkerParse, flag: &Flag, u: &FlagUse, option: &str, bump: Bump) -> Finding {
    let kind = FindingKind::UnknownFlag {
        option: option.to_string(),
        target: bump.target_ref().to_string(),
        was_at: None,
        suggestion: None,
        ambiguous: Vec::new(),
        history: None,
        worker: Some(parse.who.to_string()),
    };
    let note = format!("{option} registered by {}'s server parser only", engine(bump));
    Finding::new(kind, Location::from_span(&u.key_span), &u.name)
        .evidence(EvidenceRef::new(&flag.evidence, bump.target_ref()).with_note(note))
}

/// EA306 for `--config FILE`: the parser reads more flags from the YAML file.
pub(super) fn config_file_unread(u: &FlagUse, option: &str) -> Finding {
    let why = format!("`{option}` names a YAML file whose keys the parser reads as more flags; that file is not read");
    Finding::new(FindingKind::UnreadLaunch { words: Some(u.name.clone()), why }, Location::from_span(&u.key_span), &u.name)
}
