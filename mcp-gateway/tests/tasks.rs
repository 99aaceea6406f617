//! A 2026-07-28 host's tasks (the tasks extension, SEP-2663) through the
//! gateway over Streamable HTTP, by raw requests: a server's task reaches
//! the host under an id of the gateway's own, polled to completion with
//! its result inlined (URIs served), answered with `tasks/update`,
//! cancelled; an unknown or forged id is `-32602` and reaches no server;
//! a host that did not declare the extension gets synchronous results and
//! `-32021`.

#[path = "support/common.rs"]
mod common;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use mcp_testkit::{Behavior, InputRequest, InputSpec, Recorder, Script, TaskSupport};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// What these tests send through [`HttpGateway`].
trait Tasking {
    /// A request of a host that takes tasks.
    async fn tasking(&self, method: &str, params: Value) -> Value;

    /// Polls the task until its status is not `working` (bounded: the
    /// protocol is polling, at the interval the task names).
    async fn settled(&self, task_id: &str) -> Value;
}

impl Tasking for HttpGateway {
    async fn tasking(&self, method: &str, params: Value) -> Value {
        let (status, answer) = self.send(method, params, tasks_caps()).await;
        assert_eq!(status, 200, "{answer}");
        result(&answer).clone()
    }

    async fn settled(&self, task_id: &str) -> Value {
        for _ in 0..200 {
            let task = self.tasking("tasks/get", json!({"taskId": task_id})).await;
            if task["status"] != "working" {
                return task;
            }
            let interval = task["pollIntervalMs"].as_u64().unwrap_or(50).min(200);
            tokio::time::sleep(Duration::from_millis(interval)).await;
        }
        panic!("task {task_id} stayed working");
    }
}

fn tasks_caps() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

fn result(answer: &Value) -> &Value {
    answer
        .get("result")
        .unwrap_or_else(|| panic!("no result: {answer}"))
}

fn error_of(answer: &Value) -> (i64, Value) {
    let error = answer
        .get("error")
        .unwrap_or_else(|| panic!("no error: {answer}"));
    (error["code"].as_i64().unwrap(), error["data"].clone())
}

/// A 2026-07-28 server whose tools may run as tasks: `slow` (answers
/// after `seconds`), `link` (a resource link), `hang` (never answers),
/// `confirm` (asks for a confirmation first), `must` (only as a task), and
/// `plain` (never a task).
fn tasking_server() -> (std::sync::Arc<dyn mcp_transport::Connector>, Recorder) {
    let link = json!({"type": "resource_link", "uri": "file:///report.txt", "name": "report"});
    let confirm = InputSpec::one(
        "confirm",
        InputRequest::elicit_form(
            "Go ahead?",
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
        ),
    );
    let optional = TaskSupport::Optional;
    memory(
        Script::modern()
            .task_tool(
                "slow",
                Behavior::TextAfter {
                    argument: "seconds".into(),
                    text: "slow done".into(),
                },
                optional,
            )
            .task_tool(
                "link",
                Behavior::Content {
                    content: vec![link],
                    is_error: false,
                    logs: Vec::new(),
                },
                optional,
            )
            .task_tool("hang", Behavior::Hang, optional)
            .task_tool("confirm", Behavior::Ask(confirm), optional)
            .task_tool(
                "must",
                Behavior::Text {
                    text: "as a task".into(),
                },
                TaskSupport::Required,
            )
            .tool(
                "plain",
                Behavior::Text {
                    text: "plain".into(),
                },
            ),
    )
}

/// A 2026-07-28 server without tasks.
fn plain_server() -> (std::sync::Arc<dyn mcp_transport::Connector>, Recorder) {
    memory(Script::modern().tool(
        "echo",
        Behavior::Text {
            text: "echo".into(),
        },
    ))
}

