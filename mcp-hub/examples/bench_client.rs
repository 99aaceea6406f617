//! Our client in the peer benchmark (`../shared/bench/peers`, client `ours`).
//!
//! Contract: `bench_client <cold|seq|conc|big|list|fleet> <N> <server-binary>`;
//! spawns the server over stdio with the public API and default settings (the
//! era pinned to 2025-11-25 as the harness requires), runs the workload after
//! the harness's warm-up, checks every result, shuts the server down, and
//! prints one JSON line. One server goes through `mcp-session` directly;
//! `fleet` (N servers) goes through `mcp-hub`, as a host would. `cargo xtask
//! bench` builds it and runs the harness.
//!
//! Over Streamable HTTP (`cargo xtask bench --http`, `bench/http/`):
//! `bench_client <cold|seq|conc|big|list> <N> <http://URL> [legacy|2026]`
//! connects with `HttpConnector` and default settings instead of spawning,
//! negotiates the named era (`initialize` with 2025-11-25, or 2026-07-28
//! through `server/discover`) and runs the same workloads.

use std::sync::Arc;
use std::time::Instant;

use futures::future::try_join_all;
use mcp_hub::{Hub, HubConfig, ServerSpec};
use mcp_session::{Negotiation, Ready, Session, SessionConfig};
use mcp_transport::{HttpConfig, HttpConnector, StdioConfig, StdioConnector};
use serde_json::{Map, Value, json};

const ECHO_TEXT: &str = "hello from the MCP peer benchmark";

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn main() -> Res<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let workload = argv.first().cloned().unwrap_or_default();
    let n: usize = argv.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let server = argv
        .get(2)
        .cloned()
        .or_else(|| std::env::var("MCP_BENCH_SERVER").ok())
        .ok_or("usage: bench_client <workload> <N> <server-binary>")?;
    // `MCP_BENCH_MT` set: a multi-thread runtime instead (the `ours-mt`
    // client of `cargo xtask bench --http`), as `#[tokio::main]` makes.
    let rt = if std::env::var_os("MCP_BENCH_MT").is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    };
    // The workload runs on a spawned task, as a host's request handlers do.
    // (A future driven directly by `block_on` is woken through the runtime's
    // eventfd: one more write and epoll round per response, measured with
    // strace; a task is woken through the scheduler's run queue.)
    // A URL instead of a server program: Streamable HTTP, in the era named
    // by the fourth argument.
    let era = match argv.get(3).map(String::as_str) {
        Some("2026") | Some("2026-07-28") => Negotiation::Modern,
        _ => Negotiation::Legacy,
    };
    let out = rt.block_on(async move {
        tokio::spawn(async move { run(&workload, n, &server, era).await }).await
    })??;
    println!("{}", serde_json::to_string(&out)?);
    Ok(())
}

