//! The ATOM way of building the server parser, on a mini ATOM written in its
//! shape (two releases): `main` in the entry module builds its own parser,
//! passes it to `EngineArgs.add_cli_args` and adds its own flags; a later
//! release imports `main` under an env-var test and builds a parser class
//! whose `add_argument` registers both spellings (not on argument groups).

use crate::extract::{extract_surface, Demand};
use crate::profiles::ATOM;
use crate::source::MemTree;
use crate::surface::{EngineSurface, Known};
use serde_json::json;

const OLD_ARG_UTILS: &str = r#"import argparse
from dataclasses import dataclass

from atom.engine import Engine


@dataclass
class EngineArgs:
    model: str = "m"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--model", type=str, default="m", help="Model.")
        parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
        parser.add_argument("--enable_prefix_caching", action="store_true")
        parser.add_argument("--kv_cache_dtype", choices=["bf16", "fp8"], type=str, default="bf16")
        parser.add_argument("--method", type=str, default=None, choices=["mtp"])
        return parser
"#;

const OLD_SERVER: &str = r#"import argparse

import uvicorn
from atom.model_engine.arg_utils import EngineArgs

DEFAULT_PORT = 8000


def main():
    parser = argparse.ArgumentParser(description="server")
    EngineArgs.add_cli_args(parser)
    parser.add_argument("--host", type=str, default="0.0.0.0")
    parser.add_argument("--server-port", type=int, default=DEFAULT_PORT)
    args = parser.parse_args()
    parser.add_argument("--after-parsing", action="store_true")
    uvicorn.run(args)


if __name__ == "__main__":
    main()
"#;

const ENVS: &str = r#"import os
from typing import Any, Callable

environment_variables: dict[str, Callable[[], Any]] = {
    "ATOM_DP_SIZE": lambda: int(os.getenv("ATOM_DP_SIZE", "1")),
    "ATOM_USE_TRITON_GEMM": lambda: os.getenv("ATOM_USE_TRITON_GEMM", "0") == "1",
    "USE_MESH_ENTRY": lambda: os.getenv("USE_MESH_ENTRY", "0") == "1",
}


def __getattr__(name: str):
    if name in environment_variables:
        return environment_variables[name]()
    raise AttributeError(name)
"#;

const NEW_ARG_UTILS: &str = r#"import argparse
import json
from dataclasses import dataclass

from atom.model_engine.balance import LB_DEFAULT, LB_STRATEGIES


@dataclass
class EngineArgs:
    model: str = "m"

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--model", type=str, default="m", help="Model.")
        parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
        parser.add_argument(
            "--enable_prefix_caching",
            action=argparse.BooleanOptionalAction,
            default=True,
        )
        parser.add_argument("--kv_cache_dtype", choices=["bf16", "fp8"], type=str, default="bf16")
        parser.add_argument("--index-cache-dtype", "--index_cache_dtype", choices=["bf16", "fp8", "fp4"], default=None)
        parser.add_argument("--load_dummy", nargs="?", const="empty", default=None, choices=["empty", "zero"])
        parser.add_argument("--lb", type=str, default=LB_DEFAULT, choices=list(LB_STRATEGIES))
        parser.add_argument("--method", type=str, default=None, choices=["mtp", "eagle3"])
        parser.add_argument("--hf-overrides", type=json.loads, default=None)
        group = parser.add_argument_group("EPLB options")
        group.add_argument("--eplb-config", type=json.loads, default=None)
        return parser
"#;

const BALANCE: &str = r#"LB_STRATEGIES = ("round_robin", "least_requests")
LB_DEFAULT = "least_requests"
"#;

const ARG_PARSER: &str = r#"import argparse


class FlexibleArgumentParser(argparse.ArgumentParser):
    def add_argument(self, *names, **kwargs):
        expanded = list(names)
        for opt in names:
            if not opt.startswith("--"):
                continue
            stem = opt[2:]
            for alt in ("--" + stem.replace("_", "-"), "--" + stem.replace("-", "_")):
                if alt not in expanded and alt not in self._option_string_actions:
                    expanded.append(alt)
        return super().add_argument(*expanded, **kwargs)
"#;

const NEW_API_SERVER: &str = r#"from atom.model_engine.arg_utils import EngineArgs
from atom.utils.arg_parser import FlexibleArgumentParser


def main():
    parser = FlexibleArgumentParser(description="server", allow_abbrev=True)
    EngineArgs.add_cli_args(parser)
    parser.add_argument("--host", type=str, default="0.0.0.0")
    parser.add_argument("--server-port", type=int, default=8000)
    args = parser.parse_args()
    return args
