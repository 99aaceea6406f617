//! The one error type of this crate.

use std::sync::Arc;
use std::time::Duration;

use mcp_session::SessionError;
use mcp_transport::{ExitInfo, TransportError};
use mcp_types::ErrorCause;
use mcp_types::text::Untrusted;

use crate::namespace::name::ServerName;

/// Why an operation was refused by the host's authority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DenyReason {
    /// The authority document's allow-list for that category does not name it
    /// (or is `[]`).
    NotAllowListed,
    /// The current principal lacks a permission the server or the tool is
    /// tagged with, or the server is untagged and the principal denies
    /// untagged servers.
    MissingPermission,
    /// The authority document does not name the server, so it gets nothing.
    NotNamed,
}

impl std::fmt::Display for DenyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DenyReason::NotAllowListed => "not on the authority document's allow-list",
            DenyReason::MissingPermission => "the current principal lacks the permission",
            DenyReason::NotNamed => "the authority document does not name this server",
        })
    }
}

/// What kind of thing an operation targeted (for [`HubError::Denied`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetKind {
    /// A tool.
    Tool,
    /// A resource URI.
    Resource,
    /// A prompt.
    Prompt,
    /// A skill, by the URI of its `SKILL.md`.
    Skill,
    /// The server as a whole (its catalogues, its helpers).
    Server,
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TargetKind::Tool => "tool",
            TargetKind::Resource => "resource",
            TargetKind::Prompt => "prompt",
            TargetKind::Skill => "skill",
            TargetKind::Server => "server",
        })
    }
}

