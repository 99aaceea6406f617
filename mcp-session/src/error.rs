//! The one error type of this crate.

use std::fmt;
use std::time::Duration;

use mcp_transport::{ExitInfo, TransportError};
use mcp_types::requests::{Discover, Initialize};
use mcp_types::text::Untrusted;
use mcp_types::{ErrorCause, ErrorObject, Request};

/// Everything a session operation can fail with.
///
/// `Display` says what happened in our words. A server's own prose (its
/// JSON-RPC error message, its stderr) never appears in `Display`; reach it
/// through [`SessionError::server_message`] and [`SessionError::stderr_tail`]
/// and show it labelled as the server's. Every other string a server (or a
/// caller) chose, such as a tool name, a URI, a protocol version or a schema
/// failure quoting the server's schema, is shown escaped and bounded
/// ([`Untrusted`]); the fields keep it as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The server's Streamable HTTP endpoint refused the protocol, and the
    /// automatic fallback to the legacy HTTP+SSE transport failed as well:
    /// both are named.
    #[error(
        "{}; the fallback to the legacy HTTP+SSE transport failed too: {}",
        mcp_types::text::Chain(&**first),
        mcp_types::text::Chain(&**fallback)
    )]
    FallbackFailed {
        /// What the Streamable HTTP endpoint answered.
        first: Box<SessionError>,
        /// How the fallback failed.
        fallback: Box<SessionError>,
    },
    /// A setting of [`SessionConfig`](crate::SessionConfig) is out of its
    /// range; nothing was started.
    #[error("invalid setting `{setting}`: {problem}")]
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The transport could not be opened or failed (its own words).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The connection to the server is gone; nothing more can be sent on it.
    #[error("the server connection is closed: {0}")]
    Dead(ExitInfo),
    /// The server did not answer within the deadline (it was sent a
    /// cancellation).
    #[error("`{}` got no answer within {after:?} (the call's `timeout`, else `request_timeout`)", Untrusted::new(.method))]
    Timeout {
        /// The method of the request.
        method: String,
        /// How long we waited.
        after: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the server answered `{}` with error {code} ({})", Untrusted::new(.method), describe_code(*code))]
    Server {
        /// The method of the request.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The whole error object, as the server sent it.
        error: Box<ErrorObject>,
    },
    /// The server's result did not have the shape the method's result type
    /// requires.
    #[error("the server's result for `{}` does not match the protocol", Untrusted::new(.method))]
    BadResult {
        /// The method of the request.
        method: String,
        /// What did not match.
        #[source]
        source: serde_json::Error,
    },
    /// The in-flight bound of the session is reached.
    #[error("too many requests in flight (limit {limit}, `limits.max_in_flight`)")]
    TooManyInFlight {
        /// The bound.
        limit: usize,
    },
    /// Tool arguments that are not a JSON object (nothing was sent; `null`
    /// counts as no arguments).
    #[error("arguments for tool `{}` must be a JSON object, not {found}", Untrusted::new(.tool))]
    ArgumentsNotAnObject {
        /// The tool.
        tool: String,
        /// What they were instead (`an array`, `a string` …).
        found: &'static str,
    },
    /// Tool arguments larger than the argument bound were refused before
    /// sending.
    #[error("tool arguments are {size} bytes, over the limit of {limit} (`max_argument_bytes`)")]
    ArgumentsTooLarge {
        /// Serialised size of the arguments.
        size: usize,
        /// The bound.
        limit: usize,
    },
    /// A result larger than the call's [`crate::CallOptions::max_result_bytes`]
    /// was refused whole, measured on the frame before anything was decoded.
    #[error(
        "the result of `{method}` is {size} bytes, over the limit of {limit} (`max_result_bytes`)"
    )]
    ResultTooLarge {
        /// The method.
        method: String,
        /// The result's length on the wire.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Tool arguments do not satisfy the tool's `inputSchema`; nothing was sent.
    #[error("arguments for tool `{}` do not match its input schema: {}", Untrusted::new(.tool), Lines(.failures))]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// One line per failing path (`/path: what is wrong`).
        failures: Vec<String>,
    },
    /// A tool's `structuredContent` does not match its `outputSchema`. The raw
    /// result is kept.
    #[error("structured content of tool `{}` does not match its output schema: {}", Untrusted::new(.tool), Lines(.failures))]
    InvalidStructuredContent {
        /// The tool.
        tool: String,
        /// One line per failing path.
        failures: Vec<String>,
        /// The result as received.
        result: Box<mcp_types::CallToolResult>,
    },
    /// A tool's schema could not be compiled, so its arguments or results
    /// cannot be checked.
    #[error("the schema of tool `{}` is not a usable JSON Schema", Untrusted::new(.tool))]
    UnusableSchema {
        /// The tool.
        tool: String,
    },
    /// The tool is not in the session's tool list.
    #[error("no tool named `{}` is known on this server (list the tools first)", Untrusted::new(.tool))]
    UnknownTool {
        /// The tool.
        tool: String,
    },
    /// Pagination stopped at the page bound.
    #[error("`{}` returned more than {limit} pages", Untrusted::new(.method))]
    TooManyPages {
        /// The list method.
        method: String,
        /// The bound.
        limit: usize,
    },
    /// The server returned a cursor it had returned before: following it would
    /// loop forever.
    #[error("`{}` returned a repeated cursor; the listing would never end", Untrusted::new(.method))]
    CursorCycle {
        /// The list method.
        method: String,
    },
    /// A listing went over an item bound.
    #[error("`{}` returned more than {limit} items", Untrusted::new(.method))]
    TooManyItems {
        /// The list method.
        method: String,
        /// The bound.
        limit: usize,
    },
    /// Negotiation ended without a protocol version both sides speak.
    #[error(
        "no protocol version in common with the server (it offered {})",
        Untrusted::new(.offered)
    )]
    UnsupportedVersion {
        /// What the server offered.
        offered: String,
    },
    /// The server rejected the request in a way that rules out this protocol
    /// era (for example a header mismatch or a missing client capability).
    #[error("the server refused negotiation with error {code} ({})", describe_code(*code))]
    NegotiationRefused {
        /// The JSON-RPC error code.
        code: i64,
        /// The whole error object.
        error: Box<ErrorObject>,
    },
    /// A result asked for something this client cannot do (for example an
    /// `input_required` result with no host handler, or an unknown
    /// `resultType`).
    #[error(
        "the server's result for `{}` needs a feature this client does not offer: {feature}",
        Untrusted::new(.method)
    )]
    Unsupported {
        /// The method of the request.
        method: String,
        /// The feature, in our words.
        feature: &'static str,
    },
    /// The server does not declare what the request needs (an extension, a
    /// setting); nothing was sent.
    #[error("the server does not offer {feature}, so `{}` was not sent", Untrusted::new(.method))]
    NotOffered {
        /// The method of the request.
        method: String,
        /// The feature, in our words.
        feature: &'static str,
    },
    /// An HTTP transport could not deliver the request or its answer.
    #[error("`{}` failed: {failure}", Untrusted::new(.method))]
    Http {
        /// The method of the request.
        method: String,
        /// What the transport saw.
        failure: mcp_transport::RequestFailure,
    },
    /// A request went through more `input_required` rounds than allowed.
    #[error("`{}` still needed more input after {limit} rounds", Untrusted::new(.method))]
    TooManyRounds {
        /// The method of the request.
        method: String,
        /// The round bound.
        limit: usize,
    },
    /// The server needed input the host did not give (no handler for it, or
    /// the handler refused).
    #[error(
        "`{}` needs input the client did not provide (`{}`, error {code})",
        Untrusted::new(.method),
        Untrusted::new(.asked)
    )]
    InputNotProvided {
        /// The method of the request.
        method: String,
        /// What the server asked for (`sampling/createMessage`, …).
        asked: String,
        /// The JSON-RPC code of the refusal.
        code: i64,
    },
    /// The server does not have the resource (`-32002`, or `-32602` in the
    /// 2026 era).
    #[error("the server has no resource `{}`", Untrusted::new(.uri))]
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The server answered with a task where a direct result was asked for
    /// (use the task API to follow it).
    #[error("`{}` returned a task instead of a result", Untrusted::new(.method))]
    UnexpectedTask {
        /// The method of the request.
        method: String,
        /// The task handle as received.
        task: Box<mcp_types::CreateTaskResult>,
    },
    /// The bound on open subscriptions of one session is reached.
    #[error("too many open subscriptions (limit {limit})")]
    TooManySubscriptions {
        /// The bound.
        limit: usize,
    },
    /// The server's session expired while a tool call was in flight. The
    /// session was established again, but a tool call is never replayed: it
    /// may already have run.
    #[error(
        "the server's session expired during `{}`; it was re-established, but the call was not repeated",
        Untrusted::new(.method)
    )]
    NotReplayed {
        /// The method (`tools/call`).
        method: String,
    },
    /// A skill failed a check while loading or reading its files; nothing
    /// of it was used (the unverified content is dropped).
    #[cfg(feature = "skills")]
    #[error("skill `{}` refused: {check}", Untrusted::new(.skill))]
    SkillRefused {
        /// The URI of the skill's `SKILL.md`.
        skill: String,
        /// The check that failed.
        check: crate::skills::SkillCheck,
    },
    /// The request's params could not be serialised.
    #[error("request params could not be serialised")]
    Params(#[source] serde_json::Error),
}

