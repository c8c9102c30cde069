//! The parser itself, not its options: `allow_abbrev` of the
//! `argparse.ArgumentParser(...)` that the registering method is given.
//!
//! SGLang builds it in the same module as the options
//! (`parser = argparse.ArgumentParser(prog="sglang serve")` in
//! `prepare_server_args`, then `ServerArgs.add_cli_args(parser)`): every call of
//! the registering method in the module is followed to the assignment of the
//! parser it is passed, in the same function. vLLM's serve parser is a
//! subcommand's (`serve_parser = subparsers.add_parser("serve", ...)`, then
//! `make_arg_parser(serve_parser)`): argparse's `add_parser` passes its
//! keywords to the parser class, so `allow_abbrev` is read from them the same
//! way. A parser class named `...ArgumentParser` (vLLM's
//! `FlexibleArgumentParser`) is taken to pass `allow_abbrev` on to argparse's,
//! as subclasses do. argparse's default applies when `allow_abbrev` is not
//! passed; a value that is not a literal, parsers built with different
//! settings, or no construction at all are dynamic.

use tree_sitter::Node;

use super::super::package::Package;
use super::super::python::{named_children, walk, PyFile};
use super::super::symbols::parse_module_file;
use crate::surface::{Evidence, ExtractWarning, Known, ParserFacts};

/// How the parser `class_name.method(parser)` is given in `module` treats abbreviations.
pub(crate) fn parser_facts(pkg: &Package, module: &str, class_name: &str, method: &str, warnings: &mut Vec<ExtractWarning>) -> ParserFacts {
    let callee = if class_name.is_empty() { method.to_string() } else { format!("{class_name}.{method}") };
    let unknown = |why: String| ParserFacts { allow_abbrev: Known::Dynamic { dynamic: why }, ..ParserFacts::default() };
    let Some(path) = pkg.module_path(module) else {
        return unknown(format!("`{module}` is not in the package"));
    };
    let Some(file) = parse_module_file(pkg, &path, warnings) else {
        return unknown(format!("`{path}` could not be read"));
    };
    let mut built: Vec<(Known<bool>, Evidence)> = Vec::new();
    walk(file.root(), |node| {
        if node.kind() == "call" && node.child_by_field_name("function").is_some_and(|f| file.text(f) == callee) {
            if let Some(construction) = construction_of_argument(&file, node) {
                built.push(construction);
            }
        }
        true
    });
    let Some((first, evidence)) = built.first().cloned() else {
        return unknown(format!("no `argparse.ArgumentParser(...)` passed to `{callee}` is built in `{module}`"));
    };
    if built.iter().any(|(setting, _)| *setting != first) {
        return unknown(format!("the parsers passed to `{callee}` in `{module}` are built with different `allow_abbrev`"));
    }
    ParserFacts { allow_abbrev: first, evidence: Some(evidence), ..ParserFacts::default() }
}

/// `parser = argparse.ArgumentParser(...)` for the first argument of `call`,
/// assigned in the function `call` is in (the last assignment before it).
fn construction_of_argument(file: &PyFile, call: Node) -> Option<(Known<bool>, Evidence)> {
    let args = call.child_by_field_name("arguments")?;
    let first = named_children(args).into_iter().next().filter(|a| a.kind() == "identifier")?;
    let name = file.text(first);
    let function = std::iter::successors(call.parent(), |n| n.parent()).find(|n| n.kind() == "function_definition")?;
    let mut found = None;
    walk(function.child_by_field_name("body")?, |node| {
        if node.start_byte() >= call.start_byte() {
            return false;
        }
        // A nested function or class has its own scope.
        if matches!(node.kind(), "function_definition" | "class_definition") {
            return false;
        }
        if node.kind() == "assignment" {
            let left = node.child_by_field_name("left").map(|l| file.text(l));
            let right = node.child_by_field_name("right").filter(|r| r.kind() == "call");
            if let (Some(left), Some(right)) = (left, right) {
                let builds_parser = right.child_by_field_name("function").is_some_and(|f| builds_a_parser(file.text(f)));
                if left == name && builds_parser {
                    found = Some((allow_abbrev_of(file, right), file.evidence(right)));
                }
            }
        }
        true
    });
    found
}

/// Whether a call to `callee` returns a new parser built from its keywords:
/// `argparse.ArgumentParser(...)`, a subclass named so
/// (`FlexibleArgumentParser(...)`), or a subcommand's `subparsers.add_parser(...)`.
fn builds_a_parser(callee: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    last.ends_with("ArgumentParser") || (last == "add_parser" && callee.contains('.'))
}

