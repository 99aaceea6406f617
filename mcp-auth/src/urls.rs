//! Which URLs this crate will fetch or hand to a browser, whether a
//! protected resource covers the server URL, and the well-known URLs of
//! RFC 9728 and RFC 8414 / OIDC discovery.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use crate::error::{AuthError, UrlRole};

/// The rules for URLs learnt from servers.
///
/// Every URL must be `https`, or `http` to a loopback host; `user:pass@` is
/// refused. A URL that reaches this machine (127.0.0.0/8, `[::1]`, an
/// IPv4-mapped loopback, `0.0.0.0` / `[::]`, `localhost` and
/// `*.localhost`) is allowed only when the MCP server itself is on this
/// machine: a remote server's metadata must not point the client at local
/// ports ([`AuthError::LoopbackAddress`]). An IP literal in a private,
/// link-local or otherwise internal range is refused unless it is the MCP
/// server's own host (the user chose to talk to that host; a metadata
/// document pointing elsewhere inside the network is what server-side
/// request forgery looks like).
///
/// Host names are not resolved here: a host that must stop names resolving
/// to loopback or internal addresses does so in the HTTP client it injects.
///
/// The redirect URI (our own loopback callback) is not a URL learnt from a
/// server and is never checked here.
#[derive(Debug, Clone)]
pub(crate) struct UrlPolicy {
    server_host: Option<Host<String>>,
    /// Whether the MCP server itself is on this machine.
    server_local: bool,
    allow_private_networks: bool,
}

impl UrlPolicy {
    pub(crate) fn new(server: &Url, allow_private_networks: bool) -> Self {
        Self {
            server_host: server.host().map(|h| h.to_owned()),
            server_local: reaches_this_machine(server),
            allow_private_networks,
        }
    }

    /// Parses `raw` and applies [`UrlPolicy::check`].
    pub(crate) fn parse(&self, raw: &str, role: UrlRole) -> Result<Url, AuthError> {
        let url = Url::parse(raw).map_err(|_| AuthError::InvalidUrl { role })?;
        self.check(&url, role)?;
        Ok(url)
    }

    /// Checks a URL about to be fetched or opened.
    pub(crate) fn check(&self, url: &Url, role: UrlRole) -> Result<(), AuthError> {
        match url.scheme() {
            "https" => {}
            "http" if is_loopback(url) => {}
            "http" => return Err(AuthError::InsecureUrl { role }),
            other => {
                return Err(AuthError::ForbiddenScheme {
                    role,
                    scheme: other.to_owned(),
                });
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(AuthError::CredentialsInUrl { role });
        }
        if reaches_this_machine(url) && !self.server_local {
            return Err(AuthError::LoopbackAddress { role });
        }
        let host = url.host().map(|h| h.to_owned());
        let internal = match url.host() {
            Some(Host::Ipv4(ip)) => is_internal(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => is_internal(IpAddr::V6(ip)),
            Some(Host::Domain(_)) => false,
            None => return Err(AuthError::InvalidUrl { role }),
        };
        if internal && !self.allow_private_networks && host != self.server_host {
            return Err(AuthError::PrivateAddress { role });
        }
        Ok(())
    }
}

/// `localhost`, 127.0.0.0/8 or `[::1]` (an IPv4-mapped loopback too).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    }
}

/// Whether `url` names this machine: what [`is_loopback`] accepts, any
/// `*.localhost` name (RFC 6761), and the unspecified addresses `0.0.0.0`
/// and `[::]` (a connection to them reaches local ports). A trailing dot
/// (`localhost.`) is ignored.
pub(crate) fn reaches_this_machine(url: &Url) -> bool {
    if is_loopback(url) {
        return true;
    }
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.strip_suffix('.').unwrap_or(d).to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_unspecified(),
        Some(Host::Ipv6(ip)) => {
            ip.is_unspecified() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_unspecified())
        }
        None => false,
    }
}

/// Private, link-local, shared (CGNAT), unspecified, broadcast or unique-local
/// addresses; loopback is not internal here (it has its own rule).
fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_internal_v4(v4),
            None => is_internal_v6(v6),
        },
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_unspecified() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
}

