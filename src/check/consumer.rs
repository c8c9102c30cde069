//! What Dynamo uses of SGLang, resolved against the SGLang target: EA201–EA204.
//!
//! A use that would fail is EA201/EA202/EA203 when nothing catches the failure,
//! EA204 when a guard (try/except, getattr default, hasattr) turns it into a
//! fallback. Module-level failures stop the worker at start; the message says so.

use super::Bump;
use crate::extract::consumer::{ConsumerUse, GuardKind, UseKind};
use crate::finding::{EvidenceRef, Finding, FindingKind, Fix, FixAction, Location, Missing};
use crate::profiles::ConsumerLink;
use crate::surface::{EngineSurface, Module};
use crate::surface_diff::{added_modules, relocation};

/// Where the uses were read: the consumer component of `link` at `consumer_ref`.
pub(crate) struct Consumer<'a> {
    pub link: &'a ConsumerLink,
    pub uses: &'a [ConsumerUse],
    pub consumer_ref: &'a str,
}

pub(crate) fn check(consumer: &Consumer, sglang: Bump, out: &mut Vec<Finding>) {
    let engine = consumer.link.engine;
    let new_modules = NewModules { bump: sglang, found: std::cell::OnceCell::new() };
    for u in consumer.uses.iter().filter(|u| !u.type_only) {
        if handler_never_runs(u, consumer.uses, sglang.to) || left_earlier(u, sglang.to) {
            continue;
        }
        let failure = match &u.kind {
            UseKind::Import { module, name, .. } => import_failure(engine, module, name.as_deref(), &new_modules),
            UseKind::Attribute { class, attribute, write, .. } if !*write => attribute_failure(engine, class, attribute, sglang),
            UseKind::Attribute { .. } => None,
        };
        if let Some(f) = failure {
            if !falls_back_to_the_target(u, sglang.to) {
                out.push(finish(f, u, consumer));
            }
        }
    }
}

/// What fails and why, before the guard decides the code.
struct Failure {
    subject: String,
    missing: Missing,
    hint: Option<String>,
    evidence: Vec<EvidenceRef>,
}

/// A folder of modules without `__init__.py` imports as a namespace package.
fn is_namespace_package(to: &EngineSurface, module: &str) -> bool {
    let prefix = format!("{module}.");
    let start = to.modules.partition_point(|m| m.name.as_str() < prefix.as_str());
    to.modules.get(start).is_some_and(|m| m.name.starts_with(&prefix))
}

/// Evidence is read in the engine's source (`engine` is its profile id; the
/// rest is the consumer's use site).
fn import_failure(engine: &str, module: &str, name: Option<&str>, new_modules: &NewModules) -> Option<Failure> {
    let to = new_modules.bump.to;
    let target = to.module(module);
    if target.is_none() && !is_namespace_package(to, module) {
        let hint = moved_to(module, name.filter(|n| *n != "*"), new_modules);
        return Some(Failure {
            subject: module.to_string(),
            missing: Missing::Module { module: module.to_string(), target: to.ref_name.clone() },
            evidence: hint
                .as_ref()
                .and_then(|m| to.module(m))
                .map(|m| EvidenceRef {
                    path: m.path.clone(),
                    line: 1,
                    ref_name: to.ref_name.clone(),
                    note: Some(format!("{} is here now", m.name)),
                    engine: Some(engine.into()),
                })
                .into_iter()
                .collect(),
            hint,
        });
    }
    let name = name.filter(|n| *n != "*")?;
    let submodule = format!("{module}.{name}");
    if to.module(&submodule).is_some() || is_namespace_package(to, &submodule) {
        return None;
    }
    // A regular module: the name must be one of its symbols (unknown symbols: no claim).
    // A namespace package binds nothing but its submodules.
    if let Some(t) = target {
        if t.symbols.as_ref()?.iter().any(|s| s == name) {
            return None;
        }
    }
    let hint = if target.is_none() { moved_to(&submodule, None, new_modules) } else { None };
    Some(Failure {
        subject: submodule.clone(),
        missing: match target {
            Some(_) => Missing::Symbol { module: module.to_string(), name: name.to_string(), target: to.ref_name.clone() },
            None => Missing::Module { module: submodule.clone(), target: to.ref_name.clone() },
        },
        evidence: target
            .map(|t| EvidenceRef {
                path: t.path.clone(),
                line: 1,
                ref_name: to.ref_name.clone(),
                note: Some(format!("{module} at {}", to.ref_name)),
                engine: Some(engine.into()),
            })
            .into_iter()
            .collect(),
        hint,
    })
}

