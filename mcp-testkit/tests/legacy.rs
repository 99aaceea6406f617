//! The legacy era: the `initialize` handshake and what happens around it.

use std::time::Duration;

use mcp_testkit::{Behavior, FakeServer, Line, LineClient, PreInit, Script, wire};
use serde_json::{Value, json};

const QUIET: Duration = Duration::from_millis(300);

struct Server {
    task: tokio::task::JoinHandle<i32>,
}

fn start(script: Script) -> (LineClient, Server) {
    let running = FakeServer::new(script).start();
    (
        LineClient::over(running.stream),
        Server { task: running.task },
    )
}

fn error_code(frame: &Value) -> Option<i64> {
    frame.pointer("/error/code").and_then(Value::as_i64)
}

#[tokio::test]
async fn initialize_answers_the_requested_version_and_server_identity() {
    let script = Script::legacy()
        .server_info("fake", "9.9")
        .instructions("be nice")
        .tool("echo", Behavior::Echo);
    let (mut client, _server) = start(script);
    let reply = client.initialize("2025-03-26").await;
    let result = &reply["result"];
    assert_eq!(result["protocolVersion"], "2025-03-26");
    assert_eq!(
        result["serverInfo"],
        json!({"name": "fake", "version": "9.9"})
    );
    assert_eq!(result["instructions"], "be nice");
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert!(
        result.get("resultType").is_none(),
        "legacy results have no resultType"
    );
}

#[tokio::test]
async fn an_unknown_requested_version_gets_the_newest_legacy_version() {
    let script = Script::dual().versions(["2024-11-05", "2025-06-18", "2026-07-28"]);
    let (mut client, _server) = start(script);
    let reply = client.initialize("2099-01-01").await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let (mut client, _server) = start(Script::legacy().tool("echo", Behavior::Echo));
    let refused = client.request("tools/list", json!({})).await;
    assert_eq!(error_code(&refused), Some(wire::INVALID_REQUEST));
    assert_eq!(refused["error"]["message"], "Server not initialized");
    let pong = client.request("ping", Value::Null).await;
    assert_eq!(pong["result"], json!({}));
    client.initialize("2025-11-25").await;
    let listed = client.request("tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "echo");
}

#[tokio::test]
async fn pre_init_can_serve_or_stay_silent() {
    let script = Script::legacy()
        .tool("echo", Behavior::Echo)
        .pre_init(PreInit::Serve);
    let (mut client, _server) = start(script);
    let listed = client.request("tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "echo");

    let (mut client, _server) = start(Script::legacy().pre_init(PreInit::Silence));
    client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(client.next_line(QUIET).await, Line::TimedOut);
}

#[tokio::test]
async fn pre_init_reject_code_is_scriptable() {
    let script = Script::legacy().pre_init(PreInit::Reject { code: -32002 });
    let (mut client, _server) = start(script);
    let refused = client.request("tools/list", Value::Null).await;
    assert_eq!(error_code(&refused), Some(-32002));
}

#[tokio::test]
async fn a_second_initialize_is_refused() {
    let (mut client, _server) = start(Script::legacy());
    client.initialize("2025-11-25").await;
    let again = client.initialize("2025-11-25").await;
    assert_eq!(error_code(&again), Some(wire::INVALID_REQUEST));
}

#[tokio::test]
async fn strict_lifecycle_waits_for_the_initialized_notification() {
    let mut script = Script::legacy().tool("echo", Behavior::Echo);
    script.strict_lifecycle = true;
    let (mut client, _server) = start(script);
    let init = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let early = client.request("tools/list", Value::Null).await;
    assert_eq!(error_code(&early), Some(wire::INVALID_REQUEST));
    client
        .notify("notifications/initialized", Value::Null)
        .await;
    let listed = client.request("tools/list", Value::Null).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "echo");
}

#[tokio::test]
async fn exit_after_initialize_answers_then_ends_with_code_1() {
    let mut script = Script::legacy();
    script.exit_after_initialize = true;
    let (mut client, server) = start(script);
    let reply = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(server.task.await.unwrap(), 1);
    assert_eq!(client.next_line(QUIET).await, Line::Eof);
}

#[tokio::test]
async fn modern_meta_on_a_legacy_only_server_still_needs_initialize() {
    let (mut client, _server) = start(Script::legacy().tool("echo", Behavior::Echo));
    let params = mcp_testkit::with_modern_meta(json!({}), Value::Null);
    let refused = client.request("tools/list", params).await;
    assert_eq!(error_code(&refused), Some(wire::INVALID_REQUEST));
}

#[tokio::test]
async fn unknown_methods_after_initialize_are_method_not_found() {
    let (mut client, _server) = start(Script::legacy());
    client.initialize("2024-11-05").await;
    let reply = client.request("resources/list", Value::Null).await;
    assert_eq!(error_code(&reply), Some(wire::METHOD_NOT_FOUND));
    let level = client
        .request("logging/setLevel", json!({"level": "debug"}))
        .await;
    assert_eq!(level["result"], json!({}));
}

#[tokio::test]
async fn end_of_input_ends_serve_with_code_0() {
    let (mut client, server) = start(Script::legacy());
    client.initialize("2025-11-25").await;
    client.close().await;
    assert_eq!(server.task.await.unwrap(), 0);
}
