//! A host on the official Rust SDK (`rmcp`) in front of `mcp serve --stdio`:
//! lists the merged tools of the servers behind the gateway, calls one tool
//! of each, reads a resource, gets a prompt, answers a server's sampling
//! request, and sees `list_changed` only after the operator adopted a
//! changed tool list (it plays the operator with `mcp serve --control`).
//!
//! ```text
//! gateway-host-rmcp check MCP CONFIG SOCKET
//!     one JSON line per check: {"check", "status": "pass"|"fail", "detail"}
//! gateway-host-rmcp check-url MCP URL SOCKET
//!     the same checks against a running `mcp serve --http` at URL
//!     (Streamable HTTP), whose control socket is SOCKET
//! gateway-host-rmcp bench N TOOL -- COMMAND [ARGS…]
//!     N sequential calls of TOOL on the server COMMAND starts, after a
//!     warm-up; one JSON line with calls/s and the median latency
//! ```
//!
//! The SDK is pinned to the handshake era (2025-11-25): requests from
//! servers (sampling) travel on a legacy session only.

// Sampling is deprecated in rmcp (SEP-2577); the gateway still passes it on
// for the servers that use it, and this host answers it.
#![allow(deprecated)]

use std::future::Future;
use std::process::Command as StdCommand;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, GetPromptRequestParams, Implementation, ProtocolVersion,
    ReadResourceRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::Notify;

type R<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

#[derive(Clone)]
struct Host {
    config: ClientConfig,
    changed: Arc<AtomicUsize>,
    heard: Arc<Notify>,
}

