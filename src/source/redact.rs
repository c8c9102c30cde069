//! Credentials in URLs (`https://user:token@host/...`) never reach a message:
//! errors are pasted into issues and CI logs.

/// `text` with the user info of every URL in it replaced by `***`
/// (`https://***@host/repo`). Anything else is left as it is.
pub(super) fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The authority ends where the path, query or fragment starts, or the
        // URL itself ends inside a message.
        let end =
            after.find(|c: char| matches!(c, '/' | '?' | '#' | '`' | '\'' | '"' | '<' | '>') || c.is_whitespace()).unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str("***");
                out.push_str(&authority[userinfo_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_goes_and_everything_else_stays() {
        for (text, want) in [
            ("https://alice:s3cret@github.com/sgl/sglang", "https://***@github.com/sgl/sglang"),
            ("cannot fetch http://tok@127.0.0.1:80/r: HTTP 404", "cannot fetch http://***@127.0.0.1:80/r: HTTP 404"),
            ("a `https://u:p@h` and https://v:q@h2?x=1", "a `https://***@h` and https://***@h2?x=1"),
            ("https://u:p@w@host/r", "https://***@host/r"),
            ("https://github.com/a@b", "https://github.com/a@b"),
            ("no url at all: user@host", "no url at all: user@host"),
            ("ends with scheme://", "ends with scheme://"),
            ("ünïcode https://ü:p@hôst/ü", "ünïcode https://***@hôst/ü"),
        ] {
            assert_eq!(redact_userinfo(text), want, "{text}");
        }
    }
}
