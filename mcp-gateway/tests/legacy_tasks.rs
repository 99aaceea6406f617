//! A 2025-11-25 host's tasks (the core `tasks` capability) through the
//! gateway: our own session as the legacy host, testkit servers behind.
//! The gateway declares `tasks` and lists `taskSupport` only where it can
//! forward a task; a task comes back under an id of the gateway's own,
//! polled, fetched (its result served as a plain call's) and cancelled by
//! that id, its status notification reaching the host that made it (and
//! no other); a forged id is `-32602` and reaches no server; a server that
//! did not declare the capability is never offered and is refused by name
//! at the hub; a 2026-07-28 host is listed no `taskSupport`.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use mcp_hub::{CallOptions, ContentLimit, HubError};
use mcp_session::{Negotiation, SessionError, ToolCallStart};
use mcp_testkit::{Behavior, Recorder, Script, TaskSupport};
use mcp_types::requests::{CancelTask, GetTask, GetTaskPayload};
use mcp_types::{CallToolParams, CancelTaskResult, TaskIdParams, TaskMetadata, TaskSupport as Ts};
use serde_json::{Value, json};

const TASK_STATUS: &str = "notifications/tasks/status";

/// A 2025-11-25 server whose tools may run as tasks: `link` (a resource
/// link and a large text when asked), `hang` (never answers), `slow`
/// (answers after `seconds`), and `plain` (never a task).
fn tasking_server() -> (Arc<dyn mcp_transport::Connector>, Recorder) {
    let link = json!({"type": "resource_link", "uri": "file:///report.txt", "name": "report"});
    let big = json!({"type": "text", "text": "x".repeat(4096)});
    let optional = TaskSupport::Optional;
    memory(
        Script::legacy()
            .task_tool(
                "link",
                Behavior::Content {
                    content: vec![link],
                    is_error: false,
                    logs: Vec::new(),
                },
                optional,
            )
            .task_tool(
                "big",
                Behavior::Content {
                    content: vec![big],
                    is_error: false,
                    logs: Vec::new(),
                },
                optional,
            )
            .task_tool("hang", Behavior::Hang, optional)
            .task_tool(
                "slow",
                Behavior::TextAfter {
                    argument: "seconds".into(),
                    text: "slow done".into(),
                },
                optional,
            )
            .tool(
                "plain",
                Behavior::Text {
                    text: "plain".into(),
                },
            ),
    )
}

/// A 2025-11-25 server that lists a tool with `taskSupport` but declares
/// no `tasks` capability (and would run the task if asked).
fn undeclared_server() -> (Arc<dyn mcp_transport::Connector>, Recorder) {
    memory(Script::legacy().capability("tasks", Value::Null).task_tool(
        "sneaky",
        Behavior::Text { text: "ran".into() },
        TaskSupport::Optional,
    ))
}

/// Starts a task of `tool`; its handle.
async fn start_task(
    host: &mcp_session::Session<mcp_session::Ready>,
    tool: &str,
    arguments: Value,
) -> mcp_session::TaskHandle {
    match host
        .call_tool_as_task(tool, arguments, Some(Duration::from_secs(60)))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
    {
        ToolCallStart::Task(handle) => *handle,
        other => panic!("{tool} did not become a task: {other:?}"),
    }
}

/// The JSON-RPC error a session request failed with.
fn server_error(error: &SessionError) -> (i64, Value) {
    let object = error
        .error_object()
        .unwrap_or_else(|| panic!("not a server error: {error}"));
    (object.code, object.data.unwrap_or_default())
}

fn task_support(tools: &[mcp_types::Tool], name: &str) -> Option<Ts> {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
        .execution
        .as_ref()
        .and_then(|e| e.task_support.clone())
}

