//! Resource subscriptions with async handlers.
//!
//! One task per [`SubscriptionSpec`]: it holds a session subscription
//! (legacy `resources/subscribe` or 2026-07-28 `subscriptions/listen`, as the
//! host chose), reads the resource when it changes and hands the contents to
//! the host's [`ResourceHandler`] under a deadline. The subscription is made
//! before the first read, so a change between the two is never missed.
//! Contents equal to the last successfully handled ones are not handed on
//! again. When the stream ends (the server died, restarted or closed it) the
//! task subscribes again with back-off and, when asked, reads with
//! [`Reason::Reconnect`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_session::HandlerError;
use mcp_session::{Ready, Session, Subscription, SubscriptionEvent};
use mcp_types::{Era, ResourceContents, SubscriptionFilter};
use tokio::sync::watch;

use crate::HubError;
use crate::config::{Backoff, RestartPolicy};
use crate::error::TargetKind;
use crate::events::HubEvent;
use crate::governance::authority::Gate;
use crate::governance::calls::read_resource;
use crate::governance::governed::{Caller, denied};
use crate::namespace::name::ServerName;
use crate::servers::backoff;
use crate::servers::server::ServerCell;
use crate::shared::HubShared;

/// The longest URI a subscription may name, in bytes.
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 8 * 1024;
/// Subscriptions per server (a session holds at most 64 streams).
pub const MAX_SUBSCRIPTIONS_PER_SERVER: usize = 64;
/// The longest handler deadline.
pub const MAX_HANDLER_TIMEOUT: Duration = Duration::from_secs(3600);
/// Longest progress message of a subscription's read carried by
/// [`HubEvent::SubscriptionProgress`] (a longer one is left out).
pub const MAX_PROGRESS_MESSAGE_BYTES: usize = 4 * 1024;
/// How long a 2026-07-28 server has to acknowledge a `subscriptions/listen`.
const ACKNOWLEDGE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a legacy `resources/unsubscribe` may take at shutdown.
const UNSUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(1);

/// How a subscription is made. The host chooses; the hub never switches: a
/// server whose era does not offer the chosen mechanism fails with
/// [`HubError::MechanismMismatch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mechanism {
    /// Legacy eras: `resources/subscribe` and unsolicited
    /// `notifications/resources/updated`.
    ResourcesSubscribe,
    /// 2026-07-28: a `subscriptions/listen` stream.
    Listen,
    /// The era's own, decided each time the subscription is made:
    /// `resources/subscribe` with a legacy-era session, `subscriptions/listen`
    /// with a 2026-07-28 one. An explicit choice of the host (for a tool
    /// that follows whatever servers it is given), never a fallback.
    ByEra,
}

impl Mechanism {
    /// The concrete mechanism for a session of `era`, if this one allows it.
    fn for_era(self, era: Era) -> Option<Mechanism> {
        match (self, era) {
            (Mechanism::ResourcesSubscribe, Era::Legacy) | (Mechanism::ByEra, Era::Legacy) => {
                Some(Mechanism::ResourcesSubscribe)
            }
            (Mechanism::Listen, Era::Modern) | (Mechanism::ByEra, Era::Modern) => {
                Some(Mechanism::Listen)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mechanism::ResourcesSubscribe => "resources/subscribe",
            Mechanism::Listen => "subscriptions/listen",
            Mechanism::ByEra => "the era's own subscription",
        })
    }
}

/// Why a handler is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The read right after the subscription was established at start.
    Start,
    /// The server said the resource changed.
    Update,
    /// The read after the subscription was established again.
    Reconnect,
}

/// What a handler receives.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceEvent {
    /// The server.
    pub server: ServerName,
    /// The subscribed URI.
    pub uri: String,
    /// Why it is called.
    pub reason: Reason,
    /// The resource's contents as read.
    pub contents: Vec<ResourceContents>,
}

/// Receives the contents of a subscribed resource.
pub trait ResourceHandler: Send + Sync + fmt::Debug {
    /// Handles one read. Runs under the subscription's `handler_timeout`;
    /// one subscription's handler never delays another's.
    fn handle(&self, event: ResourceEvent) -> BoxFuture<'_, Result<(), HandlerError>>;
}

/// One resource subscription as the host registers it
/// ([`crate::HubBuilder::subscription`]).
#[derive(Clone, Debug)]
pub struct SubscriptionSpec {
    /// The server (must be registered by [`crate::HubBuilder::start`]).
    pub server: ServerName,
    /// The resource's exact URI (must pass the authority's allow-list).
    pub uri: String,
    /// How to subscribe.
    pub mechanism: Mechanism,
    /// Read and handle once the subscription is made at start.
    pub read_on_start: bool,
    /// Read and handle once the subscription is made again after its
    /// stream ended.
    pub read_on_reconnect: bool,
    /// Deadline of one handler call (default 30 s).
    pub handler_timeout: Duration,
    /// The host's handler.
    pub handler: Arc<dyn ResourceHandler>,
}

