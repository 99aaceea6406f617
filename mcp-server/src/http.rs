//! Streamable HTTP serving (feature `http`): a [`ServerHandler`] served to
//! many clients at once over one HTTP endpoint, in both eras.
//!
//! - **Legacy era** (2024-11-05 … 2025-11-25): an `initialize` POST opens a
//!   session, answered with a random `Mcp-Session-Id` (128 bits from the
//!   OS); every later request must carry it (without: `400`; unknown or
//!   ended: `404`). Each session is one connection of the server half
//!   ([`HostConnection`]). A request is answered with JSON, or with an
//!   event stream when something else travels before its answer (its
//!   progress, a request of ours made for it with
//!   [`ServerHandle::request_for`]). `GET` opens the session's stream for
//!   everything else (one at a time: a second is `409`); without one,
//!   such a message rides on an open request stream of the session, else
//!   waits (at most [`BACKLOG`] of them) for the next `GET`. `DELETE`
//!   ends the session; an idle one ([`HttpConfig::session_idle`]) ends by
//!   itself. In a session that negotiated 2025-11-25 a request's event
//!   stream is resumable (SEP-1699, [`ResumeConfig`]): a priming event,
//!   event ids, the events kept; the server may close its connection
//!   ([`RequestContext::close_sse_stream`](crate::RequestContext::close_sse_stream),
//!   or every connection after [`ResumeConfig::hold`]) after a `retry`
//!   hint, and a `GET` with `Last-Event-ID` gets the rest.
//! - **2026-07-28**: stateless. A POST without a session id whose
//!   `MCP-Protocol-Version` header (or `_meta`) names 2026-07-28 is served
//!   on a connection of its own that ends with its answer (or, for
//!   `subscriptions/listen`, when the client closes the stream). The
//!   headers mirrored from the body must be there and agree with it
//!   (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for
//!   `tools/call`, `prompts/get` and `resources/read`): otherwise `400`
//!   with JSON-RPC `-32020`. `GET` is `405`. An error answered as JSON
//!   carries its HTTP status: `404` for `-32601` (`initialize` included:
//!   the era has none), `400` for `-32602`, `-32020`, `-32021` and
//!   `-32022`; a `MCP-Protocol-Version` header naming no known version is
//!   `400` with `-32022`, the request's id and `data.supported` /
//!   `data.requested`.
//!
//! # Exposure
//!
//! Every request passes, in order: the `Host` header (on a loopback
//! address: a loopback name, against DNS rebinding; `403` otherwise), the
//! `Origin` header when there is one ([`HttpConfig::allowed_origins`],
//! by default the loopback origins on a loopback address and none
//! elsewhere; `403` otherwise) and the bearer token when one is set
//! (compared in constant time; `401`). A request refused there closes its
//! connection (`Connection: close`), so a peer without the token cannot
//! keep connections alive with refused requests. [`HttpServer::bind`] refuses an
//! address that is not loopback without TLS and a bearer token
//! ([`ServerError::Exposure`]). Neither errors nor logs carry a token or
//! a request body.
//!
//! # Bounds
//!
//! | bound | default | at the bound |
//! |---|---|---|
//! | request body | 4 MiB | `413` naming the bound |
//! | connections | 256 | a plain connection is answered `503` and closed; a TLS one is closed before its handshake |
//! | connections from one peer (an IPv4 address, an IPv6 /64; not on a loopback address) | 64 | as over the whole bound (refused connections are logged once a second at most, the rest counted) |
//! | a request's head, then its body | 30 s each | the connection is closed (a late body is answered `408` first); a kept-alive connection idle that long is closed too |
//! | legacy sessions | 128 | `initialize` is answered `503` |
//! | idle session | 30 min | the session ends (later requests: `404`) |
//! | messages waiting on one response stream | 64 | a notification is dropped (logged at debug); answers never are |
//! | messages waiting for the next `GET` | [`BACKLOG`] | the oldest is dropped |
//! | TLS handshake | 10 s | the connection is closed |
//! | events kept per resumable stream | 64 | the oldest is let go (resuming from before it: `410`) |
//! | event bytes kept per session | 1 MiB | finished streams are let go, then the oldest events of running ones |
//! | answered streams kept per session | 16, for 60 s | the oldest is let go (resuming it: `410`) |

