//! Frame pumps over a pair of byte streams: the shared engine of the stdio and
//! in-memory transports.
//!
//! The reader task turns bytes into frames with the bounded
//! [`mcp_codec::LineDecoder`] and forwards them on a bounded queue; the sending
//! side is the shared, bounded write buffer of [`crate::outlet`] (frames of one
//! scheduling round leave in one write; a sender with enough waiting writes it
//! at once). Neither ever grows without bound.

use std::sync::Arc;

use bytes::BytesMut;
use mcp_codec::{LineDecoder, LineEncoder};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{mpsc, watch};

use crate::connection::{BoxFuture, CloseReason, ExitInfo, FrameSender, Inbound};
use crate::outlet::{Outlet, OutletHandle, write_loop};
use crate::spare::{SPARES, SpareBuffers};

/// How many bytes one read asks for (a pipe holds 64 KiB).
const READ_CHUNK: usize = 64 * 1024;
/// Size of the per-thread scratch buffer a read between frames goes through
/// (see [`read_through_scratch`]).
const SCRATCH: usize = 8 * 1024;

thread_local! {
    /// Where a read between frames lands before what came is copied out.
    static SCRATCH_BUF: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; SCRATCH].into_boxed_slice());
}

/// A read at least this large ends in a large buffer that is let go of once
/// drained. Smaller reads (many small frames, a busy connection) keep their
/// buffer: allocating one per batch costs more than it saves.
const LARGE_READ: usize = 32 * 1024;
/// Bound of the shared write buffer: senders wait for room beyond it (one
/// frame larger than this is still taken when the buffer is empty).
const WRITE_BUFFER: usize = 256 * 1024;

/// Settings shared by the stream-based transports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PumpLimits {
    pub(crate) max_frame: usize,
    pub(crate) queue_frames: usize,
}

/// Produces the diagnostics once the reader has seen the end.
pub(crate) type Finisher = Box<dyn FnOnce(CloseReason) -> BoxFuture<'static, ExitInfo> + Send>;

/// The handles a transport keeps after starting its pumps.
pub(crate) struct Pumps {
    pub(crate) outbound: FrameSender,
    pub(crate) inbound: mpsc::Receiver<Inbound>,
    /// Set to `true` to make the writer close its stream (stdin of a child)
    /// even while senders still exist.
    pub(crate) close_writer: watch::Sender<bool>,
}

/// Starts the reader and writer tasks on the current runtime.
pub(crate) fn spawn_pumps<R, W>(reader: R, writer: W, limits: PumpLimits, finish: Finisher) -> Pumps
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(limits.queue_frames);
    let (close_tx, close_rx) = watch::channel(false);
    let write_failure = Arc::new(std::sync::Mutex::new(None));
    let outlet = Outlet::new(
        writer,
        LineEncoder::with_max_frame(limits.max_frame),
        WRITE_BUFFER,
    );
    let sender = FrameSender::stream(OutletHandle::new(Arc::clone(&outlet)));
    tokio::spawn(write_loop(outlet, close_rx, Arc::clone(&write_failure)));
    tokio::spawn(read_loop(
        reader,
        in_tx,
        limits.max_frame,
        finish,
        write_failure,
    ));
    Pumps {
        outbound: sender,
        inbound: in_rx,
        close_writer: close_tx,
    }
}

