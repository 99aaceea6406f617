//! The sans-IO protocol core of one connection.
//!
//! [`ProtocolCore`] is a synchronous, deterministic state machine: it never
//! awaits, never reads a clock (every time-dependent call takes `now`), and
//! never touches a socket or a pipe. It owns the request table, id
//! allocation, deadlines, progress routing and cancellation bookkeeping,
//! classifies every incoming frame, and decides the protocol around them:
//! the era decision table (`era`), which server requests reach the host
//! (`server_requests`), the `input_required` rounds (`rounds`), subscription
//! routing (`subscriptions`) and which request an oversized line answered
//! (`skipped`). The async driver around it is thin.
//!
//! Inputs: [`ProtocolCore::start_request`], [`ProtocolCore::handle_frame`],
//! [`ProtocolCore::handle_timeout`], [`ProtocolCore::cancel`],
//! [`ProtocolCore::handle_skipped_edge`], [`ProtocolCore::handle_closed`].
//! Outputs, drained after every input, in this order:
//! [`ProtocolCore::poll_transmit`] (frames to send),
//! [`ProtocolCore::poll_event`] (completions and messages for the host), then
//! [`ProtocolCore::poll_timeout`] (when to call `handle_timeout` next).
//!
//! Every frame that leaves is made here. The frame of a request
//! ([`ProtocolCore::start_request`]) or of a host notification
//! ([`ProtocolCore::notification`]) is handed to the caller, who writes it
//! itself (the fast path: no hop through the driver, and the caller waits
//! for room in the transport); everything else (answers to the server,
//! cancellations) waits in `poll_transmit` for the driver.
//!
//! ```text
//!   start_request ──► pending ──response──► Completed(Ok raw result)
//!                        │ ├──error──────► Completed(Err Server)
//!                        │ ├──deadline───► Completed(Err Timeout) + notifications/cancelled
//!                        │ ├──cancel─────► (dropped)              + notifications/cancelled
//!                        │ └──closed─────► Completed(Err Closed)
//!                        ├──progress─────► Progress, deadline pushed back (bounded by the hard maximum)
//!                        └──host answers─► deadline held while the host answers a server
//!                                          request, then the whole timeout again
//! ```
//!
//! The type parameter `W` is whatever the driver needs to wake a caller (a
//! oneshot sender); tests use plain values.

use mcp_types::Notification as _;
use mcp_types::notifications::{Cancelled, Progress};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_codec::peek_response as fast_response;
use mcp_transport::{RequestFailure, SkippedEdge};
use mcp_types::{ErrorObject, Incoming, OutgoingNotification, OutgoingRequest, RequestId};
use serde_json::value::RawValue;

mod abandoned;
pub(crate) mod era;
pub(crate) mod intake;
pub(crate) mod rounds;
pub(crate) mod server_requests;
mod skipped;
mod stats;
pub(crate) mod subscriptions;

pub use abandoned::AbandonedIds;
pub use intake::{NotificationBudget, NotificationIntake};
pub use stats::ProtocolStats;

/// Bounds of one connection's request table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreLimits {
    /// Requests in flight at once; one more is refused.
    pub max_in_flight: usize,
    /// No deadline, however often progress resets it, goes past this much
    /// time after the request started.
    pub hard_deadline: Duration,
}

impl Default for CoreLimits {
    fn default() -> Self {
        Self {
            max_in_flight: 1024,
            hard_deadline: Duration::from_secs(600),
        }
    }
}

/// Per-request settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestTiming {
    /// Time allowed for an answer.
    pub timeout: Duration,
    /// Whether a progress notification for this request starts the timeout
    /// again (never past [`CoreLimits::hard_deadline`]).
    pub reset_on_progress: bool,
    /// Whether the request may be cancelled (the spec forbids cancelling
    /// `initialize`).
    pub cancellable: bool,
    /// A stream that lasts as long as the connection (`subscriptions/listen`):
    /// no deadline at all; it ends with its answer, its cancellation, or the
    /// connection.
    pub open_ended: bool,
}

impl Default for RequestTiming {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            reset_on_progress: true,
            cancellable: true,
            open_ended: false,
        }
    }
}