mod guard;
mod listen;
mod resume;
mod session;
mod wire;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::{ServerConfig, ServerError, ServerHandle, ServerHandler};

/// Messages for a session's `GET` stream kept while none is open.
pub const BACKLOG: usize = 64;

/// How the HTTP endpoint is exposed and bounded.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// Origins (`scheme://host[:port]`) allowed to send requests. Empty
    /// (the default): on a loopback address any loopback origin
    /// (`localhost`, `127.0.0.1`, `[::1]`, any port), elsewhere none. A
    /// request without `Origin` (not from a browser) is not checked.
    pub allowed_origins: Vec<String>,
    /// TLS certificate and key (required off loopback).
    pub tls: Option<TlsFiles>,
    /// The bearer token every request must carry (required off loopback).
    pub bearer: Option<BearerToken>,
    /// The largest request body (default 4 MiB).
    pub max_body: usize,
    /// Connections served at once (default 256).
    pub max_connections: usize,
    /// Connections one peer may hold at once (default 64), so one address
    /// cannot take every place under `max_connections`. A peer is an IPv4
    /// address or an IPv6 /64. Not applied on a loopback address, where
    /// every peer is this machine. Behind a reverse proxy every host comes
    /// from the proxy's address: raise it to `max_connections` there.
    pub max_connections_per_peer: usize,
    /// A request's head must arrive within this, and then its body within
    /// this again (default 30 s); otherwise the connection is closed (a
    /// late body: answered `408` first). A kept-alive connection idle
    /// this long is closed too. So a peer that connects and sends nothing,
    /// or trickles, cannot hold a place under `max_connections` forever.
    pub request_read_timeout: Duration,
    /// Legacy sessions open at once (default 128).
    pub max_sessions: usize,
    /// A legacy session without requests for this long ends (default 30
    /// minutes).
    pub session_idle: Duration,
    /// Resumable response streams of 2025-11-25 sessions: bounds and
    /// polling.
    pub resume: ResumeConfig,
    /// An event stream quiet for this long gets an SSE comment (default
    /// 15 s), so a client that went away is noticed (the write fails) and
    /// what its stream held (a `subscriptions/listen`, its subscriptions,
    /// the connection) is let go; `None`: never.
    pub keep_alive: Option<Duration>,
    /// How long the runtime keeps polling, instead of sleeping, after each
    /// request arrives ([`crate::BusyPoll`]): a relaying server's
    /// downstream answer then finds it awake. `None` (the default): never.
    pub busy_poll: Option<Duration>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            tls: None,
            bearer: None,
            max_body: 4 * 1024 * 1024,
            max_connections: 256,
            max_connections_per_peer: 64,
            request_read_timeout: Duration::from_secs(30),
            max_sessions: 128,
            session_idle: Duration::from_secs(30 * 60),
            resume: ResumeConfig::default(),
            keep_alive: Some(Duration::from_secs(15)),
            busy_poll: None,
        }
    }
}

impl HttpConfig {
    /// Sends a quiet event stream an SSE comment every `every` (`None`:
    /// never); see [`HttpConfig::keep_alive`].
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }

    /// Sets [`busy_poll`](Self::busy_poll) (zero: never; at most a
    /// second).
    pub fn busy_poll(mut self, window: Duration) -> Self {
        self.busy_poll = (!window.is_zero()).then_some(window);
        self
    }

    /// Allows one more origin (`scheme://host[:port]`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Serves over TLS with these PEM files.
    pub fn tls(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.tls = Some(TlsFiles {
            cert: cert.into(),
            key: key.into(),
        });
        self
    }

    /// Requires this bearer token.
    pub fn bearer(mut self, token: BearerToken) -> Self {
        self.bearer = Some(token);
        self
    }

    /// Sets [`max_body`](Self::max_body).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// Sets [`max_connections`](Self::max_connections).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// Sets [`max_connections_per_peer`](Self::max_connections_per_peer).
    pub fn max_connections_per_peer(mut self, connections: usize) -> Self {
        self.max_connections_per_peer = connections;
        self
    }

    /// Sets [`request_read_timeout`](Self::request_read_timeout).
    pub fn request_read_timeout(mut self, timeout: Duration) -> Self {
        self.request_read_timeout = timeout;
        self
    }

    /// Sets [`max_sessions`](Self::max_sessions).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Sets [`session_idle`](Self::session_idle).
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// Sets [`resume`](Self::resume).
    pub fn resume(mut self, resume: ResumeConfig) -> Self {
        self.resume = resume;
        self
    }

    /// Polls response streams of 2025-11-25 sessions: a connection of one
    /// is closed `hold` after it opened, its client told to come back
    /// after `retry` ([`ResumeConfig::hold`]).
    pub fn sse_polling(mut self, hold: Duration, retry: Duration) -> Self {
        self.resume.hold = Some(hold);
        self.resume.retry = retry;
        self
    }
}

