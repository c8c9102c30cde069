//! `engine-audit demo`: builds small engine repos from the bundled fixtures and
//! audits the bundled recipes across the mini SGLang, vLLM, ATOM and TensorRT-LLM bumps, so a fresh
//! clone shows what the tool does in one command.

use super::output::emit;
use crate::audit::{self, AuditOptions, AuditReport};
use crate::cli::DemoArgs;
use crate::recipe::{self, LinkMapping};
use crate::report;
use crate::source::OpenOptions;
use std::path::Path;
use std::process::ExitCode;

/// Build the demo workspace in `root` and audit it (shared with the report tests).
pub fn audit_demo(root: &Path) -> miette::Result<(crate::demo::DemoWorkspace, AuditReport)> {
    let ws = crate::demo::build(root)?;
    let (mut files, errors) = recipe::collect_with(std::slice::from_ref(&ws.recipes), &LinkMapping::default());
    if let Some(e) = errors.into_iter().next() {
        return Err(miette::Report::new(e));
    }
    // As `audit` does with a master config among its files: a single-node
    // script runs in the image of the entry that names it (the ATOM script's
    // release is the one its entry's image names).
    let unread = audit::master_links::apply(&mut files, None, audit::master_links::Apply::ImagesOnly);
    let opts = AuditOptions {
        open: OpenOptions { offline: true, cache_dir: None, ..Default::default() },
        rules: crate::rules::load_rules(&[]).map_err(miette::Report::new)?,
        ..AuditOptions::default()
    }
    .with_source(&crate::profiles::SGLANG, Some(ws.sglang_repo.to_string_lossy().into_owned()), None)
    .with_source(&crate::profiles::VLLM, Some(ws.vllm_repo.to_string_lossy().into_owned()), None)
    .with_source(&crate::profiles::ATOM, Some(ws.atom_repo.to_string_lossy().into_owned()), None)
    .with_source(&crate::profiles::TRTLLM, Some(ws.trtllm_repo.to_string_lossy().into_owned()), None)
    .with_source(&crate::profiles::DYNAMO, Some(ws.dynamo_repo.to_string_lossy().into_owned()), None)
    .with_refs(&crate::profiles::SGLANG, None, Some(ws.sglang_target.clone()))
    .with_own_refs(&crate::profiles::VLLM, None, ws.vllm_tags.last().cloned())
    .with_own_refs(&crate::profiles::ATOM, None, ws.atom_tags.last().cloned())
    .with_own_refs(&crate::profiles::TRTLLM, None, ws.trtllm_tags.last().cloned());
    let mut report = audit::run(&files, &opts)?;
    report.findings.extend(unread);
    relativize(&mut report, root);
    Ok((ws, report))
}

/// Show recipe paths relative to the demo folder, so the output reads the same
/// wherever the temporary folder was.
fn relativize(report: &mut AuditReport, root: &Path) {
    let prefix = format!("{}/", root.display());
    let strip = |s: &mut String| {
        if let Some(rest) = s.strip_prefix(&prefix) {
            *s = rest.to_string();
        }
        *s = s.replace(&prefix, "");
    };
    for f in &mut report.findings {
        strip(&mut f.location.path);
        // Typed facts name paths too (an unresolved image's repository).
        f.kind = crate::report::escape::map_strings(&f.kind, |s| *s = s.replace(&prefix, ""));
        for e in &mut f.evidence {
            strip(&mut e.path);
            if let Some(n) = &mut e.note {
                strip(n);
            }
        }
        for a in &mut f.affects {
            strip(&mut a.path);
        }
        if let Some(fix) = &mut f.fix {
            for e in &mut fix.edits {
                strip(&mut e.path);
            }
        }
    }
    report.sources = std::mem::take(&mut report.sources)
        .into_iter()
        .map(|(mut path, text)| {
            strip(&mut path);
            (path, text)
        })
        .collect();
    for n in &mut report.notes {
        strip(n);
    }
    for p in &mut report.problems {
        strip(&mut p.path);
    }
    for b in &mut report.bumps {
        for h in &mut b.how {
            strip(h);
        }
    }
    // Shorter paths sort differently: the order `audit` gives the same files.
    crate::finding::normalize(&mut report.findings);
}

pub fn run(args: DemoArgs) -> miette::Result<ExitCode> {
    let temp;
    let root = match &args.keep {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::tempdir().map_err(|e| miette::miette!("cannot create a temporary folder: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    let (ws, report) = audit_demo(&root)?;
    emit(&format!(
        "engine-audit demo: mini SGLang {}, mini vLLM {}, mini ATOM {}, mini TensorRT-LLM {} and mini Dynamo {} built in {}\n\
         Auditing the demo recipes for the SGLang bump to {}, the vLLM bump to {}, the ATOM bump to {} and the TensorRT-LLM bump to {} (Dynamo stays where each recipe pins it).\n\n",
        ws.sglang_tags.join(", "),
        ws.vllm_tags.join(", "),
        ws.atom_tags.join(", "),
        ws.trtllm_tags.join(", "),
        ws.dynamo_tags.join(", "),
        root.display(),
        ws.sglang_target,
        ws.vllm_tags.last().map(String::as_str).unwrap_or("?"),
        ws.atom_tags.last().map(String::as_str).unwrap_or("?"),
        ws.trtllm_tags.last().map(String::as_str).unwrap_or("?"),
    ));
    emit(&report::Format::Text.render(&report, &report::RenderOptions { color: super::audit::use_color(), ..Default::default() }));
    Ok(ExitCode::SUCCESS)
}
