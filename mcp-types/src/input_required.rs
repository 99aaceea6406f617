//! Polymorphic results and multi round-trip requests (2026-07-28).
//!
//! A 2026-07-28 result says what it is in `resultType`: `complete` (the request's
//! own result), `input_required` ([`InputRequiredResult`]: answer the server's
//! `inputRequests` and retry with `inputResponses` and the echoed `requestState`),
//! or, with the tasks extension, `task` (a [`CreateTaskResult`]). A missing
//! `resultType` (every earlier version) reads as `complete`; an unknown one is an
//! error, as the spec requires. [`RequestOutcome`] decodes a raw result into the
//! right one of the three.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::JsonObject;
use crate::common::RawObject;
use crate::content::StrCow;
use crate::dispatch::ServerRequestMessage;
use crate::elicitation::ElicitResult;
use crate::error::{JsonError, TypesError};
use crate::meta::Meta;
use crate::open_struct::open_struct;
use crate::roots::ListRootsResult;
use crate::sampling::CreateMessageResult;
use crate::tasks::CreateTaskResult;

/// What a result is (`resultType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResultType {
    /// The request's own result.
    Complete,
    /// More input is needed: an [`InputRequiredResult`].
    InputRequired,
    /// Tasks extension: a task handle ([`CreateTaskResult`]).
    Task,
}

impl ResultType {
    /// The value as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
        }
    }

    fn from_wire(s: &str) -> Option<Self> {
        Some(match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            _ => return None,
        })
    }
}

/// What the top level of a raw result says about its kind, read without decoding
/// the members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ResultShape {
    result_type: Option<ResultType>,
    has_task_member: bool,
}

/// Error marker of [`ResultShape`]'s visitor for an unknown `resultType`.
const UNKNOWN_RESULT_TYPE: &str = "an unrecognised resultType";

impl<'de> Deserialize<'de> for ResultShape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ShapeVisitor;
        impl<'de> Visitor<'de> for ShapeVisitor {
            type Value = ResultShape;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResultShape, A::Error> {
                let mut shape = ResultShape {
                    result_type: None,
                    has_task_member: false,
                };
                while let Some(key) = map.next_key::<StrCow<'de>>()? {
                    match &*key.0 {
                        "resultType" => {
                            let v: StrCow<'de> = map.next_value()?;
                            let t = ResultType::from_wire(&v.0)
                                .ok_or_else(|| de::Error::custom(UNKNOWN_RESULT_TYPE))?;
                            shape.result_type = Some(t);
                        }
                        "task" => {
                            shape.has_task_member = true;
                            map.next_value::<IgnoredAny>()?;
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(shape)
            }
        }
        d.deserialize_map(ShapeVisitor)
    }
}

fn read_shape(raw: &str) -> Result<ResultShape, TypesError> {
    read_shape_slice(raw.as_bytes())
}

fn read_shape_slice(raw: &[u8]) -> Result<ResultShape, TypesError> {
    // The structural look first (it does not read the values it skips, so a
    // large result is not parsed twice); serde's pass when it is unsure.
    if let Some(top) = crate::quick_shape::top_level(raw) {
        let result_type = match top.result_type {
            Some(text) => Some(ResultType::from_wire(text).ok_or(TypesError::UnknownResultType)?),
            None => None,
        };
        return Ok(ResultShape {
            result_type,
            has_task_member: top.has_task,
        });
    }
    read_shape_serde(raw)
}

/// The kind of a result by serde_json's reading of its top level.
fn read_shape_serde(raw: &[u8]) -> Result<ResultShape, TypesError> {
    serde_json::from_slice::<ResultShape>(raw).map_err(|e| {
        if e.is_data() && e.to_string().starts_with(UNKNOWN_RESULT_TYPE) {
            TypesError::UnknownResultType
        } else {
            TypesError::InvalidResult(JsonError::from(e))
        }
    })
}

/// Reads the `resultType` of a raw result without decoding the rest: `Complete`
/// when absent, [`TypesError::UnknownResultType`] when not recognised.
pub fn peek_result_type(raw: &RawValue) -> Result<ResultType, TypesError> {
    Ok(read_shape(raw.get())?
        .result_type
        .unwrap_or(ResultType::Complete))
}

// Transient message values decoded once and consumed: boxing the large variant
// would add an allocation on the common path for no lasting memory gain.
#[allow(clippy::large_enum_variant)]
/// A request's answer by kind: its own result, a request for more input, or a
/// task handle.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RequestOutcome<T> {
    /// The request's own result (`resultType` `complete` or absent).
    Complete(T),
    /// 2026-07-28: more input needed; answer and retry.
    InputRequired(InputRequiredResult),
    /// A task handle: `resultType: "task"` (tasks extension) or, with no
    /// `resultType`, a 2025-11-25 `{"task": {...}}` result.
    Task(CreateTaskResult),
}

