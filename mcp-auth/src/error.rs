//! The one error type of this crate.
//!
//! Architecture Invariant: no `Display` or `Debug` here contains a token, an
//! authorization code, a PKCE verifier, a client secret or an
//! `Authorization` header. Words a server chose (an OAuth `error` code) are
//! kept behind [`AuthError::oauth_error`], never in `Display`.

use std::fmt;
use std::io;
use std::path::PathBuf;

use mcp_types::ErrorCause;

/// Which step of the flow an HTTP failure happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Fetching protected resource metadata (RFC 9728).
    ResourceMetadata,
    /// Fetching authorization server metadata (RFC 8414 / OIDC discovery).
    ServerMetadata,
    /// Dynamic client registration (RFC 7591).
    Registration,
    /// The authorization request (the user's part).
    Authorization,
    /// Exchanging the authorization code for tokens.
    Token,
    /// Refreshing an access token.
    Refresh,
    /// Exchanging an identity assertion at an enterprise identity provider
    /// (RFC 8693).
    TokenExchange,
    /// Fetching an enterprise identity provider's metadata.
    IdentityProviderMetadata,
    /// Revoking a token at logout (RFC 7009).
    Revocation,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::ResourceMetadata => "protected resource metadata",
            Step::ServerMetadata => "authorization server metadata",
            Step::Registration => "client registration",
            Step::Authorization => "authorization",
            Step::Token => "token",
            Step::Refresh => "token refresh",
            Step::TokenExchange => "token exchange",
            Step::IdentityProviderMetadata => "identity provider metadata",
            Step::Revocation => "token revocation",
        })
    }
}

/// Which URL a check refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlRole {
    /// The MCP server URL the provider was built for.
    Server,
    /// A protected resource metadata URL.
    ResourceMetadata,
    /// An authorization server (issuer) or its metadata URL.
    AuthorizationServer,
    /// The authorization endpoint.
    AuthorizationEndpoint,
    /// The token endpoint.
    TokenEndpoint,
    /// The registration endpoint.
    RegistrationEndpoint,
    /// The revocation endpoint (RFC 7009).
    RevocationEndpoint,
    /// The redirect URI, or a redirect's `Location`.
    Redirect,
    /// The Client ID Metadata Document URL.
    ClientMetadataDocument,
    /// An enterprise identity provider (issuer, metadata or token endpoint).
    IdentityProvider,
}

impl fmt::Display for UrlRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlRole::Server => "MCP server",
            UrlRole::ResourceMetadata => "protected resource metadata",
            UrlRole::AuthorizationServer => "authorization server",
            UrlRole::AuthorizationEndpoint => "authorization endpoint",
            UrlRole::TokenEndpoint => "token endpoint",
            UrlRole::RegistrationEndpoint => "registration endpoint",
            UrlRole::RevocationEndpoint => "revocation endpoint",
            UrlRole::Redirect => "redirect",
            UrlRole::ClientMetadataDocument => "client metadata document",
            UrlRole::IdentityProvider => "identity provider",
        })
    }
}

/// Which count of authorizations reached its limit
/// ([`AuthError::TooManyAuthorizations`]). Both use
/// [`OAuthConfig::max_authorizations`](crate::OAuthConfig::max_authorizations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthorizationLimit {
    /// Authorizations for one scope set within
    /// [`AUTHORIZATION_WINDOW`](crate::AUTHORIZATION_WINDOW): a server that
    /// never accepts what it was given.
    SameScopes,
    /// Step-ups (403 `insufficient_scope`) since the provider was made or
    /// last asked to [`login`](crate::OAuthProvider::login), whatever the
    /// scopes: a server that names a new scope in every challenge.
    StepUps,
}

impl fmt::Display for AuthorizationLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AuthorizationLimit::SameScopes => "authorizations for the same scopes",
            AuthorizationLimit::StepUps => "step-up authorizations for this server",
        })
    }
}

