//! The server on the wire, line by line: its bounds and refusals, and its
//! output validated against the official schema of each version.

#[path = "support/common.rs"]
mod common;
#[path = "../../mcp-types/tests/support/spec.rs"]
mod spec;

use std::time::Duration;

use common::*;
use mcp_server::ServerLimits;
use serde_json::{Value, json};

fn error_code(frame: &Value) -> i64 {
    frame["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {frame}"))
}

#[tokio::test]
async fn an_oversized_line_is_refused_by_its_id_and_the_next_line_is_served() {
    let (handler, _seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default().max_frame(1024));
    wire.initialize("2025-11-25").await;
    let big = "x".repeat(4096);
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": big}}}))
        .await;
    let refusal = wire.recv().await;
    assert_eq!(refusal["id"], 1);
    assert_eq!(error_code(&refusal), -32600);
    assert_eq!(refusal["error"]["data"]["limit"], 1024);
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": "small"}}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "small");
}

#[tokio::test]
async fn a_request_over_the_in_flight_bound_is_refused_at_once() {
    let (handler, mut seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default().max_in_flight(2));
    for id in 1..=3 {
        wire.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "slow", "_meta": modern_meta()}}))
            .await;
    }
    let refusal = wire.recv().await;
    assert_eq!(refusal["id"], 3);
    assert_eq!(error_code(&refusal), -32603);
    assert!(matches!(seen.recv().await, Some(Seen::Started(_))));
    assert!(matches!(seen.recv().await, Some(Seen::Started(_))));
    // Cancelling one frees its slot once its handler has stopped.
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1}}),
    )
    .await;
    assert!(matches!(seen.recv().await, Some(Seen::Cancelled(_))));
    let mut served = false;
    for _ in 0..50 {
        wire.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
                         "params": {"_meta": modern_meta()}}))
            .await;
        let answer = wire.recv().await;
        assert_eq!(answer["id"], 4);
        if answer.get("result").is_some() {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served, "the cancelled request's slot was never freed");
}

#[tokio::test]
async fn a_request_before_initialize_is_refused_and_ping_is_answered() {
    let (handler, _seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default());
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let refusal = wire.recv().await;
    assert_eq!(refusal["id"], 1);
    assert_eq!(error_code(&refusal), -32600);
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(
        wire.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
}

#[tokio::test]
async fn malformed_lines_are_answered_as_json_rpc_says() {
    let (handler, _seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default());
    wire.send_raw("this is not json").await;
    let parse = wire.recv().await;
    assert_eq!(error_code(&parse), -32700);
    assert!(parse.get("id").is_none());
    wire.send_raw(r#"{"id":5,"method":"ping"}"#).await;
    let invalid = wire.recv().await;
    assert_eq!(error_code(&invalid), -32600);
    assert_eq!(invalid["id"], 5);
    wire.send_raw(r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#)
        .await;
    assert_eq!(error_code(&wire.recv().await), -32600);
    // The connection carries on.
    wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        .await;
    assert_eq!(wire.recv().await["id"], 7);
}

#[tokio::test]
async fn unknown_methods_are_not_found_in_both_eras() {
    let (handler, _seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default());
    wire.initialize("2025-11-25").await;
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such"}))
        .await;
    assert_eq!(error_code(&wire.recv().await), -32601);
    // Declared nothing but tools: prompts do not exist here.
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
                     "params": {"_meta": modern_meta()}}))
        .await;
    assert_eq!(error_code(&wire.recv().await), -32601);
}

#[tokio::test]
async fn no_answer_is_sent_for_a_cancelled_request() {
    let (handler, mut seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default());
    wire.initialize("2025-06-18").await;
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "slow"}}))
        .await;
    assert!(matches!(seen.recv().await, Some(Seen::Started(_))));
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1, "reason": "enough"}}),
    )
    .await;
    // The handler stops and answers; the answer is swallowed.
    assert!(matches!(seen.recv().await, Some(Seen::Cancelled(_))));
    assert_eq!(wire.quiet_for(Duration::from_millis(200)).await, None);
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(wire.recv().await["id"], 2);
}

