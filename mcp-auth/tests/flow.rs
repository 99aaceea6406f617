//! The authorization-code flow: PKCE S256, `state`, RFC 8707 `resource`,
//! token endpoint authentication, RFC 9207 `iss`, scope selection, step-up,
//! and refresh.

#[path = "support/fixture.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use mcp_auth::{AuthError, AuthorizationLimit};
use mcp_transport::CredentialProvider;
use sha2::{Digest, Sha256};
use support::{AsConfig, IssMode, RsConfig, attempt, auth_error, call, pair, provider, refused};

#[tokio::test]
async fn pkce_s256_state_and_resource_go_where_they_belong() {
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            code_expires_in: Some(0),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let authorize = &auth.log.to("/authorize")[0];
    let token = &auth.log.grants("/token", "authorization_code")[0];
    assert_eq!(authorize.query("code_challenge_method"), Some("S256"));
    assert_eq!(authorize.query("response_type"), Some("code"));
    let verifier = token.form("code_verifier").unwrap();
    assert!((43..=128).contains(&verifier.len()));
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    assert_eq!(authorize.query("code_challenge"), Some(challenge.as_str()));
    assert!(authorize.query("state").is_some_and(|s| s.len() >= 32));
    // RFC 8707 on the authorization, token and refresh requests, verbatim.
    // (The first token expired at once, so the next request refreshes.)
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let refresh = &auth.log.grants("/token", "refresh_token")[0];
    let resource = rs.url();
    assert_eq!(authorize.query("resource"), Some(resource.as_str()));
    assert_eq!(token.form("resource"), Some(resource.as_str()));
    assert_eq!(refresh.form("resource"), Some(resource.as_str()));
}

#[tokio::test]
async fn a_server_without_s256_is_refused_before_authorization() {
    for methods in [None, Some(vec!["plain".to_owned()])] {
        let (auth, rs) = pair(
            AsConfig {
                pkce_methods: methods.clone(),
                ..AsConfig::default()
            },
            RsConfig::default(),
        )
        .await;
        let p = provider(&rs.url(), |c| c);
        assert!(
            matches!(
                refused(&p, &rs.url(), "tools/list").await,
                AuthError::PkceNotSupported
            ),
            "{methods:?}"
        );
        assert!(auth.log.to("/register").is_empty());
        assert!(auth.log.to("/authorize").is_empty());
    }
}

