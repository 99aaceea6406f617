//! Server-pushed notifications: logging levels (both eras), list changes
//! and resource updates (legacy unsolicited, 2026-07-28 on
//! `subscriptions/listen` streams), and how listen streams end.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_testkit::{
    Behavior, Line, LineClient, ListKind, ListenEnd, PromptSpec, ResourceSpec, Script, ToolSpec,
    wire,
};
use serde_json::{Value, json};

fn log(level: &str) -> Behavior {
    Behavior::Log {
        level: level.into(),
        message: json!({"said": level}),
        logger: Some("db".into()),
    }
}

fn change(list: ListKind) -> Behavior {
    Behavior::ChangeList { list }
}

fn chatty() -> Script {
    Script::dual()
        .tool("debug", log("debug"))
        .tool("error", log("error"))
        .tool("change_tools", change(ListKind::Tools))
        .tool("change_resources", change(ListKind::Resources))
        .tool(
            "touch",
            Behavior::TouchResource {
                uri: "file:///watched".into(),
            },
        )
        .tool(
            "end",
            Behavior::EndListen {
                how: ListenEnd::Graceful,
                code: 0,
            },
        )
        .tool(
            "drop",
            Behavior::EndListen {
                how: ListenEnd::Drop,
                code: 0,
            },
        )
        .tool(
            "exit",
            Behavior::EndListen {
                how: ListenEnd::Exit,
                code: 9,
            },
        )
        .tool_spec(ToolSpec::new("late", Behavior::Echo).appearing_at_change(1))
        .resource(ResourceSpec::text("file:///watched", "watched", "v1"))
}

async fn call_tool(client: &mut LineClient, name: &str, params: Value) -> Value {
    let mut params = params;
    params["name"] = json!(name);
    client.request("tools/call", params).await
}

#[tokio::test]
async fn legacy_set_level_filters_log_messages() {
    let (mut client, _) = legacy(chatty()).await;
    let reply = call_tool(&mut client, "debug", json!({})).await;
    assert_eq!(text(&reply), "logged", "no level set: everything is sent");
    assert_eq!(
        client.skipped,
        [json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "debug", "logger": "db", "data": {"said": "debug"}}})]
    );
    client.skipped.clear();
    let set = client
        .request("logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(set["result"], json!({}));
    let quiet = call_tool(&mut client, "debug", json!({})).await;
    assert_eq!(text(&quiet), "log suppressed");
    let loud = call_tool(&mut client, "error", json!({})).await;
    assert_eq!(text(&loud), "logged");
    assert_eq!(methods(&client.skipped), ["notifications/message"]);
    assert_eq!(client.skipped[0]["params"]["level"], "error");
    let bad = client
        .request("logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn modern_logs_only_at_or_above_the_requested_level() {
    let (mut client, _) = start(chatty());
    let none = call_tool(&mut client, "error", modern(json!({}))).await;
    assert_eq!(text(&none), "log suppressed", "no logLevel in _meta");
    let quiet = call_tool(&mut client, "debug", modern_logging(json!({}), "info")).await;
    assert_eq!(text(&quiet), "log suppressed");
    assert!(client.skipped.is_empty(), "{:?}", client.skipped);
    let loud = call_tool(&mut client, "error", modern_logging(json!({}), "info")).await;
    assert_eq!(text(&loud), "logged");
    assert_eq!(
        client.skipped[0]["params"]["data"],
        json!({"said": "error"})
    );
    let bad = call_tool(&mut client, "error", modern_logging(json!({}), "loud")).await;
    assert_eq!(bad["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn legacy_list_changes_are_unsolicited_and_change_the_list() {
    let (mut client, _) = legacy(chatty()).await;
    let before = client.request("tools/list", json!({})).await;
    let names = |reply: &Value| -> Vec<String> {
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!names(&before).contains(&"late".to_owned()));
    let hidden = call_tool(&mut client, "late", json!({"arguments": {"text": "x"}})).await;
    assert_eq!(hidden["error"]["code"], wire::INVALID_PARAMS);
    let reply = call_tool(&mut client, "change_tools", json!({})).await;
    assert_eq!(text(&reply), "changed tools");
    assert_eq!(
        client.skipped,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})]
    );
    let after = client.request("tools/list", json!({})).await;
    assert!(names(&after).contains(&"late".to_owned()));
    let visible = call_tool(&mut client, "late", json!({"arguments": {"text": "x"}})).await;
    assert_eq!(text(&visible), "x");
}

/// Opens a listen stream with `id` and `filter`; returns the acknowledgement.
async fn listen(client: &mut LineClient, id: Value, filter: Value, caps: Value) -> Value {
    let params = modern_with(json!({"notifications": filter}), caps);
    client
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}))
        .await;
    let ack = client.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    ack
}

#[tokio::test]
async fn listen_acknowledges_what_it_honours_and_delivers_matching_notifications() {
    let (mut client, recorder) = start(chatty());
    let ack = listen(
        &mut client,
        json!("listen-1"),
        json!({"toolsListChanged": true, "promptsListChanged": true, "madeUp": true,
               "resourceSubscriptions": ["file:///watched"]}),
        Value::Null,
    )
    .await;
    assert_has_required(
        "2026-07-28",
        "SubscriptionsAcknowledgedNotificationParams",
        &ack["params"],
    );
    // No prompts in the script, so promptsListChanged is not honoured.
    assert_eq!(
        ack["params"],
        json!({"_meta": {wire::META_SUBSCRIPTION_ID: "listen-1"},
               "notifications": {"toolsListChanged": true,
                                 "resourceSubscriptions": ["file:///watched"]}})
    );
    call_tool(&mut client, "change_tools", modern(json!({}))).await;
    call_tool(&mut client, "change_resources", modern(json!({}))).await;
    call_tool(&mut client, "touch", modern(json!({}))).await;
    assert_eq!(
        client.skipped,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                   "params": {"_meta": {wire::META_SUBSCRIPTION_ID: "listen-1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"_meta": {wire::META_SUBSCRIPTION_ID: "listen-1"},
                              "uri": "file:///watched"}}),
        ]
    );
    let sent = recorder.with_method("subscriptions/listen");
    assert_eq!(sent[0]["params"]["notifications"]["madeUp"], true);
}

