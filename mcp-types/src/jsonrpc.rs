//! The JSON-RPC 2.0 envelope: ids, error objects and error codes, borrowed
//! serialize-only frames for sending ([`OutgoingRequest`] …), a one-pass borrowed
//! classifier for receiving ([`Incoming::parse`]), and owned generic frames
//! ([`JsonRpcRequest`] …) for tests and tools that want a whole message as a value.
//!
//! Receiving is split in two steps on purpose: [`Incoming::parse`] reads the
//! envelope once and leaves `params` / `result` as borrowed [`RawValue`]s, so the
//! caller decodes them straight into the type the method or pending request calls
//! for (`serde_json::from_str(raw.get())`), never through an intermediate `Value`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{JsonError, TypesError};

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

// ---------------------------------------------------------------------------
// Outgoing: borrowed, serialize-only frames.

/// A request to send: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` (`params`
/// omitted when `None`). Serializes straight from the borrowed parts.
#[derive(Debug)]
pub struct OutgoingRequest<'a, P: Serialize> {
    /// The request id.
    pub id: &'a RequestId,
    /// The method name.
    pub method: &'a str,
    /// The params, if any.
    pub params: Option<&'a P>,
}

impl<P: Serialize> Serialize for OutgoingRequest<'_, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3 + usize::from(self.params.is_some())))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        m.serialize_entry("id", self.id)?;
        m.serialize_entry("method", self.method)?;
        if let Some(p) = self.params {
            m.serialize_entry("params", p)?;
        }
        m.end()
    }
}

/// A notification to send: `{"jsonrpc":"2.0","method":…,"params":…}`.
#[derive(Debug)]
pub struct OutgoingNotification<'a, P: Serialize> {
    /// The method name.
    pub method: &'a str,
    /// The params, if any.
    pub params: Option<&'a P>,
}

impl<P: Serialize> Serialize for OutgoingNotification<'_, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2 + usize::from(self.params.is_some())))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        m.serialize_entry("method", self.method)?;
        if let Some(p) = self.params {
            m.serialize_entry("params", p)?;
        }
        m.end()
    }
}

/// A result response to send: `{"jsonrpc":"2.0","id":…,"result":…}`.
#[derive(Debug)]
pub struct OutgoingResult<'a, R: Serialize> {
    /// The id of the request answered.
    pub id: &'a RequestId,
    /// The result.
    pub result: &'a R,
}

impl<R: Serialize> Serialize for OutgoingResult<'_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        m.serialize_entry("id", self.id)?;
        m.serialize_entry("result", self.result)?;
        m.end()
    }
}

/// An error response to send: `{"jsonrpc":"2.0","id":…|null,"error":…}`. The id is
/// `null` only when the request's id could not be read.
#[derive(Debug)]
pub struct OutgoingError<'a> {
    /// The id of the request answered, if it could be read.
    pub id: Option<&'a RequestId>,
    /// The error.
    pub error: &'a ErrorObject,
}

impl Serialize for OutgoingError<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("error", self.error)?;
        m.end()
    }
}

// ---------------------------------------------------------------------------
// Incoming: one borrowed pass over a frame.

/// The members of a JSON-RPC frame, borrowed from the frame's bytes, before
/// classification. Members that are present with the value `null` are kept as the
/// raw `null` (so `"id": null` is distinguishable from no `id`). Unknown members
/// are ignored. Most callers want [`Incoming::parse`].
#[derive(Debug, Deserialize)]
pub struct IncomingMessage<'a> {
    /// `"jsonrpc"`.
    #[serde(borrow, default)]
    pub jsonrpc: Option<Cow<'a, str>>,
    /// `"id"`, raw.
    #[serde(borrow, default, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    /// `"method"`.
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    /// `"params"`, raw.
    #[serde(borrow, default, deserialize_with = "present")]
    pub params: Option<&'a RawValue>,
    /// `"result"`, raw.
    #[serde(borrow, default, deserialize_with = "present")]
    pub result: Option<&'a RawValue>,
    /// `"error"`, raw.
    #[serde(borrow, default, deserialize_with = "present")]
    pub error: Option<&'a RawValue>,
}

/// Captures a member that is present, including a present `null`.
fn present<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(d).map(Some)
}

/// A classified incoming frame. `params` and `result` stay raw for the caller to
/// decode into the type the method or pending request calls for.
#[derive(Clone, Debug)]
pub enum Incoming<'a> {
    /// A request (has `method` and `id`).
    Request {
        /// The request id.
        id: RequestId,
        /// The method name.
        method: Cow<'a, str>,
        /// The params (`None` when absent or `null`).
        params: Option<&'a RawValue>,
    },
    /// A notification (has `method`, no `id`).
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The params (`None` when absent or `null`).
        params: Option<&'a RawValue>,
    },
    /// A result response.
    Response {
        /// The id of the request answered.
        id: RequestId,
        /// The result, raw.
        result: &'a RawValue,
    },
    /// An error response.
    Error {
        /// The id of the request answered (`None` when the peer could not read it).
        id: Option<RequestId>,
        /// The error.
        error: ErrorObject,
    },
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

