//! The CLI's one error type, its exit codes, and how errors are shown.
//!
//! Exit codes (stable, documented in the README):
//!
//! | code | meaning | causes |
//! |---|---|---|
//! | 0 | ok | |
//! | 1 | usage or configuration error (also: arguments refused before sending) | input, configuration, policy |
//! | 2 | a server could not be started or reached, or died | connection |
//! | 3 | authentication required or failed | authorization |
//! | 4 | protocol error or time-out (including a server's JSON-RPC error) | server, bound, internal |
//! | 5 | the tool reported `isError: true` | |
//! | 130 | interrupted (Ctrl-C) | cancelled |
//!
//! Every error names its [`ErrorCause`] ([`CliError::cause`], the libraries'
//! `cause()` for theirs), and [`Exit::of`] turns a cause into a code: the one
//! place that decides exit codes of errors.

use std::fmt;
use std::path::PathBuf;

use mcp_hub::{DenyReason, HubError};
use mcp_session::SessionError;
use mcp_types::ErrorCause;
use serde_json::{Value, json};

use crate::output::Paint;
use mcp_types::text::escape_line;

/// How the process ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    Ok = 0,
    Usage = 1,
    Unreachable = 2,
    Auth = 3,
    Protocol = 4,
    ToolError = 5,
    Interrupted = 130,
}

impl Exit {
    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    /// The exit code of an error with this cause. What the user can fix
    /// (the request, the configuration, the policy) is 1; no connection to
    /// the server is 2; credentials are 3; a server that answered wrongly,
    /// a bound of ours and a bug are 4 ("protocol error or time-out");
    /// stopping on purpose is 130.
    pub(crate) fn of(cause: ErrorCause) -> Exit {
        match cause {
            ErrorCause::Input | ErrorCause::Configuration | ErrorCause::Policy => Exit::Usage,
            ErrorCause::Connection => Exit::Unreachable,
            ErrorCause::Authorization => Exit::Auth,
            ErrorCause::Server | ErrorCause::Bound | ErrorCause::Internal => Exit::Protocol,
            ErrorCause::Cancelled => Exit::Interrupted,
            // A cause added later: 4 until it gets a code of its own.
            _ => Exit::Protocol,
        }
    }
}

/// Where in a configuration file something is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) file: PathBuf,
    /// A path inside the document, like `mcpServers.notes.args[1]`.
    pub(crate) path: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at `{}`", self.file.display(), self.path)
    }
}

