//! Settings: per server ([`ServerSpec`]) and for the whole hub
//! ([`HubConfig`]), with the design's default bounds.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_session::{Negotiation, NotificationBudget, SessionConfig};
use mcp_transport::Connector;

use crate::HubError;
use crate::namespace::name::{Separator, ServerName};

/// How tools of different servers that share a name are exposed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CollisionPolicy {
    /// Every tool is reachable as `server<sep>tool`; a bare name is exposed
    /// only when exactly one server has it, and a call to a bare name several
    /// servers share is refused as ambiguous, listing the qualified names.
    #[default]
    Prefix,
    /// A server whose tool collides with an earlier-registered server's tool
    /// is refused whole (its tools are not exposed), naming both.
    Reject,
    /// The earliest-registered server keeps the bare name; later ones are
    /// reachable only qualified, with a warning.
    First,
}

/// What happens when a server dies.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RestartPolicy {
    /// Leave it dead (for stateful servers, where a fresh process would
    /// silently lose state); calls fail at once.
    Never,
    /// Start it again after an exponential back-off with jitter.
    Backoff(Backoff),
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy::Backoff(Backoff::default())
    }
}

/// Exponential back-off between restarts.
///
/// The `n`-th consecutive failure waits `min(max, initial * 2^(n-1))`,
/// reduced by up to `jitter` (a fraction) at random so that many servers
/// failing together do not restart in lockstep. A failure is a start that did
/// not reach ready, or a ready session that died before it had been up for
/// `stable_after`; a session that stays up that long resets the count.
#[derive(Clone, Debug, PartialEq)]
pub struct Backoff {
    /// Delay after the first failure.
    pub initial: Duration,
    /// Largest delay; at most 30 s.
    pub max: Duration,
    /// Fraction (0 to 1) of each delay that is random.
    pub jitter: f64,
    /// After this many consecutive failures the host is told
    /// ([`crate::HubEvent::RepeatedFailures`]).
    pub notify_after: u32,
    /// A session up this long counts as healthy again.
    pub stable_after: Duration,
}

impl Backoff {
    /// The cap of [`Backoff::max`].
    pub const MAX_DELAY: Duration = Duration::from_secs(30);

    pub(crate) fn validate(&self) -> Result<(), HubError> {
        let problem = if self.initial.is_zero() {
            Some("the initial delay must be positive")
        } else if self.max > Self::MAX_DELAY {
            Some("the largest delay is 30 s")
        } else if self.max < self.initial {
            Some("the largest delay is below the initial one")
        } else if !(0.0..=1.0).contains(&self.jitter) {
            Some("jitter is a fraction between 0 and 1")
        } else if self.notify_after == 0 {
            Some("notify_after must be at least 1")
        } else {
            None
        };
        match problem {
            Some(problem) => Err(HubError::InvalidSetting {
                setting: "restart back-off",
                problem,
            }),
            None => Ok(()),
        }
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Self::MAX_DELAY,
            jitter: 0.2,
            notify_after: 3,
            stable_after: Duration::from_secs(30),
        }
    }
}

/// When a server's tools are listed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Discovery {
    /// At start (the server's tools are in the first namespace).
    #[default]
    Eager,
    /// On first use: [`crate::Hub::discover`], a call to a name not yet
    /// known, or a facade operation on the server. Until then the server
    /// contributes no tools, so names may change when it is discovered;
    /// prefer eager discovery where names must be stable from the start.
    Lazy,
}

/// What happens with a new tool listing after `list_changed` (or a restart).
///
/// The first listing of a server is always adopted: it is what the host
/// approves. After that a server cannot change what the host approved by
/// itself: by default a changed listing (a tool added, removed, or with
/// another description, schema or annotations) waits for review, announced
/// by [`HubEvent::SnapshotPending`](crate::HubEvent::SnapshotPending) with
/// its diff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Adoption {
    /// The new snapshot waits for the host ([`crate::Hub::adopt`] or
    /// [`crate::Hub::discard`]); the active surface stays as it was.
    #[default]
    Review,
    /// The new snapshot becomes active at once: the host's explicit choice
    /// to let its servers change the surface.
    Automatic,
}

/// The largest result handed to a consumer, in bytes: 1 KiB to 16 MiB,
/// default 1 MiB. A server's result is measured as it arrived, before it is
/// decoded; a helper's result as the hub will send it. A larger result is
/// refused whole ([`HubError::ContentTooLarge`]), never cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentLimit(usize);

impl ContentLimit {
    /// Smallest limit.
    pub const MIN: usize = 1024;
    /// Largest limit.
    pub const MAX: usize = 16 * 1024 * 1024;
    /// The default.
    pub const DEFAULT: ContentLimit = ContentLimit(1024 * 1024);

    /// Validates `bytes`.
    pub fn new(bytes: usize) -> Result<Self, HubError> {
        if (Self::MIN..=Self::MAX).contains(&bytes) {
            Ok(ContentLimit(bytes))
        } else {
            Err(HubError::InvalidSetting {
                setting: "max_content_bytes",
                problem: "it must be between 1 KiB and 16 MiB",
            })
        }
    }

