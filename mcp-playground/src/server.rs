//! The listening side: binding (loopback only), the one handler every
//! request goes through (checks first, then the route), the headers every
//! answer carries, and the end of serving.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_hub::Hub;
use tokio::sync::{Semaphore, watch};

use crate::PlaygroundError;
use crate::events::EventBus;
use crate::guard::{Class, Guard};
use crate::secret::Secret;

/// How long requests in flight may take once serving is told to stop.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The playground's settings.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PlaygroundConfig {
    /// Largest request body read (1 KiB to 16 MiB; default 2 MiB, above
    /// the hub's 1 MiB bound on tool arguments).
    pub max_body_bytes: usize,
    /// Event streams open at once (1 to 64; default 4): a page holds one.
    pub max_event_streams: usize,
    /// Events kept for a page that connects later (at most 10 000;
    /// default 200).
    pub event_history: usize,
    /// Connections served at once (1 to 1024; default 32): one more is
    /// answered `503` and closed, so another local user's process cannot
    /// take every descriptor of the process that holds the hub.
    pub max_connections: usize,
    /// How long a connection may take to send a request's head once it is
    /// ready for one (10 ms to 10 min; default 10 s): an idle kept-alive
    /// connection, or one that sends nothing or trickles, is closed after
    /// it and gives its place back.
    pub head_timeout: Duration,
}

impl Default for PlaygroundConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 2 * 1024 * 1024,
            max_event_streams: 4,
            event_history: 200,
            max_connections: 32,
            head_timeout: Duration::from_secs(10),
        }
    }
}

impl PlaygroundConfig {
    fn validate(&self) -> Result<(), PlaygroundError> {
        let invalid = |setting, problem| Err(PlaygroundError::InvalidSetting { setting, problem });
        if !(1024..=16 * 1024 * 1024).contains(&self.max_body_bytes) {
            return invalid("max_body_bytes", "must be 1 KiB to 16 MiB");
        }
        if !(1..=64).contains(&self.max_event_streams) {
            return invalid("max_event_streams", "must be 1 to 64");
        }
        if self.event_history > 10_000 {
            return invalid("event_history", "must be at most 10 000");
        }
        if !(1..=1024).contains(&self.max_connections) {
            return invalid("max_connections", "must be 1 to 1024");
        }
        if !(Duration::from_millis(10)..=Duration::from_secs(600)).contains(&self.head_timeout) {
            return invalid("head_timeout", "must be 10 ms to 10 min");
        }
        Ok(())
    }
}

/// What every request handler shares.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) hub: Arc<Hub>,
    pub(crate) guard: Guard,
    pub(crate) bus: Arc<EventBus>,
    pub(crate) config: PlaygroundConfig,
    pub(crate) streams: Arc<Semaphore>,
    /// The servers' questions to the page, when the host routes them here
    /// ([`Playground::answering`]).
    pub(crate) questions: std::sync::OnceLock<crate::Questions>,
    /// Turns true when serving ends (event streams end with it).
    pub(crate) stop: watch::Receiver<bool>,
    /// Turns true [`SHUTDOWN_GRACE`] after `stop`: API requests still
    /// running are dropped.
    cut: watch::Receiver<bool>,
    /// API requests routed and not yet dropped: serving returns only once
    /// none is left, so a call dropped at the cut has sent its
    /// cancellation before the owner shuts the hub down.
    in_flight: watch::Sender<usize>,
}

/// One API request counted in [`App::in_flight`] while it lives.
struct InFlight<'a>(&'a watch::Sender<usize>);

