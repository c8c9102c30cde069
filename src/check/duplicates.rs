//! EA304: a key written twice in one map. srt-slurm loads recipes with PyYAML,
//! which keeps the later value: the job runs, and the earlier line silently
//! does nothing. The recipe is audited with the value that wins; this finding
//! names the dead entry and deletes it as a fix.

use crate::finding::{Finding, FindingKind, Fix, FixAction, Location};
use crate::recipe::yaml::DuplicateKey;
use crate::recipe::{EditIntent, RecipeFile};

pub(crate) fn findings(file: &RecipeFile) -> Vec<Finding> {
    file.duplicates.iter().map(|d| finding(file, d)).collect()
}

fn finding(file: &RecipeFile, d: &DuplicateKey) -> Finding {
    let (dead_line, kept_line) = (d.dead_key.line, d.kept_key.line);
    let fix = Fix {
        actions: vec![FixAction::DeleteDuplicate { dead_line, kept_line }],
        edits: file.edit(EditIntent::Delete { key: &d.dead_key, value: &d.dead_value }),
    };
    Finding::new(FindingKind::DuplicateKey { key: d.key.clone(), dead_line, kept_line }, Location::from_span(&d.dead_key), d.key.clone())
        .fix(Some(fix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::{load_text, LinkMapping};

    const RECIPE: &str = "name: d
backend:
  type: sglang
  sglang_config:
    prefill:
      moe-runner-backend: flashinfer_trtllm  # first
      tp-size: 4
      moe-runner-backend: deep_gemm
";

    #[test]
    fn the_later_value_wins_and_the_earlier_line_is_named_and_deleted() {
        let file = load_text("d.yaml", RECIPE.into(), &LinkMapping::default()).unwrap();
        let flags = &file.deployments[0].roles[0].flags;
        let moe = flags.iter().find(|f| f.name == "moe-runner-backend").unwrap();
        assert!(matches!(&moe.value, crate::recipe::FlagValue::Scalar { text, .. } if text == "deep_gemm"));
        let found = findings(&file);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!((f.code(), f.location.line, f.severity), ("EA304", 6, crate::codes::Severity::Warning));
        assert_eq!(f.message(), "`moe-runner-backend` is set twice in this map; the loader keeps line 8, so line 6 has no effect.");
        let edit = &f.fix.as_ref().unwrap().edits[0];
        let mut fixed = RECIPE.to_string();
        fixed.replace_range(edit.offset..edit.offset + edit.len, &edit.replacement);
        assert_eq!(fixed, RECIPE.replace("      moe-runner-backend: flashinfer_trtllm  # first\n", ""));
    }

    #[test]
    fn a_flow_mapping_gets_advice_not_an_edit() {
        let text = "name: d\nbackend: {type: sglang, sglang_config: {prefill: {tp-size: 2, tp-size: 4}}}\n";
        let file = load_text("d.yaml", text.into(), &LinkMapping::default()).unwrap();
        let found = findings(&file);
        assert_eq!(found.len(), 1);
        assert!(found[0].fix.as_ref().unwrap().edits.is_empty());
    }
}
