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

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use bytes::Bytes;
use mcp_types::{SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::SessionError;
use crate::driver::{CallOptions, Shared};
use crate::params::Params;
use crate::protocol::RequestTiming;
use crate::session::{Ready, Session};

/// Events queued per subscription before further ones are dropped (and
/// counted by [`Subscription::dropped`]).
const SUBSCRIPTION_QUEUE: usize = 256;
/// Subscriptions open at once on one session.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 64;

/// What a subscription delivers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// 2026: the server confirmed the stream. `accepted` is what it agreed to
    /// honour; `refused` is what was asked for and left out.
    Acknowledged {
        /// What the server will send.
        accepted: SubscriptionFilter,
        /// What it will not.
        refused: SubscriptionFilter,
    },
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A subscribed resource changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// The stream ended; nothing follows.
    Ended(SubscriptionEnd),
}

/// How a subscription ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionEnd {
    /// The server closed it with a result.
    Graceful,
    /// The connection ended under it.
    Abrupt,
    /// The server refused or broke it (an error answer to the listen request).
    Failed {
        /// The JSON-RPC code, when the server sent one.
        code: Option<i64>,
    },
}

/// A registered subscription, as the driver sees it.
#[derive(Debug)]
pub(crate) struct SubscriptionSink {
    key: u64,
    /// 2026: the id of the listen request (0 until it is sent).
    listen_id: Option<Arc<AtomicI64>>,
    filter: SubscriptionFilter,
    tx: mpsc::Sender<SubscriptionEvent>,
    dropped: Arc<AtomicU64>,
}

impl SubscriptionSink {
    pub(crate) fn key(&self) -> u64 {
        self.key
    }

    fn push(&self, event: SubscriptionEvent) {
        if self.tx.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Routes one server notification to the subscriptions it belongs to.
pub(crate) fn route(sinks: &[SubscriptionSink], method: &str, params: Option<&Bytes>) {
    if sinks.is_empty() {
        return;
    }
    let params: Option<Value> = params.and_then(|p| serde_json::from_slice(p).ok());
    let tagged = params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(mcp_types::meta::keys::SUBSCRIPTION_ID))
        .and_then(Value::as_i64);
    for sink in sinks {
        let mine = match (&sink.listen_id, tagged) {
            (Some(id), Some(tag)) => id.load(Ordering::Acquire) == tag,
            // 2026 notifications belong to a subscription only when tagged.
            (Some(_), None) => false,
            // Legacy: every matching unsolicited notification.
            (None, _) => true,
        };
        if !mine {
            continue;
        }
        if let Some(event) = classify(
            &sink.filter,
            sink.listen_id.is_some(),
            method,
            params.as_ref(),
        ) {
            sink.push(event);
        }
    }
}

fn classify(
    filter: &SubscriptionFilter,
    modern: bool,
    method: &str,
    params: Option<&Value>,
) -> Option<SubscriptionEvent> {
    let on = |flag: Option<bool>| flag == Some(true);
    match method {
        "notifications/subscriptions/acknowledged" if modern => {
            let ack: SubscriptionsAcknowledgedParams =
                serde_json::from_value(params?.clone()).ok()?;
            let accepted = ack.notifications;
            let refused = difference(filter, &accepted);
            Some(SubscriptionEvent::Acknowledged { accepted, refused })
        }
        "notifications/tools/list_changed" if on(filter.tools_list_changed) => {
            Some(SubscriptionEvent::ToolsListChanged)
        }
        "notifications/prompts/list_changed" if on(filter.prompts_list_changed) => {
            Some(SubscriptionEvent::PromptsListChanged)
        }
        "notifications/resources/list_changed" if on(filter.resources_list_changed) => {
            Some(SubscriptionEvent::ResourcesListChanged)
        }
        "notifications/resources/updated" => {
            let uri = params?.get("uri")?.as_str()?.to_owned();
            let wanted = filter
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.contains(&uri));
            wanted.then_some(SubscriptionEvent::ResourceUpdated { uri })
        }
        _ => None,
    }
}

/// What was asked for and not acknowledged.
fn difference(asked: &SubscriptionFilter, got: &SubscriptionFilter) -> SubscriptionFilter {
    let lost =
        |a: Option<bool>, g: Option<bool>| (a == Some(true) && g != Some(true)).then_some(true);
    let uris: Vec<String> = asked
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|u| !got.resource_subscriptions.iter().flatten().any(|g| g == *u))
        .cloned()
        .collect();
    SubscriptionFilter {
        tools_list_changed: lost(asked.tools_list_changed, got.tools_list_changed),
        prompts_list_changed: lost(asked.prompts_list_changed, got.prompts_list_changed),
        resources_list_changed: lost(asked.resources_list_changed, got.resources_list_changed),
        resource_subscriptions: (!uris.is_empty()).then_some(uris),
        ..SubscriptionFilter::default()
    }
}

/// Tells every subscription the connection ended.
pub(crate) fn end_all(sinks: &[SubscriptionSink]) {
    // 2026 subscriptions learn it from their listen request failing.
    for sink in sinks.iter().filter(|s| s.listen_id.is_none()) {
        sink.push(SubscriptionEvent::Ended(SubscriptionEnd::Abrupt));
    }
}

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
        let listen_id = modern.then(|| Arc::new(AtomicI64::new(0)));
        let key = shared.add_subscription(|key| SubscriptionSink {
            key,
            listen_id: listen_id.clone(),
            filter: filter.clone(),
            tx: tx.clone(),
            dropped: Arc::clone(&dropped),
        })?;
        let mut subscription = Subscription {
            rx,
            key,
            shared: Arc::downgrade(shared),
            listen: None,
            legacy_uris: Vec::new(),
            dropped,
        };
        if let Some(id_slot) = listen_id {
            let params = SubscriptionsListenParams {
                notifications: filter,
                ..SubscriptionsListenParams::default()
            };
            let Params::Object(body) = Params::encode(&params, true)? else {
                return Err(SessionError::Params(serde::ser::Error::custom(
                    "listen params",
                )));
            };
            let meta = self.request_meta();
            let version = self.link.version_header(true);
            let headers = self.modern_headers("subscriptions/listen", "");
            let task_shared = Arc::clone(shared);
            subscription.listen = Some(tokio::spawn(async move {
                let method: Arc<str> = Arc::from("subscriptions/listen");
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
                        CallOptions {
                            timing,
                            protocol_version: version,
                            headers,
                            id_slot: Some(id_slot),
                            ..CallOptions::default()
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
