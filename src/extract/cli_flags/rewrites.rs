//! What an engine's parser class does to the command line before argparse
//! reads it, from its `parse_args` (on the class or an engine base): vLLM's
//! `FlexibleArgumentParser` turns `--a_b` into `--a-b` (up to the first `.`),
//! gathers `--json-arg.key value` into `--json-arg '{"key": value}'`, expands
//! `-O3` / `-O=3` / `-O 3` into an option of its own and reads `--config FILE`
//! as flags from a YAML file.
//!
//! Each rewrite is recognised by the code that does it, not by the class's
//! name: a `.replace("_", "-")` call, a `.split(".")` call, a branch on
//! `arg.startswith("-O")` that appends a `"--..."` option, a `"--config" in
//! args` test. A parser class that has none (argparse's own) rewrites nothing.

use tree_sitter::Node;

use super::super::consts::{class_body, find_definition, ClassRef, ConstEval, Scope, Val};
use super::super::python::{named_children, walk, PyFile};
use crate::surface::ArgRewrites;

/// The rewrites of `class`'s `parse_args`.
pub(super) fn read(ev: &ConstEval, class: &ClassRef) -> ArgRewrites {
    let Some((owner, file)) = parse_args_owner(ev, class, 0) else { return ArgRewrites::default() };
    let Some(def) = ev.class_def(&file, &owner.name).and_then(class_body).and_then(|b| find_definition(&file.source, b, "parse_args"))
    else {
        return ArgRewrites::default();
    };
    let scope = Scope::module(&owner.module);
    let strings = |call: Node| -> Vec<String> {
        let args = call.child_by_field_name("arguments").map(named_children).unwrap_or_default();
        args.iter()
            .map(|a| match ev.eval(&file, *a, scope) {
                Ok(Val::Str(s)) => s,
                _ => String::new(),
            })
            .collect()
    };
    let mut out = ArgRewrites::default();
    walk(def, |node| {
        match node.kind() {
            "call" => {
                let callee = node.child_by_field_name("function").map(|f| file.text(f)).unwrap_or_default();
                let method = callee.rsplit('.').next().unwrap_or_default();
                match (method, strings(node).as_slice()) {
                    ("replace", [from, to]) if from == "_" && to == "-" => out.underscores = true,
                    ("split", [dot, ..]) if dot == "." => out.dotted_keys = true,
                    _ => {}
                }
            }
            "if_statement" | "elif_clause" => {
                if let Some(option) = short_o_option(ev, &file, scope, node) {
                    out.short_o.get_or_insert(option);
                }
            }
            "comparison_operator" => {
                let children = named_children(node);
                if let (Some(left), true) = (children.first(), file.text(node).contains(" in ")) {
                    if let Ok(Val::Str(s)) = ev.eval(&file, *left, scope) {
                        if s.starts_with("--") && out.config_file.is_none() && s == "--config" {
                            out.config_file = Some(s);
                        }
                    }
                }
            }
            _ => {}
        }
        true
    });
    if out != ArgRewrites::default() {
        out.evidence = Some(file.evidence(def));
    }
    out
}

/// The class (the given one or an engine base) that defines `parse_args`.
fn parse_args_owner(ev: &ConstEval, class: &ClassRef, depth: usize) -> Option<(ClassRef, std::sync::Arc<PyFile>)> {
    if depth > 16 {
        return None;
    }
    let file = ev.module_file(&class.module)?;
    let body = ev.class_def(&file, &class.name).and_then(class_body)?;
    if find_definition(&file.source, body, "parse_args").is_some() {
        return Some((class.clone(), file));
    }
    ev.class_bases(class).into_iter().find_map(|b| match b {
        Val::Class(base) => parse_args_owner(ev, &base, depth + 1),
        _ => None,
    })
}

/// `if arg.startswith("-O") ...: processed_args += ["--optimization-level", level]`:
/// the option the branch puts in the short form's place.
fn short_o_option(ev: &ConstEval, file: &PyFile, scope: Scope, branch: Node) -> Option<String> {
    let condition = branch.child_by_field_name("condition")?;
    let mut tests_o = false;
    walk(condition, |n| {
        if n.kind() == "call" && n.child_by_field_name("function").is_some_and(|f| file.text(f).ends_with(".startswith")) {
            let args = n.child_by_field_name("arguments").map(named_children).unwrap_or_default();
            tests_o |= matches!(args.first().map(|a| ev.eval(file, *a, scope)), Some(Ok(Val::Str(s))) if s == "-O");
        }
        true
    });
    if !tests_o {
        return None;
    }
    let body = branch.child_by_field_name("consequence")?;
    let mut found = None;
    walk(body, |n| {
        if found.is_none() && n.kind() == "list" {
            if let Some(first) = named_children(n).first() {
                if let Ok(Val::Str(s)) = ev.eval(file, *first, scope) {
                    if s.starts_with("--") {
                        found = Some(s);
                    }
                }
            }
        }
        found.is_none()
    });
    found
}

#[cfg(test)]
mod tests {
    use super::super::super::package::Package;
    use crate::source::MemTree;

    /// The shape of vLLM's `FlexibleArgumentParser.parse_args`, cut down.
    const FLEXIBLE: &str = r#"import re
from argparse import ArgumentParser

class FlexibleArgumentParser(ArgumentParser):
    def parse_args(self, args=None, namespace=None):
        if "--config" in args:
            args = self._pull_args_from_config(args)

        def repl(match):
            return match.group(0).replace("_", "-")

        pattern = re.compile(r"(?<=--)[^\.]*")
        processed_args = []
        for i, arg in enumerate(args):
            if arg.startswith("--"):
                processed_args.append(pattern.sub(repl, arg, count=1))
            elif arg.startswith("-O") and arg != "-O":
                optimization_level = arg[3:] if arg[2] == "=" else arg[2:]
                processed_args += ["--optimization-level", optimization_level]
            else:
                processed_args.append(arg)
        for i, processed_arg in enumerate(processed_args):
            if processed_arg.startswith("-") and "." in processed_arg:
                key, *keys = processed_arg.split(".")
        return super().parse_args(processed_args, namespace)

class ServeParser(FlexibleArgumentParser):
    pass

def make_arg_parser(parser: ServeParser) -> ServeParser:
    parser.add_argument("--optimization-level", type=int)
    return parser
"#;

    fn rewrites(text: &str) -> crate::surface::ArgRewrites {
        let tree = MemTree::from_files("t", [("eng/__init__.py", ""), ("eng/cli.py", text)]);
        super::super::parser_rewrites(&Package::new(&tree, "eng"), "eng.cli", "", "make_arg_parser")
    }

    #[test]
    fn the_flexible_parser_rewrites_are_read_from_its_parse_args() {
        let r = rewrites(FLEXIBLE);
        assert!(r.underscores && r.dotted_keys, "{r:?}");
        assert_eq!(r.short_o.as_deref(), Some("--optimization-level"));
        assert_eq!(r.config_file.as_deref(), Some("--config"));
        assert_eq!(r.evidence.map(|e| (e.path, e.line)), Some(("eng/cli.py".into(), 5)), "parse_args, found on the base class");
    }

    #[test]
    fn argparse_own_parser_rewrites_nothing() {
        let plain = "import argparse\n\ndef make_arg_parser(parser: argparse.ArgumentParser):\n    parser.add_argument('--x')\n";
        assert_eq!(rewrites(plain), crate::surface::ArgRewrites::default());
        let unannotated = FLEXIBLE.replace("parser: ServeParser", "parser");
        assert_eq!(rewrites(&unannotated), crate::surface::ArgRewrites::default(), "no annotation: the class is not known");
    }
}
