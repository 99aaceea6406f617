//! The stdio transport: a server run as a child process.
//!
//! The child is started directly (never through a shell) with a clean
//! environment, in a process group of its own, so that shutdown reaches any
//! grandchildren it started. Shutdown is polite first and firm after:
//!
//! ```text
//! close stdin ──grace──► SIGTERM group ──term grace──► SIGKILL group ──► reap
//! ```
//!
//! `Drop` of the control handle sends SIGKILL to the group synchronously and
//! never needs a runtime. stderr is always drained into a bounded
//! [`StderrTail`], so a chatty server can never block on a full pipe.
//!
//! Descriptors: the child is waited for on `SIGCHLD` (`reap.rs`), not
//! through a pidfd, so a server costs this process three descriptors while
//! it runs (its stdin, stdout and stderr pipes), or two once descriptors
//! are scarce ([`StdioChannel::Auto`]: 40 % of the soft `RLIMIT_NOFILE` in
//! use, and from then on in this process): then its stdin and stdout are
//! one Unix socket pair, which costs a
//! few microseconds more per round trip than two pipes. On a socket pair,
//! closing stdin is `shutdown(SHUT_WR)` on our end (the child reads
//! end-of-file and can still answer), and we see end-of-file from the child
//! when it has closed both descriptors 0 and 1 (or exited): a child that
//! closes only its stdout and lives on is seen to end when it exits.

use std::ffi::OsString;
use std::fmt;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tracing::Instrument as _;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::connection::{BoxFuture, CloseReason, Connection, Connector, Control, ExitInfo};
use crate::stderr::{DEFAULT_STDERR_TAIL_BYTES, StderrTail};
use crate::stream::{PumpLimits, spawn_pumps};
use crate::{DEFAULT_QUEUE_FRAMES, TransportError};

mod reap;

/// Environment variables a child inherits from us without being asked.
///
/// Everything else must be listed by name in [`StdioConfig::inherit_env`] or
/// given explicitly in [`StdioConfig::env`]: API keys in the host's environment
/// do not leak into every server.
pub const SAFE_ENV_VARS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
];

/// How to start a stdio server, and how to treat it.
///
/// `Debug` shows the names of the variables in `env`, never their values
/// (they may be expanded secrets).
#[derive(Clone)]
pub struct StdioConfig {
    /// The program to run (looked up on the child's `PATH`).
    pub command: String,
    /// Its arguments, passed as they are (no shell, no globbing).
    pub args: Vec<String>,
    /// Names of further variables to pass through from our environment.
    pub inherit_env: Vec<String>,
    /// Variables set explicitly (applied after the inherited ones).
    pub env: Vec<(String, String)>,
    /// Working directory of the child (ours by default).
    pub cwd: Option<PathBuf>,
    /// The largest frame accepted or sent, in bytes.
    pub max_frame: usize,
    /// How many bytes of stderr to keep.
    pub stderr_tail_bytes: usize,
    /// Forward each stderr line to `tracing` (target `mcp_transport::stderr`).
    pub forward_stderr: bool,
    /// After stdin is closed, how long the child may take to exit by itself.
    pub shutdown_grace: Duration,
    /// After SIGTERM, how long before SIGKILL.
    pub term_grace: Duration,
    /// How the child's stdin and stdout are connected.
    pub channel: StdioChannel,
}

/// How a child's stdin and stdout are connected to this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StdioChannel {
    /// Two pipes while descriptors are plentiful; one socket pair once 40 %
    /// of the soft open-file limit is in use (so that more servers fit),
    /// and for every server this process starts after that.
    #[default]
    Auto,
    /// Two pipes (the fastest): three descriptors per server with stderr.
    Pipes,
    /// One Unix socket pair for both: two descriptors per server.
    SocketPair,
}

impl fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every field but the values of `env`.
        let Self {
            command,
            args,
            inherit_env,
            env,
            cwd,
            max_frame,
            stderr_tail_bytes,
            forward_stderr,
            shutdown_grace,
            term_grace,
            channel,
        } = self;
        let env_names: Vec<&str> = env.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("StdioConfig")
            .field("command", command)
            .field("args", args)
            .field("inherit_env", inherit_env)
            .field("env_names", &env_names)
            .field("cwd", cwd)
            .field("max_frame", max_frame)
            .field("stderr_tail_bytes", stderr_tail_bytes)
            .field("forward_stderr", forward_stderr)
            .field("shutdown_grace", shutdown_grace)
            .field("term_grace", term_grace)
            .field("channel", channel)
            .finish()
    }
}

