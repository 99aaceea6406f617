//! Tools: listing (all pages, bounded), calling, and schema checks.
//!
//! A full listing replaces the session's [`ToolCatalog`]: the tools plus their
//! `inputSchema` / `outputSchema` validators, each compiled at most once per
//! listing (on first use) and never per call. A schema that cannot be compiled (for example
//! one whose `$ref` points elsewhere: nothing is ever fetched) disables the
//! check for that tool instead of blocking it.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use mcp_types::text::Untrusted;
use mcp_types::{
    CallToolParams, CallToolResult, ListToolsResult, PaginatedParams, RequestOutcome, Tool,
};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::SessionError;
use crate::driver::CallOptions;
use crate::paginate::Paginator;
use crate::plain_schema::PlainSchema;
use mcp_types::headers::{self as param_headers, ParamHeader};

use crate::params::Params;
use crate::rounds::OutcomeOptions;
use crate::session::{Ready, Session};

/// The tools of one listing, with their validators.
///
/// A validator is compiled on the first call that needs it and kept for the
/// life of the listing: at most once per tool per listing, never per call,
/// and never for tools that are only listed.
#[derive(Debug)]
pub struct ToolCatalog {
    tools: Vec<Tool>,
    /// Positions in `tools`, sorted by name, one per name (the first listed
    /// wins): a lookup by binary search without a second copy of every name.
    index: Vec<u32>,
    /// Validators, compiled on first use (boxed: most tools are never called,
    /// and a hub holds hundreds of catalogues).
    input: Vec<OnceLock<Option<Box<Check>>>>,
    output: Vec<OnceLock<Option<Box<Check>>>>,
    /// 2026 over HTTP: the `x-mcp-header` parameters of each tool (empty
    /// otherwise).
    params: Vec<Vec<ParamHeader>>,
    /// Tools left out of the listing, with why.
    rejected: Vec<(String, String)>,
}

impl ToolCatalog {
    fn build(mut tools: Vec<Tool>, http_headers: bool) -> Self {
        let mut params = Vec::new();
        let mut rejected = Vec::new();
        if http_headers {
            // 2026 over HTTP: a tool whose `x-mcp-header` annotations break the
            // rules is left out of the listing (the spec's MUST), with a
            // warning naming the tool and the reason.
            tools.retain(|tool| {
                let schema = tool.input_schema.to_value().unwrap_or(Value::Null);
                match param_headers::param_headers(&schema) {
                    Ok(headers) => {
                        params.push(headers);
                        true
                    }
                    Err(problems) => {
                        // The location is made of the server's property
                        // names: escaped and bounded here.
                        let why = problems
                            .iter()
                            .map(|p| format!("{p} (at {})", Untrusted::new(p.location())))
                            .collect::<Vec<_>>()
                            .join("; ");
                        tracing::warn!(tool = %Untrusted::new(&tool.name), reason = %why, "tool left out: invalid x-mcp-header");
                        rejected.push((tool.name.clone(), why));
                        false
                    }
                }
            });
        }
        tools.shrink_to_fit();
        // Bounded by `max_tools`, far below u32::MAX.
        let mut index: Vec<u32> = (0..tools.len())
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        // Stable: among equal names the first listed stays first.
        index.sort_by(|&a, &b| tools[a as usize].name.cmp(&tools[b as usize].name));
        index.dedup_by(|b, a| tools[*a as usize].name == tools[*b as usize].name);
        let input = tools.iter().map(|_| OnceLock::new()).collect();
        let output = tools.iter().map(|_| OnceLock::new()).collect();
        Self {
            tools,
            index,
            input,
            output,
            params,
            rejected,
        }
    }

    /// Tools the server listed that were left out, with the reason (2026
    /// over HTTP: invalid `x-mcp-header` annotations). The name is as the
    /// server listed it; the reason is ours, with the schema locations it
    /// quotes escaped.
    pub fn rejected(&self) -> &[(String, String)] {
        &self.rejected
    }

    /// The position of the tool called `name` (the first listed, when a
    /// server lists a name twice).
    fn position(&self, name: &str) -> Option<usize> {
        let found = self
            .index
            .binary_search_by(|&i| self.tools[i as usize].name.as_str().cmp(name))
            .ok()?;
        Some(self.index[found] as usize)
    }

    /// The `Mcp-Param-*` headers for a call of `name` with `arguments`.
    fn param_header_values(&self, name: &str, arguments: &Value) -> Vec<(String, String)> {
        self.position(name)
            .and_then(|i| self.params.get(i))
            .map(|headers| param_headers::param_header_values(headers, arguments))
            .unwrap_or_default()
    }

