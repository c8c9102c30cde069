//! What a fix does, as typed actions: the English description (`--fix`'s
//! diff header, JSON, SARIF) and the Chinese one (the bilingual PR section)
//! are both rendered from them, never parsed back from words.

use super::Lang;
use serde::{Deserialize, Serialize};

/// One action of a fix, in the recipe's terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum FixAction {
    /// `replace `old` with `new`` (a flag renamed in place).
    Replace { old: String, new: String },
    /// `remove `name``, optionally naming what to use instead.
    Remove { name: String, use_instead: Option<String> },
    /// `rename `old` to `new``, optionally setting a converted value.
    Rename { old: String, new: String, set: Option<String> },
    /// A rename whose value conversion could not be done mechanically.
    RenameConvert { new: String, transform: String },
    /// Import a moved module from its new place.
    ImportFrom { module: String },
    /// The closest spelling the target knows.
    DidYouMean { name: String },
    /// `set `key: value`` (a rule's fix).
    Set { assignment: String },
    /// Delete the dead entry of a key written twice.
    DeleteDuplicate { dead_line: u32, kept_line: u32 },
}

impl FixAction {
    pub fn describe(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        match self {
            FixAction::Replace { old, new } if zh => format!("将 `{old}` 替换为 `{new}`"),
            FixAction::Replace { old, new } => format!("replace `{old}` with `{new}`"),
            FixAction::Remove { name, use_instead: Some(r) } if zh => format!("删除 `{name}`，改用 `{r}`"),
            FixAction::Remove { name, use_instead: Some(r) } => format!("remove `{name}` and use `{r}`"),
            FixAction::Remove { name, use_instead: None } if zh => format!("删除 `{name}`"),
            FixAction::Remove { name, use_instead: None } => format!("remove `{name}`"),
            FixAction::Rename { old, new, set: Some(v) } if zh => format!("将 `{old}` 重命名为 `{new}`，并设为 `{v}`"),
            FixAction::Rename { old, new, set: Some(v) } => format!("rename `{old}` to `{new}` and set it to `{v}`"),
            FixAction::Rename { old, new, set: None } if zh => format!("将 `{old}` 重命名为 `{new}`"),
            FixAction::Rename { old, new, set: None } => format!("rename `{old}` to `{new}`"),
            FixAction::RenameConvert { new, transform } if zh => format!("重命名为 `{new}`，并用 `{transform}` 换算取值"),
            FixAction::RenameConvert { new, transform } => format!("rename to `{new}` and convert the value with `{transform}`"),
            FixAction::ImportFrom { module } if zh => format!("改为从 `{module}` 导入（或两个路径都尝试）"),
            FixAction::ImportFrom { module } => format!("import from `{module}` (or try both paths)"),
            FixAction::DidYouMean { name } if zh => format!("是否应为 `{name}`？"),
            FixAction::DidYouMean { name } => format!("did you mean `{name}`?"),
            FixAction::Set { assignment } if zh => format!("设置 `{assignment}`"),
            FixAction::Set { assignment } => format!("set `{assignment}`"),
            FixAction::DeleteDuplicate { dead_line, kept_line } if zh => {
                format!("删除第 {dead_line} 行的条目（生效的是第 {kept_line} 行的值）")
            }
            FixAction::DeleteDuplicate { dead_line, kept_line } => {
                format!("delete the entry on line {dead_line} (the value on line {kept_line} is the one used)")
            }
        }
    }
}

/// The actions of one fix in words, joined as a sentence of the language.
pub(super) fn describe(actions: &[FixAction], lang: Lang) -> String {
    let sep = if lang == Lang::Zh { "，" } else { ", " };
    actions.iter().map(|a| a.describe(lang)).collect::<Vec<_>>().join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_reads_in_both_languages() {
        let rename = FixAction::Rename { old: "A".into(), new: "B".into(), set: Some("0".into()) };
        assert_eq!(rename.describe(Lang::En), "rename `A` to `B` and set it to `0`");
        assert_eq!(rename.describe(Lang::Zh), "将 `A` 重命名为 `B`，并设为 `0`");
        let two =
            [FixAction::Set { assignment: "fp4-gemm-backend: cutlass".into() }, FixAction::Remove { name: "x".into(), use_instead: None }];
        assert_eq!(describe(&two, Lang::En), "set `fp4-gemm-backend: cutlass`, remove `x`");
        assert_eq!(describe(&two, Lang::Zh), "设置 `fp4-gemm-backend: cutlass`，删除 `x`");
    }
}
