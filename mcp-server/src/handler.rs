//! The application side of [`serve`](crate::serve): a trait with one method
//! per MCP method, and the context each call gets (cancellation, progress,
//! what the client declared).

use std::future::Future;
use std::pin::Pin;

use mcp_types::{
    CallToolParams, CallToolResult, ClientCapabilities, CompleteParams, CompleteResult, Cursor,
    ErrorObject, GetPromptParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, ProtocolVersion, ReadResourceParams,
    ReadResourceResult, RequestId, RequestOutcome, ServerCapabilities, ToolsCapability,
    error_codes,
};
use mcp_types::{
    CancelTaskParams, CancelTaskResult, GetTaskParams, GetTaskPayloadParams, GetTaskPayloadResult,
    Task, UpdateTaskParams,
};
use mcp_types::{
    GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams, ReadDirectoryResult,
};
use mcp_types::{JsonSchemaDoc, SubscribeParams, UnsubscribeParams};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ClientContext;
use crate::handle::StreamCloser;

/// A boxed, sendable future: what the handler's methods return (they can be
/// written as `Box::pin(async move { … })`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a handler's method answers: its result, or the JSON-RPC error to
/// send. A tool's own failure is a `CallToolResult` with `isError: true`,
/// not an error.
pub type HandlerResult<T> = Result<T, ErrorObject>;

/// The `-32601` answer for a method a handler does not serve.
pub fn method_not_found() -> ErrorObject {
    ErrorObject::new(error_codes::METHOD_NOT_FOUND, "Method not found")
}

