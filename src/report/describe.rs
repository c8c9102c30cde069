//! One short phrase per finding, in English or Chinese: what a table row and the
//! summary paragraph of the Markdown report say, and the label under a recipe
//! line in the text report. Built from the finding's typed facts.

use super::{Finding, Lang};
use crate::finding::{
    EnvRename, FindingKind, KeyPolicy, KeyProblem, Missing, NumberKind, Past, PastEnv, PastFlag, SemanticChange, ValueProblem,
};

/// The flag as typed on a command line: `--name` (a single-dash option stays).
pub(crate) fn option(subject: &str) -> String {
    if subject.starts_with('-') {
        subject.to_string()
    } else {
        format!("--{subject}")
    }
}

/// The consumer whose source a consumer-side finding's evidence is read in.
fn consumer_of(f: &Finding) -> Option<(&'static crate::profiles::EngineProfile, &str)> {
    f.evidence.iter().find_map(|e| {
        let profile = crate::profiles::by_id(e.engine.as_deref()?).filter(|p| p.server.is_none())?;
        Some((profile, e.ref_name.as_str()))
    })
}

/// The consumer build of a consumer-side finding: its ref (`0.1.0`).
pub(crate) fn consumer_ref(f: &Finding) -> Option<&str> {
    consumer_of(f).map(|(_, r)| r)
}

/// The consumer a consumer-side finding is about, as reports name it (`Dynamo`).
pub(crate) fn consumer_display(f: &Finding) -> Option<&'static str> {
    consumer_of(f).map(|(p, _)| p.display)
}

/// The engine a consumer-side finding is checked against, as reports name it
/// (`SGLang`, `vLLM`).
pub(crate) fn consumer_engine(f: &Finding) -> Option<&str> {
    match &f.kind {
        FindingKind::ConsumerMissing { engine, .. }
        | FindingKind::ConsumerFallback { engine, .. }
        | FindingKind::PinMismatch { engine, .. } => Some(engine.as_str()),
        _ => None,
    }
}

/// The consumer build of a consumer-side finding, named: `Dynamo 0.1.0`.
pub(crate) fn consumer_build(f: &Finding) -> Option<String> {
    consumer_of(f).map(|(p, r)| format!("{} {r}", p.display))
}

/// " (a deprecated alias of `--y` from A to B)": what a flag the target no
/// longer has was before.
fn past_flag(p: &Past<PastFlag>, lang: Lang) -> String {
    match (lang == Lang::Zh, &p.was) {
        (false, PastFlag::Alias { replacement: Some(r) }) => format!(" (a deprecated alias of `{r}` {})", p.span_en()),
        (false, PastFlag::Alias { replacement: None }) => format!(" (a deprecated alias {})", p.span_en()),
        (false, PastFlag::Noop) => format!(" (a deprecated no-op {})", p.span_en()),
        (false, PastFlag::Erroring) => format!(" (already refused {})", p.span_en()),
        (false, PastFlag::Option) => format!(" (an option until {})", p.last_seen),
        (false, PastFlag::Announced) => format!(" (deprecated but in effect {})", p.span_en()),
        (true, PastFlag::Alias { replacement: Some(r) }) => format!("（{} 时是 `{r}` 的已弃用别名）", p.span_zh()),
        (true, PastFlag::Alias { replacement: None }) => format!("（{} 时是已弃用别名）", p.span_zh()),
        (true, PastFlag::Noop) => format!("（{} 时已弃用且不起作用）", p.span_zh()),
        (true, PastFlag::Erroring) => format!("（{} 时已被拒绝）", p.span_zh()),
        (true, PastFlag::Option) => format!("（直到 {} 仍是有效参数）", p.last_seen),
        (true, PastFlag::Announced) => format!("（{} 时已宣布弃用，但仍然生效）", p.span_zh()),
    }
}

/// What the finding says, in one phrase without a final full stop. Code spans are
/// Markdown backticks (the text report shows them as written).
pub(crate) fn phrase(f: &Finding, lang: Lang, rule_title: Option<&str>) -> String {
    let p = kind_phrase(f, lang, rule_title);
    // A launch script's flag passed on some paths only: the condition it depends on.
    match (&f.condition, lang) {
        (None, _) => p,
        (Some(c), Lang::Zh) => format!("{p}（当 {c} 时）"),
        (Some(c), _) => format!("{p} (when {c})"),
    }
}

