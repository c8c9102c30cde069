//! One short phrase per finding, in English or Chinese: what a table row and the
//! summary paragraph of the Markdown report say, and the label under a recipe
//! line in the text report.
//!
//! The phrases are built from the finding's code, subject and the values its
//! message names (the replacement flag, the old and new default, …). The message
//! wording belongs to the checks; when a value cannot be found in it, the phrase
//! says less rather than something untrue.

use super::{Finding, Lang};

/// The flag as typed on a command line: `--name` (a single-dash option stays).
pub fn option(subject: &str) -> String {
    if subject.starts_with('-') {
        subject.to_string()
    } else {
        format!("--{subject}")
    }
}

/// The text between `start` and the next `end` after it.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(&s[from..from + len])
}

/// Every `code span` of a message, in order.
pub fn code_spans(s: &str) -> Vec<&str> {
    s.split('`').skip(1).step_by(2).collect()
}

/// The SGLang ref a Dynamo-side message names (`… at SGLang v0.5.19 (Dynamo …`).
fn sglang_target(f: &Finding) -> Option<&str> {
    let rest = &f.message[f.message.find("at SGLang ")? + "at SGLang ".len()..];
    rest.split([' ', ',', ')', ':']).next().filter(|s| !s.is_empty())
}

/// The Dynamo ref of a Dynamo-side finding: the ref of its Dynamo evidence.
pub fn dynamo_ref(f: &Finding) -> Option<&str> {
    f.evidence.iter().find(|e| e.engine.as_deref() == Some("dynamo")).map(|e| e.ref_name.as_str())
}

fn crashes_at_start(f: &Finding) -> bool {
    f.message.contains("crashes at start")
}

/// `0.85 → 0.88` from a default-change message, as code spans.
fn default_change(f: &Finding) -> Option<(String, String)> {
    match f.code.as_str() {
        "EA007" => {
            let rest = &f.message[f.message.find("its default changed ")? + "its default changed ".len()..];
            let values = rest[rest.find(": ")? + 2..].trim_end_matches('.');
            let (a, b) = values.split_once(" → ")?;
            Some((a.to_string(), b.to_string()))
        }
        "EA105" => {
            let values = between(&f.message, "changed from ", " (")?;
            let (a, b) = values.split_once(" to ")?;
            Some((a.to_string(), b.to_string()))
        }
        _ => None,
    }
}

