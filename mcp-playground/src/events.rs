//! Live events for the page: the hub's events, the progress of the page's
//! own calls and the contents of subscribed resources, as JSON, bounded
//! every way: each event's size, the history kept for a page that
//! connects late, and each stream's backlog (a stream that falls behind
//! loses events and is told how many).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use futures::future::BoxFuture;
use mcp_hub::{
    HandlerError, HubEvent, HubEvents, NamespaceNote, Reason, ResourceEvent, ResourceHandler,
    SnapshotDiff,
};
use mcp_types::ResourceContents;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::json::{clip, era_name, hub_error, millis};

/// The largest event, as JSON, sent to the page; a larger one is replaced
/// by a notice naming its kind and size.
pub const MAX_EVENT_BYTES: usize = 16 * 1024;
/// Characters of a subscribed resource's text carried in its event (the
/// page can read the whole resource on a click).
const RESOURCE_TEXT_BYTES: usize = 4 * 1024;
/// Events queued for one stream before it counts as fallen behind.
pub(crate) const STREAM_BACKLOG: usize = 256;

/// One event, numbered.
#[derive(Debug)]
pub(crate) struct Item {
    /// Increasing from 1 (the SSE `id`).
    pub(crate) id: u64,
    /// The event as JSON text, at most [`MAX_EVENT_BYTES`].
    pub(crate) json: String,
}

/// The events of one playground.
#[derive(Debug)]
pub(crate) struct EventBus {
    tx: broadcast::Sender<Arc<Item>>,
    history: Mutex<VecDeque<Arc<Item>>>,
    history_len: usize,
    next_id: AtomicU64,
    /// When each restarting server will be started again.
    next_attempt: Mutex<HashMap<String, SystemTime>>,
}

impl EventBus {
    pub(crate) fn new(history_len: usize) -> Self {
        let (tx, _) = broadcast::channel(STREAM_BACKLOG);
        Self {
            tx,
            history: Mutex::new(VecDeque::with_capacity(history_len)),
            history_len,
            next_id: AtomicU64::new(1),
            next_attempt: Mutex::new(HashMap::new()),
        }
    }

    /// Publishes `event` (an object with a `kind`), stamped with the time.
    pub(crate) fn publish(&self, mut event: Value) {
        event["time"] = json!(crate::json::epoch_millis(SystemTime::now()));
        let mut text = event.to_string();
        if text.len() > MAX_EVENT_BYTES {
            text = json!({
                "kind": "tooLarge",
                "of": event.get("kind").cloned().unwrap_or(Value::Null),
                "server": event.get("server").cloned().unwrap_or(Value::Null),
                "bytes": text.len(),
                "time": event["time"],
            })
            .to_string();
        }
        // Numbered and kept under the lock, so the history is in order and
        // a stream that reads it after subscribing can skip what it saw.
        let mut history = lock(&self.history);
        let item = Arc::new(Item {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            json: text,
        });
        if history.len() == self.history_len {
            history.pop_front();
        }
        if self.history_len > 0 {
            history.push_back(Arc::clone(&item));
        }
        // No receiver is fine: nobody is watching.
        let _ = self.tx.send(item);
    }

    /// A new stream: what is kept so far, then the receiver of what comes
    /// (items already in the history may come again: skip by id).
    pub(crate) fn subscribe(&self) -> (Vec<Arc<Item>>, broadcast::Receiver<Arc<Item>>) {
        let history = lock(&self.history);
        let rx = self.tx.subscribe();
        (history.iter().cloned().collect(), rx)
    }

    /// When `server` will be started again, if it is waiting to be.
    pub(crate) fn next_attempt(&self, server: &str) -> Option<SystemTime> {
        lock(&self.next_attempt).get(server).copied()
    }

    /// Follows the hub's events until the hub is gone.
    pub(crate) async fn pump(self: Arc<Self>, mut events: HubEvents) {
        while let Some(event) = events.next().await {
            match &event {
                HubEvent::Restarting { server, delay, .. } => {
                    lock(&self.next_attempt).insert(server.to_string(), SystemTime::now() + *delay);
                }
                HubEvent::Starting { server, .. } | HubEvent::Stopped { server } => {
                    lock(&self.next_attempt).remove(server.as_str());
                }
                _ => {}
            }
            if let Some(value) = hub_event(&event) {
                self.publish(value);
            }
        }
    }
}

