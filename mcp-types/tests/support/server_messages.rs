//! Representative messages a server sends, per protocol version (what fake
//! servers built on these types emit), with the schema definitions each must
//! satisfy. Only members valid in the version are set.

use mcp_types::*;
use serde::Serialize;
use serde_json::{Value, json};

use ProtocolVersion::*;

/// One server message: the frame, and for responses the result's definitions.
pub(crate) struct ServerSample {
    pub(crate) label: String,
    pub(crate) frame: Value,
    pub(crate) frame_defs: Vec<&'static str>,
    #[allow(dead_code)] // read by the schema test only
    pub(crate) result: Option<(Value, Vec<&'static str>)>,
}

struct Builder {
    v: ProtocolVersion,
    samples: Vec<ServerSample>,
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

impl Builder {
    fn at_least(&self, v: ProtocolVersion) -> bool {
        self.v >= v
    }

    fn modern(&self) -> bool {
        self.v.era() == Era::Modern
    }

    fn result_response_def(&self) -> &'static str {
        if self.at_least(V2025_11_25) {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        }
    }

    /// A result; `frame_def` is the version's specific response definition if any.
    fn result<R: Serialize>(
        &mut self,
        label: &str,
        defs: Vec<&'static str>,
        frame_def: Option<&'static str>,
        r: &R,
    ) {
        let id = RequestId::Number(self.samples.len() as i64 + 1);
        let frame = to_value(&OutgoingResult { id: &id, result: r });
        let mut frame_defs = vec![self.result_response_def(), "JSONRPCMessage"];
        frame_defs.extend(frame_def.filter(|_| self.modern()));
        let mut result_defs = defs;
        result_defs.push("ServerResult");
        self.samples.push(ServerSample {
            label: format!("result {label}"),
            frame,
            frame_defs,
            result: Some((to_value(r), result_defs)),
        });
    }

    fn notification<N: Notification>(&mut self, def: &'static str, params: Option<&N::Params>) {
        let frame = to_value(&OutgoingNotification {
            method: N::METHOD,
            params,
        });
        self.samples.push(ServerSample {
            label: format!("notification {}", N::METHOD),
            frame,
            frame_defs: vec![
                "JSONRPCNotification",
                "JSONRPCMessage",
                def,
                "ServerNotification",
            ],
            result: None,
        });
    }

    fn request<R: Request>(&mut self, def: &'static str, params: &R::Params) {
        let id = RequestId::String(format!("s{}", self.samples.len()));
        let frame = to_value(&OutgoingRequest {
            id: &id,
            method: R::METHOD,
            params: Some(params),
        });
        self.samples.push(ServerSample {
            label: format!("request {}", R::METHOD),
            frame,
            frame_defs: vec!["JSONRPCRequest", "JSONRPCMessage", def, "ServerRequest"],
            result: None,
        });
    }

