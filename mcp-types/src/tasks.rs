//! Tasks: long-running requests polled by id.
//!
//! Two designs share these types:
//! - 2025-11-25 (core, experimental): a request opts in with `task` ([`TaskMetadata`])
//!   and gets `{"task": {...}}` back; `tasks/get`, `tasks/result`, `tasks/list`,
//!   `tasks/cancel`; `notifications/tasks/status`; either side may host tasks.
//! - the tasks extension (`io.modelcontextprotocol/tasks`, with 2026-07-28): the
//!   server may answer `tools/call` with the task's members at top level and
//!   `"resultType": "task"`; `tasks/get` (which carries `inputRequests`, `result` or
//!   `error` by status), `tasks/update`, `tasks/cancel`; `notifications/tasks`;
//!   times in `ttlMs` / `pollIntervalMs`.
//!
//! [`Task`] is the union of both shapes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::common::{Cursor, EmptyResult, Nullable, RawObject};
use crate::input_required::{InputRequests, InputResponses, ResultType};
use crate::jsonrpc::ErrorObject;
use crate::meta::Meta;
use crate::open_struct::{open_enum, open_struct};

open_enum! {
    /// A task's state.
    pub enum TaskStatus {
        /// In progress.
        Working = "working",
        /// Waiting for input from the requester.
        InputRequired = "input_required",
        /// Finished successfully (terminal).
        Completed = "completed",
        /// Failed (terminal).
        Failed = "failed",
        /// Cancelled (terminal).
        Cancelled = "cancelled",
    }
}

impl TaskStatus {
    /// Whether the task will not change any more.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

open_struct! {
    /// Task augmentation of a request (2025-11-25): ask the receiver to run it as a
    /// task.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TaskMetadata {
        /// Requested time to live in milliseconds.
        opt ttl: u64 = "ttl",
    }
}

open_struct! {
    /// A task's state, as returned by `tasks/get`, listed by `tasks/list`, pushed by
    /// the status notifications, and (flat form) returned in place of a result.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Task {
        /// The task's id.
        req task_id: String = "taskId",
        /// Current state.
        req status: TaskStatus = "status",
        /// Describes the state (peer prose).
        opt status_message: String = "statusMessage",
        /// ISO 8601 creation time.
        req created_at: String = "createdAt",
        /// ISO 8601 time of the last update.
        req last_updated_at: String = "lastUpdatedAt",
        /// 2025-11-25: time to live in milliseconds (`null`: unlimited).
        present ttl: Nullable<u64> = "ttl",
        /// Tasks extension: time to live in milliseconds (`null`: unlimited).
        present ttl_ms: Nullable<u64> = "ttlMs",
        /// 2025-11-25: suggested polling interval in milliseconds.
        opt poll_interval: u64 = "pollInterval",
        /// Tasks extension: suggested polling interval in milliseconds.
        opt poll_interval_ms: u64 = "pollIntervalMs",
        /// Tasks extension, `input_required`: requests to answer with `tasks/update`.
        opt input_requests: InputRequests = "inputRequests",
        /// Tasks extension, `completed`: the original request's result.
        opt result: JsonObject = "result",
        /// Tasks extension, `failed`: the JSON-RPC error.
        opt error: JsonObject = "error",
        /// When the task is a result (`tasks/get`, flat creation): its kind.
        opt result_type: ResultType = "resultType",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

impl Task {
    /// The suggested polling interval in milliseconds, whichever version named it.
    pub fn poll_interval_millis(&self) -> Option<u64> {
        self.poll_interval_ms.or(self.poll_interval)
    }

    /// The time to live in milliseconds, whichever version named it: `Some(None)`
    /// means unlimited, `None` not given.
    pub fn ttl_millis(&self) -> Option<Option<u64>> {
        self.ttl_ms.or(self.ttl).map(Nullable::into_option)
    }

    /// Tasks extension, `failed`: the error as a JSON-RPC error object.
    pub fn error_object(&self) -> Option<Result<ErrorObject, crate::TypesError>> {
        self.error.as_ref().map(|e| {
            ErrorObject::deserialize(Value::Object(e.clone())).map_err(crate::TypesError::json)
        })
    }
}

open_struct! {
    /// Params naming one task (`tasks/get`, `tasks/result`, `tasks/cancel`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TaskIdParams {
        /// The task's id.
        req task_id: String = "taskId",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            task_id: task_id.into(),
            ..Default::default()
        }
    }
}

