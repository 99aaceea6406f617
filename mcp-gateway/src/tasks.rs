//! Tasks of the tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) through the gateway, for a 2026-07-28 host.
//!
//! ```text
//! host ── tools/call (declares the extension) ──► gateway ── the round
//!         (hub, governed; the host's declaration passed on) ──► server
//!      ◄─ CreateTaskResult, taskId = the GATEWAY's id ─┘  (server, its id)
//! host ── tasks/get|update|cancel {taskId} ──► gateway: id opened ──►
//!         the same server, by its own id (hub, governed as the server) ──►
//! ```
//!
//! The gateway keeps no table: a task id it hands out is
//! `gwt1.PAYLOAD.TAG`, base64url, the payload naming the server and the
//! server's own task id, the tag HMAC-SHA256 of it under a key drawn once
//! per process (not the `requestState` key of `rounds.rs`: an id can never
//! pass for a state, nor the reverse). A host can read which server runs
//! its task, but cannot make an id that routes anywhere else; an id from
//! before a restart of the gateway is unknown, as is an altered or foreign
//! one: `-32602`, as the extension says of an unknown id. A server's
//! restart loses its tasks on its side; the server says so (its `-32602`
//! reaches the host as it is). Expiry is the server's (`ttlMs`).
//!
//! What a server says is bounded and rewritten on the way: its task id (at
//! most [`MAX_SERVER_TASK_ID_BYTES`]), the `inputRequests` of a task in
//! `input_required` (as many and keys as long as a round's, see
//! `rounds.rs`), the tool result inlined in a completed task (resource
//! links and embedded resources get the URIs the host reads them by, as a
//! plain call's result; its size is bounded by the server's
//! `max_content_bytes` on the hub's governed path), and its own `_meta` is
//! not passed on. A host's `tasks/update` answers are checked to be
//! objects (at most as many as an unsealed retry's).
//!
//! A host's `subscriptions/listen` naming the gateway's task ids
//! (`taskIds`) hears `notifications/tasks` about them: each id that opens
//! gets a watch of the server's task by the server's id
//! ([`Hub::watch_task`], one listen stream downstream), and every state the
//! server sends is served as `tasks/get` serves it, to the host's streams
//! that asked for that id, until the host's stream ends (the watch ends
//! with it). An id that does not open, or whose server cannot be watched,
//! is left out of the acknowledgement; the host polls it.
//!
//! A host that did not declare the extension gets `-32021` for `tasks/*`
//! from the server core, and its tool calls reach the servers without the
//! extension (a task-capable tool then answers at once, or the server's
//! own `-32021` for a tool that must run as a task reaches the host).
//! Tasks of the 2025-11-25 core feature (the `tasks` capability) are a
//! legacy host's, forwarded by `legacy_tasks.rs` under ids of this same
//! design ([`TaskRoute`]); a 2026-07-28 host is listed no `taskSupport`.

use std::sync::{Arc, OnceLock};

use aws_lc_rs::{hmac, rand::SystemRandom};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_hub::{CallOptions, Hub};
use mcp_server::{HandlerResult, RequestContext};
use mcp_types::notifications::Task as TaskNotification;
use mcp_types::text::Untrusted;
use mcp_types::{
    CallToolResult, CancelTaskParams, CancelTaskResult, CapabilityMap, ClientCapabilities,
    CreateTaskResult, EmptyResult, ErrorObject, GetTaskParams, Meta, ResultType, TASKS_EXTENSION,
    Task, TaskIdParams, UpdateTaskParams, error_codes,
};
use serde_json::{Value, json};

use crate::handler::{GatewayHandler, error_object, served_uris};
use crate::rounds::{MAX_INPUT_REQUESTS, MAX_KEY_BYTES, cancelled, check_unsealed};

/// The longest task id of a server the gateway carries in its own.
pub(crate) const MAX_SERVER_TASK_ID_BYTES: usize = 1024;

/// The longest task id a host may send (the gateway's are far shorter; a
/// longer one is unknown before it is decoded).
pub(crate) const MAX_TASK_ID_BYTES: usize = 4096;

/// What every id of the gateway starts with (the version of its payload).
const ID_PREFIX: &str = "gwt1.";

/// The process's key for task ids, drawn once.
fn key() -> Option<&'static hmac::Key> {
    static KEY: OnceLock<Option<hmac::Key>> = OnceLock::new();
    KEY.get_or_init(|| hmac::Key::generate(hmac::HMAC_SHA256, &SystemRandom::new()).ok())
        .as_ref()
}