/// The modules of the target that the source release did not have: where a
/// module missing at the target may have moved. Found once per check, on the
/// first missing module.
struct NewModules<'a> {
    bump: Bump<'a>,
    found: std::cell::OnceCell<Vec<&'a Module>>,
}

impl<'a> NewModules<'a> {
    fn get(&self) -> &[&'a Module] {
        self.found.get_or_init(|| match self.bump.from {
            Some(from) => added_modules(from, self.bump.to),
            None => self.bump.to.modules.iter().collect(),
        })
    }
}

/// The relocation of a module absent at the target ([`relocation`]); with
/// `name`, one that has the name the consumer imports from it.
fn moved_to(module: &str, name: Option<&str>, new_modules: &NewModules) -> Option<String> {
    let old = new_modules.bump.from.and_then(|f| f.module(module).cloned()).unwrap_or_else(|| Module {
        name: module.to_string(),
        path: String::new(),
        symbols: None,
    });
    relocation(&old, new_modules.get(), name)
}

fn attribute_failure(engine: &str, class: &str, attribute: &str, sglang: Bump) -> Option<Failure> {
    let info = sglang.to.classes.get(class)?;
    if info.members.iter().any(|m| m.name == attribute) {
        return None;
    }
    // Only a member the current release really had is a regression; one missing
    // from both may be set dynamically somewhere the model cannot see.
    let before = match sglang.from {
        Some(from) => Some(from.classes.get(class)?.members.iter().find(|m| m.name == attribute)?),
        None => None,
    };
    Some(Failure {
        subject: format!("{class}.{attribute}"),
        missing: Missing::Attribute { class: class.to_string(), attribute: attribute.to_string(), target: sglang.to.ref_name.clone() },
        hint: None,
        evidence: before
            .map(|m| {
                EvidenceRef::new(&m.evidence, sglang.current_ref().unwrap_or_default())
                    .with_note(format!("{class}.{attribute} defined here before"))
                    .engine(engine)
            })
            .into_iter()
            .chain(std::iter::once(
                EvidenceRef::new(&info.evidence, &sglang.to.ref_name)
                    .with_note(format!("{class} at {} has no {attribute}", sglang.to.ref_name))
                    .engine(engine),
            ))
            .collect(),
    })
}

/// A use in an `except` handler runs only when its `try` failed: when every import
/// that `try` guards resolves at the target, the handler is dead code there.
fn handler_never_runs(u: &ConsumerUse, all: &[ConsumerUse], to: &EngineSurface) -> bool {
    let Some(ctx) = &u.in_except else { return false };
    let guarded: Vec<&ConsumerUse> = all
        .iter()
        .filter(|o| o.evidence.path == u.evidence.path)
        .filter(|o| matches!(&o.guard, Some(g) if matches!(g.kind, GuardKind::TryExcept { try_line, .. } if try_line == ctx.try_line)))
        .collect();
    !guarded.is_empty()
        && guarded.iter().all(|o| match &o.kind {
            UseKind::Import { module, name, .. } => to.module(module).is_some_and(|m| match (name.as_deref(), &m.symbols) {
                (Some(n), Some(symbols)) if n != "*" => symbols.iter().any(|s| s == n) || to.module(&format!("{module}.{n}")).is_some(),
                _ => true,
            }),
            UseKind::Attribute { .. } => false,
        })
}

/// The function returned before the use: an earlier `if new_api is not None:
/// ... return` took the engine name the target defines.
fn left_earlier(u: &ConsumerUse, to: &EngineSurface) -> bool {
    u.unreached_if_imported.iter().any(|(module, name)| defines(to, module, name))
}

fn defines(to: &EngineSurface, module: &str, name: &str) -> bool {
    to.module(module).and_then(|m| m.symbols.as_ref()).is_some_and(|s| s.iter().any(|x| x == name))
}

/// A `getattr` default that leads, further down the function, only to engine
/// functions the target defines: the code takes the newer API, nothing
/// degrades (`get_model_config` gone, `model_config_of(server_args)` there).
fn falls_back_to_the_target(u: &ConsumerUse, to: &EngineSurface) -> bool {
    let Some(guard) = u.guard.as_ref().filter(|g| g.kind == GuardKind::Getattr && !g.then_calls.is_empty()) else { return false };
    guard.then_calls.iter().all(|(module, name)| defines(to, module, name))
}

