//! Tasks behind one host API: start, poll (respecting `pollInterval`), get
//! the result, cancel.
//!
//! Two designs share it:
//! - 2025-11-25: `tools/call` with a `task` member returns `{"task": {...}}`;
//!   `tasks/get` polls, `tasks/result` blocks for the tool's result,
//!   `tasks/cancel` cancels.
//! - the tasks extension (2026-07-28, declared as
//!   `io.modelcontextprotocol/tasks` when [`crate::SessionConfig::accept_tasks`]
//!   is on): the server may answer `tools/call` with `resultType: "task"`;
//!   `tasks/get` carries the result, the error or `inputRequests` (answered
//!   with `tasks/update`), `tasks/cancel` cancels.

use mcp_types::Request as _;
use mcp_types::requests::CallTool;
use std::time::{Duration, Instant};

use mcp_types::requests::{CancelTask, GetTask, GetTaskPayload, UpdateTask};
use mcp_types::{
    CallToolParams, CallToolResult, CreateTaskResult, RequestOutcome, Task, TaskIdParams,
    TaskMetadata, TaskStatus, UpdateTaskParams,
};
use serde_json::{Map, Value};

use crate::SessionError;
use crate::driver::RequestOptions;
use crate::session::{Ready, Session};

/// Polling never runs faster than this, whatever the server asks.
const MIN_POLL: Duration = Duration::from_millis(50);
/// Nor slower than this.
const MAX_POLL: Duration = Duration::from_secs(30);
/// Polling interval when the server gives none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// A task the server is running for us.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskHandle {
    /// The task as last seen.
    pub task: Task,
    extension: bool,
}

impl TaskHandle {
    fn from_created(created: CreateTaskResult) -> Self {
        let extension = matches!(created, CreateTaskResult::Flat(_));
        let task = match created {
            CreateTaskResult::Nested(n) => n.task,
            CreateTaskResult::Flat(t) => t,
        };
        Self { task, extension }
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The status as last seen.
    pub fn status(&self) -> &TaskStatus {
        &self.task.status
    }

    /// How long to wait before the next poll, as the server asked (bounded).
    pub fn poll_interval(&self) -> Duration {
        self.task
            .poll_interval_millis()
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(MIN_POLL, MAX_POLL)
    }
}

/// How a tool call started.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolCallStart {
    /// The server answered directly.
    Done(CallToolResult),
    /// The server runs it as a task.
    Task(Box<TaskHandle>),
}

