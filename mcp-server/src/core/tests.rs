//! Transcript tests of the core: literal frames in, frames and events out,
//! simulated time. No runtime, no clock, no IO.

use std::time::{Duration, Instant};

use mcp_types::notifications::{LoggingMessage, ResourceUpdated, ToolListChanged};
use mcp_types::requests::{CreateMessage, ListRoots};
use mcp_types::{
    CreateMessageParams, NotificationParams, RequestParams, ResourcesCapability, ToolsCapability,
};
use serde_json::{Value, json};

use super::*;
use crate::{ServerConfig, ServerLimits};

const MODERN: &str = "2026-07-28";

fn caps() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn core_with(limits: ServerLimits) -> ServerCore {
    ServerCore::new(
        ServerConfig::new("test-server", "1.0").limits(limits),
        caps(),
    )
}

fn core() -> ServerCore {
    core_with(ServerLimits::default())
}

fn feed(core: &mut ServerCore, frame: Value) {
    core.handle_frame(&serde_json::to_vec(&frame).unwrap());
}

fn sent(core: &mut ServerCore) -> Vec<Value> {
    std::iter::from_fn(|| core.poll_transmit())
        .map(|f| serde_json::from_slice(&f).unwrap())
        .collect()
}

fn events(core: &mut ServerCore) -> Vec<Event> {
    std::iter::from_fn(|| core.poll_event()).collect()
}

