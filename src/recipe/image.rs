//! Container image references and Dynamo build references, parsed into the parts
//! that name an engine release.
//!
//! Versions are PEP 440 (`0.5.12.post1`, `1.3.0.dev20260720`), validated with
//! pep440_rs; what does not parse is left `None`, never guessed.

use pep440_rs::Version;
use serde::Serialize;
use std::str::FromStr;

/// A container image reference split into its parts.
///
/// `lmsysorg/sglang:v0.5.19-cu130` → repo `lmsysorg/sglang`, tag `v0.5.19-cu130`,
/// version `0.5.19`, variant `cu130`.
/// `lmsysorg/sglang:nightly-dev-cu13-20260608-303757cc` → no version, variant
/// `nightly-dev-cu13`, date `20260608`, commit `303757cc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ImageTag {
    /// Registry and repository, without tag or digest.
    pub repo: String,
    pub tag: Option<String>,
    /// `sha256:…` when the reference pins a digest.
    pub digest: Option<String>,
    /// The engine release the tag names (PEP 440, normalised, no leading `v`).
    pub version: Option<String>,
    /// The rest of the tag: `cu130`, `rocm700-mi35x`, `nightly-dev`.
    pub variant: Option<String>,
    /// `YYYYMMDD` of a dated (nightly) tag.
    pub date: Option<String>,
    /// `HHMM` (UTC) of a dated tag that gives the time too (`nightly_202607231538`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Short commit hash of a nightly tag, when the tag ends with one.
    pub commit: Option<String>,
}

/// An srt-slurm container alias (`dynamo-sglang`): a name from the cluster's
/// `containers:` map, not an image reference (no registry path, tag or digest).
pub fn is_container_alias(reference: &str) -> bool {
    let r = reference.trim();
    !r.is_empty() && !r.contains(['/', ':', '@']) && !r.ends_with(".sqsh")
}

pub fn parse_image(reference: &str) -> ImageTag {
    let reference = reference.trim();
    // enroot writes the registry with `#` (`nvcr.io#nvidia/x:1`): the same image as `nvcr.io/nvidia/x:1`.
    let enroot = reference.split_once('#').filter(|(registry, _)| !registry.is_empty() && !registry.contains('/'));
    let owned = enroot.map(|(registry, rest)| format!("{registry}/{rest}"));
    let reference = owned.as_deref().unwrap_or(reference);
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest.to_string())),
        None => (reference, None),
    };
    // A `:` after the last `/` separates the tag; one before it is a registry port.
    let last_slash = name.rfind('/').map(|i| i + 1).unwrap_or(0);
    let (repo, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    let mut image = ImageTag {
        repo: repo.to_string(),
        tag: tag.map(str::to_string),
        digest,
        version: None,
        variant: None,
        date: None,
        time: None,
        commit: None,
    };
    if let Some(tag) = tag {
        split_tag(tag, &mut image);
    }
    image
}

/// Tag grammar seen in practice: `[v]VERSION[-VARIANT…]` for releases,
/// `WORDS[-VARIANT]-YYYYMMDD[-COMMIT]` for nightlies.
fn split_tag(tag: &str, image: &mut ImageTag) {
    if tag.contains('_') && split_underscored(tag, image) {
        return;
    }
    let parts: Vec<&str> = tag.split('-').collect();
    if let Some(version) = parse_version(parts[0].strip_prefix('v').unwrap_or(parts[0])) {
        // Only a first segment with a dot counts as a release: `latest` or `2024`
        // is not an engine version.
        if parts[0].contains('.') {
            // A dated dev build (`1.3.0rc26.dev202609040000`, TensorRT-LLM's):
            // its build day and minute, for placing it when no tag names it.
            if let Some((date, time)) = dev_stamp(&version) {
                image.date = Some(date);
                image.time = time;
            }
            image.version = Some(version.to_string());
            let rest = parts[1..].join("-");
            image.variant = (!rest.is_empty()).then_some(rest);
            return;
        }
    }
    let date_at = parts.iter().position(|p| is_date(p));
    match date_at {
        Some(i) => {
            image.date = Some(parts[i].to_string());
            let variant = parts[..i].join("-");
            image.variant = (!variant.is_empty()).then_some(variant);
            let rest = &parts[i + 1..];
            // Nightly tags end with a short commit; 6 hex digits are seen in the wild.
            if rest.len() == 1 && rest[0].len() >= 6 && rest[0].len() <= 40 && rest[0].bytes().all(|b| b.is_ascii_hexdigit()) {
                image.commit = Some(rest[0].to_string());
            } else if !rest.is_empty() {
                let extra = rest.join("-");
                image.variant = Some(match image.variant.take() {
                    Some(v) => format!("{v}-{extra}"),
                    None => extra,
                });
            }
        }
        // `nightly-<sha>` (vLLM's nightlies), `nightly-dev-arm64-cu13.0.1-426e59f`:
        // an undated build named by the commit it was built from.
        None => match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() && is_commit_suffix(last) => {
                image.commit = Some(last.to_string());
                image.variant = Some(rest.join("-"));
            }
            _ => image.variant = Some(tag.to_string()),
        },
    }
}

