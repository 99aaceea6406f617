//! A hub's governed view served as one MCP server, in both eras, to any
//! host: desktop chat apps, IDEs, other agents.
//!
//! The host sees one server. Behind it, a [`Hub`](mcp_hub::Hub) holds the
//! configured servers under its authority, and every request the host makes
//! takes the hub's governed path (allow-lists, permissions, approval,
//! content limits, audit): the gateway adds routing, never policy.
//!
//! ```no_run
//! # async fn demo(spec: mcp_hub::ServerSpec) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_gateway::{Gateway, GatewayConfig, HostLink};
//! use mcp_hub::{Hub, HubConfig};
//!
//! let link = HostLink::new(&GatewayConfig::default());
//! let hub = Hub::builder(HubConfig::default())
//!     .server(link.attach(spec)) // sampling, elicitation and roots go to the host
//!     .start()
//!     .await?;
//! Gateway::new(hub, link, GatewayConfig::default())?.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! # What the host is served
//!
//! - **Tools**: the hub's namespace exactly as `mcp tools` shows it (the
//!   collision policy, aliases, ambiguity refusals, the authority), less the
//!   tools of servers that are down, in pages of
//!   [`GatewayConfig::page_size`]. A call goes through
//!   [`Hub::call_with`](mcp_hub::Hub::call_with) as the model's call: its
//!   progress comes back to the host, the host's cancellation cancels it
//!   downstream, and a call whose server dies fails at once and is never
//!   repeated. What the hub refuses is a tool result with `isError` and
//!   `_meta["mcp-gateway/error"]` naming the kind (an unknown or ambiguous
//!   name is `-32602`).
//! - **Resources and templates** of every server under its allow-list, with
//!   URIs made unambiguous ([`resource_uri`]): `mcp-gateway://SERVER/URI`,
//!   the server's own URI kept verbatim after the server's name (also in
//!   the resource links and embedded resources of its tools' results).
//! - **Skills** (the Skills extension, declared when a server offers it):
//!   `skills/list` across the servers, `skills/get`, and
//!   `resources/directory/read` when a server reads directories; a
//!   server's `skill://PATH` is served as `skill://SERVER/PATH` (still a
//!   skill URI ending in its name) everywhere, its files read with
//!   `resources/read` under the allow-lists; entries over the extension's
//!   bounds are refused by name.
//! - **Prompts** of every server, named `SERVER/PROMPT` ([`prompt_name`]),
//!   and **completion** of their arguments and of template variables.
//! - A bare prompt name, or a server's own resource URI, is served too when
//!   exactly one server that is up lists it, or (a URI) one server's
//!   simple template makes it (as a tool's bare name is); when several do
//!   it is refused with `-32602`, naming them.
//! - **Resource subscriptions** (legacy `resources/subscribe`, declared when
//!   a server declares it): a host's URI goes to the server that serves it,
//!   under the same allow-list as a read; one subscription per server URI
//!   whatever the number of hosts, its updates to exactly the hosts
//!   subscribed (by the URI each used), ended by the last one's
//!   unsubscribe or disconnect; at most 64 per host connection, 1024 in
//!   all. A 2026-07-28 host names its URIs in a `subscriptions/listen`
//!   stream's `resourceSubscriptions` instead: each goes the same way (the
//!   acknowledgement names those taken), its updates come on that stream,
//!   and the stream's end lets them go.
//! - **Log messages** of the servers, with `logger` set to `SERVER` or
//!   `SERVER/LOGGER`, at or above the host's `logging/setLevel`.
//! - **Tasks** of the servers, under task ids of the gateway's own
//!   (HMAC-sealed, naming the server and its id; no table): the tasks
//!   extension for a 2026-07-28 host that declares it (`tasks.rs`), and
//!   2025-11-25 tasks for a legacy host (`legacy_tasks.rs`: `tasks`
//!   declared, and a tool's `taskSupport` kept, only where a server takes
//!   task-augmented calls; `tasks/get`, `tasks/result`, `tasks/cancel`;
//!   a server's status notifications to the host that made the task).
//!
//! # Snapshots
//!
//! The host is served the snapshot active when it connected. A changed tool
//! list waits for the operator's review (unless the servers were registered
//! with automatic adoption): [`Gateway::reviews`] ([`Reviews::pending`],
//! [`Reviews::adopt`], [`Reviews::discard`]), or the control socket
//! ([`GatewayConfig::control`], [`control`]). `notifications/tools/list_changed` goes to the host only
//! when the served tools change: after an adoption, and when a server goes
//! down (its tools disappear) or comes back (they return).
//!
//! # Hosts
//!
//! [`Gateway::serve`] / [`Gateway::serve_stdio`] serve one host;
//! [`Gateway::serve_http`] serves any number over Streamable HTTP
//! ([`http`]: legacy sessions and stateless 2026-07-28 requests, each one
//! host connection), all sharing the one hub. `list_changed` and the
//! servers' log messages go to every host connection that can hear them
//! (a legacy session, an open `subscriptions/listen` stream).
//!
//! # Requests from servers
//!
//! A server's `sampling/createMessage` and `elicitation/create` go to a
//! host when that host declared the capability (labelled with the server in
//! `_meta["mcp-gateway/server"]`), and are refused by name when it did not.
//! When the server asked for progress on its request, the host is asked
//! under a token of the gateway's (the server's own is never shown to it),
//! and the host's progress reaches the server under the server's token,
//! every update before the answer (16 waiting at most, then dropped:
//! progress is advisory).
//! A 2026-07-28 host, which cannot be sent requests, gets them as an
//! `input_required` round of the tool call they serve: the call waits
//! parked (at most 64 at once, for the seal's lifetime) until the host's
//! retry brings the answers (see `bridge.rs`); a request the server makes
//! while its call is parked, after the host's request ended, waits for the
//! next round. Which host: the one whose tool calls to that server
//! are in flight, when they all come from one host (over HTTP the request
//! travels on that call's response stream when it is the host's only call
//! there). With tool calls of two or more hosts in flight to the server it
//! cannot be attributed and is refused by name; with none, it goes to the
//! host on stdio (the only host there is) and over HTTP it is refused by
//! name (it relates to no host's call). Only tool calls are counted: a
//! request a server makes while reading a resource or getting a prompt
//! relates to no call. The stdio host's roots go to the stdio servers;
//! an HTTP host's only with [`GatewayConfig::roots_from_http_hosts`] (the
//! last one asked wins); a remote server keeps the roots its own
//! configuration gives it, never a host's.
//!
//! A 2026-07-28 server asks by `input_required` result instead: a legacy
//! host is asked as above while the hub's session follows the rounds; a
//! 2026-07-28 host gets the rounds itself, one at a time, with a
//! `requestState` the gateway seals and checks on the retry, which goes to
//! the same server and tool along the same governed path (see
//! `rounds.rs`). Its per-request `sampling`, `elicitation` and `roots`
//! capabilities reach the server, whose `-32021` reaches the host. A call
//! the operator marked for confirmation ([`HostApproval`]) is put to a
//! 2026-07-28 host the same way, as a round of the gateway's own, asked
//! once per call.
//!
//! # Bounds
//!
//! The server half's bounds hold on the host's side
//! ([`GatewayConfig::limits`]); cursors the host sends back are at most
//! [`MAX_CURSOR_BYTES`]; requests to the host wait at most
//! [`GatewayConfig::host_request_timeout`]; the control socket reads lines
//! of at most 1 KiB from at most 4 connections at once.
#![forbid(unsafe_code)]

mod approval;
mod bridge;
mod config;
pub mod control;
mod error;
mod gateway;
mod handler;
mod host;
mod legacy_tasks;
mod names;
mod pump;
mod rounds;
mod skills;
mod subscribe;
mod surface;
mod tasks;

pub use approval::HostApproval;
pub use config::GatewayConfig;
pub use error::GatewayError;
pub use gateway::{Gateway, Pending, Reviews};
pub use host::HostLink;
/// The Streamable HTTP binding the gateway serves on
/// ([`Gateway::serve_http`]).
pub use mcp_server::http;
pub use names::{
    MAX_CURSOR_BYTES, RESOURCE_SCHEME, prompt_name, resource_uri, split_prompt_name,
    split_resource_uri,
};
