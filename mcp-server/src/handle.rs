//! The application's way to speak first on a connection that
//! [`serve_with`](crate::serve_with) runs: notifications (`list_changed`,
//! log messages) and requests to the client (sampling, elicitation, roots).
//!
//! A [`ServerHandle`] sends commands to the driver over a bounded queue; the
//! driver hands each to the core, which makes the frame and owns the rules
//! (a legacy session, an initialized client, the capability a request
//! needs, the bounds). A request's answer comes back to the caller that
//! asked; dropping the caller's future gives the request up, and the client
//! is sent `notifications/cancelled`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_types::notifications::{ResourceUpdated, Task, ToolListChanged};
use mcp_types::{
    ClientCapabilities, Notification, ProgressParams, PromptsCapability, RequestId,
    ResourcesCapability, ServerCapabilities, ServerNotification, ServerRequest, SubscriptionFilter,
    TASKS_EXTENSION, ToolsCapability,
};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, watch};

use crate::{LegacySession, ServerCore, ServerError};

/// Commands waiting for the driver; a sender beyond waits.
const COMMAND_QUEUE: usize = 64;

/// Sends one notification through the core, connection-wide (`None`) or on
/// one `subscriptions/listen` stream (its id).
type NotifyFn = Box<dyn Fn(&mut ServerCore, Option<&RequestId>) -> Result<(), ServerError> + Send>;

/// Sends one request through the core at `now`; its id.
type RequestFn = Box<dyn FnOnce(&mut ServerCore, Instant) -> Result<RequestId, ServerError> + Send>;

/// A request's raw answer, or why there is none.
pub(crate) type RawAnswer = Result<Box<RawValue>, ServerError>;

/// What a handle asks of the driver.
pub(crate) enum Command {
    Notify {
        method: &'static str,
        /// The URI of a `notifications/resources/updated`: only the listen
        /// streams subscribed to it take it.
        uri: Option<String>,
        send: NotifyFn,
        reply: oneshot::Sender<Result<Delivered, ServerError>>,
    },
    Request {
        key: u64,
        send: RequestFn,
        reply: oneshot::Sender<RawAnswer>,
        /// The client's request this one is made for (an HTTP binding
        /// sends it on that request's stream).
        related: Option<RequestId>,
        /// Where the client's progress on it goes (the request then asks
        /// for progress).
        progress: Option<mpsc::Sender<ProgressParams>>,
    },
    /// The caller of request `key` went away.
    Cancel { key: u64 },
}

/// Where a notification went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delivered {
    /// Sent on the legacy session (one `initialize` answered).
    pub session: bool,
    /// Sent on this many 2026-07-28 `subscriptions/listen` streams that
    /// asked for it.
    pub streams: usize,
}

impl Delivered {
    /// Whether it went anywhere.
    pub fn anywhere(&self) -> bool {
        self.session || self.streams > 0
    }
}

/// The client of one connection as the driver knows it.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Peer {
    /// The legacy session, once the client sent `notifications/initialized`
    /// (from then on requests to it are allowed).
    pub session: Option<LegacySession>,
    /// `subscriptions/listen` streams open now (2026-07-28).
    pub streams: usize,
    /// The connection ended: nothing more is sent.
    pub closed: bool,
}

/// A handle on one served connection: sends the server's own notifications
/// and requests to the client. Cheap to clone. Made with its driver side by
/// [`ServerHandle::new`]; the connection is
/// [`serve_with`](crate::serve_with) given the [`Outbox`].
#[derive(Clone, Debug)]
pub struct ServerHandle {
    commands: mpsc::Sender<Command>,
    peer: watch::Receiver<Peer>,
    keys: Arc<AtomicU64>,
}

/// The driver's side of a [`ServerHandle`]: given to
/// [`serve_with`](crate::serve_with).
#[derive(Debug)]
pub struct Outbox {
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) peer: watch::Sender<Peer>,
    /// How a request's handler closes the connection of its event stream
    /// (the Streamable HTTP binding sets it; elsewhere there is none).
    pub(crate) closer: Option<StreamCloser>,
}

