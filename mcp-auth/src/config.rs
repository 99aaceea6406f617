//! What an [`OAuthProvider`](crate::OAuthProvider) is told by its host.

use std::time::Duration;

use crate::grant::{DpopMode, Grant};
use crate::registration::PreRegisteredClient;

/// Default bound on one discovery, registration or token request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of authorizations allowed for one scope set within
/// [`AUTHORIZATION_WINDOW`], and of step-ups per provider whatever the
/// scopes.
pub const DEFAULT_MAX_AUTHORIZATIONS: u32 = 3;
/// The window in which authorizations for the same scope set are counted.
pub const AUTHORIZATION_WINDOW: Duration = Duration::from_secs(600);

/// Settings of an OAuth provider for one MCP server.
///
/// Only *sources* of credentials are configured here (a machine grant's
/// secrets are [`SecretSource`](crate::SecretSource)s): a client secret of
/// a pre-registered client is the one exception, and `Debug` never shows it.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    pub(crate) server_url: String,
    pub(crate) client_name: String,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) pre_registered: Vec<PreRegisteredClient>,
    pub(crate) dynamic_registration: bool,
    pub(crate) legacy_discovery: bool,
    pub(crate) offline_access: bool,
    pub(crate) allow_private_networks: bool,
    pub(crate) request_timeout: Duration,
    pub(crate) max_authorizations: u32,
    pub(crate) grant: Grant,
    pub(crate) dpop: DpopMode,
}

impl OAuthConfig {
    /// Settings for the MCP server at `server_url` (the same string the
    /// transport is given): dynamic registration allowed, the 2025-03-26
    /// fallbacks on, `offline_access` requested when offered, at most
    /// [`DEFAULT_MAX_AUTHORIZATIONS`] authorizations per scope set and as
    /// many step-ups.
    pub fn new(server_url: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            client_name: "mcp".to_owned(),
            client_metadata_url: None,
            pre_registered: Vec::new(),
            dynamic_registration: true,
            legacy_discovery: true,
            offline_access: true,
            allow_private_networks: false,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_authorizations: DEFAULT_MAX_AUTHORIZATIONS,
            grant: Grant::AuthorizationCode,
            dpop: DpopMode::WhenOffered,
        }
    }

    /// The grant tokens are obtained with (default: the authorization code
    /// grant, a person signing in). With a machine grant the provider never
    /// uses its [`AuthorizationHandler`](crate::AuthorizationHandler): it
    /// requests tokens itself, at the first 401, on
    /// [`login`](crate::OAuthProvider::login) and whenever a token without a
    /// refresh token expires.
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// The grant tokens are obtained with.
    pub fn selected_grant(&self) -> &Grant {
        &self.grant
    }

    /// When tokens are DPoP-bound (default: when offered).
    pub fn dpop(mut self, mode: DpopMode) -> Self {
        self.dpop = mode;
        self
    }

    /// The `client_name` sent in dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The https URL of this client's Client ID Metadata Document, used as
    /// the client id with servers that advertise support.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client registered out of band with one authorization server.
    pub fn pre_registered(mut self, client: PreRegisteredClient) -> Self {
        self.pre_registered.push(client);
        self
    }

    /// Whether dynamic client registration (RFC 7591) may be used.
    pub fn dynamic_registration(mut self, allowed: bool) -> Self {
        self.dynamic_registration = allowed;
        self
    }

    /// Whether servers without protected resource metadata are treated as
    /// in the 2025-03-26 revision (their origin is the authorization server).
    pub fn legacy_discovery(mut self, on: bool) -> Self {
        self.legacy_discovery = on;
        self
    }

    /// Whether to add `offline_access` (for a refresh token) when the
    /// authorization server lists it in `scopes_supported`.
    pub fn offline_access(mut self, on: bool) -> Self {
        self.offline_access = on;
        self
    }

    /// Allows metadata and endpoints on private-network IP addresses other
    /// than the MCP server's own (an intranet deployment).
    pub fn allow_private_networks(mut self, allowed: bool) -> Self {
        self.allow_private_networks = allowed;
        self
    }

    /// Bound on each discovery, registration and token request.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// At most this many authorizations for the same scope set within
    /// [`AUTHORIZATION_WINDOW`] (a server that never accepts what it asked
    /// for stops there), and at most this many step-ups (403
    /// `insufficient_scope`) whatever the scopes, from the provider's
    /// creation or its last [`login`](crate::OAuthProvider::login) on (a
    /// server naming a new scope in every challenge stops there). Beyond
    /// either: [`AuthError::TooManyAuthorizations`](crate::AuthError::TooManyAuthorizations).
    pub fn max_authorizations(mut self, max: u32) -> Self {
        self.max_authorizations = max;
        self
    }

    /// The MCP server URL.
    pub fn server_url(&self) -> &str {
        &self.server_url
    }
}
