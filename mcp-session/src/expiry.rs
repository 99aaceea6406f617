//! Recovering a request an HTTP transport lost, when that is safe.
//!
//! - Legacy Streamable HTTP: the server forgot our session (404 on a request
//!   that carried `Mcp-Session-Id`). The session is established again once —
//!   `initialize` without a session id, then `initialized` — and the request
//!   is retried once, unless it was a `tools/call`: a tool call is never
//!   replayed (it may have run), it fails with [`SessionError::NotReplayed`].
//! - A reply stream that broke before its answer and could not be resumed
//!   (always so in 2026, where streams are not resumable): the request is
//!   sent again once, with a new id, unless it is a `tools/call`.

use mcp_types::notifications::Initialized;
use mcp_types::requests::CallTool;
use mcp_types::{Notification as _, Request as _};
use std::future::Future;
use std::sync::atomic::Ordering;

use mcp_transport::RequestFailure;
use mcp_types::ProtocolVersion;

use crate::SessionError;
use crate::protocol::RequestTiming;
use crate::session::{Ready, Session};

impl Session<Ready> {
    /// Runs `attempt`; on an expired server session re-establishes it and,
    /// for anything but `tools/call`, runs `attempt` once more.
    pub(crate) async fn with_expiry<T, F, Fut>(
        &self,
        method: &str,
        attempt: F,
    ) -> Result<T, SessionError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SessionError>>,
    {
        let generation = self.state.expiry.generation.load(Ordering::Acquire);
        match attempt().await {
            Err(SessionError::Http {
                failure: RequestFailure::SessionExpired,
                ..
            }) => {
                // Boxed: the rare path must not grow every request's future.
                Box::pin(self.reinitialize(generation)).await?;
                if method == CallTool::METHOD {
                    return Err(SessionError::NotReplayed {
                        method: method.to_owned(),
                    });
                }
                Box::pin(attempt()).await
            }
            Err(SessionError::Http {
                failure: RequestFailure::StreamBroken,
                ..
            }) if method != CallTool::METHOD => Box::pin(attempt()).await,
            other => other,
        }
    }

    /// `initialize` + `initialized` again, once per expiry however many
    /// requests noticed it.
    async fn reinitialize(&self, seen: u64) -> Result<(), SessionError> {
        let _guard = self.state.expiry.lock.lock().await;
        if self.state.expiry.generation.load(Ordering::Acquire) != seen {
            // Someone else already re-established the session.
            return Ok(());
        }
        let params = mcp_types::InitializeParams::new(
            ProtocolVersion::V2025_11_25.as_str(),
            self.link.config.declared_capabilities(false),
            self.link.config.client_info.clone(),
        );
        let timing = RequestTiming {
            cancellable: false,
            ..self.link.timing(self.link.config.request_timeout)
        };
        let result = self
            .link
            .request::<mcp_types::requests::Initialize>(&params, None, timing)
            .await?;
        if ProtocolVersion::parse(&result.protocol_version) != Some(self.state.version) {
            // The era and version are fixed for the connection; a server that
            // now speaks another version is a different server.
            return Err(SessionError::UnsupportedVersion {
                offered: result.protocol_version,
            });
        }
        self.link.shared.notify(Initialized::METHOD, None).await?;
        self.state.expiry.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}
