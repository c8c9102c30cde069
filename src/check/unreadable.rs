//! EA305: a recipe the audit was asked to read and could not; EA306: a launch
//! script's command line, or part of it, that could not be read. The gate must
//! fail closed: a change that breaks a file's syntax, or hides a flag behind a
//! value nobody can know, would otherwise pass unseen.

use crate::finding::{Finding, FindingKind, Location};
use crate::recipe::{ArgToken, Deployment, NoteLevel, RecipeError, RecipeFile, RecipeLink};

/// The finding for a file that could not be loaded, at the place the error names.
pub(crate) fn unreadable(error: &RecipeError) -> Finding {
    // Only a duplicate key knows its byte offset in the file (a syntax error's
    // label indexes its excerpt, not the file).
    let (line, column, offset) = match error {
        RecipeError::Yaml { line, column, .. } => (*line, *column, None),
        RecipeError::DuplicateKey { second_line, second_column, second_offset, .. } => (*second_line, *second_column, Some(*second_offset)),
        RecipeError::Shape { line, .. } => (*line, 1, None),
        RecipeError::Io { .. } | RecipeError::NotUtf8 { .. } | RecipeError::NotText { .. } => (1, 1, None),
    };
    let path = error.path().to_string();
    let location = Location { path: path.clone(), line, column, offset, len: offset.map(|_| 0) };
    Finding::new(FindingKind::UnreadableRecipe { reason: reason(error) }, location, path)
}

/// EA305 for each part of a file that loaded but could not be read (an
/// error-level note: a key srtctl rejects, a value of the wrong shape), at
/// its place. The rest of the file is audited.
pub(crate) fn unread_parts(file: &RecipeFile) -> Vec<Finding> {
    file.notes
        .iter()
        .filter(|n| n.level == NoteLevel::Error)
        .map(|n| {
            let location = match &n.span {
                Some(span) => Location::from_span(span),
                None => Location { path: file.path.clone(), line: 1, column: 1, offset: None, len: None },
            };
            let subject = n.span.as_ref().and_then(|s| file.text.get(s.offset..s.end())).filter(|t| t.len() <= 80 && !t.contains('\n'));
            Finding::new(FindingKind::UnreadablePart { reason: n.message.clone() }, location, subject.unwrap_or(&file.path))
        })
        .collect()
}

/// The finding for a master-config entry whose link names a file that is not there.
pub(crate) fn missing_link(entry_key: &str, link: &RecipeLink, target: &str) -> Finding {
    Finding::new(
        FindingKind::MissingLink { entry: entry_key.to_string(), target: target.to_string() },
        Location::from_span(&link.span),
        target,
    )
}

/// A link whose selector names no variant of the file it links.
pub(crate) fn missing_variant(entry_key: &str, link: &RecipeLink, target: &str, selector: &str, variants: &[&str]) -> Finding {
    let quoted = |vs: &[&str]| vs.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
    let variants = match variants.len() {
        0 => "none".to_string(),
        1..=5 => quoted(variants),
        n => format!("{} and {} more", quoted(&variants[..5]), n - 5),
    };
    Finding::new(
        FindingKind::MissingVariant { entry: entry_key.to_string(), target: target.to_string(), selector: selector.to_string(), variants },
        Location::from_span(&link.span),
        target,
    )
}

/// EA306 for each launch whose command line could not be read at all (built by
/// `eval` of a string not known, a program not known, a launcher named but never
/// reached): the role says why.
pub(crate) fn unread_launches(file: &RecipeFile) -> Vec<Finding> {
    let mut out = Vec::new();
    for dep in &file.deployments {
        for role in dep.roles.iter().filter(|r| r.argv.is_none() && r.flags.is_empty()) {
            let (Some(why), Some(span)) = (&role.dynamic, &role.span) else { continue };
            let kind = FindingKind::UnreadLaunch { words: None, why: why.clone() };
            out.push(
                Finding::new(kind, Location::from_span(span), &role.role)
                    .role(Some(&role.role))
                    .deployment(&dep.name)
                    .variant(dep.variant.as_deref()),
            );
        }
        // A configuration file the command line names and that could not be read.
        for role in &dep.roles {
            let Some(unread) = &role.config_unread else { continue };
            let kind = FindingKind::UnreadLaunch { words: Some(unread.words.clone()), why: unread.why.clone() };
            out.push(
                Finding::new(kind, Location::from_span(&unread.span), &unread.words)
                    .role(Some(&role.role))
                    .deployment(&dep.name)
                    .variant(dep.variant.as_deref()),
            );
        }
    }
    out
}

/// EA306 for words of a launch command where a flag is expected and whose text
/// is not known (`$EXTRA_ARGS` from the environment): the flags they stand for
/// are not audited. A value from the environment right after its flag is fine.
pub(crate) fn unread_words(dep: &Deployment, role: &str, unbound: &[ArgToken]) -> Vec<Finding> {
    unbound
        .iter()
        .filter(|t| t.value.is_dynamic())
        .map(|t| {
            let why = t.unread.clone().unwrap_or_else(|| "its value is not known".into());
            let why = match why.strip_prefix(&format!("`{}` ", t.raw)) {
                Some(rest) => format!("its value {rest}"),
                None => why,
            };
            let kind = FindingKind::UnreadLaunch { words: Some(t.raw.clone()), why };
            Finding::new(kind, Location::from_span(&t.span), &t.raw)
                .role(Some(role))
                .deployment(&dep.name)
                .variant(dep.variant.as_deref())
                .condition(t.condition.clone())
        })
        .collect()
}

/// The error without the path prefix its `Display` starts with.
fn reason(error: &RecipeError) -> String {
    let text = error.to_string();
    let path = error.path();
    let rest = text.strip_prefix(path).unwrap_or(&text);
    // `path:line:col: message` or `path: message`.
    let rest = rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    rest.trim_start().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::{load_text, LinkMapping};

    #[test]
    fn a_yaml_error_is_an_error_finding_at_its_line() {
        let err = load_text("r.yaml", "name: a\nbackend:\n\t type: sglang\n".into(), &LinkMapping::default()).unwrap_err();
        let f = unreadable(&err);
        assert_eq!(f.code(), "EA305");
        assert_eq!(f.severity, crate::codes::Severity::Error);
        assert_eq!((f.location.path.as_str(), f.location.line), ("r.yaml", 3));
        assert!(f.message().starts_with("cannot be read as a recipe, so nothing in it was audited: YAML syntax error"), "{}", f.message());
    }

    #[test]
    fn an_unreadable_file_is_located_at_its_start() {
        let err = RecipeError::NotUtf8 { path: "x.yaml".into(), offset: 9 };
        let f = unreadable(&err);
        assert_eq!((f.location.line, f.location.column), (1, 1));
        assert!(f.message().ends_with("not valid UTF-8 (first bad byte at offset 9)"), "{}", f.message());
    }
}
