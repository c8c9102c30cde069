//! The matrix as markdown for a PR body: per engine, one table whose rows are
//! groups of deployments with identical cells and answers (how many, and
//! which), a column per release, and a legend. Cut to `--max-chars` by
//! dropping detail in a fixed order (the first-break details, the codes in
//! the cells, the not-audited list, the names in each group, then whole
//! groups from the end of a table); every cut is said, and a table always
//! ends with its last row and its count of deployments with an error.

use super::text::{dynamo_note, mark, verdict};
use super::{Cell, EngineMatrix, Matrix, Render, RenderOptions, Row, Start};
use crate::report::budget::{chars, largest};
use std::collections::BTreeMap;

/// The matrix as a markdown section.
pub(crate) struct Markdown;

impl Render for Markdown {
    fn render(&self, m: &Matrix, opts: &RenderOptions) -> String {
        fit(m, opts.max_chars)
    }
}

/// How much detail a rendering keeps (`None`: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Detail {
    /// First-break details under each table (one per breaking group).
    breaks: Option<usize>,
    /// The codes in each cell.
    codes: bool,
    /// Deployments named per group.
    members: Option<usize>,
    /// Entries of the not-audited list.
    items: Option<usize>,
    /// Groups per table.
    groups: Option<usize>,
}

const FULL: Detail = Detail { breaks: None, codes: true, members: None, items: None, groups: None };

/// The most detail under which the markdown fits `max` characters (0: no
/// budget), dropping one kind of detail after the other.
fn fit(m: &Matrix, max: usize) -> String {
    let tables: Vec<Vec<Group>> = m.engines.iter().map(groups).collect();
    let render = |d: Detail| render(m, &tables, d);
    let fits = |d: Detail| max == 0 || chars(&render(d)) <= max;
    if fits(FULL) {
        return render(FULL);
    }
    let most = |f: fn(&Group) -> usize| tables.iter().flatten().map(f).max().unwrap_or(0);
    let (breaks, members) = (tables.iter().map(Vec::len).sum(), most(|g| g.rows.len()));
    let groups = tables.iter().map(Vec::len).max().unwrap_or(0);
    // Each step keeps as much of its own detail as fits (more: longer), given
    // the cuts before it; the next step only when none of it fits.
    let mut d = FULL;
    d.breaks = Some(largest(breaks, |n| fits(Detail { breaks: Some(n), ..d })));
    if fits(d) {
        return render(d);
    }
    d.codes = false;
    if fits(d) {
        return render(d);
    }
    d.items = Some(largest(m.not_audited.len(), |n| fits(Detail { items: Some(n), ..d })));
    if fits(d) {
        return render(d);
    }
    d.members = Some(largest(members, |n| fits(Detail { members: Some(n), ..d })));
    if fits(d) {
        return render(d);
    }
    // Whole groups from the end of each table (breaking groups come first);
    // with none left that fits, the smallest rendering, over the budget, says so.
    d.groups = Some(largest(groups, |n| fits(Detail { groups: Some(n), ..d })));
    let text = render(d);
    if chars(&text) <= max {
        return text;
    }
    format!("{text}\n_Even with every cut this is {} characters, over the {max} asked._\n", chars(&text))
}

/// Rows with the same cells and answers.
struct Group<'a> {
    rows: Vec<&'a Row>,
    errors: bool,
}

/// A row's cells and answers as one key: rows with the same key are one group.
fn key(r: &Row) -> String {
    let cells: Vec<String> = r
        .cells
        .iter()
        .map(|c| match c {
            Some(Cell::Audited(n)) => format!("{}:{}", mark(c), n.codes.join(",")),
            _ => mark(c),
        })
        .collect();
    let brk = r.first_break.as_ref().map(|b| format!("{} {} {}", b.release, b.code, b.subject)).unwrap_or_default();
    let fix = r.after_fix.as_ref().map(|f| format!("{} {:?} {:?}", f.fixes, f.newest_safe, f.first_break.as_ref().map(|b| &b.release)));
    format!("{}|{}|{:?}|{brk}|{:?}|{:?}", start(r), cells.join(" "), r.newest_safe, r.unknown_at, fix)
}

/// One engine's rows grouped: groups with an error first, then the larger
/// ones, each in the order its first row came.
fn groups(e: &EngineMatrix) -> Vec<Group<'_>> {
    let mut order: Vec<String> = Vec::new();
    let mut by: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in &e.rows {
        let k = key(r);
        if !by.contains_key(&k) {
            order.push(k.clone());
        }
        by.entry(k).or_default().push(r);
    }
    let mut out: Vec<Group> =
        order.into_iter().filter_map(|k| by.remove(&k)).map(|rows| Group { errors: rows[0].first_break.is_some(), rows }).collect();
    out.sort_by_key(|g| (!g.errors, std::cmp::Reverse(g.rows.len())));
    out
}