fn requests(core: &mut ServerCore) -> Vec<IncomingRequest> {
    events(core)
        .into_iter()
        .filter_map(|e| match e {
            Event::Request(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn only_event(core: &mut ServerCore) -> Event {
    let mut all = events(core);
    assert_eq!(all.len(), 1, "{all:#?}");
    all.remove(0)
}

fn only(frames: Vec<Value>) -> Value {
    assert_eq!(frames.len(), 1, "{frames:#?}");
    frames.into_iter().next().unwrap()
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A 2026-07-28 request: `params` with the required `_meta` fields added.
fn modern(id: i64, method: &str, mut params: Value) -> Value {
    let mut meta = modern_meta();
    if let Some(Value::Object(extra)) = params.get("_meta") {
        for (k, v) in extra {
            meta[k] = v.clone();
        }
    }
    params["_meta"] = meta;
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `initialize` offering `version` and `notifications/initialized`.
fn initialize(core: &mut ServerCore, version: &str, capabilities: Value) -> Value {
    feed(
        core,
        request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities,
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
    );
    let answer = only(sent(core));
    feed(
        core,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    answer
}

#[test]
fn initialize_echoes_a_version_it_serves_and_offers_its_newest_legacy_one_otherwise() {
    for (offered, chosen) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
        // Not a legacy version: `initialize` negotiates legacy ones only.
        (MODERN, "2025-11-25"),
    ] {
        let mut core = core();
        let answer = initialize(&mut core, offered, json!({}));
        assert_eq!(answer["id"], 0);
        assert_eq!(answer["result"]["protocolVersion"], chosen, "{offered}");
        assert_eq!(answer["result"]["serverInfo"]["name"], "test-server");
        assert_eq!(
            answer["result"]["capabilities"]["tools"]["listChanged"],
            true
        );
        assert!(matches!(
            events(&mut core).as_slice(),
            [Event::Initialized { .. }]
        ));
    }
}

#[test]
fn a_server_without_legacy_versions_refuses_initialize_naming_what_it_speaks() {
    let config = ServerConfig::new("m", "1").versions([ProtocolVersion::V2026_07_28]);
    let mut core = ServerCore::new(config, caps());
    let answer = initialize(&mut core, "2025-11-25", json!({}));
    assert_eq!(
        answer["error"]["code"],
        error_codes::UNSUPPORTED_PROTOCOL_VERSION
    );
    assert_eq!(answer["error"]["data"]["supported"], json!([MODERN]));
    assert!(core.legacy_session().is_none());
}

#[test]
fn before_initialize_only_ping_is_served_and_a_second_initialize_is_refused() {
    let mut core = core();
    feed(&mut core, request(1, "tools/list", json!({})));
    let refusal = only(sent(&mut core));
    assert_eq!(refusal["id"], 1);
    assert_eq!(refusal["error"]["code"], error_codes::INVALID_REQUEST);
    feed(&mut core, request(2, "ping", json!({})));
    assert_eq!(
        only(sent(&mut core)),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    assert!(requests(&mut core).is_empty());

    initialize(&mut core, "2025-06-18", json!({}));
    feed(
        &mut core,
        request(
            3,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
    );
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INVALID_REQUEST
    );
    feed(&mut core, request(4, "tools/list", json!({})));
    let [request] = requests(&mut core).try_into().unwrap();
    assert_eq!(request.method, "tools/list");
    assert_eq!(
        request.client.protocol_version,
        ProtocolVersion::V2025_06_18
    );
}

#[test]
fn a_modern_request_needs_its_version_and_capabilities_in_meta() {
    let mut core = core();
    // Version without capabilities: malformed.
    feed(
        &mut core,
        request(
            1,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
        ),
    );
    let answer = only(sent(&mut core));
    assert_eq!(answer["error"]["code"], error_codes::INVALID_PARAMS);
    assert_eq!(
        answer["error"]["data"]["missing"],
        json!(["io.modelcontextprotocol/clientCapabilities"])
    );
    // `server/discover` without `_meta` at all.
    feed(&mut core, request(2, "server/discover", json!({})));
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INVALID_PARAMS
    );
    // A version we do not serve statelessly, legacy ones included.
    for version in ["1900-01-01", "2025-11-25"] {
        let mut meta = modern_meta();
        meta["io.modelcontextprotocol/protocolVersion"] = json!(version);
        feed(&mut core, request(3, "tools/list", json!({"_meta": meta})));
        let answer = only(sent(&mut core));
        assert_eq!(
            answer["error"]["code"],
            error_codes::UNSUPPORTED_PROTOCOL_VERSION
        );
        assert_eq!(answer["error"]["data"]["requested"], version);
        assert_eq!(
            answer["error"]["data"]["supported"],
            json!([
                MODERN,
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ])
        );
    }
    // A log level that does not exist.
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("loud");
    feed(&mut core, request(4, "tools/list", json!({"_meta": meta})));
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INVALID_PARAMS
    );
    assert!(requests(&mut core).is_empty());
}

#[test]
fn discover_answers_versions_capabilities_identity_and_cache_hints() {
    let config = ServerConfig::new("test-server", "1.0")
        .instructions("use it")
        .cache(60_000, mcp_types::CacheScope::Public);
    let mut core = ServerCore::new(config, caps());
    feed(&mut core, modern(1, "server/discover", json!({})));
    let result = only(sent(&mut core))["result"].clone();
    assert_eq!(
        result["supportedVersions"],
        json!([
            MODERN,
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["instructions"], "use it");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    // Stateless: nothing was opened.
    assert!(core.legacy_session().is_none());
}

#[test]
fn a_modern_result_gets_its_result_type_identity_and_cache_hints_unless_set() {
    let mut core = core();
    feed(&mut core, modern(1, "tools/list", json!({})));
    feed(&mut core, modern(2, "tools/call", json!({"name": "t"})));
    feed(&mut core, modern(3, "tools/list", json!({})));
    let [list, call, list2] = requests(&mut core).try_into().unwrap();
    assert_eq!(list.client.protocol_version, ProtocolVersion::V2026_07_28);
    core.respond(&list.id, Ok(json!({"tools": []}))).unwrap();
    core.respond(&call.id, Ok(json!({"content": []}))).unwrap();
    core.respond(
        &list2.id,
        Ok(json!({"tools": [], "ttlMs": 5, "cacheScope": "public",
                  "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x", "version": "2"}}})),
    )
    .unwrap();
    let [list, call, list2] = sent(&mut core).try_into().unwrap();
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["ttlMs"], 0);
    assert_eq!(list["result"]["cacheScope"], "private");
    assert_eq!(
        list["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    // Not cacheable: no hints.
    assert_eq!(call["result"]["resultType"], "complete");
    assert!(call["result"].get("ttlMs").is_none());
    // What the application set is kept.
    assert_eq!(list2["result"]["ttlMs"], 5);
    assert_eq!(list2["result"]["cacheScope"], "public");
    assert_eq!(
        list2["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "x"
    );
}

#[test]
fn a_legacy_result_is_sent_as_the_application_wrote_it() {
    let mut core = core();
    initialize(&mut core, "2025-11-25", json!({}));
    events(&mut core);
    feed(&mut core, request(1, "tools/list", json!({})));
    let [list] = requests(&mut core).try_into().unwrap();
    core.respond(&list.id, Ok(json!({"tools": []}))).unwrap();
    assert_eq!(
        only(sent(&mut core)),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    );
}

#[test]
fn unknown_methods_and_methods_of_undeclared_features_are_not_found() {
    let mut core = core();
    initialize(&mut core, "2025-11-25", json!({}));
    for method in [
        "vendor/thing",
        "resources/list",
        "prompts/get",
        "logging/setLevel",
    ] {
        feed(&mut core, request(1, method, json!({})));
        let answer = only(sent(&mut core));
        assert_eq!(answer["id"], 1);
        assert_eq!(
            answer["error"]["code"],
            error_codes::METHOD_NOT_FOUND,
            "{method}"
        );
    }
    // Legacy-only methods do not exist in 2026-07-28, and `initialize` with
    // a modern `_meta` is a modern request.
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        feed(&mut core, modern(2, method, json!({})));
        assert_eq!(
            only(sent(&mut core))["error"]["code"],
            error_codes::METHOD_NOT_FOUND,
            "{method}"
        );
    }
    assert!(requests(&mut core).is_empty());
}

#[test]
fn malformed_frames_get_the_json_rpc_answer_and_are_reported() {
    let mut core = core();
    core.handle_frame(b"{\"jsonrpc\":\"2.0\",\"id\":1,");
    let answer = only(sent(&mut core));
    assert_eq!(answer["error"]["code"], error_codes::PARSE_ERROR);
    assert!(answer.get("id").is_none());

    core.handle_frame(b"42");
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INVALID_REQUEST
    );
    core.handle_frame(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INVALID_REQUEST
    );
    // A request with the wrong version tag is refused with its id.
    core.handle_frame(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
    let answer = only(sent(&mut core));
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], error_codes::INVALID_REQUEST);
    // A null id cannot be answered by id.
    core.handle_frame(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
    let answer = only(sent(&mut core));
    assert!(answer.get("id").is_none());
    // Something response-shaped is not answered (no ping-pong of errors).
    core.handle_frame(br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#);
    core.handle_frame(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    assert!(sent(&mut core).is_empty());
    let violations: Vec<Violation> = events(&mut core)
        .into_iter()
        .filter_map(|e| match e {
            Event::Violation(v) => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(
        violations,
        [
            Violation::ParseError,
            Violation::InvalidMessage,
            Violation::Batch,
            Violation::InvalidMessage,
            Violation::InvalidMessage,
            Violation::InvalidMessage,
            Violation::UnknownResponse,
        ]
    );
    assert_eq!(core.stats().violations, 7);
}

#[test]
fn params_that_do_not_decode_are_invalid_params() {
    let mut core = core();
    feed(&mut core, modern(1, "tools/call", json!({"name": 5})));
    let [call] = requests(&mut core).try_into().unwrap();
    let error = call.params::<mcp_types::requests::CallTool>().unwrap_err();
    assert_eq!(error.code, error_codes::INVALID_PARAMS);
    // `_meta` that is not an object is refused by the core.
    feed(&mut core, request(2, "tools/list", json!({"_meta": 3})));
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INVALID_PARAMS
    );
}

#[test]
fn one_request_over_the_in_flight_bound_is_refused_at_once() {
    let mut core = core_with(ServerLimits::default().max_in_flight(2));
    for id in 1..=3 {
        feed(&mut core, modern(id, "tools/call", json!({"name": "slow"})));
    }
    let refusal = only(sent(&mut core));
    assert_eq!(refusal["id"], 3);
    assert_eq!(refusal["error"]["code"], error_codes::INTERNAL_ERROR);
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 2")
    );
    let held = requests(&mut core);
    assert_eq!(held.len(), 2);
    assert_eq!(core.stats().refused, 1);
    // An answer frees a slot.
    core.respond(&held[0].id, Ok(json!({"content": []})))
        .unwrap();
    feed(&mut core, modern(4, "tools/call", json!({"name": "slow"})));
    assert_eq!(sent(&mut core).len(), 1);
    assert_eq!(requests(&mut core).len(), 1);
}

#[test]
fn a_request_cancelled_before_the_application_took_it_simply_never_was() {
    let mut core = core();
    feed(&mut core, modern(1, "tools/call", json!({"name": "t"})));
    feed(
        &mut core,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1, "reason": "no"}}),
    );
    assert!(events(&mut core).is_empty());
    assert_eq!(core.in_flight(), 0);
    assert!(matches!(
        core.respond(&RequestId::Number(1), Ok(json!({}))),
        Err(ServerError::NotInFlight { .. })
    ));
    assert!(sent(&mut core).is_empty());
}

#[test]
fn a_cancelled_request_keeps_its_slot_until_answered_and_its_answer_is_swallowed() {
    let mut core = core_with(ServerLimits::default().max_in_flight(1));
    feed(
        &mut core,
        modern(
            1,
            "tools/call",
            json!({"name": "t", "_meta": {"progressToken": "p"}}),
        ),
    );
    let [call] = requests(&mut core).try_into().unwrap();
    feed(
        &mut core,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1, "reason": "user"}}),
    );
    let Event::Cancelled { id, reason } = only_event(&mut core) else {
        panic!("expected a cancellation");
    };
    assert_eq!(id, call.id);
    assert_eq!(reason.as_deref(), Some("user"));
    // No progress after a cancellation, and the slot is still taken.
    assert!(core.progress(&call.id, 1.0, None, None).is_err());
    feed(&mut core, modern(2, "tools/call", json!({"name": "t"})));
    assert_eq!(
        only(sent(&mut core))["error"]["code"],
        error_codes::INTERNAL_ERROR
    );
    // The late answer is swallowed and frees the slot.
    core.respond(&call.id, Ok(json!({"content": []}))).unwrap();
    assert!(sent(&mut core).is_empty());
    assert_eq!(core.in_flight(), 0);
    assert_eq!(core.stats().cancelled, 1);
    // A second cancellation, or one for an unknown id, is ignored.
    feed(
        &mut core,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    assert!(events(&mut core).is_empty());
}

#[test]
fn progress_goes_out_only_for_a_token_only_increasing_and_only_until_the_answer() {
    let mut core = core();
    feed(
        &mut core,
        modern(
            1,
            "tools/call",
            json!({"name": "t", "_meta": {"progressToken": "tok"}}),
        ),
    );
    feed(&mut core, modern(2, "tools/call", json!({"name": "t"})));
    let [with, without] = requests(&mut core).try_into().unwrap();
    assert_eq!(with.progress_token, Some(ProgressToken::from("tok")));
    // The progress token sits next to the modern fields in `_meta`.
    assert_eq!(with.client.protocol_version, ProtocolVersion::V2026_07_28);
    core.progress(&with.id, 1.0, Some(4.0), Some("one".into()))
        .unwrap();
    core.progress(&with.id, 2.5, None, None).unwrap();
    assert!(matches!(
        core.progress(&with.id, 2.5, None, None),
        Err(ServerError::ProgressNotIncreasing { .. })
    ));
    assert!(matches!(
        core.progress(&with.id, f64::NAN, None, None),
        Err(ServerError::ProgressNotIncreasing { .. })
    ));
    assert!(matches!(
        core.progress(&without.id, 1.0, None, None),
        Err(ServerError::NoProgressToken { .. })
    ));
    let frames = sent(&mut core);
    assert_eq!(
        frames,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "tok", "progress": 1, "total": 4, "message": "one"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "tok", "progress": 2.5}}),
        ]
    );
    core.respond(&with.id, Ok(json!({"content": []}))).unwrap();
    assert!(matches!(
        core.progress(&with.id, 3.0, None, None),
        Err(ServerError::NotInFlight { .. })
    ));
}