    /// The tools, in the server's order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.position(name).map(|i| &self.tools[i])
    }

    fn input_validator(&self, name: &str) -> Option<&Check> {
        let i = self.position(name)?;
        self.input[i]
            .get_or_init(|| compile(self.tools[i].input_schema.to_value().ok()))
            .as_deref()
    }

    fn output_validator(&self, name: &str) -> Option<&Check> {
        let i = self.position(name)?;
        self.output[i]
            .get_or_init(|| {
                compile(
                    self.tools[i]
                        .output_schema
                        .as_ref()
                        .and_then(|s| s.to_value().ok()),
                )
            })
            .as_deref()
    }
}

/// A compiled schema: the plain checker when the schema is plain, else the
/// full validator.
#[derive(Debug)]
enum Check {
    Plain(PlainSchema),
    Full(jsonschema::Validator),
}

fn compile(schema: Option<Value>) -> Option<Box<Check>> {
    let schema = schema?;
    if let Some(plain) = PlainSchema::parse(&schema) {
        return Some(Box::new(Check::Plain(plain)));
    }
    match jsonschema::validator_for(&schema) {
        Ok(v) => Some(Box::new(Check::Full(v))),
        Err(e) => {
            // The message can quote the server's schema (a `$ref`, a pattern).
            let error = e.masked().to_string();
            tracing::warn!(error = %Untrusted::new(&error), "tool schema not usable for validation; check skipped");
            None
        }
    }
}

fn failures(check: &Check, instance: &Value) -> Vec<String> {
    let validator = match check {
        Check::Plain(plain) => return plain.failures(instance),
        Check::Full(validator) => validator,
    };
    validator
        .iter_errors(instance)
        .take(20)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("{path}: {}", e.masked())
        })
        .collect()
}

/// The method name, allocated once per process rather than per call.
static TOOLS_CALL: std::sync::LazyLock<Arc<str>> =
    std::sync::LazyLock::new(|| Arc::from("tools/call"));

/// Options of one tool call.
#[derive(Debug, Default)]
pub struct CallToolOptions {
    /// Receives the raw params of each `notifications/progress` for this
    /// call; the deadline is reset by each (up to the hard maximum).
    pub progress: Option<mpsc::Sender<Bytes>>,
    /// Overrides the session's request timeout for this call.
    pub timeout: Option<std::time::Duration>,
}

impl Session<Ready> {
    /// One page of `tools/list`.
    pub async fn list_tools_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListToolsResult, SessionError> {
        let params = PaginatedParams::with_cursor(cursor.map(str::to_owned));
        self.request::<mcp_types::requests::ListTools>(&params)
            .await
    }

