//! Logging: levels, `logging/setLevel` (legacy) and `notifications/message`.
//!
//! In 2026-07-28 there is no `logging/setLevel`: a request opts into log messages
//! with `_meta["io.modelcontextprotocol/logLevel"]` (see
//! [`crate::Meta::set_log_level`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::Meta;
use crate::open_struct::open_struct;

/// Syslog severity levels (RFC 5424), least severe first: `Ord` follows severity.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The level as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

open_struct! {
    /// Params of `logging/setLevel` (legacy era).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SetLevelParams {
        /// The minimum level the server should send.
        req level: LoggingLevel = "level",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl SetLevelParams {
    /// Params asking for messages at `level` and above.
    pub fn new(level: LoggingLevel) -> Self {
        SetLevelParams {
            level,
            meta: None,
            extra: Default::default(),
        }
    }
}

open_struct! {
    /// Params of `notifications/message`: a log message from the server.
    #[derive(Clone, Debug, PartialEq)]
    pub struct LoggingMessageParams {
        /// Severity.
        req level: LoggingLevel = "level",
        /// Name of the logger.
        opt logger: String = "logger",
        /// The message: any JSON (server data).
        req data: Value = "data",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}
