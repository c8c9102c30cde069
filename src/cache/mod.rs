//! The fact cache: extraction results on disk, so a second audit of the same
//! refs reads no engine source and a changed file is re-read alone.
//!
//! An entry is one extraction unit (the flags of a release, one module's
//! symbols, the env reads of one file, ...) under a key naming the unit and the
//! blob id of its main file. Each entry holds a few *variants*, each with the
//! [`Deps`] it was computed from (every file looked up or read, with its blob
//! id, and the tree listing when the unit enumerated it); a variant is used only
//! when its deps still hold in the tree at hand. So a unit is recomputed exactly
//! when a file it read changed, whatever the key.
//!
//! Safety: every entry starts with a magic line and the SHA-256 of its body,
//! and records the extractor version (crate version + a fingerprint of the
//! running binary, so a rebuilt extractor never trusts older facts); anything
//! damaged, undecodable or from another version is a miss (a damaged entry is
//! removed). Nothing is stored once an object read failed in the process: a
//! fact computed without an unreadable file would outlive the repair. Writes
//! go to a temporary file in the same folder and are renamed into place, so
//! concurrent audits sharing a folder see either the old or the new entry,
//! never a torn one. The folder is bounded: beyond [`DEFAULT_LIMIT_BYTES`] the
//! oldest entries are evicted. Only files the cache named are ever deleted, and
//! it writes only into a folder of its own (`folder`).

mod deps;
mod folder;
mod store;

pub use deps::{listing_fingerprint, tree_files_fingerprint, Deps, RecordingTree};
pub use store::{CacheStats, FactCache, DEFAULT_LIMIT_BYTES};
