//! The endpoint: legacy sessions (one connection of the server half each,
//! shared by the session's POSTs and its GET stream) and stateless
//! 2026-07-28 requests (one connection each).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use mcp_types::notifications::Progress;
use mcp_types::requests::{CallTool, Initialize};
use mcp_types::{Era, Notification, ProtocolVersion, Request as _, RequestId, error_codes};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::guard::Guard;
use super::resume::{Refusal, Streams};
use super::wire::{self, Head};
use super::{BACKLOG, ConnectionKind, HostConnection, HttpConfig, ResumeConfig, is_loopback};
use crate::handle::StreamCloser;
use crate::serve::{OutFrame, serve_frames};
use crate::{ServerConfig, ServerHandle, ServerHandler};

/// Messages waiting on one response stream.
const STREAM_QUEUE: usize = 64;
/// The header naming the last event a resuming client got.
const LAST_EVENT_ID: &str = "last-event-id";
/// Messages waiting for a connection's driver.
const INPUT_QUEUE: usize = 16;
/// Messages a driver may have written before the HTTP side takes them.
const OUTPUT_QUEUE: usize = 64;

type Connect<H> = dyn Fn(HostConnection) -> Arc<H> + Send + Sync;

/// What the endpoint's requests share.
pub(super) struct Shared<H: ServerHandler> {
    guard: Guard,
    config: HttpConfig,
    server: ServerConfig,
    connect: Box<Connect<H>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Cancelled at shutdown: every stream ends.
    closing: CancellationToken,
    /// Touched by every request ([`HttpConfig::busy_poll`]).
    busy: Option<crate::BusyPoll>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<H: ServerHandler> Shared<H> {
    pub(super) fn new<C>(
        addr: SocketAddr,
        config: HttpConfig,
        server: ServerConfig,
        connect: C,
    ) -> Arc<Self>
    where
        C: Fn(HostConnection) -> Arc<H> + Send + Sync + 'static,
    {
        Arc::new(Self {
            guard: Guard::new(&config, is_loopback(&addr)),
            busy: config.busy_poll.map(crate::BusyPoll::start),
            config,
            server,
            connect: Box::new(connect),
            sessions: Mutex::new(HashMap::new()),
            closing: CancellationToken::new(),
        })
    }

    /// Ends every session and stream (shutdown).
    pub(super) fn end_all(&self) {
        self.closing.cancel();
        let sessions: Vec<_> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.end();
        }
    }

    /// A new connection of the server half for a legacy session: its
    /// driver runs on a task of its own; returns where to send its input
    /// and where its output comes. Its requests' contexts close their
    /// event streams' connections through `session` once it is set.
    fn open_session(
        &self,
        session: &Arc<OnceLock<Weak<Session>>>,
    ) -> (ServerHandle, mpsc::Sender<Bytes>, mpsc::Receiver<OutFrame>) {
        let session = Arc::clone(session);
        let closer = StreamCloser(Arc::new(move |id: &RequestId| {
            session
                .get()
                .and_then(Weak::upgrade)
                .is_some_and(|s| lock(&s.routes).poll(id, true))
        }));
        let (handle, input, output, _) =
            self.open_with_handler(ConnectionKind::Session, Some(closer));
        (handle, input, output)
    }

    /// [`Shared::open`], with the connection's handler.
    #[allow(clippy::type_complexity)]
    fn open_with_handler(
        &self,
        kind: ConnectionKind,
        closer: Option<StreamCloser>,
    ) -> (
        ServerHandle,
        mpsc::Sender<Bytes>,
        mpsc::Receiver<OutFrame>,
        Arc<H>,
    ) {
        let (handle, mut outbox) = ServerHandle::new();
        outbox.closer = closer;
        let handler = (self.connect)(HostConnection {
            handle: handle.clone(),
            kind,
        });
        let (input, input_rx) = mpsc::channel(INPUT_QUEUE);
        let (output_tx, output) = mpsc::channel(OUTPUT_QUEUE);
        tokio::spawn(serve_frames(
            input_rx,
            output_tx,
            Arc::clone(&handler),
            self.server.clone(),
            outbox,
        ));
        (handle, input, output, handler)
    }
}