/// Everything the hub can fail with.
///
/// `Display` is in our words. A server's own prose (JSON-RPC error messages,
/// stderr) is never part of it: reach it through [`HubError::server_message`]
/// and [`HubError::stderr_tail`], and show it labelled as the server's. Names
/// and URIs a server (or a caller) chose are shown escaped and bounded
/// ([`Untrusted`]); the fields keep them as they were.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubError {
    /// A server name is not usable (empty, too long, or a character outside
    /// `[A-Za-z0-9_-]`).
    #[error("`{}` is not a valid server name: {problem}", Untrusted::new(.name))]
    InvalidServerName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Two servers were registered under the same name.
    #[error("a server named `{0}` is already registered")]
    DuplicateServer(ServerName),
    /// No server is registered under this name.
    #[error("no server named `{}` is registered", Untrusted::new(.name))]
    UnknownServer {
        /// The name asked for.
        name: String,
    },
    /// A setting is out of its allowed range.
    #[error("invalid setting `{setting}`: {problem}")]
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The authority document could not be read.
    #[error("could not read the authority document")]
    AuthorityRead(#[source] std::io::Error),
    /// The authority document is larger than its bound.
    #[error("the authority document is larger than {limit} bytes")]
    AuthorityTooLarge {
        /// The bound.
        limit: u64,
    },
    /// The authority document is not valid.
    #[error("the authority document is not valid")]
    AuthorityParse(#[source] serde_json::Error),
    /// The authority document names a server that is not registered (a typo
    /// there would otherwise leave the real server unrestricted).
    #[error(
        "the authority document names `{}`, which is not a registered server",
        Untrusted::new(.name)
    )]
    AuthorityUnknownServer {
        /// The name in the document.
        name: String,
    },
    /// Under the `reject` policy, a server offers a tool whose name an
    /// earlier-registered server already has; the later server is refused.
    #[error(
        "server `{server}` is refused: its tool `{}` collides with server `{existing}`",
        Untrusted::new(.tool)
    )]
    Collision {
        /// The refused server.
        server: ServerName,
        /// The colliding tool.
        tool: String,
        /// The earlier-registered server that keeps the name.
        existing: ServerName,
    },
    /// A required server did not start, so the hub did not start.
    #[error("required server `{server}` did not start")]
    RequiredServerFailed {
        /// The server.
        server: ServerName,
        /// Why.
        #[source]
        source: Arc<HubError>,
    },
    /// Starting a server (connect, negotiate, eager discovery) took longer
    /// than its start deadline.
    #[error("server `{server}` did not become ready within {after:?} (`start_timeout`)")]
    StartTimeout {
        /// The server.
        server: ServerName,
        /// The deadline.
        after: Duration,
    },
    /// A server could not be started because this process ran out of file
    /// descriptors.
    #[error(
        "server `{server}` could not be started: this process reached its open file descriptor limit (soft {soft}, hard {hard}); raise `ulimit -n` or run fewer servers"
    )]
    DescriptorLimit {
        /// The server.
        server: ServerName,
        /// The soft limit at the time (`None` = unlimited).
        soft: LimitValue,
        /// The hard limit at the time.
        hard: LimitValue,
    },
    /// A session operation failed. The message carries the session error's
    /// words and those of its causes (so `source()` has nothing more to add).
    #[error("server `{server}`: {}", mcp_types::text::Chain(error))]
    Session {
        /// The server.
        server: ServerName,
        /// The session's error.
        error: SessionError,
    },
    /// The server died while the request was in flight. The request is not
    /// replayed: it may or may not have taken effect.
    #[error("server `{server}` died while `{method}` was in flight; it was not replayed ({exit})")]
    ServerDied {
        /// The server.
        server: ServerName,
        /// The method in flight.
        method: &'static str,
        /// How the connection ended (the stderr tail is inside).
        exit: ExitInfo,
    },
    /// The server's connection ended outside of any request of ours: a
    /// local server exited, crashed or closed its output; a remote one was
    /// replaced by a release that speaks another protocol version. (The
    /// words say "connection", not "exited": a remote server has no process
    /// of ours; `exit` says when one exited.)
    #[error("the connection to server `{server}` ended: {exit}")]
    Exited {
        /// The server.
        server: ServerName,
        /// How the connection ended (the stderr tail is inside).
        exit: ExitInfo,
    },
    /// The server is not running now (starting, restarting, failed or
    /// stopped); the request was refused at once.
    #[error("server `{server}` is not available ({status})")]
    ServerUnavailable {
        /// The server.
        server: ServerName,
        /// What it is doing instead.
        status: crate::ServerStatusKind,
    },
    /// No tool is exposed under this name.
    #[error("no tool named `{}` is exposed", Untrusted::new(.name))]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// A later `input_required` round of a tool call
    /// ([`crate::Hub::call_tool_round`]): the name no longer routes to the
    /// server and tool the first round went to; nothing was sent.
    #[error("`{}` no longer names the tool an earlier round of the call went to", Untrusted::new(.name))]
    RoundRouteChanged {
        /// The name asked for.
        name: String,
    },
    /// The bare name is shared by several servers; one of the qualified names
    /// must be used.
    #[error("`{}` is ambiguous; use one of: {}", Untrusted::new(.name), Names(.candidates))]
    Ambiguous {
        /// The bare name.
        name: String,
        /// The qualified names it could mean, in registration order.
        candidates: Vec<String>,
    },
    /// The host's authority refused the operation; nothing was sent.
    #[error("{kind} `{}` of server `{server}` is denied: {reason}", Untrusted::new(.name))]
    Denied {
        /// The server.
        server: ServerName,
        /// What kind of target.
        kind: TargetKind,
        /// Its name (tool, URI or prompt).
        name: String,
        /// Why.
        reason: DenyReason,
    },
    /// The host's approval hook denied the call; nothing was sent.
    #[error("the call to `{}` on server `{server}` was not approved", Untrusted::new(.tool))]
    NotApproved {
        /// The server.
        server: ServerName,
        /// The tool (local name).
        tool: String,
    },
    /// The result is larger than the server's `max_content_bytes`; it was
    /// refused whole rather than cut.
    #[error(
        "the result from server `{server}` is {size} bytes, over its limit of {limit} bytes (`max_content_bytes`)"
    )]
    ContentTooLarge {
        /// The server.
        server: ServerName,
        /// The result's length as the server sent it.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The server's queue of waiting calls is full.
    #[error(
        "server `{server}` has {limit} calls waiting already (`call_limits.max_queued`); refused"
    )]
    QueueFull {
        /// The server.
        server: ServerName,
        /// The queue bound.
        limit: usize,
    },
    /// A call waited longer than the queue bound for its turn.
    #[error(
        "a call to server `{server}` waited {after:?} for its turn (`call_limits.queue_timeout`); refused"
    )]
    QueueTimeout {
        /// The server.
        server: ServerName,
        /// How long it waited.
        after: Duration,
    },
    /// The server does not offer this operation (its capabilities lack it).
    #[error("server `{server}` does not support `{operation}`")]
    Unsupported {
        /// The server.
        server: ServerName,
        /// The method.
        operation: &'static str,
    },
    /// A tool's arguments did not serialise to a JSON object (they were an
    /// array, a string, a number or a boolean); nothing was sent. `()`, a
    /// unit struct and `null` count as no arguments.
    #[error("arguments for tool `{}` must be a JSON object, not {found}", Untrusted::new(.tool))]
    ArgumentsNotAnObject {
        /// The tool, as the caller named it.
        tool: String,
        /// What they were instead (`an array`, `a string` …).
        found: &'static str,
    },
    /// A tool's arguments could not be serialised to JSON at all (their
    /// `Serialize` implementation failed, or a map has keys that are not
    /// strings); nothing was sent.
    #[error("arguments for tool `{}` could not be serialised to JSON", Untrusted::new(.tool))]
    ArgumentsNotSerializable {
        /// The tool, as the caller named it.
        tool: String,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// A context helper tool was called with arguments of the wrong shape.
    #[error("helper `{}` called with bad arguments: {problem}", Untrusted::new(.helper))]
    HelperArguments {
        /// The helper's exposed name.
        helper: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A model's tool call could not be read.
    #[error("the {format} tool call is malformed: {problem}")]
    MalformedToolCall {
        /// `anthropic` or `openai`.
        format: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// A name has no provider-safe form, so the namespace cannot be exported
    /// in a provider's format. Every namespace carries a provider-safe alias
    /// for each name that is not safe, so this remains only for an alias
    /// that would collide even with a 16-digit hash suffix.
    #[error(
        "exposed name `{}` is not provider-safe ([A-Za-z0-9_-], at most 64 characters)",
        Untrusted::new(.name)
    )]
    NotProviderSafe {
        /// The name.
        name: String,
    },
    /// Making names provider-safe would still leave two equal names.
    #[error(
        "provider-safe names collide even with hash suffixes: `{}`",
        Untrusted::new(.name)
    )]
    ProviderNameCollision {
        /// The colliding safe name.
        name: String,
    },
    /// The merged namespace would exceed its bound; the change was not
    /// adopted.
    #[error("the namespace would expose more than {limit} tools (`max_exposed_tools`)")]
    NamespaceTooLarge {
        /// The bound.
        limit: usize,
    },
    /// There is no pending snapshot of this generation to adopt or discard.
    #[error("server `{server}` has no pending snapshot of generation {generation}")]
    NoPendingSnapshot {
        /// The server.
        server: ServerName,
        /// The generation asked for.
        generation: u64,
    },
    /// The host chose a subscription mechanism the server's era does not
    /// offer (`subscriptions/listen` is 2026-07-28 only, `resources/subscribe`
    /// legacy only); the hub never switches on its own.
    #[error(
        "subscription to `{}` on server `{server}` asks for `{mechanism}`, which a {era:?}-era session does not offer",
        Untrusted::new(.uri)
    )]
    MechanismMismatch {
        /// The server.
        server: ServerName,
        /// The URI.
        uri: String,
        /// What the host asked for.
        mechanism: crate::Mechanism,
        /// The session's era.
        era: mcp_types::Era,
    },
    /// The server did not accept a subscription to the URI (its
    /// acknowledgement left it out, or the stream ended before one).
    #[error(
        "server `{server}` did not accept a subscription to `{}`",
        Untrusted::new(.uri)
    )]
    SubscriptionRefused {
        /// The server.
        server: ServerName,
        /// The URI (for a task watch, the task's id).
        uri: String,
    },
    /// A subscription could not be established at start, so the hub did not
    /// start.
    #[error(
        "the subscription to `{}` on server `{server}` could not be established",
        Untrusted::new(.uri)
    )]
    SubscriptionFailed {
        /// The server.
        server: ServerName,
        /// The URI.
        uri: String,
        /// Why.
        #[source]
        source: Arc<HubError>,
    },
    /// The hub is shutting down.
    #[error("the hub is shutting down")]
    ShuttingDown,
}