impl SubscriptionSpec {
    /// A subscription with defaults: read on start and on reconnect, a 30 s
    /// handler deadline. Nothing is checked here:
    /// [`HubBuilder::start`](crate::HubBuilder::start) checks the server
    /// name, the URI and the settings.
    pub fn new(
        server: &str,
        uri: &str,
        mechanism: Mechanism,
        handler: Arc<dyn ResourceHandler>,
    ) -> Self {
        Self {
            server: ServerName::unchecked(server),
            uri: uri.to_owned(),
            mechanism,
            read_on_start: true,
            read_on_reconnect: true,
            handler_timeout: Duration::from_secs(30),
            handler,
        }
    }

    /// The server name first, then the settings.
    pub(crate) fn validate(&self) -> Result<(), HubError> {
        self.server.check()?;
        let problem = if self.uri.is_empty() || self.uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
            Some("the URI must be 1 byte to 8 KiB")
        } else if self.handler_timeout.is_zero() || self.handler_timeout > MAX_HANDLER_TIMEOUT {
            Some("the handler timeout must be positive and at most an hour")
        } else {
            None
        };
        match problem {
            Some(problem) => Err(HubError::InvalidSetting {
                setting: "subscription",
                problem,
            }),
            None => Ok(()),
        }
    }
}

/// Counters of one subscription ([`crate::Hub::subscription_stats`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionStats {
    /// The server.
    pub server: ServerName,
    /// The URI.
    pub uri: String,
    /// Handler calls that succeeded.
    pub handled: u64,
    /// Reads skipped because the contents equalled the last handled ones.
    pub deduplicated: u64,
    /// Handler calls that overran their deadline.
    pub timeouts: u64,
    /// Handler calls that returned an error.
    pub handler_errors: u64,
    /// Reads that failed.
    pub read_errors: u64,
    /// Times the subscription was made again after its stream ended.
    pub reconnects: u64,
}

/// The live counters behind [`SubscriptionStats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    handled: AtomicU64,
    deduplicated: AtomicU64,
    timeouts: AtomicU64,
    handler_errors: AtomicU64,
    read_errors: AtomicU64,
    reconnects: AtomicU64,
}

impl Counters {
    pub(crate) fn stats(&self, spec: &SubscriptionSpec) -> SubscriptionStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SubscriptionStats {
            server: spec.server.clone(),
            uri: spec.uri.clone(),
            handled: get(&self.handled),
            deduplicated: get(&self.deduplicated),
            timeouts: get(&self.timeouts),
            handler_errors: get(&self.handler_errors),
            read_errors: get(&self.read_errors),
            reconnects: get(&self.reconnects),
        }
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// An established subscription and the session it lives on.
pub(crate) struct Established {
    session: Arc<Session<Ready>>,
    stream: Subscription,
    /// The concrete mechanism used (never `ByEra`).
    mechanism: Mechanism,
}

/// Checks the authority and the mechanism, subscribes, and (2026) waits for
/// the server to acknowledge the URI.
pub(crate) async fn establish(
    hub: &HubShared,
    spec: &SubscriptionSpec,
) -> Result<Established, HubError> {
    establish_uri(hub, &spec.server, &spec.uri, spec.mechanism).await
}

/// [`establish`] for `uri` on `server` by `mechanism`.
async fn establish_uri(
    hub: &HubShared,
    server: &ServerName,
    uri: &str,
    mechanism: Mechanism,
) -> Result<Established, HubError> {
    let cell = hub.cell(server.as_str())?;
    let principal = hub.principal();
    Gate::new(&hub.authority, &principal, server.as_str())
        .resource(uri)
        .map_err(denied(server, TargetKind::Resource, uri))?;
    let session = cell.session()?;
    let era = session.era();
    let Some(concrete) = mechanism.for_era(era) else {
        return Err(HubError::MechanismMismatch {
            server: server.clone(),
            uri: uri.to_owned(),
            mechanism,
            era,
        });
    };
    let filter = SubscriptionFilter {
        resource_subscriptions: Some(vec![uri.to_owned()]),
        ..SubscriptionFilter::default()
    };
    let mut stream = session
        .subscribe(filter)
        .await
        .map_err(|e| HubError::from_session(server, mechanism_method(concrete), e))?;
    if concrete == Mechanism::Listen {
        acknowledged(&mut stream, server, uri).await?;
    }
    Ok(Established {
        session,
        stream,
        mechanism: concrete,
    })
}

/// A subscription to one resource's updates that hands each on as it
/// comes, unread: for a host that passes updates to clients of its own
/// (the gateway), which read the resource themselves. Made by
/// [`crate::Hub::watch_resource`] under the authority (the resources
/// allow-list, as a read), by the era's own mechanism
/// ([`Mechanism::ByEra`]). Unlike a [`SubscriptionSpec`] it is not made
/// again when its stream ends: [`ResourceWatch::updated`] says so, and the
/// holder decides. Dropping it stops delivery (2026: the listen request is
/// cancelled); [`ResourceWatch::close`] also tells a legacy server.
#[derive(Debug)]
pub struct ResourceWatch {
    server: ServerName,
    uri: String,
    established: Established,
}

impl fmt::Debug for Established {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Established")
            .field("mechanism", &self.mechanism)
            .finish_non_exhaustive()
    }
}

