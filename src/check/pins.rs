//! A consumer's requirement on an engine against the engine's target version: EA205.

use crate::finding::{EvidenceRef, Finding, FindingKind, Location};
use crate::surface::EngineSurface;
use std::str::FromStr;

/// The version a surface is, from its package metadata or else its ref name.
pub(crate) fn surface_version(s: &EngineSurface) -> Option<pep440_rs::Version> {
    s.version.as_deref().and_then(|v| pep440_rs::Version::from_str(v).ok()).or_else(|| crate::source::parse_version_ref(&s.ref_name))
}

/// EA205 for each requirement of `consumer` on `pin` (the engine's distribution
/// name) that excludes the engine target's version.
pub(crate) fn check(consumer: &EngineSurface, pin: &str, engine_to: &EngineSurface, out: &mut Vec<Finding>) {
    let Some(target) = surface_version(engine_to) else { return };
    for req in consumer.requires.iter().filter(|r| r.name == pin && !r.specifier.is_empty()) {
        let Ok(spec) = pep440_rs::VersionSpecifiers::from_str(&req.specifier) else { continue };
        if spec.contains(&target) {
            continue;
        }
        let display = |id: &str| crate::profiles::by_id(id).map_or(id.to_string(), |p| p.display.to_string());
        let kind = FindingKind::PinMismatch {
            engine: display(&engine_to.engine),
            consumer: display(&consumer.engine),
            consumer_ref: consumer.ref_name.clone(),
            requirement: req.raw.clone(),
            extra: req.group.clone(),
            target: target.to_string(),
        };
        out.push(
            Finding::new(kind, Location::from_evidence(&req.evidence), pin)
                .evidence(EvidenceRef::new(&req.evidence, &consumer.ref_name).with_note(req.raw.clone())),
        );
    }
}
