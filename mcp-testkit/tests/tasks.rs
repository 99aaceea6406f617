//! Tasks: the 2025-11-25 core feature and the 2026-07-28 extension.

#[path = "support/common.rs"]
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use mcp_testkit::{
    Behavior, InputRequest, InputSpec, Line, LineClient, Script, TaskSupport, ToolSpec, wire,
};
use serde_json::{Value, json};

fn sleepy(ms: u64) -> Behavior {
    Behavior::Sleep {
        ms,
        progress_steps: 0,
    }
}

fn task_script() -> Script {
    Script::dual()
        .task_tool("slow", sleepy(200), TaskSupport::Optional)
        .task_tool("must", sleepy(10), TaskSupport::Required)
        .task_tool("stuck", Behavior::Hang, TaskSupport::Optional)
        .task_tool(
            "broken",
            Behavior::ToolError {
                text: "it broke".into(),
            },
            TaskSupport::Optional,
        )
        .task_tool(
            "fails",
            Behavior::Error {
                code: -32000,
                message: "backend down".into(),
                data: None,
            },
            TaskSupport::Optional,
        )
        .task_tool(
            "asks",
            Behavior::Ask(
                InputSpec::one(
                    "name",
                    InputRequest::elicit_form(
                        "Name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                    ),
                )
                .rounds(2),
            ),
            TaskSupport::Optional,
        )
        .tool("echo", Behavior::Echo)
}

/// How long [`wait_task`] waits for a task to get there.
const TASK_WAIT: Duration = Duration::from_secs(10);

/// Listen streams opened by [`wait_task`], for their ids.
static LISTENS: AtomicUsize = AtomicUsize::new(0);

/// The task as `tasks/get` answers it.
async fn get_task(client: &mut LineClient, task_id: &Value, meta: bool) -> Value {
    let params = json!({"taskId": task_id});
    let params = if meta {
        modern_with(params, tasks_caps())
    } else {
        params
    };
    client.request("tasks/get", params).await["result"].clone()
}

/// Whether `frame` announces a change of the task `task_id`: 2025-11-25
/// `notifications/tasks/status`, 2026-07-28 `notifications/tasks`.
fn announces(frame: &Value, task_id: &Value) -> bool {
    matches!(
        frame["method"].as_str(),
        Some("notifications/tasks/status" | "notifications/tasks")
    ) && frame["params"]["taskId"] == *task_id
}

/// Reads frames into [`LineClient::skipped`] until one satisfies `wanted`
/// (kept there too), within `deadline`.
async fn read_until(
    client: &mut LineClient,
    deadline: tokio::time::Instant,
    what: &str,
    wanted: impl Fn(&Value) -> bool,
) {
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match client.next_line(left).await {
            Line::Json(frame) => {
                let done = wanted(&frame);
                client.skipped.push(frame);
                if done {
                    return;
                }
            }
            Line::TimedOut => panic!("no {what} within {TASK_WAIT:?}"),
            other => panic!("waiting for {what}, got {other:?}"),
        }
    }
}

/// Waits until `done(task)` holds for the task as `tasks/get` answers it,
/// reading the task again on each of its status notifications (2025-11-25:
/// sent unasked; 2026-07-28: on a listen stream opened for the task here,
/// and cancelled once it got there). Panics after [`TASK_WAIT`].
async fn wait_task<F>(client: &mut LineClient, task_id: &Value, meta: bool, done: F) -> Value
where
    F: Fn(&Value) -> bool,
{
    let deadline = tokio::time::Instant::now() + TASK_WAIT;
    let listen = if meta {
        let id = format!("wait-task-{}", LISTENS.fetch_add(1, Ordering::Relaxed));
        let params = modern_with(
            json!({"notifications": {"taskIds": [task_id]}}),
            tasks_caps(),
        );
        client
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}))
            .await;
        // Nothing on the stream comes ahead of its acknowledgement, and the
        // `tasks/get` below is answered after the stream is registered.
        read_until(client, deadline, "acknowledgement", |frame| {
            frame["method"] == "notifications/subscriptions/acknowledged"
                && frame["params"]["_meta"][wire::META_SUBSCRIPTION_ID] == id.as_str()
        })
        .await;
        Some(id)
    } else {
        None
    };
    let task = loop {
        let before = client.skipped.len();
        let task = get_task(client, task_id, meta).await;
        if done(&task) {
            break task;
        }
        // Not there yet: the next change is announced. One announced while
        // the answer was on its way is already skipped; read the task again.
        if !client.skipped[before..]
            .iter()
            .any(|frame| announces(frame, task_id))
        {
            let what = format!("status notification of task {task_id} (last {task})");
            read_until(client, deadline, &what, |frame| announces(frame, task_id)).await;
        }
    };
    if let Some(id) = listen {
        client
            .notify("notifications/cancelled", json!({"requestId": id}))
            .await;
    }
    task
}

