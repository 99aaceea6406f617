//! Registration and the parallel start of a [`Hub`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tracing::Instrument as _;

use tokio::sync::{oneshot, watch};

use crate::HubError;
use crate::config::{HubConfig, ServerSpec};
use crate::events::{AuditSink, EventSink};
use crate::governance::approval::ApprovalHook;
use crate::governance::authority::{Authority, Principal};
use crate::hub::Hub;
use crate::namespace::Namespace;
use crate::namespace::name::ServerName;
use crate::servers::backoff::Jitter;
use crate::servers::fdlimit;
use crate::servers::lifecycle::{self, FirstOutcome};
use crate::servers::server::ServerCell;
use crate::shared::HubShared;
use crate::subscriptions::{self, MAX_SUBSCRIPTIONS_PER_SERVER, SubscriptionSpec};

/// Registers servers and starts a [`Hub`].
///
/// Registering cannot fail, so a chain needs no `?` before
/// [`HubBuilder::start`], which reports the first problem in registration
/// order (a server's invalid name or settings, a duplicate name, more
/// servers than [`HubConfig::max_servers`], then the same for
/// subscriptions) before it starts anything:
///
/// ```no_run
/// # async fn demo() -> Result<(), mcp_hub::HubError> {
/// use mcp_hub::{Hub, HubConfig, ServerSpec};
/// use mcp_transport::{StdioConfig, StdioConnector};
///
/// let files = StdioConnector::new(StdioConfig::new("files-server"));
/// let github = StdioConnector::new(StdioConfig::new("github-server"));
/// let hub = Hub::builder(HubConfig::default())
///     .server(ServerSpec::new("files", files).required())
///     .server(ServerSpec::new("github", github))
///     .start()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct HubBuilder {
    config: HubConfig,
    servers: Vec<ServerSpec>,
    authority: Authority,
    principal: Principal,
    approval: Option<Arc<dyn ApprovalHook>>,
    audit: Option<Arc<dyn AuditSink>>,
    subscriptions: Vec<SubscriptionSpec>,
}

impl HubBuilder {
    /// A builder with `config`, no servers, an allow-all authority and a
    /// principal that may use untagged servers.
    pub fn new(config: HubConfig) -> Self {
        Self {
            config,
            servers: Vec::new(),
            authority: Authority::unrestricted(),
            principal: Principal::new("host"),
            approval: None,
            audit: None,
            subscriptions: Vec::new(),
        }
    }

    /// Registers a server. Registration order decides collisions (`first`,
    /// `reject`) and the order of the namespace. [`HubBuilder::start`]
    /// checks it: an invalid name
    /// ([`HubError::InvalidServerName`]) or setting
    /// ([`HubError::InvalidSetting`]), a name registered before
    /// ([`HubError::DuplicateServer`]), one server more than
    /// [`HubConfig::max_servers`].
    pub fn server(mut self, spec: ServerSpec) -> Self {
        self.servers.push(spec);
        self
    }

    /// Sets the authority document.
    pub fn authority(mut self, authority: Authority) -> Self {
        self.authority = authority;
        self
    }

