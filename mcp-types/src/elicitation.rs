//! Elicitation: the server asks the user for input through the client
//! (`elicitation/create`), in form mode (a flat schema of primitive fields) or URL
//! mode (2025-11-25+: the user completes a flow at a URL);
//! `notifications/elicitation/complete` ends a URL flow.
//!
//! Every primitive field schema form of every version is typed
//! ([`PrimitiveSchema`]); a form this crate does not recognise is kept as sent.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::JsonObject;
use crate::common::RawObject;
use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::{open_enum, open_struct};
use crate::tasks::TaskMetadata;

mod form;

pub use form::{
    BooleanSchema, LegacyTitledEnumSchema, NumberSchema, NumberType, PrimitiveSchema,
    RequestedSchema, SchemaProperties, StringFormat, StringSchema, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledOption, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};

/// Params of `elicitation/create`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitParams {
    /// Form mode (`mode` absent or `"form"`).
    Form(ElicitFormParams),
    /// URL mode (`"mode": "url"`, 2025-11-25+).
    Url(ElicitUrlParams),
    /// A mode this crate does not know, kept as sent.
    Unknown(JsonObject),
}

impl ElicitParams {
    /// The message shown to the user (server prose), when the mode is known.
    pub fn message(&self) -> Option<&str> {
        match self {
            ElicitParams::Form(p) => Some(&p.message),
            ElicitParams::Url(p) => Some(&p.message),
            ElicitParams::Unknown(obj) => obj.get("message").and_then(Value::as_str),
        }
    }
}

impl Serialize for ElicitParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitParams::Form(p) => p.serialize(s),
            ElicitParams::Url(p) => p.serialize(s),
            ElicitParams::Unknown(obj) => obj.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Cold path: buffer as raw text, then choose by `mode`.
        let obj = RawObject::deserialize(d)?;
        let result = if !obj.contains("mode") {
            obj.decode().map(ElicitParams::Form)
        } else {
            match obj.str_member("mode").as_deref() {
                Some("form") => obj.decode().map(ElicitParams::Form),
                Some("url") => obj.decode().map(ElicitParams::Url),
                _ => obj.decode().map(ElicitParams::Unknown),
            }
        };
        result.map_err(de::Error::custom)
    }
}

open_struct! {
    /// Form-mode elicitation params.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ElicitFormParams {
        /// `"form"` (2025-11-25+; absent in 2025-06-18, where form is the only mode).
        opt mode: String = "mode",
        /// What to ask the user (server prose).
        req message: String = "message",
        /// The fields to ask for.
        req requested_schema: RequestedSchema = "requestedSchema",
        /// 2025-11-25: run the request as a task on the client.
        opt task: TaskMetadata = "task",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// URL-mode elicitation params (2025-11-25+).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ElicitUrlParams {
        @tag "mode" = "url";
        /// What the user is asked to do (server prose).
        req message: String = "message",
        /// The URL to open (untrusted: show it, let the user decide).
        req url: String = "url",
        /// 2025-11-25: identifier matched by `notifications/elicitation/complete`.
        opt elicitation_id: String = "elicitationId",
        /// 2025-11-25: run the request as a task on the client.
        opt task: TaskMetadata = "task",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

open_enum! {
    /// The user's response to an elicitation.
    pub enum ElicitAction {
        /// Submitted (form: with `content`).
        Accept = "accept",
        /// Explicitly declined.
        Decline = "decline",
        /// Dismissed without choosing.
        Cancel = "cancel",
    }
}

/// A submitted form value.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitValue {
    /// A string (also enum choices).
    String(String),
    /// A number or integer, kept as sent.
    Number(Number),
    /// A boolean.
    Bool(bool),
    /// Several choices (2025-11-25+ multi-select).
    StringArray(Vec<String>),
}

impl Serialize for ElicitValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitValue::String(v) => s.serialize_str(v),
            ElicitValue::Number(v) => v.serialize(s),
            ElicitValue::Bool(v) => s.serialize_bool(*v),
            ElicitValue::StringArray(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ValueVisitor;
        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = ElicitValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number, boolean or array of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ElicitValue, E> {
                Ok(ElicitValue::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ElicitValue, E> {
                Ok(ElicitValue::String(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ElicitValue, E> {
                Ok(ElicitValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ElicitValue, E> {
                Ok(ElicitValue::Number(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ElicitValue, E> {
                Ok(ElicitValue::Number(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ElicitValue, E> {
                Number::from_f64(v)
                    .map(ElicitValue::Number)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Float(v), &self))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ElicitValue, A::Error> {
                let mut items = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    items.push(s);
                }
                Ok(ElicitValue::StringArray(items))
            }
        }
        d.deserialize_any(ValueVisitor)
    }
}

open_struct! {
    /// Result of `elicitation/create`, sent by the client.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ElicitResult {
        /// What the user did.
        req action: ElicitAction = "action",
        /// Form mode, `accept`: the submitted values.
        opt content: BTreeMap<String, ElicitValue> = "content",
        /// Never required for client results; kept for symmetry.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The user submitted the form with these values:
    /// `ElicitResult::accept([("name", "Ada".into()), ("age", 36.into())])`.
    pub fn accept<K: Into<String>>(values: impl IntoIterator<Item = (K, ElicitValue)>) -> Self {
        ElicitResult {
            content: Some(values.into_iter().map(|(k, v)| (k.into(), v)).collect()),
            ..Self::new(ElicitAction::Accept)
        }
    }

    /// The user declined explicitly.
    pub fn decline() -> Self {
        Self::new(ElicitAction::Decline)
    }

    /// The user dismissed the request without choosing.
    pub fn cancel() -> Self {
        Self::new(ElicitAction::Cancel)
    }
}

impl From<&str> for ElicitValue {
    fn from(v: &str) -> Self {
        ElicitValue::String(v.to_owned())
    }
}

impl From<String> for ElicitValue {
    fn from(v: String) -> Self {
        ElicitValue::String(v)
    }
}

impl From<bool> for ElicitValue {
    fn from(v: bool) -> Self {
        ElicitValue::Bool(v)
    }
}

impl From<i64> for ElicitValue {
    fn from(v: i64) -> Self {
        ElicitValue::Number(v.into())
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        ElicitValue::StringArray(v)
    }
}

open_struct! {
    /// Params of `notifications/elicitation/complete` (2025-11-25): a URL-mode
    /// elicitation finished.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ElicitationCompleteParams {
        /// The `elicitationId` of the URL elicitation.
        req elicitation_id: String = "elicitationId",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}