#[tokio::test]
async fn each_stream_gets_what_its_own_filter_asks_for() {
    let script = chatty().prompt(PromptSpec::new("p"));
    let (mut client, _) = start(script);
    listen(
        &mut client,
        json!(1),
        json!({"toolsListChanged": true}),
        Value::Null,
    )
    .await;
    let ack = listen(
        &mut client,
        json!(2),
        json!({"toolsListChanged": true, "resourcesListChanged": true, "promptsListChanged": true}),
        Value::Null,
    )
    .await;
    assert_eq!(ack["params"]["notifications"]["promptsListChanged"], true);
    call_tool(&mut client, "change_tools", modern(json!({}))).await;
    call_tool(&mut client, "change_resources", modern(json!({}))).await;
    let delivered: Vec<(&str, &Value)> = client
        .skipped
        .iter()
        .map(|f| {
            (
                f["method"].as_str().unwrap(),
                &f["params"]["_meta"][wire::META_SUBSCRIPTION_ID],
            )
        })
        .collect();
    assert_eq!(
        delivered,
        [
            ("notifications/tools/list_changed", &json!(1)),
            ("notifications/tools/list_changed", &json!(2)),
            ("notifications/resources/list_changed", &json!(2)),
        ]
    );
}

#[tokio::test]
async fn a_graceful_end_answers_the_listen_request() {
    let (mut client, _) = start(chatty());
    listen(
        &mut client,
        json!("s"),
        json!({"toolsListChanged": true}),
        Value::Null,
    )
    .await;
    let reply = call_tool(&mut client, "end", modern(json!({}))).await;
    assert_eq!(text(&reply), "ended 1 subscriptions");
    let closed = &client.skipped[0];
    assert_eq!(closed["id"], "s");
    assert_has_required("2026-07-28", "SubscriptionsListenResult", &closed["result"]);
    assert_eq!(closed["result"]["resultType"], "complete");
    assert_eq!(closed["result"]["_meta"][wire::META_SUBSCRIPTION_ID], "s");
    client.skipped.clear();
    call_tool(&mut client, "change_tools", modern(json!({}))).await;
    assert!(client.skipped.is_empty(), "{:?}", client.skipped);
}

#[tokio::test]
async fn a_dropped_or_cancelled_stream_goes_silent_without_an_answer() {
    let (mut client, _) = start(chatty());
    listen(
        &mut client,
        json!("a"),
        json!({"toolsListChanged": true}),
        Value::Null,
    )
    .await;
    let reply = call_tool(&mut client, "drop", modern(json!({}))).await;
    assert_eq!(text(&reply), "ended 1 subscriptions");
    assert!(
        client.skipped.is_empty(),
        "drop sends nothing: {:?}",
        client.skipped
    );

    listen(
        &mut client,
        json!("b"),
        json!({"toolsListChanged": true}),
        Value::Null,
    )
    .await;
    client
        .notify("notifications/cancelled", json!({"requestId": "b"}))
        .await;
    call_tool(&mut client, "change_tools", modern(json!({}))).await;
    assert!(client.skipped.is_empty(), "{:?}", client.skipped);
    assert_quiet(&mut client).await;
}

#[tokio::test]
async fn an_exit_end_drops_the_transport() {
    let running = mcp_testkit::FakeServer::new(chatty()).start();
    let mut client = LineClient::over(running.stream);
    listen(
        &mut client,
        json!("x"),
        json!({"toolsListChanged": true}),
        Value::Null,
    )
    .await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": modern(json!({"name": "exit"}))}))
        .await;
    assert_eq!(running.task.await.unwrap(), 9);
    assert_eq!(client.next_line(QUIET).await, Line::Eof);
}

#[tokio::test]
async fn listen_is_modern_only_and_checks_its_params() {
    let (mut client, _) = legacy(chatty()).await;
    let legacy = client
        .request("subscriptions/listen", json!({"notifications": {}}))
        .await;
    assert_eq!(legacy["error"]["code"], wire::METHOD_NOT_FOUND);
    let no_filter = client
        .request("subscriptions/listen", modern(json!({})))
        .await;
    assert_eq!(no_filter["error"]["code"], wire::INVALID_PARAMS);
    let tasks = client
        .request(
            "subscriptions/listen",
            modern(json!({"notifications": {"taskIds": ["t"]}})),
        )
        .await;
    assert_eq!(tasks["error"]["code"], wire::MISSING_CLIENT_CAPABILITY);
    assert_eq!(
        tasks["error"]["data"],
        json!({"requiredCapabilities": {"extensions": {wire::TASKS_EXTENSION: {}}}})
    );
}

#[tokio::test]
async fn notify_reaches_listen_streams_in_2026() {
    let (mut client, _) = start(Script::modern().tool("n", Behavior::Notify));
    listen(
        &mut client,
        json!(7),
        json!({"toolsListChanged": true}),
        Value::Null,
    )
    .await;
    call_tool(&mut client, "n", modern(json!({}))).await;
    assert_eq!(
        methods(&client.skipped),
        ["notifications/tools/list_changed"]
    );
}
