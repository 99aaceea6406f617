//! A gateway in front of testkit servers, with our own session as the
//! host, all in-process.
#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_gateway::{Gateway, GatewayConfig, GatewayError, HostApproval, HostLink, Reviews};
use mcp_hub::{
    Authority, Backoff, CollisionPolicy, Hub, HubConfig, Principal, RestartPolicy, ServerSpec,
};
use mcp_session::{ClientHandlers, Negotiation, Ready, Session, SessionConfig, SessionEvents};
use mcp_testkit::{FakeServer, Recorder, Script};
use mcp_transport::{Connector, MemoryConnector, StdioConfig, StdioConnector};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// A connector starting a fresh in-process fake server on every connect,
/// all recording into one recorder.
pub fn memory(script: Script) -> (Arc<dyn Connector>, Recorder) {
    let recorder = Recorder::new();
    let rec = recorder.clone();
    let connector = MemoryConnector::new(move |end| {
        let server = FakeServer::new(script.clone()).with_recorder(rec.clone());
        tokio::spawn(async move { server.serve(end.input, end.output).await });
    });
    (Arc::new(connector), recorder)
}

/// The testkit server binary, built once.
pub fn server_binary() -> String {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        mcp_testkit::build_server_binary()
            .expect("building mcp-testkit-server")
            .display()
            .to_string()
    })
    .clone()
}

/// A stdio connector running the testkit binary with `script`.
pub fn stdio(script: &Script) -> Arc<dyn Connector> {
    let json = serde_json::to_string(script).expect("script serialises");
    let mut config = StdioConfig::new(server_binary()).args(["--script-json".to_owned(), json]);
    config.shutdown_grace = Duration::from_millis(500);
    config.term_grace = Duration::from_millis(500);
    Arc::new(StdioConnector::new(config))
}

/// A server spec with short deadlines and quick restarts.
pub fn spec(name: &str, connector: Arc<dyn Connector>) -> ServerSpec {
    ServerSpec::new(name, connector)
        .session(SessionConfig {
            request_timeout: Duration::from_secs(10),
            probe_timeout: Duration::from_millis(500),
            ..SessionConfig::default()
        })
        .negotiation(Negotiation::Auto)
        .restart(RestartPolicy::Backoff(Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(100),
            jitter: 0.0,
            notify_after: 3,
            stable_after: Duration::from_secs(30),
        }))
}

/// What a test sets up.
pub struct Setup {
    pub servers: Vec<ServerSpec>,
    pub authority: Authority,
    pub principal: Principal,
    pub policy: CollisionPolicy,
    pub config: GatewayConfig,
    /// The host's client features.
    pub handlers: ClientHandlers,
    /// How the host negotiates (legacy carries requests from servers).
    pub negotiation: Negotiation,
    /// The calls the host's user must confirm: `(server, tool)`.
    pub confirm: Option<fn(&str, &str) -> bool>,
}

impl Setup {
    pub fn new(servers: Vec<ServerSpec>) -> Self {
        Self {
            servers,
            authority: Authority::unrestricted(),
            principal: Principal::new("test"),
            policy: CollisionPolicy::Prefix,
            config: GatewayConfig::default(),
            handlers: ClientHandlers::new(),
            negotiation: Negotiation::Legacy,
            confirm: None,
        }
    }
}

/// The gateway's task, once the host connected.
pub type Served = Arc<Mutex<Option<JoinHandle<Result<(), GatewayError>>>>>;

/// A running gateway and its host.
pub struct Running {
    pub host: Session<Ready>,
    pub events: SessionEvents,
    pub hub: Arc<Hub>,
    pub reviews: Reviews,
    pub served: Served,
}

impl Running {
    /// Closes the host's session and waits for the gateway to end.
    pub async fn close(self) {
        self.host.close().await;
        let served = self.served.lock().unwrap().take();
        if let Some(served) = served {
            tokio::time::timeout(Duration::from_secs(15), served)
                .await
                .expect("the gateway ends when the host goes")
                .unwrap()
                .expect("the gateway ends cleanly");
        }
    }
}

