//! Tasks: the 2025-11-25 core feature (`task` param, `CreateTaskResult
//! {task}`, `tasks/get|result|list|cancel`, `notifications/tasks/status`)
//! and the 2026-07-28 tasks extension (SEP-2663: `resultType: "task"`,
//! `tasks/get|update|cancel`, `notifications/tasks` on listen streams).
//!
//! A task runs the tool's behaviour on its own tokio task with a
//! [`Sink::Task`]: the behaviour's answer becomes the task's outcome
//! instead of a response.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::behavior::Behavior;
use crate::request::{Ctx, Era, Sink, complete, decorate};
use crate::server::Shared;
use crate::time::now_iso8601;
use crate::{listen, lists, tool_call, wire};

/// Queued `tasks/update` answers per task before updates are refused.
const INPUT_QUEUE: usize = 16;

/// The receiving end of a task's `tasks/update` answers, shared between the
/// table and the task's work.
pub(crate) type InputUpdates = Arc<tokio::sync::Mutex<mpsc::Receiver<Map<String, Value>>>>;

/// The tasks of one connection, in creation order.
#[derive(Default)]
pub(crate) struct TaskTable {
    next: u64,
    order: Vec<String>,
    entries: HashMap<String, Entry>,
}

struct Entry {
    era: Era,
    status: Status,
    status_message: Option<String>,
    created_at: String,
    last_updated_at: String,
    ttl: Option<u64>,
    poll_interval: u64,
    /// The final result (`Ok`) or JSON-RPC error object (`Err`).
    outcome: Option<Result<Value, Value>>,
    /// 2026-07-28: the outstanding `inputRequests` while `input_required`.
    input_requests: Option<Map<String, Value>>,
    input_tx: mpsc::Sender<Map<String, Value>>,
    input_rx: InputUpdates,
    abort: Option<AbortHandle>,
    terminal: watch::Sender<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

impl TaskTable {
    /// Stops every task's work (the connection is going away).
    pub(crate) fn abort_all(&mut self) {
        for entry in self.entries.values_mut() {
            if let Some(abort) = entry.abort.take() {
                abort.abort();
            }
        }
    }

