//! A mini Dynamo in the shape of the real one (v1.5.0–v1.6.1): `dynamo.vllm.args`
//! builds its parser from argument groups in `backend_args` and
//! `dynamo.common.configuration`, through the `add_argument` helpers.

use super::*;
use crate::source::MemTree;

const UTILS: &str = r#"import argparse

def add_argument(parser, *, flag_name, env_var, default, help, obsolete_flag=None, arg_type=str, **kwargs):
    names = [flag_name]
    if obsolete_flag:
        names.append(obsolete_flag)
    parser.add_argument(*names, **kwargs)


def add_negatable_bool_argument(parser, *, flag_name, env_var, default, help, dest=None):
    add_argument(parser, flag_name=flag_name, env_var=env_var, default=default, help=help, dest=dest, arg_type=None, action=argparse.BooleanOptionalAction)
"#;

const RUNTIME: &str = r#"from dynamo.common.configuration.utils import add_argument, add_negatable_bool_argument

class DynamoRuntimeArgGroup:
    def add_arguments(self, parser):
        g = parser.add_argument_group("Dynamo Runtime Options")
        add_argument(g, flag_name="--namespace", env_var="DYN_NAMESPACE", default="dynamo", help="Namespace --not-a-flag")
        add_negatable_bool_argument(g, flag_name="--use-kv-events", env_var="DYN_KV_EVENTS", default=False, help="KV events")
        add_argument(g, flag_name="--endpoint", env_var="DYN_ENDPOINT", default=None, help="x", obsolete_flag="--dyn-endpoint")
"#;

const ROUTER: &str = r#"import argparse

def add_worker_router_arguments(parser):
    parser.add_argument("--router-mode", choices=["kv", "random"], default=None)

def parse_worker_router_config(argv):
    parser = argparse.ArgumentParser(add_help=False)
    add_worker_router_arguments(parser)
    return parser.parse_known_args(list(argv))
"#;

const BACKEND: &str = r#"from dynamo.common.configuration.utils import add_argument

class DynamoVllmArgGroup:
    def add_arguments(self, parser):
        parser.add_argument("--version", action="version", version="1")
        g = parser.add_argument_group("Dynamo vLLM Options")
        add_argument(g, flag_name="--disaggregation-mode", env_var="DYN_VLLM_DISAGGREGATION_MODE", default=None, help="mode")
"#;

const ARGS: &str = r#"import argparse
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.utils.argparse_utils import FlexibleArgumentParser
from dynamo.common.configuration.groups.router_args import parse_worker_router_config
from dynamo.common.configuration.groups.runtime_args import DynamoRuntimeArgGroup
from .backend_args import DynamoVllmArgGroup

def parse_args(argv=None):
    parser = argparse.ArgumentParser(allow_abbrev=False)
    DynamoRuntimeArgGroup().add_arguments(parser)
    DynamoVllmArgGroup().add_arguments(parser)
    vllm_parser = FlexibleArgumentParser(add_help=False)
    AsyncEngineArgs.add_cli_args(vllm_parser, async_args_only=False)
    args, unknown = parser.parse_known_args(argv)
    router, unknown = parse_worker_router_config(unknown)
    return vllm_parser.parse_args(unknown)
"#;

/// The frontend registers `--http-port`; the vLLM worker does not import it.
const FRONTEND: &str = "import argparse\n\ndef add_http(parser):\n    parser.add_argument('--http-port', type=int)\n";

fn dynamo(args: &str) -> MemTree {
    MemTree::from_files(
        "v1",
        [
            ("components/src/dynamo/__init__.py", ""),
            ("components/src/dynamo/common/__init__.py", ""),
            ("components/src/dynamo/common/configuration/__init__.py", ""),
            ("components/src/dynamo/common/configuration/utils.py", UTILS),
            ("components/src/dynamo/common/configuration/groups/__init__.py", ""),
            ("components/src/dynamo/common/configuration/groups/runtime_args.py", RUNTIME),
            ("components/src/dynamo/common/configuration/groups/router_args.py", ROUTER),
            ("components/src/dynamo/frontend/__init__.py", ""),
            ("components/src/dynamo/frontend/args.py", FRONTEND),
            ("components/src/dynamo/vllm/__init__.py", ""),
            ("components/src/dynamo/vllm/backend_args.py", BACKEND),
            ("components/src/dynamo/vllm/args.py", args),
        ],
    )
}

fn read(args: &str) -> WorkerFlags {
    let tree = dynamo(args);
    let mut warnings = Vec::new();
    let flags = worker_flags(&Package::new(&tree, "components/src/dynamo"), "dynamo.vllm.args", &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    flags
}

fn names(flags: &WorkerFlags) -> Vec<&str> {
    flags.options.iter().map(|o| o.name.as_str()).collect()
}

#[test]
fn the_options_of_every_group_the_parser_module_reaches() {
    let flags = read(ARGS);
    assert_eq!(
        names(&flags),
        [
            "--disaggregation-mode",
            "--dyn-endpoint",
            "--endpoint",
            "--namespace",
            "--no-use-kv-events",
            "--router-mode",
            "--use-kv-events",
            "--version"
        ],
        "helpers' literal flag names, BooleanOptionalAction's --no- form; not the frontend's, not help text"
    );
    assert!(flags.complete(), "the helper's `*names` come from its parameters: {:?}", flags.unread);
    let mode = flags.option("--disaggregation-mode").unwrap();
    assert_eq!((mode.evidence.path.as_str(), mode.evidence.line), ("components/src/dynamo/vllm/backend_args.py", 7));
    assert!(flags.option("--http-port").is_none() && flags.option("--host").is_none());
}

#[test]
fn a_computed_option_string_leaves_the_set_incomplete() {
    let computed = format!("{ARGS}\ndef more(parser):\n    for name in ('a', 'b'):\n        parser.add_argument(f'--{{name}}-x')\n");
    let flags = read(&computed);
    assert_eq!(flags.unread.len(), 1, "{flags:?}");
    assert!(!flags.complete());
}

#[test]
fn a_parser_module_that_is_not_there_reads_nothing() {
    let tree = dynamo(ARGS);
    let flags = worker_flags(&Package::new(&tree, "components/src/dynamo"), "dynamo.trtllm.args", &mut Vec::new());
    assert!(flags.module.is_none() && flags.options.is_empty() && !flags.complete());
}