/// `arguments` as the JSON object a tool call carries: the session's rule
/// (`Session::call_tool`), applied once where the hub takes them, so the
/// approval hook sees the object and a refusal sends nothing. An object is
/// kept, `null` (`()`, a unit struct, `None`) is no arguments, anything
/// else is refused by name.
pub(crate) fn tool_arguments(
    tool: &str,
    arguments: impl serde::Serialize,
) -> Result<serde_json::Map<String, serde_json::Value>, HubError> {
    let value =
        serde_json::to_value(arguments).map_err(|source| HubError::ArgumentsNotSerializable {
            tool: tool.to_owned(),
            source,
        })?;
    mcp_types::arguments_object(value).map_err(|found| HubError::ArgumentsNotAnObject {
        tool: tool.to_owned(),
        found,
    })
}

/// Names inside a message: each escaped and bounded, joined by `, `.
struct Names<'a>(&'a [String]);

impl std::fmt::Display for Names<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", Untrusted::new(name))?;
        }
        Ok(())
    }
}

/// A resource limit value: a number or unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitValue(pub Option<u64>);

impl std::fmt::Display for LimitValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("unlimited"),
        }
    }
}

impl HubError {
    /// The server's own message, when the server sent one. It is the server's
    /// prose: show it labelled as such.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            HubError::Session { error, .. } => error.server_message(),
            HubError::RequiredServerFailed { source, .. }
            | HubError::SubscriptionFailed { source, .. } => source.server_message(),
            _ => None,
        }
    }

    /// The pages a server's `-32042` answer asks the user to open before the
    /// request can go through (see [`SessionError::url_elicitations`]).
    pub fn url_elicitations(
        &self,
    ) -> Option<Vec<Result<mcp_session::Elicitation, mcp_session::HandlerError>>> {
        match self {
            HubError::Session { error, .. } => error.url_elicitations(),
            _ => None,
        }
    }

    /// The tool result as the server sent it, when the session refused it
    /// for breaking the tool's output schema (see
    /// [`SessionError::received_result`]).
    pub fn received_result(&self) -> Option<&mcp_types::CallToolResult> {
        match self {
            HubError::Session { error, .. } => error.received_result(),
            _ => None,
        }
    }

    /// The diagnostics of the ended connection this error carries, if any.
    fn exit_info(&self) -> Option<&ExitInfo> {
        match self {
            HubError::Session { error, .. } => error.exit_info(),
            HubError::ServerDied { exit, .. } | HubError::Exited { exit, .. } => Some(exit),
            HubError::RequiredServerFailed { source, .. } => source.exit_info(),
            _ => None,
        }
    }

    /// The last bytes a dead server wrote to stderr, when known.
    pub fn stderr_tail(&self) -> Option<&str> {
        self.exit_info()?.stderr_tail.as_deref()
    }

    /// The start of the first line the server sent that was not a JSON-RPC
    /// message, when the error carries a dead session's diagnostics (see
    /// [`SessionError::unparsed_line`]).
    pub fn unparsed_line(&self) -> Option<&str> {
        self.exit_info()?.unparsed_line.as_deref()
    }

    /// The server the error concerns, when it concerns one.
    pub fn server(&self) -> Option<&ServerName> {
        match self {
            HubError::DuplicateServer(server)
            | HubError::Collision { server, .. }
            | HubError::RequiredServerFailed { server, .. }
            | HubError::StartTimeout { server, .. }
            | HubError::DescriptorLimit { server, .. }
            | HubError::Session { server, .. }
            | HubError::ServerDied { server, .. }
            | HubError::Exited { server, .. }
            | HubError::ServerUnavailable { server, .. }
            | HubError::Denied { server, .. }
            | HubError::NotApproved { server, .. }
            | HubError::ContentTooLarge { server, .. }
            | HubError::QueueFull { server, .. }
            | HubError::QueueTimeout { server, .. }
            | HubError::Unsupported { server, .. }
            | HubError::NoPendingSnapshot { server, .. }
            | HubError::MechanismMismatch { server, .. }
            | HubError::SubscriptionRefused { server, .. }
            | HubError::SubscriptionFailed { server, .. } => Some(server),
            _ => None,
        }
    }

    /// Who or what caused the error.
    ///
    /// Errors that wrap another (a session's error, the reason a required
    /// server failed or a subscription could not be made) give the inner
    /// error's cause. Of the hub's own:
    ///
    /// - A server that could not start in time, ran into the descriptor
    ///   limit, died, exited or is not running now is a lost
    ///   [`ErrorCause::Connection`].
    /// - A name asked for that is not there or is ambiguous, a pending
    ///   snapshot that does not exist, tool arguments that are not a JSON
    ///   object (or not JSON at all), helper arguments and a model's
    ///   malformed tool call are [`ErrorCause::Input`].
    /// - The authority, the approval hook and the `reject` collision policy
    ///   are [`ErrorCause::Policy`]; an invalid setting, server name,
    ///   authority document, names that are not provider-safe and a
    ///   subscription mechanism the server's era lacks are
    ///   [`ErrorCause::Configuration`].
    /// - A server that does not offer the operation or does not accept a
    ///   subscription is [`ErrorCause::Server`].
    /// - The content, queue and namespace bounds are [`ErrorCause::Bound`];
    ///   shutting down is [`ErrorCause::Cancelled`].
    pub fn cause(&self) -> ErrorCause {
        match self {
            HubError::Session { error, .. } => error.cause(),
            HubError::RequiredServerFailed { source, .. }
            | HubError::SubscriptionFailed { source, .. } => source.cause(),
            HubError::StartTimeout { .. }
            | HubError::DescriptorLimit { .. }
            | HubError::ServerDied { .. }
            | HubError::Exited { .. }
            | HubError::ServerUnavailable { .. } => ErrorCause::Connection,
            HubError::UnknownServer { .. }
            | HubError::UnknownTool { .. }
            | HubError::RoundRouteChanged { .. }
            | HubError::Ambiguous { .. }
            | HubError::NoPendingSnapshot { .. }
            | HubError::ArgumentsNotAnObject { .. }
            | HubError::ArgumentsNotSerializable { .. }
            | HubError::HelperArguments { .. }
            | HubError::MalformedToolCall { .. } => ErrorCause::Input,
            HubError::Denied { .. } | HubError::NotApproved { .. } | HubError::Collision { .. } => {
                ErrorCause::Policy
            }
            HubError::InvalidServerName { .. }
            | HubError::DuplicateServer(_)
            | HubError::InvalidSetting { .. }
            | HubError::AuthorityRead(_)
            | HubError::AuthorityTooLarge { .. }
            | HubError::AuthorityParse(_)
            | HubError::AuthorityUnknownServer { .. }
            | HubError::NotProviderSafe { .. }
            | HubError::ProviderNameCollision { .. }
            | HubError::MechanismMismatch { .. } => ErrorCause::Configuration,
            HubError::Unsupported { .. } | HubError::SubscriptionRefused { .. } => {
                ErrorCause::Server
            }
            HubError::ContentTooLarge { .. }
            | HubError::QueueFull { .. }
            | HubError::QueueTimeout { .. }
            | HubError::NamespaceTooLarge { .. } => ErrorCause::Bound,
            HubError::ShuttingDown => ErrorCause::Cancelled,
        }
    }

    /// A short stable name of the error's kind, for audit records and logs
    /// (never carries data).
    pub fn kind(&self) -> &'static str {
        match self {
            HubError::InvalidServerName { .. } => "invalid_server_name",
            HubError::DuplicateServer(_) => "duplicate_server",
            HubError::UnknownServer { .. } => "unknown_server",
            HubError::InvalidSetting { .. } => "invalid_setting",
            HubError::AuthorityRead(_) => "authority_read",
            HubError::AuthorityTooLarge { .. } => "authority_too_large",
            HubError::AuthorityParse(_) => "authority_parse",
            HubError::AuthorityUnknownServer { .. } => "authority_unknown_server",
            HubError::Collision { .. } => "collision",
            HubError::RequiredServerFailed { .. } => "required_server_failed",
            HubError::StartTimeout { .. } => "start_timeout",
            HubError::DescriptorLimit { .. } => "descriptor_limit",
            HubError::Session { .. } => "session",
            HubError::ServerDied { .. } => "server_died",
            HubError::Exited { .. } => "exited",
            HubError::ServerUnavailable { .. } => "server_unavailable",
            HubError::UnknownTool { .. } => "unknown_tool",
            HubError::RoundRouteChanged { .. } => "round_route_changed",
            HubError::Ambiguous { .. } => "ambiguous",
            HubError::Denied { .. } => "denied",
            HubError::NotApproved { .. } => "not_approved",
            HubError::ContentTooLarge { .. } => "content_too_large",
            HubError::QueueFull { .. } => "queue_full",
            HubError::QueueTimeout { .. } => "queue_timeout",
            HubError::Unsupported { .. } => "unsupported",
            HubError::ArgumentsNotAnObject { .. } => "arguments_not_an_object",
            HubError::ArgumentsNotSerializable { .. } => "arguments_not_serializable",
            HubError::HelperArguments { .. } => "helper_arguments",
            HubError::MalformedToolCall { .. } => "malformed_tool_call",
            HubError::NotProviderSafe { .. } => "not_provider_safe",
            HubError::ProviderNameCollision { .. } => "provider_name_collision",
            HubError::NamespaceTooLarge { .. } => "namespace_too_large",
            HubError::NoPendingSnapshot { .. } => "no_pending_snapshot",
            HubError::MechanismMismatch { .. } => "mechanism_mismatch",
            HubError::SubscriptionRefused { .. } => "subscription_refused",
            HubError::SubscriptionFailed { .. } => "subscription_failed",
            HubError::ShuttingDown => "shutting_down",
        }
    }

    /// A copy of an error made only of plain data (`None` for errors that
    /// carry a source error, which cannot be copied).
    pub(crate) fn try_clone(&self) -> Option<HubError> {
        Some(match self {
            HubError::NamespaceTooLarge { limit } => HubError::NamespaceTooLarge { limit: *limit },
            HubError::ProviderNameCollision { name } => {
                HubError::ProviderNameCollision { name: name.clone() }
            }
            HubError::Collision {
                server,
                tool,
                existing,
            } => HubError::Collision {
                server: server.clone(),
                tool: tool.clone(),
                existing: existing.clone(),
            },
            HubError::ShuttingDown => HubError::ShuttingDown,
            _ => return None,
        })
    }

    /// Wraps a session error for `server`, naming the two cases a host must
    /// tell apart: the server died under the request, and the descriptor
    /// limit stopped a spawn.
    pub(crate) fn from_session(
        server: &ServerName,
        method: &'static str,
        error: SessionError,
    ) -> HubError {
        match error {
            SessionError::Dead(exit) => HubError::ServerDied {
                server: server.clone(),
                method,
                exit,
            },
            SessionError::ResultTooLarge { size, limit, .. } => HubError::ContentTooLarge {
                server: server.clone(),
                size,
                limit,
            },
            SessionError::Transport(TransportError::TooManyOpenFiles { .. }) => {
                let (soft, hard) = crate::servers::fdlimit::current();
                HubError::DescriptorLimit {
                    server: server.clone(),
                    soft,
                    hard,
                }
            }
            error => HubError::Session {
                server: server.clone(),
                error,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "note://a\u{1b}]52;c;ZXZpbA==\u{7}\u{202e}";
    const ESCAPED: &str = "note://a\\u{1b}]52;c;ZXZpbA==\\u{7}\\u{202e}";

    #[test]
    fn names_and_uris_a_server_chose_are_escaped_in_display() {
        let server = ServerName::new("notes").unwrap();
        for err in [
            HubError::Denied {
                server: server.clone(),
                kind: TargetKind::Resource,
                name: URI.into(),
                reason: DenyReason::NotAllowListed,
            },
            HubError::SubscriptionRefused {
                server: server.clone(),
                uri: URI.into(),
            },
            HubError::MechanismMismatch {
                server: server.clone(),
                uri: URI.into(),
                mechanism: crate::Mechanism::Listen,
                era: mcp_types::Era::Legacy,
            },
            HubError::NotApproved {
                server: server.clone(),
                tool: URI.into(),
            },
            HubError::NotProviderSafe { name: URI.into() },
            HubError::ArgumentsNotAnObject {
                tool: URI.into(),
                found: "an array",
            },
        ] {
            let shown = err.to_string();
            assert!(
                !shown.contains(['\u{1b}', '\u{7}', '\u{202e}']),
                "{shown:?}"
            );
            assert!(shown.contains(ESCAPED), "{shown:?}");
        }
    }

    #[test]
    fn causes_of_representative_hub_errors() {
        let server = ServerName::new("notes").unwrap();
        let exit = ExitInfo::without_process(mcp_transport::CloseReason::EndOfStream);
        let died = HubError::ServerDied {
            server: server.clone(),
            method: "tools/call",
            exit,
        };
        assert_eq!(died.cause(), ErrorCause::Connection);
        assert_eq!(
            HubError::Denied {
                server: server.clone(),
                kind: TargetKind::Tool,
                name: "t".into(),
                reason: DenyReason::NotAllowListed,
            }
            .cause(),
            ErrorCause::Policy
        );
        assert_eq!(
            HubError::Ambiguous {
                name: "search".into(),
                candidates: vec![]
            }
            .cause(),
            ErrorCause::Input
        );
        assert_eq!(
            HubError::ContentTooLarge {
                server: server.clone(),
                size: 2,
                limit: 1
            }
            .cause(),
            ErrorCause::Bound
        );
        assert_eq!(HubError::ShuttingDown.cause(), ErrorCause::Cancelled);
        // Wrappers give their inner error's cause, through every level.
        let session = HubError::Session {
            server: server.clone(),
            error: SessionError::UnknownTool { tool: "t".into() },
        };
        let required = HubError::RequiredServerFailed {
            server: server.clone(),
            source: Arc::new(HubError::Session {
                server: server.clone(),
                error: SessionError::Transport(TransportError::CredentialsInUrl),
            }),
        };
        assert_eq!(session.cause(), ErrorCause::Input);
        assert_eq!(required.cause(), ErrorCause::Configuration);
        assert_eq!(
            HubError::Unsupported {
                server,
                operation: "resources/read"
            }
            .cause(),
            ErrorCause::Server
        );
    }

    #[test]
    fn a_long_name_is_bounded() {
        let err = HubError::UnknownTool {
            name: "n".repeat(50_000),
        };
        let shown = err.to_string();
        assert!(shown.len() < 300, "{} bytes", shown.len());
        assert!(shown.contains("(49800 more bytes)"), "{shown}");
    }
}