/// Waits until the task has `status` (see [`wait_task`]).
async fn wait_status(client: &mut LineClient, task_id: &Value, status: &str, meta: bool) -> Value {
    wait_task(client, task_id, meta, |task| task["status"] == status).await
}

#[tokio::test]
async fn legacy_advertises_tasks_and_lists_task_support() {
    let (mut client, _) = start(task_script());
    let init = client.initialize("2025-11-25").await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    let list = client.request("tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let support =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["execution"].clone();
    assert_eq!(support("slow"), json!({"taskSupport": "optional"}));
    assert_eq!(support("must"), json!({"taskSupport": "required"}));
    assert_eq!(support("echo"), Value::Null);
}

#[tokio::test]
async fn legacy_task_lifecycle_get_result_list_and_status_notifications() {
    let (mut client, recorder) = legacy(task_script()).await;
    let created = client
        .request(
            "tools/call",
            json!({"name": "slow", "arguments": {}, "task": {"ttl": 5000}}),
        )
        .await;
    let result = &created["result"];
    assert_has_required("2025-11-25", "CreateTaskResult", result);
    let task = &result["task"];
    assert_has_required("2025-11-25", "Task", task);
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 5000);
    assert_eq!(task["pollInterval"], 50);
    let task_id = task["taskId"].clone();

    let got = client
        .request("tasks/get", json!({"taskId": task_id}))
        .await;
    assert_eq!(got["result"]["status"], "working");
    assert!(got["result"].get("resultType").is_none());

    // tasks/result blocks until the task is done, then answers the call's result.
    let payload = client
        .request("tasks/result", json!({"taskId": task_id}))
        .await;
    assert_eq!(text(&payload), "slept 200 ms");
    assert_eq!(
        payload["result"]["_meta"][wire::META_RELATED_TASK],
        json!({"taskId": task_id})
    );
    // The status notification races the tasks/result answer: it is either
    // already skipped or the next frame.
    let mut frames = client.skipped.clone();
    if let Line::Json(next) = client.next_line(QUIET).await {
        frames.push(next);
    }
    let status = frames
        .iter()
        .find(|f| f["method"] == "notifications/tasks/status")
        .cloned()
        .expect("a status notification");
    assert_eq!(status["params"]["status"], "completed");
    assert_eq!(status["params"]["taskId"], task_id);

    let list = client.request("tasks/list", json!({})).await;
    assert_eq!(list["result"]["tasks"][0]["taskId"], task_id);
    assert_eq!(list["result"]["tasks"][0]["status"], "completed");
    let cancel = client
        .request("tasks/cancel", json!({"taskId": task_id}))
        .await;
    assert_eq!(
        cancel["error"]["code"],
        wire::INVALID_PARAMS,
        "already terminal"
    );
    let unknown = client.request("tasks/get", json!({"taskId": "nope"})).await;
    assert_eq!(unknown["error"]["code"], wire::INVALID_PARAMS);
    assert_eq!(recorder.with_method("tasks/result").len(), 1);
}

#[tokio::test]
async fn legacy_cancel_failed_and_errored_tasks() {
    let (mut client, _) = legacy(task_script()).await;
    let stuck = client
        .request("tools/call", json!({"name": "stuck", "task": {}}))
        .await;
    let stuck_id = stuck["result"]["task"]["taskId"].clone();
    assert_eq!(
        stuck["result"]["task"]["ttl"], 60_000,
        "the script's default ttl"
    );
    let cancelled = client
        .request("tasks/cancel", json!({"taskId": stuck_id}))
        .await;
    assert_eq!(cancelled["result"]["status"], "cancelled");
    assert_eq!(cancelled["result"]["taskId"], stuck_id);
    let payload = client
        .request("tasks/result", json!({"taskId": stuck_id}))
        .await;
    assert_eq!(payload["error"]["code"], wire::INVALID_PARAMS);

    let broken = client
        .request("tools/call", json!({"name": "broken", "task": {}}))
        .await;
    let broken_id = broken["result"]["task"]["taskId"].clone();
    let failed = wait_status(&mut client, &broken_id, "failed", false).await;
    assert!(failed["statusMessage"].is_string());
    let payload = client
        .request("tasks/result", json!({"taskId": broken_id}))
        .await;
    assert_eq!(payload["result"]["isError"], true);
    assert_eq!(text(&payload), "it broke");

    let fails = client
        .request("tools/call", json!({"name": "fails", "task": {}}))
        .await;
    let fails_id = fails["result"]["task"]["taskId"].clone();
    let payload = client
        .request("tasks/result", json!({"taskId": fails_id}))
        .await;
    assert_eq!(
        payload["error"],
        json!({"code": -32000, "message": "backend down"})
    );
}

