//! The 2026-07-28 era: per-request `_meta`, `server/discover`, modern errors,
//! `resultType`, and results checked against the vendored schema's
//! `required` lists.

use std::time::Duration;

#[path = "support/common.rs"]
mod common;

use common::assert_has_required;
use mcp_testkit::{
    Behavior, FakeServer, Line, LineClient, Script, modern_meta, wire, with_modern_meta,
};
use serde_json::{Value, json};

fn start(script: Script) -> LineClient {
    LineClient::over(FakeServer::new(script).start().stream)
}

fn modern(params: Value) -> Value {
    with_modern_meta(params, Value::Null)
}

#[tokio::test]
async fn discover_returns_versions_capabilities_and_identity() {
    let script = Script::dual()
        .server_info("fake", "2.0")
        .instructions("use echo")
        .tool("echo", Behavior::Echo);
    let mut client = start(script);
    let reply = client.request("server/discover", modern(json!({}))).await;
    let result = &reply["result"];
    assert_has_required("2026-07-28", "DiscoverResult", result);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ])
    );
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert_eq!(
        result["_meta"][wire::META_SERVER_INFO],
        json!({"name": "fake", "version": "2.0"})
    );
    assert_eq!(result["instructions"], "use echo");
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(result["ttlMs"], 0);
}

#[tokio::test]
async fn a_missing_meta_field_is_invalid_params() {
    let mut client = start(Script::modern());
    let reply = client.request("tools/list", json!({})).await;
    assert_eq!(reply["error"]["code"], wire::INVALID_PARAMS);
    assert_eq!(
        reply["error"]["data"]["missing"],
        json!([wire::META_PROTOCOL_VERSION, wire::META_CLIENT_CAPABILITIES])
    );
    let only_version = json!({"_meta": {wire::META_PROTOCOL_VERSION: "2026-07-28"}});
    let reply = client.request("tools/list", only_version).await;
    assert_eq!(
        reply["error"]["data"]["missing"],
        json!([wire::META_CLIENT_CAPABILITIES])
    );
}

#[tokio::test]
async fn initialize_to_a_modern_only_server_names_the_supported_versions() {
    let mut client = start(Script::modern());
    let reply = client.initialize("2025-11-25").await;
    assert_eq!(reply["error"]["code"], wire::INVALID_PARAMS);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("2026-07-28"), "{message}");
    assert_eq!(reply["error"]["data"]["supported"], json!(["2026-07-28"]));
}

#[tokio::test]
async fn an_unsupported_version_is_32022_with_supported_and_requested() {
    let mut client = start(Script::modern());
    let params = json!({"_meta": modern_meta("2027-01-01", Value::Null)});
    let reply = client.request("tools/list", params).await;
    let error = &reply["error"];
    assert_eq!(error["code"], wire::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "2027-01-01"})
    );
    // A legacy version in `_meta` is not served statelessly either.
    let params = json!({"_meta": modern_meta("2025-11-25", Value::Null)});
    let reply = client.request("tools/list", params).await;
    assert_eq!(reply["error"]["code"], wire::UNSUPPORTED_PROTOCOL_VERSION);
}

#[tokio::test]
async fn results_carry_result_type_and_cache_hints() {
    let mut script = Script::modern().tool("echo", Behavior::Echo);
    script.ttl_ms = 60_000;
    script.cache_scope = mcp_testkit::CacheScope::Public;
    let mut client = start(script);
    let listed = client.request("tools/list", modern(json!({}))).await;
    assert_has_required("2026-07-28", "ListToolsResult", &listed["result"]);
    assert_eq!(listed["result"]["ttlMs"], 60_000);
    assert_eq!(listed["result"]["cacheScope"], "public");
    let called = client
        .request(
            "tools/call",
            modern(json!({"name": "echo", "arguments": {"text": "hi"}})),
        )
        .await;
    assert_has_required("2026-07-28", "CallToolResult", &called["result"]);
    assert_eq!(called["result"]["resultType"], "complete");
    assert_eq!(called["result"]["content"][0]["text"], "hi");
}

