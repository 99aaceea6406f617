//! What a server URL in the configuration (or given to `mcp add`) must be:
//! absolute `https://` (`http://` only on loopback), with no credentials in
//! it, neither `user:password@` nor a secret-looking query parameter.

use url::{Host, Url};

/// What is wrong with a URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UrlProblem {
    /// Not an absolute http(s) URL, or plain http to a remote host.
    Invalid,
    /// Carries credentials.
    Credentials,
}

/// Query parameters that carry secrets in the wild.
const SECRET_PARAMS: &[&str] = &[
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "client_secret",
    "password",
    "auth",
    "authorization",
];

/// Checks `raw`.
pub(crate) fn check_url(raw: &str) -> Result<(), UrlProblem> {
    let url = Url::parse(raw).map_err(|_| UrlProblem::Invalid)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlProblem::Credentials);
    }
    if url
        .query_pairs()
        .any(|(k, _)| SECRET_PARAMS.contains(&k.to_ascii_lowercase().as_str()))
    {
        return Err(UrlProblem::Credentials);
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        _ => Err(UrlProblem::Invalid),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(check_url("https://example.com/mcp"), Ok(()));
        assert_eq!(check_url("http://127.0.0.1:8080/mcp"), Ok(()));
        assert_eq!(check_url("http://localhost/mcp?x=1"), Ok(()));
        assert_eq!(
            check_url("http://example.com/mcp"),
            Err(UrlProblem::Invalid)
        );
        assert_eq!(check_url("ftp://example.com/"), Err(UrlProblem::Invalid));
        assert_eq!(check_url("example.com/mcp"), Err(UrlProblem::Invalid));
        assert_eq!(
            check_url("https://me:pw@example.com/mcp"),
            Err(UrlProblem::Credentials)
        );
        assert_eq!(
            check_url("https://example.com/mcp?api_key=abc"),
            Err(UrlProblem::Credentials)
        );
        assert_eq!(
            check_url("https://example.com/mcp?Token=abc"),
            Err(UrlProblem::Credentials)
        );
    }
}