#[tokio::test]
async fn legacy_task_support_is_enforced_and_old_versions_ignore_tasks() {
    let (mut client, _) = legacy(task_script()).await;
    let required = client
        .request("tools/call", json!({"name": "must", "arguments": {}}))
        .await;
    assert_eq!(required["error"]["code"], wire::METHOD_NOT_FOUND);
    let forbidden = client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}, "task": {}}),
        )
        .await;
    assert_eq!(forbidden["error"]["code"], wire::METHOD_NOT_FOUND);

    let (mut old, _) = legacy_at(task_script(), "2025-06-18").await;
    let plain = old
        .request("tools/call", json!({"name": "slow", "task": {}}))
        .await;
    assert_eq!(text(&plain), "slept 200 ms");
    let get = old.request("tasks/get", json!({"taskId": "x"})).await;
    assert_eq!(get["error"]["code"], wire::METHOD_NOT_FOUND);
    let list = old.request("tools/list", json!({})).await;
    assert!(list["result"]["tools"][0].get("execution").is_none());
}

#[tokio::test]
async fn a_legacy_task_asking_the_client_is_input_required_with_related_task() {
    let script = Script::legacy().task_tool(
        "asks",
        Behavior::AskClient {
            method: "roots/list".into(),
            params: Value::Null,
        },
        TaskSupport::Optional,
    );
    let (mut client, _) = legacy(script).await;
    let created = client
        .request("tools/call", json!({"name": "asks", "task": {}}))
        .await;
    let task_id = created["result"]["task"]["taskId"].clone();
    let mut request = Value::Null;
    let mut statuses = Vec::new();
    while request.is_null() {
        let frame = client.recv().await;
        match frame["method"].as_str() {
            Some("roots/list") => request = frame,
            Some("notifications/tasks/status") => statuses.push(frame["params"]["status"].clone()),
            _ => panic!("unexpected {frame}"),
        }
    }
    assert_eq!(statuses, [json!("input_required")]);
    assert_eq!(
        request["params"]["_meta"][wire::META_RELATED_TASK],
        json!({"taskId": task_id})
    );
    client
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}))
        .await;
    let payload = client
        .request("tasks/result", json!({"taskId": task_id}))
        .await;
    assert_eq!(text(&payload), r#"{"roots":[]}"#);
}

#[tokio::test]
async fn modern_tasks_are_flat_results_polled_with_tasks_get() {
    let (mut client, _) = start(task_script());
    let discover = client.request("server/discover", modern(json!({}))).await;
    assert_eq!(
        discover["result"]["capabilities"]["extensions"],
        json!({wire::TASKS_EXTENSION: {}})
    );
    assert!(discover["result"]["capabilities"].get("tasks").is_none());
    let created = client
        .request(
            "tools/call",
            modern_with(call("slow", json!({})), tasks_caps()),
        )
        .await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task");
    assert_eq!(result["status"], "working");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["pollIntervalMs"], 50);
    assert!(result["createdAt"].is_string() && result["lastUpdatedAt"].is_string());
    assert!(result.get("task").is_none(), "flat, not wrapped");
    let task_id = result["taskId"].clone();
    let done = wait_status(&mut client, &task_id, "completed", true).await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "slept 200 ms");

    let broken = client
        .request(
            "tools/call",
            modern_with(call("broken", json!({})), tasks_caps()),
        )
        .await;
    let broken_id = broken["result"]["taskId"].clone();
    let done = wait_status(&mut client, &broken_id, "completed", true).await;
    assert_eq!(
        done["result"]["isError"], true,
        "isError is completed in 2026"
    );
    let fails = client
        .request(
            "tools/call",
            modern_with(call("fails", json!({})), tasks_caps()),
        )
        .await;
    let failed = wait_status(&mut client, &fails["result"]["taskId"], "failed", true).await;
    assert_eq!(failed["error"]["code"], -32000);

    for method in ["tasks/result", "tasks/list"] {
        let reply = client
            .request(method, modern(json!({"taskId": task_id})))
            .await;
        assert_eq!(reply["error"]["code"], wire::METHOD_NOT_FOUND, "{method}");
    }
}