/// Params of `tasks/get`.
pub type GetTaskParams = TaskIdParams;
/// Params of `tasks/result` (2025-11-25).
pub type GetTaskPayloadParams = TaskIdParams;
/// Params of `tasks/cancel`.
pub type CancelTaskParams = TaskIdParams;
/// Result of `tasks/get`: the task (with `inputRequests` / `result` / `error` in
/// the tasks extension).
pub type GetTaskResult = Task;
/// Result of `tasks/result` (2025-11-25): the original request's result, to be
/// decoded into that request's result type.
pub type GetTaskPayloadResult = JsonObject;
/// Params of `notifications/tasks/status` (2025-11-25) and `notifications/tasks`
/// (tasks extension): the whole task.
pub type TaskStatusParams = Task;
/// Result of `tasks/update` (tasks extension): an empty acknowledgement.
pub type UpdateTaskResult = EmptyResult;

open_struct! {
    /// Params of `tasks/update` (tasks extension): answers to a task's
    /// `inputRequests`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct UpdateTaskParams {
        /// The task's id.
        req task_id: String = "taskId",
        /// The answers, keyed like the requests.
        req input_responses: InputResponses = "inputResponses",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Result of `tasks/list` (2025-11-25).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListTasksResult {
        /// The tasks on this page.
        req tasks: Vec<Task> = "tasks",
        /// Cursor of the next page, if any.
        opt next_cursor: Cursor = "nextCursor",
        /// The result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// 2025-11-25 `CreateTaskResult`: `{"task": {...}}`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct NestedTaskResult {
        /// The created task.
        req task: Task = "task",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

/// A task handle returned in place of a request's result.
#[derive(Clone, Debug, PartialEq)]
pub enum CreateTaskResult {
    /// 2025-11-25: `{"task": {...}, "_meta": ...}`.
    Nested(NestedTaskResult),
    /// Tasks extension: the task's members at top level, `"resultType": "task"`.
    Flat(Task),
}

impl CreateTaskResult {
    /// The task.
    pub fn task(&self) -> &Task {
        match self {
            CreateTaskResult::Nested(n) => &n.task,
            CreateTaskResult::Flat(t) => t,
        }
    }
}

impl Serialize for CreateTaskResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CreateTaskResult::Nested(n) => n.serialize(s),
            CreateTaskResult::Flat(t) => t.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for CreateTaskResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Cold path: buffer as raw text, then choose by the presence of `task`.
        let obj = RawObject::deserialize(d)?;
        let result = if obj.contains("task") {
            obj.decode().map(CreateTaskResult::Nested)
        } else {
            obj.decode().map(CreateTaskResult::Flat)
        };
        result.map_err(serde::de::Error::custom)
    }
}

// Transient message values decoded once and consumed: boxing the large variant
// would add an allocation on the common path for no lasting memory gain.
#[allow(clippy::large_enum_variant)]
/// Result of `tasks/cancel`: the task (2025-11-25) or an empty acknowledgement
/// (tasks extension).
#[derive(Clone, Debug, PartialEq)]
pub enum CancelTaskResult {
    /// 2025-11-25: the task's state after cancellation.
    Task(Task),
    /// Tasks extension: an empty acknowledgement.
    Acknowledged(EmptyResult),
}

impl Serialize for CancelTaskResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CancelTaskResult::Task(t) => t.serialize(s),
            CancelTaskResult::Acknowledged(e) => e.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for CancelTaskResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let obj = RawObject::deserialize(d)?;
        let result = if obj.contains("taskId") {
            obj.decode().map(CancelTaskResult::Task)
        } else {
            obj.decode().map(CancelTaskResult::Acknowledged)
        };
        result.map_err(serde::de::Error::custom)
    }
}