    pub(crate) fn contains(&self, task_id: &str) -> bool {
        self.entries.contains_key(task_id)
    }
}

/// The task as JSON in `era`'s field names (2025-11-25 `ttl`/`pollInterval`,
/// 2026-07-28 `ttlMs`/`pollIntervalMs`); `detailed` adds the 2026-07-28
/// status payload (`inputRequests`, `result`, `error`).
fn task_json(task_id: &str, entry: &Entry, era: Era, detailed: bool) -> Value {
    let mut task = Map::new();
    task.insert("taskId".into(), task_id.into());
    task.insert("status".into(), entry.status.as_str().into());
    if let Some(message) = &entry.status_message {
        task.insert("statusMessage".into(), message.clone().into());
    }
    task.insert("createdAt".into(), entry.created_at.clone().into());
    task.insert("lastUpdatedAt".into(), entry.last_updated_at.clone().into());
    let (ttl, poll) = match era {
        Era::Legacy => ("ttl", "pollInterval"),
        Era::Modern => ("ttlMs", "pollIntervalMs"),
    };
    task.insert(ttl.into(), entry.ttl.map_or(Value::Null, Value::from));
    task.insert(poll.into(), entry.poll_interval.into());
    if detailed {
        match (&entry.status, &entry.outcome, &entry.input_requests) {
            (Status::InputRequired, _, Some(requests)) => {
                task.insert("inputRequests".into(), Value::Object(requests.clone()));
            }
            (Status::Completed, Some(Ok(result)), _) => {
                task.insert("result".into(), result.clone());
            }
            (Status::Failed, Some(Err(error)), _) => {
                task.insert("error".into(), error.clone());
            }
            // A 2026-07-28 tool result with isError is `completed`, so a
            // failed task always has an error; nothing else to add.
            _ => {}
        }
    }
    Value::Object(task)
}

/// Makes `tools/call` `id` a task running `behavior`; answers it with the
/// `CreateTaskResult` (2025-11-25 `{task}`, 2026-07-28 flat with
/// `resultType: "task"`).
pub(crate) async fn create(
    shared: &Arc<Shared>,
    id: &Value,
    era: Era,
    params: Value,
    behavior: Behavior,
) {
    let script = &shared.script;
    let ttl = match era {
        Era::Legacy => params
            .get("task")
            .and_then(|t| t.get("ttl"))
            .and_then(Value::as_u64)
            .or(script.task_ttl_ms),
        Era::Modern => script.task_ttl_ms,
    };
    let now = now_iso8601();
    let (input_tx, input_rx) = mpsc::channel(INPUT_QUEUE);
    let entry = Entry {
        era,
        status: Status::Working,
        status_message: Some("The operation is now in progress.".into()),
        created_at: now.clone(),
        last_updated_at: now,
        ttl,
        poll_interval: script.task_poll_interval_ms,
        outcome: None,
        input_requests: None,
        input_tx,
        input_rx: Arc::new(tokio::sync::Mutex::new(input_rx)),
        abort: None,
        terminal: watch::channel(false).0,
    };
    let created = {
        let mut table = shared.tasks();
        if table.entries.len() >= script.max_tasks {
            None
        } else {
            table.next += 1;
            let task_id = format!("mcp-testkit-task-{}", table.next);
            let json = task_json(&task_id, &entry, era, false);
            table.order.push(task_id.clone());
            table.entries.insert(task_id.clone(), entry);
            Some((task_id, json))
        }
    };
    let Some((task_id, task)) = created else {
        let message = format!(
            "Internal error: more than {} tasks",
            shared.script.max_tasks
        );
        let reply = wire::error(id, wire::INTERNAL_ERROR, &message, None);
        return shared.send(&reply).await;
    };
    // The task exists (a tasks/get would find it) before the answer goes out,
    // and the answer goes out before the work can report anything.
    let body = match era {
        Era::Legacy => json!({"task": task}),
        Era::Modern => decorate(shared, era, task, "task"),
    };
    shared.send(&wire::result(id, body)).await;
    let ctx = Ctx {
        shared: Arc::clone(shared),
        id: id.clone(),
        era,
        params,
        sink: Sink::Task(task_id.clone()),
    };
    let work = tokio::spawn(tool_call::run(ctx, behavior));
    let mut table = shared.tasks();
    match table.entries.get_mut(&task_id) {
        Some(entry) if !entry.status.is_terminal() => entry.abort = Some(work.abort_handle()),
        _ => {}
    }
}

/// Records the outcome of a task's work (ignored once the task is terminal,
/// e.g. cancelled). 2025-11-25 counts a tool result with `isError: true` as
/// `failed` (as its spec says); 2026-07-28 as `completed` (as SEP-2663 says).
pub(crate) async fn finish(shared: &Shared, task_id: &str, outcome: Result<Value, Value>) {
    {
        let mut table = shared.tasks();
        let Some(entry) = table.entries.get_mut(task_id) else {
            return;
        };
        if entry.status.is_terminal() {
            return;
        }
        let tool_error =
            matches!(&outcome, Ok(result) if result.get("isError") == Some(&Value::Bool(true)));
        let (status, message) = match (&outcome, tool_error && entry.era == Era::Legacy) {
            (Ok(_), false) => (Status::Completed, "The operation completed."),
            (Ok(_), true) => (Status::Failed, "Tool execution failed."),
            (Err(_), _) => (
                Status::Failed,
                "The operation failed with a JSON-RPC error.",
            ),
        };
        entry.status = status;
        entry.status_message = Some(message.into());
        entry.outcome = Some(outcome);
        entry.input_requests = None;
        entry.abort = None;
        entry.last_updated_at = now_iso8601();
        entry.terminal.send_replace(true);
    }
    notify(shared, task_id).await;
}

/// Moves a task to `input_required` (with the 2026-07-28 `inputRequests`).
pub(crate) async fn set_input_required(
    shared: &Shared,
    task_id: &str,
    requests: Option<Map<String, Value>>,
) {
    set_status(
        shared,
        task_id,
        Status::InputRequired,
        "Waiting for input from the client.",
        requests,
    )
    .await;
}

/// Moves a task back to `working`.
pub(crate) async fn set_working(shared: &Shared, task_id: &str) {
    set_status(
        shared,
        task_id,
        Status::Working,
        "The operation is now in progress.",
        None,
    )
    .await;
}

async fn set_status(
    shared: &Shared,
    task_id: &str,
    status: Status,
    message: &str,
    requests: Option<Map<String, Value>>,
) {
    {
        let mut table = shared.tasks();
        let Some(entry) = table.entries.get_mut(task_id) else {
            return;
        };
        if entry.status.is_terminal() {
            return;
        }
        entry.status = status;
        entry.status_message = Some(message.into());
        entry.input_requests = requests;
        entry.last_updated_at = now_iso8601();
    }
    notify(shared, task_id).await;
}

/// The queue of a task's `tasks/update` answers (for the work to read).
pub(crate) fn input_receiver(shared: &Shared, task_id: &str) -> Option<InputUpdates> {
    shared
        .tasks()
        .entries
        .get(task_id)
        .map(|e| Arc::clone(&e.input_rx))
}

/// Sends the task's status notification, if the script wants them:
/// 2025-11-25 `notifications/tasks/status` (the task), 2026-07-28
/// `notifications/tasks` (the detailed task) on listen streams that
/// acknowledged its id.
async fn notify(shared: &Shared, task_id: &str) {
    if !shared.script.task_status_notifications {
        return;
    }
    let snapshot = {
        let table = shared.tasks();
        table
            .entries
            .get(task_id)
            .map(|e| (e.era, task_json(task_id, e, e.era, e.era == Era::Modern)))
    };
    match snapshot {
        Some((Era::Legacy, task)) => {
            shared
                .send(&wire::notification("notifications/tasks/status", task))
                .await;
        }
        Some((Era::Modern, Value::Object(task))) => {
            listen::deliver(shared, "notifications/tasks", task, |l| {
                l.wants_task(task_id)
            })
            .await;
        }
        _ => {}
    }
}

/// The `taskId` param, or an error answer.
async fn task_id_param<'a>(shared: &Shared, id: &Value, params: &'a Value) -> Option<&'a str> {
    let task_id = params.get("taskId").and_then(Value::as_str);
    let known = task_id.is_some_and(|t| shared.tasks().contains(t));
    if known {
        return task_id;
    }
    let message = match task_id {
        Some(_) => "Invalid params: Failed to retrieve task: Task not found",
        None => "Invalid params: taskId must be a string",
    };
    let reply = wire::error(id, wire::INVALID_PARAMS, message, None);
    shared.send(&reply).await;
    None
}

