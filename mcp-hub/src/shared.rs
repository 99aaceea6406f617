//! The state every part of the hub shares: the servers' cells, the
//! authority and principal, the published namespace, the event sink, the
//! shutdown signal. Everything below the public [`crate::Hub`] works on this,
//! never on the `Hub` itself.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::watch;

use crate::HubError;
use crate::config::{Discovery, HubConfig};
use crate::events::{EventSink, HubEvent};
use crate::governance::approval::ApprovalHook;
use crate::governance::authority::{Authority, Gate, Principal};
use crate::namespace::helper::Helper;
use crate::namespace::name::ServerName;
use crate::namespace::{BuildSettings, Namespace, ServerView};
use crate::servers::backoff::Jitter;
use crate::servers::fdlimit::DescriptorLimit;
use crate::servers::lifecycle;
use crate::servers::server::ServerCell;

/// The state every part of the hub shares.
#[derive(Debug)]
pub(crate) struct HubShared {
    pub(crate) config: HubConfig,
    pub(crate) cells: Vec<Arc<ServerCell>>,
    pub(crate) index: HashMap<ServerName, usize>,
    pub(crate) events: EventSink,
    pub(crate) jitter: Jitter,
    pub(crate) authority: Authority,
    pub(crate) principal: RwLock<Principal>,
    pub(crate) namespace: RwLock<Arc<Namespace>>,
    /// Serialises rebuilds; holds the last generation.
    pub(crate) rebuild: Mutex<u64>,
    pub(crate) shutdown: watch::Sender<bool>,
    pub(crate) started: AtomicBool,
    pub(crate) approval: Option<Arc<dyn ApprovalHook>>,
    pub(crate) descriptor_limit: Option<DescriptorLimit>,
}

impl HubShared {
    pub(crate) fn is_started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    pub(crate) fn cell(&self, server: &str) -> Result<&Arc<ServerCell>, HubError> {
        self.index
            .get(server)
            .map(|&i| &self.cells[i])
            .ok_or_else(|| HubError::UnknownServer {
                name: server.to_owned(),
            })
    }

    pub(crate) fn principal(&self) -> Principal {
        read(&self.principal).clone()
    }

    pub(crate) fn namespace(&self) -> Arc<Namespace> {
        Arc::clone(&read(&self.namespace))
    }

    /// Builds and publishes a namespace from the servers' active snapshots.
    pub(crate) fn rebuild_namespace(&self) -> Result<Arc<Namespace>, HubError> {
        let mut generation = lock(&self.rebuild);
        let principal = self.principal();
        let states: Vec<_> = self
            .cells
            .iter()
            .map(|c| {
                let state = c.state();
                (state.active.clone(), state.info.clone())
            })
            .collect();
        let views: Vec<ServerView<'_>> = self
            .cells
            .iter()
            .zip(&states)
            .map(|(cell, (snapshot, info))| {
                let gate = Gate::new(&self.authority, &principal, cell.spec.name.as_str());
                let helpers = match info {
                    Some(info) if cell.spec.context_helpers => {
                        Helper::offered(&info.capabilities, &gate)
                    }
                    _ => Vec::new(),
                };
                ServerView {
                    name: &cell.spec.name,
                    snapshot: snapshot.as_ref(),
                    helpers,
                    gate,
                }
            })
            .collect();
        let settings = BuildSettings {
            policy: self.config.policy,
            separator: &self.config.separator,
            provider_safe: self.config.provider_safe_names,
            max_exposed: self.config.max_exposed_tools,
        };
        match Namespace::build(&views, &settings, *generation + 1) {
            Ok(namespace) => {
                *generation += 1;
                let namespace = Arc::new(namespace);
                *write(&self.namespace) = Arc::clone(&namespace);
                self.events.emit(HubEvent::Namespace {
                    generation: namespace.generation(),
                    tools: namespace.tools().len(),
                    notes: namespace.notes().to_vec(),
                });
                Ok(namespace)
            }
            Err(error) => {
                if let Some(copy) = error.try_clone() {
                    self.events.emit(HubEvent::NamespaceRefused {
                        error: Arc::new(copy),
                    });
                }
                Err(error)
            }
        }
    }

    /// Lists the tools of a lazy server that has not been listed yet.
    pub(crate) async fn discover_cell(&self, cell: &ServerCell) -> Result<(), HubError> {
        let _one_at_a_time = cell.discovery.lock().await;
        if cell.state().active.is_some() {
            return Ok(());
        }
        let session = cell.session()?;
        let snapshot = lifecycle::list_snapshot(self, cell, &session).await?;
        lifecycle::offer_snapshot(self, cell, snapshot, true);
        Ok(())
    }

    pub(crate) fn undiscovered(&self) -> Vec<&Arc<ServerCell>> {
        self.cells
            .iter()
            .filter(|c| {
                let state = c.state();
                c.spec.discovery == Discovery::Lazy
                    && state.active.is_none()
                    && state.session.is_some()
            })
            .collect()
    }
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // Plain data behind the lock; a panic elsewhere does not make it wrong.
    lock.read().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}
