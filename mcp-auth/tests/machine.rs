//! The machine grants and DPoP through the public API and the real HTTP
//! transport, against `support/machine.rs` on loopback: client credentials
//! (Basic, form, `private_key_jwt` from a key file), the JWT bearer grant
//! with a workload token file that is re-read when it changes,
//! enterprise-managed authorization, DPoP with nonces at both servers, and
//! the refusals a hostile or broken server meets (nonce loops, malformed
//! token responses, an identity provider on another origin, a key file
//! others may read). No secret ever reaches an error.

#[path = "support/machine.rs"]
mod machine;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use machine::{ClientCheck, MachineConfig, MachineServer, test_key, workload_jwt};
use mcp_auth::{
    AuthError, ClientAuth, EnterpriseIdp, Grant, HeadlessRedirectFlow, KeySource, MachineClient,
    NonceParty, OAuthConfig, OAuthProvider, Secret, SecretSource, SourceProblem,
};
use mcp_transport::{
    Connection, Connector, CredentialProvider, CredentialTarget, HttpConfig, HttpConnector,
    Inbound, OutboundFrame, Refusal, RequestFailure, TransportError,
};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

fn provider(url: &str, grant: Grant) -> Arc<OAuthProvider> {
    let flow = HeadlessRedirectFlow::new("http://127.0.0.1:33418/callback").unwrap();
    Arc::new(OAuthProvider::new(OAuthConfig::new(url).grant(grant), Arc::new(flow)).unwrap())
}

fn secret(value: &str) -> SecretSource {
    SecretSource::Value(Secret::new(value))
}

async fn connect(url: &str, provider: Arc<OAuthProvider>) -> Result<Connection, TransportError> {
    HttpConnector::new(HttpConfig::new(url).credentials(provider))
        .connect()
        .await
}

/// Sends one request and returns the transport's verdict: `Ok` when a
/// frame came back.
async fn call(conn: &mut Connection, id: i64) -> Result<(), RequestFailure> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
    conn.outbound
        .send(OutboundFrame::request(
            body.to_string(),
            id,
            "tools/list".into(),
        ))
        .await
        .unwrap();
    match tokio::time::timeout(WAIT, conn.inbound.recv())
        .await
        .expect("an answer in time")
        .expect("the connection is open")
    {
        Inbound::Frame(_) => Ok(()),
        Inbound::RequestFailed { failure, .. } => Err(failure),
        other => panic!("unexpected {other:?}"),
    }
}

fn auth_error(error: TransportError) -> AuthError {
    match error {
        TransportError::CredentialSource(cause) => *cause.downcast::<AuthError>().unwrap(),
        other => panic!("not a credential failure: {other:?}"),
    }
}

fn no_secret(error: &AuthError) {
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("SEKRIT"), "{shown}");
}

fn private_file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[tokio::test]
async fn client_credentials_with_basic_get_a_token_at_the_first_401_and_anew_when_it_expires() {
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Basic("svc".into(), "SEKRIT-pw".into()),
        // Due at once: every request needs a new token.
        expires_in: 0,
        ..MachineConfig::default()
    })
    .await;
    let grant = Grant::ClientCredentials(MachineClient::new(
        "svc",
        ClientAuth::SecretBasic(secret("SEKRIT-pw")),
    ));
    let p = provider(&server.url(), grant);
    let mut conn = connect(&server.url(), p.clone()).await.unwrap();
    call(&mut conn, 1).await.unwrap();
    call(&mut conn, 2).await.unwrap();
    let tokens = server.hits_at("/token");
    // One at the 401; then each token is due at once, so one more before
    // the retry of the first request and one before the second request.
    assert_eq!(tokens.len(), 3, "{tokens:#?}");
    let mcp = server.hits_at("/mcp");
    assert_eq!(mcp.len(), 3, "no token, then one per request");
    assert_ne!(
        mcp[1].authorization, mcp[2].authorization,
        "a new token each time"
    );
    for hit in &tokens {
        assert_eq!(hit.form["grant_type"], "client_credentials");
        // The id in the form as well as in Basic; the secret only in Basic.
        assert_eq!(hit.form["client_id"], "svc");
        assert!(!hit.form.contains_key("client_secret"));
        assert_eq!(hit.form["resource"], server.url());
        assert!(hit.refused.is_none(), "{hit:?}");
    }
    let record = p.credentials().await.unwrap();
    assert!(record.has_access_token() && !record.is_dpop_bound());
    assert!(!format!("{record:?}").contains("SEKRIT"));
}

