//! The thin async driver around [`ProtocolCore`].
//!
//! Callers lock the core only to register a request (never across an await),
//! then send the frame themselves; the driver task owns the inbound queue, the
//! deadline timer and the delivery of everything the core emits. A response
//! therefore costs one hop from the transport's reader to the driver and one
//! to the caller.

use mcp_types::Notification as _;
use mcp_types::notifications::{
    PromptListChanged, ResourceListChanged, RootsListChanged, ToolListChanged,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use mcp_transport::{CloseReason, ExitInfo, FrameSender, Inbound, OutboundFrame, TransportError};
use mcp_types::{ProgressParams, RequestId, ServerRequestMessage, SubscriptionFilter};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{Notify, mpsc, oneshot};
use tracing::Instrument as _;

use crate::SessionError;
use crate::busy_poll::BusyPoll;
use crate::events::{SessionEvent, SessionEvents};
use crate::expiry::Expiry;
use crate::handler::ClientHandlers;
use crate::params::Params;
use crate::protocol::subscriptions::MAX_SUBSCRIPTIONS;
use crate::protocol::subscriptions::{ListKind, SubscriptionEvent};
use crate::protocol::{
    CoreEvent, CoreLimits, Failure, NotificationIntake, ProtocolCore, RawResult, Refusal,
    RequestTiming,
};
use crate::tools::ProgressSink;

/// How a caller is woken.
pub(crate) struct Waiter {
    tx: oneshot::Sender<Result<RawResult, Failure>>,
    progress: Option<ProgressSink>,
}

/// State shared by the session handle, its callers and the driver task.
pub(crate) struct Shared {
    core: Mutex<ProtocolCore<Waiter>>,
    outbound: FrameSender,
    wake: Notify,
    exit: Mutex<Option<ExitInfo>>,
    version: Mutex<Option<&'static str>>,
    events: mpsc::Sender<SessionEvent>,
    dropped_events: AtomicU64,
    /// `list_changed` kinds (bit per [`ListKind`]), and
    /// [`SessionEvent::Reestablished`] ([`REESTABLISHED_BIT`]), that found
    /// the event queue full and wait for room: coalesced, never lost.
    held_list_changed: AtomicU8,
    list_changed_coalesced: AtomicU64,
    handlers: ClientHandlers,
    /// Bumped by each `list_changed` notification, per kind (tools,
    /// resources, prompts), so a listing can tell it is stale.
    generations: [AtomicU64; 3],
    /// Each subscription's queue, by key.
    subscriptions: Mutex<HashMap<u64, SubscriptionSink>>,
    next_subscription: AtomicU64,
    /// The host's handlers of server requests at work, by the request's
    /// id, so a server's `notifications/cancelled` can stop one.
    server_tasks: Mutex<HashMap<RequestId, tokio::task::AbortHandle>>,
    /// Whether, and how long, a request's caller keeps the runtime polling
    /// for its answer ([`SessionConfig::busy_poll`](crate::SessionConfig::busy_poll)).
    busy_poll: Option<BusyPoll>,
    /// Starting a new server session when the server forgot ours.
    pub(crate) expiry: Expiry,
    /// The host was told [`SessionEvent::Closed`] (once, by whoever ended
    /// the session first: the transport or [`Shared::abandon`]).
    told_closed: AtomicBool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

/// Where a subscription's events go: the core decides which events are
/// its (`protocol/subscriptions.rs`), the driver puts them here.
#[derive(Debug)]
pub(crate) struct SubscriptionSink {
    pub(crate) tx: mpsc::Sender<SubscriptionEvent>,
    pub(crate) dropped: Arc<AtomicU64>,
}

impl SubscriptionSink {
    /// Queues `event`; a full queue drops it and counts it.
    pub(crate) fn push(&self, event: SubscriptionEvent) {
        if self.tx.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What [`Shared::call`] needs besides the method and params: the caller's
/// [`crate::CallOptions`] turned into what goes on the wire.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestOptions {
    pub(crate) timing: RequestTiming,
    /// Where progress notifications of this request go (raw params).
    pub(crate) progress: Option<ProgressSink>,
    /// The `MCP-Protocol-Version` header for HTTP transports.
    pub(crate) protocol_version: Option<&'static str>,
    /// Further per-message HTTP headers (2026 `Mcp-Name`, `Mcp-Param-*`).
    pub(crate) headers: Vec<(String, String)>,
    /// The subscription this request is the listen request of: the core
    /// learns its id before the frame is sent, so notifications tagged with
    /// it are routed from the first one.
    pub(crate) listen_key: Option<u64>,
    /// Results longer than this on the wire are refused before decoding.
    pub(crate) max_result_bytes: Option<usize>,
}

impl Shared {
    /// Starts the driver for a fresh connection; returns the shared state and
    /// the host's event receiver.
    pub(crate) fn start(
        outbound: FrameSender,
        inbound: mpsc::Receiver<Inbound>,
        limits: CoreLimits,
        event_queue: usize,
        handlers: ClientHandlers,
        intake: NotificationIntake,
        busy_poll: Option<std::time::Duration>,
    ) -> (Arc<Shared>, SessionEvents) {
        let (events_tx, events_rx) = mpsc::channel(event_queue.max(1));
        let mut core = ProtocolCore::new(limits);
        core.set_offered(&handlers.capabilities());
        core.set_intake(intake);
        let shared = Arc::new(Shared {
            core: Mutex::new(core),
            outbound,
            wake: Notify::new(),
            exit: Mutex::new(None),
            version: Mutex::new(None),
            events: events_tx,
            dropped_events: AtomicU64::new(0),
            held_list_changed: AtomicU8::new(0),
            list_changed_coalesced: AtomicU64::new(0),
            handlers,
            generations: Default::default(),
            subscriptions: Mutex::new(HashMap::new()),
            next_subscription: AtomicU64::new(1),
            server_tasks: Mutex::new(HashMap::new()),
            busy_poll: busy_poll.and_then(BusyPoll::new),
            expiry: Expiry::default(),
            told_closed: AtomicBool::new(false),
        });
        // The driver logs in the span of whoever connected (the hub's
        // `mcp.server`), so its warnings name the server.
        tokio::spawn(drive(Arc::clone(&shared), inbound).in_current_span());
        (Arc::clone(&shared), SessionEvents::new(events_rx))
    }

    fn core(&self) -> MutexGuard<'_, ProtocolCore<Waiter>> {
        // A panic while the core was locked cannot leave it half-updated in a
        // way that matters more than losing the whole session; keep going.
        self.core.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Diagnostics of the ended connection, once it ended.
    pub(crate) fn exit_info(&self) -> Option<ExitInfo> {
        self.exit.lock().map(|g| g.clone()).unwrap_or(None)
    }

    /// `info` with the start of the first line the server sent that was
    /// not JSON-RPC, when it sent one and `info` has none yet.
    pub(crate) fn with_unparsed(&self, mut info: ExitInfo) -> ExitInfo {
        if info.unparsed_line.is_none() {
            info.unparsed_line = self
                .core()
                .first_unparsed()
                .map(|b| String::from_utf8_lossy(b).into_owned());
        }
        info
    }

    /// Replaces the diagnostics with the complete ones of our own shutdown.
    pub(crate) fn set_exit_info(&self, info: ExitInfo) {
        *self.exit.lock().unwrap_or_else(|p| p.into_inner()) = Some(info);
    }

    /// We are shutting the connection down: no request starts from now on,
    /// and pending ones fail now instead of when the transport ends.
    pub(crate) fn closing(&self) {
        self.exit
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| ExitInfo::without_process(CloseReason::Shutdown));
        self.core().handle_closed();
        // The driver delivers the failures the core queued.
        self.wake.notify_one();
    }

    /// Ends the session from our side because of what the server answered
    /// (it no longer speaks the connection's protocol): pending and later
    /// requests fail with `reason`, subscriptions end, the host is told
    /// [`SessionEvent::Closed`], and nothing the server sends afterwards is
    /// heard. The transport itself ends when the session is dropped or shut
    /// down. Returns false when the session had ended already.
    pub(crate) fn abandon(&self, reason: CloseReason) -> bool {
        let info = {
            let mut slot = self.exit.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_some() {
                return false;
            }
            let info = ExitInfo::without_process(reason);
            *slot = Some(info.clone());
            info
        };
        self.core().handle_closed();
        // The driver delivers the failures the core queued.
        self.wake.notify_one();
        self.tell_closed(info);
        true
    }

    /// Tells the host the session ended, once.
    fn tell_closed(&self, info: ExitInfo) {
        if !self.told_closed.swap(true, Ordering::AcqRel) {
            self.emit(SessionEvent::Closed(info));
        }
    }

    fn dead_error(&self) -> SessionError {
        SessionError::Dead(
            self.exit_info()
                .unwrap_or_else(|| ExitInfo::without_process(CloseReason::EndOfStream)),
        )
    }

    /// The negotiated version, sent as `MCP-Protocol-Version` by HTTP
    /// transports on every later message.
    pub(crate) fn protocol_version(&self) -> Option<&'static str> {
        self.version.lock().map(|g| *g).unwrap_or(None)
    }

    pub(crate) fn set_protocol_version(&self, version: &'static str) {
        if let Ok(mut slot) = self.version.lock() {
            *slot = Some(version);
        }
    }

    /// Registers a subscription: its route in the core (bounded) and its
    /// queue here.
    pub(crate) fn add_subscription(
        &self,
        filter: SubscriptionFilter,
        modern: bool,
        sink: SubscriptionSink,
    ) -> Result<u64, SessionError> {
        if self.exit_info().is_some() {
            return Err(self.dead_error());
        }
        let key = self.next_subscription.fetch_add(1, Ordering::Relaxed);
        // The queue is in place before the first event can be routed to it.
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, sink);
        if self.core().add_route(key, filter, modern).is_err() {
            self.remove_subscription(key);
            return Err(SessionError::TooManySubscriptions {
                limit: MAX_SUBSCRIPTIONS,
            });
        }
        Ok(key)
    }

    /// Forgets a subscription.
    pub(crate) fn remove_subscription(&self, key: u64) {
        self.core().remove_route(key);
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
    }

    /// How many `list_changed` notifications of this kind arrived so far.
    pub(crate) fn list_generation(&self, kind: ListKind) -> u64 {
        self.generations[kind as usize].load(Ordering::Acquire)
    }

    /// Protocol counters.
    pub(crate) fn stats(&self) -> crate::ProtocolStats {
        let mut stats = self.core().stats().clone();
        stats.list_changed_coalesced = self.list_changed_coalesced.load(Ordering::Relaxed);
        stats
    }

    /// The client features the host offers, as the core admits them.
    pub(crate) fn offered(&self) -> crate::protocol::server_requests::Offered {
        self.core().offered()
    }

    /// Host events dropped because the host did not keep up.
    pub(crate) fn dropped_events(&self) -> u64 {
        self.dropped_events.load(Ordering::Relaxed)
    }

    /// Sends a request and waits for its raw result, inside a `mcp.request`
    /// span (method, id, protocol version; its duration is the request's).
    ///
    /// Dropping the returned future cancels the request (the server is sent
    /// `notifications/cancelled`).
    pub(crate) async fn call(
        self: &Arc<Self>,
        method: &Arc<str>,
        params: Params<'_>,
        extra_meta: Option<&Map<String, Value>>,
        options: RequestOptions,
    ) -> Result<RawResult, SessionError> {
        let span = tracing::debug_span!(
            "mcp.request",
            method = &**method,
            id = tracing::field::Empty,
            version = options.protocol_version.unwrap_or("-"),
        );
        let inner = span.clone();
        async {
            let outcome = self
                .call_in_span(method, params, extra_meta, options, &inner)
                .await;
            if let Err(e) = &outcome {
                tracing::debug!(error = %e, "request failed");
            }
            outcome
        }
        .instrument(span)
        .await
    }

    async fn call_in_span(
        self: &Arc<Self>,
        method: &Arc<str>,
        params: Params<'_>,
        extra_meta: Option<&Map<String, Value>>,
        options: RequestOptions,
        span: &tracing::Span,
    ) -> Result<RawResult, SessionError> {
        let (tx, rx) = oneshot::channel();
        let wants_progress = options.progress.is_some();
        let max_result_bytes = options.max_result_bytes;
        let waiter = Waiter {
            tx,
            progress: options.progress,
        };
        let (id, frame, wake) = {
            let mut core = self.core();
            let (id, frame) = core
                .start_request(Instant::now(), method, options.timing, waiter, |id| {
                    params.finish(extra_meta, wants_progress.then_some(id))
                })
                .map_err(|r| match r {
                    Refusal::TooManyInFlight { limit } => SessionError::TooManyInFlight { limit },
                    Refusal::Closed => self.dead_error(),
                })?;
            if let Some(key) = options.listen_key {
                core.listening(key, id);
            }
            (id, frame, core.take_timer_moved())
        };
        span.record("id", id);
        if wake {
            // The driver's timer is armed for a later deadline (or none).
            self.wake.notify_one();
        }
        let mut guard = CancelOnDrop {
            shared: self,
            id,
            armed: true,
        };
        let sent = self
            .outbound
            .send(OutboundFrame {
                protocol_version: options.protocol_version,
                headers: options.headers,
                ..OutboundFrame::request(frame, id, Arc::clone(method))
            })
            .await;
        if let Err(e) = sent {
            guard.armed = false;
            let _ = self.core().cancel(id, "not sent");
            return Err(match e {
                TransportError::Closed => self.dead_error(),
                other => SessionError::Transport(other),
            });
        }
        let outcome = match &self.busy_poll {
            Some(busy) => busy.wait(rx).await,
            None => rx.await,
        };
        guard.armed = false;
        match outcome {
            Ok(Ok(raw)) => match max_result_bytes.map(|limit| (limit, raw.within(limit))) {
                Some((limit, Err(size))) => Err(SessionError::ResultTooLarge {
                    method: method.to_string(),
                    size,
                    limit,
                }),
                _ => Ok(raw),
            },
            Ok(Err(Failure::Server(error))) => Err(SessionError::Server {
                method: method.to_string(),
                code: error.code,
                error: Box::new(error),
            }),
            Ok(Err(Failure::Timeout { after })) => Err(SessionError::Timeout {
                method: method.to_string(),
                after,
            }),
            Ok(Err(Failure::Transport(failure))) => Err(SessionError::Http {
                method: method.to_string(),
                failure,
            }),
            Ok(Err(Failure::Closed)) | Err(_) => Err(self.dead_error()),
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SessionError> {
        if self.exit_info().is_some() {
            return Err(self.dead_error());
        }
        // The core makes every frame; the caller writes this one itself.
        let frame = self
            .core()
            .notification(method, params)
            .map_err(|_| self.dead_error())?;
        self.outbound
            .send(OutboundFrame {
                protocol_version: self.protocol_version(),
                ..OutboundFrame::notification(frame, Arc::from(method))
            })
            .await
            .map_err(|e| match e {
                TransportError::Closed => self.dead_error(),
                other => SessionError::Transport(other),
            })
    }

    /// Legacy era: tells the server whenever the host's roots change. The
    /// watcher holds only a weak reference, so it never keeps a session alive.
    pub(crate) fn watch_roots(self: &Arc<Self>) {
        let Some(roots) = self.handlers.roots_value() else {
            return;
        };
        let mut rx = roots.subscribe();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            while rx.changed().await.is_ok() {
                let Some(shared) = weak.upgrade() else { return };
                if shared.notify(RootsListChanged::METHOD, None).await.is_err() {
                    return;
                }
            }
        });
    }

    fn cancel(&self, id: i64, reason: &str) {
        let had = self.core().cancel(id, reason).is_some();
        if had {
            // The cancellation notification is queued in the core; the driver
            // sends it.
            self.wake.notify_one();
        }
    }

    fn emit(&self, event: SessionEvent) {
        if self.events.try_send(event).is_err() {
            // The host is not reading (or not keeping up): never block the
            // driver, and say how much was lost.
            self.dropped_events.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Queues a `list_changed` for the host; a full queue holds it (one per
    /// kind, later ones merged into it) until there is room.
    fn emit_list_changed(&self, kind: ListKind, event: SessionEvent) {
        let bit = list_bit(kind);
        match self.events.try_send(event) {
            Ok(()) => {
                // This one tells the host everything a held one would.
                self.held_list_changed.fetch_and(!bit, Ordering::AcqRel);
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                if self.held_list_changed.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
                    self.list_changed_coalesced.fetch_add(1, Ordering::Relaxed);
                }
            }
            // The host dropped its receiver: nobody is told anything.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// Hands the host the held `list_changed` notifications (and a held
    /// [`SessionEvent::Reestablished`]) there is room for now.
    fn release_held(&self) {
        for kind in [ListKind::Tools, ListKind::Resources, ListKind::Prompts] {
            let bit = list_bit(kind);
            if self.held_list_changed.load(Ordering::Acquire) & bit == 0 {
                continue;
            }
            let Ok(permit) = self.events.try_reserve() else {
                return;
            };
            self.held_list_changed.fetch_and(!bit, Ordering::AcqRel);
            permit.send(held_event(kind));
        }
        if self.held_list_changed.load(Ordering::Acquire) & REESTABLISHED_BIT != 0
            && let Ok(permit) = self.events.try_reserve()
        {
            self.held_list_changed
                .fetch_and(!REESTABLISHED_BIT, Ordering::AcqRel);
            permit.send(SessionEvent::Reestablished);
        }
    }

    /// The server forgot our session: the core ends its subscriptions, the
    /// driver delivers the ends.
    pub(crate) fn end_subscriptions_on_expiry(&self) {
        self.core().handle_session_expired();
        self.wake.notify_one();
    }

    /// A new server session replaced the one the server forgot: every
    /// listing is stale, and the host is told (held, never dropped, when
    /// its queue is full).
    pub(crate) fn reestablished(&self) {
        for generation in &self.generations {
            generation.fetch_add(1, Ordering::AcqRel);
        }
        match self.events.try_send(SessionEvent::Reestablished) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.held_list_changed
                    .fetch_or(REESTABLISHED_BIT, Ordering::AcqRel);
                // The driver waits for room only while something is held.
                self.wake.notify_one();
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

/// The bit of a held [`SessionEvent::Reestablished`] in
/// [`Shared::held_list_changed`].
const REESTABLISHED_BIT: u8 = 8;

/// Cancels a request when its caller's future is dropped before the answer.
struct CancelOnDrop<'a> {
    shared: &'a Arc<Shared>,
    id: i64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.shared.cancel(self.id, "cancelled by the client");
        }
    }
}

/// The driver task: inbound frames, deadlines, delivery.
async fn drive(shared: Arc<Shared>, mut inbound: mpsc::Receiver<Inbound>) {
    let mut events = Vec::new();
    // One timer for the whole connection, left armed while it is early
    // enough (`ProtocolCore::poll_timer`): a fresh timer per turn of the
    // loop would be registered and dropped for every request, and
    // registering one earlier than the runtime's next wake-up writes to the
    // runtime's wake-up descriptor even from its own thread.
    let mut armed: Option<Instant> = None;
    let mut sleep = std::pin::pin!(tokio::time::sleep_until(tokio::time::Instant::now()));
    loop {
        if !flush(&shared).await {
            // The transport stopped taking frames; the reader will report why.
        }
        let due = shared.core().poll_timer(armed);
        if due != armed {
            if let Some(at) = due {
                sleep.as_mut().reset(at.into());
            }
            armed = due;
        }
        let held = shared.held_list_changed.load(Ordering::Acquire) != 0;
        if held {
            shared.release_held();
        }
        let closed = tokio::select! {
            biased;
            msg = inbound.recv() => {
                let mut closed = handle_inbound(&shared, msg, &mut events);
                // Take whatever else is already queued in the same round.
                while !closed {
                    match inbound.try_recv() {
                        Ok(msg) => closed = handle_inbound(&shared, Some(msg), &mut events),
                        Err(_) => break,
                    }
                }
                closed
            }
            () = &mut sleep, if armed.is_some() => {
                armed = None;
                let mut core = shared.core();
                core.handle_timeout(Instant::now());
                take_events(&mut core, &mut events);
                false
            }
            () = shared.wake.notified() => {
                take_events(&mut shared.core(), &mut events);
                false
            }
            // A `list_changed` waits for room in the host's queue.
            Ok(permit) = shared.events.reserve(), if held => {
                drop(permit);
                false
            }
        };
        for (ev, progress) in events.drain(..) {
            deliver(&shared, ev, progress);
        }
        if closed {
            return;
        }
    }
}

/// Sends every queued frame. Returns false when the transport is closed.
async fn flush(shared: &Shared) -> bool {
    loop {
        let next = shared.core().poll_transmit();
        let Some(bytes) = next else { return true };
        // What the core queued itself (a cancellation, an answer to the
        // server) carries the era and, for a notification, its method like
        // every other frame: over 2026-07-28 HTTP the transport cancels a
        // request by closing its stream when it sees the cancellation.
        let mut frame = match mcp_codec::peek_notification(&bytes) {
            Some(method) => {
                let method = Arc::from(method);
                OutboundFrame::notification(bytes, method)
            }
            None => OutboundFrame::new(bytes),
        };
        frame.protocol_version = shared.protocol_version();
        if shared.outbound.send(frame).await.is_err() {
            return false;
        }
    }
}

/// Drains the core's events. A progress event takes its request's sink
/// now, before a response later in the same batch completes the request.
fn take_events(
    core: &mut ProtocolCore<Waiter>,
    events: &mut Vec<(CoreEvent<Waiter>, Option<ProgressSink>)>,
) {
    while let Some(ev) = core.poll_event() {
        let progress = match &ev {
            CoreEvent::Progress { id, .. } => core.waiter(*id).and_then(|w| w.progress.clone()),
            _ => None,
        };
        events.push((ev, progress));
    }
}

/// Feeds one inbound message to the core and takes its events; true when
/// the connection ended.
fn handle_inbound(
    shared: &Arc<Shared>,
    msg: Option<Inbound>,
    events: &mut Vec<(CoreEvent<Waiter>, Option<ProgressSink>)>,
) -> bool {
    let closed = feed(shared, msg);
    take_events(&mut shared.core(), events);
    closed
}

fn feed(shared: &Arc<Shared>, msg: Option<Inbound>) -> bool {
    if shared.told_closed.load(Ordering::Acquire) && !matches!(msg, None | Some(Inbound::Closed(_)))
    {
        // Abandoned: what the server still sends is not heard.
        return false;
    }
    match msg {
        Some(Inbound::Frame(frame)) => {
            shared.core().handle_frame(Instant::now(), frame);
            false
        }
        Some(Inbound::RequestFailed { id, failure }) => {
            shared.core().handle_request_failed(id, failure);
            false
        }
        Some(Inbound::FrameError(_)) => {
            shared.core().handle_oversized_frame();
            false
        }
        Some(Inbound::Skipped { edge, limit }) => {
            shared.core().handle_skipped_edge(edge, limit);
            false
        }
        Some(Inbound::SessionExpired) => {
            shared.renew_unprompted();
            false
        }
        Some(Inbound::StreamLost) => {
            shared.stream_lost();
            false
        }
        Some(Inbound::Closed(info)) => {
            close(shared, info);
            true
        }
        None => {
            close(shared, ExitInfo::without_process(CloseReason::EndOfStream));
            true
        }
        // A kind of message this session does not know yet: nothing to do.
        Some(_) => false,
    }
}

fn close(shared: &Shared, info: ExitInfo) {
    let info = shared.with_unparsed(info);
    if let Ok(mut slot) = shared.exit.lock() {
        slot.get_or_insert(info.clone());
    }
    shared.core().handle_closed();
    shared.tell_closed(info);
}

fn deliver(shared: &Arc<Shared>, ev: CoreEvent<Waiter>, progress: Option<ProgressSink>) {
    match ev {
        CoreEvent::Completed {
            waiter, outcome, ..
        } => {
            // The caller may have gone; then nobody needs the outcome.
            let _ = waiter.tx.send(outcome);
        }
        CoreEvent::Progress { params, .. } => {
            // Decoded only for a caller who asked for progress. Progress is
            // advisory: malformed params or a slow consumer lose an update,
            // never the response.
            if let Some(sink) = progress
                && let Ok(params) = serde_json::from_slice::<ProgressParams>(&params)
            {
                sink.deliver(params);
            }
        }
        CoreEvent::ServerRequest { id, request } => answer_server_request(shared, id, *request),
        CoreEvent::ServerRequestCancelled { id } => {
            // Dropping the handler's future is how it learns: a handler
            // that forwards the request elsewhere gives that one up too.
            let task = lock(&shared.server_tasks).remove(&id);
            if let Some(task) = task {
                task.abort();
            }
        }
        CoreEvent::Notification { method, params } => {
            if let Some(kind) = ListKind::from_notification(&method) {
                shared.generations[kind as usize].fetch_add(1, Ordering::AcqRel);
                shared.emit_list_changed(kind, SessionEvent::Notification { method, params });
            } else {
                shared.emit(SessionEvent::Notification { method, params });
            }
        }
        CoreEvent::NotificationsDropped { over_budget } => {
            shared.emit(SessionEvent::NotificationsDropped { over_budget });
        }
        CoreEvent::Subscription { key, event } => {
            let subs = shared
                .subscriptions
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if let Some(sink) = subs.get(&key) {
                sink.push(*event);
            }
        }
        CoreEvent::Violation(v) => {
            tracing::warn!(violation = ?v, "server broke the protocol; frame skipped");
            shared.emit(SessionEvent::ProtocolViolation(v));
        }
    }
}

/// Hands a server request the core admitted to the host's handler, on a task
/// of its own, so a slow handler never holds up responses to our own
/// requests; the core sends the answer.
/// The task is recorded by the request's id until it ends, so that the
/// server's cancellation can stop it.
fn answer_server_request(shared: &Arc<Shared>, id: RequestId, request: ServerRequestMessage) {
    let task_shared = Arc::clone(shared);
    let key = id.clone();
    // Held while the task starts, so the task's own removal of its entry
    // (it takes this lock) always comes after the insertion.
    let mut tasks = lock(&shared.server_tasks);
    let progress = crate::handler::ProgressReporter::new(
        crate::handler::progress_token(&request),
        Arc::downgrade(shared),
    );
    // In the driver's span: a host handler's own logs name the server too.
    let task = tokio::spawn(
        async move {
            let answer = task_shared.handlers.answer(request, progress.clone()).await;
            progress.finish();
            lock(&task_shared.server_tasks).remove(&id);
            task_shared
                .core()
                .answer_server_request(Instant::now(), &id, answer);
            task_shared.wake.notify_one();
        }
        .in_current_span(),
    );
    tasks.insert(key, task.abort_handle());
}

/// The bit of a list kind in [`Shared::held_list_changed`].
fn list_bit(kind: ListKind) -> u8 {
    match kind {
        ListKind::Tools => 1,
        ListKind::Resources => 2,
        ListKind::Prompts => 4,
    }
}

/// The event a held `list_changed` is delivered as (its params, which
/// carry nothing a host acts on, are not kept).
fn held_event(kind: ListKind) -> SessionEvent {
    let method = match kind {
        ListKind::Tools => ToolListChanged::METHOD,
        ListKind::Resources => ResourceListChanged::METHOD,
        ListKind::Prompts => PromptListChanged::METHOD,
    };
    SessionEvent::Notification {
        method: method.to_owned(),
        params: None,
    }
}

/// Locks a map of plain data (a panic while it was held leaves nothing
/// half-updated that matters).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
