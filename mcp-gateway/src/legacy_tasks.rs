//! Tasks of the 2025-11-25 core feature (the `tasks` capability) through
//! the gateway, for a legacy host.
//!
//! ```text
//! host ── tools/call {task: {ttl}} ──► gateway ── the call (hub, governed
//!         as a plain call; the `task` member passed on) ──► server
//!      ◄─ {task}, taskId = the GATEWAY's id ─┘  (server, its id)
//! host ── tasks/get|result|cancel {taskId} ──► gateway: id opened ──►
//!         the same server, by its own id (hub, governed as the server) ──►
//! server ── notifications/tasks/status ──► hub event ──► gateway ──►
//!         the host that created the task, under the gateway's id
//! ```
//!
//! **What is declared.** The gateway declares `tasks` (with
//! `requests.tools.call` and `cancel`, not `list`) when, as their last
//! handshake said, at least one registered server takes task-augmented
//! tool calls (`tasks.requests.tools.call`), and otherwise nothing: a
//! host then never sees the capability and never asks (the server half
//! shows it to 2025-11-25 hosts only, the one version that has it). Which tools may
//! run as tasks is said per tool: a tool keeps the server's
//! `execution.taskSupport` only when its server takes task-augmented
//! calls (anything else has it removed, so it reads `forbidden`), and a
//! 2026-07-28 host, whose tasks are the extension's, is listed no
//! `taskSupport` at all. A task-augmented call of a tool not listed
//! `optional` or `required` is `-32601` (the spec's answer for a tool that
//! does not support tasks) and reaches no server. `tasks/list` is not
//! declared (the gateway keeps no table of tasks to list; the server half
//! answers it `-32601`). Capabilities are read when a host connects: a
//! server that comes up later with tasks is offered to the hosts that
//! connect after it, and the per-tool `taskSupport` follows the served
//! tools (`list_changed`).
//!
//! **Ids.** The host's task id is the gateway's own (`gwt1.`, HMAC-sealed,
//! naming the server and the server's id: `tasks.rs`); an id not issued by
//! this gateway process, altered or too long is `-32602` and reaches no
//! server. The follow-ups take the hub's governed path as the server
//! ([`Hub::get_legacy_task`](mcp_hub::Hub::get_legacy_task),
//! [`Hub::legacy_task_result`](mcp_hub::Hub::legacy_task_result),
//! [`Hub::cancel_legacy_task`](mcp_hub::Hub::cancel_legacy_task)), which
//! refuse by name a server that did not declare what they need.
//!
//! **What a server says** is bounded and rewritten: its task id (at most
//! `MAX_SERVER_TASK_ID_BYTES`) and task objects (the gateway's id; only
//! the members the gateway knows, without the tasks extension's
//! `inputRequests`, `result`, `error` or `resultType`, and without the
//! server's `_meta`); the result `tasks/result` brings is treated as a
//! plain call's (bounded by the server's `max_content_bytes` on the hub's
//! governed path, resource URIs made the host's, the server's `_meta`
//! replaced by `related-task` naming the gateway's id); a task-augmented
//! call the server answers at once is a plain call's result.
//!
//! **Status notifications** need to know which host made the task, which
//! no id the server sends names. The gateway keeps for that, and only for
//! that, a bounded map of (server, server task id) → host connection,
//! filled when a task is created and emptied when the task is seen
//! terminal (at most [`MAX_WATCHED_TASKS`]; past it the oldest is
//! forgotten, and its statuses then go nowhere: they are advisory, the
//! host polls). A status no host is known for is dropped, never
//! broadcast; one for a host that has gone is dropped too. The entry is
//! made once the server's `{task}` answer is in hand, so a status the
//! server sends before the hub has handed that answer back (a task that
//! ends at once) can reach the gateway first and be dropped: the task's
//! state is still what `tasks/get` answers. A task polled to a terminal
//! state keeps its entry until a terminal status comes or the bound
//! forgets it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use mcp_hub::{CallOptions, Hub, HubEvent};
use mcp_server::{HandlerResult, RequestContext};
use mcp_types::notifications::TaskStatus as TaskStatusNotification;
use mcp_types::text::Untrusted;
use mcp_types::{
    CallToolParams, CallToolResult, CancelTaskParams, CancelTaskResult, CreateTaskResult,
    ErrorObject, GetTaskParams, GetTaskPayloadParams, GetTaskPayloadResult, Meta, ProtocolVersion,
    RequestOutcome, ServerTaskRequests, ServerTasksCapability, Task, TaskIdParams, TaskSupport,
    Tool, error_codes,
};
use serde_json::{Map, Value, json};