/// What is wrong with a token store directory
/// ([`AuthError::StoreDirectoryUnsafe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreDirectoryProblem {
    /// Group or other users may create, replace or remove files in it.
    WritableByOthers {
        /// The directory's permission bits.
        mode: u32,
    },
    /// It belongs to another user.
    OwnedByOtherUser {
        /// The owner's user id.
        owner: u32,
    },
    /// It is not a directory.
    NotADirectory,
}

impl fmt::Display for StoreDirectoryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreDirectoryProblem::WritableByOthers { mode } => write!(
                f,
                "is writable by other users (mode {mode:03o}; `chmod 700` it once you have checked its files)"
            ),
            StoreDirectoryProblem::OwnedByOtherUser { owner } => {
                write!(f, "belongs to another user (uid {owner})")
            }
            StoreDirectoryProblem::NotADirectory => f.write_str("is not a directory"),
        }
    }
}

/// What is wrong with a configured credential source: a key file, a file
/// or environment variable holding a secret or an assertion
/// ([`AuthError::Credential`]). Never carries the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceProblem {
    /// The file could not be read.
    Unreadable(io::ErrorKind),
    /// Group or other users may read or write the file.
    AccessibleToOthers {
        /// The file's permission bits.
        mode: u32,
    },
    /// Larger than the bound.
    TooLarge {
        /// The bound, in bytes.
        limit: u64,
    },
    /// The environment variable is not set, empty, or not UTF-8 (or the
    /// file is empty).
    Empty,
    /// Not a PEM private key.
    NotAKey,
    /// A private key, but not a P-256 one (ES256 is the one algorithm used).
    NotP256,
    /// Not a compact JWT (three base64url parts, a JSON header and claims).
    NotAJwt,
}

impl fmt::Display for SourceProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceProblem::Unreadable(kind) => write!(f, "it cannot be read ({kind})"),
            SourceProblem::AccessibleToOthers { mode } => write!(
                f,
                "other users may access it (mode {mode:03o}; `chmod 600` it)"
            ),
            SourceProblem::TooLarge { limit } => write!(f, "it is larger than {limit} bytes"),
            SourceProblem::Empty => f.write_str("it is unset or empty"),
            SourceProblem::NotAKey => f.write_str("it holds no PEM private key"),
            SourceProblem::NotP256 => {
                f.write_str("it is not a P-256 (ES256) private key, the one kind used")
            }
            SourceProblem::NotAJwt => f.write_str("it does not hold a compact JWT"),
        }
    }
}

/// Which party asked for a DPoP nonce once more after its nonce was used
/// ([`AuthError::DpopNonceLoop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NonceParty {
    /// The authorization server's token endpoint.
    AuthorizationServer,
    /// The MCP server.
    ResourceServer,
}

impl fmt::Display for NonceParty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NonceParty::AuthorizationServer => "authorization server",
            NonceParty::ResourceServer => "MCP server",
        })
    }
}

/// An OAuth `error` code as a server sent it. Only codes registered by the
/// OAuth RFCs are shown by `Debug`; anything else reads `(unregistered)`, so
/// a server cannot smuggle text (or a secret it echoes) into logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerErrorCode(String);

/// Error codes of RFC 6749, 6750, 7009, 7591, 8707, 9449 and OIDC Core.
const REGISTERED_CODES: &[&str] = &[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "access_denied",
    "unsupported_response_type",
    "server_error",
    "temporarily_unavailable",
    "invalid_target",
    "invalid_token",
    "insufficient_scope",
    "invalid_redirect_uri",
    "invalid_client_metadata",
    "interaction_required",
    "login_required",
    "consent_required",
    "use_dpop_nonce",
    "invalid_dpop_proof",
    "unsupported_token_type",
];

impl ServerErrorCode {
    /// Keeps a server's `error` value, bounded to 128 bytes.
    pub(crate) fn new(code: &str) -> Self {
        let mut end = code.len().min(128);
        while !code.is_char_boundary(end) {
            end -= 1;
        }
        Self(code[..end].to_owned())
    }

