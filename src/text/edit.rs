//! A byte-range replacement in one file: what a recipe format produces for a
//! check's intent and what `--fix` writes.

use serde::Serialize;

/// A text replacement in one file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edit {
    pub path: String,
    pub offset: usize,
    pub len: usize,
    pub replacement: String,
}