#[tokio::test]
async fn legacy_tasks_are_declared_and_listed_only_where_the_gateway_forwards_them() {
    let (alpha, _) = tasking_server();
    let (beta, beta_recorder) = undeclared_server();
    let running = start(Setup::new(vec![spec("alpha", alpha), spec("beta", beta)])).await;
    let caps = running.host.server_capabilities().clone();
    let tasks = caps.tasks.as_ref().expect("tasks declared");
    assert!(
        tasks
            .requests
            .as_ref()
            .and_then(|r| r.tools.as_ref())
            .is_some_and(|t| t.contains_key("call")),
        "{caps:?}"
    );
    assert!(tasks.cancel.is_some(), "{caps:?}");
    assert!(tasks.list.is_none(), "no task table to list: {caps:?}");

    let catalog = running.host.list_tools().await.unwrap();
    let tools = catalog.tools();
    // Listed by their bare names (no collision).
    assert_eq!(task_support(tools, "hang"), Some(Ts::Optional));
    assert_eq!(task_support(tools, "plain"), None);
    // Listed by its server, but the server declared no `tasks`.
    assert_eq!(task_support(tools, "sneaky"), None);

    // Asked anyway: refused at the gateway, nothing reaches the server.
    let error = running
        .host
        .call_tool_as_task("beta/sneaky", json!({}), None)
        .await
        .unwrap_err();
    let (code, data) = server_error(&error);
    assert_eq!(code, -32601, "{error}");
    assert_eq!(data["kind"], "task_unsupported", "{error}");
    // A tool its server lists without task support: the same.
    let error = running
        .host
        .call_tool_as_task("alpha/plain", json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(server_error(&error).0, -32601, "{error}");
    assert!(beta_recorder.with_method("tools/call").is_empty());
    // tasks/list is not declared: the server half answers -32601.
    let error = running
        .host
        .request::<mcp_types::requests::ListTasks>(&Default::default())
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(-32601), "{error}");
    running.close().await;

    // Without a server that takes tasks, no capability at all.
    let (beta, _) = undeclared_server();
    let running = start(Setup::new(vec![spec("beta", beta)])).await;
    assert!(running.host.server_capabilities().tasks.is_none());
    running.close().await;
}

