//! Where the credential headers of an HTTP transport come from.
//!
//! A [`CredentialProvider`] is asked for its headers before every request, so
//! a provider that refreshes tokens (OAuth, in `mcp-auth`) always hands out a
//! current one. [`StaticHeader`] reads a named environment variable: the
//! configuration names the *source* of a secret, never the secret.

use std::fmt;

use crate::TransportError;
use crate::connection::BoxFuture;

/// The request a credential is asked for. A proof-of-possession scheme
/// (DPoP, RFC 9449) signs its method and URL; a bearer credential ignores
/// them.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CredentialTarget<'a> {
    /// The HTTP method (`POST`, `GET`, `DELETE`).
    pub method: &'a str,
    /// The request URL.
    pub url: &'a url::Url,
}

impl<'a> CredentialTarget<'a> {
    /// A target for `method` on `url`.
    pub fn new(method: &'a str, url: &'a url::Url) -> Self {
        Self { method, url }
    }
}

/// A server's 401 or 403, as far as a credential provider may learn from it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Refusal<'a> {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` text (several headers are joined with `", "`).
    pub www_authenticate: Option<&'a str>,
    /// The `DPoP-Nonce` header, when the server sent one (RFC 9449 §9).
    pub dpop_nonce: Option<&'a str>,
}

impl<'a> Refusal<'a> {
    /// A refusal with `status` and the given challenge, without a nonce.
    pub fn new(status: u16, www_authenticate: Option<&'a str>) -> Self {
        Self {
            status,
            www_authenticate,
            dpop_nonce: None,
        }
    }

    /// The same refusal carrying a `DPoP-Nonce`.
    pub fn with_dpop_nonce(mut self, nonce: Option<&'a str>) -> Self {
        self.dpop_nonce = nonce;
        self
    }
}

/// Supplies the credential headers of an HTTP transport.
///
/// Implementations must keep secrets out of their `Debug` output and out of
/// every error they return.
pub trait CredentialProvider: Send + Sync + fmt::Debug {
    /// The headers to send with the next request to `target` (name, value):
    /// empty for no credential, one `Authorization` header for a bearer
    /// token, `Authorization` and `DPoP` for a proof-of-possession token.
    /// An error stops the request (at connect: the connection).
    fn authorization<'a>(
        &'a self,
        target: CredentialTarget<'a>,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>>;

    /// The server answered 401 or 403 (`refusal`). Returns whether new
    /// credentials are ready, in which case the request is sent once more
    /// (with a fresh [`authorization`]); `Ok(false)`: nothing to try, the
    /// server's answer goes to the session as it is. An error says why
    /// credentials could not be obtained (use
    /// [`TransportError::CredentialSource`] for the provider's own failure);
    /// the request then fails with [`RequestFailure::Credentials`] (at
    /// connect: the connect fails with the error).
    ///
    /// The request waits for this future. An interactive authorization (a
    /// user in a browser) can take minutes while the session's request
    /// deadline keeps running, so the request may time out even though the
    /// authorization succeeds: hosts should authorize before the first
    /// request (`mcp-auth`'s `OAuthProvider::login()`, as `mcp login` does)
    /// and leave this path to refreshes and step-ups.
    ///
    /// [`authorization`]: CredentialProvider::authorization
    /// [`RequestFailure::Credentials`]: crate::RequestFailure::Credentials
    fn on_unauthorized<'a>(
        &'a self,
        refusal: Refusal<'a>,
    ) -> BoxFuture<'a, Result<bool, TransportError>>;

    /// A response (of any status) carried `DPoP-Nonce: nonce`. Returns
    /// whether the provider took it for its next proofs. When it did and the
    /// response is a 401 whose challenge is `use_dpop_nonce`, the transport
    /// sends the request once more with a fresh proof, at most once per
    /// request, before asking [`on_unauthorized`]. The default ignores
    /// nonces (a provider without proofs).
    ///
    /// [`on_unauthorized`]: CredentialProvider::on_unauthorized
    fn dpop_nonce(&self, nonce: &str) -> bool {
        let _ = nonce;
        false
    }
}

/// A fixed header whose value is read from an environment variable each time
/// it is needed (first at connect, so a missing variable fails the connect).
///
/// A missing, empty or non-UTF-8 variable is
/// [`TransportError::MissingCredential`] naming the variable; an empty header
/// is never sent.
#[derive(Clone, PartialEq, Eq)]
pub struct StaticHeader {
    header: String,
    prefix: String,
    variable: String,
}

impl StaticHeader {
    /// `<header>: <prefix><value of variable>`. The prefix may be empty
    /// (the value is sent as it is); a non-empty one usually ends with a
    /// space (`"Bearer "`, `"Token "`).
    pub fn new(
        header: impl Into<String>,
        prefix: impl Into<String>,
        variable: impl Into<String>,
    ) -> Self {
        Self {
            header: header.into(),
            prefix: prefix.into(),
            variable: variable.into(),
        }
    }

    /// `Authorization: Bearer <value of variable>`.
    pub fn bearer_from_env(variable: impl Into<String>) -> Self {
        Self::new("Authorization", "Bearer ", variable)
    }

    /// `<header>: <value of variable>`, as it is (an API-key header, say).
    pub fn from_env(header: impl Into<String>, variable: impl Into<String>) -> Self {
        Self::new(header, "", variable)
    }

    /// The header's name.
    pub fn header_name(&self) -> &str {
        &self.header
    }

    /// The text put before the variable's value (may be empty).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The environment variable the value comes from.
    pub fn variable(&self) -> &str {
        &self.variable
    }

    fn read(&self) -> Result<String, TransportError> {
        match std::env::var(&self.variable) {
            Ok(value) if !value.trim().is_empty() => Ok(format!("{}{}", self.prefix, value)),
            _ => Err(TransportError::MissingCredential {
                variable: self.variable.clone(),
            }),
        }
    }
}

impl fmt::Debug for StaticHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticHeader")
            .field("header", &self.header)
            .field("prefix", &self.prefix)
            .field("variable", &self.variable)
            .finish_non_exhaustive()
    }
}

impl CredentialProvider for StaticHeader {
    fn authorization<'a>(
        &'a self,
        _target: CredentialTarget<'a>,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>> {
        let result = self.read().map(|value| vec![(self.header.clone(), value)]);
        Box::pin(async move { result })
    }

    fn on_unauthorized<'a>(
        &'a self,
        _refusal: Refusal<'a>,
    ) -> BoxFuture<'a, Result<bool, TransportError>> {
        // A static credential cannot get better by asking again.
        Box::pin(async { Ok(false) })
    }
}
