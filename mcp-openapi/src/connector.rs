//! The service as an MCP server in this process, behind the transport's
//! [`Connector`] seam: each `connect` opens an in-memory pair and serves the
//! server end with `mcp-server`'s sans-IO server half. Nothing above the
//! seam can tell it from a server over stdio: the hub lists, gates, bounds
//! and audits its tools like any other server's.

use std::sync::Arc;

use mcp_server::{HandlerResult, RequestContext, ServerConfig, ServerHandler, serve};
use mcp_transport::{BoxFuture, Connection, Connector, TransportError, memory_pair};
use mcp_types::{
    CallToolParams, CallToolResult, Cursor, ErrorObject, ListToolsResult, error_codes,
};
use tokio::sync::OnceCell;

use crate::call::{CallFailure, CallOptions};
use crate::config::OpenApiConfig;
use crate::service::OpenApiService;

/// Tools per `tools/list` page.
pub const TOOLS_PAGE_SIZE: usize = 100;

/// OpenAPI documents as an in-process MCP server: hand it to a hub (or a
/// session) like any other [`Connector`].
///
/// The documents are loaded at the first `connect` and kept: a restart
/// reconnects to the same tools. A load failure is
/// [`TransportError::InProcess`] with the [`OpenApiError`](crate::OpenApiError)
/// as its source, and the next `connect` tries again.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_openapi::{DocumentConfig, OpenApiConfig, OpenApiConnector, SpecSource};
///
/// let pets = DocumentConfig::new(SpecSource::File("pets.yaml".into()), "https://pets.example");
/// let connector = Arc::new(OpenApiConnector::new(OpenApiConfig::new(vec![pets])));
/// // mcp_hub::ServerSpec::new("pets", connector) …
/// # let _ = connector;
/// ```
pub struct OpenApiConnector {
    config: OpenApiConfig,
    server: ServerConfig,
    service: OnceCell<Arc<OpenApiService>>,
}

impl OpenApiConnector {
    /// A connector that loads `config` at its first `connect`.
    pub fn new(config: OpenApiConfig) -> Self {
        Self {
            config,
            server: ServerConfig::new("mcp-openapi", env!("CARGO_PKG_VERSION")),
            service: OnceCell::new(),
        }
    }

    /// A connector serving a service already loaded.
    pub fn from_service(service: Arc<OpenApiService>) -> Self {
        let connector = Self::new(OpenApiConfig::new(Vec::new()));
        // A fresh cell cannot be full yet.
        let _ = connector.service.set(service);
        connector
    }

    /// The server's identity, instructions and bounds (default: named
    /// `mcp-openapi`, the server half's default bounds).
    pub fn server_config(mut self, server: ServerConfig) -> Self {
        self.server = server;
        self
    }

    async fn service(&self) -> Result<Arc<OpenApiService>, TransportError> {
        self.service
            .get_or_try_init(|| async {
                OpenApiService::load(self.config.clone())
                    .await
                    .map(Arc::new)
            })
            .await
            .cloned()
            .map_err(|e| TransportError::InProcess {
                server: "openapi".to_owned(),
                source: Box::new(e),
            })
    }
}

impl std::fmt::Debug for OpenApiConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApiConnector")
            .field("documents", &self.config.documents.len())
            .field("loaded", &self.service.initialized())
            .finish_non_exhaustive()
    }
}

impl Connector for OpenApiConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        Box::pin(async move {
            let service = self.service().await?;
            let (connection, end) = memory_pair(self.server.limits.max_frame);
            let handler = Arc::new(Tools { service });
            tokio::spawn(serve(end.input, end.output, handler, self.server.clone()));
            Ok(connection)
        })
    }

    fn is_stdio(&self) -> bool {
        // An in-process pair behaves like a local server over stdio.
        true
    }
}

/// The server half's handler: the service's tools, paged, and its calls.
struct Tools {
    service: Arc<OpenApiService>,
}

impl ServerHandler for Tools {
    fn list_tools(
        &self,
        cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> mcp_server::BoxFuture<'_, HandlerResult<ListToolsResult>> {
        Box::pin(async move {
            let tools = self.service.tools();
            let start = match cursor {
                None => 0,
                Some(cursor) => cursor
                    .parse::<usize>()
                    .ok()
                    .filter(|start| *start > 0 && *start < tools.len())
                    .ok_or_else(|| {
                        ErrorObject::new(error_codes::INVALID_PARAMS, "Invalid cursor")
                    })?,
            };
            let end = (start + TOOLS_PAGE_SIZE).min(tools.len());
            Ok(ListToolsResult {
                tools: tools[start..end].to_vec(),
                next_cursor: (end < tools.len()).then(|| end.to_string()),
                ..ListToolsResult::default()
            })
        })
    }

    fn call_tool(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> mcp_server::BoxFuture<'_, HandlerResult<CallToolResult>> {
        Box::pin(async move {
            if self.service.tool(&params.name).is_none() {
                // The protocol's answer to a tool that does not exist (the
                // name is the client's own words: not echoed).
                return Err(ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    "Unknown tool",
                ));
            }
            let options = CallOptions::new().cancel(ctx.cancellation_token().clone());
            let result = self
                .service
                .call_with(&params.name, params.arguments.unwrap_or_default(), &options)
                .await;
            if CallFailure::of(&result) == Some(CallFailure::Cancelled) {
                // The server half sends nothing for a cancelled request.
                tracing::debug!("an OpenAPI call was cancelled");
            }
            Ok(result)
        })
    }
}