fn kind_phrase(f: &Finding, lang: Lang, rule_title: Option<&str>) -> String {
    let zh = lang == Lang::Zh;
    let opt = option(&f.subject);
    let sub = &f.subject;
    match &f.kind {
        FindingKind::UnknownFlag { ambiguous, history, .. } if !ambiguous.is_empty() => {
            let candidates: Vec<String> = ambiguous.iter().map(|c| format!("`{c}`")).collect();
            let past = history.as_ref().map(|p| past_flag(p, lang)).unwrap_or_default();
            match zh {
                false => format!("`{opt}` is ambiguous: argparse exits (it could match {}){past}", candidates.join(", ")),
                true => format!("`{opt}` 有歧义，argparse 会退出（可匹配 {}）{past}", candidates.join("、")),
            }
        }
        FindingKind::UnknownFlag { worker: Some(w), .. } if zh => format!("`{opt}` 不被 {w} 接受（仅服务器解析器有此选项）"),
        FindingKind::UnknownFlag { worker: Some(w), .. } => format!("`{opt}` is not accepted by {w} (a server-only option)"),
        FindingKind::UnknownFlag { history: Some(p), .. } if zh => format!("`{opt}` 不再被解析器接受{}", past_flag(p, lang)),
        FindingKind::UnknownFlag { history: Some(p), .. } => format!("`{opt}` is no longer accepted by the parser{}", past_flag(p, lang)),
        FindingKind::AbbreviatedFlag { full, unread, .. } => match (zh, unread.is_some()) {
            (false, false) => format!("`{opt}` works only as argparse's abbreviation of `{full}`"),
            (false, true) => format!("`{opt}` is only a prefix of `{full}` (whether the parser takes abbreviations could not be read)"),
            (true, false) => format!("`{opt}` 仅作为 `{full}` 的 argparse 缩写才被接受"),
            (true, true) => format!("`{opt}` 只是 `{full}` 的前缀（无法读出解析器是否接受缩写）"),
        },
        FindingKind::UnknownFlag { was_at, suggestion, .. } => {
            let again = was_at.is_some();
            match zh {
                false => format!(
                    "`{opt}` is {}accepted by the parser{}",
                    if again { "no longer " } else { "not " },
                    suggestion.as_deref().map(|h| format!(" (did you mean `{h}`?)")).unwrap_or_default()
                ),
                true => format!(
                    "`{opt}` {}被解析器接受{}",
                    if again { "已不再" } else { "不" },
                    suggestion.as_deref().map(|h| format!("（是否应为 `{h}`？）")).unwrap_or_default()
                ),
            }
        }
        FindingKind::RemovedFlag { .. } if zh => format!("`{opt}` 仍可解析，但会使服务器拒绝启动"),
        FindingKind::RemovedFlag { .. } => format!("`{opt}` is still parsed but makes the server refuse to start"),
        FindingKind::DeprecatedAlias { replacement, .. } if zh => format!("`{opt}` 已弃用，是 `{replacement}` 的别名"),
        FindingKind::DeprecatedAlias { replacement, .. } => format!("`{opt}` is a deprecated alias for `{replacement}`"),
        FindingKind::DeprecatedNoop { .. } if zh => format!("`{opt}` 已弃用，仅打印警告，不再起作用"),
        FindingKind::DeprecatedNoop { .. } => format!("`{opt}` is deprecated and does nothing"),
        FindingKind::InvalidChoice { value, choices, .. } if zh => format!("`{value}` 不是 `{opt}` 的有效取值（可选值：{choices}）"),
        FindingKind::InvalidChoice { value, choices, .. } => format!("`{value}` is not a valid choice for `{opt}` (choices: {choices})"),
        FindingKind::InvalidValue { option, problem, .. } => invalid_value(option, problem, &opt, zh),
        FindingKind::DefaultChanged { old, new, .. } if zh => format!("`{opt}` 的默认值由 `{old}` 变为 `{new}`，配方未显式设置"),
        FindingKind::DefaultChanged { old, new, .. } => {
            format!("the default of `{opt}` changed from `{old}` to `{new}`; the recipes leave it unset")
        }
        FindingKind::SemanticsChanged { changes, .. } if zh => {
            format!("`{opt}` 的语义已变更：{}", changes.iter().map(semantic_change_zh).collect::<Vec<_>>().join("，"))
        }
        FindingKind::SemanticsChanged { changes, .. } => {
            format!(
                "`{opt}` changed: {}",
                changes.iter().map(|c| format!("{} {} → {}", c.field, c.old, c.new)).collect::<Vec<_>>().join(", ")
            )
        }
        FindingKind::EnvRemoved { history: Some(p), .. } => {
            let was = match (&p.was, zh) {
                (PastEnv::Renamed { replacement, .. }, false) => format!("deprecated in favour of `{replacement}`"),
                (PastEnv::Renamed { replacement, .. }, true) => format!("已弃用，由 `{replacement}` 取代"),
                (PastEnv::Read, false) => "read by the engine".to_string(),
                (PastEnv::Read, true) => "仍被引擎读取".to_string(),
                (PastEnv::Retired { .. }, false) => "already retired".to_string(),
                (PastEnv::Retired { .. }, true) => "已停用".to_string(),
            };
            match zh {
                false => format!("`{sub}` was removed and is no longer read (it was {was} {})", p.span_en()),
                true => format!("`{sub}` 已被移除，不再被读取（{} 时{was}）", p.span_zh()),
            }
        }
        FindingKind::EnvRemoved { .. } if zh => format!("`{sub}` 已被移除，不再被读取"),
        FindingKind::EnvRemoved { .. } => format!("`{sub}` was removed and is no longer read"),
        FindingKind::EnvRenamed { how: EnvRename::PrefixRewrite { rewrite: (old, new), read_as, .. }, .. } if zh => {
            format!("`{sub}` 仅经由旧的 `{old}` → `{new}` 前缀改写，以 `{read_as}` 的名义被读取")
        }
        FindingKind::EnvRenamed { how: EnvRename::PrefixRewrite { rewrite: (old, new), read_as, .. }, .. } => {
            format!("`{sub}` is only read through the legacy `{old}` → `{new}` prefix rewrite, as `{read_as}`")
        }
        FindingKind::EnvRenamed { how: EnvRename::Forwarded { new, transform, .. }, .. } => {
            let how = match (transform.as_deref(), zh) {
                (Some("_invert_bool"), false) => " (inverted polarity)".to_string(),
                (Some("_invert_bool"), true) => "（布尔值取反）".to_string(),
                (Some("_ms_to_s"), false) => " (now in seconds, not milliseconds)".to_string(),
                (Some("_ms_to_s"), true) => "（单位由毫秒改为秒）".to_string(),
                (Some(t), false) => format!(" (value converted by `{t}`)"),
                (Some(t), true) => format!("（取值经 `{t}` 转换）"),
                (None, _) => String::new(),
            };
            if zh {
                format!("`{sub}` 已弃用，由 `{new}` 取代{how}")
            } else {
                format!("`{sub}` is deprecated in favour of `{new}`{how}")
            }
        }
        FindingKind::EnvRemovalNotice { .. } if zh => format!("`{sub}` 已在上游移除（读取它只为打印移除提示）"),
        FindingKind::EnvRemovalNotice { .. } => format!("the `{sub}` env var was removed upstream (it is only read to log a notice)"),
        FindingKind::EnvUnknown { suggestion: Some(s), .. } if zh => format!("引擎不认识 `{sub}`（拼写错误？是不是 `{s}`）"),
        FindingKind::EnvUnknown { suggestion: Some(s), .. } => format!("`{sub}` is not known to the engine (typo? did you mean `{s}`)"),
        FindingKind::EnvUnknown { searched_from: Some(r), .. } if zh => format!("`{sub}` 自 {r} 起没有任何版本读取"),
        FindingKind::EnvUnknown { searched_from: Some(r), .. } => format!("`{sub}` is not read by any release from {r} on"),
        FindingKind::EnvUnknown { .. } if zh => format!("引擎不认识 `{sub}`"),
        FindingKind::EnvUnknown { .. } => format!("`{sub}` is not known to the engine"),
        FindingKind::EnvDefaultChanged { old, new, .. } if zh => format!("`{sub}` 的默认值由 `{old}` 变为 `{new}`，配方已显式设置"),
        FindingKind::EnvDefaultChanged { old, new, .. } => {
            format!("the default of `{sub}` changed from `{old}` to `{new}`; the recipe sets it")
        }
        FindingKind::ConsumerMissing { missing, engine, consumer, at_start, moved_to, .. } => {
            let at = missing.target();
            let what = match (missing, zh) {
                (Missing::Symbol { module, name, .. }, false) => format!("`{module}` does not define `{name}` at {engine} {at}"),
                (Missing::Symbol { module, name, .. }, true) => format!("{engine} {at} 的 `{module}` 中没有 `{name}`"),
                (_, false) => format!("`{sub}` does not exist at {engine} {at}"),
                (_, true) => format!("`{sub}` 在 {engine} {at} 中不存在"),
            };
            let moved = match (zh, moved_to) {
                (false, Some(m)) => format!(" (moved to `{m}`)"),
                (true, Some(m)) => format!("（已移至 `{m}`）"),
                (_, None) => String::new(),
            };
            let then = match (zh, at_start) {
                (false, true) => format!(", so the {consumer} worker crashes at start"),
                (false, false) => format!(", so the {consumer} code path using it fails"),
                (true, true) => format!("，{consumer} worker 启动即崩溃"),
                (true, false) => format!("，{consumer} 中用到它的代码路径会失败"),
            };
            format!("{what}{moved}{then}")
        }
        FindingKind::ConsumerFallback { missing, engine, .. } if zh => {
            format!("`{sub}` 在 {engine} {} 中不存在，但调用处有保护，会退回备用逻辑", missing.target())
        }
        FindingKind::ConsumerFallback { missing, engine, .. } => {
            format!("`{sub}` is missing at {engine} {}, but the use is guarded and falls back", missing.target())
        }
        FindingKind::PinMismatch { engine, consumer, consumer_ref, requirement, target, .. } => {
            if zh {
                format!("{consumer} {consumer_ref} 依赖 `{requirement}`，不包含 {engine} 目标版本 {target}")
            } else {
                format!("{consumer} {consumer_ref} pins `{requirement}`, which excludes {engine} {target}")
            }
        }
        FindingKind::ImageMismatch { recipe_image, key, master_image } if zh => {
            format!("配方使用镜像 `{recipe_image}`，主配置 `{key}` 却写的是 `{master_image}`")
        }
        FindingKind::ImageMismatch { recipe_image, key, master_image } => {
            format!("the recipe runs `{recipe_image}`, master config `{key}` says `{master_image}`")
        }
        FindingKind::EngineRefMismatch { consumer, recipe_ref, key, router_version } if zh => {
            format!("配方安装 {consumer} `{recipe_ref}`，主配置 `{key}` 的路由版本却是 `{router_version}`")
        }
        FindingKind::EngineRefMismatch { consumer, recipe_ref, key, router_version } => {
            format!("the recipe installs {consumer} `{recipe_ref}`, master config `{key}` routes with `{router_version}`")
        }
        FindingKind::UnresolvedRef { engine, value, .. } if zh => format!("`{value}` 对应不到任何 {engine} 版本（tag 或提交）"),
        FindingKind::UnresolvedRef { engine, value, .. } => format!("`{value}` maps to no {engine} ref"),
        FindingKind::Rule { name, .. } => {
            let title = rule_title.unwrap_or(name);
            if zh {
                format!("触发风险规则 `{name}`：“{title}”")
            } else {
                title.to_string()
            }
        }
        FindingKind::DuplicateKey { key, dead_line, kept_line } if zh => {
            format!("`{key}` 在同一映射中设置了两次；加载器保留第 {kept_line} 行，第 {dead_line} 行不起作用")
        }
        FindingKind::UnreadableRecipe { reason } if zh => format!("无法作为配方读取，其中内容均未审计：{reason}"),
        FindingKind::UnreadablePart { reason } if zh => format!("配方的这一部分无法读取，其设置未审计：{reason}"),
        FindingKind::MissingLink { entry, target } if zh => format!("`{entry}` 链接的 `{target}` 不存在，它要运行的内容均未审计"),
        FindingKind::MissingVariant { entry, target, selector, variants } if zh => {
            format!("`{entry}` 运行 `{target}:{selector}`，但该文件没有变体 `{selector}`（它有 {variants}），它要运行的内容均未审计")
        }
        FindingKind::UnreadLaunch { words: Some(words), why } if zh => format!("无法读取 `{words}` 给出的参数（{why}），其内容未审计"),
        FindingKind::UnreadLaunch { words: None, why } if zh => format!("无法读取的服务器启动命令（{why}），其参数未审计"),
        FindingKind::ConfigKey { key, problem, .. } => key_phrase(key, problem, zh),
        FindingKind::DuplicateKey { .. }
        | FindingKind::UnreadableRecipe { .. }
        | FindingKind::UnreadablePart { .. }
        | FindingKind::MissingLink { .. }
        | FindingKind::MissingVariant { .. }
        | FindingKind::UnreadLaunch { .. } => f.kind.message().trim_end_matches('.').to_string(),
    }
}