#[tokio::test]
async fn modern_task_support_follows_the_declared_extension() {
    let (mut client, _) = start(task_script());
    let plain = client
        .request("tools/call", modern(call("slow", json!({}))))
        .await;
    assert_eq!(plain["result"]["resultType"], "complete");
    let required = client
        .request("tools/call", modern(call("must", json!({}))))
        .await;
    assert_eq!(required["error"]["code"], wire::MISSING_CLIENT_CAPABILITY);
    assert_eq!(
        required["error"]["data"],
        json!({"requiredCapabilities": {"extensions": {wire::TASKS_EXTENSION: {}}}})
    );
    let echo = client
        .request(
            "tools/call",
            modern_with(call("echo", json!({"text": "hi"})), tasks_caps()),
        )
        .await;
    assert_eq!(
        echo["result"]["resultType"], "complete",
        "echo never makes a task"
    );
}

#[tokio::test]
async fn modern_task_input_goes_through_tasks_update() {
    let (mut client, recorder) = start(task_script());
    let created = client
        .request(
            "tools/call",
            modern_with(call("asks", json!({})), tasks_caps()),
        )
        .await;
    let task_id = created["result"]["taskId"].clone();
    for (round, key) in [(0, "name"), (1, "name#2")] {
        let waiting = wait_task(&mut client, &task_id, true, |task| {
            task["status"] == "input_required" && task["inputRequests"].get(key).is_some()
        })
        .await;
        let requests = waiting["inputRequests"].as_object().unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), [key], "round {round}");
        assert_eq!(requests[key]["method"], "elicitation/create");
        let ack = client
            .request(
                "tasks/update",
                modern_with(
                    json!({"taskId": task_id, "inputResponses": {
                        key: {"action": "accept", "content": {"name": format!("n{round}")}},
                        "stale": {"ignored": true},
                    }}),
                    tasks_caps(),
                ),
            )
            .await;
        assert_eq!(ack["result"]["resultType"], "complete");
    }
    let done = wait_status(&mut client, &task_id, "completed", true).await;
    assert_eq!(
        done["result"]["structuredContent"]["rounds"],
        json!([{"name": {"action": "accept", "content": {"name": "n0"}}},
               {"name": {"action": "accept", "content": {"name": "n1"}}}])
    );
    assert_eq!(recorder.with_method("tasks/update").len(), 2);
    let unknown = client
        .request(
            "tasks/update",
            modern_with(
                json!({"taskId": "nope", "inputResponses": {}}),
                tasks_caps(),
            ),
        )
        .await;
    assert_eq!(unknown["error"]["code"], wire::INVALID_PARAMS);
    // Without the extension declared, the task methods are refused.
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let undeclared = client
            .request(
                method,
                modern(json!({"taskId": task_id, "inputResponses": {}})),
            )
            .await;
        assert_eq!(
            undeclared["error"]["code"],
            wire::MISSING_CLIENT_CAPABILITY,
            "{method}"
        );
        assert_eq!(
            undeclared["error"]["data"]["requiredCapabilities"]["extensions"],
            json!({wire::TASKS_EXTENSION: {}})
        );
    }
}

#[tokio::test]
async fn modern_cancel_acknowledges_and_listen_streams_get_task_notifications() {
    let (mut client, _) = start(task_script());
    let created = client
        .request(
            "tools/call",
            modern_with(call("stuck", json!({})), tasks_caps()),
        )
        .await;
    let task_id = created["result"]["taskId"].clone();
    let listen = modern_with(
        json!({"notifications": {"taskIds": [task_id, "unknown-task"]}}),
        tasks_caps(),
    );
    client
        .send(&json!({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": listen}))
        .await;
    let ack = client.recv().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"taskIds": [task_id]})
    );
    let cancel = client
        .request(
            "tasks/cancel",
            modern_with(json!({"taskId": task_id}), tasks_caps()),
        )
        .await;
    assert_eq!(cancel["result"]["resultType"], "complete");
    let note = &client.recv().await;
    assert_eq!(note["method"], "notifications/tasks");
    assert_eq!(note["params"]["status"], "cancelled");
    assert_eq!(note["params"]["_meta"][wire::META_SUBSCRIPTION_ID], "L");
    let got = client
        .request(
            "tasks/get",
            modern_with(json!({"taskId": task_id}), tasks_caps()),
        )
        .await;
    assert_eq!(got["result"]["status"], "cancelled");
    let again = client
        .request(
            "tasks/cancel",
            modern_with(json!({"taskId": task_id}), tasks_caps()),
        )
        .await;
    assert_eq!(
        again["result"]["resultType"], "complete",
        "terminal: still acknowledged"
    );
}

