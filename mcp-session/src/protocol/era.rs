//! The era decision table: what an answer to the `server/discover` probe
//! means, by the spec's rules for stdio and for HTTP. Synchronous and
//! without IO: `negotiate.rs` sends the probe and does what the verdict
//! says (ask again, start the server again, `initialize`, or fail).
//!
//! | probe outcome | stdio | HTTP |
//! |---|---|---|
//! | a `DiscoverResult` listing 2026-07-28 | modern | modern |
//! | a `DiscoverResult` listing no modern version | legacy | legacy |
//! | `-32022` listing a modern version we speak | retry once | retry once |
//! | `-32022` listing only legacy versions | legacy | legacy |
//! | `-32020` / `-32021` (recognised modern errors) | error | error |
//! | any other JSON-RPC error (HTTP: in a 200, or a 4xx body, `id` null or not) | legacy | legacy |
//! | a plain or empty 4xx, an empty 2xx | — | legacy |
//! | 401 / 403 | — | authentication error (the credential provider had its retry) |
//! | 5xx, network error, broken stream | — | error, never a downgrade |
//! | a result that is not a `DiscoverResult` | legacy | legacy |
//! | no answer within the probe timeout | legacy | error |
//! | the server exited | respawn it, then legacy | error |

use mcp_transport::RequestFailure;
use mcp_types::{DiscoverResult, Era, ErrorObject, ProtocolVersion, error_codes};

use crate::SessionError;

/// What one answer to the probe means.
#[derive(Debug)]
pub(crate) enum ProbeVerdict {
    /// The server speaks 2026-07-28: go on without a handshake.
    Modern(Box<DiscoverResult>),
    /// A legacy server: `initialize`.
    Legacy,
    /// `-32022` naming a modern version we speak: ask once more.
    Retry,
    /// The stdio server exited on the probe: start it again, then legacy.
    Respawn,
    /// Not an era signal: negotiation fails with this error.
    Fail(SessionError),
}

/// Judges one answer to the probe, over stdio (`stdio`) or HTTP.
pub(crate) fn judge_probe(
    answer: Result<DiscoverResult, SessionError>,
    stdio: bool,
) -> ProbeVerdict {
    match answer {
        Ok(result) if offers_modern(&result.supported_versions) => {
            ProbeVerdict::Modern(Box::new(result))
        }
        Ok(_) => ProbeVerdict::Legacy,
        Err(SessionError::Server { error, .. }) => judge_error(*error),
        Err(SessionError::Http { failure, method }) => match failure {
            RequestFailure::Status {
                status: 401 | 403, ..
            } => ProbeVerdict::Fail(SessionError::Http { failure, method }),
            RequestFailure::Status { status, error, .. }
                if (400..500).contains(&status) || (200..300).contains(&status) =>
            {
                // A JSON-RPC error in the body is judged like an answer; a
                // plain or empty 4xx, or an empty 2xx, is a legacy server.
                match error
                    .as_deref()
                    .and_then(|b| serde_json::from_slice::<ErrorObject>(b).ok())
                {
                    Some(error) => judge_error(error),
                    None => ProbeVerdict::Legacy,
                }
            }
            // 5xx, network errors, broken streams: no downgrade.
            failure => ProbeVerdict::Fail(SessionError::Http { failure, method }),
        },
        Err(SessionError::Timeout { .. }) if stdio => ProbeVerdict::Legacy,
        Err(SessionError::BadResult { .. }) => ProbeVerdict::Legacy,
        Err(e) if e.is_dead() && stdio => ProbeVerdict::Respawn,
        Err(e) => ProbeVerdict::Fail(e),
    }
}

/// What a JSON-RPC error answer to the probe means.
fn judge_error(error: ErrorObject) -> ProbeVerdict {
    match error.code {
        error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported = error
                .data_as::<mcp_types::UnsupportedProtocolVersionData>()
                .ok()
                .flatten()
                .map(|d| d.supported)
                .unwrap_or_default();
            // We only speak one modern version; a server that lists it asked
            // for a retry, which is the spec's answer to -32022.
            if offers_modern(&supported) {
                ProbeVerdict::Retry
            } else {
                ProbeVerdict::Legacy
            }
        }
        error_codes::HEADER_MISMATCH | error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            ProbeVerdict::Fail(SessionError::NegotiationRefused {
                code: error.code,
                error: Box::new(error),
            })
        }
        _ => ProbeVerdict::Legacy,
    }
}

/// What a request that failed on a ready connection says of the server's
/// era over HTTP.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AfterFailure {
    /// Nothing: the failure is about the request, or says nothing.
    Nothing,
    /// The server said it no longer speaks the connection's version: a
    /// legacy connection answered `-32022` (or a renewal answered in a
    /// version we cannot take), a 2026 one answered `-32022` listing no
    /// modern version.
    VersionGone,
    /// A 2026 request answered as a legacy server answers the probe (`400`,
    /// `404` or `405` without a modern error: "Server not initialized", a
    /// session asked for): ask `server/discover` to tell.
    Probe,
}

