//! Well-typed Python for `python_shapes`: expressions whose operands have the
//! types the constant folder computes with (a list `+` a list, `",".join` of
//! strings, `d.get(k, default)`, `sorted` of strings), container constants with
//! the mutations the folder replays (module level and in `add_cli_args`), and
//! an `add_cli_args` body whose `add_argument` calls fold them. The untyped
//! generator lines these pairs up by chance only: after 690k runs it still
//! left 50 of `eval::binary`'s 148 regions and 48 of `apply_mutation`'s 112
//! unreached.
//! A few choices are deliberately ill-typed (`+=` on a tuple, `remove` of a
//! missing item) so the folder's refusals stay covered too.

use libfuzzer_sys::arbitrary::{Result, Unstructured};

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Ty {
    Int,
    Float,
    Str,
    Bool,
    NoneTy,
    List,
    Tuple,
    Set,
    Dict,
    /// An `Enum` class defined by the program (`for m in E`, `E.A.value`).
    EnumClass,
}

const VALUE_TYPES: &[Ty] = &[Ty::Int, Ty::Float, Ty::Str, Ty::Bool, Ty::NoneTy, Ty::List, Ty::Tuple, Ty::Set, Ty::Dict];
const SCALARS: &[Ty] = &[Ty::Int, Ty::Float, Ty::Str, Ty::Bool, Ty::NoneTy];
const CONTAINERS: &[Ty] = &[Ty::List, Ty::Tuple, Ty::Set, Ty::Dict];

const INTS: &[&str] = &["0", "1", "2", "3", "-1", "64", "30000", "0x1F", "0o17", "0b101", "1_000", "2 ** 64", "10**100"];
const FLOATS: &[&str] = &["0.5", "1.5e3", "-0.0", "2.0", "1e308", "0.0"];
const STRS: &[&str] = &["\"a\"", "\"b\"", "\"fp8\"", "\"a,b\"", "\" x \"", "\"A\"", "\"\"", "\"inf\"", "\"12\"", "\",\"", "'-'"];
const NAMES: &[&str] = &["CHOICES", "BACKENDS", "QUANT", "X", "A", "_x", "opts", "modes", "DEFAULTS"];
const ENUMS: &[&str] = &["Mode", "Phase", "E"];
const MEMBERS: &[&str] = &["A", "B", "C"];

/// Names bound so far and the type of their value.
#[derive(Default)]
pub struct Env {
    names: Vec<(String, Ty)>,
}

impl Env {
    fn bind(&mut self, name: &str, ty: Ty) {
        self.names.retain(|(n, _)| n != name);
        self.names.push((name.to_string(), ty));
    }

    fn of(&self, ty: Ty) -> impl Iterator<Item = &str> {
        self.names.iter().filter(move |(_, t)| *t == ty).map(|(n, _)| n.as_str())
    }
}

pub struct Typed<'a, 'b, 'e> {
    pub u: &'b mut Unstructured<'a>,
    /// Module-level bindings, visible everywhere after they are made.
    pub globals: &'e mut Env,
    /// Bindings of the `add_cli_args` body being written.
    locals: Option<Env>,
    /// Options registered so far: distinct `--opt-N` strings.
    options: u32,
}

