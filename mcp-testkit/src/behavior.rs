//! What a scripted tool does when it is called, and the other scripted
//! reactions (to a probe, to requests before `initialize`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a tool does when `tools/call` names it.
///
/// In JSON the variant is chosen by `kind`, in snake case, with the variant's
/// fields beside it: `{"kind": "sleep", "ms": 500, "progress_steps": 5}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Behavior {
    /// Returns `arguments.text` as one text content block.
    /// A missing or non-string `text` is a JSON-RPC `-32602` error.
    Echo,
    /// Returns `arguments.a + arguments.b` as text and as
    /// `structuredContent: {"sum": …}`. Integers stay integers.
    Add,
    /// Waits `ms` milliseconds, then answers `"slept <ms> ms"`. If the request
    /// carries `_meta.progressToken`, sends `progress_steps` evenly spaced
    /// `notifications/progress` (progress 1..=steps, total = steps) first.
    /// A `notifications/cancelled` for the request stops it without an answer.
    Sleep {
        /// Total time to take.
        ms: u64,
        /// How many progress notifications to send when a token was given.
        #[serde(default)]
        progress_steps: u32,
    },
    /// Never answers. A `notifications/cancelled` for the request makes the
    /// server forget it (it is still recorded).
    Hang,
    /// Ends the process (the binary) or `serve` (in-process) with `code`,
    /// mid-call, without answering. Frames queued before are still written.
    Crash {
        /// The exit code.
        #[serde(default = "default_exit_code")]
        code: i32,
    },
    /// Writes a line that is not JSON, then answers normally (`"ok"`).
    Garbage,
    /// Instead of a normal result, writes one response line of exactly
    /// `bytes` bytes (newline not counted): a valid JSON-RPC result whose text
    /// block is padded with `x`. Meant to exceed the client's frame bound.
    Oversized {
        /// Length of the line.
        bytes: u64,
    },
    /// Answers with a JSON-RPC error.
    Error {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
        /// Optional `data`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// Answers with a tool execution error: `isError: true` and one text block.
    ToolError {
        /// The text of the error.
        text: String,
    },
    /// Answers with `structuredContent: value` and the value's JSON as text.
    Structured {
        /// The structured content.
        value: Value,
    },
    /// Sends `notifications/message` and (legacy only)
    /// `notifications/tools/list_changed` before answering `"notified"`.
    ///
    /// In the 2026-07-28 era `notifications/message` is sent only when the
    /// request asked for it with `_meta["io.modelcontextprotocol/logLevel"]`,
    /// and `list_changed` is not sent at all: that era delivers it only on a
    /// `subscriptions/listen` stream, which the testkit does not implement.
    Notify,
    /// Asks the client something and returns its answer as JSON text.
    ///
    /// Legacy: sends a server→client request `{method, params}` with its own
    /// id, waits for the response (bounded by the script's
    /// `ask_timeout_ms`), and returns the client's `result` (or
    /// `{"error": …}`) serialised as the text block.
    ///
    /// 2026-07-28: there are no server→client requests. The first call gets
    /// an `input_required` result with `inputRequests: {"ask": {method,
    /// params}}` and a `requestState`; the retry carrying that
    /// `requestState` and `inputResponses.ask` gets the response as text. If
    /// the request's client capabilities lack the one `method` needs
    /// (`sampling`, `elicitation`, `roots`), the answer is `-32021`.
    AskClient {
        /// The method to ask, e.g. `sampling/createMessage`.
        method: String,
        /// Its params.
        #[serde(default)]
        params: Value,
    },
    /// Answers first with an id the client never sent (a negated number or
    /// the string id with `#wrong` appended), then with the real id (`"ok"`).
    WrongId,
    /// Returns `kb` KiB of text in one block.
    Blob {
        /// Size in KiB.
        kb: u64,
    },
    /// Returns fixed text, with `{name}` replaced by the argument `name`
    /// (strings as they are, other values as JSON; unknown names kept).
    Text {
        /// The text template.
        text: String,
    },
    /// Returns the `items` whose string fields contain `arguments.query`
    /// (case-insensitive), at most `arguments.limit` of them: one text block
    /// per item and `structuredContent: {"results": [...]}`.
    Search {
        /// The canned items (JSON objects).
        items: Vec<Value>,
    },
    /// Looks `arguments[key]` up in `entries` and returns the entry (text as
    /// is, anything else as JSON); a miss is a tool error.
    Lookup {
        /// The argument holding the key.
        key: String,
        /// The canned entries.
        entries: Map<String, Value>,
    },
}

pub(crate) fn default_exit_code() -> i32 {
    1
}

/// What a legacy-only server does when it receives `server/discover`.
///
/// JSON: `{"kind": "silence"}`, `{"kind": "unsupported_version", "versions": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum OnProbe {
    /// `-32601` method not found (what most SDK-based servers do).
    #[default]
    MethodNotFound,
    /// Never answers (a client must time out and fall back).
    Silence,
    /// Ends the process / `serve` at once with `code`, without answering.
    Exit {
        /// The exit code.
        #[serde(default = "default_exit_code")]
        code: i32,
    },
    /// `-32600` invalid request with `id: null`.
    InvalidRequest,
    /// `-32022` listing `versions` as supported, as a modern server would
    /// (a client must then retry with one of them, not fall back).
    UnsupportedVersion {
        /// The versions to claim.
        versions: Vec<String>,
    },
}

/// What a legacy server does with a request (other than `initialize` and
/// `ping`) that arrives before `initialize`.
///
/// Real servers differ: the Python SDK refuses such requests, the TypeScript
/// SDK's stdio server serves them, and some servers never answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PreInit {
    /// Answers with a JSON-RPC error with `code` (default `-32600`).
    Reject {
        /// The error code.
        #[serde(default = "default_pre_init_code")]
        code: i64,
    },
    /// Serves the request as if initialized (at the latest legacy version).
    Serve,
    /// Never answers.
    Silence,
}

impl Default for PreInit {
    fn default() -> Self {
        Self::Reject {
            code: default_pre_init_code(),
        }
    }
}

fn default_pre_init_code() -> i64 {
    crate::wire::INVALID_REQUEST
}

/// The 2026-07-28 `cacheScope` hint put on `server/discover` and `tools/list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheScope {
    /// No user-specific data: shared caches may keep it.
    Public,
    /// Cache only within one authorization context.
    #[default]
    Private,
}

impl CacheScope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Private => "private",
        }
    }
}
