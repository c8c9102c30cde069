//! A master config against the recipes it links: EA301 (image) and EA302 (Dynamo ref).

use crate::finding::{EvidenceRef, Finding, FindingKind, Location};
use crate::recipe::{parse_image, DynamoRef, MasterEntry, RecipeFile, Spanned};

/// Two image references name the same image: same repository and tag; digests
/// must agree only when both pin one.
pub(crate) fn same_image(a: &str, b: &str) -> bool {
    let (x, y) = (parse_image(a.trim()), parse_image(b.trim()));
    x.repo == y.repo && x.tag == y.tag && (x.digest.is_none() || y.digest.is_none() || x.digest == y.digest)
}

/// Two Dynamo references name the same build: a hash that is a prefix of the
/// other, or equal PEP 440 versions.
pub(crate) fn same_dynamo(a: &DynamoRef, b: &DynamoRef) -> bool {
    use std::str::FromStr;
    let version = |r: &DynamoRef| match r {
        DynamoRef::Version { version } | DynamoRef::Wheel { version, .. } => pep440_rs::Version::from_str(version).ok(),
        DynamoRef::Hash { .. } => None,
    };
    match (a, b) {
        (DynamoRef::Hash { hash: x }, DynamoRef::Hash { hash: y }) => {
            let (x, y) = (x.to_ascii_lowercase(), y.to_ascii_lowercase());
            x.starts_with(&y) || y.starts_with(&x)
        }
        _ => matches!((version(a), version(b)), (Some(x), Some(y)) if x == y),
    }
}

fn master_evidence(master: &RecipeFile, at: &Spanned<String>, note: String) -> EvidenceRef {
    EvidenceRef { path: master.path.clone(), line: at.span.line, ref_name: "master config".into(), note: Some(note), engine: None }
}

/// Check every recipe the entry links to (already matched by the caller).
pub(crate) fn check_entry(master: &RecipeFile, entry: &MasterEntry, recipe: &RecipeFile, out: &mut Vec<Finding>) {
    let key = &entry.key.value;
    for dep in &recipe.deployments {
        if let (Some(image), Some(container)) = (&entry.image, &dep.container) {
            // An srt-slurm alias stands for the entry's image (see `audit::master_links`).
            if !crate::recipe::is_container_alias(&container.value) && !same_image(&image.value, &container.value) {
                let kind = FindingKind::ImageMismatch {
                    recipe_image: container.value.clone(),
                    key: key.clone(),
                    master_image: image.value.clone(),
                };
                out.push(
                    Finding::new(kind, Location::from_span(&container.span), "model.container")
                        .deployment(&dep.name)
                        .evidence(master_evidence(master, image, format!("{key}.image"))),
                );
            }
        }
        let router_version = entry.router.as_ref().and_then(|r| r.version.as_ref());
        if let (Some(version), Some(spec)) = (router_version, &dep.dynamo) {
            let (Some(master_ref), Some(recipe_ref)) = (DynamoRef::from_router_version(&version.value), spec.reference.as_ref()) else {
                continue;
            };
            if !same_dynamo(&master_ref, recipe_ref) {
                let kind = FindingKind::EngineRefMismatch {
                    consumer: crate::profiles::DYNAMO.display.into(),
                    recipe_ref: spec.raw.value.clone(),
                    key: key.clone(),
                    router_version: version.value.clone(),
                };
                out.push(
                    Finding::new(kind, Location::from_span(&spec.raw.span), format!("dynamo.{}", spec.field))
                        .deployment(&dep.name)
                        .evidence(master_evidence(master, version, format!("{key}.router.version"))),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_match_by_repository_and_tag() {
        assert!(same_image("lmsysorg/sglang:v0.5.14-cu130", "lmsysorg/sglang:v0.5.14-cu130@sha256:50"));
        assert!(!same_image("lmsysorg/sglang:v0.5.12.post1", "lmsysorg/sglang:v0.5.19-cu130"));
    }

    #[test]
    fn dynamo_refs_match_by_hash_prefix_or_version() {
        let h = |s: &str| DynamoRef::Hash { hash: s.into() };
        let v = |s: &str| DynamoRef::Version { version: s.into() };
        assert!(same_dynamo(&h("5b4bc1dd70965017a737c71b19db5a0aeaa88727"), &h("5b4bc1dd")));
        assert!(same_dynamo(&v("1.5.0"), &DynamoRef::Wheel { version: "1.5".into(), date: None }));
        assert!(!same_dynamo(&v("1.5.0"), &h("5b4bc1dd")));
    }
}
