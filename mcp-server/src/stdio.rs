//! The process's standard input and output, for serving over stdio.
//!
//! tokio's `stdin()` and `stdout()` hand every read and write to a blocking
//! thread: two thread switches per message, on the path of every call, and
//! a thread pool's CPU on a server that may be one of hundreds. A client
//! starts a server with pipes (what Rust's and Python's process APIs make)
//! or socket pairs (what Node's `child_process` makes, and what our own
//! transport makes once descriptors run short); both can be read and
//! written on the runtime itself, non-blocking. Anything else (a terminal,
//! a file) keeps tokio's blocking-thread form.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// Standard input, read on the runtime when it is a pipe or a socket.
#[derive(Debug)]
pub struct StdinReader(Input, Option<BusyPoll>);

#[derive(Debug)]
enum Input {
    Pipe(pipe::Receiver),
    Socket(UnixStream),
    Blocking(tokio::io::Stdin),
}

/// Standard output, written on the runtime when it is a pipe or a socket.
#[derive(Debug)]
pub struct StdoutWriter(Output, Option<BusyPoll>);

#[derive(Debug)]
enum Output {
    Pipe(pipe::Sender),
    Socket(UnixStream),
    Blocking(tokio::io::Stdout),
}

/// The process's standard input and output for [`serve`](crate::serve)
/// (or a gateway's own loop). Each is read or written on the runtime,
/// non-blocking, when it is a pipe or a socket; otherwise through tokio's
/// `stdin()` / `stdout()`. The standard descriptors are duplicated, not
/// taken: they stay open. Call it inside a tokio runtime with IO enabled.
///
/// The duplicates share the open file with descriptors 0 and 1, so those
/// become non-blocking too: write nothing else to standard output (it is
/// the protocol's anyway).
#[must_use]
pub fn stdio() -> (StdinReader, StdoutWriter) {
    let input = duplicate(io::stdin().as_fd())
        .and_then(input_from)
        .unwrap_or_else(|| Input::Blocking(tokio::io::stdin()));
    let output = duplicate(io::stdout().as_fd())
        .and_then(output_from)
        .unwrap_or_else(|| Output::Blocking(tokio::io::stdout()));
    (StdinReader(input, None), StdoutWriter(output, None))
}

fn input_from(fd: OwnedFd) -> Option<Input> {
    match kind(&fd)? {
        Kind::Pipe => pipe::Receiver::from_owned_fd(fd).ok().map(Input::Pipe),
        Kind::Socket => socket(fd).map(Input::Socket),
    }
}

fn output_from(fd: OwnedFd) -> Option<Output> {
    match kind(&fd)? {
        Kind::Pipe => pipe::Sender::from_owned_fd(fd).ok().map(Output::Pipe),
        Kind::Socket => socket(fd).map(Output::Socket),
    }
}

enum Kind {
    Pipe,
    Socket,
}

fn duplicate(fd: std::os::fd::BorrowedFd<'_>) -> Option<OwnedFd> {
    fd.try_clone_to_owned().ok()
}

fn kind(fd: &OwnedFd) -> Option<Kind> {
    let file = std::fs::File::from(fd.try_clone().ok()?);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        Some(Kind::Pipe)
    } else if kind.is_socket() {
        Some(Kind::Socket)
    } else {
        None
    }
}

fn socket(fd: OwnedFd) -> Option<UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    UnixStream::from_std(stream).ok()
}

impl AsyncRead for StdinReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = match &mut this.0 {
            Input::Pipe(r) => Pin::new(r).poll_read(cx, buf),
            Input::Socket(r) => Pin::new(r).poll_read(cx, buf),
            Input::Blocking(r) => Pin::new(r).poll_read(cx, buf),
        };
        if let (Some(busy), Poll::Ready(Ok(()))) = (&this.1, &read)
            && buf.filled().len() > before
        {
            busy.touch();
        }
        read
    }
}

impl AsyncWrite for StdoutWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = match &mut this.0 {
            Output::Pipe(w) => Pin::new(w).poll_write(cx, buf),
            Output::Socket(w) => Pin::new(w).poll_write(cx, buf),
            Output::Blocking(w) => Pin::new(w).poll_write(cx, buf),
        };
        this.wrote(&written);
        written
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = match &mut this.0 {
            Output::Pipe(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            Output::Socket(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            Output::Blocking(w) => Pin::new(w).poll_write_vectored(cx, bufs),
        };
        this.wrote(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            Output::Pipe(w) => w.is_write_vectored(),
            Output::Socket(w) => w.is_write_vectored(),
            Output::Blocking(w) => w.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Output::Pipe(w) => Pin::new(w).poll_flush(cx),
            Output::Socket(w) => Pin::new(w).poll_flush(cx),
            Output::Blocking(w) => Pin::new(w).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Output::Pipe(w) => Pin::new(w).poll_shutdown(cx),
            // Like a pipe's: the output ends when the process does. (One
            // socket can carry both directions; shutting its write half
            // here is not this reader's and writer's pair to decide.)
            Output::Socket(w) => Pin::new(w).poll_flush(cx),
            Output::Blocking(w) => Pin::new(w).poll_shutdown(cx),
        }
    }
}

