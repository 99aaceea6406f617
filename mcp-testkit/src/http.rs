//! The fake server over HTTP, in-process, on `127.0.0.1:0`: the same
//! [`Script`] spoken over Streamable HTTP (both eras) and the legacy HTTP+SSE
//! transport, with HTTP misbehaviours on demand.
//!
//! Endpoints of a [`RunningHttpServer`]:
//!
//! - `/mcp` ([`RunningHttpServer::url`]): Streamable HTTP.
//!   - Legacy era, stateful: `initialize` without `Mcp-Session-Id` opens a
//!     session (a fake-server connection of its own) and the reply carries
//!     its id; later requests must carry it (else `400 -32000 "Bad Request:
//!     Mcp-Session-Id header is required"`, the TypeScript SDK's answer); an
//!     unknown id is `404` (JSON-RPC `-32001`, id `null`). `GET` opens the
//!     session's standalone stream (one at a time, else `409`), `DELETE` ends
//!     the session.
//!   - Modern era (a `MCP-Protocol-Version: 2026-07-28` header, or the
//!     version in the body's `_meta`) on a script with 2026-07-28: stateless,
//!     one shared connection. Requests must carry `MCP-Protocol-Version`,
//!     `Mcp-Method`, `Mcp-Name` (for `tools/call`, `prompts/get`,
//!     `resources/read`) and the `Mcp-Param-*` headers of the tool's
//!     `x-mcp-header` annotations, matching the body; else `400` with
//!     `-32020` (see [`HEADER_MISMATCH`]).
//!   - `server/discover` on a legacy-only script is answered per
//!     [`HttpProbe`]: each real-world way a legacy server refuses it.
//!   - Replies are JSON or event streams ([`ReplyMode`]). Event-stream
//!     replies have event ids (`n-k`) and can be resumed with `GET` and
//!     `Last-Event-ID`.
//! - `/sse` ([`RunningHttpServer::sse_url`]): the legacy HTTP+SSE transport;
//!   the `endpoint` event names `/messages?sessionId=…`, every message POSTed
//!   there is answered `202` and everything comes back on the stream.
//!
//! Misbehaviours ([`HttpServerOptions`]): close reply streams right after a
//! priming event with `retry` ([`CloseEarly`]), answer a status such as 503
//! ([`FailWith`]), expire every session ([`RunningHttpServer::expire_sessions`]),
//! name a cross-origin endpoint, and the tool behaviours of the script (an
//! `oversized` tool makes an oversized event or body).
//!
//! Everything received is recorded: frames in the [`Recorder`], HTTP requests
//! (method, path, headers, time) in the [`HttpRecorder`].

mod conn;
mod modern_headers;
mod routes;
mod streams;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

pub use self::modern_headers::HEADER_MISMATCH;
use crate::{Recorder, Script};

/// Most HTTP requests kept by an [`HttpRecorder`].
pub const MAX_RECORDED_REQUESTS: usize = 100_000;

/// How request replies are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyMode {
    /// `application/json`, one body per request.
    #[default]
    Json,
    /// `text/event-stream`: related notifications and server requests, then
    /// the response.
    Sse,
}

/// How a legacy-only server answers a 2026 probe (`server/discover`), each
/// the way a real server does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HttpProbe {
    /// `400 {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad
    /// Request: Mcp-Session-Id header is required"}}` (stateful TypeScript SDK).
    #[default]
    SessionRequired,
    /// `400`, `-32000` with id `null` rejecting the version header.
    VersionHeaderRejected,
    /// `400` with the plain text `Unsupported protocol version`.
    UnsupportedVersionText,
    /// `404` with the plain text `Invalid session ID`.
    InvalidSessionText,
    /// `400`, `-32600` with id `null`.
    InvalidRequestNullId,
    /// `200`, `-32601` for the probe's id.
    MethodNotFound,
    /// `200` with an empty body.
    EmptyOk,
    /// `401` with this `WWW-Authenticate`.
    Unauthorized {
        /// The challenge.
        www_authenticate: String,
    },
    /// The script's own `on_probe`, over a connection of its own, as JSON.
    Script,
}

