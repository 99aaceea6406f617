//! The thin async driver: reads newline-delimited frames, feeds the core,
//! runs each request's handler on its own task, and writes what the core
//! says to write. Every protocol decision is the core's.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use mcp_codec::{CodecError, LineDecoder, LineEncoder, SkippedEdge};
use mcp_types::notifications::{SubscriptionsAcknowledged, Task as TaskNotification};
use mcp_types::requests::SubscriptionsListen;
use mcp_types::{
    ClientRequestMessage, EmptyResult, ErrorObject, Notification, ProgressParams, Request,
    RequestId, ResourceUriParams, SubscriptionFilter, SubscriptionsAcknowledgedParams,
    SubscriptionsListenResult, error_codes,
};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::{Id as TaskId, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::handle::{self, Command, Delivered, Outbox, Peer, RawAnswer, ServerHandle};
use crate::handler::{HandlerResult, ProgressReport, RequestContext, method_not_found};
use crate::{
    ClientContext, Event, IncomingRequest, ServerConfig, ServerCore, ServerError, ServerHandler,
};

/// Progress reports waiting for the driver; more are dropped (advisory).
const PROGRESS_QUEUE: usize = 256;

/// Bytes read from the client at a time.
const READ_CHUNK: usize = 8 * 1024;

/// A handler's answer, serialised on its own task.
type Answer = Result<Box<RawValue>, ErrorObject>;

/// Serves `handler` to one client over a byte stream of newline-delimited
/// JSON-RPC messages (stdio, an in-memory pair, a socket), in both eras,
/// until the client closes its side.
///
/// Requests run concurrently, each on its own task, at most
/// [`ServerLimits::max_in_flight`](crate::ServerLimits::max_in_flight); one
/// more is refused at once. A cancelled request's handler sees
/// [`RequestContext::cancelled`], gets
/// [`ServerLimits::cancel_grace`](crate::ServerLimits::cancel_grace) to stop,
/// and its answer is never sent. When the input ends (the client's shutdown
/// signal), what the core already answered (`ping`, refusals, errors) is
/// still written, every request in flight is cancelled the same way, the
/// output is shut down and `serve` returns `Ok`; a write to a client that is
/// gone (broken pipe) ends it the same way. Dropping the returned future
/// stops everything at once.
///
/// The in-process server behind a transport `Connector` is this function
/// spawned on the server end of an in-memory pair.
pub async fn serve<R, W, H>(
    read: R,
    write: W,
    handler: Arc<H>,
    config: ServerConfig,
) -> Result<(), ServerError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    H: ServerHandler + ?Sized,
{
    let (handle, outbox) = ServerHandle::new();
    drop(handle);
    serve_with(read, write, handler, config, outbox).await
}

/// [`serve`], with a [`ServerHandle`] for the application to speak first:
/// notifications (`list_changed`, log messages) and requests to the client
/// (sampling, elicitation, roots), made with [`ServerHandle::new`], which
/// also gives the `outbox` this takes.
///
/// Beyond [`serve`]: the driver keeps each 2026-07-28
/// `subscriptions/listen` request open itself (acknowledged with the
/// `list_changed` kinds the capabilities declare; the handler never sees
/// it) until the client cancels it or goes away, so that a
/// `list_changed` sent through the handle reaches the streams that asked
/// for it; requests of ours wait for their answers under their deadlines;
/// client notifications the core does not handle go to
/// [`ServerHandler::notification`]. The handle's [`Peer`](crate::Peer)
/// follows the client (initialized, open streams, closed).
pub async fn serve_with<R, W, H>(
    mut read: R,
    mut write: W,
    handler: Arc<H>,
    config: ServerConfig,
    outbox: Outbox,
) -> Result<(), ServerError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    H: ServerHandler + ?Sized,
{
    let limits = config.limits.clone();
    let (mut driver, commands) = Driver::new(handler, config, outbox);
    let mut commands = Some(commands);
    let mut decoder = LineDecoder::with_max_frame(limits.max_frame);
    let encoder = LineEncoder::with_max_frame(limits.max_frame);
    let mut input = BytesMut::with_capacity(READ_CHUNK);
    let mut output = BytesMut::new();
    let outcome = loop {
        // Set when the input ended or failed: what was answered so far is
        // still written, then the loop ends.
        let mut ended = None;
        input.reserve(READ_CHUNK);
        tokio::select! {
            read = read.read_buf(&mut input) => match read {
                Ok(0) => {
                    // The last line may lack its newline.
                    driver.decode(&mut decoder, &mut input, true);
                    ended = Some(Ok(()));
                }
                Ok(_) => driver.decode(&mut decoder, &mut input, false),
                Err(e) => ended = Some(Err(ServerError::Io(e))),
            },
            Some(joined) = driver.tasks.join_next_with_id(), if !driver.tasks.is_empty() => {
                driver.finished(joined);
            }
            Some(report) = driver.progress_rx.recv() => driver.report(report),
            Some(joined) = driver.subscribing.join_next_with_id(), if !driver.subscribing.is_empty() => {
                driver.subscribed(joined);
            }
            command = recv(&mut commands), if commands.is_some() => match command {
                Some(command) => {
                    driver.command(command);
                }
                // Every handle is gone: nothing more will come.
                None => commands = None,
            },
            () = expiry(driver.core.poll_timeout()) => {
                driver.core.handle_timeout(Instant::now());
                driver.dispatch();
            }
        }
        while let Some(frame) = driver.core.poll_transmit() {
            // The core's frames are serialised JSON; raw JSON text kept
            // verbatim inside them may span lines.
            if let Err(e) = encoder.encode_json(&frame, &mut output) {
                // Only a frame over the bound, which the core never makes.
                tracing::warn!(error = %e, "a frame could not be written");
            }
        }
        if !output.is_empty() {
            let written = write_all(&mut write, &output).await;
            output.clear();
            if let Err(e) = written {
                break if is_disconnect(&e) {
                    Ok(())
                } else {
                    Err(ServerError::Io(e))
                };
            }
            // Keep the buffer small after a large answer.
            if output.capacity() > 64 * READ_CHUNK {
                output = BytesMut::new();
            }
        }
        if let Some(outcome) = ended {
            break outcome;
        }
    };
    driver.shut_down().await;
    let _ = write.shutdown().await;
    outcome
}

/// One message the driver of a message binding (Streamable HTTP) hands
/// on: the bytes of one JSON-RPC message, and the client's request it was
/// made for when the driver knows it (a request of ours sent with
/// [`ServerHandle::request_for`]).
#[cfg(feature = "http")]
#[derive(Debug)]
pub(crate) struct OutFrame {
    pub(crate) bytes: Vec<u8>,
    pub(crate) related: Option<RequestId>,
}

/// [`serve_with`] over messages instead of a byte stream: each item of
/// `input` is one JSON-RPC message (its end is the client's end), each
/// message to send goes to `output` (bounded: the driver waits for room;
/// when its receiver is gone the connection ends).
#[cfg(feature = "http")]
pub(crate) async fn serve_frames<H>(
    mut input: mpsc::Receiver<bytes::Bytes>,
    output: mpsc::Sender<OutFrame>,
    handler: Arc<H>,
    config: ServerConfig,
    outbox: Outbox,
) where
    H: ServerHandler + ?Sized,
{
    let max_frame = config.limits.max_frame;
    let (mut driver, commands) = Driver::new(handler, config, outbox);
    let mut commands = Some(commands);
    loop {
        let mut ended = false;
        let mut related = None;
        tokio::select! {
            frame = input.recv() => match frame {
                Some(frame) if frame.len() > max_frame => {
                    driver.core.handle_oversized(&frame[..frame.len().min(256)]);
                    driver.dispatch();
                }
                Some(frame) => {
                    driver.core.handle_frame(&frame);
                    driver.dispatch();
                }
                None => ended = true,
            },
            Some(joined) = driver.tasks.join_next_with_id(), if !driver.tasks.is_empty() => {
                driver.finished(joined);
            }
            Some(report) = driver.progress_rx.recv() => driver.report(report),
            Some(joined) = driver.subscribing.join_next_with_id(), if !driver.subscribing.is_empty() => {
                driver.subscribed(joined);
            }
            command = recv(&mut commands), if commands.is_some() => match command {
                Some(command) => related = driver.command(command),
                None => commands = None,
            },
            () = expiry(driver.core.poll_timeout()) => {
                driver.core.handle_timeout(Instant::now());
                driver.dispatch();
            }
        }
        while let Some(bytes) = driver.core.poll_transmit() {
            let frame = OutFrame {
                bytes,
                related: related.clone(),
            };
            if output.send(frame).await.is_err() {
                ended = true;
                break;
            }
        }
        if ended {
            break;
        }
    }
    driver.shut_down().await;
}

async fn recv(commands: &mut Option<mpsc::Receiver<Command>>) -> Option<Command> {
    match commands {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Resolves at the core's next deadline (never without one).
async fn expiry(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
        None => std::future::pending().await,
    }
}

async fn write_all<W: AsyncWrite + Unpin>(write: &mut W, bytes: &[u8]) -> io::Result<()> {
    write.write_all(bytes).await?;
    write.flush().await
}

fn is_disconnect(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof
    )
}

/// A request of ours awaiting its answer.
struct Asked {
    /// The caller's key (its cancellation names it).
    key: u64,
    reply: oneshot::Sender<RawAnswer>,
    /// Where the client's progress on it goes, when the caller asked.
    progress: Option<mpsc::Sender<ProgressParams>>,
}

/// What a listen stream's subscribing took: the resources subscribed and
/// the task ids the handler watches.
#[derive(Debug, Default)]
struct Taken {
    uris: Vec<String>,
    task_ids: Vec<String>,
}

struct Driver<H: ServerHandler + ?Sized> {
    core: ServerCore,
    handler: Arc<H>,
    tasks: JoinSet<(RequestId, Answer)>,
    /// The cancellation token of each request whose handler runs.
    running: HashMap<RequestId, CancellationToken>,
    /// Which request each task serves (a panicked task names only its task).
    task_ids: HashMap<TaskId, RequestId>,
    progress: mpsc::Sender<ProgressReport>,
    progress_rx: mpsc::Receiver<ProgressReport>,
    grace: Duration,
    /// Open `subscriptions/listen` streams and the part of their filter we
    /// honour.
    listens: BTreeMap<RequestId, SubscriptionFilter>,
    /// The client of each open or pending listen stream (the context of its
    /// resources' `subscribe` and `unsubscribe`).
    listen_clients: HashMap<RequestId, ClientContext>,
    /// Listen streams whose resources the handler is subscribing to, not
    /// yet acknowledged: what they will honour, and a token that stops the
    /// subscribing when the stream ends first.
    pending_listens: HashMap<RequestId, (SubscriptionFilter, CancellationToken)>,
    /// The tasks subscribing them: the resources each took, and the task
    /// ids the handler watches.
    subscribing: JoinSet<(RequestId, Taken)>,
    /// A token per open or pending listen stream, cancelled when it ends
    /// (the context of the handler's `watch_tasks`).
    stream_stops: HashMap<RequestId, CancellationToken>,
    /// Which listen stream each subscribing task serves.
    subscribing_ids: HashMap<TaskId, RequestId>,
    /// Requests of ours awaiting answers: the caller's key and reply (and
    /// where the client's progress on it goes, when asked for).
    asked: HashMap<RequestId, Asked>,
    /// A caller's key → the request's id.
    asked_keys: HashMap<u64, RequestId>,
    peer: watch::Sender<Peer>,
    /// Given to every request's context (Streamable HTTP only).
    closer: Option<handle::StreamCloser>,
}

impl<H: ServerHandler + ?Sized> Driver<H> {
    /// A driver for one connection, and the handle's command queue.
    fn new(
        handler: Arc<H>,
        config: ServerConfig,
        outbox: Outbox,
    ) -> (Self, mpsc::Receiver<Command>) {
        let (progress, progress_rx) = mpsc::channel(PROGRESS_QUEUE);
        let Outbox {
            commands,
            peer,
            closer,
        } = outbox;
        let grace = config.limits.cancel_grace;
        let driver = Driver {
            core: ServerCore::new(config, handler.capabilities()),
            handler,
            tasks: JoinSet::new(),
            running: HashMap::new(),
            task_ids: HashMap::new(),
            progress,
            progress_rx,
            grace,
            listens: BTreeMap::new(),
            listen_clients: HashMap::new(),
            pending_listens: HashMap::new(),
            subscribing: JoinSet::new(),
            stream_stops: HashMap::new(),
            subscribing_ids: HashMap::new(),
            asked: HashMap::new(),
            asked_keys: HashMap::new(),
            peer,
            closer,
        };
        (driver, commands)
    }

    /// Feeds every complete frame to the core, dispatching its events after
    /// each (so a burst of requests never waits behind the event bound).
    fn decode(&mut self, decoder: &mut LineDecoder, input: &mut BytesMut, eof: bool) {
        loop {
            let next = if eof {
                decoder.decode_eof(input)
            } else {
                decoder.decode(input)
            };
            match next {
                Ok(Some(frame)) => self.core.handle_frame(&frame),
                Ok(None) => break,
                Err(CodecError::FrameTooLarge { .. }) => {
                    while let Some(edge) = decoder.take_skipped_edge() {
                        if let SkippedEdge::Start(start) = edge {
                            self.core.handle_oversized(&start);
                        }
                    }
                }
                // The line decoder reports nothing else; it has resynchronised.
                Err(_) => {}
            }
            self.dispatch();
        }
        if input.capacity() > 64 * READ_CHUNK && input.is_empty() {
            *input = BytesMut::with_capacity(READ_CHUNK);
        }
    }

    /// Acts on the core's events.
    fn dispatch(&mut self) {
        while let Some(event) = self.core.poll_event() {
            match event {
                Event::Request(request) => self.start(request),
                Event::Cancelled { id, .. } if self.pending_listens.contains_key(&id) => {
                    // Its subscribing stops; what it took is let go when
                    // the task reports.
                    if let Some((_, token)) = self.pending_listens.remove(&id) {
                        token.cancel();
                    }
                    self.stream_ended(&id);
                    let _ = self
                        .core
                        .respond(&id, Ok(SubscriptionsListenResult::default()));
                }
                Event::Cancelled { id, .. } if !self.listens.contains_key(&id) => {
                    if let Some(token) = self.running.get(&id) {
                        token.cancel();
                    }
                }
                Event::Cancelled { id, .. } => {
                    self.stream_ended(&id);
                    if let Some(filter) = self.listens.remove(&id) {
                        let client = self.listen_clients.remove(&id);
                        self.release(filter.resource_subscriptions.unwrap_or_default(), client);
                    }
                    // The answer is swallowed; it frees the stream's slot.
                    let _ = self
                        .core
                        .respond(&id, Ok(SubscriptionsListenResult::default()));
                    self.peer_changed();
                }
                Event::Violation(violation) => {
                    tracing::debug!(?violation, "the client broke the protocol");
                }
                Event::Initialized { version } => {
                    tracing::debug!(%version, "legacy session initialized");
                    self.peer_changed();
                }
                Event::Response { id, answer } => {
                    if let Some(asked) = self.asked.remove(&id) {
                        self.asked_keys.remove(&asked.key);
                        let _ = asked.reply.send(answer.map_err(ServerError::NoAnswer));
                    }
                }
                Event::Progress { id, params } => {
                    // Progress is advisory: a caller that does not keep up
                    // loses updates, and the connection never waits on it.
                    if let Some(sink) = self.asked.get(&id).and_then(|a| a.progress.as_ref()) {
                        let _ = sink.try_send(params);
                    }
                }
                Event::Notification { method, params } => {
                    self.handler.notification(&method, params);
                }
            }
        }
    }

    /// Publishes what the connection knows of its client.
    fn peer_changed(&self) {
        let session = self
            .core
            .legacy_session()
            .filter(|s| s.initialized)
            .cloned();
        let streams = self.listens.len();
        let closed = self.core.is_closed();
        self.peer.send_if_modified(|peer| {
            let changed = peer.session.is_some() != session.is_some()
                || peer.streams != streams
                || peer.closed != closed;
            peer.session = session;
            peer.streams = streams;
            peer.closed = closed;
            changed
        });
    }

    /// Acts on a handle's command; a request sent for a client's request
    /// returns the latter's id (the frames it made relate to it).
    fn command(&mut self, command: Command) -> Option<RequestId> {
        match command {
            Command::Notify {
                method,
                uri,
                send,
                reply,
            } => {
                let uri = uri.as_deref();
                let mut delivered = Delivered::default();
                let mut outcome = Ok(());
                if self.core.is_closed() {
                    outcome = Err(ServerError::Closed);
                } else if self.core.legacy_session().is_some() && method != TaskNotification::METHOD
                {
                    outcome = send(&mut self.core, None);
                    delivered.session = outcome.is_ok();
                }
                for (id, filter) in &self.listens {
                    if outcome.is_err() {
                        break;
                    }
                    if handle::wants(filter, method, uri) {
                        outcome = send(&mut self.core, Some(id));
                        delivered.streams += usize::from(outcome.is_ok());
                    }
                }
                let _ = reply.send(outcome.map(|()| delivered));
            }
            Command::Request {
                key,
                send,
                reply,
                related,
                progress,
            } => match send(&mut self.core, Instant::now()) {
                Ok(id) => {
                    self.asked_keys.insert(key, id.clone());
                    self.asked.insert(
                        id,
                        Asked {
                            key,
                            reply,
                            progress,
                        },
                    );
                    return related;
                }
                Err(e) => {
                    let _ = reply.send(Err(e));
                }
            },
            Command::Cancel { key } => {
                if let Some(id) = self.asked_keys.remove(&key) {
                    self.asked.remove(&id);
                    self.core
                        .cancel_request(&id, Some("no longer needed".to_owned()));
                }
            }
        }
        None
    }

    /// Keeps a `subscriptions/listen` request open as a stream and
    /// acknowledges the part of its filter we honour: at once, or, when it
    /// asks for resources, once the handler's `subscribe` took each (the
    /// acknowledgement names those it took).
    fn listen(&mut self, request: &IncomingRequest) {
        let filter = match request.params::<SubscriptionsListen>() {
            Ok(params) => handle::honoured(
                &params.notifications,
                self.core.capabilities(),
                &request.client.capabilities,
            ),
            Err(error) => {
                let _ = self.core.respond::<()>(&request.id, Err(error));
                return;
            }
        };
        let uris = filter.resource_subscriptions.clone().unwrap_or_default();
        let task_ids = filter.task_ids.clone().unwrap_or_default();
        for (field, asked, bound) in [
            (
                "resourceSubscriptions",
                uris.len(),
                handle::MAX_LISTEN_RESOURCES,
            ),
            ("taskIds", task_ids.len(), handle::MAX_LISTEN_TASKS),
        ] {
            if asked > bound {
                let error = ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    format!("Invalid params: more than {bound} {field} on one stream"),
                );
                let _ = self.core.respond::<()>(&request.id, Err(error));
                return;
            }
        }
        self.listen_clients
            .insert(request.id.clone(), request.client.clone());
        let token = CancellationToken::new();
        self.stream_stops.insert(request.id.clone(), token.clone());
        if uris.is_empty() && task_ids.is_empty() {
            return self.acknowledge(&request.id, filter);
        }
        let handler = Arc::clone(&self.handler);
        let (id, client, stop) = (request.id.clone(), request.client.clone(), token.clone());
        let task = self.subscribing.spawn(async move {
            let mut taken = Taken::default();
            for uri in uris {
                let ctx = RequestContext::new(id.clone(), stop.clone(), None, client.clone());
                let subscribe = handler.subscribe(ResourceUriParams::new(uri.clone()), ctx);
                tokio::select! {
                    done = subscribe => match done {
                        Ok(()) => taken.uris.push(uri),
                        Err(e) => tracing::debug!(code = e.code, "a listen stream's resource was not subscribed"),
                    },
                    () = stop.cancelled() => return (id, taken),
                }
            }
            if !task_ids.is_empty() {
                // The context lives as long as the stream: its token is
                // the stream's.
                let ctx = RequestContext::new(id.clone(), stop.clone(), None, client);
                tokio::select! {
                    watched = handler.watch_tasks(task_ids.clone(), ctx) => {
                        // Only what was asked for.
                        taken.task_ids = watched.into_iter().filter(|t| task_ids.contains(t)).collect();
                    }
                    () = stop.cancelled() => {}
                }
            }
            (id, taken)
        });
        self.subscribing_ids.insert(task.id(), request.id.clone());
        self.pending_listens
            .insert(request.id.clone(), (filter, token));
    }

    /// Acknowledges listen stream `id` with `filter` and opens it.
    fn acknowledge(&mut self, id: &RequestId, filter: SubscriptionFilter) {
        let ack = SubscriptionsAcknowledgedParams {
            notifications: filter.clone(),
            ..Default::default()
        };
        if let Err(e) = self
            .core
            .notify_request::<SubscriptionsAcknowledged>(id, &ack)
        {
            tracing::debug!(error = %e, "a listen stream could not be acknowledged");
        }
        self.listens.insert(id.clone(), filter);
        self.peer_changed();
    }

    /// A listen stream's resources were subscribed: the stream opens with
    /// those taken, or, when it ended meanwhile, they are let go.
    fn subscribed(&mut self, joined: Result<(TaskId, (RequestId, Taken)), tokio::task::JoinError>) {
        let (id, taken) = match joined {
            Ok((task, (id, taken))) => {
                self.subscribing_ids.remove(&task);
                (id, taken)
            }
            Err(e) => {
                // The handler panicked: the stream opens without resources.
                let Some(id) = self.subscribing_ids.remove(&e.id()) else {
                    return;
                };
                tracing::warn!(%id, "a listen stream's subscribe panicked");
                (id, Taken::default())
            }
        };
        match self.pending_listens.remove(&id) {
            Some((mut filter, _)) => {
                filter.resource_subscriptions = (!taken.uris.is_empty()).then_some(taken.uris);
                filter.task_ids = (!taken.task_ids.is_empty()).then_some(taken.task_ids);
                self.acknowledge(&id, filter);
            }
            None => {
                let client = self.listen_clients.remove(&id);
                self.release(taken.uris, client);
            }
        }
    }

    /// Listen stream `id` ended (or never opened): what the handler
    /// watches for it stops.
    fn stream_ended(&mut self, id: &RequestId) {
        if let Some(stop) = self.stream_stops.remove(id) {
            stop.cancel();
        }
    }

    /// Lets go of resources a listen stream held: the handler's
    /// `unsubscribe` for each that no other stream of the connection still
    /// holds (on its own task; nothing waits for it).
    fn release(&mut self, uris: Vec<String>, client: Option<ClientContext>) {
        let held = |uri: &String| {
            self.listens
                .values()
                .chain(self.pending_listens.values().map(|(f, _)| f))
                .any(|f| {
                    f.resource_subscriptions
                        .as_ref()
                        .is_some_and(|u| u.contains(uri))
                })
        };
        let uris: Vec<String> = uris.into_iter().filter(|u| !held(u)).collect();
        let (Some(client), false) = (client, uris.is_empty()) else {
            return;
        };
        let handler = Arc::clone(&self.handler);
        tokio::spawn(async move {
            for uri in uris {
                let ctx = RequestContext::new(
                    RequestId::Number(0),
                    CancellationToken::new(),
                    None,
                    client.clone(),
                );
                if let Err(e) = handler.unsubscribe(ResourceUriParams::new(uri), ctx).await {
                    tracing::debug!(
                        code = e.code,
                        "a listen stream's resource was not unsubscribed"
                    );
                }
            }
        });
    }

    /// Runs a request's handler on its own task.
    fn start(&mut self, request: IncomingRequest) {
        if request.method == SubscriptionsListen::METHOD {
            return self.listen(&request);
        }
        let token = CancellationToken::new();
        let progress = request
            .progress_token
            .is_some()
            .then(|| self.progress.clone());
        let id = request.id.clone();
        let ctx = RequestContext::new(id.clone(), token.clone(), progress, request.client.clone())
            .with_closer(self.closer.clone());
        let handler = Arc::clone(&self.handler);
        let grace = self.grace;
        let cancelled = token.clone();
        let answered = id.clone();
        let task = self.tasks.spawn(async move {
            let work = run(&*handler, &request, ctx);
            tokio::pin!(work);
            let answer = tokio::select! {
                answer = &mut work => answer,
                () = cancelled.cancelled() => {
                    // Let the handler wind down; its answer is not sent.
                    tokio::time::timeout(grace, work).await.unwrap_or_else(|_| {
                        Err(ErrorObject::new(error_codes::INTERNAL_ERROR, "cancelled"))
                    })
                }
            };
            (answered, answer)
        });
        self.task_ids.insert(task.id(), id.clone());
        self.running.insert(id, token);
    }

    /// A handler's task ended: its answer goes to the core.
    fn finished(&mut self, joined: Result<(TaskId, (RequestId, Answer)), tokio::task::JoinError>) {
        let (task, id, answer) = match joined {
            Ok((task, (id, answer))) => (task, id, answer),
            Err(e) => {
                let Some(id) = self.task_ids.get(&e.id()).cloned() else {
                    return;
                };
                tracing::warn!(%id, "a request's handler panicked");
                let error =
                    ErrorObject::new(error_codes::INTERNAL_ERROR, "the request's handler failed");
                (e.id(), id, Err(error))
            }
        };
        self.task_ids.remove(&task);
        self.running.remove(&id);
        // Progress the handler reported before it returned goes out before
        // its answer (after it, the client would drop it as stray).
        while let Ok(report) = self.progress_rx.try_recv() {
            self.report(report);
        }
        match self.core.respond(&id, answer) {
            Ok(()) | Err(ServerError::NotInFlight { .. }) => {}
            Err(e) => {
                tracing::warn!(%id, error = %e, "a request's answer was replaced by an error")
            }
        }
    }

    fn report(&mut self, report: ProgressReport) {
        if let Err(e) =
            self.core
                .progress(&report.id, report.progress, report.total, report.message)
        {
            tracing::debug!(id = %report.id, error = %e, "a progress report was dropped");
        }
    }

    /// The client is gone: cancels every handler, lets them wind down for
    /// the grace, then drops the rest.
    async fn shut_down(&mut self) {
        self.core.handle_closed();
        for (_, token) in std::mem::take(&mut self.pending_listens).into_values() {
            token.cancel();
        }
        for stop in std::mem::take(&mut self.stream_stops).into_values() {
            stop.cancel();
        }
        for (id, filter) in std::mem::take(&mut self.listens) {
            let client = self.listen_clients.remove(&id);
            self.release(filter.resource_subscriptions.unwrap_or_default(), client);
        }
        // A subscribing task still running lets go of what it took.
        while let Some(joined) = self.subscribing.join_next_with_id().await {
            self.subscribed(joined);
        }
        // Our requests fail with `Closed`; other events are moot now.
        while let Some(event) = self.core.poll_event() {
            if let Event::Response { id, answer } = event
                && let Some(asked) = self.asked.remove(&id)
            {
                let _ = asked.reply.send(answer.map_err(ServerError::NoAnswer));
            }
        }
        self.asked_keys.clear();
        self.peer_changed();
        for token in self.running.values() {
            token.cancel();
        }
        let tasks = &mut self.tasks;
        let _ = tokio::time::timeout(self.grace, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        self.tasks.shutdown().await;
        self.running.clear();
        self.task_ids.clear();
    }
}

/// Decodes a request's params by method and calls the handler; the result
/// is serialised here, on the request's task.
async fn run<H: ServerHandler + ?Sized>(
    handler: &H,
    request: &IncomingRequest,
    ctx: RequestContext,
) -> Answer {
    let message =
        ClientRequestMessage::parse(&request.method, request.params.as_deref()).map_err(|e| {
            ErrorObject::new(
                error_codes::INVALID_PARAMS,
                format!("Invalid params for `{}`: {e}", request.method),
            )
        })?;
    match message {
        ClientRequestMessage::ListTools(p) => encode(handler.list_tools(p.cursor, ctx).await),
        ClientRequestMessage::CallTool(p) => {
            let era = ctx.protocol_version().era();
            encode_outcome(handler.call_tool_outcome(p, ctx).await, era)
        }
        ClientRequestMessage::ListResources(p) => {
            encode(handler.list_resources(p.cursor, ctx).await)
        }
        ClientRequestMessage::ListResourceTemplates(p) => {
            encode(handler.list_resource_templates(p.cursor, ctx).await)
        }
        ClientRequestMessage::ReadResource(p) => {
            let era = ctx.protocol_version().era();
            encode_outcome(handler.read_resource_outcome(p, ctx).await, era)
        }
        ClientRequestMessage::ListPrompts(p) => encode(handler.list_prompts(p.cursor, ctx).await),
        ClientRequestMessage::GetPrompt(p) => {
            let era = ctx.protocol_version().era();
            encode_outcome(handler.get_prompt_outcome(p, ctx).await, era)
        }
        ClientRequestMessage::Complete(p) => encode(handler.complete(p, ctx).await),
        ClientRequestMessage::GetTask(p) => encode(handler.get_task(p, ctx).await),
        ClientRequestMessage::UpdateTask(p) => encode(
            handler
                .update_task(p, ctx)
                .await
                .map(|()| EmptyResult::default()),
        ),
        ClientRequestMessage::CancelTask(p) => encode(handler.cancel_task(p, ctx).await),
        ClientRequestMessage::GetTaskPayload(p) => encode(handler.get_task_payload(p, ctx).await),
        ClientRequestMessage::SetLevel(p) => encode(
            handler
                .set_log_level(p.level, ctx)
                .await
                .map(|()| EmptyResult::default()),
        ),
        ClientRequestMessage::Subscribe(p) => encode(
            handler
                .subscribe(p, ctx)
                .await
                .map(|()| EmptyResult::default()),
        ),
        ClientRequestMessage::Unsubscribe(p) => encode(
            handler
                .unsubscribe(p, ctx)
                .await
                .map(|()| EmptyResult::default()),
        ),
        ClientRequestMessage::ListSkills(p) => encode(handler.list_skills(p.cursor, ctx).await),
        ClientRequestMessage::GetSkill(p) => encode(handler.get_skill(p, ctx).await),
        ClientRequestMessage::ReadDirectory(p) => encode(handler.read_directory(p, ctx).await),
        _ => Err(method_not_found()),
    }
}

/// A result that may ask for input first: an `input_required` answer goes
/// out only to a 2026-07-28 request, with its `resultType` set.
fn encode_outcome<T: Serialize>(
    answer: HandlerResult<mcp_types::RequestOutcome<T>>,
    era: mcp_types::Era,
) -> Answer {
    match answer? {
        mcp_types::RequestOutcome::InputRequired(mut input) => {
            if era != mcp_types::Era::Modern {
                return Err(ErrorObject::new(
                    error_codes::INTERNAL_ERROR,
                    "the server asked for input in an era without input_required results",
                ));
            }
            input.result_type = Some(mcp_types::ResultType::InputRequired);
            encode(Ok(input))
        }
        other => encode(Ok(other)),
    }
}

fn encode<T: Serialize>(answer: HandlerResult<T>) -> Answer {
    let result = answer?;
    serde_json::value::to_raw_value(&result).map_err(|_| {
        ErrorObject::new(
            error_codes::INTERNAL_ERROR,
            "the server could not encode its result",
        )
    })
}
