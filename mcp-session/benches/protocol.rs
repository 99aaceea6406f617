//! What one request costs inside the protocol core, to explain the peer
//! benchmark (`/work/shared/bench/peers`): the `echo` workloads (`seq`,
//! `conc`) and the 50-tool `tools/list` workload.
//!
//! Everything goes through the public API: [`ProtocolCore`] fed with frames
//! the way the driver feeds it, [`RawResult`] decoded into the `mcp_types`
//! result types. Starting requests and building the frames a server would
//! send is kept out of the timing of the response benchmarks (see
//! `time_responses`), and completing requests out of the timing of the
//! request benchmark, so each figure is one side of a call.
//!
//! Each benchmark checks its output once before it is timed: a decode that
//! broke would otherwise show up as a fast number.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_session::RawResult;
use mcp_session::protocol::{CoreEvent, CoreLimits, ProtocolCore, RequestTiming};
use mcp_types::{CallToolParams, CallToolResult, ListToolsResult};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// The text the peer benchmark's `echo` calls send and get back.
const ECHO_TEXT: &str = "hello from the MCP peer benchmark";
/// Requests started (or answered) between two reads of the clock; well under
/// the core's default in-flight bound of 1024.
const BATCH: usize = 64;
/// Tools in the peer benchmark server's `tools/list` answer.
const TOOL_COUNT: usize = 50;

/// The waiter is irrelevant here: the driver's oneshot sender is not measured.
type Core = ProtocolCore<()>;

// ---- frames a server sends ----------------------------------------------

/// Builds a `tools/call` answer for a request id.
type EchoFrame = fn(i64) -> Bytes;
/// Builds a `tools/list` answer around a result for a request id.
type ListFrame = fn(i64, &[u8]) -> Bytes;

/// `tools/call` answer in the compact shape the fast path slices.
fn echo_compact(id: i64) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{ECHO_TEXT}"}}]}}}}"#
    ))
}

/// The same answer with `result` first, as the TypeScript SDK's servers
/// write it (`JSON.stringify` of `{result, jsonrpc, id}`): the fast path
/// too (it recognises both orders).
fn echo_result_first(id: i64) -> Bytes {
    Bytes::from(format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{ECHO_TEXT}"}}]}},"jsonrpc":"2.0","id":{id}}}"#
    ))
}

/// The compact member order with spaces, as a pretty-printing server writes
/// it: the careful path too.
fn echo_spaced(id: i64) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc": "2.0", "id": {id}, "result": {{"content": [{{"type": "text", "text": "{ECHO_TEXT}"}}]}}}}"#
    ))
}

/// `tools/list` answer, compact envelope around `result`.
fn list_compact(id: i64, result: &[u8]) -> Bytes {
    let mut frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#).into_bytes();
    frame.extend_from_slice(result);
    frame.push(b'}');
    Bytes::from(frame)
}

/// `tools/list` answer with `result` first (TypeScript SDK servers): the
/// fast path as well.
fn list_result_first(id: i64, result: &[u8]) -> Bytes {
    let mut frame = br#"{"result":"#.to_vec();
    frame.extend_from_slice(result);
    frame.extend_from_slice(format!(r#","jsonrpc":"2.0","id":{id}}}"#).as_bytes());
    Bytes::from(frame)
}

// ---- a tools/list result like the peer benchmark server's ---------------

fn text(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn bounded_text(description: &str, min: u64, max: u64) -> Value {
    json!({"type": "string", "description": description, "minLength": min, "maxLength": max})
}

fn count(description: &str, min: u64, max: u64, default: u64) -> Value {
    json!({"type": "integer", "description": description, "minimum": min, "maximum": max, "default": default})
}

fn one_of(description: &str, values: &[&str], default: &str) -> Value {
    json!({"type": "string", "description": description, "enum": values, "default": default})
}

fn timestamp(description: &str) -> Value {
    json!({"type": "string", "format": "date-time", "description": description})
}

fn strings(description: &str, max_items: u64) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "string"}, "maxItems": max_items})
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn item_id(noun: &str) -> Value {
    json!({
        "type": "string",
        "description": format!("Identifier of the {noun}, as the search and list tools return it."),
        "minLength": 1,
        "maxLength": 128,
        "pattern": "^[A-Za-z0-9_.:-]+$",
    })
}

