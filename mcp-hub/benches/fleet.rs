//! Fleet benchmark: how long 100 stdio servers (the testkit binary) take to
//! start behind one hub, and how much memory an idle session costs this
//! process (the hub side: session, driver, pumps, snapshot, namespace).
//!
//! `cargo bench -p mcp-hub --bench fleet`

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_hub::{Hub, HubConfig, ServerSpec};
use mcp_testkit::{Behavior, Script};
use mcp_transport::{StdioConfig, StdioConnector};

const SERVERS: usize = 100;

fn hub_of(binary: &str, n: usize) -> mcp_hub::HubBuilder {
    let mut builder = Hub::builder(HubConfig::default());
    for i in 0..n {
        let script = Script::dual()
            .tool("echo", Behavior::Echo)
            .tool(&format!("only{i}"), Behavior::Text { text: "x".into() });
        let json = serde_json::to_string(&script).expect("script serialises");
        let config = StdioConfig::new(binary).args(["--script-json".to_owned(), json]);
        let spec = ServerSpec::new(&format!("s{i:03}"), StdioConnector::new(config))
            .start_timeout(Duration::from_secs(120));
        builder = builder.server(spec);
    }
    builder
}

/// Resident set size of this process, in KiB.
fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Resident set size of this process's children, in KiB, and their count.
fn children_rss_kib() -> (u64, usize) {
    let me = std::process::id().to_string();
    let mut total = 0;
    let mut count = 0;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return (0, 0);
    };
    for entry in entries.flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let ppid = status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .map(str::trim);
        if ppid == Some(me.as_str()) {
            count += 1;
            total += status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    (total, count)
}

/// Memory per idle session, measured first, before the timing runs grow the
/// heap (memory freed by a shut-down hub stays resident and would hide the
/// cost of the next one). A one-server hub warms the runtime up first.
fn idle_memory(rt: &tokio::runtime::Runtime, binary: &str) {
    rt.block_on(async {
        let warm = hub_of(binary, 1).start().await.expect("hub starts");
        warm.shutdown().await;
        let before = vm_rss_kib();
        let hub = hub_of(binary, SERVERS).start().await.expect("hub starts");
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = vm_rss_kib();
        let (children, count) = children_rss_kib();
        let per_session = after.saturating_sub(before) as f64 / SERVERS as f64;
        println!(
            "fleet/idle_session_memory: {per_session:.1} KiB per idle session in the hub process \
             ({SERVERS} sessions; VmRSS {before} KiB -> {after} KiB)"
        );
        if count > 0 {
            println!(
                "fleet/idle_server_memory: {:.1} KiB resident per idle testkit server process ({count} children)",
                children as f64 / count as f64
            );
        }
        hub.shutdown().await;
    });
}

fn fleet(c: &mut Criterion) {
    let binary = mcp_testkit::build_server_binary()
        .expect("building mcp-testkit-server")
        .display()
        .to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    idle_memory(&rt, &binary);

    let mut group = c.benchmark_group("fleet");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("start_100_stdio_servers", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                rt.block_on(async {
                    let builder = hub_of(&binary, SERVERS);
                    let began = Instant::now();
                    let hub = builder.start().await.expect("hub starts");
                    total += began.elapsed();
                    let report = hub.shutdown().await;
                    assert!(report.forced.is_empty());
                });
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, fleet);
criterion_main!(benches);
