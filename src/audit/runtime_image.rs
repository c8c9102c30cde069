//! Dynamo's runtime images (`nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:
//! 0.8.1.post1`, `sglang-runtime`, `vllm-runtime`): the tag names a Dynamo
//! release, not the engine's. The engine inside is the release that Dynamo
//! release pins in its optional dependencies (`trtllm = [..., "tensorrt-llm==
//! 1.2.0rc6.post1"]`). Read from Dynamo's source at that release, never
//! guessed: the Dynamo version is never tried as an engine tag (Dynamo
//! `1.3.0-dev.1` is no TensorRT-LLM 1.3.0).

use crate::profiles::Engine;
use crate::recipe::ImageTag;
use crate::source::{EngineRepo, Tree};

/// Whether the image is one of Dynamo's runtime images.
pub(crate) fn is_dynamo_runtime(image: &ImageTag) -> bool {
    let mut parts = image.repo.rsplit('/');
    let name = parts.next().unwrap_or("");
    let org = parts.next().unwrap_or("");
    org == "ai-dynamo" && name.ends_with("-runtime")
}

/// The ref of `engine` inside a Dynamo runtime image written `written`: the
/// release its Dynamo release pins, as (the ref, how it was found); else why
/// not. `dynamo` is Dynamo's source, when given.
pub(crate) fn engine_ref(
    engine: Engine,
    image: &ImageTag,
    written: &str,
    repo: &EngineRepo,
    dynamo: Option<&EngineRepo>,
) -> Result<(String, String), String> {
    let unresolved = |detail: String| format!("image `{written}` is a Dynamo runtime image: {detail}");
    let Some(version) = &image.version else {
        return Err(unresolved("its tag names no Dynamo release".into()));
    };
    // `1.3.0-dev.1-cuda13`, `1.3.0-deepseek-v4-dev.1`: a build before or beside
    // Dynamo 1.3.0, which no release is.
    if let Some(variant) = image.variant.as_deref().filter(|v| v.split(['-', '.']).any(|part| part == "dev")) {
        return Err(unresolved(format!(
            "its tag `{}` names a development build of Dynamo {version} (`{variant}`), which no Dynamo release is; name the {} release with --{}-to",
            image.tag.as_deref().unwrap_or(version),
            engine.display,
            engine.id
        )));
    }
    let inside = format!("its tag names Dynamo {version}, and the {} inside is the release that Dynamo release pins", engine.display);
    let Some(dynamo) = dynamo else {
        return Err(unresolved(format!("{inside}; give Dynamo's source (--dynamo) to read the pin")));
    };
    let pin =
        crate::profiles::CONSUMER_LINKS.iter().find(|l| l.consumer == crate::profiles::DYNAMO.id && l.engine == engine.id).map(|l| l.pin);
    let Some(pin) = pin else {
        return Err(unresolved(format!("{inside}; Dynamo has no link to {}", engine.display)));
    };
    let pinned = pinned_by(dynamo, version, pin).map_err(|detail| unresolved(format!("{inside}{detail}")))?;
    let tried = [format!("v{pinned}"), pinned.clone()];
    match tried.iter().find_map(|w| repo.try_resolve(w).ok().flatten()) {
        Some(r) => Ok((r.wanted, format!("a Dynamo runtime image: Dynamo {version} pins `{pin}=={pinned}`"))),
        None => Err(unresolved(format!(
            "{inside}: Dynamo {version} pins `{pin}=={pinned}`, which names no {} ref in {} (tried {})",
            engine.display,
            repo.spec,
            tried.join(", ")
        ))),
    }
}

/// What Dynamo `version` pins `pin` to, else why not (said after the image's
/// description). Read once per Dynamo source, release and pin in a run: many
/// recipes name one image, and listing a Dynamo tree is a walk of its tree
/// objects.
fn pinned_by(dynamo: &EngineRepo, version: &str, pin: &str) -> Result<String, String> {
    type Memo = std::collections::HashMap<(String, String, String), Result<String, String>>;
    static READ: std::sync::OnceLock<std::sync::Mutex<Memo>> = std::sync::OnceLock::new();
    let key = (dynamo.spec.clone(), version.to_string(), pin.to_string());
    let memo = READ.get_or_init(Default::default);
    if let Some(known) = memo.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return known.clone();
    }
    let read = || {
        let resolved = [format!("v{version}"), version.to_string()].into_iter().find_map(|w| dynamo.try_resolve(&w).ok().flatten());
        let resolved = resolved.ok_or_else(|| format!(", and {} has no Dynamo {version}", dynamo.spec))?;
        let tree = dynamo.tree_at(&resolved).map_err(|e| format!("; its tree could not be read: {e}"))?;
        exact_pin(&tree, pin).ok_or_else(|| format!("; Dynamo {version} pins no exact `{pin}==` release"))
    };
    let answer = read();
    memo.lock().unwrap_or_else(|p| p.into_inner()).insert(key, answer.clone());
    answer
}

/// The version of `pin` that Dynamo's `pyproject.toml` requires exactly
/// (`tensorrt-llm==1.2.0rc6.post1`), in any group.
fn exact_pin(tree: &dyn Tree, pin: &str) -> Option<String> {
    let pyproject = crate::profiles::DYNAMO.package_roots.iter().find_map(|root| crate::extract::pins::find_pyproject(tree, root))?;
    let mut warnings = Vec::new();
    let requirements = crate::extract::pins::requirements(tree, &pyproject, &mut warnings);
    requirements.into_iter().filter(|r| r.name == pin).find_map(|r| {
        let exact = r.specifier.strip_prefix("==")?;
        (!exact.contains([',', '*'])).then(|| exact.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::image::parse_image;

    #[test]
    fn a_development_build_tag_keeps_its_variant() {
        let i = parse_image("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0-dev.1-cuda13");
        assert_eq!((i.version.as_deref(), i.variant.as_deref()), (Some("1.3.0"), Some("dev.1-cuda13")));
    }

    #[test]
    fn only_dynamo_runtime_images_are_runtime_images() {
        assert!(is_dynamo_runtime(&parse_image("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1")));
        assert!(is_dynamo_runtime(&parse_image("nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.1")));
        assert!(!is_dynamo_runtime(&parse_image("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24")));
        assert!(!is_dynamo_runtime(&parse_image("lmsysorg/sglang:v0.5.19-cu130")));
    }
}
