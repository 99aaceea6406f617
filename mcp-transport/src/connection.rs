//! The seam between a transport and a session: bounded frame queues and a
//! control handle.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use mcp_codec::LineEncoder;
use mcp_types::ErrorCause;
use tokio::sync::mpsc;

use crate::TransportError;
use crate::outlet::OutletHandle;

/// A boxed, sendable future (the transport traits are object safe so a hub can
/// hold connectors of different kinds in one collection).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Default capacity of each frame queue of a connection.
pub const DEFAULT_QUEUE_FRAMES: usize = 256;

/// One outgoing JSON-RPC message, already serialised, without a trailing
/// newline, plus what message-based transports (HTTP) need to route it.
/// Stream transports (stdio, in-memory) use only the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboundFrame {
    /// The serialised message.
    pub bytes: Bytes,
    /// The JSON-RPC method when the frame is a request or notification.
    pub method: Option<Arc<str>>,
    /// What kind of message this is (HTTP correlates failures with requests).
    pub kind: FrameKind,
    /// The `MCP-Protocol-Version` header value, once one is negotiated.
    pub protocol_version: Option<&'static str>,
    /// Further per-message HTTP headers (2026-07-28: `Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-*`), name and value, already encoded.
    pub headers: Vec<(String, String)>,
}

impl OutboundFrame {
    /// A frame with no routing hints.
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        Self {
            bytes: bytes.into(),
            method: None,
            kind: FrameKind::Other,
            protocol_version: None,
            headers: Vec::new(),
        }
    }

    /// A request frame with its id and method.
    pub fn request(bytes: impl Into<Bytes>, id: i64, method: Arc<str>) -> Self {
        Self {
            method: Some(method),
            kind: FrameKind::Request { id },
            ..Self::new(bytes)
        }
    }

    /// A notification frame with its method.
    pub fn notification(bytes: impl Into<Bytes>, method: Arc<str>) -> Self {
        Self {
            method: Some(method),
            kind: FrameKind::Notification,
            ..Self::new(bytes)
        }
    }
}

/// The kind of an outgoing message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameKind {
    /// A request with this (integer) id: its answer is expected.
    Request {
        /// The JSON-RPC id.
        id: i64,
    },
    /// A notification.
    Notification,
    /// Our answer to a request of the server's.
    Response,
    /// Not said.
    Other,
}

/// Why a message-based transport could not deliver a request or its answer.
/// Stream transports never produce this.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestFailure {
    /// The server answered with this HTTP status and no usable JSON-RPC
    /// answer. `error` is the JSON-RPC error object of the body, when the body
    /// held one (with any id, or none).
    Status {
        /// The HTTP status code.
        status: u16,
        /// The raw JSON of a JSON-RPC error object found in the body.
        error: Option<Bytes>,
        /// The `WWW-Authenticate` header of a 401 or 403.
        www_authenticate: Option<String>,
    },
    /// The session the server had given us is gone: it answered a request
    /// that carried the session id with `404` (or with `400` and an error
    /// naming the session, as some servers do).
    SessionExpired,
    /// The connection failed (reset, closed, not HTTP) before an answer.
    Network,
    /// Nothing accepted the connection: no server listens at that address
    /// and port (or a firewall refused it).
    Refused,
    /// No answer within the transport's own time-out.
    TimedOut,
    /// The reply stream broke before the answer and could not be resumed.
    StreamBroken,
    /// The reply was over the body bound.
    TooLarge {
        /// The bound in bytes.
        limit: usize,
    },
    /// The TLS handshake failed: the server's certificate is not trusted
    /// (no root of the system's, or `SSL_CERT_FILE`'s, signed it), names
    /// another host, has expired, or the server spoke no TLS we accept.
    /// `reason` is rustls's account, which carries no secret.
    Tls {
        /// Why, as rustls words it.
        reason: String,
    },
    /// The request was not sent (or not sent again after a 401 / 403): the
    /// credential provider could not obtain credentials. Its reason went to
    /// the log; a host that needs it asks its provider.
    Credentials,
    /// The request was not sent: a header it was to carry is not legal
    /// header text. `name` is given when the name itself is legal (then the
    /// value was not); the value is never kept.
    InvalidHeader {
        /// The header's name, when legal.
        name: Option<String>,
    },
}

