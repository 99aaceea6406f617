//! The flood benchmark (`cargo xtask bench --flood`): what one server
//! flooding the hub with log messages costs the other servers.
//!
//! `flood_bench <quiet-server-binary> [--quiet N] [--inflight K] [--secs S]
//! [--reps R] [--logged]` starts a hub (multi-thread runtime, default
//! settings) with N quiet stdio servers (the peer harness's raw server) and
//! one flooder (this program again, `flood_bench --flooder`: a minimal
//! server whose one tool writes `notifications/message` lines, 64 to a
//! write, as fast as they are read, until the call is cancelled). It keeps
//! K `echo` calls in flight per quiet server (closed loop) for S seconds
//! with the flooder idle, then S seconds with it flooding, R times, and
//! prints per phase the quiet servers' calls/s (per server) and p50 / p99
//! latency, then the medians and the ratio flood / quiet. `--logged` asks
//! the flooder for log messages (`log_level` debug), so they are parsed up
//! to its notification budget and handed to the host as events (read and
//! thrown away here); by default nobody asks and they are discarded.
//!
//! It uses only the hub's public API as it stood before the notification
//! budget, so the same file measures an older hub too. A benchmark, not a
//! test: nothing here asserts a time.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_hub::{Hub, HubConfig, RestartPolicy, ServerSpec};
use mcp_session::Negotiation;
use mcp_transport::{StdioConfig, StdioConnector};
use serde_json::{Value, json};

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

struct Args {
    quiet_binary: String,
    quiet: usize,
    inflight: usize,
    secs: f64,
    reps: usize,
    logged: bool,
}

fn main() -> Res<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--flooder") {
        return flooder(argv.get(1).map(std::path::PathBuf::from));
    }
    let mut args = Args {
        quiet_binary: String::new(),
        quiet: 4,
        inflight: 4,
        secs: 3.0,
        reps: 3,
        logged: false,
    };
    let mut it = argv.into_iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--quiet" => args.quiet = value()?.parse()?,
            "--inflight" => args.inflight = value()?.parse()?,
            "--secs" => args.secs = value()?.parse()?,
            "--reps" => args.reps = value()?.parse()?,
            "--logged" => args.logged = true,
            _ if args.quiet_binary.is_empty() => args.quiet_binary = a,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if args.quiet_binary.is_empty() {
        return Err("usage: flood_bench <quiet-server-binary> [--quiet N] [--inflight K] [--secs S] [--reps R] [--logged]".into());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move { tokio::spawn(run(args)).await? })
}

/// One phase's figures.
struct Phase {
    per_server: f64,
    p50_us: f64,
    p99_us: f64,
}

async fn run(args: Args) -> Res<()> {
    let me = std::env::current_exe()?.display().to_string();
    // The flooder writes how many log messages each flood wrote here.
    let count_file = std::env::temp_dir().join(format!("flood_bench_{}.count", std::process::id()));
    let count_arg = count_file.display().to_string();
    let mut builder = Hub::builder(HubConfig::default());
    for i in 0..args.quiet {
        let connector = StdioConnector::new(StdioConfig::new(&args.quiet_binary));
        builder = builder.server(
            ServerSpec::new(&format!("q{i}"), connector)
                .negotiation(Negotiation::Legacy)
                .restart(RestartPolicy::Never),
        );
    }
    let flooder =
        StdioConnector::new(StdioConfig::new(&me).args(["--flooder", count_arg.as_str()]));
    let mut flood_spec = ServerSpec::new("flooder", flooder)
        .negotiation(Negotiation::Legacy)
        .restart(RestartPolicy::Never);
    if args.logged {
        flood_spec = flood_spec.log_level(mcp_types::LoggingLevel::Debug);
    }
    let hub = Arc::new(builder.server(flood_spec).start().await?);
    // The host reads its events (log messages among them) and drops them.
    if let Some(mut events) = hub.take_events() {
        tokio::spawn(async move { while events.next().await.is_some() {} });
    }
    let duration = Duration::from_secs_f64(args.secs);
    // Warm-up: every path taken once.
    closed_loop(&hub, &args, Duration::from_millis(300)).await?;
    let mut quiet = Vec::new();
    let mut flood = Vec::new();
    println!(
        "flood benchmark: {} quiet servers x {} in flight, {} s per phase, {} reps, flooder log messages {}",
        args.quiet,
        args.inflight,
        args.secs,
        args.reps,
        if args.logged {
            "asked for (debug)"
        } else {
            "not asked for"
        }
    );
    println!("phase   rep  calls/s/server   p50 µs   p99 µs   flooder's log messages/s");
    for rep in 0..args.reps {
        let q = closed_loop(&hub, &args, duration).await?;
        println!(
            "quiet   {rep:>3}  {:>14.0}  {:>7.1}  {:>7.1}",
            q.per_server, q.p50_us, q.p99_us
        );
        quiet.push(q);
        let flooding = {
            let hub = Arc::clone(&hub);
            tokio::spawn(async move { hub.call("flooder/flood", json!({})).await })
        };
        // Let the flood start before measuring.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let began = Instant::now();
        let f = closed_loop(&hub, &args, duration).await?;
        flooding.abort();
        let _ = flooding.await;
        // The cancellation reaches the flooder; what it wrote meanwhile
        // drains before the next quiet phase.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let written: f64 = std::fs::read_to_string(&count_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(f64::NAN);
        // From the flood's start (200 ms before the phase) to the
        // cancellation.
        let rate = written / (began.elapsed().as_secs_f64() - 0.3 + 0.2);
        println!(
            "flood   {rep:>3}  {:>14.0}  {:>7.1}  {:>7.1}   {rate:>10.0}",
            f.per_server, f.p50_us, f.p99_us
        );
        flood.push(f);
        // The cancellation reaches the flooder; what it wrote meanwhile
        // drains before the next quiet phase.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let med = |v: &[Phase], f: fn(&Phase) -> f64| {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        x.sort_by(f64::total_cmp);
        x[x.len() / 2]
    };
    let (qr, fr) = (med(&quiet, |p| p.per_server), med(&flood, |p| p.per_server));
    let (q99, f99) = (med(&quiet, |p| p.p99_us), med(&flood, |p| p.p99_us));
    println!(
        "median  quiet {qr:.0} calls/s/server (p99 {q99:.1} µs), flood {fr:.0} (p99 {f99:.1} µs): {:.0} % of the quiet rate, p99 x{:.2}",
        100.0 * fr / qr,
        f99 / q99
    );
    let _ = std::fs::remove_file(&count_file);
    match Arc::try_unwrap(hub) {
        Ok(hub) => {
            hub.shutdown().await;
        }
        Err(_) => return Err("the hub is still shared".into()),
    }
    Ok(())
}