#[test]
fn an_oversized_request_is_answered_by_its_id_when_it_can_be_read() {
    let mut core = core_with(ServerLimits::default().max_frame(1024));
    core.handle_oversized(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"na"#);
    let answer = only(sent(&mut core));
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], error_codes::INVALID_REQUEST);
    assert_eq!(answer["error"]["data"]["limit"], 1024);
    // Not sure which message it was: nothing is answered.
    core.handle_oversized(br#"{"params":{"huge":"#);
    assert!(sent(&mut core).is_empty());
    let violations = events(&mut core)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                Event::Violation(Violation::OversizedFrame { limit: 1024 })
            )
        })
        .count();
    assert_eq!(violations, 2);
}

#[test]
fn an_answer_over_the_frame_bound_becomes_an_internal_error() {
    let mut core = core_with(ServerLimits::default().max_frame(200));
    feed(&mut core, modern(1, "tools/call", json!({"name": "t"})));
    let [call] = requests(&mut core).try_into().unwrap();
    let big = json!({"content": [{"type": "text", "text": "x".repeat(500)}]});
    assert!(matches!(
        core.respond(&call.id, Ok(big)),
        Err(ServerError::ResultTooLarge { limit: 200, .. })
    ));
    let answer = only(sent(&mut core));
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], error_codes::INTERNAL_ERROR);
}