impl RequestFailure {
    /// Who or what caused the failure. An HTTP status follows the
    /// transport's one rule (401/403 authorization, 5xx connection, others
    /// the server's answer); an expired session, a network failure and a
    /// reply stream that broke are a lost [`ErrorCause::Connection`]; the
    /// transport's own time-out is the server's (as a request deadline is in
    /// the session); a reply over the body bound is [`ErrorCause::Bound`]; a
    /// header that cannot be sent was computed from the request itself (its
    /// arguments, its tool name), so [`ErrorCause::Input`].
    pub fn cause(&self) -> ErrorCause {
        match self {
            RequestFailure::Status { status, .. } => crate::error::status_cause(*status),
            RequestFailure::SessionExpired
            | RequestFailure::Network
            | RequestFailure::Refused
            | RequestFailure::Tls { .. }
            | RequestFailure::StreamBroken => ErrorCause::Connection,
            RequestFailure::TimedOut => ErrorCause::Server,
            RequestFailure::TooLarge { .. } => ErrorCause::Bound,
            RequestFailure::Credentials => ErrorCause::Authorization,
            RequestFailure::InvalidHeader { .. } => ErrorCause::Input,
        }
    }
}

impl fmt::Display for RequestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestFailure::Status { status, .. } => write!(f, "the server answered HTTP {status}"),
            RequestFailure::SessionExpired => f.write_str("the server's session expired"),
            RequestFailure::Network => f.write_str("the connection to the server failed"),
            RequestFailure::Refused => f.write_str(
                "the connection was refused: nothing listens at the server's address and port (is it running?)",
            ),
            RequestFailure::Tls { reason } => {
                write!(f, "the TLS handshake with the server failed: {reason}")
            }
            RequestFailure::TimedOut => f.write_str("the server did not answer in time"),
            RequestFailure::StreamBroken => f.write_str("the reply stream broke before the answer"),
            RequestFailure::TooLarge { limit } => {
                write!(f, "the reply was larger than {limit} bytes")
            }
            RequestFailure::Credentials => f.write_str("credentials could not be obtained"),
            RequestFailure::InvalidHeader { name: Some(name) } => {
                write!(
                    f,
                    "the request was not sent: header `{name}` has an illegal value"
                )
            }
            RequestFailure::InvalidHeader { name: None } => {
                f.write_str("the request was not sent: a header has an illegal name")
            }
        }
    }
}

/// What a transport delivers to its session, in order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Inbound {
    /// One complete incoming frame (a JSON-RPC message, not yet parsed).
    Frame(Bytes),
    /// An incoming frame was rejected (over the size limit, say). The transport
    /// skipped it and goes on; the session decides what that means.
    FrameError(TransportError),
    /// One end of a line skipped for being over `limit` bytes (stdio): its
    /// first bytes as soon as it is known to be too long (just before the
    /// `FrameError`), its last bytes once it ended (before any later frame). The session may find in them which request the line answered
    /// and fail that request at once instead of at its deadline.
    Skipped {
        /// The start or the end of the skipped line, at most
        /// [`mcp_codec::EDGE_BYTES`].
        edge: mcp_codec::SkippedEdge,
        /// The frame bound the line went over.
        limit: usize,
    },
    /// A request (by id) will get no answer through this transport, for this
    /// reason (message-based transports only).
    RequestFailed {
        /// The JSON-RPC id of the request.
        id: i64,
        /// Why.
        failure: RequestFailure,
    },
    /// Legacy Streamable HTTP: the server no longer knows the session it
    /// gave us (it answered the standalone GET stream or a notification as
    /// it answers an unknown session, typically because it restarted: see
    /// [`RequestFailure::SessionExpired`]), and no request of
    /// ours was there to fail with
    /// [`RequestFailure::SessionExpired`]. The transport has forgotten the
    /// session id, so the session's next `initialize` starts a new one; until
    /// then no server notification or request reaches us.
    SessionExpired,
    /// Legacy Streamable HTTP: the standalone GET stream, which had been
    /// open, is lost (the server refused it when it was opened again, or it
    /// could not be opened again): server notifications and requests stop
    /// reaching us. It is opened again after the next successful request;
    /// the session may make one to find out where the server stands.
    StreamLost,
    /// The connection ended. Nothing follows this event.
    Closed(ExitInfo),
}

