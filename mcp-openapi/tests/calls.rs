//! Calls against a small HTTP API on loopback (axum), checking the exact
//! requests it receives: path encoding, query styles, headers, cookies,
//! bodies, credentials (and that nothing reaches another origin), and the
//! results: JSON, text, images, blobs, error statuses, bounds, redirects,
//! cancellation and time-outs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_openapi::{
    CallFailure, CallOptions, CancellationToken, CredentialRef, DocumentConfig, Environment,
    Limits, OpenApiConfig, OpenApiService, SpecSource,
};
use mcp_types::{CallToolResult, ContentBlock, ErrorCause, JsonObject, ResourceContents};
use serde_json::{Value, json};

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    /// Path and query exactly as sent.
    target: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// A loopback server that records every request.
#[derive(Clone)]
struct Server {
    origin: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

struct AppState {
    seen: Arc<Mutex<Vec<Seen>>>,
    /// The petstore document served at `/spec/petstore.yaml`.
    spec: String,
    /// Where `/v1/redirect` sends the client.
    elsewhere: String,
}

impl Server {
    async fn start(spec: String, elsewhere: String) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(AppState {
            seen: seen.clone(),
            spec,
            elsewhere,
        });
        let app = Router::new().fallback(handle).with_state(state);
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Server { origin, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn last(&self) -> Seen {
        self.seen().last().cloned().expect("a request")
    }
}

async fn handle(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap()
        .to_vec();
    let target = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let headers = parts
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("?").to_owned()))
        .collect();
    let path = parts.uri.path().to_owned();
    state.seen.lock().unwrap().push(Seen {
        method: parts.method.as_str().to_owned(),
        target,
        headers,
        body: body.clone(),
    });
    let json = |status: StatusCode, value: Value| {
        (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            value.to_string(),
        )
            .into_response()
    };
    match (parts.method.as_str(), path.as_str()) {
        (_, "/spec/petstore.yaml") => (
            [(header::CONTENT_TYPE, "application/yaml")],
            state.spec.clone(),
        )
            .into_response(),
        ("GET", "/v1/pets") => json(StatusCode::OK, json!([{"id": 1, "name": "Rex"}])),
        ("POST", "/v1/pets") => {
            let mut pet: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            pet["id"] = json!(7);
            json(StatusCode::CREATED, pet)
        }
        ("GET", p) if p.ends_with("/photo") => (
            [(header::CONTENT_TYPE, "image/png")],
            vec![0x89u8, b'P', b'N', b'G', 0, 1, 2],
        )
            .into_response(),
        // Not as the document says: an id as text, a name missing.
        ("GET", "/v1/pets/odd") => json(StatusCode::OK, json!({"id": "seven", "tag": "x"})),
        ("GET", "/v1/pets/text") => {
            ([(header::CONTENT_TYPE, "text/plain")], "gone fishing").into_response()
        }
        ("GET", p) if p.starts_with("/v1/pets/") => {
            json(StatusCode::OK, json!({"id": 1, "name": "Rex", "tag": null}))
        }
        ("GET", p) if p.starts_with("/v1/files/") => (
            [(header::CONTENT_TYPE, "application/octet-stream")],
            vec![0u8, 1, 2, 255],
        )
            .into_response(),
        ("PUT", p) if p.starts_with("/v1/files/") => StatusCode::NO_CONTENT.into_response(),
        ("GET", p) if p.starts_with("/v1/grid/") => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "grid",
        )
            .into_response(),
        ("POST", "/v1/notes") => (
            [(header::CONTENT_TYPE, "text/plain")],
            format!("noted: {}", String::from_utf8_lossy(&body)),
        )
            .into_response(),
        ("GET", "/v1/big") => json(StatusCode::OK, json!({"data": "x".repeat(8 * 1024)})),
        ("GET", "/v1/fail") => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain")],
            format!("no such thing: {}", "x".repeat(10_000)),
        )
            .into_response(),
        ("GET", "/v1/redirect") => (
            StatusCode::FOUND,
            [(header::LOCATION, format!("{}/stolen", state.elsewhere))],
        )
            .into_response(),
        ("GET", "/v1/hop") => {
            (StatusCode::FOUND, [(header::LOCATION, "/v1/pets/9")]).into_response()
        }
        ("GET", "/v1/slow") => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            StatusCode::OK.into_response()
        }
        _ => Response::builder()
            .status(StatusCode::IM_A_TEAPOT)
            .body(Body::from("unexpected"))
            .unwrap(),
    }
}

