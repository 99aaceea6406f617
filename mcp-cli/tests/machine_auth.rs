//! The machine grants through the binary, end to end on 127.0.0.1: a
//! server entry's `auth` object names the grant and the sources of its
//! secrets; `mcp login` obtains tokens without a browser, `mcp call` uses
//! the stored ones and, once they expire, requests new ones by itself.
//! Each grant runs against mcp-auth's fake machine authorization server
//! (its `tests/support/machine.rs`), whose MCP endpoint forwards to the
//! testkit's HTTP server. No secret is ever printed, and `auth` takes only
//! references to secrets.

#[path = "../../mcp-auth/tests/support/machine.rs"]
mod machine;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use machine::{ClientCheck, MachineConfig, MachineServer, test_key, workload_jwt};
use mcp_testkit::{Behavior, HttpFakeServer, HttpServerOptions, RunningHttpServer, Script};
use serde_json::{Value, json};
use tempfile::TempDir;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const DEADLINE: Duration = Duration::from_secs(30);
const ID_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.SEKRIT";

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A private HOME / XDG data directory and a configuration file.
struct Sandbox {
    dir: TempDir,
    env: Vec<(String, String)>,
}

impl Sandbox {
    fn new(entry: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "data", "xdg"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let sandbox = Self {
            dir,
            env: Vec::new(),
        };
        sandbox.configure(entry);
        sandbox
    }

    fn configure(&self, entry: Value) {
        let config = json!({"mcpServers": {"srv": entry}});
        std::fs::write(self.path("servers.json"), config.to_string()).unwrap();
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn file(&self, name: &str, text: &str, mode: u32) -> String {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path.display().to_string()
    }

    async fn run(&self, args: &[&str]) -> Output {
        let mut cmd = tokio::process::Command::new(MCP);
        cmd.current_dir(self.dir.path())
            .arg("--config")
            .arg(self.path("servers.json"))
            .args(args)
            .env("HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CONFIG_HOME", self.path("xdg"))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        for name in [
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "BROWSER",
            "RUST_LOG",
            "http_proxy",
            "HTTP_PROXY",
            "https_proxy",
            "HTTPS_PROXY",
            "all_proxy",
            "ALL_PROXY",
        ] {
            cmd.env_remove(name);
        }
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        let out = tokio::time::timeout(DEADLINE, cmd.output())
            .await
            .unwrap_or_else(|_| panic!("`mcp {}` did not finish", args.join(" ")))
            .unwrap();
        let out = Output {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(
            !out.stdout.contains("SEKRIT") && !out.stderr.contains("SEKRIT"),
            "a secret was printed by `mcp {}`:\n{}\n{}",
            args.join(" "),
            out.stdout,
            out.stderr
        );
        out
    }

    /// The stored credential records.
    fn records(&self) -> Vec<PathBuf> {
        let dir = self.path("data").join("mcp").join("oauth");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                !name.starts_with('.') && name.ends_with(".json")
            })
            .collect()
    }
}