impl<'a, 'b, 'e> Typed<'a, 'b, 'e> {
    pub fn new(u: &'b mut Unstructured<'a>, globals: &'e mut Env) -> Self {
        Typed { u, globals, locals: None, options: 0 }
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> Result<T> {
        Ok(from[self.u.choose_index(from.len())?])
    }

    /// A name in scope bound to a `ty` value, if any.
    fn bound(&mut self, ty: Ty) -> Result<Option<String>> {
        let mut names: Vec<String> = Vec::new();
        if let Some(l) = &self.locals {
            names.extend(l.of(ty).map(String::from));
        }
        // A local of another type shadows the global.
        let shadowed = |n: &str| self.locals.as_ref().is_some_and(|l| l.names.iter().any(|(m, _)| m == n));
        names.extend(self.globals.of(ty).filter(|n| !shadowed(n)).map(String::from));
        if names.is_empty() {
            return Ok(None);
        }
        Ok(Some(names[self.u.choose_index(names.len())?].clone()))
    }

    fn bind(&mut self, name: &str, ty: Ty) {
        match &mut self.locals {
            Some(l) => l.bind(name, ty),
            None => self.globals.bind(name, ty),
        }
    }

    /// An expression of type `ty`.
    fn expr(&mut self, ty: Ty, depth: u32) -> Result<String> {
        if depth == 0 || self.u.ratio(1, 3)? {
            if self.u.ratio(1, 2)? {
                if let Some(name) = self.bound(ty)? {
                    return Ok(name);
                }
            }
            return self.literal(ty, depth);
        }
        let d = depth - 1;
        Ok(match ty {
            Ty::Int => match self.u.int_in_range(0..=7)? {
                0 | 1 => {
                    let op = self.pick(&["+", "-", "*", "//", "%", "**", "<<", ">>", "|", "&"])?;
                    format!("({} {op} {})", self.expr(Ty::Int, d)?, self.expr(Ty::Int, d)?)
                }
                2 => format!("len({})", self.iterable(d)?),
                3 => format!(
                    "int({})",
                    if self.u.ratio(1, 2)? { self.expr(Ty::Int, d)? } else { self.pick(&["\"12\"", "\" 7 \"", "\"x\""])?.to_string() }
                ),
                4 => format!("({}{})", self.pick(&["-", "~", "+"])?, self.expr(Ty::Int, d)?),
                5 => self.indexed(Ty::Int, d)?,
                6 => self.conditional(Ty::Int, d)?,
                _ => self.dict_get(Ty::Int, d)?,
            },
            Ty::Float => match self.u.int_in_range(0..=4)? {
                0 | 1 => {
                    let (l, r) = (self.pick(&[Ty::Int, Ty::Float])?, self.pick(&[Ty::Int, Ty::Float])?);
                    let op = self.pick(&["+", "-", "*", "/", "**"])?;
                    format!("({} {op} {})", self.expr(l, d)?, self.expr(r, d)?)
                }
                2 => {
                    let arg = match self.u.int_in_range(0..=2)? {
                        0 => self.expr(Ty::Int, d)?,
                        1 => self.expr(Ty::Float, d)?,
                        _ => self.pick(&["\"inf\"", "\"-Infinity\"", "\"0.25\"", "\"nope\""])?.to_string(),
                    };
                    format!("float({arg})")
                }
                3 => format!("(-{})", self.expr(Ty::Float, d)?),
                _ => self.conditional(Ty::Float, d)?,
            },
            Ty::Str => match self.u.int_in_range(0..=9)? {
                0 => format!("({} + {})", self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?),
                1 => format!("({}).{}()", self.expr(Ty::Str, d)?, self.pick(&["lower", "upper", "strip"])?),
                2 => format!("({}).replace({}, {})", self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?),
                3 => format!("{}.join({})", self.pick(STRS)?, self.strs(d)?),
                4 => {
                    let t = self.pick(SCALARS)?;
                    format!("str({})", self.expr(t, d)?)
                }
                5 => self.indexed(Ty::Str, d)?,
                6 => self.conditional(Ty::Str, d)?,
                7 => self.dict_get(Ty::Str, d)?,
                8 => match self.bound(Ty::EnumClass)? {
                    Some(e) => format!("{e}.{}.{}", self.pick(MEMBERS)?, self.pick(&["value", "name"])?),
                    None => self.literal(Ty::Str, d)?,
                },
                _ => format!("({} or {})", self.expr(Ty::Str, d)?, self.expr(Ty::Str, d)?),
            },
            Ty::Bool => match self.u.int_in_range(0..=3)? {
                0 => {
                    let t = self.pick(VALUE_TYPES)?;
                    format!("(not {})", self.expr(t, d)?)
                }
                1 => {
                    let t = self.pick(VALUE_TYPES)?;
                    format!("bool({})", self.expr(t, d)?)
                }
                2 => format!("({} {} {})", self.expr(Ty::Bool, d)?, self.pick(&["and", "or"])?, self.expr(Ty::Bool, d)?),
                _ => self.conditional(Ty::Bool, d)?,
            },
            Ty::NoneTy => "None".to_string(),
            Ty::List => match self.u.int_in_range(0..=11)? {
                0 => format!("({} + {})", self.expr(Ty::List, d)?, self.expr(Ty::List, d)?),
                1 => {
                    let (l, n) = (self.expr(Ty::List, d)?, self.pick(&["0", "2", "3", "-1"])?);
                    if self.u.ratio(1, 2)? {
                        format!("({l} * {n})")
                    } else {
                        format!("({n} * {l})")
                    }
                }
                2 => format!("list({})", self.iterable(d)?),
                3 => format!("sorted({})", if self.u.ratio(1, 2)? { self.strs(d)? } else { self.ints(d)? }),
                4 => format!("({}).split({})", self.expr(Ty::Str, d)?, self.pick(&["\",\"", "\"a\"", "\" \""])?),
                5 => format!("({}).{}()", self.expr(Ty::Dict, d)?, self.pick(&["keys", "values"])?),
                6 => self.strs(d)?,
                7 => format!("[*{}, *{}]", self.iterable(d)?, self.iterable(d)?),
                8 => format!("({}).copy()", self.expr(Ty::List, d)?),
                9 => match self.bound(Ty::EnumClass)? {
                    Some(e) => format!("[m.{} for m in {e}]", self.pick(&["value", "name"])?),
                    None => self.literal(Ty::List, d)?,
                },
                10 => self.conditional(Ty::List, d)?,
                _ => "list()".to_string(),
            },
            Ty::Tuple => match self.u.int_in_range(0..=3)? {
                0 => format!("({} + {})", self.expr(Ty::Tuple, d)?, self.expr(Ty::Tuple, d)?),
                1 => format!("tuple({})", self.iterable(d)?),
                2 => "tuple()".to_string(),
                _ => self.indexed(Ty::Tuple, d)?,
            },
            Ty::Set => match self.u.int_in_range(0..=6)? {
                0 => format!("({} | {})", self.expr(Ty::Set, d)?, self.expr(Ty::Set, d)?),
                1 => format!("({} - {})", self.expr(Ty::Set, d)?, self.expr(Ty::Set, d)?),
                2 => format!("{}({})", self.pick(&["set", "frozenset"])?, self.iterable(d)?),
                3 => "set()".to_string(),
                4 => format!("{{x for x in {}}}", self.iterable(d)?),
                5 => format!("({}).copy()", self.expr(Ty::Set, d)?),
                _ => self.conditional(Ty::Set, d)?,
            },
            Ty::Dict => match self.u.int_in_range(0..=4)? {
                0 => format!("({} | {})", self.expr(Ty::Dict, d)?, self.expr(Ty::Dict, d)?),
                1 => format!("{{**{}, {}: {}}}", self.expr(Ty::Dict, d)?, self.pick(STRS)?, self.scalar(d)?),
                2 => "dict()".to_string(),
                3 => format!("({}).copy()", self.expr(Ty::Dict, d)?),
                _ => self.dict_get(Ty::Dict, d)?,
            },
            Ty::EnumClass => self.enum_class()?,
        })
    }

    fn literal(&mut self, ty: Ty, depth: u32) -> Result<String> {
        let d = depth.saturating_sub(1);
        Ok(match ty {
            Ty::Int => self.pick(INTS)?.to_string(),
            Ty::Float => self.pick(FLOATS)?.to_string(),
            Ty::Str => self.pick(STRS)?.to_string(),
            Ty::Bool => self.pick(&["True", "False"])?.to_string(),
            Ty::NoneTy => "None".to_string(),
            Ty::List => format!("[{}]", self.items(d)?.join(", ")),
            Ty::Tuple => match self.items(d)? {
                items if items.is_empty() => "()".to_string(),
                items => format!("({},)", items.join(", ")),
            },
            Ty::Set => match self.items(d)? {
                items if items.is_empty() => "set()".to_string(),
                items => format!("{{{}}}", items.join(", ")),
            },
            Ty::Dict => {
                let n = self.u.int_in_range(0..=3)?;
                let pairs = (0..n).map(|_| Ok(format!("{}: {}", self.pick(STRS)?, self.scalar(d)?))).collect::<Result<Vec<_>>>()?;
                format!("{{{}}}", pairs.join(", "))
            }
            Ty::EnumClass => self.enum_class()?,
        })
    }

    /// An enum class bound earlier; else a name that may not be one.
    fn enum_class(&mut self) -> Result<String> {
        Ok(self.bound(Ty::EnumClass)?.unwrap_or_else(|| "Mode".to_string()))
    }

    /// Container items: all strings or all ints (so `sorted` and `join` apply).
    fn items(&mut self, depth: u32) -> Result<Vec<String>> {
        let n = self.u.int_in_range(0..=3)?;
        let ty = if self.u.ratio(3, 4)? { Ty::Str } else { Ty::Int };
        self.exprs(n, ty, depth)
    }

    /// `n` shallow expressions of type `ty`, for a display's items.
    fn exprs(&mut self, n: u32, ty: Ty, depth: u32) -> Result<Vec<String>> {
        (0..n).map(|_| self.expr(ty, depth.min(1))).collect()
    }

    fn scalar(&mut self, depth: u32) -> Result<String> {
        let ty = self.pick(SCALARS)?;
        self.expr(ty, depth.min(1))
    }

    /// Something `for x in` accepts: a container, a string, an enum class.
    fn iterable(&mut self, depth: u32) -> Result<String> {
        let ty = match self.u.int_in_range(0..=5)? {
            0..=3 => CONTAINERS[self.u.choose_index(CONTAINERS.len())?],
            4 => Ty::Str,
            _ => Ty::EnumClass,
        };
        self.expr(ty, depth)
    }

    /// A list of strings.
    fn strs(&mut self, depth: u32) -> Result<String> {
        Ok(match self.u.int_in_range(0..=4)? {
            0 => {
                let n = self.u.int_in_range(0..=3)?;
                format!("[{}]", self.exprs(n, Ty::Str, depth)?.join(", "))
            }
            1 => format!("({}).split(\",\")", self.expr(Ty::Str, depth)?),
            2 => format!("list({}.keys())", self.literal(Ty::Dict, depth)?),
            3 => format!(
                "[x.{}() for x in {} if x]",
                self.pick(&["lower", "upper", "strip"])?,
                self.pick(&["[\"a\", \"B\", \"\"]", "\"a,b\".split(\",\")"])?
            ),
            _ => format!("sorted({})", self.pick(&["{\"b\", \"a\"}", "[\"fp8\", \"bf16\"]"])?),
        })
    }

    fn ints(&mut self, depth: u32) -> Result<String> {
        let n = self.u.int_in_range(0..=3)?;
        Ok(format!("[{}]", self.exprs(n, Ty::Int, depth)?.join(", ")))
    }

    /// `[a, b][i]` / `{"k": v}["k"]` of type `ty`.
    fn indexed(&mut self, ty: Ty, depth: u32) -> Result<String> {
        Ok(if self.u.ratio(1, 2)? {
            let (a, b, i) = (self.expr(ty, depth)?, self.expr(ty, depth)?, self.pick(&["0", "1", "-1", "-2", "2"])?);
            format!("[{a}, {b}][{i}]")
        } else {
            let (k, v, key) = (self.pick(STRS)?, self.expr(ty, depth)?, self.pick(STRS)?);
            format!("{{{k}: {v}}}[{key}]")
        })
    }

    fn conditional(&mut self, ty: Ty, depth: u32) -> Result<String> {
        let cond = self.pick(VALUE_TYPES)?;
        Ok(format!("({} if {} else {})", self.expr(ty, depth)?, self.expr(cond, depth)?, self.expr(ty, depth)?))
    }

    fn dict_get(&mut self, ty: Ty, depth: u32) -> Result<String> {
        let (dict, key, default) = (self.expr(Ty::Dict, depth)?, self.pick(STRS)?, self.expr(ty, depth)?);
        Ok(if self.u.ratio(1, 3)? { format!("({dict}).get({key})") } else { format!("({dict}).get({key}, {default})") })
    }

    /// One statement over typed names: a binding, a mutation the folder replays,
    /// an enum class, or (inside `add_cli_args`) an option using them. Lines are
    /// relative to the caller's indentation.
    pub fn statement(&mut self) -> Result<Vec<String>> {
        let in_function = self.locals.is_some();
        Ok(match self.u.int_in_range(0..=9)? {
            0 | 1 => {
                let (name, ty) = (self.pick(NAMES)?, self.pick(VALUE_TYPES)?);
                let value = self.expr(ty, 3)?;
                self.bind(name, ty);
                vec![format!("{name} = {value}")]
            }
            2 | 3 => self.mutation()?,
            4 if !in_function => {
                let (name, base) = (self.pick(ENUMS)?, self.pick(&["Enum", "str, Enum", "IntEnum", "enum.Enum"])?);
                let mut lines = vec![format!("class {name}({base}):")];
                for m in &MEMBERS[..self.u.int_in_range(1..=3)?] {
                    let v = if base == "IntEnum" { self.expr(Ty::Int, 1)? } else { self.expr(Ty::Str, 1)? };
                    lines.push(format!("    {m} = {v}"));
                }
                self.bind(name, Ty::EnumClass);
                lines
            }
            // A mutation that may not run: the folder must give up on the name.
            5 => {
                let cond = self.pick(&["is_cuda()", "envs.SGLANG_A.get()", "False"])?;
                let body = self.mutation()?;
                std::iter::once(format!("if {cond}:")).chain(body.into_iter().map(|l| format!("    {l}"))).collect()
            }
            6..=8 if in_function => self.add_argument()?,
            _ if in_function => {
                let (key, ty) = (self.pick(&["model_path", "port", "kv_dtype", "x"])?, self.pick(VALUE_TYPES)?);
                vec![format!("parser.set_defaults({key}={})", self.expr(ty, 2)?)]
            }
            _ => {
                let (name, ty) = (self.pick(NAMES)?, self.pick(CONTAINERS)?);
                let value = self.literal(ty, 2)?;
                self.bind(name, ty);
                vec![format!("{name} = {value}")]
            }
        })
    }

    /// A mutating call (or augmented assignment) on a bound container, with
    /// arguments of the types the method takes; a bound alias of the method
    /// (`add = X.extend`) at module level, where the folder follows those.
    fn mutation(&mut self) -> Result<Vec<String>> {
        let ty = self.pick(&[Ty::List, Ty::List, Ty::Set, Ty::Dict, Ty::Tuple])?;
        let Some(name) = self.bound(ty)? else {
            let name = self.pick(NAMES)?;
            let value = self.literal(ty, 1)?;
            self.bind(name, ty);
            return Ok(vec![format!("{name} = {value}")]);
        };
        let (method, args) = match ty {
            Ty::List => match self.u.int_in_range(0..=6)? {
                0 | 1 => ("append", self.scalar(1)?),
                2 => ("extend", self.iterable(2)?),
                3 => ("insert", format!("{}, {}", self.pick(&["0", "1", "-1", "99", "-99"])?, self.scalar(1)?)),
                4 => ("remove", self.expr(Ty::Str, 1)?),
                5 => ("clear", String::new()),
                _ => ("+=", self.iterable(2)?),
            },
            Ty::Set => match self.u.int_in_range(0..=5)? {
                0 | 1 => ("add", self.scalar(1)?),
                2 => ("update", self.iterable(2)?),
                3 => (self.pick(&["discard", "remove"])?, self.expr(Ty::Str, 1)?),
                4 => ("|=", self.expr(Ty::Set, 2)?),
                _ => ("clear", String::new()),
            },
            Ty::Dict => match self.u.int_in_range(0..=3)? {
                0 | 1 => ("update", self.expr(Ty::Dict, 2)?),
                2 => ("|=", self.expr(Ty::Dict, 2)?),
                _ => (self.pick(&["clear", "pop", "setdefault"])?, String::new()),
            },
            _ => ("+=", self.expr(Ty::Tuple, 1)?),
        };
        Ok(if method.ends_with('=') {
            vec![format!("{name} {method} {args}")]
        } else if self.locals.is_none() && self.u.ratio(1, 4)? {
            let alias = format!("_{}_{method}", name.to_lowercase());
            vec![format!("{alias} = {name}.{method}"), format!("{alias}({args})")]
        } else {
            vec![format!("{name}.{method}({args})")]
        })
    }

    /// `parser.add_argument(...)` whose keywords fold from typed expressions and
    /// bound names (choices from a container, a default of a scalar type).
    fn add_argument(&mut self) -> Result<Vec<String>> {
        self.options += 1;
        let option = format!("\"--opt-{}\"", self.options);
        let mut kw = Vec::new();
        if self.u.ratio(2, 3)? {
            let ty = self.pick(&[Ty::List, Ty::Tuple, Ty::Set, Ty::Dict, Ty::EnumClass])?;
            kw.push(format!("choices={}", self.expr(ty, 2)?));
        }
        if self.u.ratio(2, 3)? {
            let ty = self.pick(VALUE_TYPES)?;
            kw.push(format!("default={}", self.expr(ty, 2)?));
        }
        if self.u.ratio(1, 2)? {
            kw.push(format!("type={}", self.pick(&["int", "str", "float", "bool", "str.lower"])?));
        }
        if self.u.ratio(1, 4)? {
            kw.push(format!("nargs={}", self.pick(&["\"+\"", "\"*\"", "\"?\"", "2"])?));
        }
        if self.u.ratio(1, 5)? {
            kw.push(format!("action={}", self.pick(&["\"store_true\"", "\"append\"", "\"store_const\"", "\"count\""])?));
            kw.push(format!("const={}", self.scalar(1)?));
        }
        if self.u.ratio(1, 6)? {
            kw.push(format!("**{}", self.expr(Ty::Dict, 2)?));
        }
        let names = if self.u.ratio(1, 6)? { format!("*{}", self.expr(Ty::List, 2)?) } else { option };
        let target = self.pick(&["parser", "parser", "group"])?;
        let mut lines = Vec::new();
        if target == "group" {
            lines.push("group = parser.add_argument_group(\"g\")".to_string());
        }
        kw.insert(0, names);
        lines.push(format!("{target}.add_argument({})", kw.join(", ")));
        Ok(lines)
    }

    /// The imports the typed statements lean on, a few module-level typed
    /// statements, then a `ServerArgs` with a typed `add_cli_args`.
    pub fn program(&mut self) -> Result<Vec<String>> {
        let mut lines = vec!["import argparse".to_string()];
        if self.u.ratio(3, 4)? {
            lines.push(self.pick(&["from enum import Enum, IntEnum", "import enum"])?.to_string());
        }
        for _ in 0..self.u.int_in_range(0..=3)? {
            lines.extend(self.statement()?);
        }
        lines.extend(self.server_args()?);
        Ok(lines)
    }

    /// `ServerArgs` whose `add_cli_args` is a typed body: what the flag walker
    /// starts from, so every binding and mutation in it is folded.
    fn server_args(&mut self) -> Result<Vec<String>> {
        let mut lines = vec!["class ServerArgs:".to_string()];
        for _ in 0..self.u.int_in_range(0..=2)? {
            let (name, ty) = (self.pick(&["model_path", "port", "kv_dtype", "cuda_graph_max_bs"])?, self.pick(VALUE_TYPES)?);
            lines.push(format!("    {name}: {} = {}", self.pick(&["int", "str", "Optional[str]", "List[str]"])?, self.expr(ty, 2)?));
        }
        lines.push("    @staticmethod".to_string());
        lines.push("    def add_cli_args(parser: argparse.ArgumentParser):".to_string());
        self.locals = Some(Env::default());
        let n = self.u.int_in_range(1..=8)?;
        for _ in 0..n {
            // An error ends the whole module (and drops this generator).
            lines.extend(self.statement()?.into_iter().map(|l| format!("        {l}")));
        }
        self.locals = None;
        Ok(lines)
    }
}