/// Why a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The server closed its output (end of file).
    EndOfStream,
    /// Reading from the server failed.
    ReadFailed(std::io::ErrorKind),
    /// Writing to the server failed (a broken pipe, usually because it exited).
    WriteFailed(std::io::ErrorKind),
    /// We shut the connection down.
    Shutdown,
    /// We ended it because the server no longer speaks the protocol version
    /// (or era) it was made in: a new release or a rollback answered in
    /// place of the server it was negotiated with. A new connection
    /// negotiates again.
    ProtocolChanged,
}

impl CloseReason {
    /// Who or what ended the connection: [`ErrorCause::Cancelled`] when we
    /// shut it down, else a lost [`ErrorCause::Connection`].
    pub fn cause(&self) -> ErrorCause {
        match self {
            CloseReason::EndOfStream
            | CloseReason::ReadFailed(_)
            | CloseReason::WriteFailed(_)
            | CloseReason::ProtocolChanged => ErrorCause::Connection,
            CloseReason::Shutdown => ErrorCause::Cancelled,
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::EndOfStream => f.write_str("the server closed its output"),
            CloseReason::ReadFailed(kind) => write!(f, "reading from the server failed ({kind})"),
            CloseReason::WriteFailed(kind) => write!(f, "writing to the server failed ({kind})"),
            CloseReason::Shutdown => f.write_str("the connection was shut down"),
            CloseReason::ProtocolChanged => f.write_str(
                "the server no longer speaks the protocol version this connection was made in (a new release?); a new connection negotiates again",
            ),
        }
    }
}

/// Diagnostics of an ended connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitInfo {
    /// Why the connection ended.
    pub reason: CloseReason,
    /// The child's exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the child, when one did.
    pub signal: Option<i32>,
    /// The last bytes the server wrote to stderr (bounded), if it has one.
    pub stderr_tail: Option<String>,
    /// The start of the first line the server sent that was not a JSON-RPC
    /// message (at most [`UNPARSED_LINE_BYTES`]), if it sent one: on stdio
    /// typically a banner or a log line written to stdout, where only
    /// protocol messages belong. The session fills it in; the server's own
    /// text, never part of `Display`.
    pub unparsed_line: Option<String>,
}

/// The most bytes of an unparsed line kept in [`ExitInfo::unparsed_line`].
pub const UNPARSED_LINE_BYTES: usize = 200;

impl ExitInfo {
    /// Diagnostics for a connection with no child process.
    pub fn without_process(reason: CloseReason) -> Self {
        Self {
            reason,
            exit_code: None,
            signal: None,
            stderr_tail: None,
            unparsed_line: None,
        }
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.reason)?;
        match (self.exit_code, self.signal) {
            (Some(code), _) => write!(f, "; the server exited with code {code}"),
            (None, Some(sig)) => write!(f, "; the server was ended by signal {sig}"),
            (None, None) => Ok(()),
        }
    }
}

/// The sending half of a connection: a bounded queue of outgoing frames.
#[derive(Clone, Debug)]
pub struct FrameSender {
    sink: Sink,
}

#[derive(Clone, Debug)]
enum Sink {
    /// Message-based transports (HTTP): whole frames with their routing
    /// hints, to the transport's driver task.
    Queue {
        tx: mpsc::Sender<OutboundFrame>,
        encoder: LineEncoder,
    },
    /// Byte-stream transports (stdio, in-memory): lines into the shared
    /// write buffer in front of the stream.
    Stream(OutletHandle),
}

impl FrameSender {
    pub(crate) fn new(tx: mpsc::Sender<OutboundFrame>, max_frame: usize) -> Self {
        Self {
            sink: Sink::Queue {
                tx,
                encoder: LineEncoder::with_max_frame(max_frame),
            },
        }
    }

    pub(crate) fn stream(outlet: OutletHandle) -> Self {
        Self {
            sink: Sink::Stream(outlet),
        }
    }

