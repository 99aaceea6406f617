//! Credentials for MCP servers over HTTP: static header credentials and
//! OAuth 2.1 as the MCP authorization specification describes it
//! (revisions 2025-06-18, 2025-11-25 and 2026-07-28, with the 2025-03-26
//! fallbacks).
//!
//! Both plug into the transport through its
//! [`CredentialProvider`](mcp_transport::CredentialProvider) seam:
//!
//! - **Static credentials**: [`StaticHeader`] (the transport's own type,
//!   re-exported here) sends a header whose value is read from a named
//!   environment variable at connect time; a missing variable is an error
//!   naming it, never an empty header.
//! - **OAuth**: [`OAuthProvider`] answers the server's 401 with discovery
//!   (RFC 9728, then RFC 8414 / OIDC in the spec's path-aware order),
//!   registration (pre-registered client, Client ID Metadata Document, or
//!   RFC 7591 with `application_type`), authorization code + PKCE S256 with
//!   `state`, RFC 8707 `resource` on the authorization, token and refresh
//!   requests, RFC 9207 `iss` checks, and step-up on 403
//!   `insufficient_scope` with retry limits (per scope set, and on
//!   step-ups whatever their scopes). Tokens are refreshed before
//!   expiry and after a 401; concurrent refreshes are serialised.
//!   [`OAuthProvider::logout`] revokes them (RFC 7009) where the
//!   authorization server offers it, then forgets them whatever it
//!   answered ([`Revocation`]). The standard grants and revocation are
//!   the `oauth2` crate's, sent through this crate's HTTP seam; the
//!   machine grants it lacks, DPoP and client assertions are ours (see
//!   `token.rs`).
//!
//! - **Machine and enterprise grants** ([`OAuthConfig::grant`] with a
//!   [`Grant`]): client credentials (a secret by Basic or form, or a
//!   `private_key_jwt` assertion signed with an ES256 [`SigningKey`]), the
//!   RFC 7523 JWT bearer grant with a workload's token, and
//!   enterprise-managed authorization (RFC 8693 token exchange at the
//!   identity provider, then the JWT bearer grant). No person takes part:
//!   the provider requests tokens at the first 401, on
//!   [`OAuthProvider::login`], and again when one expires. Every secret is a
//!   [`SecretSource`] (a variable or a file read on use).
//! - **DPoP** (RFC 9449, [`DpopMode`]): tokens bound to a per-(resource,
//!   issuer) ES256 key when the authorization server offers it, with a fresh
//!   proof on every token and MCP request and one retry per server nonce.
//!
//! Hosts choose:
//! - how the authorization code is obtained ([`AuthorizationHandler`]):
//!   [`LoopbackBrowserFlow`] for a terminal, [`HeadlessRedirectFlow`] for
//!   tests and the conformance client, or their own;
//! - where credentials live ([`TokenStore`]): [`MemoryTokenStore`],
//!   [`FileTokenStore`] (the CLI's, `0600` files under the XDG data
//!   directory), or their own secret store. There is no OS keychain store:
//!   on headless machines there is no secret service, and a host that has
//!   one plugs it in as a `TokenStore`;
//! - the HTTP client of the OAuth requests ([`AuthHttpClient`]; any
//!   `reqwest::Client` is one) for their own egress rules, gateway or mTLS.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_auth::AuthError> {
//! use std::sync::Arc;
//! use mcp_auth::{OAuthConfig, OAuthProvider};
//! use mcp_transport::{HttpConfig, HttpConnector};
//!
//! let url = "https://mcp.example.com/mcp";
//! let oauth = OAuthProvider::interactive(OAuthConfig::new(url).client_name("my-host"))?;
//! let connector = HttpConnector::new(HttpConfig::new(url).credentials(Arc::new(oauth)));
//! # let _ = connector; Ok(()) }
//! ```
//!
//! Authorizing takes time: [`OAuthProvider`] authorizes when the server
//! first answers 401, inside that request, and an interactive
//! authorization (a user in a browser) can take minutes while the session's
//! request deadline keeps running, so the request may time out although the
//! authorization succeeds. Hosts should call [`OAuthProvider::login`] before
//! the first request (as the CLI's `mcp login` does) and leave the 401 path
//! to refreshes and step-ups. When the provider cannot obtain credentials
//! after a 401 / 403, the request fails with
//! [`RequestFailure::Credentials`](mcp_transport::RequestFailure::Credentials)
//! and the [`AuthError`] travels as the source of
//! [`TransportError::CredentialSource`](mcp_transport::TransportError::CredentialSource)
//! (logged by the transport; returned by `on_unauthorized` and, at connect,
//! by the connector).
//!
//! Architecture Invariant: loopback is trusted only for an MCP server that
//! is itself on loopback. A remote server's metadata, its authorization
//! server and that server's endpoints may not point at this machine
//! (127.0.0.0/8, `[::1]`, `localhost`, `*.localhost`, `0.0.0.0`):
//! [`AuthError::LoopbackAddress`], before anything is sent there. Our own
//! loopback redirect URI is not a URL learnt from a server and is not
//! subject to this.
//!
//! Architecture Invariant: no error, log line or `Debug` output of this crate
//! contains a token, an authorization code, a PKCE verifier, a client secret
//! or an `Authorization` header value; such values live in [`Secret`].
#![forbid(unsafe_code)]

mod authorize;
mod challenge;
mod config;
mod discovery;
mod dpop;
mod error;
mod file_store;
mod grant;
mod headless;
mod http;
mod idp;
mod jose;
mod loopback;
mod pkce;
mod provider;
mod registration;
mod revoke;
mod secret;
mod store;
mod token;
mod urls;

pub use authorize::{AuthorizationHandler, AuthorizationRequest, AuthorizationResponse};
pub use config::{
    AUTHORIZATION_WINDOW, DEFAULT_MAX_AUTHORIZATIONS, DEFAULT_REQUEST_TIMEOUT, OAuthConfig,
};
pub use error::{
    AuthError, AuthorizationLimit, NonceParty, ServerErrorCode, SourceProblem, Step,
    StoreDirectoryProblem, UrlRole,
};
pub use file_store::FileTokenStore;
pub use grant::{
    ClientAuth, DpopMode, EnterpriseIdp, Grant, KeySource, MAX_SOURCE_BYTES, MachineClient,
    SecretSource,
};
pub use headless::HeadlessRedirectFlow;
pub use http::{
    AuthHttpClient, AuthHttpRequest, AuthHttpResponse, HttpMethod, MAX_RESPONSE_BODY,
    default_http_client,
};
pub use jose::SigningKey;
pub use loopback::{DEFAULT_LOOPBACK_PORT, LoopbackBrowserFlow};
pub use mcp_transport::StaticHeader;
pub use provider::OAuthProvider;
pub use registration::{PreRegisteredClient, RegistrationKind, TokenAuthMethod};
pub use revoke::Revocation;
pub use secret::Secret;
pub use store::{MemoryTokenStore, StoredCredentials, TokenStore};
