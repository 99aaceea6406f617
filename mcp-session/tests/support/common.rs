//! Shared fixtures: sessions against the testkit fake server, in-process and
//! as a real child process.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_session::{Negotiation, Ready, Session, SessionConfig};
use mcp_testkit::{FakeServer, Recorder, Script};
use mcp_transport::{Connector, MemoryConnector, StdioConfig, StdioConnector};

/// A connector that starts a fresh in-process fake server on every connect,
/// all recording into one recorder.
pub fn memory(script: Script) -> (Arc<dyn Connector>, Recorder) {
    let recorder = Recorder::new();
    let rec = recorder.clone();
    let connector = MemoryConnector::new(move |end| {
        let server = FakeServer::new(script.clone()).with_recorder(rec.clone());
        tokio::spawn(async move {
            server.serve(end.input, end.output).await;
        });
    });
    (Arc::new(connector), recorder)
}

/// A hand-written server on the memory transport, for answers the testkit
/// will not give: each frame it reads goes to `answer`, which returns what to
/// write back (one or more lines, without the last newline) or nothing.
pub fn line_server<F>(answer: F) -> Arc<dyn Connector>
where
    F: Fn(&serde_json::Value) -> Option<String> + Clone + Send + Sync + 'static,
{
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    Arc::new(MemoryConnector::new(move |end| {
        let answer = answer.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(end.input).lines();
            let mut out = end.output;
            while let Ok(Some(line)) = lines.next_line().await {
                let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
                let Some(reply) = answer(&msg) else {
                    continue;
                };
                if out
                    .write_all(format!("{reply}\n").as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
    }))
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

/// A stdio connector running the testkit binary with `script`, recording to
/// `record` when given.
pub fn stdio(script: &Script, record: Option<&std::path::Path>) -> StdioConnector {
    let json = serde_json::to_string(script).expect("script serialises");
    let mut config = StdioConfig::new(server_binary()).args(["--script-json".to_owned(), json]);
    if let Some(path) = record {
        config = config.args(["--record".to_owned(), path.display().to_string()]);
    }
    config.shutdown_grace = Duration::from_millis(500);
    config.term_grace = Duration::from_millis(500);
    StdioConnector::new(config)
}

pub fn quick_config() -> SessionConfig {
    SessionConfig {
        request_timeout: Duration::from_secs(10),
        probe_timeout: Duration::from_millis(300),
        ..SessionConfig::default()
    }
}

pub async fn ready(
    connector: Arc<dyn Connector>,
    config: SessionConfig,
    mode: Negotiation,
) -> Session<Ready> {
    let session = Session::connect(connector, config).await.expect("connect");
    match session.negotiate(mode).await {
        Ok(s) => s,
        Err(e) => panic!("negotiation failed: {e} ({:?})", e.error()),
    }
}

/// Methods the server received, in order.
pub fn methods(recorder: &Recorder) -> Vec<String> {
    recorder
        .received()
        .iter()
        .filter_map(|m| m.get("method").and_then(|v| v.as_str()).map(str::to_owned))
        .collect()
}

pub fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m,
        _ => panic!("arguments must be an object"),
    }
}

/// Waits (bounded) until the server has received `method`: notifications are
/// fire-and-forget, so the server may see them after our call returned.
pub async fn settle(recorder: &Recorder, method: &str) {
    let seen = recorder.wait_for(method, Duration::from_secs(5)).await;
    assert!(seen.is_some(), "the server never received {method}");
}