/// Starts a task of `tool` on `alpha`; its creation result.
async fn create(gateway: &HttpGateway, tool: &str, arguments: Value) -> Value {
    let created = gateway
        .tasking(
            "tools/call",
            json!({"name": format!("alpha/{tool}"), "arguments": arguments}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    created
}

#[tokio::test]
async fn the_gateway_declares_the_extension_only_with_a_server_that_offers_it() {
    let (alpha, _) = tasking_server();
    let (beta, _) = plain_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha), spec("beta", beta)]).await;
    let discovered = gateway.tasking("server/discover", json!({})).await;
    assert!(
        discovered["capabilities"]["extensions"][TASKS].is_object(),
        "{discovered}"
    );
    assert!(discovered["capabilities"].get("tasks").is_none());
    gateway.stop().await;

    let (beta, _) = plain_server();
    let gateway = HttpGateway::unrestricted(vec![spec("beta", beta)]).await;
    let discovered = gateway.tasking("server/discover", json!({})).await;
    assert!(
        discovered["capabilities"]["extensions"]
            .get(TASKS)
            .is_none(),
        "{discovered}"
    );
    // Not declared: the methods do not exist.
    let (_, answer) = gateway
        .send("tasks/get", json!({"taskId": "x"}), tasks_caps())
        .await;
    assert_eq!(error_of(&answer).0, -32601, "{answer}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_task_is_polled_to_completion_under_the_gateways_id_with_its_result_served() {
    let (alpha, recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let created = create(&gateway, "link", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    // The server's own id stays behind the gateway.
    let calls = recorder.with_method("tools/call");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            [TASKS],
        json!({}),
        "the host's declaration travels: {}",
        calls[0]
    );
    assert!(id.starts_with("gwt1."), "{id}");
    assert!(!id.contains("mcp-testkit-task"), "{id}");
    for key in ["createdAt", "lastUpdatedAt", "status"] {
        assert!(created.get(key).is_some(), "{key}: {created}");
    }
    assert!(created.get("result").is_none(), "{created}");

    let done = gateway.settled(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["taskId"], id.as_str());
    assert_eq!(done["resultType"], "complete", "{done}");
    let inlined = &done["result"]["content"][0];
    assert_eq!(
        inlined["uri"], "mcp-gateway://alpha/file:///report.txt",
        "{done}"
    );
    // Every poll reached the server by its own id.
    let polls = recorder.with_method("tasks/get");
    assert!(!polls.is_empty());
    for poll in &polls {
        assert_eq!(poll["params"]["taskId"], "mcp-testkit-task-1", "{poll}");
    }
    gateway.stop().await;
}

/// The next event of a listen stream, in time.
async fn next_event(
    stream: &mut mcp_session::Subscription,
) -> Option<mcp_session::SubscriptionEvent> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event in time")
}

