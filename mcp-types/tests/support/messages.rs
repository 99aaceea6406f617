//! Representative messages a client sends, per protocol version, built with the
//! crate's types and serialised through the `Outgoing*` frames. Each sample names
//! the schema definitions its frame (and its result, for responses) must satisfy.
//! Only members valid in the version are set.

use std::collections::BTreeMap;

use mcp_types::notifications::{
    Cancelled, Initialized, Progress, RootsListChanged, TaskStatus as TaskStatusN,
};
use mcp_types::requests::{
    CallTool, CancelTask, Complete, Discover, GetPrompt, GetTask, GetTaskPayload, Initialize,
    ListPrompts, ListResourceTemplates, ListResources, ListTasks, ListTools, Ping, ReadResource,
    SetLevel, Subscribe, SubscriptionsListen, Unsubscribe,
};
use mcp_types::*;
use serde::Serialize;
use serde_json::{Value, json};

/// One message to check.
pub(crate) struct Sample {
    /// A name for failure messages and snapshots.
    pub(crate) label: String,
    /// The whole JSON-RPC frame.
    pub(crate) frame: Value,
    /// Definitions the frame must satisfy.
    pub(crate) frame_defs: Vec<&'static str>,
    /// For responses: the result, and the definitions it must satisfy.
    #[allow(dead_code)] // read by the schema test only
    pub(crate) result: Option<(Value, Vec<&'static str>)>,
}

fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("our types serialise")
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

/// The builder for one version.
pub(crate) struct ForVersion {
    pub(crate) v: ProtocolVersion,
    next_id: i64,
    samples: Vec<Sample>,
}

impl ForVersion {
    fn new(v: ProtocolVersion) -> Self {
        ForVersion {
            v,
            next_id: 1,
            samples: Vec::new(),
        }
    }

    fn at_least(&self, v: ProtocolVersion) -> bool {
        self.v >= v
    }

    fn modern(&self) -> bool {
        self.v.era() == Era::Modern
    }

    fn jsonrpc_request_def(&self) -> &'static str {
        "JSONRPCRequest"
    }

