//! Prompts and completion in both eras.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_testkit::{CompletionSpec, PromptSpec, ResourceTemplateSpec, Script, wire};
use serde_json::json;

fn review() -> PromptSpec {
    PromptSpec::new("review")
        .with("description", json!("Reviews code"))
        .argument("language", true)
        .argument("code", true)
        .argument("style", false)
        .message("user", "Review this {language} code:\n{code}")
        .message("assistant", "Style: {style}")
        .complete(CompletionSpec::new(
            "language",
            ["python", "pytorch", "rust", "ruby"],
        ))
        .complete(CompletionSpec::new("style", ["pep8", "black"]).when("language", "python"))
        .complete(CompletionSpec::new("style", ["rustfmt"]).when("language", "rust"))
}

fn script() -> Script {
    Script::dual()
        .prompt(review())
        .prompt(PromptSpec::new("plain"))
        .resource_template(
            ResourceTemplateSpec::new("repo://{owner}/{name}", "repos", "repo {owner}/{name}")
                .complete(CompletionSpec::new("owner", ["alice", "albert", "bob"]))
                .complete(CompletionSpec::new("name", ["tools"]).when("owner", "alice")),
        )
}

#[tokio::test]
async fn prompts_are_listed_and_rendered_from_arguments_in_both_eras() {
    let (mut client, _) = legacy(script()).await;
    let list = client.request("prompts/list", json!({})).await;
    assert_has_required("2025-11-25", "ListPromptsResult", &list["result"]);
    assert_eq!(list["result"]["prompts"][0]["name"], "review");
    assert_eq!(
        list["result"]["prompts"][0]["arguments"][0],
        json!({"name": "language", "required": true})
    );
    let args = json!({"name": "review", "arguments": {"language": "rust", "code": "fn main() {}"}});
    let got = client.request("prompts/get", args.clone()).await;
    assert_has_required("2025-11-25", "GetPromptResult", &got["result"]);
    assert_eq!(got["result"]["description"], "Reviews code");
    assert_eq!(
        got["result"]["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "Review this rust code:\nfn main() {}"}})
    );
    // An argument not given stays a placeholder.
    assert_eq!(
        got["result"]["messages"][1]["content"]["text"],
        "Style: {style}"
    );

    let modern_got = client.request("prompts/get", modern(args)).await;
    assert_has_required("2026-07-28", "GetPromptResult", &modern_got["result"]);
    assert_eq!(modern_got["result"]["resultType"], "complete");
    assert_eq!(modern_got["result"]["messages"], got["result"]["messages"]);
    let modern_list = client.request("prompts/list", modern(json!({}))).await;
    assert_has_required("2026-07-28", "ListPromptsResult", &modern_list["result"]);
}

#[tokio::test]
async fn a_prompt_without_messages_echoes_its_arguments() {
    let (mut client, _) = legacy(script()).await;
    let got = client
        .request(
            "prompts/get",
            json!({"name": "plain", "arguments": {"x": "1"}}),
        )
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        r#"Prompt plain with arguments {"x":"1"}"#
    );
}

#[tokio::test]
async fn missing_required_arguments_and_unknown_prompts_are_32602() {
    let (mut client, _) = legacy(script()).await;
    let missing = client
        .request(
            "prompts/get",
            json!({"name": "review", "arguments": {"language": "go"}}),
        )
        .await;
    assert_eq!(missing["error"]["code"], wire::INVALID_PARAMS);
    assert_eq!(missing["error"]["data"]["missing"], json!(["code"]));
    let unknown = client
        .request("prompts/get", modern(json!({"name": "nope"})))
        .await;
    assert_eq!(unknown["error"]["code"], wire::INVALID_PARAMS);
    let (mut bare, _) = legacy(Script::legacy()).await;
    let none = bare.request("prompts/list", json!({})).await;
    assert_eq!(none["error"]["code"], wire::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn completion_filters_prompt_values_by_prefix_and_context() {
    let (mut client, _) = legacy(script()).await;
    let prompt_ref = json!({"type": "ref/prompt", "name": "review"});
    let py = client
        .request(
            "completion/complete",
            json!({"ref": prompt_ref, "argument": {"name": "language", "value": "py"}}),
        )
        .await;
    assert_has_required("2025-11-25", "CompleteResult", &py["result"]);
    assert_eq!(
        py["result"]["completion"],
        json!({"values": ["python", "pytorch"], "total": 2, "hasMore": false})
    );
    let style = json!({"ref": prompt_ref, "argument": {"name": "style", "value": ""},
                       "context": {"arguments": {"language": "rust"}}});
    let rust = client.request("completion/complete", modern(style)).await;
    assert_eq!(rust["result"]["completion"]["values"], json!(["rustfmt"]));
    assert_eq!(rust["result"]["resultType"], "complete");
    let no_context = client
        .request(
            "completion/complete",
            json!({"ref": prompt_ref, "argument": {"name": "style", "value": ""}}),
        )
        .await;
    assert_eq!(no_context["result"]["completion"]["values"], json!([]));
    let unknown = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn completion_covers_template_variables() {
    let (mut client, _) = start(script());
    let template = json!({"type": "ref/resource", "uri": "repo://{owner}/{name}"});
    let owners = client
        .request(
            "completion/complete",
            modern(json!({"ref": template, "argument": {"name": "owner", "value": "al"}})),
        )
        .await;
    assert_eq!(
        owners["result"]["completion"]["values"],
        json!(["alice", "albert"])
    );
    let names = client
        .request(
            "completion/complete",
            modern(
                json!({"ref": template, "argument": {"name": "name", "value": "t"},
                          "context": {"arguments": {"owner": "alice"}}}),
            ),
        )
        .await;
    assert_eq!(names["result"]["completion"]["values"], json!(["tools"]));
}

#[tokio::test]
async fn completion_returns_at_most_100_values_with_has_more() {
    let values: Vec<String> = (0..150).map(|i| format!("v{i:03}")).collect();
    let script =
        Script::legacy().prompt(PromptSpec::new("many").complete(CompletionSpec::new("x", values)));
    let (mut client, _) = legacy(script).await;
    let reply = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "many"}, "argument": {"name": "x", "value": "v"}}),
        )
        .await;
    let completion = &reply["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["total"], 150);
    assert_eq!(completion["hasMore"], true);
    let (mut bare, _) = legacy(Script::legacy()).await;
    let none = bare
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "x"}}),
        )
        .await;
    assert_eq!(none["error"]["code"], wire::METHOD_NOT_FOUND);
}
