//! The gateway: one hub served to one host connection.

use std::sync::Arc;

use mcp_hub::{Hub, HubEvents, SnapshotDiff};
use mcp_server::{ServerConfig, ServerHandle, serve_with};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use crate::handler::GatewayHandler;
use crate::surface::Served;
use crate::{GatewayConfig, GatewayError, HostLink, control, pump};

/// A changed tool list waiting for the operator's review.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Pending {
    /// The server.
    pub server: String,
    /// The snapshot's generation (what `adopt` and `discard` name).
    pub generation: u64,
    /// What would change for the host (the servers' tool names).
    pub diff: SnapshotDiff,
}

/// A hub served as one MCP server; see the crate docs.
#[derive(Debug)]
pub struct Gateway {
    hub: Arc<Hub>,
    events: HubEvents,
    link: HostLink,
    config: GatewayConfig,
    served: Arc<Served>,
    changes: watch::Sender<u64>,
}

/// The operator's review of changed tool lists, usable while the gateway
/// serves (cheap to clone): what waits, adopt, discard, and a wait for the
/// next change.
#[derive(Clone, Debug)]
pub struct Reviews {
    hub: Arc<Hub>,
    changes: watch::Receiver<u64>,
}

impl Reviews {
    /// The changed tool lists waiting for review, in server order.
    pub fn pending(&self) -> Vec<Pending> {
        pending(&self.hub)
    }

    /// Adopts `server`'s changed tool list of `generation`: the host is
    /// served it (and told, when the served tools change).
    pub fn adopt(&self, server: &str, generation: u64) -> Result<(), GatewayError> {
        adopt(&self.hub, server, generation)
    }

    /// Discards `server`'s changed tool list of `generation`: the host
    /// keeps the approved one.
    pub fn discard(&self, server: &str, generation: u64) -> Result<(), GatewayError> {
        discard(&self.hub, server, generation)
    }

    /// Waits until what waits for review satisfies `until` (checked now,
    /// then after each snapshot event the gateway follows) and returns it;
    /// after the gateway stopped, returns what waits then.
    pub async fn until(&self, mut until: impl FnMut(&[Pending]) -> bool) -> Vec<Pending> {
        let mut changes = self.changes.clone();
        loop {
            changes.borrow_and_update();
            let now = self.pending();
            if until(&now) || changes.changed().await.is_err() {
                return now;
            }
        }
    }
}

impl Gateway {
    /// The gateway of `hub`, whose servers were registered through `link`
    /// ([`HostLink::attach`]). Takes the hub's events (it follows them);
    /// the tools served first are the hub's namespace now.
    pub fn new(hub: Hub, link: HostLink, config: GatewayConfig) -> Result<Self, GatewayError> {
        config.validate()?;
        let events = hub.take_events().ok_or(GatewayError::EventsTaken)?;
        let served = Arc::new(Served::default());
        served.refresh(&hub);
        Ok(Self {
            hub: Arc::new(hub),
            events,
            link,
            config,
            served,
            changes: watch::channel(0).0,
        })
    }

    /// The hub behind the gateway.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The operator's review, for use while the gateway serves.
    pub fn reviews(&self) -> Reviews {
        Reviews {
            hub: Arc::clone(&self.hub),
            changes: self.changes.subscribe(),
        }
    }

    /// Serves the host on stdin and stdout until it closes its side, then
    /// shuts the servers down.
    ///
    /// Pipes and sockets (as hosts start servers: Node's `child_process`
    /// gives socket pairs) are read and written on the runtime itself,
    /// non-blocking; anything else (a terminal, a file) through tokio's
    /// `stdin()` and `stdout()`, which hand every read and write to a
    /// blocking thread ([`mcp_server::stdio`]). With
    /// [`GatewayConfig::busy_poll`], the runtime polls for that long after
    /// each message to or from the host.
    pub async fn serve_stdio(self) -> Result<(), GatewayError> {
        let (mut read, mut write) = mcp_server::stdio();
        if let Some(window) = self.config.busy_poll {
            let poll = mcp_server::BusyPoll::start(window);
            (read, write) = (read.busy_poll(&poll), write.busy_poll(&poll));
        }
        self.serve(read, write).await
    }

    /// Serves one host over a byte stream of newline-delimited JSON-RPC
    /// (both eras) until it closes its side, then shuts the servers down
    /// (within the hub's shutdown bound). With
    /// [`GatewayConfig::control`], the control socket is open meanwhile.
    pub async fn serve<R, W>(self, read: R, write: W) -> Result<(), GatewayError>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send,
    {
        let running = self.start()?;
        let (hub, link, served, config) = (
            Arc::clone(&running.hub),
            running.link.clone(),
            Arc::clone(&running.served),
            &running.config,
        );
        let (handle, outbox) = ServerHandle::new();
        let host = link.connect(handle.clone(), false);
        let roots = {
            let link = link.clone();
            tokio::spawn(async move {
                if handle.initialized().await.is_some() {
                    link.refresh_roots(host).await;
                }
            })
        };
        let handler = Arc::new(GatewayHandler {
            hub: Arc::clone(&hub),
            served,
            link,
            page_size: config.page_size,
            host,
        });
        let server = server_config(config);
        let outcome = serve_with(read, write, handler, server, outbox).await;
        roots.abort();
        running.stop().await;
        outcome.map_err(GatewayError::Host)
    }

