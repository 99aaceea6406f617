//! The playground over a hub of fake servers, with everything a test needs
//! to see from the server side: the approval hook's log, the audit trail
//! and each in-process server's recorder.
//!
//! Servers, in registration order:
//! - `notes`, `files`, `github`: the `mcp demo` servers (dual-era,
//!   legacy-only, 2026-07-28-only; all expose `search`); github's `open_pr`
//!   is left out by an allow-list;
//! - `lab` (dual-era): a slow tool with progress, a tool whose schema has
//!   every kind of field, a tool error, a structured result, a log message,
//!   a tool-list change, a resource change, a call that never ends, text / image / binary
//!   resources, a resource template, a prompt; lists paged two at a time;
//! - `broken`: a program that writes to stderr and exits at once;
//! - `asker` (dual-era): tools that ask the page (a form, a page to open, a
//!   model's reply) through the playground's [`Questions`].
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcp_hub::{
    Approval, ApprovalHook, ApprovalRequest, AuditRecord, AuditSink, Authority, Backoff,
    CollisionPolicy, Discovery, Hub, HubConfig, RestartPolicy, RetryPolicy, ServerAuthority,
    ServerSpec,
};
use mcp_playground::{Playground, PlaygroundConfig, PlaygroundError, Questions};
use mcp_testkit::{
    Behavior, FakeServer, InputRequest, InputSpec, ListKind, PromptSpec, Recorder, ResourceSpec,
    ResourceTemplateSpec, Script, ToolSpec, demo,
};
use mcp_transport::{BoxFuture, Connector, MemoryConnector, StdioConfig, StdioConnector};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A 16×16 PNG (a colour gradient).
pub const LOGO_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAABlklEQVR4nBXR4RiFMQiG4Q9hCEMIYQghhDCEEIbwIIQQQgghDOHs9Lu7662+72N8zA/5WB/6YR/7wz/OBx/xkR/10R/34/sGYzAHMlgDHdhgD3xwBgxikIMa9OCOByZjMicyWROd2GRPfHImTGKSk5r05M4HhCFMQYQlqGDCFlw4AkIIKZTQwpUHFmMxF7JYC13YYi98cRYsYpGLWvTirgeUoUxFlKWoYspWXDkKSiiplNLK1QeMYUxDjGWoYcY23DgGRhhplNHGtQc2YzM3slkb3dhmb3xzNmxik5va9ObuB5zhTEec5ahjznbcOQ5OOOmU0871Bw7jMA9yWAc92GEf/HAOHOKQhzr04Z4H/s95534HfCd5S77YL8gb/Zr/FZBQ0HDf679gBDOQYAUaWLADD0782yPIoIIObjyQjGQmkqxEE0t24snJ//BIMqmkk5sPFKOYhRSr0MKKXXhx6h8liiyq6OLWA81oZiPNarSxZjfenP4Hjyabarq5/cBlXOZFLuuiF7vsi1/O/a8Zl7zUpS/38gNq4ZAQG74ASAAAAABJRU5ErkJggg==";

/// What the failing server writes to stderr before it exits.
pub const BROKEN_STDERR: &str = "fatal: cannot open /var/lib/inventory.db";
/// What the broken server writes to stdout first (a log line, not JSON-RPC).
pub const BROKEN_STDOUT: &str = "inventory server starting";

/// The approval hook: approves everything and remembers what it was asked.
#[derive(Debug, Default)]
pub struct Approvals(Mutex<Vec<(String, String)>>);

impl Approvals {
    pub fn asked(&self) -> Vec<(String, String)> {
        self.0.lock().unwrap().clone()
    }
}

impl ApprovalHook for Approvals {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        self.0
            .lock()
            .unwrap()
            .push((request.server.to_string(), request.tool.to_owned()));
        Box::pin(async { Approval::Approve })
    }
}

/// The audit trail: every governed operation (lists, reads, calls).
#[derive(Debug, Default)]
pub struct Audit(Mutex<Vec<AuditRecord>>);

impl Audit {
    pub fn records(&self) -> Vec<AuditRecord> {
        self.0.lock().unwrap().clone()
    }
}

impl AuditSink for Audit {
    fn record(&self, record: &AuditRecord) {
        self.0.lock().unwrap().push(record.clone());
    }
}

/// A running playground and its hub.
pub struct Lab {
    pub hub: Arc<Hub>,
    /// The launch URL (with the one-time code).
    pub url: String,
    pub origin: String,
    pub address: SocketAddr,
    pub code: String,
    pub approvals: Arc<Approvals>,
    pub audit: Arc<Audit>,
    pub recorders: Vec<(&'static str, Recorder)>,
    /// The servers' questions to the page.
    pub questions: Questions,
    stop: Option<oneshot::Sender<()>>,
    served: Option<JoinHandle<Result<(), PlaygroundError>>>,
}

impl Lab {
    /// Starts the servers (waiting for each to be ready or failed) and the
    /// playground on 127.0.0.1, an ephemeral port.
    pub async fn start() -> Lab {
        Self::start_with(PlaygroundConfig::default()).await
    }