    /// Queues a frame, waiting while the queue is full.
    ///
    /// A frame the transport could not send whole (over the frame limit, or with
    /// a raw newline in it) is refused here, before it is queued.
    pub async fn send(&self, frame: OutboundFrame) -> Result<(), TransportError> {
        match &self.sink {
            Sink::Queue { tx, encoder } => {
                encoder
                    .check(&frame.bytes)
                    .map_err(TransportError::Encode)?;
                tx.send(frame).await.map_err(|_| TransportError::Closed)
            }
            Sink::Stream(outlet) => outlet.send(&frame.bytes).await,
        }
    }

    /// Queues a frame if there is room now (see [`FrameSender::send`]).
    pub fn try_send(&self, frame: OutboundFrame) -> Result<(), TransportError> {
        match &self.sink {
            Sink::Queue { tx, encoder } => {
                encoder
                    .check(&frame.bytes)
                    .map_err(TransportError::Encode)?;
                tx.try_send(frame).map_err(|e| match e {
                    mpsc::error::TrySendError::Full(_) => {
                        TransportError::Io(std::io::ErrorKind::WouldBlock.into())
                    }
                    mpsc::error::TrySendError::Closed(_) => TransportError::Closed,
                })
            }
            Sink::Stream(outlet) => outlet.try_send(&frame.bytes),
        }
    }

    /// Whether the transport has stopped taking frames.
    pub fn is_closed(&self) -> bool {
        match &self.sink {
            Sink::Queue { tx, .. } => tx.is_closed(),
            Sink::Stream(outlet) => outlet.is_closed(),
        }
    }
}

/// Shuts a transport's peer down and reports on it.
pub trait Control: Send + Sync + fmt::Debug {
    /// Graceful shutdown: stop writing, give the peer its grace period, then
    /// force it. For a child process: close stdin, wait, SIGTERM the process
    /// group, wait, SIGKILL the group, reap.
    fn shutdown(&self) -> BoxFuture<'_, ExitInfo>;
    /// Ends the peer at once, synchronously, without a runtime (used by `Drop`).
    fn kill(&self);
    /// The bounded stderr tail, for transports with a child process.
    fn stderr_tail(&self) -> Option<String>;
}

/// An open connection, as handed from a transport to a session.
#[derive(Debug)]
pub struct Connection {
    /// Outgoing frames.
    pub outbound: FrameSender,
    /// Incoming frames and events; ends with [`Inbound::Closed`].
    pub inbound: mpsc::Receiver<Inbound>,
    /// Shutdown and diagnostics.
    pub control: Box<dyn Control>,
}

/// Opens connections to one server; can open again (respawn, reconnect).
pub trait Connector: Send + Sync + fmt::Debug {
    /// Opens a new connection.
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>>;
    /// Whether the server is a local process speaking over stdio (negotiation
    /// follows the stdio rules) rather than a remote endpoint.
    fn is_stdio(&self) -> bool;

    /// Another way to reach the same server, tried when a legacy `initialize`
    /// through this connector fails the way an older transport would explain
    /// (Streamable HTTP → legacy HTTP+SSE). `None` when there is none.
    fn fallback(&self) -> Option<std::sync::Arc<dyn Connector>> {
        None
    }

    /// A key naming the server endpoint (for HTTP: the URL without
    /// credentials or query), under which a process may remember what it
    /// learnt about the server, such as its protocol era. `None` for local
    /// processes, whose every start may differ.
    fn cache_key(&self) -> Option<String> {
        None
    }
}

/// A shared connector is a connector: every method, the defaults included,
/// is the inner one's, so `Arc<StdioConnector>` and `Arc<dyn Connector>` go
/// wherever an `impl Connector` is taken.
impl<C: Connector + ?Sized> Connector for Arc<C> {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        (**self).connect()
    }

    fn is_stdio(&self) -> bool {
        (**self).is_stdio()
    }

    fn fallback(&self) -> Option<Arc<dyn Connector>> {
        (**self).fallback()
    }

    fn cache_key(&self) -> Option<String> {
        (**self).cache_key()
    }
}
