//! MCP transports: the only crate of the workspace that spawns processes or opens
//! sockets.
//!
//! A transport moves *frames* (one JSON-RPC message each, as bytes); it knows
//! nothing about sessions, methods or tools. Every transport hands the session a
//! [`Connection`]: a bounded sender of outgoing frames, a bounded receiver of
//! [`Inbound`] events (frames, per-frame errors, and finally [`Inbound::Closed`]
//! with the [`ExitInfo`]), and a [`Control`] handle to shut the peer down.
//!
//! A session is opened from a [`Connector`], not from a bare pipe, because
//! negotiation may have to start a stdio server again, and a hub restarts dead
//! servers from the same connector.
//!
//! Transports here:
//! - [`StdioConnector`]: spawns a server as a child process (never through a
//!   shell), in its own process group, with a clean environment; see
//!   [`StdioConfig`].
//! - `HttpConnector`: Streamable HTTP, both protocol eras; its fallback is
//!   `SseConnector`, the legacy HTTP+SSE transport (see the `http` module;
//!   feature `http`).
//! - [`memory_pair`]: an in-memory connection for tests, whose other end is a
//!   pair of byte streams a fake server can serve.
//!
//! # Features
//!
//! - `http` (default): the HTTP transports, their configuration and the
//!   credential seam they consult (`CredentialProvider`, `StaticHeader`),
//!   with reqwest (rustls), url and serde. Without it the crate has stdio and
//!   in-memory connections only, and [`TransportError`] lacks the variants
//!   that carry an HTTP library's error (`InvalidUrl`, `HttpClient`, `Http`).
//!   A host that only starts local servers builds with
//!   `default-features = false` and compiles no HTTP or TLS stack.
//!
//! No crate here installs a process-wide rustls crypto provider: reqwest
//! uses one the host installed, else builds each client with its own
//! (aws-lc-rs).
//!
//! Architecture Invariant: every queue is bounded; a line over the frame limit is
//! reported as [`TransportError::Codec`] for that frame and reading carries on.
#![forbid(unsafe_code)]

// The frame queue of message transports (`FrameSender`'s queue sink) is
// only made by the HTTP transports; without them it is unused, not wrong.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
mod connection;
mod error;
#[cfg(feature = "http")]
pub mod http;
mod memory;
mod outlet;
mod spare;
mod stderr;
mod stdio;
mod stream;

pub use connection::{
    BoxFuture, CloseReason, Connection, Connector, Control, DEFAULT_QUEUE_FRAMES, ExitInfo,
    FrameKind, FrameSender, Inbound, OutboundFrame, RequestFailure, UNPARSED_LINE_BYTES,
};
pub use error::TransportError;
#[cfg(feature = "http")]
pub use http::{
    CredentialProvider, CredentialTarget, HttpConfig, HttpConnector, Refusal, SseConnector,
    StaticHeader,
};
pub use mcp_codec::SkippedEdge;
pub use memory::{MemoryConnector, MemoryServerEnd, ServeFn, memory_pair};
pub use stderr::{DEFAULT_STDERR_TAIL_BYTES, StderrTail};
pub use stdio::{SAFE_ENV_VARS, StdioChannel, StdioConfig, StdioConnector};
