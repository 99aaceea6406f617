//! How many descriptors a stdio server costs the hub, counted in
//! `/proc/self/fd` (three while they are plentiful, two once 40 % of the
//! limit is in use), and 400 servers under a hard open-file limit of 1024.
//!
//! The test lowers the *hard* `RLIMIT_NOFILE` of its own process, which
//! cannot be undone, so it lives alone in this test binary.

#[path = "support/common.rs"]
mod common;

use std::time::Duration;

use common::*;
use mcp_hub::{Hub, HubConfig, RestartPolicy, ServerSpec, ServerStatusKind};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, Script};
use rustix::process::{Resource, Rlimit, setrlimit};

/// The descriptors a running stdio server holds in the hub's process while
/// descriptors are plentiful: its stdin, stdout and stderr pipes.
const PLENTIFUL: usize = 3;
/// Once they are scarce: the socket pair end that is its stdin and stdout,
/// and its stderr pipe.
const SCARCE: usize = 2;

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd is readable")
        .count()
}

fn spec(i: usize) -> ServerSpec {
    let script = Script::legacy().tool(
        &format!("t{i}"),
        Behavior::Text {
            text: format!("server {i}"),
        },
    );
    ServerSpec::new(&format!("s{i:03}"), stdio(&script))
        .negotiation(Negotiation::Legacy)
        .restart(RestartPolicy::Never)
        .start_timeout(Duration::from_secs(300))
}

async fn start(range: std::ops::Range<usize>) -> Hub {
    let mut builder = Hub::builder(HubConfig::default());
    for i in range {
        builder = builder.server(spec(i));
    }
    builder.start().await.expect("the hub starts")
}

fn all_ready(hub: &Hub) {
    for name in hub.servers() {
        assert_eq!(
            hub.status(name.as_str()).unwrap().kind,
            ServerStatusKind::Ready,
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_holds_three_descriptors_or_two_when_scarce_and_400_fit_under_1024() {
    server_binary();
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(1024),
            maximum: Some(1024),
        },
    )
    .expect("lowering the hard limit is always allowed");

    // One server first, so that whatever the process sets up once (the
    // signal driver's pipe, lazily made globals) is not counted below.
    let mut hubs = vec![start(0..1).await];
    // Two low descriptors, closed later: holes below the 40 % mark.
    let holes: Vec<std::fs::File> = (0..2)
        .map(|_| std::fs::File::open("/dev/null").unwrap())
        .collect();
    let before = open_descriptors();
    hubs.push(start(1..41).await);
    let added = open_descriptors() - before;
    println!("40 stdio servers (descriptors plentiful) hold {added} descriptors");
    assert!(
        added <= 40 * PLENTIFUL,
        "{added} descriptors for 40 servers"
    );
    // Past 40 % of the limit (410 of 1024) servers take two each.
    let mut next = 41;
    while open_descriptors() < 430 {
        hubs.push(start(next..next + 20).await);
        next += 20;
    }
    // Holes left by closed descriptors do not make descriptors plentiful
    // again: the servers started next hold two each all the same.
    drop(holes);
    let before = open_descriptors();
    hubs.push(start(next..next + 40).await);
    next += 40;
    let added = open_descriptors() - before;
    println!("40 stdio servers (descriptors scarce) hold {added} descriptors");
    assert!(added <= 40 * SCARCE, "{added} descriptors for 40 servers");
    // The rest of 400: none refused.
    hubs.push(start(next..400).await);
    println!("open descriptors with 400 servers: {}", open_descriptors());
    for hub in &hubs {
        all_ready(hub);
    }
    let tools: usize = hubs.iter().map(|h| h.namespace().tools().len()).sum();
    assert_eq!(tools, 400);
    let hub = hubs.pop().expect("the last hub");
    let first = hub.servers()[0]
        .as_str()
        .trim_start_matches('s')
        .parse::<usize>()
        .unwrap();
    let r = hub.call(&format!("t{first}"), ()).await.unwrap();
    assert_eq!(first_text(&r), format!("server {first}"));
    for other in hubs {
        let report = other.shutdown().await;
        assert!(report.forced.is_empty(), "{:?}", report.forced);
    }
    let report = hub.shutdown().await;
    assert!(report.forced.is_empty(), "{:?}", report.forced);
}
