//! An in-memory connection for tests: the client side is a real
//! [`Connection`] (same framing and bounds as stdio), the server side is a pair
//! of byte streams a fake server can serve.

use std::time::Duration;

use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::watch;

use crate::DEFAULT_QUEUE_FRAMES;
use crate::connection::{BoxFuture, CloseReason, Connection, Control, ExitInfo};
use crate::stream::{PumpLimits, spawn_pumps};

/// Pipe buffer size of each direction.
const PIPE_BYTES: usize = 64 * 1024;

/// The server's end of an in-memory connection.
#[derive(Debug)]
pub struct MemoryServerEnd {
    /// What the client sends (read it).
    pub input: ReadHalf<DuplexStream>,
    /// What the client receives (write to it).
    pub output: WriteHalf<DuplexStream>,
}

/// A connected pair: a client [`Connection`] and the server end it talks to.
///
/// `max_frame` bounds frames in both directions on the client side. Must be
/// called inside a tokio runtime.
pub fn memory_pair(max_frame: usize) -> (Connection, MemoryServerEnd) {
    let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
    let (client_read, client_write) = tokio::io::split(client_io);
    let (server_read, server_write) = tokio::io::split(server_io);
    let (closed_tx, closed_rx) = watch::channel(false);
    let finish: crate::stream::Finisher = Box::new(move |reason| {
        Box::pin(async move {
            let _ = closed_tx.send(true);
            ExitInfo::without_process(reason)
        })
    });
    let pumps = spawn_pumps(
        client_read,
        client_write,
        PumpLimits {
            max_frame,
            queue_frames: DEFAULT_QUEUE_FRAMES,
        },
        finish,
    );
    let control = MemoryControl {
        close: pumps.close_writer,
        closed: closed_rx,
    };
    (
        Connection {
            outbound: pumps.outbound,
            inbound: pumps.inbound,
            control: Box::new(control),
        },
        MemoryServerEnd {
            input: server_read,
            output: server_write,
        },
    )
}

#[derive(Debug)]
struct MemoryControl {
    close: watch::Sender<bool>,
    closed: watch::Receiver<bool>,
}

impl Control for MemoryControl {
    fn shutdown(&self) -> BoxFuture<'_, ExitInfo> {
        Box::pin(async move {
            let _ = self.close.send(true);
            let mut rx = self.closed.clone();
            // A fake server ends when its input ends; do not wait forever for
            // one that does not.
            let _ = tokio::time::timeout(Duration::from_secs(5), rx.wait_for(|c| *c)).await;
            ExitInfo::without_process(CloseReason::Shutdown)
        })
    }

    fn kill(&self) {
        let _ = self.close.send(true);
    }

    fn stderr_tail(&self) -> Option<String> {
        None
    }
}

/// What a [`MemoryConnector`] does with the server end of each new pair.
pub type ServeFn = dyn Fn(MemoryServerEnd) + Send + Sync;

/// Opens in-memory connections; each `connect` makes a new pair and hands its
/// server end to a function (typically one that spawns a fake server on it).
pub struct MemoryConnector {
    serve: std::sync::Arc<ServeFn>,
    max_frame: usize,
}

impl std::fmt::Debug for MemoryConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryConnector")
            .field("max_frame", &self.max_frame)
            .finish_non_exhaustive()
    }
}

impl MemoryConnector {
    /// A connector that calls `serve` with the server end of every new pair.
    pub fn new(serve: impl Fn(MemoryServerEnd) + Send + Sync + 'static) -> Self {
        Self {
            serve: std::sync::Arc::new(serve),
            max_frame: mcp_codec::DEFAULT_MAX_FRAME,
        }
    }

    /// Sets the frame bound of the client side.
    pub fn with_max_frame(mut self, max_frame: usize) -> Self {
        self.max_frame = max_frame;
        self
    }
}

impl crate::Connector for MemoryConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, crate::TransportError>> {
        Box::pin(async move {
            let (conn, server) = memory_pair(self.max_frame);
            (self.serve)(server);
            Ok(conn)
        })
    }

    fn is_stdio(&self) -> bool {
        // Behaves like a stdio server for negotiation purposes.
        true
    }
}
