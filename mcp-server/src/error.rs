//! The one error type of this crate.

use mcp_types::{ErrorCause, RequestId};

use crate::ResponseError;

/// What the server half refuses or fails at.
///
/// Each refusal is one of the server's bounds or protocol rules, returned to
/// the application that asked for something; what the client sent wrong is
/// answered on the wire instead (with the JSON-RPC error the protocol names)
/// and reported as an [`Event::Violation`](crate::Event::Violation).
/// `Display` never quotes the client's data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// No request with this id is in flight: it was answered already, it
    /// never arrived, or the connection closed. Nothing was sent.
    #[error("request {id} is not in flight")]
    NotInFlight {
        /// The id given.
        id: RequestId,
    },
    /// The request carried no `progressToken`, so the client asked for no
    /// progress. Nothing was sent.
    #[error("request {id} asked for no progress")]
    NoProgressToken {
        /// The request's id.
        id: RequestId,
    },
    /// Progress must increase with each notification (and be a finite
    /// number). Nothing was sent.
    #[error("progress of request {id} must increase (last {last}, now {now})")]
    ProgressNotIncreasing {
        /// The request's id.
        id: RequestId,
        /// The last progress sent (negative infinity before the first).
        last: f64,
        /// The progress refused.
        now: f64,
    },
    /// Answering failed to serialise the result: the client got a `-32603`
    /// error for the request instead.
    #[error("the result of request {id} could not be serialised; -32603 was sent")]
    InvalidResult {
        /// The request's id.
        id: RequestId,
        /// Why serialisation failed.
        #[source]
        source: serde_json::Error,
    },
    /// The answer was larger than the frame bound: the client got a `-32603`
    /// error for the request instead.
    #[error(
        "the result of request {id} is {size} bytes, over the frame bound of {limit}; -32603 was sent"
    )]
    ResultTooLarge {
        /// The request's id.
        id: RequestId,
        /// The size of the answer's frame.
        size: usize,
        /// [`ServerLimits::max_frame`](crate::ServerLimits::max_frame).
        limit: usize,
    },
    /// A notification or request to send would be larger than the frame
    /// bound. Nothing was sent.
    #[error("a frame of {size} bytes is over the frame bound of {limit}")]
    FrameTooLarge {
        /// The size of the frame.
        size: usize,
        /// [`ServerLimits::max_frame`](crate::ServerLimits::max_frame).
        limit: usize,
    },
    /// Params to send could not be serialised. Nothing was sent.
    #[error("a message to send could not be serialised")]
    Serialize(#[source] serde_json::Error),
    /// [`ServerLimits::max_queued_frames`](crate::ServerLimits::max_queued_frames)
    /// frames wait to be sent already. Nothing was sent.
    #[error("{limit} frames are waiting to be sent; the notification was refused")]
    TransmitQueueFull {
        /// The bound.
        limit: usize,
    },
    /// [`ServerLimits::max_outgoing_requests`](crate::ServerLimits::max_outgoing_requests)
    /// requests to the client await their answers already. Nothing was sent.
    #[error("{limit} requests to the client are awaiting answers; another was refused")]
    TooManyOutgoing {
        /// The bound.
        limit: usize,
    },
    /// A connection-wide notification needs a legacy session (an answered
    /// `initialize`). In 2026-07-28 notifications travel with a request
    /// ([`ServerCore::notify_request`](crate::ServerCore::notify_request)),
    /// for example on its `subscriptions/listen` stream. Nothing was sent.
    #[error("no legacy session: a connection-wide notification has nowhere to go")]
    NoSession,
    /// A request to the client needs a legacy session whose client has sent
    /// `notifications/initialized`: 2026-07-28 forbids server requests on
    /// the wire (they travel inside `input_required` results). Nothing was
    /// sent.
    #[error("no initialized legacy session: a request to the client is not allowed")]
    NotInitialized,
    /// The client did not declare the capability a request to it needs
    /// (`sampling`, `elicitation`, `roots`, `tasks`). Nothing was sent.
    #[error("the client did not declare the `{capability}` capability")]
    ClientLacksCapability {
        /// The capability's name.
        capability: &'static str,
    },
    /// A request to the client got no result
    /// ([`ServerHandle::request`](crate::ServerHandle::request)): the
    /// client's error, the time-out, an answer over the frame bound, or a
    /// connection that closed first.
    #[error("the client gave no result: {0}")]
    NoAnswer(ResponseError),
    /// The client's answer to a request of ours does not decode as its
    /// result type.
    #[error("the client's answer to `{method}` does not decode")]
    InvalidAnswer {
        /// The request's method.
        method: &'static str,
        /// Why it does not decode (may quote the client's data).
        #[source]
        source: serde_json::Error,
    },
    /// The connection is closed: nothing more is sent.
    #[error("the connection is closed")]
    Closed,
    /// Reading from or writing to the client failed ([`serve`](crate::serve)).
    #[error("i/o error talking to the client")]
    Io(#[from] std::io::Error),
    /// Serving HTTP on an address that is not loopback needs TLS and a
    /// bearer token; `missing` names what was not given.
    #[cfg(feature = "http")]
    #[error(
        "serving on {addr} (not a loopback address) needs {missing}; plain or unauthenticated HTTP is served on loopback only"
    )]
    Exposure {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// What is missing.
        missing: &'static str,
    },
    /// The HTTP endpoint could not be bound, or its accept loop failed.
    #[cfg(feature = "http")]
    #[error("could not serve HTTP on {addr}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A TLS file could not be used.
    #[cfg(feature = "http")]
    #[error("TLS file `{}`: {problem}", path.display())]
    TlsFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: &'static str,
        /// The system's error, when reading failed.
        #[source]
        source: Option<std::io::Error>,
    },
    /// The TLS settings were refused (a key that does not fit the
    /// certificate, an unsupported key type).
    #[cfg(feature = "http")]
    #[error("the TLS settings were refused")]
    Tls(#[source] tokio_rustls::rustls::Error),
}

