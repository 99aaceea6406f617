//! Streamable HTTP, both protocol eras.
//!
//! One driver task per connection takes frames from the outbound queue and
//! runs a POST for each (at most `max_in_flight` at once), polled by the
//! driver itself rather than spawned: a task per message cost its
//! allocation, its scheduling and its join on every call. A POST delivers
//! whatever its reply holds (a JSON body or an event stream) and resumes a
//! broken reply stream when the era allows it. The standalone GET stream is
//! a task of its own.
//!
//! ```text
//! outbound ──► driver ──► POST ──► JSON body / SSE reply ──► inbound
//!                │             └─ stream broke: wait `retry`, GET + Last-Event-ID
//!                └─ first 2xx in the legacy era ──► GET stream task ──► inbound
//! shutdown: drop POSTs, abort GET ─► DELETE (legacy session) ─► Inbound::Closed
//! ```
//!
//! Era rules, read from each frame's `protocol_version` (the session sets it):
//! `Some("2026-07-28")` is the modern era (no session id is sent or captured,
//! no GET stream, no resumption; cancelling a request closes its stream); any
//! other value, or none yet, is the legacy era (session id captured from any
//! successful reply and sent on every later request; the GET stream opens
//! after the first successful POST that carries a legacy version, that is
//! after `initialize`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tracing::Instrument as _;

use bytes::Bytes;
use futures::future::{AbortHandle, Abortable, FutureExt};
use futures::stream::{FuturesUnordered, StreamExt};
use reqwest::StatusCode;
use reqwest::header::HeaderValue;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::connection::{
    BoxFuture, CloseReason, Connection, Connector, ExitInfo, FrameKind, FrameSender, Inbound,
    OutboundFrame,
};
use crate::http::body::{Reply, read_bounded};
use crate::http::client::{
    ACCEPT_SSE, Exchange, HttpClient, MODERN_VERSION, SESSION_HEADER, VERSION_HEADER, push_header,
    push_known,
};
use crate::http::config::{HttpConfig, endpoint_key};
use crate::http::control::{DriverSignals, HttpControl, Stop, stopped};
use crate::http::envelope;
use crate::http::legacy_sse::SseConnector;
use crate::http::{get_stream, post};
use crate::{DEFAULT_QUEUE_FRAMES, TransportError};

/// Opens Streamable HTTP connections to one MCP endpoint.
///
/// `fallback()` is the legacy HTTP+SSE transport for the same URL (tried by
/// the session when a legacy `initialize` fails the way an old server would).
#[derive(Debug, Clone)]
pub struct HttpConnector {
    config: Arc<HttpConfig>,
}

impl HttpConnector {
    /// A connector for this config; nothing is checked until `connect`.
    pub fn new(config: HttpConfig) -> Self {
        Self {
            config: Arc::new(config),
        }
    }

    /// The config connections are opened with.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Checks the URL (TLS except on loopback, no credentials in it), the
    /// headers and the credential, then starts the connection's tasks. No
    /// request is sent until the first frame. Needs a tokio runtime.
    pub async fn open(&self) -> Result<Connection, TransportError> {
        let http = HttpClient::connect(Arc::clone(&self.config)).await?;
        let (out_tx, out_rx) = mpsc::channel(DEFAULT_QUEUE_FRAMES);
        let (in_tx, in_rx) = mpsc::channel(DEFAULT_QUEUE_FRAMES);
        let wait = self.config.shutdown_timeout + self.config.connect_timeout;
        let (control, signals) = HttpControl::new(wait);
        let shared = Arc::new(Streamable {
            http,
            inbound: in_tx,
            state: Mutex::new(SessionState::default()),
        });
        tokio::spawn(drive(shared, out_rx, signals).in_current_span());
        Ok(Connection {
            outbound: FrameSender::new(out_tx, self.config.max_body),
            inbound: in_rx,
            control: Box::new(control),
        })
    }
}

