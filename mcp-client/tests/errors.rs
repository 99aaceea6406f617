//! The error text a user sees for the common mistakes, pinned: each says
//! what happened in our words, once, with the cause inline.

use std::error::Error as _;

use mcp_client::prelude::*;
use mcp_client::session::{Negotiation, Session};
use mcp_client::types::text::Chain;
use mcp_testkit::{HttpFakeServer, HttpServerOptions, Script};

fn testkit() -> String {
    mcp_testkit::build_server_binary()
        .expect("building mcp-testkit-server")
        .display()
        .to_string()
}

/// What `anyhow`'s `{:#}` or a `main` returning the error would print: the
/// error and its causes.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    Chain(e).to_string()
}

#[tokio::test]
async fn a_missing_server_binary_is_named_with_the_reason() {
    let err = mcp_client::connect_stdio("/nonexistent/mcp-server", [] as [&str; 0])
        .await
        .unwrap_err();
    let text = chain(&err);
    println!("{text}");
    assert!(
        text.starts_with("could not start server program `/nonexistent/mcp-server`"),
        "{text}"
    );
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(!text.contains("transport failure"), "{text}");
}

async fn notes_hub() -> Hub {
    let server = StdioConnector::new(StdioConfig::new(testkit()).args(["--demo", "notes"]));
    Hub::builder(HubConfig::default())
        .server(ServerSpec::new("notes", server))
        .authority(
            Authority::named().with_server("notes", ServerAuthority::default().tools(["search"])),
        )
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_hub_call_with_a_bad_argument_says_which_and_why() {
    let hub = notes_hub().await;
    let err = hub.call("search", json!({"query": 5})).await.unwrap_err();
    let text = chain(&err);
    println!("{text}");
    assert_eq!(
        text,
        "server `notes`: arguments for tool `search` do not match its input schema: /query: value is not of type string"
    );
    // The words are in the message; the chain does not repeat them.
    assert!(err.source().is_none());
    hub.shutdown().await;
}

#[tokio::test]
async fn a_denied_tool_is_not_an_unknown_tool() {
    let hub = notes_hub().await;
    let denied = hub
        .call("create", json!({"title": "t", "text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(
        denied.to_string(),
        "tool `create` of server `notes` is denied: not on the authority document's allow-list"
    );
    let unknown = hub.call("nosuch", ()).await.unwrap_err();
    assert_eq!(unknown.to_string(), "no tool named `nosuch` is exposed");
    hub.shutdown().await;
}

#[tokio::test]
async fn a_failed_negotiation_returned_from_main_prints_a_line_not_the_session() {
    // A server that answers `initialize` with a version nobody speaks.
    let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}"#;
    let script = format!(
        r#"read -r l; id=$(printf '%s' "$l" | sed -E 's/.*"id":([0-9]+).*/\1/'); printf '%s\n' '{answer}' | sed "s/\"id\":0/\"id\":$id/"; read -r l"#
    );
    let connector = StdioConnector::new(StdioConfig::new("sh").args(["-c", &script]));
    let session = Session::connect(std::sync::Arc::new(connector), SessionConfig::default())
        .await
        .unwrap();
    let failed = session.negotiate(Negotiation::Legacy).await.unwrap_err();
    let debug = format!("{failed:?}");
    println!("{failed}\n{debug}");
    assert!(failed.to_string().contains("1999-01-01"), "{failed}");
    assert!(debug.len() < 400, "{} bytes: {debug}", debug.len());
    assert!(!debug.contains("link"), "{debug}");
    // `source()` goes on with the cause, not the same error again.
    assert_ne!(
        failed.source().map(ToString::to_string),
        Some(failed.to_string())
    );
}

#[tokio::test]
async fn a_wrong_http_path_names_both_attempts() {
    let server = HttpFakeServer::start(Script::basic(), HttpServerOptions::default())
        .await
        .unwrap();
    let wrong = server.url().replace("/mcp", "/wrong");
    let err = mcp_client::connect_http(&wrong).await.unwrap_err();
    let text = chain(&err);
    println!("{text}");
    assert!(text.contains("404"), "{text}");
    assert!(
        text.contains("the fallback to the legacy HTTP+SSE transport failed too"),
        "{text}"
    );
    server.shutdown().await;
}

#[test]
fn an_error_a_setting_caused_names_the_setting() {
    use std::time::Duration;
    let timeout = SessionError::Timeout {
        method: "tools/call".into(),
        after: Duration::from_secs(30),
    };
    assert!(
        timeout.to_string().contains("`request_timeout`"),
        "{timeout}"
    );
    let big = SessionError::ArgumentsTooLarge { size: 9, limit: 8 };
    assert!(big.to_string().contains("`max_argument_bytes`"), "{big}");
    let start = HubError::StartTimeout {
        server: mcp_client::hub::ServerName::new("py").unwrap(),
        after: Duration::from_secs(10),
    };
    assert!(start.to_string().contains("`start_timeout`"), "{start}");
}