"#;

const MESH_SERVER: &str = r#"import argparse


def main():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--mesh-only", action="store_true")
    args, rest = parser.parse_known_args()
    return args, rest
"#;

fn new_entry(test_default: &str) -> String {
    format!(
        r#"from atom.utils import envs

if envs.USE_MESH_ENTRY{test_default}:
    from atom.entrypoints.mesh.server import main
else:
    from atom.entrypoints.openai.api_server import main

if __name__ == "__main__":
    main()
"#
    )
}

fn old_release() -> EngineSurface {
    let tree = MemTree::from_files(
        "v1",
        [
            ("atom/__init__.py", ""),
            ("atom/engine.py", "class Engine:\n    pass\n"),
            ("atom/model_engine/__init__.py", ""),
            ("atom/model_engine/arg_utils.py", OLD_ARG_UTILS),
            ("atom/entrypoints/__init__.py", ""),
            ("atom/entrypoints/openai_server.py", OLD_SERVER),
            ("atom/utils/__init__.py", ""),
            ("atom/utils/envs.py", ENVS),
        ],
    );
    extract_surface(&tree, &ATOM, "atom", "v1", &Demand::full(&ATOM))
}

/// The later release; `test` is appended to the entry's `if` test (`""`, or
/// `" or True"` for an entry chosen the other way).
fn new_release(test: &str) -> EngineSurface {
    let entry = new_entry(test);
    let tree = MemTree::from_files(
        "v2",
        [
            ("atom/__init__.py", ""),
            ("atom/model_engine/__init__.py", ""),
            ("atom/model_engine/arg_utils.py", NEW_ARG_UTILS),
            ("atom/model_engine/balance.py", BALANCE),
            ("atom/entrypoints/__init__.py", ""),
            ("atom/entrypoints/openai_server.py", entry.as_str()),
            ("atom/entrypoints/openai/__init__.py", ""),
            ("atom/entrypoints/openai/api_server.py", NEW_API_SERVER),
            ("atom/entrypoints/mesh/__init__.py", ""),
            ("atom/entrypoints/mesh/server.py", MESH_SERVER),
            ("atom/utils/__init__.py", ""),
            ("atom/utils/envs.py", ENVS),
            ("atom/utils/arg_parser.py", ARG_PARSER),
        ],
    );
    extract_surface(&tree, &ATOM, "atom", "v2", &Demand::full(&ATOM))
}

#[test]
fn main_builds_its_own_parser_and_stops_at_parsing() {
    let s = old_release();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let names: Vec<&[String]> = s.flags.iter().map(|f| f.names.as_slice()).collect();
    let want: Vec<Vec<&str>> = vec![
        vec!["-h", "--help"],
        vec!["--model"],
        vec!["--tensor-parallel-size", "-tp"],
        vec!["--enable_prefix_caching"],
        vec!["--kv_cache_dtype"],
        vec!["--method"],
        vec!["--host"],
        vec!["--server-port"],
    ];
    assert_eq!(names, want, "argparse's own parser: one spelling each; nothing added after parse_args");
    let flag = |n: &str| s.flag(n).unwrap_or_else(|| panic!("{n}"));
    assert_eq!(flag("--enable_prefix_caching").default, Known::Value(json!(false)));
    assert_eq!(flag("--server-port").default, Known::Value(json!(8000)), "a module constant");
    assert_eq!(s.parser.allow_abbrev, Known::Value(true));
    assert!(s.parser.evidence.as_ref().is_some_and(|e| e.path == "atom/entrypoints/openai_server.py"));
    assert!(!s.parser.rewrites.underscores);
    let env: Vec<(&str, &Known<serde_json::Value>)> =
        s.env.iter().filter(|e| e.kind != "read").map(|e| (e.name.as_str(), &e.default)).collect();
    assert_eq!(
        env,
        [
            ("ATOM_DP_SIZE", &Known::Value(json!(1))),
            ("ATOM_USE_TRITON_GEMM", &Known::Value(json!(false))),
            ("USE_MESH_ENTRY", &Known::Value(json!(false)))
        ]
    );
}

