//! What `audit` and `pr` share to fit a report to CI: the render options from
//! the flags and the config (docs links, GitHub's limits, paths relative to the
//! repository), baselines, and `--statistics`.

use crate::cli::CiArgs;
use crate::codes::Severity;
use crate::config::Config;
use crate::finding::AuditReport;
use crate::report::{self, RenderOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where recipe paths are relative to: the git top level of `cwd` when it is in
/// a work tree (code scanning and annotations want repository paths, whatever
/// folder CI runs in), else the config's folder when `cwd` is in it, else `cwd`.
pub(crate) fn repo_root(cwd: &Path, config: &Config) -> PathBuf {
    if let Some(top) = git2::Repository::discover(cwd).ok().and_then(|r| r.workdir().map(Path::to_path_buf)) {
        return top.canonicalize().unwrap_or(top);
    }
    match config.path.as_ref().and_then(|_| config.root.canonicalize().ok()) {
        Some(root) if cwd.starts_with(&root) => root,
        _ => cwd.to_path_buf(),
    }
}

/// Render options for a run: `paths_from_cwd` when recipe paths are as given
/// on the command line (`audit`), not already repository-relative (`pr`).
pub(crate) fn render_options(base: RenderOptions, config: &Config, ci: &CiArgs, paths_from_cwd: bool) -> RenderOptions {
    let cwd = std::env::current_dir().ok().map(|d| d.canonicalize().unwrap_or(d));
    let (base_dir, cwd) = match cwd {
        Some(cwd) if paths_from_cwd => (Some(repo_root(&cwd, config)), Some(cwd)),
        _ => (None, None),
    };
    RenderOptions {
        base_dir,
        cwd,
        docs_url: config.docs_url(),
        max_annotations: ci.max_annotations.unwrap_or(report::DEFAULT_MAX_ANNOTATIONS),
        max_chars: ci.max_chars.unwrap_or(report::DEFAULT_MAX_CHARS),
        ..base
    }
}

/// `--write-baseline` (every finding of the run), then `--baseline` (leave out
/// what it recorded): before rendering and gating, so a baselined finding
/// neither shows nor fails the run.
pub(crate) fn baselines(report: &mut AuditReport, ci: &CiArgs, opts: &RenderOptions) -> miette::Result<()> {
    if let Some(path) = &ci.write_baseline {
        crate::baseline::write(path, report, opts)?;
        eprintln!("engine-audit: wrote {} finding(s) to the baseline {}", report.findings.len(), path.display());
    }
    if let Some(path) = &ci.baseline {
        let known = crate::baseline::read(path)?;
        crate::baseline::apply(report, &known, opts, &format!("the baseline {}", path.display()));
    }
    Ok(())
}

/// `--statistics`: findings per code, most first: `count  code  name  severity`.
pub(crate) fn statistics(report: &AuditReport) -> String {
    let mut by_code: BTreeMap<(&str, &str), (usize, Severity)> = BTreeMap::new();
    for f in &report.findings {
        let entry = by_code.entry((f.code(), f.name())).or_insert((0, f.severity));
        entry.0 += 1;
        entry.1 = entry.1.max(f.severity);
    }
    let mut rows: Vec<_> = by_code.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    let width = rows.iter().map(|r| r.1 .0.to_string().len()).max().unwrap_or(1);
    let mut out = String::new();
    for ((code, name), (n, severity)) in rows {
        out.push_str(&format!("{n:>width$}  {code:<6} {name:<24} {}\n", severity.as_str()));
    }
    out.push_str(&format!("{:>width$}  in all\n", report.findings.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_count_per_code_most_first() {
        let loc = crate::finding::Location { path: "r.yaml".into(), line: 1, column: 1, offset: None, len: None };
        let rule = |id: &str| crate::finding::FindingKind::Rule { id: id.into(), name: "n".into(), message: "m".into(), doc: "d".into() };
        let mut report = AuditReport::default();
        for id in ["R002", "R001", "R002"] {
            report.findings.push(crate::finding::Finding::new(rule(id), loc.clone(), "x"));
        }
        assert_eq!(
            statistics(&report),
            "2  R002   n                        warning\n1  R001   n                        warning\n3  in all\n"
        );
    }

    #[test]
    fn the_repo_root_is_the_git_top_level() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        git2::Repository::init(&top).unwrap();
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        assert_eq!(repo_root(&top.join("a/b"), &Config::default()), top);
        // Outside a clone: the folder itself.
        let plain = tempfile::tempdir().unwrap();
        let plain = plain.path().canonicalize().unwrap();
        assert_eq!(repo_root(&plain, &Config::default()), plain);
    }
}