/// The page's form of a hub event; `None` for those it does not show (the
/// audit trail: the page made those requests itself).
fn hub_event(event: &HubEvent) -> Option<Value> {
    Some(match event {
        HubEvent::Starting { server, attempt } => {
            json!({"kind": "starting", "server": server.as_str(), "attempt": attempt})
        }
        HubEvent::Ready {
            server,
            era,
            version,
            tools,
        } => json!({
            "kind": "ready", "server": server.as_str(), "era": era_name(*era),
            "protocolVersion": version.as_str(), "tools": tools,
        }),
        HubEvent::Failed { server, error } => {
            json!({"kind": "failed", "server": server.as_str(), "error": hub_error(error)})
        }
        HubEvent::Restarting {
            server,
            attempt,
            delay,
        } => json!({
            "kind": "restarting", "server": server.as_str(), "attempt": attempt,
            "delayMs": millis(*delay),
        }),
        HubEvent::RepeatedFailures {
            server,
            consecutive,
        } => {
            json!({"kind": "repeatedFailures", "server": server.as_str(), "consecutive": consecutive})
        }
        HubEvent::Stopped { server } => json!({"kind": "stopped", "server": server.as_str()}),
        HubEvent::SessionReestablished { server } => {
            json!({"kind": "sessionReestablished", "server": server.as_str()})
        }
        HubEvent::SnapshotAdopted {
            server,
            generation,
            diff,
        } => json!({
            "kind": "toolsAdopted", "server": server.as_str(), "generation": generation,
            "diff": diff_names(diff),
        }),
        HubEvent::SnapshotPending {
            server,
            generation,
            diff,
        } => json!({
            "kind": "toolsPending", "server": server.as_str(), "generation": generation,
            "diff": diff_names(diff),
        }),
        HubEvent::ServerLog {
            server,
            level,
            logger,
            data,
            bytes,
        } => json!({
            "kind": "log", "server": server.as_str(), "level": level, "logger": logger,
            "data": data, "bytes": bytes,
        }),
        HubEvent::Namespace {
            generation,
            tools,
            notes,
        } => json!({
            "kind": "namespace", "generation": generation, "tools": tools,
            "notes": notes.iter().map(note).collect::<Vec<_>>(),
        }),
        HubEvent::NamespaceRefused { error } => {
            json!({"kind": "namespaceRefused", "error": hub_error(error)})
        }
        HubEvent::SubscriptionReconnecting {
            server,
            uri,
            attempt,
            delay,
        } => json!({
            "kind": "subscriptionReconnecting", "server": server.as_str(), "uri": uri,
            "attempt": attempt, "delayMs": millis(*delay),
        }),
        HubEvent::SubscriptionReadFailed {
            server,
            uri,
            reason,
            error,
        } => json!({
            "kind": "subscriptionReadFailed", "server": server.as_str(), "uri": uri,
            "reason": reason_name(*reason), "error": hub_error(error),
        }),
        HubEvent::SubscriptionProgress {
            server,
            uri,
            progress,
            total,
            message,
        } => json!({
            "kind": "progress", "server": server.as_str(), "uri": uri,
            "progress": progress, "total": total, "message": message,
        }),
        HubEvent::HandlerFailed {
            server, uri, error, ..
        } => json!({
            "kind": "subscriptionFailed", "server": server.as_str(), "uri": uri,
            "message": error.to_string(),
        }),
        HubEvent::HandlerTimedOut {
            server, uri, after, ..
        } => json!({
            "kind": "subscriptionFailed", "server": server.as_str(), "uri": uri,
            "message": format!("the page's handler did not finish within {} ms", millis(*after)),
        }),
        _ => return None,
    })
}

fn diff_names(diff: &SnapshotDiff) -> Value {
    json!({"added": diff.added, "removed": diff.removed, "changed": diff.changed})
}