/// One catalogue verb: its input properties, required members, description
/// and whether the tool only reads.
struct Verb {
    properties: Value,
    required: &'static [&'static str],
    description: String,
    read_only: bool,
}

fn verb(verb: &str, noun: &str, what: &str) -> Verb {
    let (properties, required, description, read_only): (
        Value,
        &'static [&'static str],
        String,
        bool,
    ) = match verb {
        "search" => (
            json!({
                "query": bounded_text("Search terms; quote phrases, prefix '-' to exclude a term.", 1, 1024),
                "limit": count("How many results at most.", 1, 100, 20),
                "cursor": text("Cursor from a previous page of results."),
                "sort": one_of("Order of the results.", &["relevance", "created", "updated", "comments"], "relevance"),
                "direction": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
                "filters": {
                    "type": "object",
                    "description": "Structured filters, all of which must match.",
                    "properties": {
                        "labels": strings("Results must carry every one of these labels.", 20),
                        "state": one_of("Lifecycle state.", &["open", "closed", "all"], "open"),
                        "owner": text("Login or e-mail address of the owner or assignee."),
                        "created_after": {"type": "string", "format": "date-time"},
                        "created_before": {"type": "string", "format": "date-time"},
                    },
                    "additionalProperties": false,
                },
            }),
            &["query"],
            format!(
                "Full-text search over {what}. Filters by label, state and owner and pages with a cursor; at most `limit` hits, in `sort` order."
            ),
            true,
        ),
        "get" => (
            json!({
                "id": item_id(noun),
                "expand": {"type": "array", "description": "Related records to inline in the answer.", "items": {"type": "string", "enum": ["comments", "attachments", "history", "watchers", "links"]}, "uniqueItems": true},
                "version": {"type": "integer", "minimum": 1, "description": "A past version to fetch instead of the current one."},
            }),
            &["id"],
            format!(
                "Fetches one {noun} by its identifier: {what}. Related records can be expanded inline."
            ),
            true,
        ),
        "list" => (
            json!({
                "page": count("Page number, starting at 1.", 1, 10_000, 1),
                "per_page": count("Items per page.", 1, 100, 30),
                "updated_since": timestamp("Only items changed since then."),
                "container": text("The repository, project, channel, folder or calendar to list."),
                "direction": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
            }),
            &["container"],
            format!("Lists {what}, newest first, one page at a time."),
            true,
        ),
        "create" => (
            json!({
                "container": text("Where the new item goes (repository, project, channel, folder or calendar)."),
                "title": bounded_text("One-line summary shown in lists.", 1, 256),
                "body": bounded_text("Full content, in Markdown.", 0, 65_536),
                "labels": strings("Labels to attach; unknown labels are rejected.", 20),
                "assignees": strings("Logins or e-mail addresses to assign.", 10),
                "priority": one_of("How urgent it is.", &["low", "medium", "high", "urgent"], "medium"),
                "due": {"type": "string", "format": "date", "description": "Due date, YYYY-MM-DD."},
                "metadata": {"type": "object", "description": "String pairs kept with the item.", "additionalProperties": {"type": "string"}},
            }),
            &["container", "title"],
            format!(
                "Creates {what}. The body is Markdown; unknown labels or assignees fail the call."
            ),
            false,
        ),
        "update" => (
            json!({
                "id": item_id(noun),
                "changes": {
                    "type": "object",
                    "minProperties": 1,
                    "properties": {
                        "title": {"type": "string", "minLength": 1, "maxLength": 256},
                        "body": {"type": "string", "maxLength": 65_536},
                        "state": {"type": "string", "enum": ["open", "in_progress", "blocked", "closed"]},
                        "labels": {"type": "array", "items": {"type": "string"}},
                        "priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"]},
                    },
                    "additionalProperties": false,
                },
                "if_match": text("Version tag for optimistic locking; the update fails when it is stale."),
                "notify": {"type": "boolean", "default": true, "description": "Tell watchers about the change."},
            }),
            &["id", "changes"],
            format!("Changes fields of {what}; only the fields in `changes` are touched."),
            false,
        ),
        "delete" => (
            json!({
                "id": item_id(noun),
                "reason": bounded_text("Why, for the audit log.", 0, 512),
                "force": {"type": "boolean", "default": false, "description": "Delete even when other items still refer to it."},
            }),
            &["id"],
            format!("Deletes {what} for good; there is no undo."),
            false,
        ),
        "comment" => (
            json!({
                "id": item_id(noun),
                "body": bounded_text("The comment, in Markdown.", 1, 65_536),
                "in_reply_to": text("Comment being answered."),
                "mentions": strings("People to notify explicitly.", 50),
                "visibility": one_of("Who can read the comment.", &["public", "internal"], "public"),
            }),
            &["id", "body"],
            format!(
                "Adds a comment to {what}, or a reply to one of its comments; @-mentions notify people."
            ),
            false,
        ),
        _ => (
            json!({
                "container": text("What to export from."),
                "format": {"type": "string", "enum": ["json", "csv", "markdown", "html"], "default": "json"},
                "columns": strings("Fields to include; every field when absent.", 64),
                "window": {
                    "type": "object",
                    "properties": {"from": {"type": "string", "format": "date-time"}, "to": {"type": "string", "format": "date-time"}},
                    "required": ["from"],
                    "additionalProperties": false,
                },
                "max_rows": count("Row limit.", 1, 100_000, 10_000),
            }),
            &["container"],
            format!(
                "Exports {what} matching the filters in the chosen format, for analysis elsewhere."
            ),
            true,
        ),
    };
    Verb {
        properties,
        required,
        description,
        read_only,
    }
}

