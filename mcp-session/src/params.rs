//! Request params on their way to the wire, with the `_meta` keys the session
//! adds (the 2026 per-request keys, progress tokens).

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::SessionError;

/// Serialised params, kept as an object when the session still has to add
/// `_meta` keys.
#[derive(Debug)]
pub(crate) enum Params {
    /// No params member.
    None,
    /// Final bytes.
    Raw(Box<RawValue>),
    /// An object that still gets `_meta` keys.
    Object(Map<String, Value>),
}

impl Params {
    /// Serialises `params`; as an object when `_meta` keys will be added.
    pub(crate) fn encode<P: Serialize + ?Sized>(
        params: &P,
        editable: bool,
    ) -> Result<Self, SessionError> {
        if editable {
            match serde_json::to_value(params).map_err(SessionError::Params)? {
                Value::Object(map) => Ok(Params::Object(map)),
                Value::Null => Ok(Params::Object(Map::new())),
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

    /// The final params: `extra_meta` keys are added to `_meta` unless the
    /// caller set them already; a progress token is set to `progress`.
    pub(crate) fn finish(
        self,
        extra_meta: Option<&Map<String, Value>>,
        progress: Option<i64>,
    ) -> Option<Box<RawValue>> {
        match self {
            Params::None => {
                if extra_meta.is_none() && progress.is_none() {
                    return None;
                }
                Params::Object(Map::new()).finish(extra_meta, progress)
            }
            Params::Raw(raw) => Some(raw),
            Params::Object(mut map) => {
                if extra_meta.is_some() || progress.is_some() {
                    let meta = map
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if !meta.is_object() {
                        *meta = Value::Object(Map::new());
                    }
                    if let Value::Object(meta) = meta {
                        if let Some(extra) = extra_meta {
                            for (k, v) in extra {
                                meta.entry(k.clone()).or_insert_with(|| v.clone());
                            }
                        }
                        if let Some(token) = progress {
                            meta.insert("progressToken".to_owned(), Value::from(token));
                        }
                    }
                }
                // Invariant: a map of JSON values always serialises.
                Some(serde_json::value::to_raw_value(&map).expect("serialising a JSON object"))
            }
        }
    }
}