#[tokio::test]
async fn client_credentials_in_the_form_and_a_refusal_that_names_nothing_secret() {
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Post("svc".into(), "SEKRIT-pw".into()),
        ..MachineConfig::default()
    })
    .await;
    let good = Grant::ClientCredentials(MachineClient::new(
        "svc",
        ClientAuth::SecretPost(secret("SEKRIT-pw")),
    ));
    provider(&server.url(), good).login().await.unwrap();
    let bad = Grant::ClientCredentials(MachineClient::new(
        "svc",
        ClientAuth::SecretPost(secret("SEKRIT-wrong")),
    ));
    let err = provider(&server.url(), bad).login().await.unwrap_err();
    assert_eq!(err.oauth_error(), Some("invalid_client"));
    no_secret(&err);
}

#[tokio::test]
async fn private_key_jwt_signs_an_assertion_with_the_key_file_and_refuses_a_shared_key_file() {
    let (_, pem, public) = test_key();
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Jwt("svc".into(), public),
        ..MachineConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let key = private_file(dir.path(), "key.pem", &pem, 0o600);
    let grant = |path: PathBuf| {
        Grant::ClientCredentials(MachineClient::new(
            "svc",
            ClientAuth::PrivateKeyJwt(KeySource::File(path)),
        ))
    };
    provider(&server.url(), grant(key)).login().await.unwrap();
    let hit = &server.hits_at("/token")[0];
    assert_eq!(hit.form["client_id"], "svc");
    assert!(hit.refused.is_none(), "{hit:?}");

    let shared = private_file(dir.path(), "shared.pem", &pem, 0o644);
    let before = server.hits_at("/token").len();
    let err = provider(&server.url(), grant(shared.clone()))
        .login()
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            AuthError::Credential {
                problem: SourceProblem::AccessibleToOthers { mode: 0o644 },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains(&shared.display().to_string()));
    assert!(!err.to_string().contains("PRIVATE KEY"));
    assert_eq!(server.hits_at("/token").len(), before, "nothing was sent");

    let garbage = private_file(dir.path(), "garbage.pem", "not a key", 0o600);
    let err = provider(&server.url(), grant(garbage))
        .login()
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        AuthError::Credential {
            problem: SourceProblem::NotAKey,
            ..
        }
    ));
}

#[tokio::test]
async fn the_jwt_bearer_grant_reads_the_workload_token_file_anew_each_time() {
    let (issuer_key, _, public) = test_key();
    let server = MachineServer::start(MachineConfig {
        assertion_key: Some(public),
        expires_in: 0,
        ..MachineConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let first = workload_jwt(&issuer_key, &server.issuer(), "pod-1");
    // A projected token is often readable by others: not refused.
    let file = private_file(dir.path(), "token", &format!("{first}\n"), 0o644);
    let grant = Grant::JwtBearer {
        client: MachineClient::new("workload", ClientAuth::None),
        assertion: SecretSource::TokenFile(file.clone()),
    };
    let p = provider(&server.url(), grant);
    p.login().await.unwrap();
    let second = workload_jwt(&issuer_key, &server.issuer(), "pod-2");
    std::fs::write(&file, &second).unwrap();
    let mut conn = connect(&server.url(), p.clone()).await.unwrap();
    call(&mut conn, 1).await.unwrap();
    let sent: Vec<String> = server
        .hits_at("/token")
        .iter()
        .map(|h| h.form["assertion"].clone())
        .collect();
    assert_eq!(sent.first(), Some(&first));
    assert!(
        sent.iter().skip(1).all(|a| *a == second),
        "the rotated token is used"
    );
    assert!(sent.len() >= 2);
    for hit in server.hits_at("/token") {
        assert_eq!(hit.form["grant_type"], machine::JWT_BEARER);
    }

    // Not a JWT: refused before anything is sent, naming the file only.
    std::fs::write(&file, "SEKRIT-not-a-jwt").unwrap();
    let before = server.hits_at("/token").len();
    let grant = Grant::JwtBearer {
        client: MachineClient::new("workload", ClientAuth::None),
        assertion: SecretSource::TokenFile(file.clone()),
    };
    let err = provider(&server.url(), grant).login().await.unwrap_err();
    assert!(matches!(
        err,
        AuthError::Credential {
            problem: SourceProblem::NotAJwt,
            ..
        }
    ));
    no_secret(&err);
    assert_eq!(server.hits_at("/token").len(), before);
}

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_the_id_token_then_uses_the_assertion() {
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Basic("app".into(), "SEKRIT-app".into()),
        id_token: Some("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.SEKRIT".into()),
        ..MachineConfig::default()
    })
    .await;
    let idp = EnterpriseIdp::new(
        server.issuer(),
        MachineClient::new("idp-client", ClientAuth::None),
        secret("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.SEKRIT"),
    )
    .token_endpoint(server.idp_token_endpoint());
    let grant = Grant::Enterprise {
        client: MachineClient::new("app", ClientAuth::SecretBasic(secret("SEKRIT-app"))),
        idp,
    };
    let p = provider(&server.url(), grant);
    let mut conn = connect(&server.url(), p.clone()).await.unwrap();
    call(&mut conn, 1).await.unwrap();
    let exchange = &server.hits_at("/idp/token")[0];
    assert!(exchange.refused.is_none(), "{exchange:?}");
    assert_eq!(exchange.form["client_id"], "idp-client");
    assert_eq!(exchange.form["resource"], server.url());
    let bearer = &server.hits_at("/token")[0];
    assert!(bearer.refused.is_none(), "{bearer:?}");
    assert_eq!(bearer.form["grant_type"], machine::JWT_BEARER);
}