/// A tool object of the listing; `get_*` tools also carry an output schema.
fn catalogue_tool(service: &str, noun: &str, what: &str, verb_name: &str) -> Value {
    let verb = verb(verb_name, noun, what);
    let title = format!("{service} {verb_name} {noun}");
    let mut tool = json!({
        "name": format!("{service}_{verb_name}_{noun}"),
        "title": title,
        "description": verb.description,
        "inputSchema": object_schema(verb.properties, verb.required),
        "annotations": {
            "title": title,
            "readOnlyHint": verb.read_only,
            "destructiveHint": verb_name == "delete",
            "idempotentHint": verb.read_only,
            "openWorldHint": true,
        },
    });
    if verb_name == "get" {
        let properties = json!({
            "id": {"type": "string"},
            "title": {"type": "string"},
            "state": {"type": "string"},
            "url": {"type": "string", "format": "uri"},
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"type": "string", "format": "date-time"},
            "author": {"type": "object", "properties": {"login": {"type": "string"}, "name": {"type": "string"}}, "required": ["login"]},
            "labels": {"type": "array", "items": {"type": "string"}},
        });
        tool["outputSchema"] = object_schema(properties, &["id", "title", "state", "url"]);
    }
    tool
}

/// The `result` of `tools/list`: `echo`, `blob` and 48 catalogue tools
/// (6 services x 8 verbs), about 55 KB of compact JSON like the peer server's.
fn list_result() -> Vec<u8> {
    const SERVICES: [(&str, &str, &str); 6] = [
        (
            "github",
            "issue",
            "issues in GitHub repositories the user can reach",
        ),
        (
            "jira",
            "ticket",
            "tickets of the configured Jira Cloud site",
        ),
        (
            "slack",
            "message",
            "messages in Slack channels the bot is a member of",
        ),
        ("notion", "page", "pages of the connected Notion workspace"),
        (
            "drive",
            "file",
            "Google Drive files the user owns or can see",
        ),
        ("calendar", "event", "events on the user's Google calendars"),
    ];
    const VERBS: [&str; 8] = [
        "search", "get", "list", "create", "update", "delete", "comment", "export",
    ];
    let mut tools = vec![
        json!({
            "name": "echo",
            "title": "Echo",
            "description": "Answers with its `text` argument, unchanged, as one text content block.",
            "inputSchema": object_schema(json!({"text": text("The text to send back.")}), &["text"]),
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
        }),
        json!({
            "name": "blob",
            "title": "Blob",
            "description": "Answers with `kb` KiB of ASCII text in 80-character lines, as one text content block.",
            "inputSchema": object_schema(json!({"kb": count("Size of the text in KiB.", 0, 65_536, 1)}), &["kb"]),
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
        }),
    ];
    for (service, noun, what) in SERVICES {
        for verb in VERBS {
            tools.push(catalogue_tool(service, noun, what, verb));
        }
    }
    // Invariant: a tree of `Value`s always serialises.
    serde_json::to_vec(&json!({ "tools": tools })).expect("serialising the listing")
}