/// Whether the protected resource `resource` covers the MCP server at
/// `server`: same scheme, host and port, and the resource's path is the
/// server's path or a parent of it on a segment boundary. No fragment.
pub(crate) fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(res) = Url::parse(resource) else {
        return false;
    };
    if res.fragment().is_some()
        || res.scheme() != server.scheme()
        || res.host() != server.host()
        || res.port_or_known_default() != server.port_or_known_default()
    {
        return false;
    }
    if res.query().is_some() && res.query() != server.query() {
        return false;
    }
    let base = res.path().trim_end_matches('/');
    let path = server.path();
    base.is_empty()
        || path == base
        || path.trim_end_matches('/') == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The RFC 9728 well-known URLs for a server, in the order the MCP spec
/// prescribes: path-aware first (when the server URL has a path), then root.
pub(crate) fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let mut out = Vec::with_capacity(2);
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        out.push(with_path(
            server,
            &format!("/.well-known/oauth-protected-resource{path}"),
        ));
    }
    out.push(with_path(server, "/.well-known/oauth-protected-resource"));
    out
}

/// The authorization server metadata URLs for an issuer, in the MCP spec's
/// order: RFC 8414 then OIDC with path insertion, then OIDC path appending
/// (issuers with a path); RFC 8414 then OIDC (issuers without one).
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            with_path(issuer, "/.well-known/oauth-authorization-server"),
            with_path(issuer, "/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            with_path(
                issuer,
                &format!("/.well-known/oauth-authorization-server{path}"),
            ),
            with_path(issuer, &format!("/.well-known/openid-configuration{path}")),
            with_path(issuer, &format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// `url`'s origin with `path` and no query or fragment.
pub(crate) fn with_path(url: &Url, path: &str) -> Url {
    let mut out = url.clone();
    out.set_path(path);
    out.set_query(None);
    out.set_fragment(None);
    out
}

/// `scheme://host[:port]` of a URL, without a trailing slash.
pub(crate) fn origin_string(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> UrlPolicy {
        UrlPolicy::new(&Url::parse("https://mcp.example.com/mcp").unwrap(), false)
    }

    fn local_policy() -> UrlPolicy {
        UrlPolicy::new(&Url::parse("http://127.0.0.1:8000/mcp").unwrap(), false)
    }

    #[test]
    fn https_everywhere_http_on_loopback_only() {
        let p = policy();
        assert!(
            p.parse(
                "https://as.example.com/authorize",
                UrlRole::AuthorizationEndpoint
            )
            .is_ok()
        );
        let local = local_policy();
        for ok in [
            "https://as.example.com/authorize",
            "http://localhost:8080/x",
            "http://127.0.0.1/x",
            "http://[::1]:9/x",
        ] {
            assert!(
                local.parse(ok, UrlRole::AuthorizationEndpoint).is_ok(),
                "{ok}"
            );
        }
        assert!(matches!(
            local.parse("http://as.example.com/", UrlRole::TokenEndpoint),
            Err(AuthError::InsecureUrl { .. })
        ));
        assert!(matches!(
            p.parse("http://as.example.com/", UrlRole::TokenEndpoint),
            Err(AuthError::InsecureUrl {
                role: UrlRole::TokenEndpoint
            })
        ));
        for (bad, scheme) in [
            ("javascript:alert(1)", "javascript"),
            ("data:text/html,hi", "data"),
            ("file:///etc/passwd", "file"),
        ] {
            match p.parse(bad, UrlRole::AuthorizationEndpoint) {
                Err(AuthError::ForbiddenScheme { scheme: s, .. }) => assert_eq!(s, scheme),
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert!(matches!(
            p.parse("https://u:p@as.example.com/", UrlRole::TokenEndpoint),
            Err(AuthError::CredentialsInUrl { .. })
        ));
    }

    #[test]
    fn internal_addresses_are_refused_unless_loopback_or_the_server_itself() {
        let p = policy();
        for bad in [
            "https://10.0.0.1/x",
            "https://192.168.1.1/x",
            "https://172.16.0.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/x",
            "https://[fe80::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:10.0.0.1]/x",
            "https://167772161/x",
        ] {
            assert!(
                matches!(
                    p.parse(bad, UrlRole::ResourceMetadata),
                    Err(AuthError::PrivateAddress { .. })
                ),
                "{bad}"
            );
        }
        assert!(
            p.parse("https://8.8.8.8/x", UrlRole::ResourceMetadata)
                .is_ok()
        );
        let open = UrlPolicy::new(&Url::parse("https://mcp.example.com/mcp").unwrap(), true);
        assert!(
            open.parse("https://10.255.255.1/x", UrlRole::AuthorizationServer)
                .is_ok(),
            "a host that allows private networks may use them"
        );
        let own = UrlPolicy::new(&Url::parse("https://10.1.2.3/mcp").unwrap(), false);
        assert!(
            own.parse("https://10.1.2.3/.well-known/x", UrlRole::ResourceMetadata)
                .is_ok()
        );
        assert!(
            own.parse("https://10.1.2.4/x", UrlRole::ResourceMetadata)
                .is_err()
        );
        let open = UrlPolicy::new(&Url::parse("https://a.example/mcp").unwrap(), true);
        assert!(
            open.parse("https://10.1.2.4/x", UrlRole::ResourceMetadata)
                .is_ok()
        );
    }

    #[test]
    fn this_machine_is_refused_unless_the_server_is_on_it() {
        let remote = policy();
        let open = UrlPolicy::new(&Url::parse("https://mcp.example.com/mcp").unwrap(), true);
        for bad in [
            "http://127.0.0.1:80/.well-known/oauth-protected-resource",
            "https://127.0.0.1/x",
            "http://127.1.2.3:9/x",
            "http://[::1]:9/x",
            "https://[::ffff:127.0.0.1]/x",
            "http://localhost:8080/register",
            "https://LOCALHOST./x",
            "https://app.localhost/authorize",
            "https://a.b.Localhost/x",
            "https://0.0.0.0/x",
            "https://[::]/x",
            "https://2130706433/x",
        ] {
            for p in [&remote, &open] {
                for role in [
                    UrlRole::ResourceMetadata,
                    UrlRole::AuthorizationServer,
                    UrlRole::RegistrationEndpoint,
                    UrlRole::TokenEndpoint,
                    UrlRole::AuthorizationEndpoint,
                ] {
                    match p.parse(bad, role) {
                        Err(AuthError::LoopbackAddress { role: r }) => assert_eq!(r, role),
                        other => panic!("{bad} as {role}: {other:?}"),
                    }
                }
            }
        }
        // Names that merely contain "localhost" are not this machine.
        for ok in [
            "https://localhost.example.com/x",
            "https://mylocalhost/x",
            "https://localhost-as.example/x",
        ] {
            assert!(
                remote.parse(ok, UrlRole::AuthorizationServer).is_ok(),
                "{ok}"
            );
        }
        // A server on this machine may use this machine, under any of its names.
        for server in [
            "http://127.0.0.1:8000/mcp",
            "http://localhost:8000/mcp",
            "http://[::1]:8000/mcp",
            "https://mcp.localhost/mcp",
        ] {
            let local = UrlPolicy::new(&Url::parse(server).unwrap(), false);
            for ok in [
                "http://127.0.0.1:80/x",
                "http://localhost:9/register",
                "http://[::1]:9/token",
                "https://app.localhost/authorize",
            ] {
                assert!(
                    local.parse(ok, UrlRole::TokenEndpoint).is_ok(),
                    "{server}: {ok}"
                );
            }
        }
    }

    #[test]
    fn resource_covers_the_server_or_a_parent_path() {
        let server = Url::parse("https://mcp.example.com/public/mcp").unwrap();
        for ok in [
            "https://mcp.example.com/public/mcp",
            "https://mcp.example.com/public/mcp/",
            "https://mcp.example.com/public",
            "https://mcp.example.com",
            "https://mcp.example.com/",
            "HTTPS://MCP.EXAMPLE.COM/public/mcp",
            "https://mcp.example.com:443/public/mcp",
        ] {
            assert!(resource_covers(ok, &server), "{ok}");
        }
        for bad in [
            "https://evil.example.com/public/mcp",
            "http://mcp.example.com/public/mcp",
            "https://mcp.example.com:8443/public/mcp",
            "https://mcp.example.com/pub",
            "https://mcp.example.com/public/mcp/deeper",
            "https://mcp.example.com/other",
            "https://mcp.example.com/public/mcp#frag",
            "not a url",
        ] {
            assert!(!resource_covers(bad, &server), "{bad}");
        }
    }

    #[test]
    fn well_known_urls_follow_the_spec_order() {
        let server = Url::parse("https://example.com/public/mcp?x=1").unwrap();
        let urls: Vec<String> = resource_metadata_urls(&server)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        let root = Url::parse("https://example.com").unwrap();
        assert_eq!(resource_metadata_urls(&root).len(), 1);

        let tenant = Url::parse("https://auth.example.com/tenant1").unwrap();
        let urls: Vec<String> = server_metadata_urls(&tenant)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let plain = Url::parse("https://auth.example.com").unwrap();
        let urls: Vec<String> = server_metadata_urls(&plain)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(origin_string(&plain), "https://auth.example.com");
    }
}
