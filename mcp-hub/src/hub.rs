//! The hub: registration, parallel start, the published namespace, routing
//! of the model's calls, snapshot review, and parallel shutdown.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_session::CallOptions;
use mcp_types::CallToolResult;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::HubError;
use crate::config::HubConfig;
use crate::error::tool_arguments;
use crate::events::{HubEvent, HubEvents};
use crate::facade::Facade;
use crate::governance::authority::Principal;
use crate::governance::governed::Caller;
use crate::namespace::name::ServerName;
use crate::namespace::snapshot::ToolSnapshot;
use crate::namespace::{Namespace, RouteTarget};
use crate::servers::fdlimit::DescriptorLimit;
use crate::servers::server::ServerStatus;
use crate::shared::{HubShared, lock, write};
use crate::subscriptions::{Counters, SubscriptionSpec, SubscriptionStats};

/// What a shutdown did.
#[derive(Clone, Debug)]
pub struct ShutdownReport {
    /// How long it took.
    pub elapsed: Duration,
    /// Servers still running at the bound, killed.
    pub forced: Vec<ServerName>,
}

/// Many servers behind one namespace. See the crate docs.
///
/// Dropping a hub without [`Hub::shutdown`] kills its servers at once
/// (synchronously, without a grace period).
#[derive(Debug)]
pub struct Hub {
    pub(crate) shared: Arc<HubShared>,
    pub(crate) supervisors: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) events: Mutex<Option<HubEvents>>,
    pub(crate) closed: AtomicBool,
    pub(crate) subscriptions: Mutex<Vec<RunningSubscription>>,
}

/// One subscription's task and counters.
#[derive(Debug)]
pub(crate) struct RunningSubscription {
    pub(crate) spec: SubscriptionSpec,
    pub(crate) counters: Arc<Counters>,
    /// Taken by the shutdown.
    pub(crate) task: Option<JoinHandle<()>>,
}

impl RunningSubscription {
    /// Starts the task following `established`.
    pub(crate) fn spawn(
        hub: &Arc<HubShared>,
        spec: SubscriptionSpec,
        established: crate::subscriptions::Established,
    ) -> Self {
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(crate::subscriptions::run(
            Arc::clone(hub),
            spec.clone(),
            Arc::clone(&counters),
            established,
        ));
        Self {
            spec,
            counters,
            task: Some(task),
        }
    }
}

impl Hub {
    /// A builder.
    pub fn builder(config: HubConfig) -> crate::HubBuilder {
        crate::HubBuilder::new(config)
    }

    /// Takes the event receiver (events since start are waiting in it).
    /// `None` after the first call.
    pub fn take_events(&self) -> Option<HubEvents> {
        lock(&self.events).take()
    }

    /// Events dropped because the queue was full.
    pub fn dropped_events(&self) -> u64 {
        self.shared.events.dropped()
    }

    /// The registered servers, in registration order.
    pub fn servers(&self) -> Vec<ServerName> {
        self.shared
            .cells
            .iter()
            .map(|c| c.spec.name.clone())
            .collect()
    }

    /// A server's status.
    pub fn status(&self, server: &str) -> Result<ServerStatus, HubError> {
        Ok(self.shared.cell(server)?.status())
    }

    /// Ends `server`'s current connection at once, as a crash would (for a
    /// child: SIGKILL to its process group). Its calls fail promptly, the hub
    /// reports [`HubEvent::Failed`](crate::HubEvent::Failed), and the
    /// server's [`RestartPolicy`](crate::RestartPolicy) decides what comes
    /// next. For an operator's "restart" and for demonstrations. Returns
    /// whether there was a live connection to end.
    pub fn kill_server(&self, server: &str) -> Result<bool, HubError> {
        Ok(self.shared.cell(server)?.kill())
    }

    /// The open-file limits before and after the start-up raise (`None`
    /// when raising was turned off).
    pub fn descriptor_limit(&self) -> Option<DescriptorLimit> {
        self.shared.descriptor_limit
    }

    /// The counters of every subscription, in registration order.
    pub fn subscription_stats(&self) -> Vec<SubscriptionStats> {
        lock(&self.subscriptions)
            .iter()
            .map(|s| s.counters.stats(&s.spec))
            .collect()
    }

