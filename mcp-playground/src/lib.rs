//! The playground: a web page on loopback over a running [`mcp_hub::Hub`].
//!
//! It shows every server of the hub (status, protocol era and version,
//! server info, capabilities, instructions labelled as the server's words,
//! the kept stderr tail of a failure), lists their catalogues one page at a
//! time, shows the merged namespace (aliases, collisions, what the authority
//! hides), and — only when the person clicks — calls a tool, reads a
//! resource or gets a prompt through the hub's governed facade (so the
//! host's authority, approval hook and audit apply as to any call). Events
//! (progress, server logs, list changes, restarts, resource updates) are
//! pushed to the page as server-sent events, and a changed tool listing
//! waiting for review can be approved or rejected. The servers' questions
//! (elicitation, sampling) can be asked of the person at the page: give
//! each server a [`Questions::handler`] and the playground the same
//! [`Questions`] ([`Playground::answering`]).
//!
//! ```no_run
//! # async fn demo(
//! #     hub: std::sync::Arc<mcp_hub::Hub>,
//! #     stop: tokio::sync::oneshot::Receiver<()>,
//! # ) -> Result<(), mcp_playground::PlaygroundError> {
//! use mcp_playground::{Playground, PlaygroundConfig};
//! let address = "127.0.0.1:0".parse().unwrap(); // an ephemeral port
//! let playground = Playground::bind(hub, address, PlaygroundConfig::default()).await?;
//! println!("open {}", playground.launch_url()); // carries the one-time code
//! playground.serve(async { let _ = stop.await; }).await?; // the hub keeps running
//! # Ok(()) }
//! ```
//!
//! # Security
//!
//! The page is for the person who started it, and for nobody else: not
//! another local user, not another web site open in the same browser.
//!
//! - It listens on a loopback address only; [`Playground::bind`] refuses
//!   any other ([`PlaygroundError::NotLoopback`]).
//! - Every request's `Host` must be the address it listens on, exactly
//!   (`127.0.0.1:PORT`): a DNS-rebound name is refused (421).
//! - A request whose `Origin` is not the playground's own origin, or whose
//!   `Sec-Fetch-Site` is neither `same-origin` nor (for the page itself)
//!   `none`, is refused (403); every request that changes state or sends
//!   data back (`POST`) must carry the `Origin`. No response carries a CORS
//!   header, and the page cannot be framed.
//! - A secret per launch: the URL handed to the browser holds only a
//!   one-time code, in its fragment (never sent in a request line, so never
//!   in a server's or proxy's log). The page exchanges it once (`POST
//!   /api/session`) for an `HttpOnly`, `SameSite=Strict` cookie named after
//!   the port and a token the page keeps in its own origin's storage; the
//!   code is then dead. Every API request needs both: cookies are shared by
//!   every port of a host, so a cookie alone would reach another local
//!   program's page on `127.0.0.1`. Neither secret appears in a log line,
//!   an error or a `Debug` form.
//! - The page gets what the governed facade hands any host: never
//!   credentials, tokens or a raw transport. Everything a server sent is
//!   shown as text (`textContent`; the page's Content-Security-Policy
//!   requires Trusted Types, so an HTML sink cannot be used even by
//!   mistake) and bounded.
//!
//! # Bounds
//!
//! Request bodies ([`PlaygroundConfig::max_body_bytes`]), event streams
//! open at once ([`PlaygroundConfig::max_event_streams`]), events kept for
//! a page that connects late ([`PlaygroundConfig::event_history`]), and each
//! event's size ([`MAX_EVENT_BYTES`]: a larger one is replaced by a notice
//! saying so). A stream that falls behind loses events and is told how many.
//! Connections open at once ([`PlaygroundConfig::max_connections`]: one
//! more is answered `503` and closed), and the time a connection may take
//! to send a request's head ([`PlaygroundConfig::head_timeout`]: one that
//! sends nothing, or trickles, is closed and gives its place back), so
//! another local user's process cannot hold every descriptor of the
//! process that also holds the hub.
#![forbid(unsafe_code)]

mod api;
mod error;
mod events;
mod guard;
mod json;
mod page;
mod questions;
mod secret;
mod server;

pub use error::PlaygroundError;
pub use events::MAX_EVENT_BYTES;
pub use questions::{Asked, MAX_QUESTIONS, PAGE_MODEL, QuestionHandler, QuestionKind, Questions};
pub use server::{Playground, PlaygroundConfig, SHUTDOWN_GRACE};
