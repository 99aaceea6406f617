//! Scripted fake MCP servers for tests and demos.
//!
//! A [`FakeServer`] speaks newline-delimited JSON-RPC over any byte streams,
//! in-process ([`FakeServer::serve`], [`FakeServer::start`]) or as the stdio
//! binary `mcp-testkit-server`. It speaks both protocol eras and can be told
//! to misbehave. It is written on plain [`serde_json::Value`] and shares no
//! types with the client it tests, so a type bug in the client cannot be
//! masked by the same bug here.
//!
//! # Eras
//!
//! - **Legacy** (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): expects
//!   `initialize` first and answers with the client's version if the script
//!   lists it, else its newest legacy version; then expects
//!   `notifications/initialized`. Other requests before `initialize` are
//!   handled per [`PreInit`] (default: error `-32600` "Server not
//!   initialized"; real servers differ: the Python SDK refuses, the TypeScript
//!   stdio server serves, some never answer). Answers `ping`,
//!   `logging/setLevel`, `resources/subscribe` / `unsubscribe` and (at
//!   2025-11-25, with a task tool) `tasks/get|result|list|cancel`.
//! - **Modern** (2026-07-28): no handshake. Every request must carry
//!   `_meta["io.modelcontextprotocol/protocolVersion"]` and
//!   `_meta["io.modelcontextprotocol/clientCapabilities"]`: a missing field is
//!   `-32602` (as the spec says; `data.missing` names it and `data.supported`
//!   lists the versions), an unsupported version is `-32022` with
//!   `data: {"supported": [...], "requested": "..."}`. `server/discover` returns a
//!   `DiscoverResult` (`supportedVersions` = every version of the script).
//!   Results carry `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`;
//!   `server/discover`, every list and `resources/read` carry `ttlMs` and
//!   `cacheScope`. An unknown `_meta["io.modelcontextprotocol/logLevel"]` is
//!   `-32602`. `ping`, `logging/setLevel`, `resources/subscribe`,
//!   `tasks/result` and `tasks/list` do not exist in this era (`-32601`);
//!   `subscriptions/listen` and (tasks extension) `tasks/update` do.
//! - **Dual-era** scripts serve a request in the modern era when it carries
//!   the version in `_meta` (or is `server/discover`), else in the legacy era.
//!   A **legacy-only** script answers `server/discover` per [`OnProbe`].
//!
//! # Scripts
//!
//! A [`Script`] is serde-deserialisable (every field optional) and buildable
//! in Rust:
//!
//! ```
//! use mcp_testkit::{Behavior, OnProbe, Script};
//! let script = Script::legacy()
//!     .on_probe(OnProbe::Silence)
//!     .tool("echo", Behavior::Echo)
//!     .tool("slow", Behavior::Sleep { ms: 200, progress_steps: 4 })
//!     .page_size(1);
//! let same = Script::from_json(r#"{
//!     "versions": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
//!     "on_probe": {"kind": "silence"},
//!     "page_size": 1,
//!     "tools": [
//!         {"name": "echo", "description": "Returns the given text.",
//!          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
//!          "behavior": {"kind": "echo"}},
//!         {"name": "slow", "description": "Waits, reporting progress when asked.",
//!          "inputSchema": {"type": "object", "properties": {}},
//!          "behavior": {"kind": "sleep", "ms": 200, "progress_steps": 4}}
//!     ]
//! }"#).unwrap();
//! assert_eq!(script, same);
//! ```
//!
//! Fields: `versions`, `server_info`, `instructions`, `capabilities` (added to
//! the built-in ones: `tools` + `logging`, plus `resources`, `prompts`,
//! `completions` and tasks when the script has them), `tools` (each the
//! tool's JSON plus a `behavior`, optional `task_support`,
//! `appear_at_change`, `vanish_at_change`, `needs_client`), `resources`,
//! `resource_templates`, `prompts` ([`ResourceSpec`],
//! [`ResourceTemplateSpec`], [`PromptSpec`], [`CompletionSpec`],
//! [`InputSpec`]), `page_size` (every list), `cyclic_cursor`,
//! `endless_pages` (`tools/list` only), `ttl_ms`, `cache_scope`, the task
//! settings `task_poll_interval_ms`, `task_ttl_ms`,
//! `task_status_notifications`, `on_probe`, `pre_init`,
//! `strict_lifecycle`, and the startup misbehaviours `stderr_flood_bytes`,
//! `spawn_grandchild`, `exit_after_initialize`, `garbage_on_start`; bounds
//! `max_line_bytes` (64 MiB), `max_in_flight` (1024), `max_tasks` (1024),
//! `max_subscriptions` (64), `eof_grace_ms`, `ask_timeout_ms`. See
//! [`Script`] for each.
//!
//! # Tool behaviours
//!
//! `{"kind": ...}` of [`Behavior`]: `echo`, `add`, `sleep {ms,
//! progress_steps}`, `hang`, `crash {code}`, `garbage`, `oversized {bytes}`,
//! `error {code, message, data?}`, `tool_error {text}`, `structured {value}`,
//! `notify`, `ask_client {method, params}` (a server→client request in the
//! legacy era, an `input_required` round in 2026-07-28), `ask {requests,
//! rounds, elicitation_complete}` (any number of keyed requests over
//! rounds, see [`InputSpec`]), `elicitation_complete {elicitation_id}`,
//! `content {content, is_error?, logs?}` (content blocks, verbatim),
//! `log {level, message, logger?}`, `touch_resource {uri}`, `change_list
//! {list: tools|prompts|resources}`, `end_listen {how:
//! graceful|drop|exit, code}`, `wrong_id`, `blob {kb}`, and for demos
//! `text {text}`, `search {items}`, `lookup {key, entries}`. Calls run
//! concurrently, one task each; a `notifications/cancelled` stops a running
//! call or forgets a hanging one.
//!
//! # Resources, prompts, completion
//!
//! `resources/list`, `resources/templates/list`, `prompts/list` page like
//! `tools/list`. `resources/read` returns a resource's `text` or `blob`, or
//! the `text` of the first template the URI matches (`{var}` and `{+var}`
//! substituted); an unknown URI is `-32002` (legacy) / `-32602`
//! (2026-07-28), `data: {uri}`. `prompts/get` renders `{argument}` in every
//! string of the prompt's messages; a missing required argument or an
//! unknown prompt is `-32602`. `completion/complete` filters scripted
//! values by prefix and context, at most 100 with `total` and `hasMore`.
//! A feature the script lacks answers `-32601`. Items with
//! `appear_at_change` / `vanish_at_change` come and go with `change_list`;
//! a tool with `needs_client` is listed only to a client that declared
//! that capability (as some servers hide the tools that would ask it).
//!
//! # Change notifications and `subscriptions/listen`
//!
//! Legacy: `change_list` sends `notifications/<list>/list_changed`
//! unsolicited; `touch_resource` sends `notifications/resources/updated`
//! if the URI was `resources/subscribe`d. 2026-07-28: `subscriptions/listen`
//! is acknowledged with `notifications/subscriptions/acknowledged` (the part
//! of the filter honoured), then gets only the notifications its filter
//! asked for, each with `_meta["io.modelcontextprotocol/subscriptionId"]`
//! = the listen request's id. `end_listen` ends every stream (graceful: a
//! `complete` result with the subscription id; drop: silence; exit: the
//! server ends); `notifications/cancelled` for the listen id ends it
//! without an answer.
//!
//! # Logging
//!
//! `log` and `notify` send `notifications/message`. Legacy: everything
//! until `logging/setLevel`, then only at or above it. 2026-07-28: only when
//! the request's `_meta["io.modelcontextprotocol/logLevel"]` is set, at or
//! above it.
//!
//! # Client input
//!
//! `ask`, `ask_client`, and prompts / resources with an `input` ask the
//! client: legacy with server→client requests (answers, error answers and
//! timeouts are reported in the result), 2026-07-28 with `input_required`
//! results (`inputRequests` + a tamper-evident `requestState`; the retry
//! with every `inputResponses` key moves to the next round; a missing or
//! foreign `requestState` is `-32602`; an undeclared capability `-32021`).
//! Prompts and resources report what they got under
//! `_meta["mcp-testkit/inputResponses"]`.
//!
//! # Tasks
//!
//! A tool with [`TaskSupport`] `optional` / `required` runs as a task.
//! 2025-11-25: when `tools/call` has a `task` param (`{task: {...}}`
//! `CreateTaskResult`, `tasks/get`, blocking `tasks/result`, `tasks/list`,
//! `tasks/cancel`, `notifications/tasks/status`; `isError` results fail the
//! task). 2026-07-28 tasks extension (SEP-2663): when the request declares
//! `extensions["io.modelcontextprotocol/tasks"]` (flat `resultType: "task"`,
//! `tasks/get` with `result` / `error` / `inputRequests`, `tasks/update`,
//! `tasks/cancel` acknowledgements, `notifications/tasks` on listen streams
//! with `taskIds`). Guesses where the specs are silent are marked in
//! `tasks.rs` (e.g. `tasks/result` of a cancelled task is `-32602`).
//!
//! # Recording
//!
//! Every frame received is kept, parsed, in a [`Recorder`]
//! ([`FakeServer::recorder`]): `received()`, `with_method()`,
//! `responses()`, `response_to(id)`, `cancelled_ids()`,
//! `wait_for(method, timeout)`, `wait_until(...)`.
//! The binary's `--record PATH` appends each frame to a file as a JSON line.
//!
//! # In-process use
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use mcp_testkit::{Behavior, FakeServer, LineClient, Script};
//! use serde_json::json;
//! let running = FakeServer::new(Script::legacy().tool("echo", Behavior::Echo)).start();
//! let mut client = LineClient::over(running.stream);
//! let init = client.initialize("2025-06-18").await;
//! assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
//! let reply = client
//!     .request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}))
//!     .await;
//! assert_eq!(reply["result"]["content"][0]["text"], "hi");
//! assert!(running.recorder.wait_for("notifications/initialized", std::time::Duration::from_secs(1)).await.is_some());
//! # }
//! ```
//!
//! # The binary, from other crates' tests
//!
//! `mcp-testkit-server [--script FILE | --script-json JSON | --demo NAME] [--record PATH]`
//! (script also from env `MCP_TESTKIT_SCRIPT`; default [`Script::basic`]).
//! Cargo builds a dev-dependency's library but not its binaries, and
//! `CARGO_BIN_EXE_*` exists only inside this crate: other crates call
//! [`build_server_binary`] (builds it once if missing, same profile) or
//! [`server_binary`] (just looks).
#![forbid(unsafe_code)]