/// What is wrong at a place in a configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConfigProblem {
    /// A value of the wrong JSON type.
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
    /// A key this format does not have.
    UnknownKey { allowed: &'static [&'static str] },
    /// A required key is missing.
    MissingKey { key: &'static str },
    /// A key that only another kind of server takes.
    WrongKindKey { kind: &'static str },
    /// `command` and `url` together.
    CommandAndUrl,
    /// A string from a closed set.
    NotOneOf { allowed: &'static [&'static str] },
    /// A server name outside `[A-Za-z0-9_-]{1,64}`.
    InvalidServerName,
    /// The same key twice in one object.
    DuplicateKey,
    /// Not an environment variable name.
    InvalidVariableName,
    /// Not a legal HTTP header name.
    InvalidHeaderName,
    /// A header value that cannot be sent.
    InvalidHeaderValue,
    /// A URL that does not parse or is not http(s).
    InvalidUrl,
    /// A URL with `user:password@` or a secret-looking query parameter.
    CredentialsInUrl,
    /// A number out of its range.
    OutOfRange { min: u64, max: u64 },
    /// `${` without its `}`, or an empty name.
    BadReference,
    /// A `${VAR}` whose variable is not set.
    MissingVariable { variable: String },
    /// An empty string where a value is needed.
    Empty,
    /// A value that looks like a credential, written where a reference
    /// (`${VAR}`, `token_env`) belongs. The value is never shown.
    LiteralSecret,
    /// A token value where a variable name belongs. Never shown.
    TokenAsName,
    /// A `${VAR}` in a project file naming a variable its approval did not
    /// list.
    VariableNotApproved { variable: String },
    /// A root that is a URI, not a local path.
    RootNotLocalPath,
    /// A permission name outside `[A-Za-z0-9_.:-]{1,64}`.
    InvalidPermission,
    /// A key that cannot be used together with another one.
    Conflict { other: &'static str },
    /// An `auth` key the configured grant does not use.
    NotForGrant { grant: &'static str },
    /// A server's working directory that cannot be used (checked before
    /// the program is started, so that the directory is blamed, not the
    /// program).
    BadDirectory {
        /// The directory, `${VAR}`-expanded.
        dir: String,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigProblem::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            ConfigProblem::UnknownKey { allowed } => {
                write!(f, "unknown key; expected one of: {}", allowed.join(", "))
            }
            ConfigProblem::MissingKey { key } => write!(f, "`{key}` is required"),
            ConfigProblem::Conflict { other } => {
                write!(f, "this key cannot be used together with {other}")
            }
            ConfigProblem::NotForGrant { grant } => {
                write!(f, "the `{grant}` grant does not use this key")
            }
            ConfigProblem::WrongKindKey { kind } => write!(f, "this key is only for {kind} servers"),
            ConfigProblem::CommandAndUrl => {
                f.write_str("a server has either `command` (stdio) or `url` (remote), not both")
            }
            ConfigProblem::NotOneOf { allowed } => {
                write!(f, "expected one of: {}", allowed.join(", "))
            }
            ConfigProblem::InvalidServerName => f.write_str(
                "a server name is 1 to 64 characters of ASCII letters, digits, `_` and `-`",
            ),
            ConfigProblem::DuplicateKey => f.write_str("this key appears twice"),
            ConfigProblem::InvalidVariableName => f.write_str(
                "expected an environment variable name (letters, digits and `_`, not starting with a digit)",
            ),
            ConfigProblem::InvalidHeaderName => f.write_str("expected a legal HTTP header name"),
            ConfigProblem::InvalidHeaderValue => {
                f.write_str("the header value is not legal header text (control characters?)")
            }
            ConfigProblem::InvalidUrl => {
                f.write_str("expected an absolute https:// URL (http:// only on loopback)")
            }
            ConfigProblem::CredentialsInUrl => f.write_str(
                "the URL carries credentials; name an environment variable with `token_env` instead",
            ),
            ConfigProblem::OutOfRange { min, max } => {
                write!(f, "expected a whole number from {min} to {max}")
            }
            ConfigProblem::BadReference => {
                f.write_str("`${` must be followed by a variable name and `}`")
            }
            ConfigProblem::MissingVariable { variable } => {
                write!(f, "environment variable `{variable}` is not set")
            }
            ConfigProblem::Empty => f.write_str("expected a non-empty string"),
            ConfigProblem::LiteralSecret => f.write_str(
                "this looks like a credential written as a value (not shown); keep it in an environment variable and write `${VAR}` here (for a remote server's Authorization header: `token_env`)",
            ),
            ConfigProblem::TokenAsName => f.write_str(
                "this looks like a token value (not shown), not the NAME of the environment variable that holds it",
            ),
            ConfigProblem::VariableNotApproved { variable } => write!(
                f,
                "`${{{variable}}}` is not among the variables this project file was approved to read; approve it again with `mcp trust`"
            ),
            ConfigProblem::RootNotLocalPath => {
                f.write_str("a root is a local directory path, not a URI")
            }
            ConfigProblem::InvalidPermission => f.write_str(
                "a permission name is 1 to 64 characters of ASCII letters, digits, `_`, `.`, `:` and `-`",
            ),
            ConfigProblem::BadDirectory { dir, problem } => {
                write!(f, "the server's directory `{dir}` {problem}")
            }
        }
    }
}

/// Why `mcp add` refused to write an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AddRefusal {
    /// `--token-env` looks like a token, not a variable name.
    TokenValue,
    /// `--token-env` / `--env-inherit` is not a variable name.
    NotAVariableName,
    /// `--token-header` is not a legal header name.
    InvalidHeaderName,
    /// The URL embeds credentials.
    CredentialsInUrl,
    /// The URL is not usable.
    InvalidUrl,
    /// Neither `--url` nor `-- COMMAND`.
    NoTarget,
    /// The name is not a valid server name.
    InvalidName,
    /// `--env-inherit` with `--url`.
    EnvForRemote,
    /// A command argument that writes a credential as a value.
    SecretInArguments,
    /// Not `NAME=VALUE` (the value is never shown: it may be a secret).
    NotNameValue,
    /// `--openapi` names no readable file.
    NotAFile,
    /// An `--env` or `--header` value that looks like a credential.
    SecretValue,
    /// `--openapi` without `--base-url`.
    NoBaseUrl,
}

impl fmt::Display for AddRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddRefusal::TokenValue => {
                "this looks like a token value; give the NAME of the environment variable that holds it (e.g. --token-env GITHUB_TOKEN)"
            }
            AddRefusal::NotAVariableName => {
                "not an environment variable name (letters, digits and `_`, not starting with a digit)"
            }
            AddRefusal::InvalidHeaderName => "not a legal HTTP header name",
            AddRefusal::CredentialsInUrl => {
                "the URL carries credentials (user:password@ or a token in the query); use --token-env VAR instead"
            }
            AddRefusal::InvalidUrl => {
                "expected an absolute https:// URL (http:// only on loopback)"
            }
            AddRefusal::NoTarget => {
                "give either --url URL, --openapi SPEC --base-url URL or -- COMMAND ARGS…"
            }
            AddRefusal::NotAFile => "no such file (give a path or an https:// URL)",
            AddRefusal::SecretValue => {
                "the value looks like a credential and would be written into the file; write ${VAR} and keep the secret in the variable"
            }
            AddRefusal::NoBaseUrl => {
                "an OpenAPI server needs --base-url URL: where its requests go (the document's `servers` are never trusted alone)"
            }
            AddRefusal::InvalidName => {
                "a server name is 1 to 64 characters of ASCII letters, digits, `_` and `-`"
            }
            AddRefusal::EnvForRemote => "only local (stdio) servers inherit environment variables",
            AddRefusal::SecretInArguments => {
                "an argument looks like a credential (not shown); the file would keep it: pass it through an environment variable instead (`--env-inherit VAR`, and `${VAR}` in the argument)"
            }
            AddRefusal::NotNameValue => "expected NAME=VALUE (the value given is not shown)",
        })
    }
}