/// Hands the session the ends of skipped lines; false when it is gone.
async fn send_edges(decoder: &mut LineDecoder, tx: &mpsc::Sender<Inbound>, limit: usize) -> bool {
    while let Some(edge) = decoder.take_skipped_edge() {
        if tx.send(Inbound::Skipped { edge, limit }).await.is_err() {
            return false;
        }
    }
    true
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut reader: R,
    tx: mpsc::Sender<Inbound>,
    max_frame: usize,
    finish: Finisher,
    write_failure: Arc<std::sync::Mutex<Option<std::io::ErrorKind>>>,
) {
    let mut decoder = LineDecoder::with_max_frame(max_frame);
    let mut buf = BytesMut::new();
    // The size of the last read, and whether the next one asks for little.
    let mut last_read = 0;
    let mut small_next = true;
    // Whether a large frame was split off the current buffer (the reads that
    // brought it may each have been small).
    let mut large_frame = false;
    // Whether `buf` is a kept buffer (see `crate::spare`): a large frame is
    // being read.
    let mut kept = false;
    let reason = loop {
        let mut decoded = decoder.decode(&mut buf);
        // The ends of a skipped line go before the frame that followed it.
        if !send_edges(&mut decoder, &tx, max_frame).await {
            return;
        }
        if kept && !matches!(decoded, Ok(None)) {
            // The large frame is out (or was refused): what follows it
            // moves to a buffer of its own, and the frame, the only owner
            // of the kept buffer then, gives it back when it drops.
            kept = false;
            buf = BytesMut::from(&buf[..]);
            if let Ok(Some(frame)) = decoded {
                decoded = Ok(Some(match frame.try_into_mut() {
                    Ok(only) => SPARES.share_mut(only),
                    Err(shared) => shared,
                }));
            }
        }
        match decoded {
            Ok(Some(frame)) => {
                large_frame |= frame.len() >= LARGE_READ;
                if tx.send(Inbound::Frame(frame)).await.is_err() {
                    // The session is gone; nobody listens any more.
                    return;
                }
                continue;
            }
            Ok(None) => {}
            Err(e) => {
                if tx.send(Inbound::FrameError(e.into())).await.is_err() {
                    return;
                }
                continue;
            }
        }
        if buf.is_empty()
            && (large_frame || last_read >= LARGE_READ || buf.capacity() > 2 * READ_CHUNK)
        {
            // Between frames after a large one: give the buffer back (frames
            // split off it keep their part alive as long as they need it).
            buf = BytesMut::new();
            small_next = true;
            large_frame = false;
        }
        // Between frames, after a read that found the stream drained: the
        // read goes through this thread's scratch buffer and only what came
        // is copied into `buf`, so a waiting connection holds no read
        // buffer and a small frame holds only its own bytes. In a frame's
        // middle, or after a read that filled its room, the read goes
        // straight into `buf`, a pipe's worth at a time.
        let idle = small_next && buf.is_empty();
        let (read, room) = if idle {
            (read_through_scratch(&mut reader, &mut buf).await, SCRATCH)
        } else {
            if buf.capacity() - buf.len() < READ_CHUNK / 4 {
                if !kept && buf.len() >= SpareBuffers::LARGE {
                    // A large frame, out of room: it continues in a kept
                    // buffer, which the frame gives back when it drops (this
                    // copy replaces the one growing would make; the
                    // decoder's place in it stays valid: the bytes are the
                    // same).
                    buf = SPARES.continue_in(&buf, READ_CHUNK);
                    kept = true;
                } else {
                    buf.reserve(READ_CHUNK);
                }
            }
            let room = buf.capacity() - buf.len();
            (reader.read_buf(&mut buf).await, room)
        };
        match read {
            Ok(0) => {
                // Deliver a last line that had no newline, then report the end.
                loop {
                    let decoded = decoder.decode_eof(&mut buf);
                    if !send_edges(&mut decoder, &tx, max_frame).await {
                        return;
                    }
                    match decoded {
                        Ok(Some(frame)) => {
                            if tx.send(Inbound::Frame(frame)).await.is_err() {
                                return;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            if tx.send(Inbound::FrameError(e.into())).await.is_err() {
                                return;
                            }
                        }
                    }
                }
                break CloseReason::EndOfStream;
            }
            Ok(n) => {
                last_read = n;
                small_next = n < room;
            }
            Err(e) => break CloseReason::ReadFailed(e.kind()),
        }
    };
    let reason = match (reason, take_failure(&write_failure)) {
        (CloseReason::EndOfStream, Some(kind)) => CloseReason::WriteFailed(kind),
        (reason, _) => reason,
    };
    let info = finish(reason).await;
    // The receiver may be gone already; then nobody needs the diagnostics.
    let _ = tx.send(Inbound::Closed(info)).await;
}

/// One read of at most [`SCRATCH`] bytes through this thread's scratch
/// buffer; what came is appended to `buf`. An empty `buf` with no room then
/// holds exactly what came: a connection waiting for its server holds no
/// read buffer, and a small frame a host keeps holds only its own bytes.
/// The scratch buffer is borrowed within one poll, never across a wait, so
/// tasks sharing the thread cannot meet in it.
async fn read_through_scratch<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
) -> std::io::Result<usize> {
    std::future::poll_fn(|cx| {
        SCRATCH_BUF.with_borrow_mut(|scratch| {
            let mut out = tokio::io::ReadBuf::new(scratch);
            std::pin::Pin::new(&mut *reader)
                .poll_read(cx, &mut out)
                .map_ok(|()| {
                    buf.extend_from_slice(out.filled());
                    out.filled().len()
                })
        })
    })
    .await
}