/// The raw JSON of a result, as sliced out of its frame.
///
/// Responses in the common compact shape
/// (`{"jsonrpc":"2.0","id":N,"result":…}`) are sliced without scanning the
/// result first: the decode into the result's type is then the only pass over
/// it. Such a slice is unverified (`frame` is `Some`): if it does not decode,
/// [`RawResult::decode`] parses the whole frame the careful way and tries
/// again, so an unusual frame costs time, never correctness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawResult {
    /// The result's JSON (possibly with the envelope's tail when unverified).
    pub result: Bytes,
    /// The whole frame, when `result` was sliced without a full parse.
    pub frame: Option<Bytes>,
}

impl RawResult {
    /// A verified result slice.
    pub fn verified(result: Bytes) -> Self {
        Self {
            result,
            frame: None,
        }
    }

    /// The result's length in bytes as the server sent it. A fast-path slice
    /// may still hold the envelope's tail, so its length is an upper bound;
    /// the frame is then parsed to measure exactly.
    pub fn len(&self) -> usize {
        match &self.frame {
            None => self.result.len(),
            Some(frame) => match Incoming::parse(frame) {
                Ok(Incoming::Response { result, .. }) => result.get().len(),
                _ => self.result.len(),
            },
        }
    }

    /// Whether the result is empty (never, for a valid JSON value).
    pub fn is_empty(&self) -> bool {
        self.result.is_empty()
    }

    /// Refuses a result over `limit` bytes; a slice within the limit is
    /// never parsed again to measure it.
    pub(crate) fn within(&self, limit: usize) -> Result<(), usize> {
        if self.result.len() <= limit {
            return Ok(());
        }
        match self.len() {
            size if size > limit => Err(size),
            _ => Ok(()),
        }
    }

    /// Decodes the result into `T` (see [`RawResult::decode`]).
    pub fn decode_json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        // Checked as UTF-8 once, then read as text: serde_json then checks
        // no string and no raw value (tool schemas) a second time.
        self.decode(|bytes| match std::str::from_utf8(bytes) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(bytes),
        })
    }

    /// Decodes the result with `decode`, falling back to a full parse of the
    /// frame when a fast-path slice does not decode.
    pub fn decode<T, E>(&self, decode: impl Fn(&[u8]) -> Result<T, E>) -> Result<T, E> {
        match (decode(&self.result), &self.frame) {
            (Ok(v), _) => Ok(v),
            (Err(e), None) => Err(e),
            (Err(e), Some(frame)) => match Incoming::parse(frame) {
                Ok(Incoming::Response { result, .. }) => decode(result.get().as_bytes()),
                _ => Err(e),
            },
        }
    }
}

/// A notification's frame.
fn notification_frame(method: &str, params: Option<&RawValue>) -> Bytes {
    let frame = serde_json::to_vec(&OutgoingNotification {
        method,
        params: params.as_ref(),
    })
    // Invariant: a method string and valid raw JSON always serialise.
    .expect("serialising a notification envelope");
    Bytes::from(frame)
}

/// Server requests handed to the host at once; one more is refused (never
/// queued without bound).
pub(crate) const MAX_SERVER_REQUESTS: usize = 32;

/// Why a request ended without a result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Failure {
    /// The server answered with a JSON-RPC error.
    Server(ErrorObject),
    /// No answer within the deadline; the server was sent a cancellation.
    Timeout {
        /// The time the request was allowed, after any progress resets.
        after: Duration,
    },
    /// The connection ended first.
    Closed,
    /// The transport could not deliver the request or its answer (HTTP).
    Transport(RequestFailure),
}

/// Something the core refused to do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The in-flight bound is reached.
    TooManyInFlight {
        /// The bound.
        limit: usize,
    },
    /// The connection is closed.
    Closed,
}

