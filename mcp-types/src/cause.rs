//! Who or what caused an error: one small vocabulary for every crate's error.

use std::fmt;

/// Who or what caused an error, so that a host can react to any error of the
/// workspace (`TypesError`, `CodecError`, `TransportError`, `SessionError`,
/// `HubError`, `AuthError`, each through its `cause()` method) without
/// walking several crates' enums: fix the request, fix the configuration, ask
/// for approval, sign in, retry later, report the server, raise a bound, or
/// report a bug.
///
/// The set is small on purpose; each value is a different reaction:
///
/// - [`Input`](Self::Input), [`Configuration`](Self::Configuration) and
///   [`Policy`](Self::Policy) are the three things the person running the
///   host can change: the request at hand, the settings, and the governance
///   they (or their administrator) put in place. They are kept apart because
///   the fix is in a different place.
/// - [`Authorization`](Self::Authorization) asks for a sign-in or other
///   credentials, whatever part of the sign-in failed.
/// - [`Connection`](Self::Connection) and [`Server`](Self::Server) split the
///   failures of the other side: no working connection (the server could
///   not be started or reached, or went away: trying again later may help)
///   against a server that is there but answered wrongly, with an error, or
///   not in time. "Network" would be too narrow a name: a local server that
///   cannot be spawned or that crashes loses its connection just as a remote
///   one does, and a host reacts to both the same way.
/// - [`Bound`](Self::Bound): one of this library's limits refused something;
///   a setting can raise it.
/// - [`Cancelled`](Self::Cancelled): stopped on purpose, not a failure.
/// - [`Internal`](Self::Internal): a broken promise between pieces of code,
///   a bug to report.
///
/// A cause is a judgement made where the error is made, with what is known
/// there: a server's JSON-RPC error is [`Server`](Self::Server) whatever its
/// code, since the code is the server's claim. Each error type's `cause()`
/// documents its debatable choices. New values may be added (the enum is
/// `#[non_exhaustive]`), so a match outside this crate needs a fallback arm.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCause {
    /// The request the caller made, refused for what it asks: tool arguments
    /// that do not match the tool's schema or exceed the argument bound, an
    /// unknown or ambiguous name, a malformed tool call from a model, a
    /// missing or contradictory command-line word. Nothing was sent; the
    /// person or model behind the request can fix it.
    Input,
    /// A setting or configuration, or this machine's set-up: an invalid or
    /// plain-`http://` server URL, credentials written into a URL, an invalid
    /// server name or setting, an unreadable or invalid configuration or
    /// authority document, a token store with unsafe permissions, no home
    /// directory. Fixed by changing the configuration.
    Configuration,
    /// The host's or user's governance refused the operation: an authority
    /// document's allow-list or permissions, an approval hook, a project file
    /// not yet approved, the `reject` collision policy. Nothing was sent;
    /// fixed by approving or changing the policy, not the request.
    Policy,
    /// Credentials are missing, refused or could not be obtained: an HTTP 401
    /// or 403, a credential variable that is not set, a sign-in that is
    /// required, refused, or failed at the authorization server.
    Authorization,
    /// There is no working connection to the server: it could not be started
    /// (the program is missing, this process is out of file descriptors) or
    /// reached (connection refused, reset, DNS, TLS), it did not become
    /// ready within its start deadline, it exited or crashed, its session or
    /// reply stream was lost, or its HTTP front answered 5xx. A request in
    /// flight may or may not have taken effect; trying again later may help.
    Connection,
    /// The server is there but did not do its part: it answered with a
    /// JSON-RPC error (any code: the code is the server's claim), a result
    /// that breaks the protocol or its own schema, a refusal, a feature this
    /// client does not have, or no answer within the request's deadline; or
    /// it does not offer what was asked.
    Server,
    /// One of this library's bounds refused something rather than let it
    /// grow: a frame, a result or a reply body over its size, too many
    /// requests in flight or calls queued, too many pages, items, rounds or
    /// subscriptions. A setting can raise the bound.
    Bound,
    /// The operation was stopped on purpose: the hub or session is shutting
    /// down, the user interrupted, or a sign-in was cancelled.
    Cancelled,
    /// A broken promise between pieces of code, not something a user, a
    /// configuration, a server or the network did: a frame handed to the
    /// encoder with a raw newline in it, request params that cannot be
    /// serialised, a Rust type whose schema is not an object. A bug to
    /// report (in this library or in the code calling it).
    Internal,
}

impl ErrorCause {
    /// A stable snake_case name (`input`, `configuration`, `policy`,
    /// `authorization`, `connection`, `server`, `bound`, `cancelled`,
    /// `internal`), for logs and machine-readable output.
    ///
    /// ```
    /// assert_eq!(mcp_types::ErrorCause::Connection.as_str(), "connection");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCause::Input => "input",
            ErrorCause::Configuration => "configuration",
            ErrorCause::Policy => "policy",
            ErrorCause::Authorization => "authorization",
            ErrorCause::Connection => "connection",
            ErrorCause::Server => "server",
            ErrorCause::Bound => "bound",
            ErrorCause::Cancelled => "cancelled",
            ErrorCause::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCause {
    /// The same word as [`ErrorCause::as_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorCause; 9] = [
        ErrorCause::Input,
        ErrorCause::Configuration,
        ErrorCause::Policy,
        ErrorCause::Authorization,
        ErrorCause::Connection,
        ErrorCause::Server,
        ErrorCause::Bound,
        ErrorCause::Cancelled,
        ErrorCause::Internal,
    ];

    #[test]
    fn names_are_distinct_snake_case_and_shown_by_display() {
        let mut seen = std::collections::HashSet::new();
        for cause in ALL {
            let name = cause.as_str();
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{name}"
            );
            assert!(seen.insert(name), "{name} twice");
            assert_eq!(cause.to_string(), name);
        }
    }
}
