//! Where the credential header of an HTTP transport comes from.
//!
//! A [`CredentialProvider`] is asked for the header before every request, so
//! a provider that refreshes tokens (OAuth, in `mcp-auth`) always hands out a
//! current one. [`StaticHeader`] reads a named environment variable: the
//! configuration names the *source* of a secret, never the secret.

use std::fmt;

use crate::TransportError;
use crate::connection::BoxFuture;

/// Supplies the credential header of an HTTP transport.
///
/// Implementations must keep secrets out of their `Debug` output and out of
/// every error they return.
pub trait CredentialProvider: Send + Sync + fmt::Debug {
    /// The header to send with the next request (name, value), or `None` for
    /// no credential. An error stops the request (at connect: the connection).
    fn authorization(&self) -> BoxFuture<'_, Result<Option<(String, String)>, TransportError>>;

    /// The server answered `status` (401 or 403) with this `WWW-Authenticate`
    /// text (several headers are joined with `", "`). Returns whether new
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
        status: u16,
        www_authenticate: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, TransportError>>;
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
    fn authorization(&self) -> BoxFuture<'_, Result<Option<(String, String)>, TransportError>> {
        let result = self.read().map(|value| Some((self.header.clone(), value)));
        Box::pin(async move { result })
    }

    fn on_unauthorized<'a>(
        &'a self,
        _status: u16,
        _www_authenticate: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, TransportError>> {
        // A static credential cannot get better by asking again.
        Box::pin(async { Ok(false) })
    }
}
