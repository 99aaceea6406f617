//! What the servers behind the gateway ask of the hosts: sampling and
//! elicitation go to the host whose tool call they serve (when it declared
//! them), a host's roots come to the stdio servers.
//!
//! A [`HostLink`] is made before the hub, because a server's client
//! features are fixed when its session starts: [`HostLink::attach`] gives
//! each server's session handlers that forward to the host the request is
//! attributed to (see the crate docs for the rule), and refuse by name when
//! there is none, when it did not declare the feature, or when its
//! connection cannot carry requests. The link also knows every host
//! connection (for `list_changed`) and each host's tool calls in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_hub::ServerSpec;
use mcp_server::{ResponseError, ServerError, ServerHandle};
use mcp_session::{
    ClientHandlers, Elicitation, ElicitationHandler, HandlerError, ProgressReporter, Roots,
    SamplingHandler,
};
use mcp_transport::BoxFuture;
use mcp_types::requests::{CreateMessage, Elicit, ListRoots};
use mcp_types::text::Untrusted;
use mcp_types::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, InputResponse,
    LoggingLevel, Meta, ProgressParams, RequestId, RequestParams, Root, ServerRequestMessage,
};
use tokio::sync::{mpsc, oneshot};

use crate::GatewayConfig;
use crate::bridge::{Bridged, Parking};

/// The `_meta` key naming the server a request to the host comes from.
pub(crate) const SERVER_META: &str = "mcp-gateway/server";

/// The link between the servers' sessions and the host's connection. Cheap
/// to clone; see the module docs.
#[derive(Clone, Debug)]
pub struct HostLink {
    inner: Arc<Link>,
}

#[derive(Debug)]
struct Link {
    hosts: Mutex<Hosts>,
    timeout: Duration,
    /// The roots offered to each stdio server: the configured ones until
    /// the host tells its own.
    stdio_roots: Mutex<Vec<Roots>>,
    /// Whether the roots of hosts connected over HTTP reach the stdio
    /// servers ([`GatewayConfig::roots_from_http_hosts`]).
    http_roots: bool,
    /// 2026-07-28 hosts' calls waiting for their answers (crate::bridge).
    parking: Mutex<Parking>,
}

/// The host connections, and the tool calls they have in flight.
#[derive(Debug, Default)]
struct Hosts {
    next: u64,
    connected: HashMap<u64, Host>,
    /// Server → the calls in flight to it.
    calls: HashMap<String, Vec<Call>>,
}

/// A host's tool call in flight to a server.
#[derive(Debug)]
struct Call {
    host: u64,
    /// The host's request id.
    id: RequestId,
    /// Where the server's requests go when the host cannot be sent any (a
    /// 2026-07-28 host: they become its `input_required` rounds).
    bridge: Option<mpsc::Sender<Bridged>>,
}

#[derive(Debug)]
struct Host {
    handle: ServerHandle,
    /// Connected over HTTP (one of possibly many hosts).
    http: bool,
    /// The least severe log level this host wants (`logging/setLevel`);
    /// none set: every level.
    log_level: Option<LoggingLevel>,
}

/// Which host a server's request goes to.
pub(crate) struct Target {
    /// The host's connection; `None` only for a bridged call whose host
    /// connection ended (the call is parked: the bridge reaches it).
    handle: Option<ServerHandle>,
    /// The host's call it is made for, when exactly one of the host's
    /// calls to the server is in flight.
    related: Option<RequestId>,
    /// That one call's bridge, when it has one (see [`Call::bridge`]).
    bridge: Option<mpsc::Sender<Bridged>>,
}

/// A host's call to a server in flight; dropping it ends the record.
pub(crate) struct CallGuard {
    link: HostLink,
    server: String,
    host: u64,
    id: RequestId,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let mut hosts = lock(&self.link.inner.hosts);
        if let Some(calls) = hosts.calls.get_mut(&self.server) {
            if let Some(at) = calls
                .iter()
                .position(|c| c.host == self.host && c.id == self.id)
            {
                calls.swap_remove(at);
            }
            if calls.is_empty() {
                hosts.calls.remove(&self.server);
            }
        }
    }
}