pub async fn start(setup: Setup) -> Running {
    let link = HostLink::new(&setup.config);
    let mut builder = Hub::builder(HubConfig {
        policy: setup.policy,
        shutdown_timeout: Duration::from_secs(5),
        ..HubConfig::default()
    })
    .authority(setup.authority)
    .principal(setup.principal);
    for spec in setup.servers {
        builder = builder.server(link.attach(spec));
    }
    if let Some(marked) = setup.confirm {
        builder = builder.approval(Arc::new(HostApproval::new(link.clone(), marked)));
    }
    let hub = builder.start().await.expect("the hub starts");
    let gateway = Gateway::new(hub, link, setup.config).expect("a gateway");
    let hub = Arc::clone(gateway.hub());
    let reviews = gateway.reviews();
    let gateway = Mutex::new(Some(gateway));
    let served: Served = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&served);
    let connector = MemoryConnector::new(move |end| {
        let gateway = gateway.lock().unwrap().take().expect("one host only");
        *slot.lock().unwrap() = Some(tokio::spawn(gateway.serve(end.input, end.output)));
    });
    let config = SessionConfig {
        handlers: setup.handlers,
        request_timeout: Duration::from_secs(20),
        probe_timeout: Duration::from_secs(5),
        ..SessionConfig::default()
    };
    let session = Session::connect(Arc::new(connector), config)
        .await
        .expect("connect");
    let mut host = session
        .negotiate(setup.negotiation)
        .await
        .unwrap_or_else(|e| panic!("negotiation: {e}"));
    let events = host.take_events().expect("events");
    Running {
        host,
        events,
        hub,
        reviews,
        served,
    }
}

