//! The JSON-RPC 2.0 envelope: ids, error objects and error codes, borrowed
//! serialize-only frames for sending ([`OutgoingRequest`] …), a one-pass borrowed
//! classifier for receiving ([`Incoming::parse`]), and owned generic frames
//! ([`JsonRpcRequest`] …) for tests and tools that want a whole message as a value.
//!
//! Receiving is split in two steps on purpose: [`Incoming::parse`] reads the
//! envelope once and leaves `params` / `result` as borrowed [`RawValue`](serde_json::value::RawValue)s, so the
//! caller decodes them straight into the type the method or pending request calls
//! for (`serde_json::from_str(raw.get())`), never through an intermediate `Value`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::TypesError;

mod incoming;
mod outgoing;

pub use incoming::{Incoming, IncomingMessage, decode_result};
pub use outgoing::{OutgoingError, OutgoingNotification, OutgoingRequest, OutgoingResult};

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, never `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl fmt::Display for RequestId {
    /// The id as it appears in JSON (`7`, `"abc"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::String(v))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

impl schemars::JsonSchema for RequestId {
    fn schema_name() -> Cow<'static, str> {
        "RequestId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["string", "integer"] })
    }
}

/// The `error` member of a JSON-RPC error response.
///
/// `message` is the peer's prose: show it labelled as such, never as our own words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`error_codes`]).
    pub code: i64,
    /// A short description, written by the peer.
    pub message: String,
    /// Additional information, shape defined per code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error object with no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Decodes `data` into a typed shape (e.g. [`UnsupportedProtocolVersionData`]):
    /// `None` when absent.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>, TypesError> {
        match &self.data {
            None => Ok(None),
            Some(v) => T::deserialize(v).map(Some).map_err(TypesError::json),
        }
    }
}

/// `data` of an [`error_codes::UNSUPPORTED_PROTOCOL_VERSION`] error (2026-07-28).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// The version the request asked for.
    pub requested: String,
    /// The versions the server supports.
    pub supported: Vec<String>,
}

/// `data` of an [`error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY`] error (2026-07-28).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needed and the client did not declare.
    #[serde(rename = "requiredCapabilities")]
    pub required_capabilities: crate::capabilities::ClientCapabilities,
}

/// `data` of an [`error_codes::URL_ELICITATION_REQUIRED`] error (2025-11-25).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations the client must complete before retrying.
    pub elicitations: Vec<crate::elicitation::ElicitUrlParams>,
}

/// JSON-RPC and MCP error codes.
pub mod error_codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (2026-07-28 also uses it for an unknown resource).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Resource not found (2025-11-25 and earlier; 2026-07-28 uses
    /// [`INVALID_PARAMS`] but clients should still accept this code).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// The request needs a URL-mode elicitation first (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// `HeaderMismatchError` (2026-07-28): HTTP headers disagree with the body, or a
    /// required header is missing or malformed.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// `MissingRequiredClientCapabilityError` (2026-07-28): the request needs a client
    /// capability the request's `_meta` did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// `UnsupportedProtocolVersionError` (2026-07-28): the server does not support the
    /// request's protocol version; `data` lists the supported ones.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// Serializes the `"jsonrpc"` member as `"2.0"` and accepts only `"2.0"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(JSONRPC_VERSION)
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(crate::open_struct::ExpectTag {
            key: "jsonrpc",
            value: JSONRPC_VERSION,
        })?;
        Ok(JsonRpcVersion)
    }
}

/// A whole JSON-RPC request as an owned value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A request with the given parts.
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<P>) -> Self {
        JsonRpcRequest {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params,
        }
    }
}

/// A whole JSON-RPC notification as an owned value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcNotification<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The method name.
    pub method: String,
    /// The params.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcNotification<P> {
    /// A notification with the given parts.
    pub fn new(method: impl Into<String>, params: Option<P>) -> Self {
        JsonRpcNotification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params,
        }
    }
}

/// A whole JSON-RPC result response as an owned value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResponse<R = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RequestId,
    /// The result.
    pub result: R,
}

impl<R> JsonRpcResponse<R> {
    /// A response with the given parts.
    pub fn new(id: RequestId, result: R) -> Self {
        JsonRpcResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

/// A whole JSON-RPC error response as an owned value. `id` is `None` when the
/// request's id could not be read: read from an absent or `null` `id`, written by
/// leaving `id` out (see [`OutgoingError`] for why).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl JsonRpcErrorResponse {
    /// An error response with the given parts.
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}