/// Closes the connection carrying a request's event stream, the request
/// going on ([`RequestContext::close_sse_stream`](crate::RequestContext::close_sse_stream)):
/// whether one was closed.
#[derive(Clone)]
pub(crate) struct StreamCloser(pub(crate) Arc<dyn Fn(&RequestId) -> bool + Send + Sync>);

impl std::fmt::Debug for StreamCloser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamCloser(..)")
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Notify { method, .. } => {
                f.debug_struct("Notify").field("method", method).finish()
            }
            Command::Request { key, .. } => f.debug_struct("Request").field("key", key).finish(),
            Command::Cancel { key } => f.debug_struct("Cancel").field("key", key).finish(),
        }
    }
}

impl ServerHandle {
    /// A handle and the outbox its connection is served with.
    #[allow(clippy::new_ret_no_self)]
    pub fn new() -> (ServerHandle, Outbox) {
        let (tx, rx) = mpsc::channel(COMMAND_QUEUE);
        let (peer_tx, peer_rx) = watch::channel(Peer::default());
        (
            ServerHandle {
                commands: tx,
                peer: peer_rx,
                keys: Arc::new(AtomicU64::new(1)),
            },
            Outbox {
                commands: rx,
                peer: peer_tx,
                closer: None,
            },
        )
    }

    /// The client as the connection knows it now.
    pub fn peer(&self) -> Peer {
        self.peer.borrow().clone()
    }

    /// Waits until the client as the connection knows it satisfies
    /// `until` (checked now, then at each change), and returns it then.
    /// Returns the last state when the driver is gone.
    pub async fn peer_until(&self, mut until: impl FnMut(&Peer) -> bool) -> Peer {
        let mut peer = self.peer.clone();
        let seen = peer.wait_for(|p| until(p)).await.map(|seen| seen.clone());
        seen.unwrap_or_else(|_| self.peer.borrow().clone())
    }

    /// Waits until the client's legacy session is initialized (its
    /// `notifications/initialized` arrived) and returns it; `None` when the
    /// connection ends first.
    pub async fn initialized(&self) -> Option<LegacySession> {
        self.peer_until(|p| p.session.is_some() || p.closed)
            .await
            .session
    }

    /// Waits until the connection ends.
    pub async fn closed(&self) {
        self.peer_until(|p| p.closed).await;
    }