/// Whether a host connection can hear a notification now (over stdio
/// always; over HTTP with a legacy session or an open listen stream).
fn can_hear(host: &Host) -> bool {
    let peer = host.handle.peer();
    !host.http || (!peer.closed && (peer.session.is_some() || peer.streams > 0))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding these short locks leaves plain data behind.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl HostLink {
    /// A link whose requests to the host wait
    /// [`GatewayConfig::host_request_timeout`].
    pub fn new(config: &GatewayConfig) -> Self {
        Self {
            inner: Arc::new(Link {
                hosts: Mutex::new(Hosts::default()),
                timeout: config.host_request_timeout,
                stdio_roots: Mutex::new(Vec::new()),
                http_roots: config.roots_from_http_hosts,
                parking: Mutex::new(Parking::default()),
            }),
        }
    }

    /// `spec` with client features that forward to the host: sampling (with
    /// tools) and elicitation (form and URL) always, since the host is not
    /// known yet when the server starts; roots for a stdio server, the
    /// configured ones (or none) until the host's arrive. A remote
    /// server's roots stay as configured.
    pub fn attach(&self, mut spec: ServerSpec) -> ServerSpec {
        let server = spec.name.to_string();
        let mut handlers: ClientHandlers = spec.session.handlers.clone();
        handlers = handlers
            .sampling(ForwardSampling {
                server: server.clone(),
                link: self.clone(),
            })
            .elicitation(ForwardElicitation {
                server,
                link: self.clone(),
            });
        if spec.connector.is_stdio() {
            let roots = handlers
                .roots_value()
                .cloned()
                .unwrap_or_else(|| Roots::new(Vec::new()));
            lock(&self.inner.stdio_roots).push(roots.clone());
            handlers = handlers.roots(roots);
        }
        spec.session.handlers = handlers;
        spec
    }

    /// A host connection from now on (its id). Over stdio it is the only
    /// one.
    pub(crate) fn connect(&self, handle: ServerHandle, http: bool) -> u64 {
        let mut hosts = lock(&self.inner.hosts);
        hosts.next += 1;
        let id = hosts.next;
        hosts.connected.insert(
            id,
            Host {
                handle,
                http,
                log_level: None,
            },
        );
        id
    }

    /// The handle of host connection `host`, while it is connected.
    pub(crate) fn handle(&self, host: u64) -> Option<ServerHandle> {
        lock(&self.inner.hosts)
            .connected
            .get(&host)
            .map(|h| h.handle.clone())
    }

    /// Host connection `host` ended. Its bridged calls stay recorded: a
    /// parked call outlives the request that parked it (its record goes
    /// with the call, at the latest when the seal expires), and a server's
    /// request made meanwhile still reaches it.
    pub(crate) fn disconnect(&self, host: u64) {
        let mut hosts = lock(&self.inner.hosts);
        hosts.connected.remove(&host);
        for calls in hosts.calls.values_mut() {
            calls.retain(|c| c.host != host || c.bridge.is_some());
        }
        hosts.calls.retain(|_, calls| !calls.is_empty());
    }

    /// The handles of every connected host that can hear a notification
    /// (a legacy session or an open `subscriptions/listen` stream).
    pub(crate) fn listeners(&self) -> Vec<ServerHandle> {
        lock(&self.inner.hosts)
            .connected
            .values()
            .filter(|h| can_hear(h))
            .map(|h| h.handle.clone())
            .collect()
    }

    /// Host connection `host` wants log messages at `level` and above.
    pub(crate) fn set_log_level(&self, host: u64, level: LoggingLevel) {
        if let Some(host) = lock(&self.inner.hosts).connected.get_mut(&host) {
            host.log_level = Some(level);
        }
    }

    /// The handles of the hosts that can hear a notification
    /// ([`Self::listeners`]) and want a log message at `level`.
    pub(crate) fn log_listeners(&self, level: LoggingLevel) -> Vec<ServerHandle> {
        lock(&self.inner.hosts)
            .connected
            .values()
            .filter(|h| h.log_level.is_none_or(|min| level >= min) && can_hear(h))
            .map(|h| h.handle.clone())
            .collect()
    }

    /// Records a call of `host` (its request `id`) to `server` until the
    /// guard is dropped.
    pub(crate) fn calling(&self, host: u64, server: &str, id: RequestId) -> CallGuard {
        self.record(host, server, id, None)
    }

    /// As [`Self::calling`], for a call whose host cannot be sent requests:
    /// the server's requests attributed to it go to `bridge`.
    pub(crate) fn calling_bridged(
        &self,
        host: u64,
        server: &str,
        id: RequestId,
        bridge: mpsc::Sender<Bridged>,
    ) -> CallGuard {
        self.record(host, server, id, Some(bridge))
    }

    fn record(
        &self,
        host: u64,
        server: &str,
        id: RequestId,
        bridge: Option<mpsc::Sender<Bridged>>,
    ) -> CallGuard {
        lock(&self.inner.hosts)
            .calls
            .entry(server.to_owned())
            .or_default()
            .push(Call {
                host,
                id: id.clone(),
                bridge,
            });
        CallGuard {
            link: self.clone(),
            server: server.to_owned(),
            host,
            id,
        }
    }

    /// Whether the roots of host `host` go to the stdio servers.
    pub(crate) fn takes_roots_from(&self, host: u64) -> bool {
        lock(&self.inner.hosts)
            .connected
            .get(&host)
            .is_some_and(|h| !h.http || self.inner.http_roots)
    }

    /// Asks host `host` for its roots (when it declared them and its roots
    /// are taken) and hands them to every stdio server.
    pub(crate) async fn refresh_roots(&self, host: u64) {
        if !self.takes_roots_from(host) {
            return;
        }
        let Some(handle) = lock(&self.inner.hosts)
            .connected
            .get(&host)
            .map(|h| h.handle.clone())
        else {
            return;
        };
        let declared = handle
            .peer()
            .session
            .is_some_and(|s| s.capabilities.roots.is_some());
        if !declared {
            return;
        }
        match handle
            .request::<ListRoots>(RequestParams::default(), self.inner.timeout)
            .await
        {
            Ok(result) => self.set_host_roots(result.roots),
            Err(e) => tracing::info!(error = %e, "the host's roots could not be read"),
        }
    }

    fn set_host_roots(&self, roots: Vec<Root>) {
        for stdio in lock(&self.inner.stdio_roots).iter() {
            stdio.set(roots.clone());
        }
    }

    /// The host a request of `server` goes to ([`Self::host`]'s rule), as
    /// its handle and the call the request is made for.
    pub(crate) fn target(
        &self,
        server: &str,
    ) -> Result<(ServerHandle, Option<RequestId>), HandlerError> {
        let target = self.host(server)?;
        let handle = target.handle.ok_or_else(gone)?;
        Ok((handle, target.related))
    }

    /// The calls waiting for their hosts' answers.
    pub(crate) fn parking(&self) -> std::sync::MutexGuard<'_, Parking> {
        lock(&self.inner.parking)
    }

    /// Hands a server's request to the call it serves (`bridge`) and waits
    /// for the host's answer: as long as the call waits for it (see
    /// crate::bridge), with no deadline of its own.
    async fn bridge(
        &self,
        bridge: mpsc::Sender<Bridged>,
        request: ServerRequestMessage,
    ) -> Result<InputResponse, HandlerError> {
        let (reply, answer) = oneshot::channel();
        bridge
            .send(Bridged { request, reply })
            .await
            .map_err(|_| HandlerError::refused("the host's call this request served has ended"))?;
        answer.await.map_err(|_| {
            HandlerError::refused(
                "the host's call this request served ended (or stopped waiting) before the \
                 host answered",
            )
        })?
    }

    /// How long a request to a host waits for its answer.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The host a request of `server` goes to. The rule: the host whose
    /// tool calls to `server` are in flight, when they all come from one
    /// host (made for that call when it is the only one); with calls of
    /// two or more hosts in flight it cannot be attributed and is refused;
    /// with none, it goes to the host over stdio (the only one there is)
    /// and is refused over HTTP (it relates to no host's call).
    fn host(&self, server: &str) -> Result<Target, HandlerError> {
        let hosts = lock(&self.inner.hosts);
        let calls = hosts.calls.get(server).map(Vec::as_slice).unwrap_or(&[]);
        let mut callers: Vec<u64> = calls.iter().map(|c| c.host).collect();
        callers.sort_unstable();
        callers.dedup();
        match callers.as_slice() {
            [one] => {
                let handle = hosts.connected.get(one).map(|h| h.handle.clone());
                let (related, bridge) = match calls {
                    [call] => (Some(call.id.clone()), call.bridge.clone()),
                    _ => (None, None),
                };
                if handle.is_none() && bridge.is_none() {
                    return Err(gone());
                }
                Ok(Target {
                    handle,
                    related,
                    bridge,
                })
            }
            [] => {
                let mut stdio = hosts.connected.values().filter(|h| !h.http);
                match (stdio.next(), hosts.connected.is_empty()) {
                    (Some(host), _) => Ok(Target {
                        handle: Some(host.handle.clone()),
                        related: None,
                        bridge: None,
                    }),
                    (None, true) => {
                        Err(HandlerError::refused("no host is connected to the gateway"))
                    }
                    (None, false) => Err(HandlerError::refused(format!(
                        "the request relates to no tool call a host has in flight to `{}`: \
                         refused (over HTTP a server's request goes to the host whose call it serves)",
                        Untrusted::new(server)
                    ))),
                }
            }
            many => Err(HandlerError::refused(format!(
                "the request cannot be attributed to one host: {} hosts have tool calls in \
                 flight to `{}`",
                many.len(),
                Untrusted::new(server)
            ))),
        }
    }
}