/// Judges a failed request of a ready connection in `era`.
pub(crate) fn after_failure(era: Era, e: &SessionError) -> AfterFailure {
    if let SessionError::UnsupportedVersion { .. } = e {
        return AfterFailure::VersionGone;
    }
    let refused_version = e
        .error_object()
        .filter(|error| error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION);
    match (era, refused_version) {
        (Era::Legacy, Some(_)) => AfterFailure::VersionGone,
        (Era::Legacy, None) => AfterFailure::Nothing,
        (_, Some(error)) => match judge_error(error) {
            ProbeVerdict::Legacy => AfterFailure::VersionGone,
            _ => AfterFailure::Nothing,
        },
        (_, None) if wants_fallback(e) => AfterFailure::Probe,
        (_, None) => AfterFailure::Nothing,
    }
}

/// Whether a handshake that failed under a remembered era was answered in
/// a way that may mean the server now speaks the other one (it was
/// replaced by another release, or rolled back): a JSON-RPC error, a result
/// that is not what the era expects, a version we cannot take, or a 4xx
/// other than 401/403. A server that could not be reached, answered 5xx or
/// not in time says nothing about its era.
pub(crate) fn may_speak_other_era(e: &SessionError) -> bool {
    match e {
        SessionError::Server { .. }
        | SessionError::BadResult { .. }
        | SessionError::UnsupportedVersion { .. }
        | SessionError::NegotiationRefused { .. } => true,
        SessionError::FallbackFailed { first, .. } => may_speak_other_era(first),
        SessionError::Http {
            failure: RequestFailure::Status { status, .. },
            ..
        } => matches!(status, 200..300 | 400..500) && !matches!(status, 401 | 403),
        _ => false,
    }
}

/// Whether an error is `-32022` listing a modern version we speak (as a
/// JSON-RPC answer or in an HTTP error body): the spec's one retry.
pub(crate) fn asks_for_retry(e: &SessionError) -> bool {
    e.error_object()
        .is_some_and(|error| matches!(judge_error(error), ProbeVerdict::Retry))
}

/// Whether a failed `initialize` over Streamable HTTP says "this is an older
/// transport": 400, 404 or 405 without a modern JSON-RPC error in the body.
pub(crate) fn wants_fallback(e: &SessionError) -> bool {
    match e {
        SessionError::Http {
            failure: RequestFailure::Status { status, error, .. },
            ..
        } => matches!(status, 400 | 404 | 405) && modern_error_code(error.as_deref()).is_none(),
        _ => false,
    }
}

/// The code of a recognised modern JSON-RPC error in an HTTP error body.
fn modern_error_code(body: Option<&[u8]>) -> Option<i64> {
    let error: ErrorObject = serde_json::from_slice(body?).ok()?;
    matches!(
        error.code,
        error_codes::UNSUPPORTED_PROTOCOL_VERSION
            | error_codes::HEADER_MISMATCH
            | error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY
    )
    .then_some(error.code)
}

