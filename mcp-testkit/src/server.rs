//! The fake server: connection loop, writer task, in-flight call table.
//!
//! One connection is served by three kinds of work, all on the caller's
//! runtime:
//!
//! ```text
//!  input ──► read loop ──► router ──► quick answers ─┐
//!                │            └──► tokio::spawn(call) ┼──► bounded queue ──► writer ──► output
//!                │                                     │
//!                └── client responses ──► waiting ask_client calls
//! ```
//!
//! The read loop and the writer are polled together inside [`FakeServer::serve`]
//! (so `serve` needs no `'static` streams); each `tools/call` runs in its own
//! task so a slow or hanging tool never blocks other requests.

use std::collections::{HashMap, HashSet};
use std::pin::{Pin, pin};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::{AbortHandle, JoinHandle};

use crate::lines::{LineRead, read_line_bounded};
use crate::recorder::{REJECTED_PREFIX_BYTES, Recorder, RejectedLine};
use crate::router;
use crate::script::Script;
use crate::state::State;
use crate::tasks::TaskTable;
use crate::wire;

/// Frames waiting for the writer; a full queue makes producers wait.
const OUTGOING_QUEUE: usize = 256;
/// How long `serve` waits for queued frames to be written before returning.
const FINAL_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// Buffer size of duplex pipes made by [`FakeServer::start`].
const DUPLEX_BUFFER: usize = 1 << 20;
/// The line written by `garbage_on_start` and the `garbage` behaviour.
pub(crate) const GARBAGE_LINE: &str = "mcp-testkit: this line is deliberately not JSON";
/// Exit code of `exit_after_initialize`.
pub(crate) const SCRIPTED_EXIT_CODE: i32 = 1;

type StderrSink = Arc<tokio::sync::Mutex<Pin<Box<dyn AsyncWrite + Send>>>>;

/// A scripted fake MCP server for one connection.
///
/// Create it from a [`Script`], keep a [`Recorder`] handle, then either
/// [`serve`](Self::serve) any byte streams or [`start`](Self::start) it on an
/// in-memory pipe.
pub struct FakeServer {
    script: Script,
    recorder: Recorder,
    stderr: StderrSink,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("script", &self.script)
            .field("recorder", &self.recorder)
            .finish_non_exhaustive()
    }
}

/// A [`FakeServer`] running on a tokio task, connected to an in-memory pipe.
#[derive(Debug)]
pub struct RunningServer {
    /// The client's end of the pipe: write requests, read responses.
    pub stream: DuplexStream,
    /// What the server received.
    pub recorder: Recorder,
    /// The serving task; resolves to the exit code [`FakeServer::serve`] returned.
    pub task: JoinHandle<i32>,
}

impl FakeServer {
    /// A server that will follow `script`. The script is used as given;
    /// call [`Script::validate`] first if it came from outside.
    pub fn new(script: Script) -> Self {
        Self {
            script,
            recorder: Recorder::new(),
            stderr: Arc::new(tokio::sync::Mutex::new(Box::pin(tokio::io::sink()))),
        }
    }

    /// Uses `recorder` (e.g. one made by [`Recorder::with_file`]) instead of a fresh one.
    pub fn with_recorder(mut self, recorder: Recorder) -> Self {
        self.recorder = recorder;
        self
    }

    /// Where the server's stderr output goes (`grandchild-pid=N`, the
    /// `stderr_flood_bytes` flood). In-process the default discards it; the
    /// binary uses the real stderr.
    pub fn with_stderr<E>(mut self, stderr: E) -> Self
    where
        E: AsyncWrite + Send + 'static,
    {
        self.stderr = Arc::new(tokio::sync::Mutex::new(Box::pin(stderr)));
        self
    }

    /// A handle on everything this server receives.
    pub fn recorder(&self) -> Recorder {
        self.recorder.clone()
    }

    /// Serves on a tokio task over an in-memory pipe and returns the client's end.
    ///
    /// # Panics
    /// Outside a tokio runtime (it spawns the serving task).
    pub fn start(self) -> RunningServer {
        let (client, server) = tokio::io::duplex(DUPLEX_BUFFER);
        let recorder = self.recorder();
        let (read, write) = tokio::io::split(server);
        let task = tokio::spawn(self.serve(read, write));
        RunningServer {
            stream: client,
            recorder,
            task,
        }
    }

