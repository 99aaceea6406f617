//! One registered server: its spec, its current session and snapshots, and
//! its limiter. Calls share the session (`Arc<Session<Ready>>`); the hub
//! shuts it down through that shared handle, which fails their calls at once.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcp_session::{Ready, Session};
use mcp_types::{Era, Implementation, ProtocolVersion, ServerCapabilities};

use crate::HubError;
use crate::config::ServerSpec;
use crate::namespace::snapshot::ToolSnapshot;
use crate::servers::limits::Limiter;

/// What a server is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerStatusKind {
    /// Being started.
    Starting,
    /// Ready for requests.
    Ready,
    /// Waiting out a back-off before starting again.
    Restarting,
    /// Dead or never started, and not being restarted (`restart: never`, or
    /// a required server that failed at start).
    Failed,
    /// Shut down.
    Stopped,
}

impl fmt::Display for ServerStatusKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ServerStatusKind::Starting => "starting",
            ServerStatusKind::Ready => "ready",
            ServerStatusKind::Restarting => "restarting after a failure",
            ServerStatusKind::Failed => "failed and not restarted",
            ServerStatusKind::Stopped => "stopped",
        })
    }
}

/// What the server said about itself when it became ready.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    /// The protocol era.
    pub era: Era,
    /// The negotiated version.
    pub version: ProtocolVersion,
    /// The server's self-description (for display only; the hub keys servers
    /// by the host's name).
    pub implementation: Implementation,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// The server's instructions (server prose; never merged into the host's
    /// own instructions by the hub).
    pub instructions: Option<String>,
}

impl ServerInfo {
    fn of(session: &Session<Ready>) -> Self {
        Self {
            era: session.era(),
            version: session.protocol_version(),
            implementation: (*session.server_info()).clone(),
            capabilities: (*session.server_capabilities()).clone(),
            instructions: session.instructions().map(|i| i.to_string()),
        }
    }
}

/// A server's status, as [`crate::Hub::status`] reports it.
#[derive(Clone, Debug)]
pub struct ServerStatus {
    /// What it is doing.
    pub kind: ServerStatusKind,
    /// Failures in a row (reset when a session stays up).
    pub consecutive_failures: u32,
    /// Restarts so far.
    pub restarts: u32,
    /// The current or last session's description.
    pub info: Option<Arc<ServerInfo>>,
    /// Tools in the active snapshot (`None` before discovery).
    pub tools: Option<usize>,
    /// Generation of a snapshot waiting for review.
    pub pending_generation: Option<u64>,
    /// The last failure.
    pub last_error: Option<Arc<HubError>>,
    /// Requests waiting for a concurrency slot now.
    pub queued: usize,
    /// Log messages and progress notifications the current session dropped
    /// unparsed over the server's notification budget.
    pub notifications_over_budget: u64,
    /// Log messages the current session dropped unparsed because nobody
    /// asked for them (no [`ServerSpec::log_level`](crate::ServerSpec::log_level)).
    pub log_messages_discarded: u64,
}

#[derive(Debug)]
pub(crate) struct CellState {
    pub(crate) kind: ServerStatusKind,
    pub(crate) session: Option<Arc<Session<Ready>>>,
    pub(crate) info: Option<Arc<ServerInfo>>,
    pub(crate) active: Option<Arc<ToolSnapshot>>,
    pub(crate) pending: Option<Arc<ToolSnapshot>>,
    pub(crate) consecutive_failures: u32,
    pub(crate) restarts: u32,
    pub(crate) last_error: Option<Arc<HubError>>,
}

/// One registered server.
#[derive(Debug)]
pub(crate) struct ServerCell {
    pub(crate) spec: ServerSpec,
    pub(crate) limiter: Limiter,
    state: Mutex<CellState>,
    /// Serialises discoveries (eager, lazy, after `list_changed`).
    pub(crate) discovery: tokio::sync::Mutex<()>,
    generation: AtomicU64,
}

impl ServerCell {
    pub(crate) fn new(spec: ServerSpec) -> Self {
        Self {
            limiter: Limiter::new(spec.call_limits.clone()),
            state: Mutex::new(CellState {
                kind: ServerStatusKind::Starting,
                session: None,
                info: None,
                active: None,
                pending: None,
                consecutive_failures: 0,
                restarts: 0,
                last_error: None,
            }),
            discovery: tokio::sync::Mutex::new(()),
            generation: AtomicU64::new(0),
            spec,
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, CellState> {
        // A panic while holding this lock leaves plain data behind; keep going.
        match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn next_generation(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The session, if the server is ready.
    pub(crate) fn session(&self) -> Result<Arc<Session<Ready>>, HubError> {
        let state = self.state();
        match &state.session {
            Some(s) if !s.is_closed() => Ok(Arc::clone(s)),
            _ => Err(HubError::ServerUnavailable {
                server: self.spec.name.clone(),
                status: match state.kind {
                    // A ready status with a closed session: the death is
                    // being processed right now.
                    ServerStatusKind::Ready => ServerStatusKind::Restarting,
                    other => other,
                },
            }),
        }
    }

    pub(crate) fn install(&self, session: Arc<Session<Ready>>) -> Arc<ServerInfo> {
        let info = Arc::new(ServerInfo::of(&session));
        let mut state = self.state();
        state.session = Some(session);
        state.info = Some(Arc::clone(&info));
        state.kind = ServerStatusKind::Ready;
        info
    }

    /// The session is established again (legacy HTTP): what the server
    /// now says of itself replaces what it said before.
    pub(crate) fn reestablished(&self, session: &Session<Ready>) {
        self.state().info = Some(Arc::new(ServerInfo::of(session)));
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let state = self.state();
        let stats = state
            .session
            .as_ref()
            .map(|s| s.stats())
            .unwrap_or_default();
        ServerStatus {
            kind: state.kind,
            consecutive_failures: state.consecutive_failures,
            restarts: state.restarts,
            info: state.info.clone(),
            tools: state.active.as_ref().map(|s| s.tools().len()),
            pending_generation: state.pending.as_ref().map(|s| s.generation()),
            last_error: state.last_error.clone(),
            queued: self.limiter.waiting(),
            notifications_over_budget: stats.notifications_over_budget,
            log_messages_discarded: stats.log_messages_discarded,
        }
    }

    /// Takes the session for shutdown.
    pub(crate) fn take_session(&self) -> Option<Arc<Session<Ready>>> {
        self.state().session.take()
    }

    /// Kills the current server at once (synchronous; for `Drop`, for a
    /// shutdown past its bound and for [`crate::Hub::kill_server`]). A
    /// server still starting is killed when its start is dropped.
    pub(crate) fn kill(&self) -> bool {
        let session = self.state().session.clone();
        match session {
            Some(session) if !session.is_closed() => {
                session.kill();
                true
            }
            _ => false,
        }
    }
}
