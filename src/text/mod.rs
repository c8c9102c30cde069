//! Text positions and changes shared by every layer that reads or reports on
//! a file: spans into a file as read ([`span`]), byte edits ([`edit`]), source
//! excerpts for diagnostics ([`excerpt`]) and control-character escapes
//! ([`escape`]). It knows no recipe, engine or finding, so recipe readers,
//! findings and reports all import it and it imports none of them.

pub(crate) mod edit;
pub(crate) mod escape;
pub(crate) mod excerpt;
pub(crate) mod span;

pub use edit::Edit;
pub use span::{Span, Spanned};
