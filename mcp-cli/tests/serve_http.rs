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

/// The running gateway and the URL it logged.
struct Gateway {
    child: Child,
    url: String,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(config: &str) -> Gateway {
    let mut child = Command::new(MCP)
        .args(["--config", config, "serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.split("serving MCP (Streamable HTTP) on ").nth(1) {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the gateway logs its URL");
    Gateway { child, url }
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