/// Close event-stream replies early: right after a priming event carrying an
/// id and `retry`, before any message, so the client must resume with
/// `Last-Event-ID` after waiting `retry_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseEarly {
    /// The `retry` field sent.
    pub retry_ms: u64,
    /// Methods whose replies are closed early (empty: all).
    pub methods: Vec<String>,
    /// How many replies are closed early (`None`: every matching one).
    pub times: Option<u64>,
}

/// Answer matching POSTs with this status and a plain-text body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailWith {
    /// The HTTP status, e.g. 503.
    pub status: u16,
    /// Methods answered so (empty: all).
    pub methods: Vec<String>,
}

/// How the HTTP server behaves (besides its script).
#[derive(Debug, Clone)]
pub struct HttpServerOptions {
    /// JSON or event-stream replies.
    pub reply: ReplyMode,
    /// Serve the standalone `GET` stream (else `405`).
    pub get_stream: bool,
    /// Let clients end sessions with `DELETE` (else `405`).
    pub allow_delete: bool,
    /// How `server/discover` is answered by a legacy-only script.
    pub probe: HttpProbe,
    /// Check the 2026-07-28 request headers.
    pub require_modern_headers: bool,
    /// Close event-stream replies early.
    pub close_early: Option<CloseEarly>,
    /// Answer some POSTs with an error status.
    pub fail_with: Option<FailWith>,
    /// The `endpoint` event's data of the legacy HTTP+SSE transport (default
    /// `/messages?sessionId=<id>`).
    pub sse_endpoint: Option<String>,
    /// Most sessions at once (further `initialize`s get `503`).
    pub max_sessions: usize,
    /// Largest request body accepted (`413` beyond).
    pub max_request_bytes: usize,
    /// Hold each `GET /mcp` this long before handling it (its stream opens,
    /// and its head is sent, only then): a server slow to take the stream.
    pub get_delay: Option<std::time::Duration>,
    /// SEP-1699 polling: a resumed reply stream (`GET` with
    /// `Last-Event-ID`) ends when no event of it comes within this long, so
    /// the client comes back again after the `retry` time, until the answer.
    pub poll_hold: Option<std::time::Duration>,
    /// Answer a session id it does not know (a forgotten session) with
    /// `400` and `"Bad Request: No valid session ID provided"`, as servers
    /// built from the TypeScript SDK's examples do, instead of `404`.
    pub unknown_session_400: bool,
    /// A 2026-07-28-only script answers a legacy request (`initialize`
    /// included) with `400` and `-32022` listing its versions, as the
    /// TypeScript SDK's `legacy: 'reject'` endpoints do, instead of
    /// handing it to the script.
    pub reject_legacy: bool,
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        Self {
            reply: ReplyMode::Json,
            get_stream: true,
            allow_delete: true,
            probe: HttpProbe::default(),
            require_modern_headers: true,
            close_early: None,
            fail_with: None,
            sse_endpoint: None,
            max_sessions: 1024,
            max_request_bytes: 64 << 20,
            get_delay: None,
            poll_hold: None,
            unknown_session_400: false,
            reject_legacy: false,
        }
    }
}

impl HttpServerOptions {
    /// Sets the reply mode.
    pub fn reply(mut self, reply: ReplyMode) -> Self {
        self.reply = reply;
        self
    }

    /// Sets how `server/discover` is answered.
    pub fn probe(mut self, probe: HttpProbe) -> Self {
        self.probe = probe;
        self
    }

    /// Holds each resumed reply stream at most `hold` before ending it (see
    /// [`poll_hold`](Self::poll_hold)); with [`close_early`](Self::close_early),
    /// the server that polls its clients to the answer.
    pub fn poll(mut self, hold: std::time::Duration) -> Self {
        self.poll_hold = Some(hold);
        self
    }

