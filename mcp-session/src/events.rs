//! What the server tells the host outside of answers: notifications, protocol
//! violations, the end of the connection.

use bytes::Bytes;
use mcp_transport::ExitInfo;
use mcp_types::ServerNotificationMessage;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::protocol::Violation;

/// Default capacity of the host's event queue. When the host does not keep
/// up, further events are dropped and counted
/// ([`crate::Session::dropped_events`]); responses are never held up.
pub const DEFAULT_EVENT_QUEUE: usize = 1024;

/// One event for the host.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionEvent {
    /// A notification from the server (other than progress for our own
    /// requests, which goes to the request's progress sink).
    Notification {
        /// Its method, e.g. `notifications/tools/list_changed`.
        method: String,
        /// Raw params.
        params: Option<Bytes>,
    },
    /// The server broke the protocol; the offending frame was skipped.
    ProtocolViolation(Violation),
    /// The server went over its notification budget: log messages or
    /// progress were dropped unparsed. Sent on the first drop, then at most
    /// once a second while drops go on.
    NotificationsDropped {
        /// Dropped over the budget on this connection so far.
        over_budget: u64,
    },
    /// Legacy Streamable HTTP: the server had forgotten our session (it
    /// restarted, say), and the session established a new one. What the
    /// host knew of the server may be out of date: its lists (every listing
    /// stopped being [fresh](crate::Session::is_fresh)), the log level it
    /// was asked for, its subscriptions (each ended with
    /// [`SubscriptionEnd::SessionExpired`](crate::SubscriptionEnd::SessionExpired)),
    /// and what it says of itself (the session's
    /// [`protocol_version`](crate::Session::protocol_version),
    /// [`server_capabilities`](crate::Session::server_capabilities) … are
    /// the new session's).
    /// Never dropped for a full queue: held until there is room.
    Reestablished,
    /// The connection ended; no event follows.
    Closed(ExitInfo),
}

impl SessionEvent {
    /// Decodes a notification into its typed form. `None` for other events.
    pub fn notification(&self) -> Option<Result<ServerNotificationMessage, mcp_types::TypesError>> {
        match self {
            SessionEvent::Notification { method, params } => {
                let raw: Option<&RawValue> = match params {
                    Some(bytes) => match serde_json::from_slice(bytes) {
                        Ok(raw) => Some(raw),
                        Err(e) => return Some(Err(mcp_types::TypesError::Json(e.into()))),
                    },
                    None => None,
                };
                Some(ServerNotificationMessage::parse(method, raw))
            }
            _ => None,
        }
    }
}

/// The host's receiver of [`SessionEvent`]s.
#[derive(Debug)]
pub struct SessionEvents {
    rx: mpsc::Receiver<SessionEvent>,
}

impl SessionEvents {
    pub(crate) fn new(rx: mpsc::Receiver<SessionEvent>) -> Self {
        Self { rx }
    }

    /// The next event; `None` once the connection has ended and every event
    /// was taken.
    pub async fn next(&mut self) -> Option<SessionEvent> {
        self.rx.recv().await
    }

    /// The next event if one is waiting.
    pub fn try_next(&mut self) -> Option<SessionEvent> {
        self.rx.try_recv().ok()
    }
}
