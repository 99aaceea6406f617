//! Era negotiation, by the spec's rules for stdio and for HTTP.
//!
//! `Auto` probes with `server/discover` at 2026-07-28:
//!
//! | probe outcome | stdio | HTTP |
//! |---|---|---|
//! | a `DiscoverResult` listing 2026-07-28 | modern | modern |
//! | `-32022` listing a modern version we speak | retry once | retry once |
//! | `-32022` listing only legacy versions | legacy | legacy |
//! | `-32020` / `-32021` (recognised modern errors) | error | error |
//! | any other JSON-RPC error (HTTP: in a 200, or a 4xx body, `id` null or not) | legacy | legacy |
//! | a plain or empty 4xx, an empty 2xx | — | legacy |
//! | 401 / 403 | — | authentication error (the credential provider had its retry) |
//! | 5xx, network error | — | error, never a downgrade |
//! | no answer within the probe timeout | legacy | error |
//! | the server exited | respawn it, then legacy | — |
//!
//! Legacy means `initialize` offering 2025-11-25 with no session id and no
//! 2026 version header; over HTTP, if that `initialize` fails with 400, 404 or
//! 405 and no modern error body, the connector's fallback (legacy HTTP+SSE)
//! is tried. The verdict is remembered per endpoint in the
//! [`EraCache`](crate::EraCache) the host gave (`SessionConfig::era_cache`;
//! HTTP only: a local process may be a different program next time). The era
//! is fixed for the life of the connection.

use std::sync::{Arc, Mutex};

use mcp_transport::RequestFailure;
use mcp_types::{DiscoverResult, Era, ErrorObject, ProtocolVersion, error_codes};

use crate::SessionError;
use crate::config::Negotiation;
use crate::session::{Failed, Link, Ready, Session, Spawned, modern_request_meta};

/// What the probe told us.
enum Verdict {
    Modern(Box<DiscoverResult>),
    Legacy,
    /// The server exited on the probe: start it again, then go legacy.
    Respawn,
}

/// The era the host's cache remembers for this endpoint.
fn remembered(session: &Session<Spawned>) -> Option<Era> {
    let cache = session.link.config.era_cache.as_ref()?;
    cache.get(&session.link.connector.cache_key()?)
}

/// Remembers the era in the host's cache.
fn remember(session: &Session<Ready>) {
    let (Some(cache), Some(key)) = (
        session.link.config.era_cache.as_ref(),
        session.link.connector.cache_key(),
    ) else {
        return;
    };
    cache.insert(key, session.era());
}

pub(crate) async fn negotiate(
    session: Session<Spawned>,
    mode: Negotiation,
) -> Result<Session<Ready>, Failed<Spawned>> {
    let ready = match mode {
        Negotiation::Legacy => legacy(session).await,
        Negotiation::Modern => discover(session).await,
        Negotiation::Auto => match remembered(&session) {
            Some(Era::Legacy) => legacy(session).await,
            Some(_) => discover(session).await,
            None => {
                let (session, verdict) = probe(session).await?;
                match verdict {
                    Verdict::Modern(result) => into_modern(session, *result).await,
                    Verdict::Legacy => legacy(session).await,
                    Verdict::Respawn => {
                        let session = respawn(session).await?;
                        legacy(session).await
                    }
                }
            }
        },
    }?;
    remember(&ready);
    Ok(ready)
}

async fn legacy(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let initialized = match session.initialize().await {
        Ok(initialized) => initialized,
        Err(Failed::Recoverable(e, session)) if wants_fallback(&e) => {
            let Some(fallback) = session.link.connector.fallback() else {
                return Err(Failed::Recoverable(e, session));
            };
            let config = Arc::clone(&session.link.config);
            let dead = session.close().await;
            let link = match Link::open(fallback, config).await {
                Ok(link) => link,
                Err(e) => return Err(Failed::Dead(e, dead)),
            };
            let session = Session {
                link,
                state: spawned(),
            };
            session.initialize().await?
        }
        Err(failed) => return Err(failed),
    };
    initialized.ready().await.map_err(|failed| match failed {
        Failed::Dead(e, dead) => Failed::Dead(e, dead),
        // `ready` only fails by losing the connection; a recoverable failure
        // there would still leave an initialized server that never heard
        // `initialized`, which no caller can resume from `Spawned`.
        Failed::Recoverable(e, s) => Failed::Recoverable(e, s.into_phase(spawned())),
    })
}

