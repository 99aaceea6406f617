//! The service: documents loaded and fused into one list of tools, and
//! calls made against them.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use mcp_types::text::Untrusted;
use mcp_types::{CallToolResult, JsonObject, JsonSchemaDoc, Meta, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::build::{Operation, build_document};
use crate::call::{self, CallFailure, CallOptions, Failed, Runtime};
use crate::config::{DocumentConfig, Limits, MAX_PREFIX_LEN, OpenApiConfig};
use crate::document::{check_url, read_source};
use crate::error::OpenApiError;
use crate::names::{NameRequest, assign};
use crate::plan::CallPlan;

/// Redirects the service's own client follows, within one origin.
const MAX_REDIRECTS: usize = 5;

/// The `_meta` key on each tool naming its operation:
/// `{"method": "GET", "path": "/pets/{id}", "operationId": "getPet"}`.
pub const OPERATION_META_KEY: &str = "mcp-openapi/operation";

/// OpenAPI operations as tools: what they are ([`tools`](Self::tools)) and
/// calling them ([`call`](Self::call)).
///
/// Loading is the only fallible step; a call always answers with a
/// `CallToolResult`. Share it behind an `Arc`: calls take `&self`.
pub struct OpenApiService {
    tools: Vec<Tool>,
    plans: Vec<CallPlan>,
    /// Each tool's `outputSchema` compiled, at its first successful call
    /// (`None`: no schema, or one the checker cannot use).
    output_checks: Vec<OnceLock<Option<jsonschema::Validator>>>,
    by_name: HashMap<String, usize>,
    runtime: Runtime,
}

impl fmt::Debug for OpenApiService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApiService")
            .field("tools", &self.tools.len())
            .field("limits", &self.runtime.limits)
            .finish_non_exhaustive()
    }
}

impl OpenApiService {
    /// Reads, checks and converts every document of `config` (in order;
    /// the conversion runs on a blocking thread), then names the tools of
    /// all of them together (see the crate docs for the rules).
    ///
    /// A failure in one document fails the load, wrapped in
    /// [`OpenApiError::InDocument`] with the document's label.
    pub async fn load(config: OpenApiConfig) -> Result<Self, OpenApiError> {
        let OpenApiConfig {
            documents,
            limits,
            client,
            user_agent,
            check_schemas,
            environment,
        } = config;
        if documents.is_empty() {
            return Err(OpenApiError::NoDocuments);
        }
        let client = match client {
            Some(client) => client,
            None => own_client(&limits, &user_agent)?,
        };
        let mut loaded: Vec<(String, Operation)> = Vec::new();
        for document in documents {
            let label = document.source.label();
            let prefix = document.prefix.clone().unwrap_or_default();
            let operations = load_document(document, &client, &limits, check_schemas)
                .await
                .map_err(|e| e.in_document(label))?;
            loaded.extend(operations.into_iter().map(|op| (prefix.clone(), op)));
        }
        let requests: Vec<NameRequest<'_>> = loaded
            .iter()
            .map(|(prefix, op)| NameRequest {
                prefix,
                operation_id: op.operation_id.as_deref(),
                method: op.method,
                path: &op.path,
            })
            .collect();
        let names = assign(&requests)?;
        let mut tools = Vec::with_capacity(loaded.len());
        let mut plans = Vec::with_capacity(loaded.len());
        let mut by_name = HashMap::with_capacity(loaded.len());
        for (i, (name, (_, op))) in names.into_iter().zip(loaded).enumerate() {
            let (tool, plan) = tool(name, op)?;
            by_name.insert(tool.name.clone(), i);
            tools.push(tool);
            plans.push(plan);
        }
        Ok(Self {
            output_checks: tools.iter().map(|_| OnceLock::new()).collect(),
            tools,
            plans,
            by_name,
            runtime: Runtime {
                client,
                limits,
                environment,
            },
        })
    }

    /// The tools, in document order (within a document: by path, then
    /// method). Names are unique, at most 64 characters of
    /// `[A-Za-z0-9_-]`.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Calls the tool `name`: one HTTP request. Never panics, never fails:
    /// every problem is a result with `isError: true` (see
    /// [`CallFailure`]). Dropping the future drops the request.
    pub async fn call(&self, name: &str, arguments: JsonObject) -> CallToolResult {
        self.call_with(name, arguments, &CallOptions::default())
            .await
    }

