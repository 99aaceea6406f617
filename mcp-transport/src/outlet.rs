//! The sending side of a byte-stream transport (stdio, in-memory): one
//! shared, bounded buffer of encoded lines in front of the stream.
//!
//! Senders append their line to the buffer under a short lock. A writer task
//! empties the buffer whenever it gets to run, so frames queued in the same
//! scheduling round leave in one write. Once a sender finds at least
//! [`INLINE_WRITE_AT`] bytes waiting and no write in progress, it writes them
//! itself, at once, without waiting for the writer task: under many requests
//! in flight the server then starts on the first of them while the client is
//! still producing the rest, instead of the two sides taking turns.
//!
//! A write that cannot finish at once (a full pipe) is always left to the
//! writer task, which waits for the stream properly; while it does, no
//! sender touches the stream. Senders wait for room when the buffer holds
//! more than its bound, so memory never grows past it.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, BytesMut};
use mcp_codec::LineEncoder;
use tokio::io::AsyncWrite;
use tokio::sync::{Notify, watch};

use crate::TransportError;

/// From this many waiting bytes on, the sender that queued the last frame
/// writes them itself. Below it, the writer task writes them the next time
/// it runs (a single small request waits for no more than the end of the
/// current scheduling round).
pub(crate) const INLINE_WRITE_AT: usize = 2 * 1024;
/// The writer lets go of a buffer larger than this once it is empty (one
/// huge request must not pin its size for the connection's life).
const KEEP_CAPACITY: usize = 64 * 1024;

type BoxWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// The state behind the lock.
struct State {
    /// The stream; `None` once it was shut down.
    writer: Option<BoxWriter>,
    /// Encoded lines not yet written (each ends with its newline).
    pending: BytesMut,
    /// The writer task is waiting for the stream to take more; no sender may
    /// poll the stream meanwhile (it would take the task's wake-up).
    writer_waiting: bool,
    /// No more frames are taken (the stream failed or is being closed).
    closed: bool,
    /// The most `pending` held since its allocation was last replaced (its
    /// allocation is about this large; `capacity()` shrinks as written bytes
    /// are advanced past, so it cannot tell).
    high_water: usize,
}

impl State {
    /// Once the buffer is empty: lets go of an allocation that one large
    /// burst made big, so it is not pinned for the connection's life.
    fn emptied(&mut self) {
        if self.high_water > KEEP_CAPACITY {
            self.pending = BytesMut::new();
        } else {
            self.pending.clear();
        }
        self.high_water = 0;
    }
}

/// The sending side shared by every [`crate::FrameSender`] clone of one
/// connection and its writer task.
pub(crate) struct Outlet {
    state: Mutex<State>,
    encoder: LineEncoder,
    /// Bound on `pending`, in bytes (one frame alone may exceed it).
    max_pending: usize,
    /// Wakes the writer task: there is something to write.
    work: Notify,
    /// Wakes senders waiting for room.
    room: Notify,
    /// Live [`OutletHandle`]s.
    senders: AtomicUsize,
}

impl std::fmt::Debug for Outlet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outlet").finish_non_exhaustive()
    }
}

