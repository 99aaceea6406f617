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

use mcp_session::CallOptions;
use mcp_types::requests::{CancelTask, GetTask, UpdateTask};
use mcp_types::{
    CancelTaskParams, GetTaskParams, Request, TASKS_EXTENSION, Task, UpdateTaskParams,
};
use serde_json::Map;

use crate::HubError;
use crate::events::Operation;
use crate::governance::calls::capabilities;
use crate::governance::governed::{Caller, Step, Target, governed};
use crate::hub::Hub;
use crate::servers::retry::Repeatable;

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
        self.task_request::<GetTask>(server, &params.task_id.clone(), &params, options)
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
        self.task_request::<UpdateTask>(server, &params.task_id.clone(), &params, options)
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
        self.task_request::<CancelTask>(server, &params.task_id.clone(), &params, options)
            .await
            .map(drop)
    }

    async fn task_request<R: Request>(
        &self,
        server: &str,
        task_id: &str,
        params: &R::Params,
        options: &CallOptions,
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
            supported: capabilities(cell).is_none_or(|c| c.has_extension(TASKS_EXTENSION)),
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
