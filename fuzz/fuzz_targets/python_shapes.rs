//! The Python extractors on valid Python built from the fuzzer's bytes: the
//! shapes they fold (argparse calls, annotated dataclass fields, env registries,
//! constant expressions, imports, enums), nested and combined at random, after
//! an optional real prelude (a registrar, action classes, an env registry from
//! the fixtures). Byte mutation (python_extract) mostly writes syntax errors and
//! reaches the deep folding paths only by luck; here every input parses, so the
//! fuzzer explores what the extractors make of the code. Random operands seldom
//! have the types an operator or method folds, so some statements come from
//! `typed_python`, which keeps track of types.
#![no_main]
mod extractors;
mod typed_python;
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use typed_python::{Env, Typed};

/// Real module heads the generated body can build on (one is picked, or none).
const PRELUDES: &[&str] = &[
    "",
    include_str!("../../fixtures/flags/dataclass_style/python/minisrv/srt/arg_groups/arg_utils.py"),
    include_str!("../../fixtures/flags/dataclass_style/python/minisrv/srt/arg_groups/actions.py"),
    include_str!("../../fixtures/flags/namespace_style/python/nssrv/srt/registrar.py"),
    include_str!("../../fixtures/env/new_style/python/sglang/srt/environ.py"),
    include_str!("../../fixtures/env/old_style/python/sglang/srt/environ.py"),
];

const NAMES: &[&str] = &[
    "A",
    "B",
    "C",
    "X",
    "QUANT",
    "BACKENDS",
    "CHOICES",
    "Mode",
    "Phase",
    "E",
    "ServerArgs",
    "Envs",
    "envs",
    "parser",
    "args",
    "self",
    "cls",
    "field",
    "_x",
    "__all__",
    "__version__",
    "os",
    "environ",
    "Arg",
    "u",
];
const STRINGS: &[&str] = &[
    "\"--a-b\"",
    "\"--c\"",
    "\"--old\"",
    "\"SGLANG_A\"",
    "\"SGL_B\"",
    "\"SGLANG_ENABLE_X\"",
    "\"a\"",
    "\"b\"",
    "\"\"",
    "\"fp8\"",
    "\"0.5.19\"",
    "'x'",
    "\"1\"",
    "\"true\"",
    "\"a,b\"",
    "\"A\"",
];
const ENV_NAMES: &[&str] = &["SGLANG_A", "SGL_B", "SGLANG_ENABLE_X", "SGLANG_USE_OLD", "A"];
const INTS: &[&str] = &["0", "1", "2", "-1", "30000", "0x1F", "0o17", "0b101", "1_000", "10**100", "1 << 62", "2 ** 64"];
const FLOATS: &[&str] = &["0.9", "1.5e3", "float(\"inf\")", "-0.0", "1e308 * 10"];
const TYPES: &[&str] = &[
    "int",
    "str",
    "float",
    "bool",
    "Optional[str]",
    "Optional[int]",
    "List[int]",
    "List[str]",
    "Literal[\"a\", \"b\"]",
    "Optional[Literal[\"x\"]]",
    "Dict[str, int]",
    "Union[int, str]",
    "Any",
    "\"ServerArgs\"",
];
const CALLS: &[&str] = &[
    "sorted",
    "len",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "int",
    "str",
    "bool",
    "min",
    "max",
    "range",
    "reversed",
    "enumerate",
    "zip",
    "getattr",
    "isinstance",
    "field",
    "dataclasses.field",
    "EnvBool",
    "EnvInt",
    "EnvStr",
    "EnvField",
    "Arg",
    "os.environ.get",
    "os.getenv",
    "get_bool_env_var",
    "get_int_env_var",
    "Tag",
];
const METHODS: &[&str] = &[
    "lower()",
    "upper()",
    "strip()",
    "split(\",\")",
    "keys()",
    "values()",
    "items()",
    "copy()",
    "get(\"a\", 0)",
    "replace(\"a\", \"b\")",
    "value",
    "name",
    "get()",
    "is_set()",
    "append",
    "extend",
    "add",
    "update",
    "__name__",
];
const BINOPS: &[&str] = &["+", "-", "*", "|", "&", "<<", ">>", "**", "//", "%", "/", " and ", " or ", " in ", " == ", " is not "];
const KWARGS: &[&str] = &[
    "type",
    "default",
    "choices",
    "action",
    "dest",
    "nargs",
    "help",
    "deprecated",
    "required",
    "metavar",
    "const",
    "aliases",
    "cli_name",
    "no_cli",
    "type_parser",
    "action_kwargs",
    "successor",
    "default_factory",
];
const ACTIONS: &[&str] = &[
    "\"store_true\"",
    "\"store_false\"",
    "\"append\"",
    "\"store_const\"",
    "\"count\"",
    "DeprecatedAction",
    "RetiredFlag",
    "RenamedFlag",
    "RenamedSwitch",
    "GoneFlag",
    "PathListAction",
    "argparse.BooleanOptionalAction",
];
const IMPORTS: &[&str] = &[
    "import os",
    "import argparse",
    "import dataclasses",
    "import enum",
    "from enum import Enum, IntEnum",
    "from typing import Annotated, Any, Dict, List, Literal, Optional, Union",
    "from . import environ",
    "from .server_args import *",
    "from .server_args import ServerArgs as SA",
    "from sglang.srt.server_args import ServerArgs",
    "from sglang.srt.environ import envs",
    "import sglang.srt.utils as u",
    "from sglang.srt import utils",
    "from .. import srt",
    "from .missing import Y",
    "from sglang import *",
    "import sglang.srt.server_args",
    "from __future__ import annotations",
];

