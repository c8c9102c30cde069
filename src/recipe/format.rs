//! Recipe formats behind one trait, as ast-grep puts languages: each format
//! says whether a file is its kind ([`RecipeFormat::detect`]), reads it into
//! deployments ([`RecipeFormat::read`]) and turns what a check wants done to a
//! recipe (an [`EditIntent`]: rename, set a value, delete) into byte edits in its
//! own syntax ([`RecipeFormat::edit`]). Checks state intents; they never ask which
//! format a file is.
//!
//! A new format is one implementation in its own file and one line in
//! [`FORMATS`](super::registry::FORMATS).

use super::links::{LinkMapping, MasterConfig};
use super::yaml::Node;
use super::{Deployment, FlagUse, Note, RecipeError, RecipeFile, RecipeKind};
use crate::text::span::{SourceText, Span};
use crate::text::Edit;

/// The syntax a format is written in: YAML files are parsed once, before the
/// YAML formats look at the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Shell,
    Yaml,
}

/// What reading one file yields.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// `None`: the format's own kind.
    pub kind: Option<RecipeKind>,
    pub deployments: Vec<Deployment>,
    pub master: Option<MasterConfig>,
    pub notes: Vec<Note>,
}

/// A change a check wants made to a recipe, in terms of what it read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EditIntent<'a> {
    /// Replace the first `old` inside `span` (a flag key, an env name or value),
    /// keeping the dashes and quotes around it.
    Rename { span: &'a Span, old: &'a str, new: &'a str },
    /// Replace a single value, keeping its quotes.
    SetValue { span: &'a Span, value: &'a str },
    /// Rename a switch that is on (`--old`, `old: true`) to `new_name`, a flag
    /// that takes `value`.
    RenameSwitch { flag: &'a FlagUse, new_name: &'a str, value: &'a str },
    /// Replace a switch that is on by several flags, each with its value
    /// (names as the recipe writes its keys: no leading `--` in YAML).
    SplitSwitch { flag: &'a FlagUse, into: &'a [(String, String)] },
    /// Remove a `key: value` entry (`key`'s span, `value`'s span).
    Delete { key: &'a Span, value: &'a Span },
}

/// One recipe format.
pub(crate) trait RecipeFormat: Sync {
    /// The kind files of this format are given (a reader may refine it).
    fn kind(&self) -> RecipeKind;
    fn syntax(&self) -> Syntax;
    /// Whether a file is of this format: told by its path and text for shell
    /// formats, by its parsed document (`root`) for YAML formats.
    fn detect(&self, path: &str, text: &str, root: Option<&Node>) -> bool;
    /// Read the file (`root` is its document, for YAML formats).
    fn read(&self, src: &SourceText, root: Option<&Node>, links: &LinkMapping) -> Result<Loaded, RecipeError>;
    /// The edits that carry out `intent` in this format; empty when it cannot
    /// be done mechanically (the finding then gives advice only).
    fn edit(&self, file: &RecipeFile, intent: EditIntent) -> Vec<Edit>;
    /// Whether files of `kind` are of this format.
    fn owns(&self, kind: &RecipeKind) -> bool {
        *kind == self.kind()
    }
}

/// Renames and value changes read the same in every format: text inside a
/// span that holds exactly what was read.
pub(super) fn edit_in_place(file: &RecipeFile, intent: EditIntent) -> Vec<Edit> {
    match intent {
        EditIntent::Rename { span, old, new } => replace_in_span(file, span, old, new).into_iter().collect(),
        EditIntent::SetValue { span, value } => replace_value(file, span, value).into_iter().collect(),
        EditIntent::RenameSwitch { .. } | EditIntent::SplitSwitch { .. } | EditIntent::Delete { .. } => Vec::new(),
    }
}

/// Replace the first `old` inside the span's text (keeps dashes and quotes around it).
/// A flag's name may be written with `_` for `-` (srtctl, and vLLM's parser,
/// read both): the name as written is what is replaced.
pub(super) fn replace_in_span(file: &RecipeFile, span: &Span, old: &str, new: &str) -> Option<Edit> {
    let text = file.text.get(span.offset..span.end())?;
    let at = text.find(old).or_else(|| find_either_spelling(text, old))?;
    Some(Edit { path: file.path.clone(), offset: span.offset + at, len: old.len(), replacement: new.to_string() })
}

/// Where `name` stands in `text` with any of its `-` written `_` or back.
fn find_either_spelling(text: &str, name: &str) -> Option<usize> {
    let same = |a: u8, b: u8| a == b || (matches!(a, b'-' | b'_') && matches!(b, b'-' | b'_'));
    let (bytes, wanted) = (text.as_bytes(), name.as_bytes());
    (0..=bytes.len().checked_sub(wanted.len())?)
        .find(|&i| text.is_char_boundary(i) && bytes[i..i + wanted.len()].iter().zip(wanted).all(|(a, b)| same(*a, *b)))
}

/// Replace a scalar value, keeping its quotes when it is quoted.
pub(super) fn replace_value(file: &RecipeFile, span: &Span, new: &str) -> Option<Edit> {
    let text = file.text.get(span.offset..span.end())?;
    let quoted = text.len() >= 2 && (text.starts_with('"') && text.ends_with('"') || text.starts_with('\'') && text.ends_with('\''));
    let (offset, len) = if quoted { (span.offset + 1, span.len - 2) } else { (span.offset, span.len) };
    Some(Edit { path: file.path.clone(), offset, len, replacement: new.to_string() })
}

/// The lines of a YAML block entry (`key: value`) that nothing else shares, as
/// (start, end, indentation); `None` for an entry of a flow mapping.
pub(super) fn yaml_entry_lines<'t>(file: &'t RecipeFile, key: &Span, value: &Span) -> Option<(usize, usize, &'t str)> {
    let text = &file.text;
    let start = text.get(..key.offset)?.rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[start..key.offset];
    if !indent.trim().is_empty() {
        return None;
    }
    let end = key.end().max(value.end());
    let line_end = text.get(end..)?.find('\n').map_or(text.len(), |i| end + i + 1);
    let rest = text[end..line_end].trim();
    (rest.is_empty() || rest.starts_with('#')).then_some((start, line_end, indent))
}