#[test]
fn a_duplicate_id_in_flight_is_refused_without_touching_the_first() {
    let mut core = core();
    feed(&mut core, modern(1, "tools/call", json!({"name": "t"})));
    feed(&mut core, modern(1, "tools/call", json!({"name": "t"})));
    let refusal = only(sent(&mut core));
    assert!(refusal.get("id").is_none());
    assert_eq!(refusal["error"]["code"], error_codes::INVALID_REQUEST);
    let [first] = requests(&mut core).try_into().unwrap();
    core.respond(&first.id, Ok(json!({"content": []}))).unwrap();
    assert_eq!(only(sent(&mut core))["id"], 1);
}

#[test]
fn connection_wide_notifications_need_a_legacy_session() {
    let mut core = core();
    assert!(matches!(
        core.notify::<ToolListChanged>(&NotificationParams::default()),
        Err(ServerError::NoSession)
    ));
    initialize(&mut core, "2025-11-25", json!({}));
    core.notify::<ToolListChanged>(&NotificationParams::default())
        .unwrap();
    assert_eq!(
        only(sent(&mut core)),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    );
}

#[test]
fn a_notification_on_a_listen_stream_carries_the_subscription_id() {
    let mut core = ServerCore::new(
        ServerConfig::new("s", "1"),
        ServerCapabilities {
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        },
    );
    feed(
        &mut core,
        modern(5, "subscriptions/listen", json!({"filter": {}})),
    );
    feed(
        &mut core,
        modern(6, "resources/read", json!({"uri": "a://b"})),
    );
    let [listen, read] = requests(&mut core).try_into().unwrap();
    let updated = mcp_types::ResourceUpdatedParams {
        uri: "a://b".into(),
        ..Default::default()
    };
    core.notify_request::<ResourceUpdated>(&listen.id, &updated)
        .unwrap();
    let log = serde_json::from_value(json!({"level": "info", "data": "reading"})).unwrap();
    core.notify_request::<LoggingMessage>(&read.id, &log)
        .unwrap();
    let [on_stream, with_request] = sent(&mut core).try_into().unwrap();
    assert_eq!(
        on_stream["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    assert_eq!(on_stream["params"]["uri"], "a://b");
    assert!(with_request["params"].get("_meta").is_none());
}

#[test]
fn notifications_are_refused_when_the_transmit_queue_is_full_and_answers_never() {
    let mut core = core_with(ServerLimits::default().max_queued_frames(1));
    initialize(&mut core, "2025-11-25", json!({}));
    feed(&mut core, request(1, "tools/list", json!({})));
    let [list] = requests(&mut core).try_into().unwrap();
    core.notify::<ToolListChanged>(&NotificationParams::default())
        .unwrap();
    assert!(matches!(
        core.notify::<ToolListChanged>(&NotificationParams::default()),
        Err(ServerError::TransmitQueueFull { limit: 1 })
    ));
    core.respond(&list.id, Ok(json!({"tools": []}))).unwrap();
    assert_eq!(sent(&mut core).len(), 2);
}

#[test]
fn notifications_beyond_the_event_bound_are_dropped_and_counted() {
    let mut core = core_with(ServerLimits::default().max_pending_events(2));
    for _ in 0..3 {
        feed(
            &mut core,
            json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        );
    }
    assert_eq!(events(&mut core).len(), 2);
    assert_eq!(core.stats().dropped_events, 1);
    // A request finding the queue full is refused, not dropped.
    for id in 1..=3 {
        feed(&mut core, modern(id, "tools/list", json!({})));
    }
    let refusal = only(sent(&mut core));
    assert_eq!(refusal["id"], 3);
}

#[test]
fn server_requests_need_an_initialized_session_and_the_clients_capability() {
    let now = Instant::now();
    let mut core = core();
    let roots = RequestParams::default();
    assert!(matches!(
        core.send_request::<ListRoots>(now, &roots, Duration::from_secs(1)),
        Err(ServerError::NotInitialized)
    ));
    initialize(&mut core, "2025-11-25", json!({"roots": {}}));
    events(&mut core);
    let sampling: CreateMessageParams =
        serde_json::from_value(json!({"messages": [], "maxTokens": 10})).unwrap();
    assert!(matches!(
        core.send_request::<CreateMessage>(now, &sampling, Duration::from_secs(1)),
        Err(ServerError::ClientLacksCapability {
            capability: "sampling"
        })
    ));
    let first = core
        .send_request::<ListRoots>(now, &roots, Duration::from_secs(1))
        .unwrap();
    let second = core
        .send_request::<ListRoots>(now, &roots, Duration::from_secs(5))
        .unwrap();
    let frames = sent(&mut core);
    assert_eq!(frames[0]["method"], "roots/list");
    assert_eq!(frames[0]["id"], serde_json::to_value(&first).unwrap());
    assert_eq!(core.poll_timeout(), Some(now + Duration::from_secs(1)));

    // The first is answered; the second times out.
    feed(
        &mut core,
        json!({"jsonrpc": "2.0", "id": serde_json::to_value(&first).unwrap(),
               "result": {"roots": []}}),
    );
    core.handle_timeout(now + Duration::from_secs(5));
    let answers: Vec<(RequestId, bool)> = events(&mut core)
        .into_iter()
        .filter_map(|e| match e {
            Event::Response { id, answer } => Some((id, answer.is_ok())),
            _ => None,
        })
        .collect();
    assert_eq!(answers, [(first, true), (second.clone(), false)]);
    let cancel = only(sent(&mut core));
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(
        cancel["params"]["requestId"],
        serde_json::to_value(&second).unwrap()
    );
    assert_eq!(core.poll_timeout(), None);
}

#[test]
fn progress_on_a_request_of_ours_comes_as_its_own_increasing_events() {
    let now = Instant::now();
    let mut core = core();
    initialize(&mut core, "2025-11-25", json!({"sampling": {}}));
    events(&mut core);
    // The caller's own token is replaced by the request's id.
    let sampling: CreateMessageParams = serde_json::from_value(json!({
        "messages": [], "maxTokens": 10,
        "_meta": {"progressToken": "the-servers-token", "other": 1}
    }))
    .unwrap();
    let asked = core
        .send_request_with_progress::<CreateMessage>(now, &sampling, Duration::from_secs(9))
        .unwrap();
    let plain = core
        .send_request::<CreateMessage>(now, &sampling, Duration::from_secs(9))
        .unwrap();
    let frames = sent(&mut core);
    let id = serde_json::to_value(&asked).unwrap();
    assert_eq!(frames[0]["params"]["_meta"]["progressToken"], id);
    assert_eq!(frames[0]["params"]["_meta"]["other"], 1);
    assert_eq!(
        frames[1]["params"]["_meta"]["progressToken"], "the-servers-token",
        "a plain request goes as given"
    );
    let progress = |token: Value, value: f64| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": token, "progress": value, "message": "m"}})
    };
    feed(&mut core, progress(id.clone(), 1.0));
    feed(&mut core, progress(id.clone(), 1.0)); // not increasing: dropped
    feed(&mut core, progress(id.clone(), 2.5));
    // For the request that did not ask, or an unknown token: the
    // application's as plain notifications.
    let plain_id = serde_json::to_value(&plain).unwrap();
    feed(&mut core, progress(plain_id, 3.0));
    feed(&mut core, progress(json!("elsewhere"), 3.0));
    let seen: Vec<String> = events(&mut core)
        .into_iter()
        .map(|e| match e {
            Event::Progress { id, params } => {
                assert_eq!(id, asked);
                assert_eq!(params.message.as_deref(), Some("m"));
                format!("progress {}", params.progress_f64().unwrap())
            }
            Event::Notification { method, .. } => method,
            Event::Violation(v) => format!("{v:?}"),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "progress 1",
            "ProgressNotIncreasing",
            "progress 2.5",
            "notifications/progress",
            "notifications/progress"
        ]
    );
    // Once answered, its progress is no longer ours.
    feed(
        &mut core,
        json!({"jsonrpc": "2.0", "id": id.clone(),
               "result": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}}),
    );
    events(&mut core);
    feed(&mut core, progress(id, 9.0));
    assert!(matches!(only_event(&mut core), Event::Notification { .. }));
}