use crate::HostLink;
use crate::handler::{GatewayHandler, call_failure, call_options, error_object, served_uris};
use crate::rounds::cancelled;
use crate::surface::Served;
use crate::tasks::TaskRoute;

/// Most tasks whose status notifications the gateway routes at once.
pub(crate) const MAX_WATCHED_TASKS: usize = 4096;

/// The gateway's `tasks` capability: tool calls and cancellation when a
/// registered server takes task-augmented tool calls, else none.
pub(crate) fn capability(hub: &Hub) -> Option<ServerTasksCapability> {
    hub.servers()
        .iter()
        .any(|s| hub.offers_legacy_tasks(s.as_str()))
        .then(|| ServerTasksCapability {
            cancel: Some(Map::new()),
            requests: Some(ServerTaskRequests {
                tools: Some(Map::from_iter([("call".to_owned(), json!({}))])),
                ..Default::default()
            }),
            ..Default::default()
        })
}

/// Removes a tool's `execution.taskSupport` (and `execution` when nothing
/// else is left in it).
pub(crate) fn strip_task_support(tool: &mut Tool) {
    if let Some(execution) = &mut tool.execution {
        execution.task_support = None;
        if execution.extra.is_empty() {
            tool.execution = None;
        }
    }
}

/// Whether a tool is listed as one that may run as a task.
fn runs_as_task(tool: &Tool) -> bool {
    matches!(
        tool.execution
            .as_ref()
            .and_then(|e| e.task_support.as_ref()),
        Some(TaskSupport::Optional | TaskSupport::Required)
    )
}

/// A refusal of this module, named in `data.kind`.
fn refusal(code: i64, kind: &str, message: String) -> ErrorObject {
    let mut error = ErrorObject::new(code, message);
    error.data = Some(json!({ "kind": kind }));
    error
}

/// Opens a host's task id (`-32602` for one not ours) and sends one
/// request about the task to its server, by the server's own id (`send`
/// gets the server's name and the params naming its task); given up when
/// the host cancels.
async fn to_owner<T, Fut>(
    task_id: &str,
    ctx: &RequestContext,
    send: impl FnOnce(String, TaskIdParams) -> Fut,
) -> HandlerResult<(TaskRoute, T)>
where
    Fut: std::future::Future<Output = Result<T, mcp_hub::HubError>>,
{
    let route = TaskRoute::open(task_id)?;
    let call = send(
        route.server.clone(),
        TaskIdParams::new(route.task_id.clone()),
    );
    let answer = tokio::select! {
        answer = call => answer.map_err(|e| error_object(&e))?,
        () = ctx.cancelled() => return Err(cancelled()),
    };
    Ok((route, answer))
}

/// A server's task as a legacy host gets it; see the module docs.
pub(crate) fn served_task(
    route: &TaskRoute,
    host_id: String,
    mut task: Task,
) -> HandlerResult<Task> {
    if task.task_id != route.task_id {
        return Err(refusal(
            error_codes::INTERNAL_ERROR,
            "task_refused",
            format!(
                "the task of server `{}` is refused: it names another task",
                Untrusted::new(&route.server)
            ),
        ));
    }
    task.task_id = host_id;
    task.input_requests = None;
    task.result = None;
    task.error = None;
    task.result_type = None;
    task.ttl_ms = None;
    task.poll_interval_ms = None;
    task.meta = None;
    task.extra = Map::new();
    Ok(task)
}

/// The (server, server task id) → host map that routes status
/// notifications; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Watchers {
    table: Mutex<WatchTable>,
}

#[derive(Debug, Default)]
struct WatchTable {
    next: u64,
    /// (server, task id) → (host, its number in `order`).
    hosts: HashMap<(String, String), (u64, u64)>,
    /// Oldest first.
    order: BTreeMap<u64, (String, String)>,
}

impl Watchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, WatchTable> {
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Statuses of `server`'s task `task_id` go to `host` from now on.
    pub(crate) fn watch(&self, server: &str, task_id: &str, host: u64) {
        let mut table = self.lock();
        let key = (server.to_owned(), task_id.to_owned());
        if let Some((_, number)) = table.hosts.remove(&key) {
            table.order.remove(&number);
        }
        while table.hosts.len() >= MAX_WATCHED_TASKS {
            let Some((_, oldest)) = table.order.pop_first() else {
                break;
            };
            table.hosts.remove(&oldest);
        }
        table.next += 1;
        let number = table.next;
        table.order.insert(number, key.clone());
        table.hosts.insert(key, (host, number));
    }

