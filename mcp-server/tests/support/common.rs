//! A small handler and the ways the tests reach it: our own client over an
//! in-memory pair, or raw lines over a duplex stream.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::Duration;

use mcp_server::{
    BoxFuture, HandlerResult, RequestContext, ServerConfig, ServerHandler, ServerLimits, serve,
};
use mcp_session::{Negotiation, Ready, Session, SessionConfig};
use mcp_transport::{Connector, MemoryConnector};
use mcp_types::{
    CallToolParams, CallToolResult, ContentBlock, Cursor, ErrorObject, JsonSchemaDoc,
    ListToolsResult, RequestId, Tool, error_codes,
};
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::mpsc;

/// Tools per page of `tools/list`.
pub const PAGE: usize = 2;

/// The tools, in listing order.
pub const TOOLS: [&str; 5] = ["echo", "progress", "slow", "fourth", "fifth"];

/// What the handler tells the test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A `slow` call started.
    Started(RequestId),
    /// A `slow` call saw its cancellation.
    Cancelled(RequestId),
}

/// Five tools over three pages: `echo` answers its `text`, `progress`
/// reports twice then answers, `slow` runs until cancelled.
pub struct Demo {
    seen: mpsc::UnboundedSender<Seen>,
}

impl Demo {
    pub fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<Seen>) {
        let (seen, rx) = mpsc::unbounded_channel();
        (Arc::new(Self { seen }), rx)
    }
}

/// `fourth` also takes a `region` mirrored in `Mcp-Param-Region`.
fn tool(name: &str) -> Tool {
    // `fourth`'s schema is written over several lines, as a handler may
    // keep one: it still travels as one line.
    let schema = if name == "fourth" {
        concat!(
            "{\"type\":\"object\",\r\n  \"properties\":{\"text\":{\"type\":\"string\"},\n",
            r#"  "region":{"type":"string","x-mcp-header":"Region"}}}"#
        )
    } else {
        r#"{"type":"object","properties":{"text":{"type":"string"}}}"#
    };
    let schema = JsonSchemaDoc::from_json(schema).unwrap();
    let mut tool = Tool::new(name, schema);
    tool.description = Some(format!("the {name} tool"));
    tool
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult {
        content: vec![ContentBlock::text(text)],
        ..Default::default()
    }
}

impl ServerHandler for Demo {
    fn tool_input_schema(&self, name: &str) -> Option<JsonSchemaDoc> {
        TOOLS.contains(&name).then(|| tool(name).input_schema)
    }

    fn list_tools(
        &self,
        cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListToolsResult>> {
        Box::pin(async move {
            let start = match cursor.as_deref().map(str::parse::<usize>) {
                None => 0,
                Some(Ok(n)) if n < TOOLS.len() => n,
                Some(_) => {
                    return Err(ErrorObject::new(
                        error_codes::INVALID_PARAMS,
                        "unknown cursor",
                    ));
                }
            };
            let end = (start + PAGE).min(TOOLS.len());
            Ok(ListToolsResult {
                tools: TOOLS[start..end].iter().map(|n| tool(n)).collect(),
                next_cursor: (end < TOOLS.len()).then(|| end.to_string()),
                ..Default::default()
            })
        })
    }

    fn call_tool(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CallToolResult>> {
        Box::pin(async move {
            match params.name.as_str() {
                "echo" => {
                    let args = params.arguments.unwrap_or_default();
                    Ok(text(args.get("text").and_then(Value::as_str).unwrap_or("")))
                }
                "progress" => {
                    ctx.progress(1.0, Some(2.0), Some("halfway".into()));
                    ctx.progress(2.0, Some(2.0), None);
                    Ok(text("done"))
                }
                "slow" => {
                    let _ = self.seen.send(Seen::Started(ctx.id().clone()));
                    tokio::select! {
                        () = ctx.cancelled() => {
                            let _ = self.seen.send(Seen::Cancelled(ctx.id().clone()));
                            Ok(text("stopped"))
                        }
                        () = tokio::time::sleep(Duration::from_secs(60)) => Ok(text("slept")),
                    }
                }
                "fourth" | "fifth" => Ok(text(params.name)),
                other => Ok(CallToolResult {
                    is_error: Some(true),
                    ..text(format!("no tool {other}"))
                }),
            }
        })
    }
}

pub fn config() -> ServerConfig {
    ServerConfig::new("demo", "1.0").instructions("a test server")
}

/// The OpenAPI connector's shape: each connect makes an in-memory pair and
/// serves the handler on its server end.
pub fn connector(handler: Arc<Demo>, config: ServerConfig) -> Arc<dyn Connector> {
    Arc::new(MemoryConnector::new(move |end| {
        let handler = Arc::clone(&handler);
        let config = config.clone();
        tokio::spawn(async move {
            serve(end.input, end.output, handler, config)
                .await
                .expect("serve ends cleanly");
        });
    }))
}

pub fn session_config() -> SessionConfig {
    SessionConfig {
        request_timeout: Duration::from_secs(10),
        probe_timeout: Duration::from_secs(2),
        ..SessionConfig::default()
    }
}

pub async fn ready(connector: Arc<dyn Connector>, mode: Negotiation) -> Session<Ready> {
    let session = Session::connect(connector, session_config())
        .await
        .expect("connect");
    match session.negotiate(mode).await {
        Ok(s) => s,
        Err(e) => panic!("negotiation failed: {e} ({:?})", e.error()),
    }
}

/// A raw client: lines in, lines out, over a duplex stream served by
/// `serve` with `limits`.
pub struct Wire {
    pub lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    pub write: WriteHalf<DuplexStream>,
    pub server: tokio::task::JoinHandle<Result<(), mcp_server::ServerError>>,
}

impl Wire {
    pub fn start(handler: Arc<Demo>, limits: ServerLimits) -> Self {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let (client_read, client_write) = tokio::io::split(client);
        let server = tokio::spawn(serve(
            server_read,
            server_write,
            handler,
            config().limits(limits),
        ));
        Self {
            lines: BufReader::new(client_read).lines(),
            write: client_write,
            server,
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    pub async fn send(&mut self, frame: Value) {
        self.send_raw(&frame.to_string()).await;
    }

    /// The next frame from the server (bounded wait).
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the server answers in time")
            .expect("reading")
            .expect("the server's output is open");
        serde_json::from_str(&line).unwrap()
    }

    /// Whether the server sends nothing within `wait`.
    pub async fn quiet_for(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.lines.next_line()).await {
            Err(_) => None,
            Ok(line) => line.unwrap().map(|l| serde_json::from_str(&l).unwrap()),
        }
    }

    /// `initialize` at `version` and `notifications/initialized`; the answer.
    pub async fn initialize(&mut self, version: &str) -> Value {
        self.send(serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}},
        }))
        .await;
        let answer = self.recv().await;
        self.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }
}

/// The `_meta` a 2026-07-28 request carries.
pub fn modern_meta() -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}