    /// Serves one connection until end of input, or a scripted exit or crash;
    /// returns the exit code the binary would use: 0 after end of input or
    /// when the output is closed, the scripted code after an exit or crash.
    ///
    /// After end of input, calls still running get the script's
    /// `eof_grace_ms` to finish; then every call is dropped, queued frames
    /// are written (for at most 5 s) and `serve` returns. Must run inside a
    /// tokio runtime: each `tools/call` is a spawned task.
    pub async fn serve<R, W>(self, input: R, output: W) -> i32
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send,
    {
        let (out_tx, out_rx) = mpsc::channel(OUTGOING_QUEUE);
        let (exit_tx, mut exit_rx) = mpsc::channel(4);
        let shared = Arc::new(Shared::new(
            self.script,
            self.recorder,
            out_tx.clone(),
            exit_tx,
        ));
        let mut writer = pin!(write_loop(out_rx, output));
        // The startup stderr flood's task.
        let flooding = Mutex::new(None);
        let mut reader = pin!(async {
            *lock(&flooding) = start_up(&shared, &self.stderr).await;
            read_loop(&shared, input).await
        });

        let end = tokio::select! {
            end = &mut reader => end,
            Some(code) = exit_rx.recv() => ReadEnd::Exit(code),
            () = &mut writer => ReadEnd::OutputClosed,
        };
        let scripted_exit = matches!(end, ReadEnd::Exit(_));
        let code = match end {
            ReadEnd::Exit(code) => code,
            ReadEnd::OutputClosed => 0,
            ReadEnd::Eof => {
                let grace = Duration::from_millis(shared.script.eof_grace_ms);
                let idle = shared.wait_idle();
                tokio::select! {
                    _ = tokio::time::timeout(grace, idle) => 0,
                    Some(code) = exit_rx.recv() => code,
                    () = &mut writer => 0,
                }
            }
        };
        shared.abort_all();
        let (ack_tx, ack_rx) = oneshot::channel();
        let flush = async {
            if out_tx.send(Outgoing::Flush(ack_tx)).await.is_ok() {
                let _ = ack_rx.await;
            }
        };
        // A scripted exit (right after `initialize`) lets the startup flood
        // finish first; otherwise the flood ends with the process.
        let flood = lock(&flooding).take().filter(|_| scripted_exit);
        let _ = tokio::time::timeout(FINAL_FLUSH_TIMEOUT, async {
            tokio::select! {
                () = flush => {},
                () = &mut writer => {},
            }
            if let Some(flood) = flood {
                let _ = flood.await;
            }
        })
        .await;
        code
    }
}

/// Why the read loop stopped.
pub(crate) enum ReadEnd {
    Eof,
    Exit(i32),
    OutputClosed,
}

pub(crate) enum Outgoing {
    Line(Vec<u8>),
    Flush(oneshot::Sender<()>),
}

/// State shared by the read loop and every call task.
pub(crate) struct Shared {
    pub(crate) script: Script,
    pub(crate) recorder: Recorder,
    out: mpsc::Sender<Outgoing>,
    exit: mpsc::Sender<i32>,
    calls: Mutex<Calls>,
    running_count: watch::Sender<usize>,
    pub(crate) lifecycle: Mutex<Lifecycle>,
    pub(crate) next_server_request: AtomicU64,
    state: Mutex<State>,
    tasks: Mutex<TaskTable>,
}

/// The legacy handshake's progress on this connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Fresh,
    AwaitingInitialized(String),
    Operating(String),
}

#[derive(Default)]
struct Calls {
    next_token: u64,
    running: HashMap<u64, Running>,
    hanging: HashSet<String>,
    asks: HashMap<String, oneshot::Sender<Value>>,
}

struct Running {
    id_key: String,
    abort: AbortHandle,
}

/// The in-flight table is full.
pub(crate) struct Busy;

impl Shared {
    fn new(
        script: Script,
        recorder: Recorder,
        out: mpsc::Sender<Outgoing>,
        exit: mpsc::Sender<i32>,
    ) -> Self {
        Self {
            script,
            recorder,
            out,
            exit,
            calls: Mutex::new(Calls::default()),
            running_count: watch::channel(0).0,
            lifecycle: Mutex::new(Lifecycle::Fresh),
            next_server_request: AtomicU64::new(1),
            state: Mutex::new(State::default()),
            tasks: Mutex::new(TaskTable::default()),
        }
    }

