//! What the core hands the application: requests to serve, cancellations,
//! answers to the server's own requests, and what the client got wrong.

use std::sync::Arc;

use mcp_types::{
    ClientCapabilities, Era, ErrorObject, Implementation, LoggingLevel, ProgressParams,
    ProgressToken, ProtocolVersion, Request, RequestId, error_codes,
};
use serde_json::Value;
use serde_json::value::RawValue;

/// One output of the core for the application, drained with
/// [`ServerCore::poll_event`](crate::ServerCore::poll_event).
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A request for the application (any method but the ones the core
    /// answers itself: `initialize`, `ping`, `server/discover`), already
    /// checked: its method exists in its era and belongs to a declared
    /// capability, and in 2026-07-28 its `_meta` is complete. Answer it with
    /// [`ServerCore::respond`](crate::ServerCore::respond).
    Request(IncomingRequest),
    /// The client cancelled a request the application holds: stop its work.
    /// Whatever the application answers afterwards is swallowed (the answer
    /// still frees the request's slot).
    Cancelled {
        /// The cancelled request.
        id: RequestId,
        /// Why, in the client's words (untrusted prose).
        reason: Option<String>,
    },
    /// A legacy client sent `notifications/initialized`: requests to it are
    /// allowed from now on.
    Initialized {
        /// The version negotiated by `initialize`.
        version: ProtocolVersion,
    },
    /// Another notification from the client (`notifications/roots/list_changed`,
    /// `notifications/progress` for a request of ours, `notifications/tasks/status`,
    /// or one this crate does not know).
    Notification {
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// The client's progress on a request the server sent asking for it
    /// ([`ServerCore::send_request_with_progress`](crate::ServerCore::send_request_with_progress)),
    /// its value greater than the last one's.
    Progress {
        /// The id the core gave the request.
        id: RequestId,
        /// The notification's params as the client sent them (its token is
        /// the request's id; `message` is untrusted prose).
        params: ProgressParams,
    },
    /// The answer to a request the server sent
    /// ([`ServerCore::send_request`](crate::ServerCore::send_request)).
    Response {
        /// The id the core gave the request.
        id: RequestId,
        /// The raw result, or why there is none.
        answer: Result<Box<RawValue>, ResponseError>,
    },
    /// The client broke the protocol; what the protocol asks for was already
    /// answered on the wire. For logs and counters.
    Violation(Violation),
}

/// A request for the application, with what the client said about itself.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IncomingRequest {
    /// The client's id for the request.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params as sent (`None` when absent or `null`); decode them with
    /// [`IncomingRequest::params`].
    pub params: Option<Box<RawValue>>,
    /// The request's `_meta.progressToken`: the client wants
    /// `notifications/progress` for it
    /// ([`ServerCore::progress`](crate::ServerCore::progress)).
    pub progress_token: Option<ProgressToken>,
    /// The client's version, capabilities and identity for this request.
    pub client: ClientContext,
}

impl IncomingRequest {
    /// The params decoded as `R`'s (absent params read as `{}` when `R`
    /// allows leaving them out); a `-32602` error object to answer with
    /// when they do not decode.
    pub fn params<R: Request>(&self) -> Result<R::Params, ErrorObject> {
        let text = match &self.params {
            Some(raw) => raw.get(),
            None if R::PARAMS_OPTIONAL => "{}",
            None => {
                return Err(ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    format!("Invalid params: `{}` needs params", R::METHOD),
                ));
            }
        };
        serde_json::from_str(text).map_err(|e| invalid_params(R::METHOD, &e))
    }
}

/// A `-32602` error object for params of `method` that did not decode. The
/// decoder's message may quote the client's own data: it goes back to the
/// client only.
pub(crate) fn invalid_params(method: &str, error: &serde_json::Error) -> ErrorObject {
    ErrorObject::new(
        error_codes::INVALID_PARAMS,
        format!("Invalid params for `{method}`: {error}"),
    )
}

/// What the client declared for one request: in the legacy era once, with
/// `initialize`; in 2026-07-28 in every request's `_meta`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientContext {
    /// The protocol version of the request.
    pub protocol_version: ProtocolVersion,
    /// The client's capabilities. Never rely on one it did not declare: a
    /// 2026-07-28 request needing one is answered with `-32021`
    /// (`MissingRequiredClientCapabilityError`).
    pub capabilities: Arc<ClientCapabilities>,
    /// The client's self-reported name and version (for display only).
    pub client_info: Option<Arc<Implementation>>,
    /// 2026-07-28: the lowest log level the client wants for this request
    /// (`_meta["io.modelcontextprotocol/logLevel"]`).
    pub log_level: Option<LoggingLevel>,
}

impl ClientContext {
    /// The era of the request.
    pub fn era(&self) -> Era {
        self.protocol_version.era()
    }
}

/// Why a request the server sent has no result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResponseError {
    /// The client answered with a JSON-RPC error (its message is the
    /// client's prose).
    #[error("the client answered with error {}", .0.code)]
    Error(ErrorObject),
    /// No answer came before the request's deadline; the client was sent
    /// `notifications/cancelled` for it.
    #[error("the client did not answer in time")]
    Timeout,
    /// The answer was over the frame bound and was skipped.
    #[error("the client's answer was over the frame bound")]
    TooLarge,
    /// The connection closed first.
    #[error("the connection closed before the client answered")]
    Closed,
}

/// A way the client broke the protocol. The answer the protocol asks for
/// (when there is one) is already on its way.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The frame was not JSON (answered with `-32700`).
    ParseError,
    /// The frame was JSON but not a valid JSON-RPC message (answered with
    /// `-32600` when it looked like a request).
    InvalidMessage,
    /// A JSON-RPC batch (an array), which this server does not serve
    /// (answered with `-32600`).
    Batch,
    /// A line over the frame bound was skipped (its request answered with
    /// `-32600` when its id could be read).
    OversizedFrame {
        /// The bound, in bytes.
        limit: usize,
    },
    /// A request reused the id of one still in flight (answered with
    /// `-32600`).
    DuplicateId,
    /// A response to no request of ours (or an error response without an
    /// id); it was ignored.
    UnknownResponse,
    /// `notifications/progress` for a request of ours whose value did not
    /// increase (or was not a number); it was dropped.
    ProgressNotIncreasing,
}

/// Counters of one connection, for diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStats {
    /// Requests received (valid or not).
    pub requests: u64,
    /// Requests refused because a bound was reached (in flight, events).
    pub refused: u64,
    /// Requests cancelled by the client while the application held them.
    pub cancelled: u64,
    /// Frames that broke the protocol (see [`Violation`]).
    pub violations: u64,
    /// Notifications and violations dropped because the event queue was full.
    pub dropped_events: u64,
}

/// The legacy session a client opened with `initialize`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LegacySession {
    /// The version chosen.
    pub version: ProtocolVersion,
    /// The client's capabilities.
    pub capabilities: Arc<ClientCapabilities>,
    /// The client's self-reported identity.
    pub client_info: Arc<Implementation>,
    /// Whether `notifications/initialized` arrived.
    pub initialized: bool,
}
