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

/// Waits (bounded) until `server` is ready again, in the era it reports.
async fn ready_again(events: &mut mcp_hub::HubEvents, server: &str) -> mcp_types::Era {
    wait_for(events, Duration::from_secs(15), |event| match event {
        mcp_hub::HubEvent::Ready {
            server: name, era, ..
        } if name.to_string() == server => Some(*era),
        _ => None,
    })
    .await
}

/// A server replaced by a release of the other era while the hub holds
/// it: the first refused request ends the connection, the hub restarts
/// the server, the era it remembered is found stale and probed again, and
/// the server is served in its new era. Before,
/// every request failed until the hub itself was restarted. Both ways: a
/// 2026 server rolled back to a legacy-only release, and a legacy one
/// replaced by a release that refuses legacy clients.
#[tokio::test]
async fn a_server_replaced_by_a_release_of_the_other_era_is_served_in_it() {
    use mcp_types::Era;
    for (before, after, era) in [
        (Script::modern(), Script::legacy(), Era::Legacy),
        (Script::legacy(), Script::modern(), Era::Modern),
    ] {
        let remote_server = HttpFakeServer::start(
            before.tool("tool", text("old release")),
            HttpServerOptions::default().reject_legacy(),
        )
        .await
        .expect("http server");
        let hub = Hub::builder(HubConfig {
            jitter_seed: Some(1),
            ..HubConfig::default()
        })
        .server(remote("s", &remote_server.url(), Negotiation::Auto))
        .start()
        .await
        .expect("the hub starts");
        let mut events = hub.take_events().unwrap();
        let first = hub.call("tool", json!({})).await.unwrap();
        assert_eq!(first_text(&first), "old release");
        drain(&mut events);
        remote_server.restart_as(after.tool("tool", text("new release")));
        // The call meets the new release's refusal.
        assert!(hub.call("tool", json!({})).await.is_err());
        assert_eq!(ready_again(&mut events, "s").await, era);
        let second = hub.call("tool", json!({})).await.unwrap();
        assert_eq!(first_text(&second), "new release", "{era:?}");
        hub.shutdown().await;
    }
}