struct Gen<'a, 'b> {
    u: &'b mut Unstructured<'a>,
    out: String,
    /// Statements emitted: bounds the module (and the fuzzer's time per input).
    budget: u32,
    /// Module-level names the typed statements bound, with their types.
    typed: Env,
}

impl Gen<'_, '_> {
    fn pick(&mut self, from: &[&'static str]) -> Result<&'static str> {
        Ok(from[self.u.choose_index(from.len())?])
    }

    fn line(&mut self, indent: usize, text: &str) {
        self.out.extend(std::iter::repeat("    ").take(indent));
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn expr(&mut self, depth: u32) -> Result<String> {
        let leaf = depth == 0 || self.u.ratio(1, 3)?;
        if leaf {
            return Ok(match self.u.int_in_range(0..=5)? {
                0 => self.pick(INTS)?.to_string(),
                1 => self.pick(FLOATS)?.to_string(),
                2 | 3 => self.pick(STRINGS)?.to_string(),
                4 => self.pick(&["None", "True", "False", "...", "argparse.SUPPRESS", "dataclasses.MISSING"])?.to_string(),
                _ => self.pick(NAMES)?.to_string(),
            });
        }
        let d = depth - 1;
        Ok(match self.u.int_in_range(0..=17)? {
            0 => format!("[{}]", self.list(d)?),
            1 => match self.list(d)? {
                items if items.is_empty() => "()".to_string(),
                items => format!("({items},)"),
            },
            2 => format!("{{{}}}", self.list(d)?),
            3 => format!("{{{}: {}, **{}}}", self.pick(STRINGS)?, self.expr(d)?, self.pick(NAMES)?),
            4 => format!("({} {} {})", self.expr(d)?, self.pick(BINOPS)?, self.expr(d)?),
            5 => format!("(not {})", self.expr(d)?),
            6 => format!("(-{})", self.expr(d)?),
            7 => format!("({} if {} else {})", self.expr(d)?, self.expr(d)?, self.expr(d)?),
            8 => format!("{}({})", self.pick(CALLS)?, self.args(d)?),
            // Parenthesized: `1.lower()` would not be Python.
            9 => format!("({}).{}", self.expr(d)?, self.pick(METHODS)?),
            10 => format!("{}[{}]", self.expr(d)?, self.expr(d)?),
            11 => format!("[{} for x in {} if {}]", self.expr(d)?, self.expr(d)?, self.expr(d)?),
            12 => format!("{{x: {} for x in {}}}", self.expr(d)?, self.expr(d)?),
            13 => format!("f\"{{{}}}-{{{}!r}}\"", self.pick(NAMES)?, self.pick(NAMES)?),
            14 => format!("(lambda x: {})", self.expr(d)?),
            15 => format!("\",\".join({})", self.expr(d)?),
            16 => format!("[*{}, {}]", self.expr(d)?, self.expr(d)?),
            _ => format!("{}.{}", self.pick(NAMES)?, self.pick(NAMES)?),
        })
    }

    fn list(&mut self, depth: u32) -> Result<String> {
        let n = self.u.int_in_range(0..=3)?;
        let items = (0..n).map(|_| self.expr(depth)).collect::<Result<Vec<_>>>()?;
        Ok(items.join(", "))
    }

    fn kwargs(&mut self, depth: u32) -> Result<String> {
        let n = self.u.int_in_range(0..=4)?;
        let mut parts = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..n {
            let k = self.pick(KWARGS)?;
            // A repeated keyword is a SyntaxError.
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
            let v = match k {
                "action" => self.pick(ACTIONS)?.to_string(),
                "type" | "type_parser" => self.pick(&["int", "str", "float", "bool", "_parse_size", "json.loads"])?.to_string(),
                _ => self.expr(depth)?,
            };
            parts.push(format!("{k}={v}"));
        }
        if self.u.ratio(1, 6)? {
            parts.push(format!("**{}", self.pick(NAMES)?));
        }
        Ok(parts.join(", "))
    }

    fn args(&mut self, depth: u32) -> Result<String> {
        let pos = self.list(depth)?;
        Ok(call_args(pos, self.kwargs(depth)?))
    }

    fn annotation(&mut self) -> Result<String> {
        let ty = self.pick(TYPES)?;
        Ok(match self.u.int_in_range(0..=3)? {
            0 => ty.to_string(),
            1 => format!("Annotated[{ty}, {}]", self.pick(STRINGS)?),
            2 => format!("A[{ty}, Arg({})]", self.kwargs(1)?),
            _ => format!("Annotated[{ty}, Arg({}), Tag({})]", self.kwargs(1)?, self.pick(STRINGS)?),
        })
    }

    fn block(&mut self, indent: usize, depth: u32) -> Result<()> {
        let n = self.u.int_in_range(1..=4)?;
        for _ in 0..n {
            self.statement(indent, depth)?;
        }
        Ok(())
    }

    fn statement(&mut self, indent: usize, depth: u32) -> Result<()> {
        if self.budget == 0 {
            return Ok(self.line(indent, "pass"));
        }
        self.budget -= 1;
        let nested = depth > 0;
        let d = depth.saturating_sub(1);
        match self.u.int_in_range(0..=24)? {
            0 | 1 => {
                let (name, value) = (self.pick(NAMES)?, self.expr(3)?);
                self.line(indent, &format!("{name} = {value}"));
            }
            2 => {
                let (name, op, value) = (self.pick(NAMES)?, self.pick(&["+=", "|=", "-=", "*="])?, self.expr(2)?);
                self.line(indent, &format!("{name} {op} {value}"));
            }
            3 => {
                let (name, m, value) = (self.pick(NAMES)?, self.pick(&["append", "extend", "add", "update", "remove"])?, self.expr(2)?);
                self.line(indent, &format!("{name}.{m}({value})"));
            }
            4 => {
                let text = self.pick(IMPORTS)?;
                self.line(indent, text);
            }
            5 => {
                let items = (0..self.u.int_in_range(0..=4)?).map(|_| self.pick(STRINGS)).collect::<Result<Vec<_>>>()?;
                self.line(indent, &format!("__all__ = [{}]", items.join(", ")));
            }
            6 | 7 => {
                let (flag, alias, kw) = (self.pick(STRINGS)?, self.pick(STRINGS)?, self.kwargs(2)?);
                let names = if self.u.ratio(1, 3)? { format!("{flag}, {alias}") } else { flag.to_string() };
                let target = self.pick(&["parser", "group", "parser.add_argument_group(\"g\")", "subparser"])?;
                self.line(indent, &format!("{target}.add_argument({})", call_args(names, kw)));
            }
            8 if nested => {
                let decorator = self.pick(&["@dataclasses.dataclass", "@dataclass", "@dataclasses.dataclass(frozen=True)", ""])?;
                if !decorator.is_empty() {
                    self.line(indent, decorator);
                }
                let (name, base) = (
                    self.pick(&["ServerArgs", "Envs", "Arg", "Mode", "E", "_Base"])?,
                    self.pick(&["", "(Enum)", "(str, enum.Enum)", "(IntEnum)", "(argparse.Action)", "(ServerArgs)", "(Field)"])?,
                );
                self.line(indent, &format!("class {name}{base}:"));
                self.class_body(indent + 1, d)?;
            }
            9 if nested => {
                let (name, params) = (
                    self.pick(&["add_cli_args", "__post_init__", "__init__", "register_fields", "_handle", "get", "from_cli_args"])?,
                    self.pick(&["parser", "self, parser", "parser: argparse.ArgumentParser", "self", "cls, args", "*args, **kwargs"])?,
                );
                let decorator = self.pick(&["", "@staticmethod", "@classmethod", "@property"])?;
                if !decorator.is_empty() {
                    self.line(indent, decorator);
                }
                self.line(indent, &format!("def {name}({params}):"));
                self.block(indent + 1, d)?;
            }
            10 if nested => {
                let cond = self.pick(&[
                    "TYPE_CHECKING",
                    "is_cuda()",
                    "sys.version_info >= (3, 10)",
                    "False",
                    "envs.SGLANG_A.get()",
                    "__name__ == \"__main__\"",
                ])?;
                self.line(indent, &format!("if {cond}:"));
                self.block(indent + 1, d)?;
                if self.u.ratio(1, 2)? {
                    self.line(indent, "else:");
                    self.block(indent + 1, d)?;
                }
            }
            11 if nested => {
                self.line(indent, "try:");
                self.block(indent + 1, d)?;
                let caught = self.pick(&["ImportError", "Exception", "(ImportError, AttributeError)"])?;
                self.line(indent, &format!("except {caught}:"));
                self.block(indent + 1, d)?;
            }
            12 if nested => {
                let it = self.expr(2)?;
                self.line(indent, &format!("for x in {it}:"));
                self.block(indent + 1, d)?;
            }
            13 => {
                let (name, ty, value) = (self.pick(NAMES)?, self.annotation()?, self.expr(2)?);
                self.line(indent, &format!("{name}: {ty} = {value}"));
            }
            14 => {
                let (a, b) = (self.pick(STRINGS)?, self.pick(STRINGS)?);
                self.line(indent, &format!("_warn_deprecated_env_to_cli_flag({a}, {b})"));
            }
            15 => {
                let (name, call, value) = (
                    self.pick(NAMES)?,
                    self.pick(&["os.environ.get", "os.getenv", "get_bool_env_var", "envs.get", "environ.get"])?,
                    self.pick(STRINGS)?,
                );
                self.line(indent, &format!("{name} = {call}({value})"));
            }
            16 => {
                let (var, m) = (self.pick(ENV_NAMES)?, self.pick(&["get()", "set(1)", "value", "is_set()"])?);
                self.line(indent, &format!("envs.{var}.{m}"));
            }
            17 => {
                let value = self.expr(2)?;
                self.line(indent, &format!("return {value}"));
            }
            18 => {
                let (keyword, name) = (self.pick(&["global", "del", "nonlocal"])?, self.pick(NAMES)?);
                self.line(indent, &format!("{keyword} {name}"));
            }
            19 => {
                let text = self.pick(&[
                    "register_fields(parser, ServerArgs)",
                    "add_fields(parser, ServerArgs)",
                    "ServerArgs.add_cli_args(parser)",
                    "envs = Envs()",
                    "parser = argparse.ArgumentParser()",
                    "setattr(ServerArgs, \"x\", 1)",
                ])?;
                self.line(indent, text);
            }
            // The record a field-driven registrar reads, and the entry point that
            // hands it the parser: rare as a product of independent choices.
            20 if !nested || indent == 0 => {
                self.line(indent, "@dataclasses.dataclass");
                self.line(indent, "class ServerArgs:");
                self.class_body(indent + 1, d)?;
                self.line(indent + 1, "@staticmethod");
                self.line(indent + 1, "def add_cli_args(parser: argparse.ArgumentParser):");
                let call = self.pick(&[
                    "register_fields(parser, ServerArgs)",
                    "add_fields(parser, ServerArgs)",
                    "register_fields(parser, cls=ServerArgs)",
                ])?;
                self.line(indent + 2, call);
                if self.u.ratio(1, 2)? {
                    self.block(indent + 2, d)?;
                }
            }
            // Well-typed code the constant folder computes with (see typed_python).
            arm @ (21 | 22) if indent == 0 => {
                let mut typed = Typed::new(&mut *self.u, &mut self.typed);
                let lines = if arm == 21 { typed.program()? } else { typed.statement()? };
                for l in lines {
                    self.line(0, &l);
                }
            }
            _ => {
                let value = self.expr(3)?;
                self.line(indent, &value);
            }
        }
        Ok(())
    }

    fn class_body(&mut self, indent: usize, depth: u32) -> Result<()> {
        let n = self.u.int_in_range(1..=6)?;
        if self.budget == 0 {
            self.line(indent, "pass");
        }
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            match self.u.int_in_range(0..=4)? {
                0 | 1 => {
                    let (name, ty) = (
                        self.pick(&["model_path", "port", "kv_dtype", "cuda_graph_max_bs", "x", "SGLANG_A", "SGL_B", "A"])?,
                        self.annotation()?,
                    );
                    let default = if self.u.ratio(2, 3)? { format!(" = {}", self.expr(2)?) } else { String::new() };
                    self.line(indent, &format!("{name}: {ty}{default}"));
                }
                2 => {
                    let (name, call, args) = (
                        self.pick(ENV_NAMES)?,
                        self.pick(&["EnvBool", "EnvInt", "EnvStr", "EnvField", "EnvFloat", "EnvBoolWithAlias", "PathSetting"])?,
                        self.args(1)?,
                    );
                    self.line(indent, &format!("{name} = {call}({args})"));
                }
                3 => {
                    let (name, value) = (self.pick(&["A", "B", "ALL", "X", "value"])?, self.expr(2)?);
                    self.line(indent, &format!("{name} = {value}"));
                }
                _ => self.statement(indent, depth)?,
            }
        }
        Ok(())
    }
}

/// A call's argument list: positional, then keyword arguments, either may be empty.
fn call_args(positional: String, keywords: String) -> String {
    match (positional.is_empty(), keywords.is_empty()) {
        (true, _) => keywords,
        (_, true) => positional,
        _ => format!("{positional}, {keywords}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(prelude) = u.choose_index(PRELUDES.len()) else { return };
    let mut g = Gen { u: &mut u, out: PRELUDES[prelude].to_string(), budget: 60, typed: Env::default() };
    // Out of bytes, every choice takes its first option (a leaf, `pass`), so the
    // module still closes every block it opened; the budget ends it.
    while g.budget > 0 && !g.u.is_empty() {
        if g.statement(0, 3).is_err() {
            break;
        }
    }
    // To read what the generator writes: `EA_SHAPES_PRINT=1 BIN INPUT...`.
    if std::env::var_os("EA_SHAPES_PRINT").is_some() {
        eprintln!("{}\n# ----", g.out);
    }
    extractors::run_extractors(g.out.as_bytes());
});
