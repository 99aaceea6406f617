//! GitHub's REST description (npm `@octokit/openapi`,
//! `generated/api.github.com.json`: 12.4 MiB, OpenAPI 3.0.3, 1,223
//! operations, 25 `operationId`s over 64 characters, all with `/`): it
//! loads, every operation becomes a tool with a valid schema and a unique,
//! stable name. Prints the load time and the process's peak memory.
//!
//! The package is installed by `cargo xtask test` (`npm ci` in `interop/`);
//! without it this test fails and says so.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use mcp_openapi::{DocumentConfig, OpenApiConfig, OpenApiService, SpecSource, is_valid_tool_name};
use serde_json::Value;

fn spec() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../interop/node_modules/@octokit/openapi/generated/api.github.com.json")
}

/// A line of `/proc/self/status` in KiB (`VmHWM`: peak resident memory).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_rest_description_loads_into_valid_uniquely_named_tools() {
    let path = spec();
    assert!(
        path.exists(),
        "{} is missing: run `cd interop && npm ci` (cargo xtask test does)",
        path.display()
    );

    let rss_before = status_kib("VmRSS:");
    let config = || {
        OpenApiConfig::new(vec![DocumentConfig::new(
            SpecSource::File(path.clone()),
            "https://api.github.com",
        )])
    };
    let started = Instant::now();
    let service = OpenApiService::load(config()).await.expect("loads");
    let elapsed = started.elapsed();
    let peak = status_kib("VmHWM:");
    let rss_after = status_kib("VmRSS:");
    let schema_bytes: usize = service
        .tools()
        .iter()
        .map(|t| {
            t.input_schema.as_str().len() + t.output_schema.as_ref().map_or(0, |s| s.as_str().len())
        })
        .sum();
    eprintln!(
        "api.github.com.json: {} tools loaded in {elapsed:?} (this build; `cargo bench -p mcp-openapi --bench github` for release); \
         resident memory before {:?} KiB, after {:?} KiB, peak {:?} KiB; tool schemas {} KiB",
        service.tools().len(),
        rss_before,
        rss_after,
        peak,
        schema_bytes / 1024,
    );

    let raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut operations = 0;
    let mut long_ids = 0;
    for item in raw["paths"].as_object().unwrap().values() {
        for (method, op) in item.as_object().unwrap() {
            if [
                "get", "put", "post", "delete", "options", "head", "patch", "trace",
            ]
            .contains(&method.as_str())
            {
                operations += 1;
                let id = op["operationId"].as_str().unwrap();
                if id.len() > 64 {
                    long_ids += 1;
                    assert!(id.contains('/'));
                }
            }
        }
    }
    drop(raw);

    assert_eq!(operations, 1223, "the document changed: update this test");
    assert_eq!(long_ids, 25);
    let tools = service.tools();
    assert_eq!(tools.len(), operations, "every operation is a tool");

    let mut names = HashSet::new();
    let mut with_output = 0;
    for tool in tools {
        assert!(is_valid_tool_name(&tool.name), "{}", tool.name);
        assert!(names.insert(tool.name.clone()), "{} twice", tool.name);
        let input = tool.input_schema.to_value().unwrap();
        assert_eq!(input["type"], "object");
        jsonschema::draft202012::meta::validate(&input)
            .unwrap_or_else(|e| panic!("{}: inputSchema: {e}", tool.name));
        jsonschema::draft202012::new(&input)
            .unwrap_or_else(|e| panic!("{}: inputSchema does not compile: {e}", tool.name));
        if let Some(output) = &tool.output_schema {
            with_output += 1;
            let output = output.to_value().unwrap();
            assert_eq!(output["type"], "object");
            jsonschema::draft202012::new(&output)
                .unwrap_or_else(|e| panic!("{}: outputSchema does not compile: {e}", tool.name));
        }
    }
    eprintln!("{with_output} tools have an outputSchema");
    let suffixed = tools.iter().filter(|t| t.name.len() == 64).count();
    assert!(
        suffixed >= long_ids,
        "the long ids are cut with a hash suffix"
    );

    // Known names.
    assert!(service.tool("repos_get").is_some());
    let list_issues = service
        .tool("issues_list-for-repo")
        .expect("issues_list-for-repo");
    assert_eq!(
        list_issues
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint),
        Some(true)
    );
    let schema = list_issues.input_schema.to_value().unwrap();
    for required in ["owner", "repo"] {
        assert!(
            schema["required"]
                .as_array()
                .unwrap()
                .contains(&Value::from(required)),
            "{required}"
        );
    }
    let create = service.tool("issues_create").expect("issues_create");
    let schema = create.input_schema.to_value().unwrap();
    assert!(schema["properties"]["title"].is_object(), "body spread out");

    // Stable: a second load names every tool the same.
    let again = OpenApiService::load(config()).await.expect("loads again");
    let first: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let second: Vec<&str> = again.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(first, second);
}
