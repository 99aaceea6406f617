//! Many MCP servers behind one tool namespace, under the host's authority.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_hub::{Authority, Hub, HubConfig, ServerSpec, ToolCall};
//! use mcp_transport::{StdioConfig, StdioConnector};
//!
//! let stdio = |cmd: &str| StdioConnector::new(StdioConfig::new(cmd));
//! let hub = Hub::builder(HubConfig::default())
//!     .server(ServerSpec::new("files", stdio("files-server")).required())
//!     .server(ServerSpec::new("github", stdio("github-server")))
//!     .authority(Authority::from_file("authority.json".as_ref())?)
//!     .start() // a bad name, a duplicate, a bad setting: reported here
//!     .await?;
//! // Provider-safe names (`files/read` goes out as `files_read`).
//! let tools = mcp_hub::anthropic_tools(&hub.namespace())?; // hand to the model
//! # let model_block = serde_json::json!({});
//! let call = ToolCall::from_anthropic(&model_block)?;       // the model's tool_use
//! let result = hub.call(&call.name, call.arguments).await?;
//! // Host code: arguments from a `json!` value, a map or a struct; `()` for none.
//! let read = hub.call("files/read", serde_json::json!({"path": "README.md"})).await?;
//! println!("{tools}\n{result:?}\n{read:?}");
//! hub.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Pieces
//!
//! - **Registry and lifecycle** ([`HubBuilder`], [`ServerSpec`]): servers
//!   under host-chosen [`ServerName`]s, each with its own connector,
//!   negotiation, deadlines and limits, started in parallel. Status events
//!   ([`HubEvent`]) per server; required or optional; restart with
//!   exponential back-off and jitter capped at 30 s ([`Backoff`]), the host
//!   told after three failures in a row, or `restart: never`. Shutdown is
//!   parallel and bounded.
//! - **Namespace** ([`Namespace`]): immutable, rebuilt from per-server
//!   [`ToolSnapshot`]s in registration order under a [`CollisionPolicy`]
//!   (`prefix`, `reject`, `first`). Each name that is not provider-safe
//!   (`[A-Za-z0-9_-]`, at most 64) has a provider-safe alias (stable FNV-1a
//!   hash suffixes where sanitising collides) that exports use and calls
//!   accept; [`HubConfig::provider_safe_names`] exposes those forms as the
//!   names themselves. `list_changed` yields a new snapshot, held for
//!   review by default (an event with its diff; [`Hub::adopt`] or
//!   [`Hub::discard`]) or, as the host's explicit choice, adopted
//!   automatically ([`Adoption`]). [`anthropic_tools`] and [`openai_tools`]
//!   write Anthropic and OpenAI tool lists; [`ToolCall`] maps a model's call
//!   back.
//! - **Authority** ([`Authority`], [`Principal`]): no document
//!   ([`Authority::unrestricted`]) or a document naming its servers (an
//!   unnamed server gets nothing); allow-lists per server and category, permission tags checked against the principal's grants,
//!   [`ContentLimit`] on results, an [`ApprovalHook`]; tool annotations are
//!   passed raw and never used as policy.
//! - **What the model and host code see**: context helper tools
//!   ([`Helper`]) for servers advertising resources or prompts; a governed,
//!   audited [`Facade`] for host code; per-server [`CallLimits`]; retries of
//!   transient failures for idempotent requests only ([`RetryPolicy`]);
//!   eager or lazy [`Discovery`].
//!
//! - **Resource subscriptions** ([`SubscriptionSpec`], [`ResourceHandler`]):
//!   one task per subscribed URI, over the mechanism the host chose
//!   ([`Mechanism::ResourcesSubscribe`] for legacy servers,
//!   [`Mechanism::Listen`] for 2026-07-28 ones; a mismatch with the server's
//!   era is [`HubError::MechanismMismatch`], never a silent switch). The
//!   subscription is made before the first read; the handler gets
//!   [`Reason::Start`] (`read_on_start`), [`Reason::Update`] on every change,
//!   [`Reason::Reconnect`] (`read_on_reconnect`) after the stream ended and
//!   was made again with back-off (the server's restart back-off, capped at
//!   30 s). Each call runs under `handler_timeout` (default 30 s); contents
//!   equal to the last successfully handled ones are not handed on again
//!   ([`SubscriptionStats`], [`HubEvent::HandlerTimedOut`]). A subscription
//!   that cannot be made at start fails the start
//!   ([`HubError::SubscriptionFailed`]); URIs outside the authority's
//!   allow-list are refused. Shutdown ends the streams (2026: the listen
//!   request is cancelled; legacy: `resources/unsubscribe`) before it closes
//!   the sessions. A host that passes updates on to clients of its own (the
//!   gateway) watches a URI instead ([`Hub::watch_resource`],
//!   [`ResourceWatch`]): each update handed on unread, under the same
//!   allow-list, and not made again when its stream ends.
//!
//! Tool `list_changed` is followed in both eras: legacy servers send it
//! unsolicited; for a 2026-07-28 server the hub keeps a
//! `subscriptions/listen` stream (tools list changes) open per session. A
//! stream the server ends is opened again after a back-off (500 ms doubling
//! to 30 s; given up after 10 consecutive ends) and the tools are listed
//! again, since a change may have been missed in between.
//!
//! # Descriptors
//!
//! Each stdio server costs three descriptors here while it runs (its
//! stdin, stdout and stderr pipes; it is reaped on `SIGCHLD`, without a
//! pidfd), or two once 40 % of the soft limit is in use (its stdin and
//! stdout then share one socket pair, a few microseconds slower per round
//! trip), so a hard limit of 1024 holds over 400 servers. At start the hub raises the soft `RLIMIT_NOFILE`
//! toward the hard limit ([`HubConfig::raise_descriptor_limit`]); a spawn
//! that still runs out fails with [`HubError::DescriptorLimit`], which says
//! so.
//!
//! # Noisy servers
//!
//! A server's notifications are judged by their method before anything
//! parses them: log messages the host did not ask for
//! ([`ServerSpec::log_level`]) are dropped at once, and log messages and
//! progress beyond the server's [`NotificationBudget`]
//! ([`ServerSpec::notification_budget`]) are dropped and counted
//! ([`ServerStatus::notifications_over_budget`],
//! [`HubEvent::NotificationsDropped`]). Responses, server requests and
//! `list_changed` are never dropped, so a server flooding its log costs the
//! other servers little and still answers its own calls.
#![forbid(unsafe_code)]

