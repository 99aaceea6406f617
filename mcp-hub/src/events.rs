//! What the hub tells the host: server status, snapshots, namespaces and the
//! audit trail.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_types::{Era, ProtocolVersion};
use tokio::sync::mpsc;

use crate::HubError;
use crate::namespace::NamespaceNote;
use crate::namespace::name::ServerName;
use crate::namespace::snapshot::SnapshotDiff;
use crate::subscriptions::Reason;

/// One event for the host.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum HubEvent {
    /// The server is being started (first start or restart).
    Starting {
        /// The server.
        server: ServerName,
        /// 0 for the first start, then the restart count.
        attempt: u32,
    },
    /// The server is ready.
    Ready {
        /// The server.
        server: ServerName,
        /// Its protocol era.
        era: Era,
        /// The negotiated version.
        version: ProtocolVersion,
        /// Tools listed at start (`None` with lazy discovery).
        tools: Option<usize>,
    },
    /// The server failed to start or died.
    Failed {
        /// The server.
        server: ServerName,
        /// Why ([`HubError::stderr_tail`] has the server's last words when
        /// known).
        error: Arc<HubError>,
    },
    /// The server will be started again after `delay`.
    Restarting {
        /// The server.
        server: ServerName,
        /// Which restart this is (1, 2, …).
        attempt: u32,
        /// The back-off before it.
        delay: Duration,
    },
    /// The server failed `consecutive` times in a row: worth surfacing to the
    /// user. Sent once per streak, when the count reaches the back-off's
    /// `notify_after` (default 3).
    RepeatedFailures {
        /// The server.
        server: ServerName,
        /// Failures in a row.
        consecutive: u32,
    },
    /// The server (legacy Streamable HTTP) had forgotten our session, as a
    /// server does when it restarts; a new one is established, what the
    /// server says of itself taken again ([`crate::Hub::status`]), the log
    /// level set again and the tools listed again (a change shows as a
    /// snapshot event), and subscriptions are made again
    /// ([`HubEvent::SubscriptionReconnecting`]).
    SessionReestablished {
        /// The server.
        server: ServerName,
    },
    /// The server is stopped and will not be started again (shutdown, or
    /// `restart: never` after a death).
    Stopped {
        /// The server.
        server: ServerName,
    },
    /// A new tool listing became the server's active snapshot.
    SnapshotAdopted {
        /// The server.
        server: ServerName,
        /// The snapshot's generation.
        generation: u64,
        /// What changed.
        diff: SnapshotDiff,
    },
    /// A new tool listing waits for the host's review
    /// ([`crate::Hub::adopt`] / [`crate::Hub::discard`]).
    SnapshotPending {
        /// The server.
        server: ServerName,
        /// The snapshot's generation.
        generation: u64,
        /// What would change.
        diff: SnapshotDiff,
    },
    /// A log message from the server (`notifications/message`), for a
    /// server with a [`ServerSpec::log_level`](crate::ServerSpec::log_level)
    /// only (others' are discarded unparsed). Its text is the server's:
    /// escape it before it reaches a terminal.
    ServerLog {
        /// The server.
        server: ServerName,
        /// The message's level.
        level: mcp_types::LoggingLevel,
        /// The message's logger, if it named one.
        logger: Option<String>,
        /// The message's data; `None` when the message was larger than
        /// [`MAX_LOG_EVENT_BYTES`] (then `logger` is `None` too, and
        /// `bytes` says how large it was): events are queued, so what one
        /// holds is bounded.
        data: Option<serde_json::Value>,
        /// The size of the message's params as received, in bytes.
        bytes: usize,
    },
    /// The server went over its notification budget
    /// ([`ServerSpec::notification_budget`](crate::ServerSpec::notification_budget)):
    /// log messages or progress notifications were dropped unparsed. Sent
    /// on the first drop, then at most once a second while drops go on.
    NotificationsDropped {
        /// The server.
        server: ServerName,
        /// Dropped over the budget by its current session so far.
        over_budget: u64,
    },
    /// A server's 2025-11-25 `notifications/tasks/status`: the task as the
    /// server sent it (its own id, its words). Only from a server whose
    /// last handshake declared `tasks`, at most
    /// [`MAX_TASK_STATUS_EVENT_BYTES`] of params, and only while the event
    /// queue has room (a status is advisory: the task can be polled);
    /// anything else is dropped unparsed.
    TaskStatus {
        /// The server.
        server: ServerName,
        /// The task.
        task: Box<mcp_types::Task>,
    },
    /// A new namespace was published.
    Namespace {
        /// Its generation.
        generation: u64,
        /// Tools exposed.
        tools: usize,
        /// Its notes (shadowed names, refused servers, conflicts).
        notes: Vec<NamespaceNote>,
    },
    /// A change was not published because the namespace could not be built
    /// (for example it would exceed its bound); the previous one stays.
    NamespaceRefused {
        /// Why.
        error: Arc<HubError>,
    },
    /// One governed operation.
    Audit(AuditRecord),
    /// A subscription's stream ended (the server died, restarted or closed
    /// it); it is made again after `delay`.
    SubscriptionReconnecting {
        /// The server.
        server: ServerName,
        /// The subscribed URI.
        uri: String,
        /// Which attempt this is (1, 2, …).
        attempt: u32,
        /// The back-off before it.
        delay: Duration,
    },
    /// Reading a subscribed resource failed; the handler was not called.
    SubscriptionReadFailed {
        /// The server.
        server: ServerName,
        /// The subscribed URI.
        uri: String,
        /// Why it was read.
        reason: Reason,
        /// Why it failed.
        error: Arc<HubError>,
    },
    /// Progress of a subscribed resource's read (`notifications/progress`
    /// of the hub's own `resources/read`).
    SubscriptionProgress {
        /// The server.
        server: ServerName,
        /// The subscribed URI.
        uri: String,
        /// Progress so far.
        progress: f64,
        /// The total, when the server gave one.
        total: Option<f64>,
        /// The server's message (its words); `None` when it sent none or one
        /// longer than
        /// [`MAX_PROGRESS_MESSAGE_BYTES`](crate::MAX_PROGRESS_MESSAGE_BYTES).
        message: Option<String>,
    },
    /// A resource handler returned an error (the host's own).
    HandlerFailed {
        /// The server.
        server: ServerName,
        /// The subscribed URI.
        uri: String,
        /// Why it was called.
        reason: Reason,
        /// The handler's error (the host's own words).
        error: mcp_session::HandlerError,
    },
    /// A resource handler overran its deadline and was abandoned; the
    /// contents count as not handled.
    HandlerTimedOut {
        /// The server.
        server: ServerName,
        /// The subscribed URI.
        uri: String,
        /// Why it was called.
        reason: Reason,
        /// The deadline.
        after: Duration,
    },
}

