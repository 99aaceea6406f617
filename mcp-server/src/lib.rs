//! The server half of MCP, for both protocol eras: a sans-IO core and a
//! thin async driver with a handler trait.
//!
//! Two layers:
//!
//! - [`ServerCore`]: synchronous and deterministic (no tokio, no clock
//!   reads, no IO). Fed frames (the bytes of one JSON-RPC message) and, where
//!   time matters, `now`; drained of frames to write and [`Event`]s for the
//!   application. It owns the protocol: the `initialize` handshake
//!   (2024-11-05 … 2025-11-25), the stateless 2026-07-28 rules
//!   (`server/discover`, the version and capabilities in every request's
//!   `_meta`, `resultType`, server identity and cache hints on results),
//!   `ping`, which methods exist in which era and for which declared
//!   capability (`-32601` otherwise), the JSON-RPC answers to malformed input
//!   (`-32700`, `-32600`), requests in flight with their progress tokens and
//!   cancellations, and the server's own notifications and requests to the
//!   client. A gateway drives it with its own IO.
//! - [`serve`] with a [`ServerHandler`]: the simple case. One task reads
//!   newline-delimited frames, each request runs its handler on its own task
//!   (with cancellation and progress in its [`RequestContext`]), and the
//!   answers are written back.
//! - [`serve_with`] and a [`ServerHandle`]: the same, with a handle for the
//!   application to speak first on the connection: notifications
//!   (`list_changed` on the legacy session and on the 2026-07-28
//!   `subscriptions/listen` streams that asked for it, which the driver
//!   holds open itself; log messages) and requests to the client
//!   (sampling, elicitation, roots) with their answers, deadlines and
//!   cancellation when the caller gives up. The gateway is built on it.
//! - [`stdio`]: the process's standard input and output for either, read
//!   and written on the runtime when they are pipes or sockets (as clients
//!   start servers) instead of through tokio's blocking-thread `stdin()`.
//!
//! - [`http`] (feature `http`): the same handler served over Streamable
//!   HTTP to many clients at once, both eras (legacy sessions with their
//!   ids and GET streams, resumable response streams from 2025-11-25 on;
//!   stateless 2026-07-28 requests with their headers checked), with the Host / Origin checks, TLS and a bearer token for
//!   exposure off loopback, and bounded bodies, connections and sessions.
//!
//! An in-process server behind the transport's `Connector` seam is `serve`
//! on the server end of an in-memory pair:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo(handler: Arc<impl mcp_server::ServerHandler>) {
//! use mcp_server::{ServerConfig, serve};
//! use mcp_transport::MemoryConnector;
//!
//! let connector = MemoryConnector::new(move |end| {
//!     let handler = Arc::clone(&handler);
//!     tokio::spawn(serve(end.input, end.output, handler, ServerConfig::new("openapi", "1.0")));
//! });
//! // `connector` goes to a session or a hub like any other.
//! # }
//! ```
//!
//! # Bounds
//!
//! Every bound is a [`ServerLimits`] setting with a default, and reaching
//! one is a named refusal, never silent growth:
//!
//! | bound | default | at the bound |
//! |---|---|---|
//! | frame (read and written) | 16 MiB | a long line is skipped, its request answered `-32600` when its id can be read; a long answer is replaced by `-32603` ([`ServerError::ResultTooLarge`]); a long notification is refused ([`ServerError::FrameTooLarge`]) |
//! | requests in flight | 1024 | one more is answered `-32603` at once |
//! | pending events | 1024 | a request is refused like one over the in-flight bound; a notification is dropped and counted ([`ServerStats::dropped_events`]) |
//! | queued frames | 1024 | a notification is refused ([`ServerError::TransmitQueueFull`]); answers never are (one per request) |
//! | requests to the client | 32 | [`ServerError::TooManyOutgoing`] |
//! | a [`ServerHandle`]'s commands waiting for the driver | 64 | the sender waits |
//! | a cancelled handler's wind-down ([`serve`]) | 5 s | its task is dropped |
//!
//! A cancellation does not free its request's slot until the application
//! has answered (the answer is swallowed): the in-flight bound counts work
//! that still runs, not only work the client still waits for.
//!
//! Architecture Invariant: the core (`core.rs`, `core/`) never awaits, never
//! reads the clock and never imports tokio (a test and `cargo xtask tidy`
//! check it); it depends on `mcp-types` only.
#![forbid(unsafe_code)]

mod config;
mod core;
mod error;
mod handle;
mod handler;
#[cfg(feature = "http")]
pub mod http;
mod serve;
mod stdio;

pub use crate::config::{ServerConfig, ServerLimits};
pub use crate::core::{
    ClientContext, Event, IncomingRequest, LegacySession, ResponseError, ServerCore, ServerStats,
    Violation,
};
pub use crate::error::ServerError;
pub use crate::handle::{Delivered, Outbox, Peer, ServerHandle};
pub use crate::handler::{
    BoxFuture, HandlerResult, RequestContext, ServerHandler, method_not_found,
};
pub use crate::serve::{serve, serve_with};
pub use crate::stdio::{BusyPoll, StdinReader, StdoutWriter, stdio};