/// The API under test, a watched server on another origin, and the
/// petstore document whose `servers` point at the latter.
struct Fixture {
    api: Server,
    elsewhere: Server,
}

impl Fixture {
    async fn start() -> Fixture {
        let elsewhere = Server::start(String::new(), String::new()).await;
        let spec =
            include_str!("fixtures/petstore.yaml").replace("{{ELSEWHERE}}", &elsewhere.origin);
        let api = Server::start(spec, elsewhere.origin.clone()).await;
        Fixture { api, elsewhere }
    }

    fn document(&self) -> DocumentConfig {
        DocumentConfig::new(
            SpecSource::Url(format!("{}/spec/petstore.yaml", self.api.origin)),
            format!("{}/v1", self.api.origin),
        )
        .credential(CredentialRef::env("api_key", "PETS_KEY"))
        .credential(CredentialRef::env("bearer", "PETS_TOKEN"))
        .credential(CredentialRef::basic("basic", "PETS_USER", "PETS_PASSWORD"))
        .credential(CredentialRef::env("session", "PETS_SESSION"))
        .credential(CredentialRef::env("query_key", "PETS_QUERY_KEY"))
        .credential(CredentialRef::env("oauth", "PETS_OAUTH"))
    }

    async fn service(&self) -> OpenApiService {
        self.service_with(Limits::default(), secrets()).await
    }

    async fn service_with(
        &self,
        limits: Limits,
        env: HashMap<&'static str, &'static str>,
    ) -> OpenApiService {
        let config = OpenApiConfig::new(vec![self.document()])
            .limits(limits)
            .environment(Environment::from_fn(move |name| {
                env.get(name).map(|v| (*v).to_owned())
            }));
        OpenApiService::load(config).await.expect("loads")
    }
}

fn secrets() -> HashMap<&'static str, &'static str> {
    HashMap::from([
        ("PETS_KEY", "key-canary-1"),
        ("PETS_TOKEN", "token-canary-2"),
        ("PETS_USER", "user"),
        ("PETS_PASSWORD", "password-canary-3"),
        ("PETS_SESSION", "session canary;4"),
        ("PETS_QUERY_KEY", "query&canary=5"),
        ("PETS_OAUTH", "oauth-canary-6"),
    ])
}

fn args(value: Value) -> JsonObject {
    value.as_object().cloned().expect("an object")
}

fn failure(result: &CallToolResult) -> Option<CallFailure> {
    assert_eq!(
        result.failed(),
        CallFailure::of(result).is_some(),
        "{result:?}"
    );
    CallFailure::of(result)
}

#[tokio::test]
async fn a_document_from_a_url_sends_its_calls_to_the_configured_base_only() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let result = service
        .call(
            "getPet",
            args(json!({"petId": "a b/c?d", "fields": ["x", "y z"], "X-Trace": "t1", "theme": "dark"})),
        )
        .await;
    assert_eq!(failure(&result), None, "{}", result.text());
    assert_eq!(
        result.structured_content,
        Some(json!({"id": 1, "name": "Rex", "tag": null}))
    );
    assert_eq!(
        serde_json::from_str::<Value>(&result.text()).unwrap()["name"],
        "Rex"
    );
    let seen = f.api.last();
    assert_eq!(seen.method, "GET");
    assert_eq!(seen.target, "/v1/pets/a%20b%2Fc%3Fd?fields=x,y%20z");
    assert_eq!(seen.headers["x-trace"], "t1");
    assert_eq!(seen.headers["cookie"], "theme=dark");
    assert_eq!(seen.headers["x-api-key"], "key-canary-1");
    assert_eq!(seen.headers["accept"], "application/json");
    assert!(!seen.headers.contains_key("authorization"));
    assert!(
        f.elsewhere.seen().is_empty(),
        "nothing goes where `servers` point"
    );
}

