//! Extraction units and the fact cache: each unit (the flags, the env
//! registry, one module's symbols, ...) runs over a [`RecordingTree`] so the
//! files it looked at are known, and is stored with them; the env-read scan,
//! which looks at every file, is cached per file instead.

use super::env_vars::{self, EnvRead};
use super::Package;
use crate::cache::{tree_files_fingerprint, FactCache, RecordingTree};
use crate::source::Tree;
use crate::surface::ExtractWarning;
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// A value and the warnings met computing it.
pub(crate) type WithWarnings<T> = (T, Vec<ExtractWarning>);

/// One package of one tree, and where its facts are cached.
pub struct Units<'a> {
    /// The engine profile id: facts of two engines never share an entry.
    pub engine: &'a str,
    pub tree: &'a dyn Tree,
    pub root: &'a str,
    pub cache: &'a FactCache,
}

impl<'a> Units<'a> {
    /// Run `compute` (or reuse its stored result). `primary` names the unit's
    /// main file: its blob id goes into the key so each release's unit has its
    /// own entry; correctness rests on the recorded deps, not on the key.
    pub fn unit<T: Serialize + DeserializeOwned>(
        &self,
        kind: &str,
        params: &str,
        primary: Option<&str>,
        compute: impl FnOnce(&Package) -> WithWarnings<T>,
    ) -> WithWarnings<T> {
        if !self.cache.is_enabled() {
            return compute(&Package::new(self.tree, self.root));
        }
        let primary_id = primary.and_then(|p| self.tree.entry(p)).map(|e| e.id.as_str()).unwrap_or("-");
        let key = format!("{}\0{}\0{params}\0{}\0{primary_id}", self.engine, self.root, primary.unwrap_or("-"));
        if let Some(hit) = self.cache.get(kind, &key, self.tree) {
            return hit;
        }
        let recording = RecordingTree::new(self.tree);
        let value = compute(&Package::new(&recording, self.root));
        // A fact computed without a file that could not be read is wrong, and
        // kept by blob id it would outlive the repository's repair.
        if !recording.saw_failed_read() {
            self.cache.put(kind, &key, recording.deps(), &value);
        }
        value
    }

    /// Reads of the wanted names (a literal list, or prefixes) in every module
    /// of the package. Each file's result is cached under its path and blob id,
    /// so after a change only the changed files are read again.
    pub(crate) fn env_reads(&self, scan: &EnvScan, instances: &[String]) -> WithWarnings<Vec<EnvRead>> {
        if scan.needles().is_empty() {
            return Default::default();
        }
        let Ok(prefilter) = AhoCorasick::new(scan.needles()) else {
            return Default::default();
        };
        let pkg = Package::new(self.tree, self.root);
        let key = format!("{}\0{}\0{scan:?}\0{}", self.engine, self.root, instances.join(","));
        // The answer for exactly these files: a warm run of the same refs loads a
        // few reads instead of the table of every file (hundreds of KB of JSON).
        let result_key = self.cache.is_enabled().then(|| {
            format!("{key}\0{}", tree_files_fingerprint(self.tree, pkg.module_entries().map(|e| (e.path.as_str(), e.id.as_str()))))
        });
        if let Some(hit) = result_key.as_deref().and_then(|k| self.cache.get(ENV_RESULT, k, self.tree)) {
            return hit;
        }
        // Every module file; a shadowed `x.py` beside a package `x/` is read too,
        // which can only find more reads, never claim fewer.
        let files: Vec<(String, String)> = pkg.module_entries().map(|e| (e.path.clone(), e.id.clone())).collect();
        let known: FileTable = self.load_table(&key);
        let failed_before = self.tree.failed_reads();
        let wanted = |name: &str| scan.wants(name);
        let per_file: Vec<(String, FileReads)> = files
            .par_iter()
            .map(|(path, id)| {
                let slot = format!("{path}\0{id}");
                let reads = known.get(&slot).cloned().unwrap_or_else(|| {
                    let mut warnings = Vec::new();
                    let reads = env_vars::reads_in_source(&pkg, path, &prefilter, instances, &wanted, &mut warnings);
                    FileReads { reads, warnings, fresh: true }
                });
                (slot, reads)
            })
            .collect();
        let mut out: WithWarnings<Vec<EnvRead>> = Default::default();
        for (_, f) in &per_file {
            out.0.extend(f.reads.iter().cloned());
            out.1.extend(f.warnings.iter().cloned());
        }
        out.0.sort_by(|a, b| (&a.name, &a.evidence).cmp(&(&b.name, &b.evidence)));
        // Nothing scanned while a read failed is kept (see `unit`).
        if self.tree.failed_reads() > failed_before {
            return out;
        }
        if per_file.iter().any(|(_, f)| f.fresh) {
            self.store_table(&key, per_file);
        }
        if let Some(k) = &result_key {
            self.cache.put(ENV_RESULT, k, Default::default(), &out);
        }
        out
    }

    fn load_table(&self, key: &str) -> FileTable {
        if !self.cache.is_enabled() {
            return FileTable::new();
        }
        // The table is self-validating (keyed by blob id): stored with no deps.
        self.cache.get(ENV_TABLE, key, self.tree).unwrap_or_default()
    }

    /// Merge this tree's files into the stored table (the other release of a
    /// bump keeps its rows), re-reading it under a lock so the two releases,
    /// scanned in parallel, do not drop each other's rows.
    fn store_table(&self, key: &str, rows: Vec<(String, FileReads)>) {
        if !self.cache.is_enabled() {
            return;
        }
        static TABLES: Mutex<()> = Mutex::new(());
        let _guard = TABLES.lock().unwrap_or_else(|p| p.into_inner());
        let current = rows.len();
        let mut table: FileTable = self.load_table(key);
        // Beyond a few releases' worth, keep only this one: the table stays bounded.
        if table.len() > current * 4 {
            table.clear();
        }
        for (slot, mut reads) in rows {
            reads.fresh = false;
            table.insert(slot, reads);
        }
        self.cache.put(ENV_TABLE, key, Default::default(), &table);
    }
}

const ENV_TABLE: &str = "env-reads-by-file";
const ENV_RESULT: &str = "env-reads";

/// `path \0 blob id` → that file's reads.
type FileTable = BTreeMap<String, FileReads>;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct FileReads {
    reads: Vec<EnvRead>,
    warnings: Vec<ExtractWarning>,
    #[serde(skip)]
    fresh: bool,
}

/// Which env reads a scan looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EnvScan {
    Names(Vec<String>),
    Prefixes(Vec<String>),
}

impl EnvScan {
    fn needles(&self) -> &[String] {
        match self {
            EnvScan::Names(n) | EnvScan::Prefixes(n) => n,
        }
    }

    fn wants(&self, name: &str) -> bool {
        match self {
            EnvScan::Names(names) => names.iter().any(|n| n == name),
            EnvScan::Prefixes(prefixes) => prefixes.iter().any(|p| name.starts_with(p.as_str())),
        }
    }
}

#[cfg(test)]
#[path = "units_tests.rs"]
mod tests;