    /// Sends notification `N` to the client: on the legacy session when
    /// there is one, and, for `notifications/tools/list_changed`,
    /// `prompts/list_changed`, `resources/list_changed`,
    /// `resources/updated` (by URI) and `notifications/tasks` (by task id;
    /// on streams only), on every 2026-07-28 `subscriptions/listen` stream
    /// that asked for it (with the stream's id in `_meta`). [`Delivered`]
    /// says where it went (nowhere is not an error: no client is
    /// listening).
    ///
    /// Errors: the core's refusals ([`ServerError::TransmitQueueFull`],
    /// [`ServerError::FrameTooLarge`], [`ServerError::Serialize`]) and
    /// [`ServerError::Closed`] once the connection ended.
    pub async fn notify<N>(&self, params: N::Params) -> Result<Delivered, ServerError>
    where
        N: ServerNotification,
        N::Params: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        // What a stream asks for by name: a resource's URI, a task's id.
        let key = match N::METHOD {
            ResourceUpdated::METHOD => Some("uri"),
            Task::METHOD => Some("taskId"),
            _ => None,
        };
        let uri = key.and_then(|key| {
            let value = serde_json::to_value(&params).ok()?;
            value.get(key)?.as_str().map(str::to_owned)
        });
        let send: NotifyFn = Box::new(move |core, stream| match stream {
            None => core.notify::<N>(&params),
            Some(id) => core.notify_request::<N>(id, &params),
        });
        let command = Command::Notify {
            method: N::METHOD,
            uri,
            send,
            reply,
        };
        self.commands
            .send(command)
            .await
            .map_err(|_| ServerError::Closed)?;
        answer.await.map_err(|_| ServerError::Closed)?
    }

    /// Sends request `R` to the client (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`, `ping`) and waits for its answer
    /// for at most `timeout` (the client is then sent
    /// `notifications/cancelled`). Dropping the returned future gives the
    /// request up the same way.
    ///
    /// Errors: the core's refusals before anything is sent
    /// ([`ServerError::NotInitialized`], [`ServerError::ClientLacksCapability`]
    /// naming the capability, [`ServerError::TooManyOutgoing`], …), then
    /// [`ServerError::NoAnswer`] (the client's error, the time-out, a
    /// connection that closed) or [`ServerError::InvalidAnswer`].
    pub async fn request<R>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, ServerError>
    where
        R: ServerRequest,
        R::Params: Send + 'static,
    {
        self.request_for::<R>(None, params, timeout).await
    }

    /// [`request`](Self::request), made while serving the client's request
    /// `related` (when `Some`): over Streamable HTTP it travels on that
    /// request's response stream, where the client expects it; over a byte
    /// stream it makes no difference.
    pub async fn request_for<R>(
        &self,
        related: Option<RequestId>,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, ServerError>
    where
        R: ServerRequest,
        R::Params: Send + 'static,
    {
        let send: RequestFn =
            Box::new(move |core, now| core.send_request::<R>(now, &params, timeout));
        self.ask::<R>(related, send, None).await
    }

    /// [`request_for`](Self::request_for), asking the client for progress
    /// on the request (its `_meta.progressToken` is set by the core,
    /// replacing any in `params`): each `notifications/progress` the client
    /// sends for it while it waits, its value increasing, goes to
    /// `progress`. Progress is advisory: when `progress` is full an update
    /// is dropped, and the connection never waits for it.
    pub async fn request_with_progress<R>(
        &self,
        related: Option<RequestId>,
        params: R::Params,
        timeout: Duration,
        progress: mpsc::Sender<ProgressParams>,
    ) -> Result<R::Result, ServerError>
    where
        R: ServerRequest,
        R::Params: Send + 'static,
    {
        let send: RequestFn =
            Box::new(move |core, now| core.send_request_with_progress::<R>(now, &params, timeout));
        self.ask::<R>(related, send, Some(progress)).await
    }

    async fn ask<R: ServerRequest>(
        &self,
        related: Option<RequestId>,
        send: RequestFn,
        progress: Option<mpsc::Sender<ProgressParams>>,
    ) -> Result<R::Result, ServerError> {
        let key = self.keys.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Request {
                key,
                send,
                reply,
                related,
                progress,
            })
            .await
            .map_err(|_| ServerError::Closed)?;
        // From here on, a caller that goes away cancels the request.
        let guard = GiveUp {
            key,
            commands: &self.commands,
            armed: true,
        };
        let raw = answer.await.map_err(|_| ServerError::Closed);
        guard.disarm();
        let raw = raw??;
        serde_json::from_str(raw.get()).map_err(|source| ServerError::InvalidAnswer {
            method: R::METHOD,
            source,
        })
    }
}

/// Cancels a request whose caller stopped waiting for it.
struct GiveUp<'a> {
    key: u64,
    commands: &'a mpsc::Sender<Command>,
    armed: bool,
}

impl GiveUp<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for GiveUp<'_> {
    fn drop(&mut self) {
        if self.armed {
            // Best effort: with the queue full the request meets its
            // deadline instead.
            let _ = self.commands.try_send(Command::Cancel { key: self.key });
        }
    }
}

/// Resources one `subscriptions/listen` stream may subscribe to; more is
/// refused with `-32602`.
pub(crate) const MAX_LISTEN_RESOURCES: usize = 64;

/// Tasks one `subscriptions/listen` stream may ask about; more is refused
/// with `-32602`.
pub(crate) const MAX_LISTEN_TASKS: usize = 64;