    /// The limit in bytes.
    pub fn bytes(self) -> usize {
        self.0
    }
}

impl Default for ContentLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Per-server concurrency: at most `max_concurrent` requests at once; a burst
/// beyond waits in a queue of at most `max_queued`, each for at most
/// `queue_timeout`; beyond either bound a request is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallLimits {
    /// Requests running at once.
    pub max_concurrent: usize,
    /// Requests waiting for their turn.
    pub max_queued: usize,
    /// How long one may wait.
    pub queue_timeout: Duration,
}

impl Default for CallLimits {
    fn default() -> Self {
        Self {
            max_concurrent: 16,
            max_queued: 256,
            queue_timeout: Duration::from_secs(30),
        }
    }
}

/// Retries of transient failures (transport errors and `-32603` internal
/// errors) with bounded exponential back-off and jitter.
///
/// Idempotent requests (lists, reads, `prompts/get`, `ping`) are retried.
/// `tools/call` is retried only for tools named in `retry_tools`; a tool's
/// `idempotentHint` annotation never counts as consent. A request whose
/// server died is never retried.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry), at most 10.
    pub max_attempts: u32,
    /// Delay before the first retry.
    pub initial: Duration,
    /// Largest delay between attempts.
    pub max: Duration,
    /// Tools (local names) whose calls the host allows to be retried.
    pub retry_tools: BTreeSet<String>,
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    pub(crate) fn validate(&self) -> Result<(), HubError> {
        if !(1..=10).contains(&self.max_attempts) {
            return Err(HubError::InvalidSetting {
                setting: "retry max_attempts",
                problem: "it must be between 1 and 10",
            });
        }
        if self.max < self.initial || self.max > Duration::from_secs(30) {
            return Err(HubError::InvalidSetting {
                setting: "retry max delay",
                problem: "it must be at least the initial delay and at most 30 s",
            });
        }
        Ok(())
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial: Duration::from_millis(100),
            max: Duration::from_secs(2),
            retry_tools: BTreeSet::new(),
        }
    }
}

/// One server as the host registers it.
///
/// Building one cannot fail: [`HubBuilder::start`](crate::HubBuilder::start)
/// checks the name and the settings, so a chain of builder calls needs no
/// `?` until then.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    /// The host's name for it (1 to 64 characters of `[A-Za-z0-9_-]`;
    /// [`HubBuilder::start`](crate::HubBuilder::start) refuses any other
    /// with [`HubError::InvalidServerName`]).
    pub name: ServerName,
    /// How to reach it (stdio child, in-memory, later HTTP).
    pub connector: Arc<dyn Connector>,
    /// Session settings (deadlines, bounds).
    pub session: SessionConfig,
    /// How the protocol era is chosen.
    pub negotiation: Negotiation,
    /// The hub does not start without it.
    pub required: bool,
    /// What happens when it dies.
    pub restart: RestartPolicy,
    /// When its tools are listed.
    pub discovery: Discovery,
    /// What happens with a changed tool listing.
    pub adoption: Adoption,
    /// Largest result handed on.
    pub max_content_bytes: ContentLimit,
    /// Concurrency and queue.
    pub call_limits: CallLimits,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
    /// Deadline of one start (connect, negotiate, eager discovery).
    pub start_timeout: Duration,
    /// Add context helper tools (list/read resources, list/get prompts) for
    /// the capabilities the server advertises.
    pub context_helpers: bool,
    /// Ask the server for log messages at this level and above (when it
    /// declares logging) on every start; they arrive as
    /// [`HubEvent::ServerLog`](crate::HubEvent::ServerLog), within the
    /// server's notification budget. `None` (the default) asks for nothing,
    /// and what the server sends unasked is dropped by its session before
    /// it is parsed (counted in
    /// [`ServerStatus::log_messages_discarded`](crate::ServerStatus)).
    pub log_level: Option<mcp_types::LoggingLevel>,
}

impl ServerSpec {
    /// A server called `name`, reached through `connector`, with defaults:
    /// optional, restarted with back-off, eager discovery, changed listings
    /// held for review.
    ///
    /// `connector` is any connector by value (`StdioConnector::new(..)`) or
    /// shared (`Arc<StdioConnector>`, `Arc<dyn Connector>`). The name is
    /// checked when the hub starts ([`HubError::InvalidServerName`] from
    /// [`HubBuilder::start`](crate::HubBuilder::start)).
    pub fn new(name: &str, connector: impl Connector + 'static) -> Self {
        Self {
            name: ServerName::unchecked(name),
            connector: Arc::new(connector),
            session: SessionConfig::default(),
            negotiation: Negotiation::Auto,
            required: false,
            restart: RestartPolicy::default(),
            discovery: Discovery::Eager,
            adoption: Adoption::Review,
            max_content_bytes: ContentLimit::DEFAULT,
            call_limits: CallLimits::default(),
            retry: RetryPolicy::default(),
            start_timeout: Duration::from_secs(30),
            context_helpers: false,
            log_level: None,
        }
    }

