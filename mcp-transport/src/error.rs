use std::io;

use mcp_types::ErrorCause;

/// Everything that can go wrong in a transport.
///
/// `Display` never includes frame contents, environment values or anything the
/// peer wrote: those may carry secrets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The server program could not be started.
    #[error("could not start server program `{program}`")]
    Spawn {
        /// The program that was to be run.
        program: String,
        /// Why the operating system refused.
        #[source]
        source: io::Error,
    },
    /// The descriptor limit of this process was reached while starting a server.
    #[error(
        "could not start server program `{program}`: the open file limit of this process is exhausted (raise `ulimit -n`)"
    )]
    TooManyOpenFiles {
        /// The program that was to be run.
        program: String,
    },
    /// An incoming frame broke a framing rule (for example it was over the frame
    /// limit); the frame was skipped and reading went on.
    #[error("incoming frame rejected")]
    Codec(#[from] mcp_codec::CodecError),
    /// An outgoing frame could not be encoded (for example it contained a raw
    /// newline, or was over the frame limit).
    #[error("outgoing frame rejected")]
    Encode(#[source] mcp_codec::CodecError),
    /// Reading from or writing to the peer failed; also an exchange of the
    /// HTTP transports' plain-http fast path that failed before an answer
    /// (connection refused, reset, a head that is not HTTP).
    #[error("i/o error talking to the server")]
    Io(#[from] io::Error),
    /// The connection is closed; nothing more can be sent.
    #[error("the connection is closed")]
    Closed,

    // ---- HTTP transports (Streamable HTTP and legacy HTTP+SSE) ----
    // The variants that carry an HTTP library's error exist with the `http`
    // feature only; the others are plain data and stay, so that code
    // matching on them needs no `cfg` of its own.
    /// The server URL could not be parsed. The URL itself is not shown: it
    /// may carry secrets. (Feature `http`.)
    #[cfg(feature = "http")]
    #[error("the server URL is not a valid URL")]
    InvalidUrl(#[source] url::ParseError),
    /// The server URL has a scheme other than `http` or `https`.
    #[error(
        "the server URL has scheme `{scheme}`; only https (and http on loopback) are supported"
    )]
    UnsupportedScheme {
        /// The scheme found.
        scheme: String,
    },
    /// A plain `http://` URL to a host that is not loopback: TLS is required
    /// everywhere else.
    #[error("refusing plain http:// to `{host}`: TLS (https://) is required except on loopback")]
    InsecureUrl {
        /// The host named by the URL.
        host: String,
    },
    /// The server URL carries a user name or password; credentials belong in a
    /// credential provider, never in a URL.
    #[error(
        "the server URL contains credentials (user:password@); use a credential provider instead"
    )]
    CredentialsInUrl,
    /// The environment variable that should hold a credential is not set,
    /// is empty, or is not valid UTF-8. Only its name is shown.
    #[error(
        "environment variable `{variable}` holding the server credential is not set, empty or not UTF-8"
    )]
    MissingCredential {
        /// The variable's name.
        variable: String,
    },
    /// A header to send is not legal header text (configured, computed by the
    /// session, or produced by a credential provider). The value is never
    /// shown; the name only when it is itself a legal header name.
    #[error("header {} is not legal HTTP header text", name.as_deref().map_or_else(|| "(with an illegal name)".to_owned(), |n| format!("`{n}`")))]
    InvalidHeader {
        /// The header's name, when the name is legal (the value was not).
        name: Option<String>,
    },
    /// A credential source (an HTTP transport's `CredentialProvider` such as
    /// OAuth) could not produce credentials. The cause is the
    /// provider's own error, whose `Display` must be free of secrets.
    #[error("could not obtain credentials for the server")]
    CredentialSource(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The HTTP client could not be set up (TLS roots, say). (Feature
    /// `http`.)
    #[cfg(feature = "http")]
    #[error("could not set up the HTTP client")]
    HttpClient(#[source] reqwest::Error),
    /// An HTTP exchange through reqwest failed before an answer (connection
    /// refused, reset, TLS, time-out); the plain-http fast path reports
    /// [`TransportError::Io`] instead. The error has its URL removed.
    /// (Feature `http`.)
    #[cfg(feature = "http")]
    #[error("HTTP request to the server failed")]
    Http(#[source] reqwest::Error),
    /// The legacy HTTP+SSE endpoint answered the stream request with a status
    /// other than 2xx.
    #[error("the SSE endpoint answered HTTP {status}")]
    SseStatus {
        /// The HTTP status code.
        status: u16,
        /// The `WWW-Authenticate` header of a 401 or 403 (the server's words).
        www_authenticate: Option<String>,
    },
    /// The legacy HTTP+SSE endpoint answered with something that is not an
    /// event stream.
    #[error("the SSE endpoint did not answer with text/event-stream")]
    NotEventStream,
    /// The legacy HTTP+SSE stream ended, or its time ran out, before the
    /// `endpoint` event.
    #[error("the SSE stream gave no `endpoint` event {}", if *timed_out { "in time" } else { "before it ended" })]
    NoEndpointEvent {
        /// Whether the wait timed out (else the stream ended).
        timed_out: bool,
    },
    /// A server that runs in this process (an OpenAPI document served as
    /// tools, say) could not be set up: its configuration or the documents
    /// it reads are unusable. The cause says why.
    #[error("could not set up the in-process server `{server}`")]
    InProcess {
        /// What kind of server (`openapi`).
        server: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The legacy `endpoint` event named a URL that cannot be resolved, or one
    /// on another origin than the server URL (messages are only ever posted to
    /// the origin the credentials are for).
    #[error("the SSE `endpoint` event names an invalid or cross-origin URL")]
    BadEndpoint,
}

impl TransportError {
    /// Who or what caused the error.
    ///
    /// A server that could not be started is a lost
    /// [`ErrorCause::Connection`], also when the program does not exist (a
    /// typo in the configuration cannot be told from a server not installed
    /// yet) and when this process is out of file descriptors. A URL, scheme
    /// or header refused before anything was sent is
    /// [`ErrorCause::Configuration`], as is an HTTP client that cannot be set
    /// up (this machine's TLS or proxy set-up). An unset credential variable
    /// and a credential provider that fails are
    /// [`ErrorCause::Authorization`] (the provider's own error is not
    /// visible here). HTTP statuses follow one rule (also for
    /// [`RequestFailure`](crate::RequestFailure)): 401 and 403 are
    /// authorization, 5xx a connection that cannot serve, anything else the
    /// server's answer. A legacy SSE stream that ends or goes quiet before its
    /// `endpoint` event never became a connection; one that is not an event
    /// stream or names a bad endpoint is the server's mistake. Of codec
    /// errors, a frame over the bound is [`ErrorCause::Bound`], bytes that are
    /// not UTF-8 come from the server, a failed byte source is a lost
    /// connection, and a frame we could not encode (a raw newline, a NUL in an
    /// event id) is our own mistake ([`ErrorCause::Internal`]).
    pub fn cause(&self) -> ErrorCause {
        match self {
            TransportError::Spawn { .. }
            | TransportError::TooManyOpenFiles { .. }
            | TransportError::Io(_)
            | TransportError::Closed
            | TransportError::NoEndpointEvent { .. } => ErrorCause::Connection,
            #[cfg(feature = "http")]
            TransportError::Http(_) => ErrorCause::Connection,
            #[cfg(feature = "http")]
            TransportError::InvalidUrl(_) | TransportError::HttpClient(_) => {
                ErrorCause::Configuration
            }
            TransportError::Codec(e) | TransportError::Encode(e) => codec_cause(e),
            TransportError::UnsupportedScheme { .. }
            | TransportError::InsecureUrl { .. }
            | TransportError::CredentialsInUrl
            | TransportError::InvalidHeader { .. }
            | TransportError::InProcess { .. } => ErrorCause::Configuration,
            TransportError::MissingCredential { .. } | TransportError::CredentialSource(_) => {
                ErrorCause::Authorization
            }
            TransportError::SseStatus { status, .. } => status_cause(*status),
            TransportError::NotEventStream | TransportError::BadEndpoint => ErrorCause::Server,
        }
    }
}

fn codec_cause(error: &mcp_codec::CodecError) -> ErrorCause {
    use mcp_codec::CodecError;
    match error {
        CodecError::FrameTooLarge { .. } => ErrorCause::Bound,
        CodecError::InvalidUtf8 => ErrorCause::Server,
        CodecError::Io { .. } => ErrorCause::Connection,
        // An encoder handed a frame it cannot write: a JSON encoder never
        // writes a raw newline, so this is a mistake on our side.
        _ => ErrorCause::Internal,
    }
}

/// The cause of an HTTP status that came instead of an answer: 401 and 403
/// are authorization, 5xx a server (or a gateway before it) that cannot
/// serve at all, like a broken connection; anything else is the server's
/// answer.
pub(crate) fn status_cause(status: u16) -> ErrorCause {
    match status {
        401 | 403 => ErrorCause::Authorization,
        500..=599 => ErrorCause::Connection,
        _ => ErrorCause::Server,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_of_start_address_credential_and_status_failures() {
        let spawn = TransportError::Spawn {
            program: "/nonexistent/server".into(),
            source: io::Error::from(io::ErrorKind::NotFound),
        };
        assert_eq!(spawn.cause(), ErrorCause::Connection);
        assert_eq!(
            TransportError::InsecureUrl {
                host: "example.com".into()
            }
            .cause(),
            ErrorCause::Configuration
        );
        assert_eq!(
            TransportError::MissingCredential {
                variable: "TOKEN".into()
            }
            .cause(),
            ErrorCause::Authorization
        );
        let sse = |status| TransportError::SseStatus {
            status,
            www_authenticate: None,
        };
        assert_eq!(sse(401).cause(), ErrorCause::Authorization);
        assert_eq!(sse(503).cause(), ErrorCause::Connection);
        assert_eq!(sse(405).cause(), ErrorCause::Server);
        let status = |status| crate::RequestFailure::Status {
            status,
            error: None,
            www_authenticate: None,
        };
        assert_eq!(status(403).cause(), ErrorCause::Authorization);
        assert_eq!(status(502).cause(), ErrorCause::Connection);
        assert_eq!(status(400).cause(), ErrorCause::Server);
        assert_eq!(
            crate::RequestFailure::StreamBroken.cause(),
            ErrorCause::Connection
        );
        assert_eq!(crate::CloseReason::Shutdown.cause(), ErrorCause::Cancelled);
        // A codec error keeps the codec's cause.
        let too_large = TransportError::Codec(mcp_codec::CodecError::FrameTooLarge { limit: 1 });
        assert_eq!(too_large.cause(), ErrorCause::Bound);
    }
}