#[tokio::test]
async fn query_styles_and_basic_credentials() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let result = service
        .call(
            "listPets",
            args(json!({
                "tags": ["a", "b c"],
                "limit": 5,
                "filter": {"kind": "dog", "size": "s&m"},
                "color": ["red", "blue"]
            })),
        )
        .await;
    assert_eq!(failure(&result), None, "{}", result.text());
    // An array answer: text only (structured content is an object).
    assert_eq!(result.structured_content, None);
    assert_eq!(result.text(), r#"[{"id":1,"name":"Rex"}]"#);
    let seen = f.api.last();
    assert_eq!(
        seen.target,
        "/v1/pets?tags=a&tags=b%20c&limit=5&filter%5Bkind%5D=dog&filter%5Bsize%5D=s%26m&color=red|blue"
    );
    // user:password-canary-3
    assert_eq!(
        seen.headers["authorization"],
        "Basic dXNlcjpwYXNzd29yZC1jYW5hcnktMw=="
    );
    assert!(
        !seen.headers.contains_key("x-api-key"),
        "the operation's own security"
    );
}

#[tokio::test]
async fn json_bodies_with_a_clashing_name_and_extra_properties() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let result = service
        .call(
            "createPet",
            args(json!({"name": "q", "name_body": "Rex", "tag": null, "colour": "brown"})),
        )
        .await;
    assert_eq!(failure(&result), None, "{}", result.text());
    let seen = f.api.last();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.target, "/v1/pets?name=q");
    assert_eq!(seen.headers["content-type"], "application/json");
    assert_eq!(seen.headers["authorization"], "Bearer token-canary-2");
    let body: Value = serde_json::from_slice(&seen.body).unwrap();
    assert_eq!(body, json!({"name": "Rex", "tag": null, "colour": "brown"}));
    assert_eq!(result.structured_content.unwrap()["id"], 7);
}