/// Tags that join their parts with `_` and name the engine's build in one of
/// them after the repository's name (ROCm's `rocm/atom:rocm7.2.4_ubuntu24.04_
/// py3.12_pytorch_release_2.10.0_atom0.1.3`: release 0.1.3; `..._atom20260511`:
/// a build of that day), or a dated build with its time (`rocm/atom-dev:
/// nightly_202607231538`). The other parts are the variant. False when no part
/// names a build: the tag is read by the `-` grammar.
fn split_underscored(tag: &str, image: &mut ImageTag) -> bool {
    let last = image.repo.rsplit('/').next().unwrap_or(&image.repo);
    let stem = last.split('-').next().unwrap_or(last);
    let parts: Vec<&str> = tag.split('_').collect();
    for (i, part) in parts.iter().enumerate().rev() {
        let named = part.strip_prefix(stem).filter(|_| stem.len() >= 2);
        let found = match named {
            Some(rest) if is_date(rest) => {
                image.date = Some(rest.to_string());
                true
            }
            Some(rest) if rest.contains('.') => match parse_version(rest) {
                Some(v) => {
                    image.version = Some(v.to_string());
                    true
                }
                None => false,
            },
            _ if part.len() == 12 && part.bytes().all(|b| b.is_ascii_digit()) && is_date(&part[..8]) && is_time(&part[8..]) => {
                image.date = Some(part[..8].to_string());
                image.time = Some(part[8..].to_string());
                true
            }
            _ => false,
        };
        if found {
            let variant: Vec<&str> = parts.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, p)| *p).collect();
            image.variant = (!variant.is_empty()).then(|| variant.join("_"));
            return true;
        }
    }
    false
}

fn is_time(s: &str) -> bool {
    s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()) && s[..2] < *"24" && s[2..] < *"60"
}

/// A tag's last part that names a commit: a full hash, or a short one (7 or
/// more hex digits) with a letter in it, so that a build number or a CUDA
/// version (`2404`, `1301`) is not taken for one.
fn is_commit_suffix(part: &str) -> bool {
    is_short_hash(part) && (part.len() == 40 || part.bytes().any(|b| b.is_ascii_alphabetic()))
}

fn is_date(s: &str) -> bool {
    s.len() == 8
        && s.bytes().all(|b| b.is_ascii_digit())
        && s.starts_with("20")
        && matches!(&s[4..6], "01" | "02" | "03" | "04" | "05" | "06" | "07" | "08" | "09" | "10" | "11" | "12")
}

fn is_short_hash(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn parse_version(s: &str) -> Option<Version> {
    Version::from_str(s).ok()
}

/// Which Dynamo build a recipe (or a master-config router) refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DynamoRef {
    /// A source commit (`dynamo: {hash: 5b4bc1dd…}`).
    Hash { hash: String },
    /// A released version (`1.2.1`, `0.8.1.post1`).
    Version { version: String },
    /// A wheel version; nightly wheels carry their build date (`1.3.0.dev20260720`).
    Wheel { version: String, date: Option<String> },
}

impl DynamoRef {
    /// Read the value of one `dynamo:` key. `None` when the value does not fit
    /// the key (a hash that is not hex, a version that is not PEP 440).
    pub fn from_field(field: &str, value: &str) -> Option<DynamoRef> {
        let value = value.trim();
        match field {
            "hash" => is_short_hash(value).then(|| DynamoRef::Hash { hash: value.to_string() }),
            "version" => {
                let version = parse_version(value.strip_prefix('v').unwrap_or(value))?;
                Some(match nightly_date(&version) {
                    Some(date) => DynamoRef::Wheel { version: version.to_string(), date: Some(date) },
                    None => DynamoRef::Version { version: version.to_string() },
                })
            }
            "wheel" => {
                let version = parse_version(&wheel_version_text(value))?;
                let date = nightly_date(&version);
                Some(DynamoRef::Wheel { version: version.to_string(), date })
            }
            _ => None,
        }
    }

