//! EA303: a recipe's image or Dynamo spec maps to no ref of the engine
//! repository given. An input problem, not a break: that part of the
//! deployment could not be checked.

use crate::finding::{Finding, FindingKind, Location};

/// The finding for a reference `value` of `engine` that maps to no ref; `detail`
/// says what was tried, `at` where the recipe names it.
pub(crate) fn unresolved(engine: &str, value: &str, detail: String, at: Location, subject: &str, deployment: &str) -> Finding {
    let kind = FindingKind::UnresolvedRef { engine: engine.to_string(), value: value.to_string(), detail };
    Finding::new(kind, at, subject).deployment(deployment)
}
