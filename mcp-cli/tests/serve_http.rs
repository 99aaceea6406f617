//! `mcp serve --http` through the binary: served on loopback to our own
//! session over Streamable HTTP in both eras, the URL logged on stderr;
//! exposure off loopback refused by name (TLS, a bearer token), a token
//! variable that is not set refused by name, the token never printed.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use mcp_session::{Negotiation, Session, SessionConfig};
use mcp_transport::{HttpConfig, HttpConnector};
use serde_json::json;
use support::*;

fn config(sandbox: &Sandbox) -> String {
    let servers = json!({"mcpServers": {"notes": script(json!({
        "versions": ["2025-11-25", "2026-07-28"],
        "tools": [
            {"name": "search", "inputSchema": {"type": "object"},
             "behavior": {"kind": "text", "text": "in notes"}}
        ]
    }))}});
    sandbox.write("servers.json", &servers.to_string());
    sandbox.path().join("servers.json").display().to_string()
}

/// The running gateway, the URL it logged, and every line of its stderr.
struct Gateway {
    child: Child,
    url: String,
    stderr: Arc<std::sync::Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Gateway {
    /// Every line the gateway wrote to stderr (once it has exited).
    fn stderr_lines(&mut self) -> Vec<String> {
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `mcp serve` as `command` says and waits for the URL it logs.
fn spawn(mut command: Command) -> Gateway {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&lines);
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.split("serving MCP (Streamable HTTP) on ").nth(1) {
                let _ = tx.send(url.trim().to_owned());
            }
            kept.lock().unwrap().push(line);
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the gateway logs its URL");
    Gateway {
        child,
        url,
        stderr: lines,
        reader: Some(reader),
    }
}

fn start(config: &str) -> Gateway {
    let mut command = Command::new(MCP);
    command.args(["--config", config, "serve", "--http", "127.0.0.1:0"]);
    spawn(command)
}

#[test]
fn serve_http_serves_our_session_in_both_eras_on_loopback_and_stops_on_a_signal() {
    let sandbox = Sandbox::new();
    let config = config(&sandbox);
    let mut gateway = start(&config);
    assert!(
        gateway.url.starts_with("http://127.0.0.1:"),
        "{}",
        gateway.url
    );
    assert!(gateway.url.ends_with("/mcp"), "{}", gateway.url);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for mode in [Negotiation::Legacy, Negotiation::Modern] {
            let connector = Arc::new(HttpConnector::new(HttpConfig::new(&gateway.url)));
            let session = Session::connect(
                connector,
                SessionConfig {
                    request_timeout: Duration::from_secs(30),
                    probe_timeout: Duration::from_secs(20),
                    ..SessionConfig::default()
                },
            )
            .await
            .unwrap()
            .negotiate(mode)
            .await
            .unwrap();
            let tools = session.list_tools().await.unwrap();
            let names: Vec<&str> = tools.tools().iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["search"], "{mode:?}");
            let found = session.call_tool("search", json!({})).await.unwrap();
            assert_eq!(found.text(), "in notes", "{mode:?}");
            session.close().await;
        }
    });
    let status = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = gateway.child.wait().unwrap();
    assert_eq!(exit.code(), Some(0));
}