/// Why a tool argument given on the command line was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ArgumentProblem {
    /// Not `key=value` or `key:=json`.
    NotKeyValue,
    /// A prompt argument that is not `key=value` (prompt arguments are
    /// strings: no `key:=json`).
    NotPromptPair,
    /// The same key twice.
    Duplicate,
    /// The value does not read as the schema's type.
    NotOfType { expected: Vec<&'static str> },
    /// `key:=…` or a JSON-typed value that is not JSON.
    NotJson,
    /// `--args` is not a JSON object.
    ArgsNotObject,
    /// The schema allows no such property.
    UnknownProperty { known: Vec<String> },
    /// Not a property, and close to a required one that was not given.
    Misspelt { closest: Vec<String> },
    /// A value outside the schema's `enum`: the allowed values (as JSON,
    /// at most [`ENUM_SHOWN`]) and how many more there are.
    NotOneOf { allowed: Vec<String>, more: usize },
    /// The prompt has no such argument.
    UnknownPromptArgument { known: Vec<String> },
    /// A required prompt argument was not given.
    MissingPromptArgument,
    /// A prompt argument given in `--args` that is not a string.
    PromptValueNotString,
}

/// Most allowed values an argument error lists.
pub(crate) const ENUM_SHOWN: usize = 20;

impl fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgumentProblem::NotKeyValue => f.write_str("expected KEY=VALUE or KEY:=JSON"),
            ArgumentProblem::NotPromptPair => f.write_str("expected KEY=VALUE"),
            ArgumentProblem::Duplicate => f.write_str("given more than once"),
            ArgumentProblem::NotOfType { expected } => {
                write!(
                    f,
                    "the tool's inputSchema expects {}",
                    expected.join(" or ")
                )
            }
            ArgumentProblem::NotJson => f.write_str("the value is not valid JSON"),
            ArgumentProblem::ArgsNotObject => f.write_str("--args must be a JSON object"),
            ArgumentProblem::UnknownProperty { known } if known.is_empty() => {
                f.write_str("the tool takes no arguments")
            }
            ArgumentProblem::UnknownProperty { known } => {
                write!(
                    f,
                    "the tool has no such argument (it takes: {})",
                    known.join(", ")
                )
            }
            ArgumentProblem::Misspelt { closest } => {
                let quoted: Vec<String> = closest.iter().map(|s| format!("`{s}`")).collect();
                write!(
                    f,
                    "the tool has no such argument; did you mean {}?",
                    or_list(&quoted)
                )
            }
            ArgumentProblem::NotOneOf { allowed, more } => {
                write!(
                    f,
                    "the tool's inputSchema allows only {}",
                    allowed.join(", ")
                )?;
                if *more > 0 {
                    write!(f, " and {more} more (see `mcp inspect --json`)")?;
                }
                Ok(())
            }
            ArgumentProblem::UnknownPromptArgument { known } if known.is_empty() => {
                f.write_str("the prompt takes no arguments")
            }
            ArgumentProblem::UnknownPromptArgument { known } => {
                write!(
                    f,
                    "the prompt has no such argument (it takes: {})",
                    known.join(", ")
                )
            }
            ArgumentProblem::MissingPromptArgument => {
                f.write_str("the prompt requires it; give it as KEY=VALUE")
            }
            ArgumentProblem::PromptValueNotString => f.write_str("a prompt argument is a string"),
        }
    }
}