    /// Makes one more resource subscription on a running hub (see
    /// [`SubscriptionSpec`]; [`crate::HubBuilder::subscription`] makes them
    /// at start). Its server must be registered and ready now; the URI must
    /// pass the authority. Once made it behaves as one made at start: read
    /// on start when asked, made again after its stream ends, stopped at
    /// shutdown. Fails with the reason when it cannot be made (nothing is
    /// retried here), with [`HubError::InvalidSetting`] past 64 on one
    /// server, and with [`HubError::ShuttingDown`] once shutdown began.
    pub async fn subscribe(&self, spec: SubscriptionSpec) -> Result<(), HubError> {
        spec.validate()?;
        self.shared.cell(spec.server.as_str())?;
        let full = || {
            lock(&self.subscriptions)
                .iter()
                .filter(|s| s.spec.server == spec.server)
                .count()
                >= crate::subscriptions::MAX_SUBSCRIPTIONS_PER_SERVER
        };
        let refused = HubError::InvalidSetting {
            setting: "subscriptions",
            problem: "more than 64 subscriptions on one server",
        };
        if full() {
            return Err(refused);
        }
        let established = crate::subscriptions::establish(&self.shared, &spec).await?;
        let mut running = lock(&self.subscriptions);
        // Checked again under the lock: shutdown or other subscriptions may
        // have come while this one was made (the new stream is then dropped).
        if self.closed.load(Ordering::Acquire) {
            return Err(HubError::ShuttingDown);
        }
        if running
            .iter()
            .filter(|s| s.spec.server == spec.server)
            .count()
            >= crate::subscriptions::MAX_SUBSCRIPTIONS_PER_SERVER
        {
            return Err(refused);
        }
        running.push(RunningSubscription::spawn(&self.shared, spec, established));
        Ok(())
    }