impl Connector for HttpConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        Box::pin(self.open())
    }

    fn is_stdio(&self) -> bool {
        false
    }

    fn cache_key(&self) -> Option<String> {
        Some(format!(
            "streamable-http {}",
            endpoint_key(&self.config.url)
        ))
    }

    fn fallback(&self) -> Option<Arc<dyn Connector>> {
        Some(Arc::new(SseConnector::from_shared(Arc::clone(
            &self.config,
        ))))
    }
}

/// State shared by the driver and its tasks.
#[derive(Debug)]
pub(crate) struct Streamable {
    pub(crate) http: HttpClient,
    pub(crate) inbound: mpsc::Sender<Inbound>,
    state: Mutex<SessionState>,
}

/// How often a lost GET stream is started again by successful POSTs.
const LOST_STREAM_RETRY: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Debug, Default)]
struct SessionState {
    /// The legacy session id the server gave us.
    session_id: Option<HeaderValue>,
    /// The standalone GET stream, once started for the current session.
    get_stream: Option<JoinHandle<()>>,
    /// That stream had been open and its task ended without it (refused
    /// when opened again, or given up on): the next successful POST starts
    /// it again, at most once a [`LOST_STREAM_RETRY`].
    get_lost: bool,
    /// When a lost GET stream was last started again.
    get_restarted: Option<std::time::Instant>,
    /// Opens when that GET stream's answer has its head (or the stream
    /// failed, or [`get_stream::HEAD_WAIT`] passed): until then the driver
    /// holds the session's next frame, so a server that sends its requests
    /// on the GET stream has it before our first request after `initialize`.
    get_ready: Option<oneshot::Receiver<()>>,
    /// The latest legacy protocol version seen on a successful POST.
    legacy_version: Option<&'static str>,
    /// The server said our session is gone (a 404 to a message that carried
    /// its id) and no new one has been given yet.
    expired: bool,
}