    /// What both ways of serving start with: the control socket (when
    /// configured) and the pump that follows the hub's events.
    fn start(self) -> Result<Running, GatewayError> {
        let Gateway {
            hub,
            events,
            link,
            config,
            served,
            changes,
        } = self;
        let control = match &config.control {
            Some(path) => Some(control::open(path, Arc::clone(&hub))?),
            None => None,
        };
        let pump = tokio::spawn(pump::run(
            Arc::clone(&hub),
            events,
            Arc::clone(&served),
            link.clone(),
            changes,
        ));
        Ok(Running {
            hub,
            link,
            config,
            served,
            control,
            pump,
        })
    }
}

/// A gateway that serves: what [`Gateway::start`] made, undone by
/// [`Running::stop`].
struct Running {
    hub: Arc<Hub>,
    link: HostLink,
    config: GatewayConfig,
    served: Arc<Served>,
    control: Option<control::ControlSocket>,
    pump: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Stops following the hub, closes the control socket and shuts the
    /// servers down (within the hub's shutdown bound).
    async fn stop(self) {
        self.pump.abort();
        self.served.subscriptions.stop_all();
        drop(self.control);
        let report = self.hub.shutdown().await;
        tracing::info!(elapsed = ?report.elapsed, forced = report.forced.len(), "servers shut down");
    }
}

impl Gateway {
    /// Serves any number of hosts over Streamable HTTP on `endpoint` (both
    /// eras; see [`mcp_server::http`]) until `shutdown` resolves, then
    /// shuts the servers down. Every host shares the one hub; a server's
    /// request (sampling, elicitation) goes to the host whose tool call it
    /// serves, and is refused by name when it relates to no host's call or
    /// to calls of several hosts at once; the roots of HTTP hosts reach
    /// the stdio servers only with [`GatewayConfig::roots_from_http_hosts`];
    /// `list_changed` goes to every host connection that can hear it.
    pub async fn serve_http<S>(
        self,
        endpoint: mcp_server::http::HttpServer,
        shutdown: S,
    ) -> Result<(), GatewayError>
    where
        S: std::future::Future<Output = ()> + Send + 'static,
    {
        let running = self.start()?;
        let connect = {
            let served = Arc::clone(&running.served);
            let hub = Arc::clone(&running.hub);
            let link = running.link.clone();
            let page_size = running.config.page_size;
            move |connection: mcp_server::http::HostConnection| {
                let handle = connection.handle;
                let host = link.connect(handle.clone(), true);
                let watch = link.clone();
                let ended = Arc::clone(&served);
                tokio::spawn(async move {
                    if handle.initialized().await.is_some() {
                        watch.refresh_roots(host).await;
                    }
                    handle.closed().await;
                    watch.disconnect(host);
                    ended.subscriptions.disconnect(host);
                });
                Arc::new(GatewayHandler {
                    hub: Arc::clone(&hub),
                    served: Arc::clone(&served),
                    link: link.clone(),
                    page_size,
                    host,
                })
            }
        };
        let outcome = endpoint
            .serve(connect, server_config(&running.config), shutdown)
            .await;
        running.stop().await;
        outcome.map_err(GatewayError::Host)
    }
}

/// The server half's settings of the gateway.
fn server_config(config: &GatewayConfig) -> ServerConfig {
    let mut server = ServerConfig::new(
        config.server_info.name.clone(),
        config.server_info.version.clone(),
    )
    .limits(config.limits.clone());
    server.server_info = config.server_info.clone();
    server.instructions = config.instructions.clone();
    server
}

pub(crate) fn pending(hub: &Hub) -> Vec<Pending> {
    hub.servers()
        .into_iter()
        .filter_map(|server| {
            let waiting = hub.pending_snapshot(server.as_str()).ok()??;
            let active = hub.active_snapshot(server.as_str()).ok().flatten();
            Some(Pending {
                server: server.to_string(),
                generation: waiting.generation(),
                diff: waiting.diff(active.as_deref()),
            })
        })
        .collect()
}

pub(crate) fn adopt(hub: &Hub, server: &str, generation: u64) -> Result<(), GatewayError> {
    hub.adopt(server, generation)?;
    Ok(())
}

pub(crate) fn discard(hub: &Hub, server: &str, generation: u64) -> Result<(), GatewayError> {
    Ok(hub.discard(server, generation)?)
}
