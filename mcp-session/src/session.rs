//! The session typestate: `Spawned → Initialized → Ready → Dead`.
//!
//! ```text
//!             initialize()            ready()
//!  Spawned ───────────────► Initialized ──────► Ready ──close()──► Dead
//!     │                                           ▲
//!     └──────────── discover() (2026-07-28) ──────┘
//!     └──────────── negotiate(Auto | Legacy | Modern) ─┘
//! ```
//!
//! Protocol methods exist only on `Session<Ready>`, so calling `tools/list`
//! before the handshake does not compile. A failed transition hands back
//! either the session ([`Failed::Recoverable`]) or its [`Dead`] state with
//! diagnostics ([`Failed::Dead`]). Once `Ready`, liveness is a runtime fact: a
//! server can die at any moment, and every pending and later call then fails
//! promptly with [`SessionError::Dead`].

use mcp_types::Notification as _;
use mcp_types::notifications::Initialized as InitializedNotification;
use mcp_types::requests::Initialize;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcp_transport::{Connector, Control, ExitInfo};
use mcp_types::{Era, Implementation, Meta, ProtocolVersion, Request, ServerCapabilities};
use serde_json::{Map, Value};

use crate::catalog::ToolCatalog;
use crate::config::SessionConfig;
use crate::driver::{RequestOptions, Shared};
use crate::events::SessionEvents;
use crate::params::Params;
use crate::protocol::RequestTiming;
use crate::{CallOptions, ProtocolStats, SessionError};

/// Phase: the transport is open, nothing has been sent.
#[derive(Debug)]
pub struct Spawned {
    _private: (),
}

/// Phase (legacy era): the server answered `initialize`; `initialized` is not
/// sent yet.
#[derive(Debug)]
pub struct Initialized {
    result: mcp_types::InitializeResult,
}

/// Phase: negotiated; protocol methods are available.
#[derive(Debug)]
pub struct Ready {
    pub(crate) era: Era,
    /// What the server said of itself; replaced when a legacy HTTP session
    /// is established again (the server may have come back as a new
    /// release).
    pub(crate) facts: Arc<RwLock<Arc<ServerFacts>>>,
    /// The `_meta` keys every 2026 request carries; `None` in the legacy era.
    pub(crate) request_meta: Option<RwLock<Arc<Map<String, Value>>>>,
    pub(crate) catalog: Mutex<Option<Arc<ToolCatalog>>>,
}

/// What the server said of itself in its answer to `initialize` (or
/// `server/discover`).
#[derive(Debug)]
pub(crate) struct ServerFacts {
    pub(crate) version: ProtocolVersion,
    pub(crate) server_info: Arc<Implementation>,
    pub(crate) capabilities: Arc<ServerCapabilities>,
    pub(crate) instructions: Option<Arc<str>>,
}

impl ServerFacts {
    pub(crate) fn shared(
        version: ProtocolVersion,
        server_info: Implementation,
        capabilities: ServerCapabilities,
        instructions: Option<&str>,
    ) -> Arc<RwLock<Arc<ServerFacts>>> {
        Arc::new(RwLock::new(Arc::new(ServerFacts {
            version,
            server_info: Arc::new(server_info),
            capabilities: Arc::new(capabilities),
            instructions: instructions.map(Arc::from),
        })))
    }
}

/// Phase: the connection is over.
#[derive(Debug)]
pub struct Dead {
    info: ExitInfo,
}

impl Dead {
    /// Why the connection ended, the exit status and the stderr tail.
    pub fn info(&self) -> &ExitInfo {
        &self.info
    }
}

/// A failed phase transition. Its `Debug` is the error (and, when the
/// connection is gone, its exit diagnostics), never the whole session, so a
/// `?` out of `main` prints a line, not the session's insides.
pub enum Failed<S> {
    /// The session is still usable in its previous phase.
    Recoverable(SessionError, Session<S>),
    /// The connection is gone; here are its diagnostics.
    Dead(SessionError, Session<Dead>),
}

