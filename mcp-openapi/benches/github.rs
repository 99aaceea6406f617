//! Loading GitHub's REST description (npm `@octokit/openapi`,
//! `generated/api.github.com.json`: 12.4 MiB, OpenAPI 3.0.3, 1,223
//! operations) into tools: `cargo bench -p mcp-openapi --bench github`.
//! Needs `cd interop && npm ci`.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_openapi::{DocumentConfig, OpenApiConfig, OpenApiService, SpecSource};

fn spec() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../interop/node_modules/@octokit/openapi/generated/api.github.com.json")
}

fn load(c: &mut Criterion) {
    let path = spec();
    assert!(
        path.exists(),
        "{} is missing: run `cd interop && npm ci`",
        path.display()
    );
    // Read once: the bench measures parsing and conversion, not the disk.
    let text = std::fs::read_to_string(&path).expect("readable");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("openapi");
    group.sample_size(10);
    group.bench_function("load api.github.com.json", |b| {
        b.iter(|| {
            let config = OpenApiConfig::new(vec![DocumentConfig::new(
                SpecSource::Inline(text.clone()),
                "https://api.github.com",
            )]);
            let service = runtime
                .block_on(OpenApiService::load(config))
                .expect("loads");
            assert_eq!(service.tools().len(), 1223);
        });
    });
    group.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