fn finish(f: Failure, u: &ConsumerUse, c: &Consumer) -> Finding {
    let at = Location::from_evidence(&u.evidence);
    let (engine, consumer) = (crate::profiles::display(c.link.engine), crate::profiles::display(c.link.consumer));
    let (consumer_ref, snippet, moved_to) = (c.consumer_ref.to_string(), u.snippet.clone(), f.hint.clone());
    let kind = match &u.guard {
        Some(g) => FindingKind::ConsumerFallback {
            missing: f.missing,
            engine,
            consumer,
            consumer_ref,
            snippet,
            guard: guard_words(&g.kind),
            fallback: g.fallback.clone(),
            moved_to,
        },
        None => {
            FindingKind::ConsumerMissing { missing: f.missing, engine, consumer, consumer_ref, snippet, at_start: u.top_level, moved_to }
        }
    };
    let mut finding = Finding::new(kind, at, f.subject).evidence(EvidenceRef {
        path: u.evidence.path.clone(),
        line: u.evidence.line,
        ref_name: c.consumer_ref.to_string(),
        note: Some(u.snippet.clone()),
        engine: Some(c.link.consumer.into()),
    });
    for e in f.evidence {
        finding = finding.evidence(e);
    }
    finding.fix(f.hint.map(|module| Fix::advice(FixAction::ImportFrom { module })))
}

