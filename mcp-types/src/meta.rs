//! `_meta`: the metadata object on params, results, notifications and many data
//! types, and the keys the specification reserves in it.
//!
//! [`Meta`] keeps every key as sent. The reserved keys have typed getters (which
//! decode on demand and report a wrong shape as an error) and setters. In protocol
//! 2026-07-28 every client request carries [`keys::PROTOCOL_VERSION`] and
//! [`keys::CLIENT_CAPABILITIES`]; see [`Meta::for_modern_request`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::JsonObject;
use crate::capabilities::ClientCapabilities;
use crate::error::TypesError;
use crate::initialize::Implementation;
use crate::jsonrpc::RequestId;
use crate::logging::LoggingLevel;
use crate::progress::ProgressToken;
use crate::version::ProtocolVersion;

/// The reserved `_meta` keys.
pub mod keys {
    /// Opts a request into progress notifications (every version).
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// 2026-07-28: the protocol version of this request (required on requests).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// 2026-07-28: the client's capabilities for this request (required on requests).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// 2026-07-28: the client's name and version (recommended on requests).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// 2026-07-28: the minimum log level the server should emit for this request
    /// (replaces `logging/setLevel`).
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// 2026-07-28: the server's name and version, on results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// 2026-07-28: the id of the `subscriptions/listen` request a notification
    /// (or the listen result) belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// 2025-11-25: associates a message with a task (`{"taskId": ...}`).
    pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
    /// 2026-07-28: OpenTelemetry trace context.
    pub const TRACEPARENT: &str = "traceparent";
    /// 2026-07-28: OpenTelemetry trace state.
    pub const TRACESTATE: &str = "tracestate";
    /// 2026-07-28: OpenTelemetry baggage.
    pub const BAGGAGE: &str = "baggage";
}

/// A `_meta` object. Every key is kept as sent and written back unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Meta(pub JsonObject);

impl schemars::JsonSchema for Meta {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Meta".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object" })
    }
}

impl Meta {
    /// An empty `_meta`.
    pub fn new() -> Self {
        Meta(JsonObject::new())
    }

    /// The `_meta` every 2026-07-28 client request must carry: protocol version and
    /// capabilities (client info is added when given).
    pub fn for_modern_request(
        version: ProtocolVersion,
        capabilities: &ClientCapabilities,
        client_info: Option<&Implementation>,
    ) -> Result<Self, TypesError> {
        let mut meta = Meta::new();
        meta.set_protocol_version(version.as_str());
        meta.set_client_capabilities(capabilities)?;
        if let Some(info) = client_info {
            meta.set_client_info(info)?;
        }
        Ok(meta)
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The raw value at `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// Sets `key` to a raw value, returning the previous one.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        self.0.insert(key.into(), value)
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// Decodes the value at `key` into `T`: `None` when absent, an error when present
    /// with the wrong shape.
    pub fn get_as<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Option<T>, TypesError> {
        match self.0.get(key) {
            None => Ok(None),
            Some(v) => T::deserialize(v).map(Some).map_err(TypesError::json),
        }
    }

    /// Encodes `value` and stores it at `key`.
    pub fn set_as<T: Serialize + ?Sized>(
        &mut self,
        key: &str,
        value: &T,
    ) -> Result<(), TypesError> {
        let v = serde_json::to_value(value).map_err(TypesError::json)?;
        self.0.insert(key.to_owned(), v);
        Ok(())
    }

    /// `progressToken`.
    pub fn progress_token(&self) -> Result<Option<ProgressToken>, TypesError> {
        self.get_as(keys::PROGRESS_TOKEN)
    }

    /// Sets `progressToken`.
    pub fn set_progress_token(&mut self, token: &ProgressToken) {
        self.0
            .insert(keys::PROGRESS_TOKEN.to_owned(), token.to_value());
    }

    /// `io.modelcontextprotocol/protocolVersion` as sent (it may name a version this
    /// crate does not know).
    pub fn protocol_version(&self) -> Option<&str> {
        self.0.get(keys::PROTOCOL_VERSION).and_then(Value::as_str)
    }

    /// Sets `io.modelcontextprotocol/protocolVersion`.
    pub fn set_protocol_version(&mut self, version: &str) {
        self.0.insert(
            keys::PROTOCOL_VERSION.to_owned(),
            Value::String(version.to_owned()),
        );
    }

    /// `io.modelcontextprotocol/clientCapabilities`.
    pub fn client_capabilities(&self) -> Result<Option<ClientCapabilities>, TypesError> {
        self.get_as(keys::CLIENT_CAPABILITIES)
    }

    /// Sets `io.modelcontextprotocol/clientCapabilities`.
    pub fn set_client_capabilities(&mut self, caps: &ClientCapabilities) -> Result<(), TypesError> {
        self.set_as(keys::CLIENT_CAPABILITIES, caps)
    }

    /// `io.modelcontextprotocol/clientInfo`.
    pub fn client_info(&self) -> Result<Option<Implementation>, TypesError> {
        self.get_as(keys::CLIENT_INFO)
    }

    /// Sets `io.modelcontextprotocol/clientInfo`.
    pub fn set_client_info(&mut self, info: &Implementation) -> Result<(), TypesError> {
        self.set_as(keys::CLIENT_INFO, info)
    }

    /// `io.modelcontextprotocol/logLevel`.
    pub fn log_level(&self) -> Result<Option<LoggingLevel>, TypesError> {
        self.get_as(keys::LOG_LEVEL)
    }

    /// Sets `io.modelcontextprotocol/logLevel`.
    pub fn set_log_level(&mut self, level: LoggingLevel) {
        self.0.insert(
            keys::LOG_LEVEL.to_owned(),
            Value::String(level.as_str().to_owned()),
        );
    }

    /// `io.modelcontextprotocol/serverInfo`.
    pub fn server_info(&self) -> Result<Option<Implementation>, TypesError> {
        self.get_as(keys::SERVER_INFO)
    }

    /// Sets `io.modelcontextprotocol/serverInfo`.
    pub fn set_server_info(&mut self, info: &Implementation) -> Result<(), TypesError> {
        self.set_as(keys::SERVER_INFO, info)
    }

    /// `io.modelcontextprotocol/subscriptionId`.
    pub fn subscription_id(&self) -> Result<Option<RequestId>, TypesError> {
        self.get_as(keys::SUBSCRIPTION_ID)
    }

    /// Sets `io.modelcontextprotocol/subscriptionId`.
    pub fn set_subscription_id(&mut self, id: &RequestId) -> Result<(), TypesError> {
        self.set_as(keys::SUBSCRIPTION_ID, id)
    }

    /// The `taskId` of `io.modelcontextprotocol/related-task` (2025-11-25).
    pub fn related_task_id(&self) -> Option<&str> {
        self.0.get(keys::RELATED_TASK)?.get("taskId")?.as_str()
    }

    /// Sets `io.modelcontextprotocol/related-task` to `{"taskId": id}`.
    pub fn set_related_task_id(&mut self, task_id: &str) {
        let mut obj = JsonObject::new();
        obj.insert("taskId".to_owned(), Value::String(task_id.to_owned()));
        self.0
            .insert(keys::RELATED_TASK.to_owned(), Value::Object(obj));
    }
}

impl From<JsonObject> for Meta {
    fn from(map: JsonObject) -> Self {
        Meta(map)
    }
}
