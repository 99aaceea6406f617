//! OpenAPI 3.0 and 3.1 documents as MCP tools: each operation a tool, each
//! call one HTTP request, credentials by reference.
//!
//! [`OpenApiService::load`] reads one or several documents (JSON or YAML;
//! a file, an `https://` URL, or text), converts the selected operations
//! into [`mcp_types::Tool`]s, and [`OpenApiService::call`] turns a tool call
//! into a request to the configured base URL and its response into a
//! [`mcp_types::CallToolResult`]. The MCP server around it (answering
//! `tools/list` and `tools/call` frames) is another crate's: this one knows
//! tools and calls, not the wire.
//!
//! ```no_run
//! use mcp_openapi::{CredentialRef, DocumentConfig, Matcher, OpenApiConfig, OpenApiService,
//!     Selection, SpecSource};
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), mcp_openapi::OpenApiError> {
//! let github = DocumentConfig::new(
//!     SpecSource::File("api.github.com.json".into()),
//!     "https://api.github.com",
//! )
//! .prefix("gh_")
//! .select(Selection::all().include(Matcher::tag("issues")))
//! .credential(CredentialRef::bearer_for_all("GITHUB_TOKEN"));
//! let service = OpenApiService::load(OpenApiConfig::new(vec![github])).await?;
//! for tool in service.tools() {
//!     println!("{}", tool.name);
//! }
//! let args = json!({"owner": "rust-lang", "repo": "rust", "per_page": 5});
//! let result = service
//!     .call("gh_issues_list-for-repo", args.as_object().cloned().unwrap_or_default())
//!     .await;
//! println!("error: {}, {}", result.failed(), result.text());
//! # Ok(())
//! # }
//! ```
//!
//! # 3.0 and 3.1: one reader of our own
//!
//! Documents are read into `serde_json::Value` (YAML through `serde-saphyr`,
//! with budgets) and walked by a small typed subset of the specification:
//! paths, operations, parameters, request bodies, responses, components,
//! security schemes, servers. No crate reads both lines (`openapiv3` reads
//! 3.0, `oas3` 3.1), and both lines need the same work anyway: every schema
//! must become JSON Schema 2020-12 (what MCP tool schemas are), references
//! must be followed under our bounds and refusals, and the rest of a
//! document (examples, links, callbacks, webhooks) is not needed. 3.0
//! schemas are converted (`nullable`, boolean `exclusiveMinimum` /
//! `exclusiveMaximum`, `example`, `$ref` siblings); 3.1 schemas are 2020-12
//! already and pass through (a `nullable` or boolean bound written in one is
//! converted too). Every generated schema is checked against the 2020-12
//! meta-schema with `jsonschema` at load.
//!
//! # References
//!
//! Only local references (`#/components/schemas/Pet`, any JSON pointer,
//! `~0` / `~1` and percent escapes decoded) are followed; a reference to
//! another file or URL is refused by name ([`OpenApiError::RemoteRef`]) and
//! never fetched, as is a plain-name anchor. Parameters, request bodies,
//! responses and path items are resolved in place. Schemas stay references:
//! each tool schema carries the definitions it reaches under `$defs`, so a
//! recursive type (a node whose children are nodes) works, while a cycle
//! that never reaches a value (`A` = `B`, `B` = `A`, or through `allOf`) is
//! refused ([`OpenApiError::RefCycle`]). Keywords that would move the base
//! URI of a bundled schema (`$id`, `$dynamicRef`, `$recursiveRef`) are
//! refused.
//!
//! # Tool names
//!
//! The `operationId`, else `<method> <path>`, with each run of characters
//! outside `[A-Za-z0-9_-]` turned into one `_` (`repos/get` → `repos_get`,
//! `get /users/{id}` → `get_users_id`), after the document's prefix. Over 64
//! characters: the first 55 and `_` + 8 hex digits of a hash of the
//! operation. Names still equal: an operation whose `operationId` needed no
//! change keeps the plain name if it is the only one, the others get the
//! hash suffix, 16 digits if 8 collide; operations that still clash (the
//! same one in two documents without prefixes) fail the load with
//! [`OpenApiError::NameCollision`]. The hash is of the operation (prefix,
//! method, path, `operationId`), so names never depend on order or on the
//! other operations. [`is_valid_tool_name`] checks the result.
//!
//! # Arguments: one object
//!
//! Each parameter is an argument under its own name; the JSON (or
//! form-urlencoded) request body's properties are arguments too when its
//! schema is a plain object (properties, `required`, `additionalProperties`
//! at most a boolean); any other body is the one argument `body` (text:
//! a string; binary: a base64 string). Clash rule: names are claimed in the
//! order path, query, header, cookie parameters, then the body; a name
//! already taken gets `_<where>` appended (`id_header`, `title_body`, and
//! `body_body` for a whole body when a parameter is called `body`), then
//! `_2`, `_3` … if that is taken too. When the body allows other properties,
//! arguments the schema does not list go into the body; otherwise they are
//! refused. Read-only body properties are left out.
//!
//! # Calls
//!
//! Path parameters are percent-encoded (`/` too); query, header and cookie
//! parameters follow `style` / `explode`: path `simple`, `label`, `matrix`;
//! query `form`, `spaceDelimited`, `pipeDelimited`, `deepObject`; header
//! `simple`; cookie `form`. Any other style is refused at load
//! ([`OpenApiError::UnsupportedStyle`]). Bodies: JSON, form-urlencoded,
//! text, binary; `multipart/*` is refused at load
//! ([`OpenApiError::UnsupportedMediaType`]). Requests go to the configured
//! base URL (a `servers` entry is used only for its path, and only when it
//! is on that origin); the service's own client follows redirects only
//! within the origin, so a credential never leaves it. A response becomes:
//! JSON → text plus `structuredContent` (objects), text types → text,
//! images and audio → image / audio content, other binary → an embedded
//! blob resource; an error status → `isError` with the status and an
//! excerpt; all bounded ([`Limits`]), with [`CallFailure`] in `_meta`.
//! `outputSchema` is set when the operation has exactly one success
//! response and its JSON schema is an object; a success answer that does
//! not match it is [`CallFailure::UnexpectedAnswer`], naming where, with
//! the answer as text (never structured content that breaks the schema).
//! `GET` and `HEAD` tools get `readOnlyHint` (a hint, never policy).
//!
//! # Credentials
//!
//! [`CredentialRef`]s name a security scheme and the environment variable
//! its secret is read from at each call: `apiKey` (header, query, cookie),
//! http `bearer` and `basic` (two variables), OAuth 2 and OpenID Connect (a
//! bearer token from the variable). An operation sends the first of its
//! `security` alternatives whose variables are all set; an unset variable
//! is the failure `missing_credential`, naming the variable, never its
//! value. Secrets are never stored, logged, or put in an error or `Debug`.
//!
//! # Supported, refused, ignored
//!
//! Refused at load, by name: Swagger 2.0 and OpenAPI 3.2 documents, remote
//! references, reference cycles, `$id` / `$dynamicRef`, unsupported styles
//! and parameter locations (`querystring`), `multipart` bodies, schemes of
//! kinds that cannot be sent (mutual TLS, http digest) when a credential
//! names them, anything past a bound. Ignored: callbacks, links, webhooks,
//! examples outside schemas, response headers, `servers` on other origins.
#![forbid(unsafe_code)]

mod build;
mod call;
mod config;
mod connector;
mod document;
mod error;
mod names;
mod plan;
mod schema;
mod security;
mod service;
mod style;

pub use call::{CallFailure, CallOptions, FAILURE_META_KEY};
pub use config::{
    CredentialRef, DEFAULT_ERROR_EXCERPT_BYTES, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_OPERATIONS,
    DEFAULT_MAX_REF_DEPTH, DEFAULT_MAX_REFS, DEFAULT_MAX_RESPONSE_BYTES, DocumentConfig,
    Environment, Limits, MAX_PREFIX_LEN, Matcher, OpenApiConfig, PathPattern, SecretRef, Selection,
    SpecSource,
};
pub use connector::{OpenApiConnector, TOOLS_PAGE_SIZE};
pub use error::OpenApiError;
pub use names::{MAX_TOOL_NAME_LEN, is_valid_tool_name};
pub use service::{OPERATION_META_KEY, OpenApiService};
/// The cancellation token [`CallOptions::cancel`] takes.
pub use tokio_util::sync::CancellationToken;
