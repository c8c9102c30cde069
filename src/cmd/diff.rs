//! `engine-audit diff`: the engine changelog between two refs.

use super::engines::{full_surface, open_options, pick_engine};
use super::output::{emit, emit_json};
use crate::cli::{DiffArgs, DiffFormat};
use crate::source::discover_package_root;
use crate::source::EngineSource;
use crate::surface_diff::{diff, SurfaceDiff};
use std::fmt::Write;
use std::process::ExitCode;

pub(crate) fn run(args: DiffArgs) -> miette::Result<ExitCode> {
    let (engine, spec, root) = pick_engine(args.engine, &args.sources)?;
    let source = EngineSource::open(&spec, &open_options(&args.sources))?;
    let mut trees = Vec::new();
    let mut surfaces = Vec::new();
    for at in [&args.from, &args.to] {
        let (tree, ref_name) = source.tree(Some(at))?;
        let package_root = discover_package_root(tree.as_ref(), engine, root.as_deref())?;
        surfaces.push(full_surface(engine, tree.as_ref(), &package_root, &ref_name, &[]));
        trees.push((tree, package_root, ref_name));
    }
    let mut d = diff(&surfaces[0], &surfaces[1]);
    // A relocation is claimed only from shared symbols: read those of the
    // removed modules and of the modules added, then compare again.
    if !d.modules_removed.is_empty() {
        let removed: Vec<String> = d.modules_removed.iter().map(|m| m.module.clone()).collect();
        for (i, wanted) in [removed, d.modules_added.clone()].into_iter().enumerate() {
            let (tree, package_root, ref_name) = &trees[i];
            surfaces[i] = full_surface(engine, tree.as_ref(), package_root, ref_name, &wanted);
        }
        d = diff(&surfaces[0], &surfaces[1]);
    }
    match args.format {
        DiffFormat::Json => emit_json(&d)?,
        DiffFormat::Text => emit(&render(&d, false)),
        DiffFormat::Markdown => emit(&render(&d, true)),
    }
    Ok(ExitCode::SUCCESS)
}

fn code(md: bool, s: &str) -> String {
    if md {
        format!("`{s}`")
    } else {
        s.to_string()
    }
}

/// Text and Markdown share one layout: headed lists, one change per line.
pub(crate) fn render(d: &SurfaceDiff, md: bool) -> String {
    let mut out = String::new();
    let head = |out: &mut String, title: &str, n: usize| {
        if md {
            let _ = writeln!(out, "\n### {title} ({n})\n");
        } else {
            let _ = writeln!(out, "\n{title} ({n}):");
        }
    };
    let bullet = if md { "- " } else { "  " };
    if md {
        let _ = writeln!(out, "## {} {} → {}", d.engine, d.from, d.to);
    } else {
        let _ = writeln!(out, "{} {} -> {}", d.engine, d.from, d.to);
    }
    macro_rules! section {
        ($title:expr, $items:expr, |$it:ident| $line:expr) => {
            if !$items.is_empty() {
                head(&mut out, $title, $items.len());
                for $it in &$items {
                    let _ = writeln!(out, "{bullet}{}", $line);
                }
            }
        };
    }
    section!("Flags removed", d.flags_removed, |f| format!("{} ({}:{})", code(md, &f.flag), f.evidence.path, f.evidence.line));
    section!("Flags deprecated", d.flags_deprecated, |f| format!(
        "{} {:?}{}",
        code(md, &f.flag),
        f.deprecation.kind,
        f.deprecation.replacement.as_deref().map(|r| format!(" → {}", code(md, r))).unwrap_or_default()
    ));
    section!("Flags added", d.flags_added, |f| code(md, &f.flag));
    section!("Choices changed", d.choices_changed, |c| format!(
        "{}: +{} -{}",
        code(md, &c.flag),
        serde_json::to_string(&c.added).unwrap_or_default(),
        serde_json::to_string(&c.removed).unwrap_or_default()
    ));
    section!("Defaults changed", d.defaults_changed, |c| format!("{}: {} → {}", code(md, &c.subject), c.from, c.to));
    section!("Flag semantics changed", d.semantics_changed, |c| format!("{} {}: {} → {}", code(md, &c.subject), c.what, c.from, c.to));
    section!("Env vars removed", d.env_removed, |e| code(md, &e.name));
    section!("Env vars deprecated", d.env_deprecated, |e| format!(
        "{} {:?}{}{}",
        code(md, &e.name),
        e.deprecation.kind,
        e.deprecation.replacement.as_deref().map(|r| format!(" → {}", code(md, r))).unwrap_or_default(),
        e.deprecation.transform.as_deref().map(|t| format!(" (value transformed by {t})")).unwrap_or_default()
    ));
    section!("Env vars added", d.env_added, |e| code(md, &e.name));
    section!("Env defaults changed", d.env_defaults_changed, |c| format!("{}: {} → {}", code(md, &c.subject), c.from, c.to));
    section!("Modules removed", d.modules_removed, |m| format!(
        "{}{}",
        code(md, &m.module),
        m.moved_to.as_deref().map(|t| format!(" → moved to {}", code(md, t))).unwrap_or_default()
    ));
    section!("Class members removed", d.class_members_removed, |m| code(md, &format!("{}.{}", m.class, m.member)));
    section!("Config keys removed", d.config_keys_removed, |f| format!("{} ({}:{})", code(md, &f.flag), f.evidence.path, f.evidence.line));
    section!("Config keys added", d.config_keys_added, |f| code(md, &f.flag));
    section!("Config key choices changed", d.config_choices_changed, |c| format!(
        "{}: +{} -{}",
        code(md, &c.flag),
        serde_json::to_string(&c.added).unwrap_or_default(),
        serde_json::to_string(&c.removed).unwrap_or_default()
    ));
    section!("Config key values changed", d.config_values_changed, |c| format!(
        "{} {}: {} → {}",
        code(md, &c.subject),
        c.what,
        c.from,
        c.to
    ));
    if !md {
        let _ = writeln!(out, "\n{} modules added", d.modules_added.len());
    }
    out
}
