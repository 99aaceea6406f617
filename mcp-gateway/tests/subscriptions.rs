//! Hosts' resource subscriptions through the gateway: one downstream
//! subscription per server URI whatever the number of hosts, updates to
//! exactly the hosts subscribed (by the URI each used), ended by the last
//! host's unsubscribe or disconnect, a host told to read again after the
//! server came back; the allow-list and the bounds hold;
//! `resources.subscribe` is declared only when a server can take it.

#[path = "support/common.rs"]
mod common;

use std::time::Duration;

use common::*;
use mcp_hub::{Authority, ServerAuthority};
use mcp_session::{Negotiation, SessionEvent, SessionEvents, SubscriptionEvent};
use mcp_testkit::{Behavior, Recorder, ResourceSpec, Script};
use mcp_types::error_codes;
use serde_json::{Value, json};

const A: &str = "file:///a.txt";
const B: &str = "file:///b.txt";

/// Two resources and a tool that touches each.
fn two_files(script: Script) -> Script {
    script
        .resource(ResourceSpec::text(A, "a.txt", "a"))
        .resource(ResourceSpec::text(B, "b.txt", "b"))
        .tool("touch_a", Behavior::TouchResource { uri: A.into() })
        .tool("touch_b", Behavior::TouchResource { uri: B.into() })
}

async fn endpoint(server: mcp_hub::ServerSpec, authority: Authority) -> HttpGateway {
    HttpGateway::start(vec![server], authority).await
}

