//! Progress: tokens and `notifications/progress`.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::meta::Meta;
use crate::open_struct::open_struct;

/// A progress token: a string or an integer, chosen by the requester and echoed
/// in each progress notification.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl ProgressToken {
    /// The token as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            ProgressToken::Number(n) => Value::Number((*n).into()),
            ProgressToken::String(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::Number(n) => write!(f, "{n}"),
            ProgressToken::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for ProgressToken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ProgressToken::Number(n) => s.serialize_i64(*n),
            ProgressToken::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for ProgressToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TokenVisitor;
        impl Visitor<'_> for TokenVisitor {
            type Value = ProgressToken;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer progress token")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProgressToken, E> {
                Ok(ProgressToken::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProgressToken, E> {
                i64::try_from(v)
                    .map(ProgressToken::Number)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(v))
            }
        }
        d.deserialize_any(TokenVisitor)
    }
}

impl schemars::JsonSchema for ProgressToken {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProgressToken".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["string", "integer"] })
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl From<crate::jsonrpc::RequestId> for ProgressToken {
    fn from(id: crate::jsonrpc::RequestId) -> Self {
        match id {
            crate::jsonrpc::RequestId::Number(n) => ProgressToken::Number(n),
            crate::jsonrpc::RequestId::String(s) => ProgressToken::String(s),
        }
    }
}

open_struct! {
    /// Params of `notifications/progress`.
    ///
    /// Numbers are kept as sent (`serde_json::Number`), so `50` stays `50` and
    /// `0.5` stays `0.5` on re-serialisation.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ProgressParams {
        /// The token from the request's `_meta.progressToken`.
        req progress_token: ProgressToken = "progressToken",
        /// Progress so far; increases with each notification.
        req progress: Number = "progress",
        /// Total, if known.
        opt total: Number = "total",
        /// 2025-03-26+: a human-readable progress message (peer prose).
        opt message: String = "message",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

impl ProgressParams {
    /// `progress` as a float.
    pub fn progress_f64(&self) -> Option<f64> {
        self.progress.as_f64()
    }

    /// `total` as a float.
    pub fn total_f64(&self) -> Option<f64> {
        self.total.as_ref().and_then(Number::as_f64)
    }
}