fn take_failure(slot: &std::sync::Mutex<Option<std::io::ErrorKind>>) -> Option<std::io::ErrorKind> {
    slot.lock().map(|mut g| g.take()).unwrap_or(None)
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt as _;

    use crate::spare::{SPARES, SpareBuffers};
    use crate::{Inbound, memory_pair};

    async fn next_frame(inbound: &mut tokio::sync::mpsc::Receiver<Inbound>) -> bytes::Bytes {
        match inbound.recv().await {
            Some(Inbound::Frame(frame)) => frame,
            other => panic!("expected a frame, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_read_between_frames_keeps_only_what_came() {
        let (mut server, mut client) = tokio::io::duplex(64 * 1024);
        server.write_all(&[b'y'; 100]).await.unwrap();
        let mut buf = bytes::BytesMut::new();
        let n = super::read_through_scratch(&mut client, &mut buf)
            .await
            .unwrap();
        assert_eq!(n, 100);
        assert_eq!(&buf[..], &[b'y'; 100][..]);
        assert!(buf.capacity() < 1024, "holds {} bytes", buf.capacity());
        // A read finds at most the scratch buffer's worth; the rest waits
        // for the next read.
        server
            .write_all(&vec![b'z'; 3 * super::SCRATCH])
            .await
            .unwrap();
        let n = super::read_through_scratch(&mut client, &mut buf)
            .await
            .unwrap();
        assert_eq!(n, super::SCRATCH);
        assert_eq!(buf.len(), 100 + super::SCRATCH);
        assert!(buf[100..].iter().all(|&b| b == b'z'));
    }

    /// The only test in this crate's unit tests that reads a large frame
    /// through the process-wide pool, so nothing else takes from it meanwhile.
    #[tokio::test]
    async fn a_large_frame_lives_in_a_kept_buffer_that_comes_back_when_it_drops() {
        let (mut conn, mut server) = memory_pair(1 << 20);
        let mut wire = vec![b'x'; 300_000];
        wire.extend_from_slice(b"\n{\"after\":1}\n");
        server.output.write_all(&wire).await.unwrap();
        server.output.flush().await.unwrap();
        let large = next_frame(&mut conn.inbound).await;
        let small = next_frame(&mut conn.inbound).await;
        assert_eq!(large.len(), 300_000);
        assert!(large.iter().all(|&b| b == b'x'));
        assert_eq!(&small[..], b"{\"after\":1}");
        let address = large.as_ptr();
        drop(large);
        // The frame that followed in the same buffer was moved out, so it
        // does not hold the large frame's memory.
        let kept = SPARES.take();
        assert!(kept.is_empty());
        assert_eq!(kept.as_ptr(), address, "the large frame's own memory");
        assert!(kept.capacity() >= SpareBuffers::LARGE);
        drop(small);
    }
}