async fn run(workload: &str, n: usize, server: &str, era: Negotiation) -> Res<Value> {
    let t0 = Instant::now();
    let cpu0 = cpu_s();
    if workload == "fleet" {
        return fleet(if n == 0 { 100 } else { n }, server, t0, cpu0).await;
    }
    let session = if server.starts_with("http://") || server.starts_with("https://") {
        connect_http(server, era).await?
    } else {
        connect(server).await?
    };
    let mut out = Map::new();
    match workload {
        "cold" => {
            let tools = session.list_tools().await?;
            check(tools.tools().len() == 50, "50 tools")?;
        }
        "seq" => {
            for _ in 0..200 {
                echo(&session).await?;
            }
            let (cpu, start) = (cpu_s(), Instant::now());
            let mut lat = Vec::with_capacity(n);
            for _ in 0..n {
                let t = Instant::now();
                echo(&session).await?;
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            timed(&mut out, n, start, cpu, &mut lat);
        }
        "conc" => {
            let width: usize = env_or("MCP_BENCH_CONC", 64);
            for _ in 0..200 {
                echo(&session).await?;
            }
            let (cpu, start) = (cpu_s(), Instant::now());
            let per = n.div_ceil(width);
            let workers = (0..width).map(|w| {
                let session = &session;
                let count = per.min(n.saturating_sub(w * per));
                async move {
                    for _ in 0..count {
                        echo(session).await?;
                    }
                    Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                }
            });
            try_join_all(workers).await?;
            let secs = start.elapsed().as_secs_f64();
            out.insert("ops_per_s".into(), (n as f64 / secs).into());
            out.insert("cpu_s".into(), (cpu_s() - cpu).into());
        }
        "big" => {
            let kb: u64 = env_or("MCP_BENCH_KB", 1024);
            for _ in 0..2 {
                blob(&session, kb).await?;
            }
            let (cpu, start) = (cpu_s(), Instant::now());
            let mut lat = Vec::with_capacity(n);
            let mut bytes = 0usize;
            for _ in 0..n {
                let t = Instant::now();
                bytes += blob(&session, kb).await?;
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            let secs = start.elapsed().as_secs_f64();
            out.insert("mb_per_s".into(), (bytes as f64 / 1e6 / secs).into());
            percentiles(&mut out, &mut lat);
            out.insert("cpu_s".into(), (cpu_s() - cpu).into());
        }
        "list" => {
            for _ in 0..20 {
                list(&session).await?;
            }
            let (cpu, start) = (cpu_s(), Instant::now());
            let mut lat = Vec::with_capacity(n);
            for _ in 0..n {
                let t = Instant::now();
                list(&session).await?;
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            timed(&mut out, n, start, cpu, &mut lat);
        }
        other => return Err(format!("unknown workload `{other}`").into()),
    }
    session.close().await;
    out.insert("workload".into(), workload.into());
    out.insert("total_ms".into(), (t0.elapsed().as_secs_f64() * 1e3).into());
    out.insert("peak_rss_kb".into(), peak_rss_kb().into());
    Ok(Value::Object(out))
}

async fn fleet(n: usize, server: &str, t0: Instant, cpu0: f64) -> Res<Value> {
    let mut builder = Hub::builder(HubConfig::default());
    for i in 0..n {
        let connector = StdioConnector::new(StdioConfig::new(server));
        let mut spec = ServerSpec::new(&format!("s{i}"), connector)
            .required()
            .session(session_config());
        spec.negotiation = Negotiation::Legacy;
        builder = builder.server(spec);
    }
    // Starting the hub spawns, negotiates and lists every server in parallel.
    let hub = builder.start().await?;
    let namespace = hub.namespace();
    let listed: usize = (0..n)
        .filter(|i| namespace.resolve(&format!("s{i}/echo")).is_ok())
        .count();
    check(listed == n, "every server listed")?;
    let ready_ms = t0.elapsed().as_secs_f64() * 1e3;
    let t1 = Instant::now();
    try_join_all((0..n).map(|i| {
        let hub = &hub;
        async move {
            let mut args = Map::new();
            args.insert("text".into(), ECHO_TEXT.into());
            let result = hub.call(&format!("s{i}/echo"), args).await?;
            let text = result.content.first().and_then(|b| b.as_text());
            check(text == Some(ECHO_TEXT), "echo text")
        }
    }))
    .await?;
    let calls_ms = t1.elapsed().as_secs_f64() * 1e3;
    let t2 = Instant::now();
    hub.shutdown().await;
    Ok(json!({
        "workload": "fleet", "n": n, "ready_ms": ready_ms, "calls_ms": calls_ms,
        "close_ms": t2.elapsed().as_secs_f64() * 1e3,
        "total_ms": t0.elapsed().as_secs_f64() * 1e3, "cpu_s": cpu_s() - cpu0,
        "peak_rss_kb": peak_rss_kb(),
    }))
}

/// Default settings, except `SessionConfig::busy_poll` when
/// `MCP_BENCH_BUSY_POLL_US` names a window (0: off, the `ours-nopoll`
/// client of `cargo xtask bench --http`).
fn session_config() -> SessionConfig {
    let mut config = SessionConfig::default();
    if let Ok(us) = std::env::var("MCP_BENCH_BUSY_POLL_US") {
        let window = us.parse().map(std::time::Duration::from_micros).ok();
        config.busy_poll = window.filter(|w| !w.is_zero());
    }
    config
}

async fn connect(server: &str) -> Res<Session<Ready>> {
    let connector = Arc::new(StdioConnector::new(StdioConfig::new(server)));
    let session = Session::connect(connector, session_config()).await?;
    Ok(session.negotiate(Negotiation::Legacy).await?)
}

async fn connect_http(url: &str, era: Negotiation) -> Res<Session<Ready>> {
    let connector = Arc::new(HttpConnector::new(HttpConfig::new(url)));
    let session = Session::connect(connector, session_config()).await?;
    Ok(session.negotiate(era).await?)
}

async fn echo(session: &Session<Ready>) -> Res<()> {
    let mut args = Map::new();
    args.insert("text".into(), ECHO_TEXT.into());
    let result = session.call_tool("echo", args).await?;
    let text = result.content.first().and_then(|b| b.as_text());
    check(text == Some(ECHO_TEXT), "echo text")
}

async fn blob(session: &Session<Ready>, kb: u64) -> Res<usize> {
    let mut args = Map::new();
    args.insert("kb".into(), kb.into());
    let result = session.call_tool("blob", args).await?;
    let len = result
        .content
        .first()
        .and_then(|b| b.as_text())
        .map_or(0, str::len);
    check(len as u64 == kb * 1024, "blob size")?;
    Ok(len)
}

async fn list(session: &Session<Ready>) -> Res<()> {
    let tools = session.list_tools().await?;
    check(tools.tools().len() == 50, "50 tools")
}

fn timed(out: &mut Map<String, Value>, n: usize, start: Instant, cpu: f64, lat: &mut [f64]) {
    let secs = start.elapsed().as_secs_f64();
    out.insert("ops_per_s".into(), (n as f64 / secs).into());
    percentiles(out, lat);
    out.insert("cpu_s".into(), (cpu_s() - cpu).into());
}

fn percentiles(out: &mut Map<String, Value>, lat: &mut [f64]) {
    lat.sort_by(f64::total_cmp);
    let pick = |p: f64| {
        if lat.is_empty() {
            return 0.0;
        }
        let rank = ((p / 100.0) * lat.len() as f64).ceil() as usize;
        lat[rank.clamp(1, lat.len()) - 1]
    };
    out.insert("p50_us".into(), pick(50.0).into());
    out.insert("p99_us".into(), pick(99.0).into());
}

fn check(ok: bool, what: &str) -> Res<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("result check failed: {what}").into())
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