impl<S> std::fmt::Debug for Failed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Recoverable(e, _) => f.debug_tuple("Recoverable").field(e).finish(),
            Failed::Dead(e, dead) => f.debug_tuple("Dead").field(e).field(dead.info()).finish(),
        }
    }
}

impl<S> Failed<S> {
    /// The error, dropping the session.
    pub fn into_error(self) -> SessionError {
        match self {
            Failed::Recoverable(e, _) | Failed::Dead(e, _) => e,
        }
    }

    /// The error.
    pub fn error(&self) -> &SessionError {
        match self {
            Failed::Recoverable(e, _) | Failed::Dead(e, _) => e,
        }
    }
}

impl<S> std::fmt::Display for Failed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.error(), f)
    }
}

impl<S> std::error::Error for Failed<S> {
    // The display is the error's own, so the chain goes on with its cause
    // (not the error a second time).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error().source()
    }
}

/// The connection-level parts every phase shares.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) shared: Arc<Shared>,
    control: Box<dyn Control>,
    pub(crate) connector: Arc<dyn Connector>,
    pub(crate) config: Arc<SessionConfig>,
    events: Option<SessionEvents>,
    /// The diagnostics of our own shutdown, once it ran (a second shutdown
    /// waits for the first and returns the same).
    closed: tokio::sync::OnceCell<ExitInfo>,
}

impl Link {
    pub(crate) async fn open(
        connector: Arc<dyn Connector>,
        config: Arc<SessionConfig>,
    ) -> Result<Link, SessionError> {
        config.check()?;
        let conn = connector.connect().await?;
        let (shared, events) = Shared::start(
            conn.outbound,
            conn.inbound,
            config.limits,
            config.event_queue,
            config.handlers.clone(),
            crate::NotificationIntake::new(config.notification_budget, config.discard_log_messages),
            config.busy_poll,
        );
        Ok(Link {
            shared,
            control: conn.control,
            connector,
            config,
            events: Some(events),
            closed: tokio::sync::OnceCell::new(),
        })
    }

    /// Sends a typed request and decodes its result.
    pub(crate) async fn request<R: Request>(
        &self,
        params: &R::Params,
        meta: Option<&Map<String, Value>>,
        timing: RequestTiming,
    ) -> Result<R::Result, SessionError> {
        let wire = RequestOptions {
            timing,
            ..RequestOptions::default()
        };
        self.request_as::<R>(params, meta, wire).await
    }

    /// [`Link::request`] with the wire options of a caller's
    /// [`crate::CallOptions`] (progress, result limit).
    pub(crate) async fn request_as<R: Request>(
        &self,
        params: &R::Params,
        meta: Option<&Map<String, Value>>,
        wire: RequestOptions,
    ) -> Result<R::Result, SessionError> {
        let method: Arc<str> = Arc::from(R::METHOD);
        let params = Params::encode(params, meta.is_some() || wire.progress.is_some())?;
        let raw = self
            .shared
            .call(
                &method,
                params,
                meta,
                RequestOptions {
                    // `initialize` never carries a version header: it is how
                    // the version is chosen (and how an expired session is
                    // re-established).
                    protocol_version: if R::METHOD == Initialize::METHOD {
                        None
                    } else {
                        self.version_header(meta.is_some())
                    },
                    // 2026: every request names its method in a header;
                    // a caller's own headers (`Mcp-Name`) are kept.
                    headers: if meta.is_some() {
                        with_method_header(wire.headers.clone(), R::METHOD)
                    } else {
                        Vec::new()
                    },
                    ..wire
                },
            )
            .await?;
        raw.decode_json().map_err(|source| SessionError::BadResult {
            method: R::METHOD.to_owned(),
            source,
        })
    }

