//! The crate's modules import one way: among the child modules of any module,
//! the "uses" relation has no circle (docs/ARCHITECTURE.md, "Layers").
//!
//! A use is a path in code (`use` trees included) that starts at `crate`,
//! `super` or `self` and names a module. A path from module `a::b::x` to
//! `a::c::y` is an edge `b → c` among the children of `a`; a path to an
//! ancestor (a module's own parent) is no edge: a parent owns its children.
//! Test code (`tests.rs`, `*_tests.rs`, a trailing `#[cfg(test)] mod tests`)
//! is left out: tests may look anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every source file of a crate root: (module path, code without comments,
/// strings and test modules).
fn sources(root: &Path) -> Vec<(Module, bool, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_tests.rs") || name == "main.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.push(file_module(root, &path, text));
        }
    }
    out.sort();
    out
}

fn file_module(root: &Path, path: &Path, text: String) -> (Module, bool, String) {
    let rel = path.strip_prefix(root).unwrap().with_extension("");
    let mut module: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let is_dir_module = matches!(module.last().map(String::as_str), Some("mod" | "lib"));
    if is_dir_module {
        module.pop();
    }
    (module, is_dir_module, code_only(&text))
}

/// The text with comments, string and char literals blanked, and the trailing
/// test module cut.
fn code_only(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#')) && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
                i += 2 + hashes;
                while i < b.len() && !b[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
                out.push_str("\"\"");
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' => {
                // A char literal ('x', '\n', '"'), or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + width) == Some(&b'\'') {
                        i += 2 + width;
                    } else {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let width = text[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[i..i + width]);
                i += width;
            }
        }
    }
    out
}

/// Paths that start at `crate`, `super` or `self`, `use` groups expanded one
/// level per brace: `use super::{a::b, c}` gives `super::a::b` and `super::c`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let ident = |i: usize| {
        let end = b[i..].iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_')).map_or(b.len(), |n| i + n);
        (&code[i..end], end)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':');
        let (word, end) = ident(i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        if !(starts_word && matches!(word, "crate" | "super" | "self")) {
            i = end;
            continue;
        }
        let (path, after) = path_from(code, i);
        if code[after..].starts_with("::{") {
            for item in group_items(code, after + 3) {
                let mut full = path.clone();
                full.extend(item);
                out.push(full);
            }
        } else {
            out.push(path);
        }
        i = after.max(i + 1);
    }
    out
}

/// `a::b::c` starting at `i`: its parts and where it ends (before `::{`).
fn path_from(code: &str, mut i: usize) -> (Vec<String>, usize) {
    let b = code.as_bytes();
    let mut parts = Vec::new();
    loop {
        let end = b[i..].iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_')).map_or(b.len(), |n| i + n);
        if end == i {
            break;
        }
        parts.push(code[i..end].to_string());
        if code[end..].starts_with("::") && b.get(end + 2).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') {
            i = end + 2;
        } else {
            return (parts, end);
        }
    }
    (parts, i)
}

