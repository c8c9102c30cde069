//! Which proxy a fetch goes through, read from the environment as git (libcurl)
//! reads it: `no_proxy` first, then the scheme's variable, then `all_proxy`.

/// The proxy named for `url`, if any. `env` looks a variable up
/// (`std::env::var` in use; a table in tests).
pub(super) fn proxy_for(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let get = |names: &[&str]| names.iter().find_map(|n| env(n).filter(|v| !v.trim().is_empty()));
    if get(&["no_proxy", "NO_PROXY"]).is_some_and(|list| bypasses(&list, &host_of(rest))) {
        return None;
    }
    let for_scheme = match scheme.to_ascii_lowercase().as_str() {
        // Lower case only, as libcurl: a CGI sets HTTP_PROXY from a request header.
        "http" => get(&["http_proxy"]),
        "https" => get(&["https_proxy", "HTTPS_PROXY"]),
        _ => None,
    };
    for_scheme.or_else(|| get(&["all_proxy", "ALL_PROXY"]))
}

/// The host of `host[:port]/path` (after the scheme), lower case, without
/// user info or the brackets of an IPv6 address.
fn host_of(rest: &str) -> String {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host.to_ascii_lowercase()
}

/// Whether a `no_proxy` list covers `host`: `*`, the host itself, or a domain
/// it is in (`example.com` and `.example.com` both cover `git.example.com`).
fn bypasses(list: &str, host: &str) -> bool {
    list.split(',')
        .map(|entry| entry.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|entry| !entry.is_empty())
        .any(|entry| entry == "*" || host == entry || host.strip_suffix(&entry).is_some_and(|sub| sub.ends_with('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'v>(vars: &'v [(&'v str, &'v str)]) -> impl Fn(&str) -> Option<String> + 'v {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_scheme_picks_the_variable_and_all_proxy_is_the_fallback() {
        let env = [("https_proxy", "http://tls-proxy:3128"), ("all_proxy", "http://any:3128")];
        assert_eq!(proxy_for("https://github.com/sgl-project/sglang", &with(&env)).as_deref(), Some("http://tls-proxy:3128"));
        assert_eq!(proxy_for("http://git.lan/sglang", &with(&env)).as_deref(), Some("http://any:3128"));
        assert_eq!(proxy_for("https://github.com/x", &with(&[("HTTPS_PROXY", "http://upper:1")])).as_deref(), Some("http://upper:1"));
        assert_eq!(proxy_for("http://git.lan/x", &with(&[("HTTP_PROXY", "http://from-a-header:1")])), None);
        assert_eq!(proxy_for("https://github.com/x", &with(&[])), None);
        assert_eq!(proxy_for("https://github.com/x", &with(&[("https_proxy", " ")])), None);
    }

    #[test]
    fn no_proxy_covers_hosts_and_their_domains_only() {
        let env = |list: &'static str| [("https_proxy", "http://p:1"), ("no_proxy", list)];
        for (list, url, direct) in [
            ("example.com", "https://git.example.com/r", true),
            (".example.com", "https://git.example.com/r", true),
            ("example.com", "https://example.com:8443/r", true),
            ("example.com", "https://notexample.com/r", false),
            ("localhost, 127.0.0.1", "https://user@127.0.0.1:9000/r", true),
            ("::1", "https://[::1]:9000/r", true),
            ("*", "https://github.com/r", true),
            ("GitHub.com", "https://github.com/r", true),
            ("other.org", "https://github.com/r", false),
        ] {
            let found = proxy_for(url, &with(&env(list)));
            assert_eq!(found.is_none(), direct, "no_proxy={list} url={url}: {found:?}");
        }
    }
}