#[test]
fn the_entry_chosen_in_a_clean_environment_and_both_spellings() {
    let s = new_release("");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let flag = |n: &str| s.flag(n).unwrap_or_else(|| panic!("{n}"));
    assert!(s.flag("--mesh-only").is_none(), "the other entry runs only with USE_MESH_ENTRY set");
    assert!(s.parser.evidence.as_ref().is_some_and(|e| e.path == "atom/entrypoints/openai/api_server.py"));
    // The class's `add_argument` adds the other spelling after the given ones.
    assert_eq!(flag("--kv-cache-dtype").names, ["--kv_cache_dtype", "--kv-cache-dtype"]);
    assert_eq!(flag("--kv-cache-dtype").dest, "kv_cache_dtype");
    assert_eq!(flag("-tp").names, ["--tensor-parallel-size", "-tp", "--tensor_parallel_size"]);
    assert_eq!(flag("--index_cache_dtype").names, ["--index-cache-dtype", "--index_cache_dtype"], "both given: nothing added");
    assert_eq!(flag("--model").names, ["--model"]);
    // BooleanOptionalAction makes a `--no-` form of each long spelling.
    let mut pc = flag("--enable-prefix-caching").names.clone();
    pc.sort();
    assert_eq!(pc, ["--enable-prefix-caching", "--enable_prefix_caching", "--no-enable-prefix-caching", "--no-enable_prefix_caching"]);
    assert_eq!(flag("--enable_prefix_caching").default, Known::Value(json!(true)));
    // An argument group registers with argparse's own `add_argument`.
    assert_eq!(flag("--eplb-config").names, ["--eplb-config"]);
    assert!(s.flag("--eplb_config").is_none());
    // `nargs="?"` with `const`; JSON-typed; imported default and choices.
    let dummy = flag("--load-dummy");
    assert_eq!((dummy.nargs.clone(), dummy.const_value.clone()), (Some(json!("?")), Some(Known::Value(json!("empty")))));
    assert_eq!(flag("--hf_overrides").type_name.as_deref().map(|t| t.rsplit('.').next().unwrap()), Some("loads"));
    assert_eq!(flag("--lb").default, Known::Value(json!("least_requests")));
    assert_eq!(flag("--lb").choices, Some(Known::Value(vec![json!("round_robin"), json!("least_requests")])));
    assert_eq!(s.parser.allow_abbrev, Known::Value(true));
}

#[test]
fn an_entry_test_that_holds_picks_the_other_entry() {
    let s = new_release(" or True");
    let names: Vec<&str> = s.flags.iter().map(|f| f.canonical()).collect();
    assert_eq!(names, ["-h", "--mesh-only"], "parse_known_args ends the walk too");
    assert_eq!(s.parser.allow_abbrev, Known::Value(false));
    assert!(s.parser.evidence.as_ref().is_some_and(|e| e.path == "atom/entrypoints/mesh/server.py"));
}

#[test]
fn an_add_argument_override_that_does_not_make_both_spellings_adds_none() {
    let one_way = ARG_PARSER.replace(r#""--" + stem.replace("-", "_")"#, r#""--" + stem"#);
    let entry = new_entry("");
    let tree = MemTree::from_files(
        "v2",
        [
            ("atom/__init__.py", ""),
            ("atom/model_engine/__init__.py", ""),
            ("atom/model_engine/arg_utils.py", NEW_ARG_UTILS),
            ("atom/model_engine/balance.py", BALANCE),
            ("atom/entrypoints/__init__.py", ""),
            ("atom/entrypoints/openai_server.py", entry.as_str()),
            ("atom/entrypoints/openai/__init__.py", ""),
            ("atom/entrypoints/openai/api_server.py", NEW_API_SERVER),
            ("atom/utils/__init__.py", ""),
            ("atom/utils/envs.py", ENVS),
            ("atom/utils/arg_parser.py", one_way.as_str()),
        ],
    );
    let s = extract_surface(&tree, &ATOM, "atom", "v2", &Demand::full(&ATOM));
    assert!(s.flag("--kv_cache_dtype").is_some() && s.flag("--kv-cache-dtype").is_none());
}

#[test]
fn a_main_without_a_parser_is_a_warning_not_silence() {
    let tree = MemTree::from_files(
        "v0",
        [
            ("atom/__init__.py", ""),
            ("atom/entrypoints/__init__.py", ""),
            ("atom/entrypoints/openai_server.py", "def main():\n    return 1\n"),
        ],
    );
    let s = extract_surface(&tree, &ATOM, "atom", "v0", &Demand::full(&ATOM));
    assert!(s.flags.len() <= 1, "{:?}", s.flags);
    assert!(s.warnings.iter().any(|w| w.message.contains("builds no `ArgumentParser(...)`")), "{:?}", s.warnings);
    assert!(s.parser.allow_abbrev.is_dynamic());
}