/// The refusal of a request whose host connection ended.
fn gone() -> HandlerError {
    HandlerError::refused("the host of the call is gone")
}

/// A server's request put to the host failed: the refusal the server gets.
fn refusal(feature: &str, error: ServerError) -> HandlerError {
    match error {
        ServerError::ClientLacksCapability { capability } => HandlerError::refused(format!(
            "the host behind the gateway did not declare `{capability}`: {feature} refused"
        )),
        ServerError::NotInitialized | ServerError::NoSession => HandlerError::refused(format!(
            "the host's connection to the gateway carries no requests from servers \
             (no initialized legacy session): {feature} refused"
        )),
        ServerError::Closed => HandlerError::refused("no host is connected to the gateway"),
        ServerError::NoAnswer(ResponseError::Error(e)) => HandlerError::refused(format!(
            "the host refused ({}): {}",
            e.code,
            Untrusted::new(&e.message)
        )),
        ServerError::NoAnswer(ResponseError::Timeout) => {
            HandlerError::internal("the host did not answer in time")
        }
        other => HandlerError::internal(format!("the request to the host failed: {other}")),
    }
}

/// Puts the server's name into a request's `_meta`, and takes out the
/// server's progress token: the host's progress reaches the gateway under
/// a token of the gateway's (and from there the server under its own).
fn label(meta: &mut Option<Meta>, server: &str) {
    let meta = meta.get_or_insert_with(Meta::new);
    meta.remove(mcp_types::meta_keys::PROGRESS_TOKEN);
    meta.insert(SERVER_META, serde_json::Value::from(server));
}