/// Resumable response streams (SEP-1699) of the legacy sessions that
/// negotiated 2025-11-25 (earlier ones get streams without event ids, as
/// before; 2026-07-28 has no resumption: closing a response stream cancels
/// its request).
///
/// Such a session's request answered with an event stream begins it with
/// a priming event (an id, empty data); every message on it carries an id
/// (`<session tag>-<stream>-<seq>`). The events are kept, within these
/// bounds, until the stream's answer plus [`keep`](Self::keep), so that
/// the client can resume after a closed connection with `GET` and
/// `Last-Event-ID`: the events after that id, then the live ones, ending
/// with the answer. A `Last-Event-ID` that names no stream of the session
/// (malformed, another session's) is `400`; one whose stream or following
/// events were let go at a bound is `410`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResumeConfig {
    /// Close every connection of a response stream this long after it
    /// opened, the request going on (the client polls: it resumes after
    /// [`retry`](Self::retry)); a request not answered by then gets an
    /// event stream of its priming event alone. `None` (the default):
    /// a connection is held until the answer.
    pub hold: Option<Duration>,
    /// The `retry` hint sent before the server closes a connection of a
    /// stream (default 1 s).
    pub retry: Duration,
    /// Events kept per stream (default 64); past it the oldest is let go.
    pub max_events: usize,
    /// Bytes of events kept per session (default 1 MiB); past it finished
    /// streams are let go (oldest first), then the oldest events of
    /// running ones.
    pub max_bytes: usize,
    /// Answered streams kept per session (default 16); past it the oldest
    /// is let go.
    pub max_finished: usize,
    /// How long an answered stream stays resumable (default 60 s).
    pub keep: Duration,
}

impl Default for ResumeConfig {
    fn default() -> Self {
        Self {
            hold: None,
            retry: Duration::from_secs(1),
            max_events: 64,
            max_bytes: 1024 * 1024,
            max_finished: 16,
            keep: Duration::from_secs(60),
        }
    }
}

impl ResumeConfig {
    /// Sets [`retry`](Self::retry).
    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = retry;
        self
    }

    /// Sets [`max_events`](Self::max_events).
    pub fn max_events(mut self, events: usize) -> Self {
        self.max_events = events;
        self
    }

    /// Sets [`max_bytes`](Self::max_bytes).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Sets [`max_finished`](Self::max_finished).
    pub fn max_finished(mut self, streams: usize) -> Self {
        self.max_finished = streams;
        self
    }

    /// Sets [`keep`](Self::keep).
    pub fn keep(mut self, keep: Duration) -> Self {
        self.keep = keep;
        self
    }
}

/// A certificate chain and its private key, PEM files.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// A static bearer token. Never shown (`Debug` says `BearerToken(..)`).
#[derive(Clone)]
pub struct BearerToken(Arc<str>);

impl BearerToken {
    /// The token; `None` when empty or not visible ASCII (it could not be
    /// sent in a header).
    pub fn new(token: impl Into<String>) -> Option<Self> {
        let token = token.into();
        let usable = !token.is_empty() && token.bytes().all(|b| (0x21..=0x7e).contains(&b));
        usable.then(|| Self(token.into()))
    }

