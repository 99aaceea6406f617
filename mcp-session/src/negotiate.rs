//! Era negotiation over stdio, by the spec's rules.
//!
//! `Auto` probes with `server/discover` at 2026-07-28:
//!
//! | probe outcome | verdict |
//! |---|---|
//! | a `DiscoverResult` listing 2026-07-28 | modern |
//! | `-32022` listing a modern version we speak | retry the probe once with it |
//! | `-32022` listing only legacy versions | legacy |
//! | `-32020` / `-32021` (recognised modern errors) | error, never a downgrade |
//! | any other JSON-RPC error | legacy |
//! | no answer within the probe timeout | legacy |
//! | the server exited | respawn it, then legacy |
//!
//! Legacy means `initialize` offering 2025-11-25 on the same connection (or the
//! respawned one). The era is fixed for the life of the connection.

use std::sync::{Arc, Mutex};

use mcp_types::{DiscoverResult, Era, ProtocolVersion, error_codes};

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

pub(crate) async fn negotiate(
    session: Session<Spawned>,
    mode: Negotiation,
) -> Result<Session<Ready>, Failed<Spawned>> {
    match mode {
        Negotiation::Legacy => legacy(session).await,
        Negotiation::Modern => discover(session).await,
        Negotiation::Auto => {
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
    }
}

async fn legacy(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let initialized = session.initialize().await?;
    initialized.ready().await.map_err(|failed| match failed {
        Failed::Dead(e, dead) => Failed::Dead(e, dead),
        // `ready` only fails by losing the connection; a recoverable failure
        // there would still leave an initialized server that never heard
        // `initialized`, which no caller can resume from `Spawned`.
        Failed::Recoverable(e, s) => Failed::Recoverable(e, s.into_phase(spawned())),
    })
}

pub(crate) async fn discover(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let meta = modern_request_meta(&session.link.config);
    let timing = session.link.timing(session.link.config.request_timeout);
    let result = session
        .link
        .request::<mcp_types::requests::Discover>(&Default::default(), Some(&meta), timing)
        .await;
    match result {
        Ok(result) => into_modern(session, result).await,
        Err(e) if e.is_dead() => Err(session.fail(e).await),
        Err(e) => Err(Failed::Recoverable(e, session)),
    }
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
        let verdict = match result {
            Ok(result) => {
                if offers_modern(&result.supported_versions) {
                    Verdict::Modern(Box::new(result))
                } else {
                    Verdict::Legacy
                }
            }
            Err(SessionError::Server { code, error, .. }) => match code {
                error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
                    let supported = error
                        .data_as::<mcp_types::UnsupportedProtocolVersionData>()
                        .ok()
                        .flatten()
                        .map(|d| d.supported)
                        .unwrap_or_default();
                    if offers_modern(&supported) {
                        // We only speak one modern version; the server says it
                        // speaks it too, so asking again is the spec's retry.
                        continue;
                    }
                    Verdict::Legacy
                }
                error_codes::HEADER_MISMATCH | error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                    return Err(Failed::Recoverable(
                        SessionError::NegotiationRefused { code, error },
                        session,
                    ));
                }
                _ => Verdict::Legacy,
            },
            Err(SessionError::Timeout { .. }) => Verdict::Legacy,
            Err(SessionError::BadResult { .. }) => Verdict::Legacy,
            Err(e) if e.is_dead() => Verdict::Respawn,
            Err(e) => return Err(Failed::Recoverable(e, session)),
        };
        return Ok((session, verdict));
    }
    Ok((session, Verdict::Legacy))
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
    };
    Ok(session.into_phase(ready))
}

fn spawned() -> Spawned {
    crate::session::spawned_phase()
}