impl ResourceWatch {
    /// The server.
    pub fn server(&self) -> &ServerName {
        &self.server
    }

    /// The URI, as the server names it.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the server's next update of the URI: `true` when it came,
    /// `false` once the stream ended (the server died, restarted or closed
    /// it; nothing more comes).
    pub async fn updated(&mut self) -> bool {
        loop {
            match self.established.stream.next().await {
                Some(SubscriptionEvent::ResourceUpdated { uri }) if uri == self.uri => {
                    return true;
                }
                Some(SubscriptionEvent::Ended(_)) | None => return false,
                Some(_) => {}
            }
        }
    }

    /// Ends the watch: 2026 cancels the listen request; legacy sends
    /// `resources/unsubscribe` (waiting at most a second).
    pub async fn close(self) {
        cancel(self.established).await;
    }
}

/// Watches one resource (see [`ResourceWatch`]).
pub(crate) async fn watch(
    hub: &HubShared,
    server: &str,
    uri: &str,
) -> Result<ResourceWatch, HubError> {
    let cell = hub.cell(server)?;
    let server = cell.spec.name.clone();
    if uri.is_empty() || uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
        return Err(HubError::InvalidSetting {
            setting: "subscription",
            problem: "the URI must be 1 byte to 8 KiB",
        });
    }
    let established = establish_uri(hub, &server, uri, Mechanism::ByEra).await?;
    Ok(ResourceWatch {
        server,
        uri: uri.to_owned(),
        established,
    })
}

/// A 2026-07-28 server's `notifications/tasks` about one of its tasks
/// (the tasks extension), handed on as they come: for a host that passes
/// them to clients of its own (the gateway). Made by
/// [`crate::Hub::watch_task`] on a `subscriptions/listen` stream naming the
/// task, once the authority allows the server (as for `tasks/get`). Not
/// made again when its stream ends: [`TaskWatch::next`] says so. Dropping
/// it cancels the stream.
#[derive(Debug)]
pub struct TaskWatch {
    server: ServerName,
    task_id: String,
    established: Established,
    /// The server's `max_content_bytes`.
    limit: usize,
}

impl TaskWatch {
    /// The server.
    pub fn server(&self) -> &ServerName {
        &self.server
    }

    /// The task's id, as the server names it.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The task's next state as the server sent it; `None` once the stream
    /// ended (the server died, restarted or closed it). A state larger than
    /// the server's `max_content_bytes` is
    /// [`HubError::ContentTooLarge`] (the stream goes on; the host may
    /// still ask `tasks/get`, under the same bound).
    pub async fn next(&mut self) -> Option<Result<mcp_types::Task, HubError>> {
        loop {
            match self.established.stream.next().await? {
                SubscriptionEvent::Task(task) if task.task_id == self.task_id => {
                    let size = serde_json::to_vec(&task).map_or(usize::MAX, |v| v.len());
                    if size > self.limit {
                        return Some(Err(HubError::ContentTooLarge {
                            server: self.server.clone(),
                            size,
                            limit: self.limit,
                        }));
                    }
                    return Some(Ok(*task));
                }
                SubscriptionEvent::Ended(_) => return None,
                _ => {}
            }
        }
    }
}

/// The longest task id a watch names, in bytes.
pub const MAX_WATCHED_TASK_ID_BYTES: usize = 1024;