/// `tasks/get`: the task (2026-07-28: detailed, `resultType: "complete"`).
pub(crate) async fn get(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let Some(task_id) = task_id_param(shared, id, params).await else {
        return;
    };
    let task = {
        let table = shared.tasks();
        table
            .entries
            .get(task_id)
            .map(|e| task_json(task_id, e, era, era == Era::Modern))
    };
    if let Some(task) = task {
        let body = complete(shared, era, task);
        shared.send(&wire::result(id, body)).await;
    }
}

/// `tasks/result` (2025-11-25): waits until the task is terminal, then
/// answers what the call would have: its result (with `related-task` in
/// `_meta`) or its error. A cancelled task has neither; the testkit answers
/// `-32602` "Task was cancelled" (the spec names no code: a guess).
pub(crate) async fn result(shared: &Arc<Shared>, id: &Value, params: &Value) {
    let Some(task_id) = task_id_param(shared, id, params).await else {
        return;
    };
    let task_id = task_id.to_owned();
    let Some(mut terminal) = shared
        .tasks()
        .entries
        .get(&task_id)
        .map(|e| e.terminal.subscribe())
    else {
        return;
    };
    let waiter = {
        let shared = Arc::clone(shared);
        let id = id.clone();
        async move {
            // The sender lives in the table; it only goes when the server does.
            if terminal.wait_for(|done| *done).await.is_err() {
                return;
            }
            let outcome = shared
                .tasks()
                .entries
                .get(&task_id)
                .and_then(|e| e.outcome.clone());
            let frame = match outcome {
                Some(Ok(mut result)) => {
                    if let Value::Object(map) = &mut result {
                        let meta = map.entry("_meta").or_insert_with(|| json!({}));
                        meta[wire::META_RELATED_TASK] = json!({"taskId": task_id});
                    }
                    wire::result(&id, result)
                }
                Some(Err(error)) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                None => wire::error(
                    &id,
                    wire::INVALID_PARAMS,
                    "Invalid params: Task was cancelled",
                    None,
                ),
            };
            shared.send(&frame).await;
        }
    };
    if shared.spawn_call(id, waiter).is_err() {
        let message = format!(
            "Internal error: more than {} calls in flight",
            shared.script.max_in_flight
        );
        shared
            .send(&wire::error(id, wire::INTERNAL_ERROR, &message, None))
            .await;
    }
}