/// Ends idle sessions and forgets ended ones, until the endpoint is gone.
pub(super) async fn sweep<H: ServerHandler>(shared: Weak<Shared<H>>) {
    let period = match shared.upgrade() {
        Some(s) => {
            (s.config.session_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(60))
        }
        None => return,
    };
    loop {
        tokio::time::sleep(period).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let idle = shared.config.session_idle;
        let now = Instant::now();
        let ended: Vec<Arc<Session>> = {
            let mut sessions = lock(&shared.sessions);
            let gone: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.is_over() || s.idle_since(now) >= idle)
                .map(|(id, _)| id.clone())
                .collect();
            gone.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in ended {
            tracing::debug!("a legacy session ended (idle or closed)");
            session.end();
        }
    }
}

/// A legacy session.
struct Session {
    input: Mutex<Option<mpsc::Sender<Bytes>>>,
    routes: Mutex<Routes>,
    last_seen: Mutex<Instant>,
    handle: ServerHandle,
}

/// Where the session's messages go.
#[derive(Default)]
struct Routes {
    /// The client's requests waiting for their answers.
    waiting: HashMap<RequestId, Waiter>,
    /// Progress token (JSON text) → request.
    tokens: HashMap<String, RequestId>,
    /// The GET stream.
    get: Option<mpsc::Sender<Bytes>>,
    /// Messages for the next GET stream.
    backlog: VecDeque<Bytes>,
    /// The driver ended: nothing more comes.
    over: bool,
    /// The resumable response streams (a session that negotiated
    /// 2025-11-25 or later).
    streams: Option<Streams>,
}

struct Waiter {
    reply: Reply,
    token: Option<String>,
}

/// How a request's answer reaches its POST.
enum Reply {
    /// JSON when the answer comes first, else an event stream of the
    /// messages as they come, without ids (sessions before 2025-11-25,
    /// `initialize`).
    Plain {
        stream: mpsc::Sender<Bytes>,
        done: oneshot::Sender<Answered>,
    },
    /// Resumable, nothing sent yet: JSON when the answer comes first.
    Undecided(oneshot::Sender<Decision>),
    /// Resumable, answered with this event stream of the session's.
    Streaming(u64),
}

/// What a POST of a resumable session answers with.
enum Decision {
    Json(Bytes),
    /// The receiver of the stream's connection (its priming event first).
    Stream(mpsc::Receiver<Bytes>),
}

/// A request's answer, with the HTTP status it is sent with as JSON.
struct Answered {
    message: Bytes,
    status: StatusCode,
}

impl Answered {
    /// An answer of a legacy session: always `200`.
    fn ok(message: Bytes) -> Self {
        Self {
            message,
            status: StatusCode::OK,
        }
    }
}

impl Session {
    fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    fn idle_since(&self, now: Instant) -> Duration {
        let routes = lock(&self.routes);
        if !routes.waiting.is_empty() || routes.get.as_ref().is_some_and(|g| !g.is_closed()) {
            return Duration::ZERO;
        }
        now.saturating_duration_since(*lock(&self.last_seen))
    }

    fn is_over(&self) -> bool {
        lock(&self.routes).over || self.handle.peer().closed
    }

    fn input(&self) -> Option<mpsc::Sender<Bytes>> {
        lock(&self.input).clone()
    }

    /// Ends the session: its driver sees the end of its input (requests in
    /// flight are cancelled), its streams end.
    fn end(&self) {
        lock(&self.input).take();
        let mut routes = lock(&self.routes);
        routes.over = true;
        routes.waiting.clear();
        routes.get = None;
        routes.backlog.clear();
        if let Some(streams) = &mut routes.streams {
            streams.clear();
        }
    }
}

impl Routes {
    /// Sends `message` on request `id`'s response: a resumable one that
    /// has not begun begins its event stream with it. `Err` gives it back
    /// when the request is not waited on or its stream cannot take it.
    fn related(&mut self, id: &RequestId, message: Bytes) -> Result<(), Bytes> {
        let Some(waiter) = self.waiting.get_mut(id) else {
            return Err(message);
        };
        let now = Instant::now();
        match &mut waiter.reply {
            Reply::Plain { stream, .. } => stream.try_send(message).map_err(|e| match e {
                mpsc::error::TrySendError::Full(m) | mpsc::error::TrySendError::Closed(m) => m,
            }),
            Reply::Streaming(number) => {
                if let Some(streams) = &mut self.streams {
                    streams.push(*number, &message, false, now);
                }
                Ok(())
            }
            Reply::Undecided(_) => {
                let Some(streams) = &mut self.streams else {
                    return Err(message);
                };
                let (number, rx) = streams.open(now);
                streams.push(number, &message, false, now);
                if let Reply::Undecided(decide) =
                    std::mem::replace(&mut waiter.reply, Reply::Streaming(number))
                {
                    let _ = decide.send(Decision::Stream(rx));
                }
                Ok(())
            }
        }
    }

