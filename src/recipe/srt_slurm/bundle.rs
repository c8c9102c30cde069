//! Override bundles (`base:` plus `override_*` / `zip_override_*`), expanded the
//! way srtctl's `generate_override_configs` does it, on the spanned tree, so each
//! variant's values still point at the line that sets them: deep merge (maps
//! merge, anything else replaces, `null` deletes the key), and for
//! `zip_override_*` every list leaf is a zip axis (length-1 lists broadcast),
//! one value per point — never the flag's value.

use crate::recipe::yaml::{Entry, Node, NodeKind};
use crate::recipe::{Note, RecipeError};
use crate::text::span::SourceText;

// ---- override-format expansion ------------------------------------------------

/// The variants srtctl would run: `(selector, merged tree)`. A plain recipe is one
/// variant with no selector.
pub(super) fn expand_variants(src: &SourceText, root: &Node, notes: &mut Vec<Note>) -> Result<Vec<(Option<String>, Node)>, RecipeError> {
    let Some(base) = root.get("base") else {
        return Ok(vec![(None, root.clone())]);
    };
    if base.as_map().is_none() {
        return Err(RecipeError::shape(src, &base.span, "`base` should be a map"));
    }
    let keys: Vec<&Entry> = root.as_map().unwrap_or_default().iter().collect();
    let mut overrides: Vec<(&str, &Entry)> =
        keys.iter().filter_map(|e| e.key.as_str().filter(|k| k.starts_with("override_")).map(|k| (k, *e))).collect();
    let mut zips: Vec<(&str, &Entry)> =
        keys.iter().filter_map(|e| e.key.as_str().filter(|k| k.starts_with("zip_override_")).map(|k| (k, *e))).collect();
    overrides.sort_by_key(|(k, _)| *k);
    zips.sort_by_key(|(k, _)| *k);
    if overrides.is_empty() && zips.is_empty() {
        notes.push(Note::info(
            "override-format recipe without overrides: auditing `base` (srtctl would run nothing)",
            Some(base.span.clone()),
        ));
        return Ok(vec![(Some("base".into()), base.clone())]);
    }
    let base_name = base.get("name").and_then(Node::as_str).unwrap_or("unnamed").to_string();
    // Every variant is a full copy of `base`: a long zip list over a large base
    // would multiply into more values than any real sweep has (and exhaust memory).
    let mut count = overrides.len();
    for (key, entry) in &zips {
        if entry.value.as_map().is_some() {
            count = count.saturating_add(zip_length(src, key, &entry.value)?);
        }
    }
    let size = count.saturating_mul(crate::recipe::yaml::node_count(base));
    if size > MAX_VARIANT_NODES {
        return Err(RecipeError::shape(
            src,
            &base.span,
            format!("{count} variants of this `base` make {size} values, over the {MAX_VARIANT_NODES} an audit reads; split the sweep"),
        ));
    }
    let mut variants = Vec::new();
    for (key, entry) in overrides {
        let over = &entry.value;
        if over.as_map().is_none() {
            return Err(RecipeError::shape(src, &over.span, format!("`{key}` should be a map")));
        }
        let mut merged = deep_merge(base, over);
        if over.get("name").is_none() {
            set_generated_name(&mut merged, format!("{base_name}_{}", &key["override_".len()..]));
        }
        variants.push((Some(key.to_string()), merged));
    }
    for (key, entry) in zips {
        let zip = &entry.value;
        if zip.as_map().is_none() {
            return Err(RecipeError::shape(src, &zip.span, format!("`{key}` should be a map")));
        }
        let n = zip_length(src, key, zip)?;
        let has_name_list = zip.get("name").is_some_and(|n| n.as_seq().is_some());
        for i in 0..n {
            let mut merged = deep_merge(base, &zip_slice(zip, i));
            if !has_name_list {
                set_generated_name(&mut merged, format!("{base_name}_{}_{i}", &key["zip_override_".len()..]));
            }
            variants.push((Some(format!("{key}[{i}]")), merged));
        }
    }
    Ok(variants)
}

/// Values all variants of one override-format recipe may hold together.
const MAX_VARIANT_NODES: usize = 5_000_000;