struct ForwardSampling {
    server: String,
    link: HostLink,
}

impl SamplingHandler for ForwardSampling {
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        self.create_message_reporting(params, ProgressReporter::default())
    }

    fn create_message_reporting(
        &self,
        mut params: CreateMessageParams,
        progress: ProgressReporter,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            let Target {
                handle,
                related,
                bridge,
            } = self.link.host(&self.server)?;
            label(&mut params.meta, &self.server);
            if let Some(bridge) = bridge {
                let message = ServerRequestMessage::CreateMessage(params);
                return match self.link.bridge(bridge, message).await? {
                    InputResponse::CreateMessage(result) => Ok(result),
                    _ => Err(HandlerError::refused(
                        "the host's answer is not a sampling result",
                    )),
                };
            }
            tracing::debug!(server = %self.server, "sampling request passed to the host");
            let handle = handle.ok_or_else(gone)?;
            ask_host::<CreateMessage>(&handle, related, params, self.link.inner.timeout, &progress)
                .await
                .map_err(|e| refusal("sampling", e))
        })
    }

    fn supports_tools(&self) -> bool {
        // The host decides: a request with tools it cannot take is its to
        // refuse.
        true
    }
}

/// How many of a host's progress updates on one request wait to be passed
/// on to the server (beyond it an update is dropped: progress is advisory).
const PROGRESS_BUFFER: usize = 16;

