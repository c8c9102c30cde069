//! The "flag audit" section a bump PR body carries: one paragraph a reviewer reads
//! in ten seconds, then a compact table per area (flags, env vars, Dynamo
//! compatibility, risk rules, recipe/master-config consistency).
//!
//! Every sentence of the paragraph is derived from the findings and claims only
//! what they show: "all recipe flags still parse" is written only when no finding
//! says a flag stops the server (EA001, EA002, EA005, EA006), "defaults are
//! unchanged" only when every deployment's current release is known and no
//! EA007 fired, and so on. Identical findings in several recipes are one row.
//!
//! `--lang en+zh` writes the English section, then the same in Chinese (code
//! identifiers as they are).

use super::budget::Limits;
use super::{bump_labels, counts, describe, evidence_url, in_engine_source, labels_of, repo_path, Finding, Lang, RenderOptions};
use crate::codes::{area_of, impact_of, scope_of, Area, Impact, Scope, Severity};
use crate::finding::AuditReport;
use crate::finding::FindingKind;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Findings that say the same thing about different recipes: one table row.
pub struct Group<'a> {
    pub findings: Vec<&'a Finding>,
}

impl<'a> Group<'a> {
    fn first(&self) -> &'a Finding {
        self.findings[0]
    }
    /// Distinct recipe files affected (the `dynamo:` places for engine-side findings).
    pub(crate) fn recipe_paths(&self) -> BTreeSet<&'a str> {
        self.findings
            .iter()
            .flat_map(|f| -> Vec<&'a str> {
                if in_engine_source(f) {
                    f.affects.iter().map(|a| a.path.as_str()).collect()
                } else if f.location.path.is_empty() {
                    Vec::new()
                } else {
                    vec![f.location.path.as_str()]
                }
            })
            .collect()
    }
}

/// The areas of the report, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    Flags,
    Env,
    Consumers,
    Rules,
    Consistency,
}

impl Section {
    fn of(code: &str) -> Section {
        match area_of(code) {
            Area::Flags => Section::Flags,
            Area::Env => Section::Env,
            Area::Consumer => Section::Consumers,
            Area::Recipes => Section::Consistency,
            Area::Rules => Section::Rules,
        }
    }
    fn title(self, lang: Lang) -> String {
        let consumers = || {
            let mut names: Vec<&str> =
                crate::profiles::CONSUMER_LINKS.iter().filter_map(|l| crate::profiles::by_id(l.consumer)).map(|p| p.display).collect();
            names.dedup();
            names.join(" / ")
        };
        match (self, lang == Lang::Zh) {
            (Section::Flags, false) => "Flags".into(),
            (Section::Flags, true) => "参数".into(),
            (Section::Env, false) => "Env vars".into(),
            (Section::Env, true) => "环境变量".into(),
            (Section::Consumers, false) => format!("{} compatibility", consumers()),
            (Section::Consumers, true) => format!("{} 兼容性", consumers()),
            (Section::Rules, false) => "Risk rules".into(),
            (Section::Rules, true) => "风险规则".into(),
            (Section::Consistency, false) => "Recipes and master config".into(),
            (Section::Consistency, true) => "配方与主配置".into(),
        }
    }
}

/// Findings grouped by code, subject and what they say apart from the recipe
/// (the row's phrase: no recipe path, deployment, role or current release in
/// it), in report order: area, then severity (errors first), code, subject.
pub fn groups(report: &AuditReport) -> Vec<Group<'_>> {
    type Key = (Section, std::cmp::Reverse<Severity>, String, String, String);
    let mut by_key: BTreeMap<Key, Vec<&Finding>> = BTreeMap::new();
    for f in &report.findings {
        let phrase = describe::phrase(f, Lang::En, rule_title(report, f));
        let key = (Section::of(f.code()), std::cmp::Reverse(f.severity), f.code().to_string(), f.subject.clone(), phrase);
        by_key.entry(key).or_default().push(f);
    }
    by_key.into_values().map(|findings| Group { findings }).collect()
}

fn of<'g, 'a>(groups: &'g [Group<'a>], pred: impl Fn(&str) -> bool) -> Vec<&'g Group<'a>> {
    groups.iter().filter(|g| pred(g.first().code())).collect()
}

fn rule_title<'a>(report: &'a AuditReport, f: &Finding) -> Option<&'a str> {
    report.rules.iter().find(|r| r.id == f.code()).map(|r| r.title.as_str())
}