/// The part of a `subscriptions/listen` filter this server may honour: the
/// `list_changed` kinds it declared, and the resources asked for when it
/// declared `resources.subscribe` (each still to be taken by the handler's
/// `subscribe`; duplicates once), and the task ids asked for when both
/// sides declared the tasks extension (each still to be taken by the
/// handler's `watch_tasks`; duplicates once).
pub(crate) fn honoured(
    wanted: &SubscriptionFilter,
    caps: &ServerCapabilities,
    client: &ClientCapabilities,
) -> SubscriptionFilter {
    let tools = caps
        .tools
        .as_ref()
        .is_some_and(|t: &ToolsCapability| t.list_changed == Some(true));
    let prompts = caps
        .prompts
        .as_ref()
        .is_some_and(|p: &PromptsCapability| p.list_changed == Some(true));
    let resources = caps
        .resources
        .as_ref()
        .is_some_and(|r: &ResourcesCapability| r.list_changed == Some(true));
    let subscribe = caps
        .resources
        .as_ref()
        .is_some_and(|r: &ResourcesCapability| r.subscribe == Some(true));
    let keep =
        |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let resource_subscriptions = wanted
        .resource_subscriptions
        .as_ref()
        .filter(|uris| subscribe && !uris.is_empty())
        .map(|uris| once(uris));
    let tasks = caps.has_extension(TASKS_EXTENSION) && client.has_extension(TASKS_EXTENSION);
    let task_ids = wanted
        .task_ids
        .as_ref()
        .filter(|ids| tasks && !ids.is_empty())
        .map(|ids| once(ids));
    SubscriptionFilter {
        tools_list_changed: keep(wanted.tools_list_changed, tools),
        prompts_list_changed: keep(wanted.prompts_list_changed, prompts),
        resources_list_changed: keep(wanted.resources_list_changed, resources),
        resource_subscriptions,
        task_ids,
        ..SubscriptionFilter::default()
    }
}

/// `items` in their order, each once.
fn once(items: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .filter(|i| seen.insert(i.as_str()))
        .cloned()
        .collect()
}

/// Whether a stream with (honoured) filter `filter` takes `method` (a
/// resource update: about `uri`; a task's state: about the task id `uri`).
pub(crate) fn wants(filter: &SubscriptionFilter, method: &str, uri: Option<&str>) -> bool {
    use mcp_types::notifications::{PromptListChanged, ResourceListChanged};
    // Whether `uri` is among the names a stream asked for.
    let listed = |names: &Option<Vec<String>>| {
        uri.is_some_and(|uri| names.as_ref().is_some_and(|n| n.iter().any(|n| n == uri)))
    };
    if method == ResourceUpdated::METHOD {
        listed(&filter.resource_subscriptions)
    } else if method == ToolListChanged::METHOD {
        filter.tools_list_changed == Some(true)
    } else if method == PromptListChanged::METHOD {
        filter.prompts_list_changed == Some(true)
    } else if method == ResourceListChanged::METHOD {
        filter.resources_list_changed == Some(true)
    } else if method == Task::METHOD {
        listed(&filter.task_ids)
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_honoured_only_when_both_sides_declared_the_extension() {
        let wanted = SubscriptionFilter {
            task_ids: Some(vec!["t-1".into(), "t-2".into(), "t-1".into()]),
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        };
        let mut server = ServerCapabilities::default();
        let mut client = ClientCapabilities::default();
        let ids = |server: &ServerCapabilities, client: &ClientCapabilities| {
            honoured(&wanted, server, client).task_ids
        };
        assert_eq!(ids(&server, &client), None);
        let mut extensions = mcp_types::CapabilityMap::new();
        extensions.insert(TASKS_EXTENSION.into(), serde_json::json!({}));
        server.extensions = Some(extensions);
        assert_eq!(ids(&server, &client), None, "the client did not declare it");
        client.add_extension(TASKS_EXTENSION);
        assert_eq!(
            ids(&server, &client),
            Some(vec!["t-1".to_owned(), "t-2".to_owned()])
        );
        assert_eq!(
            ids(&ServerCapabilities::default(), &client),
            None,
            "the server did not"
        );
        // A task notification goes to a stream by the task's id.
        let filter = honoured(&wanted, &server, &client);
        assert!(wants(&filter, Task::METHOD, Some("t-2")));
        assert!(!wants(&filter, Task::METHOD, Some("t-3")));
        assert!(!wants(&filter, Task::METHOD, None));
    }
}