    /// Every tool, following `nextCursor` up to the page bound and refusing a
    /// repeated cursor. Replaces the session's tool catalogue (and its
    /// compiled validators).
    pub async fn list_tools(&self) -> Result<Arc<ToolCatalog>, SessionError> {
        let config = &self.link.config;
        let mut pager = Paginator::new("tools/list", config.max_pages, config.max_tools);
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_tools_page(cursor.as_deref()).await?;
            pager.add_items(page.tools.len())?;
            if tools.is_empty() {
                // The usual single page: keep its vector instead of copying.
                tools = page.tools;
            } else {
                tools.extend(page.tools);
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

    /// Calls a tool. `isError: true` results are data, not errors.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, SessionError> {
        self.call_tool_with(name, arguments, CallToolOptions::default())
            .await
    }

    /// Calls a tool with progress and a timeout of its own.
    ///
    /// Before sending: arguments over the argument bound are refused, and
    /// (when the tool was listed and checks are on) arguments are checked
    /// against its `inputSchema`. After: `structuredContent` is checked
    /// against the `outputSchema` unless the result is an error.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: CallToolOptions,
    ) -> Result<CallToolResult, SessionError> {
        let config = &self.link.config;
        let catalog = self.tool_catalog();
        let arguments = Value::Object(arguments);
        if config.validate_arguments
            && let Some(input) = catalog.as_ref().and_then(|c| c.input_validator(name))
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
        let timing = self
            .link
            .timing(options.timeout.unwrap_or(config.request_timeout));
        let outcome = if !self.is_modern() {
            // Legacy era: no input rounds exist, so the params are serialised
            // once, straight from the struct.
            let encoded = Params::encode(&params, options.progress.is_some())?;
            check_size(encoded_size(&encoded), config.max_argument_bytes)?;
            let method = Arc::clone(&TOOLS_CALL);
            let encoded = std::sync::Mutex::new(Some(encoded));
            let raw = self
                .with_expiry("tools/call", || async {
                    // A tool call is attempted at most once (never replayed),
                    // so the encoded params are taken, not cloned.
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
                            CallOptions {
                                timing,
                                progress: options.progress.clone(),
                                protocol_version: self.link.version_header(false),
                                headers: Vec::new(),
                                listen_key: None,
                            },
                        )
                        .await
                })
                .await?;
            // Legacy era without a `task` member in the request: the result
            // can only be the tool's own; decode it in one pass.
            RequestOutcome::Complete(raw.decode_json::<CallToolResult>().map_err(|source| {
                SessionError::BadResult {
                    method: "tools/call".to_owned(),
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
            let mut catalog = catalog.clone();
            loop {
                let mut headers = self.modern_headers("tools/call", name);
                if let Some(c) = &catalog {
                    // Read in place: the arguments may be megabytes.
                    let arguments = body.get("arguments").unwrap_or(&Value::Null);
                    headers.extend(c.param_header_values(name, arguments));
                }
                // Boxed: the 2026 path's state would otherwise be carried
                // by every legacy call's future too.
                let outcome = Box::pin(self.call_outcome::<CallToolResult>(
                    "tools/call",
                    &body,
                    OutcomeOptions {
                        timing,
                        progress: options.progress.clone(),
                        headers,
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
                        catalog = Some(Box::pin(self.list_tools()).await?);
                    }
                    other => break other?,
                }
            }
        };
        let result = match outcome {
            RequestOutcome::Complete(result) => result,
            RequestOutcome::Task(task) => {
                return Err(SessionError::UnexpectedTask {
                    method: "tools/call".to_owned(),
                    task: Box::new(task),
                });
            }
            // Only the 2026 path can see input_required, and it answers it.
            _ => {
                return Err(SessionError::Unsupported {
                    method: "tools/call".to_owned(),
                    feature: "input_required results outside the 2026-07-28 era",
                });
            }
        };
        if config.validate_structured_content
            && result.is_error != Some(true)
            && let Some(output) = catalog.as_ref().and_then(|c| c.output_validator(name))
        {
            let structured = result.structured_content.clone().unwrap_or(Value::Null);
            let failures = failures(output, &structured);
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

/// `-32020`, as a JSON-RPC answer or in the body of an HTTP 400.
fn is_header_mismatch(e: &SessionError) -> bool {
    e.error_object().map(|e| e.code) == Some(mcp_types::error_codes::HEADER_MISMATCH)
}

fn check_size(size: usize, limit: usize) -> Result<(), SessionError> {
    if size > limit {
        return Err(SessionError::ArgumentsTooLarge { size, limit });
    }
    Ok(())
}

fn encoded_size(params: &Params) -> usize {
    match params {
        Params::None => 0,
        Params::Raw(raw) => raw.get().len(),
        Params::Object(map) => json_len(map),
    }
}

/// Serialised length, measured once before anything is queued: counted, not
/// written out (the arguments may be megabytes).
fn json_len(value: &Map<String, Value>) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::JsonSchemaDoc;

    fn tool(name: &str, description: &str) -> Tool {
        let mut tool = Tool::new(
            name,
            JsonSchemaDoc::from_json(r#"{"type":"object","required":["n"]}"#).unwrap(),
        );
        tool.description = Some(description.to_owned());
        tool
    }

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

    #[test]
    fn lookup_by_name_finds_every_tool_and_the_first_of_a_repeated_name() {
        let names = ["zeta", "alpha", "mid", "alpha", "beta", "a", "zz"];
        let tools = names
            .iter()
            .enumerate()
            .map(|(i, n)| tool(n, &format!("#{i}")))
            .collect();
        let catalog = ToolCatalog::build(tools, false);
        assert_eq!(
            catalog.tools().len(),
            names.len(),
            "the listing keeps every tool"
        );
        for (i, name) in names.iter().enumerate() {
            let found = catalog.get(name).expect("listed");
            assert_eq!(found.name, *name);
            if *name != "alpha" {
                assert_eq!(found.description.as_deref(), Some(format!("#{i}").as_str()));
            }
        }
        assert_eq!(
            catalog.get("alpha").unwrap().description.as_deref(),
            Some("#1")
        );
        assert!(catalog.get("alph").is_none());
        assert!(catalog.get("").is_none());
        assert!(catalog.get("zzz").is_none());
        // Validators are reached through the same lookup.
        let validator = catalog.input_validator("mid").expect("compiled");
        assert!(failures(validator, &serde_json::json!({"n": 1})).is_empty());
        assert!(!failures(validator, &serde_json::json!({})).is_empty());
        assert!(catalog.input_validator("nope").is_none());
        assert!(
            catalog
                .param_header_values("mid", &serde_json::json!({}))
                .is_empty()
        );
    }
}
