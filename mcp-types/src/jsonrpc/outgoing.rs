//! Outgoing frames: borrowed, serialize-only, no intermediate `Value`.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{ErrorObject, JSONRPC_VERSION, RequestId};

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

/// An error response to send: `{"jsonrpc":"2.0","id":…,"error":…}`.
///
/// When the request's id could not be read (`id: None`) the `id` member is left
/// out rather than written as `null`: JSON-RPC 2.0 says `null`, but every MCP
/// schema types `id` as a string or integer, and 2025-11-25 and later make it
/// optional on error responses, so omission is what MCP peers validate.
#[derive(Debug)]
pub struct OutgoingError<'a> {
    /// The id of the request answered, if it could be read.
    pub id: Option<&'a RequestId>,
    /// The error.
    pub error: &'a ErrorObject,
}

impl Serialize for OutgoingError<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2 + usize::from(self.id.is_some())))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        if let Some(id) = self.id {
            m.serialize_entry("id", id)?;
        }
        m.serialize_entry("error", self.error)?;
        m.end()
    }
}
