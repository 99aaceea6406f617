//! Every request runs in a `mcp.request` span: method, id, protocol version;
//! failures are events inside it; no arguments or results in any field.

#[path = "support/common.rs"]
mod common;

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, Script};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

/// What the subscriber saw, as text lines.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture {
    next: AtomicU64,
}

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

fn push(line: String) {
    SEEN.lock().unwrap().push(line);
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("mcp_session")
    }
    fn new_span(&self, attrs: &span::Attributes<'_>) -> span::Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = Fields(String::new());
        attrs.record(&mut fields);
        push(format!(
            "span {id} {} {}",
            attrs.metadata().name(),
            fields.0
        ));
        span::Id::from_u64(id)
    }
    fn record(&self, id: &span::Id, values: &span::Record<'_>) {
        let mut fields = Fields(String::new());
        values.record(&mut fields);
        push(format!("record {} {}", id.into_u64(), fields.0));
    }
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        push(format!("event {}", fields.0));
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

#[tokio::test]
async fn each_request_has_a_span_with_method_id_and_version_and_no_arguments() {
    tracing::subscriber::set_global_default(Capture {
        next: AtomicU64::new(0),
    })
    .expect("the only subscriber of this test binary");
    let script = Script::legacy().tool("echo", Behavior::Echo).tool(
        "oops",
        Behavior::Error {
            code: -32603,
            message: "boom".into(),
            data: None,
        },
    );
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session
        .call_tool("echo", json!({"text": "secret-argument"}))
        .await
        .unwrap();
    session.call_tool("oops", ()).await.unwrap_err();
    let seen = SEEN.lock().unwrap().clone();
    let calls: Vec<&String> = seen
        .iter()
        .filter(|l| l.contains("mcp.request") && l.contains("method=\"tools/call\""))
        .collect();
    assert_eq!(calls.len(), 2, "{seen:#?}");
    assert!(calls[0].contains("version=\"2025-11-25\""), "{seen:#?}");
    // The id is recorded on the span once it is known.
    let span_id = calls[1].split_whitespace().nth(1).unwrap();
    assert!(
        seen.iter()
            .any(|l| l.starts_with(&format!("record {span_id} id="))),
        "{seen:#?}"
    );
    // The failure is an event; nothing carries the arguments.
    assert!(
        seen.iter().any(|l| l.contains("request failed")),
        "{seen:#?}"
    );
    assert!(
        !seen.iter().any(|l| l.contains("secret-argument")),
        "{seen:#?}"
    );
}
