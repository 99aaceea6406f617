//! One supervisor task per server: start, watch, restart with back-off.
//!
//! ```text
//!            ┌──────────── back-off (restart: backoff) ◄──────────┐
//!            ▼                                                     │
//!  Starting ──ok──► Ready ──(session closed)──► failure ───────────┤
//!     │                                                            │
//!     └────────────err────────────────────────► failure ───────────┘
//!                                                   │ restart: never, or a
//!                                                   ▼ required first start
//!                                                 Failed
//!  any state ──shutdown──► Stopped
//! ```
//!
//! A failure is a start that did not reach ready or a session that died
//! before it had been up for the back-off's `stable_after`; a longer-lived
//! session resets the count first. The host hears of every step
//! ([`crate::HubEvent`]) and once per streak when the count reaches
//! `notify_after`. Requests in flight when a session dies fail with
//! [`crate::HubError::ServerDied`] and are never replayed.

use std::sync::Arc;
use std::time::Duration;

use mcp_session::{Ready, Session, SessionError, SessionEvent, SessionEvents};
use mcp_transport::{CloseReason, ExitInfo};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;

use crate::HubError;
use crate::config::{Adoption, Discovery, RestartPolicy};
use crate::events::HubEvent;
use crate::namespace::snapshot::ToolSnapshot;
use crate::servers::backoff;
use crate::servers::retry::{Repeatable, with_retry};
use crate::servers::server::{ServerCell, ServerStatusKind};
use crate::shared::HubShared;

/// The result of a first start, for the hub's start barrier.
pub(crate) type FirstOutcome = Result<(), Arc<HubError>>;

struct Started {
    session: Arc<Session<Ready>>,
    events: Option<SessionEvents>,
    snapshot: Option<Arc<ToolSnapshot>>,
}

enum End {
    Shutdown,
    Died(ExitInfo),
}

/// Runs one server until the hub shuts down.
pub(crate) async fn supervise(
    hub: Arc<HubShared>,
    index: usize,
    first: oneshot::Sender<FirstOutcome>,
) {
    let cell = Arc::clone(&hub.cells[index]);
    let name = cell.spec.name.clone();
    let mut shutdown = hub.shutdown.subscribe();
    let mut first = Some(first);
    let mut attempt: u32 = 0;
    'life: loop {
        if *shutdown.borrow() {
            break;
        }
        cell.state().kind = ServerStatusKind::Starting;
        hub.events.emit(HubEvent::Starting {
            server: name.clone(),
            attempt,
        });
        let outcome = tokio::select! {
            biased;
            _ = stopped(&mut shutdown) => break 'life,
            // Boxed: starting (spawn, negotiate, list) is the largest state
            // and lasts a moment; the task then lives as long as the server,
            // and a hub holds one per server.
            r = Box::pin(start_once(&hub, &cell)) => r,
        };
        let failure = match outcome {
            Ok(Started {
                session,
                events,
                snapshot,
            }) => {
                let info = cell.install(Arc::clone(&session));
                let tools = snapshot.as_ref().map(|s| s.tools().len());
                // The snapshot is in place before anyone hears of the ready
                // server, so the hub's first namespace holds it.
                if let Some(snapshot) = snapshot {
                    offer_snapshot(&hub, &cell, snapshot, false);
                }
                // A restart may bring new tools or capabilities (helpers).
                if hub.is_started() {
                    let _ = hub.rebuild_namespace();
                }
                hub.events.emit(HubEvent::Ready {
                    server: name.clone(),
                    era: info.era,
                    version: info.version,
                    tools,
                });
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(()));
                }
                let up = Instant::now();
                let end = watch_session(&hub, &cell, &session, events, &mut shutdown).await;
                drop(session);
                let exit = match end {
                    End::Shutdown => break 'life,
                    End::Died(exit) => exit,
                };
                let mut state = cell.state();
                state.session = None;
                if let RestartPolicy::Backoff(b) = &cell.spec.restart
                    && up.elapsed() >= b.stable_after
                {
                    state.consecutive_failures = 0;
                }
                Arc::new(HubError::Exited {
                    server: name.clone(),
                    exit,
                })
            }
            Err(e) => Arc::new(e),
        };
        let failures = {
            let mut state = cell.state();
            state.consecutive_failures = state.consecutive_failures.saturating_add(1);
            state.last_error = Some(Arc::clone(&failure));
            state.consecutive_failures
        };
        tracing::debug!(server = %name, error = %failure, failures, "server failed");
        hub.events.emit(HubEvent::Failed {
            server: name.clone(),
            error: Arc::clone(&failure),
        });
        let required_first = first.is_some() && cell.spec.required;
        if let Some(tx) = first.take() {
            let _ = tx.send(Err(Arc::clone(&failure)));
        }
        let backoff = match &cell.spec.restart {
            RestartPolicy::Backoff(b) if !required_first => b,
            // Never restarted: a stateful server, or a required server whose
            // failure is failing the hub's start right now.
            _ => {
                cell.state().kind = ServerStatusKind::Failed;
                stopped(&mut shutdown).await;
                break 'life;
            }
        };
        if failures == backoff.notify_after {
            hub.events.emit(HubEvent::RepeatedFailures {
                server: name.clone(),
                consecutive: failures,
            });
        }
        attempt = attempt.saturating_add(1);
        let delay = backoff::delay(
            backoff.initial,
            backoff.max,
            backoff.jitter,
            failures,
            hub.jitter.unit(),
        );
        {
            let mut state = cell.state();
            state.kind = ServerStatusKind::Restarting;
            state.restarts = attempt;
        }
        hub.events.emit(HubEvent::Restarting {
            server: name.clone(),
            attempt,
            delay,
        });
        tokio::select! {
            biased;
            _ = stopped(&mut shutdown) => break 'life,
            _ = tokio::time::sleep(delay) => {}
        }
    }
    cell.state().kind = ServerStatusKind::Stopped;
    hub.events.emit(HubEvent::Stopped { server: name });
}