    /// Closes event-stream replies of `methods` (empty: all) early.
    pub fn close_early(mut self, retry_ms: u64, methods: &[&str]) -> Self {
        self.close_early = Some(CloseEarly {
            retry_ms,
            methods: methods.iter().map(|m| (*m).to_owned()).collect(),
            times: None,
        });
        self
    }

    /// Answers an unknown session id with `400` (see
    /// [`unknown_session_400`](Self::unknown_session_400)).
    pub fn unknown_session_400(mut self) -> Self {
        self.unknown_session_400 = true;
        self
    }

    /// Refuses legacy requests to a modern-only script (see
    /// [`reject_legacy`](Self::reject_legacy)).
    pub fn reject_legacy(mut self) -> Self {
        self.reject_legacy = true;
        self
    }

    /// Answers POSTs of `methods` (empty: all) with `status`.
    pub fn fail_with(mut self, status: u16, methods: &[&str]) -> Self {
        self.fail_with = Some(FailWith {
            status,
            methods: methods.iter().map(|m| (*m).to_owned()).collect(),
        });
        self
    }
}

/// One HTTP request the server received.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    /// `GET`, `POST`, `DELETE` …
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Every header, names in lower case, in order.
    pub headers: Vec<(String, String)>,
    /// The JSON-RPC `method` of a POST body, if any.
    pub jsonrpc_method: Option<String>,
    /// When it arrived.
    pub at: Instant,
}

impl SeenRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A cloneable handle on the HTTP requests a server received.
#[derive(Debug, Clone)]
pub struct HttpRecorder {
    inner: Arc<RecorderInner>,
}

#[derive(Debug)]
struct RecorderInner {
    requests: Mutex<Vec<SeenRequest>>,
    generation: watch::Sender<u64>,
}

impl Default for HttpRecorder {
    fn default() -> Self {
        Self {
            inner: Arc::new(RecorderInner {
                requests: Mutex::new(Vec::new()),
                generation: watch::channel(0).0,
            }),
        }
    }
}

impl HttpRecorder {
    fn requests_guard(&self) -> MutexGuard<'_, Vec<SeenRequest>> {
        self.inner
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.requests_guard().clone()
    }

    /// Requests with this HTTP method.
    pub fn with_method(&self, method: &str) -> Vec<SeenRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == method)
            .collect()
    }

    /// POSTs whose body had this JSON-RPC method.
    pub fn posts_of(&self, jsonrpc_method: &str) -> Vec<SeenRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.jsonrpc_method.as_deref() == Some(jsonrpc_method))
            .collect()
    }

    /// Waits until `done(requests)` holds; returns whether it did before
    /// `timeout`.
    pub async fn wait_until<F>(&self, timeout: Duration, mut done: F) -> bool
    where
        F: FnMut(&[SeenRequest]) -> bool,
    {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changes = self.inner.generation.subscribe();
        loop {
            changes.borrow_and_update();
            if done(&self.requests_guard()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return done(&self.requests_guard());
            }
        }
    }

    fn record(&self, request: SeenRequest) {
        {
            let mut requests = self.requests_guard();
            if requests.len() < MAX_RECORDED_REQUESTS {
                requests.push(request);
            }
        }
        self.inner.generation.send_modify(|g| *g += 1);
    }
}

/// State of one HTTP server.
pub(crate) struct App {
    script: Arc<Script>,
    options: HttpServerOptions,
    recorder: Recorder,
    requests: HttpRecorder,
    sessions: Mutex<HashMap<String, Arc<conn::Conn>>>,
    sse_sessions: Mutex<HashMap<String, Arc<conn::Conn>>>,
    stateless: Mutex<Option<Arc<conn::Conn>>>,
    next_session: AtomicU64,
    logs: streams::ReplyLogs,
    /// Replies closed early so far.
    closed_early: AtomicU64,
    /// POSTs of a method still to be refused, and with what status
    /// ([`RunningHttpServer::fail_next`]).
    fail_next: Mutex<Option<(String, u16, u64)>>,
    /// The script served after [`RunningHttpServer::restart_as`].
    pub(crate) restarted_as: Mutex<Option<Arc<Script>>>,
}