impl ServerError {
    /// Who or what caused the error (see [`ErrorCause`]).
    ///
    /// A request that is no longer in flight was, most often, cancelled by
    /// the client: [`ErrorCause::Cancelled`]. A result that does not
    /// serialise is the application's bug: [`ErrorCause::Internal`], as are
    /// the protocol rules the application broke (progress that does not
    /// increase, a notification with nowhere to go).
    pub fn cause(&self) -> ErrorCause {
        match self {
            ServerError::NotInFlight { .. } => ErrorCause::Cancelled,
            ServerError::NoProgressToken { .. }
            | ServerError::ProgressNotIncreasing { .. }
            | ServerError::InvalidResult { .. }
            | ServerError::Serialize(_)
            | ServerError::NoSession
            | ServerError::NotInitialized => ErrorCause::Internal,
            ServerError::ResultTooLarge { .. }
            | ServerError::FrameTooLarge { .. }
            | ServerError::TransmitQueueFull { .. }
            | ServerError::TooManyOutgoing { .. } => ErrorCause::Bound,
            ServerError::ClientLacksCapability { .. } | ServerError::InvalidAnswer { .. } => {
                ErrorCause::Input
            }
            ServerError::NoAnswer(answer) => match answer {
                ResponseError::Error(_) => ErrorCause::Input,
                ResponseError::TooLarge => ErrorCause::Bound,
                ResponseError::Timeout | ResponseError::Closed => ErrorCause::Connection,
            },
            ServerError::Closed | ServerError::Io(_) => ErrorCause::Connection,
            #[cfg(feature = "http")]
            ServerError::Exposure { .. } | ServerError::TlsFile { .. } | ServerError::Tls(_) => {
                ErrorCause::Configuration
            }
            #[cfg(feature = "http")]
            ServerError::Bind { .. } => ErrorCause::Connection,
        }
    }
}
