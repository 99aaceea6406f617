//! Where the `oauth2` crate meets ours: its errors keep nothing of what a
//! server sent (a canary in an error body, in a token response that fails
//! to parse) in `Display`, `Debug` or a log line; and RFC 7009 revocation at
//! logout, through the crate over https (a TLS authorization server on
//! loopback with a root made for the test) and through our own request over
//! plain http on loopback, where the crate refuses to go.

#[path = "support/fixture.rs"]
mod support;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_auth::{
    AuthError, AuthHttpClient, HeadlessRedirectFlow, MemoryTokenStore, OAuthConfig, OAuthProvider,
    Revocation, Step, StoredCredentials, TokenStore,
};
use support::{
    AsConfig, AuthServer, REDIRECT_URI, ResourceServer, RsConfig, pair, provider, refused,
};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// What the server answers; it must appear nowhere on our side.
const CANARY: &str = "CANARY-4e1d8b-token-like";

/// Everything `tracing` prints while a test runs on this thread.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything every test of this file logs, at every level: one global
/// subscriber (a scoped one per test raced with the other tests' threads
/// over tracing's cached interest and missed events now and then).
fn capture_logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
        captured
    })
}

fn assert_clean(e: &AuthError, logs: &Captured) {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("CANARY"), "{shown}");
    let logs = logs.text();
    assert!(logs.contains("oauth request"), "nothing was logged: {logs}");
    assert!(!logs.contains("CANARY"), "{logs}");
}