mod arguments;
mod behavior;
mod binary_path;
mod client;
pub mod demo;
mod error;
pub mod http;
mod input;
mod lines;
mod listen;
mod lists;
mod prompts;
mod recorder;
mod request;
mod resources;
mod router;
mod script;
mod server;
pub mod skills;
mod specs;
mod state;
mod tasks;
mod time;
mod tool_call;
pub mod wire;

pub use arguments::example_arguments;
pub use behavior::{Behavior, CacheScope, OnProbe, PreInit};
pub use binary_path::{SERVER_BINARY_ENV, SERVER_BINARY_NAME, build_server_binary, server_binary};
pub use client::{
    CLIENT_MAX_LINE_BYTES, DEFAULT_RECV_TIMEOUT, Line, LineClient, modern_meta, with_modern_meta,
};
pub use error::{ScriptProblem, TestkitError};
pub use http::{HttpFakeServer, HttpServerOptions, RunningHttpServer};
pub use recorder::{
    MAX_RECORDED_BYTES, MAX_RECORDED_FRAMES, MAX_REJECTED_LINES, REJECTED_PREFIX_BYTES, Recorder,
    RejectedLine,
};
pub use script::{
    MAX_BLOB_KB, MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS, MAX_OVERSIZED_BYTES, MAX_STDERR_FLOOD_BYTES,
    Script, ToolSpec,
};
pub use server::{FakeServer, RunningServer};
pub use specs::{
    CompletionSpec, InputRequest, InputSpec, ListKind, ListenEnd, PromptSpec, ReadLog,
    ResourceSpec, ResourceTemplateSpec, TaskSupport,
};
