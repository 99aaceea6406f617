//! What the types keep: unknown members, unknown kinds, capability keys, `_meta`,
//! schema bytes, numbers, `null` where it means something.

use mcp_types::*;
use serde_json::{Value, json};

fn reencode<T: serde::de::DeserializeOwned + serde::Serialize>(text: &str) -> (T, Value) {
    let typed: T = serde_json::from_str(text).unwrap();
    let again = serde_json::to_value(&typed).unwrap();
    (typed, again)
}

#[test]
fn unknown_content_kinds_round_trip_unchanged() {
    let text = r#"{"type":"hologram","frames":[1,2,{"deep":null}],"text":7,"_meta":{"k":"v"}}"#;
    let (block, again): (ContentBlock, _) = reencode(text);
    assert!(matches!(&block, ContentBlock::Unknown(_)));
    assert_eq!(block.kind(), "hologram");
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());

    // `type` not first: buffered, still unknown and unchanged.
    let text = r#"{"frames":[],"type":"hologram"}"#;
    let (block, again): (ContentBlock, _) = reencode(text);
    assert!(matches!(block, ContentBlock::Unknown(_)));
    assert_eq!(again, json!({ "frames": [], "type": "hologram" }));

    // No or non-string `type`: unknown, kept.
    for text in [
        r#"{"text":"no type"}"#,
        r#"{"type":3,"x":1}"#,
        r#"{"x":1,"type":null}"#,
        "{}",
    ] {
        let (block, again): (ContentBlock, _) = reencode(text);
        assert!(matches!(block, ContentBlock::Unknown(_)), "{text}");
        assert_eq!(
            again,
            serde_json::from_str::<Value>(text).unwrap(),
            "{text}"
        );
    }

    // Inside a tool result, next to known kinds.
    let text = r#"{"content":[{"type":"text","text":"a"},{"type":"x-widget","spec":{"w":1}}],"isError":false}"#;
    let (result, again): (CallToolResult, _) = reencode(text);
    assert!(matches!(result.content[0], ContentBlock::Text(_)));
    assert!(matches!(result.content[1], ContentBlock::Unknown(_)));
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());
}

#[test]
fn known_kinds_decode_whatever_the_member_order() {
    let first = r#"{"type":"text","text":"hi","annotations":{"priority":1}}"#;
    let later = r#"{"annotations":{"priority":1},"text":"hi","type":"text"}"#;
    let a: ContentBlock = serde_json::from_str(first).unwrap();
    let b: ContentBlock = serde_json::from_str(later).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.as_text(), Some("hi"));
    // A known kind with a wrong member shape is an error, not silently unknown.
    assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"text","text":5}"#).is_err());
    assert!(serde_json::from_str::<ContentBlock>(r#"{"text":5,"type":"text"}"#).is_err());
    // The tag of a kind's own struct is checked.
    assert!(serde_json::from_str::<TextContent>(r#"{"type":"image","text":"x"}"#).is_err());
}

#[test]
fn unknown_members_are_kept_on_every_level() {
    let text = r#"{
        "tools": [{
            "name": "t", "inputSchema": {"type":"object"}, "x-vendor": {"a": [1, 2]},
            "annotations": {"readOnlyHint": true, "x-hint": "h"},
            "icons": [{"src": "data:,", "x-icon": 1}]
        }],
        "nextCursor": "n", "x-page": 3, "_meta": {"vendor.example/trace": "abc"}
    }"#;
    let (list, again): (ListToolsResult, _) = reencode(text);
    assert_eq!(list.tools[0].extra["x-vendor"], json!({ "a": [1, 2] }));
    assert_eq!(list.extra["x-page"], json!(3));
    assert_eq!(
        list.meta.as_ref().unwrap().get("vendor.example/trace"),
        Some(&json!("abc"))
    );
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());
}

#[test]
fn unknown_capability_keys_are_preserved() {
    let text = r#"{
        "tools": {"listChanged": true, "pagination": {"max": 50}},
        "resources": {"subscribe": true, "x-templates": true},
        "futureFeature": {"enabled": true},
        "experimental": {"com.example/x": {"v": 1}},
        "extensions": {"io.modelcontextprotocol/tasks": {}, "com.example/ext": {"mode": "fast"}}
    }"#;
    let (caps, again): (ServerCapabilities, _) = reencode(text);
    assert_eq!(caps.tools.as_ref().unwrap().list_changed, Some(true));
    assert_eq!(
        caps.tools.as_ref().unwrap().extra["pagination"],
        json!({ "max": 50 })
    );
    assert_eq!(caps.extra["futureFeature"], json!({ "enabled": true }));
    assert!(caps.has_extension(TASKS_EXTENSION));
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());

    let text = r#"{"roots":{"listChanged":true,"x":1},"sampling":{"tools":{},"x":2},"elicitation":{"form":{"x":3}},"newThing":{}}"#;
    let (caps, again): (ClientCapabilities, _) = reencode(text);
    assert_eq!(caps.extra["newThing"], json!({}));
    assert_eq!(
        caps.elicitation.as_ref().unwrap().form.as_ref().unwrap()["x"],
        json!(3)
    );
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());
}