/// Resolves when the hub shuts down (or is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|s| *s).await;
}

/// Connect, negotiate and (eagerly) discover, within the start deadline.
async fn start_once(hub: &HubShared, cell: &ServerCell) -> Result<Started, HubError> {
    let spec = &cell.spec;
    let name = &spec.name;
    let start = async {
        let mut config = spec.session.clone();
        // Nobody reads log messages the host did not ask for: the session
        // drops them before parsing.
        config.discard_log_messages |= spec.log_level.is_none();
        let session = Session::connect(Arc::clone(&spec.connector), config)
            .await
            .map_err(|e| start_error(cell, e))?;
        let mut session = session
            .negotiate(spec.negotiation)
            .await
            .map_err(|f| start_error(cell, f.into_error()))?;
        let events = session.take_events();
        set_log_level(cell, &session).await;
        let session = Arc::new(session);
        let snapshot = match spec.discovery {
            Discovery::Eager => Some(list_snapshot(hub, cell, &session).await?),
            Discovery::Lazy => None,
        };
        Ok(Started {
            session,
            events,
            snapshot,
        })
    };
    match tokio::time::timeout(spec.start_timeout, start).await {
        Ok(result) => result,
        Err(_) => Err(HubError::StartTimeout {
            server: name.clone(),
            after: spec.start_timeout,
        }),
    }
}

/// A server that ends during its start has exited, not "died under a call".
fn start_error(cell: &ServerCell, error: SessionError) -> HubError {
    match error {
        SessionError::Dead(exit) => HubError::Exited {
            server: cell.spec.name.clone(),
            exit,
        },
        other => HubError::from_session(&cell.spec.name, "initialize", other),
    }
}

/// Lists every tool (all pages, bounded) into a new snapshot.
pub(crate) async fn list_snapshot(
    hub: &HubShared,
    cell: &ServerCell,
    session: &Session<Ready>,
) -> Result<Arc<ToolSnapshot>, HubError> {
    let name = &cell.spec.name;
    let catalog = with_retry(
        &cell.spec.retry,
        Repeatable::Idempotent,
        &hub.jitter,
        || session.list_tools(),
    )
    .await
    .map_err(|e| HubError::from_session(name, "tools/list", e))?;
    Ok(Arc::new(ToolSnapshot::from_catalog(
        name.clone(),
        cell.next_generation(),
        catalog,
    )))
}

