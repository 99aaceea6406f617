//! The one error type of this crate.

use std::path::PathBuf;

use mcp_types::ErrorCause;

/// What the gateway fails at. A host's request that fails is answered on the
/// wire (a JSON-RPC error or a tool result with `isError`); these are the
/// failures of the gateway itself and of its control socket.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// A setting is out of its range.
    #[error("invalid gateway setting `{setting}`: {problem}")]
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// The hub's events were taken already: the gateway follows them to
    /// know which servers are up and what changed.
    #[error("the hub's events were already taken; give the gateway a hub whose events are untaken")]
    EventsTaken,
    /// The host's connection failed (reading or writing).
    #[error("the host's connection failed")]
    Host(#[source] mcp_server::ServerError),
    /// The HTTP endpoint could not be set up: an exposure refused (not
    /// loopback without TLS and a bearer token), TLS files, the address.
    #[error(transparent)]
    Endpoint(mcp_server::ServerError),
    /// The control socket could not be made, or reached.
    #[error("control socket `{}`: {what}", path.display())]
    Control {
        /// The socket's path.
        path: PathBuf,
        /// What failed.
        what: &'static str,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// Something other than a socket is at the control socket's path; it
    /// was left alone.
    #[error("control socket `{}`: something other than a socket is there", path.display())]
    ControlPathTaken {
        /// The path.
        path: PathBuf,
    },
    /// The gateway refused a control command; its words (ours, about the
    /// operator's command) follow.
    #[error("the gateway refused the command: {0}")]
    ControlRefused(String),
    /// The hub refused (an unknown server, no such changed tool list
    /// waiting, a namespace that cannot be built).
    #[error(transparent)]
    Hub(#[from] mcp_hub::HubError),
}

impl GatewayError {
    /// Who or what caused the error.
    pub fn cause(&self) -> ErrorCause {
        match self {
            GatewayError::InvalidSetting { .. }
            | GatewayError::EventsTaken
            | GatewayError::ControlPathTaken { .. } => ErrorCause::Configuration,
            GatewayError::Host(e) | GatewayError::Endpoint(e) => e.cause(),
            GatewayError::Control { .. } => ErrorCause::Connection,
            GatewayError::ControlRefused(_) => ErrorCause::Input,
            GatewayError::Hub(e) => e.cause(),
        }
    }
}