#[tokio::test]
async fn an_identity_provider_endpoint_on_another_origin_gets_nothing() {
    let server = MachineServer::start(MachineConfig::default()).await;
    let elsewhere = MachineServer::start(MachineConfig::default()).await;
    let idp = EnterpriseIdp::new(
        server.issuer(),
        MachineClient::new("idp-client", ClientAuth::None),
        secret("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.SEKRIT"),
    )
    .token_endpoint(elsewhere.idp_token_endpoint());
    let grant = Grant::Enterprise {
        client: MachineClient::new("app", ClientAuth::None),
        idp,
    };
    let err = provider(&server.url(), grant).login().await.unwrap_err();
    assert!(matches!(err, AuthError::IdentityProviderOrigin), "{err:?}");
    assert!(elsewhere.hits().is_empty(), "the other origin got nothing");
    assert!(server.hits_at("/idp/token").is_empty());
}

fn dpop_server(config: MachineConfig) -> MachineConfig {
    MachineConfig {
        dpop: true,
        client: ClientCheck::Basic("svc".into(), "SEKRIT-pw".into()),
        ..config
    }
}

fn basic_grant() -> Grant {
    Grant::ClientCredentials(MachineClient::new(
        "svc",
        ClientAuth::SecretBasic(secret("SEKRIT-pw")),
    ))
}

#[tokio::test]
async fn dpop_binds_tokens_and_answers_both_servers_nonces_with_one_retry_each() {
    let server = MachineServer::start(dpop_server(MachineConfig {
        as_nonce: true,
        rs_nonce: true,
        rs_dpop_only: true,
        ..MachineConfig::default()
    }))
    .await;
    let p = provider(&server.url(), basic_grant());
    let mut conn = connect(&server.url(), p.clone()).await.unwrap();
    call(&mut conn, 1).await.unwrap();
    call(&mut conn, 2).await.unwrap();
    let tokens = server.hits_at("/token");
    assert_eq!(tokens.len(), 2, "one nonce retry at the token endpoint");
    assert_eq!(tokens[0].refused.as_deref(), Some("use_dpop_nonce"));
    assert!(tokens[1].refused.is_none(), "{:?}", tokens[1]);
    assert!(tokens.iter().all(|t| t.dpop.is_some()));
    let record = p.credentials().await.unwrap();
    assert!(record.is_dpop_bound());
    let mcp = server.hits_at("/mcp");
    // No token; the token without the nonce; with it; the second request.
    assert_eq!(mcp.len(), 4, "{mcp:#?}");
    assert_eq!(mcp[1].refused.as_deref(), Some("use_dpop_nonce"));
    assert!(
        mcp[2].refused.is_none() && mcp[3].refused.is_none(),
        "{mcp:#?}"
    );
    for hit in &mcp[1..] {
        let authorization = hit.authorization.as_deref().unwrap();
        assert!(authorization.starts_with("DPoP "), "never as Bearer");
        assert!(hit.dpop.is_some());
    }
    assert_ne!(mcp[2].dpop, mcp[3].dpop, "a fresh proof per request");
}

#[tokio::test]
async fn a_token_endpoint_that_always_wants_a_new_nonce_gets_one_retry() {
    let server = MachineServer::start(dpop_server(MachineConfig {
        as_nonce_loop: true,
        ..MachineConfig::default()
    }))
    .await;
    let err = provider(&server.url(), basic_grant())
        .login()
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            AuthError::DpopNonceLoop {
                party: NonceParty::AuthorizationServer
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.hits_at("/token").len(), 2);
}

