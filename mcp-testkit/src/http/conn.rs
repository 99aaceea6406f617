//! One fake-server connection behind the HTTP server: a [`FakeServer`]
//! serving over an in-memory pipe, and the routing of what it writes to the
//! HTTP replies waiting for it.
//!
//! Routing of each frame the fake server writes:
//! - a response goes to the POST waiting for its id;
//! - anything else (notifications, server→client requests) goes to the
//!   newest POST still waiting whose reply is an event stream, else to the
//!   standalone GET stream, else to a bounded backlog that the next GET
//!   stream receives first;
//! - on a legacy HTTP+SSE connection everything goes to its one stream.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::lines::{LineRead, read_line_bounded};
use crate::{FakeServer, Recorder, Script};

/// Buffer of each in-memory pipe.
const PIPE_BYTES: usize = 1 << 20;
/// Frames kept for a GET stream that is not open yet.
pub(crate) const MAX_BACKLOG: usize = 256;
/// Frames queued for one HTTP reply.
pub(crate) const REPLY_QUEUE: usize = 256;
/// The longest line read back from the fake server (its own bound is the
/// script's `max_line_bytes`; `oversized` may write up to 1 GiB).
const MAX_OUTPUT_LINE: usize = 1 << 30;

/// A running fake-server connection.
pub(crate) struct Conn {
    input: tokio::sync::Mutex<WriteHalf<DuplexStream>>,
    routes: Arc<Mutex<Routes>>,
    reader: JoinHandle<()>,
}

#[derive(Default)]
struct Routes {
    /// Replies waiting, by request id (as JSON text).
    waiting: HashMap<String, mpsc::Sender<Value>>,
    /// Ids of waiting requests whose reply is an event stream, oldest first.
    streaming: Vec<String>,
    /// The standalone GET stream, or on a legacy HTTP+SSE connection its
    /// only stream.
    stream: Option<mpsc::Sender<Value>>,
    backlog: VecDeque<Value>,
    /// Everything goes to `stream` (legacy HTTP+SSE).
    single_stream: bool,
}

impl Conn {
    /// Starts a fake server for `script`, recording into `recorder`.
    pub(crate) fn start(script: &Script, recorder: &Recorder) -> Arc<Self> {
        let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
        let (their_read, their_write) = tokio::io::split(theirs);
        let server = FakeServer::new(script.clone()).with_recorder(recorder.clone());
        tokio::spawn(server.serve(their_read, their_write));
        let (our_read, our_write) = tokio::io::split(ours);
        let routes = Arc::new(Mutex::new(Routes::default()));
        let reader = tokio::spawn(read_output(BufReader::new(our_read), Arc::clone(&routes)));
        Arc::new(Self {
            input: tokio::sync::Mutex::new(our_write),
            routes,
            reader,
        })
    }

    /// A connection of the legacy HTTP+SSE transport: every frame goes to
    /// `stream`.
    pub(crate) fn start_single(
        script: &Script,
        recorder: &Recorder,
        stream: mpsc::Sender<Value>,
    ) -> Arc<Self> {
        let conn = Self::start(script, recorder);
        {
            let mut routes = conn.routes();
            routes.single_stream = true;
            routes.stream = Some(stream);
        }
        conn
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        lock(&self.routes)
    }

    /// Sends a notification or response to the fake server.
    pub(crate) async fn send(&self, frame: &Value) {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        let mut input = self.input.lock().await;
        // A fake server that has exited no longer reads: like a real one.
        let _ = input.write_all(&line).await;
        let _ = input.flush().await;
    }

    /// Sends a request; its response, and for `streaming` replies the
    /// frames routed to it, arrive on the returned receiver.
    pub(crate) async fn request(
        &self,
        id: &Value,
        frame: &Value,
        streaming: bool,
    ) -> mpsc::Receiver<Value> {
        let (tx, rx) = mpsc::channel(REPLY_QUEUE);
        {
            let mut routes = self.routes();
            let key = id.to_string();
            if streaming {
                routes.streaming.push(key.clone());
            }
            routes.waiting.insert(key, tx);
        }
        self.send(frame).await;
        rx
    }

    /// Opens the standalone stream; `None` when one is already open.
    pub(crate) fn open_stream(&self) -> Option<mpsc::Receiver<Value>> {
        let mut routes = self.routes();
        if routes.stream.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (tx, rx) = mpsc::channel(REPLY_QUEUE + MAX_BACKLOG);
        while let Some(frame) = routes.backlog.pop_front() {
            // The channel has room for the whole backlog.
            let _ = tx.try_send(frame);
        }
        routes.stream = Some(tx);
        Some(rx)
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Dropping the pipe's write half ends the fake server's input.
        self.reader.abort();
    }
}

async fn read_output(
    mut output: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    routes: Arc<Mutex<Routes>>,
) {
    let mut line = Vec::new();
    loop {
        match read_line_bounded(&mut output, &mut line, MAX_OUTPUT_LINE).await {
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong(_)) => continue,
            Ok(LineRead::Eof) | Err(_) => break,
        }
        let Ok(frame) = serde_json::from_slice::<Value>(&line) else {
            continue; // The `garbage` behaviour: nothing an HTTP reply can carry.
        };
        let target = route(&mut lock(&routes), frame);
        if let Some((tx, frame)) = target {
            let _ = tx.send(frame).await;
        }
    }
    // The fake server is gone: every waiting reply ends.
    let mut routes = lock(&routes);
    routes.waiting.clear();
    routes.streaming.clear();
    routes.stream = None;
}

fn route(routes: &mut Routes, frame: Value) -> Option<(mpsc::Sender<Value>, Value)> {
    if routes.single_stream {
        return routes.stream.clone().map(|tx| (tx, frame));
    }
    let is_response = frame.get("method").is_none()
        && (frame.get("result").is_some() || frame.get("error").is_some());
    if is_response {
        let key = frame.get("id").map(Value::to_string).unwrap_or_default();
        if let Some(tx) = routes.waiting.remove(&key) {
            routes.streaming.retain(|k| *k != key);
            return Some((tx, frame));
        }
    } else if let Some(tx) = frame
        .pointer("/params/_meta/io.modelcontextprotocol~1subscriptionId")
        .and_then(|id| routes.waiting.get(&id.to_string()))
    {
        // A 2026-07-28 subscription's notification goes on its listen
        // request's stream, whoever's request caused it.
        return Some((tx.clone(), frame));
    } else if let Some(tx) = routes
        .streaming
        .last()
        .and_then(|key| routes.waiting.get(key))
    {
        return Some((tx.clone(), frame));
    }
    match &routes.stream {
        Some(tx) if !tx.is_closed() => Some((tx.clone(), frame)),
        _ => {
            if routes.backlog.len() < MAX_BACKLOG {
                routes.backlog.push_back(frame);
            }
            None
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Only plain assignments happen under this lock.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