/// Where a task of the gateway runs: the server and its own id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskRoute {
    pub(crate) server: String,
    pub(crate) task_id: String,
}

/// A refusal of this module, named in `data.kind`.
fn refusal(code: i64, kind: &str, message: String) -> ErrorObject {
    let mut error = ErrorObject::new(code, message);
    error.data = Some(json!({ "kind": kind }));
    error
}

/// The `-32602` of a task id the gateway did not issue (or no longer
/// knows).
fn unknown_task() -> ErrorObject {
    refusal(
        error_codes::INVALID_PARAMS,
        "task_unknown",
        "unknown task: the id was not issued by this gateway (or was altered, or is from before \
         a restart)"
            .to_owned(),
    )
}

impl TaskRoute {
    /// The gateway's id for the task.
    pub(crate) fn seal(&self) -> HandlerResult<String> {
        if self.task_id.len() > MAX_SERVER_TASK_ID_BYTES {
            return Err(refusal(
                error_codes::INTERNAL_ERROR,
                "server_task_id_too_long",
                format!(
                    "server `{}` named its task with an id longer than \
                     {MAX_SERVER_TASK_ID_BYTES} bytes",
                    self.server
                ),
            ));
        }
        let key = key().ok_or_else(|| {
            refusal(
                error_codes::INTERNAL_ERROR,
                "no_seal_key",
                "the gateway has no key to seal a task id with".to_owned(),
            )
        })?;
        let payload = json!({ "s": self.server, "t": self.task_id }).to_string();
        let tag = hmac::sign(key, payload.as_bytes());
        Ok(format!(
            "{ID_PREFIX}{}.{}",
            URL_SAFE_NO_PAD.encode(payload.as_bytes()),
            URL_SAFE_NO_PAD.encode(tag.as_ref())
        ))
    }

    /// The route of an id a host sent; `-32602` for anything but an id of
    /// this gateway (process), unaltered.
    pub(crate) fn open(id: &str) -> HandlerResult<Self> {
        if id.len() > MAX_TASK_ID_BYTES {
            return Err(unknown_task());
        }
        let key = key().ok_or_else(unknown_task)?;
        let (payload, tag) = id
            .strip_prefix(ID_PREFIX)
            .and_then(|rest| rest.split_once('.'))
            .ok_or_else(unknown_task)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| unknown_task())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| unknown_task())?;
        hmac::verify(key, &payload, &tag).map_err(|_| unknown_task())?;
        // Ours from here on: a payload the gateway wrote.
        let value: Value = serde_json::from_slice(&payload).map_err(|_| unknown_task())?;
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(Self {
            server: text("s").ok_or_else(unknown_task)?,
            task_id: text("t").ok_or_else(unknown_task)?,
        })
    }
}

/// The gateway's `extensions` capability: the tasks extension when a
/// registered server offers it (as its last handshake said), else none.
pub(crate) fn extensions(hub: &Hub) -> Option<CapabilityMap> {
    hub.servers()
        .iter()
        .any(|s| hub.offers_tasks(s.as_str()))
        .then(|| CapabilityMap::from_iter([(TASKS_EXTENSION.to_owned(), json!({}))]))
}

/// Whether the host's request declares the extension: then its tool calls
/// may become tasks (the declaration travels downstream).
pub(crate) fn host_takes_tasks(host: &ClientCapabilities) -> bool {
    host.has_extension(TASKS_EXTENSION)
}

/// A server's `CreateTaskResult` as the host gets it: the gateway's id,
/// the server's `_meta` left out. A 2025-11-25 `{task}` answer to a
/// 2026-07-28 round is the server's error.
pub(crate) fn created(server: &str, created: CreateTaskResult) -> HandlerResult<CreateTaskResult> {
    let CreateTaskResult::Flat(mut task) = created else {
        return Err(refusal(
            error_codes::INTERNAL_ERROR,
            "task_shape_invalid",
            format!("server `{server}` answered with a 2025-11-25 task to a 2026-07-28 call"),
        ));
    };
    task.task_id = TaskRoute {
        server: server.to_owned(),
        task_id: task.task_id,
    }
    .seal()?;
    task.meta = None;
    task.result_type = Some(ResultType::Task);
    Ok(CreateTaskResult::Flat(task))
}

/// The `_meta` of a downstream task request: the host's capabilities the
/// gateway passes on (the extension among them: the core let only a host
/// that declared it through).
fn downstream_meta(ctx: &RequestContext) -> Option<Meta> {
    let mut meta = Meta::new();
    meta.set_client_capabilities(&crate::rounds::passed_capabilities(
        ctx.client_capabilities(),
    ))
    .ok()?;
    Some(meta)
}