impl StdinReader {
    /// Keeps the runtime busy-polling for `poll`'s window after each read
    /// that brings bytes (see [`BusyPoll`]).
    #[must_use]
    pub fn busy_poll(mut self, poll: &BusyPoll) -> Self {
        self.1 = Some(poll.clone());
        self
    }

    /// How standard input is read: `"pipe"`, `"socket"` or `"blocking"`
    /// (tokio's blocking-thread `stdin()`).
    #[must_use]
    pub fn mode(&self) -> &'static str {
        match self.0 {
            Input::Pipe(_) => "pipe",
            Input::Socket(_) => "socket",
            Input::Blocking(_) => "blocking",
        }
    }
}

impl StdoutWriter {
    /// Keeps the runtime busy-polling for `poll`'s window after each write
    /// (see [`BusyPoll`]).
    #[must_use]
    pub fn busy_poll(mut self, poll: &BusyPoll) -> Self {
        self.1 = Some(poll.clone());
        self
    }

    fn wrote(&self, written: &Poll<io::Result<usize>>) {
        if let (Some(busy), Poll::Ready(Ok(1..))) = (&self.1, written) {
            busy.touch();
        }
    }

    /// How standard output is written: `"pipe"`, `"socket"` or
    /// `"blocking"` (tokio's blocking-thread `stdout()`).
    #[must_use]
    pub fn mode(&self) -> &'static str {
        match self.0 {
            Output::Pipe(_) => "pipe",
            Output::Socket(_) => "socket",
            Output::Blocking(_) => "blocking",
        }
    }
}

/// Keeps a runtime's thread busy for a short window after each message
/// instead of letting it sleep: a task yields in a loop, so the runtime
/// polls its IO without blocking (tokio checks for events, with no
/// timeout, each time a task yields) and runs whatever became ready at
/// once.
///
/// Why: a process that relays, such as a gateway between a host and its
/// servers, adds two wake-ups to every round trip. On a virtual machine a
/// wake-up of a sleeping thread (an interrupt to a halted virtual CPU) can
/// cost more than the relaying itself: measured here, a gateway call from
/// the rmcp client took 107–130 µs at the median with the gateway
/// sleeping between messages and 62–75 µs with it polling, about the cost
/// of a direct call.
///
/// The cost is CPU: at most `window` of one core after each message, and
/// nothing once a window passes with no message. A busy stream keeps one
/// core busy, which it mostly does anyway. Yielding keeps the runtime fair:
/// the loop never runs ahead of a task that has work.
///
/// Made with [`BusyPoll::start`] inside a runtime; handed to
/// [`StdinReader::busy_poll`] and [`StdoutWriter::busy_poll`], whose reads
/// and writes open a window (the Streamable HTTP binding makes its own
/// from `HttpConfig::busy_poll`: each request opens one). The loop ends
/// once every clone is dropped.
#[derive(Clone, Debug)]
pub struct BusyPoll {
    spin: Arc<Spin>,
    _guard: Arc<Guard>,
}

/// What the polling task and the clones share.
#[derive(Debug)]
struct Spin {
    /// When the clock started: windows are nanoseconds after it.
    epoch: Instant,
    /// The window's length in nanoseconds.
    window: u64,
    /// The end of the current window, in nanoseconds after `epoch`.
    until: AtomicU64,
    /// Whether the task is in a window (else it waits to be woken).
    spinning: AtomicBool,
    /// Set when the last clone is dropped.
    closed: AtomicBool,
    wake: tokio::sync::Notify,
}

/// Ends the polling task when the last clone goes.
#[derive(Debug)]
struct Guard(Arc<Spin>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::SeqCst);
        self.0.wake.notify_one();
    }
}

impl BusyPoll {
    /// Starts the polling task on the current tokio runtime; `window` is
    /// how long it keeps polling after each message (at most a second).
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn start(window: Duration) -> Self {
        let window = window.min(Duration::from_secs(1));
        let spin = Arc::new(Spin {
            epoch: Instant::now(),
            window: u64::try_from(window.as_nanos()).unwrap_or(u64::MAX),
            until: AtomicU64::new(0),
            spinning: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
        });
        tokio::spawn(poll_loop(Arc::clone(&spin)));
        Self {
            _guard: Arc::new(Guard(Arc::clone(&spin))),
            spin,
        }
    }

