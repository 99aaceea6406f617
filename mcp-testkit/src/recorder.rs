//! Recording of every frame the fake server receives.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::error::TestkitError;

/// Most frames kept in memory; later ones are counted in [`Recorder::dropped`].
pub const MAX_RECORDED_FRAMES: usize = 100_000;
/// Most bytes of frames (as received) kept in memory.
pub const MAX_RECORDED_BYTES: usize = 512 << 20;
/// Most rejected lines kept in memory.
pub const MAX_REJECTED_LINES: usize = 10_000;
/// Bytes of a non-JSON line kept in [`RejectedLine::NotJson`].
pub const REJECTED_PREFIX_BYTES: usize = 1024;

/// An input line the server could not take as a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectedLine {
    /// The line is not JSON (its first [`REJECTED_PREFIX_BYTES`] bytes, lossily decoded).
    NotJson {
        /// The start of the line.
        prefix: String,
        /// Its full length in bytes.
        len: usize,
    },
    /// The line was longer than the script's `max_line_bytes` and was skipped.
    TooLong {
        /// Bytes seen before giving up on it (at least the bound).
        len: usize,
    },
}

/// A cloneable handle on what a [`FakeServer`](crate::FakeServer) received.
///
/// Frames are kept in arrival order, as parsed JSON, before the server acts
/// on them. With [`Recorder::with_file`] every frame is also appended to a
/// file as one JSON line (rejected lines as `{"mcp-testkit/rejectedLine": …}`),
/// flushed at once so a test can read it after the process died.
#[derive(Debug, Clone)]
pub struct Recorder {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    generation: watch::Sender<u64>,
    file: Option<Mutex<File>>,
}

#[derive(Debug, Default)]
struct State {
    frames: Vec<Value>,
    kept_bytes: usize,
    dropped: u64,
    rejected: Vec<RejectedLine>,
    grandchild_pid: Option<u32>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An in-memory recorder.
    pub fn new() -> Self {
        Self::build(None)
    }

    /// A recorder that also appends every frame to `path` (created if missing).
    pub fn with_file(path: &Path) -> Result<Self, TestkitError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| TestkitError::RecordFile {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self::build(Some(Mutex::new(file))))
    }

    fn build(file: Option<Mutex<File>>) -> Self {
        let (generation, _) = watch::channel(0);
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                generation,
                file,
            }),
        }
    }

    /// All frames received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        self.state().frames.clone()
    }

    /// How many frames are kept.
    pub fn len(&self) -> usize {
        self.state().frames.len()
    }

    /// Whether no frame is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Frames (requests or notifications) with this `method`, in order.
    pub fn with_method(&self, method: &str) -> Vec<Value> {
        self.state()
            .frames
            .iter()
            .filter(|f| f.get("method").and_then(Value::as_str) == Some(method))
            .cloned()
            .collect()
    }

    /// Responses the client sent (to the server's own requests), in order:
    /// frames without `method` that carry `result` or `error`.
    pub fn responses(&self) -> Vec<Value> {
        self.state()
            .frames
            .iter()
            .filter(|f| {
                f.get("method").is_none() && (f.get("result").is_some() || f.get("error").is_some())
            })
            .cloned()
            .collect()
    }

    /// The client's response to the server request with `id`, if received.
    pub fn response_to(&self, id: &Value) -> Option<Value> {
        self.responses()
            .into_iter()
            .find(|f| f.get("id") == Some(id))
    }

    /// The `requestId` of every `notifications/cancelled` received.
    pub fn cancelled_ids(&self) -> Vec<Value> {
        self.with_method("notifications/cancelled")
            .into_iter()
            .filter_map(|f| f.pointer("/params/requestId").cloned())
            .collect()
    }

    /// Lines that were not frames (not JSON, or too long).
    pub fn rejected_lines(&self) -> Vec<RejectedLine> {
        self.state().rejected.clone()
    }

    /// Frames not kept in memory because a recording bound was reached.
    pub fn dropped(&self) -> u64 {
        self.state().dropped
    }

    /// The pid of the `spawn_grandchild` process, once started.
    pub fn grandchild_pid(&self) -> Option<u32> {
        self.state().grandchild_pid
    }

    /// Waits until a frame with `method` has been received (including one
    /// received before the call) and returns the first such frame, or `None`
    /// after `timeout`.
    pub async fn wait_for(&self, method: &str, timeout: Duration) -> Option<Value> {
        let mut found = None;
        self.wait_until(timeout, |frames| {
            found = frames
                .iter()
                .find(|f| f.get("method").and_then(Value::as_str) == Some(method))
                .cloned();
            found.is_some()
        })
        .await;
        found
    }

    /// Waits until `done(frames)` holds, re-checking after every new frame;
    /// returns whether it held before `timeout`.
    pub async fn wait_until<F>(&self, timeout: Duration, mut done: F) -> bool
    where
        F: FnMut(&[Value]) -> bool,
    {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changes = self.inner.generation.subscribe();
        loop {
            // Mark the current generation seen before checking, so a frame
            // recorded after the check wakes the wait below.
            changes.borrow_and_update();
            if done(&self.state().frames) {
                return true;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                // The sender lives in `self`, so only the deadline ends the wait.
                _ => return done(&self.state().frames),
            }
        }
    }

    pub(crate) fn record(&self, frame: &Value, raw_len: usize) {
        self.append_to_file(frame);
        {
            let mut state = self.state();
            if state.frames.len() >= MAX_RECORDED_FRAMES
                || state.kept_bytes.saturating_add(raw_len) > MAX_RECORDED_BYTES
            {
                state.dropped += 1;
            } else {
                state.kept_bytes += raw_len;
                state.frames.push(frame.clone());
            }
        }
        self.inner.generation.send_modify(|g| *g += 1);
    }

    pub(crate) fn reject(&self, line: RejectedLine) {
        let as_json = match &line {
            RejectedLine::NotJson { prefix, len } => {
                json!({"kind": "not_json", "prefix": prefix, "len": len})
            }
            RejectedLine::TooLong { len } => json!({"kind": "too_long", "len": len}),
        };
        self.append_to_file(&json!({ "mcp-testkit/rejectedLine": as_json }));
        let mut state = self.state();
        if state.rejected.len() < MAX_REJECTED_LINES {
            state.rejected.push(line);
        } else {
            state.dropped += 1;
        }
    }

    pub(crate) fn set_grandchild_pid(&self, pid: u32) {
        self.state().grandchild_pid = Some(pid);
    }

    fn append_to_file(&self, frame: &Value) {
        if let Some(file) = &self.inner.file {
            let mut line = frame.to_string();
            line.push('\n');
            let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // A recording that cannot be written must not change what the
            // server does on the wire; the test reading the file will notice.
            let _ = file.write_all(line.as_bytes());
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Poisoning only means another thread panicked mid-push; the data is
        // still a valid prefix of the recording.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
