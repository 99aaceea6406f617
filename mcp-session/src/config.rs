//! Session settings, with the design's default bounds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_types::{Era, Implementation};

use crate::events::DEFAULT_EVENT_QUEUE;
use crate::handler::ClientHandlers;
use crate::protocol::CoreLimits;

/// How the protocol era is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Negotiation {
    /// Probe with `server/discover` (2026-07-28); fall back to `initialize`
    /// (2025-11-25, or an older version the server answers with) by the
    /// spec's rules.
    #[default]
    Auto,
    /// Only the `initialize` handshake.
    Legacy,
    /// Only the stateless 2026-07-28 era.
    Modern,
}

/// Settings of one session. `Default` gives the design's bounds.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// Who we are, sent to the server.
    pub client_info: Implementation,
    /// Deadline of an ordinary request.
    pub request_timeout: Duration,
    /// How long the `server/discover` probe may take before a stdio server is
    /// judged legacy.
    pub probe_timeout: Duration,
    /// In-flight bound and hard deadline.
    pub limits: CoreLimits,
    /// Pages a list helper follows at most.
    pub max_pages: usize,
    /// Tools accepted from one server.
    pub max_tools: usize,
    /// Serialised tool arguments larger than this are refused before sending.
    pub max_argument_bytes: usize,
    /// Check tool arguments against the tool's `inputSchema` before sending
    /// (when the tool has been listed).
    ///
    /// Needs the crate's `validation` feature (on by default). Without it no
    /// schema is compiled and this check is skipped even when `true`: the
    /// arguments go to the server unchecked (the argument size bound still
    /// holds), and a `tracing` debug event says so once per process.
    pub validate_arguments: bool,
    /// Check `structuredContent` against the tool's `outputSchema` (when the
    /// tool has been listed and the result is not an error).
    ///
    /// Needs the crate's `validation` feature, like
    /// [`validate_arguments`](Self::validate_arguments): without it the
    /// result is returned unchecked even when `true`.
    pub validate_structured_content: bool,
    /// Capacity of the host's event queue.
    pub event_queue: usize,
    /// The client features the host offers (sampling, elicitation, roots);
    /// exactly these are declared as capabilities.
    pub handlers: ClientHandlers,
    /// `input_required` rounds allowed for one request (2026-07-28).
    pub max_input_rounds: usize,
    /// 2026-07-28: declare the tasks extension, so a server may answer a
    /// `tools/call` with a task (follow it with the task API).
    pub accept_tasks: bool,
    /// Where `Negotiation::Auto` remembers the era each HTTP endpoint spoke,
    /// so the next connection to it does not probe again. `None`: nothing is
    /// remembered. Share one [`EraCache`] among the sessions that should
    /// learn from each other (a hub shares its own among its servers).
    pub era_cache: Option<EraCache>,
    /// Drop the server's log messages (`notifications/message`) unparsed:
    /// for a host that does not read them (a hub server without a log
    /// level). Counted in [`ProtocolStats::log_messages_discarded`](crate::ProtocolStats).
    pub discard_log_messages: bool,
    /// How many log messages and progress notifications the server may send
    /// before the rest are dropped unparsed and counted (see
    /// [`NotificationBudget`](crate::NotificationBudget); responses,
    /// requests, `list_changed` and other notifications are never dropped
    /// by it).
    pub notification_budget: crate::NotificationBudget,
    /// After sending a request, keep the runtime polling for its answer
    /// for up to this long instead of letting the thread sleep: an answer
    /// that comes within the window is read without the thread being woken
    /// for it. On a virtual machine a wake-up of an idle CPU can cost more
    /// than a whole exchange with a local server; measured here
    /// (`cargo xtask bench`), the median sequential call to a stdio server
    /// took 11 µs instead of 17 µs in a paired run, and 22–26 µs where a
    /// no-SDK client blocking in `read` took 57–59 µs on a day the virtual
    /// CPUs woke slowly.
    ///
    /// Adaptive, and only where it helps: it applies on a current-thread
    /// runtime only (on a multi-thread one another worker holds the IO
    /// driver while this one polls, so it would only cost CPU), and only
    /// while about half the session's recent answers or more came within
    /// the window: a server that answers slowly is waited for as usual
    /// after its first slow answer, and stray slow answers among fast ones
    /// do not turn polling off (after a run of fast answers, five slow ones
    /// in a row do). While off, one request now and then polls again
    /// (after 8 requests, then 16, doubling up to 64 while those probes
    /// miss), since an answer waited for as usual cannot tell what a polled
    /// one would take. Polling yields to every other task on the runtime.
    ///
    /// The cost is CPU: while it applies, up to the window of one core per
    /// request (for a fast server, about the time the thread would have
    /// slept); for a slow server, one window per probe. The default is
    /// 200 µs; `None` (or zero) turns it off. At most a second; more is
    /// [`SessionError::InvalidSetting`](crate::SessionError::InvalidSetting)
    /// when the session opens.
    pub busy_poll: Option<Duration>,
}

