//! Property tests: request ids, the JSON-RPC envelope (what `Outgoing*` writes,
//! `Incoming::parse` reads back), and content blocks including unknown kinds and
//! unknown members.

use mcp_types::*;
use proptest::prelude::*;
use serde_json::{Number, Value};

/// Arbitrary JSON (no floats: their text form is not the point here).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = JsonObject> {
    prop::collection::btree_map("[a-zA-Z_/.]{1,8}", json_value(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

/// Members no type knows (prefixed so they never collide with a known one).
fn extra_members() -> impl Strategy<Value = JsonObject> {
    prop::collection::btree_map("x-[a-z]{1,6}", json_value(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        ".{0,16}".prop_map(RequestId::String)
    ]
}

fn meta() -> impl Strategy<Value = Option<Meta>> {
    prop::option::of(json_object().prop_map(Meta))
}

fn annotations() -> impl Strategy<Value = Option<Annotations>> {
    prop::option::of(
        (
            prop::option::of(prop::collection::vec(
                prop_oneof![Just(Role::User), Just(Role::Assistant)],
                0..3,
            )),
            prop::option::of((0u64..=100).prop_map(Number::from)),
            prop::option::of("[0-9T:-]{0,20}"),
            extra_members(),
        )
            .prop_map(|(audience, priority, last_modified, extra)| Annotations {
                audience,
                priority,
                last_modified,
                extra,
            }),
    )
}

fn text_content() -> impl Strategy<Value = TextContent> {
    (".{0,40}", annotations(), meta(), extra_members()).prop_map(
        |(text, annotations, meta, extra)| TextContent {
            text,
            annotations,
            meta,
            extra,
        },
    )
}

fn resource_contents() -> impl Strategy<Value = ResourceContents> {
    prop_oneof![
        (
            "[a-z]{1,8}",
            prop::option::of("[a-z]{1,5}/[a-z]{1,5}"),
            ".{0,20}",
            extra_members()
        )
            .prop_map(|(path, mime_type, text, extra)| ResourceContents::Text(
                TextResourceContents {
                    uri: format!("file:///{path}"),
                    mime_type,
                    text,
                    meta: None,
                    extra,
                }
            )),
        ("[a-z]{1,8}", "[A-Za-z0-9+/]{0,16}", meta()).prop_map(|(path, blob, meta)| {
            ResourceContents::Blob(BlobResourceContents {
                uri: format!("file:///{path}"),
                mime_type: None,
                blob,
                meta,
                extra: JsonObject::new(),
            })
        }),
    ]
}

fn content_block() -> impl Strategy<Value = ContentBlock> {
    prop_oneof![
        text_content().prop_map(ContentBlock::Text),
        (
            "[A-Za-z0-9+/=]{0,24}",
            "image/[a-z]{1,5}",
            annotations(),
            extra_members()
        )
            .prop_map(|(data, mime_type, annotations, extra)| {
                ContentBlock::Image(ImageContent {
                    data,
                    mime_type,
                    annotations,
                    meta: None,
                    extra,
                })
            }),
        ("[A-Za-z0-9+/=]{0,24}", "audio/[a-z]{1,5}", meta()).prop_map(|(data, mime_type, meta)| {
            ContentBlock::Audio(AudioContent {
                data,
                mime_type,
                annotations: None,
                meta,
                extra: JsonObject::new(),
            })
        }),
        (
            "[a-z]{1,8}",
            ".{0,10}",
            prop::option::of(".{0,10}"),
            prop::option::of(any::<u64>()),
            extra_members()
        )
            .prop_map(|(path, name, description, size, extra)| {
                ContentBlock::ResourceLink(ResourceLink {
                    uri: format!("file:///{path}"),
                    name,
                    description,
                    size,
                    extra,
                    ..Default::default()
                })
            }),
        (resource_contents(), annotations(), extra_members()).prop_map(
            |(resource, annotations, extra)| {
                ContentBlock::Resource(EmbeddedResource {
                    resource,
                    annotations,
                    meta: None,
                    extra,
                })
            }
        ),
        ("[a-z0-9_]{1,10}", "[a-z_]{1,10}", json_object(), meta()).prop_map(
            |(id, name, input, meta)| {
                ContentBlock::ToolUse(ToolUseContent {
                    id,
                    name,
                    input,
                    meta,
                    extra: JsonObject::new(),
                })
            }
        ),
        (
            "[a-z0-9_]{1,10}",
            prop::collection::vec(text_content().prop_map(ContentBlock::Text), 0..3),
            prop::option::of(json_value()),
            prop::option::of(any::<bool>()),
            extra_members(),
        )
            .prop_map(
                |(tool_use_id, content, structured_content, is_error, extra)| {
                    ContentBlock::ToolResult(ToolResultContent {
                        tool_use_id,
                        content,
                        // `null` would read back as absent (documented): not a round-trip case.
                        structured_content: structured_content.filter(|v| !v.is_null()),
                        is_error,
                        meta: None,
                        extra,
                    })
                }
            ),
        ("x_kind_[a-z]{1,6}", json_object()).prop_map(|(kind, mut obj)| {
            obj.insert("type".into(), Value::String(kind));
            ContentBlock::Unknown(obj)
        }),
    ]
}

proptest! {
    #[test]
    fn request_ids_round_trip(id in request_id()) {
        let text = serde_json::to_string(&id).unwrap();
        prop_assert_eq!(serde_json::from_str::<RequestId>(&text).unwrap(), id);
    }

    #[test]
    fn requests_and_notifications_round_trip(
        id in request_id(),
        method in "[a-z][a-z/_]{0,20}",
        params in prop::option::of(json_object()),
    ) {
        let frame = serde_json::to_vec(&OutgoingRequest { id: &id, method: &method, params: params.as_ref() }).unwrap();
        match Incoming::parse(&frame).unwrap() {
            Incoming::Request { id: got_id, method: got_method, params: got_params } => {
                prop_assert_eq!(got_id, id);
                prop_assert_eq!(&*got_method, method.as_str());
                let got: Option<JsonObject> = got_params.map(|p| serde_json::from_str(p.get()).unwrap());
                prop_assert_eq!(got, params.clone());
            }
            other => prop_assert!(false, "not a request: {:?}", other),
        }
        let frame = serde_json::to_vec(&OutgoingNotification { method: &method, params: params.as_ref() }).unwrap();
        match Incoming::parse(&frame).unwrap() {
            Incoming::Notification { method: got_method, params: got_params } => {
                prop_assert_eq!(&*got_method, method.as_str());
                let got: Option<JsonObject> = got_params.map(|p| serde_json::from_str(p.get()).unwrap());
                prop_assert_eq!(got, params);
            }
            other => prop_assert!(false, "not a notification: {:?}", other),
        }
    }

    #[test]
    fn responses_and_errors_round_trip(
        id in request_id(),
        result in json_object(),
        error_id in prop::option::of(request_id()),
        code in any::<i64>(),
        message in ".{0,20}",
        data in prop::option::of(json_value()),
    ) {
        let frame = serde_json::to_vec(&OutgoingResult { id: &id, result: &result }).unwrap();
        match Incoming::parse(&frame).unwrap() {
            Incoming::Response { id: got_id, result: raw } => {
                prop_assert_eq!(got_id, id);
                prop_assert_eq!(serde_json::from_str::<JsonObject>(raw.get()).unwrap(), result);
            }
            other => prop_assert!(false, "not a response: {:?}", other),
        }
        // `data: null` reads back as no data.
        let error = ErrorObject { code, message, data: data.filter(|d| !d.is_null()) };
        let frame = serde_json::to_vec(&OutgoingError { id: error_id.as_ref(), error: &error }).unwrap();
        match Incoming::parse(&frame).unwrap() {
            Incoming::Error { id: got_id, error: got } => {
                prop_assert_eq!(got_id, error_id);
                prop_assert_eq!(got, error);
            }
            other => prop_assert!(false, "not an error: {:?}", other),
        }
    }

    #[test]
    fn content_blocks_round_trip(block in content_block()) {
        // As written (`type` first: the single-pass path).
        let text = serde_json::to_string(&block).unwrap();
        let type_first = text.starts_with(r#"{"type":"#);
        prop_assert!(type_first || matches!(block, ContentBlock::Unknown(_)), "type not written first");
        let back: ContentBlock = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&back, &block);
        // With sorted members (`type` usually not first: the buffered path).
        let sorted = serde_json::to_string(&serde_json::to_value(&block).unwrap()).unwrap();
        let back: ContentBlock = serde_json::from_str(&sorted).unwrap();
        prop_assert_eq!(&back, &block);
        // Inside a tool result, as a value.
        let result = CallToolResult { content: vec![block.clone()], ..Default::default() };
        let value = serde_json::to_value(&result).unwrap();
        let back: CallToolResult = serde_json::from_value(value.clone()).unwrap();
        prop_assert_eq!(serde_json::to_value(&back).unwrap(), value);
    }
}
