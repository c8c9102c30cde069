//! Every recipe format, in the order detection tries them, and the reading of
//! one file by the first format that detects it. Formats know the trait
//! ([`super::format`]); only this registry knows every format.

use super::format::{EditIntent, Loaded, RecipeFormat, Syntax, Unrecognised};
use super::links::LinkMapping;
use super::{Note, RecipeError, RecipeFile, RecipeKind};
use crate::text::span::SourceText;
use crate::text::{Edit, Span};

/// Every format, in the order detection tries them.
pub(crate) static FORMATS: &[&dyn RecipeFormat] = &[
    &super::launch_script::LaunchScript,
    &super::master_config::MasterConfigFormat,
    &super::srt_slurm::SrtSlurm,
    &super::amd_models::AmdModels,
    &Unrecognised,
];

/// The format of a file already read.
pub(crate) fn of(kind: &RecipeKind) -> &'static dyn RecipeFormat {
    FORMATS.iter().copied().find(|f| f.owns(kind)).unwrap_or(&Unrecognised)
}

/// Read a file with the first format that detects it: its kind, what it read
/// and (for YAML) the keys written twice.
pub(super) fn read(src: &SourceText, links: &LinkMapping) -> Result<(RecipeKind, Loaded, Vec<super::yaml::DuplicateKey>), RecipeError> {
    let (path, text) = (src.path.as_str(), src.text.as_str());
    if let Some(format) = FORMATS.iter().find(|f| f.syntax() == Syntax::Shell && f.detect(path, text, None)) {
        let loaded = format.read(src, None, links)?;
        return Ok((loaded.kind.clone().unwrap_or_else(|| format.kind()), loaded, Vec::new()));
    }
    let (root, duplicates) = super::yaml::parse_last_wins(src)?;
    let Some(root) = root else {
        let notes = vec![Note::info("empty file: no YAML document", None)];
        return Ok((Unrecognised.kind(), Loaded { notes, ..Loaded::default() }, duplicates));
    };
    let format = FORMATS.iter().find(|f| f.syntax() == Syntax::Yaml && f.detect(path, text, Some(&root))).copied().unwrap_or(&Unrecognised);
    let loaded = format.read(src, Some(&root), links)?;
    Ok((loaded.kind.clone().unwrap_or_else(|| format.kind()), loaded, duplicates))
}

impl RecipeFile {
    /// The format this file was read as.
    pub(crate) fn format(&self) -> &'static dyn RecipeFormat {
        of(&self.kind)
    }

    /// The edits that carry out `intent` in this file's format.
    pub(crate) fn edit(&self, intent: EditIntent) -> Vec<Edit> {
        self.format().edit(self, intent)
    }

    /// Rename a key where the deployment sets it: the entry read, and the base
    /// entries an override variant's entry shadows (renaming only the override
    /// would bring the base entry back into play). All or nothing.
    pub(crate) fn rename_key(&self, key: &Span, shadowed: &[(Span, Span)], old: &str, new: &str) -> Vec<Edit> {
        each_or_nothing(std::iter::once(key).chain(shadowed.iter().map(|(k, _)| k)), |k| {
            self.edit(EditIntent::Rename { span: k, old, new })
        })
    }

    /// Delete an entry and the base entries it shadows. All or nothing.
    pub(crate) fn delete_entry(&self, key: &Span, value: &Span, shadowed: &[(Span, Span)]) -> Vec<Edit> {
        let entries = std::iter::once((key, value)).chain(shadowed.iter().map(|(k, v)| (k, v)));
        each_or_nothing(entries, |(key, value)| self.edit(EditIntent::Delete { key, value }))
    }
}

/// Every item's edits, or none when one item cannot be edited.
fn each_or_nothing<T>(items: impl Iterator<Item = T>, edit: impl Fn(T) -> Vec<Edit>) -> Vec<Edit> {
    let mut out = Vec::new();
    for item in items {
        let edits = edit(item);
        if edits.is_empty() {
            return Vec::new();
        }
        out.extend(edits);
    }
    out
}
