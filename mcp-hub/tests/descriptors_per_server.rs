//! How many descriptors a stdio server costs the hub, counted in
//! `/proc/self/fd`, and 400 servers under a hard open-file limit of 1024.
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

/// The descriptors a running stdio server holds in the hub's process: the
/// socket pair end that is its stdin and stdout, and its stderr pipe.
const PER_SERVER: usize = 2;

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
async fn a_stdio_server_costs_two_descriptors_and_400_fit_under_a_hard_limit_of_1024() {
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
    let first = start(0..1).await;
    all_ready(&first);
    let before = open_descriptors();
    let forty = start(1..41).await;
    all_ready(&forty);
    let added = open_descriptors() - before;
    println!("40 stdio servers hold {added} descriptors");
    assert!(
        added <= 40 * PER_SERVER,
        "40 servers hold {added} descriptors, more than {PER_SERVER} each"
    );
    forty.shutdown().await;
    first.shutdown().await;

    // 400 servers under a hard limit of 1024: none refused.
    let hub = start(0..400).await;
    println!("open descriptors with 400 servers: {}", open_descriptors());
    all_ready(&hub);
    assert_eq!(hub.namespace().tools().len(), 400);
    for i in (0..400).step_by(37) {
        let r = hub.call(&format!("t{i}"), ()).await.unwrap();
        assert_eq!(first_text(&r), format!("server {i}"));
    }
    let report = hub.shutdown().await;
    assert!(report.forced.is_empty(), "{:?}", report.forced);
}