impl StdioConfig {
    /// A config for `command` with default limits and no arguments.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            inherit_env: Vec::new(),
            env: Vec::new(),
            cwd: None,
            max_frame: mcp_codec::DEFAULT_MAX_FRAME,
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
            forward_stderr: false,
            shutdown_grace: Duration::from_secs(2),
            term_grace: Duration::from_secs(2),
            channel: StdioChannel::Auto,
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable for the child.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Passes one more variable through from our environment, when it is set.
    pub fn inherit(mut self, name: impl Into<String>) -> Self {
        self.inherit_env.push(name.into());
        self
    }

    /// The environment the child will get, in order.
    pub fn child_env(&self) -> Vec<(String, OsString)> {
        let mut out: Vec<(String, OsString)> = Vec::new();
        let names = SAFE_ENV_VARS
            .iter()
            .map(|s| (*s).to_owned())
            .chain(self.inherit_env.iter().cloned());
        for name in names {
            if out.iter().any(|(k, _)| *k == name) {
                continue;
            }
            if let Some(value) = std::env::var_os(&name) {
                out.push((name, value));
            }
        }
        for (k, v) in &self.env {
            out.retain(|(name, _)| name != k);
            out.push((k.clone(), OsString::from(v)));
        }
        out
    }
}

/// Starts a stdio server each time [`Connector::connect`] is called.
#[derive(Clone, Debug)]
pub struct StdioConnector {
    config: Arc<StdioConfig>,
}

impl StdioConnector {
    /// A connector for this config.
    pub fn new(config: StdioConfig) -> Self {
        Self {
            config: Arc::new(config),
        }
    }

    /// The config this connector starts servers with.
    pub fn config(&self) -> &StdioConfig {
        &self.config
    }

    /// Spawns the child and starts its pumps. Needs a tokio runtime.
    pub async fn spawn(&self) -> Result<Connection, TransportError> {
        spawn_child(&self.config)
    }
}

impl Connector for StdioConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        Box::pin(self.spawn())
    }

    fn is_stdio(&self) -> bool {
        true
    }
}

