//! One MCP connection: a sans-IO protocol core, era negotiation and the
//! session typestate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_session::{Negotiation, Session, SessionConfig};
//! use mcp_transport::{StdioConfig, StdioConnector};
//!
//! let connector = StdioConnector::new(StdioConfig::new("my-mcp-server"));
//! let session = Session::connect(Arc::new(connector), SessionConfig::default()).await?;
//! let session = session.negotiate(Negotiation::Auto).await?;
//! let tools = session.list_tools().await?;
//! for tool in tools.tools() {
//!     println!("{}", tool.name);
//! }
//! let mut args = serde_json::Map::new();
//! args.insert("text".into(), "hello".into());
//! let result = session.call_tool("echo", args).await?;
//! println!("{result:?}");
//! session.close().await;
//! # Ok(()) }
//! ```
//!
//! Layers, bottom up:
//! - [`protocol::ProtocolCore`]: synchronous and deterministic (no tokio, no
//!   clock reads); the request table, ids, deadlines, progress, cancellation
//!   and message routing.
//! - the driver (private): one task per connection feeding the core with
//!   frames and time, delivering its outputs.
//! - [`Session`]: the typestate a host uses. A ready session is shared as
//!   `Arc<Session<Ready>>` by every task that calls through it; any of them
//!   can end it with [`Session::shutdown`] (or [`Session::kill`]), which
//!   fails the others' pending calls at once and keeps the diagnostics
//!   ([`Session::exit_info`]).
//!
//! Every call takes the same [`CallOptions`] (deadline, progress sink, result
//! limit), from the hub down to the frame on the wire, and every listing
//! returns the same [`Page`].
//!
//! # Features
//!
//! Both are on by default; a host that only starts local servers and does
//! its own argument checks can turn them off (`default-features = false`)
//! and compiles no HTTP, TLS or JSON Schema crates.
//!
//! - `http`: the HTTP transports of `mcp-transport` (forwarded to its own
//!   `http` feature). The session's HTTP-specific logic (2026 parameter
//!   headers, re-initialising an expired HTTP session) needs no HTTP crate
//!   and is always compiled; it is simply never reached over stdio.
//! - `validation`: tool schemas are compiled (with `jsonschema` for
//!   anything beyond a plain schema) and arguments and structured results
//!   are checked against them, as [`SessionConfig::validate_arguments`] and
//!   [`SessionConfig::validate_structured_content`] ask. Without it no schema
//!   is compiled and both checks are skipped whatever the configuration
//!   says: arguments reach the server unchecked and
//!   [`SessionError::InvalidArguments`] /
//!   [`SessionError::InvalidStructuredContent`] never occur. The first
//!   skipped check logs a `tracing` debug event saying so.
//!
//! Architecture Invariant: nothing waits forever. Every request has a
//! deadline (reset by progress only up to a hard maximum), and when the
//! transport ends every pending request fails at once with
//! [`SessionError::Dead`].
#![forbid(unsafe_code)]

mod busy_poll;
mod catalog;
mod config;
mod driver;
mod error;
mod events;
mod expiry;
mod handler;
mod negotiate;
mod page;
mod paginate;
mod params;
// Tool schema checks: compiled validators with the `validation` feature; an
// empty stand-in with the same items (nothing compiled, checks skipped)
// without it.
#[cfg(feature = "validation")]
mod plain_schema;
pub mod protocol;
mod rounds;
mod session;
#[cfg(feature = "skills")]
mod skills;
mod subscriptions;
mod surface;
mod tasks;
mod tools;
#[cfg(feature = "validation")]
mod validation;
#[cfg(not(feature = "validation"))]
#[path = "no_validation.rs"]
mod validation;

pub use catalog::ToolCatalog;
pub use config::{EraCache, Negotiation, SessionConfig};
pub use error::{MAX_URL_ELICITATIONS, SessionError};
pub use events::{DEFAULT_EVENT_QUEUE, SessionEvent, SessionEvents};
pub use handler::{
    ClientHandlers, Elicitation, ElicitationHandler, HandlerError, ProgressReporter, Roots,
    SamplingHandler,
};
/// The boxed future the handler traits return: `Box::pin(async move { … })`.
pub use mcp_transport::BoxFuture;
pub use page::Page;
pub use paginate::Paginator;
pub use protocol::{
    CoreLimits, NotificationBudget, NotificationIntake, ProtocolStats, RawResult, RequestTiming,
    Violation,
};
pub use rounds::RoundMethod;
pub use session::{Dead, Failed, Initialized, Ready, Session, Spawned};
#[cfg(feature = "skills")]
pub use skills::{
    LoadedSkill, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, MAX_SKILL_BYTES, MAX_SKILL_FILES,
    SkillCheck, check_skill_entry,
};
pub use subscriptions::{Subscription, SubscriptionEnd, SubscriptionEvent};
pub use surface::{ListKind, Listing};
pub use tasks::{TaskHandle, ToolCallStart};
pub use tools::CallOptions;
