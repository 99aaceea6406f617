//! An OpenAPI document behind the hub, through `OpenApiConnector`: the hub
//! cannot tell it from any other server. Its allow-list selects two
//! operations, a permission hides one, `max_content_bytes` refuses a large
//! response whole, and the approval hook sees an OpenAPI call (with its
//! `readOnlyHint`) like any other; the API sees exactly the requests that
//! were allowed.

use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::routing::get;
use mcp_hub::{
    Approval, ApprovalHook, ApprovalRequest, Authority, ContentLimit, DenyReason, Hub, HubConfig,
    HubError, Principal, ServerAuthority, ServerSpec,
};
use mcp_openapi::{DocumentConfig, OpenApiConfig, OpenApiConnector, SpecSource};
use mcp_transport::BoxFuture;
use serde_json::json;

/// What the API served, in order.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn paths(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

async fn api() -> (String, Seen) {
    let seen = Seen::default();
    let app = axum::Router::new()
        .route(
            "/items",
            get(|State(seen): State<Seen>| async move {
                seen.0.lock().unwrap().push("GET /items".into());
                axum::Json(json!({"items": ["a", "b"]}))
            })
            .post(|State(seen): State<Seen>| async move {
                seen.0.lock().unwrap().push("POST /items".into());
                axum::Json(json!({"created": true}))
            }),
        )
        .route(
            "/items/{id}",
            get(
                |State(seen): State<Seen>, Path(id): Path<String>| async move {
                    seen.0.lock().unwrap().push(format!("GET /items/{id}"));
                    axum::Json(json!({"id": id}))
                },
            )
            .delete(
                |State(seen): State<Seen>, Path(id): Path<String>| async move {
                    seen.0.lock().unwrap().push(format!("DELETE /items/{id}"));
                    axum::Json(json!({"deleted": id}))
                },
            ),
        )
        .route(
            "/big",
            get(|State(seen): State<Seen>| async move {
                seen.0.lock().unwrap().push("GET /big".into());
                axum::Json(json!({"data": "x".repeat(8 * 1024)}))
            }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, seen)
}

fn document() -> String {
    let id = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
    let object = json!({"content": {"application/json": {"schema": {"type": "object"}}}});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "items", "version": "1"},
        "paths": {
            "/items": {
                "get": {"operationId": "list_items", "responses": {"200": {"description": "ok", "content": object["content"]}}},
                "post": {"operationId": "create_item", "responses": {"200": {"description": "ok", "content": object["content"]}}}
            },
            "/items/{id}": {
                "get": {"operationId": "get_item", "parameters": id, "responses": {"200": {"description": "ok", "content": object["content"]}}},
                "delete": {"operationId": "delete_item", "parameters": id, "responses": {"200": {"description": "ok", "content": object["content"]}}}
            },
            "/big": {"get": {"operationId": "big", "responses": {"200": {"description": "ok", "content": object["content"]}}}}
        }
    })
    .to_string()
}

fn connector(base: &str) -> Arc<OpenApiConnector> {
    let document = DocumentConfig::new(SpecSource::Inline(document()), base);
    Arc::new(OpenApiConnector::new(OpenApiConfig::new(vec![document])))
}

fn exposed(hub: &Hub) -> Vec<String> {
    let mut names: Vec<String> = hub
        .namespace()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_list_and_a_permission_govern_openapi_tools_like_any_others() {
    let (base, seen) = api().await;
    let authority = Authority::named().with_server(
        "items",
        ServerAuthority::default()
            .tools(["list_items", "delete_item"])
            .tool_permission("delete_item", "items.write"),
    );
    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("items", connector(&base)))
        .authority(authority)
        .principal(Principal::new("reader"))
        .start()
        .await
        .unwrap();
    // Two operations selected; one of them needs a permission not granted.
    assert_eq!(exposed(&hub), ["list_items"]);
    let listed = hub.call("list_items", json!({})).await.unwrap();
    assert_eq!(
        listed.structured_content,
        Some(json!({"items": ["a", "b"]}))
    );
    for (tool, reason) in [
        ("get_item", DenyReason::NotAllowListed),
        ("delete_item", DenyReason::MissingPermission),
    ] {
        match hub
            .facade()
            .call_tool("items", tool, json!({"id": "1"}))
            .await
        {
            Err(HubError::Denied { reason: r, .. }) => assert_eq!(r, reason, "{tool}"),
            other => panic!("{tool}: {other:?}"),
        }
    }
    let writer = Principal::new("writer").grant("items.write");
    hub.set_principal(writer).unwrap();
    assert_eq!(exposed(&hub), ["delete_item", "list_items"]);
    hub.call("delete_item", json!({"id": "7"})).await.unwrap();
    // The API saw only what was allowed, as the document describes it.
    assert_eq!(seen.paths(), ["GET /items", "DELETE /items/7"]);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_over_max_content_bytes_is_refused_whole() {
    let (base, seen) = api().await;
    let hub = Hub::builder(HubConfig::default())
        .server(
            ServerSpec::new("items", connector(&base))
                .max_content_bytes(ContentLimit::new(4 * 1024).unwrap()),
        )
        .start()
        .await
        .unwrap();
    match hub.call("big", json!({})).await {
        Err(HubError::ContentTooLarge { limit, size, .. }) => {
            assert_eq!(limit, 4 * 1024);
            assert!(size > 8 * 1024, "{size}");
        }
        other => panic!("{other:?}"),
    }
    hub.call("get_item", json!({"id": "x"})).await.unwrap();
    assert_eq!(seen.paths(), ["GET /big", "GET /items/x"]);
    hub.shutdown().await;
}

/// Refuses anything not marked read-only; records what it saw.
#[derive(Debug, Default)]
struct ReadOnlyHost {
    seen: Mutex<Vec<(String, Option<bool>)>>,
}

impl ApprovalHook for ReadOnlyHost {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let read_only = request.annotations.and_then(|a| a.read_only_hint);
        self.seen
            .lock()
            .unwrap()
            .push((request.tool.to_owned(), read_only));
        Box::pin(async move {
            if read_only == Some(true) {
                Approval::Approve
            } else {
                Approval::Deny
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_hook_sees_an_openapi_call_like_any_other() {
    let (base, seen) = api().await;
    let host = Arc::new(ReadOnlyHost::default());
    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("items", connector(&base)))
        .approval(host.clone())
        .start()
        .await
        .unwrap();
    let err = hub.call("create_item", json!({})).await.unwrap_err();
    assert!(matches!(err, HubError::NotApproved { .. }), "{err:?}");
    hub.call("list_items", json!({})).await.unwrap();
    assert_eq!(
        host.seen.lock().unwrap().clone(),
        [
            ("create_item".to_owned(), None),
            ("list_items".to_owned(), Some(true))
        ]
    );
    assert_eq!(
        seen.paths(),
        ["GET /items"],
        "the refused call sent nothing"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_that_cannot_be_loaded_fails_its_server_by_name() {
    let document = DocumentConfig::new(
        SpecSource::File("/surely/not/here/openapi.json".into()),
        "http://127.0.0.1:9",
    );
    let connector = Arc::new(OpenApiConnector::new(OpenApiConfig::new(vec![document])));
    let err = mcp_transport::Connector::connect(connector.as_ref())
        .await
        .unwrap_err();
    assert!(
        matches!(err, mcp_transport::TransportError::InProcess { .. }),
        "{err:?}"
    );
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.contains("/surely/not/here/openapi.json"), "{cause}");
    assert_eq!(err.cause(), mcp_types::ErrorCause::Configuration);
}
