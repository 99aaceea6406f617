//! The HTTP transports: Streamable HTTP ([`HttpConnector`], both protocol
//! eras) and the legacy HTTP+SSE transport of 2024-11-05 ([`SseConnector`]).
//!
//! Both move frames, not meanings: a transport reads of a message only its
//! id (to know whether a reply answered the request it was sent for) and, in
//! the 2026-07-28 era, the id of a `notifications/cancelled`. What it does
//! with HTTP itself:
//!
//! - Every message is a POST; the reply is a JSON body or an event stream,
//!   both read within [`HttpConfig::max_body`] per body and per event.
//! - Legacy era: the `Mcp-Session-Id` of any successful reply is kept and sent
//!   on every later request. The server does not know the session any more
//!   when it answers a message that carried the id with `404` (as the
//!   specification says) or with `400` and an error naming the session (as
//!   servers built from the TypeScript SDK's examples do, `"Bad Request: No
//!   valid session ID provided"`). Then the id is forgotten, so the
//!   session's next `initialize` goes out without one, and: a request that
//!   met it fails with
//!   [`RequestFailure::SessionExpired`](crate::RequestFailure::SessionExpired);
//!   a notification, or the standalone GET stream opened again, delivers
//!   [`Inbound::SessionExpired`](crate::Inbound::SessionExpired). Later
//!   requests of that session fail as expired without being sent, until a
//!   new session id arrives. The standalone GET stream is opened after the
//!   first successful POST carrying a legacy version (405 tolerated). A
//!   reply stream that ends before its answer is resumed with GET +
//!   `Last-Event-ID` after the server's `retry` time (else
//!   [`HttpConfig::default_retry`]), at most
//!   [`HttpConfig::max_resume_attempts`] times in a row. Shutdown sends
//!   `DELETE` with the session id (405 tolerated).
//! - Modern era (frames whose `protocol_version` is `2026-07-28`): no session
//!   id, no GET stream, no resumption. Cancelling a request closes its stream:
//!   when the session sends `notifications/cancelled` for a request in this
//!   era, the transport drops that request's POST (closing its connection)
//!   and does not send the notification.
//! - Order: a notification or response is POSTed, and its answer's head
//!   awaited, before any later frame goes out, so messages reach the server
//!   in the order the session sent them; requests then run concurrently
//!   (at most [`HttpConfig::max_in_flight`]).
//! - A request that will get no answer through HTTP is reported as
//!   [`Inbound::RequestFailed`](crate::Inbound::RequestFailed): a non-2xx
//!   status (with the body's JSON-RPC error object and, for 401/403,
//!   `WWW-Authenticate`), a network failure, a time-out, a broken stream, an
//!   oversized reply, a header that is not legal header text; and a 2xx reply
//!   without the answer when no GET stream can bring it (before the legacy
//!   session is established, or in the modern era).
//!
//! Security: TLS is required except on loopback (`localhost`, 127.0.0.0/8,
//! `[::1]`); a URL with `user:password@` is refused; redirects are followed
//! only within the server's origin (credentials and custom headers never
//! reach another origin); the credential comes from a [`CredentialProvider`]
//! and its value is marked sensitive. No error's `Display` or `Debug` holds a
//! request body, a header value, a token or a URL path.
//!
//! Plain `http://` exchanges (loopback only) take a fast path, hyper's
//! HTTP/1.1 connection API over the transport's own keep-alive pool
//! (`lean`); https, a proxy from the environment, a host's injected client
//! and anything after a redirect take reqwest. A failure on the fast path
//! is [`TransportError::Io`](crate::TransportError::Io), on reqwest
//! [`TransportError::Http`](crate::TransportError::Http).
//!
//! The 2026-07-28 per-message headers (`Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`) come finished from the session (their rules are in
//! `mcp_types::headers`); this transport only sends them.

mod body;
mod client;
mod config;
mod control;
mod credentials;
mod envelope;
mod get_stream;
mod lean;
mod legacy_sse;
mod post;
mod streamable;

pub use config::{DEFAULT_MAX_BODY, DEFAULT_USER_AGENT, HttpConfig, MAX_REDIRECTS};
pub use credentials::{CredentialProvider, CredentialTarget, Refusal, StaticHeader};
pub use legacy_sse::SseConnector;
pub use streamable::HttpConnector;
