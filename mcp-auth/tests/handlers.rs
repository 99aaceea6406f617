//! The authorization handlers: the CLI's loopback listener (port as a lock,
//! `state` check, stray requests ignored, time-out) and the headless flow.

#[path = "support/fixture.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, AuthorizationHandler, AuthorizationRequest, AuthorizationResponse,
    HeadlessRedirectFlow, LoopbackBrowserFlow, OAuthConfig, OAuthProvider,
};
use mcp_transport::BoxFuture;
use support::{AsConfig, RsConfig, call, pair, refused};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends a raw GET to the loopback listener (retrying until it listens);
/// returns the status line.
async fn get(port: u16, target: &str) -> String {
    for _ in 0..100 {
        if let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut answer = String::new();
            s.read_to_string(&mut answer).await.unwrap();
            return answer.lines().next().unwrap_or_default().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nothing listens on {port}");
}

/// Opens a connection to the loopback listener (retrying until it listens).
async fn connect(port: u16) -> tokio::net::TcpStream {
    for _ in 0..100 {
        if let Ok(s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nothing listens on {port}");
}

fn request(port: u16) -> AuthorizationRequest {
    AuthorizationRequest::new(
        url::Url::parse("https://as.example.com/authorize?client_id=x").unwrap(),
        format!("http://127.0.0.1:{port}/callback"),
        "st-1",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loopback_listener_takes_only_its_callback_and_locks_the_port() {
    let port = free_port();
    let flow = LoopbackBrowserFlow::new()
        .port(port)
        .open_browser(false)
        .timeout(Duration::from_secs(10));
    assert_eq!(
        flow.redirect_uri(),
        format!("http://127.0.0.1:{port}/callback")
    );
    let waiting = {
        let flow = flow.clone();
        tokio::spawn(async move { flow.authorize(request(port)).await })
    };
    assert!(get(port, "/favicon.ico").await.contains("404"));
    // A second login on the same port is refused, not raced.
    let second = flow.authorize(request(port)).await.unwrap_err();
    assert!(matches!(second, AuthError::LoginInProgress { port: p } if p == port));
    // A callback for another login is answered and ignored.
    assert!(
        get(port, "/callback?code=stray&state=other")
            .await
            .contains("400")
    );
    assert!(
        get(
            port,
            "/callback?code=SEKRIT-c&state=st-1&iss=https%3A%2F%2Fas.example.com"
        )
        .await
        .contains("200")
    );
    let response = waiting.await.unwrap().unwrap();
    assert_eq!(response.code().unwrap().expose(), "SEKRIT-c");
    assert_eq!(response.iss(), Some("https://as.example.com"));
    assert!(!format!("{response:?}").contains("SEKRIT"));
}

/// Connections that send nothing (a browser's pre-connections) or stop
/// half-way, held open for the whole test, do not hold up the real
/// callback: it is answered, and the login completes, while they are still
/// open. (Served one after another, each would cost its read deadline
/// first: 40 s for these four before this change, longer than the 20 s
/// allowed here.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_do_not_hold_up_the_callback() {
    let port = free_port();
    let flow = LoopbackBrowserFlow::new()
        .port(port)
        .open_browser(false)
        .timeout(Duration::from_secs(120));
    let waiting = tokio::spawn(async move { flow.authorize(request(port)).await });
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(connect(port).await);
    }
    let mut slow = connect(port).await;
    slow.write_all(b"GET /callback?code=SEKRIT-slow&sta")
        .await
        .unwrap();
    idle.push(slow);

    let answered = tokio::time::timeout(
        Duration::from_secs(20),
        get(port, "/callback?code=SEKRIT-c&state=st-1"),
    )
    .await
    .expect("the callback is answered while idle connections are open");
    assert!(answered.contains("200"), "{answered}");
    let response = tokio::time::timeout(Duration::from_secs(20), waiting)
        .await
        .expect("the login completes while idle connections are open")
        .unwrap()
        .unwrap();
    assert_eq!(response.code().unwrap().expose(), "SEKRIT-c");
    // Held open until the login completed.
    drop(idle);
}

#[tokio::test]
async fn the_loopback_listener_gives_up_in_time() {
    let port = free_port();
    let flow = LoopbackBrowserFlow::new()
        .port(port)
        .open_browser(false)
        .timeout(Duration::from_millis(200));
    let err = flow.authorize(request(port)).await.unwrap_err();
    assert!(matches!(err, AuthError::AuthorizationTimedOut { .. }));
}

/// A "browser": the loopback flow plus a task that visits the URL and
/// follows the authorization server's redirect to the listener.
#[derive(Debug)]
struct Browser(LoopbackBrowserFlow);

impl AuthorizationHandler for Browser {
    fn redirect_uri(&self) -> String {
        self.0.redirect_uri()
    }

    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>> {
        let url = request.url().clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let _ = reqwest::get(url).await;
        });
        self.0.authorize(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_login_through_the_loopback_listener() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let port = free_port();
    let browser = Browser(LoopbackBrowserFlow::new().port(port).open_browser(false));
    let p = OAuthProvider::new(OAuthConfig::new(rs.url()), Arc::new(browser)).unwrap();
    p.login().await.unwrap();
    assert_eq!(call(&p, &rs.url(), "tools/list").await, 200);
    let registered = auth.log.to("/register")[0].json.clone().unwrap();
    assert_eq!(
        registered["redirect_uris"][0],
        format!("http://127.0.0.1:{port}/callback")
    );
    assert_eq!(registered["application_type"], "native");
}

#[tokio::test]
async fn the_headless_flow_refuses_a_redirect_elsewhere() {
    let (_auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    // The server redirects to the registered URI; a handler expecting
    // another one refuses the response.
    #[derive(Debug)]
    struct Liar(HeadlessRedirectFlow);
    impl AuthorizationHandler for Liar {
        fn redirect_uri(&self) -> String {
            self.0.redirect_uri()
        }
        fn authorize(
            &self,
            request: AuthorizationRequest,
        ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>> {
            let changed = AuthorizationRequest::new(
                request.url().clone(),
                "http://127.0.0.1:9/elsewhere",
                request.state(),
            );
            self.0.authorize(changed)
        }
    }
    let inner = HeadlessRedirectFlow::new(support::REDIRECT_URI).unwrap();
    let p = OAuthProvider::new(OAuthConfig::new(rs.url()), Arc::new(Liar(inner))).unwrap();
    assert!(matches!(
        Some(refused(&p, &rs.url(), "tools/list").await),
        Some(AuthError::RedirectMismatch)
    ));
}