    /// Watches one resource of `server` for updates, handed on unread
    /// ([`crate::ResourceWatch`]: the era's own mechanism, not made again
    /// when its stream ends). The server must be registered and ready; the
    /// URI (as the server names it, at most 8 KiB) must pass the
    /// authority's resources allow-list. A session holds at most 64
    /// subscriptions and watches; past that the session's refusal is the
    /// error.
    pub async fn watch_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<crate::ResourceWatch, HubError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(HubError::ShuttingDown);
        }
        crate::subscriptions::watch(&self.shared, server, uri).await
    }

    /// Watches one task of a 2026-07-28 `server` that declared the tasks
    /// extension, by the server's own id: each `notifications/tasks` about
    /// it is handed on ([`crate::TaskWatch`]). The authority must allow the
    /// server (as for [`Hub::get_task`]); a server of another era or
    /// without the extension is [`HubError::Unsupported`], one that does
    /// not acknowledge the id [`HubError::SubscriptionRefused`]. Each watch
    /// is one listen stream; a session holds at most 64 subscriptions and
    /// watches, past which the session's refusal is the error.
    pub async fn watch_task(
        &self,
        server: &str,
        task_id: &str,
    ) -> Result<crate::TaskWatch, HubError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(HubError::ShuttingDown);
        }
        crate::subscriptions::watch_task(&self.shared, server, task_id).await
    }

    /// The current namespace (immutable; a change publishes a new one).
    pub fn namespace(&self) -> Arc<Namespace> {
        self.shared.namespace()
    }

    /// Lists the tools of every lazy server not listed yet (in parallel) and
    /// returns the namespace after.
    pub async fn discover(&self) -> Result<Arc<Namespace>, HubError> {
        let pending = self.shared.undiscovered();
        let results =
            futures::future::join_all(pending.iter().map(|c| self.shared.discover_cell(c))).await;
        if let Some(error) = results.into_iter().find_map(Result::err) {
            return Err(error);
        }
        Ok(self.namespace())
    }

    /// Calls the tool exposed as `name` (a model's call), or whose
    /// provider-safe alias `name` is (the name an export gave the model).
    /// The route is fixed when the call starts, so a namespace change does
    /// not redirect it.
    ///
    /// `arguments` is anything that serialises to a JSON object: a
    /// `serde_json::json!({..})` value, a `Map`, the model's
    /// [`ToolCall::arguments`](crate::ToolCall::arguments), a host's own
    /// `#[derive(Serialize)]` struct; `()` for none. Anything else (an
    /// array, a string, a number) is refused with
    /// [`HubError::ArgumentsNotAnObject`] before anything is sent.
    pub async fn call(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Result<CallToolResult, HubError> {
        let arguments = tool_arguments(name, arguments)?;
        self.call_object(name, arguments, &CallOptions::default())
            .await
    }

    /// [`Hub::call`] with a deadline or a progress sink.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        options: &CallOptions,
    ) -> Result<CallToolResult, HubError> {
        let arguments = tool_arguments(name, arguments)?;
        self.call_object(name, arguments, options).await
    }

    /// [`Hub::call_with`] once the arguments are an object.
    async fn call_object(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<CallToolResult, HubError> {
        if self.shared.is_shutting_down() {
            return Err(HubError::ShuttingDown);
        }
        let mut namespace = self.namespace();
        let unknown = matches!(namespace.lookup(name), Err(HubError::UnknownTool { .. }));
        if unknown && !self.shared.undiscovered().is_empty() {
            // First use of a lazy server: discover, then look again.
            // Boxed, as the helper path below: rare, and large enough to
            // weigh on every call held in flight.
            namespace = Box::pin(self.discover()).await?;
        }
        // The hook and the audit see the exposed name, also when the model
        // used its provider-safe alias.
        let (entry, exposed_name) = namespace.lookup(name)?;
        let cell = Arc::clone(self.shared.cell(entry.server().as_str())?);
        let caller = Caller::Model { exposed_name };
        match &entry.route().target {
            RouteTarget::Tool(local) => {
                crate::governance::calls::call_tool(
                    &self.shared,
                    &cell,
                    local,
                    Some(entry.tool()),
                    arguments,
                    options,
                    caller,
                )
                .await
            }
            RouteTarget::Helper(helper) => {
                Box::pin(crate::governance::calls::call_helper(
                    &self.shared,
                    &cell,
                    *helper,
                    exposed_name,
                    arguments,
                ))
                .await
            }
        }
    }

    /// The governed facade for host code.
    pub fn facade(&self) -> Facade<'_> {
        Facade::new(&self.shared)
    }

    /// The server's active snapshot.
    pub fn active_snapshot(&self, server: &str) -> Result<Option<Arc<ToolSnapshot>>, HubError> {
        Ok(self.shared.cell(server)?.state().active.clone())
    }

    /// The snapshot waiting for review, if any.
    pub fn pending_snapshot(&self, server: &str) -> Result<Option<Arc<ToolSnapshot>>, HubError> {
        Ok(self.shared.cell(server)?.state().pending.clone())
    }

    /// Adopts the pending snapshot of `generation`; returns the new namespace.
    pub fn adopt(&self, server: &str, generation: u64) -> Result<Arc<Namespace>, HubError> {
        let cell = self.shared.cell(server)?;
        {
            let mut state = cell.state();
            match state.pending.take() {
                Some(p) if p.generation() == generation => {
                    let diff = p.diff(state.active.as_deref());
                    state.active = Some(p);
                    self.shared.events.emit(HubEvent::SnapshotAdopted {
                        server: cell.spec.name.clone(),
                        generation,
                        diff,
                    });
                }
                other => {
                    state.pending = other;
                    return Err(HubError::NoPendingSnapshot {
                        server: cell.spec.name.clone(),
                        generation,
                    });
                }
            }
        }
        self.shared.rebuild_namespace()
    }

    /// Discards the pending snapshot of `generation`.
    pub fn discard(&self, server: &str, generation: u64) -> Result<(), HubError> {
        let cell = self.shared.cell(server)?;
        let mut state = cell.state();
        match &state.pending {
            Some(p) if p.generation() == generation => {
                state.pending = None;
                Ok(())
            }
            _ => Err(HubError::NoPendingSnapshot {
                server: cell.spec.name.clone(),
                generation,
            }),
        }
    }

    /// Acts for `principal` from now on; returns the namespace published for
    /// it. Calls already running keep the route they started with.
    pub fn set_principal(&self, principal: Principal) -> Result<Arc<Namespace>, HubError> {
        *write(&self.shared.principal) = principal;
        self.shared.rebuild_namespace()
    }

    /// Cancels every subscription first (2026: the listen request is
    /// cancelled; legacy: `resources/unsubscribe`, briefly), then shuts every
    /// server down in parallel (close stdin, grace, SIGTERM,
    /// grace, SIGKILL for stdio children), within
    /// [`HubConfig::shutdown_timeout`]; servers still running then are
    /// killed. Calls in flight and later calls fail with
    /// [`HubError::ShuttingDown`]. A second call returns at once.
    pub async fn shutdown(&self) -> ShutdownReport {
        let began = Instant::now();
        if self.closed.swap(true, Ordering::AcqRel) {
            return ShutdownReport {
                elapsed: began.elapsed(),
                forced: Vec::new(),
            };
        }
        self.shared.shutdown.send_replace(true);
        self.cancel_subscriptions().await;
        let cells = &self.shared.cells;
        let sessions: Vec<_> = cells.iter().map(|cell| cell.take_session()).collect();
        let done: Vec<AtomicBool> = cells.iter().map(|_| AtomicBool::new(false)).collect();
        let stops = sessions
            .iter()
            .zip(&done)
            .map(|(session, done)| async move {
                // In-flight calls may still hold the session; they fail at once.
                if let Some(session) = session {
                    session.shutdown().await;
                }
                done.store(true, Ordering::Release);
            });
        let bound = self.shared.config.shutdown_timeout;
        let all = futures::future::join_all(stops);
        let forced = if tokio::time::timeout(bound, all).await.is_ok() {
            Vec::new()
        } else {
            cells
                .iter()
                .zip(&sessions)
                .zip(&done)
                .filter(|(_, d)| !d.load(Ordering::Acquire))
                .filter_map(|((cell, session), _)| {
                    session.as_ref().map(|s| {
                        s.kill();
                        cell.spec.name.clone()
                    })
                })
                .collect()
        };
        drop(sessions);
        // Supervisors see the signal and end at once; give them a moment to
        // report `Stopped`, then stop waiting.
        let supervisors = std::mem::take(&mut *lock(&self.supervisors));
        let aborts: Vec<_> = supervisors.iter().map(JoinHandle::abort_handle).collect();
        if tokio::time::timeout(
            Duration::from_secs(2),
            futures::future::join_all(supervisors),
        )
        .await
        .is_err()
        {
            aborts.iter().for_each(tokio::task::AbortHandle::abort);
        }
        ShutdownReport {
            elapsed: began.elapsed(),
            forced,
        }
    }
}