// ---- driving the core ---------------------------------------------------

fn tools_call() -> Arc<str> {
    Arc::from("tools/call")
}

/// Params of the `echo` call, built as the session builds them on the
/// 2025-11-25 path the peer benchmark negotiates: the caller's argument map
/// into `CallToolParams`, serialised once straight to raw JSON.
fn echo_params() -> Option<Box<RawValue>> {
    let mut arguments = Map::new();
    arguments.insert("text".to_owned(), Value::from(ECHO_TEXT));
    let params = CallToolParams::new("echo", Some(arguments));
    Some(serde_json::value::to_raw_value(&params).expect("serialising CallToolParams"))
}

/// Starts a request whose answer is then built with `frame` from its id.
fn start(core: &mut Core, method: &Arc<str>, now: Instant) -> i64 {
    core.start_request(now, method, RequestTiming::default(), (), |_| None)
        .expect("in flight stays under the bound")
        .0
}

/// The result of the next event, which must be a successful completion.
fn completed(core: &mut Core) -> RawResult {
    match core.poll_event() {
        Some(CoreEvent::Completed {
            outcome: Ok(raw), ..
        }) => raw,
        other => panic!("expected a completed request, got {other:?}"),
    }
}

/// Total time of `op` over `iters` answers, `batch` at a time: starting the
/// requests and building their frames (`frame` from the id) is not timed.
///
/// A batch of small frames keeps the clock reads out of the figure; big
/// frames go one at a time, so that each is still in the cache as a frame
/// just read from the pipe would be.
fn time_responses(
    core: &mut Core,
    iters: u64,
    batch: u64,
    frame: impl Fn(i64) -> Bytes,
    mut op: impl FnMut(&mut Core, Instant, Bytes),
) -> Duration {
    let method = tools_call();
    let now = Instant::now();
    let mut frames = Vec::new();
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(batch);
        for _ in 0..n {
            let id = start(core, &method, now);
            frames.push(frame(id));
        }
        let started = Instant::now();
        for f in frames.drain(..) {
            op(core, now, f);
        }
        total += started.elapsed();
        left -= n;
        // Drops the deadline entries of the answered requests, as the driver does.
        let _ = core.poll_timeout();
    }
    total
}

/// The frame in, its completion out (the driver reads the clock per frame;
/// a fixed `now` keeps the clock out of the figures).
fn handle_and_take(core: &mut Core, now: Instant, frame: Bytes) -> RawResult {
    core.handle_frame(now, frame);
    completed(core)
}