/// The `allow_abbrev=` keyword of an `ArgumentParser(...)` call.
pub(super) fn allow_abbrev_of(file: &PyFile, construction: Node) -> Known<bool> {
    let Some(args) = construction.child_by_field_name("arguments") else {
        return Known::Value(true);
    };
    for arg in named_children(args) {
        match arg.kind() {
            "keyword_argument" if arg.child_by_field_name("name").is_some_and(|n| file.text(n) == "allow_abbrev") => {
                let value = arg.child_by_field_name("value");
                return match value.map(|v| (v.kind(), file.text(v))) {
                    Some(("true", _)) => Known::Value(true),
                    Some(("false", _)) => Known::Value(false),
                    Some((_, text)) => Known::Dynamic { dynamic: text.to_string() },
                    None => Known::Dynamic { dynamic: file.text(arg).to_string() },
                };
            }
            // `**kwargs` may carry it.
            "dictionary_splat" => return Known::Dynamic { dynamic: file.text(arg).to_string() },
            _ => {}
        }
    }
    Known::Value(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemTree;

    fn facts(server_args: &str) -> ParserFacts {
        let tree = MemTree::from_files("t", [("python/eng/__init__.py", ""), ("python/eng/server_args.py", server_args)]);
        parser_facts(&Package::new(&tree, "python/eng"), "eng.server_args", "ServerArgs", "add_cli_args", &mut Vec::new())
    }

    const SGLANG_SHAPE: &str = "import argparse

class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument('--tp-size', type=int)

def prepare_server_args(argv):
    parser = argparse.ArgumentParser(prog=\"sglang serve\")
    ServerArgs.add_cli_args(parser)
    return parser.parse_args(argv)
";

    /// vLLM's shape: the serve subcommand's parser from `subparsers.add_parser`.
    const VLLM_SHAPE: &str = "from vllm.entrypoints.openai.cli_args import make_arg_parser

class ServeSubcommand:
    def subparser_init(self, subparsers):
        serve_parser = subparsers.add_parser(
            self.name,
            help='Launch a local OpenAI-compatible API server',
            usage='vllm serve [model_tag] [options]',
        )
        serve_parser = make_arg_parser(serve_parser)
        return serve_parser
";

    #[test]
    fn a_subcommand_parser_is_built_by_add_parser() {
        let facts = |text: &str| {
            let tree = MemTree::from_files("t", [("eng/__init__.py", ""), ("eng/serve.py", text)]);
            parser_facts(&Package::new(&tree, "eng"), "eng.serve", "", "make_arg_parser", &mut Vec::new())
        };
        let f = facts(VLLM_SHAPE);
        assert_eq!(f.allow_abbrev, Known::Value(true));
        assert!(f.evidence.is_some_and(|e| e.line == 5), "the add_parser call");
        assert_eq!(facts(&VLLM_SHAPE.replace("usage=", "allow_abbrev=False, usage=")).allow_abbrev, Known::Value(false));
        let flexible = "def main():\n    parser = FlexibleArgumentParser(description='x')\n    make_arg_parser(parser)\n";
        assert_eq!(facts(flexible).allow_abbrev, Known::Value(true));
        let plain_call = "def main():\n    parser = add_parser('serve')\n    make_arg_parser(parser)\n";
        assert!(facts(plain_call).allow_abbrev.is_dynamic(), "a bare add_parser() is not argparse's");
    }

    #[test]
    fn argparse_default_applies_when_allow_abbrev_is_not_passed() {
        let f = facts(SGLANG_SHAPE);
        assert_eq!(f.allow_abbrev, Known::Value(true));
        assert_eq!(f.evidence.unwrap().line, 9);
    }

    #[test]
    fn a_literal_false_turns_abbreviations_off() {
        let f = facts(&SGLANG_SHAPE.replace("prog=\"sglang serve\"", "prog='x', allow_abbrev=False"));
        assert_eq!(f.allow_abbrev, Known::Value(false));
    }

    #[test]
    fn what_cannot_be_read_is_dynamic() {
        let computed = facts(&SGLANG_SHAPE.replace("prog=\"sglang serve\"", "allow_abbrev=STRICT"));
        assert_eq!(computed.allow_abbrev, Known::Dynamic { dynamic: "STRICT".into() });
        let splat = facts(&SGLANG_SHAPE.replace("prog=\"sglang serve\"", "**opts"));
        assert!(matches!(splat.allow_abbrev, Known::Dynamic { .. }));
        let elsewhere = facts("class ServerArgs:\n    def add_cli_args(parser):\n        pass\n");
        assert!(matches!(&elsewhere.allow_abbrev, Known::Dynamic { dynamic } if dynamic.contains("no `argparse.ArgumentParser(...)`")));
        let two = facts(&format!(
            "{SGLANG_SHAPE}\ndef other(argv):\n    p = argparse.ArgumentParser(allow_abbrev=False)\n    ServerArgs.add_cli_args(p)\n"
        ));
        assert!(matches!(&two.allow_abbrev, Known::Dynamic { dynamic } if dynamic.contains("different")));
    }

    #[test]
    fn only_the_parser_passed_counts() {
        let other_parser = SGLANG_SHAPE.replace(
            "    ServerArgs.add_cli_args(parser)",
            "    strict = argparse.ArgumentParser(allow_abbrev=False)\n    ServerArgs.add_cli_args(parser)",
        );
        assert_eq!(facts(&other_parser).allow_abbrev, Known::Value(true));
    }
}
