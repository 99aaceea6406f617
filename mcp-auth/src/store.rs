//! Where credentials live between requests and between runs.
//!
//! A record is bound to one MCP server URL and one authorization server
//! (issuer): the provider uses a record only for the server it names, sends
//! its access token only to that server, and its refresh token and client
//! secret only to the token endpoint learnt from that issuer's metadata.
//!
//! There is no OS keychain store: on a headless machine there is no secret
//! service to talk to, and a host that has one plugs it in through
//! [`TokenStore`]. The CLI uses [`FileTokenStore`](crate::FileTokenStore).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use mcp_transport::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::error::AuthError;
use crate::registration::{ClientRegistration, RegistrationKind};
use crate::secret::Secret;
use crate::token::TokenSet;

/// The record format's version.
pub(crate) const RECORD_VERSION: u32 = 1;

/// Credentials for one (MCP server, issuer) pair: the client registration
/// and, once authorized, the tokens.
///
/// It serialises to JSON for stores; the serialised form holds secrets.
/// `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCredentials {
    pub(crate) version: u32,
    pub(crate) server_url: String,
    /// The RFC 8707 resource the tokens were requested for.
    pub(crate) resource: String,
    pub(crate) issuer: String,
    pub(crate) token_endpoint: String,
    pub(crate) client: ClientRegistration,
    pub(crate) tokens: Option<TokenSet>,
    /// The scopes last requested (the base of a step-up).
    pub(crate) requested_scopes: Vec<String>,
    /// Unix seconds of the last save.
    pub(crate) saved_at: u64,
    /// The DPoP key the tokens are bound to (PKCS#8, base64url), one per
    /// (resource, issuer).
    #[serde(default)]
    pub(crate) dpop_key: Option<Secret>,
    /// The authorization server's RFC 7009 revocation endpoint, when it
    /// advertised one (absent from records written before it was kept).
    #[serde(default)]
    pub(crate) revocation_endpoint: Option<String>,
}

impl StoredCredentials {
    /// The MCP server URL the record is bound to.
    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    /// The issuer of the authorization server the record is bound to.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The RFC 8707 resource indicator the tokens were requested for.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Whether an access token is held.
    pub fn has_access_token(&self) -> bool {
        self.tokens.is_some()
    }

    /// How the client id was obtained.
    pub fn registration_kind(&self) -> RegistrationKind {
        self.client.kind
    }

    /// Whether the access token is DPoP-bound (sent with proofs of the
    /// record's key, never as Bearer).
    pub fn is_dpop_bound(&self) -> bool {
        self.tokens.as_ref().is_some_and(|t| t.dpop_bound)
    }

    /// Whether the authorization server advertised a revocation endpoint
    /// (RFC 7009), where [`OAuthProvider::logout`](crate::OAuthProvider::logout)
    /// revokes the tokens.
    pub fn can_revoke(&self) -> bool {
        self.revocation_endpoint.is_some()
    }

    /// The scopes granted with the current token.
    pub fn granted_scopes(&self) -> &[String] {
        self.tokens.as_ref().map_or(&[], |t| &t.scopes)
    }
}

impl fmt::Debug for StoredCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredCredentials")
            .field("server_url", &self.server_url)
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client.client_id)
            .field("registration", &self.client.kind)
            .field("has_access_token", &self.tokens.is_some())
            .field(
                "has_refresh_token",
                &self
                    .tokens
                    .as_ref()
                    .is_some_and(|t| t.refresh_token.is_some()),
            )
            .field(
                "dpop_bound",
                &self.tokens.as_ref().is_some_and(|t| t.dpop_bound),
            )
            .field("saved_at", &self.saved_at)
            .finish_non_exhaustive()
    }
}

/// Keeps [`StoredCredentials`], one record per (server URL, issuer).
///
/// Implementations must keep records confidential (they hold tokens and
/// client secrets) and keep secrets out of their errors and logs.
pub trait TokenStore: Send + Sync + fmt::Debug {
    /// Every record bound to `server_url` (one per issuer).
    fn load(&self, server_url: &str) -> BoxFuture<'_, Result<Vec<StoredCredentials>, AuthError>>;

    /// Saves `record`, replacing the one with the same server URL and issuer.
    fn save(&self, record: StoredCredentials) -> BoxFuture<'_, Result<(), AuthError>>;

    /// Removes the record of (`server_url`, `issuer`), if any.
    fn remove(&self, server_url: &str, issuer: &str) -> BoxFuture<'_, Result<(), AuthError>>;
}

/// A store that forgets everything when the process ends.
#[derive(Default)]
pub struct MemoryTokenStore {
    records: Mutex<HashMap<(String, String), StoredCredentials>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<(String, String), StoredCredentials>) -> R) -> R {
        // A poisoned lock only means another thread panicked mid-update of a
        // map whose entries are replaced whole; the map is still usable.
        let mut guard = self
            .records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.with(|m| m.len());
        f.debug_struct("MemoryTokenStore")
            .field("records", &count)
            .finish()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server_url: &str) -> BoxFuture<'_, Result<Vec<StoredCredentials>, AuthError>> {
        let found = self.with(|m| {
            m.values()
                .filter(|r| r.server_url == server_url)
                .cloned()
                .collect()
        });
        Box::pin(async move { Ok(found) })
    }

    fn save(&self, record: StoredCredentials) -> BoxFuture<'_, Result<(), AuthError>> {
        self.with(|m| {
            m.insert((record.server_url.clone(), record.issuer.clone()), record);
        });
        Box::pin(async { Ok(()) })
    }

    fn remove(&self, server_url: &str, issuer: &str) -> BoxFuture<'_, Result<(), AuthError>> {
        self.with(|m| m.remove(&(server_url.to_owned(), issuer.to_owned())));
        Box::pin(async { Ok(()) })
    }
}