/// Watches one task (see [`TaskWatch`]).
pub(crate) async fn watch_task(
    hub: &HubShared,
    server: &str,
    task_id: &str,
) -> Result<TaskWatch, HubError> {
    let cell = hub.cell(server)?;
    let server = cell.spec.name.clone();
    if task_id.is_empty() || task_id.len() > MAX_WATCHED_TASK_ID_BYTES {
        return Err(HubError::InvalidSetting {
            setting: "task watch",
            problem: "the task id must be 1 byte to 1 KiB",
        });
    }
    let principal = hub.principal();
    Gate::new(&hub.authority, &principal, server.as_str())
        .server()
        .map_err(denied(&server, TargetKind::Server, server.as_str()))?;
    let session = cell.session()?;
    if session.era() != Era::Modern
        || !session
            .server_capabilities()
            .has_extension(mcp_types::TASKS_EXTENSION)
    {
        return Err(HubError::Unsupported {
            server,
            operation: "notifications/tasks",
        });
    }
    let filter = SubscriptionFilter {
        task_ids: Some(vec![task_id.to_owned()]),
        ..SubscriptionFilter::default()
    };
    let mut stream = session
        .subscribe(filter)
        .await
        .map_err(|e| HubError::from_session(&server, "subscriptions/listen", e))?;
    acknowledged_by(&mut stream, &server, task_id, |accepted| {
        accepted.task_ids.iter().flatten().any(|t| t == task_id)
    })
    .await?;
    Ok(TaskWatch {
        server,
        task_id: task_id.to_owned(),
        established: Established {
            session,
            stream,
            mechanism: Mechanism::Listen,
        },
        limit: cell.spec.max_content_bytes.bytes(),
    })
}

fn mechanism_method(mechanism: Mechanism) -> &'static str {
    match mechanism {
        Mechanism::ResourcesSubscribe | Mechanism::ByEra => "resources/subscribe",
        Mechanism::Listen => "subscriptions/listen",
    }
}

/// Waits for the acknowledgement of a listen stream and checks it names the
/// URI.
async fn acknowledged(
    stream: &mut Subscription,
    server: &ServerName,
    uri: &str,
) -> Result<(), HubError> {
    acknowledged_by(stream, server, uri, |accepted| {
        accepted
            .resource_subscriptions
            .iter()
            .flatten()
            .any(|u| u == uri)
    })
    .await
}

/// Waits for the acknowledgement of a listen stream and checks that it
/// names `what` (a URI or a task id) by `named`.
async fn acknowledged_by(
    stream: &mut Subscription,
    server: &ServerName,
    what: &str,
    named: impl Fn(&SubscriptionFilter) -> bool,
) -> Result<(), HubError> {
    let refused = || HubError::SubscriptionRefused {
        server: server.clone(),
        uri: what.to_owned(),
    };
    let wait = async {
        loop {
            match stream.next().await {
                Some(SubscriptionEvent::Acknowledged { accepted, .. }) => {
                    return if named(&accepted) {
                        Ok(())
                    } else {
                        Err(refused())
                    };
                }
                Some(SubscriptionEvent::Ended(_)) | None => return Err(refused()),
                Some(_) => {}
            }
        }
    };
    tokio::time::timeout(ACKNOWLEDGE_TIMEOUT, wait)
        .await
        .unwrap_or_else(|_| Err(refused()))
}

/// One subscription's life after its first establishment.
pub(crate) async fn run(
    hub: Arc<HubShared>,
    spec: SubscriptionSpec,
    counters: Arc<Counters>,
    first: Established,
) {
    let mut shutdown = hub.shutdown.subscribe();
    let mut task = Task {
        hub: &hub,
        spec: &spec,
        counters: &counters,
        last: None,
    };
    let mut current = first;
    let mut reason = spec.read_on_start.then_some(Reason::Start);
    loop {
        let ended = tokio::select! {
            biased;
            _ = stopped(&mut shutdown) => true,
            _ = task.follow(&mut current, reason.take()) => false,
        };
        if ended {
            return cancel(current).await;
        }
        drop(current);
        current = tokio::select! {
            biased;
            _ = stopped(&mut shutdown) => return,
            again = task.reconnect() => again,
        };
        bump(&counters.reconnects);
        reason = spec.read_on_reconnect.then_some(Reason::Reconnect);
    }
}

/// Ends a stream at shutdown: 2026 drops it (the listen request is
/// cancelled); legacy unsubscribes, briefly.
async fn cancel(current: Established) {
    let Established {
        session,
        stream,
        mechanism,
    } = current;
    match mechanism {
        Mechanism::Listen => drop(stream),
        Mechanism::ResourcesSubscribe | Mechanism::ByEra => {
            let _ = tokio::time::timeout(UNSUBSCRIBE_TIMEOUT, stream.close(&session)).await;
        }
    }
}

