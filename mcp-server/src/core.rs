//! The sans-IO server core of one connection.
//!
//! [`ServerCore`] is a synchronous, deterministic state machine: it never
//! awaits, never reads a clock (the calls that depend on time take `now`)
//! and never touches a socket or a pipe. It owns the protocol: the legacy
//! handshake, the 2026-07-28 per-request rules and `server/discover`,
//! `ping`, which methods exist and reach the application, the table of
//! requests in flight with their progress tokens and cancellations, the
//! server's own requests to the client, the JSON-RPC answers to malformed
//! input, and every bound. The application only serves methods.
//!
//! Inputs: [`ServerCore::handle_frame`], [`ServerCore::handle_oversized`],
//! [`ServerCore::handle_timeout`], [`ServerCore::handle_closed`], and the
//! application's [`respond`](ServerCore::respond),
//! [`progress`](ServerCore::progress), [`notify`](ServerCore::notify),
//! [`notify_request`](ServerCore::notify_request),
//! [`send_request`](ServerCore::send_request). Outputs, drained after
//! every input: [`poll_transmit`](ServerCore::poll_transmit) (frames to
//! write, one JSON-RPC message each, without the newline),
//! [`poll_event`](ServerCore::poll_event) (work for the application), then
//! [`poll_timeout`](ServerCore::poll_timeout) (when to call
//! `handle_timeout`).
//!
//! ```text
//!            legacy                                   2026-07-28
//!   Fresh ──initialize──► Answered ──initialized──►   (no state: every request
//!     │ ping answered         │ requests served        names its version and
//!     │ others: -32600        │ server requests: no    capabilities in _meta)
//!     └───────────────────────┴──► Initialized: server requests allowed
//!
//!   request ──► Queued ──poll_event──► Delivered ──respond──► answered
//!                 │                       │
//!            cancelled: dropped      cancelled: Event::Cancelled ──respond──► swallowed
//! ```
//!
//! A dual-era server decides per request (the spec's rule): a request whose
//! `_meta` names a protocol version, and `server/discover`, are served
//! statelessly; anything else belongs to the legacy session that
//! `initialize` opens. Both may share one connection.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_types::notifications::{Cancelled, Initialized, Progress};
use mcp_types::requests::{Discover, Initialize, Ping};
use mcp_types::{
    CancelledParams, ClientCapabilities, DiscoverResult, EmptyResult, Era, ErrorObject, Incoming,
    IncomingMessage, InitializeParams, InitializeResult, Meta, Notification, OutgoingError,
    OutgoingNotification, OutgoingRequest, OutgoingResult, ProgressParams, ProgressToken,
    ProtocolVersion, Request, RequestId, ServerCapabilities, ServerNotification, ServerRequest,
    error_codes, meta_keys,
};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::{ServerConfig, ServerError};

mod edge;
mod events;
mod modern;
mod route;
/// The capabilities as declared to a client of `version`: the `tasks`
/// capability exists in 2025-11-25 only (earlier versions have no tasks,
/// and 2026-07-28 has the tasks extension instead), so it is shown to no
/// other version's client.
fn capabilities_in(declared: &ServerCapabilities, version: ProtocolVersion) -> ServerCapabilities {
    let mut shown = declared.clone();
    if version != ProtocolVersion::V2025_11_25 {
        shown.tasks = None;
    }
    shown
}

#[cfg(test)]
mod tests;

pub use events::{
    ClientContext, Event, IncomingRequest, LegacySession, ResponseError, ServerStats, Violation,
};

use edge::SkippedMessage;
use route::{Features, ResultKind};

/// Where a request held by the application stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// Its [`Event::Request`] waits in the event queue.
    Queued,
    /// The application took it.
    Delivered,
    /// The client cancelled it after the application took it: the answer
    /// will be swallowed.
    Cancelled,
}

#[derive(Debug)]
struct InFlight {
    state: Held,
    era: Era,
    kind: ResultKind,
    progress_token: Option<ProgressToken>,
    /// The last progress sent (negative infinity before the first).
    last_progress: f64,
}

/// A request the server sent to the client.
#[derive(Debug)]
struct Outgoing {
    deadline: Instant,
    /// Set when the request asked for progress (its token is its id): the
    /// last progress the client reported for it, `NEG_INFINITY` before any.
    progress: Option<f64>,
}