fn phrase(report: &AuditReport, g: &Group, lang: Lang) -> String {
    describe::phrase(g.first(), lang, rule_title(report, g.first()))
}

fn brief(report: &AuditReport, g: &Group, lang: Lang) -> String {
    describe::brief(g.first(), lang, rule_title(report, g.first()))
}

/// Upper-case the first letter when the sentence starts with one.
fn sentence(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_lowercase() => c.to_ascii_uppercase().to_string() + chars.as_str(),
        _ => s.to_string(),
    }
}

/// `a; b; c; and 2 more` / `a；b；c；另有 2 项`.
fn list(items: Vec<String>, lang: Lang) -> String {
    const SHOWN: usize = 4;
    let more = items.len().saturating_sub(SHOWN);
    let mut shown: Vec<String> = items.into_iter().take(SHOWN).collect();
    let zh = lang == Lang::Zh;
    if more > 0 {
        shown.push(if zh { format!("另有 {more} 项") } else { format!("and {more} more") });
    }
    shown.join(if zh { "；" } else { "; " })
}

fn recipes_count(n: usize, lang: Lang) -> String {
    match (lang == Lang::Zh, n) {
        (true, n) => format!("{n} 个配方"),
        (false, 1) => "1 recipe".into(),
        (false, n) => format!("{n} recipes"),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The engines the recipes start that the report has bumps of, in profile order.
fn servers(report: &AuditReport) -> Vec<crate::profiles::Engine> {
    crate::profiles::PROFILES.iter().copied().filter(|e| e.server.is_some() && report.bumps.iter().any(|b| b.engine == e.id)).collect()
}

fn is_server(id: &str) -> bool {
    crate::profiles::by_id(id).is_some_and(|p| p.server.is_some())
}

/// The lead paragraph.
pub(crate) fn summary(report: &AuditReport, groups: &[Group], lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let stop = if zh { "。" } else { "." };
    // Sentences, written with a leading space that Chinese drops.
    let mut out = String::new();

    // One title part per engine the recipes start (its bumps), in profile order.
    let titles: Vec<String> = servers(report)
        .into_iter()
        .map(|e| {
            let labels = bump_labels(report, e.id);
            if zh {
                format!("{} 参数审计 ({})", e.display, labels.join("；"))
            } else {
                format!("{} flag audit ({})", e.display, labels.join("; "))
            }
        })
        .collect();
    let title = match (zh, titles.is_empty()) {
        (_, false) => titles.join(if zh { "；" } else { "; " }),
        (false, true) => "Engine audit".to_string(),
        (true, true) => "引擎审计".to_string(),
    };
    // The colon stays outside the bold in Chinese: `**…)**：` keeps the emphasis
    // closed before a CJK character (CommonMark flanking rules).
    let head = if zh { format!("**{title}**：") } else { format!("**{title}:**") };
    // One line per area after the head line: a reviewer finds their area by its label.
    let mut lines: Vec<String> = Vec::new();

    if report.deployments_audited == 0 {
        let _ = write!(out, " {}", if zh { "没有可审计的部署。" } else { "no deployment was audited." });
        // Said on the head line, before the totals.
        lines.push(std::mem::take(&mut out));
    } else {
        // Flags that stop the server.
        let breaking = of(groups, |c| area_of(c) == Area::Flags && impact_of(c) == Some(Impact::Breaks));
        if breaking.is_empty() {
            let _ = write!(out, " {}", if zh { "所有配方参数仍可解析。" } else { "all recipe flags still parse." });
        } else {
            let n: usize = breaking.iter().map(|g| g.findings.len()).sum();
            let items = breaking
                .iter()
                .map(|g| {
                    let k = g.recipe_paths().len();
                    let count = if k > 1 {
                        if zh {
                            format!("（{}）", recipes_count(k, lang))
                        } else {
                            format!(" ({})", recipes_count(k, lang))
                        }
                    } else {
                        String::new()
                    };
                    format!("{}{count}", brief(report, g, lang))
                })
                .collect();
            let _ = if zh {
                write!(out, " 配方中有 {n} 处参数设置会导致服务器启动失败：{}。", list(items, lang))
            } else {
                write!(
                    out,
                    " {} in the recipes will stop the server at startup: {}.",
                    plural(n, "flag setting", "flag settings"),
                    list(items, lang)
                )
            };
        }

        // Deprecated and changed flags.
        let deprecated = of(groups, |c| area_of(c) == Area::Flags && impact_of(c) == Some(Impact::Degrades));
        if !deprecated.is_empty() {
            let items = deprecated.iter().map(|g| brief(report, g, lang)).collect();
            let _ = write!(out, " {}{stop}", sentence(&list(items, lang)));
        }

        // Flags that work today only by argparse's leave.
        let abbreviated =
            of(groups, |c| area_of(c) == Area::Flags && impact_of(c) == Some(Impact::Informs) && scope_of(c) == Some(Scope::Target));
        if !abbreviated.is_empty() {
            let items = abbreviated.iter().map(|g| brief(report, g, lang)).collect();
            let _ = write!(out, " {}{stop}", sentence(&list(items, lang)));
        }

        // Defaults of flags the recipes leave unset.
        let defaults =
            of(groups, |c| area_of(c) == Area::Flags && impact_of(c) == Some(Impact::Informs) && scope_of(c) == Some(Scope::Bump));
        let every_start_known = report.bumps.iter().filter(|b| is_server(&b.engine)).all(|b| b.from.is_some());
        match defaults.len() {
            0 if every_start_known && !report.bumps.is_empty() => {
                let _ = write!(
                    out,
                    " {}",
                    if zh {
                        "配方未设置的参数，默认值均未改变。"
                    } else {
                        "Defaults of the flags the recipes leave unset are unchanged."
                    }
                );
            }
            0 => {}
            1 => {
                let _ = write!(out, " {}{stop}", sentence(&brief(report, defaults[0], lang)));
            }
            _ => {
                let items: Vec<String> = defaults.iter().map(|g| default_item(g.first(), lang)).collect();
                let _ = if zh {
                    write!(out, " 配方未设置的参数中，以下默认值已变更：{}。", items.join("、"))
                } else {
                    write!(out, " Defaults changed for flags the recipes leave unset: {}.", items.join(", "))
                };
            }
        }

        area_line(&mut lines, &mut out, &Section::Flags.title(lang), zh);

        // Env vars.
        let env = of(groups, |c| area_of(c) == Area::Env);
        if env.is_empty() {
            let prefixes: Vec<String> =
                servers(report).iter().filter_map(|e| e.server.as_ref()?.env_prefixes.first().map(|p| format!("`{p}*`"))).collect();
            let prefixes = prefixes.join(if zh { "、" } else { ", " });
            let _ = if zh {
                write!(out, " 配方设置的 {prefixes} 环境变量均不受影响。")
            } else {
                write!(out, " No {prefixes} env var the recipes set is affected.")
            };
        } else {
            let items = env.iter().map(|g| brief(report, g, lang)).collect();
            let _ = write!(out, " {}{stop}", sentence(&list(items, lang)));
        }
        area_line(&mut lines, &mut out, &Section::Env.title(lang), zh);
    }

    // Consumers of the engines (Dynamo's workers).
    let consumers = of(groups, |c| area_of(c) == Area::Consumer);
    for link in crate::profiles::CONSUMER_LINKS {
        let (Some(consumer), Some(engine)) = (crate::profiles::by_id(link.consumer), crate::profiles::by_id(link.engine)) else { continue };
        // One consumer (Dynamo) may use several engines: each link speaks for
        // its own engine's findings, and only when it was checked (a Dynamo
        // build installed by a deployment of that engine).
        let checked: BTreeSet<&str> =
            report.links_checked.iter().filter(|(c, e, _)| c == consumer.id && e == engine.id).map(|(_, _, at)| at.as_str()).collect();
        if checked.is_empty() {
            continue;
        }
        let mine: Vec<&&Group> = consumers
            .iter()
            .filter(|g| {
                g.findings.iter().any(|f| {
                    describe::consumer_build(f).is_some_and(|b| b.starts_with(consumer.display))
                        && describe::consumer_engine(f).is_none_or(|e| e == engine.display)
                })
            })
            .collect();
        let labels =
            labels_of(&report.bumps.iter().filter(|b| b.engine == consumer.id && checked.contains(b.to.as_str())).collect::<Vec<_>>());
        if !mine.is_empty() {
            let refs: BTreeSet<&str> = mine.iter().flat_map(|g| g.findings.iter().filter_map(|f| describe::consumer_ref(f))).collect();
            let who = match refs.len() {
                1 => format!("{} {}", consumer.display, refs.iter().next().unwrap_or(&"")),
                _ => consumer.display.to_string(),
            };
            let items = mine.iter().map(|g| brief(report, g, lang)).collect();
            let _ = write!(out, " {who}{}{}{stop}", if zh { "：" } else { ": " }, list(items, lang));
        } else if !labels.is_empty() && !report.problems.iter().any(|p| p.path.starts_with(&format!("{}@", consumer.id))) {
            let (refs, target) = (labels.join(", "), engine.display);
            let _ = if zh {
                write!(out, " {} {refs}：对 {target} 目标版本的导入、属性访问和版本约束均未发现问题。", consumer.display)
            } else {
                write!(out, " {} {refs}: no import, attribute or pin problem against the {target} target.", consumer.display)
            };
        }
    }

    area_line(&mut lines, &mut out, &Section::Consumers.title(lang), zh);

    // Risk rules.
    let rules = of(groups, |c| area_of(c) == Area::Rules);
    if !rules.is_empty() {
        let items = rules
            .iter()
            .map(|g| {
                let f = g.first();
                let title = rule_title(report, f).unwrap_or(f.name());
                let k = recipes_count(g.recipe_paths().len(), lang);
                if zh {
                    format!("风险规则 `{}` 命中 {k}：“{title}”", f.code())
                } else {
                    format!("risk rule `{}` matches {k}: {title}", f.code())
                }
            })
            .collect();
        let _ = write!(out, " {}{stop}", sentence(&list(items, lang)));
    }

    area_line(&mut lines, &mut out, &Section::Rules.title(lang), zh);

    // Recipes against the master config and the engine repos.
    let consistency = of(groups, |c| area_of(c) == Area::Recipes);
    if !consistency.is_empty() {
        let items = consistency.iter().map(|g| brief(report, g, lang)).collect();
        let _ = if zh {
            write!(out, " 配方与主配置或引擎仓库不一致：{}。", list(items, lang))
        } else {
            write!(out, " Recipes disagree with the master config or the engine repos: {}.", list(items, lang))
        };
    }

    area_line(&mut lines, &mut out, &Section::Consistency.title(lang), zh);

    if let Some(coverage) = super::coverage_phrase(report) {
        let _ = if zh {
            write!(out, " 覆盖范围：{coverage}（未审计的部署见下文，不算通过）。")
        } else {
            write!(out, " Coverage: {coverage} (listed below; what was not audited is not clean).")
        };
        area_line(&mut lines, &mut out, if zh { "覆盖" } else { "Coverage" }, zh);
    }
    if !report.problems.is_empty() {
        let n = report.problems.len();
        let _ = if zh {
            write!(out, " 有 {n} 处输入未能完整读取（见下文），相关结果可能不全。")
        } else {
            write!(out, " {} could not be fully read (listed below): findings there may be missing.", plural(n, "input", "inputs"))
        };
        area_line(&mut lines, &mut out, if zh { "输入" } else { "Inputs" }, zh);
    }

    let (e, w, i) = counts(report);
    let _ = if zh {
        let inputs = match super::input_problems(report) {
            0 => String::new(),
            n => format!("（其中 {n} 项是输入问题）"),
        };
        write!(
            out,
            " 合计：{} 个部署（{} 个配方文件）中有 {e} 个错误、{w} 个警告、{i} 条提示{inputs}。",
            report.deployments_audited, report.recipes
        )
    } else {
        write!(out, " {}.", super::counts_phrase(report, " and "))
    };
    // The head line: the title, what was not audited, the totals.
    let first = if report.deployments_audited == 0 { lines.remove(0) } else { String::new() };
    let head_line = if zh {
        // Chinese runs sentences together after the full stop.
        format!("{head}{}", format!("{first}{out}").trim_start().replace("。 ", "。"))
    } else {
        format!("{head}{first}{out}")
    };
    std::iter::once(head_line).chain(lines).collect::<Vec<_>>().join("\n")
}

/// Close the sentences written for one area as a line `- **Area:** …`; an area
/// with nothing said gets no line.
fn area_line(lines: &mut Vec<String>, out: &mut String, label: &str, zh: bool) {
    let text = std::mem::take(out);
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    lines.push(if zh { format!("- **{label}**：{}", text.replace("。 ", "。")) } else { format!("- **{label}:** {}", sentence(text)) });
}

/// `` `--x` (`a` → `b`) `` for the list of changed defaults.
fn default_item(f: &Finding, lang: Lang) -> String {
    let opt = describe::option(&f.subject);
    match (&f.kind, lang == Lang::Zh) {
        (FindingKind::DefaultChanged { old, new, .. }, false) => format!("`{opt}` (`{old}` → `{new}`)"),
        (FindingKind::DefaultChanged { old, new, .. }, true) => format!("`{opt}`（`{old}` → `{new}`）"),
        _ => format!("`{opt}`"),
    }
}

/// Table cell text: no line breaks, pipes escaped.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

fn recipes_cell(g: &Group, lang: Lang, opts: &RenderOptions) -> String {
    let zh = lang == Lang::Zh;
    // EA007 is said once per recipe folder: it is about every recipe in it.
    if g.first().code() == "EA007" {
        let folders: BTreeSet<String> = g
            .findings
            .iter()
            .filter_map(|f| match &f.kind {
                FindingKind::DefaultChanged { family, .. } => Some(family.clone()),
                _ => None,
            })
            .collect();
        if !folders.is_empty() {
            let names: Vec<String> = folders.iter().map(|p| format!("`{}/`", repo_path(p, opts).trim_end_matches('/'))).collect();
            return if zh { format!("{} 下的配方", names.join("、")) } else { format!("recipes in {}", names.join(", ")) };
        }
    }
    let paths = g.recipe_paths();
    let mut roles: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in &g.findings {
        if in_engine_source(f) {
            continue;
        }
        let entry = roles.entry(f.location.path.as_str()).or_default();
        if let Some(r) = f.role.as_deref() {
            if !entry.contains(&r) {
                entry.push(r);
                entry.sort();
            }
        }
    }
    const SHOWN: usize = 3;
    let shown: Vec<String> = paths
        .iter()
        .take(SHOWN)
        .map(|p| {
            let roles = roles
                .get(p)
                .filter(|r| !r.is_empty())
                .map(|r| if zh { format!("（{}）", r.join("、")) } else { format!(" ({})", r.join(", ")) })
                .unwrap_or_default();
            // The whole repository-relative path: one file name is in four folders of InferenceX.
            format!("`{}`{roles}", repo_path(p, opts))
        })
        .collect();
    let mut shown = shown.join(if zh { "、" } else { ", " });
    if paths.len() > SHOWN {
        shown.push_str(&if zh { format!(" 等 {} 个", paths.len()) } else { format!(", +{} more", paths.len() - SHOWN) });
    }
    let builds: Vec<String> = g
        .findings
        .iter()
        .filter(|f| in_engine_source(f))
        .filter_map(|f| describe::consumer_build(f))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let builds = builds.join(", ");
    match (paths.len(), builds.is_empty()) {
        (0, true) => "—".into(),
        (0, false) => builds,
        (n, true) => format!("**{n}** · {shown}"),
        (n, false) if zh => format!("**{n}** · {shown}（经 {builds}）"),
        (n, false) => format!("**{n}** · {shown} (via {builds})"),
    }
}

fn evidence_cell(g: &Group, opts: &RenderOptions) -> String {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in g.findings.iter().flat_map(|f| &f.evidence) {
        if !seen.insert((&e.path, e.line, &e.ref_name)) {
            continue;
        }
        let at = if e.engine.is_some() { format!(" @ {}", e.ref_name) } else { String::new() };
        out.push(match evidence_url(e, opts) {
            Some(url) => format!("[{}:{}]({url}){at}", e.path, e.line),
            None if e.engine.is_some() => format!("`{}:{}`{at}", e.path, e.line),
            // The user's own file (a master config): repository-relative, as recipe paths.
            None => format!("`{}:{}`", repo_path(&e.path, opts), e.line),
        });
    }
    const SHOWN: usize = 3;
    let more = out.len().saturating_sub(SHOWN);
    out.truncate(SHOWN);
    if more > 0 {
        out.push(format!("+{more}"));
    }
    if out.is_empty() {
        "—".into()
    } else {
        out.join("<br>")
    }
}

fn fix_cell(g: &Group, lang: Lang) -> String {
    let mut fixes: Vec<String> = Vec::new();
    for f in &g.findings {
        let Some(fix) = &f.fix else { continue };
        let mut words = fix.description(lang);
        if !fix.edits.is_empty() {
            words.push_str(if lang == Lang::Zh { "（`--fix` 可自动修复）" } else { " (`--fix`)" });
        }
        if !fixes.contains(&words) {
            fixes.push(words);
        }
    }
    if fixes.is_empty() {
        "—".into()
    } else {
        fixes.join("<br>")
    }
}

fn severity_word(s: Severity, lang: Lang) -> &'static str {
    match (s, lang == Lang::Zh) {
        (Severity::Error, false) => "error",
        (Severity::Warning, false) => "warning",
        (Severity::Info, false) => "info",
        (Severity::Error, true) => "错误",
        (Severity::Warning, true) => "警告",
        (Severity::Info, true) => "提示",
    }
}

/// Tables longer than this are folded in `<details>`: the lead stays in view.
const FOLD_ROWS: usize = 10;

fn render_one(report: &AuditReport, groups: &[Group], lang: Lang, opts: &RenderOptions, limits: Limits) -> String {
    let zh = lang == Lang::Zh;
    let mut out = summary(report, groups, lang);
    out.push('\n');
    let mut sections: BTreeMap<Section, Vec<&Group>> = BTreeMap::new();
    for g in groups {
        sections.entry(Section::of(g.first().code())).or_default().push(g);
    }
    for (section, rows) in &sections {
        let _ = if zh {
            writeln!(out, "\n### {}（{}）\n", section.title(lang), rows.len())
        } else {
            writeln!(out, "\n### {} ({})\n", section.title(lang), rows.len())
        };
        let folded = rows.len() > FOLD_ROWS;
        if folded {
            let _ = writeln!(
                out,
                "<details><summary>{}</summary>\n",
                if zh { format!("{} 行，展开查看", rows.len()) } else { format!("{} rows", rows.len()) }
            );
        }
        let _ = writeln!(
            out,
            "{}",
            if zh { "| 代码 | 问题 | 涉及配方 | 依据 | 修复 |" } else { "| Code | Finding | Recipes | Evidence | Fix |" }
        );
        let _ = writeln!(out, "|---|---|---|---|---|");
        let shown = limits.rows.unwrap_or(usize::MAX).min(rows.len());
        for g in &rows[..shown] {
            let f = g.first();
            let _ = writeln!(
                out,
                "| `{}` {} | {} | {} | {} | {} |",
                f.code(),
                severity_word(f.severity, lang),
                cell(&phrase(report, g, lang)),
                cell(&recipes_cell(g, lang, opts)),
                cell(&evidence_cell(g, opts)),
                cell(&fix_cell(g, lang)),
            );
        }
        if shown < rows.len() {
            let cut = rows.len() - shown;
            let _ = if zh {
                writeln!(out, "\n*因篇幅限制，另有 {cut} 行未列出。*")
            } else {
                writeln!(out, "\n*{cut} more row(s) not shown: cut to fit the character budget.*")
            };
        }
        if folded {
            let _ = writeln!(out, "\n</details>");
        }
    }
    if !report.coverage.not_audited.is_empty() {
        let _ = writeln!(out, "\n### {}\n", if zh { "未审计" } else { "Not audited" });
        let shown = limits.items.unwrap_or(usize::MAX).min(report.coverage.not_audited.len());
        for n in &report.coverage.not_audited[..shown] {
            let _ = writeln!(out, "- {}", super::not_audited_line(n).replace('\n', " "));
        }
        more_items(&mut out, report.coverage.not_audited.len() - shown, zh);
    }
    if !report.problems.is_empty() {
        let _ = writeln!(out, "\n### {}\n", if zh { "未能完整读取" } else { "Not fully read" });
        let shown = limits.items.unwrap_or(usize::MAX).min(report.problems.len());
        for p in &report.problems[..shown] {
            let _ = writeln!(out, "- `{}`: {}", repo_path(&p.path, opts), p.message.replace('\n', " "));
        }
        more_items(&mut out, report.problems.len() - shown, zh);
    }
    if !report.notes.is_empty() {
        let _ = writeln!(
            out,
            "\n<details><summary>{}</summary>\n",
            if zh { format!("说明（{}）", report.notes.len()) } else { format!("Notes ({})", report.notes.len()) }
        );
        let shown = limits.items.unwrap_or(usize::MAX).min(report.notes.len());
        for n in &report.notes[..shown] {
            let _ = writeln!(out, "- {}", n.replace('\n', " "));
        }
        more_items(&mut out, report.notes.len() - shown, zh);
        let _ = writeln!(out, "\n</details>");
    }
    out
}

fn more_items(out: &mut String, cut: usize, zh: bool) {
    if cut > 0 {
        let _ = if zh {
            writeln!(out, "- ……因篇幅限制，另有 {cut} 项未列出。")
        } else {
            writeln!(out, "- … {cut} more, cut to fit the character budget.")
        };
    }
}

/// The footer: the tool, and where each code is explained (an absolute link:
/// a PR page is far from this repository).
fn footer(opts: &RenderOptions, lang: Lang) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let codes = super::docs::codes_index(&opts.docs_url);
    let text = if lang == Lang::Zh {
        format!("由 engine-audit {version} 静态生成：依据为所示版本的引擎源码（文件:行 @ 版本）；各代码的说明见 [docs/codes]({codes})。")
    } else {
        format!("Generated statically by engine-audit {version}: evidence is engine source at the refs shown (file:line @ ref); each code is explained in [docs/codes]({codes}).")
    };
    format!("\n<sub>{text}</sub>\n")
}