    /// The `MCP-Protocol-Version` header for a request: every 2026 request
    /// carries 2026-07-28; legacy requests carry the negotiated version once
    /// there is one (never on `initialize`).
    pub(crate) fn version_header(&self, modern: bool) -> Option<&'static str> {
        if modern {
            Some(ProtocolVersion::V2026_07_28.as_str())
        } else {
            self.shared.protocol_version()
        }
    }

    pub(crate) fn timing(&self, timeout: Duration) -> RequestTiming {
        RequestTiming {
            timeout,
            ..RequestTiming::default()
        }
    }

    /// Shuts the connection down once; later calls wait for the first and
    /// return its diagnostics. Pending calls fail at once, not when the
    /// process is finally gone.
    async fn shutdown(&self) -> ExitInfo {
        self.closed
            .get_or_init(|| async {
                // A connection that had already ended (a crash) keeps that
                // reason; one we end ourselves reports the shutdown.
                let earlier = self.shared.exit_info();
                self.shared.closing();
                let info = self.control.shutdown().await;
                let info = match earlier {
                    Some(mut known) => {
                        known.exit_code = known.exit_code.or(info.exit_code);
                        known.signal = known.signal.or(info.signal);
                        known.stderr_tail = known.stderr_tail.or(info.stderr_tail);
                        known
                    }
                    None => self.shared.with_unparsed(info),
                };
                self.shared.set_exit_info(info.clone());
                info
            })
            .await
            .clone()
    }
}

/// One MCP connection in phase `S`.
#[derive(Debug)]
pub struct Session<S> {
    pub(crate) link: Link,
    pub(crate) state: S,
}

impl<S> Session<S> {
    /// Takes the host's event receiver (notifications, protocol violations,
    /// the end of the connection). Returns `None` after the first call.
    pub fn take_events(&mut self) -> Option<SessionEvents> {
        self.link.events.take()
    }

    /// Counters of this connection.
    pub fn stats(&self) -> ProtocolStats {
        self.link.shared.stats()
    }

    /// Host events dropped because the host's queue was full.
    pub fn dropped_events(&self) -> u64 {
        self.link.shared.dropped_events()
    }

    /// The server's stderr tail, for stdio servers.
    pub fn stderr_tail(&self) -> Option<String> {
        self.link.control.stderr_tail()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.link.shared.exit_info().is_some()
    }

    /// Shuts the connection down (for a child: close stdin, wait, SIGTERM,
    /// wait, SIGKILL) and returns the dead session. A session shared behind
    /// an `Arc` is shut down with [`Session::shutdown`] instead.
    pub async fn close(self) -> Session<Dead> {
        let info = self.link.shutdown().await;
        let Link {
            shared,
            connector,
            config,
            ..
        } = self.link;
        Session {
            link: Link {
                shared,
                control: Box::new(NoControl(info.stderr_tail.clone())),
                connector,
                config,
                events: None,
                closed: tokio::sync::OnceCell::new_with(Some(info.clone())),
            },
            state: Dead { info },
        }
    }

    pub(crate) fn into_phase<T>(self, state: T) -> Session<T> {
        Session {
            link: self.link,
            state,
        }
    }

    pub(crate) async fn fail<T>(self, error: SessionError) -> Failed<T> {
        let dead = self.close().await;
        Failed::Dead(error, dead)
    }
}

/// The control of a connection that is already shut down.
#[derive(Debug)]
struct NoControl(Option<String>);

impl Control for NoControl {
    fn shutdown(&self) -> mcp_transport::BoxFuture<'_, ExitInfo> {
        Box::pin(async { ExitInfo::without_process(mcp_transport::CloseReason::Shutdown) })
    }
    fn kill(&self) {}
    fn stderr_tail(&self) -> Option<String> {
        self.0.clone()
    }
}

impl Session<Spawned> {
    /// Opens a connection from `connector` (for stdio: spawns the server).
    ///
    /// The connection's background tasks (its driver, a stdio server's
    /// stderr reader, an HTTP transport's exchanges) log in the `tracing`
    /// span current when this is called, and hold it for the connection's
    /// life: connect inside a span of the connection's own (the hub uses
    /// one `mcp.server` span per server), not inside a short one such as an
    /// incoming request's, which would then last as long as the connection.
    pub async fn connect(
        connector: Arc<dyn Connector>,
        config: SessionConfig,
    ) -> Result<Session<Spawned>, SessionError> {
        let link = Link::open(connector, Arc::new(config)).await?;
        Ok(Session {
            link,
            state: Spawned { _private: () },
        })
    }

