//! The requests about a task a server runs (the tasks extension,
//! `io.modelcontextprotocol/tasks`, 2026-07-28): `tasks/get`,
//! `tasks/update`, `tasks/cancel`, sent to the server that created the
//! task, by the server's own task id.
//!
//! The task is created by a tool call along the model's governed path
//! ([`Hub::call_tool_round`]: authority, approval, audit); these requests
//! follow up on it and take the governed path for the server as a whole
//! (the authority must still allow the server; each is audited as
//! [`Operation::Task`](crate::Operation::Task)), so a server the authority
//! no longer allows answers nothing more about its tasks. The approval hook
//! is not asked again: it approved the call. Results are bounded by the
//! server's `max_content_bytes` like any other (a `tasks/get` carries the
//! tool's result inline).
//!
//! The hub keeps no table of tasks: the caller keeps the server's name
//! with the task id, and the server answers for its ids (an unknown one is
//! its `-32602`).
//!
//! The 2025-11-25 core feature (the server's `tasks` capability) has the
//! same shape with its own requests: [`Hub::call_tool_as_task`] sends a
//! tool call with its `task` member along the model's governed path (as
//! [`Hub::call_tool_round`] does) and returns the server's `{task}` (or
//! its direct result); [`Hub::get_legacy_task`],
//! [`Hub::legacy_task_result`] (the tool's result once the task ends,
//! bounded by `max_content_bytes` like a call's) and
//! [`Hub::cancel_legacy_task`] follow up, governed as the server. Each is
//! refused with [`HubError::Unsupported`] naming it, before anything is
//! sent, to a server whose last handshake did not declare what it needs
//! (`tasks.requests.tools.call` to create, `tasks` to poll and fetch,
//! `tasks.cancel` to cancel). A server's `notifications/tasks/status`
//! becomes a [`HubEvent::TaskStatus`](crate::HubEvent::TaskStatus).

use std::sync::Arc;

use mcp_session::{CallOptions, SessionError};
use mcp_types::requests::{CancelTask, GetTask, GetTaskPayload, UpdateTask};
use mcp_types::{
    CallToolParams, CallToolResult, CancelTaskParams, CancelTaskResult, GetTaskParams, Request,
    ServerCapabilities, TASKS_EXTENSION, Task, TaskIdParams, UpdateTaskParams,
};
use serde_json::{Map, Value};

use crate::HubError;
use crate::events::Operation;
use crate::governance::calls::capabilities;
use crate::governance::governed::{Caller, Step, Target, governed};
use crate::governance::rounds::{RoundRoute, ToolRound};
use crate::hub::Hub;
use crate::namespace::RouteTarget;
use crate::servers::retry::Repeatable;
use crate::servers::server::ServerCell;

/// A server's capabilities as its last handshake said, for tasks: its
/// `tasks` only when it negotiated 2025-11-25 or a later legacy version
/// (no earlier version has them, and 2026-07-28 has the extension
/// instead), whatever it declared.
pub(crate) fn task_capabilities(cell: &ServerCell) -> Option<ServerCapabilities> {
    let state = cell.state();
    let info = state.info.as_ref()?;
    let mut caps = info.capabilities.clone();
    if info.era != mcp_types::Era::Legacy || info.version < mcp_types::ProtocolVersion::V2025_11_25
    {
        caps.tasks = None;
    }
    Some(caps)
}

/// Whether a server's capabilities take 2025-11-25 task-augmented tool
/// calls (`tasks.requests.tools.call`).
fn legacy_tool_tasks(caps: &ServerCapabilities) -> bool {
    caps.tasks
        .as_ref()
        .and_then(|t| t.requests.as_ref())
        .and_then(|r| r.tools.as_ref())
        .is_some_and(|tools| tools.contains_key("call"))
}

/// Whether a server's capabilities declare 2025-11-25 tasks at all.
fn legacy_tasks(caps: &ServerCapabilities) -> bool {
    caps.tasks.is_some()
}

/// Whether a server's capabilities take 2025-11-25 `tasks/cancel`.
fn legacy_cancel(caps: &ServerCapabilities) -> bool {
    caps.tasks.as_ref().is_some_and(|t| t.cancel.is_some())
}