struct Task<'a> {
    hub: &'a Arc<HubShared>,
    spec: &'a SubscriptionSpec,
    counters: &'a Counters,
    /// The contents last handled successfully.
    last: Option<Vec<ResourceContents>>,
}

impl Task<'_> {
    /// Reads for `initial` (when given), then on every update, until the
    /// stream ends.
    async fn follow(&mut self, current: &mut Established, initial: Option<Reason>) {
        if let Some(reason) = initial {
            self.read_and_handle(reason).await;
        }
        loop {
            match current.stream.next().await {
                Some(SubscriptionEvent::ResourceUpdated { uri }) if uri == self.spec.uri => {
                    self.read_and_handle(Reason::Update).await;
                }
                Some(SubscriptionEvent::Ended(_)) | None => return,
                Some(_) => {}
            }
        }
    }

    /// Subscribes again, with back-off between attempts, until it works.
    async fn reconnect(&self) -> Established {
        let cell = self.hub.cell(self.spec.server.as_str()).ok();
        let policy = cell.map_or_else(Backoff::default, restart_backoff);
        let mut attempt: u32 = 0;
        loop {
            attempt = attempt.saturating_add(1);
            let delay = backoff::delay(
                policy.initial,
                policy.max.min(Backoff::MAX_DELAY),
                policy.jitter,
                attempt,
                self.hub.jitter.unit(),
            );
            self.hub.events.emit(HubEvent::SubscriptionReconnecting {
                server: self.spec.server.clone(),
                uri: self.spec.uri.clone(),
                attempt,
                delay,
            });
            tokio::time::sleep(delay).await;
            match establish(self.hub, self.spec).await {
                Ok(established) => return established,
                Err(error) => {
                    tracing::debug!(server = %self.spec.server, error = %error, "subscribing again failed");
                }
            }
        }
    }

    async fn read_and_handle(&mut self, reason: Reason) {
        let server = &self.spec.server;
        let Ok(cell) = self.hub.cell(server.as_str()) else {
            return;
        };
        // Progress of the read (a large or slow resource) goes to the
        // host's events.
        let events = Arc::clone(self.hub);
        let (server_name, uri) = (server.clone(), self.spec.uri.clone());
        let options = mcp_session::CallOptions::new().on_progress(move |p| {
            events.events.emit(HubEvent::SubscriptionProgress {
                server: server_name.clone(),
                uri: uri.clone(),
                progress: p.progress_f64().unwrap_or(0.0),
                total: p.total.as_ref().and_then(serde_json::Number::as_f64),
                message: p.message.filter(|m| m.len() <= MAX_PROGRESS_MESSAGE_BYTES),
            });
        });
        let read = read_resource(self.hub, cell, &self.spec.uri, Caller::Host, options);
        let contents = match read.await {
            Ok(result) => result.contents,
            Err(error) => {
                bump(&self.counters.read_errors);
                self.hub.events.emit(HubEvent::SubscriptionReadFailed {
                    server: server.clone(),
                    uri: self.spec.uri.clone(),
                    reason,
                    error: Arc::new(error),
                });
                return;
            }
        };
        if self.last.as_ref() == Some(&contents) {
            bump(&self.counters.deduplicated);
            return;
        }
        let event = ResourceEvent {
            server: server.clone(),
            uri: self.spec.uri.clone(),
            reason,
            contents: contents.clone(),
        };
        let deadline = self.spec.handler_timeout;
        match tokio::time::timeout(deadline, self.spec.handler.handle(event)).await {
            Ok(Ok(())) => {
                bump(&self.counters.handled);
                self.last = Some(contents);
            }
            Ok(Err(error)) => {
                bump(&self.counters.handler_errors);
                tracing::warn!(server = %server, error = %error, "a resource handler failed");
                self.hub.events.emit(HubEvent::HandlerFailed {
                    server: server.clone(),
                    uri: self.spec.uri.clone(),
                    reason,
                    error,
                });
            }
            Err(_) => {
                bump(&self.counters.timeouts);
                self.hub.events.emit(HubEvent::HandlerTimedOut {
                    server: server.clone(),
                    uri: self.spec.uri.clone(),
                    reason,
                    after: deadline,
                });
            }
        }
    }
}

/// The server's restart back-off, or the default for `restart: never`.
fn restart_backoff(cell: &Arc<ServerCell>) -> Backoff {
    match &cell.spec.restart {
        RestartPolicy::Backoff(b) => b.clone(),
        RestartPolicy::Never => Backoff::default(),
    }
}

async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|s| *s).await;
}