/// The server side of one MCP connection, without IO. See the module docs.
#[derive(Debug)]
pub struct ServerCore {
    config: ServerConfig,
    capabilities: ServerCapabilities,
    features: Features,
    /// `serverInfo` as JSON, for 2026-07-28 results.
    info: Value,
    legacy: Option<LegacySession>,
    in_flight: HashMap<RequestId, InFlight>,
    outgoing: HashMap<RequestId, Outgoing>,
    next_outgoing: i64,
    events: VecDeque<Event>,
    transmit: VecDeque<Vec<u8>>,
    stats: ServerStats,
    closed: bool,
}

impl ServerCore {
    /// A core for one connection of a server described by `config`, offering
    /// `capabilities` (the methods of an undeclared capability are answered
    /// `-32601` and never reach the application).
    pub fn new(config: ServerConfig, capabilities: ServerCapabilities) -> Self {
        let info = modern::server_info_value(&config.server_info);
        Self {
            features: Features::of(&capabilities),
            capabilities,
            info,
            config,
            legacy: None,
            in_flight: HashMap::new(),
            outgoing: HashMap::new(),
            next_outgoing: 1,
            events: VecDeque::new(),
            transmit: VecDeque::new(),
            stats: ServerStats::default(),
            closed: false,
        }
    }

    // ---- getters ----

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The capabilities offered.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// The legacy session, once a client sent `initialize`.
    pub fn legacy_session(&self) -> Option<&LegacySession> {
        self.legacy.as_ref()
    }

    /// Requests the application holds (cancelled ones included until it
    /// answers them).
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The counters.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Whether [`handle_closed`](Self::handle_closed) was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    // ---- inputs ----

