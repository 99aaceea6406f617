//! Finding the authorization server: protected resource metadata from the
//! challenge, path-aware then root well-known URLs, the resource check, the
//! RFC 8414 / OIDC order, the issuer check, the 2025-03-26 fallbacks, and
//! the URL rules.

#[path = "support/fixture.rs"]
mod support;

use mcp_auth::{AuthError, UrlRole};
use support::{AsConfig, MetaLoc, PrmLoc, ResourceServer, RsConfig, call, pair, provider, refused};

#[tokio::test]
async fn metadata_comes_from_the_challenge_url_first() {
    let rs_config = RsConfig {
        prm: PrmLoc::Custom("/custom/metadata.json".into()),
        ..RsConfig::default()
    };
    let (auth, rs) = pair(AsConfig::default(), rs_config).await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let paths = rs.log.paths();
    assert!(paths.contains(&"/custom/metadata.json".to_owned()));
    assert!(
        !paths.iter().any(|p| p.starts_with("/.well-known/")),
        "well-known URLs were probed: {paths:?}"
    );
    assert_eq!(auth.log.to("/token").len(), 1);
}

#[tokio::test]
async fn without_the_header_the_path_aware_url_comes_before_the_root_one() {
    let (_auth, rs) = pair(
        AsConfig::default(),
        RsConfig {
            header_param: false,
            ..RsConfig::default()
        },
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let paths = rs.log.paths();
    assert!(paths.contains(&"/.well-known/oauth-protected-resource/mcp".to_owned()));
    assert!(!paths.contains(&"/.well-known/oauth-protected-resource".to_owned()));
}

#[tokio::test]
async fn the_root_url_is_the_fallback_and_its_pathless_resource_is_sent_verbatim() {
    let (auth, rs) = pair(
        AsConfig::default(),
        RsConfig {
            prm: PrmLoc::Root,
            header_param: false,
            ..RsConfig::default()
        },
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let wk: Vec<String> = rs
        .log
        .paths()
        .into_iter()
        .filter(|p| p.starts_with("/.well-known/"))
        .collect();
    assert_eq!(
        wk,
        [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource"
        ]
    );
    // `http://127.0.0.1:PORT`, not `http://127.0.0.1:PORT/`.
    let authorize = &auth.log.to("/authorize")[0];
    assert_eq!(authorize.query("resource"), Some(rs.base()));
    assert_eq!(auth.log.to("/token")[0].form("resource"), Some(rs.base()));
}

#[tokio::test]
async fn a_resource_that_does_not_cover_the_server_is_refused() {
    let (auth, rs) = pair(
        AsConfig::default(),
        RsConfig {
            resource: Some("https://evil.example.com/mcp".into()),
            ..RsConfig::default()
        },
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert!(matches!(
        Some(refused(&p, &rs.url(), "tools/list").await),
        Some(AuthError::ResourceMismatch)
    ));
    assert!(
        auth.log.hits().is_empty(),
        "the authorization server was contacted"
    );
}

#[tokio::test]
async fn server_metadata_is_searched_in_the_spec_order_for_an_issuer_with_a_path() {
    let (auth, rs) = pair(
        AsConfig {
            prefix: "/tenant1".into(),
            metadata_at: vec![MetaLoc::OidcAppend],
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let metadata: Vec<String> = auth
        .log
        .paths()
        .into_iter()
        .filter(|p| p.contains(".well-known"))
        .collect();
    assert_eq!(
        metadata,
        [
            "/.well-known/oauth-authorization-server/tenant1",
            "/.well-known/openid-configuration/tenant1",
            "/tenant1/.well-known/openid-configuration",
        ]
    );
    assert!(
        !auth
            .log
            .paths()
            .contains(&"/.well-known/oauth-authorization-server".to_owned())
    );
}

#[tokio::test]
async fn oidc_discovery_follows_rfc_8414_for_an_issuer_without_a_path() {
    let (auth, rs) = pair(
        AsConfig {
            metadata_at: vec![MetaLoc::OidcInsert],
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let metadata: Vec<String> = auth
        .log
        .paths()
        .into_iter()
        .filter(|p| p.contains(".well-known"))
        .collect();
    assert_eq!(
        metadata,
        [
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration"
        ]
    );
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused_before_any_use() {
    let (auth, rs) = pair(
        AsConfig {
            metadata_issuer: Some("https://attacker.example.com".into()),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert!(matches!(
        Some(refused(&p, &rs.url(), "tools/list").await),
        Some(AuthError::IssuerMismatch)
    ));
    assert_eq!(
        auth.log.paths(),
        ["/.well-known/oauth-authorization-server"],
        "endpoints of the poisoned metadata were used"
    );
}

#[tokio::test]
async fn a_2025_03_26_server_has_its_metadata_at_its_root() {
    let rs = ResourceServer::start(
        RsConfig {
            prm: PrmLoc::Absent,
            embedded_as: Some(AsConfig {
                prefix: "".into(),
                ..AsConfig::default()
            }),
            ..RsConfig::default()
        },
        vec![],
        vec![],
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let log = rs.embedded_log();
    assert!(
        log.paths()
            .contains(&"/.well-known/oauth-authorization-server".to_owned())
    );
    // Without protected resource metadata the resource is the server URL.
    assert_eq!(
        log.to("/authorize")[0].query("resource"),
        Some(rs.url().as_str())
    );
    assert_eq!(log.to("/register").len(), 1);
}

#[tokio::test]
async fn without_any_metadata_the_default_endpoints_are_used() {
    let rs = ResourceServer::start(
        RsConfig {
            prm: PrmLoc::Absent,
            embedded_as: Some(AsConfig {
                metadata_at: vec![],
                ..AsConfig::default()
            }),
            ..RsConfig::default()
        },
        vec![],
        vec![],
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let log = rs.embedded_log();
    for endpoint in ["/register", "/authorize", "/token"] {
        assert_eq!(log.to(endpoint).len(), 1, "{endpoint}");
    }
    // PKCE is still S256 (the 2025-03-26 revision required PKCE).
    assert_eq!(
        log.to("/authorize")[0].query("code_challenge_method"),
        Some("S256")
    );
}

#[tokio::test]
async fn no_metadata_and_no_default_registration_endpoint_is_named_as_no_oauth() {
    // A server that asks for a token and publishes nothing about OAuth,
    // with nothing at /register: not a registration failure.
    let rs = ResourceServer::start(
        RsConfig {
            prm: PrmLoc::Absent,
            ..RsConfig::default()
        },
        vec![],
        vec![],
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    let error = refused(&p, &rs.url(), "tools/list").await;
    assert!(matches!(error, AuthError::NoOAuth), "{error:?}");
    assert!(error.to_string().contains("no sign of OAuth"), "{error}");
    assert_eq!(rs.log.to("/register").len(), 1);
}

#[tokio::test]
async fn the_fallbacks_can_be_turned_off() {
    let rs = ResourceServer::start(
        RsConfig {
            prm: PrmLoc::Absent,
            embedded_as: Some(AsConfig::default()),
            ..RsConfig::default()
        },
        vec![],
        vec![],
    )
    .await;
    let p = provider(&rs.url(), |c| c.legacy_discovery(false));
    assert!(matches!(
        Some(refused(&p, &rs.url(), "tools/list").await),
        Some(AuthError::NoResourceMetadata)
    ));
}

#[tokio::test]
async fn metadata_urls_on_private_or_link_local_addresses_are_refused() {
    for (servers, role) in [
        (
            vec!["https://169.254.169.254/latest".to_owned()],
            UrlRole::AuthorizationServer,
        ),
        (
            vec!["https://10.0.0.1".to_owned()],
            UrlRole::AuthorizationServer,
        ),
    ] {
        let rs = ResourceServer::start(RsConfig::default(), servers, vec![]).await;
        let p = provider(&rs.url(), |c| c);
        match Some(refused(&p, &rs.url(), "tools/list").await) {
            Some(AuthError::PrivateAddress { role: r }) => assert_eq!(r, role),
            other => panic!("{other:?}"),
        }
    }
    // Loopback is fine: every other test here runs on it. (Allowing private
    // networks is checked on the URL rule itself, in `src/urls.rs`: a test
    // here must never send traffic to a private address.)
}

#[tokio::test]
async fn plain_http_authorization_servers_are_refused_off_loopback() {
    let rs = ResourceServer::start(
        RsConfig::default(),
        vec!["http://as.example.com".into()],
        vec![],
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert!(matches!(
        Some(refused(&p, &rs.url(), "tools/list").await),
        Some(AuthError::InsecureUrl {
            role: UrlRole::AuthorizationServer
        })
    ));
}

#[tokio::test]
async fn authorization_urls_with_dangerous_schemes_are_refused() {
    for (endpoint, scheme) in [
        ("javascript:alert(document.cookie)", "javascript"),
        ("data:text/html,<script>alert(1)</script>", "data"),
        ("file:///etc/passwd", "file"),
    ] {
        let (auth, rs) = pair(
            AsConfig {
                authorization_endpoint: Some(endpoint.into()),
                ..AsConfig::default()
            },
            RsConfig::default(),
        )
        .await;
        let p = provider(&rs.url(), |c| c);
        match Some(refused(&p, &rs.url(), "tools/list").await) {
            Some(AuthError::ForbiddenScheme { role, scheme: s }) => {
                assert_eq!(role, UrlRole::AuthorizationEndpoint);
                assert_eq!(s, scheme);
            }
            other => panic!("{endpoint}: {other:?}"),
        }
        assert!(auth.log.to("/register").is_empty());
    }
}

#[tokio::test]
async fn a_server_url_off_loopback_must_be_https() {
    let handler =
        std::sync::Arc::new(mcp_auth::HeadlessRedirectFlow::new(support::REDIRECT_URI).unwrap());
    let err = mcp_auth::OAuthProvider::new(
        mcp_auth::OAuthConfig::new("http://mcp.example.com/mcp"),
        handler,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        AuthError::InsecureUrl {
            role: UrlRole::Server
        }
    ));
}

/// An [`AuthHttpClient`](mcp_auth::AuthHttpClient) that answers from a
/// table of URLs (anything else: 404) and records every request, so a
/// "remote" MCP server can be played without leaving the machine.
#[derive(Debug, Default)]
struct Scripted {
    answers: std::collections::HashMap<String, serde_json::Value>,
    seen: std::sync::Mutex<Vec<(mcp_auth::HttpMethod, String)>>,
}

impl Scripted {
    fn with(mut self, url: &str, body: serde_json::Value) -> Self {
        self.answers.insert(url.to_owned(), body);
        self
    }

    fn seen(&self) -> Vec<(mcp_auth::HttpMethod, String)> {
        self.seen.lock().unwrap().clone()
    }
}

impl mcp_auth::AuthHttpClient for Scripted {
    fn send(
        &self,
        request: mcp_auth::AuthHttpRequest,
    ) -> mcp_transport::BoxFuture<'_, Result<mcp_auth::AuthHttpResponse, AuthError>> {
        let url = request.url.to_string();
        self.seen
            .lock()
            .unwrap()
            .push((request.method, url.clone()));
        let (status, body) = match self.answers.get(&url) {
            Some(doc) => (200, doc.to_string().into_bytes()),
            None => (404, b"{}".to_vec()),
        };
        Box::pin(async move { Ok(mcp_auth::AuthHttpResponse::new(status, None, body)) })
    }
}

/// A remote MCP server (not on loopback) whose metadata points the client
/// at local ports is refused by name, and nothing is sent there: not the
/// metadata fetch, not the registration POST.
#[tokio::test]
async fn a_remote_servers_metadata_may_not_point_at_this_machine() {
    use mcp_transport::CredentialProvider;
    use std::sync::Arc;

    const MCP_URL: &str = "https://mcp.example.com/mcp";
    const PRM: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    const AS_META: &str = "https://as.example.com/.well-known/oauth-authorization-server";
    let provider_for = |http: Arc<Scripted>| {
        let handler = Arc::new(mcp_auth::HeadlessRedirectFlow::with_http_client(
            support::REDIRECT_URI,
            http.clone(),
        ));
        mcp_auth::OAuthProvider::new(mcp_auth::OAuthConfig::new(MCP_URL), handler)
            .unwrap()
            .with_http_client(http)
    };
    let as_metadata = |patch: serde_json::Value| {
        let mut doc = serde_json::json!({
            "issuer": "https://as.example.com",
            "authorization_endpoint": "https://as.example.com/authorize",
            "token_endpoint": "https://as.example.com/token",
            "registration_endpoint": "https://as.example.com/register",
            "code_challenge_methods_supported": ["S256"],
        });
        for (k, v) in patch.as_object().unwrap() {
            doc[k] = v.clone();
        }
        doc
    };
    let prm = |servers: &[&str]| serde_json::json!({"resource": MCP_URL, "authorization_servers": servers});
    let local = |seen: &[(mcp_auth::HttpMethod, String)]| {
        seen.iter()
            .filter(|(_, u)| {
                !u.starts_with("https://mcp.example.com/")
                    && !u.starts_with("https://as.example.com/")
            })
            .cloned()
            .collect::<Vec<_>>()
    };

    // The 401's `resource_metadata` names a local port: not fetched at all.
    for challenge_url in [
        "http://127.0.0.1:80/.well-known/oauth-protected-resource",
        "http://localhost:6379/",
        "http://[::1]:8080/x",
        "https://admin.localhost/x",
    ] {
        let http = Arc::new(Scripted::default().with(PRM, prm(&["https://as.example.com"])));
        let p = provider_for(http.clone());
        let header = format!("Bearer resource_metadata=\"{challenge_url}\"");
        let err = support::auth_error(
            p.on_unauthorized(mcp_transport::Refusal::new(401, Some(&header)))
                .await
                .unwrap_err(),
        );
        assert!(
            matches!(
                err,
                AuthError::LoopbackAddress {
                    role: UrlRole::ResourceMetadata
                }
            ),
            "{challenge_url}: {err:?}"
        );
        assert!(http.seen().is_empty(), "{:?}", http.seen());
    }

    // The protected resource metadata names a local authorization server.
    let http = Arc::new(Scripted::default().with(PRM, prm(&["http://127.0.0.1:80"])));
    let p = provider_for(http.clone());
    let err = p.login().await.unwrap_err();
    assert!(
        matches!(
            err,
            AuthError::LoopbackAddress {
                role: UrlRole::AuthorizationServer
            }
        ),
        "{err:?}"
    );
    assert_eq!(local(&http.seen()), []);

    // The authorization server's metadata names local endpoints.
    for (patch, role) in [
        (
            serde_json::json!({"registration_endpoint": "http://127.0.0.1:80/register"}),
            UrlRole::RegistrationEndpoint,
        ),
        (
            serde_json::json!({"token_endpoint": "http://[::1]:9/token"}),
            UrlRole::TokenEndpoint,
        ),
        (
            serde_json::json!({"authorization_endpoint": "http://localhost:3000/authorize"}),
            UrlRole::AuthorizationEndpoint,
        ),
    ] {
        let http = Arc::new(
            Scripted::default()
                .with(PRM, prm(&["https://as.example.com"]))
                .with(AS_META, as_metadata(patch.clone())),
        );
        let p = provider_for(http.clone());
        let err = p.login().await.unwrap_err();
        match err {
            AuthError::LoopbackAddress { role: r } => assert_eq!(r, role, "{patch}"),
            other => panic!("{patch}: {other:?}"),
        }
        let seen = http.seen();
        assert_eq!(local(&seen), [], "{patch}");
        assert!(
            seen.iter().all(|(m, _)| *m == mcp_auth::HttpMethod::Get),
            "nothing may be registered: {seen:?}"
        );
    }
}
