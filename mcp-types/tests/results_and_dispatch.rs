//! Polymorphic results (`resultType`), dispatch by method, method markers and
//! protocol versions.

use mcp_types::requests::{CallTool, CreateMessage, Elicit, GetTask, ListRoots, ListTools, Ping};
use mcp_types::*;
use serde_json::json;
use serde_json::value::RawValue;

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).unwrap()
}

#[test]
fn missing_result_type_reads_as_complete() {
    let r = raw(r#"{"content":[{"type":"text","text":"hi"}]}"#);
    assert_eq!(peek_result_type(&r).unwrap(), ResultType::Complete);
    let outcome = RequestOutcome::<CallToolResult>::from_raw(&r).unwrap();
    assert_eq!(outcome.result_type(), ResultType::Complete);
    assert_eq!(
        outcome.into_complete().unwrap().content[0].as_text(),
        Some("hi")
    );
    let r = raw(r#"{"resultType":"complete","content":[]}"#);
    let outcome: RequestOutcome<CallToolResult> = serde_json::from_str(r.get()).unwrap();
    assert!(
        matches!(outcome, RequestOutcome::Complete(ref c) if c.result_type == Some(ResultType::Complete))
    );
    assert_eq!(
        serde_json::to_string(&outcome).unwrap(),
        r#"{"content":[],"resultType":"complete"}"#
    );
}

#[test]
fn unknown_result_type_is_an_error() {
    let r = raw(r#"{"content":[],"resultType":"streaming"}"#);
    assert!(matches!(
        peek_result_type(&r),
        Err(TypesError::UnknownResultType)
    ));
    assert!(matches!(
        RequestOutcome::<CallToolResult>::from_raw(&r),
        Err(TypesError::UnknownResultType)
    ));
    assert!(serde_json::from_str::<RequestOutcome<CallToolResult>>(r.get()).is_err());
    assert!(serde_json::from_str::<CallToolResult>(r.get()).is_err());
    assert!(serde_json::from_str::<ListToolsResult>(r#"{"tools":[],"resultType":7}"#).is_err());
    // A result that is not an object at all.
    assert!(matches!(
        peek_result_type(&raw("[1]")),
        Err(TypesError::InvalidResult(_))
    ));
}

#[test]
fn input_required_results_decode_their_requests() {
    let r = raw(
        r#"{"resultType":"input_required","requestState":"s1","inputRequests":{
            "login":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}},
            "ask":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},
            "where":{"method":"roots/list"},
            "odd":{"method":"x/new","params":{"a":1}}
        }}"#,
    );
    let RequestOutcome::InputRequired(ir) =
        RequestOutcome::<GetPromptResult>::from_raw(&r).unwrap()
    else {
        panic!("input_required")
    };
    assert_eq!(ir.request_state.as_deref(), Some("s1"));
    let reqs = ir.input_requests.as_ref().unwrap();
    assert!(matches!(
        reqs["login"].request,
        ServerRequestMessage::Elicit(ElicitParams::Form(_))
    ));
    assert!(
        matches!(reqs["ask"].request, ServerRequestMessage::CreateMessage(ref p) if p.max_tokens == 5)
    );
    assert!(matches!(
        reqs["where"].request,
        ServerRequestMessage::ListRoots(_)
    ));
    assert!(
        matches!(reqs["odd"].request, ServerRequestMessage::Unknown { ref method, .. } if method == "x/new")
    );
    let again = serde_json::to_value(&ir).unwrap();
    assert_eq!(
        again,
        serde_json::from_str::<serde_json::Value>(r.get()).unwrap()
    );
    // A known method with params of the wrong shape fails the whole result.
    let bad = raw(
        r#"{"resultType":"input_required","inputRequests":{"k":{"method":"sampling/createMessage","params":{}}}}"#,
    );
    assert!(RequestOutcome::<CallToolResult>::from_raw(&bad).is_err());
}