impl<T: DeserializeOwned> RequestOutcome<T> {
    /// Decodes a raw result: one cheap pass over the top-level keys to find the
    /// kind, then one decode into the right type.
    pub fn from_raw(raw: &RawValue) -> Result<Self, TypesError> {
        Self::from_json_str(raw.get())
    }

    fn from_json_str(raw: &str) -> Result<Self, TypesError> {
        Self::from_slice(raw.as_bytes())
    }

    /// Decodes a raw result given as bytes (as sliced out of a received
    /// frame): one pass over the top-level keys, one decode — no separate
    /// UTF-8 or raw-value validation pass.
    pub fn from_slice(raw: &[u8]) -> Result<Self, TypesError> {
        let shape = read_shape_slice(raw)?;
        let invalid = |e| TypesError::InvalidResult(JsonError::from(e));
        Ok(match shape.result_type {
            Some(ResultType::InputRequired) => {
                RequestOutcome::InputRequired(serde_json::from_slice(raw).map_err(invalid)?)
            }
            Some(ResultType::Task) => {
                RequestOutcome::Task(serde_json::from_slice(raw).map_err(invalid)?)
            }
            None if shape.has_task_member => {
                RequestOutcome::Task(serde_json::from_slice(raw).map_err(invalid)?)
            }
            Some(ResultType::Complete) | None => {
                RequestOutcome::Complete(serde_json::from_slice(raw).map_err(invalid)?)
            }
        })
    }
}

impl<T> RequestOutcome<T> {
    /// The complete result, if that is what this is.
    pub fn into_complete(self) -> Option<T> {
        match self {
            RequestOutcome::Complete(t) => Some(t),
            _ => None,
        }
    }

    /// The kind of this outcome.
    pub fn result_type(&self) -> ResultType {
        match self {
            RequestOutcome::Complete(_) => ResultType::Complete,
            RequestOutcome::InputRequired(_) => ResultType::InputRequired,
            RequestOutcome::Task(_) => ResultType::Task,
        }
    }
}

impl<T: Serialize> Serialize for RequestOutcome<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestOutcome::Complete(t) => t.serialize(s),
            RequestOutcome::InputRequired(r) => r.serialize(s),
            RequestOutcome::Task(t) => t.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for RequestOutcome<T> {
    /// Keeps the result's text, then decodes as [`RequestOutcome::from_raw`] does.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Self::from_json_str(raw.get()).map_err(de::Error::custom)
    }
}

/// One server→client request carried inside a result (`inputRequests` value):
/// `{"method": …, "params": …}`. Decoded into the same [`ServerRequestMessage`]
/// as a legacy server→client request, so one handler serves both eras.
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequest {
    /// The request.
    pub request: ServerRequestMessage,
    /// The request arrived without `params` (allowed for `roots/list`, `ping` …):
    /// they read as empty and are left out again when re-serialised.
    pub params_omitted: bool,
    /// Members other than `method` and `params`, kept as sent.
    pub extra: JsonObject,
}