    /// Request `id`'s answer: its waiter is done.
    fn answered(&mut self, id: &RequestId, message: Bytes) {
        let Some(waiter) = self.waiting.remove(id) else {
            return;
        };
        if let Some(token) = &waiter.token {
            self.tokens.remove(token);
        }
        match waiter.reply {
            Reply::Plain { done, .. } => {
                let _ = done.send(Answered::ok(message));
            }
            Reply::Undecided(decide) => {
                let _ = decide.send(Decision::Json(message));
            }
            Reply::Streaming(number) => {
                if let Some(streams) = &mut self.streams {
                    streams.push(number, &message, true, Instant::now());
                }
            }
        }
    }

    /// Closes the connection answering request `id` (a resumable one):
    /// one that has not begun begins its event stream (its priming event)
    /// and, when `now_too`, is closed at once after a `retry` hint. The
    /// request goes on; the client resumes with `Last-Event-ID`. Whether
    /// there was such a connection.
    fn poll(&mut self, id: &RequestId, now_too: bool) -> bool {
        let (Some(waiter), Some(streams)) = (self.waiting.get_mut(id), &mut self.streams) else {
            return false;
        };
        match &waiter.reply {
            Reply::Plain { .. } => false,
            Reply::Streaming(number) => streams.close(*number),
            Reply::Undecided(_) => {
                let (number, rx) = streams.open(Instant::now());
                if now_too {
                    streams.close(number);
                }
                if let Reply::Undecided(decide) =
                    std::mem::replace(&mut waiter.reply, Reply::Streaming(number))
                {
                    let _ = decide.send(Decision::Stream(rx));
                }
                true
            }
        }
    }

    /// A message related to no request the session waits on.
    fn unrelated(&mut self, message: Bytes) {
        if let Some(get) = &self.get {
            match get.try_send(message) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::debug!("a message for a slow GET stream was dropped");
                    return;
                }
                Err(mpsc::error::TrySendError::Closed(m)) => {
                    self.get = None;
                    return self.unrelated(m);
                }
            }
        }
        // Any open response stream of the session: the client takes
        // requests and notifications on every stream (not one whose
        // connection is closed: it may never come back for it).
        let ids: Vec<RequestId> = self.waiting.keys().cloned().collect();
        let mut message = Some(message);
        for id in &ids {
            let offline = match self.waiting.get(id).map(|w| &w.reply) {
                Some(Reply::Streaming(number)) => {
                    !self.streams.as_ref().is_some_and(|s| s.is_live(*number))
                }
                _ => false,
            };
            if offline {
                continue;
            }
            if let Some(m) = message.take()
                && let Err(m) = self.related(id, m)
            {
                message = Some(m);
            }
        }
        if let Some(m) = message {
            if self.backlog.len() >= BACKLOG {
                self.backlog.pop_front();
                tracing::debug!("a message waiting for a GET stream was dropped (backlog bound)");
            }
            self.backlog.push_back(m);
        }
    }
}

/// Hands the session's output to its POSTs and its GET stream.
async fn route(session: Arc<Session>, mut output: mpsc::Receiver<OutFrame>) {
    while let Some(frame) = output.recv().await {
        let bytes = Bytes::from(frame.bytes);
        let Ok(head) = serde_json::from_slice::<Head<'_>>(&bytes) else {
            continue;
        };
        let mut routes = lock(&session.routes);
        if head.is_response() {
            if let Some(id) = &head.id {
                routes.answered(id, bytes.clone());
            }
            continue;
        }
        let is_progress = head.method.as_deref() == Some(Progress::METHOD);
        let target = frame.related.clone().or_else(|| {
            is_progress
                .then(|| wire::progress_token(&head.params_value(), true))
                .flatten()
                .and_then(|t| routes.tokens.get(&t).cloned())
        });
        drop(head);
        if let Some(id) = target
            && routes.waiting.contains_key(&id)
        {
            if routes.related(&id, bytes.clone()).is_err() {
                tracing::debug!("a message for a slow response stream was dropped");
            }
            continue;
        }
        if is_progress {
            // For a request answered already: stray.
            continue;
        }
        routes.unrelated(bytes);
    }
    let mut routes = lock(&session.routes);
    routes.over = true;
    routes.waiting.clear();
    routes.get = None;
    if let Some(streams) = &mut routes.streams {
        streams.clear();
    }
}