/// Puts a server's request to the host; when the server asked for progress
/// on it, the host is asked for progress too and its updates are relayed
/// ([`relaying`]).
async fn ask_host<R>(
    handle: &ServerHandle,
    related: Option<RequestId>,
    params: R::Params,
    timeout: Duration,
    progress: &ProgressReporter,
) -> Result<R::Result, ServerError>
where
    R: mcp_types::ServerRequest,
    R::Params: Send + 'static,
{
    if !progress.wanted() {
        return handle.request_for::<R>(related, params, timeout).await;
    }
    let (sink, updates) = mpsc::channel(PROGRESS_BUFFER);
    let request = handle.request_with_progress::<R>(related, params, timeout, sink);
    relaying(request, updates, progress).await
}

/// Waits for a request to the host while passing the host's progress on it
/// to the server that asked (every update that came before the answer is
/// passed on before it).
async fn relaying<T>(
    request: impl std::future::Future<Output = Result<T, ServerError>>,
    mut updates: mpsc::Receiver<ProgressParams>,
    progress: &ProgressReporter,
) -> Result<T, ServerError> {
    async fn relay(progress: &ProgressReporter, update: ProgressParams) {
        let Some(value) = update.progress_f64() else {
            return;
        };
        if let Err(e) = progress
            .report(value, update.total_f64(), update.message)
            .await
        {
            tracing::debug!(error = %e, "the host's progress could not reach the server");
        }
    }
    let mut request = std::pin::pin!(request);
    loop {
        tokio::select! {
            biased;
            Some(update) = updates.recv() => relay(progress, update).await,
            answer = &mut request => {
                while let Ok(update) = updates.try_recv() {
                    relay(progress, update).await;
                }
                return answer;
            }
        }
    }
}

struct ForwardElicitation {
    server: String,
    link: HostLink,
}

impl ElicitationHandler for ForwardElicitation {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        self.elicit_reporting(request, ProgressReporter::default())
    }

    fn elicit_reporting(
        &self,
        request: Elicitation,
        progress: ProgressReporter,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            let Target {
                handle,
                related,
                bridge,
            } = self.link.host(&self.server)?;
            let params = match request {
                Elicitation::Form(mut form) => {
                    label(&mut form.meta, &self.server);
                    ElicitParams::Form(form)
                }
                Elicitation::Url { mut params, .. } if bridge.is_some() => {
                    // The host's own capabilities are checked where the
                    // request becomes its round.
                    label(&mut params.meta, &self.server);
                    ElicitParams::Url(params)
                }
                Elicitation::Url { mut params, .. } => {
                    let url_declared = handle.as_ref().is_some_and(|h| {
                        h.peer().session.is_some_and(|s| {
                            s.capabilities
                                .elicitation
                                .as_ref()
                                .is_some_and(|e| e.url.is_some())
                        })
                    });
                    if !url_declared {
                        return Err(HandlerError::refused(
                            "the host behind the gateway did not declare URL-mode elicitation",
                        ));
                    }
                    label(&mut params.meta, &self.server);
                    ElicitParams::Url(params)
                }
                _ => {
                    return Err(HandlerError::invalid_params(
                        "this elicitation mode is not passed on by the gateway",
                    ));
                }
            };
            if let Some(bridge) = bridge {
                let message = ServerRequestMessage::Elicit(params);
                return match self.link.bridge(bridge, message).await? {
                    InputResponse::Elicit(result) => Ok(result),
                    _ => Err(HandlerError::refused(
                        "the host's answer is not an elicitation result",
                    )),
                };
            }
            let handle = handle.ok_or_else(gone)?;
            ask_host::<Elicit>(&handle, related, params, self.link.inner.timeout, &progress)
                .await
                .map_err(|e| refusal("elicitation", e))
        })
    }

    fn supports_url(&self) -> bool {
        true
    }
}
