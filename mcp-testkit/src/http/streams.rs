//! Event-stream reply bodies, and the event log that lets a client resume a
//! reply stream with `Last-Event-ID`.
//!
//! Each event-stream reply to a POST gets a stream number `n`; its events have
//! ids `n-1`, `n-2`, … (`n-0` is the "priming" event that carries only an id
//! and, when the script closes streams early, a `retry`). A GET with
//! `Last-Event-ID: n-k` replays events after `k` and continues the stream.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::{Notify, mpsc};

/// Events kept per reply stream for resumption; later ones are sent but not
/// kept.
pub(crate) const MAX_LOGGED_EVENTS: usize = 10_000;
/// Reply streams kept for resumption; the oldest is forgotten first.
pub(crate) const MAX_LOGGED_STREAMS: usize = 1024;

/// One reply stream's events, for sending and resending.
pub(crate) struct ReplyLog {
    number: u64,
    state: Mutex<LogState>,
    changed: Notify,
}

#[derive(Default)]
struct LogState {
    events: Vec<Value>,
    done: bool,
}

impl ReplyLog {
    fn state(&self) -> MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends the frames of `rx` until the response (or the end of `rx`).
    pub(crate) async fn collect(self: Arc<Self>, mut rx: mpsc::Receiver<Value>) {
        while let Some(frame) = rx.recv().await {
            let is_response = frame.get("method").is_none();
            {
                let mut state = self.state();
                if state.events.len() < MAX_LOGGED_EVENTS {
                    state.events.push(frame);
                }
            }
            self.changed.notify_waiters();
            if is_response {
                break;
            }
        }
        self.state().done = true;
        self.changed.notify_waiters();
    }

    /// Event `index` (0-based), waiting for it; `None` once the stream is
    /// done and has no such event.
    async fn event(&self, index: usize) -> Option<Value> {
        loop {
            let notified = self.changed.notified();
            {
                let state = self.state();
                if let Some(event) = state.events.get(index) {
                    return Some(event.clone());
                }
                if state.done {
                    return None;
                }
            }
            notified.await;
        }
    }
}

/// The reply streams of one HTTP server.
#[derive(Default)]
pub(crate) struct ReplyLogs {
    inner: Mutex<LogsInner>,
}

#[derive(Default)]
struct LogsInner {
    next: u64,
    logs: HashMap<u64, Arc<ReplyLog>>,
}

impl ReplyLogs {
    fn inner(&self) -> MutexGuard<'_, LogsInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new reply stream fed by `rx`.
    pub(crate) fn create(&self, rx: mpsc::Receiver<Value>) -> Arc<ReplyLog> {
        let log = {
            let mut inner = self.inner();
            inner.next += 1;
            let number = inner.next;
            if inner.logs.len() >= MAX_LOGGED_STREAMS {
                let oldest = inner.logs.keys().min().copied();
                if let Some(oldest) = oldest {
                    inner.logs.remove(&oldest);
                }
            }
            let log = Arc::new(ReplyLog {
                number,
                state: Mutex::new(LogState::default()),
                changed: Notify::new(),
            });
            inner.logs.insert(number, Arc::clone(&log));
            log
        };
        tokio::spawn(Arc::clone(&log).collect(rx));
        log
    }

    /// The stream and the index after `last_event_id` (`n-k`).
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<(Arc<ReplyLog>, usize)> {
        let (number, seen) = last_event_id.split_once('-')?;
        let number: u64 = number.parse().ok()?;
        let seen: usize = seen.parse().ok()?;
        let log = self.inner().logs.get(&number).cloned()?;
        Some((log, seen))
    }
}

/// How a reply stream body begins and whether it ends early.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamStart {
    /// Send the priming event (id `n-0`), with this `retry` if any.
    pub(crate) priming: bool,
    pub(crate) retry_ms: Option<u64>,
    /// End the body right after the priming event, before any message.
    pub(crate) close_early: bool,
    /// End the body when no event comes within this long (polling).
    pub(crate) hold: Option<std::time::Duration>,
}

/// The body of a reply stream from event index `from`.
pub(crate) fn reply_body(
    log: Arc<ReplyLog>,
    from: usize,
    start: StreamStart,
) -> impl futures::Stream<Item = Result<Bytes, Infallible>> + Send {
    let prime = start.priming.then(|| {
        let mut text = format!("id: {}-0\n", log.number);
        if let Some(retry) = start.retry_ms {
            text.push_str(&format!("retry: {retry}\n"));
        }
        text.push_str("data: \n\n");
        Bytes::from(text)
    });
    let close_early = start.close_early;
    let hold = start.hold;
    futures::stream::unfold(
        (log, from, prime, false),
        move |(log, index, prime, primed)| async move {
            if let Some(prime) = prime {
                return Some((Ok(prime), (log, index, None, true)));
            }
            if primed && close_early {
                return None;
            }
            let event = match hold {
                Some(hold) => tokio::time::timeout(hold, log.event(index)).await.ok()??,
                None => log.event(index).await?,
            };
            let text = format!("id: {}-{}\ndata: {}\n\n", log.number, index + 1, event);
            Some((Ok(Bytes::from(text)), (log, index + 1, None, primed)))
        },
    )
}

/// An event-stream body of the frames of `rx`, each as a `message` event
/// (with ids `g-1`, `g-2`, … when `ids`); `first` is sent before them.
pub(crate) fn channel_body(
    rx: mpsc::Receiver<Value>,
    first: Option<String>,
    ids: bool,
    guard: Option<Box<dyn Send + Sync>>,
) -> impl futures::Stream<Item = Result<Bytes, Infallible>> + Send {
    futures::stream::unfold(
        (rx, first, 0u64, guard),
        move |(mut rx, first, n, guard)| async move {
            if let Some(first) = first {
                return Some((Ok(Bytes::from(first)), (rx, None, n, guard)));
            }
            let frame = rx.recv().await?;
            let text = if ids {
                format!("event: message\nid: g-{}\ndata: {}\n\n", n + 1, frame)
            } else {
                format!("event: message\ndata: {frame}\n\n")
            };
            Some((Ok(Bytes::from(text)), (rx, None, n + 1, guard)))
        },
    )
}