#[tokio::test]
async fn what_was_answered_before_the_input_ended_is_written_and_then_the_output_closes() {
    use tokio::io::AsyncWriteExt;
    let (handler, _seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default());
    // The last line without its newline, then the end of the input.
    wire.write
        .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await
        .unwrap();
    wire.write.shutdown().await.unwrap();
    assert_eq!(wire.recv().await["id"], 1);
    assert!(wire.lines.next_line().await.unwrap().is_none());
    wire.server.await.unwrap().unwrap();
}

// ---- the official schemas ----

/// Every frame the server sends in one conversation of `version`, with the
/// method each answers.
async fn conversation(version: &str) -> Vec<(Option<&'static str>, Value)> {
    let (handler, _seen) = Demo::new();
    let mut wire = Wire::start(handler, ServerLimits::default());
    let modern = version == "2026-07-28";
    let mut frames = Vec::new();
    let params = |extra: Value| -> Value {
        let mut p = extra;
        if modern {
            p["_meta"] = modern_meta();
        }
        p
    };
    if modern {
        wire.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                         "params": params(json!({}))}),
        )
        .await;
        frames.push((Some("server/discover"), wire.recv().await));
    } else {
        frames.push((Some("initialize"), wire.initialize(version).await));
        wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        frames.push((Some("ping"), wire.recv().await));
    }
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                     "params": params(json!({"cursor": "2"}))}))
        .await;
    frames.push((Some("tools/list"), wire.recv().await));
    let mut call = params(json!({"name": "progress"}));
    call["_meta"]["progressToken"] = json!("p-1");
    wire.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}))
        .await;
    for _ in 0..3 {
        let frame = wire.recv().await;
        let method = frame.get("id").map(|_| "tools/call");
        frames.push((method, frame));
    }
    wire.send(json!({"jsonrpc": "2.0", "id": 4, "method": "no/such",
                     "params": params(json!({}))}))
        .await;
    frames.push((None, wire.recv().await));
    if modern {
        let mut meta = modern_meta();
        meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
        wire.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
                         "params": {"_meta": meta}}))
            .await;
        frames.push((None, wire.recv().await));
    }
    frames
}

/// The definition a result of `method` must match.
fn result_definition(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        _ => "EmptyResult",
    }
}

fn validate(schema: &Value, version: &str, definition: &str, value: &Value) -> Result<(), String> {
    let defs_key = if version >= "2025-11-25" {
        "$defs"
    } else {
        "definitions"
    };
    let wrapper = json!({
        "$ref": format!("#/{defs_key}/{definition}"),
        defs_key: schema[defs_key],
    });
    let validator = jsonschema::validator_for(&wrapper).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{}: {}", e.instance_path(), e))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{definition}: {}", errors.join("; ")))
    }
}

#[tokio::test]
async fn what_the_server_sends_matches_the_official_schema_of_each_version() {
    let Some(dir) = spec::spec_dir() else {
        return;
    };
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let schema = spec::load_schema(&dir, version);
        let frames = conversation(version).await;
        let mut kinds = Vec::new();
        for (method, frame) in &frames {
            let checks = if frame.get("method").is_some() {
                kinds.push("notification");
                vec![("ServerNotification", frame.clone())]
            } else if frame.get("error").is_some() {
                kinds.push("error");
                let envelope = if version >= "2025-11-25" {
                    "JSONRPCErrorResponse"
                } else {
                    "JSONRPCError"
                };
                let mut checks = vec![(envelope, frame.clone())];
                if error_code(frame) == -32022 {
                    checks.push(("UnsupportedProtocolVersionError", frame.clone()));
                }
                checks
            } else {
                kinds.push("result");
                let method = method.expect("a result answers a method");
                vec![
                    ("JSONRPCMessage", frame.clone()),
                    (result_definition(method), frame["result"].clone()),
                ]
            };
            for (definition, value) in checks {
                if let Err(e) = validate(&schema, version, definition, &value) {
                    panic!("{version}: {e}\n{frame:#}");
                }
            }
        }
        // The conversation had each kind of frame.
        for kind in ["result", "notification", "error"] {
            assert!(kinds.contains(&kind), "{version}: no {kind} in {frames:#?}");
        }
    }
}