#[tokio::test]
async fn an_mcp_server_that_always_wants_a_new_nonce_fails_the_request_after_one_retry() {
    let server = MachineServer::start(dpop_server(MachineConfig {
        rs_nonce_loop: true,
        ..MachineConfig::default()
    }))
    .await;
    let p = provider(&server.url(), basic_grant());
    p.login().await.unwrap();
    let mut conn = connect(&server.url(), p.clone()).await.unwrap();
    assert_eq!(call(&mut conn, 1).await, Err(RequestFailure::Credentials));
    assert_eq!(server.hits_at("/mcp").len(), 2, "the request and one retry");
    // What the provider says to the transport on the second refusal.
    let url = url::Url::parse(&server.url()).unwrap();
    assert_eq!(
        p.authorization(CredentialTarget::new("POST", &url))
            .await
            .unwrap()[0]
            .0,
        "Authorization"
    );
    let err = p
        .on_unauthorized(Refusal::new(401, Some("DPoP error=\"use_dpop_nonce\"")))
        .await
        .unwrap_err();
    assert!(matches!(
        auth_error(err),
        AuthError::DpopNonceLoop {
            party: NonceParty::ResourceServer
        }
    ));
}

#[tokio::test]
async fn a_dpop_only_server_whose_authorization_server_offers_no_dpop_is_refused_by_name() {
    let server = MachineServer::start(MachineConfig {
        rs_dpop_only: true,
        client: ClientCheck::Basic("svc".into(), "SEKRIT-pw".into()),
        ..MachineConfig::default()
    })
    .await;
    let p = provider(&server.url(), basic_grant());
    let err = auth_error(
        p.on_unauthorized(Refusal::new(
            401,
            Some(&format!(
                "DPoP resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                server.issuer()
            )),
        ))
        .await
        .unwrap_err(),
    );
    assert!(matches!(err, AuthError::DpopNotSupported), "{err:?}");
    assert!(server.hits_at("/token").is_empty());
}

#[tokio::test]
async fn malformed_token_responses_are_named_errors_without_their_content() {
    let cases = [
        (200, r#"{"access_token":"SEKRIT-a","token_type":"DPoP"}"#),
        (200, r#"{"access_token":"SEKRIT-b"}"#),
        (200, "SEKRIT not json"),
        (
            400,
            r#"{"error":"SEKRIT-code","error_description":"SEKRIT-desc"}"#,
        ),
    ];
    for (status, body) in cases {
        let server = MachineServer::start(MachineConfig {
            token_answer: Some((status, body.to_owned())),
            ..MachineConfig::default()
        })
        .await;
        let err = provider(&server.url(), basic_grant())
            .login()
            .await
            .unwrap_err();
        no_secret(&err);
        assert!(
            matches!(
                err,
                AuthError::UnsupportedTokenType
                    | AuthError::InvalidDocument { .. }
                    | AuthError::TokenRefused { .. }
            ),
            "{err:?}"
        );
    }
    let huge = format!(
        r#"{{"access_token":"{}","token_type":"Bearer"}}"#,
        "SEKRIT".repeat(4000)
    );
    let server = MachineServer::start(MachineConfig {
        token_answer: Some((200, huge)),
        ..MachineConfig::default()
    })
    .await;
    let err = provider(&server.url(), basic_grant())
        .login()
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::InvalidDocument { .. }), "{err:?}");
}

#[tokio::test]
async fn a_missing_secret_variable_is_named_and_nothing_is_sent() {
    let server = MachineServer::start(MachineConfig::default()).await;
    let grant = Grant::ClientCredentials(MachineClient::new(
        "svc",
        ClientAuth::SecretBasic(SecretSource::Env("MCP_AUTH_TEST_UNSET_SECRET".into())),
    ));
    let err = provider(&server.url(), grant).login().await.unwrap_err();
    assert!(
        err.to_string().contains("MCP_AUTH_TEST_UNSET_SECRET"),
        "{err}"
    );
    assert!(server.hits_at("/token").is_empty());
}

#[tokio::test]
async fn a_client_pinned_to_its_issuer_sends_nothing_to_another_one() {
    let server = MachineServer::start(MachineConfig::default()).await;
    let pinned = |issuer: &str| {
        Grant::ClientCredentials(
            MachineClient::new("svc", ClientAuth::SecretBasic(secret("SEKRIT-pw"))).issuer(issuer),
        )
    };
    let err = provider(&server.url(), pinned("https://as.example"))
        .login()
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::IssuerNotPinned), "{err:?}");
    assert!(server.hits_at("/token").is_empty(), "no secret left");
    provider(&server.url(), pinned(&server.issuer()))
        .login()
        .await
        .unwrap();
    assert_eq!(server.hits_at("/token").len(), 1);
}
