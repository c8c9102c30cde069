//! Whole-package scans of env reads, for tests and release checks: the audit
//! reads file by file through the fact cache ([`super::reads_in_source`]).

use super::reads::{reads_in_source, EnvRead};
use super::registry_instances;
use crate::extract::Package;
use crate::surface::ExtractWarning;
use aho_corasick::AhoCorasick;
use rayon::prelude::*;

/// Every read of the given names in the package, sorted by name then place.
pub(crate) fn find_env_reads(pkg: &Package, registry_files: &[&str], names: &[String], warnings: &mut Vec<ExtractWarning>) -> Vec<EnvRead> {
    let needles: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
    let wanted = |name: &str| names.iter().any(|n| n == name);
    scan(pkg, registry_files, &needles, &wanted, warnings)
}

/// Every read of a variable whose literal name starts with one of `prefixes`
/// (`SGLANG_`, `SGL_`): the surface-wide variant.
pub(crate) fn find_prefixed_env_reads(
    pkg: &Package,
    registry_files: &[&str],
    prefixes: &[&str],
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<EnvRead> {
    let needles: Vec<&[u8]> = prefixes.iter().map(|p| p.as_bytes()).collect();
    let wanted = |name: &str| prefixes.iter().any(|p| name.starts_with(p));
    scan(pkg, registry_files, &needles, &wanted, warnings)
}

/// `registry_files`: where the registry may be (its object's names are read forms too).
fn scan(
    pkg: &Package,
    registry_files: &[&str],
    needles: &[&[u8]],
    wanted: &(dyn Fn(&str) -> bool + Sync),
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<EnvRead> {
    if needles.is_empty() {
        return Vec::new();
    }
    // One pass over each file's bytes for all needles; only matching files are
    // parsed. Building fails only past automaton size limits no name list reaches.
    let Ok(prefilter) = AhoCorasick::new(needles) else {
        return Vec::new();
    };
    let instances = registry_instances(pkg, registry_files, warnings);
    let paths: Vec<String> = pkg.modules().into_iter().map(|m| m.path).collect();
    let per_file: Vec<(Vec<EnvRead>, Vec<ExtractWarning>)> = paths
        .par_iter()
        .map(|path| {
            let mut file_warnings = Vec::new();
            let reads = reads_in_source(pkg, path, &prefilter, &instances, wanted, &mut file_warnings);
            (reads, file_warnings)
        })
        .collect();
    let mut reads = Vec::new();
    for (file_reads, file_warnings) in per_file {
        reads.extend(file_reads);
        warnings.extend(file_warnings);
    }
    reads.sort_by(|a, b| (&a.name, &a.evidence).cmp(&(&b.name, &b.evidence)));
    reads
}