/// Whether `versions` holds a modern version we speak.
pub(crate) fn offers_modern(versions: &[String]) -> bool {
    versions
        .iter()
        .filter_map(|v| ProtocolVersion::parse(v))
        .any(|v| v.era() == Era::Modern)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use mcp_transport::{CloseReason, ExitInfo};
    use serde_json::json;

    use super::*;

    /// The verdict's name, for a table.
    fn name(v: &ProbeVerdict) -> String {
        match v {
            ProbeVerdict::Modern(_) => "modern".into(),
            ProbeVerdict::Legacy => "legacy".into(),
            ProbeVerdict::Retry => "retry".into(),
            ProbeVerdict::Respawn => "respawn".into(),
            ProbeVerdict::Fail(SessionError::NegotiationRefused { code, .. }) => {
                format!("refused {code}")
            }
            ProbeVerdict::Fail(SessionError::Http {
                failure: RequestFailure::Status { status, .. },
                ..
            }) => format!("error {status}"),
            ProbeVerdict::Fail(e) => {
                format!("error {}", e.to_string().split(' ').next().unwrap_or(""))
            }
        }
    }

    fn discover(versions: &[&str]) -> Result<DiscoverResult, SessionError> {
        Ok(serde_json::from_value(json!({
            "supportedVersions": versions, "capabilities": {},
        }))
        .unwrap())
    }

    fn rpc_error(code: i64, supported: &[&str]) -> ErrorObject {
        let mut error = ErrorObject::new(code, "no");
        if !supported.is_empty() {
            error.data = Some(json!({"supported": supported, "requested": "2026-07-28"}));
        }
        error
    }

    fn answered(error: ErrorObject) -> Result<DiscoverResult, SessionError> {
        Err(SessionError::Server {
            method: "server/discover".into(),
            code: error.code,
            error: Box::new(error),
        })
    }

    fn status(status: u16, body: Option<ErrorObject>) -> Result<DiscoverResult, SessionError> {
        Err(SessionError::Http {
            method: "server/discover".into(),
            failure: RequestFailure::Status {
                status,
                error: body.map(|e| Bytes::from(serde_json::to_vec(&e).unwrap())),
                www_authenticate: None,
            },
        })
    }

    fn failure(failure: RequestFailure) -> Result<DiscoverResult, SessionError> {
        Err(SessionError::Http {
            method: "server/discover".into(),
            failure,
        })
    }

    fn timeout() -> Result<DiscoverResult, SessionError> {
        Err(SessionError::Timeout {
            method: "server/discover".into(),
            after: Duration::from_secs(10),
        })
    }

    fn dead() -> Result<DiscoverResult, SessionError> {
        Err(SessionError::Dead(ExitInfo::without_process(
            CloseReason::EndOfStream,
        )))
    }

    fn bad_result() -> Result<DiscoverResult, SessionError> {
        Err(SessionError::BadResult {
            method: "server/discover".into(),
            source: serde_json::from_str::<u8>("x").unwrap_err(),
        })
    }

    /// A row of the table: its name, the outcome, the verdicts on stdio and
    /// on HTTP.
    type Row = (
        &'static str,
        fn() -> Result<DiscoverResult, SessionError>,
        &'static str,
        &'static str,
    );

    /// Each row of the table in the module docs.
    #[test]
    fn the_decision_table() {
        let rows: Vec<Row> = vec![
            (
                "modern result",
                || discover(&["2026-07-28"]),
                "modern",
                "modern",
            ),
            (
                "legacy-only result",
                || discover(&["2025-06-18"]),
                "legacy",
                "legacy",
            ),
            (
                "-32022 with a modern version",
                || {
                    answered(rpc_error(
                        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                        &["2026-07-28"],
                    ))
                },
                "retry",
                "retry",
            ),
            (
                "-32022 with legacy versions",
                || {
                    answered(rpc_error(
                        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                        &["2025-06-18"],
                    ))
                },
                "legacy",
                "legacy",
            ),
            (
                "-32020",
                || answered(rpc_error(error_codes::HEADER_MISMATCH, &[])),
                "refused -32020",
                "refused -32020",
            ),
            (
                "-32021",
                || {
                    answered(rpc_error(
                        error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        &[],
                    ))
                },
                "refused -32021",
                "refused -32021",
            ),
            (
                "method not found",
                || answered(rpc_error(-32601, &[])),
                "legacy",
                "legacy",
            ),
            (
                "400 with -32022 modern",
                || {
                    status(
                        400,
                        Some(rpc_error(
                            error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                            &["2026-07-28"],
                        )),
                    )
                },
                "retry",
                "retry",
            ),
            (
                "400 with -32020",
                || status(400, Some(rpc_error(error_codes::HEADER_MISMATCH, &[]))),
                "refused -32020",
                "refused -32020",
            ),
            (
                "404 with another JSON-RPC error",
                || status(404, Some(rpc_error(-32601, &[]))),
                "legacy",
                "legacy",
            ),
            ("plain 405", || status(405, None), "legacy", "legacy"),
            ("empty 202", || status(202, None), "legacy", "legacy"),
            ("401", || status(401, None), "error 401", "error 401"),
            (
                "403",
                || status(403, Some(rpc_error(-32601, &[]))),
                "error 403",
                "error 403",
            ),
            ("500", || status(500, None), "error 500", "error 500"),
            (
                "network",
                || failure(RequestFailure::Network),
                "error `server/discover`",
                "error `server/discover`",
            ),
            (
                "broken stream",
                || failure(RequestFailure::StreamBroken),
                "error `server/discover`",
                "error `server/discover`",
            ),
            ("not a DiscoverResult", bad_result, "legacy", "legacy"),
            (
                "no answer in time",
                timeout,
                "legacy",
                "error `server/discover`",
            ),
            ("the server exited", dead, "respawn", "error the"),
        ];
        for (row, outcome, on_stdio, on_http) in rows {
            assert_eq!(
                name(&judge_probe(outcome(), true)),
                on_stdio,
                "stdio: {row}"
            );
            assert_eq!(name(&judge_probe(outcome(), false)), on_http, "HTTP: {row}");
        }
    }

    #[test]
    fn the_fallback_to_legacy_sse_is_for_plain_400_404_405_only() {
        let fails = |r: Result<DiscoverResult, SessionError>| wants_fallback(&r.unwrap_err());
        assert!(fails(status(404, None)));
        assert!(fails(status(405, Some(rpc_error(-32601, &[])))));
        assert!(!fails(status(
            400,
            Some(rpc_error(error_codes::HEADER_MISMATCH, &[]))
        )));
        assert!(!fails(status(401, None)));
        assert!(!fails(status(500, None)));
        assert!(!fails(timeout()));
    }
}