fn spawn_child(config: &StdioConfig) -> Result<Connection, TransportError> {
    reap::reap_orphans();
    let spawn_error = |source: std::io::Error| {
        if source.raw_os_error() == Some(rustix::io::Errno::MFILE.raw_os_error()) {
            TransportError::TooManyOpenFiles {
                program: config.command.clone(),
            }
        } else {
            TransportError::Spawn {
                program: config.command.clone(),
                source,
            }
        }
    };
    // stderr is a pipe whatever the channel. Its ends are the lowest free
    // descriptors, which tell how many are in use.
    let (err_read, err_write) = std::io::pipe().map_err(spawn_error)?;
    let socket = match config.channel {
        StdioChannel::Pipes => false,
        StdioChannel::SocketPair => true,
        _ => descriptors_scarce(err_read.as_raw_fd().max(err_write.as_raw_fd())),
    };
    let mut cmd = std::process::Command::new(&config.command);
    cmd.args(&config.args)
        .env_clear()
        .envs(config.child_env())
        .stderr(Stdio::from(err_write))
        .process_group(0);
    // With a socket pair, the child's stdin and stdout are one end of it
    // (both ends are close-on-exec; the child's copies become its
    // descriptors 0 and 1).
    let ours = if socket {
        let (ours, theirs) = UnixStream::pair().map_err(spawn_error)?;
        let theirs_out = theirs.try_clone().map_err(spawn_error)?;
        cmd.stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::from(OwnedFd::from(theirs_out)));
        Some(ours)
    } else {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        None
    };
    if let Some(dir) = &config.cwd {
        cmd.current_dir(dir);
    }
    let spawned = cmd.spawn();
    // The command holds the child's ends until it is dropped: they must go
    // now, or the child's end never sees our end-of-file and ours never
    // sees the child's.
    drop(cmd);
    let mut child = spawned.map_err(spawn_error)?;
    // Invariant: `id()` of a child not waited for yet is its pid (positive).
    let pid = Pid::from_raw(child.id() as i32);
    let kill_and_fail = |source: std::io::Error| {
        if let Some(pid) = pid {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        TransportError::Spawn {
            program: config.command.clone(),
            source,
        }
    };
    let stderr = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(err_read));
    let io = match ours {
        Some(ours) => ours
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(ours))
            .map(|stream| ChildIo::Socket(stream.into_split())),
        // Invariant: a child spawned with piped stdin and stdout has both
        // handles.
        None => match (child.stdout.take(), child.stdin.take()) {
            (Some(out), Some(inp)) => tokio::process::ChildStdout::from_std(out)
                .and_then(|out| Ok((out, tokio::process::ChildStdin::from_std(inp)?)))
                .map(ChildIo::Pipes),
            _ => Err(std::io::Error::other("child process has no stdio pipes")),
        },
    };
    let (io, stderr) = match (io, stderr) {
        (Ok(io), Ok(stderr)) => (io, stderr),
        (Err(e), _) | (_, Err(e)) => {
            tokio::spawn(reap::wait(child));
            return Err(kill_and_fail(e));
        }
    };

    let tail = StderrTail::new(config.stderr_tail_bytes);
    // Forwarded stderr lines are logged in the span of whoever spawned the
    // server (the hub's `mcp.server`), so each names its server.
    let (stderr_done_tx, stderr_done) = watch::channel(false);
    tokio::spawn(
        drain_stderr(stderr, tail.clone(), config.forward_stderr, stderr_done_tx).in_current_span(),
    );

    let (exit_tx, exit_rx) = watch::channel(None::<ExitStatus>);
    tokio::spawn(async move {
        let status = reap::wait(child).await;
        // Whatever the leader did, nothing it started may outlive it.
        if let Some(pid) = pid {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        let _ = exit_tx.send(Some(status.unwrap_or_else(failed_status)));
    });

    let finish_exit = exit_rx.clone();
    let finish_tail = tail.clone();
    let mut finish_stderr = stderr_done.clone();
    let finish: crate::stream::Finisher = Box::new(move |reason| {
        Box::pin(async move {
            // The server closed stdout: it is exiting or as good as dead. Give
            // it a moment to exit by itself, then make sure it does.
            let mut rx = finish_exit;
            let status = match wait_exit(&mut rx, Duration::from_secs(1)).await {
                Some(s) => Some(s),
                None => {
                    if let Some(pid) = pid {
                        let _ = kill_process_group(pid, Signal::KILL);
                    }
                    wait_exit(&mut rx, Duration::from_secs(2)).await
                }
            };
            settle_stderr(&mut finish_stderr).await;
            exit_info(reason, status, &finish_tail)
        })
    });
    let limits = PumpLimits {
        max_frame: config.max_frame,
        queue_frames: DEFAULT_QUEUE_FRAMES,
    };
    let pumps = match io {
        ChildIo::Pipes((stdout, stdin)) => spawn_pumps(stdout, stdin, limits, finish),
        ChildIo::Socket((stdout, stdin)) => spawn_pumps(stdout, stdin, limits, finish),
    };
    let control = StdioControl {
        pid,
        exit: exit_rx,
        close_stdin: pumps.close_writer,
        tail,
        stderr_done,
        shutdown_grace: config.shutdown_grace,
        term_grace: config.term_grace,
        done: AtomicBool::new(false),
    };
    Ok(Connection {
        outbound: pumps.outbound,
        inbound: pumps.inbound,
        control: Box::new(control),
    })
}

/// The child's stdin and stdout as this process holds them.
enum ChildIo {
    Pipes((tokio::process::ChildStdout, tokio::process::ChildStdin)),
    Socket(
        (
            tokio::net::unix::OwnedReadHalf,
            tokio::net::unix::OwnedWriteHalf,
        ),
    ),
}

/// Share of the soft open-file limit in use from which a child's stdin and
/// stdout share one socket pair ([`StdioChannel::Auto`]), in percent.
const SCARCE_PERCENT: u64 = 40;

/// Set once descriptors were found scarce: from then on they stay so.
static SCARCE_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether descriptors are scarce, judged by `fd`, the higher of two just
/// handed out (the lowest free ones; a hole left by one closed descriptor
/// then does not hide how many are in use), or found so before: a
/// process that came near its limit once is likely to again, and a hole
/// left by several closed ones must not give one server back its three.
fn descriptors_scarce(fd: i32) -> bool {
    use std::sync::atomic::Ordering;
    if SCARCE_SEEN.load(Ordering::Relaxed) {
        return true;
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let scarce = match limit.current {
        None => false,
        Some(soft) => u64::try_from(fd).unwrap_or(0) * 100 >= soft * SCARCE_PERCENT,
    };
    if scarce {
        SCARCE_SEEN.store(true, Ordering::Relaxed);
    }
    scarce
}

#[cfg(unix)]
fn failed_status() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(0xff00)
}