#[tokio::test]
async fn a_task_runs_under_the_gateways_id_and_its_result_is_served_as_a_calls() {
    let (alpha, recorder) = tasking_server();
    let running = start(Setup::new(vec![spec("alpha", alpha)])).await;
    let mut handle = start_task(&running.host, "alpha/link", json!({})).await;
    let id = handle.id().to_owned();
    assert!(id.starts_with("gwt1."), "{id}");
    assert!(!id.contains("mcp-testkit-task"), "{id}");
    // The host's `task` member went to the server with the call.
    let calls = recorder.with_method("tools/call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["params"]["task"]["ttl"], 60_000, "{}", calls[0]);
    assert_eq!(calls[0]["params"]["name"], "link", "{}", calls[0]);

    let result = running.host.wait_task(&mut handle).await.unwrap();
    assert_eq!(handle.id(), id, "polled under the gateway's id");
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(
        value["content"][0]["uri"], "mcp-gateway://alpha/file:///report.txt",
        "{value}"
    );
    // The server's `_meta` stays behind; related-task names our id.
    assert_eq!(
        value["_meta"],
        json!({"io.modelcontextprotocol/related-task": {"taskId": id}}),
        "{value}"
    );
    // Every follow-up reached the server by its own id.
    let followed: Vec<Value> = ["tasks/get", "tasks/result"]
        .iter()
        .flat_map(|m| recorder.with_method(m))
        .collect();
    assert!(!recorder.with_method("tasks/result").is_empty());
    for request in &followed {
        assert_eq!(
            request["params"]["taskId"], "mcp-testkit-task-1",
            "{request}"
        );
    }

    // The same server's tool called without `task` is a plain call.
    let plain = running
        .host
        .call_tool("alpha/slow", json!({"seconds": 0}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&plain).unwrap()["content"][0]["text"],
        "slow done"
    );
    running.close().await;
}

#[tokio::test]
async fn a_task_result_over_the_servers_content_limit_is_refused() {
    let (alpha, _) = tasking_server();
    let spec = spec("alpha", alpha).max_content_bytes(ContentLimit::new(2048).unwrap());
    let running = start(Setup::new(vec![spec])).await;
    let mut handle = start_task(&running.host, "alpha/big", json!({})).await;
    let error = running.host.wait_task(&mut handle).await.unwrap_err();
    let (code, data) = server_error(&error);
    assert_eq!(code, -32603, "{error}");
    assert_eq!(data["kind"], "content_too_large", "{error}");
    running.close().await;
}

#[tokio::test]
async fn a_cancelled_task_answers_with_the_task_and_its_status_reaches_only_its_host() {
    let (alpha, recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let (owner, mut owner_events) = gateway.host(Negotiation::Legacy).await;
    let (other, mut other_events) = gateway.host(Negotiation::Legacy).await;
    let handle = start_task(&owner, "alpha/hang", json!({})).await;
    let id = handle.id().to_owned();

    let polled = owner
        .task_request::<GetTask>(&id, &TaskIdParams::new(&id), &Default::default())
        .await
        .unwrap();
    assert_eq!(polled.task_id, id);
    assert_eq!(polled.status, mcp_types::TaskStatus::Working);
    assert!(polled.meta.is_none(), "{polled:?}");

    let answer = owner
        .task_request::<CancelTask>(&id, &TaskIdParams::new(&id), &Default::default())
        .await
        .unwrap();
    let CancelTaskResult::Task(cancelled) = answer else {
        panic!("2025-11-25 answers the task: {answer:?}");
    };
    assert_eq!(cancelled.task_id, id);
    assert_eq!(cancelled.status, mcp_types::TaskStatus::Cancelled);
    let cancels = recorder.with_method("tasks/cancel");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0]["params"]["taskId"], "mcp-testkit-task-1");

    // The server's status notification, under the gateway's id, to the
    // host that made the task.
    let params = heard(&mut owner_events, TASK_STATUS)
        .await
        .expect("the owner hears the status");
    let status: Value = serde_json::from_slice(&params).unwrap();
    assert_eq!(status["taskId"], id.as_str(), "{status}");
    assert_eq!(status["status"], "cancelled", "{status}");
    assert!(status.get("_meta").is_none(), "{status}");
    // The other host heard nothing of it (a request of its own first, so
    // that what was sent to it before has arrived).
    other.ping().await.unwrap();
    assert!(!heard_already(&mut other_events, TASK_STATUS));

    // A cancelled task has no result: the server's error reaches the host.
    let error = owner
        .task_request::<GetTaskPayload>(&id, &TaskIdParams::new(&id), &Default::default())
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(-32602), "{error}");
    owner.close().await;
    other.close().await;
    gateway.stop().await;
}

#[tokio::test]
async fn a_forged_or_foreign_task_id_is_refused_and_reaches_no_server() {
    let (alpha, alpha_recorder) = tasking_server();
    let (beta, beta_recorder) = tasking_server();
    let running = start(Setup::new(vec![spec("alpha", alpha), spec("beta", beta)])).await;
    let handle = start_task(&running.host, "alpha/hang", json!({})).await;
    let id = handle.id().to_owned();
    let (payload, tag) = id.strip_prefix("gwt1.").unwrap().split_once('.').unwrap();
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert!(text.contains("\"alpha\""), "{text}");
    let forged = format!(
        "gwt1.{}.{tag}",
        URL_SAFE_NO_PAD.encode(text.replace("\"alpha\"", "\"beta\""))
    );
    let host = &running.host;
    for bad in [forged.as_str(), "mcp-testkit-task-1", "nope"] {
        let params = TaskIdParams::new(bad);
        let errors = [
            host.task_request::<GetTask>(bad, &params, &Default::default())
                .await
                .unwrap_err(),
            host.task_request::<GetTaskPayload>(bad, &params, &Default::default())
                .await
                .unwrap_err(),
            host.task_request::<CancelTask>(bad, &params, &Default::default())
                .await
                .unwrap_err(),
        ];
        for error in errors {
            let (code, data) = server_error(&error);
            assert_eq!(code, -32602, "{bad}: {error}");
            assert_eq!(data["kind"], "task_unknown", "{error}");
        }
    }
    for recorder in [&alpha_recorder, &beta_recorder] {
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            assert!(recorder.with_method(method).is_empty(), "{method}");
        }
    }
    // The genuine id still works.
    let task = host
        .task_request::<GetTask>(&id, &TaskIdParams::new(&id), &Default::default())
        .await
        .unwrap();
    assert_eq!(task.task_id, id);
    running.close().await;
}