#[tokio::test]
async fn binary_and_text_bodies_and_answers() {
    let f = Fixture::start().await;
    let service = f.service().await;

    let photo = service.call("getPhoto", args(json!({"petId": "1"}))).await;
    match &photo.content[..] {
        [ContentBlock::Image(image)] => {
            assert_eq!(image.mime_type, "image/png");
            assert_eq!(image.data, "iVBORwABAg==");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        !f.api.last().headers.contains_key("x-api-key"),
        "`security: []`"
    );

    let file = service
        .call("getFile", args(json!({"path": "dir/a.bin"})))
        .await;
    match &file.content[..] {
        [ContentBlock::Resource(resource)] => match &resource.resource {
            ResourceContents::Blob(blob) => {
                assert_eq!(blob.blob, "AAEC/w==");
                assert_eq!(blob.mime_type.as_deref(), Some("application/octet-stream"));
                assert!(blob.uri.ends_with("/v1/files/dir%2Fa.bin"), "{}", blob.uri);
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    let seen = f.api.last();
    assert_eq!(seen.target, "/v1/files/dir%2Fa.bin");
    assert_eq!(seen.headers["cookie"], "session=session%20canary%3B4");

    let stored = service
        .call("putFile", args(json!({"path": "x", "body": "AAEC/w=="})))
        .await;
    assert_eq!(failure(&stored), None, "{}", stored.text());
    assert!(stored.text().contains("204"));
    let seen = f.api.last();
    assert_eq!(seen.method, "PUT");
    assert_eq!(seen.target, "/v1/files/x?api_key=query%26canary%3D5");
    assert_eq!(seen.body, [0, 1, 2, 255]);
    assert_eq!(seen.headers["content-type"], "application/octet-stream");

    let note = service
        .call("post_notes", args(json!({"body": "hello"})))
        .await;
    assert_eq!(note.text(), "noted: hello");
    let seen = f.api.last();
    assert_eq!(seen.body, b"hello");
    assert_eq!(seen.headers["content-type"], "text/plain");

    let grid = service
        .call("getGrid", args(json!({"point": [1, 2]})))
        .await;
    assert_eq!(grid.text(), "grid");
    let seen = f.api.last();
    assert_eq!(seen.target, "/v1/grid/.1,2");
    assert_eq!(seen.headers["authorization"], "Bearer oauth-canary-6");
}

#[tokio::test]
async fn error_statuses_are_error_results_with_a_bounded_excerpt() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let result = service.call("fail", JsonObject::new()).await;
    assert_eq!(failure(&result), Some(CallFailure::HttpStatus));
    assert_eq!(CallFailure::status_of(&result), Some(404));
    let text = result.text();
    assert!(text.starts_with("GET /fail: HTTP 404 Not Found"), "{text}");
    assert!(text.contains("no such thing: xxx"));
    assert!(text.len() < 2300, "bounded: {} bytes", text.len());
    assert!(text.contains("the body goes on"));
}

#[tokio::test]
async fn an_answer_over_the_bound_is_a_named_failure() {
    let f = Fixture::start().await;
    let mut limits = Limits::default();
    limits.max_response_bytes = 4096;
    let service = f.service_with(limits, secrets()).await;
    let result = service.call("getBig", JsonObject::new()).await;
    assert_eq!(failure(&result), Some(CallFailure::ResponseTooLarge));
    assert!(result.text().contains("4096"), "{}", result.text());
}

#[tokio::test]
async fn redirects_to_another_origin_are_not_followed() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let result = service.call("redirectAway", JsonObject::new()).await;
    assert_eq!(failure(&result), Some(CallFailure::Redirect));
    assert_eq!(CallFailure::status_of(&result), Some(302));
    assert!(f.elsewhere.seen().is_empty(), "the credential stayed home");
    // Within the origin, a redirect is followed.
    let result = service.call("redirectHere", JsonObject::new()).await;
    assert_eq!(failure(&result), None, "{}", result.text());
    assert_eq!(f.api.last().target, "/v1/pets/9");
}

#[tokio::test]
async fn arguments_that_cannot_make_the_request_send_nothing() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let before = f.api.seen().len();
    let missing = service.call("getPet", JsonObject::new()).await;
    assert_eq!(failure(&missing), Some(CallFailure::InvalidArguments));
    assert!(missing.text().contains("`petId`"), "{}", missing.text());
    let unknown = service
        .call("getPet", args(json!({"petId": "1", "colour": "red"})))
        .await;
    assert_eq!(failure(&unknown), Some(CallFailure::InvalidArguments));
    assert!(unknown.text().contains("`colour`"), "{}", unknown.text());
    let nested = service
        .call("getPet", args(json!({"petId": "1", "X-Trace": [[1]]})))
        .await;
    assert_eq!(failure(&nested), Some(CallFailure::InvalidArguments));
    let not_base64 = service
        .call("putFile", args(json!({"path": "x", "body": "%%%"})))
        .await;
    assert_eq!(failure(&not_base64), Some(CallFailure::InvalidArguments));
    let unknown_tool = service.call("nope", JsonObject::new()).await;
    assert_eq!(failure(&unknown_tool), Some(CallFailure::UnknownTool));
    assert_eq!(f.api.seen().len(), before, "nothing was sent");
}

#[tokio::test]
async fn an_unset_credential_variable_is_named_and_nothing_is_sent() {
    let f = Fixture::start().await;
    let mut env = secrets();
    env.remove("PETS_KEY");
    let service = f.service_with(Limits::default(), env).await;
    let before = f.api.seen().len();
    let result = service.call("getPet", args(json!({"petId": "1"}))).await;
    assert_eq!(failure(&result), Some(CallFailure::MissingCredential));
    assert!(result.text().contains("`PETS_KEY`"), "{}", result.text());
    assert_eq!(f.api.seen().len(), before);
}

#[tokio::test]
async fn the_process_environment_is_read_by_default() {
    // PATH is set in any test environment; sent to loopback only.
    let path = std::env::var("PATH").expect("PATH is set");
    let f = Fixture::start().await;
    let doc = DocumentConfig::new(
        SpecSource::Inline(include_str!("fixtures/petstore.yaml").to_owned()),
        format!("{}/v1", f.api.origin),
    )
    .credential(CredentialRef::bearer_for_all("PATH"));
    let service = OpenApiService::load(OpenApiConfig::new(vec![doc]))
        .await
        .unwrap();
    let result = service.call("getPhoto", args(json!({"petId": "1"}))).await;
    assert_eq!(failure(&result), None, "{}", result.text());
    assert_eq!(
        f.api.last().headers["authorization"],
        format!("Bearer {path}")
    );
}

#[tokio::test]
async fn cancellation_and_time_outs_drop_the_request() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let result = service
        .call_with("slow", JsonObject::new(), &CallOptions::new().cancel(token))
        .await;
    assert_eq!(failure(&result), Some(CallFailure::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(5));

    let started = Instant::now();
    let result = service
        .call_with(
            "slow",
            JsonObject::new(),
            &CallOptions::new().timeout(Duration::from_millis(300)),
        )
        .await;
    assert_eq!(failure(&result), Some(CallFailure::TimedOut));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn an_unreachable_api_is_a_network_failure() {
    let f = Fixture::start().await;
    // A port nothing listens on: bind one, then let it go.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let doc = DocumentConfig::new(
        SpecSource::Inline(include_str!("fixtures/petstore.yaml").to_owned()),
        format!("http://{closed}/v1"),
    )
    .credential(CredentialRef::env("api_key", "PETS_KEY"));
    let env = secrets();
    let config = OpenApiConfig::new(vec![doc]).environment(Environment::from_fn(move |n| {
        env.get(n).map(|v| (*v).to_owned())
    }));
    let service = OpenApiService::load(config).await.unwrap();
    let result = service.call("getPet", args(json!({"petId": "1"}))).await;
    assert_eq!(failure(&result), Some(CallFailure::Network));
    assert!(!result.text().contains("canary"));
    drop(f);
}

#[tokio::test]
async fn secrets_never_appear_in_results_errors_or_debug() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let mut texts = Vec::new();
    for (tool, arguments) in [
        ("fail", json!({})),
        ("redirectAway", json!({})),
        ("getPet", json!({"petId": "1", "colour": 1})),
        ("putFile", json!({"path": "x", "body": "%%%"})),
        ("getPet", json!({"petId": "1"})),
    ] {
        let result = service.call(tool, args(arguments)).await;
        texts.push(format!("{result:?}"));
    }
    texts.push(format!("{service:?}"));
    texts.push(format!("{:?}", f.document()));
    texts.push(format!(
        "{:?}",
        OpenApiConfig::new(vec![f.document()]).environment(Environment::from_fn(|_| {
            Some("env-canary-7".to_owned())
        }))
    ));
    for text in texts {
        for canary in [
            "canary-1", "canary-2", "canary-3", "canary;4", "canary=5", "canary-6", "canary-7",
        ] {
            assert!(!text.contains(canary), "{canary} in {text}");
        }
    }
}