/// Whether a server's capabilities offer the tasks extension.
fn extension(caps: &ServerCapabilities) -> bool {
    caps.has_extension(TASKS_EXTENSION)
}

impl Hub {
    /// Whether `server` offers the tasks extension (as its last handshake
    /// said; `false` for a server not registered or not yet connected).
    pub fn offers_tasks(&self, server: &str) -> bool {
        self.shared
            .cell(server)
            .ok()
            .and_then(|cell| capabilities(cell))
            .is_some_and(|c| c.has_extension(TASKS_EXTENSION))
    }

    /// `tasks/get` of the task `params.task_id` on `server`: its status
    /// and, once terminal, the tool's result or the error inline (or, in
    /// `input_required`, what it asks). Put the client capabilities the
    /// request declares (the tasks extension among them) in
    /// `params.meta`; see the module docs for the governance.
    pub async fn get_task(
        &self,
        server: &str,
        params: GetTaskParams,
        options: &CallOptions,
    ) -> Result<Task, HubError> {
        self.task_request::<GetTask>(server, &params.task_id.clone(), &params, options, extension)
            .await
    }

    /// `tasks/update`: answers to what the task asked for
    /// (`params.input_responses`, keyed as the task's `inputRequests`),
    /// acknowledged empty. Never retried (the server may consume answers
    /// once).
    pub async fn update_task(
        &self,
        server: &str,
        params: UpdateTaskParams,
        options: &CallOptions,
    ) -> Result<(), HubError> {
        self.task_request::<UpdateTask>(
            server,
            &params.task_id.clone(),
            &params,
            options,
            extension,
        )
        .await
        .map(drop)
    }

    /// `tasks/cancel`: asks the server to cancel the task (acknowledged
    /// empty; the status a later [`Hub::get_task`] shows says what came of
    /// it).
    pub async fn cancel_task(
        &self,
        server: &str,
        params: CancelTaskParams,
        options: &CallOptions,
    ) -> Result<(), HubError> {
        self.task_request::<CancelTask>(
            server,
            &params.task_id.clone(),
            &params,
            options,
            extension,
        )
        .await
        .map(drop)
    }

    /// Whether `server` takes 2025-11-25 task-augmented tool calls
    /// (`tasks.requests.tools.call`, as its last handshake said; `false`
    /// for a server not registered or not yet connected).
    pub fn offers_legacy_tasks(&self, server: &str) -> bool {
        self.shared
            .cell(server)
            .ok()
            .and_then(|cell| task_capabilities(cell))
            .is_some_and(|c| legacy_tool_tasks(&c))
    }

    /// Calls the tool exposed as `params.name` (a model's call, governed as
    /// [`Hub::call_with`]: authority, approval, concurrency slot, audit)
    /// with `params.task` asking the server to run it as a 2025-11-25 task,
    /// and returns where it went and the server's answer as it is: the
    /// `{task}` [`RequestOutcome::Task`](mcp_types::RequestOutcome::Task),
    /// or the tool's result when the server answered directly. Never
    /// repeated. A server that did not declare `tasks.requests.tools.call`
    /// (a 2026-07-28 one among them) is refused with
    /// [`HubError::Unsupported`] before anything is sent, as is a context
    /// helper's name.
    pub async fn call_tool_as_task(
        &self,
        mut params: CallToolParams,
        options: &CallOptions,
    ) -> Result<ToolRound, HubError> {
        if self.shared.is_shutting_down() {
            return Err(HubError::ShuttingDown);
        }
        let name = params.name.clone();
        let mut namespace = self.namespace();
        let unknown = matches!(namespace.lookup(&name), Err(HubError::UnknownTool { .. }));
        if unknown && !self.shared.undiscovered().is_empty() {
            namespace = Box::pin(self.discover()).await?;
        }
        let (entry, exposed_name) = namespace.lookup(&name)?;
        let RouteTarget::Tool(local) = &entry.route().target else {
            return Err(HubError::Unsupported {
                server: entry.server().clone(),
                operation: "tasks of a context helper",
            });
        };
        let route = RoundRoute::new(entry.server().as_str(), local.as_str());
        let cell = Arc::clone(self.shared.cell(entry.server().as_str())?);
        params.name = local.to_string();
        let arguments = params.arguments.clone().unwrap_or_default();
        let step = Step {
            operation: Operation::CallTool,
            method: "tools/call (task-augmented, 2025-11-25)",
            caller: Caller::Model { exposed_name },
            target: Target::Tool {
                name: local,
                listed: Some(entry.tool()),
            },
            supported: task_capabilities(&cell).is_none_or(|c| legacy_tool_tasks(&c)),
            repeatable: Repeatable::Once,
            options: options.clone(),
            arguments,
        };
        let params = &params;
        let outcome = governed(
            &self.shared,
            &cell,
            step,
            None,
            |session, options, _| async move { session.send_task_call(params, &options).await },
        )
        .await?;
        Ok(ToolRound { route, outcome })
    }

