//! What the client puts on the wire for each feature: every frame of a
//! scripted conversation is validated against the official schema of the
//! negotiated version and snapshotted (ids redacted).

#[path = "support/common.rs"]
mod common;
#[path = "../../mcp-types/tests/support/spec.rs"]
mod spec;

use std::collections::BTreeMap;

use common::*;
use mcp_session::{ClientHandlers, Negotiation, Roots, SessionConfig};
use mcp_testkit::{
    Behavior, CompletionSpec, InputRequest, InputSpec, PromptSpec, ResourceSpec, Script,
};
use mcp_types::{CompletionReference, LoggingLevel, PromptReference, Root, SubscriptionFilter};
use serde_json::{Value, json};

fn conversation_script() -> Script {
    Script::dual()
        .resource(ResourceSpec::text("note://a", "a", "alpha"))
        .capability("resources", json!({"subscribe": true}))
        .prompt(
            PromptSpec::new("greet")
                .argument("name", true)
                .message("user", "Hello {name}")
                .complete(CompletionSpec::new("name", ["Ada"])),
        )
        .tool("echo", Behavior::Echo)
        .tool(
            "roots",
            Behavior::Ask(InputSpec::one("r", InputRequest::roots())),
        )
}

/// Runs every feature once; returns the frames the server received.
async fn conversation(mode: Negotiation) -> Vec<Value> {
    let (connector, recorder) = memory(conversation_script());
    let config = SessionConfig {
        handlers: ClientHandlers::new().roots(Roots::new(vec![Root::new("file:///w")])),
        ..quick_config()
    };
    let session = ready(connector, config, mode).await;
    session.list_tools().await.unwrap();
    session
        .call_tool("echo", args(json!({"text": "hi"})))
        .await
        .unwrap();
    session.call_tool("roots", ()).await.unwrap();
    session.list_resources().await.unwrap();
    session.read_resource("note://a").await.unwrap();
    session.list_prompts().await.unwrap();
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    session.get_prompt("greet", args).await.unwrap();
    let reference = CompletionReference::Prompt(PromptReference {
        name: "greet".into(),
        ..PromptReference::default()
    });
    session
        .complete(reference, "name", "A", BTreeMap::new())
        .await
        .unwrap();
    session.set_log_level(LoggingLevel::Info).await.unwrap();
    let filter = SubscriptionFilter {
        resource_subscriptions: Some(vec!["note://a".into()]),
        ..SubscriptionFilter::default()
    };
    if mode == Negotiation::Legacy {
        let sub = session.subscribe(filter).await.unwrap();
        sub.close(&session).await.unwrap();
        session.ping().await.unwrap();
    } else {
        let sub = session.subscribe(filter).await.unwrap();
        // The listen request is on the wire before it is cancelled.
        settle(&recorder, "subscriptions/listen").await;
        drop(sub);
        settle(&recorder, "notifications/cancelled").await;
    }
    recorder.received()
}

fn validate(schema: &Value, version: &str, frame: &Value) -> Result<(), String> {
    let defs_key = if version >= "2025-11-25" {
        "$defs"
    } else {
        "definitions"
    };
    let target = if frame.get("method").is_some() {
        if frame.get("id").is_some() {
            "ClientRequest"
        } else {
            "ClientNotification"
        }
    } else {
        "JSONRPCResponse"
    };
    let wrapper = json!({
        "$ref": format!("#/{defs_key}/{target}"),
        defs_key: schema[defs_key],
    });
    let validator = jsonschema::validator_for(&wrapper).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(frame)
        .map(|e| format!("{}: {}", e.instance_path(), e))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

async fn check(mode: Negotiation, version: &str, snapshot: &str) {
    let frames = conversation(mode).await;
    if let Some(dir) = spec::spec_dir() {
        let schema = spec::load_schema(&dir, version);
        for frame in &frames {
            if let Err(e) = validate(&schema, version, frame) {
                panic!("{version}: frame does not match the schema: {e}\n{frame:#}");
            }
        }
    }
    insta::assert_json_snapshot!(snapshot, frames, {
        "[].id" => "[id]",
        "[].params.requestId" => "[id]",
        "[].params._meta.progressToken" => "[id]",
        "[].params._meta[\"io.modelcontextprotocol/clientInfo\"].version" => "[version]",
        "[].params.clientInfo.version" => "[version]",
    });
}

#[tokio::test]
async fn legacy_wire_messages_match_the_2025_11_25_schema() {
    check(Negotiation::Legacy, "2025-11-25", "legacy_conversation").await;
}

#[tokio::test]
async fn modern_wire_messages_match_the_2026_07_28_schema() {
    check(Negotiation::Modern, "2026-07-28", "modern_conversation").await;
}
