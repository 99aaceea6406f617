//! No error, `Debug` or `Display` of this crate contains a token, an
//! authorization code, a PKCE verifier, a client secret or an
//! `Authorization` header value — collected from every failure the fake
//! servers can provoke.

#[path = "support/fixture.rs"]
mod support;

use std::sync::Arc;

use mcp_auth::{
    FileTokenStore, MemoryTokenStore, PreRegisteredClient, Secret, StaticHeader, TokenStore,
};
use mcp_transport::CredentialProvider;
use support::{AsConfig, IssMode, Log, RsConfig, attempt, call, pair, provider, refused};

/// Every secret value the authorization server saw or issued.
fn secrets(log: &Log) -> Vec<String> {
    let mut out = vec!["SEKRIT".to_owned()];
    for hit in log.hits() {
        for name in ["code_verifier", "client_secret", "refresh_token", "code"] {
            if let Some(v) = hit.form(name) {
                out.push(v.to_owned());
            }
        }
        if let Some(a) = &hit.authorization {
            out.push(a.clone());
            out.extend(a.split(' ').nth(1).map(str::to_owned));
        }
    }
    out
}

fn assert_clean(shown: &[String], secrets: &[String]) {
    for text in shown {
        for secret in secrets {
            assert!(
                !text.contains(secret.as_str()),
                "`{secret}` leaked into: {text}"
            );
        }
    }
}

#[tokio::test]
async fn no_error_or_debug_output_carries_a_secret() {
    let mut shown = Vec::new();
    let mut seen = Vec::new();
    let failing = [
        AsConfig {
            wrong_state: true,
            ..AsConfig::default()
        },
        AsConfig {
            iss: IssMode::Wrong,
            ..AsConfig::default()
        },
        AsConfig {
            iss: IssMode::Omit,
            ..AsConfig::default()
        },
        AsConfig {
            deny: true,
            ..AsConfig::default()
        },
        AsConfig {
            pkce_methods: None,
            ..AsConfig::default()
        },
        AsConfig {
            metadata_issuer: Some("https://attacker.example.com".into()),
            ..AsConfig::default()
        },
        AsConfig {
            registration: false,
            ..AsConfig::default()
        },
        AsConfig {
            authorization_endpoint: Some("javascript:alert('SEKRIT')".into()),
            ..AsConfig::default()
        },
    ];
    for config in failing {
        let (auth, rs) = pair(config, RsConfig::default()).await;
        let p = provider(&rs.url(), |c| c);
        let err = refused(&p, &rs.url(), "tools/list").await;
        shown.push(format!("{err} {err:?} {p:?}"));
        seen.extend(secrets(&auth.log));
    }

    // A confidential client whose refresh is refused, then step-up loops.
    let (auth, rs) = pair(
        AsConfig {
            issue_refresh: true,
            rotate_refresh: true,
            reg_secret: Some("SEKRIT-client-secret".into()),
            auth_methods: Some(vec!["client_secret_basic".into()]),
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let p = provider(&rs.url(), |c| {
        c.pre_registered(
            PreRegisteredClient::new("https://other.example", "x")
                .secret(Secret::new("SEKRIT-pre")),
        )
    });
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let header = p.authorization(support::target()).await.unwrap().remove(0);
    seen.push(header.1.clone());
    // Spend the refresh token elsewhere so ours is refused.
    reqwest::Client::new()
        .post(format!("{}/token", auth.issuer()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=refresh_token&refresh_token=SEKRIT-rt-2")
        .send()
        .await
        .unwrap();
    auth.db.revoke_all();
    rs.set_trusted(vec![]);
    for _ in 0..6 {
        let (_, err) = attempt(&p, &rs.url(), "tools/list").await;
        for e in err.into_iter().chain(p.take_last_error()) {
            shown.push(format!("{e} {e:?}"));
        }
    }
    let creds = p.credentials().await.unwrap();
    shown.push(format!("{creds:?} {p:?}"));
    seen.extend(secrets(&auth.log));
    assert!(
        seen.iter().any(|s| s.starts_with("Basic ")),
        "basic auth was exercised"
    );

    // Store failures and the transport's view of them.
    let tmp = tempfile::tempdir().unwrap();
    let store = FileTokenStore::new(tmp.path());
    store.save(creds.clone()).await.unwrap();
    for f in std::fs::read_dir(tmp.path()).unwrap() {
        let path = f.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
    }
    let q = provider(&rs.url(), |c| c).with_store(Arc::new(store));
    let err = q.authorization(support::target()).await.unwrap_err();
    shown.push(format!("{err} {err:?} {q:?}"));
    let memory = MemoryTokenStore::new();
    memory.save(creds).await.unwrap();
    shown.push(format!("{memory:?}"));

    // The static header names its variable, never its value.
    let header = StaticHeader::bearer_from_env("MCP_AUTH_TEST_NEVER_SET");
    shown.push(format!("{header:?}"));
    let missing = header.authorization(support::target()).await.unwrap_err();
    assert!(missing.to_string().contains("MCP_AUTH_TEST_NEVER_SET"));
    shown.push(format!("{missing} {missing:?}"));

    assert!(seen.len() > 10, "the servers saw secrets: {}", seen.len());
    assert_clean(&shown, &seen);
}
