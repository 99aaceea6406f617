//! Shared fixtures: connectors for testkit fake servers (in-process and
//! stdio), connectors that fail on purpose, and event helpers.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_hub::{AuditRecord, AuditSink, HubEvent, HubEvents, ServerName};
use mcp_session::SessionConfig;
use mcp_testkit::{FakeServer, Recorder, Script};
use mcp_transport::{
    BoxFuture, Connection, Connector, MemoryConnector, StdioConfig, StdioConnector, TransportError,
};

/// A connector that starts a fresh in-process fake server on every connect,
/// all recording into one recorder.
pub fn memory(script: Script) -> (Arc<dyn Connector>, Recorder) {
    memory_delayed(script, Duration::ZERO)
}

/// Like [`memory`], but each server waits `delay` before serving (a slow
/// starter).
pub fn memory_delayed(script: Script, delay: Duration) -> (Arc<dyn Connector>, Recorder) {
    let recorder = Recorder::new();
    let rec = recorder.clone();
    let connector = MemoryConnector::new(move |end| {
        let server = FakeServer::new(script.clone()).with_recorder(rec.clone());
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            server.serve(end.input, end.output).await;
        });
    });
    (Arc::new(connector), recorder)
}

/// Fails the first `failures` connects (as if the program could not be
/// started), then connects through `inner`.
#[derive(Debug)]
pub struct Flaky {
    pub inner: Arc<dyn Connector>,
    pub failures: u32,
    pub attempts: AtomicU32,
}

impl Flaky {
    pub fn new(inner: Arc<dyn Connector>, failures: u32) -> Arc<Self> {
        Arc::new(Self {
            inner,
            failures,
            attempts: AtomicU32::new(0),
        })
    }

    pub fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::SeqCst)
    }
}

impl Connector for Flaky {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if n < self.failures {
                Err(TransportError::Spawn {
                    program: "flaky-server".into(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                })
            } else {
                self.inner.connect().await
            }
        })
    }

    fn is_stdio(&self) -> bool {
        true
    }
}

/// The testkit server binary, built once.
pub fn server_binary() -> String {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        mcp_testkit::build_server_binary()
            .expect("building mcp-testkit-server")
            .display()
            .to_string()
    })
    .clone()
}

/// A stdio connector running the testkit binary with `script`.
pub fn stdio(script: &Script) -> Arc<dyn Connector> {
    let json = serde_json::to_string(script).expect("script serialises");
    let mut config = StdioConfig::new(server_binary()).args(["--script-json".to_owned(), json]);
    config.shutdown_grace = Duration::from_millis(500);
    config.term_grace = Duration::from_millis(500);
    Arc::new(StdioConnector::new(config))
}

/// Session settings with short deadlines for tests.
pub fn quick_session() -> SessionConfig {
    SessionConfig {
        request_timeout: Duration::from_secs(10),
        probe_timeout: Duration::from_millis(500),
        ..SessionConfig::default()
    }
}

pub fn name(s: &str) -> ServerName {
    ServerName::new(s).unwrap()
}

/// Waits (bounded) for the first event `pick` accepts; returns its value.
pub async fn wait_for<T>(
    events: &mut HubEvents,
    limit: Duration,
    mut pick: impl FnMut(&HubEvent) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let event = tokio::time::timeout_at(deadline, events.next())
            .await
            .expect("timed out waiting for an event")
            .expect("event stream ended");
        if let Some(value) = pick(&event) {
            return value;
        }
    }
}

/// Every event waiting now.
pub fn drain(events: &mut HubEvents) -> Vec<HubEvent> {
    let mut out = Vec::new();
    while let Some(e) = events.try_next() {
        out.push(e);
    }
    out
}

/// Methods a recorder saw, in order.
pub fn methods(recorder: &Recorder) -> Vec<String> {
    recorder
        .received()
        .iter()
        .filter_map(|m| m.get("method").and_then(|v| v.as_str()).map(str::to_owned))
        .collect()
}

/// Tool calls a recorder saw, by tool name.
pub fn calls_of(recorder: &Recorder, tool: &str) -> usize {
    recorder
        .received()
        .iter()
        .filter(|m| {
            m.get("method").and_then(|v| v.as_str()) == Some("tools/call")
                && m["params"]["name"].as_str() == Some(tool)
        })
        .count()
}

/// The text of a tool result's first block.
pub fn first_text(result: &mcp_types::CallToolResult) -> String {
    match result.content.first() {
        Some(mcp_types::ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("no text block: {other:?}"),
    }
}

/// An audit sink keeping every record, for tests to read back.
#[derive(Debug, Default)]
pub struct Trail(pub Mutex<Vec<AuditRecord>>);

impl AuditSink for Trail {
    fn record(&self, record: &AuditRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}