impl ClientHandler for Host {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorData>> + Send + '_ {
        // The SDK hands the request's `_meta` over in the context.
        let label = |meta: Value| meta["mcp-gateway/server"].as_str().map(str::to_owned);
        let server = label(serde_json::to_value(&context.meta).unwrap_or(Value::Null))
            .or_else(|| label(serde_json::to_value(&params.meta).unwrap_or(Value::Null)))
            .unwrap_or_else(|| "?".to_owned());
        let answer = json!({
            "model": "rmcp-host",
            "role": "assistant",
            "content": {"type": "text", "text": format!("four (asked by {server})")},
        });
        std::future::ready(
            serde_json::from_value(answer)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
        )
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.changed.fetch_add(1, Ordering::SeqCst);
        self.heard.notify_one();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

fn host(sampling: bool) -> Host {
    let capabilities: ClientCapabilities = serde_json::from_value(if sampling {
        json!({"sampling": {}})
    } else {
        json!({})
    })
    .expect("capabilities");
    Host {
        config: ClientConfig::new(capabilities, Implementation::new("rmcp-host", "1.0.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25),
        changed: Arc::new(AtomicUsize::new(0)),
        heard: Arc::new(Notify::new()),
    }
}

fn params<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("request params")
}

fn text_of(result: &impl serde::Serialize) -> String {
    let value = serde_json::to_value(result).unwrap_or(Value::Null);
    value["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn emit(check: &str, outcome: R<(bool, String)>) {
    let (ok, detail) = outcome.unwrap_or_else(|e| (false, e.to_string()));
    let status = if ok { "pass" } else { "fail" };
    println!(
        "{}",
        json!({"check": check, "status": status, "detail": detail})
    );
}

async fn tool_names(client: &RunningService<RoleClient, Host>) -> R<Vec<String>> {
    Ok(client
        .list_all_tools()
        .await?
        .into_iter()
        .map(|t| t.name.to_string())
        .collect())
}

async fn call(client: &RunningService<RoleClient, Host>, name: &str, args: Value) -> R<String> {
    let result = client
        .call_tool(params::<CallToolRequestParams>(
            json!({"name": name, "arguments": args}),
        ))
        .await?;
    if result.is_error == Some(true) {
        return Err(format!("{name} failed: {}", text_of(&result)).into());
    }
    Ok(text_of(&result))
}

fn control(mcp: &str, socket: &str, words: &[&str]) -> R<String> {
    let out = StdCommand::new(mcp)
        .args(["serve", "--control", socket])
        .args(words)
        .output()?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

async fn check(mcp: &str, config: &str, socket: &str, url: Option<&str>) -> R<()> {
    let handler = host(true);
    let client = match url {
        Some(url) => {
            handler
                .clone()
                .serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
                .await?
        }
        None => {
            let mut command = tokio::process::Command::new(mcp);
            command.args(["--config", config, "serve", "--stdio", "--control", socket]);
            handler
                .clone()
                .serve(TokioChildProcess::new(command)?)
                .await?
        }
    };
    emit("initialize", {
        let info = client
            .peer_info()
            .map(|i| serde_json::to_value(i).unwrap_or(Value::Null));
        let name = info
            .as_ref()
            .and_then(|i| i["serverInfo"]["name"].as_str())
            .unwrap_or("")
            .to_owned();
        Ok((name == "mcp-gateway", name))
    });
    emit(
        "tools/list (merged)",
        async {
            let names = tool_names(&client).await?;
            let ok = ["legacy_echo", "modern_add", "remote_text"]
                .iter()
                .all(|n| names.iter().any(|m| m == n));
            Ok((ok, names.join(",")))
        }
        .await,
    );
    emit(
        "call (legacy stdio)",
        async {
            let text = call(&client, "legacy_echo", json!({"text": "hi"})).await?;
            Ok((text == "hi", text))
        }
        .await,
    );
    emit(
        "call (2026 stdio)",
        async {
            let text = call(&client, "modern_add", json!({"a": 2, "b": 3})).await?;
            Ok((text == "5", text))
        }
        .await,
    );
    emit(
        "call (http)",
        async {
            let text = call(&client, "remote_text", json!({})).await?;
            Ok((text == "remote says hi", text))
        }
        .await,
    );
    emit(
        "resources/read",
        async {
            let read = client
                .read_resource(params::<ReadResourceRequestParams>(
                    json!({"uri": "mcp-gateway://legacy/file:///readme.txt"}),
                ))
                .await?;
            let value = serde_json::to_value(&read)?;
            let text = value["contents"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok((text == "read me", text))
        }
        .await,
    );
    emit(
        "prompts/get",
        async {
            let prompt = client
                .get_prompt(params::<GetPromptRequestParams>(
                    json!({"name": "modern/greet", "arguments": {"who": "rmcp"}}),
                ))
                .await?;
            let value = serde_json::to_value(&prompt)?;
            let said = value["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok((said == "hello rmcp", said))
        }
        .await,
    );
    emit(
        "sampling (server asks host)",
        async {
            let text = call(&client, "ask", json!({})).await?;
            Ok((
                text.contains("four (asked by legacy)"),
                text.chars().take(80).collect(),
            ))
        }
        .await,
    );
    emit(
        "list_changed after approval",
        async {
            call(&client, "change", json!({})).await?;
            let mut pending = String::new();
            for _ in 0..200 {
                pending = control(mcp, socket, &["pending"])?;
                if pending.contains("+fresh") {
                    break;
                }
            }
            if !pending.contains("+fresh") {
                return Ok((false, format!("nothing pending: {pending}")));
            }
            if handler.changed.load(Ordering::SeqCst) != 0 {
                return Ok((false, "list_changed came before the approval".to_owned()));
            }
            let generation: String = pending
                .split("generation ")
                .nth(1)
                .unwrap_or("")
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let heard = handler.heard.notified();
            control(mcp, socket, &["adopt", "legacy", &generation])?;
            let _ = tokio::time::timeout(Duration::from_secs(20), heard).await;
            let names = tool_names(&client).await?;
            let changed = handler.changed.load(Ordering::SeqCst);
            let fresh = names.iter().any(|n| n == "fresh");
            Ok((
                changed > 0 && fresh,
                format!("heard {changed}, fresh listed: {fresh}"),
            ))
        }
        .await,
    );
    client.cancel().await?;
    Ok(())
}

async fn bench(n: usize, tool: &str, program: &str, args: &[String]) -> R<()> {
    let client = if program.starts_with("http://") || program.starts_with("https://") {
        host(false)
            .serve(StreamableHttpClientTransport::from_uri(program.to_owned()))
            .await?
    } else {
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        host(false).serve(TokioChildProcess::new(command)?).await?
    };
    let arguments = json!({"text": "hello from the gateway bench"});
    for _ in 0..n.min(200) {
        call(&client, tool, arguments.clone()).await?;
    }
    let mut latencies = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        call(&client, tool, arguments.clone()).await?;
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({"client": "rmcp", "calls": n, "calls_per_s": n as f64 / seconds, "p50_ms": latencies[n / 2]})
    );
    client.cancel().await?;
    Ok(())
}

fn main() -> R<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match args.first().map(String::as_str) {
        Some("check") if args.len() == 4 => {
            if let Err(e) = runtime.block_on(check(&args[1], &args[2], &args[3], None)) {
                emit("connect", Err(e));
            }
            Ok(())
        }
        Some("check-url") if args.len() == 4 => {
            if let Err(e) = runtime.block_on(check(&args[1], "", &args[3], Some(&args[2]))) {
                emit("connect", Err(e));
            }
            Ok(())
        }
        Some("bench") if args.len() >= 5 && args[3] == "--" => {
            let n: usize = args[1].parse()?;
            runtime.block_on(bench(n, &args[2], &args[4], &args[5..]))
        }
        _ => {
            eprintln!("usage: gateway-host-rmcp check MCP CONFIG SOCKET | check-url MCP URL SOCKET | bench N TOOL -- COMMAND [ARGS…] | bench N TOOL -- URL");
            std::process::exit(2);
        }
    }
}