    /// Handles one frame from the client: the bytes of one JSON-RPC message
    /// (one line, without its newline).
    pub fn handle_frame(&mut self, frame: &[u8]) {
        if self.closed {
            return;
        }
        if first_byte(frame) == Some(b'[') {
            self.violation(Violation::Batch);
            self.send_error(
                None,
                ErrorObject::new(
                    error_codes::INVALID_REQUEST,
                    "Invalid Request: JSON-RPC batches are not supported; send one message per line",
                ),
            );
            return;
        }
        let msg: IncomingMessage<'_> = match serde_json::from_slice(frame) {
            Ok(msg) => msg,
            Err(e) if e.is_data() => return self.invalid_message(None, true, "not a JSON object"),
            Err(_) => {
                self.violation(Violation::ParseError);
                self.send_error(
                    None,
                    ErrorObject::new(error_codes::PARSE_ERROR, "Parse error: invalid JSON"),
                );
                return;
            }
        };
        // Kept for the answer to a message that turns out invalid.
        let id = msg
            .id
            .and_then(|raw| serde_json::from_str::<RequestId>(raw.get()).ok());
        let request_like = msg.method.is_some() || (msg.result.is_none() && msg.error.is_none());
        match Incoming::classify(msg) {
            Ok(Incoming::Request { id, method, params }) => {
                self.handle_request(id, &method, params);
            }
            Ok(Incoming::Notification { method, params }) => {
                self.handle_notification(&method, params);
            }
            Ok(Incoming::Response { id, result }) => {
                self.handle_response(id, Ok(result.to_owned()));
            }
            Ok(Incoming::Error {
                id: Some(id),
                error,
            }) => {
                self.handle_response(id, Err(ResponseError::Error(error)));
            }
            Ok(Incoming::Error { id: None, .. }) => self.violation(Violation::UnknownResponse),
            Err(e) => self.invalid_message(id, request_like, &e.to_string()),
        }
    }

    /// Handles a line that was over the frame bound and skipped, given its
    /// first bytes ([`mcp_codec::SkippedEdge::Start`]). A request whose id
    /// can be read from them is answered `-32600` at once; a response to one
    /// of our requests fails that request ([`ResponseError::TooLarge`]).
    pub fn handle_oversized(&mut self, start: &[u8]) {
        if self.closed {
            return;
        }
        let limit = self.config.limits.max_frame;
        self.violation(Violation::OversizedFrame { limit });
        match edge::read_start(start) {
            SkippedMessage::Request(id) if !self.in_flight.contains_key(&id) => {
                self.stats.requests += 1;
                let mut error = ErrorObject::new(
                    error_codes::INVALID_REQUEST,
                    format!(
                        "Invalid Request: the message exceeds the frame limit of {limit} bytes"
                    ),
                );
                error.data = Some(serde_json::json!({ "limit": limit }));
                self.send_error(Some(&id), error);
            }
            SkippedMessage::Response(id) if self.outgoing.remove(&id).is_some() => {
                self.events.push_back(Event::Response {
                    id,
                    answer: Err(ResponseError::TooLarge),
                });
            }
            _ => {}
        }
    }

    /// Fails every request of ours whose deadline is `now` or earlier: the
    /// application gets [`ResponseError::Timeout`] and the client
    /// `notifications/cancelled`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut expired: Vec<RequestId> = self
            .outgoing
            .iter()
            .filter(|(_, o)| o.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        expired.sort();
        for id in expired {
            self.outgoing.remove(&id);
            let params = CancelledParams::new(id.clone(), Some("timed out".to_owned()));
            if let Ok(frame) = notification_frame(Cancelled::METHOD, &params) {
                self.transmit.push_back(frame);
            }
            self.events.push_back(Event::Response {
                id,
                answer: Err(ResponseError::Timeout),
            });
        }
    }

    /// The connection ended: the requests held by the application are
    /// dropped (nothing more is sent for them, and answers are refused with
    /// [`ServerError::NotInFlight`]), requests of ours fail with
    /// [`ResponseError::Closed`], and frames not yet taken are discarded.
    pub fn handle_closed(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.transmit.clear();
        self.in_flight.clear();
        self.events
            .retain(|e| !matches!(e, Event::Request(_) | Event::Cancelled { .. }));
        let mut ids: Vec<RequestId> = self.outgoing.drain().map(|(id, _)| id).collect();
        ids.sort();
        for id in ids {
            self.events.push_back(Event::Response {
                id,
                answer: Err(ResponseError::Closed),
            });
        }
    }

    // ---- the application's answers and messages ----

    /// Answers a request with a result or a JSON-RPC error.
    ///
    /// In 2026-07-28 a result gets what the spec requires when absent:
    /// `resultType: "complete"`, the server's identity in `_meta`, and for a
    /// list, read or discover result `ttlMs` and `cacheScope` (from the
    /// configuration). The answer to a cancelled request is swallowed
    /// (`Ok`), freeing its slot.
    ///
    /// Errors: [`ServerError::NotInFlight`] (nothing sent), or
    /// [`ServerError::InvalidResult`] / [`ServerError::ResultTooLarge`],
    /// after which the client was sent a `-32603` error in its place.
    pub fn respond<R: Serialize>(
        &mut self,
        id: &RequestId,
        answer: Result<R, ErrorObject>,
    ) -> Result<(), ServerError> {
        let Some(entry) = self.in_flight.remove(id) else {
            return Err(ServerError::NotInFlight { id: id.clone() });
        };
        match entry.state {
            Held::Cancelled => return Ok(()),
            Held::Queued => self.unqueue(id),
            Held::Delivered => {}
        }
        let result = match answer {
            Err(error) => {
                self.send_error(Some(id), error);
                return Ok(());
            }
            Ok(result) => result,
        };
        let frame = if entry.era == Era::Modern {
            serde_json::to_value(&result).and_then(|mut value| {
                modern::decorate(&mut value, entry.kind, &self.info, &self.config);
                serde_json::to_vec(&OutgoingResult { id, result: &value })
            })
        } else {
            serde_json::to_vec(&OutgoingResult {
                id,
                result: &result,
            })
        };
        let limit = self.config.limits.max_frame;
        match frame {
            Ok(frame) if frame.len() <= limit => {
                self.transmit.push_back(frame);
                Ok(())
            }
            Ok(frame) => {
                let size = frame.len();
                let mut error = ErrorObject::new(
                    error_codes::INTERNAL_ERROR,
                    format!("the result is {size} bytes, over the frame limit of {limit} bytes"),
                );
                error.data = Some(serde_json::json!({ "size": size, "limit": limit }));
                self.send_error(Some(id), error);
                Err(ServerError::ResultTooLarge {
                    id: id.clone(),
                    size,
                    limit,
                })
            }
            Err(source) => {
                self.send_error(
                    Some(id),
                    ErrorObject::new(
                        error_codes::INTERNAL_ERROR,
                        "the server could not encode its result",
                    ),
                );
                Err(ServerError::InvalidResult {
                    id: id.clone(),
                    source,
                })
            }
        }
    }

    /// Sends `notifications/progress` for a request that asked for it (its
    /// `progressToken`). `progress` must be finite and larger than the last
    /// one sent; integral values go out as integers.
    pub fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ServerError> {
        let entry = match self.in_flight.get(id) {
            Some(entry) if entry.state != Held::Cancelled => entry,
            _ => return Err(ServerError::NotInFlight { id: id.clone() }),
        };
        let Some(token) = entry.progress_token.clone() else {
            return Err(ServerError::NoProgressToken { id: id.clone() });
        };
        if !progress.is_finite() || progress <= entry.last_progress {
            return Err(ServerError::ProgressNotIncreasing {
                id: id.clone(),
                last: entry.last_progress,
                now: progress,
            });
        }
        let mut params = serde_json::Map::new();
        params.insert("progressToken".into(), token.to_value());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total.filter(|t| t.is_finite()) {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::from(message));
        }
        self.queue_notification(Progress::METHOD, &params)?;
        if let Some(entry) = self.in_flight.get_mut(id) {
            entry.last_progress = progress;
        }
        Ok(())
    }

    /// Sends a notification to the client for the whole connection
    /// (`notifications/tools/list_changed`, `notifications/message`, …).
    /// Needs a legacy session ([`ServerError::NoSession`]): in 2026-07-28
    /// notifications travel with a request ([`notify_request`](Self::notify_request)).
    pub fn notify<N: ServerNotification>(&mut self, params: &N::Params) -> Result<(), ServerError> {
        if self.legacy.is_none() {
            return Err(ServerError::NoSession);
        }
        self.queue_notification(N::METHOD, params)
    }

    /// Sends a notification that belongs to a request in flight: a log
    /// message while it runs, or, for a `subscriptions/listen` request, a
    /// change on its stream (its id is put into
    /// `_meta["io.modelcontextprotocol/subscriptionId"]`).
    pub fn notify_request<N: ServerNotification>(
        &mut self,
        id: &RequestId,
        params: &N::Params,
    ) -> Result<(), ServerError> {
        let kind = match self.in_flight.get(id) {
            Some(entry) if entry.state != Held::Cancelled => entry.kind,
            _ => return Err(ServerError::NotInFlight { id: id.clone() }),
        };
        if kind != ResultKind::Listen {
            return self.queue_notification(N::METHOD, params);
        }
        let mut value = serde_json::to_value(params).map_err(ServerError::Serialize)?;
        if let Value::Object(map) = &mut value {
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(
                    meta_keys::SUBSCRIPTION_ID.to_owned(),
                    serde_json::to_value(id).map_err(ServerError::Serialize)?,
                );
            }
        }
        self.queue_notification(N::METHOD, &value)
    }

    /// Sends a request to the client (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`, `ping`, …); its answer comes back
    /// as [`Event::Response`] with the returned id, or fails after
    /// `timeout`. Needs a legacy session whose client sent
    /// `notifications/initialized` and declared the capability the method
    /// needs.
    pub fn send_request<R: ServerRequest>(
        &mut self,
        now: Instant,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<RequestId, ServerError> {
        self.send_request_as(now, R::METHOD, params, timeout, false)
    }

    /// [`send_request`](Self::send_request), asking the client for progress
    /// on it: the request's `_meta.progressToken` is set to its id
    /// (replacing any token in `params`), and each
    /// `notifications/progress` the client sends for it while it waits
    /// comes as [`Event::Progress`], values strictly increasing (a value
    /// that does not increase is dropped, as the protocol requires of the
    /// sender).
    pub fn send_request_with_progress<R: ServerRequest>(
        &mut self,
        now: Instant,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<RequestId, ServerError> {
        self.send_request_as(now, R::METHOD, params, timeout, true)
    }

    fn send_request_as<P: Serialize>(
        &mut self,
        now: Instant,
        method: &'static str,
        params: &P,
        timeout: Duration,
        progress: bool,
    ) -> Result<RequestId, ServerError> {
        if self.closed {
            return Err(ServerError::Closed);
        }
        let session = match &self.legacy {
            Some(s) if s.initialized => s,
            _ => return Err(ServerError::NotInitialized),
        };
        if let Some(capability) = missing_capability(method, &session.capabilities) {
            return Err(ServerError::ClientLacksCapability { capability });
        }
        let limit = self.config.limits.max_outgoing_requests;
        if self.outgoing.len() >= limit {
            return Err(ServerError::TooManyOutgoing { limit });
        }
        let number = self.next_outgoing;
        let id = RequestId::Number(number);
        let frame = if progress {
            let mut value = serde_json::to_value(params).map_err(ServerError::Serialize)?;
            if let Value::Object(map) = &mut value {
                let meta = map
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(serde_json::Map::new()));
                if !meta.is_object() {
                    *meta = Value::Object(serde_json::Map::new());
                }
                if let Value::Object(meta) = meta {
                    meta.insert(
                        meta_keys::PROGRESS_TOKEN.to_owned(),
                        ProgressToken::Number(number).to_value(),
                    );
                }
            }
            serde_json::to_vec(&OutgoingRequest {
                id: &id,
                method,
                params: Some(&value),
            })
        } else {
            serde_json::to_vec(&OutgoingRequest {
                id: &id,
                method,
                params: Some(params),
            })
        }
        .map_err(ServerError::Serialize)?;
        self.check_size(&frame)?;
        self.next_outgoing += 1;
        self.transmit.push_back(frame);
        self.outgoing.insert(
            id.clone(),
            Outgoing {
                deadline: now + timeout,
                progress: progress.then_some(f64::NEG_INFINITY),
            },
        );
        Ok(id)
    }

    /// Gives up a request of ours before its answer came (the application
    /// no longer wants it): the client is sent `notifications/cancelled`
    /// and a late answer is ignored as unknown. Returns whether the request
    /// was still awaiting its answer (nothing is sent otherwise).
    pub fn cancel_request(&mut self, id: &RequestId, reason: Option<String>) -> bool {
        if self.closed || self.outgoing.remove(id).is_none() {
            return false;
        }
        let params = CancelledParams::new(id.clone(), reason);
        if let Ok(frame) = notification_frame(Cancelled::METHOD, &params) {
            self.transmit.push_back(frame);
        }
        true
    }

    // ---- outputs ----

    /// The next frame to write, oldest first.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// The next event for the application, oldest first.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        let event = self.events.pop_front()?;
        if let Event::Request(request) = &event
            && let Some(entry) = self.in_flight.get_mut(&request.id)
        {
            entry.state = Held::Delivered;
        }
        Some(event)
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.outgoing.values().map(|o| o.deadline).min()
    }

    // ---- requests ----

    fn handle_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) {
        self.stats.requests += 1;
        if self.in_flight.contains_key(&id) {
            self.violation(Violation::DuplicateId);
            // The request in flight keeps the id: the refusal carries none.
            self.send_error(
                None,
                ErrorObject::new(
                    error_codes::INVALID_REQUEST,
                    format!("Invalid Request: id {id} is already in flight"),
                ),
            );
            return;
        }
        let meta = match modern::request_meta(params) {
            Ok(meta) => meta,
            Err(error) => return self.send_error(Some(&id), error),
        };
        let progress_token = match modern::progress_token(meta.as_ref()) {
            Ok(token) => token,
            Err(error) => return self.send_error(Some(&id), error),
        };
        if method == Discover::METHOD || modern::is_modern(meta.as_ref()) {
            self.modern_request(id, method, params, meta.as_ref(), progress_token);
        } else {
            self.legacy_request(id, method, params, progress_token);
        }
    }

    fn modern_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        meta: Option<&Meta>,
        progress_token: Option<ProgressToken>,
    ) {
        let client = match modern::client_context(meta, &self.config) {
            Ok(client) => client,
            Err(error) => return self.send_error(Some(&id), error),
        };
        if method == Discover::METHOD {
            return self.discover(&id);
        }
        match route::app_route(method, Era::Modern, &self.features) {
            Some(kind) => {
                if let Err(error) = modern::check_retry_members(method, params) {
                    return self.send_error(Some(&id), error);
                }
                if let Some(error) = modern::undeclared_extension(method, &client.capabilities) {
                    return self.send_error(Some(&id), error);
                }
                self.admit(id, method, params, kind, progress_token, client)
            }
            None => self.method_not_found(&id, method),
        }
    }

    fn legacy_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        progress_token: Option<ProgressToken>,
    ) {
        if method == Initialize::METHOD {
            return self.initialize(&id, params);
        }
        if method == Ping::METHOD {
            return self.answer(&id, &EmptyResult::default());
        }
        let Some(session) = &self.legacy else {
            return self.send_error(
                Some(&id),
                ErrorObject::new(
                    error_codes::INVALID_REQUEST,
                    "Invalid Request: the server is not initialized (send `initialize` first, \
                     or name the protocol version in `_meta`)",
                ),
            );
        };
        let client = ClientContext {
            protocol_version: session.version,
            capabilities: Arc::clone(&session.capabilities),
            client_info: Some(Arc::clone(&session.client_info)),
            log_level: None,
        };
        match route::app_route(method, Era::Legacy, &self.features) {
            Some(kind) => self.admit(id, method, params, kind, progress_token, client),
            None => self.method_not_found(&id, method),
        }
    }

    /// Hands a checked request to the application, or refuses it at once
    /// when a bound is reached.
    fn admit(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        kind: ResultKind,
        progress_token: Option<ProgressToken>,
        client: ClientContext,
    ) {
        let limits = &self.config.limits;
        let refusal = if self.in_flight.len() >= limits.max_in_flight {
            Some(format!(
                "too many requests in flight (at most {})",
                limits.max_in_flight
            ))
        } else if self.events.len() >= limits.max_pending_events {
            Some(format!(
                "too many requests waiting (at most {})",
                limits.max_pending_events
            ))
        } else {
            None
        };
        if let Some(message) = refusal {
            self.stats.refused += 1;
            return self.send_error(
                Some(&id),
                ErrorObject::new(error_codes::INTERNAL_ERROR, message),
            );
        }
        self.in_flight.insert(
            id.clone(),
            InFlight {
                state: Held::Queued,
                era: client.era(),
                kind,
                progress_token: progress_token.clone(),
                last_progress: f64::NEG_INFINITY,
            },
        );
        self.events.push_back(Event::Request(IncomingRequest {
            id,
            method: method.to_owned(),
            params: params.map(RawValue::to_owned),
            progress_token,
            client,
        }));
    }

    fn initialize(&mut self, id: &RequestId, params: Option<&RawValue>) {
        if self.legacy.is_some() {
            return self.send_error(
                Some(id),
                ErrorObject::new(
                    error_codes::INVALID_REQUEST,
                    "Invalid Request: already initialized",
                ),
            );
        }
        let params: InitializeParams = match params.map(|raw| serde_json::from_str(raw.get())) {
            Some(Ok(params)) => params,
            Some(Err(e)) => {
                return self.send_error(Some(id), events::invalid_params(Initialize::METHOD, &e));
            }
            None => {
                return self.send_error(
                    Some(id),
                    ErrorObject::new(
                        error_codes::INVALID_PARAMS,
                        "Invalid params: `initialize` needs params",
                    ),
                );
            }
        };
        let served = self.config.versions_of(Era::Legacy);
        let Some(&latest) = served.first() else {
            let error = modern::unsupported_version(params.protocol_version, &self.config);
            return self.send_error(Some(id), error);
        };
        // The client's version if we serve it, else our newest legacy one
        // (the client then decides whether it can speak it).
        let version = ProtocolVersion::parse(&params.protocol_version)
            .filter(|v| served.contains(v))
            .unwrap_or(latest);
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: capabilities_in(&self.capabilities, version),
            server_info: self.config.server_info.clone(),
            instructions: self.config.instructions.clone(),
            ..Default::default()
        };
        self.legacy = Some(LegacySession {
            version,
            capabilities: Arc::new(params.capabilities),
            client_info: Arc::new(params.client_info),
            initialized: false,
        });
        self.answer(id, &result);
    }

    fn discover(&mut self, id: &RequestId) {
        let mut result = DiscoverResult {
            supported_versions: self.config.version_names(),
            capabilities: capabilities_in(&self.capabilities, ProtocolVersion::V2026_07_28),
            instructions: self.config.instructions.clone(),
            ..Default::default()
        };
        let mut meta = Meta::new();
        meta.insert(meta_keys::SERVER_INFO, self.info.clone());
        result.meta = Some(meta);
        match serde_json::to_value(&result) {
            Ok(mut value) => {
                modern::decorate(&mut value, ResultKind::Cacheable, &self.info, &self.config);
                self.answer(id, &value);
            }
            Err(_) => self.send_error(
                Some(id),
                ErrorObject::new(error_codes::INTERNAL_ERROR, "discovery failed"),
            ),
        }
    }

    fn method_not_found(&mut self, id: &RequestId, method: &str) {
        let mut error = ErrorObject::new(error_codes::METHOD_NOT_FOUND, "Method not found");
        error.data = Some(serde_json::json!({ "method": method }));
        self.send_error(Some(id), error);
    }

    // ---- notifications and responses ----

    fn handle_notification(&mut self, method: &str, params: Option<&RawValue>) {
        if method == Initialized::METHOD {
            if let Some(session) = &mut self.legacy
                && !session.initialized
            {
                session.initialized = true;
                let version = session.version;
                self.events.push_back(Event::Initialized { version });
            }
            return;
        }
        if method == Cancelled::METHOD {
            // Malformed or unknown cancellations are ignored (the spec's rule).
            if let Some(Ok(CancelledParams {
                request_id: Some(id),
                reason,
                ..
            })) = params.map(|raw| serde_json::from_str::<CancelledParams>(raw.get()))
            {
                self.cancel(&id, reason);
            }
            return;
        }
        if method == Progress::METHOD && self.progress_of_ours(params) {
            return;
        }
        if self.events.len() >= self.config.limits.max_pending_events {
            self.stats.dropped_events += 1;
            return;
        }
        let params = params.and_then(|raw| serde_json::from_str(raw.get()).ok());
        self.events.push_back(Event::Notification {
            method: method.to_owned(),
            params,
        });
    }

    /// Takes `notifications/progress` for a request of ours that asked for
    /// it ([`Event::Progress`], or dropped when its value does not
    /// increase or the events are at their bound). Returns whether it was
    /// one; anything else is the application's as a plain notification.
    fn progress_of_ours(&mut self, params: Option<&RawValue>) -> bool {
        let Some(Ok(params)) = params.map(|raw| serde_json::from_str::<ProgressParams>(raw.get()))
        else {
            return false;
        };
        let ProgressToken::Number(number) = params.progress_token else {
            return false;
        };
        let full = self.events.len() >= self.config.limits.max_pending_events;
        let Some(last) = self
            .outgoing
            .get_mut(&RequestId::Number(number))
            .and_then(|o| o.progress.as_mut())
        else {
            return false;
        };
        match params.progress_f64() {
            Some(value) if value > *last && !full => {
                *last = value;
                self.events.push_back(Event::Progress {
                    id: RequestId::Number(number),
                    params,
                });
            }
            Some(_) if full => self.stats.dropped_events += 1,
            _ => self.violation(Violation::ProgressNotIncreasing),
        }
        true
    }

    /// The client cancelled request `id`.
    fn cancel(&mut self, id: &RequestId, reason: Option<String>) {
        let Some(entry) = self.in_flight.get_mut(id) else {
            return;
        };
        match entry.state {
            Held::Queued => {
                // The application never saw it: it simply never was.
                self.in_flight.remove(id);
                self.unqueue(id);
                self.stats.cancelled += 1;
            }
            Held::Delivered => {
                entry.state = Held::Cancelled;
                self.stats.cancelled += 1;
                // Bounded by the requests in flight: one per request at most.
                self.events.push_back(Event::Cancelled {
                    id: id.clone(),
                    reason,
                });
            }
            Held::Cancelled => {}
        }
    }

    fn handle_response(&mut self, id: RequestId, answer: Result<Box<RawValue>, ResponseError>) {
        if self.outgoing.remove(&id).is_some() {
            self.events.push_back(Event::Response { id, answer });
        } else {
            self.violation(Violation::UnknownResponse);
        }
    }

    // ---- helpers ----

    /// Removes a queued request's event.
    fn unqueue(&mut self, id: &RequestId) {
        self.events
            .retain(|e| !matches!(e, Event::Request(r) if r.id == *id));
    }

    fn answer<R: Serialize>(&mut self, id: &RequestId, result: &R) {
        match serde_json::to_vec(&OutgoingResult { id, result }) {
            Ok(frame) => self.transmit.push_back(frame),
            Err(_) => self.send_error(
                Some(id),
                ErrorObject::new(
                    error_codes::INTERNAL_ERROR,
                    "the server could not encode its result",
                ),
            ),
        }
    }

    fn send_error(&mut self, id: Option<&RequestId>, mut error: ErrorObject) {
        let mut frame = serde_json::to_vec(&OutgoingError { id, error: &error });
        if frame
            .as_ref()
            .map_or(true, |f| f.len() > self.config.limits.max_frame)
        {
            // Only an enormous message or data can do this; the code stays.
            error.message = "error".to_owned();
            error.data = None;
            frame = serde_json::to_vec(&OutgoingError { id, error: &error });
        }
        if let Ok(frame) = frame {
            self.transmit.push_back(frame);
        }
    }

    fn invalid_message(&mut self, id: Option<RequestId>, request_like: bool, why: &str) {
        self.violation(Violation::InvalidMessage);
        if request_like {
            self.send_error(
                id.as_ref(),
                ErrorObject::new(
                    error_codes::INVALID_REQUEST,
                    format!("Invalid Request: {why}"),
                ),
            );
        }
    }

    fn violation(&mut self, violation: Violation) {
        self.stats.violations += 1;
        if self.events.len() >= self.config.limits.max_pending_events {
            self.stats.dropped_events += 1;
        } else {
            self.events.push_back(Event::Violation(violation));
        }
    }

    fn queue_notification<P: Serialize + ?Sized>(
        &mut self,
        method: &str,
        params: &P,
    ) -> Result<(), ServerError> {
        if self.closed {
            return Err(ServerError::Closed);
        }
        let limit = self.config.limits.max_queued_frames;
        if self.transmit.len() >= limit {
            return Err(ServerError::TransmitQueueFull { limit });
        }
        let frame = notification_frame(method, params).map_err(ServerError::Serialize)?;
        self.check_size(&frame)?;
        self.transmit.push_back(frame);
        Ok(())
    }

    fn check_size(&self, frame: &[u8]) -> Result<(), ServerError> {
        let limit = self.config.limits.max_frame;
        if frame.len() > limit {
            return Err(ServerError::FrameTooLarge {
                size: frame.len(),
                limit,
            });
        }
        Ok(())
    }
}

