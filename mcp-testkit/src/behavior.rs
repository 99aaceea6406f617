//! What a scripted tool does when it is called, and the other scripted
//! reactions (to a probe, to requests before `initialize`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::specs::{InputSpec, ListKind, ListenEnd};

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
    /// Sends an `info` `notifications/message` and
    /// `notifications/tools/list_changed` before answering `"notified"`.
    ///
    /// Legacy: the log message respects `logging/setLevel` (none set: sent),
    /// the list change is unsolicited. 2026-07-28: the log message is sent
    /// only when the request asked for it with
    /// `_meta["io.modelcontextprotocol/logLevel"]` at `info` or below, and
    /// `list_changed` only on open `subscriptions/listen` streams with
    /// `toolsListChanged`. The tool list itself does not change (see
    /// [`ChangeList`](Self::ChangeList)).
    Notify,
    /// Asks the client something and returns its answer as JSON text.
    ///
    /// Legacy: sends a server→client request `{method, params}` with its own
    /// id, waits for the response (bounded by the script's
    /// `ask_timeout_ms`), and returns the client's `result` serialised as
    /// the text block; an error response becomes `isError: true` with
    /// `{"error": …}` as text, no response a timeout text with `isError`
    /// (the client is sent `notifications/cancelled` for the request).
    ///
    /// 2026-07-28: there are no server→client requests. The first call gets
    /// an `input_required` result with `inputRequests: {"ask": {method,
    /// params}}` and a `requestState`; the retry carrying that
    /// `requestState` and `inputResponses.ask` gets the response as text. If
    /// the request's client capabilities lack the one `method` needs
    /// (`sampling`, `elicitation` (+`url` for URL mode), `roots`), the
    /// answer is `-32021`. The same as [`Ask`](Self::Ask) with one request
    /// keyed `ask` and one round, reported in this older shape.
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
    /// Sends one `notifications/message` `{level, logger?, data: message}`,
    /// then answers `"logged"` (sent) or `"log suppressed"`.
    ///
    /// Legacy: sent when no `logging/setLevel` was received or `level` is at
    /// or above the level set. 2026-07-28: sent only when the request's
    /// `_meta["io.modelcontextprotocol/logLevel"]` is present and `level` is
    /// at or above it. Levels, lowest first: debug, info, notice, warning,
    /// error, critical, alert, emergency.
    Log {
        /// The message's level.
        level: String,
        /// The message's `data` (any JSON).
        message: Value,
        /// The message's `logger`, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logger: Option<String>,
    },
    /// Floods the client with `count` `info` `notifications/message` lines
    /// (logger `flood`), written as fast as the client reads them, 64 to a
    /// write, whatever log level was asked for (a misbehaving server), then
    /// answers `"flooded <count>"`. `count` 0 floods until the call is
    /// cancelled or the connection ends, and never answers.
    FloodLogs {
        /// How many log messages (0: no end).
        count: u64,
    },
    /// Says resource `uri` changed, then answers `"touched <uri>"`.
    ///
    /// Legacy: `notifications/resources/updated {uri}` if the client
    /// subscribed to `uri` with `resources/subscribe`. 2026-07-28: the same
    /// notification, with `_meta["io.modelcontextprotocol/subscriptionId"]`,
    /// on every open `subscriptions/listen` stream whose acknowledged
    /// `resourceSubscriptions` contain `uri`.
    TouchResource {
        /// The resource that changed.
        uri: String,
    },
    /// Changes a list, then answers `"changed <list>"`: the list's change
    /// count goes up by one (items with `appear_at_change` /
    /// `vanish_at_change` appear or vanish accordingly) and
    /// `notifications/<list>/list_changed` is sent. Legacy: unsolicited.
    /// 2026-07-28: on every open `subscriptions/listen` stream whose
    /// acknowledged filter has `<list>ListChanged`, with its `subscriptionId`.
    ChangeList {
        /// Which list: `tools`, `prompts` or `resources` (templates included).
        list: ListKind,
    },
    /// Ends every open `subscriptions/listen` stream (2026-07-28), then
    /// answers `"ended <n> subscriptions"` (except for `exit`).
    EndListen {
        /// `graceful` (a result per stream), `drop` (silence) or `exit` (the
        /// server ends with `code`).
        how: ListenEnd,
        /// The exit code for `exit`.
        #[serde(default = "default_exit_code")]
        code: i32,
    },
    /// Asks the client for input ([`InputSpec`]: keyed requests, rounds),
    /// then reports everything it got.
    ///
    /// The answer's `structuredContent` (and its text, as JSON) is
    /// `{"rounds": [{key: response, …}, …]}`, one object per round, where a
    /// response is the client's `result`, or (legacy) `{"error": …}` for an
    /// error response or `{"timeout": true}`; any of those sets
    /// `isError: true`. See [`InputSpec`] for how each era asks.
    Ask(InputSpec),
    /// Sends `notifications/elicitation/complete {elicitationId}` (legacy
    /// 2025-11-25), then answers `"completed <id>"`.
    ElicitationComplete {
        /// The `elicitationId` to name.
        elicitation_id: String,
    },
    /// Returns fixed text, with `{name}` replaced by the argument `name`
    /// (strings as they are, other values as JSON; unknown names kept).
    Text {
        /// The text template.
        text: String,
    },
    /// Like [`Behavior::Text`], after waiting `arguments[argument]` seconds
    /// (a non-negative number; absent: no wait; at most an hour): a
    /// long-running job whose length the caller chooses. Anything but a
    /// number there is `-32602`.
    TextAfter {
        /// The argument holding the seconds to wait.
        argument: String,
        /// The text template.
        text: String,
    },
    /// Like [`Behavior::Text`], after `steps` progress notifications
    /// (`step k of steps`, at once) when the request asked for progress.
    TextWithProgress {
        /// The text template.
        text: String,
        /// How many progress notifications come first.
        steps: u32,
    },
    /// Sends each of `logs` as a `notifications/message` (by the rules of
    /// [`Log`](Self::Log)), then answers with `content` verbatim (any content
    /// blocks: image, audio, embedded resources …), `isError: true` when
    /// `is_error`.
    Content {
        /// The content blocks of the result, sent as given.
        content: Vec<Value>,
        /// Mark the result as a tool execution error.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// Log messages sent first, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        logs: Vec<crate::specs::ReadLog>,
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

impl Behavior {
    /// Answers `-32042` (2025-11-25's `URLElicitationRequiredError`): the
    /// call goes through once the user has opened these pages, each
    /// `(message, url, elicitationId)`.
    pub fn needs_pages(pages: &[(&str, &str, &str)]) -> Behavior {
        let elicitations: Vec<Value> = pages
            .iter()
            .map(|(message, url, id)| {
                serde_json::json!({"mode": "url", "message": message, "url": url, "elicitationId": id})
            })
            .collect();
        Behavior::Error {
            code: -32042,
            message: "open these pages first".to_owned(),
            data: Some(serde_json::json!({ "elicitations": elicitations })),
        }
    }
}

/// The longest wait of [`Behavior::TextAfter`], in seconds.
pub(crate) const MAX_WAIT_SECONDS: f64 = 3600.0;

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
    /// Any other JSON-RPC error for the probe's id (e.g. the modern `-32020`
    /// header mismatch or `-32021` missing capability).
    Error {
        /// The error code.
        code: i64,
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

/// The 2026-07-28 `cacheScope` hint put on `server/discover`, every list
/// result and `resources/read`.
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
