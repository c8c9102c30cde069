//! A bash evaluator for launch scripts: what each command that starts a server
//! passes on every path through the script, read from the syntax tree and never
//! executed. [`eval`] runs the statements (branches, expansions and what nests
//! in its own files), [`words`] builds and splits words, [`vars`] keeps the
//! variables of each path,
//! [`launch`] recognises launchers, [`cond`] names the paths.

pub(crate) mod cond;
pub(crate) mod eval;
pub(crate) mod launch;
pub(crate) mod vars;
pub(crate) mod words;
