//! Every tool behaviour, driven over an in-memory pipe in the legacy era
//! (the modern-only differences are in `modern.rs`).

use std::time::Duration;

use mcp_testkit::{Behavior, FakeServer, Line, LineClient, Script, wire};
use serde_json::{Map, Value, json};

const QUIET: Duration = Duration::from_millis(200);

async fn legacy_with(name: &str, behavior: Behavior) -> (LineClient, tokio::task::JoinHandle<i32>) {
    let running = FakeServer::new(Script::legacy().tool(name, behavior)).start();
    let mut client = LineClient::over(running.stream);
    client.initialize("2025-11-25").await;
    (client, running.task)
}

async fn call(client: &mut LineClient, name: &str, arguments: Value) -> Value {
    client
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {reply}"))
}

#[tokio::test]
async fn echo_returns_the_text_or_refuses_bad_params() {
    let (mut client, _task) = legacy_with("echo", Behavior::Echo).await;
    let reply = call(&mut client, "echo", json!({"text": "héllo"})).await;
    assert_eq!(text(&reply), "héllo");
    assert!(reply["result"].get("isError").is_none());
    let bad = call(&mut client, "echo", json!({"text": 3})).await;
    assert_eq!(bad["error"]["code"], wire::INVALID_PARAMS);
    let unknown = call(&mut client, "nope", json!({})).await;
    assert_eq!(unknown["error"]["code"], wire::INVALID_PARAMS);
    assert_eq!(unknown["error"]["message"], "Unknown tool: nope");
}

#[tokio::test]
async fn add_sums_integers_and_floats_with_structured_content() {
    let (mut client, _task) = legacy_with("add", Behavior::Add).await;
    let ints = call(&mut client, "add", json!({"a": 2, "b": 40})).await;
    assert_eq!(text(&ints), "42");
    assert_eq!(ints["result"]["structuredContent"], json!({"sum": 42}));
    let floats = call(&mut client, "add", json!({"a": 0.5, "b": 1})).await;
    assert_eq!(floats["result"]["structuredContent"], json!({"sum": 1.5}));
    let bad = call(&mut client, "add", json!({"a": "x", "b": 1})).await;
    assert_eq!(bad["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn sleep_reports_progress_only_with_a_token() {
    let sleep = Behavior::Sleep {
        ms: 100,
        progress_steps: 4,
    };
    let (mut client, _task) = legacy_with("sleep", sleep).await;
    let params = json!({"name": "sleep", "arguments": {}, "_meta": {"progressToken": "tok"}});
    let reply = client.request("tools/call", params).await;
    assert_eq!(text(&reply), "slept 100 ms");
    let progress: Vec<&Value> = client
        .skipped
        .iter()
        .filter(|f| f["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 4);
    for (i, note) in progress.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], "tok");
        assert_eq!(note["params"]["progress"], i + 1);
        assert_eq!(note["params"]["total"], 4);
    }
    client.skipped.clear();
    call(&mut client, "sleep", json!({})).await;
    assert!(client.skipped.is_empty());
}

#[tokio::test]
async fn crash_ends_serve_with_its_code_without_answering() {
    let (mut client, task) = legacy_with("boom", Behavior::Crash { code: 42 }).await;
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "boom"}}),
        )
        .await;
    assert_eq!(task.await.unwrap(), 42);
    assert_eq!(client.next_line(QUIET).await, Line::Eof);
}

#[tokio::test]
async fn garbage_writes_a_non_json_line_then_answers() {
    let (mut client, _task) = legacy_with("g", Behavior::Garbage).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "g"}}))
        .await;
    assert!(matches!(client.next_line(QUIET).await, Line::Text(t) if !t.is_empty()));
    let reply = client.recv().await;
    assert_eq!(reply["id"], 5);
    assert_eq!(text(&reply), "ok");
}

#[tokio::test]
async fn oversized_writes_one_line_of_exactly_the_size() {
    let bytes = 300_000;
    let (mut client, _task) = legacy_with("big", Behavior::Oversized { bytes }).await;
    let reply = call(&mut client, "big", json!({})).await;
    // The fake serialises with the same (sorted, compact) serde_json layout.
    assert_eq!(reply.to_string().len() as u64, bytes);
    assert!(text(&reply).bytes().all(|b| b == b'x'));
}

#[tokio::test]
async fn error_and_tool_error_differ_on_the_wire() {
    let running = FakeServer::new(
        Script::legacy()
            .tool(
                "err",
                Behavior::Error {
                    code: -32099,
                    message: "scripted".into(),
                    data: Some(json!({"k": 1})),
                },
            )
            .tool(
                "terr",
                Behavior::ToolError {
                    text: "bad input".into(),
                },
            ),
    )
    .start();
    let mut client = LineClient::over(running.stream);
    client.initialize("2025-11-25").await;
    let err = call(&mut client, "err", json!({})).await;
    assert_eq!(
        err["error"],
        json!({"code": -32099, "message": "scripted", "data": {"k": 1}})
    );
    let terr = call(&mut client, "terr", json!({})).await;
    assert_eq!(terr["result"]["isError"], true);
    assert_eq!(text(&terr), "bad input");
}

