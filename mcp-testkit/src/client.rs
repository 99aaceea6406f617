//! A raw line-level client for driving a fake server by hand in tests.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::lines::{LineRead, read_line_bounded};
use crate::wire;

/// Longest line a [`LineClient`] reads (1 GiB + slack for the envelope).
pub const CLIENT_MAX_LINE_BYTES: usize = (1 << 30) + 4096;
/// How long [`LineClient::recv`] and [`LineClient::request`] wait.
pub const DEFAULT_RECV_TIMEOUT: Duration = Duration::from_secs(10);

/// One line read by a [`LineClient`].
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A JSON frame.
    Json(Value),
    /// A line that is not JSON (lossily decoded).
    Text(String),
    /// A line longer than [`CLIENT_MAX_LINE_BYTES`], skipped; carries its length.
    TooLong(usize),
    /// The server closed its output.
    Eof,
    /// Nothing arrived in time.
    TimedOut,
}

/// Writes hand-made JSON lines and reads the server's lines, nothing more:
/// no validation, no id bookkeeping beyond [`request`](Self::request).
pub struct LineClient {
    reader: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    writer: Box<dyn AsyncWrite + Send + Unpin>,
    next_id: i64,
    /// Frames [`request`](Self::request) read while waiting for its response,
    /// in arrival order (notifications, server requests, other responses).
    pub skipped: Vec<Value>,
}

impl std::fmt::Debug for LineClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineClient")
            .field("next_id", &self.next_id)
            .field("skipped", &self.skipped.len())
            .finish_non_exhaustive()
    }
}

impl LineClient {
    /// A client reading from `read` (the server's output) and writing to
    /// `write` (the server's input).
    pub fn new<R, W>(read: R, write: W) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Self {
            reader: BufReader::with_capacity(64 * 1024, Box::new(read)),
            writer: Box::new(write),
            next_id: 1,
            skipped: Vec::new(),
        }
    }

    /// A client over one bidirectional stream, e.g. [`RunningServer::stream`](crate::RunningServer).
    pub fn over<S>(stream: S) -> Self
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (read, write) = tokio::io::split(stream);
        Self::new(read, write)
    }

    /// Writes `frame` as one line. Write errors are ignored: the next read
    /// shows what happened to the server.
    pub async fn send(&mut self, frame: &Value) {
        self.send_raw(&frame.to_string()).await;
    }

    /// Writes `line` followed by a newline, as is.
    pub async fn send_raw(&mut self, line: &str) {
        let _ = self.writer.write_all(line.as_bytes()).await;
        let _ = self.writer.write_all(b"\n").await;
        let _ = self.writer.flush().await;
    }

    /// Closes the server's input (end of file for the server).
    pub async fn close(&mut self) {
        let _ = self.writer.shutdown().await;
    }

    /// Reads the next line, waiting at most `timeout`.
    pub async fn next_line(&mut self, timeout: Duration) -> Line {
        let mut buf = Vec::new();
        let read = read_line_bounded(&mut self.reader, &mut buf, CLIENT_MAX_LINE_BYTES);
        match tokio::time::timeout(timeout, read).await {
            Err(_) => Line::TimedOut,
            Ok(Err(_)) | Ok(Ok(LineRead::Eof)) => Line::Eof,
            Ok(Ok(LineRead::TooLong(n))) => Line::TooLong(n),
            Ok(Ok(LineRead::Line)) => match serde_json::from_slice(&buf) {
                Ok(value) => Line::Json(value),
                Err(_) => Line::Text(String::from_utf8_lossy(&buf).into_owned()),
            },
        }
    }

    /// The next JSON frame.
    ///
    /// # Panics
    /// If the next line is not a JSON frame within [`DEFAULT_RECV_TIMEOUT`]:
    /// this is a test helper, and the panic message says what came instead.
    pub async fn recv(&mut self) -> Value {
        match self.next_line(DEFAULT_RECV_TIMEOUT).await {
            Line::Json(value) => value,
            other => panic!("expected a JSON frame from the fake server, got {other:?}"),
        }
    }

    /// Sends a request with the next numeric id and returns the response with
    /// that id; other frames read meanwhile go to [`skipped`](Self::skipped).
    ///
    /// # Panics
    /// As [`recv`](Self::recv), if the response does not come.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            frame["params"] = params;
        }
        self.send(&frame).await;
        loop {
            let frame = self.recv().await;
            let is_response = frame.get("method").is_none() && frame.get("id") == Some(&json!(id));
            if is_response {
                return frame;
            }
            self.skipped.push(frame);
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        let mut frame = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            frame["params"] = params;
        }
        self.send(&frame).await;
    }

    /// Legacy handshake: `initialize` at `version`, then
    /// `notifications/initialized`; returns the `initialize` response.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcp-testkit-line-client", "version": "0"},
        });
        let response = self.request("initialize", params).await;
        self.notify("notifications/initialized", Value::Null).await;
        response
    }
}

/// Params `_meta` for a 2026-07-28 request: the version and (empty unless
/// given) client capabilities.
pub fn modern_meta(version: &str, capabilities: Value) -> Value {
    let capabilities = if capabilities.is_null() {
        json!({})
    } else {
        capabilities
    };
    json!({
        wire::META_PROTOCOL_VERSION: version,
        wire::META_CLIENT_CAPABILITIES: capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-testkit-line-client", "version": "0"},
    })
}

/// `params` with a 2026-07-28 `_meta` (see [`modern_meta`]) added.
pub fn with_modern_meta(mut params: Value, capabilities: Value) -> Value {
    if params.is_null() {
        params = json!({});
    }
    params["_meta"] = modern_meta(wire::MODERN_VERSIONS[0], capabilities);
    params
}