/// Every request to the endpoint.
pub(super) async fn handle<H: ServerHandler>(
    State(shared): State<Arc<Shared<H>>>,
    request: Request,
) -> Response {
    if let Err(refusal) = shared.guard.check(request.headers()) {
        tracing::debug!(?refusal, "a request was refused at the door");
        let mut response = wire::error(refusal.status(), wire::SERVER_ERROR, refusal.message());
        // A refused peer does not keep its connection: it cannot hold a
        // place under the connection bound with requests it may not make.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        if refusal == super::guard::Refusal::Unauthorized {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        return response;
    }
    if request.uri().path() != shared.config.path {
        return wire::error(
            StatusCode::NOT_FOUND,
            wire::SERVER_ERROR,
            "no MCP endpoint at this path",
        );
    }
    match *request.method() {
        Method::POST => post(&shared, request).await,
        Method::GET => get(&shared, request.headers()),
        Method::DELETE => delete(&shared, request.headers()),
        _ => {
            let mut response = wire::error(
                StatusCode::METHOD_NOT_ALLOWED,
                wire::SERVER_ERROR,
                "the MCP endpoint takes POST, GET and DELETE",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            response
        }
    }
}

/// A session id that names no open session.
struct UnknownSession;

fn unknown_session() -> Response {
    wire::error(
        StatusCode::NOT_FOUND,
        wire::SESSION_NOT_FOUND,
        "Session not found (it ended or never existed): initialize a new one",
    )
}

/// The session a request names: `Ok(None)` without the header.
fn session_of<H: ServerHandler>(
    shared: &Shared<H>,
    headers: &HeaderMap,
) -> Result<Option<Arc<Session>>, UnknownSession> {
    let Some(id) = headers.get(wire::SESSION_ID) else {
        return Ok(None);
    };
    id.to_str()
        .ok()
        .and_then(|id| lock(&shared.sessions).get(id).cloned())
        .filter(|s| !s.is_over())
        .map(Some)
        .ok_or(UnknownSession)
}

fn session_required() -> Response {
    wire::error(
        StatusCode::BAD_REQUEST,
        wire::SERVER_ERROR,
        "Bad Request: Mcp-Session-Id header is required",
    )
}

async fn post<H: ServerHandler>(shared: &Arc<Shared<H>>, request: Request) -> Response {
    if let Some(busy) = &shared.busy {
        busy.touch();
    }
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    // A client must take JSON and event streams; one that names neither
    // (nor `*/*`) could read no answer of ours.
    let accepts = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| {
            v.contains("application/json") || v.contains("text/event-stream") || v.contains("*/*")
        });
    if !accepts {
        return wire::error(
            StatusCode::NOT_ACCEPTABLE,
            wire::SERVER_ERROR,
            "Not Acceptable: the client must accept application/json and text/event-stream",
        );
    }
    if !json_type {
        return wire::error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            wire::SERVER_ERROR,
            "the body must be application/json",
        );
    }
    let limit = shared.config.max_body;
    let read = tokio::time::timeout(
        shared.config.request_read_timeout,
        axum::body::to_bytes(body, limit),
    );
    let body = match read.await {
        Ok(Ok(body)) => body,
        Err(_) => {
            let mut answer = wire::error(
                StatusCode::REQUEST_TIMEOUT,
                wire::SERVER_ERROR,
                &format!(
                    "the request body did not arrive within {:?}",
                    shared.config.request_read_timeout
                ),
            );
            // The rest of the body may still come: the connection is not
            // reused.
            answer.headers_mut().insert(
                header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
            return answer;
        }
        Ok(Err(_)) => {
            return wire::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                wire::SERVER_ERROR,
                &format!(
                    "the request body is larger than this server's bound of {limit} bytes (or could not be read)"
                ),
            );
        }
    };
    let head = match serde_json::from_slice::<Head<'_>>(&body) {
        Ok(head) => head,
        Err(_) => {
            return wire::error(
                StatusCode::BAD_REQUEST,
                error_codes::PARSE_ERROR,
                "Parse error: the body is not one JSON-RPC message",
            );
        }
    };
    let version = match wire::header_version(&headers) {
        Ok(version) => version,
        Err(requested) => {
            return wire::unsupported_version(
                head.request_id(),
                &requested,
                &shared.server.version_names(),
            );
        }
    };
    let session = match session_of(shared, &headers) {
        Ok(session) => session,
        Err(UnknownSession) => return unknown_session(),
    };
    let method = head.method.as_deref().map(str::to_owned);
    let id = head.request_id().cloned();
    let params = head.params_value();
    let token = wire::progress_token(&params, false);
    drop(head);
    if let Some(session) = session {
        session.touch();
        return legacy(session, body, id, token, &shared.config).await;
    }
    let modern = version.is_some_and(|v| v.era() == Era::Modern)
        || wire::meta_version(&params)
            .and_then(mcp_types::ProtocolVersion::parse)
            .is_some_and(|v| v.era() == Era::Modern);
    // `initialize` opens a legacy session; sent as a 2026-07-28 request it
    // is a method that era does not have (the core answers -32601: 404).
    if method.as_deref() == Some(Initialize::METHOD) && !modern {
        return initialize(shared, body, id).await;
    }
    if !modern {
        return session_required();
    }
    if let Some(method) = &method
        && let Err(message) = wire::check_modern(&headers, method, &params)
    {
        // The request's id is known: the answer names it.
        return wire::mismatch_of(id.as_ref(), &message);
    }
    // A tool call's `Mcp-Param-*` headers are checked against the tool
    // as the connection's handler serves it.
    let call = (method.as_deref() == Some(CallTool::METHOD)).then_some((&headers, &params));
    stateless(shared, body, id, call).await
}