#[tokio::test]
async fn a_response_with_another_state_is_discarded() {
    let (auth, rs) = pair(
        AsConfig {
            wrong_state: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert!(matches!(
        refused(&p, &rs.url(), "tools/list").await,
        AuthError::StateMismatch
    ));
    assert!(auth.log.to("/token").is_empty());
}

#[tokio::test]
async fn a_denied_authorization_is_a_named_error_with_the_code_behind_an_accessor() {
    let (auth, rs) = pair(
        AsConfig {
            deny: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    let err = refused(&p, &rs.url(), "tools/list").await;
    assert_eq!(err.oauth_error(), Some("access_denied"));
    assert!(!err.to_string().contains("access_denied"));
    assert!(auth.log.to("/token").is_empty());
}

/// Methods the server supports, the secret and method the registration
/// answers with, and the method expected.
type Case = (
    Vec<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
);

#[tokio::test]
async fn the_token_endpoint_authentication_follows_the_server() {
    let cases: [Case; 4] = [
        (vec!["none"], None, None, "none"),
        (
            vec!["client_secret_basic"],
            Some("SEKRIT s3cr:t+/&"),
            None,
            "basic",
        ),
        (
            vec!["client_secret_post"],
            Some("SEKRIT-post"),
            None,
            "post",
        ),
        (
            vec!["client_secret_basic", "client_secret_post"],
            Some("SEKRIT-declared"),
            Some("client_secret_post"),
            "post",
        ),
    ];
    for (methods, secret, declared, expected) in cases {
        let (auth, rs) = pair(
            AsConfig {
                auth_methods: Some(methods.iter().map(|m| (*m).to_owned()).collect()),
                client_id: "id with:colon".into(),
                reg_secret: secret.map(str::to_owned),
                reg_method: declared.map(str::to_owned),
                ..AsConfig::default()
            },
            RsConfig::default(),
        )
        .await;
        let p = provider(&rs.url(), |c| c);
        assert_eq!(call(&p, &rs.url(), "tools/list").await, 200, "{expected}");
        let token = &auth.log.to("/token")[0];
        match expected {
            "none" => {
                assert_eq!(token.authorization, None);
                assert_eq!(token.form("client_id"), Some("id with:colon"));
                assert_eq!(token.form("client_secret"), None);
            }
            "basic" => {
                let basic = token
                    .authorization
                    .as_deref()
                    .unwrap()
                    .strip_prefix("Basic ")
                    .unwrap();
                let decoded = String::from_utf8(
                    base64::engine::general_purpose::STANDARD
                        .decode(basic)
                        .unwrap(),
                )
                .unwrap();
                // RFC 6749 §2.3.1: each part form-encoded before Base64.
                assert_eq!(decoded, "id+with%3Acolon:SEKRIT+s3cr%3At%2B%2F%26");
                assert_eq!(token.form("client_secret"), None);
                // The id in the form as well, as some servers require.
                assert_eq!(token.form("client_id"), Some("id with:colon"));
            }
            _ => {
                assert_eq!(token.authorization, None);
                assert_eq!(token.form("client_id"), Some("id with:colon"));
                assert_eq!(token.form("client_secret"), secret);
            }
        }
    }
}

#[tokio::test]
async fn the_iss_parameter_is_checked_as_rfc_9207_and_the_spec_say() {
    // (advertised, what the redirect carries, accepted)
    let cases = [
        (Some(true), IssMode::Correct, true),
        (Some(true), IssMode::Omit, false),
        (Some(true), IssMode::Wrong, false),
        (Some(true), IssMode::TrailingSlash, false),
        (None, IssMode::Omit, true),
        (Some(false), IssMode::Omit, true),
        (None, IssMode::Wrong, false),
        (None, IssMode::Correct, true),
    ];
    for (advertised, iss, accepted) in cases {
        let (auth, rs) = pair(
            AsConfig {
                iss_supported: advertised,
                iss,
                ..AsConfig::default()
            },
            RsConfig::default(),
        )
        .await;
        let p = provider(&rs.url(), |c| c);
        let (status, err) = attempt(&p, &rs.url(), "tools/list").await;
        let case = format!("{advertised:?} {iss:?} -> {err:?}");
        assert_eq!(status == 200, accepted, "{case}");
        assert_eq!(auth.log.to("/token").is_empty(), !accepted, "{case}");
        if !accepted {
            assert!(
                matches!(
                    err,
                    Some(AuthError::IssuerResponseMismatch | AuthError::IssuerResponseMissing)
                ),
                "{case}"
            );
        }
    }
}

#[tokio::test]
async fn scopes_come_from_the_challenge_then_the_resource_then_nowhere() {
    let requested = |challenge: Option<&str>, supported: Option<Vec<&str>>| {
        let challenge = challenge.map(str::to_owned);
        let supported = supported.map(|s| s.into_iter().map(str::to_owned).collect());
        async move {
            let (auth, rs) = pair(
                AsConfig::default(),
                RsConfig {
                    challenge_scope: challenge,
                    scopes_supported: supported,
                    ..RsConfig::default()
                },
            )
            .await;
            let p = provider(&rs.url(), |c| c);
            assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
            auth.log.to("/authorize")[0]
                .query("scope")
                .map(str::to_owned)
        }
    };
    assert_eq!(
        requested(Some("mcp:basic"), Some(vec!["mcp:a", "mcp:b"]))
            .await
            .as_deref(),
        Some("mcp:basic")
    );
    assert_eq!(
        requested(None, Some(vec!["mcp:a", "mcp:b"]))
            .await
            .as_deref(),
        Some("mcp:a mcp:b")
    );
    assert_eq!(requested(None, None).await, None);
}

#[tokio::test]
async fn offline_access_is_asked_for_only_when_the_server_offers_it() {
    for (offered, expected) in [
        (
            vec!["mcp:basic", "offline_access"],
            "mcp:basic offline_access",
        ),
        (vec!["mcp:basic", "mcp:read"], "mcp:basic"),
    ] {
        let (auth, rs) = pair(
            AsConfig {
                scopes_supported: Some(offered.iter().map(|s| (*s).to_owned()).collect()),
                ..AsConfig::default()
            },
            RsConfig {
                scopes_supported: Some(vec!["mcp:basic".into()]),
                ..RsConfig::default()
            },
        )
        .await;
        let p = provider(&rs.url(), |c| c);
        assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
        assert_eq!(auth.log.to("/authorize")[0].query("scope"), Some(expected));
    }
}

#[tokio::test]
async fn step_up_asks_for_the_union_of_scopes_and_gives_up_after_three_tries() {
    let (auth, rs) = pair(
        AsConfig::default(),
        RsConfig {
            challenge_scope: Some("mcp:basic".into()),
            required_scopes: vec!["mcp:basic".into()],
            ..RsConfig::default()
        },
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    rs.set_required_scopes(&["mcp:write"]);
    assert_eq!(call(&p, &rs.url(), "tools/call").await, 200);
    let scopes: Vec<String> = auth
        .log
        .to("/authorize")
        .iter()
        .map(|h| h.query("scope").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(scopes, ["mcp:basic", "mcp:basic mcp:write"]);
    assert_eq!(
        p.credentials().await.unwrap().granted_scopes(),
        ["mcp:basic", "mcp:write"]
    );

    // A scope the server will never grant: the same challenge again and
    // again ends after the third step-up (the one to mcp:write counted).
    let challenge = "Bearer error=\"insufficient_scope\", scope=\"mcp:admin\"";
    let mut answers = Vec::new();
    for _ in 0..5 {
        answers.push(
            p.on_unauthorized(mcp_transport::Refusal::new(403, Some(challenge)))
                .await
                .map_err(auth_error),
        );
    }
    assert!(matches!(answers[..2], [Ok(true), Ok(true)]));
    for answer in &answers[2..] {
        assert!(
            matches!(
                answer,
                Err(AuthError::TooManyAuthorizations {
                    limit: 3,
                    counted: AuthorizationLimit::StepUps
                })
            ),
            "{answer:?}"
        );
    }
    assert_eq!(auth.log.to("/authorize").len(), 4);
    // A 403 that is not about scope is not an authorization matter.
    assert!(
        !p.on_unauthorized(mcp_transport::Refusal::new(
            403,
            Some("Bearer error=\"invalid_token\"")
        ))
        .await
        .unwrap()
    );
    assert!(
        !p.on_unauthorized(mcp_transport::Refusal::new(404, None))
            .await
            .unwrap()
    );
}

/// A server naming a new scope in every 403 gets three step-ups, not one
/// per scope; the error says which limit stopped it, and a login (the
/// user's own action) starts the count again.
#[tokio::test]
async fn a_new_scope_in_every_403_gets_three_step_ups_in_all() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let step_up = |i: u32| format!("Bearer error=\"insufficient_scope\", scope=\"mcp:s{i}\"");
    let mut answers = Vec::new();
    for i in 0..8 {
        answers.push(
            p.on_unauthorized(mcp_transport::Refusal::new(403, Some(&step_up(i))))
                .await
                .map_err(auth_error),
        );
    }
    assert!(
        matches!(answers[..3], [Ok(true), Ok(true), Ok(true)]),
        "{answers:?}"
    );
    for answer in &answers[3..] {
        match answer {
            Err(
                e @ AuthError::TooManyAuthorizations {
                    limit: 3,
                    counted: AuthorizationLimit::StepUps,
                },
            ) => assert_eq!(
                e.to_string(),
                "gave up after 3 step-up authorizations for this server"
            ),
            other => panic!("{other:?}"),
        }
    }
    // One authorization for the first call, one per granted step-up; the
    // refused ones sent nothing.
    assert_eq!(auth.log.to("/authorize").len(), 4);
    assert_eq!(
        p.credentials().await.unwrap().granted_scopes(),
        ["mcp:s0", "mcp:s1", "mcp:s2"]
    );
    p.login().await.unwrap();
    assert!(
        p.on_unauthorized(mcp_transport::Refusal::new(403, Some(&step_up(100))))
            .await
            .map_err(auth_error)
            .unwrap()
    );
    assert_eq!(auth.log.to("/authorize").len(), 6);
}

#[tokio::test]
async fn a_token_is_refreshed_before_expiry_and_the_unrotated_refresh_token_kept() {
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            code_expires_in: Some(0),
            refresh_expires_in: Some(0),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let first = p
        .authorization(support::target())
        .await
        .unwrap()
        .remove(0)
        .1;
    let second = p
        .authorization(support::target())
        .await
        .unwrap()
        .remove(0)
        .1;
    assert_ne!(first, second);
    // One refresh for the retry after the first authorization (its token
    // expired at once), one per call since.
    let refreshes = auth.log.grants("/token", "refresh_token");
    assert_eq!(refreshes.len(), 3);
    // The server did not rotate: the same refresh token every time.
    assert!(
        refreshes
            .iter()
            .all(|r| r.form("refresh_token") == Some("SEKRIT-rt-2"))
    );
    assert_eq!(auth.log.to("/authorize").len(), 1);
}

#[tokio::test]
async fn a_401_is_answered_with_a_refresh_before_a_new_authorization() {
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            rotate_refresh: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let old = p
        .authorization(support::target())
        .await
        .unwrap()
        .remove(0)
        .1;
    // The resource forgets the token (revoked, server restarted …).
    auth.db.revoke_all();
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let new = p
        .authorization(support::target())
        .await
        .unwrap()
        .remove(0)
        .1;
    assert_ne!(old, new);
    assert_eq!(auth.log.grants("/token", "refresh_token").len(), 1);
    assert_eq!(auth.log.to("/authorize").len(), 1);
    // The rotated refresh token is the one used next time.
    auth.db.revoke_all();
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let refreshes = auth.log.grants("/token", "refresh_token");
    assert_eq!(refreshes.len(), 2);
    assert_ne!(
        refreshes[0].form("refresh_token"),
        refreshes[1].form("refresh_token")
    );
}

#[tokio::test]
async fn a_refused_refresh_falls_back_to_a_new_authorization() {
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            rotate_refresh: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    // Someone else spends (and so rotates away) our refresh token, and the
    // resource forgets our access token.
    let spent = reqwest::Client::new()
        .post(format!("{}/token", auth.issuer()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=refresh_token&refresh_token=SEKRIT-rt-2")
        .send()
        .await
        .unwrap();
    assert_eq!(spent.status(), 200);
    auth.db.revoke_all();
    // Our refresh is refused (invalid_grant); the server's 401 is then
    // answered with a new authorization.
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    assert_eq!(auth.log.grants("/token", "refresh_token").len(), 2);
    assert_eq!(auth.log.to("/authorize").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_cause_one_refresh() {
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            code_expires_in: Some(0),
            refresh_delay: Duration::from_millis(200),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = Arc::new(provider(&rs.url(), |c| c));
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let p = p.clone();
        tasks.push(tokio::spawn(async move {
            p.authorization(support::target())
                .await
                .unwrap()
                .remove(0)
                .1
        }));
    }
    let mut headers = Vec::new();
    for t in tasks {
        headers.push(t.await.unwrap());
    }
    assert_eq!(auth.log.grants("/token", "refresh_token").len(), 1);
    assert!(headers.windows(2).all(|w| w[0] == w[1]));
}

#[tokio::test]
async fn a_server_that_refuses_every_token_does_not_cause_endless_renewals() {
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| c);
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    rs.set_trusted(vec![]);
    let mut last = None;
    for _ in 0..10 {
        let (status, err) = attempt(&p, &rs.url(), "tools/list").await;
        assert_eq!(status, 401);
        last = err;
    }
    assert_eq!(auth.log.grants("/token", "refresh_token").len(), 3);
    assert_eq!(auth.log.to("/authorize").len(), 3);
    assert!(matches!(
        last,
        Some(AuthError::TooManyAuthorizations {
            limit: 3,
            counted: AuthorizationLimit::SameScopes
        })
    ));
}

/// A handler that cannot sign a user in (a CLI command that only uses
/// stored credentials) fails as "sign-in required" before registering a
/// client or asking for an authorization.
#[tokio::test]
async fn a_non_interactive_handler_fails_before_registration() {
    #[derive(Debug)]
    struct StoredOnly;
    impl mcp_auth::AuthorizationHandler for StoredOnly {
        fn redirect_uri(&self) -> String {
            "http://127.0.0.1:9/callback".to_owned()
        }
        fn interactive(&self) -> bool {
            false
        }
        fn authorize(
            &self,
            _request: mcp_auth::AuthorizationRequest,
        ) -> mcp_transport::BoxFuture<'_, Result<mcp_auth::AuthorizationResponse, AuthError>>
        {
            panic!("a non-interactive handler is never asked to authorize")
        }
    }
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let p =
        mcp_auth::OAuthProvider::new(mcp_auth::OAuthConfig::new(rs.url()), Arc::new(StoredOnly))
            .unwrap();
    assert!(matches!(
        refused(&p, &rs.url(), "tools/list").await,
        AuthError::SignInRequired
    ));
    assert!(auth.log.to("/register").is_empty());
    assert!(auth.log.to("/authorize").is_empty());
    assert!(auth.log.to("/token").is_empty());
}
