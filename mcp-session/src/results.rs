//! Reading results that may carry a 2026 `resultType`.

use serde::de::DeserializeOwned;

use crate::SessionError;

/// Decodes a result that must be complete. A missing `resultType` reads as
/// `complete` (every legacy server); `input_required` and `task` results need
/// host features this path does not offer, and an unknown type is refused.
pub(crate) fn decode_complete<T: DeserializeOwned>(
    method: &str,
    raw: &[u8],
) -> Result<T, SessionError> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "resultType", default)]
        result_type: Option<String>,
    }
    // serde_json skips the other members without building them.
    let probe: Probe = serde_json::from_slice(raw).map_err(|source| SessionError::BadResult {
        method: method.to_owned(),
        source,
    })?;
    match probe.result_type.as_deref() {
        None | Some("complete") => {}
        Some("input_required") => {
            return Err(SessionError::Unsupported {
                method: method.to_owned(),
                feature: "input_required results (multi-round requests)",
            });
        }
        Some("task") => {
            return Err(SessionError::Unsupported {
                method: method.to_owned(),
                feature: "task results",
            });
        }
        Some(_) => {
            return Err(SessionError::BadResult {
                method: method.to_owned(),
                source: serde::de::Error::custom("unknown resultType"),
            });
        }
    }
    serde_json::from_slice(raw).map_err(|source| SessionError::BadResult {
        method: method.to_owned(),
        source,
    })
}
