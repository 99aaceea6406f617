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
