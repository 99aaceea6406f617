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
//!   stdio server serves, some never answer). Answers `ping` and
//!   `logging/setLevel`.
//! - **Modern** (2026-07-28): no handshake. Every request must carry
//!   `_meta["io.modelcontextprotocol/protocolVersion"]` and
//!   `_meta["io.modelcontextprotocol/clientCapabilities"]`: a missing field is
//!   `-32602` (as the spec says; `data.missing` names it and `data.supported`
//!   lists the versions), an unsupported version is `-32022` with
//!   `data: {"supported": [...], "requested": "..."}`. `server/discover` returns a
//!   `DiscoverResult` (`supportedVersions` = every version of the script).
//!   Results carry `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`;
//!   `server/discover` and `tools/list` carry `ttlMs` and `cacheScope`.
//!   `ping` does not exist in this era (`-32601`).
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
//! `tools` + `logging`), `tools` (each the tool's JSON plus a `behavior`),
//! `page_size`, `cyclic_cursor`, `endless_pages`, `ttl_ms`, `cache_scope`,
//! `on_probe`, `pre_init`, `strict_lifecycle`, and the startup misbehaviours
//! `stderr_flood_bytes`, `spawn_grandchild`, `exit_after_initialize`,
//! `garbage_on_start`; bounds `max_line_bytes` (64 MiB), `max_in_flight`
//! (1024), `eof_grace_ms`, `ask_timeout_ms`. See [`Script`] for each.
//!
//! # Tool behaviours
//!
//! `{"kind": ...}` of [`Behavior`]: `echo`, `add`, `sleep {ms,
//! progress_steps}`, `hang`, `crash {code}`, `garbage`, `oversized {bytes}`,
//! `error {code, message, data?}`, `tool_error {text}`, `structured {value}`,
//! `notify`, `ask_client {method, params}` (a server→client request in the
//! legacy era, an `input_required` round in 2026-07-28), `wrong_id`,
//! `blob {kb}`, and for demos `text {text}`, `search {items}`,
//! `lookup {key, entries}`. Calls run concurrently, one task each; a
//! `notifications/cancelled` stops a running call or forgets a hanging one.
//!
//! # Recording
//!
//! Every frame received is kept, parsed, in a [`Recorder`]
//! ([`FakeServer::recorder`]): `received()`, `with_method()`,
//! `cancelled_ids()`, `wait_for(method, timeout)`, `wait_until(...)`.
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
mod specs;
mod state;
mod tasks;
mod time;
mod tool_call;
pub mod wire;

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
    CompletionSpec, InputRequest, InputSpec, ListKind, ListenEnd, PromptSpec, ResourceSpec,
    ResourceTemplateSpec, TaskSupport,
};
