//! What a consumer package (Dynamo) uses of an engine (SGLang), and how each use
//! is guarded against the engine having changed.
//!
//! Two kinds of use are reported:
//!
//! * **Imports** of engine modules: `import sglang.x [as y]`, `from sglang.x import
//!   A, B as C` (also inside functions), and `importlib.import_module("sglang.x")`
//!   with a literal name. Relative imports never name the engine.
//! * **Attributes of the link's engine classes** (`ServerArgs` for SGLang;
//!   `AsyncEngineArgs`/`EngineArgs` and `VllmConfig` for vLLM, with their
//!   conventional names as [`ConsumerClass`] data: what follows says
//!   `ServerArgs` for any of them): reads, calls and writes (`sa.x`, `sa.x()`,
//!   `sa.x = v`, `sa.x += v`, `del sa.x`), `getattr`/`hasattr`/`setattr` with a
//!   literal name, and class-level uses (`ServerArgs.from_cli_args`).
//!
//! # Which expressions are `ServerArgs` values (a heuristic)
//!
//! Dynamo passes `ServerArgs` around untyped (`server_args: Any`, plain
//! `server_args`), so types alone find little. An expression is taken to be a
//! `ServerArgs` value when it is:
//!
//! * a name bound in the current function body to a `ServerArgs` value: a
//!   parameter annotated `ServerArgs`, `"ServerArgs"`, `Optional[ServerArgs]`,
//!   `ServerArgs | None` (or `sgl.ServerArgs`), or a variable assigned from
//!   `ServerArgs(...)`, `ServerArgs.from_cli_args(...)` or another `ServerArgs`
//!   value (`server_args = config.server_args`);
//! * otherwise, a name called `server_args` or `_server_args` (Dynamo's
//!   convention), unless the function rebound it to something known not to be
//!   one: a `SimpleNamespace(...)` / `Namespace(...)` stub or a literal. This is
//!   flow-sensitive: in `if diffusion: server_args = SimpleNamespace() ... else:
//!   server_args = ServerArgs.from_cli_args(a)` the writes to the stub are not
//!   reported, the uses after the `if` are;
//! * an attribute named `server_args` / `_server_args` of anything:
//!   `self.server_args`, `config.server_args`, `engine.server_args`,
//!   `engine.tokenizer_manager.server_args`, `inner_tm.server_args`,
//!   `publisher.server_args` (all seen in Dynamo 1.3 to 1.6), but not a chain
//!   rooted at an engine module (`sglang.srt.server_args` is the module).
//!
//! `ServerArgs` itself is recognised when the file imports it from the engine
//! (any alias) or writes it as `<engine module alias>.ServerArgs`.
//!
//! False-positive risks, kept visible rather than guessed away: a `server_args`
//! value that is really a stub (Dynamo's diffusion workers receive
//! `config.server_args` as a `SimpleNamespace` built elsewhere), or SGLang's
//! resolved view (`resolved_server_args(...)`, which Dynamo 1.6 also names
//! `server_args`). Attribute names computed at run time (`setattr(sa, name, v)`)
//! are not knowable and not reported.
//!
//! # Guards
//!
//! * `try:` guards a use in its body when the first handler Python would pick for
//!   the failure (`ImportError`/`ModuleNotFoundError` for imports,
//!   `AttributeError` for attributes; `Exception`, `BaseException`, bare `except:`
//!   and tuples of these for both) recovers: a handler that re-raises as one of
//!   its own statements (`log; raise`) only logs. Code in `else:`, `finally:`, the
//!   handlers, and in defs or lambdas defined in the body is not guarded by it.
//! * `getattr(sa, "x", default)` guards itself; without a default it does not.
//!   `hasattr(sa, "x")` is a guarded use of `x`.
//! * A `hasattr` test guards the code that runs only when it held: `if hasattr(sa,
//!   "x"): <here>`, `if not hasattr(...): ... else: <here>`, `hasattr(...) and
//!   <here>`, `not hasattr(...) or <here>`, `<here> if hasattr(...) else ...`, and
//!   the rest of a block after `if not hasattr(...): return`. A test whose
//!   fallback branch ends in `raise` guards nothing.
//!
//! Uses in an `except` handler carry [`ExceptContext`]: they run only after their
//! `try` failed, which matters for fallback imports of a moved module.

mod bindings;
mod guards;
mod walk;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::extract::python::PyFile;
use crate::extract::Package;
use crate::profiles::ConsumerClass;
use crate::surface::{Evidence, ExtractWarning};
use std::sync::Arc;