/// An output of the core for its driver.
#[derive(Debug)]
#[non_exhaustive]
pub enum CoreEvent<W> {
    /// A request ended; wake its caller.
    Completed {
        /// The request's id.
        id: i64,
        /// The caller's waiter.
        waiter: W,
        /// The raw JSON of the result, or why there is none.
        outcome: Result<RawResult, Failure>,
    },
    /// A progress notification for a pending request (see
    /// [`ProtocolCore::waiter`] to reach its caller).
    Progress {
        /// The request it belongs to.
        id: i64,
        /// The raw notification params.
        params: Bytes,
    },
    /// The server sent a request the host takes (a declared feature in a
    /// declared mode; the core answered or refused the rest itself). The
    /// driver hands it to the host's handler and gives the answer back with
    /// [`ProtocolCore::answer_server_request`].
    ServerRequest {
        /// Its id (answer with this).
        id: RequestId,
        /// The request, parsed.
        request: Box<mcp_types::ServerRequestMessage>,
    },
    /// The server cancelled its request `id` while the host was handling
    /// it: the driver stops the handler, and
    /// [`ProtocolCore::answer_server_request`] will send nothing for it.
    ServerRequestCancelled {
        /// The cancelled request's id.
        id: RequestId,
    },
    /// The server sent a notification (other than progress for our requests).
    Notification {
        /// Its method.
        method: String,
        /// Raw params.
        params: Option<Bytes>,
    },
    /// A notification (or the connection's end) means this for a
    /// subscription (see `protocol/subscriptions.rs` for which one).
    Subscription {
        /// The subscription's key.
        key: u64,
        /// What happened.
        event: Box<crate::SubscriptionEvent>,
    },
    /// The server broke the protocol; the frame was skipped, the connection
    /// lives on. Counted in [`ProtocolStats`].
    Violation(Violation),
    /// Notifications over the server's budget were dropped (see
    /// `protocol/intake.rs`): sent on the first drop, then at most once a
    /// second while drops go on.
    NotificationsDropped {
        /// Dropped over the budget on this connection so far.
        over_budget: u64,
    },
}

/// A protocol violation by the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Violation {
    /// A frame that is not a JSON-RPC 2.0 message.
    Malformed,
    /// A response to an id we never sent (or no longer wait for).
    UnknownResponseId(RequestId),
    /// An error response without an id (the server could not read something
    /// we sent).
    ErrorWithoutId(ErrorObject),
    /// A frame over the size limit, skipped by the transport.
    Oversized,
    /// A request whose id is the id of another of the server's requests
    /// still being handled: skipped unanswered (an answer would be taken for
    /// the first one's).
    DuplicateRequestId(RequestId),
}

struct Pending<W> {
    method: Arc<str>,
    waiter: W,
    started: Instant,
    deadline: Option<Instant>,
    timing: RequestTiming,
}

/// The protocol state of one connection. See the module docs for the contract.
pub struct ProtocolCore<W> {
    next_id: i64,
    pending: HashMap<i64, Pending<W>, IdHash>,
    deadlines: BinaryHeap<Reverse<(Instant, i64)>>,
    /// The last answer of [`ProtocolCore::poll_timeout`]: what the driver's
    /// timer is armed for.
    armed: Option<Instant>,
    /// A deadline earlier than `armed` was registered since.
    timer_moved: bool,
    transmit: VecDeque<Bytes>,
    events: VecDeque<CoreEvent<W>>,
    abandoned: AbandonedIds,
    limits: CoreLimits,
    stats: ProtocolStats,
    closed: bool,
    /// The start of the first frame that was not a JSON-RPC message, kept
    /// for the diagnostics of a session that ends (`ExitInfo::unparsed_line`).
    first_unparsed: Option<Bytes>,
    /// What the start of the line being skipped said it is (a response?).
    skipped_response: Option<bool>,
    /// The client features the host offers (what server requests may ask).
    offered: server_requests::Offered,
    /// The ids of the server requests handed to the host and not answered
    /// (nor cancelled by the server) yet; at most [`MAX_SERVER_REQUESTS`].
    server_requests: HashSet<RequestId>,
    /// Where notifications go for the session's subscriptions.
    routes: subscriptions::Routes,
    /// Which notifications are dropped before parsing.
    intake: intake::Intake,
}

