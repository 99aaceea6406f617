//! The credential seam of the HTTP transports: a provider's failures reach
//! the session as `RequestFailure::Credentials` (and a connect as
//! `TransportError::CredentialSource`), configurable static headers, and a
//! host's own `reqwest::Client`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_testkit::{HttpFakeServer, HttpServerOptions, RunningHttpServer, Script};
use mcp_transport::{
    BoxFuture, Connection, Connector, CredentialProvider, CredentialTarget, HttpConfig,
    HttpConnector, Inbound, OutboundFrame, Refusal, RequestFailure, SseConnector, StaticHeader,
    TransportError,
};
use serde_json::{Value, json};

const LEGACY: &str = "2025-06-18";
const WAIT: Duration = Duration::from_secs(10);

/// The provider's own error; its text is what a host would log.
#[derive(Debug, thiserror::Error)]
#[error("the authorization server refused the grant")]
struct SourceFailed;

/// Hands out a header for the first `good` calls, then fails; answers a
/// 401 with `unauthorized` and remembers the challenge it saw.
#[derive(Debug)]
struct Scripted {
    good: usize,
    calls: AtomicUsize,
    unauthorized: Result<bool, ()>,
    challenges: std::sync::Mutex<Vec<Option<String>>>,
}

impl Scripted {
    fn new(good: usize, unauthorized: Result<bool, ()>) -> Self {
        Self {
            good,
            calls: AtomicUsize::new(0),
            unauthorized,
            challenges: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl CredentialProvider for Scripted {
    fn authorization<'a>(
        &'a self,
        _target: CredentialTarget<'a>,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let result = if call < self.good {
            Ok(vec![("Authorization".to_owned(), "Bearer fine".to_owned())])
        } else {
            Err(TransportError::CredentialSource(Box::new(SourceFailed)))
        };
        Box::pin(async move { result })
    }

    fn on_unauthorized<'a>(
        &'a self,
        refusal: Refusal<'a>,
    ) -> BoxFuture<'a, Result<bool, TransportError>> {
        self.challenges
            .lock()
            .unwrap()
            .push(refusal.www_authenticate.map(str::to_owned));
        let answer = self
            .unauthorized
            .map_err(|()| TransportError::CredentialSource(Box::new(SourceFailed)));
        Box::pin(async move { answer })
    }
}

