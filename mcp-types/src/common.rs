//! Shapes shared by many messages: base params and results, pagination, and
//! [`Nullable`] for members whose `null` is meaningful.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::open_struct;

/// An opaque pagination cursor.
pub type Cursor = String;

/// A member that may be `null` on the wire where `null` means something (e.g. a
/// task's `ttl: null` = unlimited). Use as `Option<Nullable<T>>` so that absent,
/// `null` and a value stay three different things.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Nullable<T> {
    /// The member is `null`.
    Null,
    /// The member has a value.
    Value(T),
}

impl<T> Nullable<T> {
    /// The value, if not `null`.
    pub fn as_option(&self) -> Option<&T> {
        match self {
            Nullable::Null => None,
            Nullable::Value(v) => Some(v),
        }
    }

    /// Converts into an `Option`, `null` becoming `None`.
    pub fn into_option(self) -> Option<T> {
        match self {
            Nullable::Null => None,
            Nullable::Value(v) => Some(v),
        }
    }
}

impl<T: Serialize> Serialize for Nullable<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Nullable::Null => s.serialize_unit(),
            Nullable::Value(v) => v.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Nullable::Null,
            Some(v) => Nullable::Value(v),
        })
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Nullable<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Option::<T>::json_schema(generator)
    }
}

open_struct! {
    /// Params of a request that has no method-specific params (`ping`,
    /// `roots/list`, `server/discover`, …): just `_meta`. In 2026-07-28 `_meta` is
    /// required on every client request (see [`Meta::for_modern_request`]).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct RequestParams {
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Params of a notification that has no method-specific params (the
    /// `list_changed` notifications, `notifications/initialized`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct NotificationParams {
        /// Notification metadata (2026-07-28: carries the subscription id on
        /// notifications delivered on a `subscriptions/listen` stream).
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Params of a paginated list request (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`, `tasks/list`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct PaginatedParams {
        /// Where to continue, from a previous result's `nextCursor`.
        opt cursor: Cursor = "cursor",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl PaginatedParams {
    /// Params asking for the page after `cursor` (the first page when `None`).
    pub fn with_cursor(cursor: Option<Cursor>) -> Self {
        PaginatedParams {
            cursor,
            ..Default::default()
        }
    }
}

open_struct! {
    /// A result with no method-specific members (`ping`, `resources/subscribe`,
    /// `logging/setLevel`, `tasks/update` …).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct EmptyResult {
        /// 2026-07-28: the result's kind (absent in earlier versions = complete).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

/// An object buffered member by member as raw JSON text, for the few cold types
/// that must see a discriminating member before choosing their type. Decoding
/// from it re-reads the original text, so member order, number formatting and
/// nested schema bytes are kept (a `serde_json::Value` buffer would lose them).
pub(crate) struct RawObject(Vec<(String, Box<serde_json::value::RawValue>)>);

impl RawObject {
    /// The raw value of member `key` (the last one if repeated).
    pub(crate) fn get(&self, key: &str) -> Option<&serde_json::value::RawValue> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| &**v)
    }

    /// Whether member `key` is present.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Member `key` when it is a string.
    pub(crate) fn str_member(&self, key: &str) -> Option<String> {
        self.get(key)
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
    }

    /// Whether member `key` is an object that has member `inner`.
    pub(crate) fn member_has(&self, key: &str, inner: &str) -> bool {
        self.get(key)
            .and_then(|raw| serde_json::from_str::<crate::JsonObject>(raw.get()).ok())
            .is_some_and(|obj| obj.contains_key(inner))
    }

    /// Decodes the whole object into `T` from its original text.
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let len = self
            .0
            .iter()
            .map(|(k, v)| k.len() + v.get().len() + 4)
            .sum::<usize>()
            + 2;
        let mut text = String::with_capacity(len);
        text.push('{');
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&serde_json::to_string(k)?);
            text.push(':');
            text.push_str(v.get());
        }
        text.push('}');
        serde_json::from_str(&text)
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RawObjectVisitor;
        impl<'de> serde::de::Visitor<'de> for RawObjectVisitor {
            type Value = RawObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawObject, A::Error> {
                let mut members = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    let v: Box<serde_json::value::RawValue> = map.next_value()?;
                    members.push((k, v));
                }
                Ok(RawObject(members))
            }
        }
        d.deserialize_map(RawObjectVisitor)
    }
}