/// A namespace note for the page.
pub(crate) fn note(note: &NamespaceNote) -> Value {
    match note {
        NamespaceNote::Shadowed {
            server,
            tool,
            kept_by,
        } => json!({
            "kind": "shadowed", "server": server.as_str(), "tool": tool,
            "keptBy": kept_by.as_str(),
        }),
        NamespaceNote::Refused {
            server,
            tool,
            existing,
        } => json!({
            "kind": "refused", "server": server.as_str(), "tool": tool,
            "existing": existing.as_str(),
        }),
        NamespaceNote::NameConflict { name, servers } => json!({
            "kind": "conflict", "name": name,
            "servers": servers.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        }),
        NamespaceNote::Reserved {
            server,
            tool,
            owner,
        } => json!({
            "kind": "reserved", "server": server.as_str(), "tool": tool,
            "owner": owner.as_str(),
        }),
        NamespaceNote::HelperSkipped { server, helper } => json!({
            "kind": "helperSkipped", "server": server.as_str(), "helper": helper.local_name(),
        }),
        _ => json!({"kind": "other"}),
    }
}

fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::Start => "start",
        Reason::Update => "update",
        Reason::Reconnect => "reconnect",
        _ => "other",
    }
}

/// Hands a subscribed resource's contents to the page as events.
#[derive(Debug)]
pub(crate) struct ToPage(pub(crate) Arc<EventBus>);

impl ResourceHandler for ToPage {
    fn handle(&self, event: ResourceEvent) -> BoxFuture<'_, Result<(), HandlerError>> {
        let contents: Vec<Value> = event.contents.iter().map(contents_summary).collect();
        self.0.publish(json!({
            "kind": "resourceUpdated", "server": event.server.as_str(), "uri": event.uri,
            "reason": reason_name(event.reason), "contents": contents,
        }));
        Box::pin(async { Ok(()) })
    }
}

/// A resource's contents in an event: text cut to a few KiB (saying so),
/// a blob by its size only.
fn contents_summary(contents: &ResourceContents) -> Value {
    match contents {
        ResourceContents::Text(t) => {
            let (text, cut) = clip(&t.text, RESOURCE_TEXT_BYTES);
            json!({
                "uri": t.uri, "mimeType": t.mime_type, "text": text,
                "bytes": t.text.len(), "cut": cut,
            })
        }
        ResourceContents::Blob(b) => json!({
            "uri": b.uri, "mimeType": b.mime_type,
            "blobBytes": base64_decoded_len(&b.blob),
        }),
        other => json!({"uri": other.uri(), "mimeType": other.mime_type()}),
    }
}

/// The bytes a base64 text decodes to (its padding taken off).
fn base64_decoded_len(text: &str) -> usize {
    let padding = text.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (text.len() / 4 * 3).saturating_sub(padding)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Plain data: a panic elsewhere cannot leave it half-written.
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_events_become_a_notice_and_the_history_is_bounded() {
        let bus = EventBus::new(2);
        bus.publish(json!({"kind": "log", "server": "s", "data": "x".repeat(MAX_EVENT_BYTES)}));
        bus.publish(json!({"kind": "a"}));
        bus.publish(json!({"kind": "b"}));
        let (history, _) = bus.subscribe();
        let ids: Vec<u64> = history.iter().map(|i| i.id).collect();
        assert_eq!(ids, [2, 3]);
        let (all, _) = EventBus::new(4).subscribe();
        assert!(all.is_empty());
        let bus = EventBus::new(4);
        bus.publish(json!({"kind": "log", "server": "s", "data": "x".repeat(MAX_EVENT_BYTES)}));
        let (history, _) = bus.subscribe();
        let notice: Value = serde_json::from_str(&history[0].json).unwrap();
        assert_eq!(notice["kind"], "tooLarge");
        assert_eq!(notice["of"], "log");
        assert!(notice["bytes"].as_u64().unwrap() > MAX_EVENT_BYTES as u64);
    }

    #[test]
    fn blob_sizes_are_their_decoded_bytes() {
        assert_eq!(base64_decoded_len(""), 0);
        assert_eq!(base64_decoded_len("YQ=="), 1);
        assert_eq!(base64_decoded_len("YWI="), 2);
        assert_eq!(base64_decoded_len("YWJj"), 3);
    }
}