/// A configuration-file key's finding, in one phrase.
fn key_phrase(key: &str, problem: &KeyProblem, zh: bool) -> String {
    match (problem, zh) {
        (KeyProblem::Unknown { model, policy, suggestion, last }, false) => {
            let what = match policy {
                KeyPolicy::Refused => "the server refuses to start",
                KeyPolicy::Ignored => "silently ignored: no effect",
                KeyPolicy::Kept => "kept but never read",
                KeyPolicy::Unread => "refused or ignored: the model's policy could not be read",
            };
            let was = last.as_ref().map(|(m, r)| format!(", a field of `{m}` up to {r}")).unwrap_or_default();
            let hint = suggestion.as_deref().map(|h| format!(" (did you mean `{h}`?)")).unwrap_or_default();
            format!("`{key}` is not a field of `{model}` ({what}{was}){hint}")
        }
        (KeyProblem::Unknown { model, policy, suggestion, last }, true) => {
            let what = match policy {
                KeyPolicy::Refused => "服务器拒绝启动",
                KeyPolicy::Ignored => "被静默忽略，不起作用",
                KeyPolicy::Kept => "被保留但从不读取",
                KeyPolicy::Unread => "被拒绝或被忽略：无法读出模型的处理方式",
            };
            let was = last.as_ref().map(|(m, r)| format!("；直到 {r} 仍是 `{m}` 的字段")).unwrap_or_default();
            let hint = suggestion.as_deref().map(|h| format!("（是否应为 `{h}`？）")).unwrap_or_default();
            format!("`{key}` 不是 `{model}` 的字段（{what}{was}）{hint}")
        }
        (KeyProblem::Deprecated { replacement, .. }, false) => format!("`{key}` is deprecated in favour of `{replacement}`"),
        (KeyProblem::Deprecated { replacement, .. }, true) => format!("`{key}` 已弃用，由 `{replacement}` 取代"),
        (KeyProblem::Choice { value, choices }, false) => format!("`{value}` is not a valid value for `{key}` (allowed: {choices})"),
        (KeyProblem::Choice { value, choices }, true) => format!("`{value}` 不是 `{key}` 的有效取值（可选值：{choices}）"),
        (KeyProblem::Type { value, expects }, false) => format!("`{value}` is not {expects}, as `{key}` expects"),
        (KeyProblem::Type { value, expects }, true) => format!("`{value}` 不是 `{key}` 所需的 {expects}"),
        (KeyProblem::Rejected { value, validator, test, .. }, false) => {
            format!("`{key}: {value}` is refused by the validator `{validator}` (`{test}`)")
        }
        (KeyProblem::Rejected { value, validator, test, .. }, true) => format!("`{key}: {value}` 被校验器 `{validator}` 拒绝（`{test}`）"),
        (KeyProblem::Unchecked { count, reason }, false) => {
            format!("the {count} configuration key(s) of role `{key}` were not checked ({reason})")
        }
        (KeyProblem::Unchecked { count, reason }, true) => format!("角色 `{key}` 的 {count} 个配置键未检查（{reason}）"),
    }
}