    /// Legacy era: sends `initialize` offering 2025-11-25 and accepts any
    /// older version the server answers with; refuses one we do not know.
    pub async fn initialize(self) -> Result<Session<Initialized>, Failed<Spawned>> {
        let params = mcp_types::InitializeParams::new(
            ProtocolVersion::V2025_11_25.as_str(),
            self.link.config.declared_capabilities(false),
            self.link.config.client_info.clone(),
        );
        let timing = RequestTiming {
            cancellable: false,
            ..self.link.timing(self.link.config.request_timeout)
        };
        let result = self
            .link
            .request::<mcp_types::requests::Initialize>(&params, None, timing)
            .await;
        match result {
            Ok(result) => {
                let known = ProtocolVersion::parse(&result.protocol_version)
                    .filter(|v| v.era() == Era::Legacy);
                if known.is_none() {
                    let offered = result.protocol_version.clone();
                    return Err(self
                        .fail(SessionError::UnsupportedVersion { offered })
                        .await);
                }
                Ok(self.into_phase(Initialized { result }))
            }
            Err(e) if e.is_dead() => Err(self.fail(e).await),
            Err(e) => Err(Failed::Recoverable(e, self)),
        }
    }
}

impl Session<Initialized> {
    /// The server's answer to `initialize`.
    pub fn initialize_result(&self) -> &mcp_types::InitializeResult {
        &self.state.result
    }

    /// Sends `notifications/initialized`; the session is then ready.
    pub async fn ready(self) -> Result<Session<Ready>, Failed<Initialized>> {
        // Invariant: `initialize` only produced this phase for a known legacy
        // version.
        let version = ProtocolVersion::parse(&self.state.result.protocol_version)
            .unwrap_or(ProtocolVersion::V2025_11_25);
        // From here on HTTP transports send the negotiated version.
        self.link.shared.set_protocol_version(version.as_str());
        if let Err(e) = self
            .link
            .shared
            .notify(InitializedNotification::METHOD, None)
            .await
        {
            return Err(self.fail(e).await);
        }
        self.link.shared.watch_roots();
        let result = &self.state.result;
        let facts = ServerFacts::shared(
            version,
            result.server_info.clone(),
            result.capabilities.clone(),
            result.instructions.as_deref(),
        );
        // What a new server session is asked for if the server forgets this
        // one (legacy Streamable HTTP): the version agreed last.
        self.link.shared.expiry.arm(crate::expiry::Renewal {
            params: mcp_types::InitializeParams::new(
                version.as_str(),
                self.link.config.declared_capabilities(false),
                self.link.config.client_info.clone(),
            ),
            facts: Arc::clone(&facts),
            timeout: self.link.config.request_timeout,
        });
        let ready = Ready {
            era: Era::Legacy,
            facts,
            request_meta: None,
            catalog: Mutex::new(None),
        };
        Ok(self.into_phase(ready))
    }
}

impl Session<Dead> {
    /// Why the connection ended.
    pub fn info(&self) -> &ExitInfo {
        &self.state.info
    }
}

impl Session<Ready> {
    /// Shuts the connection down through a shared reference (for a child:
    /// close stdin, wait, SIGTERM, wait, SIGKILL), for a session other tasks
    /// hold too (`Arc<Session<Ready>>`). Calls pending now fail at once with
    /// [`SessionError::Dead`], and so does every later call. Calling it again
    /// waits for the first shutdown and returns the same diagnostics, which
    /// [`Session::exit_info`] also keeps.
    pub async fn shutdown(&self) -> ExitInfo {
        self.link.shutdown().await
    }

    /// Ends the connection at once, synchronously, as a crash would (for a
    /// child: SIGKILL to its process group). Pending and later calls fail
    /// with [`SessionError::Dead`] as soon as the transport reports the end.
    /// For `Drop` paths and deadlines past a graceful [`Session::shutdown`].
    pub fn kill(&self) {
        self.link.control.kill();
    }