/// Keeps `inflight` calls going per quiet server for `duration`.
async fn closed_loop(hub: &Arc<Hub>, args: &Args, duration: Duration) -> Res<Phase> {
    let start = Instant::now();
    let end = start + duration;
    let mut workers = Vec::new();
    for server in 0..args.quiet {
        for _ in 0..args.inflight {
            let hub = Arc::clone(hub);
            let tool = format!("q{server}/echo");
            workers.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < end {
                    let t = Instant::now();
                    hub.call(&tool, json!({"text": "hello from the flood benchmark"}))
                        .await
                        .map_err(|e| e.to_string())?;
                    latencies.push(t.elapsed().as_secs_f64() * 1e6);
                }
                Ok::<_, String>(latencies)
            }));
        }
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await??);
    }
    let secs = start.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    let at = |q: f64| all[((all.len() as f64 - 1.0) * q) as usize];
    Ok(Phase {
        per_server: all.len() as f64 / secs / args.quiet as f64,
        p50_us: at(0.50),
        p99_us: at(0.99),
    })
}

/// The flooding server: `initialize`, `tools/list` (one tool, `flood`),
/// `ping`; a `tools/call` starts the flood (no answer), a
/// `notifications/cancelled` stops it.
fn flooder(count_file: Option<std::path::PathBuf>) -> Res<()> {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let stop = Arc::new(AtomicBool::new(false));
    let send = |v: Value| -> Res<()> {
        let mut out = out.lock().map_err(|_| "stdout lock")?;
        writeln!(out, "{v}")?;
        out.flush()?;
        Ok(())
    };
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = msg.get("id").cloned();
        match (msg["method"].as_str().unwrap_or(""), id) {
            ("initialize", Some(id)) => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "flooder", "version": "1"}}}))?,
            ("tools/list", Some(id)) => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "tools": [{"name": "flood", "inputSchema": {"type": "object"}}]}}))?,
            ("tools/call", Some(_)) => {
                stop.store(false, Ordering::SeqCst);
                let (out, stop) = (Arc::clone(&out), Arc::clone(&stop));
                let count_file = count_file.clone();
                std::thread::spawn(move || {
                    let line = json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "logger": "flood",
                                   "data": "a flooding server's log message"}})
                    .to_string();
                    let batch = format!("{line}\n").repeat(64);
                    let mut written: u64 = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(mut out) = out.lock() else { break };
                        if out
                            .write_all(batch.as_bytes())
                            .and_then(|()| out.flush())
                            .is_err()
                        {
                            break;
                        }
                        written += 64;
                    }
                    if let Some(path) = count_file {
                        let _ = std::fs::write(path, written.to_string());
                    }
                });
            }
            ("notifications/cancelled", None) => stop.store(true, Ordering::SeqCst),
            (_, Some(id)) => send(json!({"jsonrpc": "2.0", "id": id, "result": {}}))?,
            _ => {}
        }
    }
    stop.store(true, Ordering::SeqCst);
    Ok(())
}