/// Total time of `iters` `tools/call` requests started with `params`,
/// `BATCH` at a time; answering them is not timed.
fn time_starts(
    core: &mut Core,
    iters: u64,
    params: impl Fn() -> Option<Box<RawValue>>,
) -> Duration {
    let method = tools_call();
    let now = Instant::now();
    let mut ids = Vec::with_capacity(BATCH);
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(BATCH as u64);
        let started = Instant::now();
        for _ in 0..n {
            let (id, frame) = core
                .start_request(now, &method, RequestTiming::default(), (), |_| params())
                .expect("in flight stays under the bound");
            black_box(frame);
            ids.push(id);
        }
        total += started.elapsed();
        left -= n;
        answer_all(core, &mut ids, now);
    }
    assert_eq!(core.in_flight(), 0);
    total
}

/// Answers the requests `ids` (not timed) so the in-flight bound is never
/// hit, and drops their deadline entries.
fn answer_all(core: &mut Core, ids: &mut Vec<i64>, now: Instant) {
    for id in ids.drain(..) {
        core.handle_frame(now, echo_compact(id));
        black_box(completed(core));
    }
    let _ = core.poll_timeout();
}

fn decode_call(raw: &RawResult) -> CallToolResult {
    raw.decode_json::<CallToolResult>()
        .expect("a CallToolResult")
}

fn echo_text(result: &CallToolResult) -> Option<&str> {
    result.content.first().and_then(|block| block.as_text())
}

// ---- what a client that borrows everything decodes ----------------------

/// A `tools/call` result read the way the peer benchmark's raw client reads
/// it: borrowed from the frame, unknown members skipped.
#[derive(serde::Deserialize)]
struct BorrowedCallResult<'a> {
    #[serde(borrow)]
    content: Vec<BorrowedBlock<'a>>,
}

#[derive(serde::Deserialize)]
struct BorrowedBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    text: Option<std::borrow::Cow<'a, str>>,
}

/// A `tools/list` result the same way: schemas as raw slices of the frame.
#[derive(serde::Deserialize)]
struct BorrowedListResult<'a> {
    #[serde(borrow)]
    tools: Vec<BorrowedTool<'a>>,
}

#[derive(serde::Deserialize)]
struct BorrowedTool<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    title: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    description: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "inputSchema", borrow)]
    input_schema: &'a RawValue,
    #[serde(rename = "outputSchema", borrow)]
    output_schema: Option<&'a RawValue>,
    #[serde(borrow)]
    annotations: Option<&'a RawValue>,
}

// ---- benchmarks ---------------------------------------------------------

/// Request side of one `echo` call: params, id, envelope, frame bytes,
/// request table and deadline.
fn request_encode(c: &mut Criterion) {
    let method = tools_call();
    let now = Instant::now();
    let mut core = Core::new(CoreLimits::default());
    let (id, frame) = core
        .start_request(now, &method, RequestTiming::default(), (), |_| {
            echo_params()
        })
        .expect("the first request is accepted");
    let expected = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{ECHO_TEXT}"}}}}}}"#
    );
    assert_eq!(std::str::from_utf8(&frame).ok(), Some(expected.as_str()));
    core.handle_frame(now, echo_compact(id));
    assert_eq!(
        echo_text(&decode_call(&completed(&mut core))),
        Some(ECHO_TEXT)
    );

    let mut group = c.benchmark_group("request");
    group.bench_function("echo_params", |b| b.iter(|| black_box(echo_params())));
    group.bench_function("start_request_no_params", |b| {
        b.iter_custom(|iters| time_starts(&mut core, iters, || None));
    });
    group.bench_function("start_request_echo", |b| {
        b.iter_custom(|iters| time_starts(&mut core, iters, echo_params));
    });
    group.finish();
}

