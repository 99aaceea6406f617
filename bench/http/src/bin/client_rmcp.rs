//! Peer client: the official Rust SDK (`rmcp`) over Streamable HTTP, used the
//! way its documentation shows: `StreamableHttpClientTransport::from_uri`
//! (reqwest), `serve` for the legacy `initialize` handshake (pinned to
//! 2025-11-25) or `serve_with_lifecycle(.., Discover)` for 2026-07-28, then
//! `call_tool` / `list_tools` on the running service and `cancel()` to close
//! (which ends the HTTP session, if any).
//!
//! Usage: `client-rmcp <cold|seq|conc|big|list> <N> <URL> [legacy|2026]`;
//! prints one JSON line. The runtime is tokio's multi-thread runtime (what
//! `#[tokio::main]` gives); `RMCP_RT=current` picks a current-thread one.

use std::time::Instant;

use futures::{StreamExt, stream};
use mcp_http_bench::{ECHO_TEXT, cpu_time_s, env_or, peak_rss_kb, record_latencies};
use rmcp::{
    RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
        ProtocolVersion,
    },
    service::{ClientLifecycleMode, ClientServiceExt, RunningService},
    transport::StreamableHttpClientTransport,
};
use serde_json::{Map, Value, json};

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn check_text(r: &CallToolResult, want_len: usize) -> Res<()> {
    if r.is_error == Some(true) || r.content.len() != 1 {
        return Err("unexpected tool result".into());
    }
    let got = r.content[0].as_text().map_or(usize::MAX, |t| t.text.len());
    if got != want_len {
        return Err(format!("text length {got} != {want_len}").into());
    }
    Ok(())
}

fn arguments(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

async fn connect(url: &str, modern: bool) -> Res<RunningService<RoleClient, ClientConfig>> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("client-rmcp", "0.1.0"),
    );
    let client = if modern {
        config
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await?
    } else {
        config
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .serve(transport)
            .await?
    };
    let want = if modern {
        ProtocolVersion::V_2026_07_28
    } else {
        ProtocolVersion::V_2025_11_25
    };
    let got = client.peer_info().map(|i| i.protocol_version.clone());
    if got.as_ref() != Some(&want) {
        return Err(format!("negotiated {got:?}, want {want}").into());
    }
    Ok(client)
}

async fn run(workload: &str, n: usize, url: &str, modern: bool) -> Res<Map<String, Value>> {
    let kb: u64 = env_or("MCP_BENCH_KB", 1024);
    let t0 = Instant::now();
    let client = connect(url, modern).await?;
    let mut out = Map::new();
    out.insert("init_ms".into(), (t0.elapsed().as_secs_f64() * 1e3).into());
    let echo =
        || CallToolRequestParams::new("echo").with_arguments(arguments(json!({"text": ECHO_TEXT})));
    let blob = || CallToolRequestParams::new("blob").with_arguments(arguments(json!({"kb": kb})));
    let big = (kb * 1024) as usize;
    match workload {
        "cold" => {
            let tools = client.list_tools(None).await?;
            if tools.tools.len() != 50 {
                return Err(format!("expected 50 tools, got {}", tools.tools.len()).into());
            }
        }
        "seq" | "big" | "list" => {
            let warm = match workload {
                "seq" => 200,
                "big" => 2,
                _ => 20,
            };
            let one = async |i: usize| -> Res<()> {
                let _ = i;
                match workload {
                    "seq" => check_text(&client.call_tool(echo()).await?, ECHO_TEXT.len()),
                    "big" => check_text(&client.call_tool(blob()).await?, big),
                    _ => {
                        let r = client.list_tools(None).await?;
                        if r.tools.len() == 50 {
                            Ok(())
                        } else {
                            Err("expected 50 tools".into())
                        }
                    }
                }
            };
            for i in 0..warm {
                one(i).await?;
            }
            let mut lat = Vec::with_capacity(n);
            let (start, cpu) = (Instant::now(), cpu_time_s());
            for i in 0..n {
                let t = Instant::now();
                one(i).await?;
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            let secs = start.elapsed().as_secs_f64();
            out.insert("cpu_s".into(), (cpu_time_s() - cpu).into());
            out.insert("elapsed_s".into(), secs.into());
            out.insert("ops_per_s".into(), (n as f64 / secs).into());
            if workload == "big" {
                out.insert("mb_per_s".into(), ((n * big) as f64 / 1e6 / secs).into());
            }
            record_latencies(&mut out, &mut lat);
        }
        "conc" => {
            let width: usize = env_or("MCP_BENCH_CONC", 64);
            for _ in 0..200 {
                check_text(&client.call_tool(echo()).await?, ECHO_TEXT.len())?;
            }
            let (start, cpu) = (Instant::now(), cpu_time_s());
            let client = &client;
            let results: Vec<Res<()>> =
                stream::iter(0..n)
                    .map(|_| async move {
                        check_text(&client.call_tool(echo()).await?, ECHO_TEXT.len())
                    })
                    .buffer_unordered(width)
                    .collect()
                    .await;
            let secs = start.elapsed().as_secs_f64();
            out.insert("cpu_s".into(), (cpu_time_s() - cpu).into());
            results.into_iter().collect::<Res<Vec<()>>>()?;
            out.insert("elapsed_s".into(), secs.into());
            out.insert("ops_per_s".into(), (n as f64 / secs).into());
            out.insert("concurrency".into(), width.into());
        }
        other => return Err(format!("unknown workload {other}").into()),
    }
    client.cancel().await?;
    out.insert("total_ms".into(), (t0.elapsed().as_secs_f64() * 1e3).into());
    Ok(out)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: client-rmcp <cold|seq|conc|big|list> <N> <URL> [legacy|2026]";
    let workload = args.first().ok_or(usage)?.clone();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).ok_or(usage)?;
    let url = args.get(2).ok_or(usage)?.clone();
    let modern = match args.get(3).map(String::as_str) {
        None | Some("legacy") => false,
        Some("2026") | Some("2026-07-28") => true,
        Some(other) => return Err(format!("unknown era {other}").into()),
    };
    let current = std::env::var("RMCP_RT").is_ok_and(|v| v == "current");
    let rt = if current {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    };
    let mut out = rt.block_on(run(&workload, n, &url, modern))?;
    out.insert(
        "client".into(),
        (if current { "rmcp-ct" } else { "rmcp" }).into(),
    );
    out.insert("workload".into(), workload.into());
    out.insert("n".into(), n.into());
    out.insert(
        "protocol".into(),
        (if modern { "2026-07-28" } else { "2025-11-25" }).into(),
    );
    out.insert("peak_rss_kb".into(), peak_rss_kb().into());
    println!("{}", Value::Object(out));
    Ok(())
}