/// A message to a legacy session.
async fn legacy(
    session: Arc<Session>,
    body: Bytes,
    id: Option<RequestId>,
    token: Option<String>,
    config: &HttpConfig,
) -> Response {
    let Some(input) = session.input() else {
        return wire::error(
            StatusCode::NOT_FOUND,
            wire::SESSION_NOT_FOUND,
            "Session not found (it ended)",
        );
    };
    let Some(id) = id else {
        // A notification or an answer to a request of ours.
        return match input.send(body).await {
            Ok(()) => wire::empty(StatusCode::ACCEPTED),
            Err(_) => wire::error(
                StatusCode::NOT_FOUND,
                wire::SESSION_NOT_FOUND,
                "Session not found (it ended)",
            ),
        };
    };
    let (stream_tx, stream) = mpsc::channel(STREAM_QUEUE);
    let (done_tx, done) = oneshot::channel();
    let (decide_tx, decision) = oneshot::channel();
    let resumable = {
        let mut routes = lock(&session.routes);
        if routes.waiting.contains_key(&id) {
            return wire::error(
                StatusCode::BAD_REQUEST,
                error_codes::INVALID_REQUEST,
                "a request with this id is in flight in this session",
            );
        }
        if let Some(token) = &token {
            routes.tokens.insert(token.clone(), id.clone());
        }
        let resumable = routes.streams.is_some();
        let reply = if resumable {
            Reply::Undecided(decide_tx)
        } else {
            Reply::Plain {
                stream: stream_tx,
                done: done_tx,
            }
        };
        routes.waiting.insert(id.clone(), Waiter { reply, token });
        resumable
    };
    if input.send(body).await.is_err() {
        lock(&session.routes).waiting.remove(&id);
        return wire::error(
            StatusCode::NOT_FOUND,
            wire::SESSION_NOT_FOUND,
            "Session not found (it ended)",
        );
    }
    if resumable {
        decide(&session, &id, decision, &config.resume).await
    } else {
        answer(stream, done, config.keep_alive).await
    }
}