/// What is used.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UseKind {
    /// `import sglang.x [as y]` (`name` is `None`), or `from sglang.x import name [as y]`
    /// (`name` is `"*"` for a wildcard import).
    Import { module: String, name: Option<String>, alias: Option<String> },
    /// An attribute used on a value (or the class) of `class`.
    Attribute {
        class: String,
        attribute: String,
        /// Called right where it is read (`sa.x()`, `getattr(sa, "x")()`).
        called: bool,
        /// Assigned or deleted (`sa.x = v`, `sa.x += v`, `setattr(sa, "x", v)`).
        write: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GuardKind {
    TryExcept {
        /// The recovering handler's exception classes as written (last dotted
        /// segment); empty for a bare `except:`. Note that a `ModuleNotFoundError`
        /// handler does not catch a missing *name* (plain `ImportError`).
        catches: Vec<String>,
        /// Line of the `try` (uses in its handlers point back to it via [`ExceptContext`]).
        try_line: u32,
    },
    Getattr,
    Hasattr,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Guard {
    pub kind: GuardKind,
    /// What happens instead, as source text on one line: the handler's first
    /// statement (past `if ...: raise` filters), the `getattr` default, `False` for
    /// `hasattr` itself, or the branch that runs when the `hasattr` test fails.
    pub fallback: String,
    /// For a `getattr` with a default: the engine functions the rest of the
    /// function calls (`(module, name)` of `from module import name [as x]`),
    /// where the code goes when the attribute is gone (`x = getattr(sa, "f",
    /// None); if x is not None: return x(); return module_level_f(sa)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then_calls: Vec<(String, String)>,
}

/// The use sits in an `except` handler: it runs only after the `try` at `try_line`
/// raised one of `catches` (empty for a bare `except:`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ExceptContext {
    pub try_line: u32,
    pub catches: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ConsumerUse {
    pub kind: UseKind,
    pub guard: Option<Guard>,
    /// Runs when the module is imported (module level or a class body there, not
    /// inside a def or lambda): a failure there stops the worker at start.
    pub top_level: bool,
    /// Under `if TYPE_CHECKING:`: read by type checkers only, never run.
    pub type_only: bool,
    pub in_except: Option<ExceptContext>,
    /// Engine names (`(module, name)`) whose successful import makes an earlier
    /// `if name is not None: ... return` leave the function: where the target
    /// defines one, this use is never reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreached_if_imported: Vec<(String, String)>,
    pub evidence: Evidence,
    /// The source line of `evidence`, trimmed.
    pub snippet: String,
}

/// Every use the modules `module_prefix` and below (outside `tests` folders) of
/// `pkg` make of `engine_package`, sorted by path, line and kind.
///
/// Files that cannot be read are skipped with a warning; files with syntax
/// errors or invalid UTF-8 give the facts of their well-formed parts and a warning.
///
/// Attribute uses are looked for on the classes of the consumer link of
/// `engine_package` whose component is `module_prefix` (else the first link of
/// that engine): see [`consumer_uses_of`] to name them.
pub fn consumer_uses(pkg: &Package, engine_package: &str, module_prefix: &str, warnings: &mut Vec<ExtractWarning>) -> Vec<ConsumerUse> {
    let links = || crate::profiles::CONSUMER_LINKS.iter().filter(|l| l.package == engine_package);
    let link = links().find(|l| l.component == module_prefix).or_else(|| links().next());
    consumer_uses_of(pkg, engine_package, module_prefix, link.map_or(&[][..], |l| l.classes), warnings)
}

/// [`consumer_uses`] with the engine classes whose attribute uses are reported.
pub fn consumer_uses_of(
    pkg: &Package,
    engine_package: &str,
    module_prefix: &str,
    classes: &[ConsumerClass],
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<ConsumerUse> {
    // Files are independent: parsed in parallel, merged in module order.
    let modules: Vec<_> = pkg.modules().into_iter().filter(|m| in_scope(&m.name, module_prefix)).collect();
    let per_file: Vec<(Vec<ConsumerUse>, Vec<ExtractWarning>)> = modules
        .par_iter()
        .map(|module| {
            let mut w = Vec::new();
            let uses = match read_python(pkg, &module.path, &mut w) {
                Some(file) => file_uses(&file, engine_package, classes, &mut w),
                None => Vec::new(),
            };
            (uses, w)
        })
        .collect();
    let mut uses = Vec::new();
    for (u, w) in per_file {
        uses.extend(u);
        warnings.extend(w);
    }
    sort_uses(&mut uses);
    uses
}

/// The uses one parsed file makes of `engine_package`, sorted.
pub(crate) fn file_uses(
    file: &PyFile,
    engine_package: &str,
    classes: &[ConsumerClass],
    warnings: &mut Vec<ExtractWarning>,
) -> Vec<ConsumerUse> {
    if file.has_errors() {
        let line = file.first_error_line().unwrap_or(1);
        warnings.push(ExtractWarning {
            path: file.path.clone(),
            message: format!("syntax error near line {line}: engine uses from this file may be incomplete"),
        });
    }
    let facts = walk::walk_file(file, engine_package, classes);
    if facts.too_deep {
        warnings.push(ExtractWarning {
            path: file.path.clone(),
            message: "nesting too deep to follow: engine uses below it are missing".to_string(),
        });
    }
    let mut uses = facts.uses;
    sort_uses(&mut uses);
    uses
}

/// `dynamo.sglang` itself and its submodules, except those in a `tests` package.
fn in_scope(module: &str, prefix: &str) -> bool {
    let below = module == prefix || module.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.'));
    below && !module.split('.').any(|part| part == "tests")
}

/// Read and parse one file with the shared read rules (see
/// [`parsed`](crate::extract::parsed)): invalid UTF-8 is replaced and oversized
/// files are skipped, each with a warning. Syntax errors are warned about by
/// `file_uses`, which knows what they cost.
fn read_python(pkg: &Package, path: &str, warnings: &mut Vec<ExtractWarning>) -> Option<Arc<PyFile>> {
    let parsed = crate::extract::parsed::parse_file(pkg.tree, path);
    warnings.extend(parsed.warnings);
    parsed.file
}

/// Deterministic order (path, line, kind, then the rest); exact repeats on one
/// line (`sa.x + sa.x`) are kept once.
fn sort_uses(uses: &mut Vec<ConsumerUse>) {
    uses.sort_by(|a, b| {
        (&a.evidence, &a.kind, &a.guard, a.top_level, a.type_only, &a.in_except, &a.snippet).cmp(&(
            &b.evidence,
            &b.kind,
            &b.guard,
            b.top_level,
            b.type_only,
            &b.in_except,
            &b.snippet,
        ))
    });
    uses.dedup();
}

#[cfg(test)]
mod tests;
