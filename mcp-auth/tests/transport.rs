//! The provider in the transport: a Streamable HTTP request that meets a
//! 401 is answered after discovery, registration, authorization and the
//! code exchange, and retried with the token.

#[path = "support/fixture.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_transport::{
    Connector, HttpConfig, HttpConnector, Inbound, OutboundFrame, RequestFailure, TransportError,
};
use serde_json::{Value, json};
use support::{AsConfig, RsConfig, pair, provider};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_meeting_a_401_is_authorized_and_retried_by_the_transport() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let oauth = Arc::new(provider(&rs.url(), |c| c));
    let connector = HttpConnector::new(HttpConfig::new(rs.url()).credentials(oauth.clone()));
    let mut conn = connector.connect().await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}
    }});
    conn.outbound
        .send(OutboundFrame::request(
            body.to_string(),
            1,
            "initialize".into(),
        ))
        .await
        .unwrap();
    let frame = loop {
        match tokio::time::timeout(Duration::from_secs(10), conn.inbound.recv())
            .await
            .expect("an answer in time")
            .expect("the connection is open")
        {
            Inbound::Frame(bytes) => break serde_json::from_slice::<Value>(&bytes).unwrap(),
            Inbound::FrameError(_) => {}
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(frame["id"], 1);
    assert_eq!(frame["result"]["serverInfo"]["name"], "fake");
    let posts = rs.log.to("/mcp");
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[0].authorization, None);
    let bearer = posts[1].authorization.as_deref().unwrap();
    assert!(bearer.starts_with("Bearer SEKRIT-at-"));
    assert_eq!(auth.log.to("/token").len(), 1);
    // Neither the connector nor the provider shows the token.
    for shown in [format!("{connector:?}"), format!("{oauth:?}")] {
        assert!(!shown.contains("SEKRIT"), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_authorization_fails_the_request_as_credentials() {
    let (_auth, rs) = pair(
        AsConfig {
            deny: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let oauth = Arc::new(provider(&rs.url(), |c| c));
    let connector = HttpConnector::new(HttpConfig::new(rs.url()).credentials(oauth.clone()));
    let mut conn = connector.connect().await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}
    }});
    conn.outbound
        .send(OutboundFrame::request(
            body.to_string(),
            1,
            "initialize".into(),
        ))
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), conn.inbound.recv())
        .await
        .expect("an answer in time")
        .expect("the connection is open");
    assert!(
        matches!(
            event,
            Inbound::RequestFailed {
                id: 1,
                failure: RequestFailure::Credentials
            }
        ),
        "{event:?}"
    );
    // The reason went with the error, not to the side slot.
    assert!(oauth.take_last_error().is_none());
    assert_eq!(rs.log.to("/mcp").len(), 1);
}

#[tokio::test]
async fn an_authorization_failure_is_a_credential_source_error_with_the_auth_error_inside() {
    use mcp_transport::CredentialProvider;
    let (_auth, rs) = pair(
        AsConfig {
            deny: true,
            ..AsConfig::default()
        },
        RsConfig::default(),
    )
    .await;
    let oauth = provider(&rs.url(), |c| c);
    let err = oauth
        .on_unauthorized(mcp_transport::Refusal::new(401, None))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "could not obtain credentials for the server"
    );
    assert!(matches!(err, TransportError::CredentialSource(_)));
    let cause = std::error::Error::source(&err).expect("a cause");
    assert!(cause.downcast_ref::<mcp_auth::AuthError>().is_some());
}