    /// Whether `offered` is the token, in time independent of where they
    /// differ.
    pub(crate) fn matches(&self, offered: &[u8]) -> bool {
        let ours = self.0.as_bytes();
        let mut differ = u8::from(ours.len() != offered.len());
        for (i, b) in ours.iter().enumerate() {
            differ |= b ^ offered.get(i).copied().unwrap_or(!b);
        }
        differ == 0
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

/// Which kind of connection of the server half a [`HostConnection`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionKind {
    /// A legacy session (its `initialize` opened it; `DELETE`, its idle
    /// time or the server's end close it).
    Session,
    /// One stateless 2026-07-28 request (closed with its answer).
    Request,
}

/// A new connection of the server half: the handle to speak first on it
/// (notifications, requests to the client) and what kind it is. The
/// application's `connect` function gets one per connection and returns
/// the handler that serves it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostConnection {
    /// The connection's handle; [`ServerHandle::closed`] resolves when it
    /// ends.
    pub handle: ServerHandle,
    /// Its kind.
    pub kind: ConnectionKind,
}

/// Whether `addr` is a loopback address.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Refuses serving on `addr` with `config` when it is not loopback and
/// TLS or the bearer token is missing ([`ServerError::Exposure`] names
/// which).
pub fn check_exposure(addr: &SocketAddr, config: &HttpConfig) -> Result<(), ServerError> {
    if is_loopback(addr) {
        return Ok(());
    }
    let missing = match (config.tls.is_some(), config.bearer.is_some()) {
        (true, true) => return Ok(()),
        (false, false) => "TLS (a certificate and key) and a bearer token",
        (false, true) => "TLS (a certificate and key)",
        (true, false) => "a bearer token",
    };
    Err(ServerError::Exposure {
        addr: *addr,
        missing,
    })
}

/// A bound Streamable HTTP endpoint, ready to serve.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    config: HttpConfig,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .field("config", &self.config)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl HttpServer {
    /// Binds `addr` (port 0: one the system picks), after the exposure
    /// check ([`check_exposure`]) and loading the TLS files.
    pub async fn bind(addr: SocketAddr, config: HttpConfig) -> Result<Self, ServerError> {
        check_exposure(&addr, &config)?;
        let tls = match &config.tls {
            Some(files) => Some(listen::acceptor(files)?),
            None => None,
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ServerError::Bind { addr, source })?;
        Ok(Self {
            listener,
            addr,
            config,
            tls,
        })
    }

    /// The address served.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL (`http://127.0.0.1:PORT/mcp`, `https://…` with
    /// TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{}", self.addr, self.config.path)
    }

    /// Serves until `shutdown` resolves: each connection of the server
    /// half (a legacy session, a stateless request) is served by the
    /// handler `connect` returns for it, under `server`'s protocol
    /// settings and bounds. At shutdown every session ends (its requests
    /// in flight are cancelled).
    pub async fn serve<H, C, S>(
        self,
        connect: C,
        server: ServerConfig,
        shutdown: S,
    ) -> Result<(), ServerError>
    where
        H: ServerHandler,
        C: Fn(HostConnection) -> Arc<H> + Send + Sync + 'static,
        S: std::future::Future<Output = ()> + Send + 'static,
    {
        let HttpServer {
            listener,
            addr,
            config,
            tls,
        } = self;
        let shared = session::Shared::new(addr, config.clone(), server, connect);
        let sweeper = tokio::spawn(session::sweep(Arc::downgrade(&shared)));
        let router = axum::Router::new()
            .fallback(session::handle::<H>)
            .with_state(Arc::clone(&shared));
        // On loopback every peer is this machine: only the whole bound.
        let peers = (!is_loopback(&addr)
            && config.max_connections_per_peer < config.max_connections)
            .then(|| listen::Peers::new(config.max_connections_per_peer));
        let listener = listen::Listener::new(listener, tls, config.max_connections, peers);
        let closing = Arc::clone(&shared);
        listen::serve(listener, router, config.request_read_timeout, async move {
            shutdown.await;
            // Open streams end, so that their connections can close.
            closing.end_all();
        })
        .await;
        sweeper.abort();
        shared.end_all();
        Ok(())
    }
}