#[tokio::test]
async fn fused_documents_route_each_tool_to_its_own_base() {
    let f = Fixture::start().await;
    let other = Server::start(String::new(), String::new()).await;
    let small = json!({
        "openapi": "3.1.0",
        "info": {"title": "small", "version": "1"},
        "paths": {"/pets/{petId}": {"get": {
            "operationId": "getPet",
            "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}}],
            "responses": {"200": {"description": "ok"}}
        }}}
    })
    .to_string();
    let config = OpenApiConfig::new(vec![
        f.document().prefix("shop_"),
        DocumentConfig::new(SpecSource::Inline(small), format!("{}/api", other.origin))
            .prefix("small_"),
    ])
    .environment(Environment::from_fn(|n| {
        secrets().get(n).map(|v| (*v).to_owned())
    }));
    let service = OpenApiService::load(config).await.unwrap();
    assert!(service.tool("shop_getPet").is_some());
    assert!(service.tool("small_getPet").is_some());
    service
        .call("small_getPet", args(json!({"petId": 4})))
        .await;
    let seen = other.last();
    assert_eq!(seen.target, "/api/pets/4");
    assert!(
        !seen.headers.contains_key("x-api-key"),
        "the shop's credential stays with the shop"
    );
    let result = service
        .call("shop_getPet", args(json!({"petId": "4"})))
        .await;
    assert_eq!(failure(&result), None, "{}", result.text());
    assert_eq!(f.api.last().target, "/v1/pets/4");
}

/// A URL parser drops a `.` segment and climbs out of the one before a `..`,
/// so a path argument that makes one would reach an operation nobody allowed
/// (`/pets/../photo` is `/photo`). Such an argument is refused and nothing is
/// sent; dots inside a segment, and `%2e` typed by the caller (sent as
/// `%252e`), are just text.
#[tokio::test]
async fn a_path_argument_cannot_make_a_dot_segment() {
    let f = Fixture::start().await;
    let service = f.service().await;
    let before = f.api.seen().len();
    for (tool, arguments) in [
        ("getPhoto", json!({"petId": ".."})),
        ("getPhoto", json!({"petId": "."})),
        ("getFile", json!({"path": ".."})),
        // label style: an empty array is the prefix `.` alone
        ("getGrid", json!({"point": []})),
    ] {
        let result = service.call(tool, args(arguments.clone())).await;
        assert_eq!(
            failure(&result),
            Some(CallFailure::InvalidArguments),
            "{arguments}: {}",
            result.text()
        );
        assert!(
            result.text().contains("path segment"),
            "{arguments}: {}",
            result.text()
        );
    }
    assert_eq!(f.api.seen().len(), before, "nothing was sent");

    for (value, target) in [
        ("...", "/v1/pets/.../photo"),
        ("..x", "/v1/pets/..x/photo"),
        ("%2e%2e", "/v1/pets/%252e%252e/photo"),
    ] {
        let result = service
            .call("getPhoto", args(json!({"petId": value})))
            .await;
        assert_eq!(failure(&result), None, "{value}: {}", result.text());
        assert_eq!(f.api.last().target, target);
    }
}