/// The URI of the next `notifications/resources/updated` the host hears.
async fn next_update(events: &mut SessionEvents) -> String {
    let wait = async {
        loop {
            match events.next().await.expect("the host's events go on") {
                SessionEvent::Notification { method, params }
                    if method == "notifications/resources/updated" =>
                {
                    let params: Value = serde_json::from_slice(&params.unwrap()).unwrap();
                    return params["uri"].as_str().unwrap().to_owned();
                }
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("an update in time")
}

/// Waits (bounded) for the server to be sent `resources/unsubscribe` for
/// `uri` (a legacy server's way of being told nobody wants it).
async fn told_unsubscribe(recorder: &Recorder, uri: &str) {
    let told = recorder
        .wait_until(Duration::from_secs(10), |frames| {
            frames
                .iter()
                .any(|f| f["method"] == "resources/unsubscribe" && f["params"]["uri"] == uri)
        })
        .await;
    assert!(told, "{:?}", received(recorder, "resources/unsubscribe"));
}

/// The URI of the next event of a listen stream, which must be an update.
async fn stream_update(stream: &mut mcp_session::Subscription) -> String {
    let heard = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an update in time");
    match heard {
        Some(SubscriptionEvent::ResourceUpdated { uri }) => uri,
        other => panic!("not an update: {other:?}"),
    }
}

/// The URIs of the `method` requests the server received: the `uri` of a
/// legacy one, the `resourceSubscriptions` of a listen request (the hub's
/// own listen for tool list changes has none).
fn received(recorder: &Recorder, method: &str) -> Vec<String> {
    recorder
        .with_method(method)
        .iter()
        .flat_map(|f| {
            let params = &f["params"];
            match params["uri"].as_str() {
                Some(uri) => vec![uri.to_owned()],
                None => params["notifications"]["resourceSubscriptions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|u| u.as_str().map(str::to_owned))
                    .collect(),
            }
        })
        .collect()
}

async fn forwarded_to_exactly_the_subscribed_hosts(script: Script, downstream: &str) {
    let (files, recorder) = memory(two_files(script));
    let gateway = endpoint(spec("files", files), Authority::unrestricted()).await;
    let (alice, mut alice_events) = gateway.host(Negotiation::Legacy).await;
    let (bob, mut bob_events) = gateway.host(Negotiation::Legacy).await;
    let (carol, mut carol_events) = gateway.host(Negotiation::Legacy).await;
    let served_a = format!("mcp-gateway://files/{A}");
    // Alice by the gateway's URI, Bob by the server's own, Carol another.
    alice.subscribe_resource(&served_a).await.unwrap();
    bob.subscribe_resource(A).await.unwrap();
    carol
        .subscribe_resource(&format!("mcp-gateway://files/{B}"))
        .await
        .unwrap();
    // One downstream subscription per server URI.
    assert_eq!(received(&recorder, downstream).len(), 2, "{downstream}");

    carol.call_tool("touch_a", json!({})).await.unwrap();
    assert_eq!(next_update(&mut alice_events).await, served_a);
    assert_eq!(next_update(&mut bob_events).await, A);
    carol.call_tool("touch_b", json!({})).await.unwrap();
    // Carol's first update is hers: A's went to Alice and Bob only (and
    // was delivered before B was touched).
    assert_eq!(
        next_update(&mut carol_events).await,
        format!("mcp-gateway://files/{B}")
    );

    // Alice leaves; Bob still wants A, so the server is not told.
    alice.unsubscribe_resource(&served_a).await.unwrap();
    carol.call_tool("touch_a", json!({})).await.unwrap();
    assert_eq!(next_update(&mut bob_events).await, A);
    // Bob's connection ends: nobody wants A any more.
    bob.close().await;
    if downstream == "resources/subscribe" {
        told_unsubscribe(&recorder, A).await;
    } else {
        // 2026-07-28: the listen request for A is cancelled.
        let cancelled = recorder
            .wait_until(Duration::from_secs(10), |frames| {
                frames
                    .iter()
                    .any(|f| f["method"] == "notifications/cancelled")
            })
            .await;
        assert!(cancelled);
    }
    // Alice subscribes again: a new downstream subscription.
    alice.subscribe_resource(&served_a).await.unwrap();
    assert_eq!(received(&recorder, downstream).len(), 3);
    carol.call_tool("touch_a", json!({})).await.unwrap();
    assert_eq!(next_update(&mut alice_events).await, served_a);
    alice.close().await;
    carol.close().await;
    gateway.stop().await;
}

#[tokio::test]
async fn a_legacy_servers_updates_reach_exactly_the_subscribed_hosts_until_the_last_leaves() {
    forwarded_to_exactly_the_subscribed_hosts(Script::legacy(), "resources/subscribe").await;
}

#[tokio::test]
async fn a_2026_servers_updates_reach_exactly_the_subscribed_hosts_until_the_last_leaves() {
    forwarded_to_exactly_the_subscribed_hosts(Script::modern(), "subscriptions/listen").await;
}

/// The server dies under a subscription and is restarted: the gateway
/// subscribes again, and tells the host the resource may have changed
/// meanwhile (one update, unheard changes included), then passes on the
/// new server's updates.
#[tokio::test]
async fn a_host_is_told_to_read_again_after_the_server_came_back() {
    let (files, recorder) =
        memory(two_files(Script::legacy()).tool("crash", Behavior::Crash { code: 3 }));
    let gateway = endpoint(spec("files", files), Authority::unrestricted()).await;
    let (alice, mut alice_events) = gateway.host(Negotiation::Legacy).await;
    alice.subscribe_resource(A).await.unwrap();
    // (The gateway answers the call that killed it as a tool error.)
    let _ = alice.call_tool("crash", json!({})).await;
    // Made again on the restarted server, then the host is told.
    assert_eq!(next_update(&mut alice_events).await, A);
    assert!(
        recorder
            .wait_until(Duration::from_secs(10), |frames| {
                frames
                    .iter()
                    .filter(|f| f["method"] == "resources/subscribe")
                    .count()
                    == 2
            })
            .await
    );
    alice.call_tool("touch_a", json!({})).await.unwrap();
    assert_eq!(next_update(&mut alice_events).await, A);
    gateway.stop().await;
}

#[tokio::test]
async fn subscriptions_keep_to_the_allow_list_and_the_bounds() {
    let (files, recorder) = memory(two_files(Script::legacy()));
    let authority = Authority::named().with_server(
        "files",
        ServerAuthority::default().resources([A.to_owned()]),
    );
    let gateway = endpoint(spec("files", files), authority).await;
    let (alice, _events) = gateway.host(Negotiation::Legacy).await;
    let denied = alice
        .subscribe_resource(&format!("mcp-gateway://files/{B}"))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Some(error_codes::INVALID_PARAMS));
    let unknown = alice
        .subscribe_resource("file:///nowhere")
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some(error_codes::RESOURCE_NOT_FOUND));
    assert!(received(&recorder, "resources/subscribe").is_empty());
    alice.close().await;
    gateway.stop().await;

    // 64 URIs per host connection: the 65th is refused by name, before the
    // server is asked.
    let (files, recorder) = memory(two_files(Script::legacy()));
    let gateway = endpoint(spec("files", files), Authority::unrestricted()).await;
    let (bob, _events) = gateway.host(Negotiation::Legacy).await;
    for n in 0..64 {
        bob.subscribe_resource(&format!("mcp-gateway://files/file:///{n}.txt"))
            .await
            .unwrap_or_else(|e| panic!("{n}: {e}"));
    }
    let over = bob
        .subscribe_resource("mcp-gateway://files/file:///64.txt")
        .await
        .unwrap_err();
    assert_eq!(over.code(), Some(error_codes::INTERNAL_ERROR));
    let said = over.server_message().unwrap_or_default();
    assert!(said.contains("too many resource subscriptions"), "{said}");
    assert_eq!(received(&recorder, "resources/subscribe").len(), 64);
    // The same URI again is no new subscription.
    bob.subscribe_resource("mcp-gateway://files/file:///0.txt")
        .await
        .unwrap();
    bob.close().await;
    gateway.stop().await;
}

#[tokio::test]
async fn a_2026_hosts_listen_stream_gets_the_updates_of_the_resources_it_names() {
    let (files, recorder) = memory(two_files(Script::legacy()));
    let gateway = endpoint(spec("files", files), Authority::unrestricted()).await;
    let (dora, _) = gateway.host(Negotiation::Modern).await;
    let (toucher, _) = gateway.host(Negotiation::Legacy).await;
    let served_a = format!("mcp-gateway://files/{A}");
    let filter = mcp_types::SubscriptionFilter {
        resource_subscriptions: Some(vec![served_a.clone(), "mcp-gateway://nowhere/x".into()]),
        ..Default::default()
    };
    let mut stream = dora.subscribe(filter).await.unwrap();
    let Some(SubscriptionEvent::Acknowledged { accepted, refused }) = stream.next().await else {
        panic!("the stream is acknowledged first");
    };
    // The gateway's URI of a served resource is taken; one no server
    // serves is not.
    assert_eq!(
        accepted.resource_subscriptions,
        Some(vec![served_a.clone()])
    );
    assert_eq!(
        refused.resource_subscriptions,
        Some(vec!["mcp-gateway://nowhere/x".to_owned()])
    );
    assert_eq!(received(&recorder, "resources/subscribe"), [A]);

    toucher.call_tool("touch_b", json!({})).await.unwrap();
    toucher.call_tool("touch_a", json!({})).await.unwrap();
    // B was not asked for: the first update on the stream is A's.
    assert_eq!(stream_update(&mut stream).await, served_a);
    // The host drops the stream (over HTTP: closes it): nobody wants A.
    drop(stream);
    told_unsubscribe(&recorder, A).await;
    dora.close().await;
    toucher.close().await;
    gateway.stop().await;
}

#[tokio::test]
async fn a_2026_hosts_ended_listen_stream_lets_its_resources_go() {
    let (files, recorder) = memory(two_files(Script::legacy()));
    let mut setup = Setup::new(vec![spec("files", files)]);
    setup.negotiation = Negotiation::Modern;
    let running = start(setup).await;
    let served_a = format!("mcp-gateway://files/{A}");
    let filter = mcp_types::SubscriptionFilter {
        resource_subscriptions: Some(vec![served_a.clone()]),
        ..Default::default()
    };
    let mut stream = running.host.subscribe(filter).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(SubscriptionEvent::Acknowledged { .. })
    ));
    running.host.call_tool("touch_a", json!({})).await.unwrap();
    assert_eq!(stream_update(&mut stream).await, served_a);
    // The stream ends (the host cancels it): nobody wants A any more.
    drop(stream);
    told_unsubscribe(&recorder, A).await;
    running.close().await;
}

#[tokio::test]
async fn subscribe_is_declared_only_when_a_server_can_take_it() {
    // The testkit declares `resources.subscribe` with resources.
    let (files, _) = memory(two_files(Script::legacy()));
    let running = start(Setup::new(vec![spec("files", files)])).await;
    let resources = running.host.server_capabilities().resources.clone();
    assert_eq!(resources.and_then(|r| r.subscribe), Some(true));
    running.close().await;

    let (tools, _) = memory(Script::legacy().tool("echo", Behavior::Echo));
    let running = start(Setup::new(vec![spec("tools", tools)])).await;
    let resources = running.host.server_capabilities().resources.clone();
    assert_eq!(resources.and_then(|r| r.subscribe), None);
    let refused = running
        .host
        .subscribe_resource("mcp-gateway://tools/file:///a.txt")
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(error_codes::METHOD_NOT_FOUND));
    running.close().await;
}