/// The answer to a request of a resumable session: JSON when the answer
/// comes first (within [`ResumeConfig::hold`]), else its event stream.
async fn decide(
    session: &Session,
    id: &RequestId,
    mut decision: oneshot::Receiver<Decision>,
    resume: &ResumeConfig,
) -> Response {
    let deadline = resume.hold.map(|hold| tokio::time::Instant::now() + hold);
    let decided = match deadline {
        None => decision.await,
        Some(at) => tokio::select! {
            biased;
            decided = &mut decision => decided,
            () = tokio::time::sleep_until(at) => {
                // Still running: an event stream of the priming event
                // alone, closed below (the request goes on).
                lock(&session.routes).poll(id, false);
                decision.await
            }
        },
    };
    match decided {
        Ok(Decision::Json(message)) => wire::json(message),
        Ok(Decision::Stream(events)) => resumable_stream(events, deadline, resume),
        Err(_) => wire::error(
            StatusCode::NOT_FOUND,
            wire::SESSION_NOT_FOUND,
            "the session ended before the request was answered",
        ),
    }
}

/// One connection of a resumable stream: its events until the stream's
/// end, or until `deadline`, when it closes after a `retry` hint.
fn resumable_stream(
    events: mpsc::Receiver<Bytes>,
    deadline: Option<tokio::time::Instant>,
    resume: &ResumeConfig,
) -> Response {
    let retry = Bytes::from(format!("retry: {}\n\n", resume.retry.as_millis()));
    let state = (events, false);
    let body = futures::stream::unfold(state, move |(mut events, closed)| {
        let retry = retry.clone();
        async move {
            if closed {
                return None;
            }
            let next = match deadline {
                None => events.recv().await,
                Some(at) => tokio::select! {
                    biased;
                    next = events.recv() => next,
                    () = tokio::time::sleep_until(at) => {
                        return Some((Ok::<_, std::io::Error>(retry), (events, true)));
                    }
                },
            };
            next.map(|event| (Ok(event), (events, false)))
        }
    });
    wire::stream(Body::from_stream(body))
}

/// The answer to one request: JSON when the answer comes first, else an
/// event stream of what comes before it, then it.
///
/// An answer sent as JSON carries its status (a stateless answer the one
/// of its error, [`wire::stateless_status`]); once an event stream has
/// begun, the status is 200 whatever the answer.
async fn answer(
    mut stream: mpsc::Receiver<Bytes>,
    mut done: oneshot::Receiver<Answered>,
    keep_alive: Option<Duration>,
) -> Response {
    let first = tokio::select! {
        biased;
        Some(first) = stream.recv() => first,
        answered = &mut done => return match answered {
            Ok(Answered { message, status }) => {
                let mut response = wire::json(message);
                *response.status_mut() = status;
                response
            }
            Err(_) => wire::error(
                StatusCode::NOT_FOUND,
                wire::SESSION_NOT_FOUND,
                "the session ended before the request was answered",
            ),
        },
    };
    let state = (Some(first), stream, Some(done));
    let events = futures::stream::unfold(state, move |(first, mut stream, mut done)| async move {
        if let Some(first) = first {
            return Some((
                Ok::<_, std::io::Error>(wire::event(&first)),
                (None, stream, done),
            ));
        }
        let quiet = quiet_for(keep_alive);
        tokio::pin!(quiet);
        if !stream.is_closed() || !stream.is_empty() {
            tokio::select! {
                biased;
                message = stream.recv() => if let Some(message) = message {
                    return Some((Ok(wire::event(&message)), (None, stream, done)));
                },
                () = &mut quiet => return Some((Ok(wire::keep_alive()), (None, stream, done))),
            }
        }
        let answered = tokio::select! {
            answered = done.as_mut()? => answered.ok()?,
            () = &mut quiet => return Some((Ok(wire::keep_alive()), (None, stream, done))),
        };
        Some((Ok(wire::event(&answered.message)), (None, stream, None)))
    });
    wire::stream(Body::from_stream(events))
}

