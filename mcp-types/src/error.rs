//! The one error type of this crate.
//!
//! Peer-supplied text (a server's strings, the bytes of a frame) never appears in
//! [`TypesError`]'s `Display` nor in its `source()` chain: a decoding failure's
//! source is a [`JsonError`], which shows only the category and position, and the
//! underlying `serde_json` error (whose message can quote the offending value) is
//! kept behind [`JsonError::inner`]. `Display` shows one level; causes are reached
//! through `source()`.

use std::fmt;

use crate::ErrorCause;

/// A `serde_json` error whose `Display` shows only where and what kind of failure
/// happened, never the data it was looking at.
#[derive(Debug)]
pub struct JsonError(serde_json::Error);

impl JsonError {
    /// The full `serde_json` error. Its message may quote the offending data (peer
    /// supplied), so log it only where request bodies may be logged.
    pub fn inner(&self) -> &serde_json::Error {
        &self.0
    }

    /// The category of failure (syntax, data shape, premature end, IO).
    pub fn category(&self) -> serde_json::error::Category {
        self.0.classify()
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.0.classify() {
            serde_json::error::Category::Io => "I/O error",
            serde_json::error::Category::Syntax => "invalid JSON",
            serde_json::error::Category::Data => "unexpected JSON shape",
            serde_json::error::Category::Eof => "truncated JSON",
        };
        if self.0.line() == 0 {
            f.write_str(what)
        } else {
            write!(
                f,
                "{what} at line {}, column {}",
                self.0.line(),
                self.0.column()
            )
        }
    }
}

impl std::error::Error for JsonError {}

impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> Self {
        JsonError(e)
    }
}

/// Everything that can go wrong in this crate: classifying a frame, decoding a
/// message's params or result, parsing a version.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TypesError {
    /// The frame is not a JSON object of the JSON-RPC shape (bad JSON, wrong member
    /// types, duplicate members).
    #[error("malformed JSON-RPC frame")]
    MalformedFrame(#[source] JsonError),
    /// The frame has no `"jsonrpc"` member.
    #[error("JSON-RPC frame has no \"jsonrpc\" member")]
    MissingJsonRpcVersion,
    /// The frame's `"jsonrpc"` member is not `"2.0"`.
    #[error("JSON-RPC frame has a \"jsonrpc\" member other than \"2.0\"")]
    UnsupportedJsonRpcVersion,
    /// A request (or result response) carries `"id": null`.
    #[error("JSON-RPC request or result has a null id")]
    NullRequestId,
    /// The `id` member is neither a string nor an integer.
    #[error("JSON-RPC id is neither a string nor an integer")]
    InvalidRequestId,
    /// A response carries both `result` and `error`.
    #[error("JSON-RPC response has both \"result\" and \"error\"")]
    ResultAndError,
    /// A frame carries `method` together with `result` or `error`.
    #[error("JSON-RPC frame has \"method\" together with \"result\" or \"error\"")]
    MethodInResponse,
    /// A result response has no `id`.
    #[error("JSON-RPC result response has no id")]
    ResponseWithoutId,
    /// The frame is a JSON array (a batch, allowed only by protocol 2025-03-26) where
    /// a single message was expected.
    #[error("JSON-RPC frame is a batch where a single message was expected")]
    UnexpectedBatch,
    /// The frame has none of `method`, `result`, `error` (or is an empty batch).
    #[error("JSON-RPC frame is neither a request, a notification nor a response")]
    NotAMessage,
    /// The `error` member is not an object with an integer `code` and a string `message`.
    #[error("JSON-RPC error member is malformed")]
    InvalidErrorObject(#[source] JsonError),
    /// A known method arrived without the `params` it requires.
    #[error("{method} message has no params")]
    MissingParams {
        /// The method whose params were missing.
        method: &'static str,
    },
    /// A known method's params did not decode into their type.
    #[error("{method} params do not match their type")]
    InvalidParams {
        /// The method whose params were invalid.
        method: &'static str,
        /// Why they did not decode.
        source: JsonError,
    },
    /// A result did not decode into the type the request expects.
    #[error("result does not match the expected type")]
    InvalidResult(#[source] JsonError),
    /// A result's `resultType` is not one this crate knows (the spec makes an
    /// unrecognised `resultType` invalid).
    #[error("result has an unrecognised resultType")]
    UnknownResultType,
    /// A value did not decode into, or encode from, its type.
    #[error("JSON value does not match the type")]
    Json(#[source] JsonError),
    /// A protocol version string is not one of the dated versions this crate knows.
    #[error("unknown MCP protocol version")]
    UnknownProtocolVersion,
    /// A JSON Schema generated for a tool's input is not an object schema.
    #[error("generated input schema is not a JSON object schema with \"type\": \"object\"")]
    SchemaNotObject,
}

impl TypesError {
    /// Wraps a `serde_json` error from decoding or encoding a value.
    pub(crate) fn json(e: serde_json::Error) -> Self {
        TypesError::Json(JsonError(e))
    }

    /// Who or what caused the error.
    ///
    /// A frame or message that does not classify or decode came from the
    /// peer, which for this client is the server: [`ErrorCause::Server`].
    /// [`TypesError::Json`] is [`ErrorCause::Server`] too: it is almost
    /// always a peer's value (`_meta`, an error's `data`, a schema the server
    /// sent) that does not decode; a caller encoding its own value knows
    /// better. A version string given to `parse` is the caller's
    /// ([`ErrorCause::Input`]); a Rust type whose generated schema is not an
    /// object is a mistake in code ([`ErrorCause::Internal`]). A
    /// [`JsonError`] has no cause of its own: it depends on whose JSON it
    /// was, which only the error around it knows.
    pub fn cause(&self) -> ErrorCause {
        match self {
            TypesError::MalformedFrame(_)
            | TypesError::MissingJsonRpcVersion
            | TypesError::UnsupportedJsonRpcVersion
            | TypesError::NullRequestId
            | TypesError::InvalidRequestId
            | TypesError::ResultAndError
            | TypesError::MethodInResponse
            | TypesError::ResponseWithoutId
            | TypesError::UnexpectedBatch
            | TypesError::NotAMessage
            | TypesError::InvalidErrorObject(_)
            | TypesError::MissingParams { .. }
            | TypesError::InvalidParams { .. }
            | TypesError::InvalidResult(_)
            | TypesError::UnknownResultType
            | TypesError::Json(_) => ErrorCause::Server,
            TypesError::UnknownProtocolVersion => ErrorCause::Input,
            TypesError::SchemaNotObject => ErrorCause::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_frame_is_the_server_a_version_string_input_a_bad_type_internal() {
        let frame = crate::Incoming::parse(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#)
            .expect_err("not JSON-RPC 2.0");
        assert_eq!(frame.cause(), ErrorCause::Server);
        let version = "1999-01-01"
            .parse::<crate::ProtocolVersion>()
            .expect_err("unknown");
        assert_eq!(version.cause(), ErrorCause::Input);
        assert_eq!(TypesError::SchemaNotObject.cause(), ErrorCause::Internal);
    }
}