/// Makes `snapshot` active, or holds it for review, or drops it when nothing
/// changed. Returns whether the active snapshot changed.
pub(crate) fn offer_snapshot(
    hub: &HubShared,
    cell: &ServerCell,
    snapshot: Arc<ToolSnapshot>,
    rebuild: bool,
) -> bool {
    let server = cell.spec.name.clone();
    let generation = snapshot.generation();
    let (changed, event) = {
        let mut state = cell.state();
        match &state.active {
            // The first listing is the baseline the host reviews changes
            // against: it is always adopted.
            None => {
                let diff = snapshot.diff(None);
                state.active = Some(snapshot);
                let event = HubEvent::SnapshotAdopted {
                    server,
                    generation,
                    diff,
                };
                (true, Some(event))
            }
            Some(active) if active.same_tools(&snapshot) => {
                state.pending = None;
                (false, None)
            }
            Some(active) => {
                let diff = snapshot.diff(Some(active));
                match cell.spec.adoption {
                    Adoption::Automatic => {
                        state.active = Some(snapshot);
                        state.pending = None;
                        let event = HubEvent::SnapshotAdopted {
                            server,
                            generation,
                            diff,
                        };
                        (true, Some(event))
                    }
                    Adoption::Review => {
                        state.pending = Some(snapshot);
                        let event = HubEvent::SnapshotPending {
                            server,
                            generation,
                            diff,
                        };
                        (false, Some(event))
                    }
                }
            }
        }
    };
    if let Some(event) = event {
        hub.events.emit(event);
    }
    if changed && rebuild && hub.is_started() {
        let _ = hub.rebuild_namespace();
    }
    changed
}

/// Follows the session's events until it ends or the hub shuts down;
/// refreshes the tool snapshot on `notifications/tools/list_changed`.
async fn watch_session(
    hub: &HubShared,
    cell: &ServerCell,
    session: &Session<Ready>,
    events: Option<SessionEvents>,
    shutdown: &mut watch::Receiver<bool>,
) -> End {
    let Some(mut events) = events else {
        // Cannot happen (a fresh session always has its events); watch the
        // connection state instead.
        loop {
            tokio::select! {
                biased;
                _ = stopped(shutdown) => return End::Shutdown,
                _ = tokio::time::sleep(Duration::from_millis(200)) => {
                    if session.is_closed() {
                        return End::Died(ExitInfo::without_process(CloseReason::EndOfStream));
                    }
                }
            }
        }
    };
    // 2026: list changes arrive only on a `subscriptions/listen` stream.
    // Its notifications reach the session's events like legacy ones, so the
    // loop below serves both; the stream lives as long as this watch (it is
    // cancelled when the watch ends). A stream the server ends while the
    // session lives is opened again after a back-off, and the tools are
    // listed again (changes may have been missed in between). A server
    // without subscriptions just keeps its listing.
    let mut listen = ToolsListen::default();
    if matches!(session.era(), mcp_types::Era::Modern) {
        listen.open(cell, session).await;
    }
    loop {
        let due = listen.due;
        let event = tokio::select! {
            biased;
            _ = stopped(shutdown) => return End::Shutdown,
            event = events.next() => event,
            end = listen.ended() => {
                listen.schedule(cell, &end);
                continue;
            }
            () = sleep_until_due(due) => {
                if listen.open(cell, session).await && !refreshed(hub, cell, session, shutdown).await {
                    return End::Shutdown;
                }
                continue;
            }
        };
        match event {
            None => return End::Died(ExitInfo::without_process(CloseReason::EndOfStream)),
            Some(SessionEvent::Closed(exit)) => return End::Died(exit),
            Some(SessionEvent::Notification { method, .. })
                if method == "notifications/tools/list_changed" =>
            {
                // Coalesce a burst into one listing.
                while let Some(next) = events.try_next() {
                    if let SessionEvent::Closed(exit) = next {
                        return End::Died(exit);
                    }
                }
                if !refreshed(hub, cell, session, shutdown).await {
                    return End::Shutdown;
                }
            }
            // Log messages only for a host that asked for them (the session
            // drops the others unparsed), and parsed only when the event
            // queue has room for chatter (its last quarter is kept for the
            // other events): a flooding server costs the others nothing
            // beyond the session's own work, and pushes no event out.
            Some(SessionEvent::Notification { method, params })
                if method == "notifications/message" && cell.spec.log_level.is_some() =>
            {
                if !hub.events.has_room_for_chatter() {
                    hub.events.count_dropped();
                } else if let Some(event) =
                    crate::events::server_log(&cell.spec.name, params.as_deref())
                {
                    hub.events.emit(event);
                }
            }
            // A 2025-11-25 task's status, from a server that declared
            // tasks, bounded and parsed only when the queue has room.
            Some(SessionEvent::Notification { method, params })
                if method == "notifications/tasks/status" =>
            {
                let declared =
                    crate::governance::calls::capabilities(cell).is_some_and(|c| c.tasks.is_some());
                if declared {
                    if !hub.events.has_room_for_chatter() {
                        hub.events.count_dropped();
                    } else if let Some(event) =
                        crate::events::task_status(&cell.spec.name, params.as_deref())
                    {
                        hub.events.emit(event);
                    }
                }
            }
            // The server forgot our session (it restarted, say) and the
            // session started a new one: what the server says of itself is
            // taken again, what the old one was told (the log level) is said
            // again, and the tools are listed again, as the server may have
            // changed. Subscriptions renew themselves.
            Some(SessionEvent::Reestablished) => {
                cell.reestablished(session);
                hub.events.emit(HubEvent::SessionReestablished {
                    server: cell.spec.name.clone(),
                });
                set_log_level(cell, session).await;
                if !refreshed(hub, cell, session, shutdown).await {
                    return End::Shutdown;
                }
            }
            Some(SessionEvent::NotificationsDropped { over_budget }) => {
                hub.events.emit(HubEvent::NotificationsDropped {
                    server: cell.spec.name.clone(),
                    over_budget,
                });
            }
            Some(_) => {}
        }
    }
}