    /// Sets the principal the hub acts for.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = principal;
        self
    }

    /// Sets the approval hook.
    pub fn approval(mut self, hook: Arc<dyn ApprovalHook>) -> Self {
        self.approval = Some(hook);
        self
    }

    /// Sets a sink that receives every audit record (they also go to the
    /// event queue, which drops on overflow).
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Registers a resource subscription (see [`SubscriptionSpec`]). Its
    /// server must be registered and its URI allowed by the authority by
    /// [`HubBuilder::start`], which checks its settings (at most 64 on one
    /// server), makes it (before the first read) and fails when it cannot
    /// be made.
    pub fn subscription(mut self, spec: SubscriptionSpec) -> Self {
        self.subscriptions.push(spec);
        self
    }

    /// The first problem with the registrations, in registration order:
    /// servers, then subscriptions.
    fn check_registrations(&self) -> Result<(), HubError> {
        let mut names = HashSet::with_capacity(self.servers.len());
        for (i, spec) in self.servers.iter().enumerate() {
            spec.validate()?;
            if !names.insert(&spec.name) {
                return Err(HubError::DuplicateServer(spec.name.clone()));
            }
            if i >= self.config.max_servers {
                return Err(HubError::InvalidSetting {
                    setting: "max_servers",
                    problem: "more servers than the hub's bound",
                });
            }
        }
        let mut per_server: HashMap<&ServerName, usize> = HashMap::new();
        for sub in &self.subscriptions {
            sub.validate()?;
            let same_server = per_server.entry(&sub.server).or_default();
            if *same_server >= MAX_SUBSCRIPTIONS_PER_SERVER {
                return Err(HubError::InvalidSetting {
                    setting: "subscriptions",
                    problem: "more than 64 subscriptions on one server",
                });
            }
            *same_server += 1;
            if !names.contains(&sub.server) {
                return Err(HubError::UnknownServer {
                    name: sub.server.as_str().to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Checks the registrations (see [`HubBuilder::server`] and
    /// [`HubBuilder::subscription`]; nothing starts when one is wrong), then
    /// starts every server in parallel and waits until each is ready or has
    /// failed its first start (each within its own start deadline; optional
    /// servers at most [`HubConfig::start_wait`]: those still starting then
    /// join the namespace when ready, at their registration place). Fails when
    /// a required server failed (or, under `reject`, was refused); the other
    /// servers are then shut down. Optional servers that failed keep being
    /// restarted in the background per their policy. Then every subscription
    /// is made (in parallel); one that cannot be made fails the start
    /// ([`HubError::SubscriptionFailed`]) and the hub is shut down.
    pub async fn start(self) -> Result<Hub, HubError> {
        if self.config.event_queue == 0 || self.config.max_exposed_tools == 0 {
            return Err(HubError::InvalidSetting {
                setting: "event_queue / max_exposed_tools",
                problem: "it must be at least 1",
            });
        }
        self.check_registrations()?;
        for name in self.authority.servers().into_iter().flat_map(|s| s.keys()) {
            if !self.servers.iter().any(|s| s.name.as_str() == name) {
                return Err(HubError::AuthorityUnknownServer { name: name.clone() });
            }
        }
        let descriptor_limit = self.config.raise_descriptor_limit.then(fdlimit::raise);
        let (events, receiver) = EventSink::new(self.config.event_queue, self.audit);
        let (shutdown, _) = watch::channel(false);
        // The hub's servers learn eras from each other (a restart does not
        // probe again), unless the host gave a server a cache of its own.
        let era_cache = mcp_session::EraCache::new();
        let cells: Vec<Arc<ServerCell>> = self
            .servers
            .into_iter()
            .map(|mut spec| {
                spec.session
                    .era_cache
                    .get_or_insert_with(|| era_cache.clone());
                Arc::new(ServerCell::new(spec))
            })
            .collect();
        let index = cells
            .iter()
            .enumerate()
            .map(|(i, c)| (c.spec.name.clone(), i))
            .collect();
        let shared = Arc::new(HubShared {
            jitter: Jitter::new(self.config.jitter_seed),
            config: self.config,
            cells,
            index,
            events,
            authority: self.authority,
            principal: RwLock::new(self.principal),
            namespace: RwLock::new(Arc::new(Namespace::default())),
            rebuild: Mutex::new(0),
            shutdown,
            started: AtomicBool::new(false),
            approval: self.approval,
            descriptor_limit,
        });
        let mut supervisors = Vec::with_capacity(shared.cells.len());
        let mut firsts = Vec::with_capacity(shared.cells.len());
        for i in 0..shared.cells.len() {
            let (tx, rx) = oneshot::channel::<FirstOutcome>();
            // One `mcp.server` span per server for its whole life: starts,
            // deaths, restarts and every request made from its task, and
            // the tasks its session and transport start (the driver, the
            // stderr reader). At error level, so it is on whenever any log
            // is: a warning about a server always names it.
            let span = tracing::error_span!("mcp.server", server = %shared.cells[i].spec.name);
            supervisors.push(tokio::spawn(
                lifecycle::supervise(Arc::clone(&shared), i, tx).instrument(span),
            ));
            firsts.push(rx);
        }
        let hub = Hub {
            shared,
            supervisors: Mutex::new(supervisors),
            events: Mutex::new(Some(receiver)),
            closed: AtomicBool::new(false),
            subscriptions: Mutex::new(Vec::new()),
        };
        // Required servers are always waited for; optional ones at most
        // `start_wait` (each is bounded by its own start deadline anyway).
        let mut required = Vec::new();
        let mut optional = Vec::new();
        for (cell, first) in hub.shared.cells.iter().zip(firsts) {
            if cell.spec.required {
                required.push((cell.spec.name.clone(), first));
            } else {
                optional.push(first);
            }
        }
        let (names, waits): (Vec<_>, Vec<_>) = required.into_iter().unzip();
        let outcomes = futures::future::join_all(waits).await;
        let failed_required =
            names
                .into_iter()
                .zip(outcomes)
                .find_map(|(name, outcome)| match outcome {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => Some((name, error)),
                    Err(_) => Some((name, Arc::new(HubError::ShuttingDown))),
                });
        if failed_required.is_none() {
            let optional = futures::future::join_all(optional);
            match hub.shared.config.start_wait {
                Some(bound) => {
                    let _ = tokio::time::timeout(bound, optional).await;
                }
                None => {
                    optional.await;
                }
            }
        }
        if let Some((server, error)) = failed_required {
            hub.shutdown().await;
            return Err(HubError::RequiredServerFailed {
                server,
                source: error,
            });
        }
        hub.shared.started.store(true, Ordering::Release);
        let namespace = match hub.shared.rebuild_namespace() {
            Ok(ns) => ns,
            Err(e) => {
                hub.shutdown().await;
                return Err(e);
            }
        };
        let refused = hub
            .shared
            .cells
            .iter()
            .filter(|c| c.spec.required)
            .find_map(|c| {
                namespace
                    .refusal(c.spec.name.as_str())
                    .map(|e| (c.spec.name.clone(), e))
            });
        if let Some((server, error)) = refused {
            hub.shutdown().await;
            return Err(HubError::RequiredServerFailed {
                server,
                source: Arc::new(error),
            });
        }
        if let Err(error) = start_subscriptions(&hub, self.subscriptions).await {
            hub.shutdown().await;
            return Err(error);
        }
        Ok(hub)
    }
}

/// Makes every subscription (in parallel), then starts one task each.
async fn start_subscriptions(hub: &Hub, specs: Vec<SubscriptionSpec>) -> Result<(), HubError> {
    let made = futures::future::join_all(
        specs
            .iter()
            .map(|spec| subscriptions::establish(&hub.shared, spec)),
    )
    .await;
    let mut ready = Vec::with_capacity(specs.len());
    for (spec, result) in specs.into_iter().zip(made) {
        match result {
            Ok(established) => ready.push((spec, established)),
            Err(error) => {
                return Err(HubError::SubscriptionFailed {
                    server: spec.server.clone(),
                    uri: spec.uri.clone(),
                    source: Arc::new(error),
                });
            }
        }
    }
    let mut running = crate::shared::lock(&hub.subscriptions);
    for (spec, established) in ready {
        running.push(crate::hub::RunningSubscription::spawn(
            &hub.shared,
            spec,
            established,
        ));
    }
    Ok(())
}