/// A server's task as the host gets it; see the module docs.
fn served_task(route: &TaskRoute, host_id: String, mut task: Task) -> HandlerResult<Task> {
    let bad = |what: &str| {
        refusal(
            error_codes::INTERNAL_ERROR,
            "task_refused",
            format!(
                "the task of server `{}` is refused: {what}",
                Untrusted::new(&route.server)
            ),
        )
    };
    if task.task_id != route.task_id {
        return Err(bad("it names another task"));
    }
    task.task_id = host_id;
    if let Some(requests) = &task.input_requests
        && (requests.len() > MAX_INPUT_REQUESTS || requests.keys().any(|k| k.len() > MAX_KEY_BYTES))
    {
        return Err(bad(&format!(
            "it asks for more than {MAX_INPUT_REQUESTS} inputs (or uses a key longer than \
             {MAX_KEY_BYTES} bytes)"
        )));
    }
    if let Some(result) = task.result.take() {
        let mut call: CallToolResult = serde_json::from_value(Value::Object(result))
            .map_err(|_| bad("its result is not a tool result"))?;
        served_uris(&route.server, &mut call.content);
        let Ok(Value::Object(result)) = serde_json::to_value(call) else {
            return Err(bad("its result cannot be encoded"));
        };
        task.result = Some(result);
    }
    task.meta = None;
    task.result_type = Some(ResultType::Complete);
    Ok(task)
}

impl GatewayHandler {
    /// `tasks/get` of a host: the server's task, served (see the module
    /// docs).
    pub(crate) async fn host_get_task(
        &self,
        params: GetTaskParams,
        ctx: RequestContext,
    ) -> HandlerResult<Task> {
        let route = TaskRoute::open(&params.task_id)?;
        let downstream = TaskIdParams {
            task_id: route.task_id.clone(),
            meta: downstream_meta(&ctx),
            ..Default::default()
        };
        let options = CallOptions::new();
        let call = self.hub.get_task(&route.server, downstream, &options);
        let task = tokio::select! {
            task = call => task.map_err(|e| error_object(&e))?,
            () = ctx.cancelled() => return Err(cancelled()),
        };
        served_task(&route, params.task_id, task)
    }

    /// `tasks/update` of a host: its answers (each an object) to the
    /// server's task.
    pub(crate) async fn host_update_task(
        &self,
        params: UpdateTaskParams,
        ctx: RequestContext,
    ) -> HandlerResult<()> {
        let route = TaskRoute::open(&params.task_id)?;
        check_unsealed(&params.input_responses)?;
        let downstream = UpdateTaskParams {
            task_id: route.task_id.clone(),
            input_responses: params.input_responses,
            meta: downstream_meta(&ctx),
            ..Default::default()
        };
        let options = CallOptions::new();
        let call = self.hub.update_task(&route.server, downstream, &options);
        tokio::select! {
            done = call => done.map_err(|e| error_object(&e)),
            () = ctx.cancelled() => Err(cancelled()),
        }
    }

    /// `tasks/cancel` of a host: passed on, acknowledged empty.
    pub(crate) async fn host_cancel_task(
        &self,
        params: CancelTaskParams,
        ctx: RequestContext,
    ) -> HandlerResult<CancelTaskResult> {
        let route = TaskRoute::open(&params.task_id)?;
        let downstream = TaskIdParams {
            task_id: route.task_id.clone(),
            meta: downstream_meta(&ctx),
            ..Default::default()
        };
        let options = CallOptions::new();
        let call = self.hub.cancel_task(&route.server, downstream, &options);
        tokio::select! {
            done = call => done.map_err(|e| error_object(&e))?,
            () = ctx.cancelled() => return Err(cancelled()),
        }
        Ok(CancelTaskResult::Acknowledged(EmptyResult::default()))
    }
}