    /// [`call`](Self::call) with a cancellation token and a time-out.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: JsonObject,
        options: &CallOptions,
    ) -> CallToolResult {
        let Some(&i) = self.by_name.get(name) else {
            return Failed::new(
                CallFailure::UnknownTool,
                format!("there is no tool `{}`", Untrusted::new(name)),
            )
            .into_result();
        };
        let result = call::execute(&self.runtime, &self.plans[i], arguments, options).await;
        self.as_documented(i, result)
    }

    /// `result` as it is when it is an error or matches the tool's
    /// `outputSchema`; otherwise a [`CallFailure::UnexpectedAnswer`] that
    /// carries the answer as text. A server must not send structured
    /// content that breaks its own output schema (a client that checks it
    /// would refuse the whole result), and documents are often wrong about
    /// their APIs: a `null` where they say string, an id as text.
    fn as_documented(&self, i: usize, result: CallToolResult) -> CallToolResult {
        if result.is_error == Some(true) {
            return result;
        }
        let Some(schema) = &self.tools[i].output_schema else {
            return result;
        };
        let check = self.output_checks[i].get_or_init(|| {
            let schema = schema.to_value().ok()?;
            jsonschema::draft202012::new(&schema).ok()
        });
        let Some(check) = check else {
            return result;
        };
        let instance = result.structured_content.as_ref().unwrap_or(&Value::Null);
        let failures: Vec<String> = check
            .iter_errors(instance)
            .take(MAX_SHOWN_FAILURES)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                // `masked`: the API's values are the answer's, shown below.
                format!("{path}: {}", e.masked())
            })
            .collect();
        if failures.is_empty() {
            return result;
        }
        let mut failed = Failed::new(
            CallFailure::UnexpectedAnswer,
            format!(
                "{}: the API answered with success, but not as its document says ({}); the answer follows, as text only",
                self.plans[i].label,
                failures.join("; ")
            ),
        )
        .into_result();
        failed.content.extend(result.content);
        failed
    }
}

/// Differences from the output schema named in an
/// [`CallFailure::UnexpectedAnswer`] result.
const MAX_SHOWN_FAILURES: usize = 5;

/// The service's own client: redirects only within the origin asked, at
/// most [`MAX_REDIRECTS`].
fn own_client(limits: &Limits, user_agent: &str) -> Result<reqwest::Client, OpenApiError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    reqwest::Client::builder()
        .user_agent(user_agent)
        .connect_timeout(limits.connect_timeout)
        .redirect(policy)
        .build()
        .map_err(|e| OpenApiError::HttpClient {
            reason: mcp_types::text::Chain(&e.without_url()).to_string(),
        })
}

async fn load_document(
    document: DocumentConfig,
    client: &reqwest::Client,
    limits: &Limits,
    check: bool,
) -> Result<Vec<Operation>, OpenApiError> {
    let base = check_url(&document.base_url, "the base URL", false)?;
    if let Some(prefix) = &document.prefix {
        check_prefix(prefix)?;
    }
    let bytes = read_source(&document.source, client, limits).await?;
    let limits = limits.clone();
    let built = tokio::task::spawn_blocking(move || {
        build_document(&bytes, &document, &base, &limits, check)
    })
    .await;
    match built {
        Ok(result) => result,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

fn check_prefix(prefix: &str) -> Result<(), OpenApiError> {
    let problem = if prefix.len() > MAX_PREFIX_LEN {
        Some("it is longer than 32 characters")
    } else if !prefix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Some("only ASCII letters, digits, `_` and `-` are allowed")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(OpenApiError::InvalidPrefix {
            prefix: prefix.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

fn tool(name: String, op: Operation) -> Result<(Tool, CallPlan), OpenApiError> {
    let schema = |text: &str, which: &str| {
        JsonSchemaDoc::from_json(text).map_err(|_| OpenApiError::InvalidSchema {
            at: format!("{} {which}", op.plan.label),
            problem: "not JSON".to_owned(),
        })
    };
    let mut tool = Tool::new(name, schema(&op.input_schema, "inputSchema")?);
    tool.output_schema = match &op.output_schema {
        Some(text) => Some(schema(text, "outputSchema")?),
        None => None,
    };
    tool.title = op.title;
    tool.description = op.description;
    if matches!(op.method, "get" | "head") {
        tool.annotations = Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
    }
    let mut operation = json!({
        "method": op.method.to_ascii_uppercase(),
        "path": op.path,
    });
    if let Some(id) = op.operation_id {
        operation["operationId"] = Value::String(id);
    }
    let mut meta = JsonObject::new();
    meta.insert(OPERATION_META_KEY.to_owned(), operation);
    tool.meta = Some(Meta(meta));
    Ok((tool, op.plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: T) {}

    /// A host can share the service between tasks and spawn its futures.
    #[allow(dead_code)]
    fn futures_are_send(service: &OpenApiService) {
        send_sync(service);
        send(service.call("x", JsonObject::new()));
        send(OpenApiService::load(OpenApiConfig::new(Vec::new())));
    }

    #[test]
    fn prefixes() {
        assert!(check_prefix("github_").is_ok());
        assert!(check_prefix("").is_ok());
        assert!(check_prefix("a/b").is_err());
        assert!(check_prefix(&"a".repeat(33)).is_err());
    }
}