#[test]
fn task_results_in_both_shapes() {
    let flat = raw(
        r#"{"resultType":"task","taskId":"t1","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":60000,"pollIntervalMs":5000}"#,
    );
    let RequestOutcome::Task(task) = RequestOutcome::<CallToolResult>::from_raw(&flat).unwrap()
    else {
        panic!("task")
    };
    assert!(matches!(task, CreateTaskResult::Flat(_)));
    assert_eq!(task.task().poll_interval_millis(), Some(5000));
    assert_eq!(task.task().ttl_millis(), Some(Some(60000)));

    let nested = raw(
        r#"{"task":{"taskId":"t2","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":null,"pollInterval":100}}"#,
    );
    let RequestOutcome::Task(task) = RequestOutcome::<CallToolResult>::from_raw(&nested).unwrap()
    else {
        panic!("task")
    };
    assert!(matches!(task, CreateTaskResult::Nested(_)));
    assert_eq!(task.task().task_id, "t2");
    assert_eq!(task.task().ttl_millis(), Some(None));
    assert_eq!(serde_json::to_string(&task).unwrap(), nested.get());

    // tasks/get in the extension: detailed fields by status.
    let got: Task = serde_json::from_str(
        r#"{"resultType":"complete","taskId":"t","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,"error":{"code":-32603,"message":"boom"}}"#,
    )
    .unwrap();
    assert!(got.status.is_terminal());
    assert_eq!(
        got.error_object().unwrap().unwrap().code,
        error_codes::INTERNAL_ERROR
    );
    let cancel: CancelTaskResult = serde_json::from_str(r#"{"resultType":"complete"}"#).unwrap();
    assert!(matches!(cancel, CancelTaskResult::Acknowledged(_)));
}

#[test]
fn server_requests_dispatch_by_method() {
    let p = raw(
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":10}"#,
    );
    let msg = ServerRequestMessage::parse(CreateMessage::METHOD, Some(&p)).unwrap();
    assert!(matches!(msg, ServerRequestMessage::CreateMessage(ref c) if c.messages.len() == 1));
    assert_eq!(msg.method(), "sampling/createMessage");
    assert!(matches!(
        ServerRequestMessage::parse(Ping::METHOD, None).unwrap(),
        ServerRequestMessage::Ping(_)
    ));
    assert!(matches!(
        ServerRequestMessage::parse(ListRoots::METHOD, None).unwrap(),
        ServerRequestMessage::ListRoots(_)
    ));
    assert!(matches!(
        ServerRequestMessage::parse(Elicit::METHOD, None),
        Err(TypesError::MissingParams {
            method: "elicitation/create"
        })
    ));
    assert!(matches!(
        ServerRequestMessage::parse(GetTask::METHOD, Some(&raw("{}"))),
        Err(TypesError::InvalidParams {
            method: "tasks/get",
            ..
        })
    ));
    let unknown = ServerRequestMessage::parse("vendor/thing", Some(&raw(r#"{"a":[1]}"#))).unwrap();
    assert_eq!(
        unknown,
        ServerRequestMessage::Unknown {
            method: "vendor/thing".into(),
            params: Some(json!({ "a": [1] }))
        }
    );
    assert_eq!(
        serde_json::to_value(&unknown).unwrap(),
        json!({ "method": "vendor/thing", "params": { "a": [1] } })
    );
}

#[test]
fn server_notifications_dispatch_by_method() {
    let cases = [
        (
            "notifications/cancelled",
            Some(r#"{"requestId":1,"reason":"r"}"#),
        ),
        (
            "notifications/progress",
            Some(r#"{"progressToken":"t","progress":1}"#),
        ),
        (
            "notifications/message",
            Some(r#"{"level":"error","data":{"x":1}}"#),
        ),
        (
            "notifications/resources/updated",
            Some(r#"{"uri":"file:///a"}"#),
        ),
        ("notifications/resources/list_changed", None),
        ("notifications/tools/list_changed", Some("{}")),
        ("notifications/prompts/list_changed", None),
        (
            "notifications/elicitation/complete",
            Some(r#"{"elicitationId":"e"}"#),
        ),
        (
            "notifications/tasks/status",
            Some(
                r#"{"taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttl":null}"#,
            ),
        ),
        (
            "notifications/tasks",
            Some(r#"{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b"}"#),
        ),
        (
            "notifications/subscriptions/acknowledged",
            Some(r#"{"notifications":{"toolsListChanged":true}}"#),
        ),
    ];
    for (method, params) in cases {
        let params = params.map(raw);
        let msg = ServerNotificationMessage::parse(method, params.as_deref()).unwrap();
        assert!(
            !matches!(msg, ServerNotificationMessage::Unknown { .. }),
            "{method} fell through"
        );
        assert_eq!(msg.method(), method);
    }
    let msg = ServerNotificationMessage::parse(
        "notifications/message",
        Some(&raw(r#"{"level":"loud","data":1}"#)),
    );
    assert!(matches!(
        msg,
        Err(TypesError::InvalidParams {
            method: "notifications/message",
            ..
        })
    ));
    let msg = ServerNotificationMessage::parse("notifications/tools/list_changed", None).unwrap();
    assert_eq!(
        serde_json::to_value(&msg).unwrap()["method"],
        "notifications/tools/list_changed"
    );
}

#[test]
fn client_messages_dispatch_too() {
    let p = raw(r#"{"name":"t","arguments":{"a":1}}"#);
    let msg = ClientRequestMessage::parse(CallTool::METHOD, Some(&p)).unwrap();
    assert!(matches!(msg, ClientRequestMessage::CallTool(ref c) if c.name == "t"));
    assert!(matches!(
        ClientRequestMessage::parse(ListTools::METHOD, None).unwrap(),
        ClientRequestMessage::ListTools(_)
    ));
    let n = ClientNotificationMessage::parse("notifications/initialized", None).unwrap();
    assert!(matches!(n, ClientNotificationMessage::Initialized(_)));
}

fn sendable_by_client<R: ClientRequest>() -> &'static str {
    R::METHOD
}

fn sendable_by_server<R: ServerRequest>() -> &'static str {
    R::METHOD
}

#[test]
fn markers_pair_methods_params_and_results() {
    use mcp_types::requests as r;
    assert_eq!(sendable_by_client::<r::ListTools>(), "tools/list");
    assert_eq!(sendable_by_client::<r::Discover>(), "server/discover");
    assert_eq!(
        sendable_by_client::<r::SubscriptionsListen>(),
        "subscriptions/listen"
    );
    assert_eq!(sendable_by_client::<r::UpdateTask>(), "tasks/update");
    assert_eq!(
        sendable_by_server::<r::CreateMessage>(),
        "sampling/createMessage"
    );
    assert_eq!(sendable_by_server::<r::GetTask>(), "tasks/get");
    const { assert!(r::Ping::PARAMS_OPTIONAL && !r::CallTool::PARAMS_OPTIONAL) };
    // The result type of tools/call decodes every shape the method can answer with.
    let result: <r::CallTool as Request>::Result =
        serde_json::from_str(r#"{"content":[]}"#).unwrap();
    assert!(matches!(result, RequestOutcome::Complete(_)));
    assert_eq!(
        <notifications::Task as Notification>::METHOD,
        "notifications/tasks"
    );
}

#[test]
fn protocol_versions_parse_order_and_era() {
    for v in ProtocolVersion::ALL {
        assert_eq!(v.as_str().parse::<ProtocolVersion>().unwrap(), v);
        assert_eq!(serde_json::to_value(v).unwrap(), json!(v.as_str()));
    }
    assert!(ProtocolVersion::parse("2025-01-01").is_none());
    assert!(matches!(
        "1900-01-01".parse::<ProtocolVersion>(),
        Err(TypesError::UnknownProtocolVersion)
    ));
    assert!(serde_json::from_str::<ProtocolVersion>("\"2099-01-01\"").is_err());
    assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2025_03_26);
    assert_eq!(ProtocolVersion::V2025_11_25.era(), Era::Legacy);
    assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Modern);
    assert_eq!(LATEST_LEGACY, ProtocolVersion::V2025_11_25);
    assert_eq!(LATEST, ProtocolVersion::V2026_07_28);
    let discovered: DiscoverResult = serde_json::from_str(
        r#"{"supportedVersions":["2099-01-01","2026-07-28","2025-11-25"],"capabilities":{},"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#,
    )
    .unwrap();
    assert_eq!(
        discovered.known_versions(),
        vec![ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28]
    );
    assert_eq!(discovered.server_info().unwrap().unwrap().name, "s");
    assert_eq!(
        discovered.cache_hint().unwrap().scope,
        Some(CacheScope::Private)
    );
}

/// `content` decodes arrays of any length (into a vector that starts small,
/// see `open_struct`'s `list` kind) and refuses anything else.
#[test]
fn tool_result_content_of_any_length_and_only_arrays() {
    for n in [0usize, 1, 2, 5, 70] {
        let blocks: Vec<_> = (0..n)
            .map(|i| serde_json::json!({"type": "text", "text": format!("b{i}")}))
            .collect();
        let result: CallToolResult =
            serde_json::from_value(serde_json::json!({"content": blocks})).unwrap();
        assert_eq!(result.content.len(), n);
        for (i, block) in result.content.iter().enumerate() {
            assert_eq!(block.as_text(), Some(format!("b{i}").as_str()));
        }
        if n == 1 {
            assert_eq!(result.content.capacity(), 1, "one block, one slot");
        }
    }
    for bad in [
        serde_json::json!({"content": {"type": "text", "text": "x"}}),
        serde_json::json!({"content": "x"}),
        serde_json::json!({}),
    ] {
        assert!(serde_json::from_value::<CallToolResult>(bad).is_err());
    }
}
