//! The authorization handlers: the CLI's loopback listener (port as a lock,
//! `state` check, stray requests ignored, time-out) and the headless flow.

#[path = "support/fixture.rs"]
mod support;

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use mcp_auth::{
    AuthError, AuthorizationHandler, AuthorizationRequest, AuthorizationResponse,
    HeadlessRedirectFlow, LoopbackBrowserFlow, OAuthConfig, OAuthProvider,
};
use mcp_transport::BoxFuture;
use support::{AsConfig, RsConfig, call, pair, refused};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How long a test waits for something that should happen at once.
const WAIT: Duration = Duration::from_secs(10);

/// Polls `future` once.
async fn poll_once<F: Future + ?Sized>(mut future: Pin<&mut F>) -> Poll<F::Output> {
    std::future::poll_fn(move |cx| Poll::Ready(future.as_mut().poll(cx))).await
}

/// Runs `flow.authorize(request)` on its own task and returns once the
/// flow's listener is bound. Binding is the first thing the flow does, and
/// binding an IP literal needs no name lookup, so the login's first poll
/// binds the port: once that poll is over, connections are accepted (by the
/// kernel until the flow takes them) and need no retry.
async fn start_login(
    flow: LoopbackBrowserFlow,
    request: AuthorizationRequest,
) -> JoinHandle<Result<AuthorizationResponse, AuthError>> {
    let (bound_tx, bound_rx) = oneshot::channel();
    let login = tokio::spawn(async move {
        let mut login = flow.authorize(request);
        let first = poll_once(login.as_mut()).await;
        let _ = bound_tx.send(());
        match first {
            Poll::Ready(done) => done,
            Poll::Pending => login.await,
        }
    });
    tokio::time::timeout(WAIT, bound_rx)
        .await
        .expect("the login task was never polled")
        .expect("the login task ended before its first poll");
    login
}

/// Opens a connection to the loopback listener, which must be listening.
async fn connect(port: u16) -> tokio::net::TcpStream {
    tokio::time::timeout(WAIT, tokio::net::TcpStream::connect(("127.0.0.1", port)))
        .await
        .unwrap_or_else(|_| panic!("connecting to {port} took longer than {WAIT:?}"))
        .unwrap_or_else(|e| panic!("nothing listens on {port} although the login bound it: {e}"))
}

/// Sends a raw GET to the loopback listener; returns the status line.
async fn get(port: u16, target: &str) -> String {
    let mut s = connect(port).await;
    s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(WAIT, s.read_to_string(&mut answer))
        .await
        .unwrap_or_else(|_| panic!("no answer to GET {target} within {WAIT:?}"))
        .unwrap();
    answer.lines().next().unwrap_or_default().to_owned()
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
    let waiting = start_login(flow.clone(), request(port)).await;
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

/// A port taken by a connection (its local end), open or closed a moment
/// ago, is not a login in progress: the error says which it is.
#[tokio::test]
async fn a_port_held_by_a_connection_is_not_blamed_on_a_login() {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
    let (accepted, _) = server.accept().unwrap();
    let port = client.local_addr().unwrap().port();
    let flow = LoopbackBrowserFlow::new()
        .port(port)
        .open_browser(false)
        .timeout(WAIT);
    let open = flow.authorize(request(port)).await.unwrap_err();
    assert!(
        matches!(open, AuthError::LoopbackPortHeld { port: p } if p == port),
        "{open:?}"
    );
    assert!(!open.to_string().contains("another login"), "{open}");
    // The client closes first, so its end waits out TIME_WAIT and keeps the
    // port: still not a login.
    drop(client);
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut &accepted, &mut rest).unwrap();
    drop(accepted);
    let closed = flow.authorize(request(port)).await.unwrap_err();
    assert!(
        matches!(closed, AuthError::LoopbackPortHeld { port: p } if p == port),
        "{closed:?}"
    );
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
    let waiting = start_login(flow, request(port)).await;
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
/// follows the authorization server's redirect to the listener, started once
/// the listener is bound (the flow's first poll binds it, see
/// [`start_login`]). The visit goes to the test, which checks it.
#[derive(Debug)]
struct Browser {
    flow: LoopbackBrowserFlow,
    visits: mpsc::UnboundedSender<JoinHandle<reqwest::Result<reqwest::StatusCode>>>,
}

impl AuthorizationHandler for Browser {
    fn redirect_uri(&self) -> String {
        self.flow.redirect_uri()
    }

    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>> {
        let url = request.url().clone();
        let visits = self.visits.clone();
        let mut login = self.flow.authorize(request);
        Box::pin(async move {
            if let Poll::Ready(done) = poll_once(login.as_mut()).await {
                return done;
            }
            let visit = tokio::spawn(async move { Ok(reqwest::get(url).await?.status()) });
            let _ = visits.send(visit);
            login.await
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_login_through_the_loopback_listener() {
    let (auth, rs) = pair(AsConfig::default(), RsConfig::default()).await;
    let port = free_port();
    let (visits, mut visited) = mpsc::unbounded_channel();
    let browser = Browser {
        flow: LoopbackBrowserFlow::new().port(port).open_browser(false),
        visits,
    };
    let p = OAuthProvider::new(OAuthConfig::new(rs.url()), Arc::new(browser)).unwrap();
    p.login().await.unwrap();
    // The browser's visit ended on the listener's page.
    let visit = visited.try_recv().expect("the browser visited the URL");
    let status = tokio::time::timeout(WAIT, visit)
        .await
        .expect("the browser's visit ends")
        .unwrap()
        .expect("the browser's visit succeeds");
    assert_eq!(status, reqwest::StatusCode::OK);
    assert!(visited.try_recv().is_err(), "one visit");
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