/// How long a report waits, once the process exited, for the last of its
/// stderr to be read: the lines a crashing server writes last are the ones
/// that explain it, and may still be in the pipe (a grandchild holding the
/// pipe open only delays the report this long).
const STDERR_SETTLE: Duration = Duration::from_millis(250);

async fn settle_stderr(done: &mut watch::Receiver<bool>) {
    let _ = tokio::time::timeout(STDERR_SETTLE, done.wait_for(|d| *d)).await;
}

async fn wait_exit(
    rx: &mut watch::Receiver<Option<ExitStatus>>,
    limit: Duration,
) -> Option<ExitStatus> {
    let waited = tokio::time::timeout(limit, rx.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|status| *status));
    waited.or_else(|| *rx.borrow())
}

fn exit_info(reason: CloseReason, status: Option<ExitStatus>, tail: &StderrTail) -> ExitInfo {
    use std::os::unix::process::ExitStatusExt;
    ExitInfo {
        reason,
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stderr_tail: Some(tail.text()),
        unparsed_line: None,
    }
}

async fn drain_stderr(
    mut stderr: tokio::net::unix::pipe::Receiver,
    tail: StderrTail,
    forward: bool,
    done: watch::Sender<bool>,
) {
    // Small: stderr is diagnostics, and a fleet of idle servers each keeps
    // one of these buffers.
    let mut buf = vec![0u8; 2 * 1024];
    let mut line = Vec::new();
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tail.push(&buf[..n]);
                if forward {
                    forward_lines(&mut line, &buf[..n]);
                }
            }
        }
    }
    let _ = done.send(true);
}

/// Forwards complete lines to tracing; a partial line is kept (bounded) until
/// its newline arrives.
fn forward_lines(line: &mut Vec<u8>, chunk: &[u8]) {
    const MAX_LINE: usize = 4096;
    for part in chunk.split_inclusive(|b| *b == b'\n') {
        if line.len() < MAX_LINE {
            let room = MAX_LINE - line.len();
            line.extend_from_slice(&part[..part.len().min(room)]);
        }
        if part.ends_with(b"\n") {
            let text = String::from_utf8_lossy(line);
            // The server's text: `Debug` escapes its control characters
            // (an escape sequence must not reach the terminal the log goes
            // to); the line is bounded above.
            tracing::info!(target: "mcp_transport::stderr", "{:?}", text.trim_end());
            line.clear();
        }
    }
}

#[derive(Debug)]
struct StdioControl {
    pid: Option<Pid>,
    exit: watch::Receiver<Option<ExitStatus>>,
    close_stdin: watch::Sender<bool>,
    tail: StderrTail,
    /// Set once stderr reached its end.
    stderr_done: watch::Receiver<bool>,
    shutdown_grace: Duration,
    term_grace: Duration,
    done: AtomicBool,
}

impl StdioControl {
    fn exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(pid) = self.pid {
            // ESRCH (already gone) is the expected outcome of a race with exit.
            let _ = kill_process_group(pid, signal);
        }
    }
}

impl Control for StdioControl {
    fn shutdown(&self) -> BoxFuture<'_, ExitInfo> {
        Box::pin(async move {
            let _ = self.close_stdin.send(true);
            let mut rx = self.exit.clone();
            let mut status = wait_exit(&mut rx, self.shutdown_grace).await;
            if status.is_none() {
                self.signal_group(Signal::TERM);
                status = wait_exit(&mut rx, self.term_grace).await;
            }
            if status.is_none() {
                self.signal_group(Signal::KILL);
                status = wait_exit(&mut rx, Duration::from_secs(5)).await;
            }
            self.done.store(true, Ordering::Release);
            settle_stderr(&mut self.stderr_done.clone()).await;
            exit_info(CloseReason::Shutdown, status, &self.tail)
        })
    }

    fn kill(&self) {
        if !self.exited() {
            self.signal_group(Signal::KILL);
        }
        let _ = self.close_stdin.send(true);
    }

    fn stderr_tail(&self) -> Option<String> {
        Some(self.tail.text())
    }
}

impl Drop for StdioControl {
    fn drop(&mut self) {
        // Synchronous and runtime-free: a signal is all Drop may do. The waiter
        // task (or tokio's orphan reaper) reaps the child afterwards.
        if !self.done.load(Ordering::Acquire) && !self.exited() {
            self.signal_group(Signal::KILL);
        }
    }
}