impl Outlet {
    pub(crate) fn new(
        writer: impl AsyncWrite + Send + 'static,
        encoder: LineEncoder,
        max_pending: usize,
    ) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                writer: Some(Box::pin(writer)),
                pending: BytesMut::new(),
                writer_waiting: false,
                closed: false,
                high_water: 0,
            }),
            encoder,
            max_pending,
            work: Notify::new(),
            room: Notify::new(),
            senders: AtomicUsize::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing under this lock can leave the buffer half-updated in a way
        // that matters more than losing the connection; keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the outlet has stopped taking frames.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Queues one frame, waiting for room while the buffer is full.
    pub(crate) async fn send(&self, frame: &[u8]) -> Result<(), TransportError> {
        self.encoder.check(frame).map_err(TransportError::Encode)?;
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            // Registered before looking, so a wake-up between the look and
            // the wait is not missed.
            room.as_mut().enable();
            match self.try_push(frame) {
                Err(Full) => room.await,
                Ok(result) => return result,
            }
        }
    }

    /// Queues one frame if there is room now.
    pub(crate) fn try_send(&self, frame: &[u8]) -> Result<(), TransportError> {
        self.encoder.check(frame).map_err(TransportError::Encode)?;
        match self.try_push(frame) {
            Err(Full) => Err(TransportError::Io(io::ErrorKind::WouldBlock.into())),
            Ok(result) => result,
        }
    }

    fn try_push(&self, frame: &[u8]) -> Result<Result<(), TransportError>, Full> {
        let mut state = self.lock();
        if state.closed {
            return Ok(Err(TransportError::Closed));
        }
        let queued = state.pending.len();
        if queued > 0 && queued + frame.len() + 1 > self.max_pending {
            return Err(Full);
        }
        if let Err(e) = self.encoder.encode(frame, &mut state.pending) {
            // Checked above; kept as an error rather than a half frame.
            return Ok(Err(TransportError::Encode(e)));
        }
        state.high_water = state.high_water.max(state.pending.len());
        if state.pending.len() >= INLINE_WRITE_AT && !state.writer_waiting {
            write_now(&mut state);
        }
        let left = !state.pending.is_empty();
        drop(state);
        if left {
            self.work.notify_one();
        }
        Ok(Ok(()))
    }

    /// Every sender is gone: the writer task writes what is left, then
    /// closes the stream.
    fn senders_gone(&self) {
        self.lock().closed = true;
        self.work.notify_one();
    }
}

/// A sender's share of an [`Outlet`]; when the last one is dropped the
/// stream is closed after what was queued is written (as a channel's
/// receiver sees the end after the last message).
pub(crate) struct OutletHandle(Arc<Outlet>);

impl OutletHandle {
    pub(crate) fn new(outlet: Arc<Outlet>) -> Self {
        outlet.senders.fetch_add(1, Ordering::Relaxed);
        Self(outlet)
    }
}

impl std::ops::Deref for OutletHandle {
    type Target = Outlet;
    fn deref(&self) -> &Outlet {
        &self.0
    }
}

impl Clone for OutletHandle {
    fn clone(&self) -> Self {
        Self::new(Arc::clone(&self.0))
    }
}

impl Drop for OutletHandle {
    fn drop(&mut self) {
        if self.0.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.senders_gone();
        }
    }
}

impl std::fmt::Debug for OutletHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The buffer was full; wait for room.
struct Full;

/// Writes as much of the buffer as the stream takes without waiting. What is
/// left (a full pipe, a failure) is the writer task's.
fn write_now(state: &mut State) {
    let State {
        writer, pending, ..
    } = state;
    let Some(writer) = writer.as_mut() else {
        return;
    };
    let mut cx = Context::from_waker(Waker::noop());
    while !pending.is_empty() {
        match writer.as_mut().poll_write(&mut cx, pending) {
            Poll::Ready(Ok(n)) if n > 0 => pending.advance(n),
            // Nothing taken, a failure, or the pipe is full: the writer task
            // sees the same and deals with it properly. A pending poll left
            // a no-op wake-up registered; the task's own poll replaces it
            // before it waits, and no sender polls meanwhile.
            _ => {
                state.writer_waiting = true;
                return;
            }
        }
    }
    state.emptied();
}

/// The writer task: empties the buffer into the stream whenever there is
/// something in it; closes the stream when told to or when every sender is
/// gone. Records a write failure in `failure` for the reader to report.
pub(crate) async fn write_loop(
    outlet: Arc<Outlet>,
    mut close: watch::Receiver<bool>,
    failure: Arc<Mutex<Option<io::ErrorKind>>>,
) {
    loop {
        tokio::select! {
            biased;
            () = outlet.work.notified() => {}
            _ = close.wait_for(|closed| *closed) => break,
        }
        let result = std::future::poll_fn(|cx| drain(&outlet, cx)).await;
        if let Err(e) = result {
            if let Ok(mut slot) = failure.lock() {
                *slot = Some(e.kind());
            }
            tracing::debug!(error = %e, "writing to the server failed");
            break;
        }
        // Every sender dropped (or the stream failed) and nothing is left to
        // write.
        if outlet.lock().closed {
            break;
        }
    }
    let writer = {
        let mut state = outlet.lock();
        state.closed = true;
        state.pending = BytesMut::new();
        state.writer.take()
    };
    outlet.room.notify_waiters();
    // Dropping (after shutting down) the writer closes the stream (a child's
    // stdin): the polite way to ask a stdio server to exit.
    if let Some(mut writer) = writer {
        let _ = std::future::poll_fn(|cx| writer.as_mut().poll_shutdown(cx)).await;
    }
}

