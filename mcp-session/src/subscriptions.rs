//! One host-facing subscription stream for both eras.
//!
//! - 2026-07-28: [`Session::subscribe`] opens `subscriptions/listen` (a request
//!   with no deadline); the server acknowledges what it agreed to honour, then
//!   sends notifications tagged with the listen request's id in
//!   `_meta["io.modelcontextprotocol/subscriptionId"]`, which is how they are
//!   told apart; a result ends the stream gracefully, the connection ending
//!   ends it abruptly, and dropping the [`Subscription`] cancels it.
//! - legacy: the same filter is applied to the server's unsolicited
//!   `list_changed` notifications, and resource URIs are subscribed with
//!   `resources/subscribe` (and unsubscribed by [`Subscription::close`]).

use mcp_types::Request as _;
use mcp_types::requests::SubscriptionsListen;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use mcp_types::{SubscriptionFilter, SubscriptionsListenParams};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::SessionError;
use crate::driver::{RequestOptions, Shared, SubscriptionSink};
use crate::params::Params;
use crate::protocol::RequestTiming;
pub use crate::protocol::subscriptions::{SubscriptionEnd, SubscriptionEvent};
use crate::session::{Ready, Session};

/// Events queued per subscription before further ones are dropped (and
/// counted by [`Subscription::dropped`]).
const SUBSCRIPTION_QUEUE: usize = 256;

/// A live subscription. Dropping it stops delivery (2026: cancels the listen
/// request); [`Subscription::close`] also unsubscribes legacy resource URIs.
#[derive(Debug)]
pub struct Subscription {
    rx: mpsc::Receiver<SubscriptionEvent>,
    key: u64,
    shared: Weak<Shared>,
    listen: Option<JoinHandle<()>>,
    legacy_uris: Vec<String>,
    dropped: Arc<AtomicU64>,
}

impl Subscription {
    /// The next event; `None` after [`SubscriptionEvent::Ended`] was taken.
    pub async fn next(&mut self) -> Option<SubscriptionEvent> {
        self.rx.recv().await
    }

    /// Events dropped because this subscription was not read fast enough.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Ends the subscription: 2026 cancels the listen request; legacy sends
    /// `resources/unsubscribe` for its URIs.
    pub async fn close(mut self, session: &Session<Ready>) -> Result<(), SessionError> {
        for uri in std::mem::take(&mut self.legacy_uris) {
            session.unsubscribe_resource(&uri).await?;
        }
        Ok(())
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(task) = self.listen.take() {
            // Aborting the listen task drops its request future, which sends
            // `notifications/cancelled`.
            task.abort();
        }
        if let Some(shared) = self.shared.upgrade() {
            shared.remove_subscription(self.key);
        }
    }
}

impl Session<Ready> {
    /// Opens a subscription for the notifications in `filter` (see the module
    /// docs for how each era does it).
    pub async fn subscribe(
        &self,
        filter: SubscriptionFilter,
    ) -> Result<Subscription, SessionError> {
        let shared = &self.link.shared;
        let (tx, rx) = mpsc::channel(SUBSCRIPTION_QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let modern = self.is_modern();
        let key = shared.add_subscription(
            filter.clone(),
            modern,
            SubscriptionSink {
                tx: tx.clone(),
                dropped: Arc::clone(&dropped),
            },
        )?;
        let mut subscription = Subscription {
            rx,
            key,
            shared: Arc::downgrade(shared),
            listen: None,
            legacy_uris: Vec::new(),
            dropped,
        };
        if modern {
            let wants_tasks = filter.task_ids.as_ref().is_some_and(|ids| !ids.is_empty());
            let params = SubscriptionsListenParams {
                notifications: filter,
                ..SubscriptionsListenParams::default()
            };
            let Params::Object(body) = Params::encode(&params, true)? else {
                return Err(SessionError::Params(serde::ser::Error::custom(
                    "listen params",
                )));
            };
            let mut meta = self.request_meta();
            if wants_tasks {
                // Asking about tasks is taking the extension's
                // notifications: declared on this request whatever the
                // session's `accept_tasks`.
                meta = meta.map(|m| Arc::new(declaring_tasks((*m).clone())));
            }
            let version = self.link.version_header(true);
            let headers = self.modern_headers(SubscriptionsListen::METHOD, "");
            let task_shared = Arc::clone(shared);
            subscription.listen = Some(tokio::spawn(async move {
                let method: Arc<str> = Arc::from(SubscriptionsListen::METHOD);
                let timing = RequestTiming {
                    open_ended: true,
                    reset_on_progress: false,
                    ..RequestTiming::default()
                };
                let outcome = task_shared
                    .call(
                        &method,
                        Params::Object(body),
                        meta.as_deref(),
                        RequestOptions {
                            timing,
                            protocol_version: version,
                            headers,
                            listen_key: Some(key),
                            ..RequestOptions::default()
                        },
                    )
                    .await;
                let end = match outcome {
                    Ok(_) => SubscriptionEnd::Graceful,
                    Err(e) if e.is_dead() => SubscriptionEnd::Abrupt,
                    Err(e) => SubscriptionEnd::Failed { code: e.code() },
                };
                let _ = tx.try_send(SubscriptionEvent::Ended(end));
            }));
        } else if let Some(uris) = &filter.resource_subscriptions {
            for uri in uris {
                self.subscribe_resource(uri).await?;
                subscription.legacy_uris.push(uri.clone());
            }
        }
        Ok(subscription)
    }
}

/// `meta` with the tasks extension among its client capabilities.
fn declaring_tasks(
    mut meta: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let key = mcp_types::meta_keys::CLIENT_CAPABILITIES;
    let mut caps: mcp_types::ClientCapabilities = meta
        .get(key)
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default();
    caps.add_extension(mcp_types::TASKS_EXTENSION);
    if let Ok(caps) = serde_json::to_value(caps) {
        meta.insert(key.to_owned(), caps);
    }
    meta
}
