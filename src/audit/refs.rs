//! Which engine refs a deployment runs today and is bumped to: from the recipe's
//! image and Dynamo spec, unless the command line overrides them.

use crate::profiles::Engine;
use crate::recipe::{Deployment, DynamoRef, ImageTag};
use crate::source::{EngineRepo, SourceError};

/// A ref a deployment maps to, and how it was found (said in the report).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct DerivedRef {
    /// What to resolve in the engine repo (a tag, a sha).
    pub wanted: String,
    /// How it was derived: `--to`, `image lmsysorg/sglang:v0.5.19-cu130`, ...
    pub how: String,
}

/// Why a recipe's engine could not be mapped to a ref (EA303).
#[derive(Debug, Clone)]
pub(crate) struct Unresolved {
    /// The engine, as shown (`SGLang`, `Dynamo`).
    pub engine: &'static str,
    /// The value as written (the image, the `dynamo:` value).
    pub what: String,
    pub message: String,
}

/// The ref of `engine` a container image stands for: its version tag, else the
/// commit a nightly tag names. `Ok(None)` when the recipe names no image.
/// A Dynamo runtime image names a Dynamo release: the engine inside is the
/// release it pins, read from `dynamo` (Dynamo's source, when given).
pub(crate) fn image_ref(
    engine: Engine,
    dep: &Deployment,
    repo: &EngineRepo,
    dynamo: Option<&EngineRepo>,
) -> Result<Option<DerivedRef>, Unresolved> {
    let (Some(container), Some(image)) = (dep.entry_image.as_ref().map(|e| &e.image).or(dep.container.as_ref()), &dep.image) else {
        return Ok(None);
    };
    let how = match &dep.entry_image {
        Some(entry) => format!("image {} (of master key {})", entry.image.value, entry.key),
        None => format!("image {}", container.value),
    };
    if super::runtime_image::is_dynamo_runtime(image) {
        return match super::runtime_image::engine_ref(engine, image, &container.value, repo, dynamo) {
            Ok((wanted, rule)) => Ok(Some(DerivedRef { wanted, how: format!("{how} ({rule})") })),
            Err(message) => Err(Unresolved { engine: engine.display, what: container.value.clone(), message }),
        };
    }
    for wanted in image_candidates(image) {
        if let Ok(Some(resolved)) = repo.try_resolve(&wanted) {
            return Ok(Some(DerivedRef { wanted: resolved.wanted, how }));
        }
    }
    // A dated build that names no release or commit (`rocm/atom-dev:nightly_
    // 202607231538`, `..._atom20260511`), or a dated dev build no tag names
    // (`1.3.0rc26.dev202609040000`: PEP 440 puts it after the release below
    // 1.3.0rc26 and before 1.3.0rc26): the last commit on the default branch
    // at or before its build time, as for Dynamo's nightly wheels.
    if let (None, Some(date)) = (&image.commit, &image.date) {
        let unresolved = |detail: String| Unresolved {
            engine: engine.display,
            what: container.value.clone(),
            message: format!("image `{}` maps to no {} ref in {}: {detail}", container.value, engine.display, repo.spec),
        };
        let when = match &image.time {
            Some(t) => format!("{date} {t} UTC"),
            None => date.clone(),
        };
        let at = build_time_unix(date, image.time.as_deref()).ok_or_else(|| unresolved(format!("`{date}` is not a date")))?;
        let commit = last_commit_by(repo, at, &when).map_err(unresolved)?;
        let rule = match &image.version {
            Some(v) => format!("dated dev build of {v}, which no tag names"),
            None => "dated build".to_string(),
        };
        let how = format!("{how} ({rule}: last default-branch commit at or before {when}, {})", short(&commit));
        return Ok(Some(DerivedRef { wanted: commit, how }));
    }
    let tried = image_candidates(image);
    let tried = match tried.is_empty() {
        true if crate::recipe::is_container_alias(&container.value) => {
            "nothing: an srt-slurm container alias names no image; audit through the master config that runs it (--master FILE), whose entry's image it stands for, or pass --from".to_string()
        }
        true => "nothing: the tag names no version or commit".to_string(),
        false => tried.join(", "),
    };
    Err(Unresolved {
        engine: engine.display,
        what: container.value.clone(),
        message: format!("image `{}` maps to no {} ref in {} (tried {tried})", container.value, engine.display, repo.spec),
    })
}

fn image_candidates(image: &ImageTag) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = &image.version {
        out.push(format!("v{v}"));
        out.push(v.clone());
    }
    if let Some(c) = &image.commit {
        out.push(c.clone());
    }
    out
}