/// One poll of the writer task: writes until the buffer is empty or the
/// stream is full.
fn drain(outlet: &Outlet, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    let mut state = outlet.lock();
    let State {
        writer,
        pending,
        writer_waiting,
        ..
    } = &mut *state;
    let Some(writer) = writer.as_mut() else {
        return Poll::Ready(Ok(()));
    };
    let mut freed = false;
    while !pending.is_empty() {
        match writer.as_mut().poll_write(cx, pending) {
            Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
            Poll::Ready(Ok(n)) => {
                pending.advance(n);
                freed = true;
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {
                *writer_waiting = true;
                drop(state);
                if freed {
                    outlet.room.notify_waiters();
                }
                return Poll::Pending;
            }
        }
    }
    match writer.as_mut().poll_flush(cx) {
        Poll::Ready(Ok(())) => {}
        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
        Poll::Pending => {
            *writer_waiting = true;
            return Poll::Pending;
        }
    }
    *writer_waiting = false;
    state.emptied();
    drop(state);
    outlet.room.notify_waiters();
    Poll::Ready(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    type Harness = (
        OutletHandle,
        watch::Sender<bool>,
        Arc<Mutex<Option<io::ErrorKind>>>,
        tokio::task::JoinHandle<()>,
    );

    fn outlet_over(writer: impl AsyncWrite + Send + 'static, max_pending: usize) -> Harness {
        let outlet = Outlet::new(writer, LineEncoder::with_max_frame(1 << 20), max_pending);
        let (close_tx, close_rx) = watch::channel(false);
        let failure = Arc::new(Mutex::new(None));
        let task = tokio::spawn(write_loop(
            Arc::clone(&outlet),
            close_rx,
            Arc::clone(&failure),
        ));
        (OutletHandle::new(outlet), close_tx, failure, task)
    }

    /// Records what reaches the stream, and whether it was shut down.
    #[derive(Clone, Default)]
    struct Recorder {
        bytes: Arc<Mutex<Vec<u8>>>,
        writes: Arc<Mutex<usize>>,
        shut: Arc<Mutex<bool>>,
        fail: bool,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            if self.fail {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            self.bytes.lock().unwrap().extend_from_slice(buf);
            *self.writes.lock().unwrap() += 1;
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            *self.shut.lock().unwrap() = true;
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn small_frames_of_one_round_leave_in_one_write_in_order() {
        let rec = Recorder::default();
        let (tx, _close, _failure, _task) = outlet_over(rec.clone(), 1 << 20);
        for i in 0..5 {
            tx.send(format!("{{\"n\":{i}}}").as_bytes()).await.unwrap();
        }
        // Nothing is written until the writer task runs.
        assert_eq!(*rec.writes.lock().unwrap(), 0);
        tokio::task::yield_now().await;
        assert_eq!(*rec.writes.lock().unwrap(), 1);
        assert_eq!(
            String::from_utf8(rec.bytes.lock().unwrap().clone()).unwrap(),
            "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n"
        );
    }

    #[tokio::test]
    async fn a_sender_writes_itself_once_enough_is_waiting() {
        let rec = Recorder::default();
        let (tx, _close, _failure, _task) = outlet_over(rec.clone(), 1 << 20);
        let frame = vec![b'x'; INLINE_WRITE_AT / 4];
        for _ in 0..4 {
            tx.send(&frame).await.unwrap();
        }
        // No yield happened: the fourth sender wrote all four lines itself.
        assert_eq!(*rec.writes.lock().unwrap(), 1);
        assert_eq!(rec.bytes.lock().unwrap().len(), 4 * (frame.len() + 1));
    }

    #[tokio::test]
    async fn a_full_stream_makes_senders_wait_and_loses_nothing() {
        // A pipe of 64 bytes that nobody reads yet.
        let (writer, mut reader) = tokio::io::duplex(64);
        let (tx, _close, _failure, _task) = outlet_over(writer, 4096);
        let frame = vec![b'y'; 1000];
        let mut sent = 0;
        // Fill the buffer to its bound; then there is no room.
        loop {
            match tx.try_send(&frame) {
                Ok(()) => sent += 1,
                Err(TransportError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("unexpected {e}"),
            }
            assert!(sent < 100, "the bound was never reached");
        }
        assert!((4..=8).contains(&sent), "sent {sent}");
        // A waiting sender goes on once the reader makes room.
        let waiting = {
            let tx = tx.clone();
            let frame = frame.clone();
            tokio::spawn(async move { tx.send(&frame).await })
        };
        let expected = (sent + 1) * (frame.len() + 1);
        let mut got = Vec::new();
        let mut chunk = [0u8; 512];
        while got.len() < expected {
            let n =
                tokio::time::timeout(std::time::Duration::from_secs(5), reader.read(&mut chunk))
                    .await
                    .expect("the writer stalled")
                    .unwrap();
            assert!(n > 0);
            got.extend_from_slice(&chunk[..n]);
        }
        waiting.await.unwrap().unwrap();
        assert_eq!(got.len(), expected);
        assert!(
            got.split(|b| *b == b'\n')
                .take(sent + 1)
                .all(|l| l == frame.as_slice())
        );
    }

    #[tokio::test]
    async fn the_last_sender_gone_writes_what_is_left_then_closes_the_stream() {
        let rec = Recorder::default();
        let (tx, _close, _failure, task) = outlet_over(rec.clone(), 1 << 20);
        let other = tx.clone();
        tx.send(b"{\"a\":1}").await.unwrap();
        drop(tx);
        other.send(b"{\"b\":2}").await.unwrap();
        drop(other);
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("the writer task did not end")
            .unwrap();
        assert_eq!(
            rec.bytes.lock().unwrap().as_slice(),
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        assert!(*rec.shut.lock().unwrap());
    }

    #[tokio::test]
    async fn a_failed_write_is_recorded_and_later_frames_are_refused() {
        let rec = Recorder {
            fail: true,
            ..Recorder::default()
        };
        let (tx, _close, failure, task) = outlet_over(rec, 1 << 20);
        tx.send(b"{}").await.unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("the writer task did not end")
            .unwrap();
        assert_eq!(*failure.lock().unwrap(), Some(io::ErrorKind::BrokenPipe));
        assert!(tx.is_closed());
        assert!(matches!(tx.send(b"{}").await, Err(TransportError::Closed)));
    }

    #[tokio::test]
    async fn a_large_burst_does_not_pin_its_buffer() {
        let rec = Recorder::default();
        let (tx, _close, _failure, _task) = outlet_over(rec.clone(), 1 << 20);
        let big = vec![b'z'; 4 * KEEP_CAPACITY];
        // Written by the sender itself (over the inline threshold).
        tx.send(&big).await.unwrap();
        assert_eq!(rec.bytes.lock().unwrap().len(), big.len() + 1);
        assert!(tx.lock().pending.capacity() <= KEEP_CAPACITY);
        // Small frames keep their buffer between rounds.
        tx.send(b"{}").await.unwrap();
        tokio::task::yield_now().await;
        let kept = tx.lock().pending.capacity();
        assert!(kept > 0 && kept <= KEEP_CAPACITY, "kept {kept}");
    }

    #[tokio::test]
    async fn close_ends_the_stream_while_senders_remain() {
        let rec = Recorder::default();
        let (tx, close, _failure, task) = outlet_over(rec.clone(), 1 << 20);
        close.send(true).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("the writer task did not end")
            .unwrap();
        assert!(*rec.shut.lock().unwrap());
        assert!(tx.is_closed());
        assert!(matches!(tx.send(b"{}").await, Err(TransportError::Closed)));
    }
}