fn notification_frame<P: Serialize + ?Sized>(
    method: &str,
    params: &P,
) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&OutgoingNotification {
        method,
        params: Some(&params),
    })
}

/// The capability the client must have declared for the server to send it
/// `method`, when it lacks it.
fn missing_capability(method: &str, caps: &ClientCapabilities) -> Option<&'static str> {
    use mcp_types::requests::{
        CancelTask, CreateMessage, Elicit, GetTask, GetTaskPayload, ListRoots, ListTasks,
    };
    let (name, has) = if method == CreateMessage::METHOD {
        ("sampling", caps.sampling.is_some())
    } else if method == Elicit::METHOD {
        ("elicitation", caps.elicitation.is_some())
    } else if method == ListRoots::METHOD {
        ("roots", caps.roots.is_some())
    } else if [
        GetTask::METHOD,
        GetTaskPayload::METHOD,
        ListTasks::METHOD,
        CancelTask::METHOD,
    ]
    .contains(&method)
    {
        ("tasks", caps.tasks.is_some())
    } else {
        return None;
    };
    (!has).then_some(name)
}

/// A progress value as JSON: an integer when it is one.
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        // Exact: the value is integral and well within i64.
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

fn first_byte(frame: &[u8]) -> Option<u8> {
    frame
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}
