//! Client registration in the spec's priority: pre-registered, Client ID
//! Metadata Document, dynamic registration; bound to the issuer.

#[path = "support/fixture.rs"]
mod support;

use std::sync::Arc;

use mcp_auth::{AuthError, MemoryTokenStore, PreRegisteredClient, RegistrationKind, Secret};
use support::{
    AsConfig, AuthServer, REDIRECT_URI, ResourceServer, RsConfig, call, pair, provider, refused,
};

const CIMD: &str = "https://client.example.com/mcp-client.json";

#[tokio::test]
async fn a_pre_registered_client_for_the_issuer_comes_first() {
    let (auth, rs) = pair(
        AsConfig {
            cimd: true,
            auth_methods: Some(vec!["client_secret_basic".into()]),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let issuer = auth.issuer();
    let p = provider(&rs.url(), |c| {
        c.client_metadata_url(CIMD).pre_registered(
            PreRegisteredClient::new(&issuer, "pre-id").secret(Secret::new("SEKRIT-pre")),
        )
    });
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    assert!(auth.log.to("/register").is_empty());
    assert_eq!(
        auth.log.to("/authorize")[0].query("client_id"),
        Some("pre-id")
    );
    let token = &auth.log.to("/token")[0];
    assert!(
        token
            .authorization
            .as_deref()
            .is_some_and(|a| a.starts_with("Basic "))
    );
    let creds = p.credentials().await.unwrap();
    assert_eq!(creds.registration_kind(), RegistrationKind::PreRegistered);
}

#[tokio::test]
async fn a_pre_registered_client_of_another_issuer_is_never_presented() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| {
        c.pre_registered(PreRegisteredClient::new(
            "https://other-as.example.com",
            "other-id",
        ))
    });
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    assert_eq!(auth.log.to("/register").len(), 1);
    assert!(auth.log.hits().iter().all(
        |h| h.query("client_id") != Some("other-id") && h.form("client_id") != Some("other-id")
    ));
}

#[tokio::test]
async fn a_metadata_document_url_is_the_client_id_when_the_server_supports_it() {
    let (auth, rs) = pair(
        AsConfig {
            cimd: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c.client_metadata_url(CIMD));
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    assert!(auth.log.to("/register").is_empty());
    assert_eq!(auth.log.to("/authorize")[0].query("client_id"), Some(CIMD));
    assert_eq!(auth.log.to("/token")[0].form("client_id"), Some(CIMD));
}

#[tokio::test]
async fn without_advertised_support_the_document_url_is_not_used() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| c.client_metadata_url(CIMD));
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    assert_eq!(auth.log.to("/register").len(), 1);
    assert_eq!(
        auth.log.to("/authorize")[0].query("client_id"),
        Some("dcr-client")
    );
}

#[tokio::test]
async fn dynamic_registration_names_a_native_application_and_its_redirect() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| c.client_name("test-host"));
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let body = auth.log.to("/register")[0].json.clone().unwrap();
    assert_eq!(body["application_type"], "native");
    assert_eq!(body["client_name"], "test-host");
    assert_eq!(body["redirect_uris"][0], REDIRECT_URI);
    assert_eq!(body["grant_types"][1], "refresh_token");
    assert_eq!(body["token_endpoint_auth_method"], "none");
}

#[tokio::test]
async fn with_no_way_to_register_the_error_names_the_issuer_to_configure() {
    let (auth, rs) = pair(
        AsConfig {
            registration: false,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    let err = refused(&p, &rs.url(), "tools/list").await;
    assert!(matches!(err, AuthError::NoRegistration { .. }));
    assert_eq!(err.issuer(), Some(auth.issuer().as_str()));
    assert!(err.to_string().contains("pre-registered client"));
    assert!(auth.log.to("/authorize").is_empty());
}

#[tokio::test]
async fn a_stored_dynamic_registration_is_reused_by_the_next_run() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let first = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&first, &rs.url(), "tools/list").await, 200);
    // The next run holds a token: no new registration or authorization.
    let second = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&second, &rs.url(), "tools/list").await, 200);
    assert_eq!(auth.log.to("/register").len(), 1);
    assert_eq!(auth.log.to("/authorize").len(), 1);
    // After the tokens are revoked it authorizes again with the same client.
    auth.db.revoke_all();
    let third = provider(&rs.url(), |c| c).with_store(store);
    assert_eq!(call(&third, &rs.url(), "tools/list").await, 200);
    assert_eq!(auth.log.to("/register").len(), 1);
    assert_eq!(auth.log.to("/authorize").len(), 2);
}

