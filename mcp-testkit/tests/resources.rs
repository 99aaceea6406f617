//! Resources in both eras: listing (paginated), templates, reads (text,
//! blob, template matches, not found), cache hints, legacy subscriptions.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_testkit::{
    Behavior, CacheScope, CompletionSpec, ResourceSpec, ResourceTemplateSpec, Script, wire,
};
use serde_json::json;

fn files() -> Script {
    Script::dual()
        .resource(
            ResourceSpec::text("file:///notes.txt", "notes", "remember the milk").with(
                "annotations",
                json!({"audience": ["user"], "priority": 0.5}),
            ),
        )
        .resource(ResourceSpec::blob(
            "file:///logo.png",
            "logo",
            "image/png",
            "iVBORw0KGgo=",
        ))
        .resource(ResourceSpec::text("file:///third.txt", "third", "3"))
        .resource_template(
            ResourceTemplateSpec::new("file:///logs/{day}.txt", "logs", "log of {day}")
                .complete(CompletionSpec::new("day", ["monday", "tuesday"])),
        )
        .tool(
            "touch",
            Behavior::TouchResource {
                uri: "file:///notes.txt".into(),
            },
        )
}

#[tokio::test]
async fn legacy_lists_resources_in_pages_and_declares_the_capability() {
    let (mut client, _) = start(files().page_size(2));
    let init = client.initialize("2025-11-25").await;
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(init["result"]["capabilities"]["completions"], json!({}));
    let first = client.request("resources/list", json!({})).await;
    let result = &first["result"];
    assert_has_required("2025-11-25", "ListResourcesResult", result);
    assert_eq!(result["resources"].as_array().unwrap().len(), 2);
    assert_eq!(
        result["resources"][0],
        json!({"uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain",
               "size": 17, "annotations": {"audience": ["user"], "priority": 0.5}})
    );
    assert!(
        result.get("ttlMs").is_none(),
        "no cache hints in the legacy era"
    );
    let cursor = result["nextCursor"].clone();
    let second = client
        .request("resources/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(second["result"]["resources"][0]["uri"], "file:///third.txt");
    assert!(second["result"].get("nextCursor").is_none());
    let bad = client
        .request("resources/list", json!({"cursor": "page-9"}))
        .await;
    assert_eq!(bad["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn legacy_reads_text_blob_and_template_matches() {
    let (mut client, _) = legacy(files()).await;
    let text = client
        .request("resources/read", json!({"uri": "file:///notes.txt"}))
        .await;
    assert_eq!(
        text["result"]["contents"],
        json!([{"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "remember the milk"}])
    );
    let blob = client
        .request("resources/read", json!({"uri": "file:///logo.png"}))
        .await;
    assert_eq!(blob["result"]["contents"][0]["blob"], "iVBORw0KGgo=");
    assert!(blob["result"]["contents"][0].get("text").is_none());
    let templated = client
        .request("resources/read", json!({"uri": "file:///logs/monday.txt"}))
        .await;
    assert_eq!(templated["result"]["contents"][0]["text"], "log of monday");
    assert_eq!(
        templated["result"]["contents"][0]["uri"],
        "file:///logs/monday.txt"
    );
    let templates = client.request("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["result"]["resourceTemplates"],
        json!([{"uriTemplate": "file:///logs/{day}.txt", "name": "logs", "mimeType": "text/plain"}])
    );
}

#[tokio::test]
async fn an_unknown_uri_is_32002_in_legacy_and_32602_in_2026() {
    let (mut client, _) = legacy(files()).await;
    let legacy = client
        .request("resources/read", json!({"uri": "file:///nope"}))
        .await;
    assert_eq!(legacy["error"]["code"], wire::RESOURCE_NOT_FOUND);
    assert_eq!(legacy["error"]["data"], json!({"uri": "file:///nope"}));
    let modern = client
        .request("resources/read", modern(json!({"uri": "file:///nope"})))
        .await;
    assert_eq!(modern["error"]["code"], wire::INVALID_PARAMS);
    assert_eq!(modern["error"]["data"], json!({"uri": "file:///nope"}));
    let no_uri = client.request("resources/read", json!({})).await;
    assert_eq!(no_uri["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn modern_lists_and_reads_carry_cache_hints() {
    let (mut client, _) = start(files().cache_hints(60_000, CacheScope::Public));
    for (method, params, definition) in [
        ("resources/list", json!({}), "ListResourcesResult"),
        (
            "resources/templates/list",
            json!({}),
            "ListResourceTemplatesResult",
        ),
        (
            "resources/read",
            json!({"uri": "file:///notes.txt"}),
            "ReadResourceResult",
        ),
        ("tools/list", json!({}), "ListToolsResult"),
    ] {
        let reply = client.request(method, modern(params)).await;
        let result = &reply["result"];
        assert_has_required("2026-07-28", definition, result);
        assert_eq!(result["ttlMs"], 60_000, "{method}");
        assert_eq!(result["cacheScope"], "public", "{method}");
        assert_eq!(result["resultType"], "complete", "{method}");
    }
}

#[tokio::test]
async fn legacy_subscriptions_decide_who_hears_about_updates() {
    let (mut client, recorder) = legacy(files()).await;
    let touch = client.request("tools/call", call("touch", json!({}))).await;
    assert_eq!(text(&touch), "touched file:///notes.txt");
    assert!(
        client.skipped.is_empty(),
        "not subscribed: {:?}",
        client.skipped
    );

    let ok = client
        .request("resources/subscribe", json!({"uri": "file:///notes.txt"}))
        .await;
    assert_eq!(ok["result"], json!({}));
    client.request("tools/call", call("touch", json!({}))).await;
    assert_eq!(
        client.skipped,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": "file:///notes.txt"}})
        ]
    );
    client.skipped.clear();

    client
        .request("resources/unsubscribe", json!({"uri": "file:///notes.txt"}))
        .await;
    client.request("tools/call", call("touch", json!({}))).await;
    assert!(client.skipped.is_empty(), "{:?}", client.skipped);
    let sent = recorder.with_method("resources/subscribe");
    assert_eq!(sent[0]["params"], json!({"uri": "file:///notes.txt"}));
}

#[tokio::test]
async fn resources_without_the_capability_are_method_not_found() {
    let (mut client, _) = legacy(Script::legacy()).await;
    for method in ["resources/list", "resources/read", "resources/subscribe"] {
        let reply = client.request(method, json!({"uri": "file:///x"})).await;
        assert_eq!(reply["error"]["code"], wire::METHOD_NOT_FOUND, "{method}");
    }
    let (mut client, _) = start(Script::modern());
    let reply = client.request("resources/list", modern(json!({}))).await;
    assert_eq!(reply["error"]["code"], wire::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn subscribe_does_not_exist_in_2026() {
    let (mut client, _) = start(files());
    let reply = client
        .request(
            "resources/subscribe",
            modern(json!({"uri": "file:///notes.txt"})),
        )
        .await;
    assert_eq!(reply["error"]["code"], wire::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn resources_from_json_scripts_parse() {
    let script = Script::from_json(
        r#"{"resources": [{"uri": "file:///a", "name": "a", "text": "x", "size": 1}],
            "resource_templates": [{"uriTemplate": "db://{table}", "name": "t", "text": "rows of {table}"}]}"#,
    )
    .unwrap();
    let (mut client, _) = start(script);
    let reply = client
        .request("resources/read", modern(json!({"uri": "db://users"})))
        .await;
    assert_eq!(reply["result"]["contents"][0]["text"], "rows of users");
    let both = Script::from_json(
        r#"{"resources": [{"uri": "file:///a", "name": "a", "text": "x", "blob": "eA=="}]}"#,
    );
    assert!(both.is_err());
}