impl Streamable {
    fn state(&self) -> MutexGuard<'_, SessionState> {
        // Every critical section only assigns fields: a poisoned lock still
        // holds consistent data.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) async fn deliver(&self, event: Inbound) {
        // A closed receiver means the session is gone; nothing to do.
        let _ = self.inbound.send(event).await;
    }

    pub(crate) fn session_id(&self) -> Option<HeaderValue> {
        self.state().session_id.clone()
    }

    /// Whether the server ended our session and none replaced it yet.
    pub(crate) fn session_expired(&self) -> bool {
        self.state().expired
    }

    pub(crate) fn legacy_version(&self) -> Option<&'static str> {
        self.state().legacy_version
    }

    /// Remembers the session id of a legacy reply.
    pub(crate) fn capture_session(&self, id: &HeaderValue) {
        let mut state = self.state();
        if state.session_id.as_ref() != Some(id) {
            let mut id = id.clone();
            id.set_sensitive(true);
            state.session_id = Some(id);
        }
        state.expired = false;
    }

    /// The server says the session `id` is gone: forget it (if it is still
    /// the current one) and stop its GET stream, so that the session's next
    /// `initialize` goes out without one and a new GET stream follows it.
    /// True when `id` was the current session (it is forgotten now).
    pub(crate) fn forget_session(&self, id: &HeaderValue) -> bool {
        self.forget(id, true)
    }

    /// Whether the refusal `response` (with `status`) of a message that
    /// carried our session id says the server does not know the session:
    /// `404`, as the specification has it, or `400` with a body naming the
    /// session, as servers built from the TypeScript SDK's examples answer
    /// (`"Bad Request: No valid session ID provided"`). A `400`'s body is
    /// read (within [`HttpConfig::max_body`]) to tell, and handed back for
    /// the refusal's report.
    pub(crate) async fn session_unknown(
        &self,
        status: StatusCode,
        response: &mut Reply,
    ) -> (bool, Option<Bytes>) {
        match status {
            StatusCode::NOT_FOUND => (true, None),
            StatusCode::BAD_REQUEST => {
                let config = &self.http.config;
                let body = read_bounded(response, config.max_body, config.response_timeout)
                    .await
                    .ok();
                let unknown = body.as_deref().is_some_and(envelope::names_session);
                (unknown, body)
            }
            _ => (false, None),
        }
    }

    /// [`Streamable::forget_session`] from the GET stream's own task, which
    /// ends by itself: its handle is let go, not aborted.
    pub(crate) fn forget_session_from_stream(&self, id: &HeaderValue) -> bool {
        self.forget(id, false)
    }

    fn forget(&self, id: &HeaderValue, abort_stream: bool) -> bool {
        let mut state = self.state();
        if state.session_id.as_ref() != Some(id) {
            return false;
        }
        state.session_id = None;
        state.expired = true;
        if let Some(task) = state.get_stream.take()
            && abort_stream
        {
            task.abort();
        }
        true
    }

    /// After a successful POST in the legacy era: start the GET stream once
    /// per session, and again when it was lost (at most once a
    /// [`LOST_STREAM_RETRY`]): the session hears the server again once a
    /// request shows it is back.
    pub(crate) fn legacy_success(self: &Arc<Self>, version: &'static str) {
        let mut state = self.state();
        state.legacy_version = Some(version);
        let resumed = match &state.get_stream {
            None => false,
            Some(task)
                if state.get_lost
                    && task.is_finished()
                    && state
                        .get_restarted
                        .is_none_or(|at| at.elapsed() >= LOST_STREAM_RETRY) =>
            {
                tracing::debug!("opening the lost GET stream again");
                state.get_restarted = Some(std::time::Instant::now());
                true
            }
            Some(_) => return,
        };
        state.get_lost = false;
        let (ready, opened) = oneshot::channel();
        state.get_ready = Some(opened);
        state.get_stream = Some(tokio::spawn(
            get_stream::run(Arc::clone(self), ready, resumed).in_current_span(),
        ));
    }

    /// The GET stream's task ends without the stream it had open.
    pub(crate) fn get_stream_lost(&self) {
        self.state().get_lost = true;
    }

    /// The signal of a GET stream being opened, if one is.
    fn take_get_ready(&self) -> Option<oneshot::Receiver<()>> {
        self.state().get_ready.take()
    }

    fn take_get_stream(&self) -> Option<JoinHandle<()>> {
        self.state().get_stream.take()
    }
}

/// Whether a frame belongs to the modern era.
pub(crate) fn is_modern(frame: &OutboundFrame) -> bool {
    frame.protocol_version == Some(MODERN_VERSION)
}