/// The phrase for a summary sentence: as [`phrase`], without lists of choices.
pub(crate) fn brief(f: &Finding, lang: Lang, rule_title: Option<&str>) -> String {
    match &f.kind {
        FindingKind::InvalidChoice { value, .. } => {
            let opt = option(&f.subject);
            if lang == Lang::Zh {
                format!("`{value}` 不是 `{opt}` 的有效取值")
            } else {
                format!("`{value}` is not a valid choice for `{opt}`")
            }
        }
        FindingKind::ConfigKey { key, problem: KeyProblem::Choice { value, .. }, .. } => match lang {
            Lang::Zh => format!("`{value}` 不是 `{key}` 的有效取值"),
            _ => format!("`{value}` is not a valid value for `{key}`"),
        },
        _ => phrase(f, lang, rule_title),
    }
}

/// EA006: the reason the value does not fit. English names the flag as the
/// engine does (`option`), Chinese as the recipe wrote it (`opt`).
fn invalid_value(option: &str, problem: &ValueProblem, opt: &str, zh: bool) -> String {
    if !zh {
        return problem.reason(option).trim_end_matches('.').to_string();
    }
    match problem {
        ValueProblem::Arity { min: 0, max: Some(0), .. } => format!("`{opt}` 是开关，不接受取值（应写 `true`）"),
        ValueProblem::Arity { min, max: Some(max), passed } if min == max => format!("`{opt}` 只接受 {min} 个值，配方传了 {passed} 个"),
        ValueProblem::Arity { min, max: None, passed } => format!("`{opt}` 至少需要 {min} 个值，配方传了 {passed} 个"),
        ValueProblem::Arity { min, max: Some(max), passed } => format!("`{opt}` 接受 {min} 到 {max} 个值，配方传了 {passed} 个"),
        ValueProblem::Type { value, not_a: NumberKind::Integer, .. } => format!("`{value}` 不是整数，而 `{opt}` 需要整数"),
        ValueProblem::Type { value, not_a: NumberKind::Number, .. } => format!("`{value}` 不是数字，而 `{opt}` 需要数值"),
        ValueProblem::Unusable { .. } => format!("配方传给 `{opt}` 的值与其类型或参数个数不符"),
        ValueProblem::NotJson { value, error } => format!("`{value}` 不是合法的 JSON（{error}），而 `{opt}` 用 json.loads 解析"),
    }
}