    /// Read a master-config router version, which holds either a commit hash or a
    /// version. A full 40-digit hex string, or a hex string with a letter in it,
    /// is a hash; anything else must be PEP 440.
    pub fn from_router_version(value: &str) -> Option<DynamoRef> {
        let value = value.trim();
        let hex_with_letter = is_short_hash(value) && value.bytes().any(|b| b.is_ascii_alphabetic());
        if value.len() == 40 && is_short_hash(value) || hex_with_letter {
            return Some(DynamoRef::Hash { hash: value.to_string() });
        }
        DynamoRef::from_field("version", value)
    }
}

/// The version inside a wheel reference: a bare version, or a wheel file name /
/// URL (`ai_dynamo-1.3.0.dev20260720-py3-none-any.whl`), whose second
/// dash-separated part is the version (PEP 427).
fn wheel_version_text(value: &str) -> String {
    let file = value.rsplit('/').next().unwrap_or(value);
    if let Some(stem) = file.strip_suffix(".whl") {
        if let Some(version) = stem.split('-').nth(1) {
            return version.to_string();
        }
    }
    value.to_string()
}

/// `YYYYMMDD` and `HHMM` of a `.devYYYYMMDDHHMM` (or `.devYYYYMMDD`) build.
fn dev_stamp(version: &Version) -> Option<(String, Option<String>)> {
    let dev = version.dev()?.to_string();
    match dev.len() {
        8 if is_date(&dev) => Some((dev, None)),
        12 if is_date(&dev[..8]) && is_time(&dev[8..]) => Some((dev[..8].to_string(), Some(dev[8..].to_string()))),
        _ => None,
    }
}