    /// The connection's protocol state (log level, subscriptions, list changes).
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The connection's tasks.
    pub(crate) fn tasks(&self) -> MutexGuard<'_, TaskTable> {
        lock(&self.tasks)
    }

    /// The negotiated legacy version (the newest supported one when serving
    /// before `initialize`).
    pub(crate) fn legacy_version(&self) -> Option<String> {
        match &*self.lifecycle() {
            Lifecycle::AwaitingInitialized(v) | Lifecycle::Operating(v) => Some(v.clone()),
            Lifecycle::Fresh => self.script.latest_legacy().map(str::to_owned),
        }
    }

    /// Whether the legacy era has tasks here: a tool can run as one and the
    /// negotiated version is 2025-11-25 or later.
    pub(crate) fn legacy_tasks_enabled(&self) -> bool {
        self.script.has_task_tools()
            && self
                .legacy_version()
                .is_some_and(|v| v.as_str() >= "2025-11-25")
    }

    /// Like [`spawn_call`](Self::spawn_call), answering `-32603` when the
    /// in-flight table is full.
    pub(crate) async fn spawn_or_refuse<F>(self: &Arc<Self>, id: &Value, call: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if self.spawn_call(id, call).is_err() {
            self.send(&crate::tool_call::busy(self, id)).await;
        }
    }

    /// Queues a frame for the writer. A closed writer means the connection
    /// is going away; the frame is then dropped like a real server's would be.
    pub(crate) async fn send(&self, frame: &Value) {
        self.send_line(frame.to_string().into_bytes()).await;
    }

    pub(crate) async fn send_line(&self, line: Vec<u8>) {
        let _ = self.out.send(Outgoing::Line(line)).await;
    }

    /// Whether the writer is gone (the client closed the connection).
    pub(crate) fn output_closed(&self) -> bool {
        self.out.is_closed()
    }

    /// Asks `serve` to end with `code`.
    pub(crate) async fn exit(&self, code: i32) {
        let _ = self.exit.send(code).await;
    }

    pub(crate) fn lifecycle(&self) -> MutexGuard<'_, Lifecycle> {
        lock(&self.lifecycle)
    }

    fn calls(&self) -> MutexGuard<'_, Calls> {
        lock(&self.calls)
    }

    /// Runs `call` on its own task, registered under the request id so a
    /// cancellation can stop it.
    pub(crate) fn spawn_call<F>(self: &Arc<Self>, id: &Value, call: F) -> Result<(), Busy>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let mut calls = self.calls();
        if calls.running.len() + calls.hanging.len() >= self.script.max_in_flight {
            return Err(Busy);
        }
        let token = calls.next_token;
        calls.next_token += 1;
        let shared = Arc::clone(self);
        // The table stays locked until the entry is in, so a task that ends
        // at once (on another worker) cannot try to remove it before it exists.
        let task = tokio::spawn(async move {
            call.await;
            shared.finish(token);
        });
        calls.running.insert(
            token,
            Running {
                id_key: wire::id_key(id),
                abort: task.abort_handle(),
            },
        );
        self.running_count.send_replace(calls.running.len());
        Ok(())
    }

    /// Remembers a `hang` call so a cancellation can make the server forget it.
    pub(crate) fn hang(&self, id: &Value) -> Result<(), Busy> {
        let mut calls = self.calls();
        if calls.running.len() + calls.hanging.len() >= self.script.max_in_flight {
            return Err(Busy);
        }
        calls.hanging.insert(wire::id_key(id));
        Ok(())
    }

    fn finish(&self, token: u64) {
        let mut calls = self.calls();
        calls.running.remove(&token);
        self.running_count.send_replace(calls.running.len());
    }

    /// Handles `notifications/cancelled`: forgets a hanging call, stops a
    /// running one, closes a `subscriptions/listen` stream (without answer).
    pub(crate) fn cancel(&self, id: &Value) {
        let key = wire::id_key(id);
        self.state().listens.retain(|l| l.key != key);
        let aborts: Vec<AbortHandle> = {
            let mut calls = self.calls();
            calls.hanging.remove(&key);
            let tokens: Vec<u64> = calls
                .running
                .iter()
                .filter(|(_, r)| r.id_key == key)
                .map(|(t, _)| *t)
                .collect();
            let aborts = tokens
                .iter()
                .filter_map(|t| calls.running.remove(t))
                .map(|r| r.abort)
                .collect();
            self.running_count.send_replace(calls.running.len());
            aborts
        };
        // Aborted outside the lock: dropping a call may run guards that lock it.
        aborts.iter().for_each(AbortHandle::abort);
    }

    fn abort_all(&self) {
        self.tasks().abort_all();
        let aborts: Vec<AbortHandle> = {
            let mut calls = self.calls();
            calls.hanging.clear();
            calls.asks.clear();
            let aborts = calls.running.drain().map(|(_, r)| r.abort).collect();
            self.running_count.send_replace(0);
            aborts
        };
        aborts.iter().for_each(AbortHandle::abort);
    }

    async fn wait_idle(&self) {
        let mut count = self.running_count.subscribe();
        // The sender lives in `self`, so `wait_for` only ends when idle.
        let _ = count.wait_for(|n| *n == 0).await;
    }

    /// Registers a server→client request awaiting its response.
    pub(crate) fn expect_response(&self, id: &Value) -> ResponseWait<'_> {
        let (tx, rx) = oneshot::channel();
        let key = wire::id_key(id);
        self.calls().asks.insert(key.clone(), tx);
        ResponseWait {
            shared: self,
            key,
            rx,
        }
    }

    /// Hands a client response to the call that asked for it; unknown ids are ignored.
    pub(crate) fn deliver_response(&self, id: &Value, frame: Value) {
        let waiting = self.calls().asks.remove(&wire::id_key(id));
        if let Some(tx) = waiting {
            let _ = tx.send(frame);
        }
    }
}

