//! The target server of the HTTP benchmark: the official Rust SDK's
//! (`rmcp`) Streamable HTTP server, served by axum on loopback, on a
//! current-thread runtime (one core for the server, the other for the client
//! under test).
//!
//! Usage: `http-bench-server [--port P] [--response json|sse] [--sessions]`
//! prints `http://127.0.0.1:PORT/mcp` on its first stdout line once it
//! listens (port 0, the default, picks a free one) and serves until killed.
//!
//! * `--response json` (default): rmcp's stateless mode with JSON responses
//!   (`legacy_session_mode: false`, `json_response: true`): every POST is
//!   answered with `application/json`.
//! * `--response sse`: the same stateless mode, every POST answered with a
//!   `text/event-stream` carrying the one response.
//! * `--sessions`: rmcp's default configuration for the legacy era (an
//!   `Mcp-Session-Id` from `initialize` on, SSE responses, priming events).
//!   2026-07-28 requests are always stateless (rmcp follows SEP-2567).
//!
//! Tools: `echo {text}`, `blob {kb}` and 48 catalogue tools (lib.rs).
//! Protocol versions: 2024-11-05 .. 2026-07-28 (rmcp 3.11 serves
//! `server/discover` and the per-request `_meta` of 2026-07-28).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use mcp_http_bench::{blob_text, tool_catalog};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
        Tool,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};

/// The last blob made, kept while the same size is asked for.
type BlobCache = Arc<Mutex<Option<(usize, Arc<str>)>>>;

#[derive(Clone)]
struct Bench {
    tools: Arc<ListToolsResult>,
    blob: BlobCache,
}

impl Bench {
    fn blob(&self, kb: usize) -> Arc<str> {
        let mut cached = self.blob.lock().unwrap();
        match cached.as_ref() {
            Some((size, text)) if *size == kb => text.clone(),
            _ => {
                let text: Arc<str> = blob_text(kb).into();
                *cached = Some((kb, text.clone()));
                text
            }
        }
    }
}

impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("http-bench-server", "0.1.0"))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok((*self.tools).clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => {
                let text = args.get("text").and_then(|v| v.as_str()).unwrap_or("");
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            "blob" => {
                let kb = args
                    .get("kb")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0)
                    .min(65536);
                CallToolResult::success(vec![ContentBlock::text(&*self.blob(kb as usize))])
            }
            other if self.tools.tools.iter().any(|t| t.name == other) => {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "{other} is only listed by this benchmark server"
                ))])
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool: {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 0u16;
    let mut json = true;
    let mut sessions = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().ok_or("--port P")?.parse()?,
            "--response" => {
                json = match args.next().as_deref() {
                    Some("json") => true,
                    Some("sse") => false,
                    _ => return Err("--response json|sse".into()),
                }
            }
            "--sessions" => sessions = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let tools: Vec<Tool> = tool_catalog()
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()?;
    let bench = Bench {
        tools: Arc::new(ListToolsResult::with_all_items(tools)),
        blob: Arc::new(Mutex::new(None)),
    };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(sessions)
        .with_json_response(json && !sessions);
    let service = StreamableHttpService::new(
        move || Ok(bench.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        println!("http://{addr}/mcp");
        use axum::serve::ListenerExt;
        // Responses go out in several writes (headers, SSE events): without
        // TCP_NODELAY a client's delayed ACK would stall each of them.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let app = axum::Router::new().nest_service("/mcp", service);
        axum::serve(listener, app).await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
