//! The crate's one error type.

use std::path::PathBuf;
use std::process::ExitStatus;

/// Everything that can go wrong while loading a script, recording to a file,
/// locating or building the server binary, or parsing the binary's arguments.
///
/// A running [`FakeServer`](crate::FakeServer) never fails: misbehaviour is
/// what it is for, and protocol problems are answered on the wire.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestkitError {
    /// A script file could not be read.
    #[error("cannot read script file {path}")]
    ScriptRead {
        /// The file that was named.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// A script is not valid JSON for [`Script`](crate::Script).
    #[error("script is not a valid mcp-testkit script")]
    ScriptParse(#[source] serde_json::Error),
    /// A script parsed but asks for something the fake server cannot do.
    #[error("script is invalid: {0}")]
    ScriptInvalid(#[from] ScriptProblem),
    /// The `--record` file could not be opened.
    #[error("cannot open record file {path}")]
    RecordFile {
        /// The file that was named.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: std::io::Error,
    },
    /// The current executable's location is not inside a Cargo target directory.
    #[error("cannot locate the Cargo target directory from the current executable")]
    NoTargetDir,
    /// `cargo` could not be started.
    #[error("cannot run cargo to build mcp-testkit-server")]
    CargoSpawn(#[source] std::io::Error),
    /// `cargo build` ran and failed.
    #[error("cargo build of mcp-testkit-server failed with {0}")]
    CargoFailed(ExitStatus),
    /// `cargo build` succeeded but the binary is not where it should be.
    #[error("mcp-testkit-server is missing at {0} after building it")]
    BinaryMissing(PathBuf),
    /// A command-line argument of `mcp-testkit-server` was not understood.
    #[error("unknown argument {0:?} (try --help)")]
    UnknownArgument(String),
    /// A command-line flag of `mcp-testkit-server` needs a value.
    #[error("{0} needs a value")]
    MissingValue(&'static str),
    /// `--demo` named a demo that does not exist.
    #[error("unknown demo {0:?}: expected one of notes, files, github")]
    UnknownDemo(String),
}

/// A reason a [`Script`](crate::Script) is refused by
/// [`Script::validate`](crate::Script::validate).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptProblem {
    /// `versions` is empty.
    #[error("no protocol versions")]
    NoVersions,
    /// A version string is none of the five known protocol versions.
    #[error("unknown protocol version {0:?}")]
    UnknownVersion(String),
    /// A tool has no string `name`.
    #[error("tool #{0} has no string \"name\"")]
    ToolWithoutName(usize),
    /// Two tools share a name.
    #[error("two tools are named {0:?}")]
    DuplicateTool(String),
    /// `page_size` is zero.
    #[error("page_size must be at least 1")]
    ZeroPageSize,
    /// `cyclic_cursor` and `endless_pages` are both set.
    #[error("cyclic_cursor and endless_pages exclude each other")]
    ConflictingPagination,
    /// A size in the script exceeds the testkit's own bound.
    #[error("{what} is {requested} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Which setting.
        what: &'static str,
        /// What the script asked for.
        requested: u64,
        /// The largest accepted value.
        limit: u64,
    },
    /// A limit or count that must be positive is zero (`max_line_bytes`,
    /// `max_in_flight`, `max_tasks`, `max_subscriptions`, `input.rounds`,
    /// `input.requests`).
    #[error("{0} must be at least 1")]
    ZeroLimit(&'static str),
    /// A count in the script exceeds the testkit's own bound.
    #[error("{what} is {requested}, more than the limit of {limit}")]
    TooMany {
        /// Which setting.
        what: &'static str,
        /// What the script asked for.
        requested: u64,
        /// The largest accepted value.
        limit: u64,
    },
    /// A resource has no string `uri`.
    #[error("resource #{0} has no string \"uri\"")]
    ResourceWithoutUri(usize),
    /// Two resources share a URI.
    #[error("two resources have the URI {0:?}")]
    DuplicateResource(String),
    /// A resource has both `text` and `blob`.
    #[error("resource {0:?} has both text and blob")]
    TextAndBlob(String),
    /// A resource template has no string `uriTemplate`.
    #[error("resource template #{0} has no string \"uriTemplate\"")]
    TemplateWithoutUriTemplate(usize),
    /// A prompt has no string `name`.
    #[error("prompt #{0} has no string \"name\"")]
    PromptWithoutName(usize),
    /// Two prompts share a name.
    #[error("two prompts are named {0:?}")]
    DuplicatePrompt(String),
    /// A `log` behaviour names a level that is not one of the eight syslog levels.
    #[error("unknown log level {0:?}")]
    UnknownLogLevel(String),
}