/// The methods of a simple MCP server, served by [`serve`](crate::serve):
/// every request runs on its own task, at most
/// [`ServerLimits::max_in_flight`](crate::ServerLimits::max_in_flight) at once.
///
/// Only tools are required. The other features (the Skills extension
/// among them) answer `-32601` by default; a handler that serves one
/// declares it in [`capabilities`](Self::capabilities) too. The core
/// refuses every method of an undeclared capability with `-32601` before it
/// reaches the handler, so a feature that is not declared is neither
/// advertised nor reachable.
pub trait ServerHandler: Send + Sync + 'static {
    /// What the server offers. Default: tools only.
    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ToolsCapability::default()),
            ..ServerCapabilities::default()
        }
    }

    /// One page of tools (`tools/list`), after `cursor` (the first page
    /// when `None`). Set `next_cursor` when there are more.
    fn list_tools(
        &self,
        cursor: Option<Cursor>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListToolsResult>>;

    /// Runs a tool (`tools/call`). Watch [`RequestContext::cancelled`] in
    /// long work; report [`RequestContext::progress`] when the client asked
    /// for it.
    fn call_tool(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CallToolResult>>;

    /// One page of resources (`resources/list`; declare `resources`).
    fn list_resources(
        &self,
        cursor: Option<Cursor>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListResourcesResult>> {
        let _ = (cursor, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// One page of resource templates (`resources/templates/list`; declare
    /// `resources`).
    fn list_resource_templates(
        &self,
        cursor: Option<Cursor>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListResourceTemplatesResult>> {
        let _ = (cursor, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Reads a resource (`resources/read`; declare `resources`).
    fn read_resource(
        &self,
        params: ReadResourceParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ReadResourceResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// One page of prompts (`prompts/list`; declare `prompts`).
    fn list_prompts(
        &self,
        cursor: Option<Cursor>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListPromptsResult>> {
        let _ = (cursor, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Renders a prompt (`prompts/get`; declare `prompts`).
    fn get_prompt(
        &self,
        params: GetPromptParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<GetPromptResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// `tools/call` when the answer may ask for input first: a 2026-07-28
    /// handler answers [`RequestOutcome::InputRequired`] (its
    /// `inputRequests` and a `requestState` of its own, integrity-protected)
    /// and gets the client's retry, with `inputResponses` and that state in
    /// `params`, as a new call. Only a 2026-07-28 request may be answered
    /// so (a legacy one gets `-32603`). Default: [`Self::call_tool`],
    /// complete.
    fn call_tool_outcome(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<RequestOutcome<CallToolResult>>> {
        Box::pin(async move {
            self.call_tool(params, ctx)
                .await
                .map(RequestOutcome::Complete)
        })
    }

    /// `resources/read` when the answer may ask for input first; see
    /// [`Self::call_tool_outcome`]. Default: [`Self::read_resource`].
    fn read_resource_outcome(
        &self,
        params: ReadResourceParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<RequestOutcome<ReadResourceResult>>> {
        Box::pin(async move {
            self.read_resource(params, ctx)
                .await
                .map(RequestOutcome::Complete)
        })
    }

    /// `prompts/get` when the answer may ask for input first; see
    /// [`Self::call_tool_outcome`]. Default: [`Self::get_prompt`].
    fn get_prompt_outcome(
        &self,
        params: GetPromptParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<RequestOutcome<GetPromptResult>>> {
        Box::pin(async move {
            self.get_prompt(params, ctx)
                .await
                .map(RequestOutcome::Complete)
        })
    }

    /// Completes an argument (`completion/complete`; declare `completions`).
    fn complete(
        &self,
        params: CompleteParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CompleteResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Sets the lowest level of log messages wanted (`logging/setLevel`,
    /// legacy; declare `logging`).
    fn set_log_level(
        &self,
        level: LoggingLevel,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        let _ = (level, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Subscribes the client to a resource's updates (`resources/subscribe`,
    /// legacy; declare `resources.subscribe`): from then on the handler
    /// sends `notifications/resources/updated` for `params.uri` through its
    /// [`ServerHandle`](crate::ServerHandle) until `resources/unsubscribe`
    /// or the connection's end.
    fn subscribe(
        &self,
        params: SubscribeParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Ends a subscription (`resources/unsubscribe`, legacy; declare
    /// `resources.subscribe`).
    fn unsubscribe(
        &self,
        params: UnsubscribeParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// One page of skills (`skills/list`, the Skills extension; declare it
    /// with [`ServerCapabilities::declare_skills`], and `resources` with
    /// it: a skill's files are read with `resources/read`). Never split
    /// one skill's entry across pages.
    fn list_skills(
        &self,
        cursor: Option<Cursor>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListSkillsResult>> {
        let _ = (cursor, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// The entry of the skill whose `SKILL.md` is at `params.uri`
    /// (`skills/get`, the Skills extension); `-32602` for a URI that names
    /// no skill served.
    fn get_skill(
        &self,
        params: GetSkillParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<GetSkillResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// One page of a directory's direct children
    /// (`resources/directory/read`; declare the Skills extension with
    /// `directoryRead`), subdirectories with the `mimeType`
    /// [`DIRECTORY_MIME_TYPE`](mcp_types::DIRECTORY_MIME_TYPE); `-32602`
    /// for a URI that is not a directory served.
    fn read_directory(
        &self,
        params: ReadDirectoryParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ReadDirectoryResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// A task's state (`tasks/get`; declare the tasks extension,
    /// `io.modelcontextprotocol/tasks`, for 2026-07-28, or `tasks` for
    /// 2025-11-25). For the extension, the task carries the tool's
    /// `result` or the `error` once terminal, and `inputRequests` while
    /// `input_required`; an unknown `taskId` is `-32602`. The core refuses
    /// a 2026-07-28 request whose client did not declare the extension
    /// (`-32021`) before it gets here. Default: `-32601`.
    fn get_task(
        &self,
        params: GetTaskParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<Task>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// The result of a 2025-11-25 task (`tasks/result`; declare `tasks`):
    /// what the task's request would have answered (a tool's result, or its
    /// JSON-RPC error), once the task is terminal; a handler may wait for
    /// that. An unknown `taskId` is `-32602`. Default: `-32601`.
    fn get_task_payload(
        &self,
        params: GetTaskPayloadParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<GetTaskPayloadResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Answers to a task's `inputRequests` (`tasks/update`, tasks
    /// extension), acknowledged empty. Default: `-32601`.
    fn update_task(
        &self,
        params: UpdateTaskParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Cancels a task (`tasks/cancel`): the tasks extension acknowledges
    /// empty ([`CancelTaskResult::Acknowledged`]), also for a task already
    /// terminal; 2025-11-25 answers the task. Default: `-32601`.
    fn cancel_task(
        &self,
        params: CancelTaskParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CancelTaskResult>> {
        let _ = (params, ctx);
        Box::pin(async { Err(method_not_found()) })
    }

    /// Tasks extension: a 2026-07-28 `subscriptions/listen` stream asks
    /// for `notifications/tasks` about `task_ids` (the client declared the
    /// extension; so must the server). Returns the ids the handler will
    /// report on for this client (the acknowledgement names them; an id it
    /// does not know, or that is not this client's, is left out), then
    /// sends each change of their state with
    /// [`ServerHandle::notify`](crate::ServerHandle::notify)`::<`[`mcp_types::notifications::Task`]`>`,
    /// which reaches the streams that asked for the task's id, until
    /// `ctx` is cancelled: the stream ended. Default: none.
    fn watch_tasks(
        &self,
        task_ids: Vec<String>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, Vec<String>> {
        let _ = (task_ids, ctx);
        Box::pin(async { Vec::new() })
    }

    /// The `inputSchema` of tool `name` as served now, `None` when no such
    /// tool is known. The Streamable HTTP binding checks a 2026-07-28
    /// `tools/call`'s `Mcp-Param-*` headers against the schema's
    /// `x-mcp-header` parameters (SEP-2243) before the call is served; with
    /// `None` nothing is checked. Called for every such request, before the
    /// handler's other methods: answer from memory. Default: `None`.
    fn tool_input_schema(&self, name: &str) -> Option<JsonSchemaDoc> {
        let _ = name;
        None
    }

    /// A notification from the client that the core does not handle itself
    /// (`notifications/roots/list_changed`, progress of a request of ours,
    /// one this crate does not know), as sent. Called on the driver's task:
    /// return at once (spawn longer work). Ignored by default.
    fn notification(&self, method: &str, params: Option<serde_json::Value>) {
        let _ = (method, params);
    }
}

/// One progress report, from a handler to the driver.
#[derive(Debug)]
pub(crate) struct ProgressReport {
    pub(crate) id: RequestId,
    pub(crate) progress: f64,
    pub(crate) total: Option<f64>,
    pub(crate) message: Option<String>,
}

/// What a handler's call knows about its request: its id, whether it was
/// cancelled, how to report progress, and what the client declared.
#[derive(Clone, Debug)]
pub struct RequestContext {
    id: RequestId,
    cancel: CancellationToken,
    /// `None` when the client asked for no progress.
    progress: Option<mpsc::Sender<ProgressReport>>,
    client: ClientContext,
    /// Closes the connection of the request's event stream (Streamable
    /// HTTP).
    closer: Option<StreamCloser>,
}

impl RequestContext {
    pub(crate) fn new(
        id: RequestId,
        cancel: CancellationToken,
        progress: Option<mpsc::Sender<ProgressReport>>,
        client: ClientContext,
    ) -> Self {
        Self {
            id,
            cancel,
            progress,
            client,
            closer: None,
        }
    }

    pub(crate) fn with_closer(mut self, closer: Option<StreamCloser>) -> Self {
        self.closer = closer;
        self
    }

    /// The client's id for the request.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Whether the client cancelled the request (or went away). Nothing the
    /// handler answers afterwards is sent; it has
    /// [`ServerLimits::cancel_grace`](crate::ServerLimits::cancel_grace) to
    /// stop before it is dropped.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled: `select!` on it in long work.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// The request's cancellation token, to hand to other code.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the client asked for progress (sent a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// Reports progress: sent as `notifications/progress` when the client
    /// asked for it, else ignored. `progress` must increase from one report
    /// to the next (a report that does not is dropped, as is one that finds
    /// the driver's queue full: progress is advisory). Returns whether the
    /// report was queued.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        let Some(tx) = &self.progress else {
            return false;
        };
        tx.try_send(ProgressReport {
            id: self.id.clone(),
            progress,
            total,
            message,
        })
        .is_ok()
    }

    /// What the client declared for this request (version, capabilities,
    /// identity, 2026-07-28 log level).
    pub fn client(&self) -> &ClientContext {
        &self.client
    }

    /// The request's protocol version.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.client.protocol_version
    }

    /// The client's capabilities for this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.client.capabilities
    }

    /// Closes the connection carrying this request's event stream while
    /// the request goes on (SEP-1699 polling), to free it during long
    /// work. Served over Streamable HTTP in a session that negotiated
    /// 2025-11-25 or later, the client is sent a `retry` hint and resumes
    /// the stream with `GET` and `Last-Event-ID`, getting what was sent
    /// meanwhile, then the answer; a request not answered with an event
    /// stream yet gets one (its priming event) first. Returns whether a
    /// connection was closed: `false` over stdio, for earlier versions,
    /// for 2026-07-28 (where closing a response stream cancels its
    /// request) and once the client reads no connection of the stream.
    pub fn close_sse_stream(&self) -> bool {
        self.closer
            .as_ref()
            .is_some_and(|close| (close.0)(&self.id))
    }
}