/// Waits (bounded) for the host to hear `method`; other events are skipped.
pub async fn heard(events: &mut SessionEvents, method: &str) -> Option<Vec<u8>> {
    let wait = async {
        loop {
            match events.next().await? {
                mcp_session::SessionEvent::Notification { method: m, params } if m == method => {
                    return Some(params.map(|b| b.to_vec()).unwrap_or_default());
                }
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("the host hears it in time")
}

/// Whether the host has heard `method` among the events waiting now.
pub fn heard_already(events: &mut SessionEvents, method: &str) -> bool {
    let mut found = false;
    while let Some(event) = events.try_next() {
        if matches!(&event, mcp_session::SessionEvent::Notification { method: m, .. } if m == method)
        {
            found = true;
        }
    }
    found
}

/// The names of every tool the host is served (all pages).
pub async fn tool_names(host: &Session<Ready>) -> Vec<String> {
    host.list_tools()
        .await
        .expect("tools/list")
        .tools()
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

/// The gateway over Streamable HTTP on loopback in front of `servers`,
/// hosts connecting as they like.
pub struct HttpGateway {
    pub url: String,
    pub reviews: Reviews,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: JoinHandle<Result<(), GatewayError>>,
    http: reqwest::Client,
}

impl HttpGateway {
    pub async fn start(servers: Vec<ServerSpec>, authority: Authority) -> Self {
        Self::start_with(servers, authority, GatewayConfig::default()).await
    }

    /// [`HttpGateway::start`] with an authority that allows everything.
    pub async fn unrestricted(servers: Vec<ServerSpec>) -> Self {
        Self::start(servers, Authority::unrestricted()).await
    }

    /// As [`HttpGateway::start`], with the gateway's settings.
    pub async fn start_with(
        servers: Vec<ServerSpec>,
        authority: Authority,
        config: GatewayConfig,
    ) -> Self {
        Self::start_confirming(servers, authority, config, None).await
    }

    /// As [`HttpGateway::start_with`], the calls `confirm` marks put to the
    /// host's user ([`HostApproval`]).
    pub async fn start_confirming(
        servers: Vec<ServerSpec>,
        authority: Authority,
        config: GatewayConfig,
        confirm: Option<fn(&str, &str) -> bool>,
    ) -> Self {
        let link = HostLink::new(&config);
        let mut builder = Hub::builder(HubConfig {
            shutdown_timeout: Duration::from_secs(5),
            ..HubConfig::default()
        })
        .authority(authority);
        for spec in servers {
            builder = builder.server(link.attach(spec));
        }
        if let Some(marked) = confirm {
            builder = builder.approval(Arc::new(HostApproval::new(link.clone(), marked)));
        }
        let hub = builder.start().await.expect("the hub starts");
        let gateway = Gateway::new(hub, link, config).expect("a gateway");
        let reviews = gateway.reviews();
        let http = mcp_gateway::http::HttpServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            mcp_gateway::http::HttpConfig::default(),
        )
        .await
        .unwrap();
        let url = http.url();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = tokio::spawn(gateway.serve_http(http, async move {
            let _ = stopped.await;
        }));
        Self {
            url,
            reviews,
            stop: Some(stop),
            served,
            http: reqwest::Client::new(),
        }
    }

    /// A raw stateless 2026-07-28 request declaring `caps`, with the routing
    /// headers a host sends (`Mcp-Name`: the params' name, URI or task id);
    /// the HTTP status and the JSON-RPC response (an event stream's last
    /// data line).
    pub async fn send(
        &self,
        method: &str,
        mut params: serde_json::Value,
        caps: serde_json::Value,
    ) -> (u16, serde_json::Value) {
        use serde_json::{Value, json};
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-host", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let name = ["name", "uri", "taskId"]
            .iter()
            .find_map(|k| params.get(*k).and_then(Value::as_str))
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method);
        if let Some(name) = name {
            request = request.header("Mcp-Name", name);
        }
        let reply = request
            .body(body.to_string())
            .send()
            .await
            .expect("the gateway answers");
        let status = reply.status().as_u16();
        let text = reply.text().await.unwrap();
        let json = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .unwrap_or(text.as_str())
            .to_owned();
        (
            status,
            serde_json::from_str(&json).expect("a JSON-RPC answer"),
        )
    }

    /// A host session over HTTP, negotiated `negotiation`, and its events.
    pub async fn host(&self, negotiation: Negotiation) -> (Session<Ready>, SessionEvents) {
        self.host_taking_tasks(negotiation, false).await
    }

    /// [`HttpGateway::host`], declaring the tasks extension when `tasks`.
    pub async fn host_taking_tasks(
        &self,
        negotiation: Negotiation,
        tasks: bool,
    ) -> (Session<Ready>, SessionEvents) {
        let config = SessionConfig {
            request_timeout: Duration::from_secs(20),
            probe_timeout: Duration::from_secs(5),
            accept_tasks: tasks,
            ..SessionConfig::default()
        };
        let connector = Arc::new(mcp_transport::HttpConnector::new(
            mcp_transport::HttpConfig::new(&self.url),
        ));
        let mut session = Session::connect(connector, config)
            .await
            .expect("connect")
            .negotiate(negotiation)
            .await
            .expect("negotiate");
        let events = session.take_events().expect("events");
        (session, events)
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(20), self.served)
            .await
            .expect("the gateway stops")
            .unwrap()
            .expect("cleanly");
    }
}

/// A host whose sampling reports progress (as a person reviewing the
/// request might) and notes the token the gateway asked under.
pub struct ReportingHost {
    tokens: Tokens,
}

/// The progress tokens a [`ReportingHost`] was asked under, in order.
pub type Tokens = Arc<Mutex<Vec<Option<Value>>>>;

impl ReportingHost {
    pub fn new(tokens: &Tokens) -> Self {
        Self {
            tokens: Arc::clone(tokens),
        }
    }
}

impl ReportingHost {
    /// Notes the token the host was asked under and, when the server asked
    /// for progress, reports two updates (as a person reviewing the
    /// request might): whether it reported.
    async fn review(
        &self,
        meta: Option<&mcp_types::Meta>,
        progress: &mcp_session::ProgressReporter,
    ) -> bool {
        let token = meta.and_then(|m| m.get("progressToken").cloned());
        self.tokens.lock().unwrap().push(token);
        if !progress.wanted() {
            return false;
        }
        for (value, message) in [(1.0, "reviewing"), (3.0, "sampling")] {
            progress
                .report(value, Some(3.0), Some(message.into()))
                .await
                .unwrap();
        }
        true
    }
}

impl mcp_session::SamplingHandler for ReportingHost {
    fn create_message(
        &self,
        _: mcp_types::CreateMessageParams,
    ) -> mcp_transport::BoxFuture<
        '_,
        Result<mcp_types::CreateMessageResult, mcp_session::HandlerError>,
    > {
        Box::pin(async {
            Ok(mcp_types::CreateMessageResult::text(
                "host-model",
                "unreported",
            ))
        })
    }

    fn create_message_reporting(
        &self,
        params: mcp_types::CreateMessageParams,
        progress: mcp_session::ProgressReporter,
    ) -> mcp_transport::BoxFuture<
        '_,
        Result<mcp_types::CreateMessageResult, mcp_session::HandlerError>,
    > {
        Box::pin(async move {
            let text = if self.review(params.meta.as_ref(), &progress).await {
                "four"
            } else {
                "unreported"
            };
            Ok(mcp_types::CreateMessageResult::text("host-model", text))
        })
    }
}

impl mcp_session::ElicitationHandler for ReportingHost {
    fn elicit(
        &self,
        _: mcp_session::Elicitation,
    ) -> mcp_transport::BoxFuture<'_, Result<mcp_types::ElicitResult, mcp_session::HandlerError>>
    {
        Box::pin(async { Ok(answer("unreported")) })
    }

    fn elicit_reporting(
        &self,
        request: mcp_session::Elicitation,
        progress: mcp_session::ProgressReporter,
    ) -> mcp_transport::BoxFuture<'_, Result<mcp_types::ElicitResult, mcp_session::HandlerError>>
    {
        Box::pin(async move {
            let meta = match &request {
                mcp_session::Elicitation::Form(form) => form.meta.clone(),
                _ => None,
            };
            let text = if self.review(meta.as_ref(), &progress).await {
                "four"
            } else {
                "unreported"
            };
            Ok(answer(text))
        })
    }
}

/// A form answered with `{"answer": text}`.
fn answer(text: &str) -> mcp_types::ElicitResult {
    mcp_types::ElicitResult::accept([("answer", mcp_types::ElicitValue::String(text.to_owned()))])
}

/// A legacy server's tools `ask` (sampling, asking for progress under the
/// token `srv-7`) and `ask_quietly` (sampling, no progress), and the same
/// two for a form's elicitation: `ask_form` and `ask_form_quietly`.
pub fn asking_for_progress(script: Script) -> Script {
    use mcp_testkit::Behavior;
    script
        .tool(
            "ask",
            Behavior::AskClient {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 5, "_meta": {"progressToken": "srv-7"}}),
            },
        )
        .tool(
            "ask_quietly",
            Behavior::AskClient {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 5}),
            },
        )
        .tool(
            "ask_form",
            Behavior::AskClient {
                method: "elicitation/create".into(),
                params: json!({"message": "how many?", "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}}, "_meta": {"progressToken": "srv-7"}}),
            },
        )
        .tool(
            "ask_form_quietly",
            Behavior::AskClient {
                method: "elicitation/create".into(),
                params: json!({"message": "how many?", "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}}}),
            },
        )
}

/// Calls `ask` and `ask_quietly` (or `ask_form` and `ask_form_quietly`,
/// as `(asking, quiet)` names) of [`asking_for_progress`] as a host
/// answering with a [`ReportingHost`]: the host is asked under a token of
/// the gateway's, never the server's; the server hears both of the host's
/// updates under its own token before its answer; a request that asked for
/// no progress is asked for none and gets none.
pub async fn progress_is_relayed(
    host: &Session<Ready>,
    recorder: &Recorder,
    tokens: &Tokens,
    (asking, quiet): (&str, &str),
) {
    let progress = || recorder.with_method("notifications/progress");
    let (asked_before, heard_before) = (tokens.lock().unwrap().len(), progress().len());
    let result = host.call_tool(asking, json!({})).await.unwrap();
    assert!(result.text().contains("four"), "{}", result.text());
    let asked = tokens.lock().unwrap()[asked_before..].to_vec();
    assert!(
        matches!(asked.as_slice(), [Some(Value::Number(_))]),
        "{asked:?}"
    );
    let heard: Vec<_> = progress()[heard_before..]
        .iter()
        .map(|p| {
            (
                p["params"]["progressToken"].clone(),
                p["params"]["progress"].as_f64(),
                p["params"]["message"].clone(),
            )
        })
        .collect();
    assert_eq!(
        heard,
        [
            (json!("srv-7"), Some(1.0), json!("reviewing")),
            (json!("srv-7"), Some(3.0), json!("sampling")),
        ]
    );
    let result = host.call_tool(quiet, json!({})).await.unwrap();
    assert!(result.text().contains("unreported"), "{}", result.text());
    assert_eq!(tokens.lock().unwrap()[asked_before + 1], None);
    assert_eq!(progress().len(), heard_before + 2);
}