/// Everything the CLI can fail with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("no configuration found (looked at {}); add a server with `mcp add` or pass --config FILE", .looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoConfig { looked: Vec<PathBuf> },
    #[error("cannot read configuration file {}", .file.display())]
    ConfigRead {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("configuration file {} is larger than {limit} bytes", .file.display())]
    ConfigTooLarge { file: PathBuf, limit: u64 },
    #[error("configuration file {} is not valid JSON (line {line}, column {column})", .file.display())]
    ConfigSyntax {
        file: PathBuf,
        line: usize,
        column: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("configuration error in {location}: {problem}")]
    Config {
        location: Location,
        problem: ConfigProblem,
    },
    #[error("no server named `{name}` in {}{}", .file.display(), known_list(.known))]
    UnknownServer {
        name: String,
        file: PathBuf,
        known: Vec<String>,
    },
    #[error("a server name, or --url URL, or -- COMMAND is required")]
    NoServerGiven,
    #[error("{what}: give either a configured server name or --url / -- COMMAND, not both")]
    ServerAndOneOff { what: &'static str },
    #[error("missing {what}")]
    MissingWord { what: &'static str },
    #[error("server `{server}` lists no skill named `{name}`{}", if .known.is_empty() { String::from(" (it lists none; a skill's SKILL.md URI works too)") } else { format!(" (it lists: {})", .known.join(", ")) })]
    UnknownSkill {
        server: String,
        name: String,
        known: Vec<String>,
    },
    #[error("server `{server}` lists several skills named `{name}`; name one by its URI: {}", .candidates.join(", "))]
    AmbiguousSkill {
        server: String,
        name: String,
        candidates: Vec<String>,
    },
    #[error("--resource `{value}`: {problem}")]
    ResourceFlag {
        value: String,
        problem: &'static str,
    },
    #[error("nothing to watch: {} has no enabled server", .file.display())]
    NothingToWatch { file: PathBuf },
    #[error("argument `{name}`: {problem}")]
    Argument {
        name: String,
        problem: ArgumentProblem,
    },
    #[error("cannot read --args from {from}")]
    ArgsRead {
        from: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--args from {from} is larger than {} MiB, the bound of --args", .limit / (1024 * 1024))]
    ArgsTooLarge { from: String, limit: u64 },
    #[error("--args from {from} is not UTF-8 text")]
    ArgsNotText { from: String },
    #[error(
        "{flag} describes a server given with --url or -- COMMAND; a configured server takes its settings from its file"
    )]
    OneOffFlag { flag: &'static str },
    #[error("server `{server}` lists no prompt named `{}`{}", escape_line(.name), if *.listed == 0 { " (it lists none)" } else { "" })]
    UnknownPrompt {
        server: String,
        name: String,
        /// How many prompts it lists.
        listed: usize,
        /// The listed names closest to `name` (the server's).
        suggestions: Vec<String>,
    },
    #[error("refusing `{value}` for {flag}: {refusal}")]
    AddRefused {
        flag: &'static str,
        value: String,
        refusal: AddRefusal,
    },
    #[error("refusing {flag}: {refusal}")]
    AddRefusedHidden {
        flag: &'static str,
        refusal: AddRefusal,
    },
    #[error("the project file {} {}; nothing was started. Review it, then approve it with `mcp trust` (or name it with --config to use it once)", .file.display(), if *.changed { "has changed since you approved it" } else { "is not approved (it can start programs and read environment variables)" })]
    NotApproved { file: PathBuf, changed: bool },
    #[error("the trust store {} cannot be used", .file.display())]
    TrustStore {
        file: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("no state directory for the trust store: set XDG_STATE_HOME or HOME")]
    NoStateDir,
    #[error("the path {} is not UTF-8 and cannot be recorded", .file.display())]
    NotUtf8Path { file: PathBuf },
    #[error("{} was not approved: pass --yes to approve it without a prompt", .file.display())]
    TrustDeclined { file: PathBuf },
    #[error("the call of `{}` on `{}` was not confirmed (the configuration marks it with `confirm`); nothing was sent. Answer yes at a terminal, or pass --yes", escape_line(.tool), escape_line(.server))]
    NotConfirmed { server: String, tool: String },
    #[error("refusing {flag}: {refusal}")]
    FlagRefused {
        flag: &'static str,
        refusal: AddRefusal,
    },
    #[error("a server named `{name}` already exists in {}; pass --force to replace it", .file.display())]
    NameTaken { name: String, file: PathBuf },
    #[error("cannot write configuration file {}", .file.display())]
    ConfigWrite {
        file: PathBuf,
        #[source]
        source: crate::safe_write::WriteError,
    },
    #[error("OAuth sign-in failed")]
    Auth(#[source] mcp_auth::AuthError),
    #[error("`{name}` is a local (stdio) server; OAuth is for HTTP servers")]
    NotRemote { name: String },
    #[cfg(feature = "demo")]
    #[error("no demo server named `{name}` (there are notes, files and github)")]
    UnknownDemo { name: String },
    #[error("could not export the namespace")]
    Export(#[source] HubError),
    #[error(transparent)]
    Hub(#[from] HubError),
    /// A tool name that is not known: the hub's error, the servers that did
    /// not start (their tools may be the one meant) and the names closest
    /// to the one given.
    #[error("{error}{}", missing_tools(.failed))]
    UnknownTool {
        error: Box<HubError>,
        failed: Vec<String>,
        suggestions: Vec<String>,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("could not write the output")]
    Output(#[source] std::io::Error),
    #[cfg(feature = "demo")]
    #[error("could not start the demo servers: the path of this program is unknown")]
    NoSelfPath(#[source] std::io::Error),
    #[cfg(feature = "playground")]
    #[error(transparent)]
    Playground(mcp_playground::PlaygroundError),
    /// `mcp serve`: the gateway's own error (its host connection, its
    /// control socket, a refused review).
    #[error(transparent)]
    Gateway(mcp_gateway::GatewayError),
    /// `mcp serve` without `--stdio`, `--http` or a control command.
    #[error(
        "say how to serve: `mcp serve --stdio`, `mcp serve --http ADDR`, or `mcp serve --control SOCKET pending|adopt SERVER GENERATION|discard SERVER GENERATION`"
    )]
    ServeHow,
    /// `mcp serve --token-env VAR`: the variable is unset, empty or not a
    /// usable token (its value is never shown).
    #[error(
        "--token-env {variable}: the environment variable is not set, empty, or not a usable bearer token (visible ASCII, no spaces)"
    )]
    ServeToken {
        /// The variable's name.
        variable: String,
    },
    /// The conformance client's own (anyhow) error.
    #[cfg(feature = "conformance-client")]
    #[error("{0:#}")]
    Conformance(anyhow::Error),
}

/// `server `a`` or `servers `a`, `b``.
fn servers_named(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [one] => format!("server {one}"),
        many => format!("servers {}", many.join(", ")),
    }
}

/// `; server `a` did not start, so its tools are missing`, or nothing.
fn missing_tools(failed: &[String]) -> String {
    if failed.is_empty() {
        return String::new();
    }
    format!(
        "; {} did not start, so {} tools are missing",
        servers_named(failed),
        if failed.len() == 1 { "its" } else { "their" }
    )
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        format!(" (configured: {})", known.join(", "))
    }
}

impl CliError {
    pub(crate) fn config(file: &std::path::Path, path: &str, problem: ConfigProblem) -> Self {
        CliError::Config {
            location: Location {
                file: file.to_path_buf(),
                path: path.to_owned(),
            },
            problem,
        }
    }