/// Largest log message (its params as received) a [`HubEvent::ServerLog`]
/// carries whole; a larger one is reported by its size only.
pub const MAX_LOG_EVENT_BYTES: usize = 64 * 1024;

/// The event of one `notifications/message` of `server`; `None` when the
/// params are not a log message (the session counts that as the server's
/// mistake; the hub only skips it).
pub(crate) fn server_log(server: &ServerName, params: Option<&[u8]>) -> Option<HubEvent> {
    #[derive(serde::Deserialize)]
    struct Head {
        level: mcp_types::LoggingLevel,
    }
    let params = params?;
    let bytes = params.len();
    if bytes > MAX_LOG_EVENT_BYTES {
        let head: Head = serde_json::from_slice(params).ok()?;
        return Some(HubEvent::ServerLog {
            server: server.clone(),
            level: head.level,
            logger: None,
            data: None,
            bytes,
        });
    }
    let message: mcp_types::LoggingMessageParams = serde_json::from_slice(params).ok()?;
    Some(HubEvent::ServerLog {
        server: server.clone(),
        level: message.level,
        logger: message.logger,
        data: Some(message.data),
        bytes,
    })
}

/// Largest `notifications/tasks/status` (its params as received) a
/// [`HubEvent::TaskStatus`] carries; a larger one is dropped.
pub const MAX_TASK_STATUS_EVENT_BYTES: usize = 16 * 1024;

/// The event for a server's `notifications/tasks/status`, when its params
/// are within the bound and a task.
pub(crate) fn task_status(server: &ServerName, params: Option<&[u8]>) -> Option<HubEvent> {
    let params = params?;
    if params.len() > MAX_TASK_STATUS_EVENT_BYTES {
        return None;
    }
    let task: mcp_types::Task = serde_json::from_slice(params).ok()?;
    Some(HubEvent::TaskStatus {
        server: server.clone(),
        task: Box::new(task),
    })
}

/// A governed operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// The server's description and status.
    Inspect,
    /// A page of tools.
    ListTools,
    /// A page of resources.
    ListResources,
    /// A page of resource templates.
    ListResourceTemplates,
    /// A page of prompts.
    ListPrompts,
    /// A resource read.
    ReadResource,
    /// A prompt retrieval.
    GetPrompt,
    /// A tool call.
    CallTool,
    /// A listing of skills.
    ListSkills,
    /// A skill loaded and verified (its `SKILL.md`).
    LoadSkill,
    /// One file of a loaded skill, verified.
    ReadSkillFile,
    /// A skill's entry (`skills/get`), for a consumer that reads its files
    /// as resources.
    GetSkill,
    /// A page of a directory's children (`resources/directory/read`).
    ReadDirectory,
    /// An argument completion (`completion/complete`) for a prompt or a
    /// resource template.
    Complete,
    /// A request about a task the server runs (`tasks/get`,
    /// `tasks/update`, `tasks/cancel`).
    Task,
}

