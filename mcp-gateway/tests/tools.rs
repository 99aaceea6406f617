//! The host's tools through the gateway: the merged namespace under the
//! collision policy, in pages; the authority's allow-lists and permissions;
//! progress back to the host and cancellation down to the server.

#[path = "support/common.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_gateway::GatewayConfig;
use mcp_hub::{Authority, CollisionPolicy, Principal, ServerAuthority};
use mcp_session::{CallOptions, Negotiation};
use mcp_testkit::{Behavior, Script};
use mcp_types::error_codes;
use serde_json::json;

fn notes() -> Script {
    Script::legacy()
        .tool(
            "search",
            Behavior::Text {
                text: "notes found".into(),
            },
        )
        .tool("add", Behavior::Add)
}

fn files() -> Script {
    Script::modern()
        .tool(
            "search",
            Behavior::Text {
                text: "files found".into(),
            },
        )
        .tool("read", Behavior::Echo)
}

#[tokio::test]
async fn the_merged_namespace_is_served_in_pages_and_calls_are_routed() {
    let (notes, notes_rec) = memory(notes());
    let (files, _) = memory(files());
    let mut setup = Setup::new(vec![spec("notes", notes), spec("files", files)]);
    setup.config = GatewayConfig::default().page_size(2);
    // The host speaks 2026-07-28 here; the next tests speak the legacy era.
    setup.negotiation = Negotiation::Auto;
    let running = start(setup).await;
    assert_eq!(running.host.era(), mcp_types::Era::Modern);

    let first = running.host.list_tools_page(None).await.unwrap();
    assert_eq!(first.items.len(), 2);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = running.host.list_tools_page(Some(&cursor)).await.unwrap();
    assert_eq!(second.items.len(), 2);
    assert_eq!(second.next_cursor, None);
    let mut names = tool_names(&running.host).await;
    names.sort();
    assert_eq!(names, ["add", "files/search", "notes/search", "read"]);
    let garbage = running
        .host
        .list_tools_page(Some("not-ours"))
        .await
        .unwrap_err();
    assert_eq!(garbage.code(), Some(error_codes::INVALID_PARAMS));

    let sum = running
        .host
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.text(), "5");
    let found = running
        .host
        .call_tool("files/search", json!({}))
        .await
        .unwrap();
    assert_eq!(found.text(), "files found");
    // The bare shared name is ambiguous: refused, naming the choices.
    let ambiguous = running
        .host
        .call_tool("search", json!({}))
        .await
        .unwrap_err();
    assert_eq!(ambiguous.code(), Some(error_codes::INVALID_PARAMS));
    let said = ambiguous.server_message().unwrap_or_default().to_owned();
    assert!(
        said.contains("notes/search") && said.contains("files/search"),
        "{said}"
    );
    // The downstream server saw only the routed call.
    assert_eq!(notes_rec.with_method("tools/call").len(), 1);
    running.close().await;
}

#[tokio::test]
async fn an_allow_list_and_a_permission_decide_what_the_host_sees_and_calls() {
    let (notes, notes_rec) = memory(notes());
    let (files, files_rec) = memory(files());
    let mut setup = Setup::new(vec![spec("notes", notes), spec("files", files)]);
    setup.authority = Authority::named()
        .with_server("notes", ServerAuthority::default().tools(["search"]))
        .with_server("files", ServerAuthority::default().permission("files:read"));
    setup.principal = Principal::new("host");
    let running = start(setup).await;

    // `add` is not on the allow-list, and `files` needs a permission the
    // principal lacks: only `notes`'s `search` is served, bare.
    assert_eq!(tool_names(&running.host).await, ["search"]);
    // Calls by name anyway are refused by the authority, by name, as tool
    // results the model can read; nothing reaches the servers.
    for (name, server) in [("add", "notes"), ("files/read", "files")] {
        let refused = running
            .host
            .call_tool(name, json!({"a": 1, "b": 1, "text": "x"}))
            .await
            .unwrap();
        assert!(refused.failed(), "{name}");
        assert!(refused.text().contains("denied"), "{}", refused.text());
        let why = &refused.meta.as_ref().unwrap().0["mcp-gateway/error"];
        assert_eq!(why["kind"], "denied");
        assert_eq!(why["server"], server);
    }
    assert!(notes_rec.with_method("tools/call").is_empty());
    assert!(files_rec.with_method("tools/call").is_empty());
    let allowed = running.host.call_tool("search", json!({})).await.unwrap();
    assert_eq!(allowed.text(), "notes found");
    running.close().await;
}

#[tokio::test]
async fn under_the_reject_policy_a_colliding_server_is_refused_whole() {
    let (notes, _) = memory(notes());
    let (files, files_rec) = memory(files());
    let mut setup = Setup::new(vec![spec("notes", notes), spec("files", files)]);
    setup.policy = CollisionPolicy::Reject;
    let running = start(setup).await;
    let mut names = tool_names(&running.host).await;
    names.sort();
    // `files` offers `search` too: it is refused, `read` with it.
    assert_eq!(names, ["add", "search"]);
    let search = running.host.call_tool("search", json!({})).await.unwrap();
    assert_eq!(search.text(), "notes found");
    let refused = running
        .host
        .call_tool("read", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(error_codes::INVALID_PARAMS));
    assert!(files_rec.with_method("tools/call").is_empty());
    running.close().await;
}

#[tokio::test]
async fn progress_comes_back_to_the_host_and_its_cancellation_reaches_the_server() {
    let script = Script::legacy()
        .tool(
            "slow",
            Behavior::Sleep {
                ms: 50,
                progress_steps: 3,
            },
        )
        .tool("stuck", Behavior::Hang);
    let (server, recorder) = memory(script);
    let running = start(Setup::new(vec![spec("work", server)])).await;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = CallOptions::new().on_progress(move |p| {
        sink.lock().unwrap().push((p.progress_f64(), p.total_f64()));
    });
    let result = running
        .host
        .call_tool_with("slow", json!({}), &options)
        .await
        .unwrap();
    assert_eq!(result.text(), "slept 50 ms");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (Some(1.0), Some(3.0)),
            (Some(2.0), Some(3.0)),
            (Some(3.0), Some(3.0))
        ]
    );

    // The host gives up on a call: the gateway cancels it downstream.
    let call = running.host.call_tool("stuck", json!({}));
    let started = recorder.wait_until(Duration::from_secs(10), |frames| {
        frames
            .iter()
            .any(|f| f["method"] == "tools/call" && f["params"]["name"] == "stuck")
    });
    tokio::select! {
        _ = call => panic!("a hanging call answered"),
        ok = started => assert!(ok, "the call reached the server"),
    }
    let cancelled = recorder
        .wait_for("notifications/cancelled", Duration::from_secs(10))
        .await
        .expect("the server is told");
    let stuck = recorder
        .with_method("tools/call")
        .into_iter()
        .find(|f| f["params"]["name"] == "stuck")
        .unwrap();
    assert_eq!(cancelled["params"]["requestId"], stuck["id"]);
    running.close().await;
}