    /// 2025-11-25 `tasks/get` of the task `params.task_id` on `server`: its
    /// status (governed as [`Hub::get_task`]). Refused by name for a server
    /// that did not declare `tasks`.
    pub async fn get_legacy_task(
        &self,
        server: &str,
        params: TaskIdParams,
        options: &CallOptions,
    ) -> Result<Task, HubError> {
        self.task_request::<GetTask>(
            server,
            &params.task_id.clone(),
            &params,
            options,
            legacy_tasks,
        )
        .await
    }

    /// 2025-11-25 `tasks/result`: waits (within the call's time-out) until
    /// the task ends, then the tool's result, bounded by the server's
    /// `max_content_bytes` like a call's (a task that ended in an error
    /// gives the server's error). Refused by name for a server that did not
    /// declare `tasks`.
    pub async fn legacy_task_result(
        &self,
        server: &str,
        params: TaskIdParams,
        options: &CallOptions,
    ) -> Result<CallToolResult, HubError> {
        let object = self
            .task_request::<GetTaskPayload>(
                server,
                &params.task_id.clone(),
                &params,
                options,
                legacy_tasks,
            )
            .await?;
        serde_json::from_value(Value::Object(object))
            .map_err(|source| self.bad_result(server, GetTaskPayload::METHOD, source))
    }

    /// 2025-11-25 `tasks/cancel`: the task as the server left it. Refused
    /// by name for a server that did not declare `tasks.cancel`.
    pub async fn cancel_legacy_task(
        &self,
        server: &str,
        params: TaskIdParams,
        options: &CallOptions,
    ) -> Result<Task, HubError> {
        let answer = self
            .task_request::<CancelTask>(
                server,
                &params.task_id.clone(),
                &params,
                options,
                legacy_cancel,
            )
            .await?;
        match answer {
            CancelTaskResult::Task(task) => Ok(task),
            CancelTaskResult::Acknowledged(_) => Err(self.bad_result(
                server,
                CancelTask::METHOD,
                serde::de::Error::custom("a 2025-11-25 tasks/cancel answered without the task"),
            )),
        }
    }

    /// A server's result that is not what its method returns.
    fn bad_result(
        &self,
        server: &str,
        method: &'static str,
        source: serde_json::Error,
    ) -> HubError {
        let error = SessionError::BadResult {
            method: method.to_owned(),
            source,
        };
        match crate::ServerName::new(server) {
            Ok(name) => HubError::from_session(&name, method, error),
            Err(e) => e,
        }
    }

    async fn task_request<R: Request>(
        &self,
        server: &str,
        task_id: &str,
        params: &R::Params,
        options: &CallOptions,
        offered: fn(&ServerCapabilities) -> bool,
    ) -> Result<R::Result, HubError> {
        if self.shared.is_shutting_down() {
            return Err(HubError::ShuttingDown);
        }
        let cell = self.shared.cell(server)?;
        let step = Step {
            operation: Operation::Task,
            method: R::METHOD,
            caller: Caller::Host,
            target: Target::Server,
            supported: task_capabilities(cell).is_none_or(|c| offered(&c)),
            // `tasks/get` and `tasks/cancel` may be asked again; an update
            // carries answers the server consumes once.
            repeatable: if R::METHOD == UpdateTask::METHOD {
                Repeatable::Once
            } else {
                Repeatable::Idempotent
            },
            options: options.clone(),
            arguments: Map::new(),
        };
        governed(
            &self.shared,
            cell,
            step,
            None,
            |session, options, _| async move {
                session.task_request::<R>(task_id, params, &options).await
            },
        )
        .await
    }
}