impl Session<Ready> {
    /// Calls a tool asking for it to run as a task (2025-11-25: with a `task`
    /// member and the given time-to-live; 2026: the server decides). The
    /// server may still answer directly.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        ttl: Option<Duration>,
    ) -> Result<ToolCallStart, SessionError> {
        let arguments = crate::tools::tool_arguments(name, arguments)?;
        let mut params = CallToolParams::new(name, Some(arguments));
        if !self.is_modern() {
            params.task = Some(TaskMetadata {
                ttl: ttl.map(|t| t.as_millis().min(u128::from(u64::MAX)) as u64),
                ..TaskMetadata::default()
            });
        }
        let body = match serde_json::to_value(&params).map_err(SessionError::Params)? {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let outcome = self
            .call_outcome::<CallToolResult>(
                CallTool::METHOD,
                &body,
                RequestOptions {
                    timing: self.link.timing(self.link.config.request_timeout),
                    headers: self.modern_headers(CallTool::METHOD, name),
                    ..RequestOptions::default()
                },
            )
            .await?;
        match outcome {
            RequestOutcome::Complete(result) => Ok(ToolCallStart::Done(result)),
            RequestOutcome::Task(created) => Ok(ToolCallStart::Task(Box::new(
                TaskHandle::from_created(created),
            ))),
            _ => Err(SessionError::Unsupported {
                method: CallTool::METHOD.to_owned(),
                feature: "input_required results outside the 2026-07-28 era",
            }),
        }
    }

    /// Sends ONE 2025-11-25 task-augmented `tools/call` (the caller sets
    /// `params.task`) with the caller's options, and returns the server's
    /// answer as it is: [`RequestOutcome::Task`] with the `{task}`
    /// `CreateTaskResult`, or [`RequestOutcome::Complete`] when the server
    /// answered directly. For a caller that keeps task ids itself (a
    /// gateway passing a host's task on); [`Session::call_tool_as_task`]
    /// is the host API.
    ///
    /// Never repeated; the arguments are not checked against the tool's
    /// schema, nor a direct result's `structuredContent` against its output
    /// schema (the caller passes both on). 2026-07-28 era (no `task` member
    /// exists there: the tasks extension decides by the server):
    /// [`SessionError::Unsupported`] before anything is sent. Params longer
    /// than the session's `max_argument_bytes`:
    /// [`SessionError::ArgumentsTooLarge`].
    pub async fn send_task_call(
        &self,
        params: &CallToolParams,
        options: &crate::CallOptions,
    ) -> Result<RequestOutcome<CallToolResult>, SessionError> {
        if self.is_modern() {
            return Err(SessionError::Unsupported {
                method: CallTool::METHOD.to_owned(),
                feature: "task-augmented tools/call (2025-11-25) in the 2026-07-28 era",
            });
        }
        let raw = self
            .send_legacy_call(params, options, self.call_timing(options))
            .await?;
        crate::rounds::decode_outcome::<CallToolResult>(CallTool::METHOD, &raw)
    }

    /// `tasks/get`: refreshes the handle's status.
    pub async fn poll_task(&self, handle: &mut TaskHandle) -> Result<(), SessionError> {
        handle.task = self
            .task_request::<GetTask>(
                handle.id(),
                &TaskIdParams::new(handle.id()),
                &Default::default(),
            )
            .await?;
        Ok(())
    }

    /// Sends one request of a task, `task_id` (`tasks/get`, `tasks/update`,
    /// `tasks/cancel`, …), with the caller's options and, in the 2026 era,
    /// the `Mcp-Name` header naming the task (SEP-2663). `params` go as
    /// given, their `_meta` included: a caller that passes on another
    /// client's capabilities (a gateway) sets them there, and the session's
    /// own `_meta` keys fill in only what is missing. For a caller that
    /// keeps task ids itself rather than a [`TaskHandle`].
    pub async fn task_request<R: mcp_types::Request>(
        &self,
        task_id: &str,
        params: &R::Params,
        options: &crate::CallOptions,
    ) -> Result<R::Result, SessionError> {
        let timing = self.call_timing(options);
        let meta = self.request_meta();
        let headers = self.modern_headers(R::METHOD, task_id);
        self.with_expiry(R::METHOD, || {
            self.link.request_as::<R>(
                params,
                meta.as_deref(),
                RequestOptions {
                    headers: headers.clone(),
                    ..options.request(timing)
                },
            )
        })
        .await
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, handle: &TaskHandle) -> Result<(), SessionError> {
        self.task_request::<CancelTask>(
            handle.id(),
            &TaskIdParams::new(handle.id()),
            &Default::default(),
        )
        .await?;
        Ok(())
    }

    /// Waits for the task to finish, polling at the server's interval (and
    /// answering 2026 `inputRequests` with the host's handlers), then returns
    /// the tool's result. Gives up after the session's hard deadline.
    pub async fn wait_task(&self, handle: &mut TaskHandle) -> Result<CallToolResult, SessionError> {
        let give_up = Instant::now() + self.link.config.limits.hard_deadline;
        loop {
            if handle.status().is_terminal() {
                return self.task_result(handle).await;
            }
            if *handle.status() == TaskStatus::InputRequired && handle.extension {
                self.answer_task_input(handle).await?;
            }
            if Instant::now() >= give_up {
                return Err(SessionError::Timeout {
                    method: GetTask::METHOD.to_owned(),
                    after: self.link.config.limits.hard_deadline,
                });
            }
            tokio::time::sleep(handle.poll_interval()).await;
            self.poll_task(handle).await?;
        }
    }

    /// The tool's result of a finished task.
    pub async fn task_result(&self, handle: &TaskHandle) -> Result<CallToolResult, SessionError> {
        let bad = |source| SessionError::BadResult {
            method: GetTaskPayload::METHOD.to_owned(),
            source,
        };
        let object =
            if handle.extension {
                if let Some(Ok(error)) = handle.task.error_object() {
                    return Err(SessionError::Server {
                        method: GetTask::METHOD.to_owned(),
                        code: error.code,
                        error: Box::new(error),
                    });
                }
                handle.task.result.clone().ok_or_else(|| {
                    bad(serde::de::Error::custom("finished task carries no result"))
                })?
            } else {
                self.request::<GetTaskPayload>(&TaskIdParams::new(handle.id()))
                    .await?
            };
        serde_json::from_value(Value::Object(object)).map_err(bad)
    }

    async fn answer_task_input(&self, handle: &mut TaskHandle) -> Result<(), SessionError> {
        let Some(requests) = handle.task.input_requests.take() else {
            return Ok(());
        };
        let mut responses = mcp_types::InputResponses::new();
        for (key, request) in requests {
            let asked = request.request.method().to_owned();
            let value = self
                .link
                .config
                .handlers
                .answer(request.request, Default::default())
                .await
                .map_err(|e| SessionError::InputNotProvided {
                    method: UpdateTask::METHOD.to_owned(),
                    asked,
                    code: e.code,
                })?;
            responses.insert(key, mcp_types::InputResponse::Unknown(value));
        }
        let params = UpdateTaskParams {
            task_id: handle.id().to_owned(),
            input_responses: responses,
            ..UpdateTaskParams::default()
        };
        self.task_request::<UpdateTask>(handle.id(), &params, &Default::default())
            .await?;
        Ok(())
    }
}