/// What the finding says, in one phrase without a final full stop. Code spans are
/// Markdown backticks (the text report shows them as written).
pub fn phrase(f: &Finding, lang: Lang, rule_title: Option<&str>) -> String {
    let zh = lang == Lang::Zh;
    let opt = option(&f.subject);
    let spans = code_spans(&f.message);
    let sub = &f.subject;
    match f.code.as_str() {
        "EA001" => {
            let again = f.message.contains("(it was at ");
            let hint = between(&f.message, "Did you mean `", "`");
            match (zh, hint) {
                (false, h) => format!(
                    "`{opt}` is {}accepted by the parser{}",
                    if again { "no longer " } else { "not " },
                    h.map(|h| format!(" (did you mean `{h}`?)")).unwrap_or_default()
                ),
                (true, h) => format!(
                    "`{opt}` {}被解析器接受{}",
                    if again { "已不再" } else { "不" },
                    h.map(|h| format!("（是否应为 `{h}`？）")).unwrap_or_default()
                ),
            }
        }
        "EA002" if zh => format!("`{opt}` 仍可解析，但会使服务器拒绝启动"),
        "EA002" => format!("`{opt}` is still parsed but makes the server refuse to start"),
        "EA003" => match (zh, between(&f.message, "deprecated alias of `", "`")) {
            (false, Some(r)) => format!("`{opt}` is a deprecated alias for `{r}`"),
            (false, None) => format!("`{opt}` is a deprecated alias"),
            (true, Some(r)) => format!("`{opt}` 已弃用，是 `{r}` 的别名"),
            (true, None) => format!("`{opt}` 是已弃用的别名"),
        },
        "EA004" if zh => format!("`{opt}` 已弃用，仅打印警告，不再起作用"),
        "EA004" => format!("`{opt}` is deprecated and does nothing"),
        "EA005" => {
            let bad = spans.first().copied().unwrap_or("?");
            let choices = between(&f.message, "(choices: ", ").");
            match (zh, choices) {
                (false, Some(c)) => format!("`{bad}` is not a valid choice for `{opt}` (choices: {c})"),
                (false, None) => format!("`{bad}` is not a valid choice for `{opt}`"),
                (true, Some(c)) => format!("`{bad}` 不是 `{opt}` 的有效取值（可选值：{c}）"),
                (true, None) => format!("`{bad}` 不是 `{opt}` 的有效取值"),
            }
        }
        "EA006" => invalid_value(f, &opt, zh),
        "EA007" => match (zh, default_change(f)) {
            (false, Some((a, b))) => format!("the default of `{opt}` changed from `{a}` to `{b}`; the recipes leave it unset"),
            (false, None) => format!("the default of `{opt}` changed; the recipes leave it unset"),
            (true, Some((a, b))) => format!("`{opt}` 的默认值由 `{a}` 变为 `{b}`，配方未显式设置"),
            (true, None) => format!("`{opt}` 的默认值已变更，配方未显式设置"),
        },
        "EA008" => {
            let changes = f.message.find("changed between ").and_then(|i| {
                let rest = &f.message[i..];
                rest.find(": ").map(|j| rest[j + 2..].trim_end_matches('.'))
            });
            match (zh, changes) {
                (false, Some(c)) => format!("`{opt}` changed: {c}"),
                (false, None) => format!("`{opt}` changed its type, nargs or action"),
                (true, Some(c)) => format!("`{opt}` 的语义已变更：{}", semantics_zh(c)),
                (true, None) => format!("`{opt}` 的类型、参数个数或 action 已变更"),
            }
        }
        "EA101" if zh => format!("`{sub}` 已被移除，不再被读取"),
        "EA101" => format!("`{sub}` was removed and is no longer read"),
        "EA102" => {
            if f.message.contains("prefix rewrite") {
                let new = spans.last().copied().unwrap_or("?");
                return if zh {
                    format!("`{sub}` 仅经由旧的 `SGL_` → `SGLANG_` 前缀改写，以 `{new}` 的名义被读取")
                } else {
                    format!("`{sub}` is only read through the legacy `SGL_` → `SGLANG_` prefix rewrite, as `{new}`")
                };
            }
            let new = between(&f.message, "forwarded to `", "`");
            let how = if f.message.contains("inverted polarity") {
                if zh { "（布尔值取反）" } else { " (inverted polarity)" }.to_string()
            } else if f.message.contains("milliseconds → seconds") {
                if zh { "（单位由毫秒改为秒）" } else { " (now in seconds, not milliseconds)" }.to_string()
            } else if let Some(t) = between(&f.message, "through the transform `", "`") {
                if zh {
                    format!("（取值经 `{t}` 转换）")
                } else {
                    format!(" (value converted by `{t}`)")
                }
            } else {
                String::new()
            };
            match (zh, new) {
                (false, Some(n)) => format!("`{sub}` is deprecated in favour of `{n}`{how}"),
                (false, None) => format!("`{sub}` is deprecated{how}"),
                (true, Some(n)) => format!("`{sub}` 已弃用，由 `{n}` 取代{how}"),
                (true, None) => format!("`{sub}` 已弃用{how}"),
            }
        }
        "EA103" if zh => format!("`{sub}` 已在上游移除（读取它只为打印移除提示）"),
        "EA103" => format!("the `{sub}` env var was removed upstream (it is only read to log a notice)"),
        "EA104" if zh => format!("引擎不认识 `{sub}`（拼写错误？）"),
        "EA104" => format!("`{sub}` is not known to the engine (typo?)"),
        "EA105" => match (zh, default_change(f)) {
            (false, Some((a, b))) => format!("the default of `{sub}` changed from `{a}` to `{b}`; the recipe sets it"),
            (false, None) => format!("the default of `{sub}` changed; the recipe sets it"),
            (true, Some((a, b))) => format!("`{sub}` 的默认值由 `{a}` 变为 `{b}`，配方已显式设置"),
            (true, None) => format!("`{sub}` 的默认值已变更，配方已显式设置"),
        },
        "EA201" | "EA202" | "EA203" => {
            let at = sglang_target(f).map(|t| format!(" {t}")).unwrap_or_default();
            let moved = between(&f.message, "It moved to `", "`");
            let what = match (f.code.as_str(), zh) {
                ("EA202", false) if spans.len() >= 2 => format!("`{}` does not define `{}` at SGLang{at}", spans[0], spans[1]),
                ("EA202", true) if spans.len() >= 2 => format!("SGLang{at} 的 `{}` 中没有 `{}`", spans[0], spans[1]),
                (_, false) => format!("`{sub}` does not exist at SGLang{at}"),
                (_, true) => format!("`{sub}` 在 SGLang{at} 中不存在"),
            };
            let moved = match (zh, moved) {
                (false, Some(m)) => format!(" (moved to `{m}`)"),
                (true, Some(m)) => format!("（已移至 `{m}`）"),
                (_, None) => String::new(),
            };
            let then = match (zh, crashes_at_start(f)) {
                (false, true) => ", so the Dynamo worker crashes at start",
                (false, false) => ", so the Dynamo code path using it fails",
                (true, true) => "，Dynamo worker 启动即崩溃",
                (true, false) => "，Dynamo 中用到它的代码路径会失败",
            };
            format!("{what}{moved}{then}")
        }
        "EA204" => {
            let at = sglang_target(f).map(|t| format!(" {t}")).unwrap_or_default();
            if zh {
                format!("`{sub}` 在 SGLang{at} 中不存在，但调用处有保护，会退回备用逻辑")
            } else {
                format!("`{sub}` is missing at SGLang{at}, but the use is guarded and falls back")
            }
        }
        "EA205" => {
            let req = between(&f.message, "requires `", "`");
            let target = between(&f.message, "the SGLang target ", ":");
            let dynamo = dynamo_ref(f).map(|r| format!(" {r}")).unwrap_or_default();
            match (zh, req, target) {
                (false, Some(r), Some(t)) => format!("Dynamo{dynamo} pins `{r}`, which excludes SGLang {t}"),
                (true, Some(r), Some(t)) => format!("Dynamo{dynamo} 依赖 `{r}`，不包含 SGLang 目标版本 {t}"),
                (false, _, _) => format!("Dynamo{dynamo}'s requirement on SGLang excludes the target"),
                (true, _, _) => format!("Dynamo{dynamo} 对 SGLang 的版本要求不包含目标版本"),
            }
        }
        "EA301" if spans.len() >= 3 => {
            if zh {
                format!("配方使用镜像 `{}`，主配置 `{}` 却写的是 `{}`", spans[0], spans[1], spans[2])
            } else {
                format!("the recipe runs `{}`, master config `{}` says `{}`", spans[0], spans[1], spans[2])
            }
        }
        "EA302" if spans.len() >= 3 => {
            if zh {
                format!("配方安装 Dynamo `{}`，主配置 `{}` 的路由版本却是 `{}`", spans[0], spans[1], spans[2])
            } else {
                format!("the recipe installs Dynamo `{}`, master config `{}` routes with `{}`", spans[0], spans[1], spans[2])
            }
        }
        "EA303" => {
            let engine = if f.message.contains("no Dynamo ref") { "Dynamo" } else { "SGLang" };
            let what = spans.first().copied().unwrap_or(sub.as_str());
            if zh {
                format!("`{what}` 对应不到任何 {engine} 版本（tag 或提交）")
            } else {
                format!("`{what}` maps to no {engine} ref")
            }
        }
        code if code.starts_with('R') => {
            let title = rule_title.unwrap_or(&f.name);
            if zh {
                format!("触发风险规则 `{}`：“{title}”", f.name)
            } else {
                title.to_string()
            }
        }
        _ => f.message.trim_end_matches('.').to_string(),
    }
}