/// The Dynamo ref a recipe's `dynamo:` block stands for. A nightly wheel maps to
/// the last commit on the default branch at or before its build date.
pub(crate) fn dynamo_ref(dep: &Deployment, repo: &EngineRepo) -> Result<Option<DerivedRef>, Unresolved> {
    let Some(spec) = &dep.dynamo else { return Ok(None) };
    let unresolved = |detail: String| Unresolved {
        engine: crate::profiles::DYNAMO.display,
        what: spec.raw.value.clone(),
        message: format!("dynamo {} `{}` maps to no Dynamo ref in {}: {detail}", spec.field, spec.raw.value, repo.spec),
    };
    let Some(reference) = &spec.reference else {
        return Err(unresolved("the value is not a commit hash or a PEP 440 version".into()));
    };
    let how = format!("dynamo {}: {}", spec.field, spec.raw.value);
    let found = |r: Result<crate::source::ResolvedRef, SourceError>| r.map(|r| r.wanted).map_err(|e| unresolved(e.to_string()));
    let wanted = match reference {
        DynamoRef::Hash { hash } => found(repo.resolve(hash))?,
        DynamoRef::Version { version } | DynamoRef::Wheel { version, date: None } => found(repo.resolve(version))?,
        DynamoRef::Wheel { version, date: Some(date) } => {
            if let Ok(Some(r)) = repo.try_resolve(version) {
                r.wanted
            } else {
                let end_of_day = date_end_unix(date).ok_or_else(|| unresolved(format!("`{date}` is not a YYYYMMDD date")))?;
                let commit = last_commit_by(repo, end_of_day, date).map_err(unresolved)?;
                let how = format!("{how} (nightly: last default-branch commit at or before {date}, {})", short(&commit));
                return Ok(Some(DerivedRef { wanted: commit, how }));
            }
        }
    };
    Ok(Some(DerivedRef { wanted, how }))
}

/// The last commit on the default branch at or before `at` (a Unix time,
/// shown as `when`): what a dated build (a nightly wheel or image) was built from.
/// A time after the tip's commit is refused: the clone may lack every commit
/// the build was made from, so its newest commit would be a guess.
fn last_commit_by(repo: &EngineRepo, at: i64, when: &str) -> Result<String, String> {
    let (tip, tip_time) = repo.default_branch_tip().map_err(|e| e.to_string())?;
    if tip_time < at {
        return Err(format!(
            "the clone is older than the image: its default branch ends at {} (committed {}), before {when}; fetch the source again, or map the image to a ref in .engine-audit.yaml",
            short(&tip),
            utc_minute(tip_time)
        ));
    }
    repo.last_commit_at_or_before(None, at)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no commit on the default branch at or before {when}"))
}

fn short(commit: &str) -> &str {
    &commit[..12.min(commit.len())]
}

/// A Unix time as `YYYY-MM-DD HH:MM UTC` (civil from days, Howard Hinnant's algorithm).
fn utc_minute(unix: i64) -> String {
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", secs / 3600, secs % 3600 / 60)
}

/// A build's time as a Unix time: `HHMM` (UTC, to its last second) of the
/// date when the tag gives it, else the end of the day.
fn build_time_unix(date: &str, time: Option<&str>) -> Option<i64> {
    let end_of_day = date_end_unix(date)?;
    match time {
        Some(t) => {
            let (h, m): (i64, i64) = (t.get(..2)?.parse().ok()?, t.get(2..4)?.parse().ok()?);
            Some(end_of_day - 86_399 + h * 3600 + m * 60 + 59)
        }
        None => Some(end_of_day),
    }
}

/// 23:59:59 UTC of a `YYYYMMDD` date, as a Unix time.
pub(crate) fn date_end_unix(date: &str) -> Option<i64> {
    if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (date[..4].parse().ok()?, date[4..6].parse().ok()?, date[6..].parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days from civil date (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = if y2 >= 0 { y2 } else { y2 - 399 } / 400;
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + 86_399)
}

#[cfg(test)]
mod tests {
    use super::{build_time_unix, date_end_unix, utc_minute};

    #[test]
    fn a_commit_time_reads_as_its_utc_minute() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(1_789_084_799), "2026-09-10 23:59 UTC");
        assert_eq!(utc_minute(951_782_400), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn a_build_time_is_its_minute_or_the_end_of_its_day() {
        let day = date_end_unix("20260723").unwrap();
        assert_eq!(build_time_unix("20260723", None), Some(day));
        assert_eq!(build_time_unix("20260723", Some("1538")), Some(day - 86_399 + 15 * 3600 + 38 * 60 + 59));
        assert_eq!(build_time_unix("20260723", Some("15")), None);
    }

    #[test]
    fn nightly_dates_end_at_midnight_utc() {
        assert_eq!(date_end_unix("19700101"), Some(86_399));
        assert_eq!(date_end_unix("20260910"), Some(1_789_084_799));
        assert_eq!(date_end_unix("2026091"), None);
        assert_eq!(date_end_unix("20261310"), None);
    }
}