impl SessionError {
    /// Who or what caused the error.
    ///
    /// The debatable choices:
    ///
    /// - A JSON-RPC error from the server is [`ErrorCause::Server`] whatever
    ///   its code, `-32602` (invalid params) included: the code is the
    ///   server's claim, servers use it for unknown tools, missing resources
    ///   and their own failures alike, and arguments this library refused
    ///   before sending are [`SessionError::InvalidArguments`]
    ///   ([`ErrorCause::Input`]). [`SessionError::ResourceNotFound`] is such
    ///   an answer too.
    /// - A request that got no answer in time is the server's
    ///   ([`ErrorCause::Server`]): the connection was there, the server was
    ///   slow or stuck. Except the handshake (`initialize`, `server/discover`):
    ///   a server that never answered it never became ready, which is
    ///   [`ErrorCause::Connection`], as when a hub's start deadline passes.
    /// - Arguments over the argument bound are [`ErrorCause::Input`], not
    ///   [`ErrorCause::Bound`]: the caller fixes them by sending less, and
    ///   nothing was sent. Every other bound (in flight, result size, pages,
    ///   items, rounds, subscriptions) is [`ErrorCause::Bound`].
    /// - A tool call whose HTTP session expired under it and was not repeated
    ///   is a lost [`ErrorCause::Connection`], like a server that died under
    ///   a call: it may or may not have run.
    /// - A server asking for input this client does not give (no handler, or
    ///   the handler refused) is [`ErrorCause::Server`]: the server made its
    ///   answer depend on it.
    ///
    /// The transport's errors and HTTP failures delegate to theirs
    /// ([`TransportError::cause`], [`RequestFailure::cause`](mcp_transport::RequestFailure::cause));
    /// a connection that ended is [`ErrorCause::Connection`], or
    /// [`ErrorCause::Cancelled`] when it was shut down on purpose.
    pub fn cause(&self) -> ErrorCause {
        match self {
            SessionError::Transport(e) => e.cause(),
            SessionError::FallbackFailed { first, .. } => first.cause(),
            SessionError::Dead(exit) => exit.reason.cause(),
            SessionError::Http { failure, .. } => failure.cause(),
            SessionError::Timeout { method, .. } => {
                if method == Initialize::METHOD || method == Discover::METHOD {
                    ErrorCause::Connection
                } else {
                    ErrorCause::Server
                }
            }
            SessionError::NotReplayed { .. } => ErrorCause::Connection,
            SessionError::InvalidSetting { .. } => ErrorCause::Configuration,
            SessionError::Server { .. }
            | SessionError::BadResult { .. }
            | SessionError::InvalidStructuredContent { .. }
            | SessionError::UnusableSchema { .. }
            | SessionError::CursorCycle { .. }
            | SessionError::UnsupportedVersion { .. }
            | SessionError::NegotiationRefused { .. }
            | SessionError::Unsupported { .. }
            | SessionError::NotOffered { .. }
            | SessionError::InputNotProvided { .. }
            | SessionError::ResourceNotFound { .. }
            | SessionError::UnexpectedTask { .. } => ErrorCause::Server,
            #[cfg(feature = "skills")]
            SessionError::SkillRefused { .. } => ErrorCause::Server,
            SessionError::ArgumentsTooLarge { .. }
            | SessionError::ArgumentsNotAnObject { .. }
            | SessionError::InvalidArguments { .. }
            | SessionError::UnknownTool { .. } => ErrorCause::Input,
            SessionError::TooManyInFlight { .. }
            | SessionError::ResultTooLarge { .. }
            | SessionError::TooManyPages { .. }
            | SessionError::TooManyItems { .. }
            | SessionError::TooManyRounds { .. }
            | SessionError::TooManySubscriptions { .. } => ErrorCause::Bound,
            SessionError::Params(_) => ErrorCause::Internal,
        }
    }