/// Waits until `due` (never, when `None`).
async fn sleep_until_due(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Consecutive ends of the tools `subscriptions/listen` stream (each
/// without a long-lived stream before it) after which the hub stops
/// opening it again.
const MAX_RELISTENS: u32 = 10;
/// The first wait before opening an ended stream again; doubled per
/// consecutive end, up to [`RELISTEN_CAP`].
const RELISTEN_FIRST: Duration = Duration::from_millis(500);
/// The longest wait before opening an ended stream again.
const RELISTEN_CAP: Duration = Duration::from_secs(30);
/// A stream that lived this long before it ended was not fruitless: it
/// resets the count of consecutive ends. Short enough for the proxies that
/// cut an idle stream after 15 or 30 s (the stream is then opened again
/// within a second, and the tools listed again, for as long as the proxy
/// cuts); a server that ends every stream at once is given up on.
const RELISTEN_HEALTHY: Duration = Duration::from_secs(10);

/// The 2026 tools `subscriptions/listen` stream of one session, with its
/// re-opening schedule.
#[derive(Default)]
struct ToolsListen {
    stream: Option<mcp_session::Subscription>,
    opened: Option<Instant>,
    /// Consecutive ends (or failures to open).
    ends: u32,
    /// When to open it again.
    due: Option<Instant>,
}

impl ToolsListen {
    /// Opens the stream; true when it is open.
    async fn open(&mut self, cell: &ServerCell, session: &Session<Ready>) -> bool {
        self.due = None;
        let filter = mcp_types::SubscriptionFilter {
            tools_list_changed: Some(true),
            ..mcp_types::SubscriptionFilter::default()
        };
        match session.subscribe(filter).await {
            Ok(stream) => {
                self.stream = Some(stream);
                self.opened = Some(Instant::now());
                true
            }
            Err(e) => {
                tracing::debug!(server = %cell.spec.name, error = %e, "no list_changed stream");
                // Only a server that has streams but failed to open one now
                // is asked again (a dead session ends the watch anyway).
                if !matches!(e, SessionError::Unsupported { .. }) {
                    self.ended_after(None);
                    self.plan_retry(cell);
                }
                false
            }
        }
    }

    /// Waits until the open stream ends (never, when none is open).
    async fn ended(&mut self) -> mcp_session::SubscriptionEnd {
        let Some(stream) = self.stream.as_mut() else {
            return std::future::pending().await;
        };
        loop {
            match stream.next().await {
                Some(mcp_session::SubscriptionEvent::Ended(end)) => return end,
                None => return mcp_session::SubscriptionEnd::Abrupt,
                Some(_) => {}
            }
        }
    }

    /// The stream ended: plans the next opening, unless the server said it
    /// has no such method.
    fn schedule(&mut self, cell: &ServerCell, end: &mcp_session::SubscriptionEnd) {
        self.stream = None;
        if let mcp_session::SubscriptionEnd::Failed {
            code: Some(mcp_types::error_codes::METHOD_NOT_FOUND),
        } = end
        {
            return;
        }
        self.ended_after(self.opened.map(|at| at.elapsed()));
        self.plan_retry(cell);
    }

    /// Counts an end of a stream that lived `lived` (`None`: it never
    /// opened); a long-lived one starts the count again.
    fn ended_after(&mut self, lived: Option<Duration>) {
        if lived.is_some_and(|lived| lived >= RELISTEN_HEALTHY) {
            self.ends = 0;
        }
        self.ends += 1;
    }

    /// The wait before the next opening, or `None` once given up.
    fn next_wait(&self) -> Option<Duration> {
        (self.ends <= MAX_RELISTENS).then(|| {
            RELISTEN_FIRST
                .saturating_mul(1 << self.ends.saturating_sub(1).min(16))
                .min(RELISTEN_CAP)
        })
    }

    fn plan_retry(&mut self, cell: &ServerCell) {
        match self.next_wait() {
            Some(wait) => self.due = Some(Instant::now() + wait),
            None => tracing::warn!(
                server = %cell.spec.name,
                "the server keeps ending its list_changed stream; tool list changes are no longer followed"
            ),
        }
    }
}

/// Asks the server for the host's log level, if the host asked for log
/// messages and the server has them (at start, and again on a new server
/// session). Log messages are a convenience: a server refusing the level
/// still serves.
async fn set_log_level(cell: &ServerCell, session: &Session<Ready>) {
    if let Some(level) = cell.spec.log_level
        && session.server_capabilities().logging.is_some()
        && let Err(e) = session.set_log_level(level).await
    {
        tracing::debug!(server = %cell.spec.name, error = %e, "setting the log level failed");
    }
}

/// [`refresh`], unless the hub shuts down first; false then.
async fn refreshed(
    hub: &HubShared,
    cell: &ServerCell,
    session: &Session<Ready>,
    shutdown: &mut watch::Receiver<bool>,
) -> bool {
    tokio::select! {
        biased;
        _ = stopped(shutdown) => false,
        _ = refresh(hub, cell, session) => true,
    }
}

/// Lists the tools again after `list_changed` (only once the server was
/// discovered: a lazy server lists on first use anyway).
async fn refresh(hub: &HubShared, cell: &ServerCell, session: &Session<Ready>) {
    let _one_at_a_time = cell.discovery.lock().await;
    if cell.state().active.is_none() {
        return;
    }
    match list_snapshot(hub, cell, session).await {
        Ok(snapshot) => {
            offer_snapshot(hub, cell, snapshot, true);
        }
        Err(e) => {
            tracing::warn!(server = %cell.spec.name, error = %e, "listing tools after list_changed failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_stream_a_proxy_cuts_now_and_then_is_followed_for_good() {
        let mut listen = ToolsListen::default();
        // A proxy cuts the idle stream every 30 s: always opened again at
        // once, however often.
        for _ in 0..100 {
            listen.ended_after(Some(Duration::from_secs(30)));
            assert_eq!(listen.next_wait(), Some(RELISTEN_FIRST));
        }
        // A server that ends every stream at once is waited for longer and
        // longer, then given up on.
        let mut listen = ToolsListen::default();
        let mut waits = Vec::new();
        listen.ended_after(Some(Duration::from_millis(5)));
        while let Some(wait) = listen.next_wait() {
            waits.push(wait);
            listen.ended_after(Some(Duration::from_millis(5)));
        }
        assert_eq!(waits.len(), MAX_RELISTENS as usize);
        assert_eq!(waits[1], RELISTEN_FIRST * 2);
        assert_eq!(waits.last(), Some(&RELISTEN_CAP));
        // A failure to open counts like a short stream.
        let mut listen = ToolsListen::default();
        listen.ended_after(None);
        assert_eq!(listen.next_wait(), Some(RELISTEN_FIRST));
    }
}
