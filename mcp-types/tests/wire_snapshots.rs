//! insta snapshots of the wire JSON the client sends, per protocol version.
//! Review changes with `cargo insta review`; CI never accepts them automatically.

#[path = "support/messages.rs"]
mod messages;
#[path = "support/server_messages.rs"]
mod server_messages;

use mcp_types::*;
use serde_json::{Value, json};

fn labelled(samples: Vec<messages::Sample>) -> Value {
    Value::Array(
        samples
            .into_iter()
            .map(|s| json!({ "label": s.label, "schema": s.frame_defs, "frame": s.frame }))
            .collect(),
    )
}

#[test]
fn client_messages_2024_11_05() {
    insta::assert_json_snapshot!(labelled(messages::client_messages(
        ProtocolVersion::V2024_11_05
    )));
}

#[test]
fn client_messages_2025_03_26() {
    insta::assert_json_snapshot!(labelled(messages::client_messages(
        ProtocolVersion::V2025_03_26
    )));
}

#[test]
fn client_messages_2025_06_18() {
    insta::assert_json_snapshot!(labelled(messages::client_messages(
        ProtocolVersion::V2025_06_18
    )));
}

#[test]
fn client_messages_2025_11_25() {
    insta::assert_json_snapshot!(labelled(messages::client_messages(
        ProtocolVersion::V2025_11_25
    )));
}

#[test]
fn client_messages_2026_07_28() {
    insta::assert_json_snapshot!(labelled(messages::client_messages(
        ProtocolVersion::V2026_07_28
    )));
}

/// What a server built on these types sends, one snapshot per version.
#[test]
fn server_messages_per_version() {
    for v in ProtocolVersion::ALL {
        let frames: Vec<Value> = server_messages::server_messages(v)
            .into_iter()
            .map(|s| json!({ "label": s.label, "schema": s.frame_defs, "frame": s.frame }))
            .collect();
        insta::with_settings!({ snapshot_suffix => v.as_str() }, {
            insta::assert_json_snapshot!("server_messages", frames);
        });
    }
}

/// Server-side shapes built from the types: a 2026 `input_required` result, a
/// task handle, an error with typed data.
#[test]
fn server_shapes_2026_07_28() {
    let mut elicit = ElicitFormParams {
        mode: Some("form".into()),
        message: "Please provide your GitHub username".into(),
        requested_schema: RequestedSchema {
            properties: SchemaProperties(vec![(
                "name".into(),
                PrimitiveSchema::String(StringSchema {
                    title: Some("Username".into()),
                    ..Default::default()
                }),
            )]),
            required: Some(vec!["name".into()]),
            ..Default::default()
        },
        ..Default::default()
    };
    elicit.meta = None;
    let mut requests = InputRequests::new();
    requests.insert(
        "login".into(),
        InputRequest::from(ServerRequestMessage::Elicit(ElicitParams::Form(elicit))),
    );
    let input_required = InputRequiredResult {
        result_type: Some(ResultType::InputRequired),
        input_requests: Some(requests),
        request_state: Some("state-1".into()),
        ..Default::default()
    };
    let task = CreateTaskResult::Flat(Task {
        task_id: "786512e2".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_at: "2026-07-28T10:30:00Z".into(),
        last_updated_at: "2026-07-28T10:30:00Z".into(),
        ttl: None,
        ttl_ms: Some(Nullable::Value(60_000)),
        poll_interval: None,
        poll_interval_ms: Some(5_000),
        input_requests: None,
        result: None,
        error: None,
        result_type: Some(ResultType::Task),
        meta: None,
        extra: JsonObject::new(),
    });
    let mut error = ErrorObject::new(
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    );
    error.data = Some(
        serde_json::to_value(UnsupportedProtocolVersionData {
            requested: "1900-01-01".into(),
            supported: vec!["2026-07-28".into(), "2025-11-25".into()],
        })
        .expect("encodes"),
    );
    let id = RequestId::Number(1);
    let frames = json!([
        serde_json::to_value(OutgoingResult {
            id: &id,
            result: &input_required
        })
        .expect("encodes"),
        serde_json::to_value(OutgoingResult {
            id: &id,
            result: &task
        })
        .expect("encodes"),
        serde_json::to_value(OutgoingError {
            id: Some(&id),
            error: &error
        })
        .expect("encodes"),
        serde_json::to_value(OutgoingError {
            id: None,
            error: &ErrorObject::new(error_codes::PARSE_ERROR, "Parse error")
        })
        .expect("encodes"),
    ]);
    insta::assert_json_snapshot!(frames);
}
