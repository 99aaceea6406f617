//! 100 stdio servers (the testkit binary) start in parallel, are listed and
//! routed, and shut down within the bound.

#[path = "support/common.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_hub::{Hub, HubConfig, HubError, ServerSpec, ServerStatusKind};
use mcp_testkit::{Behavior, Script};
use serde_json::json;

const SERVERS: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_stdio_servers_start_in_parallel_and_are_routed() {
    server_binary();
    let mut builder = Hub::builder(HubConfig::default());
    for i in 0..SERVERS {
        let script = Script::dual().tool("echo", Behavior::Echo).tool(
            &format!("only{i}"),
            Behavior::Text {
                text: format!("I am s{i:03}"),
            },
        );
        builder = builder.server(
            ServerSpec::new(&format!("s{i:03}"), stdio(&script))
                .start_timeout(Duration::from_secs(120)),
        );
    }
    let began = Instant::now();
    let hub = builder.start().await.unwrap();
    let started = began.elapsed();
    println!("{SERVERS} stdio servers ready in {started:?}");
    assert!(started < Duration::from_secs(120));
    for name in hub.servers() {
        assert_eq!(
            hub.status(name.as_str()).unwrap().kind,
            ServerStatusKind::Ready,
            "{name}"
        );
    }
    // Listed: 100 unique tools bare, 100 `echo`s qualified only.
    let ns = hub.namespace();
    assert_eq!(ns.tools().len(), 2 * SERVERS);
    assert!(matches!(
        ns.resolve("echo"),
        Err(HubError::Ambiguous { candidates, .. }) if candidates.len() == SERVERS
    ));
    // Routed: every server answers its own tool, all at once.
    let calls = (0..SERVERS).map(|i| {
        let hub = &hub;
        async move {
            let r = hub.call(&format!("only{i}"), ()).await;
            (i, r)
        }
    });
    for (i, result) in futures::future::join_all(calls).await {
        assert_eq!(first_text(&result.unwrap()), format!("I am s{i:03}"));
    }
    let r = hub
        .call("s042/echo", json!({"text": "forty-two"}))
        .await
        .unwrap();
    assert_eq!(first_text(&r), "forty-two");
    let report = hub.shutdown().await;
    println!("{SERVERS} stdio servers shut down in {:?}", report.elapsed);
    assert!(report.forced.is_empty(), "{:?}", report.forced);
    assert!(report.elapsed < Duration::from_secs(15));
}

/// A host holds one `Hub::call` future per call in flight, and a hub of many
/// servers may have hundreds: the future stays small (the audit wrapper is a
/// combinator, and the rare paths are boxed).
#[tokio::test]
async fn a_hub_call_in_flight_stays_small() {
    let (connector, _rec) = memory(Script::dual().tool("echo", Behavior::Echo));
    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("s", connector))
        .start()
        .await
        .unwrap();
    let call = hub.call("echo", json!({"text": "hi"}));
    let size = std::mem::size_of_val(&call);
    println!("Hub::call future: {size} bytes");
    assert!(size <= 5 * 1024, "Hub::call future is {size} bytes");
    let result = call.await.unwrap();
    assert_eq!(result.content.len(), 1);
    hub.shutdown().await;
}