#[tokio::test]
async fn ping_does_not_exist_in_the_modern_era() {
    let mut client = start(Script::modern());
    let reply = client.request("ping", modern(json!({}))).await;
    assert_eq!(reply["error"]["code"], wire::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn a_dual_server_serves_both_eras_on_one_connection() {
    let mut client = start(Script::dual().tool("echo", Behavior::Echo));
    let init = client.initialize("2025-11-25").await;
    assert_has_required("2025-11-25", "InitializeResult", &init["result"]);
    let legacy = client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "a"}}),
        )
        .await;
    assert!(legacy["result"].get("resultType").is_none());
    let modern_reply = client
        .request(
            "tools/call",
            modern(json!({"name": "echo", "arguments": {"text": "b"}})),
        )
        .await;
    assert_eq!(modern_reply["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_dual_server_without_initialize_refuses_legacy_requests() {
    let mut client = start(Script::dual().tool("echo", Behavior::Echo));
    let reply = client.request("tools/list", json!({})).await;
    assert_eq!(reply["error"]["code"], wire::INVALID_REQUEST);
    // The probe without `_meta` is a modern request with missing fields.
    let probe = client.request("server/discover", json!({})).await;
    assert_eq!(probe["error"]["code"], wire::INVALID_PARAMS);
}

fn ask_script() -> Script {
    Script::modern().tool(
        "confirm",
        Behavior::AskClient {
            method: "elicitation/create".into(),
            params: json!({"mode": "form", "message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}}),
        },
    )
}

#[tokio::test]
async fn ask_client_without_the_capability_is_32021() {
    let mut client = start(ask_script());
    let reply = client
        .request("tools/call", modern(json!({"name": "confirm"})))
        .await;
    assert_eq!(reply["error"]["code"], wire::MISSING_CLIENT_CAPABILITY);
    assert_eq!(
        reply["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );
}

#[tokio::test]
async fn ask_client_is_an_input_required_round_trip() {
    let mut client = start(ask_script());
    let caps = json!({"elicitation": {"form": {}}});
    let first = client
        .request(
            "tools/call",
            with_modern_meta(json!({"name": "confirm"}), caps.clone()),
        )
        .await;
    let result = &first["result"];
    assert_has_required("2026-07-28", "InputRequiredResult", result);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["ask"]["method"],
        "elicitation/create"
    );
    assert_eq!(result["inputRequests"]["ask"]["params"]["message"], "Sure?");
    let state = result["requestState"].as_str().unwrap().to_owned();

    let answer = json!({"action": "accept", "content": {}});
    let retry = with_modern_meta(
        json!({"name": "confirm", "requestState": state, "inputResponses": {"ask": answer}}),
        caps.clone(),
    );
    let done = client.request("tools/call", retry).await;
    assert_eq!(done["result"]["resultType"], "complete");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), answer);

    let forged = with_modern_meta(
        json!({"name": "confirm", "requestState": "forged", "inputResponses": {"ask": {}}}),
        caps,
    );
    let refused = client.request("tools/call", forged).await;
    assert_eq!(refused["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn notify_sends_log_messages_only_when_a_log_level_is_requested() {
    let mut client = start(Script::modern().tool("notify", Behavior::Notify));
    let reply = client
        .request("tools/call", modern(json!({"name": "notify"})))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "notified");
    assert!(client.skipped.is_empty(), "{:?}", client.skipped);

    let mut params = modern(json!({"name": "notify"}));
    params["_meta"][wire::META_LOG_LEVEL] = json!("info");
    client.request("tools/call", params).await;
    let methods: Vec<&str> = client
        .skipped
        .iter()
        .filter_map(|f| f["method"].as_str())
        .collect();
    assert_eq!(methods, ["notifications/message"]);
    assert_eq!(
        client.next_line(Duration::from_millis(100)).await,
        Line::TimedOut
    );
}
