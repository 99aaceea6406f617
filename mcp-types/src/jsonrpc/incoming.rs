//! Incoming frames: one borrowed pass that classifies a frame and leaves `params`
//! / `result` raw.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::Deserializer;
use serde_json::value::RawValue;

use super::{ErrorObject, JSONRPC_VERSION, RequestId};
use crate::error::{JsonError, TypesError};

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