#[tokio::test]
async fn the_hub_refuses_legacy_task_requests_to_a_server_without_the_capability() {
    let (alpha, alpha_recorder) = tasking_server();
    let (beta, beta_recorder) = undeclared_server();
    // A 2025-06-18 server that declares `tasks` anyway (no such version
    // has them).
    let (gamma, _) = memory(Script::legacy().versions(["2025-06-18"]).task_tool(
        "old",
        Behavior::Echo,
        TaskSupport::Optional,
    ));
    let running = start(Setup::new(vec![
        spec("alpha", alpha),
        spec("beta", beta),
        spec("gamma", gamma),
    ]))
    .await;
    let hub = &running.hub;
    assert!(hub.offers_legacy_tasks("alpha"));
    assert!(!hub.offers_legacy_tasks("beta"));
    assert!(!hub.offers_legacy_tasks("gamma"));
    assert!(!hub.offers_legacy_tasks("nobody"));
    let options = CallOptions::new();

    let mut params = CallToolParams::new("beta/sneaky", Some(Default::default()));
    params.task = Some(TaskMetadata::default());
    let refused = hub.call_tool_as_task(params, &options).await.unwrap_err();
    assert!(
        matches!(&refused, HubError::Unsupported { server, .. } if server.as_str() == "beta"),
        "{refused}"
    );
    let params = || TaskIdParams::new("mcp-testkit-task-1");
    let refusals = [
        hub.get_legacy_task("beta", params(), &options)
            .await
            .unwrap_err(),
        hub.legacy_task_result("beta", params(), &options)
            .await
            .unwrap_err(),
        hub.cancel_legacy_task("beta", params(), &options)
            .await
            .unwrap_err(),
    ];
    for refused in &refusals {
        assert!(matches!(refused, HubError::Unsupported { .. }), "{refused}");
        assert!(refused.to_string().contains("`beta`"), "{refused}");
    }
    assert!(beta_recorder.with_method("tools/call").is_empty());
    assert!(beta_recorder.with_method("tasks/get").is_empty());

    // The governed path for the one that offers them: a task, then its
    // status and result by the server's own id.
    let mut params = CallToolParams::new("alpha/link", Some(Default::default()));
    params.task = Some(TaskMetadata {
        ttl: Some(1000),
        ..Default::default()
    });
    let round = hub.call_tool_as_task(params, &options).await.unwrap();
    assert_eq!(round.route.server, "alpha");
    let mcp_types::RequestOutcome::Task(created) = round.outcome else {
        panic!("not a task: {:?}", round.outcome);
    };
    let server_id = created.task().task_id.clone();
    assert_eq!(server_id, "mcp-testkit-task-1");
    let result = hub
        .legacy_task_result("alpha", TaskIdParams::new(&server_id), &options)
        .await
        .unwrap();
    assert_eq!(result.content.len(), 1);
    let task = hub
        .get_legacy_task("alpha", TaskIdParams::new(&server_id), &options)
        .await
        .unwrap();
    assert_eq!(task.status, mcp_types::TaskStatus::Completed);
    assert_eq!(alpha_recorder.with_method("tasks/result").len(), 1);
    running.close().await;
}

#[tokio::test]
async fn a_2026_host_is_listed_no_task_support_and_a_legacy_one_is() {
    let (alpha, _) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let (status, answer) = gateway
        .send("tools/list", json!({}), json!({"elicitation": {}}))
        .await;
    assert_eq!(status, 200, "{answer}");
    let tools = answer["result"]["tools"].as_array().expect("tools").clone();
    let hang = tools
        .iter()
        .find(|t| t["name"] == "hang")
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(hang.get("execution").is_none(), "{hang}");

    let (legacy, _events) = gateway.host(Negotiation::Legacy).await;
    let catalog = legacy.list_tools().await.unwrap();
    assert_eq!(task_support(catalog.tools(), "hang"), Some(Ts::Optional));
    legacy.close().await;
    gateway.stop().await;
}