/// The leading path of each top-level item of a `{...}` group opening at `i`.
fn group_items(code: &str, i: usize) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut items = Vec::new();
    let mut depth = 1;
    let mut at_item_start = true;
    let mut j = i;
    while j < b.len() && depth > 0 {
        match b[j] {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b',' if depth == 1 => at_item_start = true,
            c if depth == 1 && at_item_start && (c.is_ascii_alphabetic() || c == b'_') => {
                let (path, end) = path_from(code, j);
                items.push(path);
                at_item_start = false;
                j = end;
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    items
}

/// Per parent module, its children's edges: child → (child it uses → files).
type Layers = BTreeMap<Module, BTreeMap<String, BTreeMap<String, BTreeSet<String>>>>;

fn layers(files: &[(Module, bool, String)]) -> Layers {
    let modules: BTreeSet<&Module> = files.iter().map(|(m, _, _)| m).collect();
    let mut out = Layers::new();
    for (module, _, code) in files {
        for path in paths(code) {
            let mut resolved: Module = module.clone();
            let mut rest = path.as_slice();
            if rest.first().map(String::as_str) == Some("crate") {
                resolved.clear();
                rest = &rest[1..];
            }
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        resolved.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
            resolved.extend(rest.iter().cloned());
            let common = module.iter().zip(&resolved).take_while(|(a, b)| a == b).count();
            if common >= module.len() || common >= resolved.len() {
                continue; // itself, a descendant, or an ancestor
            }
            let target = resolved[..=common].to_vec();
            if !modules.contains(&target) {
                continue; // an item of the common parent, not a sibling module
            }
            out.entry(module[..common].to_vec())
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .entry(resolved[common].clone())
                .or_default()
                .insert(module.join("/"));
        }
    }
    out
}

/// Circles (strongly connected groups of more than one child) per parent.
fn circles(layers: &Layers) -> Vec<(Module, Vec<String>)> {
    let mut found = Vec::new();
    for (parent, graph) in layers {
        let nodes: BTreeSet<&String> = graph.keys().chain(graph.values().flat_map(|e| e.keys())).collect();
        // Reachability closure: the graphs are small (tens of children).
        let reach = |from: &String| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(n) = stack.pop() {
                for next in graph.get(&n).into_iter().flat_map(|e| e.keys()) {
                    if seen.insert(next.clone()) {
                        stack.push(next.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
        let mut done = BTreeSet::new();
        for n in &nodes {
            if done.contains(*n) || !reaches[n].contains(*n) {
                continue;
            }
            let group: Vec<String> =
                nodes.iter().filter(|m| reaches[n].contains(**m) && reaches[*m].contains(*n)).map(|m| (*m).clone()).collect();
            done.extend(group.iter().cloned());
            if group.len() > 1 {
                found.push((parent.clone(), group));
            }
        }
    }
    found
}

fn describe(layers: &Layers, found: &[(Module, Vec<String>)]) -> String {
    let mut out = String::new();
    for (parent, group) in found {
        let at = if parent.is_empty() { "crate".to_string() } else { parent.join("::") };
        out.push_str(&format!("circle among the children of {at}: {}\n", group.join(", ")));
        for from in group {
            for (to, files) in layers[parent].get(from).into_iter().flatten() {
                if group.contains(to) {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    out.push_str(&format!("  {from} → {to} (in {})\n", files.join(", ")));
                }
            }
        }
    }
    out
}

#[test]
fn the_crate_s_modules_import_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&root);
    assert!(files.len() > 100, "the scan found only {} files under {}", files.len(), root.display());
    let layers = layers(&files);
    // The scan sees the known one-way uses, so its silence means something.
    assert!(layers[&Vec::new()]["check"].contains_key("recipe"), "check uses recipe: the scan must see it");
    assert!(layers[&Vec::new()]["recipe"].contains_key("text"), "recipe uses text (spans): the scan must see it");
    let found = circles(&layers);
    assert!(found.is_empty(), "module imports that go both ways (move the shared item below both):\n{}", describe(&layers, &found));
}

#[test]
fn a_circle_is_found_through_use_groups_and_super() {
    let file = |module: &[&str], code: &str| (module.iter().map(|s| s.to_string()).collect::<Module>(), false, code_only(code));
    let files = vec![
        file(&[], "mod a; mod b; mod c;"),
        file(&["a"], "use crate::b::{Thing, other::More};\n// use crate::c::Ignored;\nfn f() { let s = \"crate::c::X\"; }"),
        file(&["b"], "pub struct Thing;"),
        file(&["b", "other"], "use super::super::c::Y; pub struct More;"),
        file(&["c"], "fn g() -> crate::a::Z { todo!() } struct Y;"),
    ];
    let graph = layers(&files);
    let found = circles(&graph);
    assert_eq!(found, vec![(Vec::new(), vec!["a".to_string(), "b".to_string(), "c".to_string()])], "{}", describe(&graph, &found));
    // Comments and strings are no use: without the real `crate::a` path in c, no circle.
    let files: Vec<_> =
        files.into_iter().map(|(m, d, code)| (m.clone(), d, if m == ["c"] { code_only("struct Y; // crate::a") } else { code })).collect();
    assert!(circles(&layers(&files)).is_empty());
}