    /// Why the connection ended, its exit status and the stderr tail, once
    /// it ended (by a crash, [`Session::shutdown`] or [`Session::kill`]);
    /// `None` while it is live.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.link.shared.exit_info()
    }

    /// The protocol era of this connection (fixed for its life).
    pub fn era(&self) -> Era {
        self.state.era
    }

    /// The negotiated protocol version. In the legacy era over HTTP it can
    /// change when the server forgot the session and the new one was agreed
    /// in another version ([`SessionEvent::Reestablished`](crate::SessionEvent::Reestablished)),
    /// as can the three below.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.facts().version
    }

    /// The server's self-description.
    pub fn server_info(&self) -> Arc<Implementation> {
        Arc::clone(&self.facts().server_info)
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> Arc<ServerCapabilities> {
        Arc::clone(&self.facts().capabilities)
    }

    /// The server's instructions for the model, if any. This is the server's
    /// prose.
    pub fn instructions(&self) -> Option<Arc<str>> {
        self.facts().instructions.clone()
    }

    fn facts(&self) -> Arc<ServerFacts> {
        // Only whole values are stored under the lock.
        let facts = self.state.facts.read().unwrap_or_else(|p| p.into_inner());
        Arc::clone(&facts)
    }

    /// The `_meta` keys every request carries in the 2026 era (`None` in the
    /// legacy era).
    pub(crate) fn request_meta(&self) -> Option<Arc<Map<String, Value>>> {
        self.state.request_meta.as_ref().map(|m| {
            m.read()
                .map(|g| Arc::clone(&g))
                .unwrap_or_else(|p| Arc::clone(&p.into_inner()))
        })
    }

    /// Whether the session speaks the 2026 era (per-request `_meta`).
    pub(crate) fn is_modern(&self) -> bool {
        self.state.request_meta.is_some()
    }

    /// Sends any request and decodes its result into the request's own result
    /// type. In the 2026 era the per-request `_meta` keys are added.
    pub async fn request<R: Request>(&self, params: &R::Params) -> Result<R::Result, SessionError> {
        self.request_with::<R>(params, &CallOptions::default())
            .await
    }

    /// [`Session::request`] with a deadline, a progress sink or a result
    /// limit of its own.
    pub async fn request_with<R: Request>(
        &self,
        params: &R::Params,
        options: &CallOptions,
    ) -> Result<R::Result, SessionError> {
        let timing = self.call_timing(options);
        let meta = self.request_meta();
        self.with_expiry(R::METHOD, || {
            self.link
                .request_as::<R>(params, meta.as_deref(), options.request(timing))
        })
        .await
    }

    /// The deadline of a call: its own, or the session's.
    pub(crate) fn call_timing(&self, options: &CallOptions) -> RequestTiming {
        self.link
            .timing(options.timeout.unwrap_or(self.link.config.request_timeout))
    }

    /// `ping` (legacy era; in the 2026 era `server/discover` serves as the
    /// liveness check).
    pub async fn ping(&self) -> Result<(), SessionError> {
        match self.state.era {
            Era::Legacy => {
                self.request::<mcp_types::requests::Ping>(&Default::default())
                    .await?;
            }
            _ => {
                self.request::<mcp_types::requests::Discover>(&Default::default())
                    .await?;
            }
        }
        Ok(())
    }
}

/// The `_meta` keys of every 2026 request.
pub(crate) fn modern_request_meta(config: &SessionConfig) -> Map<String, Value> {
    let mut meta = Meta::new();
    meta.set_protocol_version(ProtocolVersion::V2026_07_28.as_str());
    // Invariant: capabilities and implementation info are plain data and
    // always serialise.
    let _ = meta.set_client_capabilities(&config.declared_capabilities(true));
    let _ = meta.set_client_info(&config.client_info);
    meta.0
}

/// A fresh `Spawned` marker (for phase transitions inside the crate).
pub(crate) fn spawned_phase() -> Spawned {
    Spawned { _private: () }
}

/// `headers` with `Mcp-Method: method` first, unless they name it already.
fn with_method_header(mut headers: Vec<(String, String)>, method: &str) -> Vec<(String, String)> {
    let named = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case(mcp_types::headers::MCP_METHOD));
    if !named {
        headers.insert(
            0,
            (mcp_types::headers::MCP_METHOD.to_owned(), method.to_owned()),
        );
    }
    headers
}