    fn jsonrpc_response_def(&self) -> &'static str {
        if self.at_least(ProtocolVersion::V2025_11_25) {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        }
    }

    /// The client's identity, with the members the version defines.
    pub(crate) fn client_info(&self) -> Implementation {
        let mut info = Implementation::new("mcp-types-test", "0.1.0");
        if self.at_least(ProtocolVersion::V2025_06_18) {
            info.title = Some("MCP types test client".into());
        }
        if self.at_least(ProtocolVersion::V2025_11_25) {
            info.description = Some("Exercises every client message".into());
            info.website_url = Some("https://example.com/client".into());
            info.icons = Some(vec![Icon {
                src: "https://example.com/icon.png".into(),
                mime_type: Some("image/png".into()),
                sizes: Some(vec!["48x48".into()]),
                theme: Some(IconTheme::Light),
                ..Default::default()
            }]);
        }
        info
    }

    /// The client's capabilities, with the members the version defines.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities {
            sampling: Some(SamplingCapability::default()),
            ..Default::default()
        };
        if self.modern() {
            caps.roots = Some(RootsCapability::default());
        } else {
            caps.roots = Some(RootsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
            let mut experimental = JsonObject::new();
            experimental.insert("com.example/feature".into(), json!({ "level": 2 }));
            caps.experimental = Some(experimental);
        }
        if self.at_least(ProtocolVersion::V2025_06_18) {
            caps.elicitation = Some(ElicitationCapability::default());
        }
        if self.at_least(ProtocolVersion::V2025_11_25) {
            caps.elicitation = Some(ElicitationCapability {
                form: Some(JsonObject::new()),
                url: Some(JsonObject::new()),
                ..Default::default()
            });
            caps.sampling = Some(SamplingCapability {
                tools: Some(JsonObject::new()),
                context: Some(JsonObject::new()),
                ..Default::default()
            });
        }
        if self.v == ProtocolVersion::V2025_11_25 {
            caps.tasks = Some(ClientTasksCapability {
                list: Some(JsonObject::new()),
                cancel: Some(JsonObject::new()),
                requests: Some(ClientTaskRequests {
                    sampling: Some(obj(json!({ "createMessage": {} }))),
                    elicitation: Some(obj(json!({ "create": {} }))),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        if self.modern() {
            caps.add_extension(TASKS_EXTENSION);
        }
        caps
    }

    /// Request `_meta`: the 2026 per-request keys, or a progress token before.
    fn request_meta(&self, progress: Option<i64>) -> Option<Meta> {
        let mut meta = if self.modern() {
            let mut m =
                Meta::for_modern_request(self.v, &self.capabilities(), Some(&self.client_info()))
                    .expect("meta encodes");
            m.set_log_level(LoggingLevel::Info);
            m
        } else {
            Meta::new()
        };
        if let Some(t) = progress {
            meta.set_progress_token(&ProgressToken::Number(t));
        }
        if meta.is_empty() { None } else { Some(meta) }
    }

    fn request<R: Request>(&mut self, def: &'static str, params: &R::Params) {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let frame = to_value(&OutgoingRequest {
            id: &id,
            method: R::METHOD,
            params: Some(params),
        });
        self.samples.push(Sample {
            label: format!("request {}", R::METHOD),
            frame,
            frame_defs: vec![self.jsonrpc_request_def(), def, "ClientRequest"],
            result: None,
        });
    }

    fn labelled_request<R: Request>(&mut self, label: &str, def: &'static str, params: &R::Params) {
        self.request::<R>(def, params);
        if let Some(last) = self.samples.last_mut() {
            last.label = format!("request {} ({label})", R::METHOD);
        }
    }

    fn notification<N: Notification>(&mut self, def: &'static str, params: Option<&N::Params>) {
        let frame = to_value(&OutgoingNotification {
            method: N::METHOD,
            params,
        });
        self.samples.push(Sample {
            label: format!("notification {}", N::METHOD),
            frame,
            frame_defs: vec!["JSONRPCNotification", def, "ClientNotification"],
            result: None,
        });
    }

    fn response<R: Serialize>(&mut self, label: &str, result_defs: Vec<&'static str>, result: &R) {
        let id = RequestId::String(format!("server-{label}"));
        let frame = to_value(&OutgoingResult { id: &id, result });
        self.samples.push(Sample {
            label: format!("response {label}"),
            frame,
            frame_defs: vec![self.jsonrpc_response_def()],
            result: Some((to_value(result), result_defs)),
        });
    }

    fn paginated(&self, cursor: Option<&str>) -> PaginatedParams {
        PaginatedParams {
            cursor: cursor.map(str::to_owned),
            meta: self.request_meta(None),
            ..Default::default()
        }
    }
}

/// Every request, notification and result a client sends in version `v`.
pub(crate) fn client_messages(v: ProtocolVersion) -> Vec<Sample> {
    use ProtocolVersion::*;
    let mut b = ForVersion::new(v);

    // Lifecycle.
    if b.modern() {
        let params = RequestParams {
            meta: b.request_meta(None),
            ..Default::default()
        };
        b.request::<Discover>("DiscoverRequest", &params);
    } else {
        let params = InitializeParams::new(v.as_str(), b.capabilities(), b.client_info());
        b.request::<Initialize>("InitializeRequest", &params);
        b.notification::<Initialized>("InitializedNotification", None);
        b.request::<Ping>("PingRequest", &RequestParams::default());
    }

    // Tools.
    let list = b.paginated(Some("page-2"));
    b.request::<ListTools>("ListToolsRequest", &list);
    let mut args = JsonObject::new();
    args.insert("location".into(), json!("New York"));
    args.insert("days".into(), json!(3));
    let mut call = CallToolParams::new("get_weather", Some(args.clone()));
    call.meta = b.request_meta(Some(7));
    if v == V2025_11_25 {
        call.task = Some(TaskMetadata {
            ttl: Some(60_000),
            ..Default::default()
        });
    }
    b.request::<CallTool>("CallToolRequest", &call);

    // Resources.
    let list = b.paginated(None);
    b.request::<ListResources>("ListResourcesRequest", &list);
    b.request::<ListResourceTemplates>("ListResourceTemplatesRequest", &list);
    let mut read = ReadResourceParams::new("file:///project/README.md");
    read.meta = b.request_meta(None);
    b.request::<ReadResource>("ReadResourceRequest", &read);
    if !b.modern() {
        let sub = ResourceUriParams::new("file:///project/README.md");
        b.request::<Subscribe>("SubscribeRequest", &sub);
        b.request::<Unsubscribe>("UnsubscribeRequest", &sub);
    }

    // Prompts.
    let list = b.paginated(None);
    b.request::<ListPrompts>("ListPromptsRequest", &list);
    let mut arguments = BTreeMap::new();
    arguments.insert("code".to_owned(), "fn main() {}".to_owned());
    let mut get = GetPromptParams::new("code_review", Some(arguments));
    get.meta = b.request_meta(None);
    b.request::<GetPrompt>("GetPromptRequest", &get);

    // Completion.
    let reference = CompletionReference::Prompt(PromptReference {
        name: "code_review".into(),
        ..Default::default()
    });
    let argument = CompletionArgument {
        name: "language".into(),
        value: "py".into(),
        ..Default::default()
    };
    let mut complete = CompleteParams::new(reference, argument);
    if b.at_least(V2025_06_18) {
        let mut resolved = BTreeMap::new();
        resolved.insert("framework".to_owned(), "flask".to_owned());
        complete.context = Some(CompletionContext {
            arguments: Some(resolved),
            ..Default::default()
        });
    }
    complete.meta = b.request_meta(None);
    b.request::<Complete>("CompleteRequest", &complete);
    let reference = CompletionReference::ResourceTemplate(ResourceTemplateReference {
        uri: "file:///{path}".into(),
        ..Default::default()
    });
    let argument = CompletionArgument {
        name: "path".into(),
        value: "src/".into(),
        ..Default::default()
    };
    let mut complete = CompleteParams::new(reference, argument);
    complete.meta = b.request_meta(None);
    b.labelled_request::<Complete>("resource template", "CompleteRequest", &complete);

    // Logging (legacy: a request; 2026: `_meta` logLevel on each request, above).
    if !b.modern() {
        b.request::<SetLevel>(
            "SetLevelRequest",
            &SetLevelParams::new(LoggingLevel::Warning),
        );
    }

    // Notifications.
    let cancelled = CancelledParams::new(RequestId::Number(2), Some("user pressed stop".into()));
    b.notification::<Cancelled>("CancelledNotification", Some(&cancelled));
    if !b.modern() {
        let mut progress = ProgressParams {
            progress_token: ProgressToken::String("sampling-1".into()),
            progress: 50.into(),
            total: Some(100.into()),
            message: None,
            meta: None,
            extra: JsonObject::new(),
        };
        if b.at_least(V2025_03_26) {
            progress.message = Some("halfway".into());
        }
        b.notification::<Progress>("ProgressNotification", Some(&progress));
        b.notification::<RootsListChanged>("RootsListChangedNotification", None);
    }

    // Results of server → client requests (legacy: responses; 2026: inputResponses).
    let sampled = {
        let content = if v == V2024_11_05 || v == V2025_03_26 || v == V2025_06_18 {
            SamplingContent::Single(ContentBlock::text("The capital of France is Paris."))
        } else {
            let mut input = JsonObject::new();
            input.insert("city".into(), json!("Paris"));
            SamplingContent::Multiple(vec![ContentBlock::ToolUse(ToolUseContent {
                id: "call_1".into(),
                name: "get_weather".into(),
                input,
                ..Default::default()
            })])
        };
        let mut r = CreateMessageResult::new(content, "claude-sonnet");
        r.stop_reason = Some(if v >= V2025_11_25 {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        });
        r
    };
    let roots = ListRootsResult {
        roots: vec![Root {
            uri: "file:///project".into(),
            name: Some("project".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let elicited = {
        let mut content = BTreeMap::new();
        content.insert("name".to_owned(), ElicitValue::String("octocat".into()));
        content.insert("age".to_owned(), ElicitValue::Number(30.into()));
        content.insert("subscribe".to_owned(), ElicitValue::Bool(true));
        if b.at_least(V2025_11_25) {
            content.insert(
                "colors".to_owned(),
                ElicitValue::StringArray(vec!["red".into(), "green".into()]),
            );
        }
        let mut r = ElicitResult::new(ElicitAction::Accept);
        r.content = Some(content);
        r
    };
    if b.modern() {
        let mut responses = InputResponses::new();
        responses.insert("capital".into(), InputResponse::CreateMessage(sampled));
        responses.insert("roots".into(), InputResponse::ListRoots(roots));
        responses.insert("login".into(), InputResponse::Elicit(elicited));
        let mut retry = CallToolParams::new("get_weather", Some(args));
        retry.input_responses = Some(responses.clone());
        retry.request_state = Some("opaque-state-1".into());
        retry.meta = b.request_meta(None);
        b.labelled_request::<CallTool>("input responses", "CallToolRequest", &retry);
        let mut retry = GetPromptParams::new("code_review", None);
        retry.input_responses = Some(responses.clone());
        retry.request_state = Some("opaque-state-2".into());
        retry.meta = b.request_meta(None);
        b.labelled_request::<GetPrompt>("input responses", "GetPromptRequest", &retry);
        let mut retry = ReadResourceParams::new("file:///project/secret.txt");
        retry.input_responses = Some(responses);
        retry.meta = b.request_meta(None);
        b.labelled_request::<ReadResource>("input responses", "ReadResourceRequest", &retry);

        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resources_list_changed: Some(true),
            resource_subscriptions: Some(vec!["file:///project/config.json".into()]),
            ..Default::default()
        };
        let listen = SubscriptionsListenParams {
            notifications: filter,
            meta: b.request_meta(None),
            ..Default::default()
        };
        b.request::<SubscriptionsListen>("SubscriptionsListenRequest", &listen);
    } else {
        b.response(
            "ping",
            vec!["EmptyResult", "ClientResult"],
            &EmptyResult::default(),
        );
        b.response(
            "sampling/createMessage",
            vec!["CreateMessageResult", "ClientResult"],
            &sampled,
        );
        b.response(
            "roots/list",
            vec!["ListRootsResult", "ClientResult"],
            &roots,
        );
        if b.at_least(V2025_06_18) {
            b.response(
                "elicitation/create",
                vec!["ElicitResult", "ClientResult"],
                &elicited,
            );
            b.response(
                "elicitation/create (declined)",
                vec!["ElicitResult", "ClientResult"],
                &ElicitResult::new(ElicitAction::Decline),
            );
        }
    }

    // Tasks (2025-11-25): the client polls server tasks and hosts its own.
    if v == V2025_11_25 {
        let id = TaskIdParams::new("task-1");
        b.request::<GetTask>("GetTaskRequest", &id);
        b.request::<GetTaskPayload>("GetTaskPayloadRequest", &id);
        b.request::<ListTasks>("ListTasksRequest", &PaginatedParams::default());
        b.request::<CancelTask>("CancelTaskRequest", &id);
        let task = Task {
            task_id: "client-task-1".into(),
            status: TaskStatus::Working,
            status_message: Some("sampling".into()),
            created_at: "2025-11-25T10:30:00Z".into(),
            last_updated_at: "2025-11-25T10:31:00Z".into(),
            ttl: Some(Nullable::Value(60_000)),
            ttl_ms: None,
            poll_interval: Some(1_000),
            poll_interval_ms: None,
            input_requests: None,
            result: None,
            error: None,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        };
        b.notification::<TaskStatusN>("TaskStatusNotification", Some(&task));
        let created = CreateTaskResult::Nested(NestedTaskResult {
            task: task.clone(),
            meta: None,
            extra: JsonObject::new(),
        });
        b.response(
            "task-augmented sampling/createMessage",
            vec!["CreateTaskResult", "ClientResult"],
            &created,
        );
        let unlimited = Task {
            ttl: Some(Nullable::Null),
            ..task.clone()
        };
        b.response(
            "tasks/get",
            vec!["GetTaskResult", "ClientResult"],
            &unlimited,
        );
        let list = ListTasksResult {
            tasks: vec![task.clone()],
            next_cursor: Some("2".into()),
            ..Default::default()
        };
        b.response("tasks/list", vec!["ListTasksResult", "ClientResult"], &list);
        let cancelled = CancelTaskResult::Task(Task {
            status: TaskStatus::Cancelled,
            ..task
        });
        b.response(
            "tasks/cancel",
            vec!["CancelTaskResult", "ClientResult"],
            &cancelled,
        );
        let mut payload = GetTaskPayloadResult::new();
        payload.insert("model".into(), json!("claude-sonnet"));
        payload.insert("role".into(), json!("assistant"));
        payload.insert("content".into(), json!({ "type": "text", "text": "Paris" }));
        b.response(
            "tasks/result",
            vec!["GetTaskPayloadResult", "ClientResult"],
            &payload,
        );
    }

    b.samples
}