#[tokio::test]
async fn structured_returns_the_value_and_its_json_text() {
    let value = json!({"rows": [1, 2], "ok": true});
    let (mut client, _task) = legacy_with(
        "s",
        Behavior::Structured {
            value: value.clone(),
        },
    )
    .await;
    let reply = call(&mut client, "s", json!({})).await;
    assert_eq!(reply["result"]["structuredContent"], value);
    assert_eq!(serde_json::from_str::<Value>(text(&reply)).unwrap(), value);
}

#[tokio::test]
async fn notify_sends_message_and_list_changed_before_the_response() {
    let (mut client, _task) = legacy_with("n", Behavior::Notify).await;
    let reply = call(&mut client, "n", json!({})).await;
    assert_eq!(text(&reply), "notified");
    let methods: Vec<&str> = client
        .skipped
        .iter()
        .filter_map(|f| f["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        ["notifications/message", "notifications/tools/list_changed"]
    );
}

#[tokio::test]
async fn ask_client_sends_a_request_and_returns_the_answer() {
    let ask = Behavior::AskClient {
        method: "roots/list".into(),
        params: Value::Null,
    };
    let (mut client, _task) = legacy_with("ask", ask).await;
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}),
        )
        .await;
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    assert!(request.get("params").is_none());
    let roots = json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]});
    client
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": roots}))
        .await;
    let reply = client.recv().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(serde_json::from_str::<Value>(text(&reply)).unwrap(), roots);

    // A refusal comes back as a tool error carrying the client's error.
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}),
        )
        .await;
    let request = client.recv().await;
    let refusal = json!({"code": -32601, "message": "roots not supported"});
    client
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": refusal}))
        .await;
    let reply = client.recv().await;
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(
        serde_json::from_str::<Value>(text(&reply)).unwrap(),
        json!({"error": refusal})
    );
}

#[tokio::test]
async fn ask_client_gives_up_after_the_scripted_timeout() {
    let mut script = Script::legacy().tool(
        "ask",
        Behavior::AskClient {
            method: "sampling/createMessage".into(),
            params: json!({}),
        },
    );
    script.ask_timeout_ms = 50;
    let running = FakeServer::new(script).start();
    let mut client = LineClient::over(running.stream);
    client.initialize("2025-11-25").await;
    let reply = call(&mut client, "ask", json!({})).await;
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(client.skipped[0]["method"], "sampling/createMessage");
}

#[tokio::test]
async fn wrong_id_answers_an_unsent_id_first() {
    let (mut client, _task) = legacy_with("w", Behavior::WrongId).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "w"}}))
        .await;
    assert_eq!(client.recv().await["id"], -8);
    assert_eq!(client.recv().await["id"], 7);
    client
        .send(
            &json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "w"}}),
        )
        .await;
    assert_eq!(client.recv().await["id"], "s#wrong");
    assert_eq!(client.recv().await["id"], "s");
}

#[tokio::test]
async fn blob_returns_exactly_kb_kib() {
    let (mut client, _task) = legacy_with("blob", Behavior::Blob { kb: 3 }).await;
    let reply = call(&mut client, "blob", json!({})).await;
    assert_eq!(text(&reply).len(), 3 * 1024);
}

#[tokio::test]
async fn text_search_and_lookup_serve_canned_data() {
    let mut entries = Map::new();
    entries.insert("a.txt".into(), json!("alpha"));
    let script = Script::legacy()
        .tool(
            "t",
            Behavior::Text {
                text: "hi {who}, n={n}, {missing}".into(),
            },
        )
        .tool(
            "search",
            Behavior::Search {
                items: vec![
                    json!({"title": "Rust notes", "text": "ownership"}),
                    json!({"title": "Go", "text": "gc"}),
                ],
            },
        )
        .tool(
            "read",
            Behavior::Lookup {
                key: "path".into(),
                entries,
            },
        );
    let running = FakeServer::new(script).start();
    let mut client = LineClient::over(running.stream);
    client.initialize("2025-11-25").await;

    let t = call(&mut client, "t", json!({"who": "ann", "n": 2})).await;
    assert_eq!(text(&t), "hi ann, n=2, {missing}");

    let hits = call(&mut client, "search", json!({"query": "RUST"})).await;
    assert_eq!(
        hits["result"]["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(text(&hits), "Rust notes: ownership");
    let none = call(&mut client, "search", json!({"query": "zzz"})).await;
    assert_eq!(none["result"]["structuredContent"]["results"], json!([]));

    let found = call(&mut client, "read", json!({"path": "a.txt"})).await;
    assert_eq!(text(&found), "alpha");
    let missing = call(&mut client, "read", json!({"path": "b.txt"})).await;
    assert_eq!(missing["result"]["isError"], true);
}
