//! One dependency for MCP hosts: connect to a server in one call, talk to it
//! through a typed session, or to many through the hub, with the wire types
//! at hand.
//!
//! ```toml
//! [dependencies]
//! mcp-client = { path = "…" }
//! tokio = { version = "1", features = ["rt-multi-thread", "macros"] }
//! ```
//!
//! ```no_run
//! use mcp_client::prelude::*;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let session = mcp_client::connect_stdio("my-mcp-server", ["--flag"]).await?;
//!     for tool in session.list_tools().await?.tools() {
//!         println!("{}", tool.name);
//!     }
//!     let result = session.call_tool("echo", json!({"text": "hello"})).await?;
//!     println!("{}", result.text());
//!     session.close().await;
//!     Ok(())
//! }
//! ```
//!
//! The crates underneath stay available under their own names
//! ([`types`], [`transport`], [`session`], [`hub`]) for everything the
//! prelude leaves out. The examples in `examples/` are one program per common
//! job (a stdio server, a hub of two servers, HTTP with a sampling handler).
//!
//! # Features
//!
//! Both on by default, each forwarded to the crates underneath:
//!
//! - `http`: the HTTP transports, `connect_http` / `connect_http_with`, and
//!   `HttpConfig` / `HttpConnector` in the prelude (reqwest, rustls).
//! - `validation`: tool arguments and structured results checked against
//!   the tools' schemas (jsonschema). Without it the checks are skipped; see
//!   [`session`]'s crate docs.
//!
//! `default-features = false` leaves a stdio-only client that compiles no
//! HTTP, TLS or JSON Schema crates.
#![forbid(unsafe_code)]

use std::sync::Arc;

pub use mcp_hub as hub;
pub use mcp_session as session;
pub use mcp_transport as transport;
pub use mcp_types as types;
/// `json!({…})` for arguments, from `serde_json`.
pub use serde_json::json;

use mcp_session::{Negotiation, Ready, Session, SessionConfig, SessionError};
use mcp_transport::{Connector, StdioConfig, StdioConnector};

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub use http::{connect_http, connect_http_with};

/// What most programs need: `use mcp_client::prelude::*;`.
pub mod prelude {
    pub use mcp_hub::{
        Authority, Facade, Hub, HubConfig, HubError, HubEvent, ServerAuthority, ServerSpec,
    };
    pub use mcp_session::{
        CallOptions, ClientHandlers, HandlerError, Page, Ready, Session, SessionConfig,
        SessionError,
    };
    #[cfg(feature = "http")]
    pub use mcp_transport::{HttpConfig, HttpConnector};
    pub use mcp_transport::{StdioConfig, StdioConnector};
    pub use mcp_types::{
        CallToolResult, ContentBlock, CreateMessageResult, ElicitResult, ProgressParams, Tool,
    };
    pub use serde_json::json;
}

/// Connects through `connector` and negotiates the protocol era (the 2026
/// probe, falling back to `initialize`), with `config`.
pub async fn connect(
    connector: impl Connector + 'static,
    config: SessionConfig,
) -> Result<Session<Ready>, SessionError> {
    let connector: Arc<dyn Connector> = Arc::new(connector);
    let session = Session::connect(connector, config).await?;
    session
        .negotiate(Negotiation::Auto)
        .await
        .map_err(mcp_session::Failed::into_error)
}

/// Starts `command` with `args` as a stdio server (a clean environment, the
/// child's process group ended on close) and negotiates with it.
pub async fn connect_stdio<A: Into<String>>(
    command: impl Into<String>,
    args: impl IntoIterator<Item = A>,
) -> Result<Session<Ready>, SessionError> {
    connect_stdio_with(command, args, SessionConfig::default()).await
}

/// [`connect_stdio`] with session settings (handlers, deadlines, bounds).
pub async fn connect_stdio_with<A: Into<String>>(
    command: impl Into<String>,
    args: impl IntoIterator<Item = A>,
    config: SessionConfig,
) -> Result<Session<Ready>, SessionError> {
    let stdio = StdioConfig::new(command).args(args.into_iter().map(Into::into));
    connect(StdioConnector::new(stdio), config).await
}

/// The README's code, compiled as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
