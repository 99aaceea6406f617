//! Request method markers: one uninhabited type per request method of every
//! version, each implementing [`Request`] and its direction markers.
//!
//! The three methods that may answer with `input_required` (2026-07-28) or a task
//! handle ([`CallTool`]) have [`RequestOutcome`] results.

use crate::common::{EmptyResult, PaginatedParams, RequestParams};
use crate::completion::{CompleteParams, CompleteResult};
use crate::discover::DiscoverResult;
use crate::elicitation::{ElicitParams, ElicitResult};
use crate::initialize::{InitializeParams, InitializeResult};
use crate::input_required::RequestOutcome;
use crate::logging::SetLevelParams;
use crate::prompts::{GetPromptParams, GetPromptResult, ListPromptsResult};
use crate::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams, ReadResourceResult,
    ResourceUriParams,
};
use crate::roots::ListRootsResult;
use crate::sampling::{CreateMessageParams, CreateMessageResult};
use crate::skills::{
    GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams, ReadDirectoryResult,
};
use crate::subscriptions::{SubscriptionsListenParams, SubscriptionsListenResult};
use crate::tasks::{
    CancelTaskResult, GetTaskPayloadResult, ListTasksResult, Task, TaskIdParams, UpdateTaskParams,
};
use crate::tools::{CallToolParams, CallToolResult, ListToolsResult};
use crate::traits::{ClientRequest, Request, ServerRequest};

macro_rules! requests {
    ($(
        $(#[$doc:meta])*
        $name:ident = $method:literal, $params:ty => $result:ty, optional: $opt:literal, [$($dir:ident),*];
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub enum $name {}

            impl Request for $name {
                const METHOD: &'static str = $method;
                const PARAMS_OPTIONAL: bool = $opt;
                type Params = $params;
                type Result = $result;
            }

            $( impl $dir for $name {} )*
        )*
    };
}

requests! {
    /// `initialize` (legacy): start the handshake.
    Initialize = "initialize", InitializeParams => InitializeResult, optional: false, [ClientRequest];
    /// `ping` (legacy, either direction).
    Ping = "ping", RequestParams => EmptyResult, optional: true, [ClientRequest, ServerRequest];
    /// `server/discover` (2026-07-28).
    Discover = "server/discover", RequestParams => DiscoverResult, optional: true, [ClientRequest];
    /// `tools/list`.
    ListTools = "tools/list", PaginatedParams => ListToolsResult, optional: true, [ClientRequest];
    /// `tools/call`: may answer `input_required` (2026-07-28) or with a task.
    CallTool = "tools/call", CallToolParams => RequestOutcome<CallToolResult>, optional: false, [ClientRequest];
    /// `resources/list`.
    ListResources = "resources/list", PaginatedParams => ListResourcesResult, optional: true, [ClientRequest];
    /// `resources/templates/list`.
    ListResourceTemplates = "resources/templates/list", PaginatedParams => ListResourceTemplatesResult, optional: true, [ClientRequest];
    /// `resources/read`: may answer `input_required` (2026-07-28).
    ReadResource = "resources/read", ReadResourceParams => RequestOutcome<ReadResourceResult>, optional: false, [ClientRequest];
    /// `resources/subscribe` (legacy).
    Subscribe = "resources/subscribe", ResourceUriParams => EmptyResult, optional: false, [ClientRequest];
    /// `resources/unsubscribe` (legacy).
    Unsubscribe = "resources/unsubscribe", ResourceUriParams => EmptyResult, optional: false, [ClientRequest];
    /// `skills/list` (Skills extension).
    ListSkills = "skills/list", PaginatedParams => ListSkillsResult, optional: true, [ClientRequest];
    /// `skills/get` (Skills extension).
    GetSkill = "skills/get", GetSkillParams => GetSkillResult, optional: false, [ClientRequest];
    /// `resources/directory/read` (Skills extension, `directoryRead: true`).
    ReadDirectory = "resources/directory/read", ReadDirectoryParams => ReadDirectoryResult, optional: false, [ClientRequest];
    /// `prompts/list`.
    ListPrompts = "prompts/list", PaginatedParams => ListPromptsResult, optional: true, [ClientRequest];
    /// `prompts/get`: may answer `input_required` (2026-07-28).
    GetPrompt = "prompts/get", GetPromptParams => RequestOutcome<GetPromptResult>, optional: false, [ClientRequest];
    /// `completion/complete`.
    Complete = "completion/complete", CompleteParams => CompleteResult, optional: false, [ClientRequest];
    /// `logging/setLevel` (legacy).
    SetLevel = "logging/setLevel", SetLevelParams => EmptyResult, optional: false, [ClientRequest];
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen = "subscriptions/listen", SubscriptionsListenParams => SubscriptionsListenResult, optional: false, [ClientRequest];
    /// `tasks/get` (2025-11-25 either direction; tasks extension).
    GetTask = "tasks/get", TaskIdParams => Task, optional: false, [ClientRequest, ServerRequest];
    /// `tasks/result` (2025-11-25, either direction).
    GetTaskPayload = "tasks/result", TaskIdParams => GetTaskPayloadResult, optional: false, [ClientRequest, ServerRequest];
    /// `tasks/list` (2025-11-25, either direction).
    ListTasks = "tasks/list", PaginatedParams => ListTasksResult, optional: true, [ClientRequest, ServerRequest];
    /// `tasks/cancel` (2025-11-25 either direction; tasks extension).
    CancelTask = "tasks/cancel", TaskIdParams => CancelTaskResult, optional: false, [ClientRequest, ServerRequest];
    /// `tasks/update` (tasks extension): answer a task's `inputRequests`.
    UpdateTask = "tasks/update", UpdateTaskParams => EmptyResult, optional: false, [ClientRequest];
    /// `sampling/createMessage` (server → client; in 2026-07-28 only inside
    /// `inputRequests`).
    CreateMessage = "sampling/createMessage", CreateMessageParams => CreateMessageResult, optional: false, [ServerRequest];
    /// `elicitation/create` (server → client, 2025-06-18+).
    Elicit = "elicitation/create", ElicitParams => ElicitResult, optional: false, [ServerRequest];
    /// `roots/list` (server → client).
    ListRoots = "roots/list", RequestParams => ListRootsResult, optional: true, [ServerRequest];
}
