//! Hosts' resource subscriptions, forwarded (legacy `resources/subscribe`
//! and `resources/unsubscribe`, `notifications/resources/updated`).
//!
//! A host subscribes to a URI as it knows it (`mcp-gateway://SERVER/URI`,
//! or a server's own URI that one server serves); the handler resolves it
//! to the server and the server's URI, and every host subscription to that
//! pair shares one downstream watch ([`mcp_hub::Hub::watch_resource`]:
//! under the resources allow-list, like a read). The watch's task hands
//! each update to exactly the host connections subscribed to the pair, each
//! with the URI it subscribed by, and to no other. The last host to leave
//! (unsubscribe, or its connection's end) ends the watch (refcount). When
//! the server's stream ends (it died, restarted), the watch is made again
//! with back-off while any host still wants it, and its hosts are then sent
//! one update: what changed meanwhile was not heard.
//!
//! Bounds: [`MAX_PER_HOST`] URIs per host connection and
//! [`MAX_WATCHES`] downstream watches in all; past either, the subscription
//! is refused by name.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_hub::{Hub, HubError, ResourceWatch};
use mcp_types::notifications::ResourceUpdated;
use mcp_types::{ErrorObject, ResourceUpdatedParams, error_codes};
use serde_json::json;
use tokio::sync::oneshot;

use crate::HostLink;

/// URIs one host connection may be subscribed to at once.
pub(crate) const MAX_PER_HOST: usize = 64;
/// Downstream watches (distinct server and URI pairs) at once, for all
/// hosts together.
pub(crate) const MAX_WATCHES: usize = 1024;
/// The first wait before a watch whose stream ended is made again.
const REWATCH_FIRST: Duration = Duration::from_millis(500);
/// The longest wait between attempts.
const REWATCH_CAP: Duration = Duration::from_secs(30);

/// A server and the URI as that server names it.
type Key = (String, String);

/// Every host subscription and the watches they share; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    watches: HashMap<Key, Watched>,
}

/// One downstream watch and who wants it.
#[derive(Debug)]
struct Watched {
    /// Host connection → the URIs it subscribed to this pair by.
    hosts: HashMap<u64, BTreeSet<String>>,
    /// Ends the watch's task (which then closes the watch).
    stop: Option<oneshot::Sender<()>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Plain data behind short locks; a panic leaves nothing half-done.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    /// How many URIs host `host` is subscribed to.
    fn of_host(&self, host: u64) -> usize {
        self.watches
            .values()
            .filter_map(|w| w.hosts.get(&host))
            .map(BTreeSet::len)
            .sum()
    }

    /// Adds `host`'s `uri` to the watch of `key` when there is one; whether
    /// there was.
    fn join(&mut self, key: &Key, host: u64, uri: &str) -> bool {
        match self.watches.get_mut(key) {
            Some(watched) => {
                watched
                    .hosts
                    .entry(host)
                    .or_default()
                    .insert(uri.to_owned());
                true
            }
            None => false,
        }
    }

    /// Takes `host` (all of its URIs when `uri` is `None`) out of every
    /// watch; watches nobody wants any more are removed and stopped.
    fn leave(&mut self, host: u64, uri: Option<&str>) -> bool {
        let mut left = false;
        self.watches.retain(|_, watched| {
            if let Some(uris) = watched.hosts.get_mut(&host) {
                match uri {
                    Some(uri) => left |= uris.remove(uri),
                    None => {
                        left |= !uris.is_empty();
                        uris.clear();
                    }
                }
                if uris.is_empty() {
                    watched.hosts.remove(&host);
                }
            }
            if watched.hosts.is_empty() {
                if let Some(stop) = watched.stop.take() {
                    let _ = stop.send(());
                }
                return false;
            }
            true
        });
        left
    }
}

/// Why a subscription was not made.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The hub refused the watch (the authority, the server, its session).
    Hub(HubError),
    /// A bound of ours, as the host's error.
    Bound(ErrorObject),
}

/// A subscription refused at a bound, named.
fn over_bound(what: &str, bound: usize) -> ErrorObject {
    let mut error = ErrorObject::new(
        error_codes::INTERNAL_ERROR,
        format!("too many resource subscriptions: at most {bound} {what}"),
    );
    error.data = Some(json!({ "kind": "too_many_subscriptions", "bound": bound }));
    error
}

/// Whether a host's subscription can be forwarded: some server declared
/// `resources.subscribe` (read when a host connection starts, as its
/// capabilities are).
pub(crate) fn can_forward(hub: &Hub) -> bool {
    hub.servers().iter().any(|server| {
        hub.status(server.as_str()).is_ok_and(|status| {
            status.info.as_ref().is_some_and(|info| {
                info.capabilities
                    .resources
                    .as_ref()
                    .is_some_and(|r| r.subscribe == Some(true))
            })
        })
    })
}

