//! Tools: listing (all pages, bounded), calling, and schema checks.
//!
//! A full listing replaces the session's [`ToolCatalog`]: the tools plus their
//! `inputSchema` / `outputSchema` validators, each compiled at most once per
//! listing (on first use) and never per call. A schema that cannot be compiled (for example
//! one whose `$ref` points elsewhere: nothing is ever fetched) disables the
//! check for that tool instead of blocking it. Without the `validation`
//! feature nothing is compiled and both checks are skipped.

use mcp_types::Request as _;
use mcp_types::requests::{CallTool, ListTools};
use std::sync::Arc;

use mcp_types::{CallToolParams, CallToolResult, PaginatedParams, RequestOutcome, Tool};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::SessionError;
use crate::catalog::ToolCatalog;
use crate::driver::RequestOptions;
use crate::page::Page;
use crate::paginate::Paginator;
use crate::params::Params;
use crate::protocol::RequestTiming;
use crate::session::{Ready, Session};
use crate::validation::failures;

/// The method name, allocated once per process rather than per call.
static TOOLS_CALL: std::sync::LazyLock<Arc<str>> =
    std::sync::LazyLock::new(|| Arc::from(CallTool::METHOD));

/// The settings of one call, from the host (or the hub, which takes the same
/// type) down to the request on the wire.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Where each `notifications/progress` of this call goes, decoded (set
    /// with [`CallOptions::progress`] or [`CallOptions::on_progress`]); the
    /// deadline is reset by each (up to the hard maximum).
    pub(crate) progress: Option<ProgressSink>,
    /// Overrides the session's request timeout for this call.
    pub timeout: Option<std::time::Duration>,
    /// Refuses a result longer than this many bytes on the wire
    /// ([`crate::SessionError::ResultTooLarge`]), measured on the frame before
    /// anything is decoded. The hub sets it from a server's
    /// `max_content_bytes`.
    pub max_result_bytes: Option<usize>,
}

/// Where a call's progress goes.
#[derive(Clone)]
pub(crate) enum ProgressSink {
    Channel(mpsc::Sender<mcp_types::ProgressParams>),
    Callback(Arc<dyn Fn(mcp_types::ProgressParams) + Send + Sync>),
}

impl ProgressSink {
    /// Hands one update on; a full channel loses it (progress is advisory).
    pub(crate) fn deliver(&self, params: mcp_types::ProgressParams) {
        match self {
            ProgressSink::Channel(tx) => {
                let _ = tx.try_send(params);
            }
            ProgressSink::Callback(f) => f(params),
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProgressSink::Channel(_) => "Channel",
            ProgressSink::Callback(_) => "Callback",
        })
    }
}

impl CallOptions {
    /// The defaults: the session's deadline, no progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// A deadline of this call's own instead of the session's.
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// A limit on the result's length on the wire.
    pub fn max_result_bytes(mut self, limit: usize) -> Self {
        self.max_result_bytes = Some(limit);
        self
    }

    /// The wire-level options of one request of this call.
    pub(crate) fn request(&self, timing: RequestTiming) -> RequestOptions {
        RequestOptions {
            timing,
            progress: self.progress.clone(),
            max_result_bytes: self.max_result_bytes,
            ..RequestOptions::default()
        }
    }

    /// Sends this call's progress notifications, decoded, to a channel. A
    /// slow receiver loses updates, never the result.
    pub fn progress(mut self, sink: mpsc::Sender<mcp_types::ProgressParams>) -> Self {
        self.progress = Some(ProgressSink::Channel(sink));
        self
    }

    /// Calls `f` with each of this call's progress notifications, decoded,
    /// as they arrive: `CallOptions::new().on_progress(|p| println!("{}",
    /// p.progress))`. It runs on the connection's task, so it must be quick
    /// (print, store, send); anything slow belongs on a channel
    /// ([`CallOptions::progress`]).
    pub fn on_progress(
        mut self,
        f: impl Fn(mcp_types::ProgressParams) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(ProgressSink::Callback(Arc::new(f)));
        self
    }

    /// Whether this call asks for progress.
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }
}