/// srtctl's `deep_merge` on spanned nodes: maps merge recursively, anything else
/// replaces, `null` deletes the key.
fn deep_merge(base: &Node, over: &Node) -> Node {
    let (Some(base_entries), Some(over_entries)) = (base.as_map(), over.as_map()) else {
        return over.clone();
    };
    // Slots plus a key index: a large override over a large base stays linear
    // (a scan of the base per override key is quadratic).
    let mut slots: Vec<Option<Entry>> = base_entries.iter().cloned().map(Some).collect();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, e) in base_entries.iter().enumerate() {
        if let Some(k) = e.key.as_str() {
            index.entry(k.to_string()).or_insert(i);
        }
    }
    for o in over_entries {
        let Some(key) = o.key.as_str() else { continue };
        let existing = index.get(key).copied().filter(|&i| slots[i].is_some());
        if o.value.is_null() {
            if let Some(i) = existing {
                slots[i] = None;
            }
            continue;
        }
        match existing.and_then(|i| slots[i].as_mut().map(|e| (i, e))) {
            Some((_, e)) if e.value.as_map().is_some() && o.value.as_map().is_some() => {
                e.value = deep_merge(&e.value, &o.value);
            }
            Some((i, old)) => {
                let mut shadows = vec![(old.key.span.clone(), old.value.span.clone())];
                shadows.extend(old.shadows.iter().cloned());
                slots[i] = Some(Entry { shadows, ..o.clone() });
            }
            None => {
                index.insert(key.to_string(), slots.len());
                slots.push(Some(o.clone()));
            }
        }
    }
    Node { kind: NodeKind::Map(slots.into_iter().flatten().collect()), span: base.span.clone(), alias: None }
}

/// The zip length: every list leaf has length N or 1 (broadcast).
fn zip_length(src: &SourceText, key: &str, zip: &Node) -> Result<usize, RecipeError> {
    fn lengths<'n>(node: &'n Node, out: &mut Vec<(usize, &'n Node)>) {
        for e in node.as_map().unwrap_or_default() {
            match &e.value.kind {
                NodeKind::Seq(items) => out.push((items.len(), &e.value)),
                NodeKind::Map(_) => lengths(&e.value, out),
                NodeKind::Scalar(_) => {}
            }
        }
    }
    let mut found = Vec::new();
    lengths(zip, &mut found);
    if found.is_empty() {
        return Err(RecipeError::shape(src, &zip.span, format!("`{key}` has no list values: nothing to zip")));
    }
    if let Some((_, empty)) = found.iter().find(|(n, _)| *n == 0) {
        return Err(RecipeError::shape(src, &empty.span, format!("`{key}`: an empty list cannot be zipped")));
    }
    let mut n = 1;
    for (len, node) in &found {
        if *len == 1 {
            continue;
        }
        if n != 1 && *len != n {
            return Err(RecipeError::shape(
                src,
                &node.span,
                format!("`{key}`: a list of {len} values where the others have {n}; zip lists need one length (or 1)"),
            ));
        }
        n = *len;
    }
    Ok(n)
}

fn zip_slice(node: &Node, index: usize) -> Node {
    let Some(entries) = node.as_map() else {
        return node.clone();
    };
    let entries = entries
        .iter()
        .map(|e| {
            let value = match &e.value.kind {
                NodeKind::Seq(items) if items.len() == 1 => items[0].clone(),
                NodeKind::Seq(items) => items[index].clone(),
                NodeKind::Map(_) => zip_slice(&e.value, index),
                NodeKind::Scalar(_) => e.value.clone(),
            };
            Entry { key: e.key.clone(), value, merged_at: e.merged_at.clone(), shadows: e.shadows.clone() }
        })
        .collect();
    Node { kind: NodeKind::Map(entries), span: node.span.clone(), alias: None }
}

/// srtctl names unnamed variants itself; the name then has no text in the file,
/// so it is stored as a scalar without a span of its own (the variant's span).
fn set_generated_name(tree: &mut Node, name: String) {
    let span = tree.span.clone();
    if let NodeKind::Map(entries) = &mut tree.kind {
        entries.retain(|e| e.key.as_str() != Some("name"));
        let scalar = |text: String| Node {
            kind: NodeKind::Scalar(crate::recipe::yaml::Scalar {
                text,
                style: crate::recipe::yaml::ScalarStyle::Plain,
                tag: Some("generated".into()),
            }),
            span: span.clone(),
            alias: None,
        };
        entries.push(Entry { key: scalar("name".into()), value: scalar(name), merged_at: None, shadows: Vec::new() });
    }
}