impl Subscriptions {
    /// Subscribes host connection `host` to `uri` (as the host knows it),
    /// which is `server_uri` on `server`: joins the watch of that pair, or
    /// makes it.
    pub(crate) async fn subscribe(
        &self,
        hub: &Arc<Hub>,
        link: &HostLink,
        host: u64,
        uri: &str,
        server: &str,
        server_uri: &str,
    ) -> Result<(), Refused> {
        let key: Key = (server.to_owned(), server_uri.to_owned());
        {
            let mut state = lock(&self.state);
            let known = state
                .watches
                .get(&key)
                .and_then(|w| w.hosts.get(&host))
                .is_some_and(|uris| uris.contains(uri));
            if known {
                return Ok(());
            }
            if state.of_host(host) >= MAX_PER_HOST {
                return Err(Refused::Bound(over_bound(
                    "per host connection",
                    MAX_PER_HOST,
                )));
            }
            if state.join(&key, host, uri) {
                return Ok(());
            }
            if state.watches.len() >= MAX_WATCHES {
                return Err(Refused::Bound(over_bound("in all", MAX_WATCHES)));
            }
        }
        // Made outside the lock (a request to the server); another host may
        // make the same one meanwhile: the first one in is kept.
        let watch = hub
            .watch_resource(server, server_uri)
            .await
            .map_err(Refused::Hub)?;
        let mut state = lock(&self.state);
        if state.of_host(host) >= MAX_PER_HOST {
            drop(state);
            tokio::spawn(watch.close());
            return Err(Refused::Bound(over_bound(
                "per host connection",
                MAX_PER_HOST,
            )));
        }
        if state.join(&key, host, uri) {
            drop(state);
            tokio::spawn(watch.close());
            return Ok(());
        }
        let (stop, stopped) = oneshot::channel();
        state.watches.insert(
            key.clone(),
            Watched {
                hosts: HashMap::from([(host, BTreeSet::from([uri.to_owned()]))]),
                stop: Some(stop),
            },
        );
        tokio::spawn(follow(
            Arc::clone(hub),
            link.clone(),
            Arc::clone(&self.state),
            key,
            watch,
            stopped,
        ));
        Ok(())
    }

    /// Ends host connection `host`'s subscription to `uri` (as it
    /// subscribed by it); whether it had one.
    pub(crate) fn unsubscribe(&self, host: u64, uri: &str) -> bool {
        lock(&self.state).leave(host, Some(uri))
    }

    /// Host connection `host` ended: every subscription of its ends.
    pub(crate) fn disconnect(&self, host: u64) {
        lock(&self.state).leave(host, None);
    }

    /// Stops every watch (the gateway stops).
    pub(crate) fn stop_all(&self) {
        let mut state = lock(&self.state);
        for (_, mut watched) in state.watches.drain() {
            if let Some(stop) = watched.stop.take() {
                let _ = stop.send(());
            }
        }
    }
}

/// One watch's life: every update goes to the hosts subscribed to its pair
/// now; a stream that ends is watched again with back-off while someone
/// wants it; `stopped` (nobody does, or the gateway stops) closes it.
async fn follow(
    hub: Arc<Hub>,
    link: HostLink,
    state: Arc<Mutex<State>>,
    key: Key,
    mut watch: ResourceWatch,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        let updated = tokio::select! {
            biased;
            _ = &mut stopped => return watch.close().await,
            updated = watch.updated() => updated,
        };
        if updated {
            deliver(&link, &state, &key).await;
            continue;
        }
        tracing::debug!(server = %key.0, "a watched resource's stream ended; watching again");
        drop(watch);
        let mut wait = REWATCH_FIRST;
        watch = loop {
            tokio::select! {
                biased;
                _ = &mut stopped => return,
                () = tokio::time::sleep(wait) => {}
            }
            match hub.watch_resource(&key.0, &key.1).await {
                Ok(again) => break again,
                Err(HubError::ShuttingDown) => return,
                Err(e) => {
                    tracing::debug!(server = %key.0, error = %e, "watching a resource again failed");
                    wait = (wait * 2).min(REWATCH_CAP);
                }
            }
        };
        // While nothing watched it (the server restarted, or forgot our
        // session), the resource may have changed unheard: the hosts are
        // told to read it again, as the hub's own subscriptions read it on
        // reconnecting.
        deliver(&link, &state, &key).await;
    }
}

/// `notifications/resources/updated` to each host subscribed to `key`,
/// once per URI it subscribed by.
async fn deliver(link: &HostLink, state: &Mutex<State>, key: &Key) {
    let targets: Vec<(u64, Vec<String>)> = match lock(state).watches.get(key) {
        Some(watched) => watched
            .hosts
            .iter()
            .map(|(host, uris)| (*host, uris.iter().cloned().collect()))
            .collect(),
        None => return,
    };
    for (host, uris) in targets {
        let Some(handle) = link.handle(host) else {
            continue;
        };
        for uri in uris {
            let params = ResourceUpdatedParams::new(uri);
            if let Err(e) = handle.notify::<ResourceUpdated>(params).await {
                tracing::debug!(error = %e, "a resource update was not passed on");
            }
        }
    }
}
