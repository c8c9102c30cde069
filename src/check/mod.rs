//! Cross-checks: recipe uses × engine surfaces × consumer uses → findings.
//! `check` knows surfaces and recipes, not git or tree-sitter.

pub(crate) mod config_keys;
pub(crate) mod consistency;
pub(crate) mod consumer;
pub(crate) mod defaults;
pub(crate) mod duplicates;
pub(crate) mod env;
pub(crate) mod flags;
pub(crate) mod pins;
pub(crate) mod refs;
pub(crate) mod rules;
pub(crate) mod unreadable;
pub(crate) mod values;
mod worker;
pub(crate) mod worker_flags;

use crate::surface::EngineSurface;

/// One engine moved from the release a deployment runs today to the target.
#[derive(Clone, Copy)]
pub(crate) struct Bump<'a> {
    /// `None` when the current release is unknown (only the target is checked).
    pub from: Option<&'a EngineSurface>,
    pub to: &'a EngineSurface,
    /// The releases before the target, for what the target no longer knows.
    pub history: Option<&'a crate::history::ReleaseHistory>,
}

impl<'a> Bump<'a> {
    pub(crate) fn target_ref(&self) -> &str {
        &self.to.ref_name
    }
    pub(crate) fn current_ref(&self) -> Option<&str> {
        self.from.map(|s| s.ref_name.as_str())
    }
    /// The engine this bump is of, as reports name it (`SGLang`).
    pub(crate) fn engine_display(&self) -> &'static str {
        crate::profiles::by_id(&self.to.engine).map_or("the engine", |p| p.display)
    }
    /// "v0.5.12.post1 → v0.5.19", or "v0.5.19" alone.
    pub(crate) fn label(&self) -> String {
        match self.from {
            Some(f) if f.ref_name != self.to.ref_name => format!("{} → {}", f.ref_name, self.to.ref_name),
            _ => self.to.ref_name.clone(),
        }
    }
}