#[tokio::test]
async fn a_hosts_listen_stream_hears_its_tasks_states_under_the_gateways_id() {
    let (alpha, recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let (host, _events) = gateway
        .host_taking_tasks(mcp_session::Negotiation::Modern, true)
        .await;
    let started = host
        .call_tool_as_task("alpha/hang", json!({}), None)
        .await
        .unwrap();
    let mcp_session::ToolCallStart::Task(task) = started else {
        panic!("a task, not {started:?}");
    };
    let id = task.id().to_owned();
    assert!(id.starts_with("gwt1."), "{id}");
    let forged = format!("{id}x");
    let filter = mcp_types::SubscriptionFilter {
        task_ids: Some(vec![id.clone(), forged.clone()]),
        ..Default::default()
    };
    let mut stream = host.subscribe(filter).await.unwrap();
    let Some(mcp_session::SubscriptionEvent::Acknowledged { accepted, refused }) =
        next_event(&mut stream).await
    else {
        panic!("an acknowledgement first");
    };
    assert_eq!(accepted.task_ids, Some(vec![id.clone()]));
    assert_eq!(refused.task_ids, Some(vec![forged]));
    // The server was asked about its own id, never the gateway's.
    let asked: Vec<Value> = recorder
        .with_method("subscriptions/listen")
        .iter()
        .filter_map(|f| f["params"]["notifications"].get("taskIds").cloned())
        .collect();
    assert_eq!(asked, [json!(["mcp-testkit-task-1"])]);

    host.cancel_task(&task).await.unwrap();
    let state = loop {
        match next_event(&mut stream).await {
            Some(mcp_session::SubscriptionEvent::Task(state)) => break state,
            Some(_) => {}
            None => panic!("the stream ended"),
        }
    };
    assert_eq!(state.task_id, id);
    assert_eq!(state.status, mcp_types::TaskStatus::Cancelled);
    // The server's _meta stays behind: only the stream's own id is there.
    let meta = serde_json::to_value(&state.meta).unwrap();
    let keys: Vec<&String> = meta
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .collect();
    assert_eq!(keys, ["io.modelcontextprotocol/subscriptionId"], "{meta}");
    // The host's stream ends: so does the server's.
    drop(stream);
    let ended = recorder
        .wait_until(Duration::from_secs(10), |frames| {
            frames
                .iter()
                .any(|f| f["method"] == "notifications/cancelled")
        })
        .await;
    assert!(ended, "the server's listen is cancelled");
    host.close().await;
    gateway.stop().await;
}

#[tokio::test]
async fn a_task_asks_through_tasks_get_and_takes_the_answer_by_tasks_update() {
    let (alpha, recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let created = create(&gateway, "confirm", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let asking = gateway.settled(&id).await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert_eq!(
        asking["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    // An answer that is not an object is the host's mistake, kept here.
    let (status, refused) = gateway
        .send(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"confirm": 5}}),
            tasks_caps(),
        )
        .await;
    assert_eq!(error_of(&refused).0, -32602, "{status} {refused}");
    assert!(recorder.with_method("tasks/update").is_empty());

    let ack = gateway
        .tasking(
            "tasks/update",
            json!({"taskId": id, "inputResponses":
                {"confirm": {"action": "accept", "content": {"ok": true}}}}),
        )
        .await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    assert!(ack.get("taskId").is_none(), "{ack}");
    let done = gateway.settled(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(done["result"].to_string().contains("accept"), "{done}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_cancelled_task_is_acknowledged_and_settles_cancelled() {
    let (alpha, recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let created = create(&gateway, "hang", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let ack = gateway.tasking("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    for key in ["taskId", "status", "result", "error"] {
        assert!(ack.get(key).is_none(), "{key}: {ack}");
    }
    let cancels = recorder.with_method("tasks/cancel");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0]["params"]["taskId"], "mcp-testkit-task-1");
    let after = gateway.tasking("tasks/get", json!({"taskId": id})).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    gateway.stop().await;
}

#[tokio::test]
async fn an_unknown_or_forged_task_id_is_refused_and_reaches_no_server() {
    let (alpha, alpha_recorder) = tasking_server();
    let (beta, beta_recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha), spec("beta", beta)]).await;
    let created = create(&gateway, "hang", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();

    // The same payload naming another server, under alpha's tag.
    let (payload, tag) = id.strip_prefix("gwt1.").unwrap().split_once('.').unwrap();
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert!(text.contains("\"alpha\""), "{text}");
    let forged = format!(
        "gwt1.{}.{tag}",
        URL_SAFE_NO_PAD.encode(text.replace("\"alpha\"", "\"beta\""))
    );
    for bad in [forged.as_str(), "mcp-testkit-task-1", "nope"] {
        for method in ["tasks/get", "tasks/cancel"] {
            let (_, answer) = gateway
                .send(method, json!({"taskId": bad}), tasks_caps())
                .await;
            let (code, data) = error_of(&answer);
            assert_eq!(code, -32602, "{method} {bad}: {answer}");
            assert_eq!(data["kind"], "task_unknown", "{answer}");
        }
    }
    for recorder in [&alpha_recorder, &beta_recorder] {
        assert!(recorder.with_method("tasks/get").is_empty());
        assert!(recorder.with_method("tasks/cancel").is_empty());
    }
    // The genuine id still works.
    let task = gateway.tasking("tasks/get", json!({"taskId": id})).await;
    assert_eq!(task["status"], "working", "{task}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_host_without_the_extension_gets_synchronous_results_and_minus_32021() {
    let (alpha, recorder) = tasking_server();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let none = json!({"elicitation": {}});
    let (status, answer) = gateway
        .send(
            "tools/call",
            json!({"name": "alpha/slow", "arguments": {"seconds": 0}}),
            none.clone(),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let done = result(&answer);
    assert_eq!(done["resultType"], "complete", "{done}");
    assert!(done.get("taskId").is_none(), "{done}");
    assert_eq!(done["content"][0]["text"], "slow done", "{done}");

    // A tool that runs only as a task: the server's -32021, naming the
    // extension, reaches the host.
    let (status, answer) = gateway
        .send(
            "tools/call",
            json!({"name": "alpha/must", "arguments": {}}),
            none.clone(),
        )
        .await;
    let (code, data) = error_of(&answer);
    assert_eq!((status, code), (400, -32021), "{answer}");
    assert!(
        data["requiredCapabilities"]["extensions"][TASKS].is_object(),
        "{answer}"
    );

    // The task methods need the declaration, whatever the id.
    for method in ["tasks/get", "tasks/cancel"] {
        let (_, answer) = gateway
            .send(method, json!({"taskId": "any"}), none.clone())
            .await;
        let (code, data) = error_of(&answer);
        assert_eq!(code, -32021, "{method}: {answer}");
        assert!(
            data["requiredCapabilities"]["extensions"][TASKS].is_object(),
            "{answer}"
        );
    }
    assert!(recorder.with_method("tasks/get").is_empty());
    // Nothing the host sent asked the server for a task.
    for call in recorder.with_method("tools/call") {
        assert!(
            call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                .get("extensions")
                .is_none(),
            "{call}"
        );
    }
    gateway.stop().await;
}