/// The protocol era each endpoint spoke, learnt by `Negotiation::Auto`,
/// keyed by [`Connector::cache_key`](mcp_transport::Connector::cache_key)
/// (HTTP endpoints only: a local program may be another one next time).
///
/// A value the host owns: clones share one table, and two caches (two hubs,
/// two tests) never see each other's verdicts. Bounded to
/// [`EraCache::CAPACITY`] endpoints; a full cache starts over (a forgotten
/// verdict only costs a probe).
#[derive(Clone, Debug, Default)]
pub struct EraCache {
    verdicts: Arc<Mutex<HashMap<String, Era>>>,
}

impl EraCache {
    /// Endpoints remembered at most.
    pub const CAPACITY: usize = 1024;

    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Era>> {
        // A panic while holding the lock left a table that is still whole.
        self.verdicts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The era remembered for `key`.
    pub fn get(&self, key: &str) -> Option<Era> {
        self.table().get(key).copied()
    }

    /// Remembers that `key` speaks `era`.
    pub fn insert(&self, key: String, era: Era) {
        let mut table = self.table();
        if table.len() >= Self::CAPACITY && !table.contains_key(&key) {
            table.clear();
        }
        table.insert(key, era);
    }

    /// Forgets the era remembered for `key` (its next connection probes).
    pub fn remove(&self, key: &str) {
        self.table().remove(key);
    }

    /// How many endpoints are remembered.
    pub fn len(&self) -> usize {
        self.table().len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every verdict.
    pub fn clear(&self) {
        self.table().clear();
    }
}

impl SessionConfig {
    /// The capabilities this client declares: exactly the registered
    /// handlers, plus the tasks extension when accepted (2026).
    pub fn declared_capabilities(&self, modern: bool) -> mcp_types::ClientCapabilities {
        let mut caps = self.handlers.capabilities();
        if modern && self.accept_tasks {
            caps.add_extension(mcp_types::TASKS_EXTENSION);
        }
        caps
    }
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            client_info: Implementation::new("mcp-client-rs", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(10),
            limits: CoreLimits::default(),
            max_pages: 1000,
            max_tools: 10_000,
            max_argument_bytes: 1024 * 1024,
            validate_arguments: true,
            validate_structured_content: true,
            event_queue: DEFAULT_EVENT_QUEUE,
            handlers: ClientHandlers::default(),
            max_input_rounds: 8,
            accept_tasks: false,
            era_cache: None,
            discard_log_messages: false,
            notification_budget: crate::NotificationBudget::DEFAULT,
            busy_poll: Some(Self::DEFAULT_BUSY_POLL),
        }
    }
}

impl SessionConfig {
    /// The default [`SessionConfig::busy_poll`] window.
    pub const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(200);

    /// The longest [`SessionConfig::busy_poll`] window.
    pub const MAX_BUSY_POLL: Duration = Duration::from_secs(1);

    /// Refuses settings out of their range.
    pub(crate) fn check(&self) -> Result<(), crate::SessionError> {
        if self.busy_poll.is_some_and(|w| w > Self::MAX_BUSY_POLL) {
            return Err(crate::SessionError::InvalidSetting {
                setting: "busy_poll",
                problem: "it must be at most a second",
            });
        }
        Ok(())
    }
}