impl GatewayHandler {
    /// A host's listen stream asks for `notifications/tasks` about
    /// `task_ids` (the gateway's ids): each that opens gets a watch of its
    /// server's task ([`Hub::watch_task`]), and every state the server
    /// sends reaches the host's streams that asked for it, served as
    /// `tasks/get` serves it, until `ctx` ends with the stream. Returns the
    /// ids watched; an id that does not open, or whose server cannot be
    /// watched (another era, no extension, the authority, its stream
    /// bound), is left out, and the host polls it.
    pub(crate) async fn host_watch_tasks(
        &self,
        task_ids: Vec<String>,
        ctx: RequestContext,
    ) -> Vec<String> {
        let mut watched = Vec::new();
        // Each watch waits for its server's acknowledgement: all at once.
        let mut watching = tokio::task::JoinSet::new();
        for host_id in task_ids {
            let Ok(route) = TaskRoute::open(&host_id) else {
                continue;
            };
            let hub = Arc::clone(&self.hub);
            watching.spawn(async move {
                let watch = hub.watch_task(&route.server, &route.task_id).await;
                (host_id, route, watch)
            });
        }
        loop {
            let joined = tokio::select! {
                joined = watching.join_next() => joined,
                () = ctx.cancelled() => break,
            };
            let Some(joined) = joined else {
                break;
            };
            let Ok((host_id, route, watch)) = joined else {
                continue;
            };
            let mut watch = match watch {
                Ok(watch) => watch,
                Err(e) => {
                    tracing::debug!(server = %Untrusted::new(&route.server), error = %e, "a task is not watched");
                    continue;
                }
            };
            let Some(handle) = self.link.handle(self.host) else {
                break;
            };
            let stop = ctx.cancellation_token().clone();
            watched.push(host_id.clone());
            tokio::spawn(async move {
                loop {
                    let next = tokio::select! {
                        next = watch.next() => next,
                        () = stop.cancelled() => return,
                    };
                    let task = match next {
                        None => return,
                        Some(Err(e)) => {
                            tracing::debug!(error = %e, "a task's state is not passed on");
                            continue;
                        }
                        Some(Ok(task)) => task,
                    };
                    match served_task(&route, host_id.clone(), task) {
                        Ok(task) => {
                            if handle.notify::<TaskNotification>(task).await.is_err() {
                                return;
                            }
                        }
                        Err(e) => tracing::debug!(code = e.code, "a task's state is refused"),
                    }
                }
            });
        }
        watched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(server: &str, task_id: &str) -> TaskRoute {
        TaskRoute {
            server: server.into(),
            task_id: task_id.into(),
        }
    }

    #[test]
    fn an_id_opens_to_its_route_and_an_altered_one_is_unknown() {
        let id = route("alpha", "t-1").seal().unwrap();
        assert_eq!(TaskRoute::open(&id).unwrap(), route("alpha", "t-1"));
        // Another server's name under the same tag.
        let (payload, tag) = id.strip_prefix(ID_PREFIX).unwrap().split_once('.').unwrap();
        let text = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        let forged_payload = text.replace("alpha", "omega");
        let forged = format!(
            "{ID_PREFIX}{}.{tag}",
            URL_SAFE_NO_PAD.encode(forged_payload.as_bytes())
        );
        for id in [
            forged.as_str(),
            "mcp-testkit-task-1",
            "gwt1.",
            "gwt1.e30.AAAA",
            &format!("{id}x"),
            &"a".repeat(MAX_TASK_ID_BYTES + 1),
        ] {
            let error = TaskRoute::open(id).unwrap_err();
            assert_eq!(error.code, error_codes::INVALID_PARAMS, "{id}");
            assert_eq!(error.data.unwrap()["kind"], "task_unknown");
        }
    }

    #[test]
    fn a_server_past_a_bound_is_refused_by_name() {
        let long = "x".repeat(MAX_SERVER_TASK_ID_BYTES + 1);
        let error = route("alpha", &long).seal().unwrap_err();
        assert_eq!(error.code, error_codes::INTERNAL_ERROR);
        assert_eq!(error.data.unwrap()["kind"], "server_task_id_too_long");
        let mut requests = serde_json::Map::new();
        for i in 0..=MAX_INPUT_REQUESTS {
            requests.insert(format!("k{i}"), json!({"method": "roots/list"}));
        }
        let task: Task = serde_json::from_value(json!({
            "taskId": "t", "status": "input_required", "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": null, "inputRequests": requests
        }))
        .unwrap();
        let error = served_task(&route("alpha", "t"), "host-id".into(), task).unwrap_err();
        assert_eq!(error.data.unwrap()["kind"], "task_refused");
    }

    #[test]
    fn a_completed_task_gets_the_hosts_id_and_uris() {
        let task: Task = serde_json::from_value(json!({
            "taskId": "t", "status": "completed", "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 1000, "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            "result": {"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]}
        }))
        .unwrap();
        let served = served_task(&route("alpha", "t"), "host-id".into(), task).unwrap();
        assert_eq!(served.task_id, "host-id");
        assert_eq!(served.meta, None);
        let result = served.result.unwrap();
        assert_eq!(
            result["content"][0]["uri"],
            crate::names::resource_uri("alpha", "file:///a")
        );
    }
}