    /// The server's own message, when the server sent one. It is the server's
    /// prose, not ours: show it labelled as such.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            SessionError::Server { error, .. } | SessionError::NegotiationRefused { error, .. } => {
                Some(&error.message)
            }
            _ => None,
        }
    }

    /// The last bytes the server wrote to stderr, when the server is a local
    /// process that ended.
    pub fn stderr_tail(&self) -> Option<&str> {
        self.exit_info()?.stderr_tail.as_deref()
    }

    /// For a dead session, the start of the first line the server sent that
    /// was not a JSON-RPC message (on stdio, often a banner written to
    /// stdout); the server's words, to be shown labelled and escaped.
    pub fn unparsed_line(&self) -> Option<&str> {
        self.exit_info()?.unparsed_line.as_deref()
    }

    /// The tool result as the server sent it, when it was refused for
    /// breaking the tool's output schema
    /// ([`InvalidStructuredContent`](SessionError::InvalidStructuredContent)):
    /// the server's words, to be shown labelled and escaped.
    pub fn received_result(&self) -> Option<&mcp_types::CallToolResult> {
        match self {
            SessionError::InvalidStructuredContent { result, .. } => Some(result),
            _ => None,
        }
    }

    /// A dead session's exit diagnostics.
    pub fn exit_info(&self) -> Option<&ExitInfo> {
        match self {
            SessionError::Dead(info) => Some(info),
            _ => None,
        }
    }

    /// The JSON-RPC error code, for server errors.
    pub fn code(&self) -> Option<i64> {
        match self {
            SessionError::Server { code, .. } | SessionError::NegotiationRefused { code, .. } => {
                Some(*code)
            }
            _ => None,
        }
    }

    /// The JSON-RPC error the server answered with: a JSON-RPC error
    /// response, or one found in the body of an HTTP error status.
    pub fn error_object(&self) -> Option<ErrorObject> {
        match self {
            SessionError::Server { error, .. } | SessionError::NegotiationRefused { error, .. } => {
                Some((**error).clone())
            }
            SessionError::Http {
                failure:
                    mcp_transport::RequestFailure::Status {
                        error: Some(body), ..
                    },
                ..
            } => serde_json::from_slice(body).ok(),
            _ => None,
        }
    }

    /// For a `-32042` answer (2025-11-25's `URLElicitationRequiredError`:
    /// the request goes through once the user has opened these pages), the
    /// pages the server listed, each checked as a URL elicitation request
    /// is before a handler sees it: `Ok` with the host to show, or `Err`
    /// saying why the page is not to be shown. At most
    /// [`MAX_URL_ELICITATIONS`] are read; `None` for any other error.
    /// Nothing is opened or retried here: that is the host's to decide,
    /// with the user (a `tools/call` so refused did not run).
    pub fn url_elicitations(&self) -> Option<Vec<Result<crate::Elicitation, crate::HandlerError>>> {
        let error = match self {
            SessionError::Server { error, .. } => error,
            _ => return None,
        };
        if error.code != mcp_types::error_codes::URL_ELICITATION_REQUIRED {
            return None;
        }
        #[derive(serde::Deserialize)]
        struct Data {
            elicitations: Vec<serde_json::Value>,
        }
        let listed = error
            .data
            .as_ref()
            .and_then(|data| serde_json::from_value::<Data>(data.clone()).ok())
            .map(|data| data.elicitations)
            .unwrap_or_default();
        Some(
            listed
                .into_iter()
                .take(MAX_URL_ELICITATIONS)
                .map(|page| {
                    let params: mcp_types::ElicitUrlParams =
                        serde_json::from_value(page).map_err(|_| {
                            crate::HandlerError::invalid_params("not a URL elicitation")
                        })?;
                    let host = crate::handler::checked_url_host(&params.url)?;
                    Ok(crate::Elicitation::Url { params, host })
                })
                .collect(),
        )
    }

    /// Whether the connection is gone (every later call fails too).
    pub fn is_dead(&self) -> bool {
        matches!(self, SessionError::Dead(_))
    }
}