impl Hub {
    /// Waits (bounded) for the subscription tasks, which end their streams
    /// on the shutdown signal, so no stream outlives its session.
    async fn cancel_subscriptions(&self) {
        let tasks: Vec<JoinHandle<()>> = lock(&self.subscriptions)
            .iter_mut()
            .filter_map(|s| s.task.take())
            .collect();
        if tasks.is_empty() {
            return;
        }
        let aborts: Vec<_> = tasks.iter().map(JoinHandle::abort_handle).collect();
        let bound = self
            .shared
            .config
            .shutdown_timeout
            .min(SUBSCRIPTION_CANCEL_WAIT);
        if tokio::time::timeout(bound, futures::future::join_all(tasks))
            .await
            .is_err()
        {
            aborts.iter().for_each(tokio::task::AbortHandle::abort);
        }
    }
}

/// How long a shutdown waits for subscription tasks to end their streams.
const SUBSCRIPTION_CANCEL_WAIT: Duration = Duration::from_secs(2);

impl Drop for Hub {
    fn drop(&mut self) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        // Synchronous only: signal, kill, abort.
        self.shared.shutdown.send_replace(true);
        for cell in &self.shared.cells {
            cell.kill();
        }
        for task in lock(&self.supervisors).iter() {
            task.abort();
        }
        for task in lock(&self.subscriptions)
            .iter()
            .filter_map(|s| s.task.as_ref())
        {
            task.abort();
        }
    }
}