/// Delete the lines of a YAML block entry (`key: value`, or a key and its nested
/// block), when nothing but a comment shares them; else no edit (an entry of a
/// flow mapping is left to the user).
pub(super) fn delete_yaml_entry(file: &RecipeFile, key: &Span, value: &Span) -> Option<Edit> {
    let (start, end, _) = yaml_entry_lines(file, key, value)?;
    Some(Edit { path: file.path.clone(), offset: start, len: end - start, replacement: String::new() })
}

/// A YAML file no format recognises (or an empty one): kept, with a note, so
/// the report says it was looked at and skipped.
pub(crate) struct Unrecognised;

impl RecipeFormat for Unrecognised {
    fn kind(&self) -> RecipeKind {
        RecipeKind::Other { backend: None }
    }
    fn syntax(&self) -> Syntax {
        Syntax::Yaml
    }
    fn detect(&self, _: &str, _: &str, _: Option<&Node>) -> bool {
        true
    }
    fn read(&self, _: &SourceText, root: Option<&Node>, _: &LinkMapping) -> Result<Loaded, RecipeError> {
        let note =
            Note::info("not a recognised recipe (no `backend`, `base` or master-config entries); skipped", root.map(|r| r.span.clone()));
        Ok(Loaded { notes: vec![note], ..Loaded::default() })
    }
    fn edit(&self, _: &RecipeFile, _: EditIntent) -> Vec<Edit> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::{load_text, FlagValue};

    fn load(path: &str, text: &str) -> RecipeFile {
        load_text(path, text.to_string(), &LinkMapping::default()).unwrap()
    }

    fn apply(file: &RecipeFile, edits: &[Edit]) -> String {
        let mut text = file.text.clone();
        for e in edits.iter().rev() {
            text.replace_range(e.offset..e.offset + e.len, &e.replacement);
        }
        text
    }

    const SRT: &str = "name: r\nbackend:\n  type: sglang\n  sglang_config:\n    decode:\n      enable-dp: true  # on\n      mem-fraction: '0.8'\n      cuda-graph-bs:\n        - 1\n        - 2\n      tp: 4\n";
    const SCRIPT: &str = "#!/bin/bash\npython3 -m sglang.launch_server --enable-dp --mem-fraction 0.8 --tp 4\n";