#[tokio::test]
async fn a_new_authorization_server_means_a_new_registration_and_nothing_reused() {
    let as1 = AuthServer::start(AsConfig {
        client_id: "as1-client".into(),
        reg_secret: Some("SEKRIT-as1-secret".into()),
        auth_methods: Some(vec!["client_secret_post".into()]),
        issue_refresh: true,
        ..AsConfig::default()
    })
    .await;
    let as2 = AuthServer::start(AsConfig {
        client_id: "as2-client".into(),
        ..AsConfig::default()
    })
    .await;
    let rs = ResourceServer::start(
        RsConfig::default(),
        vec![as1.issuer()],
        vec![as1.db.clone()],
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    // The resource moves to AS2 and stops trusting AS1's tokens.
    rs.set_authorization_servers(vec![as2.issuer()]);
    rs.set_trusted(vec![as2.db.clone()]);
    assert_eq!(call(&p, &rs.url(), "tools/call").await, 200);
    assert_eq!(as2.log.to("/register").len(), 1);
    for hit in as2.log.hits() {
        let text = format!("{hit:?}");
        assert!(
            !text.contains("as1-client"),
            "AS1's client reached AS2: {text}"
        );
        assert!(
            !text.contains("SEKRIT-as1") && !text.contains("SEKRIT-rt"),
            "{text}"
        );
    }
    // AS1's refresh token was not tried against AS1 for a resource that moved.
    assert!(as1.log.grants("/token", "refresh_token").is_empty());
    assert_eq!(p.credentials().await.unwrap().issuer(), as2.issuer());
}

/// A handler that cannot sign a user in (the CLI's commands other than
/// `mcp login`).
#[derive(Debug)]
struct StoredOnly;

impl mcp_auth::AuthorizationHandler for StoredOnly {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }
    fn interactive(&self) -> bool {
        false
    }
    fn authorize(
        &self,
        _request: mcp_auth::AuthorizationRequest,
    ) -> mcp_transport::BoxFuture<'_, Result<mcp_auth::AuthorizationResponse, AuthError>> {
        Box::pin(async { Err(AuthError::SignInRequired) })
    }
}

/// A 401 naming another authorization server (a hostile or confused
/// server) starts a new authorization, but the stored record, refresh
/// token included, stays until new credentials replace it: a failed or
/// impossible authorization leaves the user signed in. Once a new
/// authorization succeeds, the old record goes.
#[tokio::test]
async fn a_401_naming_another_authorization_server_cannot_log_the_user_out() {
    use mcp_auth::TokenStore as _;
    use mcp_transport::CredentialProvider;

    let as1 = AuthServer::start(AsConfig {
        issue_refresh: true,
        ..AsConfig::default()
    })
    .await;
    let hostile = AuthServer::start(AsConfig {
        deny: true,
        client_id: "hostile-client".into(),
        ..AsConfig::default()
    })
    .await;
    let rs = ResourceServer::start(
        RsConfig::default(),
        vec![as1.issuer()],
        vec![as1.db.clone()],
    )
    .await;
    let store = Arc::new(MemoryTokenStore::new());
    let p = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let before = store.load(&rs.url()).await.unwrap();
    assert_eq!(before.len(), 1);
    assert!(format!("{:?}", before[0]).contains("has_refresh_token: true"));
    let ours = |records: Vec<mcp_auth::StoredCredentials>| -> Vec<_> {
        records
            .into_iter()
            .filter(|r| r.issuer() == as1.issuer())
            .collect()
    };

    // The server's metadata now names another authorization server, which
    // refuses the authorization.
    rs.set_authorization_servers(vec![hostile.issuer()]);
    let challenge = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        rs.base()
    );
    let err = support::auth_error(
        p.on_unauthorized(mcp_transport::Refusal::new(401, Some(&challenge)))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.oauth_error(), Some("access_denied"));
    assert_eq!(hostile.log.to("/authorize").len(), 1);
    assert_eq!(ours(store.load(&rs.url()).await.unwrap()), before);
    assert_eq!(p.credentials().await.as_ref(), Some(&before[0]));

    // The same challenge to a provider that cannot sign in (the CLI's
    // `mcp call`): sign-in required, and still nothing lost.
    let cli =
        mcp_auth::OAuthProvider::new(mcp_auth::OAuthConfig::new(rs.url()), Arc::new(StoredOnly))
            .unwrap()
            .with_store(store.clone());
    let err = support::auth_error(
        cli.on_unauthorized(mcp_transport::Refusal::new(401, Some(&challenge)))
            .await
            .unwrap_err(),
    );
    assert!(matches!(err, AuthError::SignInRequired), "{err:?}");
    assert_eq!(ours(store.load(&rs.url()).await.unwrap()), before);

    // The stored token still works once the server stops pointing
    // elsewhere, in this process and the next: no new authorization.
    rs.set_authorization_servers(vec![as1.issuer()]);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let next = provider(&rs.url(), |c| c).with_store(store.clone());
    assert_eq!(call(&next, &rs.url(), "tools/list").await, 200);
    assert_eq!(as1.log.to("/authorize").len(), 1);
    assert_eq!(as1.log.to("/token").len(), 1);

    // A new authorization that succeeds replaces the old record (and the
    // bare registration with the hostile server).
    let as2 = AuthServer::start(AsConfig {
        client_id: "as2-client".into(),
        ..AsConfig::default()
    })
    .await;
    rs.set_authorization_servers(vec![as2.issuer()]);
    rs.set_trusted(vec![as2.db.clone()]);
    assert_eq!(call(&next, &rs.url(), "tools/list").await, 200);
    let issuers: Vec<String> = store
        .load(&rs.url())
        .await
        .unwrap()
        .iter()
        .map(|r| r.issuer().to_owned())
        .collect();
    assert_eq!(issuers, [as2.issuer()]);
}
