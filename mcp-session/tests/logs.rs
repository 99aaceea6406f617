//! What the session logs about a server's tools quotes the server's text
//! escaped: logs go to a terminal's stderr.

#[path = "support/common.rs"]
mod common;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, HttpFakeServer, HttpServerOptions, Script};
use mcp_transport::{HttpConfig, HttpConnector};
use serde_json::json;
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

/// Sends each event of this crate as `name=value` pairs, values as a
/// subscriber would print them (`%` fields by their `Display`).
struct Capture(mpsc::UnboundedSender<String>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("mcp_session")
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let _ = self.0.send(fields.0);
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

/// The next captured event whose text contains `needle`.
async fn logged(events: &mut mpsc::UnboundedReceiver<String>, needle: &str) -> String {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(Some(event)) if event.contains(needle) => return event,
            Ok(Some(_)) => continue,
            other => panic!("no event with {needle:?}: {other:?}"),
        }
    }
}

/// Clears the screen, goes home and writes a line of its own.
const FORGED: &str = "\u{1b}[2J\u{1b}[1;1Hforged";

#[tokio::test]
async fn warnings_about_a_servers_tools_escape_what_the_server_wrote() {
    let (tx, mut events) = mpsc::unbounded_channel();
    tracing::subscriber::set_global_default(Capture(tx))
        .expect("the only subscriber of this test binary");

    // A tool left out for its `x-mcp-header` annotation (2026 over HTTP)
    // is named in a warning, with the reason.
    let script = Script::modern().tool_json(
        json!({"name": format!("bad{FORGED}"), "inputSchema": {"type": "object", "properties": {
                FORGED: {"type": "number", "x-mcp-header": "N"}}}}),
        Behavior::Echo,
    );
    let http = HttpFakeServer::start(script, HttpServerOptions::default())
        .await
        .expect("http server");
    let connector = Arc::new(HttpConnector::new(HttpConfig::new(http.url())));
    let session = ready(connector, quick_config(), Negotiation::Modern).await;
    let catalog = session.list_tools().await.unwrap();
    assert_eq!(catalog.rejected().len(), 1);
    let event = logged(&mut events, "tool left out").await;
    assert!(!event.contains('\u{1b}'), "{event:?}");
    assert!(
        event.contains("tool=bad\\u{1b}[2J\\u{1b}[1;1Hforged"),
        "{event:?}"
    );

    // A schema that cannot be compiled (a `$ref` that resolves nowhere) is
    // named in a warning whose message quotes the schema.
    let script = Script::legacy().tool_json(
        json!({"name": "echo", "inputSchema": {"type": "object", "properties": {
                "text": {"$ref": format!("#/$defs/{FORGED}")}}}}),
        Behavior::Echo,
    );
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    let result = session
        .call_tool("echo", args(json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(
        result.is_error, None,
        "the check was skipped, the call made"
    );
    let event = logged(&mut events, "tool schema not usable").await;
    assert!(!event.contains('\u{1b}'), "{event:?}");
    assert!(event.contains("\\u{1b}[2J"), "{event:?}");
}