#[test]
fn after_the_connection_closes_nothing_more_is_sent_and_our_requests_fail() {
    let now = Instant::now();
    let mut core = core();
    initialize(&mut core, "2025-11-25", json!({"roots": {}}));
    feed(&mut core, request(1, "tools/list", json!({})));
    let [list] = requests(&mut core).try_into().unwrap();
    let roots = core
        .send_request::<ListRoots>(now, &RequestParams::default(), Duration::from_secs(1))
        .unwrap();
    core.handle_closed();
    assert!(sent(&mut core).is_empty());
    assert!(matches!(
        core.respond(&list.id, Ok(json!({"tools": []}))),
        Err(ServerError::NotInFlight { .. })
    ));
    let Event::Response { id, answer } = only_event(&mut core) else {
        panic!("expected our request to fail");
    };
    assert_eq!(id, roots);
    assert_eq!(answer.unwrap_err(), ResponseError::Closed);
    feed(&mut core, request(2, "ping", json!({})));
    assert!(sent(&mut core).is_empty());
}

#[test]
fn both_eras_share_one_connection() {
    let mut core = core();
    initialize(&mut core, "2025-06-18", json!({}));
    events(&mut core);
    feed(&mut core, request(1, "tools/list", json!({})));
    feed(&mut core, modern(2, "tools/list", json!({})));
    let [legacy, stateless] = requests(&mut core).try_into().unwrap();
    assert_eq!(legacy.client.era(), Era::Legacy);
    assert_eq!(stateless.client.era(), Era::Modern);
    core.respond(&legacy.id, Ok(json!({"tools": []}))).unwrap();
    core.respond(&stateless.id, Ok(json!({"tools": []})))
        .unwrap();
    let [a, b] = sent(&mut core).try_into().unwrap();
    assert!(a["result"].get("resultType").is_none());
    assert_eq!(b["result"]["resultType"], "complete");
}

