//! engine-audit's own address is set once, as Cargo.toml's `repository` (the
//! reports' doc links read it at build time, `report::docs`); every published
//! form of it (the README's install, Action and pre-commit lines, action.yml,
//! the docs, the CHANGELOG, the demo reports) must name the same repository, and
//! no placeholder may be left for a newcomer to copy. The README marks which of
//! its blocks run offline from a clone (`scripts/check-readme.sh`, run by
//! `.ci/run`, runs them); the lines that must stay among them are checked here.

use std::path::{Path, PathBuf};

use regex::Regex;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `owner/name` of Cargo.toml's `repository`.
fn cargo_repository() -> String {
    let url = env!("CARGO_PKG_REPOSITORY");
    let slug = url
        .strip_prefix("https://github.com/")
        .unwrap_or_else(|| panic!("Cargo.toml's repository {url:?} is no https://github.com/ address"));
    assert!(
        Regex::new(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$").unwrap().is_match(slug),
        "Cargo.toml's repository {url:?} is not https://github.com/OWNER/NAME"
    );
    slug.to_string()
}

/// The files users read or copy from, and those the release publishes.
fn published_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        ["README.md", "action.yml", ".pre-commit-hooks.yaml", "CHANGELOG.md", "pyproject.toml"].iter().map(|f| root().join(f)).collect();
    for (dir, exts) in [
        ("docs", &["md"][..]),
        ("reports", &["md", "json", "txt", "sarif"][..]),
        ("scripts", &["sh"][..]),
        (".github/workflows", &["yml", "yaml"][..]),
        ("schemas", &["json"][..]),
    ] {
        for entry in walk(&root().join(dir)) {
            if entry.extension().is_some_and(|e| exts.iter().any(|x| e == *x)) {
                out.push(entry);
            }
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every place a text names a GitHub repository called `engine-audit`, with the owner it gives.
fn engine_audit_addresses(text: &str) -> Vec<(usize, String)> {
    let forms = Regex::new(
        r"(?:github\.com/|raw\.githubusercontent\.com/|uses:\s*|repo:\s*)(<[^>\s]*>|[A-Za-z0-9_.-]+)/engine-audit(?:[^A-Za-z0-9_.-]|\.git|$)",
    )
    .unwrap();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for c in forms.captures_iter(line) {
            out.push((n + 1, c[1].to_string()));
        }
    }
    out
}

#[test]
fn every_published_address_is_cargo_tomls_repository() {
    let slug = cargo_repository();
    let owner = slug.split('/').next().unwrap();
    assert_eq!(slug.split('/').nth(1), Some("engine-audit"), "the published forms below assume the repository is named engine-audit");
    let mut wrong = Vec::new();
    let mut seen = 0;
    for file in published_files() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        for (line, got) in engine_audit_addresses(&text) {
            seen += 1;
            if got != owner {
                wrong.push(format!("{rel}:{line}: {got}/engine-audit"));
            }
        }
        for (n, l) in text.lines().enumerate() {
            if l.contains("<org>") || l.contains("<owner>") {
                wrong.push(format!("{rel}:{}: a placeholder: {}", n + 1, l.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "published forms that are not Cargo.toml's repository ({slug}):\n{}", wrong.join("\n"));
    // The README's release download, Action and pre-commit lines, action.yml,
    // the CHANGELOG and the demo reports' doc links at least.
    assert!(seen >= 8, "only {seen} addresses found: the patterns no longer see the published forms");
}

#[test]
fn the_address_patterns_see_each_published_form() {
    let text = "base=https://github.com/a/engine-audit/releases/latest/download\n\
                uses: b/engine-audit@v1\n\
                - repo: https://github.com/<org>/engine-audit\n\
                \"https://raw.githubusercontent.com/d/engine-audit/main/schemas/x.json\"\n\
                [Unreleased]: https://github.com/e/engine-audit/commits/main\n\
                not ours: https://github.com/f/engine-audit-fork and https://git.example.com/g/engine-audit/blob/main\n";
    let owners: Vec<String> = engine_audit_addresses(text).into_iter().map(|(_, o)| o).collect();
    assert_eq!(owners, ["a", "b", "<org>", "d", "e"]);
}

/// The README's blocks after `<!-- readme-check: KIND ... -->`, as (kind, text).
fn readme_blocks(readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = readme.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("<!-- readme-check: ").and_then(|r| r.strip_suffix(" -->")) else { continue };
        let kind = rest.split(' ').next().unwrap().to_string();
        let mut j = i + 1;
        while lines.get(j).is_some_and(|l| l.is_empty()) {
            j += 1;
        }
        let mut body = String::new();
        if lines.get(j).is_some_and(|l| l.starts_with("```")) {
            for l in lines[j + 1..].iter().take_while(|l| !l.starts_with("```")) {
                body.push_str(l);
                body.push('\n');
            }
        } else {
            for l in lines[j..].iter().take_while(|l| l.starts_with("    ") || l.is_empty()) {
                body.push_str(l.trim_start());
                body.push('\n');
            }
        }
        assert!(!body.trim().is_empty(), "README.md:{}: a readme-check marker without a block after it", i + 1);
        out.push((kind, body));
    }
    out
}

#[test]
fn the_readme_marks_its_offline_install_lines_runnable_and_the_rest_network() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let blocks = readme_blocks(&readme);
    let of = |kind: &str| blocks.iter().filter(|(k, _)| k == kind).map(|(_, b)| b.as_str()).collect::<Vec<_>>().join("");
    let (run, file, network) = (of("run"), of("file"), of("network"));
    for line in ["cargo install --locked --path .", "pip install .", "cargo run --release -- demo"] {
        assert!(run.lines().any(|l| l.starts_with(line)), "no runnable README block runs `{line}`");
    }
    assert!(
        file.contains("repo: local") && file.contains("entry: engine-audit audit --hook"),
        "no runnable local pre-commit config in the README"
    );
    // What needs the network is never among the blocks run.
    for remote in ["releases/latest/download", "pip install engine-audit", "repo: https://", "uses: "] {
        assert!(!run.contains(remote) && !file.contains(remote), "a runnable README block needs the network: {remote}");
        assert!(network.contains(remote), "the README's `{remote}` line is not marked network");
    }
    // Every shell block of the Install section is marked one way or the other.
    let install = &readme[readme.find("## Install").unwrap()..readme.find("## Two commands").unwrap()];
    let unmarked: Vec<&str> = install
        .split("\n\n")
        .filter(|para| para.starts_with("    ") && !install[..install.find(*para).unwrap()].trim_end().ends_with("-->"))
        .collect();
    assert!(unmarked.is_empty(), "Install blocks without a readme-check marker:\n{}", unmarked.join("\n--\n"));
}
