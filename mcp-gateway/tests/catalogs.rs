//! Resources, templates, prompts and completion of every server through
//! the gateway, each named with its server; allow-lists on them; log
//! messages labelled with their server.

#[path = "support/common.rs"]
mod common;

use std::collections::BTreeMap;

use common::*;
use mcp_hub::{Authority, ServerAuthority};
use mcp_testkit::{
    Behavior, CompletionSpec, PromptSpec, ResourceSpec, ResourceTemplateSpec, Script,
};
use mcp_types::{CompletionReference, PromptReference, ResourceTemplateReference, error_codes};
use serde_json::json;

/// Two servers offering the same URI and the same prompt name.
fn with_catalog(server: &str, page: usize) -> Script {
    Script::legacy()
        .tool("noop", Behavior::Text { text: "ok".into() })
        .resource(ResourceSpec::text(
            "file:///readme.txt",
            "readme",
            &format!("{server} readme"),
        ))
        .resource(ResourceSpec::text("file:///secret.txt", "secret", "hidden"))
        .resource(ResourceSpec::text(
            &format!("{server}://only"),
            "only",
            "one",
        ))
        .resource_template(
            ResourceTemplateSpec::new("file:///{name}", "any file", "a file")
                .complete(CompletionSpec::new("name", ["alpha", "beta", "albert"])),
        )
        .prompt(
            PromptSpec::new("greet")
                .argument("who", true)
                .message("user", &format!("{server} greets {{who}}"))
                .complete(CompletionSpec::new("who", ["ada", "alan", "bob"])),
        )
        .page_size(page)
}

#[tokio::test]
async fn every_servers_catalogue_is_served_under_its_server_and_read_back_exactly() {
    let (notes, _) = memory(with_catalog("notes", 2));
    let (files, _) = memory(with_catalog("files", 10));
    let running = start(Setup::new(vec![spec("notes", notes), spec("files", files)])).await;
    let host = &running.host;

    // One listing spanning both servers, page by page.
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = host.list_resources_page(cursor.as_deref()).await.unwrap();
        uris.extend(page.items.iter().map(|r| r.uri.clone()));
        pages += 1;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert!(pages >= 3, "notes pages by two: {pages} pages");
    assert_eq!(
        uris,
        [
            "mcp-gateway://notes/file:///readme.txt",
            "mcp-gateway://notes/file:///secret.txt",
            "mcp-gateway://notes/notes://only",
            "mcp-gateway://files/file:///readme.txt",
            "mcp-gateway://files/file:///secret.txt",
            "mcp-gateway://files/files://only",
        ]
    );
    let read = host
        .read_resource("mcp-gateway://files/file:///readme.txt")
        .await
        .unwrap();
    let text = serde_json::to_value(&read.contents).unwrap();
    assert_eq!(text[0]["text"], "files readme");
    assert_eq!(text[0]["uri"], "mcp-gateway://files/file:///readme.txt");
    // A server's own URI is read from the one server that lists it; one
    // that two servers list must be named through its server; one that no
    // server lists is not found, by code.
    let bare = host.read_resource("notes://only").await.unwrap();
    let bare = serde_json::to_value(&bare.contents).unwrap();
    assert_eq!(bare[0]["text"], "one");
    assert_eq!(bare[0]["uri"], "mcp-gateway://notes/notes://only");
    let two = host.read_resource("file:///readme.txt").await.unwrap_err();
    assert_eq!(two.code(), Some(error_codes::INVALID_PARAMS), "{two:?}");
    assert!(format!("{two:?}").contains("notes, files"), "{two:?}");
    // Both servers' `file:///{name}` make this one: refused the same way.
    let made_by_two = host.read_resource("file:///anything").await.unwrap_err();
    assert_eq!(made_by_two.code(), Some(error_codes::INVALID_PARAMS));
    let unknown = host.read_resource("nowhere://at/all").await.unwrap_err();
    assert!(
        matches!(unknown, mcp_session::SessionError::ResourceNotFound { .. }),
        "{unknown:?}"
    );

    let templates = host.list_resource_templates().await.unwrap();
    let templates: Vec<String> = templates
        .items
        .iter()
        .map(|t| t.uri_template.clone())
        .collect();
    assert_eq!(
        templates,
        [
            "mcp-gateway://notes/file:///{name}",
            "mcp-gateway://files/file:///{name}"
        ]
    );
    let through_template = host
        .read_resource("mcp-gateway://notes/file:///anything")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&through_template.contents).unwrap()[0]["text"],
        "a file"
    );

    let prompts = host.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.items.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["notes/greet", "files/greet"]);
    let greeting = host
        .get_prompt("files/greet", [("who", "ada")])
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&greeting.messages).unwrap()[0]["content"]["text"],
        "files greets ada"
    );

    // A bare prompt name two servers offer is refused, naming both.
    let two = host
        .get_prompt("greet", [("who", "ada")])
        .await
        .unwrap_err();
    assert_eq!(two.code(), Some(error_codes::INVALID_PARAMS), "{two:?}");
    assert!(format!("{two:?}").contains("notes, files"), "{two:?}");
    let none = host
        .get_prompt("nobody/greet", [("who", "ada")])
        .await
        .unwrap_err();
    assert_eq!(none.code(), Some(error_codes::INVALID_PARAMS), "{none:?}");

    let prompt = CompletionReference::Prompt(PromptReference {
        name: "notes/greet".into(),
        ..Default::default()
    });
    let done = host
        .complete(prompt, "who", "a", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["ada", "alan"]);
    let template = CompletionReference::ResourceTemplate(ResourceTemplateReference {
        uri: "mcp-gateway://files/file:///{name}".into(),
        ..Default::default()
    });
    let done = host
        .complete(template, "name", "al", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["alpha", "albert"]);
    running.close().await;
}

