//! Master configs against the recipes they link (EA301/EA302), and what counts
//! as a checked entry.
//!
//! An entry counts as checked only when a recipe it links was itself audited
//! against the engine: the image the entry pins is the one that recipe runs, so
//! when that ref cannot be read (or the key, or its recipes, are missing) the
//! entry was not audited in any way that matters, and a run made of nothing
//! else must exit 2, with the reason under `problems`.

use super::{AuditOptions, AuditReport, Problem};
use crate::check;
use crate::recipe::{MasterConfig, MasterEntry, RecipeFile, RecipeKind};
use std::collections::BTreeSet;

/// Check every master config's entries (only `--key`'s, when given) against the
/// loaded recipes they link; `audited` holds the recipe paths with at least one
/// deployment audited.
pub(super) fn check_masters(files: &[RecipeFile], opts: &AuditOptions, audited: &BTreeSet<&str>, report: &mut AuditReport) {
    for master in files.iter().filter(|f| f.kind == RecipeKind::MasterConfig) {
        let Some(config) = &master.master else { continue };
        let selected: Vec<&MasterEntry> =
            config.entries.iter().filter(|e| opts.master_key.as_ref().is_none_or(|k| *k == e.key.value)).collect();
        let mut checked = 0;
        for entry in &selected {
            let linked: BTreeSet<&str> = entry.links.iter().filter_map(|l| l.recipe.as_deref()).collect();
            let scripts = entry.scripts.iter().flat_map(|s| &s.paths);
            let table = entry.model_table.as_ref();
            let mut audited_link = files.iter().filter(|f| audited.contains(f.path.as_str())).any(|f| match f.kind {
                RecipeKind::LaunchScript => scripts.clone().any(|p| super::master_links::names_file(&f.path, p)),
                // The table counts when the entry's model is among its audited deployments.
                RecipeKind::AmdModels => table.is_some_and(|t| {
                    super::master_links::names_file(&f.path, &t.table) && f.deployments.iter().any(|d| d.name == t.model.value)
                }),
                _ => false,
            });
            for recipe in files.iter().filter(|f| f.kind == RecipeKind::SrtSlurm) {
                if linked.iter().any(|l| recipe.path.ends_with(l)) {
                    check::consistency::check_entry(master, entry, recipe, &mut report.findings);
                    audited_link |= audited.contains(recipe.path.as_str());
                }
            }
            checked += usize::from(audited_link);
        }
        report.master_entries_checked += checked;
        // Say why when it matters: the key was asked for, or nothing else was audited.
        if checked == 0 && (opts.master_key.is_some() || audited.is_empty()) {
            let message = why_unchecked(config, &selected, opts.master_key.as_deref());
            report.problems.push(Problem { path: master.path.clone(), message });
        }
    }
}

/// Why no entry of a master config was checked.
fn why_unchecked(config: &MasterConfig, selected: &[&MasterEntry], key: Option<&str>) -> String {
    let links: Vec<&str> = selected.iter().flat_map(|e| e.links.iter().map(|l| l.recipe.as_deref().unwrap_or(&l.raw))).collect();
    match key {
        Some(k) if selected.is_empty() => {
            let keys: Vec<&str> = config.entries.iter().map(|e| e.key.value.as_str()).collect();
            format!("key `{k}` not found; nearest keys: {}", nearest(k, &keys, 5).join(", "))
        }
        Some(k) if links.is_empty() && selected.iter().any(|e| e.model_table.is_some()) => {
            let rows: Vec<String> =
                selected.iter().filter_map(|e| e.model_table.as_ref()).map(|t| format!("`{}` of {}", t.model.value, t.table)).collect();
            format!("key `{k}` runs the model table rows {}, and none was audited (no such row, or the table could not be read)", rows.join(", "))
        }
        Some(k) if links.is_empty() => match selected.iter().flat_map(|e| &e.scripts).map(|s| s.paths.join(" or ")).collect::<Vec<_>>() {
            scripts if scripts.is_empty() => format!("key `{k}` links no recipe (no `CONFIG_FILE=recipes/...` setting): nothing to check"),
            scripts => format!(
                "key `{k}` links no recipe and none of the single-node scripts its runner would run exists (looked for {}; set `single_node_scripts` in .engine-audit.yaml if your runners name them otherwise)",
                scripts.join("; ")
            ),
        },
        Some(k) => format!("key `{k}` not checked: no recipe it links could be audited against the engine ({})", listed(&links)),
        None => format!("no entry checked: no recipe its entries link was audited against the engine ({})", listed(&links)),
    }
}

/// Up to three items, then how many more.
fn listed(items: &[&str]) -> String {
    if items.is_empty() {
        return "it links none".into();
    }
    let mut out = items.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    if items.len() > 3 {
        out.push_str(&format!(" and {} more", items.len() - 3));
    }
    out
}

/// The `limit` keys sharing the longest prefix with `wanted` (a master config has
/// hundreds of keys; `-mtp` / `-fp8` variants share long prefixes).
fn nearest<'a>(wanted: &str, keys: &[&'a str], limit: usize) -> Vec<&'a str> {
    let shared = |k: &str| wanted.bytes().zip(k.bytes()).take_while(|(a, b)| a == b).count();
    let mut scored: Vec<(usize, &str)> = keys.iter().map(|k| (shared(k), *k)).collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(limit).map(|(_, k)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_keys_share_the_longest_prefix() {
        let keys = ["dsr1-fp4-b200-sglang", "dsr1-fp8-h200-sglang", "dsr1-fp4-b200-dynamo-sglang", "gptoss-fp4-b200-vllm"];
        assert_eq!(nearest("dsr1-fp4-b200-dynamo-sglang-mtp", &keys, 2), ["dsr1-fp4-b200-dynamo-sglang", "dsr1-fp4-b200-sglang"]);
    }

    #[test]
    fn long_link_lists_are_cut() {
        assert_eq!(listed(&["a", "b", "c", "d", "e"]), "a, b, c and 2 more");
        assert_eq!(listed(&[]), "it links none");
    }
}