/// `type int → float, nargs "+" → one` in Chinese (names of argparse fields kept).
fn semantics_zh(changes: &str) -> String {
    changes
        .split(", ")
        .map(|c| {
            let c = c.strip_prefix("type ").map(|r| format!("类型 {r}")).unwrap_or_else(|| c.to_string());
            match c.strip_suffix(" one") {
                Some(rest) if rest.ends_with('→') => format!("{rest} 单个值"),
                _ => c,
            }
        })
        .collect::<Vec<_>>()
        .join("，")
}

/// The phrase for a summary sentence: as [`phrase`], without lists of choices.
pub fn brief(f: &Finding, lang: Lang, rule_title: Option<&str>) -> String {
    let p = phrase(f, lang, rule_title);
    match f.code.as_str() {
        "EA005" => p.split(" (choices: ").next().unwrap_or(&p).split("（可选值：").next().unwrap_or(&p).to_string(),
        _ => p,
    }
}

/// EA006: the reason the value does not fit, from the message.
fn invalid_value(f: &Finding, opt: &str, zh: bool) -> String {
    let m = &f.message;
    let passes = between(m, "the recipe passes ", ".");
    let value = code_spans(m).first().copied().unwrap_or("");
    if !zh {
        // The message without the ref: the table's heading names the bump.
        let at = f.evidence.first().map(|e| format!(" at {}", e.ref_name)).unwrap_or_default();
        let m = if at.is_empty() { m.clone() } else { m.replace(&at, "") };
        return m.trim_end_matches('.').to_string();
    }
    let passed = passes.map(|p| format!("，配方传了 {p} 个")).unwrap_or_default();
    if m.contains("takes no value") {
        format!("`{opt}` 是开关，不接受取值（应写 `true`）")
    } else if let Some(a) = between(m, "takes exactly ", " value") {
        format!("`{opt}` 只接受 {a} 个值{}", passed)
    } else if let Some(a) = between(m, "takes at least ", " value") {
        format!("`{opt}` 至少需要 {a} 个值{}", passed)
    } else if let Some(r) = between(m, "` takes ", " values") {
        format!("`{opt}` 接受 {} 个值{}", r.replace(" to ", " 到 "), passed)
    } else if m.contains("is not an integer") {
        format!("`{value}` 不是整数，而 `{opt}` 需要整数")
    } else if m.contains("is not a number") {
        format!("`{value}` 不是数字，而 `{opt}` 需要数值")
    } else {
        format!("配方传给 `{opt}` 的值与其类型或参数个数不符")
    }
}