#[test]
fn a_request_of_ours_given_up_is_cancelled_once_and_its_late_answer_ignored() {
    let now = Instant::now();
    let mut core = core();
    initialize(&mut core, "2025-11-25", json!({"roots": {}}));
    events(&mut core);
    let id = core
        .send_request::<ListRoots>(now, &RequestParams::default(), Duration::from_secs(1))
        .unwrap();
    sent(&mut core);
    assert!(core.cancel_request(&id, Some("not needed".to_owned())));
    let cancel = only(sent(&mut core));
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(
        cancel["params"]["requestId"],
        serde_json::to_value(&id).unwrap()
    );
    assert_eq!(cancel["params"]["reason"], "not needed");
    // Nothing is left to time out, and a second cancellation sends nothing.
    assert_eq!(core.poll_timeout(), None);
    assert!(!core.cancel_request(&id, None));
    assert!(sent(&mut core).is_empty());
    // The late answer is a response to nothing of ours.
    feed(
        &mut core,
        json!({"jsonrpc": "2.0", "id": serde_json::to_value(&id).unwrap(),
               "result": {"roots": []}}),
    );
    assert!(matches!(
        only_event(&mut core),
        Event::Violation(Violation::UnknownResponse)
    ));
}

#[test]
fn a_retry_member_of_the_wrong_type_is_invalid_params_before_the_application() {
    let mut core = core();
    feed(
        &mut core,
        modern(
            1,
            "tools/call",
            json!({"name": "t", "inputResponses": null}),
        ),
    );
    feed(
        &mut core,
        modern(2, "tools/call", json!({"name": "t", "requestState": 5})),
    );
    feed(
        &mut core,
        modern(
            3,
            "tools/call",
            json!({"name": "t", "inputResponses": {"k": {"action": "decline"}}, "requestState": "s"}),
        ),
    );
    // Only the well-formed retry reaches the application.
    assert_eq!(requests(&mut core).len(), 1);
    let [first, second] = sent(&mut core).try_into().unwrap();
    assert_eq!(first["error"]["code"], error_codes::INVALID_PARAMS);
    assert!(
        first["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inputResponses"),
        "{first}"
    );
    assert_eq!(second["error"]["code"], error_codes::INVALID_PARAMS);
}

#[test]
fn the_tasks_capability_is_shown_only_to_a_2025_11_25_client() {
    let with_tasks = || {
        let mut declared = caps();
        declared.tasks = Some(
            serde_json::from_value(json!({"requests": {"tools": {"call": {}}}, "cancel": {}}))
                .unwrap(),
        );
        ServerCore::new(ServerConfig::new("test-server", "1.0"), declared)
    };
    for (version, shown) in [
        ("2025-11-25", true),
        ("2025-06-18", false),
        ("2024-11-05", false),
    ] {
        let mut core = with_tasks();
        let answer = initialize(&mut core, version, json!({}));
        let capabilities = &answer["result"]["capabilities"];
        assert_eq!(
            capabilities["tasks"].is_object(),
            shown,
            "{version}: {answer}"
        );
        assert_eq!(capabilities["tools"]["listChanged"], true, "{version}");
    }
    let mut core = with_tasks();
    feed(&mut core, modern(1, "server/discover", json!({})));
    let result = only(sent(&mut core))["result"].clone();
    assert!(result["capabilities"].get("tasks").is_none(), "{result}");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
}