impl Session<Ready> {
    /// One page of `tools/list`.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<Page<Tool>, SessionError> {
        let params = PaginatedParams::with_cursor(cursor.map(str::to_owned));
        Ok(self.request::<ListTools>(&params).await?.into())
    }

    /// Every tool, following `nextCursor` up to the page bound and refusing a
    /// repeated cursor. Replaces the session's tool catalogue (and its
    /// compiled validators).
    pub async fn list_tools(&self) -> Result<Arc<ToolCatalog>, SessionError> {
        let config = &self.link.config;
        let mut pager = Paginator::new(ListTools::METHOD, config.max_pages, config.max_tools);
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_tools_page(cursor.as_deref()).await?;
            pager.add_items(page.items.len())?;
            if tools.is_empty() {
                // The usual single page: keep its vector instead of copying.
                tools = page.items;
            } else {
                tools.extend(page.items);
            }
            match pager.next(page.next_cursor)? {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let http_headers = self.is_modern() && !self.link.connector.is_stdio();
        let catalog = Arc::new(ToolCatalog::build(tools, http_headers));
        if let Ok(mut slot) = self.state.catalog.lock() {
            *slot = Some(Arc::clone(&catalog));
        }
        Ok(catalog)
    }

    /// The catalogue of the last full listing, if any.
    pub fn tool_catalog(&self) -> Option<Arc<ToolCatalog>> {
        self.state.catalog.lock().ok().and_then(|g| g.clone())
    }

    /// Calls a tool with arguments from anything that serialises to a JSON
    /// object: a `json!({…})` value, a `Map`, a struct of your own (`()` or
    /// `null` for none; anything else is
    /// [`SessionError::ArgumentsNotAnObject`]). `isError: true` results are
    /// data, not errors.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, SessionError> {
        self.call_tool_with(name, arguments, &CallOptions::default())
            .await
    }

    /// Calls a tool with progress and a timeout of its own.
    ///
    /// Before sending: arguments over the argument bound are refused, and
    /// (when the tool was listed and checks are on) arguments are checked
    /// against its `inputSchema`. After: `structuredContent` is checked
    /// against the `outputSchema` unless the result is an error. Both schema
    /// checks need the crate's `validation` feature (on by default); without
    /// it they are skipped (see [`SessionConfig::validate_arguments`]).
    ///
    /// [`SessionConfig::validate_arguments`]: crate::SessionConfig::validate_arguments
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: &CallOptions,
    ) -> Result<CallToolResult, SessionError> {
        let arguments = tool_arguments(name, arguments)?;
        self.call_tool_object(name, arguments, options).await
    }

    /// [`Session::call_tool_with`] for arguments that are a JSON object
    /// already (the hub's, say): they are used as they are, not converted
    /// (copied) again.
    pub async fn call_tool_object(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<CallToolResult, SessionError> {
        let config = &self.link.config;
        // The listing the tool is in, with its place there: looked up once
        // for every check.
        let mut listed = self
            .tool_catalog()
            .and_then(|c| c.position(name).map(|at| (c, at)));
        let arguments = Value::Object(arguments);
        if config.validate_arguments
            && let Some(input) = listed
                .as_ref()
                .and_then(|(c, at)| c.input_validator_at(*at))
        {
            let failures = failures(input, &arguments);
            if !failures.is_empty() {
                return Err(SessionError::InvalidArguments {
                    tool: name.to_owned(),
                    failures,
                });
            }
        }
        // Built as an object above; the match only takes it apart again.
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let params = CallToolParams::new(name, Some(arguments));
        let timing = self.call_timing(options);
        let outcome = if !self.is_modern() {
            // Legacy era: no input rounds exist, so the params are serialised
            // once, straight from the struct.
            let raw = self.send_legacy_call(&params, options, timing).await?;
            // Legacy era without a `task` member in the request: the result
            // can only be the tool's own; decode it in one pass.
            RequestOutcome::Complete(raw.decode_json::<CallToolResult>().map_err(|source| {
                SessionError::BadResult {
                    method: CallTool::METHOD.to_owned(),
                    source,
                }
            })?)
        } else {
            let Params::Object(body) = Params::encode(&params, true)? else {
                return Err(SessionError::Params(serde::ser::Error::custom(
                    "tools/call params must be an object",
                )));
            };
            check_size(json_len(&body), config.max_argument_bytes)?;
            let mut retried = false;
            loop {
                let mut headers = self.modern_headers(CallTool::METHOD, name);
                if let Some((c, at)) = &listed {
                    // Read in place: the arguments may be megabytes.
                    let arguments = body.get("arguments").unwrap_or(&Value::Null);
                    headers.extend(c.param_header_values(*at, arguments));
                }
                // Boxed: the 2026 path's state would otherwise be carried
                // by every legacy call's future too.
                let outcome = Box::pin(self.call_outcome::<CallToolResult>(
                    CallTool::METHOD,
                    &body,
                    RequestOptions {
                        headers,
                        ..options.request(timing)
                    },
                ))
                .await;
                match outcome {
                    // The server says our `Mcp-Param-*` headers do not match
                    // the tool's schema: it may have changed. List the tools
                    // again and retry once (the spec's advice).
                    Err(e)
                        if is_header_mismatch(&e)
                            && !retried
                            && !self.link.connector.is_stdio() =>
                    {
                        retried = true;
                        let fresh = Box::pin(self.list_tools()).await?;
                        listed = fresh.position(name).map(|at| (fresh, at));
                    }
                    other => break other?,
                }
            }
        };
        let result = match outcome {
            RequestOutcome::Complete(result) => result,
            RequestOutcome::Task(task) => {
                return Err(SessionError::UnexpectedTask {
                    method: CallTool::METHOD.to_owned(),
                    task: Box::new(task),
                });
            }
            // Only the 2026 path can see input_required, and it answers it.
            _ => {
                return Err(SessionError::Unsupported {
                    method: CallTool::METHOD.to_owned(),
                    feature: "input_required results outside the 2026-07-28 era",
                });
            }
        };
        if config.validate_structured_content
            && result.is_error != Some(true)
            && let Some(output) = listed
                .as_ref()
                .and_then(|(c, at)| c.output_validator_at(*at))
        {
            // Read in place: a structured result may be megabytes.
            let structured = result.structured_content.as_ref().unwrap_or(&Value::Null);
            let failures = failures(output, structured);
            if !failures.is_empty() {
                return Err(SessionError::InvalidStructuredContent {
                    tool: name.to_owned(),
                    failures,
                    result: Box::new(result),
                });
            }
        }
        Ok(result)
    }
}

