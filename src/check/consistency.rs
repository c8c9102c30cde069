//! A master config against the recipes it links: EA301 (image) and EA302 (Dynamo ref).

use crate::finding::{EvidenceRef, Finding, FindingKind, Location};
use crate::recipe::{parse_image, DynamoRef, MasterEntry, RecipeFile, Spanned};

/// Whether two image references name the same image: same repository and
/// tag, digests agreeing when both pin one. `None` when that cannot be told:
/// one names only a digest and the other only a tag (which digest a tag
/// pointed at is not in the text).
pub(crate) fn same_image(a: &str, b: &str) -> Option<bool> {
    let (x, y) = (parse_image(a.trim()), parse_image(b.trim()));
    if x.repo != y.repo {
        return Some(false);
    }
    match (&x.tag, &y.tag) {
        (Some(s), Some(t)) if s != t => Some(false),
        (None, Some(_)) if y.digest.is_none() => None,
        (Some(_), None) if x.digest.is_none() => None,
        _ => Some(x.digest.is_none() || y.digest.is_none() || x.digest == y.digest),
    }
}

/// Whether two Dynamo references name the same build: a hash that is a prefix
/// of the other, or equal PEP 440 versions. `None` for a commit against a
/// version: which commit a release or a nightly wheel was built from is not in
/// the text, so no mismatch is claimed.
pub(crate) fn same_dynamo(a: &DynamoRef, b: &DynamoRef) -> Option<bool> {
    use std::str::FromStr;
    let version = |r: &DynamoRef| match r {
        DynamoRef::Version { version } | DynamoRef::Wheel { version, .. } => pep440_rs::Version::from_str(version).ok(),
        DynamoRef::Hash { .. } => None,
    };
    match (a, b) {
        (DynamoRef::Hash { hash: x }, DynamoRef::Hash { hash: y }) => {
            let (x, y) = (x.to_ascii_lowercase(), y.to_ascii_lowercase());
            Some(x.starts_with(&y) || y.starts_with(&x))
        }
        (DynamoRef::Hash { .. }, _) | (_, DynamoRef::Hash { .. }) => None,
        _ => Some(matches!((version(a), version(b)), (Some(x), Some(y)) if x == y)),
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
            if !crate::recipe::is_container_alias(&container.value) && same_image(&image.value, &container.value) == Some(false) {
                let kind = FindingKind::ImageMismatch {
                    recipe_image: container.value.clone(),
                    key: key.clone(),
                    master_image: image.value.clone(),
                };
                out.push(
                    Finding::new(kind, Location::from_span(&container.span), "model.container")
                        .deployment(&dep.name)
                        .variant(dep.variant.as_deref())
                        .evidence(master_evidence(master, image, format!("{key}.image"))),
                );
            }
        }
        let router_version = entry.router.as_ref().and_then(|r| r.version.as_ref());
        if let (Some(version), Some(spec)) = (router_version, &dep.dynamo) {
            let (Some(master_ref), Some(recipe_ref)) = (DynamoRef::from_router_version(&version.value), spec.reference.as_ref()) else {
                continue;
            };
            if same_dynamo(&master_ref, recipe_ref) == Some(false) {
                let kind = FindingKind::EngineRefMismatch {
                    consumer: crate::profiles::DYNAMO.display.into(),
                    recipe_ref: spec.raw.value.clone(),
                    key: key.clone(),
                    router_version: version.value.clone(),
                };
                out.push(
                    Finding::new(kind, Location::from_span(&spec.raw.span), format!("dynamo.{}", spec.field))
                        .deployment(&dep.name)
                        .variant(dep.variant.as_deref())
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
        assert_eq!(same_image("lmsysorg/sglang:v0.5.14-cu130", "lmsysorg/sglang:v0.5.14-cu130@sha256:50"), Some(true));
        assert_eq!(same_image("lmsysorg/sglang:v0.5.12.post1", "lmsysorg/sglang:v0.5.19-cu130"), Some(false));
        // enroot's `registry#path` is the registry's path.
        assert_eq!(
            same_image("nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1", "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1"),
            Some(true)
        );
        // A digest alone against a tag alone: which build the tag named is not in the text.
        assert_eq!(same_image("vllm/vllm-openai@sha256:b910", "vllm/vllm-openai:nightly-9ea8f3ff"), None);
        assert_eq!(same_image("vllm/vllm-openai@sha256:b910", "vllm/vllm-openai@sha256:aaaa"), Some(false));
    }

    #[test]
    fn dynamo_refs_match_by_hash_prefix_or_version() {
        let h = |s: &str| DynamoRef::Hash { hash: s.into() };
        let v = |s: &str| DynamoRef::Version { version: s.into() };
        assert_eq!(same_dynamo(&h("5b4bc1dd70965017a737c71b19db5a0aeaa88727"), &h("5b4bc1dd")), Some(true));
        assert_eq!(same_dynamo(&v("1.5.0"), &DynamoRef::Wheel { version: "1.5".into(), date: None }), Some(true));
        assert_eq!(same_dynamo(&v("1.5.0"), &v("1.5.1")), Some(false));
        assert_eq!(same_dynamo(&v("1.5.0"), &h("5b4bc1dd")), None, "a commit against a version: not in the text");
    }
}