async fn backend() -> RunningHttpServer {
    let echo = json!({
        "name": "echo",
        "description": "Echoes text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    });
    let options = HttpServerOptions {
        get_stream: false,
        ..HttpServerOptions::default()
    };
    HttpFakeServer::start(Script::dual().tool_json(echo, Behavior::Echo), options)
        .await
        .unwrap()
}

/// `mcp login srv`, then `mcp call srv echo`: both succeed, the call with
/// the stored token (no new token request).
async fn login_then_call(sandbox: &Sandbox, server: &MachineServer) {
    let login = sandbox.run(&["login", "srv"]).await;
    assert_eq!(login.code, Some(0), "{}", login.stderr);
    assert!(
        login.stdout.contains("logged in to `srv`"),
        "{}",
        login.stdout
    );
    assert!(
        !login.stderr.contains("open this URL"),
        "no browser for a machine grant"
    );
    let tokens = server.hits_at("/token").len();
    assert!(tokens >= 1);
    let records = sandbox.records();
    assert_eq!(records.len(), 1);
    assert_eq!(mode(&records[0]), 0o600);
    let call = sandbox
        .run(&["call", "srv", "echo", "text=machine-hello"])
        .await;
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert!(call.stdout.contains("machine-hello"), "{}", call.stdout);
    assert_eq!(
        server.hits_at("/token").len(),
        tokens,
        "the stored token was used"
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_from_a_variable_log_in_and_call_then_renew_without_a_browser() {
    let backend = backend().await;
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Basic("svc".into(), "SEKRIT-pw".into()),
        backend: Some(format!("http://{}", backend.addr())),
        ..MachineConfig::default()
    })
    .await;
    let entry = json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "client_secret_env": "SVC_SECRET"}});
    let mut sandbox = Sandbox::new(entry);
    sandbox.env.push(("SVC_SECRET".into(), "SEKRIT-pw".into()));
    login_then_call(&sandbox, &server).await;

    // A token that is due at once: the next command requests a new one by
    // itself.
    drop(server);
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Basic("svc".into(), "SEKRIT-pw".into()),
        backend: Some(format!("http://{}", backend.addr())),
        expires_in: 0,
        ..MachineConfig::default()
    })
    .await;
    sandbox.configure(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "client_secret_env": "SVC_SECRET"}}));
    let call = sandbox.run(&["call", "srv", "echo", "text=again"]).await;
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert!(call.stdout.contains("again"));
    assert!(
        !server.hits_at("/token").is_empty(),
        "a new token was requested"
    );

    // A server whose metadata names another authorization server than the
    // configured one gets nothing of the client.
    let before = server.hits_at("/token").len();
    sandbox.configure(
        json!({"url": server.url(), "auth": {"issuer": "https://as.example",
        "grant": "client_credentials", "client_id": "svc", "client_secret_env": "SVC_SECRET"}}),
    );
    let login = sandbox.run(&["login", "srv"]).await;
    assert_ne!(login.code, Some(0));
    assert!(
        login.stderr.contains("another authorization server"),
        "{}",
        login.stderr
    );
    assert_eq!(server.hits_at("/token").len(), before, "no secret left");
    sandbox.configure(
        json!({"url": server.url(), "auth": {"issuer": server.issuer(),
        "grant": "client_credentials", "client_id": "svc", "client_secret_env": "SVC_SECRET"}}),
    );

    // Records are kept per server URL: the first server's and this one's.
    assert_eq!(sandbox.records().len(), 2);
    let logout = sandbox.run(&["logout", "srv"]).await;
    assert_eq!(logout.code, Some(0), "{}", logout.stderr);
    assert_eq!(sandbox.records().len(), 1, "this server's record is gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_secret_post_from_a_file_and_a_shared_secret_file_refused() {
    let backend = backend().await;
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Post("svc".into(), "SEKRIT-pw".into()),
        backend: Some(format!("http://{}", backend.addr())),
        ..MachineConfig::default()
    })
    .await;
    let sandbox = Sandbox::new(json!({}));
    let secret = sandbox.file("secret", "SEKRIT-pw\n", 0o600);
    sandbox.configure(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "client_auth": "client_secret_post",
        "client_secret_file": secret}}));
    login_then_call(&sandbox, &server).await;
    assert_eq!(server.hits_at("/token")[0].form["client_id"], "svc");

    let shared = sandbox.file("shared-secret", "SEKRIT-pw", 0o640);
    sandbox.configure(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "client_auth": "client_secret_post",
        "client_secret_file": shared}}));
    let login = sandbox.run(&["login", "srv"]).await;
    assert_ne!(login.code, Some(0));
    assert!(login.stderr.contains("shared-secret"), "{}", login.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_key_jwt_from_a_key_file_and_a_shared_key_file_refused_by_name() {
    let backend = backend().await;
    let (_, pem, public) = test_key();
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Jwt("svc".into(), public),
        backend: Some(format!("http://{}", backend.addr())),
        ..MachineConfig::default()
    })
    .await;
    let sandbox = Sandbox::new(json!({}));
    let key = sandbox.file("key.pem", &pem, 0o600);
    sandbox.configure(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "private_key_file": key}}));
    login_then_call(&sandbox, &server).await;

    let shared = sandbox.file("shared.pem", &pem, 0o644);
    sandbox.configure(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "private_key_file": shared}}));
    let login = sandbox.run(&["login", "srv"]).await;
    assert_ne!(login.code, Some(0));
    assert!(login.stderr.contains("shared.pem"), "{}", login.stderr);
    assert!(login.stderr.contains("chmod 600"), "{}", login.stderr);
    assert!(!login.stderr.contains("PRIVATE KEY"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_token_file_logs_in_with_the_jwt_bearer_grant() {
    let backend = backend().await;
    let (issuer_key, _, public) = test_key();
    let server = MachineServer::start(MachineConfig {
        assertion_key: Some(public),
        backend: Some(format!("http://{}", backend.addr())),
        ..MachineConfig::default()
    })
    .await;
    let sandbox = Sandbox::new(json!({}));
    let token = sandbox.file(
        "token",
        &workload_jwt(&issuer_key, &server.issuer(), "pod"),
        0o644,
    );
    sandbox.configure(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "jwt_bearer", "client_id": "workload", "assertion_file": token}}));
    login_then_call(&sandbox, &server).await;
    assert_eq!(
        server.hits_at("/token")[0].form["grant_type"],
        machine::JWT_BEARER
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enterprise_managed_authorization_from_the_configuration() {
    let backend = backend().await;
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Basic("app".into(), "SEKRIT-app".into()),
        id_token: Some(ID_TOKEN.into()),
        backend: Some(format!("http://{}", backend.addr())),
        ..MachineConfig::default()
    })
    .await;
    let mut sandbox = Sandbox::new(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "enterprise", "client_id": "app", "client_secret_env": "APP_SECRET",
        "idp": {"issuer": server.issuer(), "token_endpoint": server.idp_token_endpoint(),
                "client_id": "idp-client", "id_token_env": "ID_TOKEN"}}}));
    sandbox.env.push(("APP_SECRET".into(), "SEKRIT-app".into()));
    sandbox.env.push(("ID_TOKEN".into(), ID_TOKEN.into()));
    login_then_call(&sandbox, &server).await;
    let exchange = server.hits_at("/idp/token");
    assert_eq!(exchange.len(), 1);
    assert!(exchange[0].refused.is_none(), "{:?}", exchange[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dpop_bound_tokens_from_the_cli_with_nonces_at_both_servers() {
    let backend = backend().await;
    let server = MachineServer::start(MachineConfig {
        client: ClientCheck::Basic("svc".into(), "SEKRIT-pw".into()),
        dpop: true,
        as_nonce: true,
        rs_nonce: true,
        backend: Some(format!("http://{}", backend.addr())),
        ..MachineConfig::default()
    })
    .await;
    let mut sandbox = Sandbox::new(json!({"url": server.url(), "auth": {
        "issuer": server.issuer(), "grant": "client_credentials", "client_id": "svc", "client_secret_env": "SVC_SECRET",
        "dpop": "required"}}));
    sandbox.env.push(("SVC_SECRET".into(), "SEKRIT-pw".into()));
    login_then_call(&sandbox, &server).await;
    let mcp = server.hits_at("/mcp");
    assert!(!mcp.is_empty());
    for hit in mcp.iter().filter(|h| h.authorization.is_some()) {
        assert!(hit.authorization.as_deref().unwrap().starts_with("DPoP "));
    }
    assert!(
        mcp.iter().any(|h| h.refused.is_none()),
        "a request got through: {mcp:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_takes_references_only_and_names_what_a_grant_lacks() {
    let cases = [
        (
            json!({"grant": "client_credentials", "client_id": "svc", "client_secret": "SEKRIT-inline"}),
            "mcpServers.srv.auth.client_secret",
        ),
        (
            json!({"grant": "jwt_bearer", "client_id": "w"}),
            "`assertion_env` is required",
        ),
        (
            json!({"grant": "client_credentials", "client_id": "svc", "issuer": "https://as.example"}),
            "client_secret_env, client_secret_file or private_key_file",
        ),
        (
            json!({"grant": "client_credentials", "client_id": "svc", "client_secret_env": "A"}),
            "`issuer` is required",
        ),
        (
            json!({"grant": "client_credentials", "client_id": "svc",
                   "client_secret_env": "A", "client_secret_file": "/x"}),
            "mcpServers.srv.auth.client_secret_file",
        ),
        (json!({"grant": "nope"}), "mcpServers.srv.auth.grant"),
        (
            json!({"grant": "client_credentials", "client_id": "svc", "issuer": "https://as.example",
                   "client_secret_env": "A", "assertion_env": "B"}),
            "does not use this key",
        ),
    ];
    for (auth, expected) in cases {
        let sandbox = Sandbox::new(json!({"url": "http://127.0.0.1:9/mcp", "auth": auth}));
        let out = sandbox.run(&["login", "srv"]).await;
        assert_eq!(out.code, Some(1), "{auth}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{auth}: {}", out.stderr);
    }
    let both = Sandbox::new(json!({"url": "http://127.0.0.1:9/mcp", "token_env": "T",
        "auth": {"grant": "client_credentials", "client_id": "svc", "client_secret_env": "A"}}));
    let out = both.run(&["login", "srv"]).await;
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("token_env"), "{}", out.stderr);
}