#[tokio::test]
async fn tasks_without_task_tools_do_not_exist() {
    let (mut client, _) = legacy(Script::dual().tool("echo", Behavior::Echo)).await;
    let list = client.request("tasks/list", json!({})).await;
    assert_eq!(list["error"]["code"], wire::METHOD_NOT_FOUND);
    let modern_get = client
        .request("tasks/get", modern(json!({"taskId": "x"})))
        .await;
    assert_eq!(modern_get["error"]["code"], wire::METHOD_NOT_FOUND);
    let spec = ToolSpec::from_json(
        json!({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}),
        sleepy(1),
    );
    let (mut client, _) = legacy(Script::legacy().tool_spec(spec)).await;
    let created = client
        .request("tools/call", json!({"name": "t", "task": {}}))
        .await;
    assert_eq!(created["result"]["task"]["status"], "working");
}

fn name_form(message: &str) -> InputRequest {
    InputRequest::elicit_form(
        message,
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    )
}

#[tokio::test]
async fn a_partly_answered_task_shows_only_the_pending_requests() {
    let both = InputSpec::one("first", name_form("First?")).and("second", name_form("Second?"));
    let script = Script::modern().task_tool("both", Behavior::Ask(both), TaskSupport::Optional);
    let (mut client, _) = start(script);
    let created = client
        .request(
            "tools/call",
            modern_with(call("both", json!({})), tasks_caps()),
        )
        .await;
    let task_id = created["result"]["taskId"].clone();
    let asking = wait_task(&mut client, &task_id, true, |task| {
        task["inputRequests"]
            .as_object()
            .is_some_and(|r| r.len() == 2)
    })
    .await;
    assert_eq!(asking["status"], "input_required");
    let answer = |name: &str| json!({"action": "accept", "content": {"name": name}});
    let ack = client
        .request(
            "tasks/update",
            modern_with(
                json!({"taskId": task_id, "inputResponses": {"first": answer("a")}}),
                tasks_caps(),
            ),
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let pending = wait_task(&mut client, &task_id, true, |task| {
        task["inputRequests"]
            .as_object()
            .is_some_and(|r| r.len() == 1)
    })
    .await;
    assert_eq!(pending["status"], "input_required");
    assert_eq!(
        pending["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["second"]
    );
    client
        .request(
            "tasks/update",
            modern_with(
                json!({"taskId": task_id, "inputResponses": {"second": answer("b")}}),
                tasks_caps(),
            ),
        )
        .await;
    let done = wait_status(&mut client, &task_id, "completed", true).await;
    assert_eq!(
        done["result"]["structuredContent"]["rounds"],
        json!([{"first": answer("a"), "second": answer("b")}])
    );
}

#[tokio::test]
async fn before_task_asks_by_input_required_results_then_makes_the_task() {
    let mut spec = InputSpec::one("user_name", name_form("Your name?"));
    spec.before_task = true;
    let script = Script::modern().task_tool("late", Behavior::Ask(spec), TaskSupport::Required);
    let (mut client, _) = start(script);
    let caps = json!({"elicitation": {}, "extensions": {wire::TASKS_EXTENSION: {}}});
    let first = client
        .request(
            "tools/call",
            modern_with(call("late", json!({})), caps.clone()),
        )
        .await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none(), "{first}");
    let state = first["requestState"].clone();
    assert!(state.is_string(), "{first}");
    let mut retry = call("late", json!({}));
    retry["requestState"] = state;
    retry["inputResponses"] =
        json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    let created = client.request("tools/call", modern_with(retry, caps)).await;
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none(), "{created}");
    let done = wait_status(&mut client, &created["taskId"], "completed", true).await;
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Alice"),
        "{done}"
    );
}

#[tokio::test]
async fn text_after_waits_the_seconds_an_argument_says() {
    let after = Behavior::TextAfter {
        argument: "seconds".into(),
        text: "done {label}".into(),
    };
    let script = Script::modern().tool("after", after);
    let (mut client, _) = start(script);
    let started = tokio::time::Instant::now();
    let reply = client
        .request(
            "tools/call",
            modern(call("after", json!({"seconds": 0.2, "label": "x"}))),
        )
        .await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(reply["result"]["content"][0]["text"], "done x");
    let refused = client
        .request(
            "tools/call",
            modern(call("after", json!({"seconds": "soon"}))),
        )
        .await;
    assert_eq!(refused["error"]["code"], wire::INVALID_PARAMS);
}