/// Response side of one `echo` call: classify, complete, decode.
fn call_response(c: &mut Criterion) {
    let mut core = Core::new(CoreLimits::default());
    let method = tools_call();
    let now = Instant::now();
    // The compact frames (either member order) take the fast path (the
    // frame is kept for a fallback), the spaced one the careful path (a
    // verified slice).
    let variants: [(&str, EchoFrame, bool); 3] = [
        ("compact", echo_compact, true),
        ("result_first", echo_result_first, true),
        ("spaced", echo_spaced, false),
    ];
    for (name, frame, fast) in variants {
        let id = start(&mut core, &method, now);
        let raw = handle_and_take(&mut core, now, frame(id));
        assert_eq!(
            raw.frame.is_some(),
            fast,
            "{name}: not on the expected path"
        );
        assert_eq!(echo_text(&decode_call(&raw)), Some(ECHO_TEXT), "{name}");
    }
    let result_only = echo_compact(0).slice(r#"{"jsonrpc":"2.0","id":0,"result":"#.len()..);
    let result_only = result_only.slice(..result_only.len() - 1);
    let decoded: CallToolResult = serde_json::from_slice(&result_only).expect("a CallToolResult");
    assert_eq!(echo_text(&decoded), Some(ECHO_TEXT));
    let type_last = format!(r#"{{"content":[{{"text":"{ECHO_TEXT}","type":"text"}}]}}"#);
    let decoded: CallToolResult = serde_json::from_str(&type_last).expect("a CallToolResult");
    assert_eq!(echo_text(&decoded), Some(ECHO_TEXT));
    let borrowed: BorrowedCallResult<'_> =
        serde_json::from_slice(&result_only).expect("a tools/call result");
    assert_eq!(borrowed.content[0].kind, "text");
    assert_eq!(borrowed.content[0].text.as_deref(), Some(ECHO_TEXT));

    let mut group = c.benchmark_group("tools_call_response");
    group.bench_function("compact/handle_frame+poll_event", |b| {
        b.iter_custom(|iters| {
            time_responses(
                &mut core,
                iters,
                BATCH as u64,
                echo_compact,
                |core, now, frame| {
                    black_box(handle_and_take(core, now, frame));
                },
            )
        });
    });
    for (name, frame, _) in variants {
        group.bench_function(format!("{name}/handle_frame+decode"), |b| {
            b.iter_custom(|iters| {
                time_responses(&mut core, iters, BATCH as u64, frame, |core, now, frame| {
                    black_box(decode_call(&handle_and_take(core, now, frame)));
                })
            });
        });
    }
    group.bench_function("decode_only", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<CallToolResult>(black_box(&result_only))
                    .expect("a CallToolResult"),
            )
        });
    });
    group.bench_function("decode_only/type_member_last", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<CallToolResult>(black_box(type_last.as_bytes()))
                    .expect("a CallToolResult"),
            )
        });
    });
    group.bench_function("baseline/borrowed_struct", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<BorrowedCallResult<'_>>(black_box(&result_only))
                    .expect("a tools/call result"),
            )
        });
    });
    group.finish();
}