    /// The host `server`'s task `task_id` belongs to; forgotten when
    /// `terminal` (no status follows a terminal one).
    pub(crate) fn host_of(&self, server: &str, task_id: &str, terminal: bool) -> Option<u64> {
        let mut table = self.lock();
        let key = (server.to_owned(), task_id.to_owned());
        let (host, number) = *table.hosts.get(&key)?;
        if terminal {
            table.hosts.remove(&key);
            table.order.remove(&number);
        }
        Some(host)
    }

    /// How many tasks are watched.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().hosts.len()
    }
}

/// A server's `notifications/tasks/status` (a hub event) to the host whose
/// task it is, under the gateway's id; dropped when no host is known.
pub(crate) async fn status(link: &HostLink, served: &Served, event: HubEvent) {
    let HubEvent::TaskStatus { server, task } = event else {
        return;
    };
    let server = server.to_string();
    let terminal = task.status.is_terminal();
    let Some(host) = served.watchers.host_of(&server, &task.task_id, terminal) else {
        tracing::debug!(%server, "a task status no host is known for was dropped");
        return;
    };
    let Some(handle) = link.handle(host) else {
        return;
    };
    let route = TaskRoute {
        server,
        task_id: task.task_id.clone(),
    };
    let Ok(host_id) = route.seal() else {
        return;
    };
    let Ok(task) = served_task(&route, host_id, *task) else {
        return;
    };
    if let Err(e) = handle.notify::<TaskStatusNotification>(task).await {
        tracing::debug!(error = %e, "a task status was not passed on");
    }
}

impl GatewayHandler {
    /// A legacy host's `tools/call` with a `task` member: passed on along
    /// the governed path when its tool may run as a task; see the module
    /// docs.
    pub(crate) async fn legacy_call_as_task(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> HandlerResult<RequestOutcome<CallToolResult>> {
        let namespace = self.hub.namespace();
        let entry = match namespace.resolve(&params.name) {
            Ok(entry) => entry,
            Err(error) => return call_failure(&error).map(RequestOutcome::Complete),
        };
        let server = entry.server().to_string();
        if entry.is_helper()
            || !runs_as_task(entry.tool())
            || !self.hub.offers_legacy_tasks(&server)
        {
            return Err(refusal(
                error_codes::METHOD_NOT_FOUND,
                "task_unsupported",
                format!(
                    "the tool `{}` does not run as a task behind the gateway (its listing has no \
                     taskSupport): call it without `task`",
                    Untrusted::new(&params.name)
                ),
            ));
        }
        drop(namespace);
        let options = call_options(&ctx);
        // While the call runs, the server's requests are this host's.
        let _calling = self.link.calling(self.host, &server, ctx.id().clone());
        let downstream = CallToolParams {
            name: params.name,
            arguments: params.arguments,
            task: params.task,
            ..Default::default()
        };
        let call = self.hub.call_tool_as_task(downstream, &options);
        let round = tokio::select! {
            round = call => round,
            // Dropping the call cancels it downstream.
            () = ctx.cancelled() => return Err(cancelled()),
        };
        let round = match round {
            Ok(round) => round,
            Err(error) => return call_failure(&error).map(RequestOutcome::Complete),
        };
        let server = round.route.server;
        match round.outcome {
            RequestOutcome::Complete(mut result) => {
                served_uris(&server, &mut result.content);
                Ok(RequestOutcome::Complete(result))
            }
            RequestOutcome::Task(CreateTaskResult::Nested(mut created)) => {
                let route = TaskRoute {
                    server,
                    task_id: created.task.task_id.clone(),
                };
                let host_id = route.seal()?;
                created.task = served_task(&route, host_id, created.task)?;
                created.meta = None;
                created.extra = Map::new();
                self.served
                    .watchers
                    .watch(&route.server, &route.task_id, self.host);
                Ok(RequestOutcome::Task(CreateTaskResult::Nested(created)))
            }
            _ => Err(refusal(
                error_codes::INTERNAL_ERROR,
                "task_shape_invalid",
                format!(
                    "server `{}` answered a 2025-11-25 task-augmented call with neither a result \
                     nor a {{task}}",
                    Untrusted::new(&server)
                ),
            )),
        }
    }

    /// A legacy host's `tasks/get`.
    pub(crate) async fn legacy_get_task(
        &self,
        params: GetTaskParams,
        ctx: RequestContext,
    ) -> HandlerResult<Task> {
        let (route, task) = to_owner(&params.task_id, &ctx, |server, id| async move {
            self.hub
                .get_legacy_task(&server, id, &CallOptions::new())
                .await
        })
        .await?;
        served_task(&route, params.task_id, task)
    }

    /// A legacy host's `tasks/result`: the tool's result, served as a
    /// plain call's, with `related-task` naming the gateway's id.
    pub(crate) async fn legacy_task_result(
        &self,
        params: GetTaskPayloadParams,
        ctx: RequestContext,
    ) -> HandlerResult<GetTaskPayloadResult> {
        let (route, mut result) = to_owner(&params.task_id, &ctx, |server, id| async move {
            self.hub
                .legacy_task_result(&server, id, &CallOptions::new())
                .await
        })
        .await?;
        served_uris(&route.server, &mut result.content);
        let mut meta = Meta::new();
        meta.set_related_task_id(&params.task_id);
        result.meta = Some(meta);
        match serde_json::to_value(result) {
            Ok(Value::Object(object)) => Ok(object),
            _ => Err(ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                "the task's result cannot be encoded",
            )),
        }
    }