/// Whether a failed `initialize` over Streamable HTTP says "this is an older
/// transport": 400, 404 or 405 without a modern JSON-RPC error in the body.
fn wants_fallback(e: &SessionError) -> bool {
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

pub(crate) async fn discover(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let meta = modern_request_meta(&session.link.config);
    let timing = session.link.timing(session.link.config.request_timeout);
    let mut retried = false;
    loop {
        let result = session
            .link
            .request::<mcp_types::requests::Discover>(&Default::default(), Some(&meta), timing)
            .await;
        match result {
            Ok(result) => return into_modern(session, result).await,
            Err(e) if e.is_dead() => return Err(session.fail(e).await),
            // `-32022` naming a version we speak: the spec's retry, once.
            Err(e) if !retried && asks_for_retry(&e) => retried = true,
            Err(e) => return Err(Failed::Recoverable(e, session)),
        }
    }
}

/// Whether an error is `-32022` listing a modern version we speak (as a
/// JSON-RPC answer or in an HTTP error body).
fn asks_for_retry(e: &SessionError) -> bool {
    e.error_object()
        .is_some_and(|error| matches!(judge_error(error), ErrorVerdict::Retry))
}

/// Sends the probe and reads the verdict. At most one retry (on `-32022`
/// naming a modern version we speak).
async fn probe(session: Session<Spawned>) -> Result<(Session<Spawned>, Verdict), Failed<Spawned>> {
    let meta = modern_request_meta(&session.link.config);
    // The probe is never cancelled: a legacy server must not see a
    // notification before `initialize`, and a late answer is recognised as
    // late by the core.
    let timing = crate::protocol::RequestTiming {
        cancellable: false,
        reset_on_progress: false,
        timeout: session.link.config.probe_timeout,
        open_ended: false,
    };
    for _attempt in 0..2 {
        let result = session
            .link
            .request::<mcp_types::requests::Discover>(&Default::default(), Some(&meta), timing)
            .await;
        let stdio = session.link.connector.is_stdio();
        let verdict = match result {
            Ok(result) => {
                if offers_modern(&result.supported_versions) {
                    Verdict::Modern(Box::new(result))
                } else {
                    Verdict::Legacy
                }
            }
            Err(SessionError::Server { code, error, .. }) => match judge_error(*error) {
                ErrorVerdict::Retry => continue,
                ErrorVerdict::Legacy => Verdict::Legacy,
                ErrorVerdict::Refused(error) => {
                    return Err(Failed::Recoverable(
                        SessionError::NegotiationRefused { code, error },
                        session,
                    ));
                }
            },
            Err(SessionError::Http { failure, method }) => match failure {
                RequestFailure::Status {
                    status: 401 | 403, ..
                } => {
                    return Err(Failed::Recoverable(
                        SessionError::Http { failure, method },
                        session,
                    ));
                }
                RequestFailure::Status { status, error, .. }
                    if (400..500).contains(&status) || (200..300).contains(&status) =>
                {
                    let parsed = error
                        .as_deref()
                        .and_then(|b| serde_json::from_slice::<ErrorObject>(b).ok());
                    match parsed.map(judge_error) {
                        Some(ErrorVerdict::Retry) => continue,
                        Some(ErrorVerdict::Refused(error)) => {
                            let code = error.code;
                            return Err(Failed::Recoverable(
                                SessionError::NegotiationRefused { code, error },
                                session,
                            ));
                        }
                        // A JSON-RPC error that is not a modern one, a plain
                        // or empty 4xx, an empty 2xx: a legacy server.
                        Some(ErrorVerdict::Legacy) | None => Verdict::Legacy,
                    }
                }
                // 5xx, network errors, broken streams: no downgrade.
                failure => {
                    return Err(Failed::Recoverable(
                        SessionError::Http { failure, method },
                        session,
                    ));
                }
            },
            Err(SessionError::Timeout { .. }) if stdio => Verdict::Legacy,
            Err(SessionError::BadResult { .. }) => Verdict::Legacy,
            Err(e) if e.is_dead() && stdio => Verdict::Respawn,
            Err(e) => return Err(Failed::Recoverable(e, session)),
        };
        return Ok((session, verdict));
    }
    Ok((session, Verdict::Legacy))
}

/// What a JSON-RPC error answer to the probe means.
enum ErrorVerdict {
    /// `-32022` naming a modern version we speak: ask again.
    Retry,
    /// Not a modern answer (or `-32022` naming only legacy versions).
    Legacy,
    /// A recognised modern refusal: never a downgrade.
    Refused(Box<ErrorObject>),
}

fn judge_error(error: ErrorObject) -> ErrorVerdict {
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
                ErrorVerdict::Retry
            } else {
                ErrorVerdict::Legacy
            }
        }
        error_codes::HEADER_MISMATCH | error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            ErrorVerdict::Refused(Box::new(error))
        }
        _ => ErrorVerdict::Legacy,
    }
}

fn offers_modern(versions: &[String]) -> bool {
    versions
        .iter()
        .filter_map(|v| ProtocolVersion::parse(v))
        .any(|v| v.era() == Era::Modern)
}

async fn respawn(session: Session<Spawned>) -> Result<Session<Spawned>, Failed<Spawned>> {
    let connector = Arc::clone(&session.link.connector);
    let config = Arc::clone(&session.link.config);
    // The old connection is gone already; collect its child.
    let dead = session.close().await;
    match Link::open(connector, config).await {
        Ok(link) => Ok(Session {
            link,
            state: spawned(),
        }),
        Err(e) => Err(Failed::Dead(e, dead)),
    }
}

async fn into_modern(
    session: Session<Spawned>,
    result: DiscoverResult,
) -> Result<Session<Ready>, Failed<Spawned>> {
    if !offers_modern(&result.supported_versions) {
        let offered = result.supported_versions.join(", ");
        return Err(session
            .fail(SessionError::UnsupportedVersion { offered })
            .await);
    }
    let meta = modern_request_meta(&session.link.config);
    let server_info = result
        .server_info()
        .ok()
        .flatten()
        .unwrap_or_else(|| mcp_types::Implementation::new("unknown", "unknown"));
    session
        .link
        .shared
        .set_protocol_version(ProtocolVersion::V2026_07_28.as_str());
    let ready = Ready {
        era: Era::Modern,
        version: ProtocolVersion::V2026_07_28,
        server_info,
        capabilities: result.capabilities.clone(),
        instructions: result.instructions.clone(),
        request_meta: Some(std::sync::RwLock::new(Arc::new(meta))),
        catalog: Mutex::new(None),
        expiry: Default::default(),
    };
    Ok(session.into_phase(ready))
}

fn spawned() -> Spawned {
    crate::session::spawned_phase()
}
