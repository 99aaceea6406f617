//! `StdioConfig::forward_stderr` hands each stderr line to `tracing`
//! (target `mcp_transport::stderr`), besides keeping the bounded tail.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_transport::{Connector, Inbound, StdioConfig, StdioConnector};
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

/// Records the messages of events for the stderr target.
struct Capture(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "mcp_transport::stderr"
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        if let Ok(mut lines) = self.0.lock() {
            lines.push(message.0);
        }
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

#[tokio::test]
async fn stderr_lines_are_forwarded_to_tracing_when_asked() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    tracing::subscriber::set_global_default(Capture(Arc::clone(&lines)))
        .expect("the only subscriber of this test binary");
    let mut config = StdioConfig::new("/bin/sh").args(["-c", "echo first >&2; echo second >&2"]);
    config.forward_stderr = true;
    let mut conn = StdioConnector::new(config).connect().await.unwrap();
    let info = loop {
        match tokio::time::timeout(Duration::from_secs(10), conn.inbound.recv()).await {
            Ok(Some(Inbound::Closed(info))) => break info,
            Ok(Some(_)) => continue,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(info.stderr_tail.as_deref(), Some("first\nsecond\n"));
    // The stderr task may finish just after the reader: wait briefly.
    for _ in 0..50 {
        if lines.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*lines.lock().unwrap(), vec!["first", "second"]);
}
