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
        let kind = FindingKind::PinMismatch {
            engine: crate::profiles::display(&engine_to.engine),
            consumer: crate::profiles::display(&consumer.engine),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{extract_surface, Demand};
    use crate::profiles::{DYNAMO, SGLANG};
    use crate::source::MemTree;

    /// Dynamo as its wheel declares it, with `pyproject` holding its pins.
    fn dynamo(pyproject: &str) -> EngineSurface {
        let tree = MemTree::from_files("v1", [("pyproject.toml", pyproject), ("components/src/dynamo/__init__.py", "")]);
        extract_surface(&tree, &DYNAMO, "components/src/dynamo", "v1.5.0", &Demand { metadata: true, ..Demand::default() })
    }

    /// An SGLang release known only by its tag (no version file).
    fn sglang(tag: &str) -> EngineSurface {
        let tree = MemTree::from_files(tag, [("python/sglang/__init__.py", "")]);
        extract_surface(&tree, &SGLANG, "python/sglang", tag, &Demand::default())
    }

    const PYPROJECT: &str = "[project]\nname = \"ai-dynamo\"\ndependencies = [\"uvloop\"]\n\n[project.optional-dependencies]\nsglang = [\"sglang[all]==0.5.19\"]\nvllm = [\"vllm>=0.10\"]\n";

    #[test]
    fn a_pin_that_excludes_the_target_is_ea205_with_its_group() {
        let mut out = Vec::new();
        check(&dynamo(PYPROJECT), "sglang", &sglang("v0.5.23"), &mut out);
        assert_eq!(out.len(), 1);
        let f = &out[0];
        assert_eq!((f.code(), f.subject.as_str(), f.location.path.as_str()), ("EA205", "sglang", "pyproject.toml"));
        match &f.kind {
            FindingKind::PinMismatch { requirement, extra, target, consumer_ref, .. } => {
                assert_eq!(
                    (requirement.as_str(), extra.as_deref(), target.as_str(), consumer_ref.as_str()),
                    ("sglang[all]==0.5.19", Some("sglang"), "0.5.23", "v1.5.0")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_pin_the_target_meets_or_an_unpinned_name_says_nothing() {
        let mut out = Vec::new();
        check(&dynamo(PYPROJECT), "sglang", &sglang("v0.5.19"), &mut out);
        check(&dynamo(&PYPROJECT.replace("==0.5.19", "")), "sglang", &sglang("v0.5.23"), &mut out);
        // A target whose version cannot be told (a branch name) is not judged.
        check(&dynamo(PYPROJECT), "sglang", &sglang("main"), &mut out);
        assert!(out.is_empty(), "{out:#?}");
    }
}