/// Tool arguments as the JSON object they must be.
pub(crate) fn tool_arguments(
    tool: &str,
    arguments: impl Serialize,
) -> Result<Map<String, Value>, SessionError> {
    let value = serde_json::to_value(arguments).map_err(SessionError::Params)?;
    mcp_types::arguments_object(value).map_err(|found| SessionError::ArgumentsNotAnObject {
        tool: tool.to_owned(),
        found,
    })
}

/// `-32020`, as a JSON-RPC answer or in the body of an HTTP 400.
fn is_header_mismatch(e: &SessionError) -> bool {
    e.error_object().map(|e| e.code) == Some(mcp_types::error_codes::HEADER_MISMATCH)
}

impl Session<Ready> {
    /// Sends a legacy-era `tools/call` of `params` exactly once (a tool call
    /// is never replayed, so the encoded params are taken, not cloned),
    /// after checking its size against `max_argument_bytes`; the raw result.
    pub(crate) async fn send_legacy_call(
        &self,
        params: &CallToolParams,
        options: &CallOptions,
        timing: RequestTiming,
    ) -> Result<crate::protocol::RawResult, SessionError> {
        let encoded = Params::encode(params, options.progress.is_some())?;
        check_size(encoded_size(&encoded), self.link.config.max_argument_bytes)?;
        let method = Arc::clone(&TOOLS_CALL);
        let encoded = std::sync::Mutex::new(Some(encoded));
        self.with_expiry(CallTool::METHOD, || async {
            let params = encoded
                .lock()
                .ok()
                .and_then(|mut slot| slot.take())
                .unwrap_or(Params::None);
            self.link
                .shared
                .call(
                    &method,
                    params,
                    None,
                    RequestOptions {
                        protocol_version: self.link.version_header(false),
                        ..options.request(timing)
                    },
                )
                .await
        })
        .await
    }
}

fn check_size(size: usize, limit: usize) -> Result<(), SessionError> {
    if size > limit {
        return Err(SessionError::ArgumentsTooLarge { size, limit });
    }
    Ok(())
}

fn encoded_size(params: &Params<'_>) -> usize {
    match params {
        Params::None => 0,
        Params::Raw(raw) => raw.get().len(),
        Params::Object(map) => json_len(map),
    }
}

/// Serialised length, measured once before anything is queued: counted, not
/// written out (the arguments may be megabytes).
fn json_len(value: &Map<String, Value>) -> usize {
    mcp_types::json_len(value).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counted_length_is_the_length_serde_json_writes() {
        let value = serde_json::json!({
            "text": "é \u{1} \" \\ \n ✓",
            "numbers": [1, -2.5, 1e300, null],
            "nested": {"ok": true, "empty": {}},
            "long": "x".repeat(100_000),
        });
        let map = value.as_object().unwrap();
        assert_eq!(json_len(map), serde_json::to_vec(map).unwrap().len());
        assert_eq!(json_len(&Map::new()), 2);
    }
}