fn parse_id(raw: &RawValue) -> Result<RequestId, TypesError> {
    if is_null(raw) {
        return Err(TypesError::NullRequestId);
    }
    serde_json::from_str(raw.get()).map_err(|_| TypesError::InvalidRequestId)
}

fn first_non_whitespace(frame: &[u8]) -> Option<u8> {
    frame
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

impl<'a> Incoming<'a> {
    /// Reads and classifies one frame (one JSON object).
    ///
    /// Checks `"jsonrpc": "2.0"`; classifies by the presence of `method`, `id`,
    /// `result` and `error`; rejects ambiguous shapes with a named [`TypesError`]. A
    /// JSON array (a 2025-03-26 batch) is [`TypesError::UnexpectedBatch`]: use
    /// [`Incoming::parse_batch`] for those.
    pub fn parse(frame: &'a [u8]) -> Result<Self, TypesError> {
        if first_non_whitespace(frame) == Some(b'[') {
            return Err(TypesError::UnexpectedBatch);
        }
        let msg: IncomingMessage<'a> = serde_json::from_slice(frame)
            .map_err(|e| TypesError::MalformedFrame(JsonError::from(e)))?;
        Self::classify(msg)
    }

    /// Reads a JSON-RPC batch (an array of messages; allowed by protocol 2025-03-26
    /// only). Each element is classified on its own. An empty batch is invalid.
    pub fn parse_batch(frame: &'a [u8]) -> Result<Vec<Result<Self, TypesError>>, TypesError> {
        let msgs: Vec<IncomingMessage<'a>> = serde_json::from_slice(frame)
            .map_err(|e| TypesError::MalformedFrame(JsonError::from(e)))?;
        if msgs.is_empty() {
            return Err(TypesError::NotAMessage);
        }
        Ok(msgs.into_iter().map(Self::classify).collect())
    }

    /// Classifies already-read members.
    pub fn classify(msg: IncomingMessage<'a>) -> Result<Self, TypesError> {
        match msg.jsonrpc.as_deref() {
            None => return Err(TypesError::MissingJsonRpcVersion),
            Some(JSONRPC_VERSION) => {}
            Some(_) => return Err(TypesError::UnsupportedJsonRpcVersion),
        }
        let params = msg.params.filter(|p| !is_null(p));
        if let Some(method) = msg.method {
            if msg.result.is_some() || msg.error.is_some() {
                return Err(TypesError::MethodInResponse);
            }
            return Ok(match msg.id {
                Some(raw) => Incoming::Request {
                    id: parse_id(raw)?,
                    method,
                    params,
                },
                None => Incoming::Notification { method, params },
            });
        }
        match (msg.result, msg.error) {
            (Some(_), Some(_)) => Err(TypesError::ResultAndError),
            (Some(result), None) => {
                let raw_id = msg.id.ok_or(TypesError::ResponseWithoutId)?;
                Ok(Incoming::Response {
                    id: parse_id(raw_id)?,
                    result,
                })
            }
            (None, Some(raw_error)) => {
                let id = match msg.id {
                    None => None,
                    Some(raw) if is_null(raw) => None,
                    Some(raw) => Some(parse_id(raw)?),
                };
                let error: ErrorObject = serde_json::from_str(raw_error.get())
                    .map_err(|e| TypesError::InvalidErrorObject(JsonError::from(e)))?;
                Ok(Incoming::Error { id, error })
            }
            (None, None) => Err(TypesError::NotAMessage),
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Incoming::Request { method, .. } | Incoming::Notification { method, .. } => {
                Some(method)
            }
            _ => None,
        }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Incoming::Request { id, .. } | Incoming::Response { id, .. } => Some(id),
            Incoming::Error { id, .. } => id.as_ref(),
            Incoming::Notification { .. } => None,
        }
    }
}

/// Decodes a raw result into `T` (e.g. `R::Result` of a [`crate::Request`]).
pub fn decode_result<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Result<T, TypesError> {
    serde_json::from_str(raw.get()).map_err(|e| TypesError::InvalidResult(JsonError::from(e)))
}

// ---------------------------------------------------------------------------
// Owned generic frames.

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
/// request's id could not be read; it is then written as `null` (an `id` member
/// absent on input is also read as `None`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    #[serde(default)]
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