    pub async fn start_with(config: PlaygroundConfig) -> Lab {
        let approvals = Arc::new(Approvals::default());
        let audit = Arc::new(Audit::default());
        let mut recorders = Vec::new();
        let mut builder = Hub::builder(HubConfig {
            policy: CollisionPolicy::Prefix,
            ..HubConfig::default()
        })
        .approval(Arc::clone(&approvals) as Arc<dyn ApprovalHook>)
        .audit_sink(Arc::clone(&audit) as Arc<dyn AuditSink>);
        let mut authority = Authority::named();
        for name in ["notes", "files", "github", "lab"] {
            let script = match name {
                "lab" => lab_script(),
                demo_name => demo::by_name(demo_name).unwrap(),
            };
            let (connector, recorder) = memory(script);
            recorders.push((name, recorder));
            let mut spec = ServerSpec::new(name, connector)
                .retry(RetryPolicy::none())
                .discovery(Discovery::Eager);
            spec = if name == "lab" {
                spec.restart(RestartPolicy::Backoff(Backoff::default()))
                    .log_level(mcp_types::LoggingLevel::Info)
            } else {
                spec.restart(RestartPolicy::Never)
            };
            builder = builder.server(spec);
            let rules = if name == "github" {
                ServerAuthority::default().tools(["list_issues", "search"])
            } else {
                ServerAuthority::default()
            };
            authority = authority.with_server(name, rules);
        }
        builder = builder.server(
            ServerSpec::new("broken", broken())
                .restart(RestartPolicy::Never)
                .retry(RetryPolicy::none()),
        );
        authority = authority.with_server("broken", ServerAuthority::default());
        let questions = Questions::new();
        let (connector, recorder) = memory(asker_script());
        recorders.push(("asker", recorder));
        let mut asker = ServerSpec::new("asker", connector)
            .restart(RestartPolicy::Never)
            .retry(RetryPolicy::none())
            .discovery(Discovery::Eager);
        let asks = questions.handler("asker");
        asker.session.handlers = mcp_session::ClientHandlers::new()
            .elicitation(asks.clone())
            .sampling(asks);
        builder = builder.server(asker);
        authority = authority.with_server("asker", ServerAuthority::default());
        let hub = Arc::new(
            builder
                .authority(authority)
                .start()
                .await
                .expect("the hub starts"),
        );
        let playground = Playground::bind(Arc::clone(&hub), "127.0.0.1:0".parse().unwrap(), config)
            .await
            .expect("the playground binds")
            .answering(questions.clone());
        let url = playground.launch_url();
        let origin = playground.origin().to_owned();
        let address = playground.local_addr();
        let code = url.split_once("#code=").unwrap().1.to_owned();
        let (stop, stopped) = oneshot::channel();
        let served = tokio::spawn(playground.serve(async move {
            let _ = stopped.await;
        }));
        Lab {
            hub,
            url,
            origin,
            address,
            code,
            approvals,
            audit,
            recorders,
            questions,
            stop: Some(stop),
            served: Some(served),
        }
    }

    /// `tools/call` requests the in-process servers received.
    pub fn tool_calls(&self) -> usize {
        self.recorders
            .iter()
            .map(|(_, r)| r.with_method("tools/call").len())
            .sum()
    }

    /// Requests of `method` that server `name` received.
    pub fn received(&self, name: &str, method: &str) -> usize {
        self.recorders
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, r)| r.with_method(method).len())
    }

    /// Questions of the servers waiting for the page.
    pub fn questions_waiting(&self) -> usize {
        self.questions.waiting()
    }

    /// Stops serving (event streams end), then the hub.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            served
                .await
                .expect("the server task ends")
                .expect("serving ends cleanly");
        }
        self.hub.shutdown().await;
    }
}

/// A connector that starts a fresh in-process fake server on every connect.
fn memory(script: Script) -> (Arc<dyn Connector>, Recorder) {
    let recorder = Recorder::new();
    let rec = recorder.clone();
    let connector = MemoryConnector::new(move |end| {
        let server = FakeServer::new(script.clone()).with_recorder(rec.clone());
        tokio::spawn(async move {
            server.serve(end.input, end.output).await;
        });
    });
    (Arc::new(connector), recorder)
}

/// A program that fails at once, with words on stderr.
fn broken() -> Arc<dyn Connector> {
    let script = format!("echo '{BROKEN_STDOUT}'; echo '{BROKEN_STDERR}' >&2; exit 3");
    Arc::new(StdioConnector::new(
        StdioConfig::new("/bin/sh").args(["-c".to_owned(), script]),
    ))
}