impl<'a> InFlight<'a> {
    fn enter(count: &'a watch::Sender<usize>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(count)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// A playground bound to its loopback address, not yet serving. See the
/// crate docs.
pub struct Playground {
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    address: SocketAddr,
    code: Secret,
    stop: watch::Sender<bool>,
    cut: watch::Sender<bool>,
}

impl std::fmt::Debug for Playground {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Playground")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Playground {
    /// Listens on `address` (port 0: one the system picks), which must be a
    /// loopback address, over `hub`. Takes the hub's event receiver if it
    /// is still there ([`Hub::take_events`]), to push events to the page;
    /// without it the page shows status by asking.
    pub async fn bind(
        hub: Arc<Hub>,
        address: SocketAddr,
        config: PlaygroundConfig,
    ) -> Result<Self, PlaygroundError> {
        if !address.ip().is_loopback() {
            return Err(PlaygroundError::NotLoopback { address });
        }
        config.validate()?;
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| PlaygroundError::Bind { address, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| PlaygroundError::Bind { address, source })?;
        let (guard, code) = Guard::new(bound)?;
        let bus = Arc::new(EventBus::new(config.event_history));
        if let Some(events) = hub.take_events() {
            tokio::spawn(Arc::clone(&bus).pump(events));
        }
        let (stop, stop_rx) = watch::channel(false);
        let (cut, cut_rx) = watch::channel(false);
        let app = Arc::new(App {
            hub,
            guard,
            bus,
            streams: Arc::new(Semaphore::new(config.max_event_streams)),
            questions: std::sync::OnceLock::new(),
            config,
            stop: stop_rx,
            cut: cut_rx,
            in_flight: watch::Sender::new(0),
        });
        tracing::info!(address = %bound, "playground listening");
        Ok(Self {
            app,
            listener,
            address: bound,
            code,
            stop,
            cut,
        })
    }

    /// Shows the servers' questions (elicitation, sampling) on the page and
    /// takes its answers: `questions` is the value whose
    /// [`handler`](crate::Questions::handler)s the hub's servers were given.
    /// Without it the page has no questions to show (servers are offered
    /// what their handlers declare).
    pub fn answering(self, questions: crate::Questions) -> Self {
        let _ = self.app.questions.set(questions);
        self
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Its origin, `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> &str {
        self.app.guard.origin()
    }

    /// The URL to open: the origin with the one-time code in its fragment.
    /// Hand it to the person's browser only; once the page has exchanged
    /// the code, the URL is worth nothing.
    pub fn launch_url(&self) -> String {
        format!("{}/#code={}", self.app.guard.origin(), self.code.expose())
    }

    /// Serves until `shutdown` completes, then ends the event streams and
    /// stops: requests in flight get [`SHUTDOWN_GRACE`] to finish, then are
    /// dropped (a tool call among them is cancelled at its server) and
    /// answered 503. Returns once none is left in flight.
    /// The hub is left running: shutting it down is its owner's.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), PlaygroundError> {
        let mut in_flight = self.app.in_flight.subscribe();
        if let Some(questions) = self.app.questions.get() {
            tokio::spawn(tell_questions(
                questions.clone(),
                Arc::clone(&self.app.bus),
                self.app.stop.clone(),
            ));
        }
        let bounds = (
            self.app.config.max_connections,
            self.app.config.head_timeout,
        );
        let router = Router::new().fallback(handle).with_state(self.app);
        let (stop, cut) = (self.stop, self.cut);
        let mut stopping = stop.subscribe();
        let served = serve_connections(self.listener, router, bounds, async move {
            shutdown.await;
            stop.send_replace(true);
        });
        tokio::select! {
            () = served => Ok(()),
            () = async {
                let _ = stopping.wait_for(|stop| *stop).await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
                cut.send_replace(true);
                // Each request drops its route at the cut, when its task
                // next runs; the count reaches zero once all have.
                let _ = in_flight.wait_for(|n| *n == 0).await;
            } => {
                tracing::info!("playground stopped with requests still running");
                Ok(())
            }
        }
    }
}

/// Tells the page, as an event, each time the questions waiting change (it
/// reads them at `GET /api/questions`), until serving stops.
async fn tell_questions(
    questions: crate::Questions,
    bus: Arc<EventBus>,
    mut stop: watch::Receiver<bool>,
) {
    let mut changed = questions.watch();
    loop {
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            seen = changed.changed() => {
                if seen.is_err() {
                    return;
                }
                let waiting = questions.list().len();
                bus.publish(serde_json::json!({"kind": "questions", "waiting": waiting}));
            }
        }
    }
}

/// What a connection over the bound is answered before it is closed.
const TOO_MANY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 48\r\nconnection: close\r\n\r\ntoo many connections to this playground (bound)\n";

/// Serves `router` on each connection `listener` accepts, at most
/// `max_connections` at once, each with `head_timeout` for a request's
/// head, until `shutdown` resolves; then stops accepting, lets each
/// connection finish the exchange in progress, and returns once all are
/// closed.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: Router,
    (max_connections, head_timeout): (usize, Duration),
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(max_connections));
    // `stop` turns true at shutdown; each connection holds a `closed`
    // receiver until it is closed.
    let (stop, stopping) = watch::channel(false);
    let (closed_tx, closed) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors and the like: wait a moment.
                tracing::debug!(error = %e, "the playground could not accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!("the playground refused a connection: too many connections (bound)");
            tokio::spawn(async move {
                let mut stream = stream;
                let _ = tokio::time::timeout(
                    head_timeout,
                    tokio::io::AsyncWriteExt::write_all(&mut stream, TOO_MANY),
                )
                .await;
            });
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut stopping = stopping.clone();
        let closed = closed.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(head_timeout);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => Some(ended),
                _ = stopping.wait_for(|stop| *stop) => None,
            };
            let ended = match ended {
                Some(ended) => ended,
                None => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(error = %e, "a playground connection ended with an error");
            }
            drop((permit, closed));
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(closed);
    closed_tx.closed().await;
}

/// Every request: the checks, then the route; every answer gets the same
/// protective headers.
async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path();
    let class = if path == "/api/session" {
        Class::Exchange
    } else if path.starts_with("/api/") {
        Class::Api
    } else {
        Class::Page
    };
    let mut response = match app.guard.admit(&parts.method, class, &parts.headers) {
        Err(refusal) => {
            // The path never holds a secret (the code travels in the
            // fragment, the session in headers).
            tracing::info!(method = %parts.method, path, reason = refusal.reason(), "playground refused a request");
            (refusal.status(), refusal.reason()).into_response()
        }
        Ok(()) => match class {
            Class::Page => page(&parts.method, path),
            Class::Exchange | Class::Api => api(&app, &parts, body).await,
        },
    };
    protect(response.headers_mut());
    response
}

/// An API request, bounded by the shutdown: dropped at the cut if it is
/// still running then (a tool call with it is cancelled at its server).
async fn api(
    app: &Arc<App>,
    parts: &axum::http::request::Parts,
    body: axum::body::Body,
) -> Response {
    let counted = InFlight::enter(&app.in_flight);
    let mut cut = app.cut.clone();
    let response = tokio::select! {
        response = crate::api::route(app, &parts.method, parts.uri.path(), &parts.headers, body) => response,
        _ = cut.wait_for(|cut| *cut) => {
            (StatusCode::SERVICE_UNAVAILABLE, "the playground stopped").into_response()
        }
    };
    // After the route's future is gone, so serving cannot return first.
    drop(counted);
    response
}

fn page(method: &Method, path: &str) -> Response {
    if method != Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match crate::page::file(path) {
        Some((kind, body)) => ([(header::CONTENT_TYPE, kind)], body).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Headers on every answer: nothing cached, no sniffing, no framing, no
/// referrer, readable by our own origin only, the page's CSP. (And never a
/// CORS header.)
fn protect(headers: &mut axum::http::HeaderMap) {
    let set = |headers: &mut axum::http::HeaderMap, name: HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(headers, header::CACHE_CONTROL, "no-store");
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(
        headers,
        HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    set(
        headers,
        HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        crate::page::CONTENT_SECURITY_POLICY,
    );
}