/// `initialize` without a session: a new session, if its answer is a
/// result.
async fn initialize<H: ServerHandler>(
    shared: &Arc<Shared<H>>,
    body: Bytes,
    id: Option<RequestId>,
) -> Response {
    let Some(id) = id else {
        return wire::error(
            StatusCode::BAD_REQUEST,
            error_codes::INVALID_REQUEST,
            "initialize must be a request",
        );
    };
    let max = shared.config.max_sessions;
    if lock(&shared.sessions).len() >= max {
        tracing::warn!(max, "an initialize was refused: too many sessions (bound)");
        return wire::error(
            StatusCode::SERVICE_UNAVAILABLE,
            wire::SERVER_ERROR,
            &format!("too many sessions: this server holds at most {max}"),
        );
    }
    let session_id = match session_id() {
        Some(id) => id,
        None => {
            return wire::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                error_codes::INTERNAL_ERROR,
                "no random session id could be made",
            );
        }
    };
    let slot = Arc::new(OnceLock::new());
    let (handle, input, output) = shared.open_session(&slot);
    let session = Arc::new(Session {
        input: Mutex::new(Some(input.clone())),
        routes: Mutex::new(Routes::default()),
        last_seen: Mutex::new(Instant::now()),
        handle,
    });
    let _ = slot.set(Arc::downgrade(&session));
    tokio::spawn(route(Arc::clone(&session), output));
    let (stream_tx, _stream) = mpsc::channel(1);
    let (done_tx, done) = oneshot::channel();
    lock(&session.routes).waiting.insert(
        id,
        Waiter {
            reply: Reply::Plain {
                stream: stream_tx,
                done: done_tx,
            },
            token: None,
        },
    );
    if input.send(body).await.is_err() {
        return wire::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            error_codes::INTERNAL_ERROR,
            "the session could not start",
        );
    }
    let Ok(Answered { message, .. }) = done.await else {
        return wire::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            error_codes::INTERNAL_ERROR,
            "the session ended at once",
        );
    };
    let accepted = serde_json::from_slice::<Head<'_>>(&message).is_ok_and(|h| h.result.is_some());
    // Streams are resumable from 2025-11-25 on (SEP-1699: the priming
    // event and the server's polling came with it).
    let resumable = wire::negotiated(&message).is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
    let mut response = wire::json(message);
    if accepted {
        if resumable {
            lock(&session.routes).streams = Streams::new(shared.config.resume.clone());
        }
        lock(&shared.sessions).insert(session_id.clone(), session);
        if let Ok(value) = HeaderValue::from_str(&session_id) {
            response.headers_mut().insert(wire::SESSION_ID, value);
        }
    } else {
        session.end();
    }
    response
}

/// 128 random bits from the OS, as hex.
fn session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A stateless 2026-07-28 message, on a connection of its own.
async fn stateless<H: ServerHandler>(
    shared: &Arc<Shared<H>>,
    body: Bytes,
    id: Option<RequestId>,
    call: Option<(&HeaderMap, &serde_json::Value)>,
) -> Response {
    let (handle, input, mut output, handler) =
        shared.open_with_handler(ConnectionKind::Request, None);
    if let Some((headers, params)) = call
        && let Err(message) = wire::check_param_headers(&*handler, headers, params)
    {
        // The connection ends unused.
        return wire::mismatch_of(id.as_ref(), &message);
    }
    drop(handler);
    if input.send(body).await.is_err() {
        return wire::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            error_codes::INTERNAL_ERROR,
            "the request could not be served",
        );
    }
    let Some(id) = id else {
        // Nothing answers a notification; the connection ends with it.
        drop(input);
        return wire::empty(StatusCode::ACCEPTED);
    };
    // Hands the connection's output to the answer: everything before the
    // answer on the stream, then the answer.
    let (stream_tx, stream) = mpsc::channel(STREAM_QUEUE);
    let (done_tx, done) = oneshot::channel();
    let closing = shared.closing.clone();
    tokio::spawn(async move {
        let mut done_tx = Some(done_tx);
        loop {
            tokio::select! {
                frame = output.recv() => {
                    let Some(frame) = frame else { break };
                    let bytes = Bytes::from(frame.bytes);
                    // The one read of the frame: whether it is the answer,
                    // and the status its error (if any) is sent with.
                    let status = serde_json::from_slice::<Head<'_>>(&bytes)
                        .ok()
                        .filter(|h| h.is_response() && h.id.as_ref() == Some(&id))
                        .map(|h| wire::stateless_status(h.error));
                    if let Some(status) = status {
                        if let Some(done) = done_tx.take() {
                            let _ = done.send(Answered { message: bytes, status });
                        }
                        break;
                    }
                    if stream_tx.try_send(bytes).is_err() {
                        tracing::debug!("a message for a slow response stream was dropped");
                    }
                }
                // The client went away (or the server stops): the
                // connection ends, its request is cancelled.
                () = stream_tx.closed() => break,
                () = closing.cancelled() => break,
            }
        }
        drop(input);
        drop(handle);
    });
    answer(stream, done, shared.config.keep_alive).await
}