/// The fix in words, in the report language. Descriptions are written by the
/// checks in English; the known shapes are translated, others kept as written.
pub fn fix_words(description: &str, lang: Lang) -> String {
    if lang != Lang::Zh {
        return description.to_string();
    }
    split_actions(description).iter().map(|a| fix_action_zh(a)).collect::<Vec<_>>().join("，")
}

/// `set `a: b`, remove `c`` → the two actions (commas inside code spans kept).
fn split_actions(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut start = 0;
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'`' => in_code = !in_code,
            b',' if !in_code && bytes.get(i + 1) == Some(&b' ') => {
                out.push(&s[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn fix_action_zh(a: &str) -> String {
    let spans = code_spans(a);
    let s = |i: usize| spans.get(i).copied().unwrap_or("");
    if a.starts_with("replace `") && spans.len() == 2 {
        format!("将 `{}` 替换为 `{}`", s(0), s(1))
    } else if a.starts_with("remove `") && a.contains(" and use `") && spans.len() == 2 {
        format!("删除 `{}`，改用 `{}`", s(0), s(1))
    } else if a.starts_with("remove `") && spans.len() == 1 {
        format!("删除 `{}`", s(0))
    } else if a.starts_with("rename `") && a.contains(" and set it to `") && spans.len() == 3 {
        format!("将 `{}` 重命名为 `{}`，并设为 `{}`", s(0), s(1), s(2))
    } else if a.starts_with("rename `") && spans.len() == 2 {
        format!("将 `{}` 重命名为 `{}`", s(0), s(1))
    } else if a.starts_with("rename to `") && a.contains("convert the value with `") && spans.len() == 2 {
        format!("重命名为 `{}`，并用 `{}` 换算取值", s(0), s(1))
    } else if a.starts_with("import from `") && spans.len() == 1 {
        format!("改为从 `{}` 导入（或两个路径都尝试）", s(0))
    } else if a.starts_with("did you mean `") && spans.len() == 1 {
        format!("是否应为 `{}`？", s(0))
    } else if a.starts_with("set `") && spans.len() == 1 {
        format!("设置 `{}`", s(0))
    } else {
        a.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_translate_by_shape() {
        let zh = |s: &str| fix_words(s, Lang::Zh);
        assert_eq!(zh("replace `cuda-graph-max-bs` with `cuda-graph-max-bs-decode`"), "将 `cuda-graph-max-bs` 替换为 `cuda-graph-max-bs-decode`");
        assert_eq!(zh("rename `A` to `B` and set it to `0`"), "将 `A` 重命名为 `B`，并设为 `0`");
        assert_eq!(zh("set `fp4-gemm-backend: cutlass`, remove `x`"), "设置 `fp4-gemm-backend: cutlass`，删除 `x`");
        assert_eq!(zh("something new"), "something new");
        assert_eq!(fix_words("remove `x`", Lang::En), "remove `x`");
    }

    #[test]
    fn code_spans_in_order() {
        assert_eq!(code_spans("`a` is not a valid choice for `--b` at v1"), vec!["a", "--b"]);
    }
}
