//! The one error type of this crate.

use std::net::SocketAddr;

use mcp_types::ErrorCause;

/// What can stop the playground from starting or serving. Requests the
/// playground refuses are answered, not errors: they never end it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlaygroundError {
    /// The address is not a loopback address: the playground listens on
    /// loopback only.
    #[error("the playground listens on loopback only, not on {address}")]
    NotLoopback {
        /// The address asked for.
        address: SocketAddr,
    },
    /// The listening socket could not be opened (the port is taken, …).
    #[error("cannot listen on {address}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The operating system gave no random bytes for the launch secrets.
    #[error("no random bytes for the playground's secrets")]
    Random(#[source] getrandom::Error),
    /// A setting is out of its allowed range.
    #[error("invalid playground setting `{setting}`: {problem}")]
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl PlaygroundError {
    /// Who or what caused the error.
    ///
    /// A non-loopback address and a setting out of range are the caller's
    /// [`ErrorCause::Configuration`]; a port that cannot be listened on, no
    /// randomness and a failed listener are this machine's
    /// [`ErrorCause::Connection`] (as a server that cannot be started).
    pub fn cause(&self) -> ErrorCause {
        match self {
            PlaygroundError::NotLoopback { .. } | PlaygroundError::InvalidSetting { .. } => {
                ErrorCause::Configuration
            }
            PlaygroundError::Bind { .. } | PlaygroundError::Random(_) => ErrorCause::Connection,
        }
    }
}