/// `tasks/list` (2025-11-25): every task, paginated like the other lists.
pub(crate) async fn list(shared: &Shared, id: &Value, params: &Value) {
    let tasks: Vec<Value> = {
        let table = shared.tasks();
        table
            .order
            .iter()
            .filter_map(|t| {
                table
                    .entries
                    .get(t)
                    .map(|e| task_json(t, e, Era::Legacy, false))
            })
            .collect()
    };
    lists::send_page(shared, id, Era::Legacy, params, "tasks", tasks, false).await;
}

/// `tasks/cancel`. 2025-11-25: a terminal task is `-32602`, else the task
/// is cancelled and returned. 2026-07-28: always an empty acknowledgement
/// (a terminal task stays as it is).
pub(crate) async fn cancel(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let Some(task_id) = task_id_param(shared, id, params).await else {
        return;
    };
    let outcome = {
        let mut table = shared.tasks();
        let Some(entry) = table.entries.get_mut(task_id) else {
            return;
        };
        if entry.status.is_terminal() {
            Err(entry.status)
        } else {
            if let Some(abort) = entry.abort.take() {
                abort.abort();
            }
            entry.status = Status::Cancelled;
            entry.status_message = Some("The task was cancelled by request.".into());
            entry.input_requests = None;
            entry.last_updated_at = now_iso8601();
            entry.terminal.send_replace(true);
            Ok(task_json(task_id, entry, era, false))
        }
    };
    let cancelled = outcome.is_ok();
    let reply = match (era, outcome) {
        (Era::Legacy, Err(status)) => {
            let message = format!(
                "Invalid params: Cannot cancel task: already in terminal status '{}'",
                status.as_str()
            );
            wire::error(id, wire::INVALID_PARAMS, &message, None)
        }
        (Era::Legacy, Ok(task)) => wire::result(id, task),
        (Era::Modern, _) => wire::result(id, complete(shared, era, json!({}))),
    };
    shared.send(&reply).await;
    if cancelled {
        notify(shared, task_id).await;
    }
}

/// `tasks/update` (2026-07-28): hands `inputResponses` to the task's work
/// and acknowledges. Answers for keys not outstanding are ignored by the work.
pub(crate) async fn update(shared: &Shared, id: &Value, params: &Value) {
    let Some(task_id) = task_id_param(shared, id, params).await else {
        return;
    };
    let Some(responses) = params.get("inputResponses").and_then(Value::as_object) else {
        let message = "Invalid params: tasks/update needs an inputResponses object";
        let reply = wire::error(id, wire::INVALID_PARAMS, message, None);
        return shared.send(&reply).await;
    };
    let sender = shared
        .tasks()
        .entries
        .get(task_id)
        .map(|e| e.input_tx.clone());
    let queued = sender.is_some_and(|tx| tx.try_send(responses.clone()).is_ok());
    let reply = if queued {
        wire::result(id, complete(shared, Era::Modern, json!({})))
    } else {
        let message =
            format!("Internal error: more than {INPUT_QUEUE} updates queued for the task");
        wire::error(id, wire::INTERNAL_ERROR, &message, None)
    };
    shared.send(&reply).await;
}