impl<W> std::fmt::Debug for ProtocolCore<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtocolCore")
            .field("next_id", &self.next_id)
            .field("pending", &self.pending.len())
            .field("closed", &self.closed)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<W> ProtocolCore<W> {
    /// A fresh core with these limits.
    pub fn new(limits: CoreLimits) -> Self {
        Self {
            next_id: 1,
            pending: HashMap::with_hasher(IdHash),
            deadlines: BinaryHeap::new(),
            armed: None,
            timer_moved: false,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            abandoned: AbandonedIds::default(),
            limits,
            stats: ProtocolStats::default(),
            closed: false,
            first_unparsed: None,
            skipped_response: None,
            offered: server_requests::Offered::default(),
            server_requests: HashSet::new(),
            routes: subscriptions::Routes::default(),
            intake: intake::Intake::new(NotificationIntake::default()),
        }
    }

    /// Sets which notifications are dropped before parsing (the default
    /// keeps log messages and applies [`NotificationBudget::DEFAULT`]).
    pub fn set_intake(&mut self, settings: NotificationIntake) {
        self.intake = intake::Intake::new(settings);
    }

    // ---- getters -------------------------------------------------------

    /// Counters of what happened on this connection.
    pub fn stats(&self) -> &ProtocolStats {
        &self.stats
    }

    /// Requests waiting for an answer.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Whether [`ProtocolCore::handle_closed`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The waiter of a pending request (to deliver progress to its caller).
    pub fn waiter(&self, id: i64) -> Option<&W> {
        self.pending.get(&id).map(|p| &p.waiter)
    }

    /// The method of a pending request.
    pub fn pending_method(&self, id: i64) -> Option<&str> {
        self.pending.get(&id).map(|p| &*p.method)
    }

    // ---- inputs --------------------------------------------------------

    /// Registers a request and returns its id and the frame to send.
    ///
    /// `params` builds the serialised params object from the request's id
    /// (the progress token of a request, when the caller asks for progress,
    /// is its id).
    pub fn start_request(
        &mut self,
        now: Instant,
        method: &Arc<str>,
        timing: RequestTiming,
        waiter: W,
        params: impl FnOnce(i64) -> Option<Box<RawValue>>,
    ) -> Result<(i64, Bytes), Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        if self.pending.len() >= self.limits.max_in_flight {
            self.stats.refused_in_flight += 1;
            return Err(Refusal::TooManyInFlight {
                limit: self.limits.max_in_flight,
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        let rid = RequestId::Number(id);
        let params = params(id);
        let frame = serde_json::to_vec(&OutgoingRequest {
            id: &rid,
            method,
            params: params.as_ref(),
        })
        // Invariant: the envelope holds only strings, an integer and already
        // valid raw JSON, so serialisation cannot fail.
        .expect("serialising a request envelope");
        let deadline = if timing.open_ended {
            None
        } else {
            let d = now + timing.timeout.min(self.limits.hard_deadline);
            self.deadlines.push(Reverse((d, id)));
            if self.armed.is_none_or(|armed| d < armed) {
                self.armed = Some(d);
                self.timer_moved = true;
            }
            Some(d)
        };
        self.pending.insert(
            id,
            Pending {
                method: Arc::clone(method),
                waiter,
                started: now,
                deadline,
                timing,
            },
        );
        self.stats.requests_sent += 1;
        Ok((id, Bytes::from(frame)))
    }

    /// Classifies one incoming frame and updates the state.
    pub fn handle_frame(&mut self, now: Instant, frame: Bytes) {
        self.stats.frames_received += 1;
        if let Some((id, range)) = fast_response(&frame)
            && self.pending.contains_key(&id)
        {
            let result = frame.slice(range);
            self.complete(
                RequestId::Number(id),
                Ok(RawResult {
                    result,
                    frame: Some(frame),
                }),
            );
            return;
        }
        // A notification is judged by its method before anything parses it.
        let peeked = mcp_codec::peek_notification(&frame);
        if let Some(method) = peeked
            && !self.admit(now, method)
        {
            return;
        }
        let peeked = peeked.is_some();
        let incoming = match Incoming::parse(&frame) {
            Ok(m) => m,
            Err(_) => {
                if self.first_unparsed.is_none() {
                    // A copy: a slice would keep the whole frame (up to the
                    // frame bound) alive for the session's life.
                    let end = frame.len().min(mcp_transport::UNPARSED_LINE_BYTES);
                    self.first_unparsed = Some(Bytes::copy_from_slice(&frame[..end]));
                }
                self.violation(Violation::Malformed);
                return;
            }
        };
        match incoming {
            Incoming::Response { id, result } => {
                let raw = frame.slice_ref(result.get().as_bytes());
                self.complete(id, Ok(RawResult::verified(raw)));
            }
            Incoming::Error {
                id: Some(id),
                error,
            } => {
                self.complete(id, Err(Failure::Server(error)));
            }
            Incoming::Error { id: None, error } => {
                self.violation(Violation::ErrorWithoutId(error));
            }
            Incoming::Request { id, method, params } => {
                self.server_request(id, &method, params);
            }
            Incoming::Notification { method, params } => {
                if !peeked && !self.admit(now, &method) {
                    return;
                }
                let params = params.map(|p| frame.slice_ref(p.get().as_bytes()));
                if method == Progress::METHOD {
                    if let Some(params) = params {
                        self.progress(now, params);
                    }
                    return;
                }
                if method == Cancelled::METHOD && !self.server_requests.is_empty() {
                    self.server_cancelled(now, params.as_deref());
                }
                for (key, event) in self.routes.route(&method, params.as_deref()) {
                    self.events.push_back(CoreEvent::Subscription {
                        key,
                        event: Box::new(event),
                    });
                }
                self.events.push_back(CoreEvent::Notification {
                    method: method.to_string(),
                    params,
                });
            }
        }
    }

    /// The transport says a request will get no answer through it.
    pub fn handle_request_failed(&mut self, id: i64, failure: RequestFailure) {
        if let Some(p) = self.pending.remove(&id) {
            self.events.push_back(CoreEvent::Completed {
                id,
                waiter: p.waiter,
                outcome: Err(Failure::Transport(failure)),
            });
        }
    }

    /// Records that the transport skipped an oversized frame.
    pub fn handle_oversized_frame(&mut self) {
        self.violation(Violation::Oversized);
    }

    /// Takes one end of a line the transport skipped for being over
    /// `limit` bytes. When the ends show it was the response to one of our
    /// requests (see `protocol/skipped.rs`), that request fails at once with
    /// [`RequestFailure::TooLarge`] instead of waiting for its deadline.
    pub fn handle_skipped_edge(&mut self, edge: SkippedEdge, limit: usize) {
        let id = match edge {
            SkippedEdge::Start(bytes) => {
                let says = skipped::read_start(&bytes);
                self.skipped_response = says.response;
                says.id.filter(|_| says.response == Some(true))
            }
            SkippedEdge::End(bytes) => match self.skipped_response.take() {
                Some(true) => skipped::read_end(&bytes),
                _ => None,
            },
        };
        if let Some(id) = id {
            self.handle_request_failed(id, RequestFailure::TooLarge { limit });
        }
    }

    /// Expires every request whose deadline is at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(Reverse((deadline, id))) = self.deadlines.peek().copied() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            let hard = self.limits.hard_deadline;
            let host_answering = !self.server_requests.is_empty();
            let Some(p) = self.pending.get_mut(&id) else {
                continue;
            };
            if p.deadline != Some(deadline) {
                // Stale heap entry: answered, cancelled, or pushed back by progress.
                continue;
            }
            if host_answering && p.timing.reset_on_progress {
                // The server waits for the host's answer to its question (a
                // person filling in a form): its time does not count
                // against ours, up to the hard deadline.
                let pushed = (now + p.timing.timeout).min(p.started + hard);
                if pushed > now {
                    p.deadline = Some(pushed);
                    self.deadlines.push(Reverse((pushed, id)));
                    continue;
                }
            }
            if let Some(p) = self.pending.remove(&id) {
                self.stats.timeouts += 1;
                if p.timing.cancellable {
                    self.queue_cancel(id, "request timed out");
                }
                self.abandoned.insert(id);
                self.events.push_back(CoreEvent::Completed {
                    id,
                    waiter: p.waiter,
                    outcome: Err(Failure::Timeout {
                        after: deadline.saturating_duration_since(p.started),
                    }),
                });
            }
        }
    }

    /// The caller gave up on a request: forget it and tell the server. Returns
    /// the waiter, or `None` when the request had already ended.
    pub fn cancel(&mut self, id: i64, reason: &str) -> Option<W> {
        let p = self.pending.remove(&id)?;
        self.stats.cancelled += 1;
        self.abandoned.insert(id);
        if p.timing.cancellable && !self.closed {
            self.queue_cancel(id, reason);
        }
        Some(p.waiter)
    }

    /// The connection ended: every pending request fails now, later ones are
    /// refused.
    pub fn handle_closed(&mut self) {
        for (key, event) in self.routes.closed() {
            self.events.push_back(CoreEvent::Subscription {
                key,
                event: Box::new(event),
            });
        }
        self.closed = true;
        self.deadlines.clear();
        self.transmit.clear();
        let mut ids: Vec<i64> = self.pending.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(p) = self.pending.remove(&id) {
                // The server may still answer while the connection winds
                // down (we close it): that answer is late, not a violation.
                self.abandoned.insert(id);
                self.events.push_back(CoreEvent::Completed {
                    id,
                    waiter: p.waiter,
                    outcome: Err(Failure::Closed),
                });
            }
        }
    }

    /// Routes notifications to subscription `key` from now on (2026 when
    /// `modern`: then only those tagged with its listen request's id, see
    /// [`ProtocolCore::listening`]). At most 64 at once.
    pub(crate) fn add_route(
        &mut self,
        key: u64,
        filter: mcp_types::SubscriptionFilter,
        modern: bool,
    ) -> Result<(), subscriptions::TooManySubscriptions> {
        self.routes.add(key, filter, modern)
    }

    /// A legacy HTTP server forgot our session: its subscriptions end
    /// ([`SubscriptionEnd::SessionExpired`](subscriptions::SubscriptionEnd::SessionExpired))
    /// and are routed nothing more. Requests are not touched: each learns it
    /// from its own answer.
    pub fn handle_session_expired(&mut self) {
        for (key, event) in self.routes.expired() {
            self.events.push_back(CoreEvent::Subscription {
                key,
                event: Box::new(event),
            });
        }
    }

    /// Stops routing to subscription `key`.
    pub(crate) fn remove_route(&mut self, key: u64) {
        self.routes.remove(key);
    }

    /// Subscription `key`'s listen request has id `id`: notifications tagged
    /// with it are the subscription's.
    pub(crate) fn listening(&mut self, key: u64, id: i64) {
        self.routes.listening(key, id);
    }

    /// Sets the client features the host offers (from the capabilities the
    /// session declares): a server request for anything else is refused by
    /// the core, named after the feature.
    pub fn set_offered(&mut self, capabilities: &mcp_types::ClientCapabilities) {
        self.offered = server_requests::Offered::from_capabilities(capabilities);
    }

    /// The client features the host offers.
    pub(crate) fn offered(&self) -> server_requests::Offered {
        self.offered
    }

    /// Classifies a request of the server's: `ping` is answered at once; an
    /// unknown method, params that do not parse, a feature the host does
    /// not offer, or one request more than [`MAX_SERVER_REQUESTS`] handled
    /// at once are refused; the rest go to the host.
    fn server_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) {
        use mcp_types::ServerRequestMessage;
        let request = match ServerRequestMessage::parse(method, params) {
            Ok(ServerRequestMessage::Ping(_)) => {
                self.queue_answer(&id, Ok(serde_json::Value::Object(Default::default())));
                return;
            }
            Ok(ServerRequestMessage::Unknown { .. }) => {
                self.queue_answer(&id, Err(server_requests::method_not_found(method)));
                return;
            }
            Ok(request) => request,
            Err(_) => {
                self.queue_answer(&id, Err(server_requests::invalid_params(method)));
                return;
            }
        };
        if let Err(refusal) = server_requests::admit(&request, self.offered) {
            self.queue_answer(&id, Err(refusal));
            return;
        }
        if self.server_requests.contains(&id) {
            self.violation(Violation::DuplicateRequestId(id));
            return;
        }
        if self.server_requests.len() >= MAX_SERVER_REQUESTS {
            self.queue_answer(&id, Err(server_requests::too_many()));
            return;
        }
        self.server_requests.insert(id.clone());
        self.events.push_back(CoreEvent::ServerRequest {
            id,
            request: Box::new(request),
        });
    }

    /// The host's answer to a server request the core handed over
    /// ([`CoreEvent::ServerRequest`]). An answer to a request the server
    /// cancelled meanwhile ([`CoreEvent::ServerRequestCancelled`]) is not
    /// sent: a cancelled request gets no response.
    ///
    /// While the host answers a request of the server's, the deadlines of
    /// our own requests do not run out (a person may take minutes over an
    /// elicitation form while the tool call that asked waits); once the
    /// last of them is answered, each of our requests whose deadline
    /// progress may push back is given its whole timeout again from `now`,
    /// never past [`CoreLimits::hard_deadline`].
    pub fn answer_server_request(
        &mut self,
        now: Instant,
        id: &RequestId,
        answer: Result<serde_json::Value, ErrorObject>,
    ) {
        if self.server_requests.remove(id) {
            self.queue_answer(id, answer);
            self.host_answered(now);
        }
    }

    /// The host has no request of the server's left to answer: the clocks
    /// of our requests start again (see [`Self::answer_server_request`]).
    fn host_answered(&mut self, now: Instant) {
        if !self.server_requests.is_empty() {
            return;
        }
        let hard = self.limits.hard_deadline;
        for (&id, p) in &mut self.pending {
            let (true, Some(old)) = (p.timing.reset_on_progress, p.deadline) else {
                continue;
            };
            let restarted = (now + p.timing.timeout).min(p.started + hard);
            if restarted > old {
                p.deadline = Some(restarted);
                self.deadlines.push(Reverse((restarted, id)));
            }
        }
    }

    /// A `notifications/cancelled` of the server's: when it names one of
    /// its requests the host is handling, that request is over (the driver
    /// stops its handler; no answer will be sent).
    fn server_cancelled(&mut self, now: Instant, params: Option<&[u8]>) {
        let Some(params) = params else { return };
        let Ok(cancel) = serde_json::from_slice::<mcp_types::CancelledParams>(params) else {
            return;
        };
        if let Some(id) = cancel.request_id
            && self.server_requests.remove(&id)
        {
            self.events
                .push_back(CoreEvent::ServerRequestCancelled { id });
            self.host_answered(now);
        }
    }

    /// Queues a result or error answer to a request of the server's.
    fn queue_answer(&mut self, id: &RequestId, answer: Result<serde_json::Value, ErrorObject>) {
        let frame = match &answer {
            Ok(result) => serde_json::to_vec(&mcp_types::OutgoingResult { id, result }),
            Err(error) => serde_json::to_vec(&mcp_types::OutgoingError {
                id: Some(id),
                error,
            }),
        }
        // Invariant: an id, a JSON value and an error object always serialise.
        .expect("serialising an answer envelope");
        self.queue_frame(Bytes::from(frame));
    }

    /// Queues a frame the driver must send (answers to server requests,
    /// notifications).
    pub fn queue_frame(&mut self, frame: Bytes) {
        if !self.closed {
            self.transmit.push_back(frame);
        }
    }

    /// Queues a notification.
    pub fn queue_notification(&mut self, method: &str, params: Option<&RawValue>) {
        let frame = notification_frame(method, params);
        self.queue_frame(frame);
    }

    /// The frame of a notification the host sends, for the caller to write
    /// itself (as [`start_request`](Self::start_request)'s frame is), so that
    /// it waits for room in the transport. Refused once the connection is
    /// closed.
    pub fn notification(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Bytes, Refusal> {
        if self.closed {
            return Err(Refusal::Closed);
        }
        Ok(notification_frame(method, params))
    }

    // ---- outputs -------------------------------------------------------

    /// The next frame to send.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Bytes> {
        self.transmit.pop_front()
    }

    /// The next event for the driver.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<CoreEvent<W>> {
        self.events.pop_front()
    }

    /// When [`ProtocolCore::handle_timeout`] must be called next.
    #[must_use]
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.timer_moved = false;
        self.armed = self.next_deadline();
        self.armed
    }

    /// [`ProtocolCore::poll_timeout`] for a driver that keeps one timer
    /// armed across requests: `armed` is when that timer fires now (`None`:
    /// not armed), and the answer is when it must fire. A timer armed for a
    /// deadline that has since gone away (its request was answered) is kept
    /// rather than moved later: it fires early once, [`handle_timeout`]
    /// finds nothing due and the driver arms it again. Moving a timer costs
    /// the runtime a wake-up of its own thread, and sequential requests
    /// would otherwise move it twice per request (armed by the request,
    /// disarmed by its answer); kept, it moves about once per timeout
    /// period. Requests asking to re-arm it
    /// ([`ProtocolCore::take_timer_moved`]) are then only those with an
    /// earlier deadline than the one it is armed for.
    ///
    /// [`handle_timeout`]: ProtocolCore::handle_timeout
    #[must_use]
    pub fn poll_timer(&mut self, armed: Option<Instant>) -> Option<Instant> {
        self.timer_moved = false;
        let next = self.next_deadline();
        self.armed = match (armed, next) {
            (Some(armed), Some(next)) => Some(armed.min(next)),
            (armed, next) => armed.or(next),
        };
        self.armed
    }

    /// Whether a request registered since the last
    /// [`ProtocolCore::poll_timeout`] (or [`ProtocolCore::poll_timer`]) has
    /// a deadline earlier than the one it answered (the driver's timer must
    /// be re-armed). Clears the flag. Cheaper than asking `poll_timeout`
    /// before and after each request.
    pub fn take_timer_moved(&mut self) -> bool {
        std::mem::take(&mut self.timer_moved)
    }

    /// The start of the first frame the peer sent that was not a JSON-RPC
    /// message (at most `mcp_transport::UNPARSED_LINE_BYTES`), if it sent one.
    pub fn first_unparsed(&self) -> Option<&[u8]> {
        self.first_unparsed.as_deref()
    }

    fn next_deadline(&mut self) -> Option<Instant> {
        // Drop stale entries so the answer is the real next deadline.
        while let Some(Reverse((deadline, id))) = self.deadlines.peek().copied() {
            if self.pending.get(&id).and_then(|p| p.deadline) == Some(deadline) {
                return Some(deadline);
            }
            self.deadlines.pop();
        }
        None
    }

    // ---- internals -----------------------------------------------------

    fn complete(&mut self, id: RequestId, outcome: Result<RawResult, Failure>) {
        let key = match id {
            RequestId::Number(n) => n,
            other => {
                // We only ever send integer ids.
                self.violation(Violation::UnknownResponseId(other));
                return;
            }
        };
        match self.pending.remove(&key) {
            Some(p) => {
                self.stats.responses_received += 1;
                self.events.push_back(CoreEvent::Completed {
                    id: key,
                    waiter: p.waiter,
                    outcome,
                });
            }
            None if self.abandoned.take(key) => {
                // A late answer to a request we gave up on: expected, ignored.
                self.stats.late_responses += 1;
            }
            None => self.violation(Violation::UnknownResponseId(RequestId::Number(key))),
        }
    }

    fn progress(&mut self, now: Instant, params: Bytes) {
        #[derive(serde::Deserialize)]
        struct Token {
            #[serde(rename = "progressToken")]
            progress_token: RequestId,
        }
        let Ok(token) = serde_json::from_slice::<Token>(&params) else {
            self.violation(Violation::Malformed);
            return;
        };
        let RequestId::Number(id) = token.progress_token else {
            self.stats.stray_progress += 1;
            return;
        };
        let hard = self.limits.hard_deadline;
        let Some(p) = self.pending.get_mut(&id) else {
            // Progress for a request that already ended: harmless.
            self.stats.stray_progress += 1;
            return;
        };
        if let (true, Some(old)) = (p.timing.reset_on_progress, p.deadline) {
            let new_deadline = (now + p.timing.timeout).min(p.started + hard);
            if new_deadline > old {
                p.deadline = Some(new_deadline);
                self.deadlines.push(Reverse((new_deadline, id)));
            }
        }
        self.events.push_back(CoreEvent::Progress { id, params });
    }

    fn queue_cancel(&mut self, id: i64, reason: &str) {
        #[derive(serde::Serialize)]
        struct Params<'a> {
            #[serde(rename = "requestId")]
            request_id: i64,
            reason: &'a str,
        }
        let params = serde_json::value::to_raw_value(&Params {
            request_id: id,
            reason,
        })
        // Invariant: an integer and a string always serialise.
        .expect("serialising cancel params");
        self.queue_notification(Cancelled::METHOD, Some(&params));
    }

    /// Whether a notification with this method is handled; a dropped one
    /// is counted (and the drops reported now and then).
    fn admit(&mut self, now: Instant, method: &str) -> bool {
        match self.intake.admit(now, method) {
            intake::Admit::Parse => true,
            intake::Admit::Discard => {
                self.stats.log_messages_discarded += 1;
                false
            }
            intake::Admit::OverBudget => {
                self.stats.notifications_over_budget += 1;
                if self.intake.report_due(now) {
                    self.events.push_back(CoreEvent::NotificationsDropped {
                        over_budget: self.stats.notifications_over_budget,
                    });
                }
                false
            }
        }
    }

    fn violation(&mut self, v: Violation) {
        self.stats.violations += 1;
        self.events.push_back(CoreEvent::Violation(v));
    }
}

/// Hashes the core's request ids. They are our own sequential integers, so
/// a multiplicative hash spreads them well; SipHash's flood resistance buys
/// nothing here and costs on every request and response.
#[derive(Clone, Copy, Debug, Default)]
struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

/// See [`IdHash`].
#[derive(Debug)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not reached for `i64` keys (they use `write_i64`); kept correct.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        // Fibonacci hashing: the high bits, which hashbrown uses for its
        // control bytes, depend on every bit of the id.
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests;