/// Failure lines inside a message: each escaped and bounded, joined by `; `.
/// The lines quote the server's schema (a `pattern`, a required property's
/// name) and the caller's argument paths, so they are escaped when shown and
/// kept as they are in the error's fields.
struct Lines<'a>(&'a [String]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, line) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}", Untrusted::new(line))?;
        }
        Ok(())
    }
}

/// Pages of a `-32042` error read at most ([`SessionError::url_elicitations`]).
pub const MAX_URL_ELICITATIONS: usize = 8;

/// Our words for the standard codes.
fn describe_code(code: i64) -> &'static str {
    use mcp_types::error_codes as c;
    match code {
        c::PARSE_ERROR => "parse error",
        c::INVALID_REQUEST => "invalid request",
        c::METHOD_NOT_FOUND => "method not found",
        c::INVALID_PARAMS => "invalid params",
        c::INTERNAL_ERROR => "internal error",
        c::RESOURCE_NOT_FOUND => "resource not found",
        c::URL_ELICITATION_REQUIRED => "URL elicitation required",
        c::HEADER_MISMATCH => "header mismatch",
        c::MISSING_REQUIRED_CLIENT_CAPABILITY => "missing required client capability",
        c::UNSUPPORTED_PROTOCOL_VERSION => "unsupported protocol version",
        _ => "server-defined error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "x\u{1b}]0;title\u{7}\u{202e}y\nz";
    const ESCAPED: &str = "x\\u{1b}]0;title\\u{7}\\u{202e}y\\nz";

    fn shows_escaped(err: &SessionError) {
        let shown = err.to_string();
        assert!(
            !shown.contains(['\u{1b}', '\u{7}', '\u{202e}', '\n']),
            "{shown:?}"
        );
        assert!(shown.contains(ESCAPED), "{shown:?}");
    }

    #[test]
    fn strings_a_server_chose_are_escaped_in_display() {
        for err in [
            SessionError::InputNotProvided {
                method: "tools/call".into(),
                asked: HOSTILE.into(),
                code: -32601,
            },
            SessionError::ResourceNotFound {
                uri: HOSTILE.into(),
            },
            SessionError::UnknownTool {
                tool: HOSTILE.into(),
            },
            SessionError::UnusableSchema {
                tool: HOSTILE.into(),
            },
            SessionError::UnsupportedVersion {
                offered: HOSTILE.into(),
            },
            SessionError::InvalidArguments {
                tool: HOSTILE.into(),
                failures: vec![format!("/a: does not match \"{HOSTILE}\"")],
            },
            SessionError::Timeout {
                method: HOSTILE.into(),
                after: Duration::from_secs(1),
            },
        ] {
            shows_escaped(&err);
        }
    }

    #[test]
    fn a_url_elicitation_required_error_lists_its_pages_checked() {
        let with = |code: i64, data: serde_json::Value| SessionError::Server {
            method: "tools/call".into(),
            code,
            error: Box::new(ErrorObject {
                code,
                message: "open this first".into(),
                data: Some(data),
            }),
        };
        let page = |url: &str| serde_json::json!({"mode": "url", "message": "Connect", "url": url, "elicitationId": "e"});
        let listed = with(
            mcp_types::error_codes::URL_ELICITATION_REQUIRED,
            serde_json::json!({"elicitations": [
                page("https://Auth.Example.com/connect"),
                page("https://bank.example@evil.test/"),
                page("javascript:alert(1)"),
                {"mode": "url"},
            ]}),
        );
        let pages = listed.url_elicitations().expect("a -32042 error");
        assert_eq!(pages.len(), 4);
        match &pages[0] {
            Ok(crate::Elicitation::Url { params, host }) => {
                assert_eq!(host, "auth.example.com");
                assert_eq!(params.elicitation_id.as_deref(), Some("e"));
            }
            other => panic!("{other:?}"),
        }
        assert!(pages[1..].iter().all(Result::is_err), "{pages:?}");
        // Bounded, whatever the server lists.
        let many: Vec<_> = (0..100).map(|_| page("https://a.example/")).collect();
        let many = with(
            mcp_types::error_codes::URL_ELICITATION_REQUIRED,
            serde_json::json!({"elicitations": many}),
        );
        assert_eq!(many.url_elicitations().unwrap().len(), MAX_URL_ELICITATIONS);
        // Data that does not parse: no page, still the error it is.
        let bare = with(
            mcp_types::error_codes::URL_ELICITATION_REQUIRED,
            serde_json::json!(7),
        );
        assert_eq!(bare.url_elicitations().unwrap().len(), 0);
        // Any other error has none.
        let other = with(
            mcp_types::error_codes::INVALID_PARAMS,
            serde_json::json!({}),
        );
        assert!(other.url_elicitations().is_none());
    }

    #[test]
    fn causes_of_representative_session_errors() {
        let timeout = |method: &str| SessionError::Timeout {
            method: method.into(),
            after: Duration::from_secs(1),
        };
        assert_eq!(timeout("tools/call").cause(), ErrorCause::Server);
        assert_eq!(timeout("initialize").cause(), ErrorCause::Connection);
        let invalid_params = SessionError::Server {
            method: "tools/call".into(),
            code: mcp_types::error_codes::INVALID_PARAMS,
            error: Box::new(ErrorObject::new(
                mcp_types::error_codes::INVALID_PARAMS,
                "bad",
            )),
        };
        assert_eq!(invalid_params.cause(), ErrorCause::Server);
        assert_eq!(
            SessionError::UnknownTool { tool: "t".into() }.cause(),
            ErrorCause::Input
        );
        assert_eq!(
            SessionError::ArgumentsTooLarge { size: 2, limit: 1 }.cause(),
            ErrorCause::Input
        );
        assert_eq!(
            SessionError::TooManyPages {
                method: "tools/list".into(),
                limit: 1
            }
            .cause(),
            ErrorCause::Bound
        );
        let exit = |reason| mcp_transport::ExitInfo::without_process(reason);
        assert_eq!(
            SessionError::Dead(exit(mcp_transport::CloseReason::EndOfStream)).cause(),
            ErrorCause::Connection
        );
        assert_eq!(
            SessionError::Dead(exit(mcp_transport::CloseReason::Shutdown)).cause(),
            ErrorCause::Cancelled
        );
        let http = |failure| SessionError::Http {
            method: "tools/call".into(),
            failure,
        };
        assert_eq!(
            http(mcp_transport::RequestFailure::Credentials).cause(),
            ErrorCause::Authorization
        );
        assert_eq!(
            SessionError::Transport(TransportError::CredentialsInUrl).cause(),
            ErrorCause::Configuration
        );
        let params = serde_json::from_str::<u8>("x").unwrap_err();
        assert_eq!(SessionError::Params(params).cause(), ErrorCause::Internal);
    }

    #[test]
    fn each_failure_line_is_bounded_and_the_lines_stay_apart() {
        let err = SessionError::InvalidArguments {
            tool: "t".into(),
            failures: vec!["x".repeat(10_000), "/b: too short".into()],
        };
        let shown = err.to_string();
        assert!(shown.len() < 400, "{} bytes", shown.len());
        assert!(
            shown.contains("… (9800 more bytes); /b: too short"),
            "{shown}"
        );
        // The field keeps the line whole.
        let SessionError::InvalidArguments { failures, .. } = &err else {
            unreachable!()
        };
        assert_eq!(failures[0].len(), 10_000);
    }
}