#[test]
fn input_schema_is_kept_byte_for_byte() {
    let schema = r#"{"type":"object","properties":{"z":{"type":"number","minimum":1.0,"maximum":1e3},"a":{"$ref":"https://example.com/never-fetched.json"}},"required":["z"]}"#;
    let text =
        format!(r#"{{"name":"t","inputSchema":{schema},"outputSchema":{{"b":1.50,"a":2}}}}"#);
    let tool: Tool = serde_json::from_str(&text).unwrap();
    assert_eq!(tool.input_schema.as_str(), schema);
    let out = serde_json::to_string(&tool).unwrap();
    assert!(out.contains(schema), "schema bytes changed: {out}");
    assert!(out.contains(r#""outputSchema":{"b":1.50,"a":2}"#), "{out}");
    // Through a list, and through `from_value` too (values do not keep bytes, but the
    // schema still decodes).
    let list_text = format!(r#"{{"tools":[{text}]}}"#);
    let list: ListToolsResult = serde_json::from_str(&list_text).unwrap();
    assert!(serde_json::to_string(&list).unwrap().contains(schema));
    let via_value: Tool = serde_json::from_value(serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(
        via_value.input_schema.to_value().unwrap(),
        serde_json::from_str::<Value>(schema).unwrap()
    );
    assert_eq!(
        tool.input_schema.to_value().unwrap()["properties"]["z"]["maximum"],
        json!(1000.0)
    );
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct WeatherArgs {
    /// City name.
    location: String,
    days: Option<u8>,
}

#[test]
fn input_schemas_generate_from_rust_types() {
    let schema = Tool::input_schema_from::<WeatherArgs>().unwrap();
    let value = schema.to_value().unwrap();
    assert_eq!(value["type"], "object");
    assert_eq!(value["properties"]["location"]["type"], "string");
    assert_eq!(value["required"], json!(["location"]));
    assert!(matches!(
        JsonSchemaDoc::for_type::<String>(),
        Err(TypesError::SchemaNotObject)
    ));
    assert_eq!(JsonSchemaDoc::default().as_str(), r#"{"type":"object"}"#);
}

#[test]
fn numbers_are_kept_as_sent() {
    let text = r#"{"progressToken":"t","progress":50,"total":100.0,"message":"m"}"#;
    let (p, again): (ProgressParams, _) = reencode(text);
    assert_eq!(p.progress_f64(), Some(50.0));
    assert_eq!(serde_json::to_string(&p).unwrap(), text);
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());
    let (_, again): (ModelPreferences, _) = reencode(r#"{"costPriority":1,"speedPriority":0.25}"#);
    assert_eq!(again, json!({ "costPriority": 1, "speedPriority": 0.25 }));
}

#[test]
fn meaningful_nulls_survive_and_plain_nulls_drop() {
    let text = r#"{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":null,"statusMessage":null}"#;
    let (task, again): (Task, _) = reencode(text);
    assert_eq!(task.ttl, Some(Nullable::Null));
    assert_eq!(task.ttl_millis(), Some(None));
    assert_eq!(task.status_message, None);
    assert_eq!(again["ttl"], Value::Null);
    assert!(
        again.get("statusMessage").is_none(),
        "a null optional member reads as absent"
    );
}

#[test]
fn open_enums_keep_unknown_values() {
    let (task, again): (Task, _) =
        reencode(r#"{"taskId":"t","status":"paused","createdAt":"a","lastUpdatedAt":"b"}"#);
    assert_eq!(task.status, TaskStatus::Unknown("paused".into()));
    assert!(!task.status.is_terminal());
    assert_eq!(again["status"], "paused");
    let (r, _): (CreateMessageResult, _) = reencode(
        r#"{"role":"assistant","content":{"type":"text","text":"x"},"model":"m","stopReason":"refusal"}"#,
    );
    assert_eq!(
        r.stop_reason.as_ref().map(StopReason::as_str),
        Some("refusal")
    );
}

#[test]
fn meta_reserved_keys_have_typed_accessors() {
    let caps = ClientCapabilities {
        roots: Some(RootsCapability::default()),
        ..Default::default()
    };
    let info = Implementation::new("c", "1");
    let mut meta =
        Meta::for_modern_request(ProtocolVersion::V2026_07_28, &caps, Some(&info)).unwrap();
    meta.set_log_level(LoggingLevel::Debug);
    meta.set_progress_token(&ProgressToken::String("p".into()));
    meta.set_subscription_id(&RequestId::Number(9)).unwrap();
    meta.set_related_task_id("task-1");
    assert_eq!(meta.protocol_version(), Some("2026-07-28"));
    assert_eq!(meta.client_capabilities().unwrap(), Some(caps));
    assert_eq!(meta.client_info().unwrap(), Some(info));
    assert_eq!(meta.log_level().unwrap(), Some(LoggingLevel::Debug));
    assert_eq!(
        meta.progress_token().unwrap(),
        Some(ProgressToken::String("p".into()))
    );
    assert_eq!(meta.subscription_id().unwrap(), Some(RequestId::Number(9)));
    assert_eq!(meta.related_task_id(), Some("task-1"));
    let v = serde_json::to_value(&meta).unwrap();
    assert_eq!(v["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(
        v["io.modelcontextprotocol/clientCapabilities"],
        json!({ "roots": {} })
    );
    // A wrong shape is an error, not a silent `None`.
    meta.insert(meta_keys::LOG_LEVEL, json!(5));
    assert!(meta.log_level().is_err());
}

#[test]
fn resource_contents_are_told_apart_by_member() {
    let (c, _): (ResourceContents, _) = reencode(r#"{"uri":"file:///a","text":"hello"}"#);
    assert!(matches!(c, ResourceContents::Text(_)));
    let (c, _): (ResourceContents, _) =
        reencode(r#"{"uri":"file:///a","blob":"aGk=","mimeType":"x/y"}"#);
    assert!(matches!(c, ResourceContents::Blob(_)));
    assert_eq!(c.mime_type(), Some("x/y"));
    assert!(serde_json::from_str::<ResourceContents>(r#"{"uri":"file:///a"}"#).is_err());
}

#[test]
fn elicitation_forms_are_classified() {
    let text = r#"{"message":"m","requestedSchema":{"type":"object","properties":{
        "z_first":{"type":"string","format":"email","minLength":3},
        "n":{"type":"integer","minimum":0,"default":3},
        "b":{"type":"boolean","default":true},
        "legacy":{"type":"string","enum":["a","b"],"enumNames":["A","B"]},
        "single":{"type":"string","enum":["a","b"],"default":"a"},
        "titled":{"type":"string","oneOf":[{"const":"a","title":"A"}]},
        "multi":{"type":"array","items":{"type":"string","enum":["a"]},"minItems":1},
        "tmulti":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}},
        "odd":{"type":"object"}
    },"required":["n"]}}"#;
    let (params, again): (ElicitParams, _) = reencode(text);
    let ElicitParams::Form(form) = params else {
        panic!("form mode")
    };
    let props = &form.requested_schema.properties;
    assert_eq!(props.0[0].0, "z_first", "field order is kept");
    assert!(
        matches!(props.get("z_first"), Some(PrimitiveSchema::String(s)) if s.format == Some(StringFormat::Email))
    );
    assert!(
        matches!(props.get("n"), Some(PrimitiveSchema::Number(n)) if n.kind == NumberType::Integer)
    );
    assert!(matches!(props.get("b"), Some(PrimitiveSchema::Boolean(_))));
    assert!(matches!(
        props.get("legacy"),
        Some(PrimitiveSchema::LegacyTitledEnum(_))
    ));
    assert!(matches!(
        props.get("single"),
        Some(PrimitiveSchema::UntitledSingleSelect(_))
    ));
    assert!(matches!(
        props.get("titled"),
        Some(PrimitiveSchema::TitledSingleSelect(_))
    ));
    assert!(matches!(
        props.get("multi"),
        Some(PrimitiveSchema::UntitledMultiSelect(_))
    ));
    assert!(matches!(
        props.get("tmulti"),
        Some(PrimitiveSchema::TitledMultiSelect(_))
    ));
    assert!(matches!(
        props.get("odd"),
        Some(PrimitiveSchema::Unknown(_))
    ));
    assert_eq!(again, serde_json::from_str::<Value>(text).unwrap());

    let (params, _): (ElicitParams, _) =
        reencode(r#"{"mode":"url","message":"m","url":"https://x","elicitationId":"e1"}"#);
    assert!(
        matches!(params, ElicitParams::Url(ref u) if u.elicitation_id.as_deref() == Some("e1"))
    );
    let (params, _): (ElicitParams, _) = reencode(r#"{"mode":"telepathy","message":"m"}"#);
    assert!(matches!(params, ElicitParams::Unknown(_)));
    assert_eq!(params.message(), Some("m"));
}

#[test]
fn host_facing_types_have_json_schemas_with_wire_names() {
    let schema = serde_json::to_value(schemars::schema_for!(Annotations)).unwrap();
    let props = &schema["properties"];
    assert!(
        props.get("lastModified").is_some() && props.get("last_modified").is_none(),
        "{schema}"
    );
    assert!(
        schema.get("required").is_none(),
        "every member is optional: {schema}"
    );
    let schema = serde_json::to_value(schemars::schema_for!(Root)).unwrap();
    assert!(schema["properties"].get("_meta").is_some(), "{schema}");
    assert_eq!(schema["required"], json!(["uri"]));
    let schema = serde_json::to_value(schemars::schema_for!(LoggingLevel)).unwrap();
    assert!(schema.to_string().contains("emergency"), "{schema}");
    let schema = serde_json::to_value(schemars::schema_for!(Role)).unwrap();
    assert!(schema.to_string().contains("assistant"), "{schema}");
    let schema = serde_json::to_value(schemars::schema_for!(CacheScope)).unwrap();
    assert_eq!(schema["enum"], json!(["private", "public"]));
}

#[test]
fn common_results_have_one_line_constructors_that_serialise_as_the_spec_says() {
    let answer = serde_json::to_value(CreateMessageResult::text("my-model", "Paris")).unwrap();
    assert_eq!(
        answer,
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "my-model"})
    );
    let form = ElicitResult::accept([
        ("name", ElicitValue::from("Ada")),
        ("age", 36.into()),
        ("admin", false.into()),
    ]);
    assert_eq!(
        serde_json::to_value(form).unwrap(),
        json!({"action": "accept", "content": {"admin": false, "age": 36, "name": "Ada"}})
    );
    assert_eq!(
        serde_json::to_value(ElicitResult::decline()).unwrap(),
        json!({"action": "decline"})
    );
    assert_eq!(
        serde_json::to_value(ElicitResult::cancel()).unwrap(),
        json!({"action": "cancel"})
    );
}
