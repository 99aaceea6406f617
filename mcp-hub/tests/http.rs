//! Remote servers in the hub: Streamable HTTP in both eras beside an
//! in-memory one, in one namespace, with calls routed over HTTP and a dead
//! HTTP server failing its calls while the others go on.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_hub::{CollisionPolicy, Hub, HubConfig, HubError, ServerSpec};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, HttpFakeServer, HttpServerOptions, RunningHttpServer, Script};
use mcp_transport::{HttpConfig, HttpConnector};
use serde_json::json;

fn text(t: &str) -> Behavior {
    Behavior::Text { text: t.to_owned() }
}

async fn http(script: Script) -> RunningHttpServer {
    HttpFakeServer::start(script, HttpServerOptions::default())
        .await
        .expect("http server")
}

fn remote(name: &str, url: &str, negotiation: Negotiation) -> ServerSpec {
    let connector = Arc::new(HttpConnector::new(HttpConfig::new(url)));
    let mut spec = ServerSpec::new(name, connector).session(quick_session());
    spec.negotiation = negotiation;
    spec
}

#[tokio::test]
async fn http_servers_of_both_eras_share_the_namespace_with_a_local_one() {
    let legacy = http(
        Script::legacy()
            .tool("search", text("legacy search"))
            .tool("echo", Behavior::Echo),
    )
    .await;
    let modern = http(
        Script::modern()
            .tool("search", text("modern search"))
            .tool("add", Behavior::Add),
    )
    .await;
    let (local, _) = memory(Script::legacy().tool("search", text("local search")));
    let config = HubConfig {
        policy: CollisionPolicy::Prefix,
        jitter_seed: Some(1),
        ..HubConfig::default()
    };
    let hub = Hub::builder(config)
        .server(remote("old", &legacy.url(), Negotiation::Auto))
        .server(remote("new", &modern.url(), Negotiation::Auto))
        .server(ServerSpec::new("local", local).session(quick_session()))
        .start()
        .await
        .expect("the hub starts");

    // Routed by the qualified names, over each transport and era.
    for (name, expected) in [
        ("old/search", "legacy search"),
        ("new/search", "modern search"),
        ("local/search", "local search"),
    ] {
        let result = hub.call(name, json!({})).await.unwrap();
        assert_eq!(first_text(&result), expected, "{name}");
    }
    // Unique names are exposed bare.
    let echoed = hub.call("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(first_text(&echoed), "hi");
    let sum = hub.call("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(first_text(&sum), "5");
    // The shared bare name is refused as ambiguous.
    assert!(matches!(
        hub.call("search", json!({})).await,
        Err(HubError::Ambiguous { .. })
    ));
    // Each server went over its own transport: the HTTP servers saw their
    // own calls.
    assert!(
        legacy
            .recorder
            .wait_for("tools/call", Duration::from_secs(5))
            .await
            .is_some()
    );
    assert!(
        modern
            .recorder
            .wait_for("tools/call", Duration::from_secs(5))
            .await
            .is_some()
    );

    // A remote server that goes away fails its calls; the others go on.
    drop(modern);
    let failed = tokio::time::timeout(Duration::from_secs(10), hub.call("new/search", json!({})))
        .await
        .expect("a call to a gone server fails promptly");
    assert!(
        matches!(&failed, Err(HubError::Session { server, .. }) if server.to_string() == "new"),
        "{failed:?}"
    );
    let still = hub.call("old/search", json!({})).await.unwrap();
    assert_eq!(first_text(&still), "legacy search");
    hub.shutdown().await;
}