/// Header parameters named like the headers the HTTP client writes itself
/// are not arguments: a caller's `Host` would send the request, credentials
/// included, to another site behind the same address; framing headers are
/// not the caller's to set. The document's other header parameter still is.
#[tokio::test]
async fn header_parameters_the_http_client_owns_are_not_arguments() {
    let api = Server::start(String::new(), String::new()).await;
    let headers = [
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Upgrade",
        "TE",
        "Expect",
        "Proxy-Authorization",
        "X-Trace",
    ];
    let parameters: Vec<Value> = headers
        .iter()
        .map(|name| json!({"name": name, "in": "header", "schema": {"type": "string"}}))
        .collect();
    let document = json!({
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/notes": {"post": {
            "operationId": "note",
            "parameters": parameters,
            "requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}},
            "responses": {"200": {"description": "ok"}}
        }}}
    });
    let config = OpenApiConfig::new(vec![DocumentConfig::new(
        SpecSource::Inline(document.to_string()),
        format!("{}/v1", api.origin),
    )]);
    let service = OpenApiService::load(config).await.expect("loads");
    let schema = service
        .tool("note")
        .expect("the tool")
        .input_schema
        .to_value()
        .unwrap();
    let keys: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["X-Trace", "body"]);

    let refused = service
        .call(
            "note",
            args(json!({"Host": "elsewhere.example", "body": "x"})),
        )
        .await;
    assert_eq!(failure(&refused), Some(CallFailure::InvalidArguments));
    let sent = service
        .call("note", args(json!({"X-Trace": "t1", "body": "hello"})))
        .await;
    assert_eq!(failure(&sent), None, "{}", sent.text());
    let seen = api.last();
    assert_eq!(
        seen.headers["host"],
        api.origin.trim_start_matches("http://")
    );
    assert_eq!(seen.headers["x-trace"], "t1");
    assert_eq!(seen.body, b"hello");
}

/// A success answer that is not what the document says the operation
/// returns cannot be served as structured content under the tool's
/// `outputSchema` (a client that checks it would refuse the whole result):
/// it is an `UnexpectedAnswer` failure naming where it differs, with the
/// answer itself as text. An answer as documented is structured.
#[tokio::test]
async fn an_answer_unlike_the_document_is_named_and_still_shown() {
    let f = Fixture::start().await;
    let service = f.service().await;
    assert!(service.tool("getPet").unwrap().output_schema.is_some());

    let fine = service.call("getPet", args(json!({"petId": "1"}))).await;
    assert_eq!(failure(&fine), None, "{}", fine.text());
    assert_eq!(fine.structured_content.as_ref().unwrap()["name"], "Rex");

    let odd = service.call("getPet", args(json!({"petId": "odd"}))).await;
    assert_eq!(failure(&odd), Some(CallFailure::UnexpectedAnswer));
    assert_eq!(CallFailure::UnexpectedAnswer.cause(), ErrorCause::Server);
    assert!(odd.structured_content.is_none());
    let text = odd.text();
    assert!(text.contains("GET /pets/{petId}"), "{text}");
    assert!(text.contains("not as its document says"), "{text}");
    assert!(text.contains("/id: "), "{text}");
    assert!(text.contains("\"name\""), "{text}");
    // The answer is there for the reader, after the explanation.
    assert!(text.contains(r#"{"id":"seven","tag":"x"}"#), "{text}");

    let prose = service.call("getPet", args(json!({"petId": "text"}))).await;
    assert_eq!(failure(&prose), Some(CallFailure::UnexpectedAnswer));
    assert!(prose.text().contains("gone fishing"), "{}", prose.text());
}