#[tokio::test]
async fn a_bare_prompt_name_one_server_offers_is_served_by_it() {
    let script = with_catalog("notes", 10).prompt(
        PromptSpec::new("docs/intro")
            .argument("who", false)
            .message("user", "an introduction"),
    );
    let (notes, recorder) = memory(script);
    let running = start(Setup::new(vec![spec("notes", notes)])).await;
    let host = &running.host;
    let greeting = host.get_prompt("greet", [("who", "ada")]).await.unwrap();
    assert_eq!(
        serde_json::to_value(&greeting.messages).unwrap()[0]["content"]["text"],
        "notes greets ada"
    );
    // A URI the one server's template makes is read from it.
    let made = host.read_resource("file:///anything").await.unwrap();
    assert_eq!(
        serde_json::to_value(&made.contents).unwrap()[0]["text"],
        "a file"
    );
    // A name with a slash whose first part is no server is a bare name too.
    let intro = host.get_prompt("docs/intro", [("who", "x")]).await.unwrap();
    assert_eq!(
        serde_json::to_value(&intro.messages).unwrap()[0]["content"]["text"],
        "an introduction"
    );
    let done = host
        .complete(
            CompletionReference::Prompt(PromptReference {
                name: "greet".into(),
                ..Default::default()
            }),
            "who",
            "a",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["ada", "alan"]);
    // The server was asked by its own names.
    let asked: Vec<String> = recorder
        .with_method("prompts/get")
        .iter()
        .map(|f| f["params"]["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(asked, ["greet", "docs/intro"]);
    running.close().await;
}

#[tokio::test]
async fn the_search_for_a_bare_names_server_reads_a_bounded_number_of_pages() {
    // Five servers of 20 prompts each, one per page: 100 pages to read for
    // a name only the last server has, more than the search may.
    let mut servers = Vec::new();
    let mut recorders = Vec::new();
    for i in 0..5 {
        let mut script = Script::legacy()
            .tool("noop", Behavior::Text { text: "ok".into() })
            .page_size(1);
        for p in 0..20 {
            script = script.prompt(PromptSpec::new(&format!("p{i}_{p}")).message("user", "hi"));
        }
        let (server, recorder) = memory(script);
        servers.push(spec(&format!("s{i}"), server));
        recorders.push(recorder);
    }
    let running = start(Setup::new(servers)).await;
    let host = &running.host;
    let empty: [(&str, &str); 0] = [];
    // On the first server: found.
    host.get_prompt("p0_3", empty).await.unwrap();
    let before: usize = recorders
        .iter()
        .map(|r| r.with_method("prompts/list").len())
        .sum();
    // Only on the last: past the bound, so not found, and at most 64 pages
    // were asked for.
    let missed = host.get_prompt("p4_19", empty).await.unwrap_err();
    assert_eq!(missed.code(), Some(error_codes::INVALID_PARAMS));
    let after: usize = recorders
        .iter()
        .map(|r| r.with_method("prompts/list").len())
        .sum();
    assert!(after - before <= 64, "{} pages read", after - before);
    assert!(
        after - before >= 48,
        "the search went on: {} pages",
        after - before
    );
    // Named through its server it is served.
    host.get_prompt("s4/p4_19", empty).await.unwrap();
    running.close().await;
}

#[tokio::test]
async fn the_allow_lists_hold_for_resources_prompts_and_their_completion() {
    let (notes, recorder) = memory(with_catalog("notes", 10));
    let mut setup = Setup::new(vec![spec("notes", notes)]);
    setup.authority = Authority::named().with_server(
        "notes",
        ServerAuthority::default()
            .resources(["file:///readme.txt"])
            .prompts(Vec::<String>::new()),
    );
    let running = start(setup).await;
    let host = &running.host;
    let resources = host.list_resources().await.unwrap();
    let uris: Vec<&str> = resources.items.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["mcp-gateway://notes/file:///readme.txt"]);
    let denied = host
        .read_resource("mcp-gateway://notes/file:///secret.txt")
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Some(error_codes::INVALID_PARAMS));
    assert!(host.list_prompts().await.unwrap().items.is_empty());
    let prompt = host
        .get_prompt("notes/greet", [("who", "x")])
        .await
        .unwrap_err();
    assert_eq!(prompt.code(), Some(error_codes::INVALID_PARAMS));
    let completion = host
        .complete(
            CompletionReference::Prompt(PromptReference {
                name: "notes/greet".into(),
                ..Default::default()
            }),
            "who",
            "a",
            BTreeMap::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(completion.code(), Some(error_codes::INVALID_PARAMS));
    // Nothing refused was asked of the server.
    for method in ["prompts/get", "completion/complete"] {
        assert!(recorder.with_method(method).is_empty(), "{method}");
    }
    assert!(
        recorder
            .with_method("resources/read")
            .iter()
            .all(|f| f["params"]["uri"] == "file:///readme.txt")
    );
    running.close().await;
}

#[tokio::test]
async fn a_servers_log_messages_reach_the_host_labelled_with_it() {
    let script = Script::legacy()
        .tool(
            "chatter",
            Behavior::Log {
                level: "debug".into(),
                message: json!("noise"),
                logger: None,
            },
        )
        .tool(
            "work",
            Behavior::Log {
                level: "warning".into(),
                message: json!("disk almost full"),
                logger: Some("disk".into()),
            },
        );
    let (server, _) = memory(script);
    let setup = Setup::new(vec![
        spec("store", server).log_level(mcp_types::LoggingLevel::Debug),
    ]);
    let mut running = start(setup).await;
    running
        .host
        .set_log_level(mcp_types::LoggingLevel::Info)
        .await
        .unwrap();
    // Below the host's level: not passed on (the server sends both, in
    // order, so the first the host hears is the second).
    running.host.call_tool("chatter", json!({})).await.unwrap();
    running.host.call_tool("work", json!({})).await.unwrap();
    let params = heard(&mut running.events, "notifications/message")
        .await
        .unwrap();
    let message: serde_json::Value = serde_json::from_slice(&params).unwrap();
    assert_eq!(message["logger"], "store/disk");
    assert_eq!(message["level"], "warning");
    assert_eq!(message["data"], "disk almost full");
    running.close().await;
}

#[tokio::test]
async fn each_http_host_hears_the_servers_log_messages_at_its_own_level() {
    let log = |level: &str, message: &str| Behavior::Log {
        level: level.into(),
        message: json!(message),
        logger: None,
    };
    let script = Script::legacy()
        .tool("warn", log("warning", "disk almost full"))
        .tool("fail", log("error", "disk full"));
    let (server, _) = memory(script);
    let gateway = HttpGateway::unrestricted(vec![
        spec("store", server).log_level(mcp_types::LoggingLevel::Debug),
    ])
    .await;
    let (quiet, mut quiet_events) = gateway.host(mcp_session::Negotiation::Legacy).await;
    let (chatty, mut chatty_events) = gateway.host(mcp_session::Negotiation::Legacy).await;
    quiet
        .set_log_level(mcp_types::LoggingLevel::Error)
        .await
        .unwrap();
    chatty
        .set_log_level(mcp_types::LoggingLevel::Info)
        .await
        .unwrap();
    // One host's level is its own: the warning reaches the host that asked
    // for info, not the one that asked for errors only (the first message
    // it hears is the error that follows).
    quiet.call_tool("warn", json!({})).await.unwrap();
    quiet.call_tool("fail", json!({})).await.unwrap();
    let data = |params: Vec<u8>| {
        let message: serde_json::Value = serde_json::from_slice(&params).unwrap();
        assert_eq!(message["logger"], "store");
        message["data"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        data(
            heard(&mut chatty_events, "notifications/message")
                .await
                .unwrap()
        ),
        "disk almost full"
    );
    assert_eq!(
        data(
            heard(&mut chatty_events, "notifications/message")
                .await
                .unwrap()
        ),
        "disk full"
    );
    assert_eq!(
        data(
            heard(&mut quiet_events, "notifications/message")
                .await
                .unwrap()
        ),
        "disk full"
    );
    quiet.close().await;
    chatty.close().await;
    gateway.stop().await;
}

/// A server of ours (on the server half) whose tool answers with a link to
/// one of its resources and the resource embedded.
struct Linker;

impl mcp_server::ServerHandler for Linker {
    fn capabilities(&self) -> mcp_types::ServerCapabilities {
        mcp_types::ServerCapabilities {
            tools: Some(Default::default()),
            resources: Some(Default::default()),
            ..Default::default()
        }
    }

    fn list_tools(
        &self,
        _cursor: Option<mcp_types::Cursor>,
        _ctx: mcp_server::RequestContext,
    ) -> mcp_server::BoxFuture<'_, mcp_server::HandlerResult<mcp_types::ListToolsResult>> {
        Box::pin(async {
            Ok(serde_json::from_value(json!({"tools": [
                {"name": "find", "inputSchema": {"type": "object"}}
            ]}))
            .unwrap())
        })
    }

    fn call_tool(
        &self,
        _params: mcp_types::CallToolParams,
        _ctx: mcp_server::RequestContext,
    ) -> mcp_server::BoxFuture<'_, mcp_server::HandlerResult<mcp_types::CallToolResult>> {
        Box::pin(async {
            Ok(serde_json::from_value(json!({"content": [
                {"type": "resource_link", "uri": "file:///found.txt", "name": "found"},
                {"type": "resource", "resource": {"uri": "file:///found.txt", "text": "inline"}},
            ]}))
            .unwrap())
        })
    }

    fn read_resource(
        &self,
        params: mcp_types::ReadResourceParams,
        _ctx: mcp_server::RequestContext,
    ) -> mcp_server::BoxFuture<'_, mcp_server::HandlerResult<mcp_types::ReadResourceResult>> {
        Box::pin(async move {
            Ok(serde_json::from_value(json!({"contents": [
                {"uri": params.uri, "text": "found it"}
            ]}))
            .unwrap())
        })
    }
}

#[tokio::test]
async fn the_resource_links_in_a_tools_result_are_given_the_uris_the_host_reads_them_by() {
    let connector = mcp_transport::MemoryConnector::new(|end| {
        tokio::spawn(mcp_server::serve(
            end.input,
            end.output,
            std::sync::Arc::new(Linker),
            mcp_server::ServerConfig::new("linker", "1.0"),
        ));
    });
    let running = start(Setup::new(vec![spec(
        "links",
        std::sync::Arc::new(connector),
    )]))
    .await;
    let result = running.host.call_tool("find", json!({})).await.unwrap();
    let content = serde_json::to_value(&result.content).unwrap();
    let link = content[0]["uri"].as_str().unwrap().to_owned();
    assert_eq!(link, "mcp-gateway://links/file:///found.txt");
    assert_eq!(
        content[1]["resource"]["uri"],
        "mcp-gateway://links/file:///found.txt"
    );
    let read = running.host.read_resource(&link).await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap()[0]["text"],
        "found it"
    );
    running.close().await;
}