/// `YYYYMMDD` of a `.devYYYYMMDD` nightly version.
fn nightly_date(version: &Version) -> Option<String> {
    let dev = version.dev()?.to_string();
    is_date(&dev).then_some(dev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_tags_name_the_engine_version() {
        let i = parse_image("lmsysorg/sglang:v0.5.19-cu130");
        assert_eq!(i.repo, "lmsysorg/sglang");
        assert_eq!(i.version.as_deref(), Some("0.5.19"));
        assert_eq!(i.variant.as_deref(), Some("cu130"));
        let i = parse_image("lmsysorg/sglang:v0.5.12.post1");
        assert_eq!(i.version.as_deref(), Some("0.5.12.post1"));
        assert_eq!(i.variant, None);
        let i = parse_image("lmsysorg/sglang:v0.5.19-rocm700-mi35x");
        assert_eq!((i.version.as_deref(), i.variant.as_deref()), (Some("0.5.19"), Some("rocm700-mi35x")));
        let i = parse_image("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post1");
        assert_eq!(i.version.as_deref(), Some("0.8.1.post1"));
    }

    #[test]
    fn dated_dev_builds_keep_their_version_and_their_build_time() {
        let i = parse_image("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc26.dev202609040000");
        assert_eq!(i.version.as_deref(), Some("1.3.0rc26.dev202609040000"));
        assert_eq!((i.date.as_deref(), i.time.as_deref()), (Some("20260904"), Some("0000")));
        let i = parse_image("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24");
        assert_eq!(
            (i.repo.as_str(), i.version.as_deref(), i.date.as_deref()),
            ("nvcr.io/nvidia/tensorrt-llm/release", Some("1.3.0rc24"), None)
        );
        // A dev number that is no date places nothing.
        let i = parse_image("example/engine:2.0.0.dev3");
        assert_eq!((i.version.as_deref(), i.date.as_deref()), (Some("2.0.0.dev3"), None));
    }

    #[test]
    fn nightly_tags_have_a_date_and_no_version() {
        let i = parse_image("lmsysorg/sglang:nightly-dev-20260910-abc123");
        assert_eq!(i.version, None);
        assert_eq!(i.variant.as_deref(), Some("nightly-dev"));
        assert_eq!(i.date.as_deref(), Some("20260910"));
        assert_eq!(i.commit.as_deref(), Some("abc123"));
        let i = parse_image("lmsysorg/sglang:nightly-dev-cu13-20260608-303757cc");
        assert_eq!(i.variant.as_deref(), Some("nightly-dev-cu13"));
        assert_eq!(i.commit.as_deref(), Some("303757cc"));
    }

    /// ROCm's images join their parts with `_` and name the build after the
    /// repository (a made-up stack of the same shape as the real tags).
    #[test]
    fn underscored_tags_name_the_build_after_the_repository() {
        let i = parse_image("rocm/atom:rocm9.1_ubuntu26.04_py3.13_pytorch_release_3.1.0_atom2.4.1");
        assert_eq!((i.version.as_deref(), i.date.as_deref()), (Some("2.4.1"), None));
        assert_eq!(i.variant.as_deref(), Some("rocm9.1_ubuntu26.04_py3.13_pytorch_release_3.1.0"));
        let i = parse_image("rocm/atom:rocm9.1_ubuntu26.04_py3.13_pytorch_release_3.1.0_atom2.4.0.post");
        assert_eq!(i.version.as_deref(), Some("2.4.0.post0"));
        let i = parse_image("rocm/atom:rocm9.1_ubuntu26.04_py3.13_pytorch_release_3.1.0_atom20271103");
        assert_eq!((i.version.as_deref(), i.date.as_deref(), i.time.as_deref()), (None, Some("20271103"), None));
        let i = parse_image("rocm/atom-dev:nightly_202711031745");
        assert_eq!((i.date.as_deref(), i.time.as_deref(), i.variant.as_deref()), (Some("20271103"), Some("1745"), Some("nightly")));
        // A month and day without a year, or another tool's version, places nothing.
        let i = parse_image("rocm/atom-dev:ubuntu26.04_py3.13_pytorch_release_3.1.0_some_model_agentic_1103");
        assert_eq!((i.version.as_deref(), i.date.as_deref()), (None, None));
        let i = parse_image("rocm/atom-dev:nightly_202711032575");
        assert_eq!(i.date, None, "25:75 is no time");
    }

    #[test]
    fn digests_ports_and_untagged_references() {
        let i = parse_image("lmsysorg/sglang:v0.5.14-cu130@sha256:5027e95b");
        assert_eq!(i.digest.as_deref(), Some("sha256:5027e95b"));
        assert_eq!(i.version.as_deref(), Some("0.5.14"));
        let i = parse_image("vllm/vllm-openai:nightly-5e35a6f4f9bbc217c599692157ca985c894373f7");
        assert_eq!(
            (i.version, i.variant.as_deref(), i.commit.as_deref()),
            (None, Some("nightly"), Some("5e35a6f4f9bbc217c599692157ca985c894373f7"))
        );
        let i = parse_image("vllm/vllm-openai:nightly-dev-arm64-cu13.0.1-426e59f");
        assert_eq!((i.variant.as_deref(), i.commit.as_deref()), (Some("nightly-dev-arm64-cu13.0.1"), Some("426e59f")));
        let i = parse_image("vllm/vllm-openai-rocm:v0.27.1");
        assert_eq!((i.version.as_deref(), i.commit), (Some("0.27.1"), None));
        let i = parse_image("vllm/vllm-openai:kimi-k3");
        assert_eq!((i.variant.as_deref(), i.commit), (Some("kimi-k3"), None));
        let i = parse_image("x/y:build-12345678");
        assert_eq!(i.commit, None, "digits only: a build number, not a commit");
        let i = parse_image("registry:5000/team/sglang");
        assert_eq!((i.repo.as_str(), i.tag.as_deref()), ("registry:5000/team/sglang", None));
        let i = parse_image("lmsysorg/sglang:latest");
        assert_eq!((i.version.as_deref(), i.variant.as_deref()), (None, Some("latest")));
    }

    #[test]
    fn dynamo_refs_by_field() {
        assert_eq!(
            DynamoRef::from_field("hash", "5b4bc1dd70965017a737c71b19db5a0aeaa88727"),
            Some(DynamoRef::Hash { hash: "5b4bc1dd70965017a737c71b19db5a0aeaa88727".into() })
        );
        assert_eq!(DynamoRef::from_field("hash", "not-a-hash"), None);
        assert_eq!(DynamoRef::from_field("version", "1.2.1"), Some(DynamoRef::Version { version: "1.2.1".into() }));
        assert_eq!(
            DynamoRef::from_field("wheel", "https://x/ai_dynamo-1.3.0.dev20260720-py3-none-any.whl"),
            Some(DynamoRef::Wheel { version: "1.3.0.dev20260720".into(), date: Some("20260720".into()) })
        );
        assert_eq!(DynamoRef::from_field("wheel", "1.3.0.dev1"), Some(DynamoRef::Wheel { version: "1.3.0.dev1".into(), date: None }));
        assert_eq!(DynamoRef::from_field("version", "one.two"), None);
    }

    #[test]
    fn router_versions_are_hashes_or_versions() {
        assert!(matches!(DynamoRef::from_router_version("46520ca59afe992fb5ef61b3197b2316f8df9b2b"), Some(DynamoRef::Hash { .. })));
        assert_eq!(
            DynamoRef::from_router_version("1.4.0.dev20260807"),
            Some(DynamoRef::Wheel { version: "1.4.0.dev20260807".into(), date: Some("20260807".into()) })
        );
        assert_eq!(DynamoRef::from_router_version("0.8.1.post1"), Some(DynamoRef::Version { version: "0.8.1.post1".into() }));
    }
}