impl App {
    /// The script served now: the one started with, or the one of the last
    /// [`RunningHttpServer::restart_as`].
    pub(crate) fn current_script(&self) -> Arc<Script> {
        lock(&self.restarted_as)
            .clone()
            .unwrap_or_else(|| Arc::clone(&self.script))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Only plain inserts and removals happen under these locks.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts fake MCP servers over HTTP.
#[derive(Debug)]
pub struct HttpFakeServer;

impl HttpFakeServer {
    /// Serves `script` on `127.0.0.1` (a free port) until
    /// [`RunningHttpServer::shutdown`] or drop.
    pub async fn start(
        script: Script,
        options: HttpServerOptions,
    ) -> std::io::Result<RunningHttpServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let recorder = Recorder::new();
        let requests = HttpRecorder::default();
        let app = Arc::new(App {
            script: Arc::new(script),
            options,
            recorder: recorder.clone(),
            requests: requests.clone(),
            sessions: Mutex::new(HashMap::new()),
            sse_sessions: Mutex::new(HashMap::new()),
            stateless: Mutex::new(None),
            next_session: AtomicU64::new(1),
            logs: streams::ReplyLogs::default(),
            closed_early: AtomicU64::new(0),
            fail_next: Mutex::new(None),
            restarted_as: Mutex::new(None),
        });
        let router = axum::Router::new()
            .fallback(routes::handle)
            .with_state(Arc::clone(&app));
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let stop = async {
                let _ = stop_rx.await;
            };
            // Serving ends only when asked; an accept error is not expected
            // on a loopback listener and ends the server.
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(stop)
                .await;
        });
        Ok(RunningHttpServer {
            addr,
            recorder,
            requests,
            app,
            stop: Some(stop_tx),
            task,
        })
    }
}

/// A running HTTP fake server.
pub struct RunningHttpServer {
    addr: SocketAddr,
    /// Every JSON-RPC frame the fake server connections received.
    pub recorder: Recorder,
    /// Every HTTP request received.
    pub requests: HttpRecorder,
    app: Arc<App>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for RunningHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningHttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningHttpServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The Streamable HTTP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The legacy HTTP+SSE endpoint, `http://127.0.0.1:PORT/sse`.
    pub fn sse_url(&self) -> String {
        format!("http://{}/sse", self.addr)
    }

    /// Forgets every legacy session: later requests carrying their ids get
    /// `404`, as from a server that restarted.
    pub fn expire_sessions(&self) {
        lock(&self.app.sessions).clear();
    }

    /// Acts as a server restarted as another release: every legacy session
    /// is forgotten (as [`expire_sessions`](Self::expire_sessions)), and
    /// Streamable HTTP is served by `script` from now on: its tools,
    /// versions (so its era: a release that dropped one era answers as a
    /// server of the other), self-description and instructions.
    pub fn restart_as(&self, script: Script) {
        *lock(&self.app.restarted_as) = Some(Arc::new(script));
        lock(&self.app.sessions).clear();
        *lock(&self.app.stateless) = None;
    }

    /// Answers the next `times` POSTs of JSON-RPC `method` (or, for
    /// `"GET"`, the next `times` opening of the standalone stream) with
    /// `status` and a plain-text body (a server that is not ready yet,
    /// say), from now on; replaces an earlier such order.
    pub fn fail_next(&self, status: u16, method: &str, times: u64) {
        *lock(&self.app.fail_next) = Some((method.to_owned(), status, times));
    }

    /// How many legacy Streamable HTTP sessions are open.
    pub fn session_count(&self) -> usize {
        lock(&self.app.sessions).len()
    }

    /// Ends every session and stream and stops serving (waiting at most 5 s
    /// for open connections).
    pub async fn shutdown(mut self) {
        self.close_all();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(5), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }

    fn close_all(&self) {
        lock(&self.app.sessions).clear();
        lock(&self.app.sse_sessions).clear();
        lock(&self.app.stateless).take();
    }
}

impl Drop for RunningHttpServer {
    fn drop(&mut self) {
        self.close_all();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}