async fn drive(
    shared: Arc<Streamable>,
    mut outbound: mpsc::Receiver<OutboundFrame>,
    signals: DriverSignals,
) {
    let DriverSignals { mut stop, done } = signals;
    let max_in_flight = shared.http.config.max_in_flight.max(1);
    // The POSTs in flight, each resolving to its request id (if a request).
    let mut posts = FuturesUnordered::new();
    // 2026-07-28 requests in flight, so that a cancellation can drop theirs.
    let mut by_request: HashMap<i64, AbortHandle> = HashMap::new();
    // Set while a notification or response is being POSTed: later frames
    // wait, so messages reach the server in the order the session sent them
    // (`notifications/initialized` before the next request).
    let mut gate: Option<oneshot::Receiver<()>> = None;
    // Made once, not on every turn of the loop (it registers a waiter).
    let stop_asked = stopped(&mut stop);
    tokio::pin!(stop_asked);
    let how = loop {
        tokio::select! {
            biased;
            how = &mut stop_asked => break how,
            // A notification's POST has its answer: if it was the one after
            // `initialize` and a GET stream is being opened, that stream
            // holds the gate next (see `SessionState::get_ready`).
            _ = wait_gate(&mut gate), if gate.is_some() => gate = shared.take_get_ready(),
            Some(request) = posts.next(), if !posts.is_empty() => {
                if let Some(request) = request {
                    by_request.remove(&request);
                }
            }
            frame = outbound.recv(), if gate.is_none() && posts.len() < max_in_flight => {
                let Some(frame) = frame else {
                    // Every sender is gone: the session has left. End politely.
                    break Stop::Shutdown;
                };
                let modern = is_modern(&frame);
                if modern && frame.method.as_deref() == Some("notifications/cancelled") {
                    // 2026-07-28 over HTTP: closing the request's stream is the
                    // cancellation; the notification itself is not sent.
                    if let Some(handle) = envelope::cancelled_request_id(&frame.bytes)
                        .and_then(|id| by_request.remove(&id))
                    {
                        handle.abort();
                    }
                    continue;
                }
                let request = match frame.kind {
                    FrameKind::Request { id } => Some(id),
                    _ => None,
                };
                let sent = match request {
                    Some(_) => None,
                    None => {
                        let (tx, rx) = oneshot::channel();
                        gate = Some(rx);
                        Some(tx)
                    }
                };
                // Only a 2026-07-28 request can be cancelled by dropping it.
                let abort = match request {
                    Some(id) if modern => {
                        let (handle, registration) = AbortHandle::new_pair();
                        by_request.insert(id, handle);
                        Some(registration)
                    }
                    _ => None,
                };
                let post = post::run(Arc::clone(&shared), frame, sent);
                posts.push(async move {
                    // A panic ends this POST only (as it ended its task),
                    // never the connection.
                    let post = std::panic::AssertUnwindSafe(post).catch_unwind();
                    match abort {
                        Some(registration) => {
                            let _ = Abortable::new(post, registration).await;
                        }
                        None => {
                            let _ = post.await;
                        }
                    }
                    request
                });
            }
        }
    };
    // Dropping a POST closes its reply (and its connection, unless the
    // reply had ended).
    drop(posts);
    if let Some(get) = shared.take_get_stream() {
        get.abort();
        let _ = get.await;
    }
    if how == Stop::Shutdown {
        delete_session(&shared).await;
    }
    let info = ExitInfo::without_process(CloseReason::Shutdown);
    let wait = shared.http.config.shutdown_timeout;
    let _ = tokio::time::timeout(wait, shared.deliver(Inbound::Closed(info.clone()))).await;
    let _ = done.send(Some(info));
}

/// Ends the server's legacy session, if there is one. 405 means the server
/// does not let clients end sessions: fine.
async fn delete_session(shared: &Streamable) {
    let Some(id) = shared.session_id() else {
        return;
    };
    let mut headers = reqwest::header::HeaderMap::new();
    push_known(&mut headers, SESSION_HEADER, id);
    if let Some(version) = shared.legacy_version() {
        // A version the session gave us that is not header text is left out.
        let _ = push_header(&mut headers, VERSION_HEADER, version);
    }
    let exchange = Exchange {
        method: reqwest::Method::DELETE,
        url: &shared.http.base,
        accept: ACCEPT_SSE,
        body: None,
        headers,
    };
    let wait = shared.http.config.shutdown_timeout;
    match tokio::time::timeout(wait, shared.http.send(&exchange)).await {
        Ok(Ok(response)) => {
            let status = response.status();
            if !status.is_success() && status != reqwest::StatusCode::METHOD_NOT_ALLOWED {
                tracing::debug!(%status, "the server refused to end the session");
            }
        }
        Ok(Err(_)) | Err(_) => tracing::debug!("ending the server's session failed"),
    }
}

/// Resolves when the POST holding the gate has its answer's head (or ended).
pub(crate) async fn wait_gate(gate: &mut Option<oneshot::Receiver<()>>) {
    match gate.as_mut() {
        // A dropped sender (the POST ended early) opens the gate too.
        Some(rx) => {
            let _ = rx.await;
        }
        None => std::future::pending().await,
    }
}
