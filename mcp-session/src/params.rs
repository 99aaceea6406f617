//! Request params on their way to the wire, with the `_meta` keys the session
//! adds (the 2026 per-request keys, progress tokens).

use std::borrow::Cow;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::SessionError;

/// Serialised params, kept as an object when the session still has to add
/// `_meta` keys.
#[derive(Debug)]
pub(crate) enum Params<'a> {
    /// No params member.
    None,
    /// Final bytes.
    Raw(Box<RawValue>),
    /// An object that still gets `_meta` keys (borrowed when a caller keeps
    /// it for another round or attempt: it may hold megabytes of arguments).
    Object(Cow<'a, Map<String, Value>>),
}

impl Params<'static> {
    /// Serialises `params`; as an object when `_meta` keys will be added.
    pub(crate) fn encode<P: Serialize + ?Sized>(
        params: &P,
        editable: bool,
    ) -> Result<Self, SessionError> {
        if editable {
            match serde_json::to_value(params).map_err(SessionError::Params)? {
                Value::Object(map) => Ok(Params::Object(Cow::Owned(map))),
                Value::Null => Ok(Params::Object(Cow::Owned(Map::new()))),
                _ => Err(SessionError::Params(serde::ser::Error::custom(
                    "request params must serialise to a JSON object",
                ))),
            }
        } else {
            let raw = serde_json::value::to_raw_value(params).map_err(SessionError::Params)?;
            if raw.get() == "null" {
                return Ok(Params::None);
            }
            Ok(Params::Raw(raw))
        }
    }
}

impl Params<'_> {
    /// The final params: `extra_meta` keys are added to `_meta` unless the
    /// caller set them already; a progress token is set to `progress`.
    /// Written straight from the borrowed maps: nothing is cloned.
    pub(crate) fn finish(
        self,
        extra_meta: Option<&Map<String, Value>>,
        progress: Option<i64>,
    ) -> Option<Box<RawValue>> {
        let map = match self {
            Params::Raw(raw) => return Some(raw),
            Params::None if extra_meta.is_none() && progress.is_none() => return None,
            Params::None => Cow::Owned(Map::new()),
            Params::Object(map) => map,
        };
        let finished = Finished {
            map: &map,
            extra: extra_meta,
            progress: progress.map(Value::from),
        };
        // Invariant: a map of JSON values always serialises.
        Some(serde_json::value::to_raw_value(&finished).expect("serialising a JSON object"))
    }
}

/// A params object with the session's `_meta` keys merged in, serialised
/// as if they had been inserted: members in the map's order (sorted), `_meta`
/// at its place among them; in `_meta`, the caller's keys win over the
/// session's, and the progress token over both.
struct Finished<'a> {
    map: &'a Map<String, Value>,
    extra: Option<&'a Map<String, Value>>,
    progress: Option<Value>,
}

const META: &str = "_meta";
const PROGRESS_TOKEN: &str = "progressToken";

impl Serialize for Finished<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.extra.is_none() && self.progress.is_none() {
            return self.map.serialize(s);
        }
        let meta = |existing| MetaView {
            existing,
            extra: self.extra,
            progress: self.progress.as_ref(),
        };
        let mut m = s.serialize_map(None)?;
        let mut meta_written = false;
        for (key, value) in self.map {
            if key == META {
                m.serialize_entry(META, &meta(value.as_object()))?;
                meta_written = true;
                continue;
            }
            if !meta_written && key.as_str() > META {
                m.serialize_entry(META, &meta(None))?;
                meta_written = true;
            }
            m.serialize_entry(key, value)?;
        }
        if !meta_written {
            m.serialize_entry(META, &meta(None))?;
        }
        m.end()
    }
}

/// The merged `_meta` object (see [`Finished`]).
struct MetaView<'a> {
    existing: Option<&'a Map<String, Value>>,
    extra: Option<&'a Map<String, Value>>,
    progress: Option<&'a Value>,
}

impl Serialize for MetaView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let replaced = |key: &str| key == PROGRESS_TOKEN && self.progress.is_some();
        let mut entries: Vec<(&str, &Value)> = Vec::new();
        if let Some(existing) = self.existing {
            entries.extend(
                existing
                    .iter()
                    .filter(|(k, _)| !replaced(k))
                    .map(|(k, v)| (k.as_str(), v)),
            );
        }
        if let Some(extra) = self.extra {
            entries.extend(
                extra
                    .iter()
                    .filter(|(k, _)| {
                        !replaced(k) && self.existing.is_none_or(|e| !e.contains_key(*k))
                    })
                    .map(|(k, v)| (k.as_str(), v)),
            );
        }
        if let Some(token) = self.progress {
            entries.push((PROGRESS_TOKEN, token));
        }
        // The order a map would have kept them in.
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut m = s.serialize_map(Some(entries.len()))?;
        for (k, v) in entries {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule as it was written before the view: clone, insert, serialise.
    fn by_insertion(
        mut map: Map<String, Value>,
        extra: Option<&Map<String, Value>>,
        progress: Option<i64>,
    ) -> String {
        if extra.is_some() || progress.is_some() {
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if !meta.is_object() {
                *meta = Value::Object(Map::new());
            }
            if let Value::Object(meta) = meta {
                for (k, v) in extra.into_iter().flatten() {
                    meta.entry(k.clone()).or_insert_with(|| v.clone());
                }
                if let Some(token) = progress {
                    meta.insert("progressToken".to_owned(), Value::from(token));
                }
            }
        }
        serde_json::to_string(&map).unwrap()
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("_meta".to_owned()),
            Just("progressToken".to_owned()),
            Just("Z".to_owned()),
            Just("_".to_owned()),
            Just("_metb".to_owned()),
            "[A-Za-z_]{0,5}",
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::from),
            "[a-z]{0,4}".prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 12, 4, |inner| {
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        })
    }

    fn object() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::btree_map(key(), value(), 0..5).prop_map(|m| m.into_iter().collect())
    }

    proptest! {
        #[test]
        fn the_view_writes_what_inserting_wrote(
            map in object(),
            extra in prop::option::of(object()),
            progress in prop::option::of(any::<i64>()),
        ) {
            let expected = by_insertion(map.clone(), extra.as_ref(), progress);
            let borrowed = Params::Object(Cow::Borrowed(&map)).finish(extra.as_ref(), progress);
            prop_assert_eq!(borrowed.as_ref().map(|r| r.get()), Some(expected.as_str()));
            let owned = Params::Object(Cow::Owned(map)).finish(extra.as_ref(), progress);
            prop_assert_eq!(owned.map(|r| r.get().to_owned()), Some(expected));
        }
    }

    #[test]
    fn no_params_and_raw_params() {
        assert!(Params::None.finish(None, None).is_none());
        let meta: Map<String, Value> = serde_json::from_str(r#"{"a":1}"#).unwrap();
        let done = Params::None.finish(Some(&meta), Some(7)).unwrap();
        assert_eq!(done.get(), r#"{"_meta":{"a":1,"progressToken":7}}"#);
        let raw = serde_json::value::to_raw_value(&serde_json::json!({"x": 1})).unwrap();
        let kept = Params::Raw(raw).finish(Some(&meta), Some(7)).unwrap();
        assert_eq!(kept.get(), r#"{"x":1}"#);
    }
}