fn initialize(id: i64) -> OutboundFrame {
    let params = json!({"protocolVersion": LEGACY, "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
    OutboundFrame::request(body.to_string(), id, "initialize".into())
}

async fn next(conn: &mut Connection) -> Inbound {
    tokio::time::timeout(WAIT, conn.inbound.recv())
        .await
        .expect("an inbound event in time")
        .expect("the connection is open")
}

async fn serve(options: HttpServerOptions) -> RunningHttpServer {
    HttpFakeServer::start(Script::legacy(), options)
        .await
        .expect("the HTTP fake server starts")
}

/// The first event must be the request's failure: a credential failure is
/// not reported as a refused frame.
async fn only_failure(conn: &mut Connection, id: i64) -> RequestFailure {
    match next(conn).await {
        Inbound::RequestFailed { id: got, failure } if got == id => failure,
        other => panic!("expected request {id} to fail, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_credential_source_fails_the_request_as_credentials() {
    let server = serve(HttpServerOptions::default()).await;
    // The connect's call succeeds; the request's fails.
    let provider = Arc::new(Scripted::new(1, Ok(false)));
    let config = HttpConfig::new(server.url()).credentials(provider);
    let mut conn = HttpConnector::new(config).connect().await.unwrap();
    conn.outbound.send(initialize(1)).await.unwrap();
    let failure = only_failure(&mut conn, 1).await;
    assert_eq!(failure, RequestFailure::Credentials);
    assert_eq!(failure.to_string(), "credentials could not be obtained");
    assert!(server.requests.posts_of("initialize").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_fails_after_a_401_fails_the_request_as_credentials() {
    let server = serve(HttpServerOptions::default().fail_with(401, &["initialize"])).await;
    let provider = Arc::new(Scripted::new(usize::MAX, Err(())));
    let config = HttpConfig::new(server.url()).credentials(provider.clone());
    let mut conn = HttpConnector::new(config).connect().await.unwrap();
    conn.outbound.send(initialize(1)).await.unwrap();
    assert_eq!(
        only_failure(&mut conn, 1).await,
        RequestFailure::Credentials
    );
    assert_eq!(provider.challenges.lock().unwrap().len(), 1);
    // Asked once: no second attempt without new credentials.
    assert_eq!(server.requests.posts_of("initialize").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_with_nothing_new_leaves_the_401_to_the_session() {
    let server = serve(HttpServerOptions::default().fail_with(401, &["initialize"])).await;
    let provider = Arc::new(Scripted::new(usize::MAX, Ok(false)));
    let config = HttpConfig::new(server.url()).credentials(provider);
    let mut conn = HttpConnector::new(config).connect().await.unwrap();
    conn.outbound.send(initialize(1)).await.unwrap();
    assert!(matches!(
        only_failure(&mut conn, 1).await,
        RequestFailure::Status { status: 401, .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_source_failure_at_connect_keeps_its_cause() {
    let server = serve(HttpServerOptions::default()).await;
    for sse in [false, true] {
        let config = HttpConfig::new(if sse { server.sse_url() } else { server.url() })
            .credentials(Arc::new(Scripted::new(0, Ok(false))));
        let err = if sse {
            SseConnector::new(config).connect().await.unwrap_err()
        } else {
            HttpConnector::new(config).connect().await.unwrap_err()
        };
        assert!(
            matches!(err, TransportError::CredentialSource(_)),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "could not obtain credentials for the server"
        );
        let cause = std::error::Error::source(&err).expect("a cause");
        assert!(cause.downcast_ref::<SourceFailed>().is_some());
    }
}

/// A variable that is surely set to legal header text in this process.
fn some_variable() -> (String, String) {
    std::env::vars()
        .find(|(_, v)| !v.trim().is_empty() && v.bytes().all(|b| (0x20..0x7f).contains(&b)))
        .expect("some printable environment variable")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_header_takes_any_header_and_prefix() {
    let server = serve(HttpServerOptions::default()).await;
    let (variable, value) = some_variable();
    let header = StaticHeader::new("X-Auth", "Token ", variable.as_str());
    assert_eq!(header.prefix(), "Token ");
    assert_eq!(header.header_name(), "X-Auth");
    let config = HttpConfig::new(server.url()).credentials(Arc::new(header));
    let mut conn = HttpConnector::new(config).connect().await.unwrap();
    conn.outbound.send(initialize(1)).await.unwrap();
    assert!(matches!(next(&mut conn).await, Inbound::Frame(_)));
    let init = server.requests.posts_of("initialize").remove(0);
    let expected = format!("Token {value}");
    assert_eq!(init.header("x-auth"), Some(expected.as_str()));
    assert_eq!(init.header("authorization"), None);
    assert_eq!(
        StaticHeader::from_env("X-Key", "V"),
        StaticHeader::new("X-Key", "", "V")
    );
    assert_eq!(
        StaticHeader::bearer_from_env("V"),
        StaticHeader::new("Authorization", "Bearer ", "V")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_client_carries_the_requests() {
    let server = serve(HttpServerOptions::default()).await;
    let mut defaults = reqwest::header::HeaderMap::new();
    defaults.insert("x-injected", "host-client".parse().unwrap());
    let client = reqwest::Client::builder()
        .default_headers(defaults)
        .build()
        .unwrap();
    let config = HttpConfig::new(server.url())
        .client(client)
        .header("X-Configured", "yes");
    assert!(format!("{config:?}").contains("injected_client: true"));
    let mut conn = HttpConnector::new(config).connect().await.unwrap();
    conn.outbound.send(initialize(1)).await.unwrap();
    match next(&mut conn).await {
        Inbound::Frame(bytes) => {
            let reply: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(reply["id"], 1);
        }
        other => panic!("expected the answer, got {other:?}"),
    }
    let init = server.requests.posts_of("initialize").remove(0);
    assert_eq!(init.header("x-injected"), Some("host-client"));
    // The transport's own settings still go with each request.
    assert_eq!(init.header("x-configured"), Some("yes"));
    assert!(
        init.header("user-agent")
            .is_some_and(|agent| agent.starts_with("mcp-transport/")),
        "{:?}",
        init.header("user-agent")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_client_does_not_lift_the_tls_rule() {
    let config = HttpConfig::new("http://example.com/mcp").client(reqwest::Client::new());
    let err = HttpConnector::new(config).connect().await.unwrap_err();
    assert!(matches!(err, TransportError::InsecureUrl { .. }), "{err:?}");
}