/// `type int → float` and `nargs "+" → one` in Chinese (names of argparse fields kept).
fn semantic_change_zh(c: &SemanticChange) -> String {
    let field = if c.field == "type" { "类型" } else { c.field.as_str() };
    let new = if c.new == "one" { "单个值" } else { c.new.as_str() };
    format!("{field} {} → {new}", c.old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conditional_finding_says_its_condition_once() {
        let at = crate::finding::Location { path: "l.sh".into(), line: 3, column: 5, offset: None, len: None };
        let kind = FindingKind::UnreadLaunch { words: Some("$DP_FLAGS".into()), why: "its value comes from the environment".into() };
        let f = Finding::new(kind, at, "$DP_FLAGS").condition(Some("DP_ATTENTION=true".into()));
        assert_eq!(f.message().matches("(when DP_ATTENTION=true)").count(), 1, "{}", f.message());
        assert_eq!(phrase(&f, Lang::En, None).matches("(when DP_ATTENTION=true)").count(), 1);
        assert!(phrase(&f, Lang::Zh, None).ends_with("（当 DP_ATTENTION=true 时）"));
    }

    #[test]
    fn semantics_read_in_chinese() {
        let change = |field: &str, old: &str, new: &str| SemanticChange { field: field.into(), old: old.into(), new: new.into() };
        assert_eq!(semantic_change_zh(&change("type", "int", "float")), "类型 int → float");
        assert_eq!(semantic_change_zh(&change("nargs", "\"+\"", "one")), "nargs \"+\" → 单个值");
    }
}