    /// The code exactly as the server sent it (bounded).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ServerErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if REGISTERED_CODES.contains(&self.0.as_str()) {
            write!(f, "{:?}", self.0)
        } else {
            f.write_str("(unregistered)")
        }
    }
}

/// Everything that can go wrong while authenticating to an MCP server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL could not be parsed (it is not shown: it may carry secrets).
    #[error("the {role} URL is not a valid absolute URL")]
    InvalidUrl {
        /// Which URL.
        role: UrlRole,
    },
    /// Plain `http://` to a host that is not loopback.
    #[error("refusing the {role} URL: plain http:// is allowed on loopback only")]
    InsecureUrl {
        /// Which URL.
        role: UrlRole,
    },
    /// A scheme other than `https` (or `http` on loopback), such as
    /// `javascript:`, `data:` or `file:`.
    #[error("refusing the {role} URL: scheme `{scheme}` is not allowed")]
    ForbiddenScheme {
        /// Which URL.
        role: UrlRole,
        /// The scheme found (URL schemes are `[a-z0-9+.-]` only).
        scheme: String,
    },
    /// An address in a private, link-local or otherwise internal range that
    /// is neither loopback nor the MCP server's own host.
    #[error("refusing the {role} URL: it names a private or link-local address")]
    PrivateAddress {
        /// Which URL.
        role: UrlRole,
    },
    /// A URL on this machine (loopback, `localhost`, `*.localhost`, an
    /// unspecified address) learnt from a server that is not itself on this
    /// machine: a remote server's metadata may not point the client at local
    /// ports.
    #[error(
        "refusing the {role} URL: it points at this machine (loopback), and the MCP server is not on loopback"
    )]
    LoopbackAddress {
        /// Which URL.
        role: UrlRole,
    },
    /// A URL with `user:password@` in it.
    #[error("refusing the {role} URL: it carries a user name or password")]
    CredentialsInUrl {
        /// Which URL.
        role: UrlRole,
    },
    /// The HTTP exchange failed before an answer.
    #[error("the {step} request failed")]
    Network {
        /// Which step.
        step: Step,
        /// The client's error (its URL removed).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No answer within the time-out.
    #[error("the {step} request timed out")]
    TimedOut {
        /// Which step.
        step: Step,
    },
    /// A response body over the bound.
    #[error("the {step} response is larger than {limit} bytes")]
    ResponseTooLarge {
        /// Which step.
        step: Step,
        /// The bound, in bytes.
        limit: usize,
    },
    /// The server answered with a redirect where none is allowed, or the
    /// HTTP client followed one.
    #[error("the {step} request was redirected; redirects are not followed here")]
    Redirected {
        /// Which step.
        step: Step,
    },
    /// An HTTP status the step cannot use.
    #[error("the {step} request got HTTP {status}")]
    UnexpectedStatus {
        /// Which step.
        step: Step,
        /// The status code.
        status: u16,
    },
    /// The body is not the JSON document the step expects (its content is
    /// not shown).
    #[error("the {step} response is not the JSON document expected")]
    InvalidDocument {
        /// Which step.
        step: Step,
    },
    /// Neither the challenge's `resource_metadata` nor the well-known URLs
    /// gave protected resource metadata (and the 2025-03-26 fallback is off).
    #[error("the server publishes no protected resource metadata")]
    NoResourceMetadata,
    /// The metadata's `resource` is not the server URL (or a parent of it).
    #[error("the protected resource metadata is for another resource than this server")]
    ResourceMismatch,
    /// `authorization_servers` is empty or lists no acceptable URL.
    #[error("the protected resource metadata lists no usable authorization server")]
    NoAuthorizationServer,
    /// Nothing says the server uses OAuth: no protected resource metadata,
    /// no authorization server metadata, and its 2025-03-26 default
    /// registration endpoint (`/register`) is not found.
    #[error(
        "the server shows no sign of OAuth: no protected resource metadata, no authorization server metadata, and no registration endpoint at /register (it may need no sign-in)"
    )]
    NoOAuth,
    /// No metadata document at any of the well-known URLs of the issuer.
    #[error("the authorization server publishes no metadata at the well-known URLs")]
    NoServerMetadata,
    /// The metadata's `issuer` differs from the issuer it was fetched for.
    #[error(
        "the authorization server metadata names another issuer than the one it was fetched for"
    )]
    IssuerMismatch,
    /// `code_challenge_methods_supported` is missing or lacks `S256`.
    #[error("the authorization server does not advertise PKCE with S256; refusing to proceed")]
    PkceNotSupported,
    /// No pre-registered client for this issuer, no Client ID Metadata
    /// Document support (or no document URL configured) and no registration
    /// endpoint.
    #[error(
        "cannot register with the authorization server: configure a pre-registered client id for its issuer (see `AuthError::issuer`) or a client metadata document URL"
    )]
    NoRegistration {
        /// The issuer to configure a client for.
        issuer: String,
    },
    /// The configured Client ID Metadata Document URL is not `https` with a
    /// path.
    #[error("the client metadata document URL must be an https URL with a path")]
    InvalidClientMetadataUrl,
    /// The registration response has no `client_id`.
    #[error("the registration response carries no client_id")]
    RegistrationIncomplete,
    /// The authorization response's `state` is missing or differs.
    #[error("the authorization response's `state` does not match the request")]
    StateMismatch,
    /// `iss` is present and differs from the recorded issuer (RFC 9207).
    #[error("the authorization response comes from another issuer (RFC 9207 `iss` mismatch)")]
    IssuerResponseMismatch,
    /// `iss` is absent although the server advertised it (RFC 9207).
    #[error("the authorization response lacks `iss`, which the authorization server advertised")]
    IssuerResponseMissing,
    /// The authorization server answered the authorization with an error.
    #[error("the authorization server refused the authorization (see `AuthError::oauth_error`)")]
    AuthorizationRefused {
        /// The OAuth error code.
        error: ServerErrorCode,
    },
    /// The authorization response has neither a code nor an error.
    #[error("the authorization response carries no code")]
    MissingCode,
    /// The authorization server refused a token request (a code exchange,
    /// a refresh, a machine grant, a token exchange) or a revocation. Its
    /// `error_description` and `error_uri` are never kept.
    #[error("the authorization server refused the {step} request (HTTP {status})")]
    TokenRefused {
        /// [`Step::Token`], [`Step::Refresh`], [`Step::TokenExchange`] or
        /// [`Step::Revocation`].
        step: Step,
        /// The HTTP status.
        status: u16,
        /// The OAuth error code, when one was sent.
        error: Option<ServerErrorCode>,
    },
    /// The token response's `token_type` is neither `Bearer` nor, after a
    /// DPoP proof, `DPoP`.
    #[error("the token response's token type is neither Bearer nor DPoP bound to our key")]
    UnsupportedTokenType,
    /// A configured credential source (key file, secret or assertion in a
    /// file or environment variable) cannot be used. `origin` names the
    /// source (a path, a variable name), never its value.
    #[error("the {origin} cannot be used: {problem}")]
    Credential {
        /// Which source, as configured.
        origin: String,
        /// What is wrong.
        problem: SourceProblem,
    },
    /// A signature could not be made (the crypto library failed).
    #[error("could not sign a JWT")]
    Signing,
    /// A server asked for a new DPoP nonce again right after the nonce it
    /// gave was used: one retry, then this.
    #[error("the {party} keeps asking for a new DPoP nonce; gave up after one retry")]
    DpopNonceLoop {
        /// Which server.
        party: NonceParty,
    },
    /// DPoP is required (configured, or the MCP server's challenge is
    /// `DPoP`) and the authorization server does not advertise ES256 in
    /// `dpop_signing_alg_values_supported`.
    #[error("DPoP is required but the authorization server does not offer ES256 proofs")]
    DpopNotSupported,
    /// A token is bound to a DPoP key that is not there (the stored record
    /// is damaged): it is never sent as a Bearer token.
    #[error("the stored token is DPoP-bound but its key is missing")]
    DpopKeyMissing,
    /// The authorization server's metadata lists grant types and the
    /// configured grant is not among them.
    #[error("the authorization server does not offer the {grant} grant")]
    GrantNotOffered {
        /// The grant's name.
        grant: &'static str,
    },
    /// The MCP server names another authorization server than the one the
    /// machine client is pinned to
    /// ([`MachineClient::issuer`](crate::MachineClient::issuer)): nothing of
    /// the client was sent there.
    #[error(
        "the server names another authorization server than the one this client is configured for; its credentials were not sent"
    )]
    IssuerNotPinned,
    /// The enterprise identity provider's token endpoint is not on the
    /// configured identity provider's origin: nothing is sent to it.
    #[error(
        "the identity provider's token endpoint is on another origin than the configured identity provider; refusing it"
    )]
    IdentityProviderOrigin,
    /// The identity provider's token exchange answered with another token
    /// type than the identity assertion grant asked for.
    #[error("the token exchange did not return an identity assertion grant (ID-JAG)")]
    NotAnIdentityAssertion,
    /// A re-authorization limit was reached: for one scope set, or for
    /// step-ups whatever their scopes (see `counted`).
    #[error("gave up after {limit} {counted}")]
    TooManyAuthorizations {
        /// The limit.
        limit: u32,
        /// What was counted.
        counted: AuthorizationLimit,
    },
    /// Something listens on the loopback port: most likely another login
    /// waiting for its redirect.
    #[error("something already listens on 127.0.0.1:{port}, most likely another login")]
    LoginInProgress {
        /// The port.
        port: u16,
    },
    /// The loopback port is taken by a connection, not a listener: a recent
    /// connection whose local port it was (the kernel keeps a closed one for
    /// about a minute). It frees by itself; another login is not running.
    #[error(
        "127.0.0.1:{port} is held by a recent connection of another program \
         (not a login); it frees within about a minute, then try again"
    )]
    LoopbackPortHeld {
        /// The port.
        port: u16,
    },
    /// Nobody completed the authorization in time.
    #[error("no authorization arrived within {seconds} s")]
    AuthorizationTimedOut {
        /// The wait, in seconds.
        seconds: u64,
    },
    /// The host's authorization handler gave up (the user cancelled).
    #[error("the authorization was cancelled")]
    Cancelled,
    /// No usable stored credentials, and the handler cannot have a user
    /// sign in ([`crate::AuthorizationHandler::interactive`] is `false`).
    #[error("sign-in required: there are no usable stored credentials for this server")]
    SignInRequired,
    /// A redirect did not go to the registered redirect URI.
    #[error("the authorization redirect does not go to the registered redirect URI")]
    RedirectMismatch,
    /// Local i/o (the loopback listener) failed.
    #[error("local i/o failed during authorization")]
    Io(#[from] io::Error),
    /// The token store could not be read or written.
    #[error("the token store at `{}` could not be used", path.display())]
    Store {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// A token store file is readable or writable by other users.
    #[error("the token store file `{}` is accessible to other users; refusing it (chmod 600)", path.display())]
    StorePermissions {
        /// The file.
        path: PathBuf,
    },
    /// The token store directory could let another user plant, replace or
    /// remove records (or a symbolic link where the lock file goes): it is
    /// refused, never used nor repaired silently.
    #[error("the token store directory `{}` {problem}; refusing it", path.display())]
    StoreDirectoryUnsafe {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        problem: StoreDirectoryProblem,
    },
    /// A token store file is not a valid record.
    #[error("the token store file `{}` is not a valid record", path.display())]
    StoreCorrupt {
        /// The file.
        path: PathBuf,
    },
    /// Neither `XDG_DATA_HOME` nor `HOME` is set.
    #[error("no data directory for the token store: set XDG_DATA_HOME or HOME")]
    NoDataDirectory,
    /// The default HTTP client could not be built (TLS roots, say).
    #[error("could not set up the HTTP client")]
    HttpClient(#[source] reqwest::Error),
}

impl AuthError {
    /// Who or what caused the error.
    ///
    /// A sign-in that the authorization server (or the server's
    /// authorization metadata) made fail is [`ErrorCause::Authorization`]:
    /// a refusal, a document that is missing or wrong, a status the step
    /// cannot use, a mismatch, a step that got no answer in time, too many
    /// re-authorizations, a URL learnt from a metadata document that is
    /// refused, and the loopback listener failing. Kept apart:
    ///
    /// - the MCP server's own URL, the client metadata document URL, a
    ///   missing client registration and the token store (its permissions,
    ///   a corrupt record, no data directory, or it cannot be used) are
    ///   [`ErrorCause::Configuration`], as is an HTTP client that cannot be
    ///   set up;
    /// - an exchange that failed before an answer, or an HTTP 5xx, is a lost
    ///   [`ErrorCause::Connection`];
    /// - a response over its bound is [`ErrorCause::Bound`];
    /// - a sign-in the user cancelled is [`ErrorCause::Cancelled`].
    pub fn cause(&self) -> ErrorCause {
        match self {
            AuthError::InvalidUrl { role }
            | AuthError::InsecureUrl { role }
            | AuthError::ForbiddenScheme { role, .. }
            | AuthError::PrivateAddress { role }
            | AuthError::LoopbackAddress { role }
            | AuthError::CredentialsInUrl { role } => match role {
                UrlRole::Server | UrlRole::ClientMetadataDocument | UrlRole::IdentityProvider => {
                    ErrorCause::Configuration
                }
                UrlRole::ResourceMetadata
                | UrlRole::AuthorizationServer
                | UrlRole::AuthorizationEndpoint
                | UrlRole::TokenEndpoint
                | UrlRole::RegistrationEndpoint
                | UrlRole::RevocationEndpoint
                | UrlRole::Redirect => ErrorCause::Authorization,
            },
            AuthError::Network { .. } => ErrorCause::Connection,
            AuthError::UnexpectedStatus { status, .. } if (500..=599).contains(status) => {
                ErrorCause::Connection
            }
            AuthError::ResponseTooLarge { .. } => ErrorCause::Bound,
            AuthError::TimedOut { .. }
            | AuthError::Redirected { .. }
            | AuthError::UnexpectedStatus { .. }
            | AuthError::InvalidDocument { .. }
            | AuthError::NoResourceMetadata
            | AuthError::ResourceMismatch
            | AuthError::NoAuthorizationServer
            | AuthError::NoOAuth
            | AuthError::NoServerMetadata
            | AuthError::IssuerMismatch
            | AuthError::PkceNotSupported
            | AuthError::RegistrationIncomplete
            | AuthError::StateMismatch
            | AuthError::IssuerResponseMismatch
            | AuthError::IssuerResponseMissing
            | AuthError::AuthorizationRefused { .. }
            | AuthError::MissingCode
            | AuthError::TokenRefused { .. }
            | AuthError::UnsupportedTokenType
            | AuthError::DpopNonceLoop { .. }
            | AuthError::DpopNotSupported
            | AuthError::GrantNotOffered { .. }
            | AuthError::IssuerNotPinned
            | AuthError::NotAnIdentityAssertion
            | AuthError::TooManyAuthorizations { .. }
            | AuthError::LoginInProgress { .. }
            | AuthError::LoopbackPortHeld { .. }
            | AuthError::AuthorizationTimedOut { .. }
            | AuthError::SignInRequired
            | AuthError::RedirectMismatch
            | AuthError::Io(_) => ErrorCause::Authorization,
            AuthError::NoRegistration { .. }
            | AuthError::InvalidClientMetadataUrl
            | AuthError::Store { .. }
            | AuthError::StorePermissions { .. }
            | AuthError::StoreDirectoryUnsafe { .. }
            | AuthError::StoreCorrupt { .. }
            | AuthError::NoDataDirectory
            | AuthError::Credential { .. }
            | AuthError::Signing
            | AuthError::DpopKeyMissing
            | AuthError::IdentityProviderOrigin
            | AuthError::HttpClient(_) => ErrorCause::Configuration,
            AuthError::Cancelled => ErrorCause::Cancelled,
        }
    }

    /// The OAuth `error` code a server sent, for the errors that carry one.
    /// These are the server's words: show them labelled as such.
    pub fn oauth_error(&self) -> Option<&str> {
        match self {
            AuthError::AuthorizationRefused { error } => Some(error.as_str()),
            AuthError::TokenRefused { error, .. } => error.as_ref().map(ServerErrorCode::as_str),
            _ => None,
        }
    }

    /// The issuer a client must be configured for ([`AuthError::NoRegistration`]).
    pub fn issuer(&self) -> Option<&str> {
        match self {
            AuthError::NoRegistration { issuer } => Some(issuer),
            _ => None,
        }
    }

    /// A key file that cannot be used.
    pub(crate) fn key_file(path: &std::path::Path, problem: SourceProblem) -> Self {
        AuthError::Credential {
            origin: format!("key file `{}`", path.display()),
            problem,
        }
    }

    /// For [`CredentialProvider::authorization`](mcp_transport::CredentialProvider::authorization),
    /// and [`on_unauthorized`](mcp_transport::CredentialProvider::on_unauthorized),
    /// whose error type is the transport's: the auth error travels as the
    /// source of [`TransportError::CredentialSource`](mcp_transport::TransportError::CredentialSource)
    /// (get it back with `downcast_ref::<AuthError>()` on the source).
    pub(crate) fn into_transport(self) -> mcp_transport::TransportError {
        mcp_transport::TransportError::CredentialSource(Box::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_codes_show_in_debug() {
        assert_eq!(
            format!("{:?}", ServerErrorCode::new("invalid_grant")),
            "\"invalid_grant\""
        );
        let odd = ServerErrorCode::new("rt_abc123 secret");
        assert_eq!(format!("{odd:?}"), "(unregistered)");
        assert_eq!(odd.as_str(), "rt_abc123 secret");
        let long = "é".repeat(100);
        assert!(ServerErrorCode::new(&long).as_str().len() <= 128);
    }

    #[test]
    fn causes_of_representative_auth_errors() {
        assert_eq!(AuthError::SignInRequired.cause(), ErrorCause::Authorization);
        assert_eq!(
            AuthError::TokenRefused {
                step: Step::Refresh,
                status: 400,
                error: None,
            }
            .cause(),
            ErrorCause::Authorization
        );
        // The server's URL is configuration; one learnt from metadata is not.
        assert_eq!(
            AuthError::InsecureUrl {
                role: UrlRole::Server
            }
            .cause(),
            ErrorCause::Configuration
        );
        assert_eq!(
            AuthError::LoopbackAddress {
                role: UrlRole::TokenEndpoint
            }
            .cause(),
            ErrorCause::Authorization
        );
        let status = |status| AuthError::UnexpectedStatus {
            step: Step::ServerMetadata,
            status,
        };
        assert_eq!(status(503).cause(), ErrorCause::Connection);
        assert_eq!(status(404).cause(), ErrorCause::Authorization);
        assert_eq!(
            AuthError::StoreDirectoryUnsafe {
                path: PathBuf::from("/tmp/x"),
                problem: StoreDirectoryProblem::NotADirectory,
            }
            .cause(),
            ErrorCause::Configuration
        );
        assert_eq!(
            AuthError::ResponseTooLarge {
                step: Step::Token,
                limit: 1
            }
            .cause(),
            ErrorCause::Bound
        );
        assert_eq!(AuthError::Cancelled.cause(), ErrorCause::Cancelled);
    }

    #[test]
    fn accessors_expose_server_words_only_on_request() {
        let err = AuthError::TokenRefused {
            step: Step::Refresh,
            status: 400,
            error: Some(ServerErrorCode::new("invalid_grant")),
        };
        assert_eq!(err.oauth_error(), Some("invalid_grant"));
        assert!(!err.to_string().contains("invalid_grant"));
        let err = AuthError::NoRegistration {
            issuer: "https://as.example".into(),
        };
        assert_eq!(err.issuer(), Some("https://as.example"));
    }
}
