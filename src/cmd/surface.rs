//! `engine-audit surface`: one release's extracted surface.

use super::engines::{full_surface, open_package_tree, pick_engine};
use super::output::{emit, emit_json};
use crate::cli::{SurfaceArgs, SurfaceFormat};
use crate::surface::EngineSurface;
use std::process::ExitCode;

pub(crate) fn run(args: SurfaceArgs) -> miette::Result<ExitCode> {
    let (engine, spec, root) = pick_engine(args.engine, &args.sources)?;
    if args.format == SurfaceFormat::JsonSchema && engine.server.is_none() {
        return Err(miette::miette!(
            help = "recipes configure the servers of engines: pass --sglang (or --vllm) for --format json-schema",
            "{} starts no server of its own: it has no recipe flags to write a schema for",
            engine.display
        ));
    }
    let (tree, ref_name, package_root) = open_package_tree(engine, &spec, root.as_deref(), args.at.as_deref(), &args.sources)?;
    let surface = full_surface(engine, tree.as_ref(), &package_root, &ref_name, &[]);
    match args.format {
        SurfaceFormat::Json => emit_json(&surface)?,
        SurfaceFormat::Text => emit(&render_text(&surface)),
        // srt-slurm names the flag block by the engine's id (`sglang_config`).
        SurfaceFormat::JsonSchema => emit_json(&crate::recipe_schema::srt_slurm_schema(&surface, &format!("{}_config", engine.id)))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn render_text(s: &EngineSurface) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} @ {} ({}) version {}",
        s.engine,
        s.ref_name,
        s.commit.as_deref().unwrap_or("no commit"),
        s.version.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(out, "package root: {}", s.package_root);
    let _ = writeln!(
        out,
        "{} flags, {} env vars, {} modules, {} classes, {} requirements",
        s.flags.len(),
        s.env.len(),
        s.modules.len(),
        s.classes.len(),
        s.requires.len()
    );
    for f in &s.flags {
        let dep = f
            .deprecated
            .as_ref()
            .map(|d| format!("  [deprecated {:?} -> {}]", d.kind, d.replacement.as_deref().unwrap_or("-")))
            .unwrap_or_default();
        let _ = writeln!(out, "  {} (dest {}, {}){dep}", f.names.join(", "), f.dest, f.action);
    }
    if !s.config_keys.is_empty() {
        let _ = writeln!(out, "{} configuration file keys", s.config_keys.len());
    }
    for k in &s.config_keys {
        let mut notes = Vec::new();
        if let Some(status) = &k.status {
            notes.push(status.clone());
        }
        if let Some(nested) = &k.nested {
            notes.push(format!("nests {nested}"));
        }
        if k.extra == crate::surface::ExtraPolicy::Forbid {
            notes.push(format!("{} refuses unknown keys", k.model));
        }
        let notes = if notes.is_empty() { String::new() } else { format!("  [{}]", notes.join("; ")) };
        let _ = writeln!(out, "  {}: {}{notes}", k.path, k.type_name);
    }
    for e in &s.env {
        let dep =
            e.deprecated.as_ref().map(|d| format!("  [{:?} -> {}]", d.kind, d.replacement.as_deref().unwrap_or("-"))).unwrap_or_default();
        let _ = writeln!(out, "  ${} ({}){dep}", e.name, e.kind);
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning: {}: {}", w.path, w.message);
    }
    out
}