/// How a governed operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditOutcome {
    /// It succeeded.
    Succeeded,
    /// The authority or the approval hook refused it before anything was
    /// sent.
    Refused(&'static str),
    /// It failed (the error's [`HubError::kind`]).
    Failed(&'static str),
    /// The caller gave it up (dropped its future) before it ended: a
    /// request already sent was cancelled at its server, and an approval
    /// still being asked was abandoned.
    Cancelled,
}

/// The audit record of one operation. It holds no arguments, no results and
/// no credentials: only who, what, on which server, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    /// The principal's name.
    pub principal: String,
    /// The server.
    pub server: ServerName,
    /// The operation.
    pub operation: Operation,
    /// The tool (local name), the prompt, or the resource URI without its
    /// query and fragment (which may carry secrets).
    pub target: Option<String>,
    /// Whether the model's namespace (rather than host code) asked.
    pub from_model: bool,
    /// How it ended.
    pub outcome: AuditOutcome,
    /// How long it took.
    pub elapsed: Duration,
}

/// Receives every audit record synchronously (nothing is dropped). Keep it
/// fast: it runs on the caller's task.
pub trait AuditSink: Send + Sync + std::fmt::Debug {
    /// Records one operation.
    fn record(&self, record: &AuditRecord);
}

/// The host's receiver of [`HubEvent`]s.
#[derive(Debug)]
pub struct HubEvents {
    rx: mpsc::Receiver<HubEvent>,
}

impl HubEvents {
    /// The next event; `None` once the hub is gone and every event was taken.
    pub async fn next(&mut self) -> Option<HubEvent> {
        self.rx.recv().await
    }

    /// The next event if one is waiting.
    pub fn try_next(&mut self) -> Option<HubEvent> {
        self.rx.try_recv().ok()
    }
}

/// The sending side: bounded, never blocks; overflow is dropped and counted.
#[derive(Debug)]
pub(crate) struct EventSink {
    tx: mpsc::Sender<HubEvent>,
    dropped: AtomicU64,
    audit: Option<Arc<dyn AuditSink>>,
}

impl EventSink {
    pub(crate) fn new(capacity: usize, audit: Option<Arc<dyn AuditSink>>) -> (Self, HubEvents) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            Self {
                tx,
                dropped: AtomicU64::new(0),
                audit,
            },
            HubEvents { rx },
        )
    }

    pub(crate) fn emit(&self, event: HubEvent) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(event) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether a chatty event (a server's log message, a task's status)
    /// may be queued now: the last quarter of the queue is kept for the
    /// other events, so a server that floods cannot push out the ones a
    /// host must not miss (a server's status, a tool list held for
    /// review).
    pub(crate) fn has_room_for_chatter(&self) -> bool {
        self.tx.capacity() > self.tx.max_capacity() / 4
    }

    /// Counts an event dropped before it was made.
    pub(crate) fn count_dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn audit(&self, record: AuditRecord) {
        if let Some(sink) = &self.audit {
            sink.record(&record);
        }
        self.emit(HubEvent::Audit(record));
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// A URI without its query and fragment, for audit records.
pub(crate) fn redact_uri(uri: &str) -> String {
    let end = uri.find(['?', '#']).unwrap_or(uri.len());
    let uri = &uri[..end];
    // Userinfo (`scheme://user:pass@host`) may be a credential too.
    match (uri.find("://"), uri.find('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let authority_end = uri[scheme_end + 3..]
                .find('/')
                .map_or(uri.len(), |i| i + scheme_end + 3);
            if at < authority_end {
                return format!("{}{}", &uri[..scheme_end + 3], &uri[at + 1..]);
            }
            uri.to_owned()
        }
        _ => uri.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_lose_query_fragment_and_userinfo() {
        assert_eq!(redact_uri("file:///a/b.txt"), "file:///a/b.txt");
        assert_eq!(
            redact_uri("https://api.example/x?token=secret#frag"),
            "https://api.example/x"
        );
        assert_eq!(
            redact_uri("https://user:pw@host.example/p@q"),
            "https://host.example/p@q"
        );
        assert_eq!(redact_uri("notes://n1@v2"), "notes://v2");
    }

    #[test]
    fn overflow_is_dropped_and_counted() {
        let (sink, mut events) = EventSink::new(1, None);
        let server = ServerName::new("s").unwrap();
        sink.emit(HubEvent::Stopped {
            server: server.clone(),
        });
        sink.emit(HubEvent::Stopped { server });
        assert_eq!(sink.dropped(), 1);
        assert!(events.try_next().is_some());
        assert!(events.try_next().is_none());
    }

    #[test]
    fn chatter_fills_the_queue_only_to_its_last_quarter() {
        let (sink, mut events) = EventSink::new(8, None);
        let server = ServerName::new("s").unwrap();
        let mut chatter = 0;
        while sink.has_room_for_chatter() {
            sink.emit(HubEvent::Stopped {
                server: server.clone(),
            });
            chatter += 1;
        }
        assert_eq!(chatter, 6);
        // The rest is still there for the events that matter.
        for _ in 0..2 {
            sink.emit(HubEvent::Stopped {
                server: server.clone(),
            });
        }
        assert_eq!(sink.dropped(), 0);
        sink.emit(HubEvent::Stopped { server });
        assert_eq!(sink.dropped(), 1);
        // Read, it makes room for chatter again.
        assert!(events.try_next().is_some());
        assert!(!sink.has_room_for_chatter());
        for _ in 0..2 {
            assert!(events.try_next().is_some());
        }
        assert!(sink.has_room_for_chatter());
    }
}