/// A login whose token request gets `reply`, and its error.
async fn login_answered(status: u16, body: &str) -> AuthError {
    let (_auth, rs) = pair(
        AsConfig {
            token_reply: Some((status, body.to_owned())),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    provider(&rs.url(), |c| c).login().await.unwrap_err()
}

#[tokio::test]
async fn an_error_description_and_uri_never_reach_display_debug_or_logs() {
    let logs = capture_logs();
    let body = format!(
        r#"{{"error":"invalid_grant","error_description":"{CANARY} is not yours","error_uri":"https://as.example/{CANARY}"}}"#
    );
    let e = login_answered(400, &body).await;
    assert!(
        matches!(
            e,
            AuthError::TokenRefused {
                step: Step::Token,
                status: 400,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.oauth_error(), Some("invalid_grant"));
    assert_clean(&e, logs);

    // The same through the transport's path, which logs the failure.
    let (_auth, rs) = pair(
        AsConfig {
            token_reply: Some((401, body.clone())),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    let e = refused(&p, &rs.url(), "tools/list").await;
    assert!(matches!(e, AuthError::TokenRefused { status: 401, .. }));
    assert!(logs.text().contains("no new credentials"));
    assert_clean(&e, logs);
}

#[tokio::test]
async fn a_token_response_that_fails_to_parse_leaves_no_trace() {
    let logs = capture_logs();
    let invalid = |e: &AuthError| matches!(e, AuthError::InvalidDocument { step: Step::Token });
    let refused_without_code =
        |e: &AuthError| matches!(e, AuthError::TokenRefused { error: None, .. });
    let unsupported = |e: &AuthError| matches!(e, AuthError::UnsupportedTokenType);
    type Check = fn(&AuthError) -> bool;
    let cases: [(u16, String, Check); 7] = [
        // No token_type.
        (200, format!(r#"{{"access_token":"{CANARY}"}}"#), invalid),
        // token_type of the wrong JSON type.
        (
            200,
            format!(r#"{{"access_token":"{CANARY}","token_type":["Bearer"]}}"#),
            invalid,
        ),
        // A field of the wrong type (the parser's message would quote it).
        (
            200,
            format!(
                r#"{{"access_token":"x","token_type":"Bearer","refresh_token":{{"{CANARY}":1}}}}"#
            ),
            invalid,
        ),
        (200, format!("{CANARY} is not JSON"), invalid),
        // A token type we do not use.
        (
            200,
            format!(r#"{{"access_token":"{CANARY}","token_type":"{CANARY}"}}"#),
            unsupported,
        ),
        // An error body that is not an OAuth error response.
        (
            400,
            format!(r#"{{"error":{{"{CANARY}":true}}}}"#),
            refused_without_code,
        ),
        (401, format!("{CANARY} (plain text)"), refused_without_code),
    ];
    for (status, body, expected) in cases {
        let e = login_answered(status, &body).await;
        assert!(expected(&e), "{status} {body}: {e:?}");
        assert_clean(&e, logs);
    }
}

// ------------------------------------------------------------ revocation

/// A TLS listener on 127.0.0.1 whose certificate a root made here signs.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            // A failed handshake (a client that does not trust the root)
            // ends that connection only.
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// A TLS authorization server on loopback, and an HTTP client for the
/// provider that trusts its root (and nothing follows redirects).
async fn tls_auth_server(config: AsConfig) -> (AuthServer, reqwest::Client) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let root_key = KeyPair::generate().unwrap();
    let mut root = CertificateParams::new(Vec::<String>::new()).unwrap();
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    root.distinguished_name
        .push(DnType::CommonName, "mcp-auth test root");
    let root_cert = root.self_signed(&root_key).unwrap();
    let issuer = Issuer::new(root, root_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();

    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://127.0.0.1:{}", tcp.local_addr().unwrap().port());
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(server)),
    };
    let auth = AuthServer::start_on(config, listener, base);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tls_certs_only([reqwest::Certificate::from_pem(root_cert.pem().as_bytes()).unwrap()])
        .build()
        .unwrap();
    (auth, client)
}

fn revoking(issue_refresh: bool) -> AsConfig {
    AsConfig {
        revocation: true,
        issue_refresh,
        // A confidential client: Basic, and `client_id` in the form too.
        reg_secret: Some("SEKRIT-client-secret".into()),
        reg_method: Some("client_secret_basic".into()),
        auth_methods: Some(vec!["client_secret_basic".into()]),
        ..AsConfig::default()
    }
}

/// Logs in to `rs`, then out, and returns what logout said.
async fn login_then_logout(
    rs: &ResourceServer,
    http: Option<reqwest::Client>,
    store: Arc<MemoryTokenStore>,
) -> (Revocation, StoredCredentials) {
    let p = match http {
        // The TLS server's root is trusted by this client only: the
        // provider and the headless "browser" both use it.
        Some(http) => {
            let http: Arc<dyn AuthHttpClient> = Arc::new(http);
            let flow = HeadlessRedirectFlow::with_http_client(REDIRECT_URI, http.clone());
            OAuthProvider::new(OAuthConfig::new(rs.url()), Arc::new(flow))
                .unwrap()
                .with_http_client(http)
        }
        None => provider(&rs.url(), |c| c),
    }
    .with_store(store.clone());
    p.login().await.unwrap();
    let record = p.credentials().await.unwrap();
    let revocation = p.logout().await.unwrap();
    assert!(p.credentials().await.is_none());
    assert!(store.load(&rs.url()).await.unwrap().is_empty());
    (revocation, record)
}

#[tokio::test]
async fn logout_revokes_the_refresh_token_over_https_through_the_crate() {
    let (auth, http) = tls_auth_server(revoking(true)).await;
    assert!(auth.issuer().starts_with("https://127.0.0.1:"));
    let rs = ResourceServer::start(
        RsConfig::default(),
        vec![auth.issuer()],
        vec![auth.db.clone()],
    )
    .await;
    let (revocation, record) =
        login_then_logout(&rs, Some(http), Arc::new(MemoryTokenStore::new())).await;
    assert!(record.can_revoke());
    assert!(
        matches!(
            revocation,
            Revocation::Revoked {
                refresh_token: true
            }
        ),
        "{revocation:?}"
    );
    let hits = auth.log.to(&auth.path("/revoke"));
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    let issued = auth
        .log
        .grants(&auth.path("/token"), "authorization_code")
        .len();
    assert_eq!(issued, 1);
    assert!(hit.form("token").unwrap().starts_with("SEKRIT-rt-"));
    assert_eq!(hit.form("token_type_hint"), Some("refresh_token"));
    assert_eq!(hit.form("client_id"), Some("dcr-client"));
    assert_eq!(hit.form("client_secret"), None);
    assert!(hit.authorization.as_deref().unwrap().starts_with("Basic "));
}

#[tokio::test]
async fn logout_revokes_the_access_token_over_loopback_http_with_our_own_request() {
    let (auth, rs) = pair(revoking(false), RsConfig::default()).await;
    assert!(auth.issuer().starts_with("http://127.0.0.1:"));
    let (revocation, record) =
        login_then_logout(&rs, None, Arc::new(MemoryTokenStore::new())).await;
    assert!(record.can_revoke());
    assert!(
        matches!(
            revocation,
            Revocation::Revoked {
                refresh_token: false
            }
        ),
        "{revocation:?}"
    );
    let hits = auth.log.to(&auth.path("/revoke"));
    assert_eq!(hits.len(), 1);
    assert!(hits[0].form("token").unwrap().starts_with("SEKRIT-at-"));
    assert_eq!(hits[0].form("token_type_hint"), Some("access_token"));
    // The same client authentication as at the token endpoint.
    assert_eq!(hits[0].form("client_id"), Some("dcr-client"));
    assert!(
        hits[0]
            .authorization
            .as_deref()
            .unwrap()
            .starts_with("Basic ")
    );
}

#[tokio::test]
async fn a_refused_revocation_is_reported_and_the_credentials_go_anyway() {
    for tls in [false, true] {
        let config = AsConfig {
            revocation_status: 401,
            ..revoking(true)
        };
        let (auth, http) = if tls {
            let (auth, http) = tls_auth_server(config).await;
            (auth, Some(http))
        } else {
            (AuthServer::start(config).await, None)
        };
        let rs = ResourceServer::start(
            RsConfig::default(),
            vec![auth.issuer()],
            vec![auth.db.clone()],
        )
        .await;
        let (revocation, _) = login_then_logout(&rs, http, Arc::new(MemoryTokenStore::new())).await;
        let Revocation::Failed(e) = revocation else {
            panic!("{revocation:?}");
        };
        assert!(
            matches!(
                e,
                AuthError::TokenRefused {
                    step: Step::Revocation,
                    status: 401,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.oauth_error(), Some("invalid_client"));
        assert!(!format!("{e} {e:?}").contains("SEKRIT"));
    }
}

#[tokio::test]
async fn an_unreachable_revocation_endpoint_does_not_keep_the_credentials() {
    let (auth, rs) = pair(revoking(true), RsConfig::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let p = provider(&rs.url(), |c| c).with_store(store.clone());
    p.login().await.unwrap();
    drop(auth);
    let Revocation::Failed(e) = p.logout().await.unwrap() else {
        panic!("the authorization server is gone");
    };
    assert!(matches!(e, AuthError::Network { .. }), "{e:?}");
    assert!(p.credentials().await.is_none());
    assert!(store.load(&rs.url()).await.unwrap().is_empty());
}

#[tokio::test]
async fn without_a_revocation_endpoint_logout_says_so() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let (revocation, record) = login_then_logout(&rs, None, store.clone()).await;
    assert!(!record.can_revoke());
    assert!(
        matches!(revocation, Revocation::NotOffered),
        "{revocation:?}"
    );
    assert!(auth.log.to(&auth.path("/revoke")).is_empty());
    // Nothing left: nothing to revoke.
    let p = provider(&rs.url(), |c| c).with_store(store);
    assert!(matches!(p.logout().await.unwrap(), Revocation::NothingHeld));
}

#[tokio::test]
async fn a_record_stored_before_revocation_endpoints_were_kept_still_loads() {
    let (_auth, rs) = pair(revoking(true), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| c);
    p.login().await.unwrap();
    let mut old = serde_json::to_value(p.credentials().await.unwrap()).unwrap();
    assert!(old["revocation_endpoint"].is_string());
    old.as_object_mut().unwrap().remove("revocation_endpoint");
    let record: StoredCredentials = serde_json::from_value(old).unwrap();
    assert!(!record.can_revoke());
    assert!(record.has_access_token());
}

/// The finding behind the split: oauth2 5 refuses a revocation URL whose
/// scheme is not https, loopback included (its `revocation.rs`). Should a
/// later version accept loopback, our plain-http path can go.
#[test]
fn the_crate_refuses_plain_http_revocation_urls_even_on_loopback() {
    use oauth2::basic::BasicClient;
    use oauth2::{AccessToken, ClientId, ConfigurationError, RevocationUrl};
    let client = BasicClient::new(ClientId::new("c".into()))
        .set_revocation_url(RevocationUrl::new("http://127.0.0.1:9/revoke".into()).unwrap());
    let refused = client.revoke_token(AccessToken::new("t".into()).into());
    assert!(matches!(
        refused,
        Err(ConfigurationError::InsecureUrl("revocation"))
    ));
    let client = BasicClient::new(ClientId::new("c".into()))
        .set_revocation_url(RevocationUrl::new("https://127.0.0.1:9/revoke".into()).unwrap());
    assert!(
        client
            .revoke_token(AccessToken::new("t".into()).into())
            .is_ok()
    );
}