    /// Who or what caused this error. The libraries' errors give their own
    /// cause. Of the CLI's: a configuration file that is missing, unreadable,
    /// invalid or cannot be written, and the trust store, are configuration;
    /// words on the command line that are missing, contradictory or refused
    /// (`mcp add` refusing a token value included) are input; a project file
    /// not approved is policy. Our own output that cannot be written (a
    /// closed pipe, a full disk) ends the run as a lost connection does, and
    /// demo servers that cannot be started for want of this program's path
    /// are a server that could not be started: both [`ErrorCause::Connection`]
    /// (exit 2, as before). The conformance client's errors are the
    /// scenario server's ([`ErrorCause::Server`]).
    pub(crate) fn cause(&self) -> ErrorCause {
        match self {
            CliError::Hub(e) | CliError::Export(e) => e.cause(),
            CliError::UnknownTool { error, .. } => error.cause(),
            CliError::Auth(e) => e.cause(),
            CliError::NoConfig { .. }
            | CliError::ConfigRead { .. }
            | CliError::ConfigTooLarge { .. }
            | CliError::ConfigSyntax { .. }
            | CliError::Config { .. }
            | CliError::TrustStore { .. }
            | CliError::NoStateDir
            | CliError::NotUtf8Path { .. }
            | CliError::ConfigWrite { .. } => ErrorCause::Configuration,
            CliError::UnknownServer { .. }
            | CliError::NoServerGiven
            | CliError::ServerAndOneOff { .. }
            | CliError::MissingWord { .. }
            | CliError::ResourceFlag { .. }
            | CliError::NothingToWatch { .. }
            | CliError::UnknownSkill { .. }
            | CliError::AmbiguousSkill { .. }
            | CliError::Argument { .. }
            | CliError::ArgsRead { .. }
            | CliError::ArgsTooLarge { .. }
            | CliError::ArgsNotText { .. }
            | CliError::OneOffFlag { .. }
            | CliError::UnknownPrompt { .. }
            | CliError::AddRefused { .. }
            | CliError::AddRefusedHidden { .. }
            | CliError::FlagRefused { .. }
            | CliError::NameTaken { .. }
            | CliError::NotRemote { .. } => ErrorCause::Input,
            #[cfg(feature = "demo")]
            CliError::UnknownDemo { .. } => ErrorCause::Input,
            CliError::NotApproved { .. }
            | CliError::TrustDeclined { .. }
            | CliError::NotConfirmed { .. } => ErrorCause::Policy,
            CliError::Interrupted => ErrorCause::Cancelled,
            CliError::Output(_) => ErrorCause::Connection,
            #[cfg(feature = "demo")]
            CliError::NoSelfPath(_) => ErrorCause::Connection,
            #[cfg(feature = "conformance-client")]
            CliError::Conformance(_) => ErrorCause::Server,
            #[cfg(feature = "playground")]
            CliError::Playground(e) => e.cause(),
            CliError::Gateway(e) => e.cause(),
            CliError::ServeHow => ErrorCause::Input,
            CliError::ServeToken { .. } => ErrorCause::Configuration,
        }
    }

    /// The exit code of this error: the one of its cause.
    pub(crate) fn exit(&self) -> Exit {
        Exit::of(self.cause())
    }