#[test]
fn plain_or_unauthenticated_http_off_loopback_is_refused_by_name() {
    let sandbox = Sandbox::new();
    let config = config(&sandbox);
    let (code, _, stderr) = sandbox.run(&["--config", &config, "serve", "--http", "0.0.0.0:0"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("needs TLS (a certificate and key) and a bearer token"),
        "{stderr}"
    );

    let token = "tok-never-printed-4711";
    let out = sandbox
        .mcp()
        .env("GATEWAY_TOKEN", token)
        .args([
            "--config",
            &config,
            "serve",
            "--http",
            "0.0.0.0:0",
            "--token-env",
            "GATEWAY_TOKEN",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("needs TLS (a certificate and key);"),
        "{stderr}"
    );
    assert!(!stderr.contains(token), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(token));

    let (code, _, stderr) = sandbox.run(&[
        "--config",
        &config,
        "serve",
        "--http",
        "127.0.0.1:0",
        "--token-env",
        "MCP_TEST_UNSET_VARIABLE_0",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("--token-env MCP_TEST_UNSET_VARIABLE_0"),
        "{stderr}"
    );

    // A certificate without its key is a usage error of the flags.
    let (code, _, stderr) = sandbox.run(&[
        "--config",
        &config,
        "serve",
        "--http",
        "127.0.0.1:0",
        "--tls-cert",
        "cert.pem",
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--tls-key"), "{stderr}");
}

/// A test root and a certificate it signed for 127.0.0.1, written to
/// `root.pem`, `cert.pem` and `key.pem` in the sandbox.
fn tls_files(sandbox: &Sandbox) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let root_key = KeyPair::generate().unwrap();
    let mut root = CertificateParams::new(Vec::<String>::new()).unwrap();
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    root.distinguished_name
        .push(DnType::CommonName, "mcp-cli test root");
    let root_cert = root.self_signed(&root_key).unwrap();
    let issuer = Issuer::new(root, root_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    sandbox.write("root.pem", &root_cert.pem());
    sandbox.write("cert.pem", &leaf.pem());
    sandbox.write("key.pem", &leaf_key.serialize_pem());
}

/// `mcp serve --http ADDR` of the sandbox's configuration over TLS, the
/// token `token` in `GATEWAY_TOKEN`, with `extra` flags.
fn tls_gateway(sandbox: &Sandbox, token: &str, addr: &str, extra: &[&str]) -> Gateway {
    let config = config(sandbox);
    tls_files(sandbox);
    let path = |name: &str| sandbox.path().join(name).display().to_string();
    let mut command = Command::new(MCP);
    command
        .current_dir(sandbox.path())
        .env("XDG_CONFIG_HOME", sandbox.path().join("xdg"))
        .env("XDG_STATE_HOME", sandbox.path().join("state"))
        .env("GATEWAY_TOKEN", token)
        .args(["--config", &config, "serve", "--http", addr])
        .args([
            "--tls-cert",
            &path("cert.pem"),
            "--tls-key",
            &path("key.pem"),
        ])
        .args(["--token-env", "GATEWAY_TOKEN"])
        .args(extra);
    spawn(command)
}

#[test]
fn serve_http_over_tls_with_a_token_serves_our_cli_and_refuses_a_caller_without_it() {
    let sandbox = Sandbox::new();
    let token = "gateway-token-never-printed-0815";
    let path = |name: &str| sandbox.path().join(name).display().to_string();
    let mut gateway = tls_gateway(&sandbox, token, "127.0.0.1:0", &[]);
    assert!(
        gateway.url.starts_with("https://127.0.0.1:"),
        "{}",
        gateway.url
    );

    // Our CLI as the host: the root from SSL_CERT_FILE (the platform
    // verifier reads it), the token from the variable its entry names.
    sandbox.write(
        "client.json",
        &json!({"mcpServers": {"gateway": {"url": gateway.url, "token_env": "GATEWAY_TOKEN"}}})
            .to_string(),
    );
    // `mcp call gateway search` with this token and these roots.
    let call = |token: &str, roots: &str| {
        sandbox
            .mcp()
            .env("GATEWAY_TOKEN", token)
            .env("SSL_CERT_FILE", path(roots))
            .env("SSL_CERT_DIR", sandbox.path().join("no-such-dir"))
            .args([
                "--config",
                &path("client.json"),
                "call",
                "gateway",
                "search",
            ])
            .output()
            .unwrap()
    };
    let out = call(token, "root.pem");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("in notes"), "{stdout}");

    // Without the root the certificate is not trusted; without the token
    // the gateway refuses the caller, and says so without the token.
    let untrusted = call(token, "cert.pem");
    let stderr = String::from_utf8_lossy(&untrusted.stderr);
    assert_ne!(untrusted.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("certificate"), "{stderr}");
    let tokenless = call("wrong-token", "root.pem");
    let stderr = String::from_utf8_lossy(&tokenless.stderr);
    assert_ne!(tokenless.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains("wrong-token"), "{stderr}");

    let status = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(gateway.child.wait().unwrap().code(), Some(0));
    let lines = gateway.stderr_lines();
    assert!(lines.iter().any(|l| l.contains("https://127.0.0.1:")));
    for line in lines {
        assert!(!line.contains(token), "{line}");
    }
}

/// Off loopback, one address may hold `--peer-connections` connections:
/// one more is closed at once (a TLS peer hears nothing) and logged.
#[test]
fn serve_http_off_loopback_bounds_the_connections_of_one_address() {
    use std::io::Read;
    let sandbox = Sandbox::new();
    let mut gateway = tls_gateway(
        &sandbox,
        "gateway-token-0816",
        "0.0.0.0:0",
        &["--peer-connections", "1"],
    );
    let port = gateway
        .url
        .rsplit(':')
        .next()
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_owned();
    let address = format!("127.0.0.1:{port}");
    // The first holds this address's one place (its handshake pending).
    let _first = std::net::TcpStream::connect(&address).unwrap();
    let mut second = std::net::TcpStream::connect(&address).unwrap();
    // Well under the 10 s a handshake may take: closed at once, not then.
    second
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut heard = Vec::new();
    let read = second.read_to_end(&mut heard);
    assert!(read.is_ok(), "the second connection was closed: {read:?}");
    assert!(heard.is_empty(), "nothing is said before a TLS handshake");

    let status = Command::new("kill")
        .args(["-TERM", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    gateway.child.wait().unwrap();
    let lines = gateway.stderr_lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("too many connections from its address")),
        "{lines:#?}"
    );
}

/// A server whose tool list really changes at each of its first two
/// `change` calls, with a tool mirroring an argument in `Mcp-Param-Region`
/// and a resource that `touch` says changed.
fn changing_config(sandbox: &Sandbox) -> String {
    let servers = json!({"mcpServers": {"notes": script(json!({
        "versions": ["2025-11-25", "2026-07-28"],
        "tools": [
            {"name": "change", "inputSchema": {"type": "object"},
             "behavior": {"kind": "change_list", "list": "tools"}},
            {"name": "first", "inputSchema": {"type": "object"}, "appear_at_change": 1,
             "vanish_at_change": 2, "behavior": {"kind": "text", "text": "1"}},
            {"name": "second", "inputSchema": {"type": "object"}, "appear_at_change": 2,
             "behavior": {"kind": "text", "text": "2"}},
            {"name": "where", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}},
             "behavior": {"kind": "text", "text": "here"}},
            {"name": "touch", "inputSchema": {"type": "object"},
             "behavior": {"kind": "touch_resource", "uri": "file:///watched.txt"}}
        ],
        "resources": [{"uri": "file:///watched.txt", "name": "watched", "text": "w"}]
    }))}});
    sandbox.write("changing.json", &servers.to_string());
    sandbox.path().join("changing.json").display().to_string()
}

/// `mcp serve --http --adopt` on a free loopback port.
fn start_adopting(config: &str) -> Gateway {
    let mut command = Command::new(MCP);
    command.args([
        "--config",
        config,
        "serve",
        "--http",
        "127.0.0.1:0",
        "--adopt",
    ]);
    spawn(command)
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {}}"#;

/// A 2026-07-28 request over raw HTTP, with the headers it needs.
fn modern(
    http: &reqwest::Client,
    url: &str,
    id: i64,
    method: &str,
    mut params: serde_json::Value,
) -> reqwest::RequestBuilder {
    params["_meta"] = serde_json::from_str(META).unwrap();
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params["name"].as_str() {
        request = request.header("mcp-name", name);
    }
    request
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
}

/// Reads an event stream until a message with `method` arrives (bounded
/// only against a hang: the wait is for the event).
async fn until_method(stream: &mut reqwest::Response, seen: &mut String, method: &str) {
    let wanted = format!("\"method\":\"{method}\"");
    let wait = async {
        while !seen.contains(&wanted) {
            let chunk = stream
                .chunk()
                .await
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("no {method} on the stream: {seen}"));
    seen.clear();
}

#[test]
fn an_adopted_tool_change_reaches_an_open_listen_stream_each_time_it_changes() {
    let sandbox = Sandbox::new();
    let config = changing_config(&sandbox);
    let gateway = start_adopting(&config);
    runtime().block_on(async {
        let http = reqwest::Client::new();
        let filter = json!({"notifications": {"toolsListChanged": true}});
        let mut stream = modern(&http, &gateway.url, 1, "subscriptions/listen", filter)
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), 200);
        let mut seen = String::new();
        until_method(
            &mut stream,
            &mut seen,
            "notifications/subscriptions/acknowledged",
        )
        .await;
        for (id, name) in [(2, "first"), (3, "second")] {
            let changed = modern(
                &http,
                &gateway.url,
                id,
                "tools/call",
                json!({"name": "change"}),
            )
            .send()
            .await
            .unwrap();
            assert_eq!(changed.status(), 200);
            until_method(&mut stream, &mut seen, "notifications/tools/list_changed").await;
            let listed = modern(&http, &gateway.url, 10 + id, "tools/list", json!({}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(listed.contains(&format!("\"name\":\"{name}\"")), "{listed}");
        }
    });
}

#[test]
fn mcp_param_headers_are_checked_and_resource_updates_reach_a_subscribed_host() {
    let sandbox = Sandbox::new();
    let config = changing_config(&sandbox);
    let gateway = start_adopting(&config);
    runtime().block_on(async {
        let http = reqwest::Client::new();
        let call = json!({"name": "where", "arguments": {"region": "eu"}});
        let missing = modern(&http, &gateway.url, 1, "tools/call", call.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 400);
        let body: serde_json::Value = serde_json::from_str(&missing.text().await.unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32020, "{body}");
        let served = modern(&http, &gateway.url, 2, "tools/call", call)
            .header("mcp-param-region", "eu")
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), 200);

        // A legacy host subscribes; the server's update reaches it.
        let connector = Arc::new(HttpConnector::new(HttpConfig::new(&gateway.url)));
        let mut session = Session::connect(connector, SessionConfig::default())
            .await
            .unwrap()
            .negotiate(Negotiation::Legacy)
            .await
            .unwrap();
        let caps = session.server_capabilities().resources.clone();
        assert_eq!(caps.and_then(|r| r.subscribe), Some(true));
        let mut events = session.take_events().unwrap();
        session
            .subscribe_resource("file:///watched.txt")
            .await
            .unwrap();
        session.call_tool("touch", json!({})).await.unwrap();
        let heard = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                if let mcp_session::SessionEvent::Notification { method, params } =
                    events.next().await.expect("events go on")
                    && method == "notifications/resources/updated"
                {
                    return String::from_utf8(params.unwrap().to_vec()).unwrap();
                }
            }
        })
        .await
        .expect("the update in time");
        assert!(heard.contains("file:///watched.txt"), "{heard}");
        session.close().await;
    });
}