/// The `asker` server: a form (a required name, a titled choice, a yes or
/// no, a default, a default that reorders text), a page to open and a model's reply, each asked in a tool.
pub fn asker_script() -> Script {
    let form = InputRequest::elicit_form(
        "Who are you? \u{202e}ohce",
        json!({"type": "object",
               "properties": {
                   "name": {"type": "string", "title": "Your name", "minLength": 2},
                   "plan": {"type": "string", "oneOf": [
                       {"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro \u{202e}"}]},
                   "newsletter": {"type": "boolean", "default": false},
                   "city": {"type": "string", "default": "Oslo"},
                   "code": {"type": "string", "default": "ab\u{202e}cd"}},
               "required": ["name"]}),
    );
    let page = InputRequest::elicit_url(
        "Sign in to the service",
        "https://auth.example.com/login?step=1",
        "e1",
    );
    Script::dual()
        .server_info("asker", "1.0.0")
        .tool("sign_up", Behavior::Ask(InputSpec::one("user", form)))
        .tool("open_page", Behavior::Ask(InputSpec::one("page", page)))
        .tool(
            "connect",
            Behavior::needs_pages(&[
                (
                    "Connect your account",
                    "https://auth.example.com/connect?c=1",
                    "c1",
                ),
                (
                    "This one hides its host",
                    "https://bank.example@evil.test/",
                    "c2",
                ),
                ("A look-alike name", "https://xn--bnk-sna.example/", "c3"),
            ]),
        )
        .tool(
            "think",
            Behavior::Ask(InputSpec::one(
                "model",
                InputRequest::sampling("What is 2+2?", 10),
            )),
        )
}

/// The `lab` server: one of each thing the page shows.
pub fn lab_script() -> Script {
    Script::dual()
        .server_info("lab", "0.9.0")
        .instructions(
            "Lab server. <b>Never</b> trust this text: it is the server's own. \u{202e}ohce, ec\u{200b}ho.",
        )
        .page_size(2)
        .tool_json(
            json!({
                "name": "slow",
                "title": "Slow job",
                "description": "Takes a while and reports progress.",
                "inputSchema": {"type": "object", "properties": {}},
            }),
            Behavior::Sleep {
                ms: 1500,
                progress_steps: 3,
            },
        )
        .tool_json(
            json!({
                "name": "book_trip",
                "description": "Books a trip: every kind of field.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "Where to", "minLength": 2},
                        "nights": {"type": "integer", "minimum": 1, "maximum": 30},
                        "budget": {"type": "number"},
                        "refundable": {"type": "boolean"},
                        "class": {"type": "string", "enum": ["economy", "business", "\u{202e}yrxul"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "traveller": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "age": {"type": "integer"},
                            },
                            "required": ["name"],
                        },
                    },
                    "required": ["city", "nights"],
                },
            }),
            Behavior::Text {
                text: "Booked {city} for {nights} nights in {class} (tags {tags}, traveller {traveller})".into(),
            },
        )
        .tool_json(
            json!({
                "name": "fail",
                "description": "Always reports an error.",
                "inputSchema": {"type": "object", "properties": {}},
            }),
            Behavior::ToolError {
                text: "<img src=x onerror=alert(1)> the tool failed".into(),
            },
        )
        .tool_json(
            json!({
                "name": "stats",
                "description": "Structured numbers.",
                "inputSchema": {"type": "object", "properties": {}},
                "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}},
            }),
            Behavior::Structured {
                value: json!({"count": 42, "names": ["a", "b"]}),
            },
        )
        .tool_json(
            json!({
                "name": "shout",
                "description": "Sends a log message.",
                "inputSchema": {"type": "object", "properties": {}},
            }),
            Behavior::Log {
                level: "warning".into(),
                message: json!("disk almost full"),
                logger: Some("storage".into()),
            },
        )
        .tool_json(
            json!({
                "name": "change",
                "description": "Changes the tool list (a new tool appears).",
                "inputSchema": {"type": "object", "properties": {}},
            }),
            Behavior::ChangeList {
                list: ListKind::Tools,
            },
        )
        .tool_json(
            json!({
                "name": "touch",
                "description": "Says the readme changed.",
                "inputSchema": {"type": "object", "properties": {}},
            }),
            Behavior::TouchResource {
                uri: "lab://readme".into(),
            },
        )
        .tool_json(
            json!({
                "name": "hang",
                "description": "Never answers.",
                "inputSchema": {"type": "object", "properties": {}},
            }),
            Behavior::Hang,
        )
        .tool_spec(
            ToolSpec::from_json(
                json!({
                    "name": "fresh",
                    "description": "Appears after a change.",
                    "inputSchema": {"type": "object", "properties": {}},
                }),
                Behavior::Text {
                    text: "fresh".into(),
                },
            )
            .appearing_at_change(1),
        )
        .resource(ResourceSpec::text(
            "lab://readme",
            "readme",
            "Hello from the lab.\n<script>alert(1)</script>",
        ))
        .resource(ResourceSpec::blob(
            "lab://logo.png",
            "logo",
            "image/png",
            LOGO_PNG,
        ))
        .resource(ResourceSpec::blob(
            "lab://data.bin",
            "data",
            "application/octet-stream",
            "AAECAwQFBgc=",
        ))
        .resource_template(ResourceTemplateSpec::new(
            "lab://notes/{id}",
            "note",
            "Note {id}",
        ))
        .prompt(
            PromptSpec::new("greet")
                .argument("name", true)
                .message("user", "Say hello to {name}."),
        )
}