/// One 50-tool `tools/list` answer (~55 KB).
fn list_response(c: &mut Criterion) {
    let result = list_result();
    let mut core = Core::new(CoreLimits::default());
    let method = tools_call();
    let now = Instant::now();
    let frame_len = list_compact(1, &result).len() as u64;
    assert!(
        (45_000..65_000).contains(&frame_len),
        "listing of {frame_len} bytes, not ~55 KB"
    );
    let check = |listing: &ListToolsResult| {
        assert_eq!(listing.tools.len(), TOOL_COUNT);
        assert_eq!(listing.tools[0].name, "echo");
        assert_eq!(listing.tools[TOOL_COUNT - 1].name, "calendar_export_event");
        assert!(listing.tools[3].output_schema.is_some());
    };
    let id = start(&mut core, &method, now);
    let raw = handle_and_take(&mut core, now, list_compact(id, &result));
    assert!(raw.frame.is_some(), "compact frame not on the fast path");
    check(&raw.decode_json().expect("a ListToolsResult"));
    let id = start(&mut core, &method, now);
    let raw = handle_and_take(&mut core, now, list_result_first(id, &result));
    assert!(
        raw.frame.is_some(),
        "result-first frame not on the fast path"
    );
    check(&raw.decode_json().expect("a ListToolsResult"));
    check(&serde_json::from_slice(&result).expect("a ListToolsResult"));
    let value_frame = list_compact(1, &result);
    let value: Value = serde_json::from_slice(&value_frame).expect("JSON");
    assert_eq!(
        value["result"]["tools"].as_array().map(Vec::len),
        Some(TOOL_COUNT)
    );
    let borrowed: BorrowedListResult<'_> = serde_json::from_slice(&result).expect("a listing");
    assert_eq!(borrowed.tools.len(), TOOL_COUNT);
    assert_eq!(borrowed.tools[3].name, "github_get_issue");
    assert!(borrowed.tools[3].description.is_some());
    assert!(borrowed.tools[3].input_schema.get().starts_with('{'));
    assert!(borrowed.tools[3].output_schema.is_some());
    assert!(borrowed.tools[3].title.is_some() && borrowed.tools[3].annotations.is_some());
    let listing: ListToolsResult = serde_json::from_slice(&result).expect("a ListToolsResult");
    let schemas_as_values = |listing: &ListToolsResult| {
        listing
            .tools
            .iter()
            .map(|tool| tool.input_schema.to_value().expect("a schema"))
            .collect::<Vec<Value>>()
    };
    assert_eq!(schemas_as_values(&listing).len(), TOOL_COUNT);

    let mut group = c.benchmark_group("tools_list_response");
    group.throughput(Throughput::Bytes(frame_len));
    let variants: [(&str, ListFrame); 2] = [
        ("compact", list_compact),
        ("result_first", list_result_first),
    ];
    for (name, frame) in variants {
        group.bench_function(format!("{name}/handle_frame+decode"), |b| {
            b.iter_custom(|iters| {
                time_responses(
                    &mut core,
                    iters,
                    1,
                    |id| frame(id, &result),
                    |core, now, frame| {
                        let raw = handle_and_take(core, now, frame);
                        black_box(
                            raw.decode_json::<ListToolsResult>()
                                .expect("a ListToolsResult"),
                        );
                    },
                )
            });
        });
    }
    group.bench_function("from_slice_ListToolsResult", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<ListToolsResult>(black_box(&result))
                    .expect("a ListToolsResult"),
            )
        });
    });
    group.bench_function("baseline/from_slice_Value", |b| {
        b.iter(|| {
            black_box(serde_json::from_slice::<Value>(black_box(&value_frame)).expect("JSON"))
        });
    });
    group.bench_function("baseline/from_slice_IgnoredAny", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<serde::de::IgnoredAny>(black_box(&value_frame))
                    .expect("JSON"),
            )
        });
    });
    group.bench_function("baseline/borrowed_struct", |b| {
        b.iter(|| {
            black_box(
                serde_json::from_slice::<BorrowedListResult<'_>>(black_box(&result))
                    .expect("a listing"),
            )
        });
    });
    // Not part of the peer benchmark's path: what parsing every input schema
    // into a `Value` costs (the session does it for each tool of a listing
    // on 2026-07-28 over HTTP, to read the `x-mcp-header` annotations).
    let schema_bytes: usize = listing
        .tools
        .iter()
        .map(|t| t.input_schema.as_str().len())
        .sum();
    group.throughput(Throughput::Bytes(schema_bytes as u64));
    group.bench_function("input_schemas_to_Value", |b| {
        b.iter(|| black_box(schemas_as_values(black_box(&listing))));
    });
    group.finish();
}

criterion_group!(benches, request_encode, call_response, list_response);
criterion_main!(benches);