/// What a report cut to its budget left out, and where the whole is.
fn cut_note(report: &AuditReport, groups: &[Group], limits: Limits, opts: &RenderOptions) -> String {
    let mut cut = Vec::new();
    if let Some(n) = limits.rows {
        let mut per: BTreeMap<Section, usize> = BTreeMap::new();
        for g in groups {
            *per.entry(Section::of(g.first().code())).or_default() += 1;
        }
        let rows: usize = per.values().map(|&k| k.saturating_sub(n)).sum();
        if rows > 0 {
            cut.push(format!("{rows} table row(s) (each area keeps its first {n})"));
        }
    }
    if let Some(n) = limits.items {
        let notes = report.notes.len().saturating_sub(n);
        let problems = report.problems.len().saturating_sub(n);
        if notes > 0 {
            cut.push(format!("{notes} of {} notes", report.notes.len()));
        }
        if problems > 0 {
            cut.push(format!("{problems} of {} inputs not fully read", report.problems.len()));
        }
    }
    if limits.drop_second_language {
        cut.push("the Chinese half".into());
    }
    let whole = match &opts.full_report {
        Some(place) => format!("the full report is {place}"),
        None => "the full report: the same command with `--max-chars 0`, or `--format json`".into(),
    };
    format!("\n> **Cut to fit {} characters:** {} left out; {whole}.\n", thousands(opts.max_chars), cut.join(", "))
}

