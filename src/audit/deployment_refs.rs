//! Which refs one deployment is audited across: the command line's `--from/--to`
//! (and Dynamo's), else the recipe's image and `dynamo:` block; in `pr`, the
//! recipe's base version gives "from". Unresolvable refs become EA303.

use super::engines::EngineHandle;
use super::refs::{self, DerivedRef, Unresolved};
use super::AuditOptions;
use crate::finding::{Finding, Location};
use crate::recipe::Deployment;

/// The refs one deployment is audited across.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct DeploymentRefs {
    pub sglang_from: Option<DerivedRef>,
    pub sglang_to: Option<DerivedRef>,
    pub dynamo_from: Option<DerivedRef>,
    pub dynamo_to: Option<DerivedRef>,
}

fn flag_ref(value: &Option<String>, flag: &str) -> Option<DerivedRef> {
    value.as_ref().map(|v| DerivedRef { wanted: v.clone(), how: flag.to_string() })
}

pub(super) fn derive_refs(
    dep: &Deployment,
    base: Option<&Deployment>,
    opts: &AuditOptions,
    sglang: Option<&EngineHandle>,
    dynamo: Option<&EngineHandle>,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) -> DeploymentRefs {
    let mut refs = DeploymentRefs::default();
    let mut unresolved = |u: Unresolved, span: Option<&crate::recipe::Span>, subject: &str| {
        let at = span.map(Location::from_span).unwrap_or(Location { path: String::new(), line: 1, column: 1, offset: None, len: None });
        findings.push(crate::check::refs::unresolved(u.engine, &u.what, u.message, at, subject, &dep.name));
    };
    // The recipe before the change names no span in this file: say it in a note.
    let mut unresolved_before = |u: Unresolved| notes.push(format!("{}: before the change: {}", dep.name, u.message));
    let before = |r: DerivedRef| DerivedRef { how: format!("before: {}", r.how), ..r };

    let sglang_repo = sglang.and_then(|h| h.source.repo());
    (refs.sglang_from, refs.sglang_to) = from_to(
        flag_ref(&opts.from, "--from"),
        flag_ref(&opts.to, "--to"),
        || match refs::sglang_ref(dep, sglang_repo?) {
            Ok(r) => r,
            Err(u) => {
                unresolved(u, dep.container.as_ref().map(|c| &c.span), "model.container");
                None
            }
        },
        base.map(|b| {
            || match refs::sglang_ref(b, sglang_repo?) {
                Ok(r) => r.map(before),
                Err(u) => {
                    unresolved_before(u);
                    None
                }
            }
        }),
    );
    if sglang.is_some_and(|h| h.source.repo().is_none()) {
        // A plain folder has one tree: audit against it.
        refs.sglang_to.get_or_insert(DerivedRef { wanted: "(directory)".into(), how: "--sglang folder".into() });
    }
    let dynamo_repo = dynamo.and_then(|h| h.source.repo());
    (refs.dynamo_from, refs.dynamo_to) = from_to(
        flag_ref(&opts.dynamo_from, "--dynamo-from"),
        flag_ref(&opts.dynamo_to, "--dynamo-to"),
        || match refs::dynamo_ref(dep, dynamo_repo?) {
            Ok(r) => r,
            Err(u) => {
                unresolved(u, dep.dynamo.as_ref().map(|d| &d.raw.span), "dynamo");
                None
            }
        },
        base.map(|b| {
            || match refs::dynamo_ref(b, dynamo_repo?) {
                Ok(r) => r.map(before),
                Err(u) => {
                    unresolved_before(u);
                    None
                }
            }
        }),
    );
    if dynamo.is_some_and(|h| h.source.repo().is_none()) {
        refs.dynamo_to.get_or_insert(DerivedRef { wanted: "(directory)".into(), how: "--dynamo folder".into() });
    }
    refs
}

/// One engine's from and to. Flags win. Otherwise a plain audit takes both from
/// the recipe as it is (`own`); with the recipe's old version (`old`, in `pr`),
/// from is the old recipe's ref and to the recipe's own.
fn from_to(
    flag_from: Option<DerivedRef>,
    flag_to: Option<DerivedRef>,
    own: impl FnOnce() -> Option<DerivedRef>,
    old: Option<impl FnOnce() -> Option<DerivedRef>>,
) -> (Option<DerivedRef>, Option<DerivedRef>) {
    let (from, own_to) = match old {
        None => (flag_from.or_else(own), None),
        Some(old) => {
            let own_to = if flag_to.is_none() { own() } else { None };
            (flag_from.or_else(old), own_to)
        }
    };
    let to = flag_to.or(own_to).or_else(|| from.clone());
    (from, to)
}