/// A pending server→client request; dropping it (e.g. when the call is
/// cancelled) removes it from the table.
pub(crate) struct ResponseWait<'a> {
    shared: &'a Shared,
    key: String,
    pub(crate) rx: oneshot::Receiver<Value>,
}

impl Drop for ResponseWait<'_> {
    fn drop(&mut self) {
        self.shared.calls().asks.remove(&self.key);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock means a call task panicked; the table itself is intact.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The startup misbehaviours; the stderr flood runs on as a task.
async fn start_up(shared: &Arc<Shared>, stderr: &StderrSink) -> Option<JoinHandle<()>> {
    if shared.script.garbage_on_start {
        shared.send_line(GARBAGE_LINE.as_bytes().to_vec()).await;
    }
    if shared.script.spawn_grandchild {
        let note = match std::process::Command::new("sleep")
            .arg("1000")
            .stdin(std::process::Stdio::null())
            .spawn()
        {
            Ok(child) => {
                shared.recorder.set_grandchild_pid(child.id());
                // Dropping a std Child neither kills nor waits for it: the
                // grandchild is meant to outlive us unless its group is killed.
                format!("grandchild-pid={}\n", child.id())
            }
            Err(err) => format!("grandchild-spawn-failed={err}\n"),
        };
        let mut sink = stderr.lock().await;
        let _ = sink.write_all(note.as_bytes()).await;
        let _ = sink.flush().await;
    }
    (shared.script.stderr_flood_bytes > 0)
        .then(|| tokio::spawn(flood(Arc::clone(stderr), shared.script.stderr_flood_bytes)))
}

async fn flood(stderr: StderrSink, bytes: u64) {
    let pattern = b"mcp-testkit stderr flood: the client must keep draining stderr\n";
    let chunk: Vec<u8> = pattern.iter().copied().cycle().take(64 * 1024).collect();
    let mut left = bytes;
    while left > 0 {
        let n = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        let mut sink = stderr.lock().await;
        if sink.write_all(&chunk[..n]).await.is_err() {
            return;
        }
        left -= n as u64;
    }
    let _ = stderr.lock().await.flush().await;
}

async fn read_loop<R>(shared: &Arc<Shared>, input: R) -> ReadEnd
where
    R: AsyncRead + Unpin + Send,
{
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        match read_line_bounded(&mut reader, &mut line, shared.script.max_line_bytes).await {
            // A read error ends the input just like EOF does for a real server.
            Ok(LineRead::Eof) | Err(_) => return ReadEnd::Eof,
            Ok(LineRead::TooLong(len)) => {
                shared.recorder.reject(RejectedLine::TooLong { len });
                let message = format!(
                    "Invalid Request: line exceeds {} bytes",
                    shared.script.max_line_bytes
                );
                shared
                    .send(&wire::error(
                        &Value::Null,
                        wire::INVALID_REQUEST,
                        &message,
                        None,
                    ))
                    .await;
            }
            Ok(LineRead::Line) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    shared.recorder.reject(not_json(&line));
                    continue;
                }
                match serde_json::from_slice::<Value>(&line) {
                    Ok(frame) => {
                        shared.recorder.record(&frame, line.len());
                        if let Some(code) = router::handle_frame(shared, frame).await {
                            return ReadEnd::Exit(code);
                        }
                    }
                    Err(_) => {
                        shared.recorder.reject(not_json(&line));
                        shared
                            .send(&wire::error(
                                &Value::Null,
                                wire::PARSE_ERROR,
                                "Parse error",
                                None,
                            ))
                            .await;
                    }
                }
            }
        }
    }
}

fn not_json(line: &[u8]) -> RejectedLine {
    let prefix = &line[..line.len().min(REJECTED_PREFIX_BYTES)];
    RejectedLine::NotJson {
        prefix: String::from_utf8_lossy(prefix).into_owned(),
        len: line.len(),
    }
}

/// Writes queued lines, each followed by a newline and a flush. Returns only
/// when the output fails (the client closed it) or every sender is gone.
async fn write_loop<W>(mut rx: mpsc::Receiver<Outgoing>, mut output: W)
where
    W: AsyncWrite + Unpin + Send,
{
    while let Some(item) = rx.recv().await {
        match item {
            Outgoing::Line(mut line) => {
                line.push(b'\n');
                if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                    return;
                }
            }
            Outgoing::Flush(ack) => {
                let _ = ack.send(());
            }
        }
    }
}