impl From<ServerRequestMessage> for InputRequest {
    fn from(request: ServerRequestMessage) -> Self {
        InputRequest {
            request,
            params_omitted: false,
            extra: JsonObject::new(),
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        self.request.write_members(&mut m, self.params_omitted)?;
        for (k, v) in &self.extra {
            if k != "method" && k != "params" {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

open_struct! {
    /// The members of an input request before dispatch on `method`.
    struct RawInputRequest {
        req method: String = "method",
        opt params: Box<RawValue> = "params",
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawInputRequest::deserialize(d)?;
        let request = ServerRequestMessage::parse(&raw.method, raw.params.as_deref())
            .map_err(de::Error::custom)?;
        Ok(InputRequest {
            request,
            params_omitted: raw.params.is_none(),
            extra: raw.extra,
        })
    }
}

/// `inputRequests`: server→client requests keyed by server-chosen ids.
pub type InputRequests = BTreeMap<String, InputRequest>;

// Transient message values decoded once and consumed: boxing the large variant
// would add an allocation on the common path for no lasting memory gain.
#[allow(clippy::large_enum_variant)]
/// A client's answer to one input request (`inputResponses` value), told apart by
/// its members.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answers `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answers `elicitation/create`.
    Elicit(ElicitResult),
    /// Answers `roots/list`.
    ListRoots(ListRootsResult),
    /// A shape this crate does not recognise, kept as sent.
    Unknown(Value),
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InputResponse::CreateMessage(r) => r.serialize(s),
            InputResponse::Elicit(r) => r.serialize(s),
            InputResponse::ListRoots(r) => r.serialize(s),
            InputResponse::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Cold path: buffer as raw text, then choose by a member only one shape has.
        let raw = Box::<RawValue>::deserialize(d)?;
        let Ok(obj) = serde_json::from_str::<RawObject>(raw.get()) else {
            return serde_json::from_str(raw.get())
                .map(InputResponse::Unknown)
                .map_err(de::Error::custom);
        };
        let result = if obj.contains("action") {
            obj.decode().map(InputResponse::Elicit)
        } else if obj.contains("roots") {
            obj.decode().map(InputResponse::ListRoots)
        } else if obj.contains("model") {
            obj.decode().map(InputResponse::CreateMessage)
        } else {
            obj.decode().map(InputResponse::Unknown)
        };
        result.map_err(de::Error::custom)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

/// `inputResponses`: answers keyed like the `inputRequests` they answer.
pub type InputResponses = BTreeMap<String, InputResponse>;

open_struct! {
    /// `InputRequiredResult` (2026-07-28): the server needs input before it can
    /// complete the request. At least one of the two members is present.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct InputRequiredResult {
        /// `"input_required"`.
        opt result_type: ResultType = "resultType",
        /// Requests to answer before retrying.
        opt input_requests: InputRequests = "inputRequests",
        /// Opaque state to echo back unchanged on the retry (never inspect it).
        opt request_state: String = "requestState",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// `InputResponseRequestParams` (2026-07-28): the retry members every
    /// input-capable request's params share (`tools/call`, `prompts/get` and
    /// `resources/read` carry them in their own params types).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct InputResponseParams {
        /// Answers to the previous `inputRequests`.
        opt input_responses: InputResponses = "inputResponses",
        /// The previous `requestState`, unchanged.
        opt request_state: String = "requestState",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

#[cfg(test)]
mod shape_tests {
    use super::*;
    use proptest::prelude::*;

    /// A value as written, with the characters that could mislead a
    /// structural scan.
    fn value_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
            prop_oneof![
                Just("}"),
                Just("]"),
                Just("{\"resultType\":\"task\"}"),
                Just("\\\""),
                Just("\"task\":"),
                Just("\\"),
            ]
            .prop_map(|s| Value::String(s.to_owned())),
        ];
        let value = leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("resultType".to_owned()),
                            Just("task".to_owned()),
                            "[a-z]{0,6}"
                        ],
                        inner
                    ),
                    0..4
                )
                .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        });
        (value, any::<bool>()).prop_map(|(v, pretty)| {
            if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            }
        })
    }

    fn member() -> impl Strategy<Value = (String, String)> {
        let key = prop_oneof![
            3 => Just(r#""resultType""#.to_owned()),
            3 => Just(r#""task""#.to_owned()),
            1 => Just(r#""result\u0054ype""#.to_owned()),
            1 => Just(r#""ta\u0073k""#.to_owned()),
            3 => "[a-z]{0,6}".prop_map(|k| format!("\"{k}\"")),
        ];
        let value = prop_oneof![
            3 => prop_oneof![
                Just("complete"),
                Just("input_required"),
                Just("task"),
                Just("other"),
            ]
            .prop_map(|t| format!("\"{t}\"")),
            1 => Just(r#""compl\u0065te""#.to_owned()),
            4 => value_text(),
        ];
        (key, value)
    }

    proptest! {
        #[test]
        fn the_structural_look_agrees_with_serde_when_it_answers(
            members in prop::collection::vec(member(), 0..6),
            spaced in any::<bool>(),
            cut in any::<u16>(),
            truncate in any::<bool>(),
        ) {
            let sep = if spaced { " , " } else { "," };
            let colon = if spaced { " : " } else { ":" };
            let body = members
                .iter()
                .map(|(k, v)| format!("{k}{colon}{v}"))
                .collect::<Vec<_>>()
                .join(sep);
            let mut raw = format!("{{{body}}}").into_bytes();
            if truncate {
                raw.truncate(usize::from(cut) % (raw.len() + 1));
            }
            let serde = read_shape_serde(&raw);
            match crate::quick_shape::top_level(&raw) {
                None => {}
                Some(top) => {
                    // An answer for text serde refuses is allowed only because
                    // the decode that follows refuses it too.
                    if let Ok(shape) = &serde {
                        let quick = read_shape_slice(&raw);
                        prop_assert_eq!(quick.as_ref().ok(), Some(shape), "{:?}", top);
                    } else {
                        prop_assert!(serde_json::from_slice::<IgnoredAny>(&raw).is_err()
                            || matches!(serde, Err(TypesError::UnknownResultType)));
                    }
                }
            }
            // Whatever the path, the verdict on valid text is serde's.
            if serde.is_ok() {
                prop_assert_eq!(read_shape_slice(&raw).ok(), serde.ok());
            }
        }
    }
}