    fn error(
        &mut self,
        label: &str,
        defs: Vec<&'static str>,
        id: Option<&RequestId>,
        error: &ErrorObject,
    ) {
        let frame = to_value(&OutgoingError { id, error });
        let envelope = if self.at_least(V2025_11_25) {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        let mut frame_defs = vec![envelope, "JSONRPCMessage"];
        frame_defs.extend(defs);
        self.samples.push(ServerSample {
            label: format!("error {label}"),
            frame,
            frame_defs,
            result: None,
        });
    }

    fn result_meta(&self) -> Option<Meta> {
        self.modern().then(|| {
            let mut m = Meta::new();
            m.set_server_info(&Implementation::new("fake-server", "1.0.0"))
                .expect("encodes");
            m
        })
    }

    fn cache<T>(
        &self,
        ttl: u64,
        scope: CacheScope,
        set: impl FnOnce(Option<u64>, Option<CacheScope>, Option<ResultType>) -> T,
    ) -> T {
        if self.modern() {
            set(Some(ttl), Some(scope), Some(ResultType::Complete))
        } else {
            set(None, None, None)
        }
    }

    fn complete(&self) -> Option<ResultType> {
        self.modern().then_some(ResultType::Complete)
    }

    fn server_capabilities(&self) -> ServerCapabilities {
        let mut caps = ServerCapabilities {
            logging: Some(JsonObject::new()),
            prompts: Some(PromptsCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            }),
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        if self.at_least(V2025_03_26) {
            caps.completions = Some(JsonObject::new());
        }
        if self.v == V2025_11_25 {
            caps.tasks = Some(ServerTasksCapability {
                list: Some(JsonObject::new()),
                cancel: Some(JsonObject::new()),
                requests: Some(ServerTaskRequests {
                    tools: Some(obj(json!({ "call": {} }))),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        if self.modern() {
            let mut ext = JsonObject::new();
            ext.insert(TASKS_EXTENSION.into(), json!({}));
            caps.extensions = Some(ext);
        }
        caps
    }

    fn tool(&self) -> Tool {
        let schema = JsonSchemaDoc::from_json(
            r#"{"type":"object","properties":{"location":{"type":"string","description":"City"},"days":{"type":"integer","minimum":1}},"required":["location"]}"#,
        )
        .expect("valid JSON");
        let mut tool = Tool::new("get_weather", schema);
        tool.description = Some("Get the weather".into());
        if self.at_least(V2025_03_26) {
            tool.annotations = Some(ToolAnnotations {
                title: Some("Weather".into()),
                read_only_hint: Some(true),
                open_world_hint: Some(true),
                ..Default::default()
            });
        }
        if self.at_least(V2025_06_18) {
            tool.title = Some("Weather".into());
            tool.output_schema = Some(
                JsonSchemaDoc::from_json(
                    r#"{"type":"object","properties":{"temperature":{"type":"number"}}}"#,
                )
                .expect("valid JSON"),
            );
        }
        if self.at_least(V2025_11_25) {
            tool.icons = Some(vec![Icon {
                src: "https://example.com/w.png".into(),
                ..Default::default()
            }]);
        }
        if self.v == V2025_11_25 {
            tool.execution = Some(ToolExecution {
                task_support: Some(TaskSupport::Optional),
                ..Default::default()
            });
        }
        tool
    }

    fn content(&self) -> Vec<ContentBlock> {
        let mut blocks = vec![
            ContentBlock::Text(TextContent {
                annotations: Some(Annotations {
                    audience: Some(vec![Role::User]),
                    priority: Some(1.into()),
                    last_modified: self
                        .at_least(V2025_06_18)
                        .then(|| "2025-05-03T14:30:00Z".into()),
                    ..Default::default()
                }),
                ..TextContent::new("72°F, sunny")
            }),
            ContentBlock::Image(ImageContent {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
                ..Default::default()
            }),
            ContentBlock::Resource(EmbeddedResource {
                resource: ResourceContents::Text(TextResourceContents {
                    uri: "file:///report.txt".into(),
                    text: "report".into(),
                    mime_type: Some("text/plain".into()),
                    ..Default::default()
                }),
                annotations: None,
                meta: None,
                extra: JsonObject::new(),
            }),
        ];
        if self.at_least(V2025_03_26) {
            blocks.push(ContentBlock::Audio(AudioContent {
                data: "UklGRg==".into(),
                mime_type: "audio/wav".into(),
                ..Default::default()
            }));
        }
        if self.at_least(V2025_06_18) {
            blocks.push(ContentBlock::ResourceLink(ResourceLink {
                uri: "file:///data.csv".into(),
                name: "data.csv".into(),
                mime_type: Some("text/csv".into()),
                size: Some(1024),
                ..Default::default()
            }));
        }
        blocks
    }

    /// A form schema with every field form the version defines.
    fn form(&self) -> RequestedSchema {
        let mut props: Vec<(String, PrimitiveSchema)> = vec![
            (
                "name".into(),
                PrimitiveSchema::String(StringSchema {
                    title: Some("Name".into()),
                    min_length: Some(1),
                    ..Default::default()
                }),
            ),
            (
                "email".into(),
                PrimitiveSchema::String(StringSchema {
                    format: Some(StringFormat::Email),
                    ..Default::default()
                }),
            ),
            (
                "age".into(),
                PrimitiveSchema::Number(NumberSchema {
                    kind: NumberType::Integer,
                    title: None,
                    description: Some("Age".into()),
                    minimum: Some(18.into()),
                    maximum: Some(150.into()),
                    default: None,
                    extra: JsonObject::new(),
                }),
            ),
            (
                "subscribe".into(),
                PrimitiveSchema::Boolean(BooleanSchema {
                    default: Some(false),
                    ..Default::default()
                }),
            ),
            (
                "plan".into(),
                PrimitiveSchema::LegacyTitledEnum(LegacyTitledEnumSchema {
                    values: vec!["free".into(), "pro".into()],
                    enum_names: Some(vec!["Free".into(), "Pro".into()]),
                    ..Default::default()
                }),
            ),
        ];
        if self.at_least(V2025_11_25) {
            let option = |v: &str, t: &str| TitledOption {
                value: v.into(),
                title: t.into(),
                ..Default::default()
            };
            props.push((
                "size".into(),
                PrimitiveSchema::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
                    values: vec!["s".into(), "m".into()],
                    default: Some("m".into()),
                    ..Default::default()
                }),
            ));
            props.push((
                "color".into(),
                PrimitiveSchema::TitledSingleSelect(TitledSingleSelectEnumSchema {
                    one_of: vec![option("#f00", "Red"), option("#0f0", "Green")],
                    ..Default::default()
                }),
            ));
            props.push((
                "tags".into(),
                PrimitiveSchema::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
                    items: UntitledEnumItems {
                        values: vec!["a".into(), "b".into()],
                        ..Default::default()
                    },
                    min_items: Some(1),
                    default: Some(vec!["a".into()]),
                    ..Default::default()
                }),
            ));
            props.push((
                "colors".into(),
                PrimitiveSchema::TitledMultiSelect(TitledMultiSelectEnumSchema {
                    items: TitledEnumItems {
                        any_of: vec![option("#f00", "Red")],
                        ..Default::default()
                    },
                    max_items: Some(1),
                    ..Default::default()
                }),
            ));
        }
        RequestedSchema {
            properties: SchemaProperties(props),
            required: Some(vec!["name".into()]),
            ..Default::default()
        }
    }

    fn elicit_form(&self) -> ElicitParams {
        ElicitParams::Form(ElicitFormParams {
            mode: self.at_least(V2025_11_25).then(|| "form".into()),
            message: "Tell us about you".into(),
            requested_schema: self.form(),
            ..Default::default()
        })
    }

    fn elicit_url(&self) -> ElicitUrlParams {
        ElicitUrlParams {
            message: "Sign in to continue".into(),
            url: "https://example.com/login".into(),
            elicitation_id: (self.v == V2025_11_25).then(|| "el-1".into()),
            ..Default::default()
        }
    }

    fn sampling(&self) -> CreateMessageParams {
        let mut p = CreateMessageParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContent::Single(ContentBlock::text(
                    "What is the capital of France?",
                )),
                meta: None,
                extra: JsonObject::new(),
            }],
            model_preferences: Some(ModelPreferences {
                hints: Some(vec![ModelHint {
                    name: Some("claude".into()),
                    ..Default::default()
                }]),
                intelligence_priority: Some(serde_json::Number::from_f64(0.8).expect("finite")),
                ..Default::default()
            }),
            system_prompt: Some("You are helpful.".into()),
            include_context: Some(IncludeContext::None),
            max_tokens: 100,
            ..Default::default()
        };
        if self.at_least(V2025_11_25) {
            p.tools = Some(vec![self.tool()]);
            p.tool_choice = Some(ToolChoice {
                mode: Some(ToolChoiceMode::Auto),
                ..Default::default()
            });
        }
        p
    }
}