    /// A short stable name of the kind of error (for `--json`).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            CliError::NoConfig { .. } => "no_config",
            CliError::ConfigRead { .. } | CliError::ConfigTooLarge { .. } => "config_read",
            CliError::ConfigSyntax { .. } => "config_syntax",
            CliError::Config { .. } => "config",
            CliError::UnknownServer { .. } => "unknown_server",
            CliError::NoServerGiven
            | CliError::ServerAndOneOff { .. }
            | CliError::MissingWord { .. }
            | CliError::ResourceFlag { .. }
            | CliError::NothingToWatch { .. }
            | CliError::FlagRefused { .. }
            | CliError::OneOffFlag { .. } => "usage",
            CliError::Argument { .. }
            | CliError::ArgsRead { .. }
            | CliError::ArgsTooLarge { .. }
            | CliError::ArgsNotText { .. } => "argument",
            CliError::UnknownPrompt { .. } => "unknown_prompt",
            CliError::UnknownSkill { .. } => "unknown_skill",
            CliError::AmbiguousSkill { .. } => "ambiguous",
            CliError::AddRefused { .. } | CliError::AddRefusedHidden { .. } => "add_refused",
            CliError::NameTaken { .. } => "name_taken",
            CliError::NotApproved { .. } | CliError::TrustDeclined { .. } => "not_approved",
            CliError::NotConfirmed { .. } => "not_confirmed",
            CliError::TrustStore { .. } | CliError::NoStateDir | CliError::NotUtf8Path { .. } => {
                "trust_store"
            }
            CliError::ConfigWrite { .. } => "config_write",
            CliError::Auth(_) => "auth",
            CliError::NotRemote { .. } => "not_remote",
            #[cfg(feature = "demo")]
            CliError::UnknownDemo { .. } => "unknown_demo",
            CliError::Export(e) | CliError::Hub(e) => hub_kind(e),
            CliError::UnknownTool { error, .. } => hub_kind(error),
            CliError::Interrupted => "interrupted",
            CliError::Output(_) => "output",
            #[cfg(feature = "demo")]
            CliError::NoSelfPath(_) => "demo",
            #[cfg(feature = "conformance-client")]
            CliError::Conformance(_) => "conformance",
            #[cfg(feature = "playground")]
            CliError::Playground(_) => "playground",
            CliError::Gateway(_) => "gateway",
            CliError::ServeHow => "usage",
            CliError::ServeToken { .. } => "config",
        }
    }

    fn hub(&self) -> Option<&HubError> {
        match self {
            CliError::Hub(e) | CliError::Export(e) => Some(e),
            CliError::UnknownTool { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Our words: this error and its causes, one per line after the first.
    pub(crate) fn chain(&self) -> Vec<String> {
        let mut lines = vec![self.to_string()];
        // (`transparent` forwards `source` to the inner error's source.)
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            let text = cause.to_string();
            if lines.last() != Some(&text) {
                lines.push(text);
            }
            source = cause.source();
        }
        lines
    }

    /// The `--json` form: `{"error": {...}}`.
    pub(crate) fn to_json(&self) -> Value {
        let error = match (self, self.hub()) {
            (
                CliError::UnknownTool {
                    error,
                    failed,
                    suggestions,
                },
                _,
            ) => {
                let mut json = hub_error_json(error);
                json["message"] = json!(self.chain().join(": "));
                if !failed.is_empty() {
                    json["failedServers"] = json!(failed);
                }
                if !suggestions.is_empty() {
                    json["suggestions"] = json!(suggestions);
                }
                json
            }
            (CliError::UnknownPrompt { suggestions, .. }, _) => json!({
                "kind": self.kind(),
                "cause": self.cause().as_str(),
                "message": self.chain().join(": "),
                "exitCode": self.exit().code(),
                "suggestions": suggestions,
            }),
            (_, Some(hub)) => hub_error_json(hub),
            (_, None) => json!({
                "kind": self.kind(),
                "cause": self.cause().as_str(),
                "message": self.chain().join(": "),
                "exitCode": self.exit().code(),
            }),
        };
        json!({ "error": error })
    }

    /// The human report for stderr. `one_off_url` is the `--url` of a
    /// server given on the command line (its sign-in hint names it).
    /// `a_terminal_would_ask`: whether this command, run at a terminal,
    /// would have answered the servers' questions that it did not offer
    /// now (for the hint when a server needed one).
    pub(crate) fn report(
        &self,
        paint: Paint,
        verbose: bool,
        one_off_url: Option<&str>,
        a_terminal_would_ask: bool,
    ) -> String {
        let mut out = render_report(
            &self.chain(),
            self.hub().map(TheirWords::of).unwrap_or_default(),
            paint,
            verbose,
        );
        if let Some(pages) = self.hub().and_then(HubError::url_elicitations) {
            out.push_str(&crate::questions::pages_report(&pages, paint));
        }
        if let Some(hint) = self.hint(one_off_url, a_terminal_would_ask) {
            out.push_str(&format!("  {} {hint}\n", paint.dim("hint:")));
        }
        out
    }

    /// What the user can do about it, when we know.
    fn hint(&self, one_off_url: Option<&str>, a_terminal_would_ask: bool) -> Option<String> {
        if let CliError::UnknownTool { suggestions, .. }
        | CliError::UnknownPrompt { suggestions, .. } = self
            && !suggestions.is_empty()
        {
            let quoted: Vec<String> = suggestions
                .iter()
                .map(|s| format!("`{}`", escape_line(s)))
                .collect();
            return Some(format!("did you mean {}?", or_list(&quoted)));
        }
        if let CliError::Auth(mcp_auth::AuthError::NoOAuth) = self {
            return Some(
                "`mcp inspect SERVER` (or `mcp inspect --url URL`) shows whether the server answers without signing in"
                    .to_owned(),
            );
        }
        let hub = self.hub()?;
        if let Some(SessionError::Timeout { method, .. }) = session_of(hub)
            && method == "tools/call"
        {
            return Some(
                "a tool that takes longer needs `--timeout SECONDS` (up to 600), or `request_timeout_ms` in its server's entry"
                    .to_owned(),
            );
        }
        if a_terminal_would_ask && session_of(hub).is_some_and(needs_a_question) {
            return Some(
                "`mcp` answers a server's questions (elicitation, sampling) only when stdin and stderr are a terminal: run it at one"
                    .to_owned(),
            );
        }
        if let Some(status) = session_of(hub).and_then(endpoint_missing) {
            return Some(format!(
                "the URL answered HTTP {status} to the first request: is its path the server's MCP endpoint? (Streamable HTTP servers often serve `/mcp`, legacy SSE ones `/sse`)"
            ));
        }
        if let HubError::Denied {
            reason: DenyReason::MissingPermission,
            ..
        } = hub
        {
            return Some(
                "the configuration tags it with a permission: `mcp tools` names it; grant it with --grant PERMISSION"
                    .to_owned(),
            );
        }
        let server = hub.server()?;
        let missing_token = hub_chain(hub)
            .iter()
            .any(|l| l.contains("holding the server credential"));
        let login = match one_off_url {
            // A server of the command line has no name to log in by.
            Some(url) => format!("mcp login --url {}", shell_word(url)),
            None => format!("mcp login {server}"),
        };
        (hub.cause() == ErrorCause::Authorization && !missing_token)
            .then(|| format!("if the server signs in with OAuth, run `{login}` first"))
    }
}

/// The session error inside a hub error, when there is one.
fn session_of(e: &HubError) -> Option<&SessionError> {
    match e {
        HubError::Session { error, .. } => Some(error),
        HubError::RequiredServerFailed { source, .. } => session_of(source),
        _ => None,
    }
}

/// Whether a request failed for want of an answer a person gives: the
/// server refused it without the capability (`-32021` naming elicitation
/// or sampling), or asked in an `input_required` round and found no
/// handler (`-32601`).
fn needs_a_question(e: &SessionError) -> bool {
    if let SessionError::InputNotProvided { asked, code, .. } = e {
        return *code == mcp_types::error_codes::METHOD_NOT_FOUND
            && (asked.starts_with("elicitation/") || asked.starts_with("sampling/"));
    }
    let Some(error) = e.error_object() else {
        return false;
    };
    if error.code != mcp_types::error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY {
        return false;
    }
    let named = error
        .data
        .as_ref()
        .and_then(|data| data.get("requiredCapabilities"))
        .and_then(serde_json::Value::as_object)
        .is_some_and(|caps| caps.contains_key("elicitation") || caps.contains_key("sampling"));
    named || {
        let message = error.message.to_ascii_lowercase();
        message.contains("elicitation") || message.contains("sampling")
    }
}

/// The HTTP status with which a URL turned down the very first request
/// (`initialize` or `server/discover`; after a legacy fallback that failed
/// too, the first attempt's), when it says nothing serves MCP there: 404,
/// 405 or 501.
fn endpoint_missing(e: &SessionError) -> Option<u16> {
    match e {
        SessionError::FallbackFailed { first, .. } => endpoint_missing(first),
        SessionError::Http {
            method,
            failure: mcp_transport::RequestFailure::Status { status, .. },
        } if (method == "initialize" || method == "server/discover")
            && matches!(status, 404 | 405 | 501) =>
        {
            Some(*status)
        }
        _ => None,
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// A word for a POSIX shell: as it is when it needs no quoting, else in
/// single quotes; control characters escaped.
pub(crate) fn shell_word(word: &str) -> String {
    let word = escape_line(word);
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A hub error's causes, in our words.
pub(crate) fn hub_chain(e: &HubError) -> Vec<String> {
    let mut lines = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if lines.last() != Some(&text) {
            lines.push(text);
        }
        source = cause.source();
    }
    lines
}

/// The `--json` form of a hub error (also used per server by `mcp tools`).
pub(crate) fn hub_error_json(e: &HubError) -> Value {
    let mut error = json!({
        "kind": hub_kind(e),
        "cause": e.cause().as_str(),
        "message": hub_chain(e).join(": "),
        "exitCode": Exit::of(e.cause()).code(),
    });
    if let Some(server) = e.server() {
        error["server"] = json!(server.as_str());
    }
    if let Some(m) = e.server_message() {
        error["serverMessage"] = json!(m);
    }
    if let Some(t) = e.stderr_tail() {
        error["stderrTail"] = json!(t);
    }
    if let Some(result) = e.received_result() {
        error["receivedResult"] = serde_json::to_value(result).unwrap_or(Value::Null);
    }
    if let Some(line) = e.unparsed_line() {
        error["unparsedLine"] = json!(line);
    }
    if let HubError::Ambiguous { candidates, .. } = e {
        error["candidates"] = json!(candidates);
    }
    if let Some(pages) = e.url_elicitations() {
        error["urlElicitations"] = crate::questions::pages_json(&pages);
    }
    error
}

/// Lines of a server's stderr shown on failure without `-v`.
const STDERR_LINES: usize = 20;

/// What a server said of itself around a failure, shown labelled after
/// our words.
#[derive(Clone, Copy, Default)]
pub(crate) struct TheirWords<'a> {
    /// Its JSON-RPC error message.
    pub(crate) message: Option<&'a str>,
    /// The last lines it wrote to stderr.
    pub(crate) stderr_tail: Option<&'a str>,
    /// The first line it sent that was not JSON-RPC.
    pub(crate) unparsed_line: Option<&'a str>,
    /// A tool result refused for breaking its output schema: the
    /// structured content it carried (`Some(None)`: none).
    pub(crate) structured: Option<Option<&'a Value>>,
}

impl<'a> TheirWords<'a> {
    /// What a hub error carries of the server's own words.
    pub(crate) fn of(e: &'a HubError) -> Self {
        Self {
            message: e.server_message(),
            stderr_tail: e.stderr_tail(),
            unparsed_line: e.unparsed_line(),
            structured: e.received_result().map(|r| r.structured_content.as_ref()),
        }
    }
}

/// Lines of a refused result's structured content shown (all of it is in
/// `--json`'s `receivedResult`).
const STRUCTURED_LINES: usize = 40;

/// `mcp: <error>`, its causes, then the server's own words, labelled.
pub(crate) fn render_report(
    chain: &[String],
    theirs: TheirWords<'_>,
    paint: Paint,
    verbose: bool,
) -> String {
    let TheirWords {
        message: server_message,
        stderr_tail,
        unparsed_line,
        structured,
    } = theirs;
    let mut out = String::new();
    // Our errors carry a server's strings escaped already; escaping every
    // line again keeps a cause from another crate honest too.
    let mut lines = chain.iter().map(|l| escape_line(l));
    if let Some(first) = lines.next() {
        out.push_str(&format!("{} {first}\n", paint.red("mcp: error:")));
    }
    for cause in lines {
        out.push_str(&format!("  {} {cause}\n", paint.dim("caused by:")));
    }
    if let Some(message) = server_message {
        // Quoted as a JSON string, which escapes C0 controls; C1 and
        // direction controls are escaped on top.
        out.push_str(&format!(
            "  {} {}\n",
            paint.dim("the server said:"),
            escape_line(&Value::String(message.to_owned()).to_string())
        ));
    }
    if let Some(tail) = stderr_tail.filter(|t| !t.trim().is_empty()) {
        let all: Vec<&str> = tail.trim_end().lines().collect();
        let shown = if verbose {
            &all[..]
        } else {
            &all[all.len().saturating_sub(STDERR_LINES)..]
        };
        let label = if shown.len() < all.len() {
            format!("the server's stderr (last {} lines):", shown.len())
        } else {
            "the server's stderr:".to_owned()
        };
        out.push_str(&format!("  {}\n", paint.dim(&label)));
        for line in shown {
            out.push_str(&format!("  | {}\n", escape_line(line)));
        }
    }
    if let Some(line) = unparsed_line {
        out.push_str(&format!(
            "  {}\n  | {}\n",
            paint.dim(
                "it sent a line that is not JSON-RPC (over stdio, only protocol messages may go to stdout; logs belong on stderr):"
            ),
            escape_line(line.trim_end())
        ));
    }
    match structured {
        Some(Some(value)) => {
            let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
            let all: Vec<&str> = pretty.lines().collect();
            let shown = &all[..all.len().min(STRUCTURED_LINES)];
            let label = paint.dim("the structured content it sent:");
            out.push_str(&format!("  {label}\n"));
            for line in shown {
                out.push_str(&format!("  | {}\n", escape_line(line)));
            }
            if shown.len() < all.len() {
                let more = all.len() - shown.len();
                out.push_str(&format!(
                    "  | … {more} more lines (`--json` has them all)\n"
                ));
            }
        }
        Some(None) => {
            let label = paint.dim("it sent no structured content");
            out.push_str(&format!("  {label}\n"));
        }
        None => {}
    }
    out
}

/// A short stable word for a hub error: the hub's own kind, with a
/// session's error told apart by the few kinds scripts look for, else by its
/// cause.
pub(crate) fn hub_kind(e: &HubError) -> &'static str {
    match e {
        HubError::RequiredServerFailed { source, .. } => hub_kind(source),
        HubError::Session { error, .. } => match error {
            SessionError::Timeout { .. } => "timeout",
            SessionError::Server { .. } => "server_error",
            SessionError::InvalidArguments { .. } => "invalid_arguments",
            SessionError::UnknownTool { .. } => "unknown_tool",
            other => match other.cause() {
                ErrorCause::Authorization => "auth",
                ErrorCause::Connection => "unreachable",
                _ => "protocol",
            },
        },
        other => other.kind(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_has_the_documented_exit_code() {
        for (cause, exit) in [
            (ErrorCause::Input, Exit::Usage),
            (ErrorCause::Configuration, Exit::Usage),
            (ErrorCause::Policy, Exit::Usage),
            (ErrorCause::Connection, Exit::Unreachable),
            (ErrorCause::Authorization, Exit::Auth),
            (ErrorCause::Server, Exit::Protocol),
            (ErrorCause::Bound, Exit::Protocol),
            (ErrorCause::Internal, Exit::Protocol),
            (ErrorCause::Cancelled, Exit::Interrupted),
        ] {
            assert_eq!(Exit::of(cause), exit, "{cause}");
        }
    }

    #[test]
    fn a_question_nobody_was_offered_is_told_apart_from_other_refusals() {
        let unasked = |asked: &str, code: i64| SessionError::InputNotProvided {
            method: "tools/call".into(),
            asked: asked.into(),
            code,
        };
        assert!(needs_a_question(&unasked("elicitation/create", -32601)));
        assert!(needs_a_question(&unasked("sampling/createMessage", -32601)));
        // Declined by the person, or a request of another kind: no.
        assert!(!needs_a_question(&unasked("elicitation/create", -1)));
        assert!(!needs_a_question(&unasked("roots/list", -32601)));
        let refused = |message: &str, data: Option<serde_json::Value>| {
            let mut error = mcp_types::ErrorObject::new(
                mcp_types::error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                message,
            );
            error.data = data;
            SessionError::Server {
                method: "tools/call".into(),
                code: error.code,
                error: Box::new(error),
            }
        };
        let sampling = serde_json::json!({"requiredCapabilities": {"sampling": {}}});
        assert!(needs_a_question(&refused(
            "Missing capability",
            Some(sampling)
        )));
        assert!(needs_a_question(&refused("needs elicitation", None)));
        let roots = serde_json::json!({"requiredCapabilities": {"roots": {}}});
        assert!(!needs_a_question(&refused(
            "Missing capability",
            Some(roots)
        )));
    }

    #[test]
    fn cli_errors_and_wrapped_library_errors_exit_by_their_cause() {
        let refused = CliError::AddRefusedHidden {
            flag: "--token-env",
            refusal: AddRefusal::TokenValue,
        };
        assert_eq!(
            (refused.cause(), refused.exit()),
            (ErrorCause::Input, Exit::Usage)
        );
        let unapproved = CliError::NotApproved {
            file: PathBuf::from(".mcp.json"),
            changed: false,
        };
        assert_eq!(unapproved.cause(), ErrorCause::Policy);
        let sign_in = CliError::Auth(mcp_auth::AuthError::SignInRequired);
        assert_eq!(
            (sign_in.cause(), sign_in.exit()),
            (ErrorCause::Authorization, Exit::Auth)
        );
        let cancelled = CliError::Hub(HubError::ShuttingDown);
        assert_eq!(cancelled.exit(), Exit::Interrupted);
        assert_eq!(cancelled.to_json()["error"]["cause"], "cancelled");
        let interrupted = CliError::Interrupted;
        assert_eq!(interrupted.to_json()["error"]["cause"], "cancelled");
    }
}
