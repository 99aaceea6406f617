//! What a server is (identity, versions, cache hints) and its bounds.

use std::time::Duration;

use mcp_types::{CacheScope, Era, Implementation, ProtocolVersion};

/// The bounds of one connection, each refused by name when reached (see the
/// crate docs for what happens at each).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerLimits {
    /// The largest frame read or written, in bytes (default 16 MiB). A
    /// longer incoming line is skipped and its request, when its id can be
    /// read, answered with `-32600`; a longer answer is replaced by a
    /// `-32603` error.
    pub max_frame: usize,
    /// Requests the application holds at once (default 1024), counting a
    /// cancelled one until the application has answered it. One more is
    /// answered at once with `-32603`.
    pub max_in_flight: usize,
    /// Events waiting for [`ServerCore::poll_event`](crate::ServerCore::poll_event)
    /// (default 1024). A request that finds the queue full is refused like
    /// one over `max_in_flight`; a notification is dropped and counted.
    pub max_pending_events: usize,
    /// Frames waiting for [`ServerCore::poll_transmit`](crate::ServerCore::poll_transmit)
    /// before a notification is refused (default 1024). Answers are never
    /// refused: there is at most one per request in flight.
    pub max_queued_frames: usize,
    /// Server → client requests awaiting their answer (default 32).
    pub max_outgoing_requests: usize,
    /// How long [`serve`](crate::serve) lets a handler run on after its
    /// request was cancelled (or the client went away) before dropping it
    /// (default 5 s).
    pub cancel_grace: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            max_frame: mcp_codec::DEFAULT_MAX_FRAME,
            max_in_flight: 1024,
            max_pending_events: 1024,
            max_queued_frames: 1024,
            max_outgoing_requests: 32,
            cancel_grace: Duration::from_secs(5),
        }
    }
}

impl ServerLimits {
    /// Sets [`max_frame`](Self::max_frame).
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// Sets [`max_in_flight`](Self::max_in_flight).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests;
        self
    }

    /// Sets [`max_pending_events`](Self::max_pending_events).
    pub fn max_pending_events(mut self, events: usize) -> Self {
        self.max_pending_events = events;
        self
    }

    /// Sets [`max_queued_frames`](Self::max_queued_frames).
    pub fn max_queued_frames(mut self, frames: usize) -> Self {
        self.max_queued_frames = frames;
        self
    }

    /// Sets [`max_outgoing_requests`](Self::max_outgoing_requests).
    pub fn max_outgoing_requests(mut self, requests: usize) -> Self {
        self.max_outgoing_requests = requests;
        self
    }

    /// Sets [`cancel_grace`](Self::cancel_grace).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }
}

/// Who the server is and what it speaks. The capabilities are given beside
/// it ([`ServerCore::new`](crate::ServerCore::new)) or by the handler
/// ([`ServerHandler::capabilities`](crate::ServerHandler::capabilities)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// `serverInfo` (legacy) and `_meta["io.modelcontextprotocol/serverInfo"]`
    /// (2026-07-28).
    pub server_info: Implementation,
    /// Guidance for the model, sent with `initialize` and `server/discover`.
    pub instructions: Option<String>,
    /// The versions served (default: all five). Without a legacy version
    /// `initialize` is refused with `-32022` naming the supported ones;
    /// without 2026-07-28 every modern request is.
    pub versions: Vec<ProtocolVersion>,
    /// `ttlMs` put on a 2026-07-28 list, read or discover result that has
    /// none (default 0: immediately stale).
    pub ttl_ms: u64,
    /// `cacheScope` put on those results when absent (default `private`: the
    /// safe choice for a result that may depend on who asks).
    pub cache_scope: CacheScope,
    /// The bounds.
    pub limits: ServerLimits,
}

impl ServerConfig {
    /// A server called `name` at `version`, speaking every version, with the
    /// default bounds.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            server_info: Implementation::new(name, version),
            instructions: None,
            versions: ProtocolVersion::ALL.to_vec(),
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
            limits: ServerLimits::default(),
        }
    }

    /// Sets [`instructions`](Self::instructions).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Sets [`versions`](Self::versions).
    pub fn versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.versions = versions.into_iter().collect();
        self
    }

    /// Sets the cache hints of 2026-07-28 results ([`ttl_ms`](Self::ttl_ms),
    /// [`cache_scope`](Self::cache_scope)).
    pub fn cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.ttl_ms = ttl_ms;
        self.cache_scope = scope;
        self
    }

    /// Sets [`limits`](Self::limits).
    pub fn limits(mut self, limits: ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The served versions of `era`, newest first.
    pub(crate) fn versions_of(&self, era: Era) -> Vec<ProtocolVersion> {
        let mut versions: Vec<ProtocolVersion> = self
            .versions
            .iter()
            .copied()
            .filter(|v| v.era() == era)
            .collect();
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        versions
    }

    /// Every served version as it appears on the wire, newest first.
    pub(crate) fn version_names(&self) -> Vec<String> {
        let mut versions = self.versions.clone();
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        versions.iter().map(|v| v.as_str().to_owned()).collect()
    }
}