    /// A legacy host's `tasks/cancel`: the task as the server left it.
    pub(crate) async fn legacy_cancel_task(
        &self,
        params: CancelTaskParams,
        ctx: RequestContext,
    ) -> HandlerResult<CancelTaskResult> {
        let (route, task) = to_owner(&params.task_id, &ctx, |server, id| async move {
            self.hub
                .cancel_legacy_task(&server, id, &CallOptions::new())
                .await
        })
        .await?;
        served_task(&route, params.task_id, task).map(CancelTaskResult::Task)
    }
}

/// Whether a legacy host's call asks for a task the gateway forwards: a
/// `task` member in 2025-11-25 or later (earlier versions have no tasks:
/// the member is ignored, the call made plainly).
pub(crate) fn asks_for_task(params: &CallToolParams, version: ProtocolVersion) -> bool {
    params.task.is_some() && version >= ProtocolVersion::V2025_11_25
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: &str) -> Task {
        serde_json::from_value(json!({
            "taskId": id, "status": status, "createdAt": "2025-11-25T00:00:00Z",
            "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": 1000, "pollInterval": 50,
            "result": {"content": []}, "inputRequests": {}, "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            "vendor": "hostile"
        }))
        .unwrap()
    }

    #[test]
    fn a_served_task_has_the_hosts_id_and_only_what_the_gateway_knows() {
        let route = TaskRoute {
            server: "alpha".into(),
            task_id: "t".into(),
        };
        let served = served_task(&route, "host-id".into(), task("t", "working")).unwrap();
        let value = serde_json::to_value(&served).unwrap();
        assert_eq!(value["taskId"], "host-id");
        assert_eq!(value["ttl"], 1000);
        assert_eq!(value["pollInterval"], 50);
        for gone in ["result", "inputRequests", "resultType", "_meta", "vendor"] {
            assert!(value.get(gone).is_none(), "{gone}: {value}");
        }
        let error = served_task(&route, "host-id".into(), task("other", "working")).unwrap_err();
        assert_eq!(error.data.unwrap()["kind"], "task_refused");
    }

    #[test]
    fn statuses_route_to_the_creating_host_until_terminal_within_the_bound() {
        let watchers = Watchers::default();
        watchers.watch("alpha", "t-1", 7);
        watchers.watch("beta", "t-1", 8);
        assert_eq!(watchers.host_of("alpha", "t-1", false), Some(7));
        assert_eq!(watchers.host_of("beta", "t-1", false), Some(8));
        assert_eq!(watchers.host_of("alpha", "t-2", false), None);
        assert_eq!(watchers.host_of("alpha", "t-1", true), Some(7));
        assert_eq!(watchers.host_of("alpha", "t-1", false), None);
        for i in 0..MAX_WATCHED_TASKS + 10 {
            watchers.watch("gamma", &format!("t-{i}"), 9);
        }
        assert_eq!(watchers.len(), MAX_WATCHED_TASKS);
        // The oldest went first.
        assert_eq!(watchers.host_of("beta", "t-1", false), None);
        assert_eq!(watchers.host_of("gamma", "t-0", false), None);
        let last = format!("t-{}", MAX_WATCHED_TASKS + 9);
        assert_eq!(watchers.host_of("gamma", &last, false), Some(9));
    }

    #[test]
    fn task_support_is_stripped_and_only_optional_or_required_run_as_tasks() {
        let mut tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"}
        }))
        .unwrap();
        assert!(runs_as_task(&tool));
        strip_task_support(&mut tool);
        assert!(!runs_as_task(&tool));
        assert!(tool.execution.is_none());
        let forbidden: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "forbidden"}
        }))
        .unwrap();
        assert!(!runs_as_task(&forbidden));
    }
}