    /// Opens a window now (or extends the one open).
    pub fn touch(&self) {
        let spin = &self.spin;
        spin.until
            .store(spin.now().saturating_add(spin.window), Ordering::SeqCst);
        if !spin.spinning.load(Ordering::SeqCst) {
            spin.wake.notify_one();
        }
    }

    /// Whether the polling task is in a window now.
    #[must_use]
    pub fn is_polling(&self) -> bool {
        self.spin.spinning.load(Ordering::SeqCst)
    }
}

impl Spin {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Waits for a window, yields in a loop until it ends, and again.
async fn poll_loop(spin: Arc<Spin>) {
    loop {
        spin.wake.notified().await;
        if spin.closed.load(Ordering::SeqCst) {
            return;
        }
        spin.spinning.store(true, Ordering::SeqCst);
        loop {
            while spin.now() < spin.until.load(Ordering::SeqCst) {
                if spin.closed.load(Ordering::SeqCst) {
                    return;
                }
                tokio::task::yield_now().await;
            }
            spin.spinning.store(false, Ordering::SeqCst);
            // A touch between the last check and here either saw
            // `spinning` false (and woke us: the permit is stored) or
            // moved `until`, seen now.
            if spin.now() >= spin.until.load(Ordering::SeqCst) {
                break;
            }
            spin.spinning.store(true, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    #[tokio::test]
    async fn pipes_and_sockets_are_used_on_the_runtime_and_carry_bytes() {
        // A socket pair, as Node's child_process gives a child.
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let theirs_out = theirs.try_clone().unwrap();
        let mut reader = StdinReader(input_from(OwnedFd::from(theirs)).expect("a socket"), None);
        let mut writer = StdoutWriter(
            output_from(OwnedFd::from(theirs_out)).expect("a socket"),
            None,
        );
        assert_eq!((reader.mode(), writer.mode()), ("socket", "socket"));
        ours.set_nonblocking(true).unwrap();
        let mut ours = UnixStream::from_std(ours).unwrap();
        ours.write_all(b"ping\n").await.unwrap();
        let mut got = [0u8; 5];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        writer.write_all(b"pong\n").await.unwrap();
        writer.flush().await.unwrap();
        ours.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong\n");

        // Pipes, as Rust's and Python's process APIs give a child.
        let (read, mut write) = std::io::pipe().unwrap();
        let mut reader = StdinReader(input_from(OwnedFd::from(read)).expect("a pipe"), None);
        assert_eq!(reader.mode(), "pipe");
        std::io::Write::write_all(&mut write, b"ping\n").unwrap();
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        let (mut read, write) = std::io::pipe().unwrap();
        let mut writer = StdoutWriter(output_from(OwnedFd::from(write)).expect("a pipe"), None);
        assert_eq!(writer.mode(), "pipe");
        writer.write_all(b"pong\n").await.unwrap();
        drop(writer);
        let mut all = Vec::new();
        std::io::Read::read_to_end(&mut read, &mut all).unwrap();
        assert_eq!(all, b"pong\n");
    }

    /// Yields until `cond` holds (the polling task runs on this runtime).
    async fn until(mut cond: impl FnMut() -> bool) {
        tokio::time::timeout(Duration::from_secs(10), async {
            while !cond() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the condition came true");
    }

    #[tokio::test]
    async fn busy_polling_runs_for_a_window_after_each_message_and_ends_with_its_last_clone() {
        let poll = BusyPoll::start(Duration::from_millis(2));
        let spin = Arc::clone(&poll.spin);
        assert!(!poll.is_polling(), "nothing read yet");
        // A read that brings bytes opens a window, which then passes.
        let (read, mut write) = std::io::pipe().unwrap();
        let mut reader =
            StdinReader(input_from(OwnedFd::from(read)).expect("a pipe"), None).busy_poll(&poll);
        std::io::Write::write_all(&mut write, b"ping\n").unwrap();
        let mut got = [0u8; 5];
        reader.read_exact(&mut got).await.unwrap();
        until(|| poll.is_polling()).await;
        until(|| !poll.is_polling()).await;
        // So does a write.
        let (_keep, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut writer = StdoutWriter(output_from(OwnedFd::from(theirs)).expect("a socket"), None)
            .busy_poll(&poll);
        writer.write_all(b"pong\n").await.unwrap();
        until(|| poll.is_polling()).await;
        // The task holds the shared state until every clone is gone.
        drop((poll, reader, writer));
        until(|| Arc::strong_count(&spin) == 1).await;
    }

    #[tokio::test]
    async fn a_regular_file_is_not_taken() {
        let file = std::fs::File::open("Cargo.toml").unwrap();
        assert!(input_from(OwnedFd::from(file)).is_none());
    }
}