mod builder;
mod config;
mod error;
mod events;
mod facade;
mod governance;
mod hub;
mod namespace;
mod servers;
mod shared;
mod subscriptions;

pub use builder::HubBuilder;
pub use config::{
    Adoption, Backoff, CallLimits, CollisionPolicy, ContentLimit, Discovery, HubConfig,
    RestartPolicy, RetryPolicy, ServerSpec,
};
pub use error::{DenyReason, HubError, LimitValue, TargetKind};
pub use events::{
    AuditOutcome, AuditRecord, AuditSink, HubEvent, HubEvents, MAX_LOG_EVENT_BYTES,
    MAX_TASK_STATUS_EVENT_BYTES, Operation,
};
pub use facade::Facade;
pub use governance::approval::{Approval, ApprovalHook, ApprovalRequest};
pub use governance::authority::{
    Authority, MAX_AUTHORITY_BYTES, Principal, ServerAuthority, Untagged,
};
pub use governance::rounds::{RoundRoute, ToolRound};
pub use hub::{Hub, ShutdownReport};
/// The settings of one call: the session's own type, passed through unchanged.
pub use mcp_session::CallOptions;
/// A resource handler's error: the session's handler error.
pub use mcp_session::HandlerError;
/// How many log messages and progress notifications a server may send
/// ([`ServerSpec::notification_budget`]).
pub use mcp_session::NotificationBudget;
/// One page of a catalogue: the session's own type.
pub use mcp_session::Page;
pub use namespace::export::{
    MAX_TOOL_CALL_ARGUMENT_BYTES, ToolCall, anthropic_tools, openai_tools,
};
pub use namespace::helper::Helper;
pub use namespace::name::{Separator, ServerName};
pub use namespace::safe_names::{MAX_SAFE_LEN, is_provider_safe};
pub use namespace::snapshot::{SnapshotDiff, ToolSnapshot};
pub use namespace::{ExposedTool, Namespace, NamespaceNote, Route, RouteTarget};
pub use servers::fdlimit::DescriptorLimit;
pub use servers::server::{ServerInfo, ServerStatus, ServerStatusKind};
pub use subscriptions::{
    MAX_HANDLER_TIMEOUT, MAX_PROGRESS_MESSAGE_BYTES, MAX_SUBSCRIPTION_URI_BYTES,
    MAX_SUBSCRIPTIONS_PER_SERVER, MAX_WATCHED_TASK_ID_BYTES, Mechanism, Reason, ResourceEvent,
    ResourceHandler, ResourceWatch, SubscriptionSpec, SubscriptionStats, TaskWatch,
};