/// `60000` → `60,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The markdown format.
pub(crate) struct Markdown;

impl super::Render for Markdown {
    fn render(&self, report: &AuditReport, opts: &RenderOptions) -> String {
        render(report, opts)
    }
}

fn render(report: &AuditReport, opts: &RenderOptions) -> String {
    let report = &*super::escape::for_display(report);
    let groups = groups(report);
    let parts = opts.lang.parts();
    let whole = |limits: Limits| -> String {
        let mut out = String::new();
        for (i, &lang) in parts.iter().enumerate() {
            if i == 0 {
                out.push_str(&render_one(report, &groups, lang, opts, limits));
                continue;
            }
            // The second language folded: the first stays what a reader sees.
            let summary = if lang == Lang::Zh { "中文版" } else { "English" };
            if limits.drop_second_language {
                let _ = write!(
                    out,
                    "\n<details><summary>{summary}</summary>\n\n*因篇幅限制省略；完整中文报告请使用 `--lang zh`。*\n\n</details>\n"
                );
            } else {
                let _ = write!(
                    out,
                    "\n<details><summary>{summary}</summary>\n\n{}\n</details>\n",
                    render_one(report, &groups, lang, opts, limits)
                );
            }
        }
        if limits.cuts_anything() {
            out.push_str(&cut_note(report, &groups, limits, opts));
        }
        out.push_str(&footer(opts, parts[0]));
        out
    };
    let most_rows = groups.iter().map(|g| Section::of(g.first().code())).fold(BTreeMap::<Section, usize>::new(), |mut m, s| {
        *m.entry(s).or_default() += 1;
        m
    });
    let rows = most_rows.values().copied().max().unwrap_or(0);
    let items = report.notes.len().max(report.problems.len());
    super::budget::fit(opts.max_chars, rows, items, parts.len() > 1, whole).1
}