    #[test]
    fn each_file_is_read_by_the_first_format_that_detects_it() {
        assert_eq!(load("a.yaml", SRT).kind, RecipeKind::SrtSlurm);
        assert_eq!(load("run", SCRIPT).kind, RecipeKind::LaunchScript, "told by the #! line");
        assert_eq!(load("m.yaml", "a:\n  image: x\n  framework: sglang\n").kind, RecipeKind::MasterConfig);
        let other = load("o.yaml", "just: data\n");
        assert_eq!(other.kind, RecipeKind::Other { backend: None });
        assert!(other.notes[0].message.contains("not a recognised recipe"));
        assert_eq!(load("e.yaml", "").notes[0].message, "empty file: no YAML document");
        let trtllm = load("t.yaml", "backend:\n  type: trtllm\n");
        assert_eq!(trtllm.kind, RecipeKind::SrtSlurm, "a recipe for an engine with no profile is still srt-slurm");
        assert_eq!(trtllm.deployments[0].engine, "trtllm", "read as a deployment of its engine: the audit names it not audited");
        assert_eq!(load("v.yaml", "backend:\n  type: vllm\n").kind, RecipeKind::SrtSlurm, "vLLM has a server profile");
    }

    fn srt_flag<'f>(file: &'f RecipeFile, name: &str) -> &'f FlagUse {
        file.deployments[0].roles[0].flags.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn srt_slurm_turns_intents_into_yaml_edits() {
        let file = load("a.yaml", SRT);
        let dp = srt_flag(&file, "enable-dp");
        assert!(matches!(dp.value, FlagValue::Switch { on: true }));
        let edits = file.edit(EditIntent::RenameSwitch { flag: dp, new_name: "dp-mode", value: "on" });
        assert!(apply(&file, &edits).contains("      dp-mode: on  # on\n"), "{}", apply(&file, &edits));
        let mem = srt_flag(&file, "mem-fraction");
        let edits = file.edit(EditIntent::SetValue { span: &mem.value_span, value: "0.9" });
        assert!(apply(&file, &edits).contains("mem-fraction: '0.9'"), "quotes are kept");
        let bs = srt_flag(&file, "cuda-graph-bs");
        let deleted = apply(&file, &file.edit(EditIntent::Delete { key: &bs.key_span, value: &bs.value_span }));
        assert!(deleted.ends_with("      mem-fraction: '0.8'\n      tp: 4\n"), "the key and its block list go: {deleted}");
    }

    #[test]
    fn launch_scripts_rename_in_place_and_never_delete_words() {
        let file = load("run.sh", SCRIPT);
        let argv = file.deployments[0].roles[0].flag_uses(|n| n == "enable-dp");
        let dp = argv.iter().find(|f| f.name == "enable-dp").unwrap();
        let edits = file.edit(EditIntent::RenameSwitch { flag: dp, new_name: "dp-mode", value: "on" });
        assert!(apply(&file, &edits).contains("launch_server --dp-mode=on --mem-fraction"), "{}", apply(&file, &edits));
        let tp = argv.iter().find(|f| f.name == "tp").unwrap();
        assert!(file.edit(EditIntent::Delete { key: &tp.key_span, value: &tp.value_span }).is_empty());
        let edits = file.edit(EditIntent::Rename { span: &tp.key_span, old: "tp", new: "tensor-parallel-size" });
        assert!(apply(&file, &edits).ends_with("--tensor-parallel-size 4\n"));
    }

    #[test]
    fn a_switch_splits_into_flags_with_values_in_both_formats() {
        let into = [("graph-decode".to_string(), "off".to_string()), ("graph-prefill".to_string(), "off".to_string())];
        let file = load("a.yaml", SRT);
        let dp = srt_flag(&file, "enable-dp");
        let edited = apply(&file, &file.edit(EditIntent::SplitSwitch { flag: dp, into: &into }));
        assert!(edited.contains("    decode:\n      graph-decode: off\n      graph-prefill: off\n      mem-fraction"), "{edited}");
        let file = load("run.sh", SCRIPT);
        let argv = file.deployments[0].roles[0].flag_uses(|n| n == "enable-dp");
        let dp = argv.iter().find(|f| f.name == "enable-dp").unwrap();
        let edited = apply(&file, &file.edit(EditIntent::SplitSwitch { flag: dp, into: &into }));
        assert!(edited.contains("launch_server --graph-decode=off --graph-prefill=off --mem-fraction"), "{edited}");
    }

    #[test]
    fn a_flow_mapping_entry_is_left_to_the_user() {
        let file = load("a.yaml", "name: r\nbackend:\n  type: sglang\n  sglang_config:\n    decode: {tp: 4, dp: 2}\n");
        let tp = srt_flag(&file, "tp");
        assert!(file.edit(EditIntent::Delete { key: &tp.key_span, value: &tp.value_span }).is_empty());
    }
}