fn guard_words(kind: &GuardKind) -> String {
    match kind {
        GuardKind::TryExcept { catches, try_line } if catches.is_empty() => format!("bare `except:` of the `try` at line {try_line}"),
        GuardKind::TryExcept { catches, try_line } => format!("`except {}` of the `try` at line {try_line}", catches.join(", ")),
        GuardKind::Getattr => "`getattr` with a default".into(),
        GuardKind::Hasattr => "`hasattr` test".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::consumer::consumer_uses;
    use crate::extract::{extract_surface, Demand, Package};
    use crate::profiles::{CONSUMER_LINKS, SGLANG};
    use crate::source::MemTree;

    /// A mini SGLang release: `files` below `python/sglang/`.
    fn sglang(tag: &str, files: &[(&str, &str)]) -> EngineSurface {
        let paths: Vec<(String, &str)> = files.iter().map(|(p, t)| (format!("python/sglang/{p}"), *t)).collect();
        let tree = MemTree::from_files(tag, paths.iter().map(|(p, t)| (p.as_str(), *t)));
        let demand = Demand {
            // What the audit asks for: the modules Dynamo imports, at both releases.
            symbols_of: vec![
                "sglang.srt.server_args".into(),
                "sglang.srt.utils".into(),
                "sglang.srt.config_parser".into(),
                "sglang.srt.overrides".into(),
            ],
            classes: vec![("sglang.srt.server_args".into(), "ServerArgs".into())],
            ..Demand::default()
        };
        extract_surface(&tree, &SGLANG, "python/sglang", tag, &demand)
    }

    const OLD: &[(&str, &str)] = &[
        ("__init__.py", ""),
        ("srt/__init__.py", ""),
        ("srt/config_parser.py", "class ConfigArgumentMerger: pass\n"),
        ("srt/utils/__init__.py", "def get_ip(): pass\n"),
        (
            "srt/server_args.py",
            "class ServerArgs:\n    tp_size: int = 1\n    prefill_balance: bool = False\n    def use_mla_backend(self): pass\n",
        ),
    ];
    const NEW: &[(&str, &str)] = &[
        ("__init__.py", ""),
        ("srt/__init__.py", ""),
        ("srt/utils/__init__.py", "def get_ip(): pass\n"),
        ("srt/utils/config_parser.py", "class ConfigArgumentMerger: pass\n"),
        ("srt/server_args.py", "class ServerArgs:\n    tp_size: int = 1\n"),
        ("srt/overrides.py", "def prefill_balance_of(server_args): pass\n"),
    ];

    /// Dynamo's SGLang worker (`components/src/dynamo/sglang/main.py`), checked for SGLang OLD → NEW.
    fn findings(worker: &str) -> Vec<Finding> {
        let tree = MemTree::from_files("d", [("components/src/dynamo/__init__.py", ""), ("components/src/dynamo/sglang/main.py", worker)]);
        let uses = consumer_uses(&Package::new(&tree, "components/src/dynamo"), "sglang", "dynamo.sglang", &mut Vec::new());
        let (old, new) = (sglang("v1", OLD), sglang("v2", NEW));
        let consumer = Consumer { link: &CONSUMER_LINKS[0], uses: &uses, consumer_ref: "0.1.0" };
        let mut out = Vec::new();
        check(&consumer, Bump { from: Some(&old), to: &new, history: None }, &mut out);
        out
    }

    fn codes(found: &[Finding]) -> Vec<(&str, &str)> {
        found.iter().map(|f| (f.code(), f.subject.as_str())).collect()
    }

    #[test]
    fn a_moved_module_crashes_at_start_and_names_where_it_went() {
        let found = findings("from sglang.srt.config_parser import ConfigArgumentMerger\n");
        assert_eq!(codes(&found), [("EA201", "sglang.srt.config_parser")]);
        assert!(found[0].message().contains("sglang.srt.utils.config_parser"), "{}", found[0].message());
        assert!(matches!(&found[0].kind, FindingKind::ConsumerMissing { at_start: true, .. }));
        assert!(found[0].evidence.iter().any(|e| e.path == "python/sglang/srt/utils/config_parser.py"));
    }

    #[test]
    fn a_getattr_whose_fallback_calls_the_targets_api_degrades_nothing() {
        // Dynamo v1.6.1's `_compat.py` shape: the method moved to a module-level function.
        let worker = |function: &str| {
            format!(
                "from sglang.srt.server_args import ServerArgs\ntry:\n    from sglang.srt.overrides import {function} as new_api\nexcept ImportError:\n    new_api = None\n\ndef balance(server_args: ServerArgs):\n    legacy = getattr(server_args, 'prefill_balance', None)\n    if legacy is not None:\n        return legacy()\n    return new_api(server_args)\n"
            )
        };
        let found = findings(&worker("prefill_balance_of"));
        assert!(codes(&found).is_empty(), "the newer API is there: {:?}", codes(&found));
        let found = findings(&worker("not_there"));
        assert!(codes(&found).contains(&("EA204", "ServerArgs.prefill_balance")), "{:?}", codes(&found));
    }

    #[test]
    fn code_after_a_return_the_target_takes_is_not_judged() {
        // Dynamo v1.5.0 `override_server_args` shape: the newer API returns
        // early; the legacy lookups after it run only where its import failed.
        let worker = |function: &str| {
            format!(
                "from sglang.srt.server_args import ServerArgs\ntry:\n    from sglang.srt.overrides import {function} as declare\nexcept ImportError:\n    declare = None\n\ndef override(server_args: ServerArgs, **fields):\n    if declare is not None:\n        declare(server_args, **fields)\n        return\n    legacy = getattr(server_args, 'prefill_balance', None)\n    if callable(legacy):\n        legacy(**fields)\n"
            )
        };
        let found = findings(&worker("prefill_balance_of"));
        assert!(codes(&found).is_empty(), "the early return is taken at the target: {:?}", codes(&found));
        let found = findings(&worker("not_there"));
        assert!(codes(&found).contains(&("EA204", "ServerArgs.prefill_balance")), "the legacy path runs: {:?}", codes(&found));
    }

    #[test]
    fn a_guarded_import_falls_back_and_a_dead_handler_is_not_judged() {
        let guarded = "try:\n    from sglang.srt.config_parser import ConfigArgumentMerger\nexcept ImportError:\n    from sglang.srt.utils.config_parser import ConfigArgumentMerger\n";
        let found = findings(guarded);
        assert_eq!(codes(&found), [("EA204", "sglang.srt.config_parser")], "the handler's import resolves; the try's is the fallback");
        let reversed = "try:\n    from sglang.srt.utils import get_ip\nexcept ImportError:\n    from sglang.srt.gone import get_ip\n";
        assert!(findings(reversed).is_empty(), "the try resolves at the target: the handler never runs");
    }

    #[test]
    fn a_member_is_missing_only_if_the_current_release_had_it() {
        let worker = "from sglang.srt.server_args import ServerArgs\n\ndef run(server_args: ServerArgs):\n    if server_args.prefill_balance:\n        pass\n    if server_args.made_up:\n        pass\n    return server_args.tp_size\n";
        let found = findings(worker);
        assert_eq!(codes(&found), [("EA203", "ServerArgs.prefill_balance")], "made_up was never a member: no claim");
        let guarded = "from sglang.srt.server_args import ServerArgs\n\ndef run(server_args: ServerArgs):\n    return getattr(server_args, 'use_mla_backend', None)\n";
        assert_eq!(codes(&findings(guarded)), [("EA204", "ServerArgs.use_mla_backend")]);
    }

    #[test]
    fn a_name_the_target_module_no_longer_defines_is_ea202() {
        let found = findings("from sglang.srt.server_args import ServerArgs, PortArgs\n");
        assert_eq!(codes(&found), [("EA202", "sglang.srt.server_args.PortArgs")]);
    }

    /// A mini vLLM release: `arg_utils.py` and `config/` below `vllm/`.
    fn vllm(tag: &str, engine_field: &str, config_field: &str) -> EngineSurface {
        let arg_utils = format!("class EngineArgs:\n    model: str = ''\n    {engine_field}: int = 0\n\nclass AsyncEngineArgs(EngineArgs):\n    enable_log_requests: bool = False\n");
        let config = format!("class VllmConfig:\n    model_config: object = None\n    {config_field}: object = None\n");
        let tree = MemTree::from_files(
            tag,
            [
                ("vllm/__init__.py", ""),
                ("vllm/engine/__init__.py", ""),
                ("vllm/engine/arg_utils.py", arg_utils.as_str()),
                ("vllm/config/__init__.py", "from vllm.config.vllm import VllmConfig\n"),
                ("vllm/config/vllm.py", config.as_str()),
            ],
        );
        let link = CONSUMER_LINKS.iter().find(|l| l.component == "dynamo.vllm").unwrap();
        let demand = Demand {
            symbols_of: vec!["vllm.engine.arg_utils".into(), "vllm.config".into()],
            classes: link.class_demand().collect(),
            ..Demand::default()
        };
        extract_surface(&tree, &crate::profiles::VLLM, "vllm", tag, &demand)
    }

    /// Dynamo's vLLM worker in the real files' shape (`handlers.py`: `config.engine_args`,
    /// `self.engine_args`; `main.py`: a `VllmConfig` parameter; omni: dicts called `engine_args`).
    const VLLM_WORKER: &str = "from vllm.config import VllmConfig\nfrom vllm.engine.arg_utils import AsyncEngineArgs\n\nclass Handler:\n    def __init__(self, config):\n        self.engine_args = config.engine_args\n\n    def run(self):\n        return self.engine_args.data_parallel_rank\n\ndef register(vllm_config: VllmConfig):\n    timeout = getattr(vllm_config, 'shutdown_timeout', 30)\n    return vllm_config.model_config\n\ndef omni(stage):\n    engine_args = {'model_stage': 1}\n    return [k for k, _ in engine_args.items()]\n";

    fn vllm_findings(engine_field: &str, config_field: &str) -> Vec<Finding> {
        let tree =
            MemTree::from_files("d", [("components/src/dynamo/__init__.py", ""), ("components/src/dynamo/vllm/handlers.py", VLLM_WORKER)]);
        let link = CONSUMER_LINKS.iter().find(|l| l.component == "dynamo.vllm").unwrap();
        let uses = crate::extract::consumer::consumer_uses_of(
            &Package::new(&tree, "components/src/dynamo"),
            "vllm",
            link.component,
            link.classes,
            &mut Vec::new(),
        );
        let (old, new) = (vllm("v0.31.0", "data_parallel_rank", "shutdown_timeout"), vllm("v0.34.0", engine_field, config_field));
        let consumer = Consumer { link, uses: &uses, consumer_ref: "v1.6.1" };
        let mut out = Vec::new();
        check(&consumer, Bump { from: Some(&old), to: &new, history: None }, &mut out);
        out
    }

    #[test]
    fn the_vllm_worker_reads_engine_args_and_vllm_config_members() {
        let found = vllm_findings("data_parallel_rank", "shutdown_timeout");
        assert!(codes(&found).is_empty(), "both members still there; the omni dict is no AsyncEngineArgs: {:?}", codes(&found));
        let found = vllm_findings("data_parallel_index", "shutdown_grace");
        assert_eq!(codes(&found), [("EA203", "AsyncEngineArgs.data_parallel_rank"), ("EA204", "VllmConfig.shutdown_timeout")]);
        assert!(found[0].message().contains("vLLM") && found[0].message().contains("Dynamo"), "{}", found[0].message());
        assert!(found[0].evidence.iter().any(|e| e.path == "vllm/engine/arg_utils.py"), "{:?}", found[0].evidence);
    }
}
