//! The open-file limit. This test lowers the soft `RLIMIT_NOFILE` of its own
//! process (safe code, through rustix), so it lives alone in this test binary
//! where no other test shares the process.
//!
//! 1. With a soft limit too low and raising turned off, servers fail with an
//!    error that names the descriptor limit as the reason.
//! 2. With the common default soft limit of 1024, 400 stdio servers still
//!    start: the hub raises the soft limit toward the hard one at start.

#[path = "support/common.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_hub::{
    Hub, HubConfig, HubError, HubEvent, LimitValue, RestartPolicy, ServerSpec, ServerStatusKind,
};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, Script};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(64)
}

fn set_soft_limit(soft: u64) {
    let hard = getrlimit(Resource::Nofile).maximum;
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(soft),
            maximum: hard,
        },
    )
    .expect("lowering the soft limit is always allowed");
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
        .start_timeout(Duration::from_secs(120))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_descriptor_limit_is_raised_and_named_when_it_is_the_reason() {
    server_binary();
    let hard = getrlimit(Resource::Nofile).maximum;
    let original = getrlimit(Resource::Nofile).current;
    assert!(
        hard.is_none_or(|h| h >= 2048),
        "the hard open-file limit ({hard:?}) is too low to start 400 servers at all"
    );

    // 1. Too low, not raised: named.
    set_soft_limit(open_descriptors() + 24);
    let mut builder = Hub::builder(HubConfig {
        raise_descriptor_limit: false,
        ..HubConfig::default()
    });
    for i in 0..40 {
        builder = builder.server(spec(i));
    }
    let hub = builder.start().await.unwrap();
    assert!(hub.descriptor_limit().is_none());
    let mut events = hub.take_events().unwrap();
    let mut named = 0;
    for event in drain(&mut events) {
        if let HubEvent::Failed { error, .. } = event {
            assert!(
                matches!(*error, HubError::DescriptorLimit { .. }),
                "{error:?}"
            );
            let text = error.to_string();
            assert!(text.contains("open file descriptor limit"), "{text}");
            named += 1;
        }
    }
    assert!(named > 0, "some spawns must have hit the limit");
    println!("{named} of 40 servers refused by a soft limit of a few descriptors");
    hub.shutdown().await;

    // 2. The common default of 1024: raised at start, 400 servers run.
    set_soft_limit(1024);
    let mut builder = Hub::builder(HubConfig::default());
    for i in 0..400 {
        builder = builder.server(spec(i));
    }
    let began = Instant::now();
    let hub = builder.start().await.unwrap();
    println!("400 stdio servers ready in {:?}", began.elapsed());
    let limit = hub.descriptor_limit().unwrap();
    assert_eq!(limit.soft_before, LimitValue(Some(1024)));
    assert!(limit.soft_after.0.is_none_or(|n| n > 1024), "{limit:?}");
    println!("open descriptors with 400 servers: {}", open_descriptors());
    for name in hub.servers() {
        assert_eq!(
            hub.status(name.as_str()).unwrap().kind,
            ServerStatusKind::Ready,
            "{name}"
        );
    }
    assert_eq!(hub.namespace().tools().len(), 400);
    for i in (0..400).step_by(37) {
        let r = hub.call(&format!("t{i}"), ()).await.unwrap();
        assert_eq!(first_text(&r), format!("server {i}"));
    }
    let report = hub.shutdown().await;
    assert!(report.forced.is_empty(), "{:?}", report.forced);
    println!("400 stdio servers shut down in {:?}", report.elapsed);
    if let Some(soft) = original {
        set_soft_limit(soft);
    }
}
