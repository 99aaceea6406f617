//! The hub's spans: one `mcp.server` per server for its life, one
//! `mcp.call` per governed operation, with the session's `mcp.request`
//! spans inside.

#[path = "support/common.rs"]
mod common;

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use mcp_hub::{Hub, HubConfig, ServerSpec};
use mcp_testkit::{Behavior, Script};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

static SPANS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture(AtomicU64);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("mcp_")
    }
    fn new_span(&self, attrs: &span::Attributes<'_>) -> span::Id {
        let mut fields = Fields(String::new());
        attrs.record(&mut fields);
        SPANS
            .lock()
            .unwrap()
            .push(format!("{} {}", attrs.metadata().name(), fields.0));
        span::Id::from_u64(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

#[tokio::test]
async fn servers_and_calls_have_spans_and_requests_nest_in_them() {
    tracing::subscriber::set_global_default(Capture(AtomicU64::new(0)))
        .expect("the only subscriber of this test binary");
    let (connector, _) = memory(Script::legacy().tool("echo", Behavior::Echo));
    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("notes", connector).session(quick_session()))
        .start()
        .await
        .unwrap();
    hub.call("echo", json!({"text": "secret-text"}))
        .await
        .unwrap();
    hub.shutdown().await;
    let spans = SPANS.lock().unwrap().clone();
    let has = |needle: &str| spans.iter().any(|s| s.contains(needle));
    assert!(has("mcp.server server=notes"), "{spans:#?}");
    assert!(
        has("mcp.call server=notes operation=CallTool from_model=true"),
        "{spans:#?}"
    );
    assert!(has("mcp.request method=\"tools/call\""), "{spans:#?}");
    assert!(!has("secret-text"), "{spans:#?}");
}