/// Resolves after `keep_alive` (never without one).
async fn quiet_for(keep_alive: Option<Duration>) {
    match keep_alive {
        Some(every) => tokio::time::sleep(every).await,
        None => std::future::pending().await,
    }
}

/// `GET`: the session's stream.
fn get<H: ServerHandler>(shared: &Arc<Shared<H>>, headers: &HeaderMap) -> Response {
    let accepts = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    if !accepts {
        return wire::error(
            StatusCode::NOT_ACCEPTABLE,
            wire::SERVER_ERROR,
            "Not Acceptable: a GET stream needs Accept: text/event-stream",
        );
    }
    let session = match session_of(shared, headers) {
        Ok(Some(session)) => session,
        Ok(None) => {
            let modern = wire::header_version(headers)
                .ok()
                .flatten()
                .is_some_and(|v| v.era() == Era::Modern);
            if modern {
                let mut response = wire::error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    wire::SERVER_ERROR,
                    "2026-07-28 has no GET stream: use subscriptions/listen",
                );
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("POST"));
                return response;
            }
            return session_required();
        }
        Err(UnknownSession) => return unknown_session(),
    };
    session.touch();
    if let Some(last) = headers.get(LAST_EVENT_ID) {
        return resume(&session, last, &shared.config.resume);
    }
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    {
        let mut routes = lock(&session.routes);
        if routes.get.as_ref().is_some_and(|g| !g.is_closed()) {
            return wire::error(
                StatusCode::CONFLICT,
                wire::SERVER_ERROR,
                "Conflict: this session has a GET stream open already",
            );
        }
        while let Some(m) = routes.backlog.pop_front() {
            if tx.try_send(m).is_err() {
                break;
            }
        }
        routes.get = Some(tx);
    }
    let closing = shared.closing.clone();
    let keep_alive = shared.config.keep_alive;
    let events = futures::stream::unfold((rx, closing), move |(mut rx, closing)| async move {
        let bytes = tokio::select! {
            m = rx.recv() => wire::event(&m?),
            () = closing.cancelled() => return None,
            () = quiet_for(keep_alive) => wire::keep_alive(),
        };
        Some((Ok::<_, std::io::Error>(bytes), (rx, closing)))
    });
    wire::stream(Body::from_stream(events))
}

/// `GET` with `Last-Event-ID`: the rest of the response stream it names.
fn resume(session: &Session, last: &HeaderValue, config: &ResumeConfig) -> Response {
    let resumed = match last.to_str() {
        Ok(last) => match &mut lock(&session.routes).streams {
            Some(streams) => streams.resume(last, Instant::now()),
            None => Err(Refusal::Unknown),
        },
        Err(_) => Err(Refusal::Unknown),
    };
    match resumed {
        Ok(events) => {
            let deadline = config.hold.map(|hold| tokio::time::Instant::now() + hold);
            resumable_stream(events, deadline, config)
        }
        Err(Refusal::Unknown) => wire::error(
            StatusCode::BAD_REQUEST,
            wire::SERVER_ERROR,
            "Bad Request: Last-Event-ID names no event stream of this session",
        ),
        Err(Refusal::Gone) => wire::error(
            StatusCode::GONE,
            wire::SERVER_ERROR,
            "Gone: the event stream Last-Event-ID names can no longer be resumed from it (a bound of this server let its events go)",
        ),
    }
}

/// `DELETE`: ends the session.
fn delete<H: ServerHandler>(shared: &Arc<Shared<H>>, headers: &HeaderMap) -> Response {
    let session = match session_of(shared, headers) {
        Ok(Some(session)) => session,
        Ok(None) => return session_required(),
        Err(UnknownSession) => return unknown_session(),
    };
    let id = headers
        .get(wire::SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    lock(&shared.sessions).remove(id);
    session.end();
    tracing::debug!("a legacy session was ended by its client");
    wire::empty(StatusCode::NO_CONTENT)
}