/// Every kind of message a server sends in version `v`.
pub(crate) fn server_messages(v: ProtocolVersion) -> Vec<ServerSample> {
    let mut b = Builder {
        v,
        samples: Vec::new(),
    };
    let info = {
        let mut i = Implementation::new("fake-server", "1.0.0");
        if b.at_least(V2025_06_18) {
            i.title = Some("Fake server".into());
        }
        i
    };

    if b.modern() {
        let discover = DiscoverResult {
            supported_versions: vec!["2026-07-28".into(), "2025-11-25".into()],
            capabilities: b.server_capabilities(),
            instructions: Some("Use get_weather for forecasts.".into()),
            ttl_ms: Some(3_600_000),
            cache_scope: Some(CacheScope::Public),
            result_type: Some(ResultType::Complete),
            meta: b.result_meta(),
            extra: JsonObject::new(),
        };
        b.result(
            "server/discover",
            vec!["DiscoverResult"],
            Some("DiscoverResultResponse"),
            &discover,
        );
    } else {
        let init = InitializeResult {
            protocol_version: v.as_str().into(),
            capabilities: b.server_capabilities(),
            server_info: info,
            instructions: Some("Use get_weather for forecasts.".into()),
            ..Default::default()
        };
        b.result("initialize", vec!["InitializeResult"], None, &init);
        b.result("ping", vec!["EmptyResult"], None, &EmptyResult::default());
    }

    let tools = b.cache(
        300_000,
        CacheScope::Public,
        |ttl_ms, cache_scope, result_type| ListToolsResult {
            tools: vec![b.tool()],
            next_cursor: Some("page-2".into()),
            ttl_ms,
            cache_scope,
            result_type,
            meta: b.result_meta(),
            extra: JsonObject::new(),
        },
    );
    b.result(
        "tools/list",
        vec!["ListToolsResult"],
        Some("ListToolsResultResponse"),
        &tools,
    );

    let mut call = CallToolResult {
        content: b.content(),
        is_error: Some(false),
        result_type: b.complete(),
        meta: b.result_meta(),
        ..Default::default()
    };
    if b.at_least(V2025_06_18) {
        call.structured_content = Some(json!({ "temperature": 22.5 }));
    }
    b.result(
        "tools/call",
        vec!["CallToolResult"],
        Some("CallToolResultResponse"),
        &call,
    );

    let resources = b.cache(
        60_000,
        CacheScope::Private,
        |ttl_ms, cache_scope, result_type| ListResourcesResult {
            resources: vec![Resource {
                uri: "file:///project/README.md".into(),
                name: "README.md".into(),
                title: b.at_least(V2025_06_18).then(|| "Read me".into()),
                mime_type: Some("text/markdown".into()),
                size: Some(42),
                ..Default::default()
            }],
            next_cursor: None,
            ttl_ms,
            cache_scope,
            result_type,
            meta: b.result_meta(),
            extra: JsonObject::new(),
        },
    );
    b.result(
        "resources/list",
        vec!["ListResourcesResult"],
        Some("ListResourcesResultResponse"),
        &resources,
    );
    let templates = b.cache(
        60_000,
        CacheScope::Public,
        |ttl_ms, cache_scope, result_type| ListResourceTemplatesResult {
            resource_templates: vec![ResourceTemplate {
                uri_template: "file:///{path}".into(),
                name: "files".into(),
                ..Default::default()
            }],
            next_cursor: None,
            ttl_ms,
            cache_scope,
            result_type,
            meta: None,
            extra: JsonObject::new(),
        },
    );
    b.result(
        "resources/templates/list",
        vec!["ListResourceTemplatesResult"],
        Some("ListResourceTemplatesResultResponse"),
        &templates,
    );
    let read = b.cache(
        0,
        CacheScope::Private,
        |ttl_ms, cache_scope, result_type| ReadResourceResult {
            contents: vec![
                ResourceContents::Text(TextResourceContents {
                    uri: "file:///a.txt".into(),
                    text: "hello".into(),
                    ..Default::default()
                }),
                ResourceContents::Blob(BlobResourceContents {
                    uri: "file:///a.bin".into(),
                    blob: "AAEC".into(),
                    mime_type: Some("application/octet-stream".into()),
                    ..Default::default()
                }),
            ],
            ttl_ms,
            cache_scope,
            result_type,
            meta: None,
            extra: JsonObject::new(),
        },
    );
    b.result(
        "resources/read",
        vec!["ReadResourceResult"],
        Some("ReadResourceResultResponse"),
        &read,
    );

    let prompts = b.cache(
        60_000,
        CacheScope::Public,
        |ttl_ms, cache_scope, result_type| ListPromptsResult {
            prompts: vec![Prompt {
                name: "code_review".into(),
                description: Some("Review code".into()),
                arguments: Some(vec![PromptArgument {
                    name: "code".into(),
                    required: Some(true),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            next_cursor: None,
            ttl_ms,
            cache_scope,
            result_type,
            meta: None,
            extra: JsonObject::new(),
        },
    );
    b.result(
        "prompts/list",
        vec!["ListPromptsResult"],
        Some("ListPromptsResultResponse"),
        &prompts,
    );
    let prompt = GetPromptResult {
        description: Some("Code review".into()),
        messages: vec![PromptMessage {
            role: Role::User,
            content: ContentBlock::text("Review this"),
            extra: JsonObject::new(),
        }],
        result_type: b.complete(),
        meta: None,
        extra: JsonObject::new(),
    };
    b.result(
        "prompts/get",
        vec!["GetPromptResult"],
        Some("GetPromptResultResponse"),
        &prompt,
    );
    let completion = CompleteResult {
        completion: Completion {
            values: vec!["python".into(), "pytorch".into()],
            total: Some(10),
            has_more: Some(true),
            ..Default::default()
        },
        result_type: b.complete(),
        ..Default::default()
    };
    b.result(
        "completion/complete",
        vec!["CompleteResult"],
        Some("CompleteResultResponse"),
        &completion,
    );

    // Notifications.
    let sub_meta = b.modern().then(|| {
        let mut m = Meta::new();
        m.set_subscription_id(&RequestId::Number(1))
            .expect("encodes");
        m
    });
    let progress = ProgressParams {
        progress_token: ProgressToken::Number(7),
        progress: 50.into(),
        total: Some(100.into()),
        message: b.at_least(V2025_03_26).then(|| "halfway".into()),
        meta: None,
        extra: JsonObject::new(),
    };
    b.notification::<notifications::Progress>("ProgressNotification", Some(&progress));
    let log = LoggingMessageParams {
        level: LoggingLevel::Warning,
        logger: Some("db".into()),
        data: json!({ "error": "timeout" }),
        meta: None,
        extra: JsonObject::new(),
    };
    b.notification::<notifications::LoggingMessage>("LoggingMessageNotification", Some(&log));
    let updated = ResourceUpdatedParams {
        uri: "file:///project/config.json".into(),
        meta: sub_meta.clone(),
        extra: JsonObject::new(),
    };
    b.notification::<notifications::ResourceUpdated>("ResourceUpdatedNotification", Some(&updated));
    let changed = NotificationParams {
        meta: sub_meta.clone(),
        ..Default::default()
    };
    b.notification::<notifications::ToolListChanged>("ToolListChangedNotification", Some(&changed));
    b.notification::<notifications::PromptListChanged>("PromptListChangedNotification", None);
    b.notification::<notifications::ResourceListChanged>(
        "ResourceListChangedNotification",
        Some(&changed),
    );
    let cancelled = CancelledParams::new(RequestId::String("c1".into()), Some("timeout".into()));
    b.notification::<notifications::Cancelled>("CancelledNotification", Some(&cancelled));

    // Server → client requests (legacy) or input requests (2026).
    if b.modern() {
        let mut requests = InputRequests::new();
        requests.insert(
            "form".into(),
            InputRequest::from(ServerRequestMessage::Elicit(b.elicit_form())),
        );
        requests.insert(
            "url".into(),
            InputRequest::from(ServerRequestMessage::Elicit(ElicitParams::Url(
                b.elicit_url(),
            ))),
        );
        requests.insert(
            "ask".into(),
            InputRequest::from(ServerRequestMessage::CreateMessage(b.sampling())),
        );
        requests.insert(
            "roots".into(),
            InputRequest::from(ServerRequestMessage::ListRoots(RequestParams::default())),
        );
        let input = InputRequiredResult {
            result_type: Some(ResultType::InputRequired),
            input_requests: Some(requests),
            request_state: Some("state".into()),
            meta: b.result_meta(),
            extra: JsonObject::new(),
        };
        b.result(
            "input_required",
            vec!["InputRequiredResult"],
            Some("CallToolResultResponse"),
            &input,
        );
        let ack = SubscriptionsAcknowledgedParams {
            notifications: SubscriptionFilter {
                tools_list_changed: Some(true),
                ..Default::default()
            },
            meta: sub_meta.clone(),
            extra: JsonObject::new(),
        };
        b.notification::<notifications::SubscriptionsAcknowledged>(
            "SubscriptionsAcknowledgedNotification",
            Some(&ack),
        );
        let closed = SubscriptionsListenResult {
            result_type: Some(ResultType::Complete),
            meta: sub_meta,
            extra: JsonObject::new(),
        };
        b.result(
            "subscriptions/listen",
            vec!["SubscriptionsListenResult"],
            Some("SubscriptionsListenResultResponse"),
            &closed,
        );

        let mut e = ErrorObject::new(
            error_codes::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        );
        e.data = Some(to_value(&UnsupportedProtocolVersionData {
            requested: "1900-01-01".into(),
            supported: vec!["2026-07-28".into()],
        }));
        b.error(
            "unsupported version",
            vec!["UnsupportedProtocolVersionError"],
            Some(&RequestId::Number(1)),
            &e,
        );
        let mut e = ErrorObject::new(
            error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing capability",
        );
        e.data = Some(to_value(&MissingRequiredClientCapabilityData {
            required_capabilities: ClientCapabilities {
                elicitation: Some(ElicitationCapability::default()),
                ..Default::default()
            },
        }));
        b.error(
            "missing capability",
            vec!["MissingRequiredClientCapabilityError"],
            Some(&RequestId::Number(2)),
            &e,
        );
        let e = ErrorObject::new(error_codes::HEADER_MISMATCH, "Header mismatch");
        b.error("header mismatch", vec!["HeaderMismatchError"], None, &e);
    } else {
        b.request::<requests::Ping>("PingRequest", &RequestParams::default());
        b.request::<requests::CreateMessage>("CreateMessageRequest", &b.sampling());
        b.request::<requests::ListRoots>("ListRootsRequest", &RequestParams::default());
        if b.at_least(V2025_06_18) {
            b.request::<requests::Elicit>("ElicitRequest", &b.elicit_form());
        }
        let e = ErrorObject::new(error_codes::METHOD_NOT_FOUND, "Method not found");
        b.error("method not found", vec![], Some(&RequestId::Number(3)), &e);
    }

    if v == V2025_11_25 {
        b.request::<requests::Elicit>("ElicitRequest", &ElicitParams::Url(b.elicit_url()));
        let done = ElicitationCompleteParams {
            elicitation_id: "el-1".into(),
            meta: None,
            extra: JsonObject::new(),
        };
        b.notification::<notifications::ElicitationComplete>(
            "ElicitationCompleteNotification",
            Some(&done),
        );
        let task = Task {
            task_id: "t1".into(),
            status: TaskStatus::InputRequired,
            status_message: Some("waiting".into()),
            created_at: "2025-11-25T10:30:00Z".into(),
            last_updated_at: "2025-11-25T10:31:00Z".into(),
            ttl: Some(Nullable::Null),
            ttl_ms: None,
            poll_interval: Some(500),
            poll_interval_ms: None,
            input_requests: None,
            result: None,
            error: None,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        };
        b.notification::<notifications::TaskStatus>("TaskStatusNotification", Some(&task));
        let created = CreateTaskResult::Nested(NestedTaskResult {
            task: task.clone(),
            meta: None,
            extra: JsonObject::new(),
        });
        b.result(
            "task-augmented tools/call",
            vec!["CreateTaskResult"],
            None,
            &created,
        );
        b.result("tasks/get", vec!["GetTaskResult"], None, &task);
        b.request::<requests::GetTask>("GetTaskRequest", &TaskIdParams::new("client-task"));
        let mut e = ErrorObject::new(
            error_codes::URL_ELICITATION_REQUIRED,
            "URL elicitation required",
        );
        e.data = Some(to_value(&UrlElicitationRequiredData {
            elicitations: vec![b.elicit_url()],
        }));
        b.error(
            "URL elicitation required",
            vec!["URLElicitationRequiredError"],
            Some(&RequestId::Number(4)),
            &e,
        );
    }

    b.samples
}
