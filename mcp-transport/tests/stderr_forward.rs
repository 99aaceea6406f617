//! `StdioConfig::forward_stderr` hands each stderr line to `tracing`
//! (target `mcp_transport::stderr`), escaped, besides keeping the bounded
//! tail as it was.

use std::fmt;
use std::time::Duration;

use mcp_transport::{Connector, Inbound, StdioConfig, StdioConnector};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber, span};

/// Sends the messages of events for the stderr target.
struct Capture(mpsc::UnboundedSender<String>);

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
        let _ = self.0.send(message.0);
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

#[tokio::test]
async fn stderr_lines_are_forwarded_to_tracing_escaped_when_asked() {
    let (tx, mut lines) = mpsc::unbounded_channel();
    tracing::subscriber::set_global_default(Capture(tx))
        .expect("the only subscriber of this test binary");
    // The second line would clear the terminal the log goes to and forge a
    // line of its own.
    let mut config = StdioConfig::new("/bin/sh").args([
        "-c",
        "echo first >&2; printf 'x\\033[2J\\033[1;1Hforged\\n' >&2",
    ]);
    config.forward_stderr = true;
    let mut conn = StdioConnector::new(config).connect().await.unwrap();
    let info = loop {
        match tokio::time::timeout(Duration::from_secs(10), conn.inbound.recv()).await {
            Ok(Some(Inbound::Closed(info))) => break info,
            Ok(Some(_)) => continue,
            other => panic!("{other:?}"),
        }
    };
    // The tail, for a caller to show labelled, is the server's text as it was.
    assert_eq!(
        info.stderr_tail.as_deref(),
        Some("first\nx\u{1b}[2J\u{1b}[1;1Hforged\n")
    );
    // The stderr task may finish just after the reader: wait for its lines.
    let mut logged = Vec::new();
    while logged.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(10), lines.recv()).await {
            Ok(Some(line)) => logged.push(line),
            other => panic!("only {logged:?}, then {other:?}"),
        }
    }
    assert_eq!(logged, ["\"first\"", "\"x\\u{1b}[2J\\u{1b}[1;1Hforged\""]);
    assert!(!logged.iter().any(|l| l.contains('\u{1b}')), "{logged:?}");
}