    /// Marks the server required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Sets the restart policy.
    pub fn restart(mut self, restart: RestartPolicy) -> Self {
        self.restart = restart;
        self
    }

    /// Sets the negotiation mode.
    pub fn negotiation(mut self, negotiation: Negotiation) -> Self {
        self.negotiation = negotiation;
        self
    }

    /// Sets the session settings.
    pub fn session(mut self, session: SessionConfig) -> Self {
        self.session = session;
        self
    }

    /// Sets when tools are listed.
    pub fn discovery(mut self, discovery: Discovery) -> Self {
        self.discovery = discovery;
        self
    }

    /// Sets what happens with a changed listing.
    pub fn adoption(mut self, adoption: Adoption) -> Self {
        self.adoption = adoption;
        self
    }

    /// Sets the content limit.
    pub fn max_content_bytes(mut self, limit: ContentLimit) -> Self {
        self.max_content_bytes = limit;
        self
    }

    /// Sets the concurrency limits.
    pub fn call_limits(mut self, limits: CallLimits) -> Self {
        self.call_limits = limits;
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the start deadline.
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// Turns context helper tools on or off.
    pub fn context_helpers(mut self, on: bool) -> Self {
        self.context_helpers = on;
        self
    }

    /// Sets how many log messages and progress notifications the server may
    /// send before the rest are dropped unparsed and counted
    /// ([`ServerStatus::notifications_over_budget`](crate::ServerStatus),
    /// [`HubEvent::NotificationsDropped`](crate::HubEvent::NotificationsDropped));
    /// the default, [`NotificationBudget::DEFAULT`], is far above what a
    /// working server sends. Responses, server requests, `list_changed`
    /// and other notifications are never dropped by it (a `list_changed`
    /// that finds the session's event queue full is held, later ones of the
    /// same kind merged into it). A shorthand for
    /// `session.notification_budget`.
    pub fn notification_budget(mut self, budget: NotificationBudget) -> Self {
        self.session.notification_budget = budget;
        self
    }

    /// Asks for log messages at `level` and above (see
    /// [`ServerSpec::log_level`](Self::log_level)).
    pub fn log_level(mut self, level: mcp_types::LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// The name first, then the settings.
    pub(crate) fn validate(&self) -> Result<(), HubError> {
        self.name.check()?;
        if let RestartPolicy::Backoff(b) = &self.restart {
            b.validate()?;
        }
        self.retry.validate()?;
        if self.call_limits.max_concurrent == 0 {
            return Err(HubError::InvalidSetting {
                setting: "max_concurrent",
                problem: "it must be at least 1",
            });
        }
        if self.start_timeout.is_zero() {
            return Err(HubError::InvalidSetting {
                setting: "start_timeout",
                problem: "it must be positive",
            });
        }
        Ok(())
    }
}

/// Settings of the whole hub.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// How shared tool names are exposed.
    pub policy: CollisionPolicy,
    /// Joins server and tool in qualified names.
    pub separator: Separator,
    /// Expose provider-safe names (`[A-Za-z0-9_-]`, at most 64 characters,
    /// with a stable hash suffix where sanitising would collide) as the
    /// names themselves, so `notes/search` is `notes_search` everywhere and
    /// only that routes. Off (the default), the names stay as they are and
    /// each one that is not safe carries that same form as an alias, which
    /// the exports use and calls accept
    /// ([`Namespace::provider_names`](crate::Namespace::provider_names)).
    pub provider_safe_names: bool,
    /// How long [`crate::HubBuilder::start`] waits for optional servers;
    /// `None` waits for each one's own start deadline. Required servers are
    /// always waited for.
    pub start_wait: Option<Duration>,
    /// Bound of a whole shutdown; servers still running after it are killed.
    pub shutdown_timeout: Duration,
    /// Capacity of the host's event queue (overflow is dropped and counted;
    /// log messages and task statuses fill at most three quarters of it,
    /// so that they cannot push the other events out).
    pub event_queue: usize,
    /// At start, raise this process's soft open-file limit toward the hard
    /// one (each stdio server costs three descriptors, two once they are
    /// scarce).
    pub raise_descriptor_limit: bool,
    /// Seed of the jitter of restarts and retries; `None` seeds from the
    /// clock. Tests set it for reproducible delays.
    pub jitter_seed: Option<u64>,
    /// Most names the merged namespace may expose.
    pub max_exposed_tools: usize,
    /// Most servers one hub holds.
    pub max_servers: usize,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            policy: CollisionPolicy::Prefix,
            separator: Separator::default(),
            provider_safe_names: false,
            start_wait: None,
            shutdown_timeout: Duration::from_secs(15),
            event_queue: 4096,
            raise_descriptor_limit: true,
            jitter_seed: None,
            max_exposed_tools: 100_000,
            max_servers: 4096,
        }
    }
}