/// Where a row starts, in short.
fn start(r: &Row) -> String {
    match &r.start {
        Start::Current { release, .. } => release.clone(),
        Start::Since { .. } => "unknown (from --since)".into(),
        Start::Unknown { .. } => "unknown".into(),
        Start::PastWindow { release, .. } => format!("{release} (past the window)"),
    }
}

/// Text from a recipe or an engine made safe in a table cell: one line, no
/// pipe, no HTML (GitHub renders tags in markdown), no control character.
fn text(s: &str) -> String {
    let s = crate::text::escape::visible(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' | '*' | '_' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A code span of any text: fenced by more backticks than it holds; its pipes
/// escaped (GitHub splits table cells on them even inside code).
fn code(s: &str) -> String {
    let s = crate::text::escape::visible(s).replace('|', "\\|");
    let mut run = 0;
    let mut longest = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn render(m: &Matrix, tables: &[Vec<Group>], d: Detail) -> String {
    let mut out = String::new();
    let mut cuts: Vec<String> = Vec::new();
    let mut breaks_left = d.breaks;
    let mut breaks_total = 0;
    for (e, groups) in m.engines.iter().zip(tables) {
        table(e, groups, d, &mut out, &mut cuts);
        let breaking: Vec<&Group> = groups.iter().filter(|g| g.errors || g.rows[0].after_fix.is_some()).collect();
        breaks_total += breaking.len();
        let keep = breaks_left.map_or(breaking.len(), |n| n.min(breaking.len()));
        if keep > 0 {
            out.push_str("**First breaks**\n\n");
            for g in &breaking[..keep] {
                let who = match g.rows.len() {
                    1 => String::new(),
                    n => format!(" (and {} more with the same answer)", n - 1),
                };
                out.push_str(&format!("- {}{who}: {}\n", code(&g.rows[0].label()), text(&verdict(g.rows[0]))));
            }
            out.push('\n');
        }
        breaks_left = breaks_left.map(|n| n - keep);
    }
    if let Some(n) = d.breaks {
        if n < breaks_total {
            cuts.push(format!("first-break details ({n} of {breaks_total} kept)"));
        }
    }
    not_audited(m, d, &mut out, &mut cuts);
    if m.engines.is_empty() && m.not_audited.is_empty() {
        out.push_str("No deployment found.\n");
    }
    if !d.codes {
        cuts.insert(0, "the codes in each cell".into());
    }
    if !cuts.is_empty() {
        out.push_str(&format!("_Cut to fit: {}. `--format json` or `--format html` has everything._\n", cuts.join("; ")));
    }
    out
}

fn table(e: &EngineMatrix, groups: &[Group], d: Detail, out: &mut String, cuts: &mut Vec<String>) {
    let display = crate::profiles::display(e.engine);
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    out.push_str(&format!(
        "### {display}: {} × {} ({} … {})\n\n",
        e.count(),
        plural(e.releases.len(), "release"),
        e.releases.first().map_or("", String::as_str),
        e.releases.last().map_or("", String::as_str),
    ));
    if let Some(note) = dynamo_note(e) {
        out.push_str(&format!("{}\n\n", text(&note)));
    }
    let releases: Vec<String> = e.releases.iter().map(|r| text(r)).collect();
    out.push_str(&format!("| deployments | runs today | {} | newest safe | first break |\n", releases.join(" | ")));
    out.push_str(&format!("|---|---|{}---|---|\n", "---|".repeat(e.releases.len())));
    let keep = d.groups.map_or(groups.len(), |n| n.min(groups.len()));
    for g in &groups[..keep] {
        let r = g.rows[0];
        let cells: Vec<String> = r.cells.iter().map(|c| cell(c, d.codes)).collect();
        let safe = match (&r.newest_safe, &r.first_break, &r.start) {
            (Some(s), _, _) => text(s),
            (None, _, Start::Unknown { .. }) => "no claim".into(),
            (None, Some(_), _) => "none".into(),
            (None, None, _) => "—".into(),
        };
        let brk = match (&r.first_break, &r.unknown_at) {
            (Some(b), _) => format!("{} {} {}", text(&b.release), text(&b.code), code(&b.subject)),
            (None, Some(at)) => format!("not audited at {}", text(at)),
            (None, None) => "—".into(),
        };
        out.push_str(&format!("| {} | {} | {} | {safe} | {brk} |\n", members(g, d.members), text(&start(r)), cells.join(" | ")));
    }
    let breaking: Vec<String> = e.breaking().iter().map(usize::to_string).collect();
    out.push_str(&format!("| **with an error** | | {} | | |\n\n", breaking.join(" | ")));
    if keep < groups.len() {
        let rows: usize = groups[keep..].iter().map(|g| g.rows.len()).sum();
        out.push_str(&format!("_{} more groups ({} deployments) of {display} not shown._\n\n", groups.len() - keep, rows));
        cuts.push(format!("{display} groups ({keep} of {} kept)", groups.len()));
    }
    if let Some(n) = d.members {
        if groups.iter().any(|g| g.rows.len() > n.max(1)) {
            cuts.push(format!("{display} deployment names ({n} per group kept)"));
        }
    }
    out.push_str(
        "`ok` no finding · `iN` N findings, info at worst · `WN` warnings at worst · **`EN`** N errors · `?` not audited there · \
         blank: before the release the deployment runs today. _runs today_: its current release (`unknown`: none could be told, \
         and no newest-safe claim is made). _newest safe_: the last release with no error before the first break.\n\n",
    );
}

/// The deployments of a group: one named, or how many and which.
fn members(g: &Group, keep: Option<usize>) -> String {
    if let [r] = g.rows[..] {
        return code(&r.label());
    }
    let n = keep.map_or(g.rows.len(), |k| k.min(g.rows.len()));
    let mut names: Vec<String> = g.rows[..n].iter().map(|r| code(&r.label())).collect();
    if n < g.rows.len() {
        names.push(format!("+{} more", g.rows.len() - n));
    }
    // With names cut, the folder they share still says where they are.
    let under = match common_folder(g) {
        Some(f) if n < g.rows.len() => format!(" under {}", code(&f)),
        _ => String::new(),
    };
    format!("**{} deployments**{under}: {}", g.rows.len(), names.join(", "))
}

/// The longest folder every row of the group is in (`a/b/`), if any.
fn common_folder(g: &Group) -> Option<String> {
    let folder = |p: &str| p.rfind('/').map_or(String::new(), |i| p[..=i].to_string());
    let mut common = folder(&g.rows[0].path);
    for r in &g.rows[1..] {
        while !r.path.starts_with(&common) {
            let trimmed = common.trim_end_matches('/');
            common = trimmed.rfind('/').map_or(String::new(), |i| trimmed[..=i].to_string());
        }
    }
    (!common.is_empty()).then_some(common)
}

/// `ok`, `W3`, `**E1**`, with the codes when kept.
fn cell(c: &Option<Cell>, codes: bool) -> String {
    let m = mark(c);
    let (errors, list) = match c {
        Some(Cell::Audited(n)) => (n.errors > 0, n.codes.as_slice()),
        _ => (false, &[][..]),
    };
    let m = if errors { format!("**{m}**") } else { m };
    if codes && !list.is_empty() {
        format!("{m} {}", list.iter().map(|c| text(c)).collect::<Vec<_>>().join(" "))
    } else {
        m
    }
}

fn not_audited(m: &Matrix, d: Detail, out: &mut String, cuts: &mut Vec<String>) {
    if m.not_audited.is_empty() {
        return;
    }
    out.push_str(&format!("**Not audited ({})**\n\n", m.not_audited.len()));
    let keep = d.items.map_or(m.not_audited.len(), |n| n.min(m.not_audited.len()));
    for n in &m.not_audited[..keep] {
        let variant = n.variant.as_ref().map(|v| format!(" [{v}]")).unwrap_or_default();
        let enable = n.enable.as_ref().map(|e| format!("; {}", text(e))).unwrap_or_default();
        let engine = crate::profiles::display(&n.engine);
        out.push_str(&format!(
            "- {}: {}: {}{enable}\n",
            code(&format!("{}: {}{variant}", n.path, n.deployment)),
            text(&engine),
            text(&n.reason)
        ));
    }
    if keep < m.not_audited.len() {
        // The rest by reason: still every deployment counted.
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for n in &m.not_audited[keep..] {
            *by.entry(format!("{}: {}", crate::profiles::display(&n.engine), n.reason)).or_default() += 1;
        }
        for (reason, n) in by {
            out.push_str(&format!("- {n} more: {}\n", text(&reason)));
        }
        cuts.push(format!("the not-audited list ({keep} of {} named)", m.not_audited.len()));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipe_text_cannot_break_the_table_or_inject_html() {
        assert_eq!(text("a|b<script>x</script>\n"), "a\\|b&lt;script&gt;x&lt;/script&gt;\\\\n");
        assert_eq!(code("a`b|c"), "``a`b\\|c``");
        assert_eq!(code("`x"), "`` `x ``");
    }
}
